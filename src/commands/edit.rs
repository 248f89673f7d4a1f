//! `operator-rs edit`: changes the project's configuration after `init`, as kubebuilder's `edit`:
//! `--multigroup` (moves the kinds to the multigroup layout), `--namespaced` (the manager's scope),
//! `--license`/`--license-file`/`--owner` (the license header of the Rust files), `--plugins`.
//!
//! Files that `init` wrote and that depend on a flag are brought to what `init` with the new value
//! writes by the difference between the two renders: each changed block is found in the file
//! (with a line of context on either side) and replaced, so the user's own edits elsewhere in the
//! file stay. A block that cannot be found is refused, naming the file (`--force` overwrites such
//! files under `config/` with the fresh render, as kubebuilder's `edit --force` does).

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{Result, bail};

use super::{layout, load_project, read_boilerplate};
use crate::boilerplate::{self, BOILERPLATE_FILE, License};
use crate::cli::EditArgs;
use crate::names::{Group, Kind};
use crate::plugins;
use crate::project::{self, Project};
use crate::scaffold::{Owner, Plan};
use crate::vars::{GroupVars, InitVars, ProjectVars, WebhookVersionVars};

pub fn run(args: &EditArgs, dir: &Path) -> Result<()> {
    let (plan, notes) = plan(args, dir, boilerplate::current_year())?;
    super::finish(&plan, args.common.dry_run)?;
    for note in notes {
        println!("note: {note}");
    }
    Ok(())
}

/// Everything `edit` would write in `dir`, and the notes to print, without writing anything.
pub fn plan(args: &EditArgs, dir: &Path, year: i64) -> Result<(Plan, Vec<String>)> {
    let old = load_project(dir)?;
    let mut notes = Vec::new();
    let selection = plugins::select(&args.plugins, "edit")?;
    for key in &selection.layout {
        notes.push(format!(
            "--plugins {key}: kubebuilder's standard layout, which is this project's; nothing to change"
        ));
    }
    for plugin in &selection.plugins {
        notes.push(format!(
            "--plugins {}: the {} plugin works per kind, with `operator-rs {}`",
            plugin.short_key(),
            plugin.short_key(),
            plugin.usage()
        ));
    }
    if let Some(owner) = &args.owner {
        super::init::check_owner(owner)?;
    }
    let old_header = read_boilerplate(dir)?;
    let new_header = new_header(args, &old_header, year)?;

    let mut new = old.clone();
    if let Some(namespaced) = args.namespaced {
        new.namespaced = namespaced;
    }
    if let Some(multigroup) = args.multigroup {
        new.multigroup = multigroup;
    }

    let mut plan = Plan::new(dir, args.force);
    if new.multigroup != old.multigroup {
        if new.multigroup {
            to_multigroup(&mut plan, &old, &mut new, &old_header)?;
        } else if let Some(r) = old
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
    }
    retarget_init_files(&mut plan, &old, &new, &old_header, args.force)?;
    if new.namespaced != old.namespaced {
        retarget_helper_roles(&mut plan, new.namespaced)?;
        if super::cluster_rbac::any_cluster_controller(dir) {
            if new.namespaced {
                super::cluster_rbac::add(&mut plan, &ProjectVars::new(&new, &old_header))?;
            } else {
                super::cluster_rbac::remove(&mut plan)?;
            }
        }
    }
    if let Some(header) = new_header {
        rewrite_headers(&mut plan, &old_header, &header)?;
    }
    plan.write(project::FILE, new.render())?;
    if new.namespaced && !old.namespaced {
        notes.push(
            "the manager now watches only its own namespace (WATCH_NAMESPACE); webhooks stay \
             cluster-wide"
                .into(),
        );
    }
    Ok((plan, notes))
}

/// The header that `--license`, `--license-file` or `--owner` ask for, if any.
fn new_header(args: &EditArgs, old_header: &str, year: i64) -> Result<Option<String>> {
    if let Some(file) = &args.license_file {
        return Ok(Some(boilerplate::from_license_file(file)?));
    }
    let owner = match &args.owner {
        Some(owner) => owner.clone(),
        None => current_owner(old_header),
    };
    let license = match (args.license, &args.owner) {
        (Some(license), _) => license,
        (None, None) => return Ok(None),
        (None, Some(_)) => {
            if old_header.contains("Licensed under the Apache License") {
                License::Apache2
            } else if old_header.trim().is_empty() {
                bail!(
                    "the project has no license header ({BOILERPLATE_FILE} is missing); pass \
                     --license apache2 or --license copyright with --owner"
                );
            } else if old_header.lines().count() == 1 && old_header.starts_with("// Copyright ") {
                License::Copyright
            } else {
                bail!(
                    "{BOILERPLATE_FILE} is not a header operator-rs wrote, so --owner has no place \
                     in it; pass --license apache2|copyright, or --license-file"
                );
            }
        }
    };
    Ok(Some(boilerplate::header(license, &owner, year)))
}

/// The owner named in a header operator-rs wrote (`// Copyright <year> <owner>.`).
fn current_owner(header: &str) -> String {
    boilerplate::owner_and_year(header)
        .map(|(_, owner)| owner)
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// Files of `init` that depend on the project's flags.

/// The template variables of `init`, for the difference between two renders (README's license
/// section, the only part that uses owner and year, is left out of both).
fn init_vars(project: &Project, header: &str) -> InitVars {
    InitVars {
        project: ProjectVars::new(project, header),
        owner: String::new(),
        year: "0".to_string(),
        license: "none".to_string(),
    }
}

fn retarget_init_files(
    plan: &mut Plan,
    old: &Project,
    new: &Project,
    header: &str,
    force: bool,
) -> Result<()> {
    if old.namespaced == new.namespaced && old.multigroup == new.multigroup {
        return Ok(());
    }
    let before = super::init::FILES.render(&init_vars(old, header))?;
    let after = super::init::FILES.render(&init_vars(new, header))?;
    for (was, will) in before.iter().zip(&after) {
        if was.contents == will.contents || was.path == "Cargo.lock" {
            continue;
        }
        let path = &will.path;
        let Some(current) = plan.read(path)? else {
            // Deleted by the user: nothing to bring up to date.
            continue;
        };
        match patch(&current, &was.contents, &will.contents) {
            Some(text) => plan.write(path, text)?,
            None if force && path.starts_with("config/") => {
                plan.write(path, will.contents.clone())?
            }
            None => bail!(
                "cannot update {path}: the part of it that depends on {} is not as operator-rs \
                 wrote it; change it by hand to what `operator-rs init` writes{}",
                if old.namespaced != new.namespaced {
                    "--namespaced"
                } else {
                    "--multigroup"
                },
                if path.starts_with("config/") {
                    ", or pass --force to overwrite it"
                } else {
                    ""
                }
            ),
        }
    }
    Ok(())
}

/// The RBAC helper roles of the kinds (`config/rbac/<kind>_{admin,editor,viewer}_role.yaml`) are
/// Roles in a namespaced project, ClusterRoles otherwise.
fn retarget_helper_roles(plan: &mut Plan, namespaced: bool) -> Result<()> {
    let (from, to) = if namespaced {
        ("kind: ClusterRole", "kind: Role")
    } else {
        ("kind: Role", "kind: ClusterRole")
    };
    let Ok(entries) = std::fs::read_dir(plan.root().join("config/rbac")) else {
        return Ok(());
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| {
            ["_admin_role.yaml", "_editor_role.yaml", "_viewer_role.yaml"]
                .iter()
                .any(|suffix| name.ends_with(suffix))
        })
        .collect();
    names.sort();
    for name in names {
        let path = format!("config/rbac/{name}");
        plan.edit(&path, |text| {
            let mut out = String::with_capacity(text.len());
            for line in text.split_inclusive('\n') {
                if line.trim_end() == from {
                    out.push_str(to);
                    out.push_str(&line[from.len()..]);
                } else {
                    out.push_str(line);
                }
            }
            Ok(out)
        })?;
    }
    Ok(())
}

/// Brings `current` from the render `old` to the render `new`: each block that differs is found
/// in `current` with a line of context on either side, or without context when it is unique, and
/// replaced. `None` when a block cannot be found exactly once.
pub(crate) fn patch(current: &str, old: &str, new: &str) -> Option<String> {
    if current == old {
        return Some(new.to_string());
    }
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let mut lines: Vec<String> = current.split_inclusive('\n').map(String::from).collect();
    for (a, b, c, d) in hunks(&old_lines, &new_lines) {
        let before: Vec<&str> = old_lines[a.saturating_sub(1)..a].to_vec();
        let after: Vec<&str> = old_lines.get(b).copied().into_iter().collect();
        let removed = &old_lines[a..b];
        let added = &new_lines[c..d];
        let candidates: Vec<(Vec<&str>, usize)> = {
            let mut with_context = before.clone();
            with_context.extend_from_slice(removed);
            with_context.extend(after.iter().copied());
            let mut list = vec![(with_context, before.len())];
            if !removed.is_empty() {
                list.push((removed.to_vec(), 0));
            }
            list
        };
        // Already there (an earlier edit, or the user's): nothing to do.
        let mut done = before.clone();
        done.extend_from_slice(added);
        done.extend(after.iter().copied());
        let mut applied = false;
        for (pattern, skip) in &candidates {
            if let Some(at) = find_unique(&lines, pattern) {
                let start = at + skip;
                lines.splice(
                    start..start + removed.len(),
                    added.iter().map(|s| s.to_string()),
                );
                applied = true;
                break;
            }
        }
        if !applied {
            if find_unique(&lines, &done).is_some() && !added.is_empty() {
                continue;
            }
            return None;
        }
    }
    Some(lines.concat())
}

/// The position of the only occurrence of `pattern` (a sequence of lines) in `lines`.
fn find_unique(lines: &[String], pattern: &[&str]) -> Option<usize> {
    if pattern.is_empty() || pattern.len() > lines.len() {
        return None;
    }
    let mut found = None;
    for i in 0..=lines.len() - pattern.len() {
        if lines[i..i + pattern.len()]
            .iter()
            .zip(pattern)
            .all(|(l, p)| l == p)
        {
            if found.is_some() {
                return None;
            }
            found = Some(i);
        }
    }
    found
}

/// The blocks where `new` differs from `old`: old lines `a..b` become new lines `c..d`.
fn hunks(old: &[&str], new: &[&str]) -> Vec<(usize, usize, usize, usize)> {
    let (n, m) = (old.len(), new.len());
    // lcs[i][j]: length of the longest common subsequence of old[i..] and new[j..].
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if old[i] == new[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    let mut open: Option<(usize, usize)> = None;
    while i < n || j < m {
        if i < n && j < m && old[i] == new[j] {
            if let Some((a, c)) = open.take() {
                out.push((a, i, c, j));
            }
            i += 1;
            j += 1;
        } else {
            open.get_or_insert((i, j));
            if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
                j += 1;
            } else {
                i += 1;
            }
        }
    }
    if let Some((a, c)) = open {
        out.push((a, n, c, m));
    }
    out
}

// ---------------------------------------------------------------------------------------------
// --license / --owner

/// The Rust files of the project other than the runtime crate's: under src/ and tests/, on disk
/// or planned.
fn rust_files(plan: &Plan) -> Vec<String> {
    let mut files = BTreeSet::new();
    for top in ["src", "tests"] {
        walk(plan.root(), top, &mut |path| {
            if path.ends_with(".rs") {
                files.insert(path.to_string());
            }
        });
    }
    for change in plan.changes() {
        if change.path.ends_with(".rs")
            && (change.path.starts_with("src/") || change.path.starts_with("tests/"))
        {
            files.insert(change.path.clone());
        }
    }
    files.into_iter().collect()
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

/// Replaces the license header on top of the project's Rust files: files that start with the
/// current header get the new one (none: every Rust file gets it), and `hack/boilerplate.rs.txt`
/// is rewritten (removed for no header).
fn rewrite_headers(plan: &mut Plan, old: &str, new: &str) -> Result<()> {
    let as_written = |header: &str| {
        if header.trim().is_empty() {
            String::new()
        } else {
            format!("{header}\n")
        }
    };
    let (old_top, new_top) = (as_written(old), as_written(new));
    if old_top == new_top {
        return Ok(());
    }
    for path in rust_files(plan) {
        let Some(text) = plan.read(&path)? else {
            continue;
        };
        if let Some(rest) = text.strip_prefix(&old_top) {
            plan.edit(&path, |_| Ok(format!("{new_top}{rest}")))?;
        }
    }
    if new.trim().is_empty() {
        plan.delete(BOILERPLATE_FILE)?;
    } else {
        plan.write(BOILERPLATE_FILE, new.to_string())?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// --multigroup

/// A module moved: `api::v1` → `api::crew::v1`, for the paths in `use` lines and elsewhere.
struct Moved {
    from: String,
    to: String,
}

/// The Rust module name of a group of a resource (built-in groups: `core`, `apps` …).
fn group_module(group: &str) -> String {
    group.replace(['.', '-'], "_")
}

/// The API group as it is written in Kubernetes (`""` for core), for the doc comments.
fn api_group(r: &project::Resource, domain: &str) -> String {
    if r.core {
        match (r.group.as_str(), r.domain.as_str()) {
            ("core", _) => String::new(),
            (group, "") => group.to_string(),
            (group, d) => format!("{group}.{d}"),
        }
    } else {
        let d = if r.domain.is_empty() {
            domain
        } else {
            &r.domain
        };
        format!("{}.{d}", r.group)
    }
}

fn to_multigroup(plan: &mut Plan, old: &Project, new: &mut Project, header: &str) -> Result<()> {
    let own_groups: BTreeSet<&str> = old
        .resources
        .iter()
        .filter(|r| !r.core)
        .map(|r| r.group.as_str())
        .collect();
    if own_groups.len() > 1 {
        bail!(
            "{} has kinds of several groups ({}) in the single-group layout; correct it first",
            project::FILE,
            own_groups.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    if let Some(group) = own_groups.first() {
        Group::parse(group, &old.domain)?
            .check_module()
            .map_err(|err| {
                anyhow::anyhow!(
                    "cannot move to the multigroup layout: {err} (the group becomes the module src/api/{})",
                    group_module(group)
                )
            })?;
    }
    let project_vars = ProjectVars::new(new, header);
    let group_vars = |group_module: &str, qualified_group: String| GroupVars {
        project: project_vars.clone(),
        group_module: group_module.to_string(),
        qualified_group,
    };
    let mut moved: Vec<Moved> = Vec::new();

    // Types: src/api/<version>/ → src/api/<group>/<version>/.
    let mut versions: Vec<(&project::Resource, &str)> = Vec::new();
    for r in old.resources.iter().filter(|r| !r.core && r.api.is_some()) {
        if !versions.iter().any(|(_, v)| *v == r.version) {
            versions.push((r, r.version.as_str()));
        }
    }
    for (r, version) in &versions {
        let gm = group_module(&r.group);
        move_dir(
            plan,
            &format!("src/api/{version}"),
            &format!("src/api/{gm}/{version}"),
        )?;
        moved.push(Moved {
            from: format!("api::{version}"),
            to: format!("api::{gm}::{version}"),
        });
        let vars = group_vars(&gm, api_group(r, &old.domain));
        let group_mod = create_once(plan, layout::API_GROUP.texts(&vars, true)?)?;
        plan.insert(
            &group_mod,
            "version-modules",
            &format!("pub mod {version};"),
        )?;
        plan.edit("src/api/mod.rs", |t| {
            Ok(prefix_lines(
                &drop_line(t, &format!("pub mod {version};")),
                &format!("{version}::"),
                &format!("{gm}::"),
            ))
        })?;
        plan.insert("src/api/mod.rs", "api-modules", &format!("pub mod {gm};"))?;
    }

    // Controllers: src/controller/<kind>.rs → src/controller/<group>/<kind>.rs.
    for r in old.resources.iter().filter(|r| r.controller) {
        let gm = group_module(&r.group);
        let kind = Kind::parse(&r.kind)?.snake();
        let from = format!("src/controller/{kind}.rs");
        if plan.read(&from)?.is_none() {
            continue;
        }
        move_file(plan, &from, &format!("src/controller/{gm}/{kind}.rs"))?;
        moved.push(Moved {
            from: format!("controller::{kind}"),
            to: format!("controller::{gm}::{kind}"),
        });
        let vars = group_vars(&gm, api_group(r, &old.domain));
        let group_mod = create_once(plan, layout::CONTROLLER_GROUP.texts(&vars, true)?)?;
        plan.insert(
            &group_mod,
            "controller-modules",
            &format!("pub mod {kind};"),
        )?;
        plan.edit("src/controller/mod.rs", |t| {
            Ok(prefix_lines(
                &drop_line(t, &format!("pub mod {kind};")),
                &format!("{kind}::"),
                &format!("{gm}::"),
            ))
        })?;
        plan.insert(
            "src/controller/mod.rs",
            "controller-modules",
            &format!("pub mod {gm};"),
        )?;
    }

    // Webhooks: src/webhook/<version>/<kind>/ → src/webhook/<group>/<version>/<kind>/; the
    // version modules, shared by the groups in the single-group layout, are written anew.
    let mut old_version_mods = BTreeSet::new();
    for r in old.resources.iter().filter(|r| r.webhooks.is_some()) {
        let gm = group_module(&r.group);
        let kind = Kind::parse(&r.kind)?.snake();
        let version = &r.version;
        let from = format!("src/webhook/{version}/{kind}");
        if !plan.root().join(&from).is_dir() {
            continue;
        }
        move_dir(plan, &from, &format!("src/webhook/{gm}/{version}/{kind}"))?;
        moved.push(Moved {
            from: format!("webhook::{version}::{kind}"),
            to: format!("webhook::{gm}::{version}::{kind}"),
        });
        old_version_mods.insert(version.clone());
        let qualified = api_group(r, &old.domain);
        let vars = WebhookVersionVars {
            project: project_vars.clone(),
            qualified_group: qualified.clone(),
            version: version.clone(),
            webhook_dir: format!("{gm}/{version}"),
        };
        let version_mod = create_once(plan, layout::WEBHOOK_VERSION.texts(&vars, true)?)?;
        plan.insert(
            &version_mod,
            "webhook-kind-modules",
            &format!("pub mod {kind};"),
        )?;
        let vars = group_vars(&gm, qualified);
        let group_mod = create_once(plan, layout::WEBHOOK_GROUP.texts(&vars, true)?)?;
        plan.insert(
            &group_mod,
            "webhook-version-modules",
            &format!("pub mod {version};"),
        )?;
        plan.edit("src/webhook/mod.rs", |t| {
            Ok(prefix_lines(
                t,
                &format!("{version}::{kind}::"),
                &format!("{gm}::"),
            ))
        })?;
        plan.insert(
            "src/webhook/mod.rs",
            "webhook-modules",
            &format!("pub mod {gm};"),
        )?;
    }
    for version in old_version_mods {
        let path = format!("src/webhook/{version}/mod.rs");
        // Kept if it holds anything but the modules of the kinds moved (code of the user's).
        let left = plan.read(&path)?.unwrap_or_default();
        let others = left.lines().any(|l| {
            let l = l.trim();
            l.starts_with("pub mod ")
                && !moved.iter().any(|m| {
                    m.from.starts_with(&format!("webhook::{version}::"))
                        && l == format!("pub mod {};", m.from.rsplit("::").next().unwrap_or(""))
                })
        });
        if others {
            bail!(
                "{path} declares modules that are not webhooks operator-rs made; move them out of \
                 src/webhook/{version}/ first"
            );
        }
        plan.delete(&path)?;
        plan.edit("src/webhook/mod.rs", |t| {
            Ok(drop_line(t, &format!("pub mod {version};")))
        })?;
    }

    // Paths to the moved modules, in every Rust file of the project.
    let crate_name = old.project_name.replace('-', "_");
    for path in rust_files(plan) {
        let Some(text) = plan.read(&path)? else {
            continue;
        };
        let rewritten = rewrite_paths(&text, &crate_name, &moved);
        if rewritten != text {
            plan.edit(&path, |_| Ok(rewritten))?;
        }
    }

    new.multigroup = true;
    for r in new.resources.iter_mut().filter(|r| !r.core) {
        r.path = format!("crate::api::{}::{}", group_module(&r.group), r.version);
    }
    Ok(())
}

/// Plans a new module file, the one file of a layout table, unless it is planned or there
/// already; returns its path.
fn create_once(plan: &mut Plan, files: Vec<(String, String)>) -> Result<String> {
    let [(path, text)] = <[_; 1]>::try_from(files).expect("a table of one file");
    if plan.read(&path)?.is_none() {
        plan.create(&path, text, Owner::User)?;
    }
    Ok(path)
}

/// Moves every file under `from` to the same place under `to`.
fn move_dir(plan: &mut Plan, from: &str, to: &str) -> Result<()> {
    let mut files = Vec::new();
    walk(plan.root(), from, &mut |path| files.push(path.to_string()));
    for file in files {
        let rest = &file[from.len()..];
        move_file(plan, &file, &format!("{to}{rest}"))?;
    }
    Ok(())
}

fn move_file(plan: &mut Plan, from: &str, to: &str) -> Result<()> {
    let Some(text) = plan.read(from)? else {
        return Ok(());
    };
    if plan.read(to)?.is_some() {
        bail!(
            "{to} already exists, and edit --multigroup moves {from} there; move {to} away first"
        );
    }
    plan.create(to, text, Owner::User)?;
    plan.delete(from)
}

/// `text` without the lines that are exactly `line` (ignoring indentation).
fn drop_line(text: &str, line: &str) -> String {
    text.split_inclusive('\n')
        .filter(|l| l.trim() != line)
        .collect()
}

/// Lines of `text` that start with `start` (after indentation) get `prefix` before it.
fn prefix_lines(text: &str, start: &str, prefix: &str) -> String {
    text.split_inclusive('\n')
        .map(|l| {
            let body = l.trim_start();
            if body.starts_with(start) {
                let indent = &l[..l.len() - body.len()];
                format!("{indent}{prefix}{body}")
            } else {
                l.to_string()
            }
        })
        .collect()
}

/// Rewrites `crate::<from>` and `<crate_name>::<from>` paths to `<to>`, where the path ends there
/// (`crate::api::v1::X`, not `crate::api::v10`).
fn rewrite_paths(text: &str, crate_name: &str, moved: &[Moved]) -> String {
    let mut text = text.to_string();
    for m in moved {
        for root in ["crate", crate_name] {
            let from = format!("{root}::{}", m.from);
            let to = format!("{root}::{}", m.to);
            let mut out = String::with_capacity(text.len());
            let mut rest = text.as_str();
            while let Some(at) = rest.find(&from) {
                let before_ok = out
                    .chars()
                    .last()
                    .or_else(|| rest[..at].chars().last())
                    .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == ':'));
                let before_ok = if at > 0 {
                    rest[..at]
                        .chars()
                        .last()
                        .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == ':'))
                } else {
                    before_ok
                };
                let after = &rest[at + from.len()..];
                let after_ok = after
                    .chars()
                    .next()
                    .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
                out.push_str(&rest[..at]);
                out.push_str(if before_ok && after_ok { &to } else { &from });
                rest = after;
            }
            out.push_str(rest);
            text = out;
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patches_apply_around_the_users_edits() {
        let old = "a\nb\nc\nd\n";
        let new = "a\nb\nX\nc\nd\n";
        assert_eq!(patch(old, old, new).unwrap(), new);
        let mine = "mine\na\nb\nc\nd\nmore\n";
        assert_eq!(
            patch(mine, old, new).unwrap(),
            "mine\na\nb\nX\nc\nd\nmore\n"
        );
        // Already there: nothing to do; back again: removed.
        assert_eq!(
            patch("mine\na\nb\nX\nc\nd\n", old, new).unwrap(),
            "mine\na\nb\nX\nc\nd\n"
        );
        assert_eq!(patch("a\nb\nX\nc\nd\n", new, old).unwrap(), old);
        // A block that is not there is refused.
        assert_eq!(patch("q\nr\n", "k: A\n", "k: B\n"), None);
    }

    #[test]
    fn paths_are_rewritten_where_they_end() {
        let moved = [Moved {
            from: "api::v1".into(),
            to: "api::crew::v1".into(),
        }];
        let text = "use crate::api::v1::Captain;\nuse demo::api::v1;\nuse crate::api::v10::X;\nuse my_crate::api::v1::Y;\n";
        assert_eq!(
            rewrite_paths(text, "demo", &moved),
            "use crate::api::crew::v1::Captain;\nuse demo::api::crew::v1;\nuse crate::api::v10::X;\nuse my_crate::api::v1::Y;\n"
        );
    }

    #[test]
    fn owners_are_read_back() {
        assert_eq!(
            current_owner(&boilerplate::header(License::Apache2, "Acme Corp", 2026)),
            "Acme Corp"
        );
        assert_eq!(
            current_owner(&boilerplate::header(License::Copyright, "", 2026)),
            ""
        );
    }
}
