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

//! Controllers: each one watches one kind and reconciles the cluster towards what its objects ask
//! for.
//!
//! `operator-rs create api` adds one module per controller (`src/controller/<kind>.rs`), and lists it
//! below. Each module holds its `reconcile` function, the RBAC rules it needs and its tests; the
//! runtime's `Runner` does the rest (namespaces, metrics, retries, readiness, shutdown).

use operator_rs_runtime::controller::ControllerSetup;

pub mod web_server;
// +operator-rs:scaffold:controller-modules

/// Every controller of this operator: the manager sets each one up at startup, and `make
/// manifests` grants the manager the RBAC rules of each. Delete a line to stop running that
/// controller.
pub fn controllers() -> Vec<ControllerSetup> {
    vec![
        web_server::CONTROLLER,
        // +operator-rs:scaffold:controllers
    ]
}
