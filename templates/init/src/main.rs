{{ rust_header }}//! The `manager` binary: the {{ project_name }} operator as it runs in the cluster (or locally with
//! `make run`, against the cluster of your current kubeconfig context).
//!
//! The manager itself (flags, logging, health probes, metrics, leader election, the webhook
//! server, graceful shutdown) is the `operator-rs-runtime` crate; `docs/runtime.md` of operator-rs
//! describes it. This file says what it runs.

use std::process::ExitCode;

use operator_rs_runtime::manager::{Flags, Manager};

/// The Lease that the manager's replicas elect their leader with (`--leader-election-id`):
/// unique to this operator, so that it never shares a Lease with another one.
const LEADER_ELECTION_ID: &str = "{{ leader_election_id }}";

#[tokio::main]
async fn main() -> ExitCode {
    let flags = Flags::parse_with(LEADER_ELECTION_ID);
    Manager::new(flags)
        .controllers({{ crate_name }}::controller::controllers())
        .webhooks({{ crate_name }}::webhook::webhooks())
        .run()
        .await
}
