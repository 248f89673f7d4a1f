//! `--multigroup`: the kinds moved into the multigroup layout, `src/{api,controller,webhook}/<group>/`,
//! with the paths that name their modules rewritten in every Rust file of the project.

use std::collections::BTreeSet;

use anyhow::{Result, bail};

use super::{rust_files, walk};
use crate::commands::layout;
use crate::names::{Group, Kind};
use crate::project::{self, Project, Resource};
use crate::scaffold::{Owner, Plan};
use crate::vars::{GroupVars, ProjectVars, WebhookVersionVars};

/// A module moved: `api::v1` → `api::crew::v1`, for the paths in `use` lines and elsewhere.
struct Moved {
    from: String,
    to: String,
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
    let vars = ProjectVars::new(new, header);
    let mut moved: Vec<Moved> = Vec::new();
    move_types(plan, old, &vars, &mut moved)?;
    move_controllers(plan, old, &vars, &mut moved)?;
    let versions = move_webhooks(plan, old, &vars, &mut moved)?;
    drop_webhook_versions(plan, versions, &moved)?;
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

/// A single-group project has one group of its own, which becomes a module.
fn check_one_group(old: &Project) -> Result<()> {
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
    Ok(())
}

/// Types: `src/api/<version>/` → `src/api/<group>/<version>/`.
fn move_types(
    plan: &mut Plan,
    old: &Project,
    vars: &ProjectVars,
    moved: &mut Vec<Moved>,
) -> Result<()> {
    let mut versions: Vec<(&Resource, &str)> = Vec::new();
    for r in old.resources.iter().filter(|r| !r.core && r.api.is_some()) {
        if !versions.iter().any(|(_, v)| *v == r.version) {
            versions.push((r, r.version.as_str()));
        }
    }
    for (r, version) in versions {
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
        let group = group_vars(vars, &gm, api_group(r, &old.domain));
        let group_mod = create_once(plan, layout::API_GROUP.texts(&group, true)?)?;
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
    Ok(())
}

/// Controllers: `src/controller/<kind>.rs` → `src/controller/<group>/<kind>.rs`.
fn move_controllers(
    plan: &mut Plan,
    old: &Project,
    vars: &ProjectVars,
    moved: &mut Vec<Moved>,
) -> Result<()> {
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
        let group = group_vars(vars, &gm, api_group(r, &old.domain));
        let group_mod = create_once(plan, layout::CONTROLLER_GROUP.texts(&group, true)?)?;
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
    Ok(())
}

/// Webhooks: `src/webhook/<version>/<kind>/` → `src/webhook/<group>/<version>/<kind>/`; the
/// version modules, shared by the groups in the single-group layout, are written anew. Returns
/// the versions whose old module is left to remove.
fn move_webhooks(
    plan: &mut Plan,
    old: &Project,
    vars: &ProjectVars,
    moved: &mut Vec<Moved>,
) -> Result<BTreeSet<String>> {
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
    Ok(old_version_mods)
}

/// Removes the version modules of `src/webhook/` the kinds were moved out of, unless they hold
/// modules of the user's.
fn drop_webhook_versions(
    plan: &mut Plan,
    versions: BTreeSet<String>,
    moved: &[Moved],
) -> Result<()> {
    for version in versions {
        let path = format!("src/webhook/{version}/mod.rs");
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
    Ok(())
}

/// The Rust module name of a group of a resource (built-in groups: `core`, `apps` …).
fn group_module(group: &str) -> String {
    group.replace(['.', '-'], "_")
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
}
