//! Writing a plan all or nothing.
//!
//! Every new content is first written to a temporary file next to its target (same directory,
//! so the final `rename` is atomic on POSIX file systems). Only when every temporary file exists
//! are they renamed into place. If anything fails, the temporary files are removed, files that
//! were already replaced get their original bytes back, and directories the plan created are
//! removed again: the tree is left as it was.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use super::plan::Plan;

/// A file replaced so far, and what it held before (None: it did not exist).
struct Replaced {
    target: PathBuf,
    original: Option<Vec<u8>>,
}

/// Writes every change of `plan` under its root, or none of them.
pub fn apply(plan: &Plan) -> Result<()> {
    let mut created_dirs: Vec<PathBuf> = Vec::new();
    let mut staged: Vec<(PathBuf, PathBuf)> = Vec::new();
    let mut replaced: Vec<Replaced> = Vec::new();

    let result = stage_all(plan, &mut created_dirs, &mut staged)
        .and_then(|()| commit_all(&staged, &mut replaced));
    if result.is_err() {
        roll_back(&staged, &replaced, &created_dirs);
    }
    result
}

fn stage_all(
    plan: &Plan,
    created_dirs: &mut Vec<PathBuf>,
    staged: &mut Vec<(PathBuf, PathBuf)>,
) -> Result<()> {
    for change in plan.changes() {
        let target = plan.root().join(&change.path);
        if let Some(parent) = target.parent() {
            create_dirs(parent, created_dirs)?;
        }
        let temp = temp_path(&target);
        fs::write(&temp, &change.contents)
            .with_context(|| format!("writing {}", temp.display()))?;
        staged.push((temp, target));
    }
    Ok(())
}

fn commit_all(staged: &[(PathBuf, PathBuf)], replaced: &mut Vec<Replaced>) -> Result<()> {
    for (temp, target) in staged {
        let original = match fs::read(target) {
            Ok(bytes) => Some(bytes),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
            Err(err) => return Err(err).with_context(|| format!("reading {}", target.display())),
        };
        fs::rename(temp, target).with_context(|| format!("writing {}", target.display()))?;
        replaced.push(Replaced {
            target: target.clone(),
            original,
        });
    }
    Ok(())
}

/// Best effort: runs only after a failure, whose error is what the user sees.
fn roll_back(staged: &[(PathBuf, PathBuf)], replaced: &[Replaced], created_dirs: &[PathBuf]) {
    for (temp, _) in staged {
        let _ = fs::remove_file(temp);
    }
    for r in replaced.iter().rev() {
        let _ = match &r.original {
            Some(bytes) => fs::write(&r.target, bytes),
            None => fs::remove_file(&r.target),
        };
    }
    for dir in created_dirs.iter().rev() {
        let _ = fs::remove_dir(dir);
    }
}

/// Creates `dir` and its missing ancestors, recording each one created (outermost first).
fn create_dirs(dir: &Path, created: &mut Vec<PathBuf>) -> Result<()> {
    if dir.as_os_str().is_empty() || dir.is_dir() {
        return Ok(());
    }
    if let Some(parent) = dir.parent() {
        create_dirs(parent, created)?;
    }
    fs::create_dir(dir).with_context(|| format!("creating directory {}", dir.display()))?;
    created.push(dir.to_path_buf());
    Ok(())
}

fn temp_path(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    target.with_file_name(format!(".{name}.operator-rs-{}.tmp", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scaffold::plan::IfExists;

    #[test]
    fn writes_every_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut plan = Plan::new(dir.path(), false);
        plan.create("a/b/c.txt", "c".into(), IfExists::Error)
            .unwrap();
        plan.create("d.txt", "d".into(), IfExists::Error).unwrap();
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
        plan.create("keep.txt", "changed".into(), IfExists::Error)
            .unwrap();
        plan.create("new/dir/file.txt", "n".into(), IfExists::Error)
            .unwrap();
        plan.create("blocker/inside.txt", "b".into(), IfExists::Error)
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
}
