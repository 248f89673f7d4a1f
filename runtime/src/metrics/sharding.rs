//! The metrics of a sharding ring ([`crate::sharding`]): `operator_rs_shard_members` (the members
//! whose Lease is valid) from the elected replica, which keeps the ring's assignment;
//! `operator_rs_shard_objects` (the objects of each sharded controller labelled for a member)
//! from each member, for itself, counted in its cache at each scrape; and
//! `operator_rs_shard_moves_total` (objects taken from one member for another) from whoever moved
//! them: the elected replica's drains and assignments, the members' claims of a departed
//! member's objects. controller-runtime has no sharding, so these names are operator-rs's own.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric as _};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RingLabels {
    ring: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, PartialOrd, Ord, EncodeLabelSet)]
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
    objects: Arc<CachedObjects>,
    moves: Family<ControllerLabels, Counter>,
}

impl ShardMetrics {
    pub(super) fn register(registry: &mut Registry) -> Self {
        let metrics = ShardMetrics {
            members: Family::default(),
            objects: Arc::default(),
            moves: Family::default(),
        };
        registry.register(
            "operator_rs_shard_members",
            "Members of the sharding ring whose Lease is valid, as the elected replica sees them",
            metrics.members.clone(),
        );
        registry.register_collector(Box::new(Arc::clone(&metrics.objects)));
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

    /// Counts, at each scrape, the objects of the controller `controller` labelled for `member`
    /// (this replica) that `count` finds: the size of one of the controller's caches, which
    /// hold this member's objects only. A controller with a cache per watched namespace adds
    /// each.
    pub fn count_objects(
        &self,
        controller: &str,
        member: &str,
        count: impl Fn() -> usize + Send + Sync + 'static,
    ) {
        let labels = ObjectLabels {
            controller: controller.to_owned(),
            member: member.to_owned(),
        };
        let mut counts = (self.objects.counts.lock()).unwrap_or_else(PoisonError::into_inner);
        counts.entry(labels).or_default().push(Box::new(count));
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
}

/// The counts behind `operator_rs_shard_objects`, read at each scrape (a collector: the caches
/// know their sizes, and nothing needs to be recorded as objects come and go).
#[derive(Default)]
struct CachedObjects {
    counts: Mutex<BTreeMap<ObjectLabels, Vec<CacheSize>>>,
}

/// The size of one cache, read at the scrape.
type CacheSize = Box<dyn Fn() -> usize + Send + Sync>;

impl std::fmt::Debug for CachedObjects {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedObjects").finish_non_exhaustive()
    }
}

impl Collector for CachedObjects {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let counts = (self.counts.lock()).unwrap_or_else(PoisonError::into_inner);
        let mut family = encoder.encode_descriptor(
            "operator_rs_shard_objects",
            "Objects of a sharded controller's kind labelled for this member of the ring, in its cache",
            None,
            MetricType::Gauge,
        )?;
        for (labels, caches) in counts.iter() {
            let total = caches.iter().map(|count| count()).sum();
            ConstGauge::new(gauge_value(total)).encode(family.encode_family(labels)?)?;
        }
        Ok(())
    }
}

fn gauge_value(count: usize) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use super::*;

    #[test]
    fn members_objects_and_moves() {
        let mut registry = Registry::default();
        let metrics = ShardMetrics::register(&mut registry);
        metrics.set_members("lock", 3);
        let cached = Arc::new(std::sync::atomic::AtomicUsize::new(10));
        let count = Arc::clone(&cached);
        metrics.count_objects("memcached", "a", move || count.load(Ordering::Relaxed));
        metrics.count_objects("memcached", "a", || 2);
        metrics.moved("memcached");
        let encode = || {
            let mut text = String::new();
            prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
            text
        };
        let text = encode();
        assert!(
            text.contains("operator_rs_shard_members{ring=\"lock\"} 3"),
            "{text}"
        );
        let objects = |count: usize| {
            format!("operator_rs_shard_objects{{controller=\"memcached\",member=\"a\"}} {count}")
        };
        assert!(text.contains(&objects(12)), "both caches: {text}");
        assert!(
            text.contains("operator_rs_shard_moves_total{controller=\"memcached\"} 1"),
            "{text}"
        );
        cached.store(15, Ordering::Relaxed);
        assert!(encode().contains(&objects(17)), "counted at the scrape");
    }
}
