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

//! The `manager` binary: the webserver-operator operator as it runs in the cluster (or locally with
//! `make run`, against the cluster of your current kubeconfig context).
//!
//! The manager itself (flags, logging, health probes, metrics, leader election, the webhook
//! server, graceful shutdown) is the `operator-rs-runtime` crate; `docs/runtime.md` of operator-rs
//! describes it. This file says what it runs.

use std::process::ExitCode;

use operator_rs_runtime::manager::{Flags, Manager};

/// The Lease that the manager's replicas elect their leader with (`--leader-election-id`):
/// unique to this operator, so that it never shares a Lease with another one.
const LEADER_ELECTION_ID: &str = "e65ad249.example.com";

/// One thread runs everything (`current_thread`): a manager spends its time waiting for the API
/// server, and every thread costs memory (its stack, and an arena of the memory allocator). In
/// the cluster, the CPU limit of config/manager/manager.yaml (500m: half a core) leaves no work
/// for a second one. For a manager that needs more (a limit of several cores, and reconciliations
/// or webhooks that keep a core busy), use `#[tokio::main]`: a worker thread per core.
#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let flags = Flags::parse_with(LEADER_ELECTION_ID);
    Manager::new(flags)
        .controllers(webserver_operator::controller::controllers())
        .webhooks(webserver_operator::webhook::webhooks())
        .storage_migrations(webserver_operator::webhook::storage_migrations())
        .run()
        .await
}
