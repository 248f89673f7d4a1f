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

//! Webhooks: admission webhooks that default and validate objects as the API server admits them,
//! and conversion webhooks that convert custom resources between their versions.
//!
//! `operator-rs create webhook` adds one module per kind with webhooks
//! (`src/webhook/<version>/<kind>/`, one file per webhook) and lists
//! its webhooks below. The manager serves them over HTTPS (not at all while the list is empty),
//! and `make manifests` registers them with the API server in `config/webhook/manifests.yaml`.
//! `make run WEBHOOK_URL=https://<an address of this machine the API server reaches>:9443` serves
//! them to the cluster until the manager exits; `ENABLE_WEBHOOKS=false` runs the manager without.

pub use operator_rs_runtime::migration::StorageMigration;
pub use operator_rs_runtime::webhook::Webhook;

// One module per API version with webhooks; `operator-rs create webhook` adds them.
// +operator-rs:scaffold:webhook-modules

/// Every webhook of this operator.
pub fn webhooks() -> Vec<Webhook> {
    let kinds: Vec<Vec<Webhook>> = vec![
        // +operator-rs:scaffold:webhooks
    ];
    kinds.into_iter().flatten().collect()
}

/// The kinds whose objects the manager rewrites in their storage version when it moves (a
/// conversion's hub becomes the storage version: `operator-rs create webhook --conversion` adds
/// the kind here). The leader does it at startup, then trims the CRD's `status.storedVersions`
/// to the storage version, so that older versions can later be removed from the CRD.
pub fn storage_migrations() -> Vec<StorageMigration> {
    vec![
        // +operator-rs:scaffold:storage-migrations
    ]
}
