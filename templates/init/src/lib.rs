{{ rust_header }}//! The `{{ project_name }}` operator, as a library.
//!
//! Two binaries use it: `manager` (`src/main.rs`), the operator that runs in the cluster, and
//! `manifests` (`src/bin/manifests.rs`), which writes the CRDs, RBAC rules and webhook
//! configurations under `config/` from this code. Keeping everything in the library lets the
//! tests in `tests/` use it too.
//!
//! - [`api`]: your custom resource types, one module per {% if multigroup %}group and {% endif %}version (`operator-rs create api`).
//! - [`controller`]: the controllers that reconcile them, and the RBAC rules each one needs.
//! - [`webhook`]: defaulting, validating and conversion webhooks (`operator-rs create webhook`).

pub mod api;
pub mod controller;
pub mod webhook;
// +operator-rs:scaffold:modules

use operator_rs_runtime::controller::{RbacScope, rbac_rules};
use operator_rs_runtime::manifests::{Manifests, RoleScope};
use operator_rs_runtime::migration;

/// What `make manifests` writes under `config/`: the CRDs of [`api`], the manager's role with
/// the rules of every [`controller`] and storage migration, and the configurations of every
/// [`webhook`].
pub fn manifests() -> Manifests {
    Manifests {
        crds: api::crds(),
        rbac_rules: rbac_rules(&controller::controllers(), RbacScope::Project),
        cluster_rbac_rules: [
            rbac_rules(&controller::controllers(), RbacScope::Cluster),
            // The storage migrations read their kind's CRD and write its objects everywhere.
            migration::rbac_rules(&webhook::storage_migrations()),
        ]
        .concat(),
        webhooks: webhook::webhooks(),
        // {% if namespaced %}A Role in the manager's namespace: the project was created with `--namespaced`.{% else %}A ClusterRole: the manager watches every namespace.{% endif %}
        role_scope: RoleScope::{% if namespaced %}Namespace{% else %}Cluster{% endif %},
    }
}
