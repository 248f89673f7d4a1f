//! Graceful shutdown on SIGINT (Ctrl-C) and SIGTERM (what Kubernetes sends before killing a pod).

use std::io;

use tokio_util::sync::CancellationToken;

/// Waits for the first SIGINT or SIGTERM, then cancels `shutdown` so that the controllers and
/// servers stop gracefully. A second signal exits immediately with status 1, for when a graceful
/// shutdown hangs and you press Ctrl-C again.
///
/// The signal handlers are installed before this returns, so that a signal arriving while the
/// manager starts up is not lost; the waiting happens in a background task.
pub fn cancel_on_signal(shutdown: CancellationToken) -> io::Result<()> {
    let mut signals = Signals::new()?;
    tokio::spawn(async move {
        let signal = signals.next().await;
        tracing::info!(
            signal,
            "shutting down gracefully; send the signal again to exit at once"
        );
        shutdown.cancel();
        let signal = signals.next().await;
        tracing::warn!(signal, "second signal received, exiting without waiting");
        std::process::exit(1);
    });
    Ok(())
}

/// The shutdown signals of this platform.
struct Signals {
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
}

impl Signals {
    fn new() -> io::Result<Self> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(Signals {
                terminate: signal(SignalKind::terminate())?,
                interrupt: signal(SignalKind::interrupt())?,
            })
        }
        #[cfg(not(unix))]
        {
            Ok(Signals {})
        }
    }

    /// Waits for the next signal and returns its name.
    async fn next(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.terminate.recv() => "SIGTERM",
                _ = self.interrupt.recv() => "SIGINT",
            }
        }
        #[cfg(not(unix))]
        {
            // Only Ctrl-C exists outside Unix; if it cannot be watched, never report a signal.
            match tokio::signal::ctrl_c().await {
                Ok(()) => "Ctrl-C",
                Err(_) => std::future::pending().await,
            }
        }
    }
}
