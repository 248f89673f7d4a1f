//! `create api`, step 3: the tables of templates and insertions, rendered into the plan.
//!
//! What gets written is data: the tables below. The code decides which apply (types or not,
//! controller or not, a built-in or external kind, a plugin's files in place of these).

use anyhow::Result;

use super::Request;
use super::resolve::Recorded;
use super::validate::Checked;
use crate::commands::{cluster_rbac, external_types, layout};
use crate::scaffold::Plan;
use crate::scaffold::table::{Table, insert, insert_multigroup, shared_file, user_file};
use crate::vars::{ApiVars, ExternalVars, GroupVars};

/// The files of the kind's types: the user's once written (`--force` renders them again only
/// while they are as operator-rs wrote them).
pub static TYPES: Table<ApiVars> = Table::new(
    &[
        user_file("api/src/api/{{ api_dir }}/{{ kind_snake }}.rs"),
        user_file("api/config/samples/{{ group }}_{{ version }}_{{ kind_lower }}.yaml"),
    ],
    &[],
);

/// Files shared by the kinds, written by the first kind (or version of a kind) that needs them
/// and then kept, and the lines that register the kind in them. The RBAC helper roles cover
/// every version of a kind, so a second version keeps them.
pub static RESOURCE: Table<ApiVars> = Table::new(
    &[
        shared_file("api/src/api/{{ api_dir }}/mod.rs"),
        shared_file("api/config/samples/kustomization.yaml"),
        shared_file("api/config/crd/kustomization.yaml"),
        shared_file("api/config/crd/kustomizeconfig.yaml"),
        shared_file("api/config/rbac/{{ rbac_prefix }}_admin_role.yaml"),
        shared_file("api/config/rbac/{{ rbac_prefix }}_editor_role.yaml"),
        shared_file("api/config/rbac/{{ rbac_prefix }}_viewer_role.yaml"),
    ],
    &[
        insert(
            "src/api/mod.rs",
            "api-modules",
            "pub mod {{ api_top_module }};",
        ),
        insert_multigroup(
            "src/api/{{ group_module }}/mod.rs",
            "version-modules",
            "pub mod {{ version }};",
        ),
        insert(
            "src/api/{{ api_dir }}/mod.rs",
            "kind-modules",
            "pub mod {{ kind_snake }};\npub use {{ kind_snake }}::{ {{- kind }}, {{ kind }}Spec, {{ kind }}Status};",
        ),
        insert(
            "src/api/mod.rs",
            "crds",
            "{{ api_rel_module }}::{{ kind }}::crd(),",
        ),
        insert(
            "config/crd/kustomization.yaml",
            "crdkustomizeresource",
            "- bases/{{ qualified_group }}_{{ plural }}.yaml",
        ),
        insert(
            "config/samples/kustomization.yaml",
            "manifestskustomizesamples",
            "- {{ group }}_{{ version }}_{{ kind_lower }}.yaml",
        ),
        insert(
            "config/rbac/kustomization.yaml",
            "rbac-roles",
            "- {{ rbac_prefix }}_admin_role.yaml\n- {{ rbac_prefix }}_editor_role.yaml\n- {{ rbac_prefix }}_viewer_role.yaml",
        ),
    ],
);

/// The controller of one of the project's own kinds: the one that reconciles its spec and
/// writes its status.
pub static CONTROLLER: Table<ApiVars> = Table::new(
    &[user_file(
        "controller/src/controller/{{ controller_path }}.rs",
    )],
    &[],
);

/// A controller that reads a kind whose status is not its own to write: a built-in kind
/// (Deployment, Pod …), an external kind, or a kind that has a controller already
/// (`--controller-name`).
pub static READER_CONTROLLER: Table<ApiVars> = Table::new(
    &[user_file(
        "builtin-controller/src/controller/{{ controller_path }}.rs",
    )],
    &[],
);

/// The lines that register a controller, whichever files it has.
pub static CONTROLLER_LINES: Table<ApiVars> = Table::new(
    &[],
    &[
        insert(
            "src/controller/mod.rs",
            "controller-modules",
            "pub mod {{ controller_top_module }};",
        ),
        insert_multigroup(
            "src/controller/{{ group_module }}/mod.rs",
            "controller-modules",
            "pub mod {{ controller_module }};",
        ),
        insert(
            "src/controller/mod.rs",
            "controllers",
            "{{ controller_rel_module }}::CONTROLLER,",
        ),
    ],
);

/// Plans the files of this run: first what `--force` compares the user's files with, then the
/// kind's types (or a plugin's), its controller (or a plugin's), and what the plugins add.
pub fn render(
    plan: &mut Plan,
    checked: &Checked,
    request: &Request,
    vars: &ApiVars,
    recorded: Option<&Recorded>,
) -> Result<()> {
    let multigroup = checked.project.multigroup;
    if let Some(recorded) = recorded {
        record_written(plan, checked, recorded)?;
    }
    if request.resource {
        let plugin_types = request
            .parts
            .iter()
            .find_map(|p| p.types(&checked.project, vars));
        match plugin_types {
            Some(types) => types.render(plan, multigroup)?,
            None => TYPES.render(plan, vars, multigroup)?,
        }
        layout::API_GROUP.render(plan, &group_vars(vars, &vars.kind.group_module), multigroup)?;
        RESOURCE.render(plan, vars, multigroup)?;
        plan.uncomment("config/default/kustomization.yaml", "- ../crd")?;
    }
    if let Some(external) = external_vars(checked, request, vars) {
        external_types::render(plan, &external)?;
    }
    if request.controller {
        controller(checked, request, vars, plan)?;
    }
    for part in &request.parts {
        part.render(plan, &checked.project, vars, request.controller)?;
    }
    Ok(())
}

/// The kind's controller (a plugin's, or the command's own), its group's module and the lines
/// that register it; and the ClusterRole a namespaced project needs for a cluster-scoped kind.
fn controller(checked: &Checked, request: &Request, vars: &ApiVars, plan: &mut Plan) -> Result<()> {
    let multigroup = checked.project.multigroup;
    let files = request
        .parts
        .iter()
        .find_map(|p| p.controller(&checked.project, vars));
    match files {
        Some(files) => files.render(plan, multigroup)?,
        None => own_controller(checked).render(plan, vars, multigroup)?,
    }
    let group = group_vars(vars, &vars.kind.group_module);
    layout::CONTROLLER_GROUP.render(plan, &group, multigroup)?;
    CONTROLLER_LINES.render(plan, vars, multigroup)?;
    if checked.project.namespaced && !vars.api_namespaced {
        cluster_rbac::add(plan, &vars.project)?;
        plan.note(cluster_rbac::note(&vars.kind.kind));
    }
    Ok(())
}

/// The command's own controller template for the kind.
fn own_controller(checked: &Checked) -> &'static Table<ApiVars> {
    if checked.builtin.is_some() || checked.external.is_some() || !checked.primary {
        &READER_CONTROLLER
    } else {
        &CONTROLLER
    }
}

/// Tells the plan what operator-rs wrote for the kind's user files before, from the options
/// PROJECT recorded: `--force` renders a file again only if it is still that (see
/// `Plan::written`).
fn record_written(plan: &mut Plan, checked: &Checked, recorded: &Recorded) -> Result<()> {
    let multigroup = checked.project.multigroup;
    let vars = &recorded.vars;
    let project = &checked.project;
    if recorded.resource {
        match recorded.parts.iter().find_map(|p| p.types(project, vars)) {
            Some(types) => types.record_written(plan, multigroup)?,
            None => TYPES.record_written(plan, vars, multigroup)?,
        }
    }
    if let Some(external) = &checked.external {
        let path = checked.entry().map_or("", |e| e.path.as_str());
        let external = ExternalVars::new(
            vars.project.clone(),
            (&checked.group, &checked.version, &checked.kind),
            external,
            path,
        );
        external_types::record_written(plan, &external)?;
    }
    if recorded.controller {
        match recorded
            .parts
            .iter()
            .find_map(|p| p.controller(project, vars))
        {
            Some(files) => files.record_written(plan, multigroup)?,
            None => own_controller(checked).record_written(plan, vars, multigroup)?,
        }
    }
    Ok(())
}

/// The variables of an external kind's types, when the kind is one.
fn external_vars(checked: &Checked, request: &Request, vars: &ApiVars) -> Option<ExternalVars> {
    let external = checked.external.as_ref()?;
    let path = request.external.as_ref().map_or("", |e| e.path.as_str());
    Some(ExternalVars::new(
        vars.project.clone(),
        (&checked.group, &checked.version, &checked.kind),
        external,
        path,
    ))
}

/// The variables of a group's module file.
fn group_vars(vars: &ApiVars, group_module: &str) -> GroupVars {
    GroupVars {
        project: vars.project.clone(),
        group_module: group_module.to_string(),
        qualified_group: vars.kind.qualified_group.clone(),
    }
}

#[cfg(test)]
pub(crate) fn tables() -> Vec<&'static dyn crate::scaffold::table::Checked> {
    vec![
        &TYPES,
        &RESOURCE,
        &CONTROLLER,
        &READER_CONTROLLER,
        &CONTROLLER_LINES,
    ]
}
