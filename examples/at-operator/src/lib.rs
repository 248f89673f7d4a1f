// Copyright 2026 The operator-rs authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//! The `at-operator` operator, as a library.
//!
//! Two binaries use it: `manager` (`src/main.rs`), the operator that runs in the cluster, and
//! `manifests` (`src/bin/manifests.rs`), which writes the CRDs, RBAC rules and webhook
//! configurations under `config/` from this code. Keeping everything in the library lets the
//! tests in `tests/` use it too.
//!
//! - [`api`]: your custom resource types, one module per version (`operator-rs create api`).
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
        // A ClusterRole: the manager watches every namespace.
        role_scope: RoleScope::Cluster,
    }
}
