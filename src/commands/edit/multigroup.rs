//! `--multigroup`: the kinds moved into the multigroup layout, `src/{api,controller,webhook}/<group>/`,
//! with the paths that name their modules rewritten in every Rust file of the project (see
//! [`super::paths`]).
//!
//! The project's own kinds, the controllers of every kind and the webhooks of every kind move;
//! the types of external kinds stay where they are, `src/external/<group>/` in both layouts.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Result, bail};

use super::paths::{self, Modules, Move};
use super::{rust_files, walk};
use crate::commands::{controllers, layout};
use crate::names::Group;
use crate::names::ident::{self, Site};
use crate::project::{self, Project, Resource};
use crate::scaffold::{Owner, Plan, markers, rustfmt};
use crate::vars::{
    GroupVars, ProjectVars, WebhookVersionVars, recorded_group_module, recorded_kind_module,
};

/// What moves: the modules, and the files and folders they are.
#[derive(Default)]
struct Layout {
    moves: Vec<Move>,
    /// Files and folders under `src/`: from → to.
    files: BTreeMap<String, String>,
}

impl Layout {
    fn add(&mut self, from: &[&str], group: &str, at: usize, file: (String, String)) {
        let from: Vec<String> = from.iter().map(|s| s.to_string()).collect();
        self.moves.push(Move::new(from, at, group));
        self.files.insert(file.0, file.1);
    }

    /// Where the file at `path` goes: under a moved folder, or moved itself.
    fn new_path(&self, path: &str) -> String {
        for (from, to) in &self.files {
            if path == from {
                return to.clone();
            }
            if let Some(rest) = path.strip_prefix(from.as_str())
                && rest.starts_with('/')
            {
                return format!("{to}{rest}");
            }
        }
        path.to_string()
    }
}

/// Moves the kinds of the single-group project `old` into the multigroup layout; `new` becomes
/// the multigroup project.
pub(super) fn to_multigroup(
    plan: &mut Plan,
    old: &Project,
    new: &mut Project,
    header: &str,
) -> Result<()> {
    check_one_group(old)?;
    let layout = layout_of(plan, old)?;
    check_groups_free(plan, &layout)?;
    rewrite_paths(plan, old, &layout)?;
    let vars = ProjectVars::new(new, header);
    move_types(plan, old, &vars)?;
    move_controllers(plan, old, &vars)?;
    let versions = move_webhooks(plan, old, &vars)?;
    drop_webhook_versions(plan, versions)?;
    new.multigroup = true;
    for r in new.resources.iter_mut().filter(|r| !r.core && !r.external) {
        r.path = format!("crate::api::{}::{}", Site::Module.stem(&r.group), r.version);
    }
    Ok(())
}

/// A single-group project has one group of its own, which becomes a module. (Built-in and
/// external kinds are other projects' groups.)
fn check_one_group(old: &Project) -> Result<()> {
    let own_groups: BTreeSet<&str> = old
        .resources
        .iter()
        .filter(|r| !r.core && !r.external)
        .map(|r| r.group.as_str())
        .collect();
    if own_groups.len() > 1 {
        bail!(
            "{} has kinds of several groups ({}) in the single-group layout; correct it first",
            project::FILE,
            own_groups.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    // A built-in kind's group as PROJECT records it (its short group: `core`, `apps`) becomes a
    // module too: a hand-edited one must be able to.
    for r in old.resources.iter().filter(|r| r.core) {
        let module = Site::Module.stem(&r.group);
        let unusable = module.is_empty()
            || module.starts_with(|c: char| c.is_ascii_digit())
            || ident::is_keyword(&module);
        if unusable {
            bail!(
                "cannot move to the multigroup layout: the group {:?} of {} in {} would name the \
                 module src/*/{module}, which cannot be a Rust module; correct the group in {}",
                r.group,
                r.kind,
                project::FILE,
                project::FILE
            );
        }
    }
    // Another project's group is a module in the multigroup layout too (PROJECT's validation
    // asks the same of it).
    for r in old.resources.iter().filter(|r| r.external) {
        let domain = if r.domain.is_empty() {
            &old.domain
        } else {
            &r.domain
        };
        Group::parse_foreign(&r.group, domain)?
            .check_module()
            .map_err(|err| {
                anyhow::anyhow!(
                    "cannot move to the multigroup layout: {err} (the group of the external kind {})",
                    r.kind
                )
            })?;
    }
    if let Some(group) = own_groups.first() {
        Group::parse(group, &old.domain)?
            .check_module()
            .map_err(|err| {
                anyhow::anyhow!(
                    "cannot move to the multigroup layout: {err} (the group becomes the module src/api/{})",
                    Site::Module.stem(group)
                )
            })?;
    }
    Ok(())
}

/// The modules and files that move, from PROJECT and what is on disk.
fn layout_of(plan: &Plan, old: &Project) -> Result<Layout> {
    let mut layout = Layout::default();
    let mut versions = BTreeSet::new();
    for r in old.resources.iter().filter(|r| !r.core && r.api.is_some()) {
        if versions.insert(r.version.clone()) {
            let gm = recorded_group_module(old, r);
            let (from, to) = (
                format!("src/api/{}", r.version),
                format!("src/api/{gm}/{}", r.version),
            );
            layout.add(&["api", &r.version], &gm, 1, (from, to));
        }
    }
    for (slot, r) in controllers::all(old) {
        let from = format!("src/controller/{}.rs", slot.module);
        if plan.read(&from)?.is_some() {
            let gm = recorded_group_module(old, r);
            let to = format!("src/controller/{gm}/{}.rs", slot.module);
            layout.add(&["controller", &slot.module], &gm, 1, (from, to));
        }
    }
    // Webhooks: a version whose kinds all move into one group moves whole (paths to the version's
    // module follow); else each kind's module moves on its own.
    let mut by_version: BTreeMap<&str, Vec<(&Resource, String)>> = BTreeMap::new();
    for r in old.resources.iter().filter(|r| r.webhooks.is_some()) {
        let kind = recorded_kind_module(r);
        if plan
            .root()
            .join(format!("src/webhook/{}/{kind}", r.version))
            .is_dir()
        {
            by_version.entry(&r.version).or_default().push((r, kind));
        }
    }
    for (version, kinds) in by_version {
        let groups: BTreeSet<String> = kinds
            .iter()
            .map(|(r, _)| recorded_group_module(old, r))
            .collect();
        for (r, kind) in &kinds {
            let gm = recorded_group_module(old, r);
            let from = format!("src/webhook/{version}/{kind}");
            let to = format!("src/webhook/{gm}/{version}/{kind}");
            if groups.len() == 1 {
                layout.files.insert(from, to);
            } else {
                layout.add(&["webhook", version, kind], &gm, 1, (from, to));
            }
        }
        if let [gm] = groups.iter().collect::<Vec<_>>()[..] {
            let from = vec!["webhook".to_string(), version.to_string()];
            layout.moves.push(Move::new(from, 1, gm));
        }
    }
    Ok(layout)
}

/// A group's module must not be a module of the user's already: `src/api/crew.rs` would become a
/// second file of the module `api::crew`. A module that operator-rs moves itself may have the
/// group's name (the controller of a kind `Ship` in group `ship`, `src/controller/ship.rs`, goes
/// to `src/controller/ship/ship.rs`): its file and its declaration leave, only a folder of that
/// name would be in the way.
fn check_groups_free(plan: &Plan, layout: &Layout) -> Result<()> {
    let mut checked = BTreeSet::new();
    for m in &layout.moves {
        let to = m.to();
        let (top, group) = (to[..m.at].join("/"), &to[m.at]);
        if !checked.insert((top.clone(), group.clone())) {
            continue;
        }
        let group_path = &to[..=m.at];
        let moves_away = layout.moves.iter().any(|other| other.from == group_path);
        let file = format!("src/{top}/{group}.rs");
        let folder = format!("src/{top}/{group}");
        let declared = !moves_away
            && plan
                .read(&format!("src/{top}/mod.rs"))?
                .is_some_and(|text| declares(&text, group));
        let file_taken = !moves_away && plan.read(&file)?.is_some();
        if file_taken || plan.root().join(&folder).exists() || declared {
            bail!(
                "cannot move to the multigroup layout: the group's module src/{top}/{group} is \
                 already a module of yours ({}); rename it, then run edit again",
                if declared {
                    format!("declared in src/{top}/mod.rs")
                } else if file_taken {
                    format!("{file} or {folder}/")
                } else {
                    format!("the folder {folder}/")
                }
            );
        }
    }
    Ok(())
}

/// Whether a line of `text` declares the module `name` (`pub mod name;`, `mod name {`).
fn declares(text: &str, name: &str) -> bool {
    text.lines().any(|line| {
        let line = line.trim();
        let line = line.split_once("mod ").map_or("", |(_, rest)| rest);
        line.trim_end_matches(|c| ";{ ".contains(c)) == name
    })
}

/// Every Rust file of the project with its paths to the moved modules rewritten, before anything
/// moves (the paths are resolved in the tree as it is).
fn rewrite_paths(plan: &mut Plan, old: &Project, layout: &Layout) -> Result<()> {
    let files = rust_files(plan);
    let mut modules: Modules = BTreeSet::new();
    for path in &files {
        if let Some(mut module) = paths::module_of(path) {
            while !module.is_empty() {
                modules.insert(module.clone());
                module.pop();
            }
        }
    }
    let crate_name = old.project_name.replace('-', "_");
    let mut rewritten = Vec::new();
    for path in files {
        let Some(text) = plan.read(&path)? else {
            continue;
        };
        let old_module = paths::module_of(&path);
        let new_module = paths::module_of(&layout.new_path(&path));
        let module = old_module.as_deref().zip(new_module.as_deref());
        let new = paths::rewrite(&path, &text, module, &crate_name, &modules, &layout.moves)?;
        if new != text {
            rewritten.push((path, text, new));
        }
    }
    // A file that was as `cargo fmt` leaves it stays so: a longer path may need another layout.
    let texts = rewritten
        .iter()
        .flat_map(|(_, old, new)| [old.clone(), new.clone()])
        .collect();
    let mut formatted = rustfmt::format_all(plan.root(), texts).into_iter();
    // Edited only once every file is known to rewrite: a refusal leaves the plan as it was.
    for (path, old, new) in rewritten {
        let (Some(old_formatted), Some(new_formatted)) = (formatted.next(), formatted.next())
        else {
            break;
        };
        let text = if old_formatted == old {
            new_formatted
        } else {
            new
        };
        plan.edit(&path, |_| Ok(text))?;
    }
    Ok(())
}

/// Types: `src/api/<version>/` → `src/api/<group>/<version>/`.
fn move_types(plan: &mut Plan, old: &Project, vars: &ProjectVars) -> Result<()> {
    let mut versions: Vec<(&Resource, &str)> = Vec::new();
    for r in old.resources.iter().filter(|r| !r.core && r.api.is_some()) {
        if !versions.iter().any(|(_, v)| *v == r.version) {
            versions.push((r, r.version.as_str()));
        }
    }
    for (r, version) in versions {
        let gm = recorded_group_module(old, r);
        move_dir(
            plan,
            &format!("src/api/{version}"),
            &format!("src/api/{gm}/{version}"),
        )?;
        let group = group_vars(vars, &gm, api_group(r, &old.domain));
        let group_mod = create_once(plan, layout::API_GROUP.texts(&group, true)?)?;
        plan.insert(
            &group_mod,
            "version-modules",
            &format!("pub mod {version};"),
        )?;
        plan.edit("src/api/mod.rs", |t| {
            Ok(drop_line(t, &format!("pub mod {version};")))
        })?;
        plan.insert("src/api/mod.rs", "api-modules", &format!("pub mod {gm};"))?;
    }
    Ok(())
}

/// Controllers: `src/controller/<name>.rs` → `src/controller/<group>/<name>.rs`, every one of
/// every kind (named ones too).
fn move_controllers(plan: &mut Plan, old: &Project, vars: &ProjectVars) -> Result<()> {
    for (slot, r) in controllers::all(old) {
        let gm = recorded_group_module(old, r);
        let module = &slot.module;
        let from = format!("src/controller/{module}.rs");
        if plan.read(&from)?.is_none() {
            continue;
        }
        move_file(plan, &from, &format!("src/controller/{gm}/{module}.rs"))?;
        let group = group_vars(vars, &gm, api_group(r, &old.domain));
        let group_mod = create_once(plan, layout::CONTROLLER_GROUP.texts(&group, true)?)?;
        plan.insert(
            &group_mod,
            "controller-modules",
            &format!("pub mod {module};"),
        )?;
        plan.edit("src/controller/mod.rs", |t| {
            Ok(drop_line(t, &format!("pub mod {module};")))
        })?;
        plan.insert(
            "src/controller/mod.rs",
            "controller-modules",
            &format!("pub mod {gm};"),
        )?;
    }
    Ok(())
}

/// Webhooks: `src/webhook/<version>/<kind>/` → `src/webhook/<group>/<version>/<kind>/`; the
/// version modules, shared by the groups in the single-group layout, are written anew. Returns
/// the versions whose old module is left to remove, with the kinds moved out of each.
fn move_webhooks(
    plan: &mut Plan,
    old: &Project,
    vars: &ProjectVars,
) -> Result<BTreeMap<String, Vec<String>>> {
    let mut old_version_mods: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in old.resources.iter().filter(|r| r.webhooks.is_some()) {
        let gm = recorded_group_module(old, r);
        let kind = recorded_kind_module(r);
        let version = &r.version;
        let from = format!("src/webhook/{version}/{kind}");
        if !plan.root().join(&from).is_dir() {
            continue;
        }
        move_dir(plan, &from, &format!("src/webhook/{gm}/{version}/{kind}"))?;
        old_version_mods
            .entry(version.clone())
            .or_default()
            .push(kind.clone());
        let qualified = api_group(r, &old.domain);
        let version_vars = WebhookVersionVars {
            project: vars.clone(),
            qualified_group: qualified.clone(),
            version: version.clone(),
            webhook_dir: format!("{gm}/{version}"),
        };
        let version_mod = create_once(plan, layout::WEBHOOK_VERSION.texts(&version_vars, true)?)?;
        plan.insert(
            &version_mod,
            "webhook-kind-modules",
            &format!("pub mod {kind};"),
        )?;
        let group = group_vars(vars, &gm, qualified);
        let group_mod = create_once(plan, layout::WEBHOOK_GROUP.texts(&group, true)?)?;
        plan.insert(
            &group_mod,
            "webhook-version-modules",
            &format!("pub mod {version};"),
        )?;
        plan.insert(
            "src/webhook/mod.rs",
            "webhook-modules",
            &format!("pub mod {gm};"),
        )?;
    }
    Ok(old_version_mods)
}

/// Removes the version modules of `src/webhook/` the kinds were moved out of, unless they hold
/// modules of the user's.
fn drop_webhook_versions(plan: &mut Plan, versions: BTreeMap<String, Vec<String>>) -> Result<()> {
    for (version, kinds) in versions {
        let path = format!("src/webhook/{version}/mod.rs");
        let left = plan.read(&path)?.unwrap_or_default();
        let others = left.lines().any(|l| {
            let l = l.trim();
            l.starts_with("pub mod ") && !kinds.iter().any(|k| l == format!("pub mod {k};"))
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
    Ok(())
}

/// The API group as it is written in Kubernetes (`""` for core), for the doc comments.
fn api_group(r: &Resource, domain: &str) -> String {
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

/// The variables of a group's module file.
fn group_vars(vars: &ProjectVars, group_module: &str, qualified_group: String) -> GroupVars {
    GroupVars {
        project: vars.clone(),
        group_module: group_module.to_string(),
        qualified_group,
    }
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

/// `text` without the lines that are exactly `line` (ignoring indentation), and the attribute
/// that allows a module named like its parent right above one ([`markers::INCEPTION`]).
fn drop_line(text: &str, line: &str) -> String {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let dropped = |i: usize| lines.get(i).is_some_and(|l| l.trim() == line);
    lines
        .iter()
        .enumerate()
        .filter(|&(i, l)| !(dropped(i) || (l.trim() == markers::INCEPTION && dropped(i + 1))))
        .map(|(_, l)| *l)
        .collect()
}
