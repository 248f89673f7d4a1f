//! `operator-rs alpha update`: brings a project onto the scaffold of another operator-rs
//! release (by default this one), as kubebuilder's `alpha update` does, by a three-way merge of
//! - the ancestor: the project as the operator-rs that made it (PROJECT's `cliVersion`) scaffolds
//!   it from PROJECT;
//! - the original: the user's project (HEAD's commit on branches, the folder in place);
//! - the upgrade: the project as the new operator-rs scaffolds it from the same PROJECT.
//!
//! By default the result is committed on a new git branch ([`branches`]), as one commit on the
//! base branch or (`--show-commits`) with its history; with `--in-place` it is written into the
//! folder. The flags are kubebuilder's ([`options`]). The vendored crates
//! (`operator-rs-runtime/`, `operator-rs-testing/`) are operator-rs's, not the user's: they are
//! replaced whole. PROJECT keeps the user's records and gets
//! the new `cliVersion`.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Result, bail};

use super::merge::{self, Labels, Resolution, Trees};
use super::release::{self, Binary};
use super::replay::{License, Replay};
use super::tree;
use crate::cli::AlphaUpdateArgs;
use crate::project::{self, Project};
use crate::runtime_crate;
use crate::scaffold::Plan;

mod branches;
mod gh_issue;
mod in_place;
mod options;

use options::Options;

pub fn run(args: &AlphaUpdateArgs, dir: &Path) -> Result<()> {
    let options = Options::of(args)?;
    if args.in_place {
        return in_place::run(args, &options, dir);
    }
    branches::run(args, &options, dir)
}

/// The two releases of an update.
pub(super) struct Versions {
    pub from: String,
    pub to: String,
}

impl Versions {
    /// `--from-version` or PROJECT's cliVersion, and `--to-version` or this release; `None` when
    /// there is nothing to do (said so).
    /// A leading `v` (kubebuilder's releases are v4.6.0) is taken off: crates have none.
    pub fn of(args: &AlphaUpdateArgs, project: &Project) -> Result<Option<Self>> {
        let unprefixed = |v: &str| v.strip_prefix('v').unwrap_or(v).to_string();
        let from = match &args.from_version {
            Some(version) => unprefixed(version),
            None if project.cli_version.is_empty() => bail!(
                "{} records no cliVersion, so the operator-rs that made the project is unknown; \
                 pass --from-version <version>",
                project::FILE
            ),
            None => project.cli_version.clone(),
        };
        let to = args
            .to_version
            .as_deref()
            .map_or_else(|| release::THIS.to_string(), unprefixed);
        // As in kubebuilder, even with --force: its auto-update workflow runs `--force` every
        // week, and must do nothing until there is a new release.
        if from == to {
            println!(
                "The project is on operator-rs {to}'s scaffold already (cliVersion in {}); nothing to do.",
                project::FILE
            );
            return Ok(None);
        }
        Ok(Some(Self { from, to }))
    }

    /// The output branch kubebuilder would name, with operator-rs for kubebuilder.
    pub fn branch(&self) -> String {
        format!("operator-rs-update-from-{}-to-{}", self.from, self.to)
    }

    /// The binaries of both releases: `--from-binary`, this one, or `cargo install`'s.
    pub fn binaries(&self, args: &AlphaUpdateArgs, dir: &Path) -> Result<(Binary, Binary)> {
        let from = match &args.from_binary {
            Some(path) => Binary::given(dir.join(path), &self.from)?,
            None if self.from == release::THIS => Binary::this()?,
            None => Binary::install(
                &self.from,
                &format!(
                    "pass --from-binary <path to operator-rs {}>, the release that made the \
                     project (or --from-version if PROJECT's cliVersion is wrong)",
                    self.from
                ),
            )?,
        };
        let to = if self.to == release::THIS {
            Binary::this()?
        } else {
            Binary::install(
                &self.to,
                &format!("run the update with operator-rs {} itself", self.to),
            )?
        };
        Ok((from, to))
    }
}

/// The three trees of an update, scaffolded from `project` (whose folder `input` holds the
/// files its commands read) by the two binaries.
pub(super) struct Scaffolds {
    pub ancestor_dir: std::path::PathBuf,
    pub upgrade_dir: std::path::PathBuf,
    pub ancestor: BTreeMap<String, String>,
    pub upgrade: BTreeMap<String, String>,
    _replay: Replay,
}

impl Scaffolds {
    pub fn make(
        project: &Project,
        input: &Path,
        versions: &Versions,
        (from, to): (&Binary, &Binary),
    ) -> Result<Self> {
        let replay = Replay::new(project, License::of_project(input)?, Some(input))?;
        println!(
            "Scaffolding the project as operator-rs {} wrote it:",
            versions.from
        );
        let ancestor_dir = replay.scaffold(&from.path, "ancestor", false)?;
        println!("Scaffolding it as operator-rs {} writes it:", versions.to);
        let upgrade_dir = replay.scaffold(&to.path, "upgrade", false)?;
        Ok(Self {
            ancestor: tree::read(&ancestor_dir)?,
            upgrade: tree::read(&upgrade_dir)?,
            ancestor_dir,
            upgrade_dir,
            _replay: replay,
        })
    }
}

/// What the update does to one file of the user's tree.
pub(super) enum Change {
    Write(String),
    Delete,
}

/// The changes that bring `user` (the user's files, with `project` their PROJECT) onto the
/// upgrade, by path, and what the user must look at.
fn changes(
    scaffolds: &Scaffolds,
    user: &BTreeMap<String, String>,
    project: &Project,
    versions: &Versions,
    options: &Options,
) -> Result<(BTreeMap<String, Change>, Report)> {
    let labels = Labels {
        user: "yours".into(),
        ancestor: format!("operator-rs {}", versions.from),
        upgrade: format!("operator-rs {}", versions.to),
    };
    let trees = Trees {
        ancestor: &without_owned(&scaffolds.ancestor),
        user: &without_owned(user),
        upgrade: &without_owned(&scaffolds.upgrade),
    };
    let mut out = BTreeMap::new();
    let mut report = Report::default();
    for (path, resolution) in merge::merge(&trees, &labels, &options.git)? {
        if options.restores(&path) {
            report.restored.push(path);
            continue;
        }
        let change = match resolution {
            Resolution::Write(text) => Change::Write(text),
            Resolution::Merged(text) => {
                report.merged.push(path.clone());
                Change::Write(text)
            }
            Resolution::Delete => Change::Delete,
            Resolution::Conflict(_) if path == "Cargo.lock" => {
                // A lock merged line by line is no lock: take the new one; cargo adds the
                // user's own dependencies back on the next build.
                report.notes.push(
                    "Cargo.lock is the new scaffold's: cargo adds your own dependencies back on \
                     the next build (run `cargo update -p <crate>` to pin one again)"
                        .into(),
                );
                Change::Write(scaffolds.upgrade[&path].clone())
            }
            Resolution::Conflict(text) => {
                report.conflicts.push(path.clone());
                Change::Write(text)
            }
            Resolution::Kept(why) => {
                report.kept.push(format!("{path}: {why}"));
                continue;
            }
        };
        out.insert(path, change);
    }
    replace_vendored_crates(&mut out, scaffolds, user);
    out.insert(
        project::FILE.into(),
        Change::Write(with_version(project, &versions.to)),
    );
    // `--restore-path`: the paths stay as the user has them, whatever the update brings.
    out.retain(|path, _| {
        let restored = options.restores(path);
        if restored && !report.restored.contains(path) {
            report.restored.push(path.clone());
        }
        !restored
    });
    report.restored.sort();
    Ok((out, report))
}

/// The vendored crates become the new release's, whole: their files written, files of the old
/// ones that they lack deleted.
fn replace_vendored_crates(
    out: &mut BTreeMap<String, Change>,
    scaffolds: &Scaffolds,
    user: &BTreeMap<String, String>,
) {
    for (path, text) in scaffolds
        .upgrade
        .iter()
        .filter(|(p, _)| runtime_crate::owns(p))
    {
        out.insert(path.clone(), Change::Write(text.clone()));
    }
    for path in user.keys().filter(|p| runtime_crate::owns(p)) {
        if !scaffolds.upgrade.contains_key(path) {
            out.insert(path.clone(), Change::Delete);
        }
    }
}

/// PROJECT with the user's records and `version` as its cliVersion.
pub(super) fn with_version(project: &Project, version: &str) -> String {
    let mut project = project.clone();
    project.cli_version = version.to_string();
    project.render()
}

/// The changes as a plan on `dir`.
pub(super) fn plan(dir: &Path, changes: &BTreeMap<String, Change>) -> Result<Plan> {
    let mut plan = Plan::new(dir, false);
    for (path, change) in changes {
        match change {
            Change::Write(text) => plan.write(path, text.clone())?,
            Change::Delete => plan.delete(path)?,
        }
    }
    Ok(plan)
}

/// The files of a tree but the vendored crates', which the merge leaves alone.
fn without_owned(files: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    files
        .iter()
        .filter(|(path, _)| !runtime_crate::owns(path) && *path != project::FILE)
        .map(|(p, t)| (p.clone(), t.clone()))
        .collect()
}

/// What the user must look at after the update.
#[derive(Default)]
pub(super) struct Report {
    pub merged: Vec<String>,
    pub conflicts: Vec<String>,
    pub kept: Vec<String>,
    /// Files the update would have changed, left as they are by `--restore-path`.
    pub restored: Vec<String>,
    pub notes: Vec<String>,
}

impl Report {
    pub fn print(&self) {
        for path in &self.merged {
            println!("merged {path}: your changes and the new scaffold's");
        }
        for path in &self.conflicts {
            println!("CONFLICT {path}: both you and the new scaffold changed the same lines");
        }
        for kept in &self.kept {
            println!("kept {kept}");
        }
        for path in &self.restored {
            println!("restored {path}: left as it was (--restore-path)");
        }
        for note in &self.notes {
            println!("note: {note}");
        }
    }
}
