{{ rust_header }}//! The manager: the process that runs the controllers, like controller-runtime's manager in Go.
//!
//! [`run`] connects to Kubernetes, serves the health probes, sets up every controller from
//! [`crate::controller`] and runs them until SIGINT or SIGTERM, then shuts everything down
//! gracefully. `src/main.rs` only parses the [`flags::Flags`], sets up [`logging`] and calls it.

pub mod flags;
pub mod health;
pub mod logging;
pub mod shutdown;

use std::time::Duration;

use anyhow::{Context as _, anyhow};
use kube::Client;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::controller::Shared;
use flags::{BindAddress, Flags};
use health::Readiness;

/// How long the controllers and servers get to finish their work after shutdown starts, like
/// controller-runtime's default `GracefulShutdownTimeout`. Kubernetes kills the pod anyway after its
/// `terminationGracePeriodSeconds` (see `config/manager/manager.yaml`).
pub const GRACEFUL_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(30);

/// Runs the operator until it is asked to stop.
///
/// Returns `Ok(())` after a graceful shutdown on SIGINT or SIGTERM. Returns an error when startup
/// fails (no usable kubeconfig, probe port taken), when a controller or server fails or stops on its
/// own, or when shutdown takes longer than [`GRACEFUL_SHUTDOWN_TIMEOUT`].
pub async fn run(flags: Flags) -> anyhow::Result<()> {
    warn_about_unimplemented_flags(&flags);

    // Everything stops when this token is cancelled: on a signal, or when any task fails.
    let shutdown = CancellationToken::new();
    shutdown::cancel_on_signal(shutdown.clone()).context("cannot install signal handlers")?;

    let client = Client::try_default()
        .await
        .context("cannot create a Kubernetes client from the kubeconfig or in-cluster config")?;

    let readiness = Readiness::default();
    let mut tasks: JoinSet<TaskResult> = JoinSet::new();

    if let Some(address) = flags.health_probe_bind_address.socket_addr() {
        let listener = health::bind(address)
            .await
            .with_context(|| format!("cannot bind the health probe address {address}"))?;
        tracing::info!(%address, "serving health probes on /healthz and /readyz");
        let (readiness, shutdown) = (readiness.clone(), shutdown.clone());
        tasks.spawn(async move {
            let result = health::serve(listener, readiness, shutdown).await;
            (
                "health probe server".to_owned(),
                result.map_err(anyhow::Error::from),
            )
        });
    }

    let shared = Shared {
        client,
        readiness: readiness.clone(),
        shutdown: shutdown.clone(),
    };
    let controllers = shared.controllers();
    tracing::info!(count = controllers.len(), "starting controllers");
    for (index, controller) in controllers.into_iter().enumerate() {
        let name = format!("controller #{index} of Shared::controllers()");
        tasks.spawn(async move { (name, controller.await) });
    }
    // Every controller has registered with `readiness` during setup; from now on `/readyz` only
    // waits for their caches.
    readiness.mark_started();

    supervise(tasks, &shutdown).await
}

/// What each task of the manager returns: its name for messages, and how it ended.
type TaskResult = (String, anyhow::Result<()>);

/// Waits for all tasks to finish after shutdown, which starts on a signal or as soon as a task
/// fails or stops on its own (tasks are meant to run until shutdown). Returns the first failure.
async fn supervise(
    mut tasks: JoinSet<TaskResult>,
    shutdown: &CancellationToken,
) -> anyhow::Result<()> {
    // Once shutdown starts, the remaining tasks get a deadline.
    let deadline = shutdown_deadline(shutdown);
    tokio::pin!(deadline);
    let mut first_error = None;
    loop {
        let next = tokio::select! {
            next = tasks.join_next() => next,
            () = &mut deadline => {
                tasks.abort_all();
                return Err(first_error.unwrap_or_else(|| {
                    anyhow!("graceful shutdown took longer than {GRACEFUL_SHUTDOWN_TIMEOUT:?}")
                }));
            }
        };
        let Some(joined) = next else {
            if shutdown.is_cancelled() {
                break;
            }
            // Nothing to run (no controllers, probes disabled): idle until asked to stop.
            shutdown.cancelled().await;
            continue;
        };
        let (task, result) = match joined {
            Ok(finished) => finished,
            // The task panicked (the panic message is already logged) or was aborted.
            Err(join_error) => ("a task".to_owned(), Err(anyhow!(join_error))),
        };
        let failure = match result {
            Err(error) => Some(error.context(format!("{task} failed"))),
            Ok(()) if !shutdown.is_cancelled() => Some(anyhow!("{task} stopped unexpectedly")),
            Ok(()) => None,
        };
        if let Some(error) = failure {
            tracing::error!("{error:#}; shutting down");
            shutdown.cancel();
            first_error.get_or_insert(error);
        }
    }

    match first_error {
        Some(error) => Err(error),
        None => {
            tracing::info!("shutdown complete");
            Ok(())
        }
    }
}

/// Completes [`GRACEFUL_SHUTDOWN_TIMEOUT`] after shutdown has started.
async fn shutdown_deadline(shutdown: &CancellationToken) {
    shutdown.cancelled().await;
    tokio::time::sleep(GRACEFUL_SHUTDOWN_TIMEOUT).await;
}

/// Says loudly which flags are accepted (so existing deployment patches keep working) but do
/// not do anything yet.
fn warn_about_unimplemented_flags(flags: &Flags) {
    if let BindAddress::Enabled(address) = flags.metrics_bind_address {
        tracing::warn!(
            %address,
            "--metrics-bind-address is set, but this manager does not serve metrics yet; \
             --metrics-bind-address, --metrics-secure and --enable-http2 have no effect"
        );
    }
    if flags.leader_elect {
        tracing::warn!(
            lease = %flags.leader_election_id,
            "--leader-elect is set, but this manager does not implement leader election yet; \
             every replica runs the controllers, so run a single replica"
        );
    }
}
