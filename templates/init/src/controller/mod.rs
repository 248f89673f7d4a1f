{{ rust_header }}//! Controllers: each one watches one kind and reconciles the cluster towards what its objects ask
//! for.
//!
//! `operator-rs create api` adds one module per controller{% if multigroup %}, grouped by API group
//! (`src/controller/<group>/<kind>.rs`){% else %} (`src/controller/<kind>.rs`){% endif %}, and lists it
//! below. Each module holds its `reconcile` function, the RBAC rules it needs and its tests; the
//! runtime's `Runner` does the rest (namespaces, metrics, retries, readiness, shutdown).

use operator_rs_runtime::controller::ControllerSetup;

// +operator-rs:scaffold:controller-modules

/// Every controller of this operator: the manager sets each one up at startup, and `make
/// manifests` grants the manager the RBAC rules of each. Delete a line to stop running that
/// controller.
pub fn controllers() -> Vec<ControllerSetup> {
    vec![
        // +operator-rs:scaffold:controllers
    ]
}
