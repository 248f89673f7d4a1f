//! `alpha update` on git branches, as kubebuilder's: from the user's HEAD it commits
//! - the ancestor: the project as the old release scaffolds it (parent: HEAD);
//! - the original: HEAD's files again (parent: the ancestor);
//! - the upgrade: the project as the new release scaffolds it (parent: the ancestor);
//! - the merge of the original and the upgrade, whose merge base is then the ancestor,
//!
//! and points the output branch at the merge (or, with `--squash`, at one commit on HEAD with
//! the merge's files). Conflicting files are committed with their markers only with `--force`;
//! without it, the original and upgrade are left on branches for `git merge` by hand. Nothing
//! is written into the user's work tree or index until the output branch is checked out.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context as _, Result, bail};

use super::{Change, Report, Scaffolds, Versions};
use crate::cli::AlphaUpdateArgs;
use crate::commands::alpha::git::Repo;
use crate::commands::alpha::tree;
use crate::project;
use crate::scaffold;

pub fn run(args: &AlphaUpdateArgs, dir: &Path) -> Result<()> {
    // The releases from the folder's PROJECT, so that a project on this release hears so in or
    // out of git; the records that are replayed are HEAD's.
    let Some(versions) = Versions::of(args, &crate::commands::load_project(dir)?)? else {
        return Ok(());
    };
    let repo = Repo::open(dir)?;
    let dirty = repo.is_dirty()?;
    if dirty && !args.force {
        bail!(
            "the project has uncommitted changes, which the update (made from HEAD) would not \
             have: commit or stash them first (or pass --force to leave them out)"
        );
    }
    let _lock = (!args.common.dry_run)
        .then(|| scaffold::lock(dir))
        .transpose()?;
    // The user's project is HEAD's commit, checked out into a scratch folder.
    let scratch = tempfile::tempdir().context("creating a scratch folder")?;
    let original_dir = scratch.path().join("original");
    std::fs::create_dir_all(&original_dir)?;
    repo.check_out_head(&original_dir)?;
    let project = crate::commands::load_project(&original_dir)?;
    let output = args
        .output_branch
        .clone()
        .unwrap_or_else(|| format!("operator-rs-update-{}-to-{}", versions.from, versions.to));
    if repo.branch_exists(&output)? {
        bail!(
            "branch {output} exists already: delete it (git branch -D {output}) or pass \
             --output-branch <new name>"
        );
    }
    let binaries = versions.binaries(args, dir)?;
    let scaffolds = Scaffolds::make(
        &project,
        &original_dir,
        &versions,
        (&binaries.0, &binaries.1),
    )?;
    let user = tree::read(&original_dir)?;
    let (changes, report) = super::changes(&scaffolds, &user, &project, &versions)?;
    if !dirty {
        // The output branch is checked out at the end: what would make git refuse that refuses
        // the update now, before anything is committed.
        check_checkout(&repo, &changes)?;
    }

    if args.common.dry_run {
        print!("{}", super::plan(dir, &changes)?.describe());
        report.print();
        println!("(dry run: nothing was committed; the output branch would be {output})");
        return Ok(());
    }

    // Each scaffold carries the user's PROJECT with its release's cliVersion, so that PROJECT
    // changes by that line alone from one commit to the next.
    for (folder, version) in [
        (&scaffolds.ancestor_dir, &versions.from),
        (&scaffolds.upgrade_dir, &versions.to),
    ] {
        std::fs::write(
            folder.join(project::FILE),
            super::with_version(&project, version),
        )?;
    }
    let head = repo.head()?;
    let title = format!(
        "operator-rs alpha update from {} to {}",
        versions.from, versions.to
    );
    let (original, upgrade) = commit_sides(&repo, &scaffolds, &versions, &head, &title)?;
    report.print();
    if !report.conflicts.is_empty() && !args.force {
        return Err(leave_sides_for_a_merge_by_hand(
            &repo, &output, &report, &original, &upgrade,
        ));
    }

    apply(&original_dir, &scaffolds.upgrade_dir, &changes)?;
    let message = merge_message(&title, &report);
    let merged = if args.squash {
        repo.commit_folder(&original_dir, true, &[&head], &message)?
    } else {
        repo.commit_folder(&original_dir, true, &[&original, &upgrade], &message)?
    };
    repo.create_branch(&output, &merged)?;
    println!("Committed the update on branch {output}.");

    if dirty {
        println!(
            "Your uncommitted changes are left where they are: run `git checkout {output}` when \
             you have committed or stashed them."
        );
    } else {
        repo.switch(&output)?;
        if report.conflicts.is_empty() && args.make {
            crate::commands::run_make_manifests(dir);
            if repo.commit_work_tree(&format!("{title}: make manifests"), args.squash)? {
                println!("Committed what `make manifests` wrote on {output}.");
            }
        }
    }
    if !report.conflicts.is_empty() {
        println!(
            "Resolve the conflicts on {output} (search for <<<<<<< in the files above), commit, \
             then run `make manifests`."
        );
    }
    if args.push {
        repo.push(&output)?;
        println!("Pushed {output} to origin.");
    }
    Ok(())
}

/// Refuses an update whose output branch git would not check out: a file it adds (or a folder
/// it adds a file in) is in the work tree already, untracked and not ignored (an AGENTS.md
/// written by hand before the scaffold had one).
fn check_checkout(repo: &Repo, changes: &BTreeMap<String, Change>) -> Result<()> {
    let at_head = repo.files_at_head()?;
    let added: Vec<&String> = changes
        .iter()
        .filter(|(path, change)| matches!(change, Change::Write(_)) && !at_head.contains(*path))
        .map(|(path, _)| path)
        .collect();
    let within = |inner: &str, outer: &str| {
        inner
            .strip_prefix(outer)
            .is_some_and(|rest| rest.starts_with('/'))
    };
    let in_the_way: Vec<String> = repo
        .untracked_files()?
        .into_iter()
        .filter(|file| {
            added
                .iter()
                .any(|path| *path == file || within(path, file) || within(file, path))
        })
        .collect();
    if in_the_way.is_empty() {
        return Ok(());
    }
    bail!(
        "the update adds files that are in the work tree already, untracked: {}; git would not \
         check out the update's branch over them, so nothing was committed: commit them, or move \
         them away, then run alpha update again",
        in_the_way.join(", ")
    )
}

/// The ancestor (the old scaffold, on HEAD), the original (HEAD's files, on the ancestor) and the
/// upgrade (the new scaffold, on the ancestor): returns the original and the upgrade, the
/// parents of the merge, whose merge base is the ancestor.
fn commit_sides(
    repo: &Repo,
    scaffolds: &Scaffolds,
    versions: &Versions,
    head: &str,
    title: &str,
) -> Result<(String, String)> {
    let ancestor = repo.commit_folder(
        &scaffolds.ancestor_dir,
        false,
        &[head],
        &format!(
            "{title}: the ancestor, the scaffold of operator-rs {}",
            versions.from
        ),
    )?;
    let original = repo.commit_tree(
        "HEAD^{tree}",
        &[&ancestor],
        &format!("{title}: the original, your project"),
    )?;
    let upgrade = repo.commit_folder(
        &scaffolds.upgrade_dir,
        false,
        &[&ancestor],
        &format!(
            "{title}: the upgrade, the scaffold of operator-rs {}",
            versions.to
        ),
    )?;
    Ok((original, upgrade))
}

/// Without --force, conflicts commit nothing on `output`: the original and the upgrade are left
/// on branches of their own for `git merge`, and the error says how.
fn leave_sides_for_a_merge_by_hand(
    repo: &Repo,
    output: &str,
    report: &Report,
    original: &str,
    upgrade: &str,
) -> anyhow::Error {
    let helpers = [format!("{output}-original"), format!("{output}-upgrade")];
    if let Some(taken) = helpers
        .iter()
        .find(|b| repo.branch_exists(b).unwrap_or(true))
    {
        return anyhow::anyhow!(
            "{} files conflict, and branch {taken} exists already for the merge by hand: \
             delete it, or run again with --force to commit the conflicts with their markers",
            report.conflicts.len()
        );
    }
    for (branch, commit) in helpers.iter().zip([original, upgrade]) {
        if let Err(error) = repo.create_branch(branch, commit) {
            return error;
        }
    }
    anyhow::anyhow!(
        "{} files conflict, so nothing was committed on {output}: run again with --force to \
         commit them with conflict markers, or merge by hand: git checkout -b {output} {} && \
         git merge {}",
        report.conflicts.len(),
        helpers[0],
        helpers[1]
    )
}

/// Applies the changes to the folder of the user's files; a file the upgrade brings keeps the
/// upgrade's permissions (the executable bit of a script).
fn apply(folder: &Path, upgrade_dir: &Path, changes: &BTreeMap<String, Change>) -> Result<()> {
    for (path, change) in changes {
        let target = folder.join(path);
        match change {
            Change::Delete => std::fs::remove_file(&target)
                .with_context(|| format!("removing {}", target.display()))?,
            Change::Write(text) => {
                if let Some(parent) = target.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                std::fs::write(&target, text)
                    .with_context(|| format!("writing {}", target.display()))?;
                if let Ok(meta) = std::fs::metadata(upgrade_dir.join(path)) {
                    std::fs::set_permissions(&target, meta.permissions())?;
                }
            }
        }
    }
    Ok(())
}

/// The merge commit's message: what was merged and, for `--force`, what still conflicts.
fn merge_message(title: &str, report: &Report) -> String {
    let mut message = title.to_string();
    if !report.conflicts.is_empty() {
        message.push_str("\n\nConflicts, committed with their markers (search for <<<<<<<):\n");
        for path in &report.conflicts {
            message.push_str(&format!("- {path}\n"));
        }
    }
    message
}
