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

//! API version `web.example.com/v1`: one module per kind, each with its `<Kind>`,
//! `<Kind>Spec` and `<Kind>Status` types re-exported here, so that for instance
//! `crate::api::v1::WebServer` names a kind of this version.
//!
//! `operator-rs create api` adds the lines below for every new kind of this version.

pub mod web_server;
pub use web_server::{WebServer, WebServerSpec, WebServerStatus};
// +operator-rs:scaffold:kind-modules
