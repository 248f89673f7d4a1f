//! Sharding: the objects of each controller spread over the manager's replicas, each replica
//! watching, caching and reconciling its share only (`--sharding`; docs/sharding.md has the
//! design, its guarantees and what a user sets).
//!
//! - **Members.** Every replica holds a Lease of its own, [`Sharding::member_lease_name`],
//!   labelled [`RING_LABEL`] with the ring (the manager's `--leader-election-id`) and
//!   [`MEMBER_LABEL`] with its member name, renewed and released like the leader's Lease (the
//!   same code: [`crate::manager::leader::LeaderElector::member`]). A member whose Lease is
//!   released or expires, as the elected replica's clock measures it, leaves the ring.
//! - **Assignment.** Each object is labelled [`SHARD_LABEL`]`=<member>` by consistent hashing of
//!   its namespace and name ([`ring`]). Every member claims the objects without a member in its
//!   view of the ring that the ring gives to it (`claim`); the elected replica (the existing
//!   leader election) drains the objects the ring moves, and labels at its periodic check those
//!   that nobody claimed (`assign`).
//! - **Each member watches its share.** The [`Runner`](crate::controller::Runner) of a member
//!   selects [`SHARD_LABEL`]`=<member>` on the watches of the reconciled kind and of its owned
//!   kinds ([`Sharding::restrict`]); [`Context::apply_owned`](crate::controller::Context) labels
//!   what it applies with the owner's member, so owned objects follow their owner's shard.
//! - **Hand-over.** An object moves from a member whose Lease is valid only through a drain: the
//!   elected replica labels it [`DRAIN_LABEL`]; the member's controller, in the object's own
//!   reconcile slot (so after any reconcile of it in flight), stops working on it and removes
//!   both labels; only then does its new member claim it. An object of a member whose Lease is
//!   released or expired is claimed at once by its new member: a member stops
//!   reconciling when it cannot renew its Lease within the renew deadline, shorter than the
//!   Lease's duration. So no object is ever reconciled by two members at once.

// The ring itself, with the `sharding` feature: the members' view, the hash ring and the
// assignment. A manager built without it refuses `--sharding`; what its controllers check of a
// sharded object (the labels, a drain) is always here.
#[cfg(feature = "sharding")]
pub(crate) mod assign;
#[cfg(feature = "sharding")]
pub(crate) mod claim;
mod drain;
#[cfg(feature = "sharding")]
mod members;
#[cfg(feature = "sharding")]
pub mod ring;

use std::collections::BTreeMap;
use std::sync::Arc;
#[cfg(feature = "sharding")]
use std::sync::{Mutex, PoisonError};
#[cfg(feature = "sharding")]
use std::time::Duration;

#[cfg(feature = "sharding")]
use futures::{FutureExt as _, future::BoxFuture};
#[cfg(feature = "sharding")]
use kube::Client;
use kube::runtime::watcher;
#[cfg(feature = "sharding")]
use tokio::sync::watch;
#[cfg(feature = "sharding")]
use tokio_util::sync::CancellationToken;

#[cfg(feature = "sharding")]
pub(crate) use assign::Assignment;
#[cfg(feature = "sharding")]
pub(crate) use claim::Claim;
#[cfg(feature = "sharding")]
pub(crate) use drain::reconcile_on;
pub(crate) use drain::{acknowledge, is_draining};
#[cfg(feature = "sharding")]
pub use ring::Ring;

#[cfg(feature = "sharding")]
use crate::metrics::ShardMetrics;

/// The label of a sharded object: the name of the member that reconciles it.
pub const SHARD_LABEL: &str = "sharding.operator-rs.io/shard";

/// The label the elected replica puts on an object that is to move to another member; the
/// member acknowledges it by removing both labels once it has stopped working on the object.
pub const DRAIN_LABEL: &str = "sharding.operator-rs.io/drain";

/// The label of a member's Lease: the ring it belongs to (the `--leader-election-id`).
pub const RING_LABEL: &str = "sharding.operator-rs.io/ring";

/// The label of a member's Lease: the member's name, the value of [`SHARD_LABEL`] on its objects.
pub const MEMBER_LABEL: &str = "sharding.operator-rs.io/member";

/// The label of a member's Lease: the newest way of placing objects on the ring that its
/// replica knows ([`ring::Layout`]); the ring takes the oldest of its members'. A Lease without
/// it is a first version's, which knew virtual nodes only.
pub const LAYOUT_LABEL: &str = "sharding.operator-rs.io/layout";

/// What is wrong with a sharding configuration.
#[derive(Debug, thiserror::Error)]
pub enum ShardingError {
    /// The ring's name is a label value on every member's Lease.
    #[error(
        "--leader-election-id {0:?} cannot name a sharding ring: with --sharding it is a label \
         value (at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter \
         or digit)"
    )]
    InvalidRing(String),
    /// The member's Lease name would be longer than Kubernetes allows.
    #[error(
        "the member Lease name {0:?} is longer than 253 characters: use a shorter --leader-election-id"
    )]
    LeaseNameTooLong(String),
}

/// What a replica runs for one sharded controller, registered by its
/// [`Runner`](crate::controller::Runner) at setup and run by [`Sharding::assign`]: the claims of
/// its objects that have no member, from the start, and their assignment, once elected.
#[cfg(feature = "sharding")]
pub(crate) struct Assigner {
    pub(crate) claim: Box<dyn FnOnce(Claim) -> BoxFuture<'static, ()> + Send>,
    pub(crate) assign: Box<dyn FnOnce(Assignment) -> BoxFuture<'static, ()> + Send>,
}

/// This replica's place in the sharding ring, which the manager hands its controllers in
/// [`Shared::sharding`](crate::manager::Shared::sharding). Cloning gives another handle.
#[derive(Clone)]
pub struct Sharding {
    inner: Arc<Inner>,
}

struct Inner {
    ring: String,
    member: String,
    #[cfg(feature = "sharding")]
    assigners: Mutex<Vec<Assigner>>,
}

impl std::fmt::Debug for Sharding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sharding")
            .field("ring", &self.inner.ring)
            .field("member", &self.inner.member)
            .finish_non_exhaustive()
    }
}

/// How a replica times its view of the members' Leases: the manager's leader election
/// timing, which the members' Leases have too.
#[cfg(feature = "sharding")]
#[derive(Clone, Debug)]
pub struct RingTiming {
    /// The namespace of the Leases.
    pub namespace: String,
    /// A Lease's duration when it names none.
    pub lease_duration: Duration,
    /// How often the assignment is checked whole (and failed label writes retried), and how
    /// long a replica waits after listing the members' Leases before its view counts, so that
    /// replicas that start together join before the first assignment.
    pub retry_period: Duration,
}

impl Sharding {
    /// The member `member` (see [`member_name`]) of the ring `ring`.
    pub fn new(ring: impl Into<String>, member: impl Into<String>) -> Result<Self, ShardingError> {
        let (ring, member) = (ring.into(), member.into());
        if !is_label_value(&ring) {
            return Err(ShardingError::InvalidRing(ring));
        }
        let sharding = Sharding {
            inner: Arc::new(Inner {
                ring,
                member,
                #[cfg(feature = "sharding")]
                assigners: Mutex::default(),
            }),
        };
        let lease = sharding.member_lease_name();
        if lease.len() > 253 {
            return Err(ShardingError::LeaseNameTooLong(lease));
        }
        Ok(sharding)
    }

    /// The ring's name: the `--leader-election-id`.
    pub fn ring(&self) -> &str {
        &self.inner.ring
    }

    /// This replica's member name: the value of [`SHARD_LABEL`] on its objects.
    pub fn member(&self) -> &str {
        &self.inner.member
    }

    /// The name of this member's Lease: the ring's, then the member's.
    pub fn member_lease_name(&self) -> String {
        format!("{}-{}", self.inner.ring, self.inner.member)
    }

    /// The labels of this member's Lease, by which the elected replica finds the ring's members.
    pub fn lease_labels(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            (RING_LABEL.to_owned(), self.inner.ring.clone()),
            (MEMBER_LABEL.to_owned(), self.inner.member.clone()),
            #[cfg(feature = "sharding")]
            (
                LAYOUT_LABEL.to_owned(),
                ring::Layout::NEWEST.label().to_owned(),
            ),
        ])
    }

    /// The label selector of this member's objects.
    pub fn selector(&self) -> String {
        format!("{SHARD_LABEL}={}", self.inner.member)
    }

    /// `config` narrowed to this member's objects: its label selector and [`Sharding::selector`].
    pub fn restrict(&self, mut config: watcher::Config) -> watcher::Config {
        let selector = match config.label_selector.take() {
            Some(own) if !own.trim().is_empty() => format!("{own},{}", self.selector()),
            _ => self.selector(),
        };
        config.label_selector = Some(selector);
        config
    }

    /// Adds what a replica runs for a sharded controller.
    #[cfg(feature = "sharding")]
    pub(crate) fn register(&self, assigner: Assigner) {
        let mut assigners = self
            .inner
            .assigners
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        assigners.push(assigner);
    }

    /// What a sharded replica runs until `shutdown`: from the start, its view of the ring from
    /// the members' Leases (see `members`) and the claims of the objects without a member that
    /// the ring gives to it (see `claim`); once `elected`, the assignment of the objects of every
    /// sharded controller to the members. Call it once: it takes the controllers' assigners.
    #[cfg(feature = "sharding")]
    pub fn assign(
        &self,
        client: Client,
        timing: RingTiming,
        metrics: ShardMetrics,
        elected: CancellationToken,
        shutdown: CancellationToken,
    ) -> BoxFuture<'static, ()> {
        let assigners = std::mem::take(
            &mut *self
                .inner
                .assigners
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        let (sender, ring) = watch::channel(None);
        let retry_period = timing.retry_period;
        let view = members::watch(
            kube::Api::namespaced(client, &timing.namespace),
            self.inner.ring.clone(),
            timing,
            sender,
            metrics.clone(),
            elected.clone(),
            shutdown.clone(),
        );
        let (mut claims, mut assignments) = (Vec::new(), Vec::new());
        for Assigner { claim, assign } in assigners {
            claims.push(claim(Claim {
                member: self.inner.member.clone(),
                ring: ring.clone(),
                metrics: metrics.clone(),
                shutdown: shutdown.clone(),
            }));
            assignments.push(assign(Assignment {
                ring: ring.clone(),
                metrics: metrics.clone(),
                retry_period,
                shutdown: shutdown.clone(),
            }));
        }
        let assignments = async move {
            tokio::select! {
                () = shutdown.cancelled() => {}
                () = elected.cancelled() => {
                    futures::future::join_all(assignments).await;
                }
            }
        };
        let claims = futures::future::join_all(claims);
        futures::future::join3(view, claims, assignments)
            .map(|_| ())
            .boxed()
    }
}

/// The member name of the replica `identity` (see [`crate::manager::leader::identity`]): a
/// label value and a part of a Lease name, so lowercase letters, digits and `-`, at most 63
/// characters; a long pod name is shortened in the middle, keeping the identity's random
/// suffix, which tells the pods of a Deployment apart.
pub fn member_name(identity: &str) -> String {
    let cleaned: String = identity
        .chars()
        .map(|c| c.to_ascii_lowercase())
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let cleaned = cleaned.trim_matches('-');
    let name = if cleaned.len() <= 63 {
        cleaned.to_owned()
    } else {
        let head = cleaned[..46].trim_end_matches('-');
        let tail = cleaned[cleaned.len() - 16..].trim_start_matches('-');
        format!("{head}-{tail}")
    };
    if name.is_empty() {
        "member".to_owned()
    } else {
        name
    }
}

/// Whether `value` is a valid label value (and not empty).
fn is_label_value(value: &str) -> bool {
    let bytes = value.as_bytes();
    let allowed = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.');
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes.iter().all(allowed)
        && bytes.first().is_some_and(u8::is_ascii_alphanumeric)
        && bytes.last().is_some_and(u8::is_ascii_alphanumeric)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_names_are_label_values_that_keep_the_random_suffix() {
        assert_eq!(
            member_name("memcached-controller-manager-7d9f8b6c4-x2x9z_0123456789abcdef"),
            "memcached-controller-manager-7d9f8b6c4-x2x9z-0123456789abcdef"
        );
        let long = format!("{}_0123456789abcdef", "a-very-long-pod-name".repeat(5));
        let name = member_name(&long);
        assert!(
            name.len() <= 63 && name.ends_with("-0123456789abcdef"),
            "{name}"
        );
        assert!(is_label_value(&name));
        assert_eq!(member_name("Manager.Local_AB"), "manager-local-ab");
        assert_eq!(member_name("__"), "member");
    }

    #[test]
    fn rings_are_label_values() {
        assert!(Sharding::new("6e1ac2c5.example.com", "m").is_ok());
        let error = Sharding::new("x".repeat(64), "m").unwrap_err();
        assert!(
            error.to_string().contains("--leader-election-id"),
            "{error}"
        );
        assert!(Sharding::new("-lock", "m").is_err());
    }

    #[test]
    fn restricted_watches_select_the_members_objects_too() {
        let sharding = Sharding::new("lock", "a").unwrap();
        let config = sharding.restrict(watcher::Config::default());
        assert_eq!(
            config.label_selector.as_deref(),
            Some("sharding.operator-rs.io/shard=a")
        );
        let own = watcher::Config::default().labels("app=x");
        assert_eq!(
            sharding.restrict(own).label_selector.as_deref(),
            Some("app=x,sharding.operator-rs.io/shard=a")
        );
        assert_eq!(sharding.member_lease_name(), "lock-a");
        assert_eq!(sharding.lease_labels()[MEMBER_LABEL], "a");
        #[cfg(feature = "sharding")]
        assert_eq!(sharding.lease_labels()[LAYOUT_LABEL], "rendezvous");
    }
}
