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

//! Custom resource types served by this operator.
//!
//! `operator-rs create api` adds one module per API version here, with
//! one module per kind inside (`src/api/<version>/<kind>.rs`). Each kind
//! is a Rust struct with `#[derive(CustomResource)]`; the CRD that Kubernetes needs is generated from it
//! by `make manifests`, so the Rust type is the single source of truth for the schema. (`make
//! manifests` refuses schemas that the API server would not accept as structural.)

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
// `crd()` below comes from this trait. It stays unused until the first `create api`.
#[allow(unused_imports)]
use kube::CustomResourceExt;

pub mod v1;
// +operator-rs:scaffold:api-modules

/// Every CustomResourceDefinition this operator owns, one entry per kind and version.
///
/// `make manifests` writes them to `config/crd/bases/`. Several versions of the same kind are merged
/// into one CRD; the version whose derive keeps the default `storage = true` becomes the storage
/// version, so exactly one version of each kind may do so (mark the others `#[kube(storage = false)]`).
/// `operator-rs create api` adds entries here; remove an entry to stop publishing that version.
pub fn crds() -> Vec<CustomResourceDefinition> {
    vec![
        v1::WebServer::crd(),
        // +operator-rs:scaffold:crds
    ]
}
