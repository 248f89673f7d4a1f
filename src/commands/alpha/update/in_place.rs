//! `alpha update --in-place`: the merge written into the project folder instead of a branch.

use std::path::Path;

use anyhow::{Result, bail};

use super::{Options, Scaffolds, Versions, changes, plan};
use crate::cli::AlphaUpdateArgs;
use crate::commands::alpha::{git, merge, tree};
use crate::scaffold;

/// `--in-place`: the merge written into the project folder in one all-or-nothing step, then
/// `make manifests` unless a file was left with conflicts.
pub(super) fn run(args: &AlphaUpdateArgs, options: &Options, dir: &Path) -> Result<()> {
    let _lock = (!args.common.dry_run)
        .then(|| scaffold::lock(dir))
        .transpose()?;
    let project = crate::commands::load_project(dir)?;
    let Some(versions) = Versions::of(args, &project)? else {
        return Ok(());
    };
    git::check_git()?;
    if !args.force && merge::has_uncommitted_changes(dir)? {
        bail!(
            "the project has uncommitted changes: commit or stash them first, so that the update \
             is one change you can review and undo (or pass --force)"
        );
    }
    let binaries = versions.binaries(args, dir)?;
    let scaffolds = Scaffolds::make(&project, dir, &versions, (&binaries.0, &binaries.1))?;
    let user = tree::read(dir)?;
    let (changes, report) = changes(&scaffolds, &user, &project, &versions, options)?;
    let plan = plan(dir, &changes)?;

    if args.common.dry_run {
        print!("{}", plan.describe());
        report.print();
        println!("(dry run: nothing was written)");
        return Ok(());
    }
    scaffold::apply(&plan)?;
    report.print();
    if !report.conflicts.is_empty() {
        println!(
            "Resolve the conflicts (search for <<<<<<< in the files above), then run `make manifests`."
        );
    } else if args.make {
        crate::commands::run_make_manifests(dir);
    }
    println!("The project is on operator-rs {}'s scaffold.", versions.to);
    Ok(())
}
