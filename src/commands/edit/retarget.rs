//! `--namespaced`, `--multigroup` and `--sharding`: the files of `init` that depend on them,
//! brought to what `init` with the new value writes, and the RBAC helper roles of the kinds.

use anyhow::{Result, bail};

use crate::project::Project;
use crate::scaffold::{Plan, rerender::patch};
use crate::vars::{InitVars, ProjectVars};

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

pub(super) fn init_files(
    plan: &mut Plan,
    old: &Project,
    new: &Project,
    header: &str,
    force: bool,
) -> Result<()> {
    let Some(flag) = changed_flag(old, new) else {
        return Ok(());
    };
    let before = crate::commands::init::FILES.render(&init_vars(old, header))?;
    let after = crate::commands::init::FILES.render(&init_vars(new, header))?;
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
                flag,
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

/// The first flag of `edit` whose change `init`'s files depend on, if one changed.
fn changed_flag(old: &Project, new: &Project) -> Option<&'static str> {
    if old.namespaced != new.namespaced {
        Some("--namespaced")
    } else if old.multigroup != new.multigroup {
        Some("--multigroup")
    } else if old.sharding != new.sharding {
        Some("--sharding")
    } else {
        None
    }
}

/// The RBAC helper roles of the kinds (`config/rbac/<kind>_{admin,editor,viewer}_role.yaml`) are
/// Roles in a namespaced project, ClusterRoles otherwise.
pub(super) fn helper_roles(plan: &mut Plan, namespaced: bool) -> Result<()> {
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
