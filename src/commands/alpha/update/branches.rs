//! `alpha update` on git branches, as kubebuilder's: from the last commit of the base branch
//! (`--from-branch`, by default the branch checked out) it commits
//! - the ancestor: the project as the old release scaffolds it (parent: the base);
//! - the original: the base's files again (parent: the ancestor);
//! - the upgrade: the project as the new release scaffolds it (parent: the ancestor);
//! - the merge of the original and the upgrade, whose merge base is then the ancestor,
//!
//! and points the output branch at one commit on the base with the merge's files (kubebuilder's
//! squash, the default) or, with `--show-commits`, at the merge. Conflicting files are committed
//! with their markers only with `--force`; without it, the original and upgrade are left on
//! branches for `git merge` by hand. Nothing is written into the user's work tree or index
//! until the output branch is checked out.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context as _, Result, bail};

use super::{Change, Options, Report, Scaffolds, Versions, gh_issue};
use crate::cli::AlphaUpdateArgs;
use crate::commands::alpha::git::Repo;
use crate::commands::alpha::tree;
use crate::project;
use crate::scaffold;

/// The branch the update starts from.
struct Base {
    /// Its name, for messages and the issue's link (the commit on a detached HEAD).
    name: String,
    commit: String,
}

pub fn run(args: &AlphaUpdateArgs, options: &Options, dir: &Path) -> Result<()> {
    // The releases from the folder's PROJECT, so that a project on this release hears so in or
    // out of git; the records that are replayed are the base branch's.
    if args.from_branch.is_none()
        && Versions::of(args, &crate::commands::load_project(dir)?)?.is_none()
    {
        return Ok(());
    }
    let repo = Repo::open(dir, options.git.clone())?;
    let base = base(&repo, args.from_branch.as_deref())?;
    let dirty = repo.is_dirty()?;
    if dirty && !args.force {
        bail!(
            "the project has uncommitted changes, which the update (made from {}'s last commit) \
             would not have: commit or stash them first (or pass --force to leave them out)",
            base.name
        );
    }
    let _lock = (!args.common.dry_run)
        .then(|| scaffold::lock(dir))
        .transpose()?;
    // The user's project is the base's commit, checked out into a scratch folder.
    let scratch = tempfile::tempdir().context("creating a scratch folder")?;
    let original_dir = scratch.path().join("original");
    let Some((project, versions, output)) = start(args, &repo, &base, &original_dir)? else {
        return Ok(());
    };
    let binaries = versions.binaries(args, dir)?;
    let scaffolds = Scaffolds::make(
        &project,
        &original_dir,
        &versions,
        (&binaries.0, &binaries.1),
    )?;
    let user = tree::read(&original_dir)?;
    let (changes, report) = super::changes(&scaffolds, &user, &project, &versions, options)?;

    if args.common.dry_run {
        print!("{}", super::plan(dir, &changes)?.describe());
        report.print();
        println!("(dry run: nothing was committed; the output branch would be {output})");
        return Ok(());
    }
    let sides = Sides::commit(&repo, &scaffolds, &project, &versions, &base.commit)?;
    report.print();
    if !report.conflicts.is_empty() && !args.force {
        return Err(leave_sides_for_a_merge_by_hand(
            &repo, &output, &report, &sides,
        ));
    }
    apply(&original_dir, &scaffolds.upgrade_dir, &changes)?;
    let message = options.message(&versions, &report.conflicts);
    let parents = if options.history {
        vec![sides.original.as_str(), sides.upgrade.as_str()]
    } else {
        vec![base.commit.as_str()]
    };
    let merged = repo.commit_folder(&original_dir, Some(&base.commit), &parents, &message)?;
    repo.create_branch(&output, &merged)?;
    println!("Committed the update on branch {output}.");
    finish(
        args,
        options,
        &repo,
        dir,
        (&base, &output),
        &versions,
        &report,
        dirty,
    )
}

/// The base's files in `original_dir`, and what they say: the project, the releases and the
/// output branch; None when the project is on the release already.
fn start(
    args: &AlphaUpdateArgs,
    repo: &Repo,
    base: &Base,
    original_dir: &Path,
) -> Result<Option<(project::Project, Versions, String)>> {
    std::fs::create_dir_all(original_dir)?;
    repo.check_out(&base.commit, original_dir)?;
    let project = crate::commands::load_project(original_dir)?;
    let Some(versions) = Versions::of(args, &project)? else {
        return Ok(None);
    };
    // As kubebuilder: a project on the release has nothing to do, `gh` or not; otherwise its
    // absence is refused before anything is made.
    if args.open_gh_issue && !args.common.dry_run {
        gh_issue::check_gh()?;
    }
    let output = args
        .output_branch
        .clone()
        .unwrap_or_else(|| versions.branch());
    if repo.branch_exists(&output)? {
        bail!(
            "branch {output} exists already: delete it (git branch -D {output}) or pass \
             --output-branch <new name>"
        );
    }
    Ok(Some((project, versions, output)))
}

/// The base branch: `--from-branch`, or the branch checked out (HEAD's commit when detached).
fn base(repo: &Repo, from_branch: Option<&str>) -> Result<Base> {
    Ok(match from_branch {
        Some(name) => Base {
            name: name.to_string(),
            commit: repo.branch_commit(name)?,
        },
        None => {
            let commit = repo.head()?;
            Base {
                name: repo.current_branch()?.unwrap_or_else(|| commit.clone()),
                commit,
            }
        }
    })
}

/// After the output branch is made: checked out (with `make manifests` committed on it), pushed,
/// and the issue opened, as the flags ask.
#[allow(clippy::too_many_arguments)]
fn finish(
    args: &AlphaUpdateArgs,
    options: &Options,
    repo: &Repo,
    dir: &Path,
    (base, output): (&Base, &str),
    versions: &Versions,
    report: &Report,
    dirty: bool,
) -> Result<()> {
    if dirty {
        println!(
            "Your uncommitted changes are left where they are: run `git checkout {output}` when \
             you have committed or stashed them."
        );
    } else {
        repo.switch(output)?;
        if report.conflicts.is_empty() && args.make {
            crate::commands::run_make_manifests(dir);
            let message = format!("{}: make manifests", options.message(versions, &[]));
            if repo.commit_work_tree(&message, !options.history)? {
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
        repo.push(output)?;
        println!("Pushed {output} to origin.");
    }
    if args.open_gh_issue {
        let update = gh_issue::Update {
            versions,
            base: &base.name,
            output,
            conflicts: !report.conflicts.is_empty(),
        };
        gh_issue::open(dir, &update)?;
    }
    Ok(())
}

/// The parents of the merge, whose merge base is the ancestor (the old scaffold, on the base):
/// the original (the base's files, on the ancestor) and the upgrade (the new scaffold, on the
/// ancestor).
struct Sides {
    original: String,
    upgrade: String,
}

impl Sides {
    fn commit(
        repo: &Repo,
        scaffolds: &Scaffolds,
        project: &project::Project,
        versions: &Versions,
        base: &str,
    ) -> Result<Self> {
        // Each scaffold carries the user's PROJECT with its release's cliVersion, so that
        // PROJECT changes by that line alone from one commit to the next.
        for (folder, version) in [
            (&scaffolds.ancestor_dir, &versions.from),
            (&scaffolds.upgrade_dir, &versions.to),
        ] {
            std::fs::write(
                folder.join(project::FILE),
                super::with_version(project, version),
            )?;
        }
        let scaffold =
            |version: &str| format!("(chore) initial scaffold from release version: {version}");
        let ancestor = repo.commit_folder(
            &scaffolds.ancestor_dir,
            None,
            &[base],
            &scaffold(&versions.from),
        )?;
        let original = repo.commit_tree(
            &format!("{base}^{{tree}}"),
            &[&ancestor],
            "(chore) original code from the base branch to keep changes",
        )?;
        let upgrade = repo.commit_folder(
            &scaffolds.upgrade_dir,
            None,
            &[&ancestor],
            &scaffold(&versions.to),
        )?;
        Ok(Self { original, upgrade })
    }
}

/// Without --force, conflicts commit nothing on `output`: the original and the upgrade are left
/// on branches of their own for `git merge`, and the error says how.
fn leave_sides_for_a_merge_by_hand(
    repo: &Repo,
    output: &str,
    report: &Report,
    sides: &Sides,
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
    for (branch, commit) in helpers.iter().zip([&sides.original, &sides.upgrade]) {
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
