//! Leader election as a runnable of every replica ([`super::leader`] holds the Lease protocol):
//! once this replica holds the Lease, the [`Group::Leader`](super::runnables::Group) runnables
//! start; the Lease is released once the project's runnables have stopped.

use futures::FutureExt as _;

use super::Shared;
use super::leader::{self, LeaderElectionConfig, LeaderElector};
use super::runnables::{Gates, Group, Task};

/// The leader election of `config`. Standbys are ready (they only wait for leadership, as in
/// controller-runtime); a sharded replica runs its controllers before it leads, and its readiness
/// is theirs.
pub fn task(config: LeaderElectionConfig, shared: &Shared, gates: &Gates) -> Task {
    let sharded = shared.sharding.is_some();
    shared.readiness.set_standby(!sharded);
    // `leader_election_master_status`: 0 until elected, and again once the Lease is released or
    // lost.
    let leading = shared.metrics.leader_election(&config.lease_name);
    let client = shared.client.clone();
    let elector = LeaderElector::new(client.clone(), config).with_events(client);
    let on_elected = {
        let (elected, readiness, leading) = (
            gates.leading.clone(),
            shared.readiness.clone(),
            leading.clone(),
        );
        move || {
            if sharded {
                tracing::info!("became the leader, assigning objects to members");
            } else {
                tracing::info!("became the leader, starting controllers");
            }
            readiness.set_standby(false);
            leading.set_leading(true);
            elected.cancel();
        }
    };
    let stopped = gates.project_stopped.clone().cancelled_owned();
    let run =
        leader::run(elector, gates.shutdown.clone(), on_elected, stopped).map(move |result| {
            leading.set_leading(false);
            result.map_err(anyhow::Error::from)
        });
    Task::new("leader election", Group::Replica, run.boxed())
}
