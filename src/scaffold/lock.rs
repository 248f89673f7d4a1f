//! The project lock: one writing command at a time in a project.
//!
//! Every command that writes takes it before it reads the project to plan, and keeps it until it
//! ends (so no other command can change a file between its planning and its writing). It is
//! `.operator-rs.lock` at the project root, holding the owner's process id, locked with `flock`
//! through the standard library's `File::try_lock` (stable since Rust 1.89, so no crate such as
//! `fs4` is needed). The kernel releases the lock of a process that dies, however it dies: a lock
//! file left by a killed command is stale and simply taken over; a live one makes the second
//! command fail at once with one line naming the first one's pid.
//!
//! Taking the lock also finishes or undoes a command that was killed while writing (see
//! [`super::journal::recover`]), and says so on stderr. The file is removed when the command
//! ends, also when a signal ends it (see [`super::interrupt`]).

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};

use super::{interrupt, journal};

/// The lock file's name, at the project root.
pub const FILE: &str = ".operator-rs.lock";

/// The project lock, held until dropped.
#[derive(Debug)]
pub struct ProjectLock {
    path: PathBuf,
    _file: File,
}

/// Takes the lock of the project in `dir` (or fails at once if another command holds it), then
/// recovers from a command that was killed while writing there.
pub fn lock(dir: &Path) -> Result<ProjectLock> {
    interrupt::install().context("setting up signal handling")?;
    // A signal while the lock is taken waits until the lock file is registered for removal.
    let deferred = interrupt::defer();
    let locked = take(dir).and_then(|lock| {
        if let Some(done) = journal::recover(dir)? {
            eprintln!("warning: {done}");
        }
        Ok(lock)
    });
    deferred.end(false);
    locked
}

fn take(dir: &Path) -> Result<ProjectLock> {
    let path = dir.join(FILE);
    // A command ending removes the lock file while holding the lock: a file opened just before
    // that can be locked just after, though it is gone. Such a lock is dropped and taken again.
    for _ in 0..10 {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .with_context(|| format!("creating the lock file {}", path.display()))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut owner = String::new();
                let _ = file.read_to_string(&mut owner);
                let pid = match owner.trim().parse::<u32>() {
                    Ok(pid) => format!(" (pid {pid})"),
                    Err(_) => String::new(),
                };
                bail!(
                    "another operator-rs command is running in {}{pid}; wait for it to finish",
                    dir.display()
                );
            }
            Err(TryLockError::Error(err)) => {
                return Err(err).with_context(|| format!("locking {}", path.display()));
            }
        }
        if !same_file(&file, &path) {
            continue;
        }
        file.set_len(0)
            .and_then(|()| writeln!(file, "{}", std::process::id()))
            .with_context(|| format!("writing the lock file {}", path.display()))?;
        interrupt::set_lock_file(Some(path.clone()));
        return Ok(ProjectLock { path, _file: file });
    }
    bail!("could not lock {}: it keeps being removed", path.display())
}

/// Whether `path` still names the file `file` has open.
fn same_file(file: &File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        match (file.metadata(), fs::metadata(path)) {
            (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        // Elsewhere an open file cannot be removed.
        let _ = (file, path);
        true
    }
}

impl Drop for ProjectLock {
    fn drop(&mut self) {
        interrupt::set_lock_file(None);
        // Removed while still locked; the lock goes with the file handle, right after.
        let _ = fs::remove_file(&self.path);
    }
}

/// For commands that only read (`--dry-run`): fails if a journal says that a command is writing
/// in `dir` or was killed while writing there, as the files may be half written.
pub fn refuse_unfinished(dir: &Path) -> Result<()> {
    if dir.join(journal::FILE).exists() {
        bail!(
            "an operator-rs command is writing in {dir} or was interrupted there ({file} exists); \
             wait for it, or run a command without --dry-run to undo the interrupted one",
            dir = dir.display(),
            file = journal::FILE
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_and_the_file_goes_with_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let first = take(dir.path()).unwrap();
        let lock_file = fs::read_to_string(dir.path().join(FILE)).unwrap();
        assert_eq!(lock_file.trim(), std::process::id().to_string());
        let err = take(dir.path()).unwrap_err().to_string();
        let pid = format!("(pid {})", std::process::id());
        assert!(
            err.contains("another operator-rs command") && err.contains(&pid),
            "{err}"
        );
        drop(first);
        assert!(!dir.path().join(FILE).exists());
        drop(take(dir.path()).unwrap());
    }

    #[test]
    fn a_stale_lock_file_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(FILE), "4194999\n").unwrap();
        drop(take(dir.path()).unwrap());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
