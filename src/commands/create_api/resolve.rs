//! `create api`, step 2: the checked request resolved into the template variables, for this run
//! and for the run that wrote the kind's files as they are (what `--force` compares with).

use std::path::Path;

use anyhow::{Context as _, Result};

use super::Request;
use super::validate::Checked;
use crate::plugins::{self, ApiPart};
use crate::project::Resource;
use crate::vars::{ApiVars, ControllerVars, KindVars, ProjectVars, Target, TypesVars};

/// The variables of this run.
pub fn vars(checked: &Checked, request: &Request, dir: &Path) -> Result<ApiVars> {
    let mut vars = api_vars(checked, &checked.plural, namespaced(checked, request));
    if matches!(checked.target(), Target::Own)
        && let Some(storage) = storage_as_it_is(dir, checked, &vars.types.api_dir)?
    {
        vars.types.storage = storage;
    }
    Ok(vars)
}

/// What an earlier `create api` of the kind wrote, from what PROJECT recorded: whether it has
/// types and the requested controller, with which variables, and the plugins that took part.
pub struct Recorded {
    pub resource: bool,
    pub controller: bool,
    pub vars: ApiVars,
    pub parts: Vec<Box<dyn ApiPart>>,
}

pub fn recorded(checked: &Checked, request: &Request, now: &ApiVars) -> Option<Recorded> {
    let entry = checked.entry()?;
    let plural = match (&checked.builtin, &checked.external) {
        (Some(b), _) => b.plural.to_string(),
        (_, Some(e)) => e.crd.plural.clone(),
        _ => (entry.plural.clone()).unwrap_or_else(|| checked.kind.default_plural()),
    };
    // The scope its types were written with.
    let namespaced = entry
        .api
        .as_ref()
        .map_or(request.namespaced, |api| api.namespaced);
    let mut vars = api_vars(checked, &plural, namespaced);
    // The storage version is what the types say now, not what they said then.
    vars.types.storage = now.types.storage;
    Some(Recorded {
        resource: entry.api.is_some(),
        controller: match &request.controller_name {
            Some(name) => entry.controller_names().contains(name),
            None => entry.has_controller(),
        },
        vars,
        parts: plugins::recorded_api(&checked.project, checked.gvk()),
    })
}

/// Whether the kind's objects are namespaced, as this run has it: a built-in or external kind's
/// own scope; the project's own kind's from `--namespaced` when this run creates its types, else
/// as PROJECT records them.
fn namespaced(checked: &Checked, request: &Request) -> bool {
    match checked.entry().and_then(|e| e.api.as_ref()) {
        Some(api) if !request.resource => api.namespaced,
        _ => request.namespaced,
    }
}

fn api_vars(checked: &Checked, plural: &str, namespaced: bool) -> ApiVars {
    let (group, version, kind) = (&checked.group, &checked.version, &checked.kind);
    let project = &checked.project;
    let target = checked.target();
    let kind_vars = KindVars::new(target, group, version, kind, plural, &checked.domain);
    let types = types_vars(checked, &kind_vars);
    let (api_namespaced, rust_type, rust_module) = match target {
        Target::Builtin(b) => (
            b.namespaced,
            b.rust_type.to_string(),
            b.rust_module().to_string(),
        ),
        Target::External(e) => {
            let module = format!("crate::external::{}::{}", e.module, version.as_str());
            (
                e.crd.namespaced,
                format!("{module}::{}", kind.type_name()),
                module,
            )
        }
        // Another controller of the project's own kind reads it through its types.
        Target::Own => (
            namespaced,
            format!("{}::{}", types.api_module, kind.as_str()),
            String::new(),
        ),
    };
    ApiVars {
        project: ProjectVars::new(project, &checked.boilerplate),
        controller: controller_vars(checked, &kind_vars),
        kind: kind_vars,
        types,
        core: checked.builtin.is_some(),
        external: checked.external.is_some(),
        api_namespaced,
        rust_type,
        rust_module,
    }
}

/// Where the types live: `src/api/v1/`, or `src/api/<group>/v1/` in the multigroup layout; and
/// the kind's RBAC helper roles, group-prefixed in the multigroup layout.
fn types_vars(checked: &Checked, kind: &KindVars) -> TypesVars {
    let version = &kind.version;
    let multigroup = checked.project.multigroup;
    let group_module = checked.group.module();
    let (api_dir, api_rel_module, api_top_module) = if multigroup {
        (
            format!("{group_module}/{version}"),
            format!("{group_module}::{version}"),
            group_module,
        )
    } else {
        (version.clone(), version.clone(), version.clone())
    };
    let (rbac_prefix, role_prefix) = if multigroup {
        (
            format!("{}_{}", kind.group, kind.kind_lower),
            format!("{}-{}", kind.group.replace('.', "-"), kind.kind_lower),
        )
    } else {
        (kind.kind_lower.clone(), kind.kind_lower.clone())
    };
    TypesVars {
        api_module: format!("crate::api::{api_rel_module}"),
        api_dir,
        api_rel_module,
        api_top_module,
        storage: is_storage_version(checked),
        rbac_prefix,
        role_prefix,
    }
}

/// Where the controller lives: `src/controller/<kind>.rs` or `src/controller/<group>/<kind>.rs`
/// (`<name>.rs` for a named controller), and its name (see `controllers::slot`).
fn controller_vars(checked: &Checked, kind: &KindVars) -> ControllerVars {
    let slot = &checked.slot;
    let (controller_rel_module, controller_top_module) = if checked.project.multigroup {
        (
            format!("{}::{}", kind.group_module, slot.module),
            kind.group_module.clone(),
        )
    } else {
        (slot.module.clone(), slot.module.clone())
    };
    ControllerVars {
        controller_path: slot.path.clone(),
        controller_module: slot.module.clone(),
        controller_rel_module,
        controller_top_module,
        controller_name: slot.name.clone(),
    }
}

/// Exactly one version of a kind is the storage version: the first one created. Later versions
/// are written with `storage = false`; moving the storage version is a one-line change in the
/// types (see docs/create-api.md).
fn is_storage_version(checked: &Checked) -> bool {
    let (group, version, kind) = (&checked.group, &checked.version, &checked.kind);
    let resources = &checked.project.resources;
    let is_kind = |r: &&Resource| {
        r.api.is_some() && !r.core && r.group == group.as_str() && r.kind == kind.as_str()
    };
    let other_version_exists = resources
        .iter()
        .filter(is_kind)
        .any(|r| r.version != version.as_str());
    match checked.entry() {
        Some(e) if e.api.is_some() => {
            let first = resources.iter().find(is_kind).map(|r| r.version.as_str());
            !other_version_exists || first == Some(version.as_str())
        }
        _ => !other_version_exists,
    }
}

/// Whether this version of the kind is the storage version, as the project has it: as its types
/// say when they exist (`create webhook --conversion` moves the storage version to the hub, or
/// the user moved it), else whether it is the hub of the kind's conversion webhook. None: the
/// rule of a new version applies (see [`is_storage_version`]).
fn storage_as_it_is(dir: &Path, checked: &Checked, api_dir: &str) -> Result<Option<bool>> {
    let (group, version, kind) = (&checked.group, &checked.version, &checked.kind);
    let types = format!("src/api/{api_dir}/{}.rs", kind.snake());
    match std::fs::read_to_string(dir.join(&types)) {
        Ok(text) => return Ok(Some(!declares_not_storage(&text))),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
        Err(err) => return Err(err).with_context(|| format!("reading {types}")),
    }
    let hub = checked.project.resources.iter().find(|r| {
        !r.core
            && r.group == group.as_str()
            && r.kind == kind.as_str()
            && r.webhooks.as_ref().is_some_and(|w| w.conversion)
    });
    Ok(hub.map(|hub| hub.version == version.as_str()))
}

/// Whether Rust types declare `storage = false` (outside comments).
fn declares_not_storage(text: &str) -> bool {
    text.lines().map(str::trim).any(|line| {
        !line.starts_with("//")
            && line
                .split_whitespace()
                .collect::<String>()
                .contains("storage=false")
    })
}
