//! Fault injection, so that tests/faults.rs can make a write fail (as on a full disk) or kill the
//! process at a chosen step of [`super::apply`] without root, a special file system or luck.
//!
//! `OPERATOR_RS_FAULT` holds comma-separated faults, `<what>:<step>:<n>` or `slow:<ms>`:
//! - `fail:<step>:<n>`: the n-th `<step>` fails: `write` with "No space left on device", after
//!   creating its temporary file, as a full disk does; `backup`, `rename`, `journal` with an I/O
//!   error;
//! - `kill:<step>:<n>`: the process sends itself SIGKILL right after the n-th `<step>`;
//! - `slow:<ms>`: sleeps `ms` milliseconds after every write and rename, so that signals sent at
//!   random moments land inside the commit.
//!
//! Steps, in the order [`super::apply`] takes them: `journal` (the journal is written: 1 before
//! anything else, 2 when every file is in place), `write` (a temporary file), `backup` (the link
//! that keeps an original), `rename` (a temporary file moved into place), `cleanup` (a backup
//! removed after the commit). Step numbers start at 1.
//!
//! The variable is read only in debug builds, which tests and CI run; in release builds every
//! hook compiles to nothing.

use std::io;

/// A step of [`super::apply`] that a fault can hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    Journal,
    Write,
    Backup,
    Rename,
    Cleanup,
}

/// Called before the n-th `step`: the error to fail it with, if a `fail:` fault names it.
pub(crate) fn fail(step: Step, n: usize) -> io::Result<()> {
    #[cfg(debug_assertions)]
    if faults().contains(&Fault::Fail(step, n)) {
        return Err(match step {
            // ENOSPC on Linux and the BSDs alike.
            Step::Write => io::Error::from_raw_os_error(28),
            _ => io::Error::other("injected I/O error"),
        });
    }
    let _ = (step, n);
    Ok(())
}

/// Called after the n-th `step`: dies there if a `kill:` fault names it; sleeps for `slow:`.
pub(crate) fn after(step: Step, n: usize) {
    #[cfg(debug_assertions)]
    for fault in faults() {
        match *fault {
            Fault::Kill(s, at) if s == step && at == n => kill_self(),
            Fault::Slow(ms) if matches!(step, Step::Write | Step::Rename) => {
                std::thread::sleep(std::time::Duration::from_millis(ms));
            }
            _ => {}
        }
    }
    let _ = (step, n);
}

#[cfg(debug_assertions)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    Fail(Step, usize),
    Kill(Step, usize),
    Slow(u64),
}

#[cfg(debug_assertions)]
fn faults() -> &'static [Fault] {
    static FAULTS: std::sync::OnceLock<Vec<Fault>> = std::sync::OnceLock::new();
    FAULTS.get_or_init(|| {
        let spec = std::env::var("OPERATOR_RS_FAULT").unwrap_or_default();
        spec.split(',')
            .filter(|s| !s.is_empty())
            .map(|s| parse(s).unwrap_or_else(|| panic!("OPERATOR_RS_FAULT: bad fault {s:?}")))
            .collect()
    })
}

#[cfg(debug_assertions)]
fn parse(spec: &str) -> Option<Fault> {
    let parts: Vec<&str> = spec.split(':').collect();
    match parts[..] {
        ["slow", ms] => Some(Fault::Slow(ms.parse().ok()?)),
        [what, step, n] => {
            let step = match step {
                "journal" => Step::Journal,
                "write" => Step::Write,
                "backup" => Step::Backup,
                "rename" => Step::Rename,
                "cleanup" => Step::Cleanup,
                _ => return None,
            };
            let n = n.parse().ok()?;
            match what {
                "fail" => Some(Fault::Fail(step, n)),
                "kill" => Some(Fault::Kill(step, n)),
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(debug_assertions)]
fn kill_self() -> ! {
    #[cfg(unix)]
    let _ = signal_hook::low_level::raise(signal_hook::consts::SIGKILL);
    // Where there is no SIGKILL: an exit that runs no clean-up either.
    std::process::abort()
}

#[cfg(all(test, debug_assertions))]
mod tests {
    use super::*;

    #[test]
    fn faults_parse() {
        assert_eq!(parse("fail:write:3"), Some(Fault::Fail(Step::Write, 3)));
        assert_eq!(parse("kill:rename:1"), Some(Fault::Kill(Step::Rename, 1)));
        assert_eq!(parse("slow:5"), Some(Fault::Slow(5)));
        for bad in [
            "fail:write",
            "boom:write:1",
            "fail:nowhere:1",
            "slow:x",
            "kill:rename:-1",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }
}
