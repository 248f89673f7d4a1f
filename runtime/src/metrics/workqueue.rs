//! controller-runtime's `workqueue_*` metrics, for the queues of kube-runtime's controllers.
//!
//! kube-runtime's controller has no workqueue to instrument: its scheduler takes the triggers of
//! the watches (deduplicated per object, the earliest time winning, never the same object twice
//! at once), and its runner calls `reconcile`. So the [`Runner`](crate::controller::Runner) tells
//! a [`WorkQueueMetrics`] what client-go's workqueue would have counted: every trigger that makes
//! an object due ([`WorkQueueMetrics::added`]: `Add`, counted once until the object is picked
//! up), the start and end of each reconciliation (`Get` and `Done`), and the requeues after a
//! delay ([`WorkQueueMetrics::finished`]: `AddAfter`, `AddRateLimited`). The depth, the
//! unfinished work and the longest running reconciliation are read from that state on every
//! scrape.
//!
//! One difference: kube's scheduler does not say when a requeue's delay ends, so such an object
//! counts as added, and its time in the queue as 0, when its reconciliation starts (in
//! client-go, when the delay ends: the same moment unless every worker is busy).

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric as _};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// The buckets of `workqueue_queue_duration_seconds` and `workqueue_work_duration_seconds`:
/// controller-runtime's `prometheus.ExponentialBuckets(10e-9, 10, 12)`, 10 ns to 1000 s.
const DURATION_BUCKETS: [f64; 12] = [
    1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0, 1000.0,
];

/// The labels of every workqueue metric: controller-runtime names each controller's queue after
/// the controller.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QueueLabels {
    name: String,
    controller: String,
}

/// The labels of `workqueue_depth`, which also has a `priority` (empty: controller-runtime's
/// queues without priorities).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DepthLabels {
    name: String,
    controller: String,
    priority: &'static str,
}

fn duration_histogram() -> Histogram {
    Histogram::new(DURATION_BUCKETS)
}

/// The workqueue families of a registry, and the queues its collector reads on scrapes.
#[derive(Clone, Debug)]
pub(super) struct Families {
    adds: Family<QueueLabels, Counter>,
    retries: Family<QueueLabels, Counter>,
    queue_duration: Family<QueueLabels, Histogram, fn() -> Histogram>,
    work_duration: Family<QueueLabels, Histogram, fn() -> Histogram>,
    queues: Queues,
}

/// Every queue of the registry, with its labels.
type Queues = Arc<Mutex<Vec<(QueueLabels, Arc<Mutex<State>>)>>>;

impl Families {
    /// The families, registered in `registry` (counters get their `_total` from the encoder).
    pub(super) fn register(registry: &mut Registry) -> Self {
        let families = Families {
            adds: Family::default(),
            retries: Family::default(),
            queue_duration: Family::new_with_constructor(duration_histogram),
            work_duration: Family::new_with_constructor(duration_histogram),
            queues: Queues::default(),
        };
        registry.register(
            "workqueue_adds",
            "Total number of adds handled by workqueue",
            families.adds.clone(),
        );
        registry.register(
            "workqueue_retries",
            "Total number of items added to the workqueue with a non-zero delay (rate-limited \
             requeues, explicit RequeueAfter or AddAfter calls)",
            families.retries.clone(),
        );
        registry.register(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested",
            families.queue_duration.clone(),
        );
        registry.register(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes.",
            families.work_duration.clone(),
        );
        registry.register_collector(Box::new(StateCollector {
            queues: Arc::clone(&families.queues),
        }));
        families
    }

    /// The metrics of the queue of the controller `name`; its series start at 0.
    pub(super) fn queue(&self, name: &str) -> WorkQueueMetrics {
        let labels = QueueLabels {
            name: name.to_owned(),
            controller: name.to_owned(),
        };
        // `get_or_create` adds the series; the returned guards are released right away.
        drop(self.adds.get_or_create(&labels));
        drop(self.retries.get_or_create(&labels));
        drop(self.queue_duration.get_or_create(&labels));
        drop(self.work_duration.get_or_create(&labels));
        let state = Arc::<Mutex<State>>::default();
        let mut queues = self.queues.lock().unwrap_or_else(PoisonError::into_inner);
        queues.retain(|(known, _)| *known != labels);
        queues.push((labels.clone(), Arc::clone(&state)));
        WorkQueueMetrics {
            labels,
            families: self.clone(),
            state,
        }
    }
}

/// The objects of one queue that are due, and those being reconciled, by key
/// ([`WorkQueueMetrics::key`]), with the time they became so. An entry exists only while an
/// object waits or is reconciled: none once the controller is idle.
#[derive(Debug, Default)]
struct State {
    queued: HashMap<u64, Instant>,
    processing: HashMap<u64, Instant>,
    /// How many reconciliations have ended since the queue was made.
    finished: u64,
}

/// The workqueue metrics of one controller, from
/// [`Metrics::work_queue`](super::Metrics::work_queue). Cheap to clone.
#[derive(Clone, Debug)]
pub struct WorkQueueMetrics {
    labels: QueueLabels,
    families: Families,
    state: Arc<Mutex<State>>,
}

impl WorkQueueMetrics {
    /// The key of the object `name` in `namespace` (`None`: cluster-scoped) for the other
    /// methods: a hash, so that a queue keeps 8 bytes per object it tracks.
    pub fn key(namespace: Option<&str>, name: &str) -> u64 {
        let mut hasher = DefaultHasher::new();
        (namespace, name).hash(&mut hasher);
        hasher.finish()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A trigger made the object due now (a watch event, a retry once the API server is back):
    /// counted unless it waits already.
    pub fn added(&self, key: u64) {
        let mut state = self.lock();
        if state.queued.contains_key(&key) {
            return;
        }
        state.queued.insert(key, Instant::now());
        self.families.adds.get_or_create(&self.labels).inc();
    }

    /// Its reconciliation starts: the time it waited goes to `workqueue_queue_duration_seconds`.
    pub fn started(&self, key: u64) {
        let now = Instant::now();
        let mut state = self.lock();
        let waited = match state.queued.remove(&key) {
            Some(since) => now.duration_since(since).as_secs_f64(),
            // Due after a delay that kube's scheduler kept: see the module's documentation.
            None => {
                self.families.adds.get_or_create(&self.labels).inc();
                0.0
            }
        };
        state.processing.insert(key, now);
        drop(state);
        let queue_duration = self.families.queue_duration.get_or_create(&self.labels);
        queue_duration.observe(waited);
    }

    /// Its reconciliation ended (`requeued`: it comes back after a delay, as `reconcile` asked or
    /// after an error): the time it took goes to `workqueue_work_duration_seconds`.
    pub fn finished(&self, key: u64, requeued: bool) {
        let started = {
            let mut state = self.lock();
            state.finished += 1;
            state.processing.remove(&key)
        };
        if let Some(started) = started {
            let work_duration = self.families.work_duration.get_or_create(&self.labels);
            work_duration.observe(started.elapsed().as_secs_f64());
        }
        if requeued {
            self.families.retries.get_or_create(&self.labels).inc();
        }
    }

    /// How many objects are due and wait for a worker (`workqueue_depth`), and how many
    /// reconciliations have ended since the queue was made: what a sharded member's take-over
    /// of a departed member's objects is paced by.
    #[cfg(feature = "sharding")]
    pub(crate) fn depth_and_finished(&self) -> (usize, u64) {
        let state = self.lock();
        (state.queued.len(), state.finished)
    }

    /// It will not be reconciled: it was deleted before its turn came.
    pub fn forgot(&self, key: u64) {
        let mut state = self.lock();
        if !state.processing.contains_key(&key) {
            state.queued.remove(&key);
        }
    }
}

/// Reads the gauges of every queue on scrapes: `workqueue_depth`,
/// `workqueue_unfinished_work_seconds` and `workqueue_longest_running_processor_seconds`.
#[derive(Debug)]
struct StateCollector {
    queues: Queues,
}

/// Reads one gauge of a queue.
type ReadGauge = fn(&Reading) -> f64;

/// The gauges of one queue, now.
struct Reading {
    depth: usize,
    unfinished_seconds: f64,
    longest_running_seconds: f64,
}

impl State {
    fn read(&self, now: Instant) -> Reading {
        // An object triggered again while it is reconciled waits, but not in the queue yet.
        let waiting_behind_itself = self
            .processing
            .keys()
            .filter(|key| self.queued.contains_key(key))
            .count();
        let running = self
            .processing
            .values()
            .map(|since| now.duration_since(*since));
        let running: Vec<f64> = running.map(|elapsed| elapsed.as_secs_f64()).collect();
        Reading {
            depth: self.queued.len() - waiting_behind_itself,
            unfinished_seconds: running.iter().sum(),
            longest_running_seconds: running.iter().copied().fold(0.0, f64::max),
        }
    }
}

impl Collector for StateCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let now = Instant::now();
        let queues = self.queues.lock().unwrap_or_else(PoisonError::into_inner);
        let readings: Vec<(&QueueLabels, Reading)> = queues
            .iter()
            .map(|(labels, state)| {
                let state = state.lock().unwrap_or_else(PoisonError::into_inner);
                (labels, state.read(now))
            })
            .collect();

        let depth = ConstGauge::new(0_i64);
        let mut family = encoder.encode_descriptor(
            "workqueue_depth",
            "Current depth of workqueue by workqueue and priority",
            None,
            depth.metric_type(),
        )?;
        for (labels, reading) in &readings {
            let labels = DepthLabels {
                name: labels.name.clone(),
                controller: labels.controller.clone(),
                priority: "",
            };
            let depth = i64::try_from(reading.depth).unwrap_or(i64::MAX);
            ConstGauge::new(depth).encode(family.encode_family(&labels)?)?;
        }

        let gauges: [(&str, &str, ReadGauge); 2] = [
            (
                "workqueue_unfinished_work_seconds",
                "How many seconds of work has been done that is in progress and hasn't been \
                 observed by work_duration. Large values indicate stuck threads. One can deduce \
                 the number of stuck threads by observing the rate at which this increases.",
                |reading| reading.unfinished_seconds,
            ),
            (
                "workqueue_longest_running_processor_seconds",
                "How many seconds has the longest running processor for workqueue been running.",
                |reading| reading.longest_running_seconds,
            ),
        ];
        for (name, help, value) in gauges {
            let gauge = ConstGauge::new(0.0);
            let mut family = encoder.encode_descriptor(name, help, None, gauge.metric_type())?;
            for (labels, reading) in &readings {
                ConstGauge::new(value(reading)).encode(family.encode_family(*labels)?)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::Metrics;
    use super::*;

    fn sample(text: &str, series: &str) -> Option<f64> {
        let line = text.lines().find_map(|line| line.strip_prefix(series));
        line.and_then(|value| value.trim().parse().ok())
    }

    /// The queue of one controller through adds, a trigger that comes while the object is
    /// reconciled, and a requeue, as client-go's workqueue counts them.
    #[test]
    fn counts_as_client_go_workqueues_do() {
        let metrics = Metrics::new();
        let queue = metrics.work_queue("captain");
        let (a, b) = (
            WorkQueueMetrics::key(Some("ns"), "a"),
            WorkQueueMetrics::key(Some("ns"), "b"),
        );
        let labels = r#"{name="captain",controller="captain"}"#;
        let depth = r#"workqueue_depth{name="captain",controller="captain",priority=""}"#;
        let text = metrics.encode().unwrap();
        assert_eq!(
            sample(&text, &format!("workqueue_adds_total{labels}")),
            Some(0.0)
        );
        assert_eq!(sample(&text, depth), Some(0.0));

        queue.added(a);
        queue.added(a);
        queue.added(b);
        let text = metrics.encode().unwrap();
        assert_eq!(
            sample(&text, &format!("workqueue_adds_total{labels}")),
            Some(2.0)
        );
        assert_eq!(sample(&text, depth), Some(2.0));

        queue.started(a);
        // Triggered again while reconciled: waits, but behind itself, not in the queue.
        queue.added(a);
        let text = metrics.encode().unwrap();
        assert_eq!(sample(&text, depth), Some(1.0));
        let longest = format!("workqueue_longest_running_processor_seconds{labels}");
        assert!(sample(&text, &longest).is_some_and(|seconds| seconds >= 0.0));
        queue.finished(a, true);
        queue.forgot(b);
        let text = metrics.encode().unwrap();
        assert_eq!(sample(&text, depth), Some(1.0), "a is due again");
        assert_eq!(
            sample(&text, &format!("workqueue_retries_total{labels}")),
            Some(1.0)
        );
        let worked = format!("workqueue_work_duration_seconds_count{labels}");
        assert_eq!(sample(&text, &worked), Some(1.0));
        let waited = format!("workqueue_queue_duration_seconds_count{labels}");
        assert_eq!(sample(&text, &waited), Some(1.0));
        let unfinished = format!("workqueue_unfinished_work_seconds{labels}");
        assert_eq!(sample(&text, &unfinished), Some(0.0));

        // A requeue after a delay starts without a trigger seen: added then, and done.
        queue.started(a);
        queue.finished(a, false);
        let b_again = WorkQueueMetrics::key(Some("ns"), "b");
        queue.started(b_again);
        queue.finished(b_again, false);
        let text = metrics.encode().unwrap();
        assert_eq!(
            sample(&text, &format!("workqueue_adds_total{labels}")),
            Some(4.0)
        );
        assert_eq!(sample(&text, depth), Some(0.0));
        assert!(text.contains("# TYPE workqueue_queue_duration_seconds histogram"));
    }
}
