//! `operator-rs edit`: changes the project's configuration after `init`, as kubebuilder's `edit`:
//! `--multigroup` (moves the kinds to the multigroup layout), `--namespaced` (the manager's scope),
//! `--sharding` (the manager's replicas share the objects), `--license`/`--license-file`/`--owner`
//! (the license header of the Rust files), `--plugins`, `--webhook-certs` (where the webhooks'
//! certificates come from: [`super::webhook_certs`]), `--runtime` (where operator-rs's crates come
//! from).
//!
//! Files that `init` wrote and that depend on a flag are brought to what `init` with the new value
//! writes by the difference between the two renders: each changed block is found in the file
//! (with a line of context on either side) and replaced, so the user's own edits elsewhere in the
//! file stay. A block that cannot be found is refused, naming the file (`--force` overwrites such
//! files under `config/` with the fresh render, as kubebuilder's `edit --force` does).

//!
//! One module per change: [`retarget`] (the files of `init` and the RBAC helper roles, for
//! `--namespaced`, `--multigroup` and `--sharding`), [`multigroup`] (the kinds moved into groups),
//! [`license`] (the license header), [`runtime`] (the vendored crates and their Cargo.toml
//! entries); `--sharding`'s own file is `commands::sharding`'s.

mod license;
mod multigroup;
pub mod paths;
mod retarget;
mod runtime;

use std::path::Path;

use anyhow::{Result, bail};

use super::{load_project, read_boilerplate};
use crate::cli::EditArgs;
use crate::plugins;
use crate::project;
use crate::scaffold::Plan;
use crate::vars::ProjectVars;

pub fn run(args: &EditArgs, dir: &Path) -> Result<()> {
    let (plan, notes) = plan(args, dir, crate::boilerplate::current_year())?;
    super::finish(&plan, args.common.dry_run)?;
    for note in notes.iter().chain(plan.notes()) {
        println!("note: {note}");
    }
    Ok(())
}

/// Everything `edit` would write in `dir`, and the notes to print, without writing anything.
pub fn plan(args: &EditArgs, dir: &Path, year: i64) -> Result<(Plan, Vec<String>)> {
    let old = load_project(dir)?;
    let selection = plugins::select(&args.plugins, "edit")?;
    args.plugin_flags.check(&selection.plugins)?;
    let mut notes = plugin_notes(&selection);
    if let Some(owner) = &args.owner {
        super::init::check_owner(owner)?;
    }
    let old_header = read_boilerplate(dir)?;
    let new_header = license::new_header(args, &old_header, year)?;

    let mut new = edited(&old, args);

    let mut plan = Plan::new(dir, args.force);
    if new.sharding && !old.sharding {
        // Before any file changes: what the manager would refuse is refused here.
        super::sharding::check_edit(&plan, &new.domain)?;
    }
    if new.multigroup != old.multigroup {
        switch_multigroup(&mut plan, &old, &mut new, &old_header)?;
    }
    retarget::init_files(&mut plan, &old, &new, &old_header, args.force)?;
    if new.namespaced != old.namespaced {
        retarget::helper_roles(&mut plan, new.namespaced)?;
        if super::cluster_rbac::needed(dir, &new) {
            if new.namespaced {
                super::cluster_rbac::add(&mut plan, &ProjectVars::new(&new, &old_header))?;
            } else {
                super::cluster_rbac::remove(&mut plan)?;
            }
        }
    }
    super::webhook_certs::update(&mut plan, &old, &new, &old_header, args.force)?;
    if new.sharding != old.sharding {
        let vars = ProjectVars::new(&new, &old_header);
        super::sharding::switch(&mut plan, &vars, new.sharding, args.force)?;
        // The plugins' files that hold the manager's settings (the Helm chart's values.yaml).
        for plugin in plugins::recorded_project_parts(&old) {
            if let Some(part) = plugin.project() {
                part.retarget(&mut plan, &old, &new)?;
            }
        }
    }
    if new.runtime != old.runtime {
        runtime::switch(&mut plan, &new.project_name, old.runtime, new.runtime)?;
        notes.extend(crate::runtime_source::unpublished_note(new.runtime));
    }
    if let Some(header) = &new_header {
        license::rewrite_headers(&mut plan, &old_header, header, year)?;
    }
    // The plugins of the whole project, written or brought up to date for the project as edited.
    let vars = ProjectVars::new(&new, new_header.as_deref().unwrap_or(&old_header));
    for part in selection.plugins.iter().filter_map(|p| p.project()) {
        part.configure(&mut new, &args.plugin_flags)?;
        part.render(&mut plan, &new, &vars)?;
        part.record(&mut new);
    }
    super::plugin_chain::run(&selection.external, "edit", &mut plan, &mut new)?;
    plan.write(project::FILE, new.render_now())?;
    crate::runtime_features::keep_in_step(&mut plan, Some(&old), &new)?;
    if new.namespaced && !old.namespaced {
        notes.push(
            "the manager now watches only its own namespace (WATCH_NAMESPACE); webhooks stay \
             cluster-wide"
                .into(),
        );
    }
    Ok((plan, notes))
}

/// One line for each `--plugins` key that changes nothing here: kubebuilder's layout, and the
/// plugins that work per kind.
fn plugin_notes(selection: &plugins::Selection) -> Vec<String> {
    let mut notes = Vec::new();
    for key in &selection.layout {
        notes.push(format!(
            "--plugins {key}: kubebuilder's standard layout, which is this project's; nothing to change"
        ));
    }
    for plugin in selection.plugins.iter().filter(|p| p.project().is_none()) {
        notes.push(format!(
            "--plugins {}: the {} plugin works per kind, with `operator-rs {}`",
            plugin.short_key(),
            plugin.short_key(),
            plugin.usage()
        ));
    }
    notes
}

/// PROJECT as the flags change it.
fn edited(old: &project::Project, args: &EditArgs) -> project::Project {
    let mut new = old.clone();
    if let Some(namespaced) = args.namespaced {
        new.namespaced = namespaced;
    }
    if let Some(multigroup) = args.multigroup {
        new.multigroup = multigroup;
    }
    if let Some(certs) = args.webhook_certs {
        new.webhook_certs = Some(certs);
    }
    if let Some(sharding) = args.sharding {
        new.sharding = sharding;
    }
    if let Some(source) = args.runtime {
        new.runtime = source;
    }
    new
}

/// Into the multigroup layout, moving the kinds; out of it only while no kind has code under
/// src/*/<group>/.
fn switch_multigroup(
    plan: &mut Plan,
    old: &project::Project,
    new: &mut project::Project,
    old_header: &str,
) -> Result<()> {
    if new.multigroup {
        return multigroup::to_multigroup(plan, old, new, old_header);
    }
    if let Some(r) = old
        .resources
        .iter()
        .find(|r| r.api.is_some() || r.controller || r.webhooks.is_some())
    {
        bail!(
            "cannot leave the multigroup layout: the project has code for {}/{}, Kind {} under \
             src/*/<group>/; operator-rs moves kinds only into the multigroup layout (move the \
             files back by hand and set multigroup to false in {})",
            r.group,
            r.version,
            r.kind,
            project::FILE
        );
    }
    Ok(())
}

/// Calls `f` with every file under `dir` (relative to `root`), recursively; links are not followed.
fn walk(root: &Path, dir: &str, f: &mut dyn FnMut(&str)) {
    let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(|e| e.ok()).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let Some(name) = entry.file_name().to_str().map(String::from) else {
            continue;
        };
        let path = format!("{dir}/{name}");
        match entry.file_type() {
            Ok(t) if t.is_dir() => walk(root, &path, f),
            Ok(t) if t.is_file() => f(&path),
            _ => {}
        }
    }
}

/// The folders of the project's crate whose Rust files may name its modules: the library and
/// binaries, and the crates Cargo makes of tests, benches and examples.
const CRATE_FOLDERS: [&str; 4] = ["src", "tests", "benches", "examples"];

/// The Rust files of the project other than the runtime crate's: under [`CRATE_FOLDERS`], on
/// disk or planned.
fn rust_files(plan: &Plan) -> Vec<String> {
    let mut files = std::collections::BTreeSet::new();
    for top in CRATE_FOLDERS {
        walk(plan.root(), top, &mut |path| {
            if path.ends_with(".rs") {
                files.insert(path.to_string());
            }
        });
    }
    for change in plan.changes() {
        if change.path.ends_with(".rs")
            && CRATE_FOLDERS
                .iter()
                .any(|top| change.path.starts_with(&format!("{top}/")))
        {
            files.insert(change.path.clone());
        }
    }
    files.into_iter().collect()
}
