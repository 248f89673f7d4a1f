//! The three-way merge of `alpha update`, file by file: the scaffold the project started from
//! (the ancestor), the user's tree, and the scaffold of this operator-rs (the upgrade).
//!
//! A file only one side changed takes that side; a file both changed is merged line by line by
//! `git merge-file` (the merge git itself uses; git is on every machine that builds operator
//! projects), and where the two changed the same lines the file gets conflict markers, listed
//! for the user to resolve. A file the user edited is never dropped, whatever the new scaffold
//! does with it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use anyhow::{Context as _, Result, bail};

use super::git::GitConfig;

/// What happens to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    /// The file becomes the new scaffold's text (the user had not changed it).
    Write(String),
    /// The file becomes this clean merge of the user's changes and the new scaffold's.
    Merged(String),
    /// The file becomes this text, with conflict markers.
    Conflict(String),
    /// The file goes: the user had not touched it and the new scaffold has no such file.
    Delete,
    /// The user's file stays as it is, though the scaffold changed it: the reason says why.
    Kept(&'static str),
}

/// The three versions of the files, by path.
pub struct Trees<'a> {
    pub ancestor: &'a BTreeMap<String, String>,
    pub user: &'a BTreeMap<String, String>,
    pub upgrade: &'a BTreeMap<String, String>,
}

/// Labels of the three sides in conflict markers.
pub struct Labels {
    pub user: String,
    pub ancestor: String,
    pub upgrade: String,
}

/// The resolution of every path of the ancestor or the upgrade that needs something done, in
/// path order. Paths that stay as the user has them are left out.
/// `git` runs with the update's settings (`--git-config merge.conflictStyle=diff3` …).
pub fn merge(
    trees: &Trees,
    labels: &Labels,
    git: &GitConfig,
) -> Result<BTreeMap<String, Resolution>> {
    let paths: BTreeSet<&String> = trees.ancestor.keys().chain(trees.upgrade.keys()).collect();
    let mut out = BTreeMap::new();
    for path in paths {
        let ancestor = trees.ancestor.get(path);
        let user = trees.user.get(path);
        let upgrade = trees.upgrade.get(path);
        if let Some(resolution) = resolve(ancestor, user, upgrade, labels, git)? {
            out.insert(path.clone(), resolution);
        }
    }
    Ok(out)
}

fn resolve(
    ancestor: Option<&String>,
    user: Option<&String>,
    upgrade: Option<&String>,
    labels: &Labels,
    git: &GitConfig,
) -> Result<Option<Resolution>> {
    if user == upgrade || ancestor == upgrade {
        // Nothing new for the user, or the scaffold did not change this file: theirs stays.
        return Ok(None);
    }
    if ancestor == user {
        // Untouched by the user: the new scaffold's, or gone with it.
        return Ok(Some(match upgrade {
            Some(text) => Resolution::Write(text.clone()),
            None => Resolution::Delete,
        }));
    }
    Ok(Some(match (user, upgrade) {
        (Some(_), None) => Resolution::Kept("edited, and the new scaffold no longer has it"),
        (None, Some(_)) => Resolution::Kept("deleted, and the new scaffold changed it"),
        (Some(user), Some(upgrade)) => {
            let base = ancestor.map_or("", String::as_str);
            let (text, clean) = merge_text(base, user, upgrade, labels, git)?;
            if clean {
                Resolution::Merged(text)
            } else {
                Resolution::Conflict(text)
            }
        }
        (None, None) => unreachable!("user == upgrade was handled"),
    }))
}

/// `git merge-file` of one file: the merged text, and whether it merged without conflicts.
fn merge_text(
    base: &str,
    user: &str,
    upgrade: &str,
    labels: &Labels,
    git: &GitConfig,
) -> Result<(String, bool)> {
    let dir = tempfile::tempdir().context("creating a folder for the merge")?;
    let write = |name: &str, text: &str| -> Result<std::path::PathBuf> {
        let path = dir.path().join(name);
        std::fs::write(&path, text)?;
        Ok(path)
    };
    let (user_file, base_file, upgrade_file) = (
        write("user", user)?,
        write("base", base)?,
        write("upgrade", upgrade)?,
    );
    // merge-file reads merge.conflictStyle only inside a repository: the style is also given
    // as its own flag, so that --in-place outside git shows conflicts the same way.
    let style = match git.get("merge.conflictStyle") {
        Some(style) if style.eq_ignore_ascii_case("diff3") => Some("--diff3"),
        Some(style) if style.eq_ignore_ascii_case("zdiff3") => Some("--zdiff3"),
        _ => None,
    };
    let output = git
        .git()
        .arg("merge-file")
        .args(style)
        .arg("--stdout")
        .args([
            "-L",
            &labels.user,
            "-L",
            &labels.ancestor,
            "-L",
            &labels.upgrade,
        ])
        .args([&user_file, &base_file, &upgrade_file])
        .output()
        .context("running git merge-file (alpha update needs git)")?;
    // The exit code is the number of conflicts (capped at 127); a negative code is an error.
    match output.status.code() {
        Some(0) => Ok((String::from_utf8_lossy(&output.stdout).into_owned(), true)),
        Some(1..=127) => Ok((String::from_utf8_lossy(&output.stdout).into_owned(), false)),
        _ => bail!(
            "git merge-file failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ),
    }
}

/// Whether `dir` is in a git work tree with uncommitted changes to tracked files (which an
/// update could mix with its own); `false` outside git.
pub fn has_uncommitted_changes(dir: &Path) -> Result<bool> {
    let output = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=no"])
        .current_dir(dir)
        .output()
        .context("running git status")?;
    Ok(output.status.success() && !output.stdout.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels() -> Labels {
        Labels {
            user: "yours".into(),
            ancestor: "operator-rs 0.1.0".into(),
            upgrade: "operator-rs 0.2.0".into(),
        }
    }

    fn one(a: Option<&str>, u: Option<&str>, n: Option<&str>) -> Option<Resolution> {
        let own = |t: Option<&str>| t.map(str::to_string);
        let git = GitConfig::from_flags(&[]).unwrap();
        resolve(
            own(a).as_ref(),
            own(u).as_ref(),
            own(n).as_ref(),
            &labels(),
            &git,
        )
        .unwrap()
    }

    #[test]
    fn each_side_alone_wins() {
        // The scaffold did not change: the user's edit stays.
        assert_eq!(one(Some("a\n"), Some("mine\n"), Some("a\n")), None);
        // The user did not change: the new scaffold's.
        assert_eq!(
            one(Some("a\n"), Some("a\n"), Some("new\n")),
            Some(Resolution::Write("new\n".into()))
        );
        // New in the scaffold.
        assert_eq!(
            one(None, None, Some("new\n")),
            Some(Resolution::Write("new\n".into()))
        );
        // Gone from the scaffold, untouched: gone.
        assert_eq!(
            one(Some("a\n"), Some("a\n"), None),
            Some(Resolution::Delete)
        );
        // Both made the same change.
        assert_eq!(one(Some("a\n"), Some("b\n"), Some("b\n")), None);
    }

    #[test]
    fn edited_files_are_never_dropped() {
        assert!(matches!(
            one(Some("a\n"), Some("mine\n"), None),
            Some(Resolution::Kept(_))
        ));
        assert!(matches!(
            one(Some("a\n"), None, Some("new\n")),
            Some(Resolution::Kept(_))
        ));
    }

    #[test]
    fn changes_to_different_lines_merge() {
        let base = "one\ntwo\nthree\nfour\nfive\n";
        let user = "one\nTWO (mine)\nthree\nfour\nfive\n";
        let upgrade = "one\ntwo\nthree\nfour\nFIVE (new)\n";
        assert_eq!(
            one(Some(base), Some(user), Some(upgrade)),
            Some(Resolution::Merged(
                "one\nTWO (mine)\nthree\nfour\nFIVE (new)\n".into()
            ))
        );
    }

    #[test]
    fn changes_to_the_same_lines_conflict_with_labelled_markers() {
        let Some(Resolution::Conflict(text)) =
            one(Some("x = 1\n"), Some("x = 2\n"), Some("x = 3\n"))
        else {
            panic!("expected a conflict");
        };
        assert_eq!(
            text,
            "<<<<<<< yours\nx = 2\n=======\nx = 3\n>>>>>>> operator-rs 0.2.0\n"
        );
    }

    #[test]
    fn the_conflict_style_of_git_config_shows_the_ancestor() {
        // The tests run in operator-rs's git checkout, where `git merge-file` reads `-c`.
        let git = GitConfig::from_flags(&["merge.conflictStyle=diff3".into()]).unwrap();
        let own = |t: &str| Some(t.to_string());
        let resolution = resolve(
            own("x = 1\n").as_ref(),
            own("x = 2\n").as_ref(),
            own("x = 3\n").as_ref(),
            &labels(),
            &git,
        )
        .unwrap();
        let Some(Resolution::Conflict(text)) = resolution else {
            panic!("expected a conflict");
        };
        assert!(
            text.contains("||||||| operator-rs 0.1.0\nx = 1\n"),
            "{text}"
        );
    }

    #[test]
    fn a_file_both_sides_added_differently_conflicts() {
        assert!(matches!(
            one(None, Some("mine\n"), Some("new\n")),
            Some(Resolution::Conflict(_))
        ));
    }
}
