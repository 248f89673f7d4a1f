//! SIGINT, SIGTERM and SIGHUP while a command holds the project lock.
//!
//! Once [`install`]ed (by [`super::lock`]), a thread of signal-hook's receives these signals.
//! Outside [`defer`], a signal ends the command at once: the lock file is removed, one line says
//! what was written, and the exit code is 128 + the signal's number (130 for SIGINT, 143 for
//! SIGTERM), as a shell reports a process killed by it. Inside, while [`super::apply`] changes
//! the tree, the signal is only recorded: apply checks [`pending`] between the files it stages and
//! rolls back if one came; once the renames have begun it finishes them. Either way the command
//! ends with [`Deferred::end`], which then exits as above: the folder is as it was, or complete.
//!
//! On platforms without these signals nothing is installed and a signal ends the process as it
//! always does.

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

#[derive(Default)]
struct State {
    installed: bool,
    /// In [`defer`]: record signals instead of acting on them.
    deferring: bool,
    pending: Option<i32>,
    /// Whether the command has written its files (for the line printed when a signal ends it).
    written: bool,
    /// The lock file to remove when a signal ends the command.
    lock_file: Option<PathBuf>,
}

static STATE: Mutex<State> = Mutex::new(State {
    installed: false,
    deferring: false,
    pending: None,
    written: false,
    lock_file: None,
});

fn state() -> MutexGuard<'static, State> {
    // A panic elsewhere cannot leave the state half-updated: every update is a field store.
    STATE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Starts receiving SIGINT, SIGTERM and SIGHUP (once per process; later calls do nothing).
pub(crate) fn install() -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let mut st = state();
        if st.installed {
            return Ok(());
        }
        let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])?;
        std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                for signal in signals.forever() {
                    let mut st = state();
                    if st.deferring {
                        st.pending.get_or_insert(signal);
                    } else {
                        die(&mut st, signal);
                    }
                }
            })?;
        st.installed = true;
    }
    Ok(())
}

/// Registers (or, with None, forgets) the lock file that a signal ending the command removes.
pub(crate) fn set_lock_file(lock_file: Option<PathBuf>) {
    state().lock_file = lock_file;
}

/// Holds signals off until [`Deferred::end`] (or until dropped, after an early return or a panic:
/// then a signal that came meanwhile waits for the next [`Deferred::end`] of the command).
#[must_use = "end() acts on a signal that came meanwhile"]
pub(crate) struct Deferred(());

pub(crate) fn defer() -> Deferred {
    state().deferring = true;
    Deferred(())
}

/// Whether a signal came since [`defer`].
pub(crate) fn pending() -> bool {
    state().pending.is_some()
}

impl Deferred {
    /// Acts on signals again; `written`: whether the command's files are written now. If a signal
    /// came meanwhile, ends the command as that signal would have.
    pub(crate) fn end(self, written: bool) {
        let mut st = state();
        st.written |= written;
        if let Some(signal) = st.pending.take() {
            die(&mut st, signal);
        }
        // Drop turns deferring off.
    }
}

impl Drop for Deferred {
    fn drop(&mut self) {
        state().deferring = false;
    }
}

/// Ends the command because of `signal`: removes the lock file, prints one line, exits 128 + signal.
fn die(st: &mut State, signal: i32) -> ! {
    if let Some(lock) = st.lock_file.take() {
        let _ = std::fs::remove_file(lock);
    }
    #[cfg(unix)]
    let name = signal_hook::low_level::signal_name(signal).unwrap_or("a signal");
    #[cfg(not(unix))]
    let name = "a signal";
    let what = if st.written {
        " after every file was written; the steps after writing did not run"
    } else {
        "; the project was left as it was"
    };
    eprintln!("error: interrupted by {name}{what}");
    std::process::exit(128 + signal)
}
