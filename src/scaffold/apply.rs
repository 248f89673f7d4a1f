//! Writing a plan all or nothing, whatever happens meanwhile.
//!
//! A commit takes these steps, each undone by [`Journal::roll_back`] if a later one fails:
//! 1. For each file, decide where it goes: a symbolic link is written through (the file it points
//!    to is replaced, never the link), and note the directories to create.
//! 2. Write the journal (see [`super::journal`]) listing all of it, so that a command killed from
//!    here on is undone by the next one.
//! 3. Create the directories; write each new content to a temporary file next to its target (same
//!    directory, so the rename below is atomic), with the permissions of the file it replaces;
//!    keep each original as a backup (a hard link: no copy, no space; a copy where links fail).
//!    Nothing the user sees has changed yet: a full disk or an unwritable file fails here.
//! 4. Rename every temporary file over its target.
//! 5. Write the journal again, as committed: from here on the command is complete.
//! 6. Remove the backups, then the journal.
//!
//! On any failure the temporary files and backups are removed, replaced files get their originals
//! back, created files and directories are removed, and the error names the file that failed.
//! SIGINT, SIGTERM and SIGHUP are held off meanwhile (see [`super::interrupt`]): one that comes
//! before the renames rolls the commit back, one that comes during them lets them finish; then
//! the command ends. Temporary names hold the process id and a counter, so no two commands or
//! files share one. Nothing is synced to disk: this protects against the process dying, not
//! against the machine losing power.

use std::fs::{self, OpenOptions, Permissions};
use std::io::{self, ErrorKind, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Context as _, Result, anyhow, bail};

use super::fault::{self, Step};
use super::interrupt;
use super::journal::{Entry, Journal};
use super::plan::{Action, Plan};

/// Writes every change of `plan` under its root, or none of them.
pub fn apply(plan: &Plan) -> Result<()> {
    if plan.changes().is_empty() {
        return Ok(());
    }
    let deferred = interrupt::defer();
    let result = write_all(plan);
    // Exits here if a signal came meanwhile, with the tree complete or as it was.
    deferred.end(result.is_ok());
    result
}

fn write_all(plan: &Plan) -> Result<()> {
    let mut journal = Journal::new(plan.root());
    let modes = prepare(plan, &mut journal)?;
    journal.save()?;
    let committed = stage(plan, &journal, &modes)
        .and_then(|()| rename_all(plan, &journal))
        .and_then(|()| {
            journal.committed = true;
            journal.save()
        });
    if let Err(err) = committed {
        return Err(match journal.roll_back() {
            Ok(()) => anyhow!("{err:#}; the project was left as it was"),
            Err(undo) => anyhow!(
                "{err:#}; undoing the other changes failed too ({undo}); the next operator-rs \
                 command will try again"
            ),
        });
    }
    if let Err(err) = journal.clean_up() {
        // The files are all written; the journal stays, and the next command removes the rest.
        eprintln!("warning: removing the backups of the files written: {err}");
    }
    remove_empty_dirs(plan);
    Ok(())
}

/// Step 1: fills the journal with where each file goes; returns the permissions of each original.
fn prepare(plan: &Plan, journal: &mut Journal) -> Result<Vec<Option<Permissions>>> {
    let mut modes = Vec::with_capacity(plan.changes().len());
    for change in plan.changes() {
        // A file removed is the file at its path (a link is removed, not what it points to).
        let target = if change.action == Action::Delete {
            plan.root().join(&change.path)
        } else {
            through_link(&plan.root().join(&change.path), &change.path)?
        };
        let mode = match fs::metadata(&target) {
            Ok(meta) => Some(meta.permissions()),
            Err(err) if err.kind() == ErrorKind::NotFound => None,
            Err(err) => return Err(err).with_context(|| format!("reading {}", change.path)),
        };
        if let Some(parent) = target.parent() {
            for dir in missing_dirs(parent) {
                if !journal.dirs.contains(&dir) {
                    journal.dirs.push(dir);
                }
            }
        }
        journal.files.push(Entry {
            temp: sibling(&target, "tmp"),
            backup: mode.is_some().then(|| sibling(&target, "orig")),
            target,
        });
        modes.push(mode);
    }
    Ok(modes)
}

/// Step 3: directories, temporary files and backups. Stops early when a signal came.
fn stage(plan: &Plan, journal: &Journal, modes: &[Option<Permissions>]) -> Result<()> {
    for dir in &journal.dirs {
        fs::create_dir(dir)
            .with_context(|| format!("creating directory {}", shown(plan, dir).display()))?;
    }
    let mut backups = 0;
    for (i, (e, change)) in journal.files.iter().zip(plan.changes()).enumerate() {
        if interrupt::pending() {
            bail!("interrupted");
        }
        if change.action == Action::Delete {
            // Only the backup: the file goes in step 4; a roll-back renames the backup back.
            if let Some(backup) = &e.backup {
                backups += 1;
                fault::fail(Step::Backup, backups)
                    .and_then(|()| keep_as_is(&e.target, backup))
                    .with_context(|| format!("keeping a backup of {}", change.path))?;
                fault::after(Step::Backup, backups);
            }
            continue;
        }
        write_temp(&e.temp, &change.contents, modes[i].as_ref(), i + 1)
            .with_context(|| format!("writing {}", change.path))?;
        fault::after(Step::Write, i + 1);
        if let Some(backup) = &e.backup {
            backups += 1;
            fault::fail(Step::Backup, backups)
                .and_then(|()| keep(&e.target, backup))
                .with_context(|| format!("keeping a backup of {}", change.path))?;
            fault::after(Step::Backup, backups);
        }
    }
    if interrupt::pending() {
        bail!("interrupted");
    }
    Ok(())
}

/// Step 4: every temporary file over its target. A signal now waits until they are all renamed.
fn rename_all(plan: &Plan, journal: &Journal) -> Result<()> {
    for (i, (e, change)) in journal.files.iter().zip(plan.changes()).enumerate() {
        fault::fail(Step::Rename, i + 1)
            .and_then(|()| {
                if change.action == Action::Delete {
                    fs::remove_file(&e.target)
                } else {
                    fs::rename(&e.temp, &e.target)
                }
            })
            .with_context(|| format!("writing {}", change.path))?;
        fault::after(Step::Rename, i + 1);
    }
    Ok(())
}

fn write_temp(temp: &Path, contents: &str, mode: Option<&Permissions>, n: usize) -> io::Result<()> {
    let mut file = OpenOptions::new().write(true).create_new(true).open(temp)?;
    fault::fail(Step::Write, n)?;
    file.write_all(contents.as_bytes())?;
    if let Some(mode) = mode {
        // After writing: the original may be read-only.
        file.set_permissions(mode.clone())?;
    }
    Ok(())
}

/// Keeps the original at `target` as `backup`: a second link to it, or a copy where the file
/// system has no hard links.
fn keep(target: &Path, backup: &Path) -> io::Result<()> {
    fs::hard_link(target, backup).or_else(|_| fs::copy(target, backup).map(drop))
}

/// Keeps a file about to be removed as `backup`: a hard link (of a symbolic link itself, not of
/// what it points to), else a copy, else for a link a new link with the same target.
fn keep_as_is(target: &Path, backup: &Path) -> io::Result<()> {
    let meta = fs::symlink_metadata(target)?;
    if meta.file_type().is_symlink() {
        #[cfg(unix)]
        return std::os::unix::fs::symlink(fs::read_link(target)?, backup);
    }
    keep(target, backup)
}

/// Removes the folders that removed files left empty, innermost first (best effort: a folder
/// that holds anything else stays).
fn remove_empty_dirs(plan: &Plan) {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for change in plan.changes().iter().filter(|c| c.action == Action::Delete) {
        let mut dir = Path::new(&change.path).parent();
        while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
            if !dirs.iter().any(|x| x == d) {
                dirs.push(d.to_path_buf());
            }
            dir = d.parent();
        }
    }
    dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    for dir in dirs {
        let _ = fs::remove_dir(plan.root().join(dir));
    }
}

/// Where writing `path` goes: `path` itself, or the file it links to. A link is followed, not
/// replaced, so that a file kept elsewhere and linked into the project stays shared.
fn through_link(path: &Path, shown: &str) -> Result<PathBuf> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => fs::canonicalize(path).with_context(|| {
            format!(
                "{shown} is a symbolic link to a file that does not exist; restore the file or \
                 remove the link"
            )
        }),
        _ => Ok(path.to_path_buf()),
    }
}

/// The ancestors of `dir`, and `dir` itself, that are not directories yet, outermost first.
fn missing_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut missing: Vec<PathBuf> = dir
        .ancestors()
        .take_while(|d| !d.as_os_str().is_empty() && !d.is_dir())
        .map(Path::to_path_buf)
        .collect();
    missing.reverse();
    missing
}

/// A name next to `target` that no other file has: hidden, with the process id and a counter.
fn sibling(target: &Path, ext: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    // Short enough that the name stays under the usual limit of 255 bytes.
    let name: String = target
        .file_name()
        .map(|n| n.to_string_lossy().chars().take(64).collect())
        .unwrap_or_default();
    let pid = std::process::id();
    target.with_file_name(format!(".{name}.operator-rs-{pid}-{n}.{ext}"))
}

/// `path` as the user knows it: relative to the project when under it.
fn shown<'a>(plan: &Plan, path: &'a Path) -> &'a Path {
    path.strip_prefix(plan.root()).unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scaffold::plan::Owner;

    #[test]
    fn writes_every_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut plan = Plan::new(dir.path(), false);
        plan.create("a/b/c.txt", "c".into(), Owner::User).unwrap();
        plan.create("d.txt", "d".into(), Owner::User).unwrap();
        apply(&plan).unwrap();
        assert_eq!(
            fs::read_to_string(dir.path().join("a/b/c.txt")).unwrap(),
            "c"
        );
        assert_eq!(fs::read_to_string(dir.path().join("d.txt")).unwrap(), "d");
    }

    #[test]
    fn a_failure_leaves_the_tree_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("keep.txt"), "original").unwrap();
        let mut plan = Plan::new(dir.path(), true);
        plan.written("keep.txt", "original".into());
        plan.create("keep.txt", "changed".into(), Owner::User)
            .unwrap();
        plan.create("new/dir/file.txt", "n".into(), Owner::User)
            .unwrap();
        plan.create("blocker/inside.txt", "b".into(), Owner::User)
            .unwrap();
        // A regular file appearing where the plan needs a directory makes staging fail half-way.
        fs::write(dir.path().join("blocker"), "x").unwrap();
        assert!(apply(&plan).is_err());

        let mut names: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["blocker", "keep.txt"]);
        assert_eq!(
            fs::read_to_string(dir.path().join("keep.txt")).unwrap(),
            "original"
        );
    }

    #[cfg(unix)]
    #[test]
    fn updates_keep_permissions_and_write_through_links() {
        use std::os::unix::fs::{PermissionsExt as _, symlink};
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let script = dir.path().join("run.sh");
        fs::write(&script, "old").unwrap();
        fs::set_permissions(&script, Permissions::from_mode(0o751)).unwrap();
        let shared = elsewhere.path().join("shared.txt");
        fs::write(&shared, "old").unwrap();
        fs::set_permissions(&shared, Permissions::from_mode(0o640)).unwrap();
        symlink(&shared, dir.path().join("link.txt")).unwrap();

        let mut plan = Plan::new(dir.path(), true);
        plan.write("run.sh", "new".into()).unwrap();
        plan.write("link.txt", "new".into()).unwrap();
        apply(&plan).unwrap();

        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        assert_eq!(fs::read_to_string(&script).unwrap(), "new");
        assert_eq!(mode(&script), 0o751);
        let link = fs::symlink_metadata(dir.path().join("link.txt")).unwrap();
        assert!(link.file_type().is_symlink(), "the link was replaced");
        assert_eq!(fs::read_to_string(&shared).unwrap(), "new");
        assert_eq!(mode(&shared), 0o640);
        // No temporary file, backup or journal is left, here or next to the linked file.
        let names = |d: &Path| fs::read_dir(d).unwrap().count();
        assert_eq!((names(dir.path()), names(elsewhere.path())), (2, 1));
    }

    #[cfg(unix)]
    #[test]
    fn a_link_to_nothing_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("missing.txt", dir.path().join("link.txt")).unwrap();
        let mut plan = Plan::new(dir.path(), true);
        plan.write("link.txt", "new".into()).unwrap();
        plan.write("other.txt", "new".into()).unwrap();
        let err = format!("{:#}", apply(&plan).unwrap_err());
        assert!(err.contains("link.txt is a symbolic link"), "{err}");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
