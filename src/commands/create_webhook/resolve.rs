//! `create webhook`, step 2: the checked request resolved into the template variables.

use super::validate::Checked;
use crate::vars::{
    ExternalVars, GroupVars, KindVars, ProjectVars, SpokeVars, Target, WebhookVars,
    WebhookVersionVars,
};

/// The variables of the kind's webhooks, with the given paths (or kubebuilder's).
pub fn vars(
    checked: &Checked,
    defaulting_path: Option<&str>,
    validation_path: Option<&str>,
) -> WebhookVars {
    let (group, version, kind) = (&checked.group, &checked.version, &checked.kind);
    let project = &checked.project;
    let target = checked.target();
    let kind_vars = KindVars::new(
        target,
        group,
        version,
        kind,
        &checked.plural,
        &checked.domain(),
    );
    let (webhook_dir, webhook_rel_module, webhook_top_module) = if project.multigroup {
        let group_module = &kind_vars.group_module;
        (
            format!("{group_module}/{}", version.as_str()),
            format!("{group_module}::{}", version.as_str()),
            group_module.clone(),
        )
    } else {
        let version = version.as_str().to_string();
        (version.clone(), version.clone(), version)
    };
    let (api_module, api_namespaced) = match target {
        Target::Builtin(b) => (b.rust_module().to_string(), b.namespaced),
        Target::External(e) => (
            format!("crate::external::{}::{}", e.module, version.as_str()),
            e.crd.namespaced,
        ),
        Target::Own => (
            api_module(project.multigroup, group.module(), version.as_str()),
            // The scope `create api` recorded (`namespaced: true`, or absent for a cluster-scoped
            // kind, as kubebuilder writes it).
            checked
                .existing
                .and_then(|i| project.resources[i].api.as_ref())
                .is_none_or(|api| api.namespaced),
        ),
    };
    let rust_type = match target {
        Target::Builtin(b) => b.rust_type.to_string(),
        Target::Own | Target::External(_) => format!("{api_module}::{}", kind.type_name()),
    };
    let crd_patch_name = if project.multigroup {
        format!("{}_{}", group.as_str(), checked.plural)
    } else {
        checked.plural.clone()
    };
    WebhookVars {
        project: ProjectVars::new(project, &checked.boilerplate),
        defaulting_path: defaulting_path
            .map_or_else(|| checked.default_path("mutate"), str::to_string),
        validation_path: validation_path
            .map_or_else(|| checked.default_path("validate"), str::to_string),
        kind: kind_vars,
        webhook_dir,
        webhook_rel_module,
        webhook_top_module,
        crd_patch_name,
        core: checked.builtin.is_some(),
        external: checked.external.is_some(),
        foreign: !matches!(target, Target::Own),
        api_module,
        rust_type,
        api_namespaced,
        spec: checked.spec,
    }
}

/// The variables of a conversion between the hub and `spoke`.
pub fn spoke(vars: &WebhookVars, checked: &Checked, spoke: &str) -> SpokeVars {
    SpokeVars {
        webhook: vars.clone(),
        spoke: spoke.to_string(),
        spoke_api_module: api_module(checked.project.multigroup, checked.group.module(), spoke),
    }
}

/// The variables of the group's module file.
pub fn group(vars: &WebhookVars) -> GroupVars {
    GroupVars {
        project: vars.project.clone(),
        group_module: vars.kind.group_module.clone(),
        qualified_group: vars.kind.qualified_group.clone(),
    }
}

/// The variables of the version's module file.
pub fn version(vars: &WebhookVars) -> WebhookVersionVars {
    WebhookVersionVars {
        project: vars.project.clone(),
        qualified_group: vars.kind.qualified_group.clone(),
        version: vars.kind.version.clone(),
        webhook_dir: vars.webhook_dir.clone(),
    }
}

/// The variables of an external kind's types, when the kind is one that the project has no
/// types for yet.
pub fn external_types(checked: &Checked, vars: &WebhookVars) -> Option<ExternalVars> {
    let (external, request) = (
        checked.external.as_ref()?,
        checked.external_request.as_ref()?,
    );
    if checked.entry().is_some() {
        return None;
    }
    Some(ExternalVars::new(
        vars.project.clone(),
        (&checked.group, &checked.version, &checked.kind),
        external,
        &request.path,
    ))
}

/// The module of the project's own types of a version of the kind.
fn api_module(multigroup: bool, group_module: String, version: &str) -> String {
    if multigroup {
        format!("crate::api::{group_module}::{version}")
    } else {
        format!("crate::api::{version}")
    }
}
