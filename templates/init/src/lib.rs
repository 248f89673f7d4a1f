{{ rust_header }}//! The `{{ project_name }}` operator, as a library.
//!
//! Two binaries use it: `manager` (`src/main.rs`), the operator that runs in the cluster, and
//! `manifests` (`src/bin/manifests.rs`), which writes the CRDs and RBAC rules under `config/`
//! from this code. Keeping everything in the library lets the tests in `tests/` use it too.
//!
//! - [`api`]: your custom resource types, one module per group/version (`operator-rs create api`).
//! - [`controller`]: the controllers that reconcile them, and the RBAC rules each one needs.
//! - [`manager`]: the process that runs the controllers: flags, logging, health probes, shutdown.
//! - [`manifests`]: renders the Kubernetes manifests that are derived from the code.
//! - `webhook` (once `operator-rs create webhook` adds it): defaulting, validating and conversion
//!   webhooks, served by the manager.

pub mod api;
pub mod controller;
pub mod manager;
pub mod manifests;
// `operator-rs create webhook` adds `pub mod webhook;` here.
// +operator-rs:scaffold:lib-modules
