//! The metrics of a sharding ring ([`crate::sharding`]), recorded by the elected replica, which
//! keeps the ring's assignment: `operator_rs_shard_members` (the members whose Lease is valid),
//! `operator_rs_shard_objects` (the objects of each sharded controller labelled for each member)
//! and `operator_rs_shard_moves_total` (objects taken from one member for another). The other
//! replicas serve none of their series. controller-runtime has no sharding, so these names are
//! operator-rs's own.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RingLabels {
    ring: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ObjectLabels {
    controller: String,
    member: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ControllerLabels {
    controller: String,
}

/// The sharding families of a registry. Cheap to clone.
#[derive(Clone, Debug)]
pub struct ShardMetrics {
    members: Family<RingLabels, Gauge>,
    objects: Family<ObjectLabels, Gauge>,
    moves: Family<ControllerLabels, Counter>,
    /// The members with a series in `objects`, by controller (prometheus-client's families
    /// cannot be iterated), to remove those of departed members.
    known: Arc<Mutex<HashMap<String, Vec<String>>>>,
}

impl ShardMetrics {
    pub(super) fn register(registry: &mut Registry) -> Self {
        let metrics = ShardMetrics {
            members: Family::default(),
            objects: Family::default(),
            moves: Family::default(),
            known: Arc::default(),
        };
        registry.register(
            "operator_rs_shard_members",
            "Members of the sharding ring whose Lease is valid, as the elected replica sees them",
            metrics.members.clone(),
        );
        registry.register(
            "operator_rs_shard_objects",
            "Objects of a sharded controller's kind labelled for each member of the ring",
            metrics.objects.clone(),
        );
        // The encoder appends `_total`.
        registry.register(
            "operator_rs_shard_moves",
            "Objects of a sharded controller's kind moved from one member to another",
            metrics.moves.clone(),
        );
        metrics
    }

    /// Records how many members the ring `ring` has.
    pub fn set_members(&self, ring: &str, count: usize) {
        let labels = RingLabels {
            ring: ring.to_owned(),
        };
        self.members.get_or_create(&labels).set(gauge_value(count));
    }

    /// Records how many objects of the controller `controller` each member holds: `counts` by
    /// member, replacing the series of members that hold none any more.
    pub fn set_objects<'a>(
        &self,
        controller: &str,
        counts: impl IntoIterator<Item = (&'a str, usize)>,
    ) {
        let counts: Vec<(&str, usize)> = counts.into_iter().collect();
        let stale: Vec<ObjectLabels> = {
            let mut stale = Vec::new();
            // A departed member's series goes: a gauge at its last count would lie.
            for member in self.members_with_objects(controller) {
                if !counts.iter().any(|(known, _)| *known == member) {
                    stale.push(ObjectLabels {
                        controller: controller.to_owned(),
                        member,
                    });
                }
            }
            stale
        };
        for labels in stale {
            self.objects.remove(&labels);
        }
        let members = counts
            .iter()
            .map(|(member, _)| (*member).to_owned())
            .collect();
        let mut known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        known.insert(controller.to_owned(), members);
        drop(known);
        for (member, count) in counts {
            let labels = ObjectLabels {
                controller: controller.to_owned(),
                member: member.to_owned(),
            };
            self.objects.get_or_create(&labels).set(gauge_value(count));
        }
        self.moves_of(controller);
    }

    /// Counts one object of `controller` moved to another member.
    pub fn moved(&self, controller: &str) {
        self.moves_of(controller).inc();
    }

    fn moves_of(&self, controller: &str) -> Counter {
        let labels = ControllerLabels {
            controller: controller.to_owned(),
        };
        self.moves.get_or_create(&labels).clone()
    }

    /// The members with a series of `controller` in `operator_rs_shard_objects`.
    fn members_with_objects(&self, controller: &str) -> Vec<String> {
        let known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        known.get(controller).cloned().unwrap_or_default()
    }
}

fn gauge_value(count: usize) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_objects_and_moves() {
        let mut registry = Registry::default();
        let metrics = ShardMetrics::register(&mut registry);
        metrics.set_members("lock", 3);
        metrics.set_objects("memcached", [("a", 10), ("b", 5)]);
        metrics.moved("memcached");
        metrics.set_objects("memcached", [("a", 15)]);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        assert!(
            text.contains("operator_rs_shard_members{ring=\"lock\"} 3"),
            "{text}"
        );
        assert!(
            text.contains("operator_rs_shard_objects{controller=\"memcached\",member=\"a\"} 15"),
            "{text}"
        );
        assert!(!text.contains("member=\"b\""), "b left: {text}");
        assert!(
            text.contains("operator_rs_shard_moves_total{controller=\"memcached\"} 1"),
            "{text}"
        );
    }
}
