//! `operator-rs alpha update`: brings a project onto the scaffold of this operator-rs, as
//! kubebuilder's `alpha update` does, by a three-way merge of
//! - the ancestor: the project as the operator-rs that made it (PROJECT's `cliVersion`) scaffolds
//!   it from PROJECT, run from `--from-binary`;
//! - the user's tree;
//! - the upgrade: the project as this operator-rs scaffolds it from the same PROJECT.
//!
//! The runtime crate (`operator-rs-runtime/`) is operator-rs's, not the user's: it is replaced
//! whole. PROJECT keeps the user's records and gets the new `cliVersion`. Everything is written
//! in one all-or-nothing step; then `make manifests` regenerates config/ from the merged code,
//! unless a file was left with conflicts.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use anyhow::{Context as _, Result, bail};

use super::merge::{self, Labels, Resolution, Trees};
use super::replay::{License, Replay};
use super::tree;
use crate::cli::AlphaUpdateArgs;
use crate::project;
use crate::runtime_crate;
use crate::scaffold::{self, Plan};

pub fn run(args: &AlphaUpdateArgs, dir: &Path) -> Result<()> {
    let to = env!("CARGO_PKG_VERSION");
    let _lock = (!args.common.dry_run)
        .then(|| scaffold::lock(dir))
        .transpose()?;
    let project = crate::commands::load_project(dir)?;
    let from = match &args.from_version {
        Some(version) => version.clone(),
        None if project.cli_version.is_empty() => bail!(
            "{} records no cliVersion, so the operator-rs that made the project is unknown; pass \
             --from-version <version> with --from-binary <its operator-rs>",
            project::FILE
        ),
        None => project.cli_version.clone(),
    };
    if from == to && !args.force {
        println!(
            "The project is on operator-rs {to}'s scaffold already (cliVersion in {}); nothing to do.",
            project::FILE
        );
        return Ok(());
    }
    let Some(old_binary) = &args.from_binary else {
        bail!(
            "alpha update needs operator-rs {from}, the release that made this project, to \
             scaffold the project as it started: pass --from-binary <path to operator-rs {from}> \
             (for example, build it with `cargo install --locked --git <operator-rs repository> \
             --tag v{from} --root /tmp/operator-rs-{from}`)"
        );
    };
    let old_binary = dir.join(old_binary);
    check_version(&old_binary, &from)?;
    merge::check_git()?;
    if !args.force && merge::has_uncommitted_changes(dir)? {
        bail!(
            "the project has uncommitted changes: commit or stash them first, so that the update \
             is one change you can review and undo (or pass --force)"
        );
    }

    let license = License::of_project(dir)?;
    let replay = Replay::new(&project, license, Some(dir))?;
    let scaffold_with = |binary: &Path, side: &str| -> Result<BTreeMap<String, String>> {
        tree::read(&replay.scaffold(binary, side, false)?)
    };
    println!("Scaffolding the project as operator-rs {from} wrote it:");
    let ancestor = scaffold_with(&old_binary, "ancestor")?;
    println!("Scaffolding it as operator-rs {to} writes it:");
    let upgrade = scaffold_with(&super::this_binary()?, "upgrade")?;
    let user = tree::read(dir)?;

    let labels = Labels {
        user: "yours".into(),
        ancestor: format!("operator-rs {from}"),
        upgrade: format!("operator-rs {to}"),
    };
    let trees = Trees {
        ancestor: &without_owned(&ancestor),
        user: &without_owned(&user),
        upgrade: &without_owned(&upgrade),
    };
    let resolutions = merge::merge(&trees, &labels)?;

    let mut plan = Plan::new(dir, false);
    let mut report = Report::default();
    for (path, resolution) in resolutions {
        match resolution {
            Resolution::Write(text) => plan.write(&path, text)?,
            Resolution::Merged(text) => {
                plan.write(&path, text)?;
                report.merged.push(path);
            }
            Resolution::Delete => plan.delete(&path)?,
            Resolution::Conflict(_) if path == "Cargo.lock" => {
                // A lock merged line by line is no lock: take the new one; cargo adds the
                // user's own dependencies back on the next build.
                plan.write(&path, upgrade[&path].clone())?;
                report.notes.push(
                    "Cargo.lock is the new scaffold's: cargo adds your own dependencies back on \
                     the next build (run `cargo update -p <crate>` to pin one again)"
                        .into(),
                );
            }
            Resolution::Conflict(text) => {
                plan.write(&path, text)?;
                report.conflicts.push(path);
            }
            Resolution::Kept(why) => report.kept.push(format!("{path}: {why}")),
        }
    }
    replace_runtime(&mut plan, &user, &upgrade)?;
    let mut updated = project.clone();
    updated.cli_version = to.to_string();
    plan.write(project::FILE, updated.render())?;

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
    println!("The project is on operator-rs {to}'s scaffold.");
    Ok(())
}

/// The files of a tree but the runtime crate's, which the merge leaves alone.
fn without_owned(files: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    files
        .iter()
        .filter(|(path, _)| !runtime_crate::owns(path) && *path != project::FILE)
        .map(|(p, t)| (p.clone(), t.clone()))
        .collect()
}

/// The runtime crate becomes this operator-rs's, whole: its files written, files of the old
/// one that it lacks deleted.
fn replace_runtime(
    plan: &mut Plan,
    user: &BTreeMap<String, String>,
    upgrade: &BTreeMap<String, String>,
) -> Result<()> {
    for (path, text) in upgrade.iter().filter(|(p, _)| runtime_crate::owns(p)) {
        plan.write(path, text.clone())?;
    }
    for path in user.keys().filter(|p| runtime_crate::owns(p)) {
        if !upgrade.contains_key(path) {
            plan.delete(path)?;
        }
    }
    Ok(())
}

/// Checks that `binary` is operator-rs `version` (`operator-rs version` prints it first).
fn check_version(binary: &Path, version: &str) -> Result<()> {
    let output = Command::new(binary)
        .arg("version")
        .output()
        .with_context(|| format!("running {} version", binary.display()))?;
    let printed = String::from_utf8_lossy(&output.stdout);
    let found = printed.split_whitespace().nth(1).unwrap_or_default();
    if !output.status.success() || !printed.starts_with("operator-rs ") {
        bail!("{} is not an operator-rs binary", binary.display());
    }
    if found != version {
        bail!(
            "{} is operator-rs {found}, but the project was made by operator-rs {version}: pass \
             that release's binary (or --from-version {found} if PROJECT's cliVersion is wrong)",
            binary.display()
        );
    }
    Ok(())
}

/// What the user must look at after the update.
#[derive(Default)]
struct Report {
    merged: Vec<String>,
    conflicts: Vec<String>,
    kept: Vec<String>,
    notes: Vec<String>,
}

impl Report {
    fn print(&self) {
        for path in &self.merged {
            println!("merged {path}: your changes and the new scaffold's");
        }
        for path in &self.conflicts {
            println!("CONFLICT {path}: both you and the new scaffold changed the same lines");
        }
        for kept in &self.kept {
            println!("kept {kept}");
        }
        for note in &self.notes {
            println!("note: {note}");
        }
    }
}
