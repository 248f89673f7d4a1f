//! `--sharding` in the manager: a decorator of the controllers, and the ring's own runnables.
//!
//! A sharded controller runs on every replica once the replica is a member of the ring, instead
//! of on the leader ([`Membership::decorate`]); besides, every replica holds its membership Lease, and
//! watches the ring, which the elected replica assigns the objects over ([`Membership::tasks`]). The
//! controllers' setup registers what the elected replica assigns, so the ring's runnables are
//! made after it.

use futures::FutureExt as _;
use tokio_util::sync::CancellationToken;

use super::Shared;
use super::leader::{self, LeaderElectionConfig, LeaderElector};
use super::runnables::{Gates, Group, Task};
use crate::sharding::{self, Sharding};

/// A replica's membership of the sharding ring: its place in it, the Lease timing of its
/// membership, and whether it has joined.
pub struct Membership {
    sharding: Sharding,
    config: LeaderElectionConfig,
    /// Cancelled here once this replica is a member of the ring: its controllers start then.
    joined: CancellationToken,
    /// The manager's shutdown, which may come before the replica joins.
    shutdown: CancellationToken,
}

impl Membership {
    /// The ring of `sharding`, whose members hold Leases as the leader's `config` says, in a
    /// manager that stops on `shutdown`.
    pub fn new(
        sharding: Sharding,
        config: LeaderElectionConfig,
        shutdown: CancellationToken,
    ) -> Self {
        Membership {
            sharding,
            config,
            joined: CancellationToken::new(),
            shutdown,
        }
    }

    /// `task`, a controller of the project, run on this replica once it is a member of the
    /// ring rather than on the leader.
    pub fn decorate(&self, task: Task) -> Task {
        if task.group != Group::Leader {
            return task;
        }
        let (joined, shutdown, run) = (self.joined.clone(), self.shutdown.clone(), task.run);
        let run = async move {
            tokio::select! {
                () = shutdown.cancelled() => Ok(()),
                () = joined.cancelled() => run.await,
            }
        };
        Task {
            group: Group::Replica,
            run: run.boxed(),
            ..task
        }
    }

    /// What a sharded replica runs besides its controllers: its membership of the ring (a Lease
    /// of its own, held like the leader's, released once the project's runnables have stopped),
    /// its view of the ring's members from their Leases, and, once it leads, the assignment of
    /// every sharded controller's objects to the members.
    pub fn tasks(&self, shared: &Shared, gates: &Gates) -> Vec<Task> {
        let member_config = LeaderElectionConfig {
            lease_name: self.sharding.member_lease_name(),
            ..self.config.clone()
        };
        let member = LeaderElector::member(
            shared.client.clone(),
            member_config,
            self.sharding.lease_labels(),
        );
        let on_joined = {
            let joined = self.joined.clone();
            move || {
                tracing::info!("joined the sharding ring, starting controllers");
                joined.cancel();
            }
        };
        let stopped = gates.project_stopped.clone().cancelled_owned();
        let membership = leader::run(member, gates.shutdown.clone(), on_joined, stopped)
            .map(|result| result.map_err(anyhow::Error::from));
        let timing = sharding::RingTiming {
            namespace: self.config.namespace.clone(),
            lease_duration: self.config.lease_duration,
            retry_period: self.config.retry_period,
        };
        let assign = self.sharding.assign(
            shared.client.clone(),
            timing,
            shared.metrics.sharding(),
            gates.leading.clone(),
            gates.shutdown.clone(),
        );
        vec![
            Task::new(
                "sharding ring membership",
                Group::Replica,
                membership.boxed(),
            ),
            Task::new(
                "sharding assignment",
                Group::Replica,
                assign.map(|()| Ok(())).boxed(),
            ),
        ]
    }
}
