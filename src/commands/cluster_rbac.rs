//! The ClusterRole of a namespaced project's controllers of cluster-scoped kinds. Such a
//! controller watches its kind across the cluster, which the project's Role (in the manager's
//! namespace) cannot grant: its rules (`RbacScope::Cluster` in its `CONTROLLER`) go to
//! `manager-cluster-role`, which `make manifests` writes to `config/rbac/cluster_role.yaml`, and
//! `config/rbac/cluster_role_binding.yaml` binds to the manager. The storage migrations of the
//! kinds with a conversion webhook need it too (they read the kind's CRD). `create api` adds the
//! two files with the first such controller, `create webhook --conversion` with the first
//! conversion; `edit --namespaced` adds or removes them.

use std::path::Path;

use crate::scaffold::Plan;
use crate::scaffold::table::{Table, shared_file};
use crate::vars::ProjectVars;
use anyhow::{Result, bail};

static FILES: Table<ProjectVars> = Table::new(
    &[
        shared_file("cluster-rbac/config/rbac/cluster_role.yaml"),
        shared_file("cluster-rbac/config/rbac/cluster_role_binding.yaml"),
    ],
    &[],
);

const KUSTOMIZATION: &str = "config/rbac/kustomization.yaml";

/// Where the lines go: after the binding of the project's role.
const ANCHOR: &str = "- role_binding.yaml\n";

const LINES: &str = "# The ClusterRole of the controllers of cluster-scoped kinds (`make manifests`).\n\
                     - cluster_role.yaml\n- cluster_role_binding.yaml\n";

/// Plans the ClusterRole's files and lists them in `config/rbac/kustomization.yaml` (once).
pub(crate) fn add(plan: &mut Plan, vars: &ProjectVars) -> Result<()> {
    FILES.render(plan, vars, false)?;
    plan.edit(KUSTOMIZATION, |text| {
        if text.contains(LINES) {
            return Ok(text.to_string());
        }
        let Some(at) = text.find(ANCHOR) else {
            bail!(
                "{KUSTOMIZATION} does not list role_binding.yaml: add `- cluster_role.yaml` and \
                 `- cluster_role_binding.yaml` to its resources by hand"
            );
        };
        let at = at + ANCHOR.len();
        Ok(format!("{}{LINES}{}", &text[..at], &text[at..]))
    })
}

/// Plans removing what [`add`] added (a project that is no longer namespaced has one
/// ClusterRole for all rules).
pub(crate) fn remove(plan: &mut Plan) -> Result<()> {
    for path in [
        "config/rbac/cluster_role.yaml",
        "config/rbac/cluster_role_binding.yaml",
    ] {
        if plan.root().join(path).exists() {
            plan.delete(path)?;
        }
    }
    plan.edit(KUSTOMIZATION, |text| Ok(text.replacen(LINES, "", 1)))
}

/// The note `create api` prints.
pub(crate) fn note(kind: &str) -> String {
    format!(
        "note: {kind} is cluster-scoped: this namespaced project's Role cannot grant its controller's \
         rules, so `make manifests` writes them to the ClusterRole manager-cluster-role \
         (config/rbac/cluster_role.yaml), which grants exactly those"
    )
}

/// Whether a namespaced project needs the ClusterRole: a controller declares cluster-wide rules
/// ([`any_cluster_controller`]), or a kind has a conversion webhook, whose storage migration reads
/// the kind's CRD and rewrites its objects in every namespace.
pub(crate) fn needed(root: &Path, project: &crate::project::Project) -> bool {
    any_cluster_controller(root)
        || project
            .resources
            .iter()
            .any(|r| r.webhooks.as_ref().is_some_and(|w| w.conversion))
}

/// Whether a controller of the project declares cluster-wide rules (`RbacScope::Cluster`): the
/// controllers' code, which the user may have changed, is what `make manifests` renders.
pub(crate) fn any_cluster_controller(root: &Path) -> bool {
    walkdir::WalkDir::new(root.join("src/controller"))
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "rs"))
        .any(|e| {
            std::fs::read_to_string(e.path())
                .is_ok_and(|text| text.contains("rbac_scope: RbacScope::Cluster"))
        })
}

#[cfg(test)]
pub(crate) fn tables() -> Vec<&'static dyn crate::scaffold::table::Checked> {
    vec![&FILES]
}
