//! Prometheus metrics, named like controller-runtime's so that existing dashboards and alerts for
//! Go operators work unchanged. One registry per manager ([`Metrics`]), which `/metrics` serves:
//!
//! | metric | type | labels | recorded by |
//! |---|---|---|---|
//! | `controller_runtime_reconcile_total` | counter | `controller`, `result` (`success`, `error`, `requeue`, `requeue_after`) | the `Runner` |
//! | `controller_runtime_reconcile_errors_total` | counter | `controller` | the `Runner` |
//! | `controller_runtime_reconcile_time_seconds` | histogram | `controller` | the `Runner` |
//! | `controller_runtime_max_concurrent_reconciles` | gauge | `controller` | the `Runner` |
//! | `controller_runtime_active_workers` | gauge | `controller` | the `Runner` |
//! | `workqueue_adds_total`, `workqueue_retries_total` | counter | `name`, `controller` | the `Runner` ([`workqueue`]) |
//! | `workqueue_depth` | gauge | `name`, `controller`, `priority` | the `Runner` |
//! | `workqueue_queue_duration_seconds`, `workqueue_work_duration_seconds` | histogram | `name`, `controller` | the `Runner` |
//! | `workqueue_unfinished_work_seconds`, `workqueue_longest_running_processor_seconds` | gauge | `name`, `controller` | the `Runner` |
//! | `rest_client_requests_total` | counter | `code`, `method`, `host` | the manager's client ([`RequestCounter`]) |
//! | `leader_election_master_status` | gauge | `name` (the Lease) | the manager, with `--leader-elect` |
//! | `operator_rs_shard_members` | gauge | `ring` | the elected replica, with `--sharding` ([`sharding`]) |
//! | `operator_rs_shard_objects` | gauge | `controller`, `member` | each member, for itself, with `--sharding` |
//! | `operator_rs_shard_moves_total` | counter | `controller` | the elected replica and the members' claims, with `--sharding` |
//! | `controller_runtime_webhook_requests_total` | counter | `webhook` (the path), `code` | the webhook server |
//! | `controller_runtime_webhook_requests_in_flight` | gauge | `webhook` | the webhook server |
//! | `controller_runtime_webhook_latency_seconds` | histogram | `webhook` | the webhook server |
//! | `storage_migrator_core_migrator_migrated_objects_total` | counter | `resource` (the CRD) | storage version migrations ([`crate::migration`]) |
//! | `storage_migrator_core_migrator_remaining_objects` | gauge | `resource` | storage version migrations |
//! | `storage_migrator_core_migrator_migrations_total` | counter | `resource`, `status` (`Succeeded`, `Failed`) | storage version migrations |
//! | `process_cpu_seconds_total`, `process_resident_memory_bytes`, `process_open_fds`, ... | | | (Linux only) |
//!
//! Names, labels and histogram buckets are controller-runtime's (its `pkg/internal/controller/metrics`,
//! `pkg/metrics` and `pkg/webhook/internal/metrics`), and those of storage migrations
//! kube-storage-version-migrator's (`pkg/migrator/metrics`). Register your own metrics with
//! [`Metrics::register`], as `metrics.Registry.MustRegister` in Go:
//!
//! ```
//! use operator_rs_runtime::metrics::Metrics;
//! use operator_rs_runtime::prometheus_client::metrics::counter::Counter;
//!
//! let metrics = Metrics::new(); // in a controller's `setup`: `shared.metrics`
//! let backups = Counter::<u64>::default();
//! metrics.register("memcached_backups", "Backups taken of Memcached data", backups.clone());
//! backups.inc(); // keep a clone in the controller's state, and count
//! assert!(metrics.encode().unwrap().contains("memcached_backups_total 1"));
//! ```
//!
//! [`server`] serves the registry on `/metrics`.

mod auth;
mod process;
mod rest_client;
pub mod self_signed;
pub mod server;
pub mod sharding;
mod storage_migration;
mod webhook;
pub mod workqueue;

use std::fmt;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Instant;

use kube::runtime::controller::Action;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Metric, Registry};

pub use auth::{AuthError, Authorizer};
pub use rest_client::{Counted, RequestCounter};
pub use sharding::ShardMetrics;
pub use storage_migration::{ResourceMigrationMetrics, StorageMigrationMetrics};
pub use webhook::{WebhookMetrics, WebhookRequest};
pub use workqueue::WorkQueueMetrics;

/// The `Content-Type` of [`Metrics::encode`]'s output (OpenMetrics text, which Prometheus reads).
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The buckets of `controller_runtime_reconcile_time_seconds`, the same as controller-runtime's, so
/// that histogram quantiles from Go and Rust operators compare.
const RECONCILE_TIME_BUCKETS: [f64; 40] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9,
    1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0,
    25.0, 30.0, 40.0, 50.0, 60.0,
];

/// How a reconcile ended, as the `result` label of `controller_runtime_reconcile_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReconcileResult {
    /// Done; wait for the next change (`Action::await_change()`).
    Success,
    /// The reconcile returned an error.
    Error,
    /// Requeued at once. kube-runtime has no such action (every requeue has a delay), so this stays
    /// 0; it exists so that queries written for controller-runtime find every label value.
    Requeue,
    /// Requeued after a delay (`Action::requeue(duration)`).
    RequeueAfter,
}

impl ReconcileResult {
    const ALL: [ReconcileResult; 4] = [
        ReconcileResult::Success,
        ReconcileResult::Error,
        ReconcileResult::Requeue,
        ReconcileResult::RequeueAfter,
    ];

    /// Classifies the outcome of a kube-runtime reconcile function.
    pub fn of<E>(result: &Result<Action, E>) -> Self {
        match result {
            Err(_) => ReconcileResult::Error,
            Ok(action) if *action == Action::await_change() => ReconcileResult::Success,
            Ok(_) => ReconcileResult::RequeueAfter,
        }
    }

    fn label(self) -> &'static str {
        match self {
            ReconcileResult::Success => "success",
            ReconcileResult::Error => "error",
            ReconcileResult::Requeue => "requeue",
            ReconcileResult::RequeueAfter => "requeue_after",
        }
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ControllerLabels {
    controller: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    controller: String,
    result: &'static str,
}

/// The reconcile metric families shared by every controller.
#[derive(Debug)]
struct Families {
    reconcile_total: Family<ResultLabels, Counter>,
    reconcile_errors: Family<ControllerLabels, Counter>,
    reconcile_time: Family<ControllerLabels, Histogram, fn() -> Histogram>,
    max_concurrent_reconciles: Family<ControllerLabels, Gauge>,
    active_workers: Family<ControllerLabels, Gauge>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LeaseLabels {
    name: String,
}

fn reconcile_time_histogram() -> Histogram {
    Histogram::new(RECONCILE_TIME_BUCKETS)
}

/// The operator's metrics registry. Cloning gives another handle to the same registry.
#[derive(Clone)]
pub struct Metrics {
    registry: Arc<RwLock<Registry>>,
    families: Arc<Families>,
    work_queues: workqueue::Families,
    rest_client: rest_client::Requests,
    leader_election: Family<LeaseLabels, Gauge>,
    sharding: ShardMetrics,
    webhooks: WebhookMetrics,
    storage_migrations: StorageMigrationMetrics,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl fmt::Debug for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Metrics {
    /// A registry with the controller-runtime metric families and, on Linux, the process metrics.
    pub fn new() -> Self {
        let mut registry = Registry::default();
        let families = Families {
            reconcile_total: Family::default(),
            reconcile_errors: Family::default(),
            reconcile_time: Family::new_with_constructor(reconcile_time_histogram),
            max_concurrent_reconciles: Family::default(),
            active_workers: Family::default(),
        };
        // Counters get their `_total` suffix from the encoder.
        registry.register(
            "controller_runtime_reconcile",
            "Total number of reconciliations per controller",
            families.reconcile_total.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_errors",
            "Total number of reconciliation errors per controller",
            families.reconcile_errors.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            families.reconcile_time.clone(),
        );
        registry.register(
            "controller_runtime_max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller",
            families.max_concurrent_reconciles.clone(),
        );
        registry.register(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller",
            families.active_workers.clone(),
        );
        let work_queues = workqueue::Families::register(&mut registry);
        let rest_client = rest_client::Requests::register(&mut registry);
        let leader_election = Family::<LeaseLabels, Gauge>::default();
        registry.register(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, \
             1 indicates master. 'name' is the string used to identify the lease. Please make sure \
             to group by name.",
            leader_election.clone(),
        );
        let sharding = ShardMetrics::register(&mut registry);
        let webhooks = WebhookMetrics::register(&mut registry);
        let storage_migrations = StorageMigrationMetrics::register(&mut registry);
        registry.register_collector(Box::new(process::ProcessCollector));
        Metrics {
            registry: Arc::new(RwLock::new(registry)),
            families: Arc::new(families),
            work_queues,
            rest_client,
            leader_election,
            sharding,
            webhooks,
            storage_migrations,
        }
    }

    /// Registers a metric of your own (controller-runtime's `metrics.Registry.MustRegister`), e.g.
    /// a `Counter` or a `Family` of `prometheus_client` that you keep a clone of in your
    /// controller's state: `/metrics` serves it from then on. Names follow Prometheus
    /// conventions; counters get `_total` appended. See the [module](self) for an example.
    pub fn register(&self, name: &str, help: &str, metric: impl Metric) {
        self.registry
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .register(name, help, metric);
    }

    /// The metrics handle of one controller; `name` becomes the `controller` label (use the same name
    /// as for readiness, e.g. the lowercase kind). Records `max_concurrent_reconciles` and sets every
    /// counter of the controller to 0 so that `rate()` works from the first scrape.
    pub fn controller(&self, name: &str, max_concurrent_reconciles: u16) -> ControllerMetrics {
        let labels = ControllerLabels {
            controller: name.to_owned(),
        };
        let families = &self.families;
        // `get_or_create` adds the series; the returned read guards are released right away.
        for result in ReconcileResult::ALL {
            drop(
                families
                    .reconcile_total
                    .get_or_create(&result_labels(&labels, result)),
            );
        }
        drop(families.reconcile_errors.get_or_create(&labels));
        drop(families.reconcile_time.get_or_create(&labels));
        families.active_workers.get_or_create(&labels).set(0);
        families
            .max_concurrent_reconciles
            .get_or_create(&labels)
            .set(i64::from(max_concurrent_reconciles));
        ControllerMetrics {
            labels,
            families: Arc::clone(&self.families),
        }
    }

    /// The `workqueue_*` metrics of the controller `name` (the same name as for
    /// [`Metrics::controller`]); see [`workqueue`].
    pub fn work_queue(&self, name: &str) -> WorkQueueMetrics {
        self.work_queues.queue(name)
    }

    /// A tower layer that counts the requests of a client of the API server at `host` (e.g.
    /// `10.96.0.1:443`) in `rest_client_requests_total`.
    pub fn rest_client(&self, host: &str) -> RequestCounter {
        self.rest_client.counter(host)
    }

    /// `leader_election_master_status` for the Lease `name`: 0 (a standby) until
    /// [`LeaderStatus::set_leading`] says otherwise.
    pub fn leader_election(&self, name: &str) -> LeaderStatus {
        let labels = LeaseLabels {
            name: name.to_owned(),
        };
        let gauge = self.leader_election.get_or_create(&labels).clone();
        gauge.set(0);
        LeaderStatus(gauge)
    }

    /// The sharding ring's metrics, which the elected replica records with `--sharding`.
    pub fn sharding(&self) -> ShardMetrics {
        self.sharding.clone()
    }

    /// The webhook server's metrics.
    pub fn webhooks(&self) -> WebhookMetrics {
        self.webhooks.clone()
    }

    /// The metrics of storage version migrations.
    pub fn storage_migrations(&self) -> StorageMigrationMetrics {
        self.storage_migrations.clone()
    }

    /// All metrics in the OpenMetrics text format (served with [`CONTENT_TYPE`]).
    pub fn encode(&self) -> Result<String, fmt::Error> {
        let mut text = String::new();
        let registry = self.registry.read().unwrap_or_else(PoisonError::into_inner);
        prometheus_client::encoding::text::encode(&mut text, &registry)?;
        Ok(text)
    }
}

fn result_labels(labels: &ControllerLabels, result: ReconcileResult) -> ResultLabels {
    ResultLabels {
        controller: labels.controller.clone(),
        result: result.label(),
    }
}

/// The metrics of one controller, from [`Metrics::controller`]. Cheap to clone; keep it in the
/// controller's context.
#[derive(Clone, Debug)]
pub struct ControllerMetrics {
    labels: ControllerLabels,
    families: Arc<Families>,
}

impl ControllerMetrics {
    /// Runs one reconcile and records it: active workers while it runs, then its duration, result
    /// and error. Wrap your reconcile function's body with it:
    ///
    /// ```ignore
    /// async fn reconcile(object: Arc<Captain>, ctx: Arc<Context>) -> Result<Action, Error> {
    ///     ctx.metrics.measure(apply(object, &ctx)).await
    /// }
    /// ```
    pub async fn measure<E>(
        &self,
        reconcile: impl Future<Output = Result<Action, E>>,
    ) -> Result<Action, E> {
        let timer = self.reconcile_started();
        let result = reconcile.await;
        timer.finish(ReconcileResult::of(&result));
        result
    }

    /// Records the start of a reconcile, for when [`Self::measure`] does not fit. The returned timer
    /// records the duration when it is dropped, and the result when [`ReconcileTimer::finish`] is
    /// called (a reconcile cancelled during shutdown has no result).
    pub fn reconcile_started(&self) -> ReconcileTimer {
        self.families
            .active_workers
            .get_or_create(&self.labels)
            .inc();
        ReconcileTimer {
            metrics: self.clone(),
            started: Instant::now(),
        }
    }

    /// Counts one reconcile with `result` (and an error when it is [`ReconcileResult::Error`]).
    pub fn record_result(&self, result: ReconcileResult) {
        self.families
            .reconcile_total
            .get_or_create(&result_labels(&self.labels, result))
            .inc();
        if result == ReconcileResult::Error {
            self.families
                .reconcile_errors
                .get_or_create(&self.labels)
                .inc();
        }
    }
}

/// `leader_election_master_status` of one Lease, from [`Metrics::leader_election`].
#[derive(Clone, Debug)]
pub struct LeaderStatus(Gauge);

impl LeaderStatus {
    /// Whether this replica leads now.
    pub fn set_leading(&self, leading: bool) {
        self.0.set(i64::from(leading));
    }
}

/// A reconcile in progress; see [`ControllerMetrics::reconcile_started`].
#[derive(Debug)]
#[must_use = "dropping the timer right away records a reconcile that took no time"]
pub struct ReconcileTimer {
    metrics: ControllerMetrics,
    started: Instant,
}

impl ReconcileTimer {
    /// Records how the reconcile ended; the duration is recorded as the timer is dropped here.
    pub fn finish(self, result: ReconcileResult) {
        self.metrics.record_result(result);
    }
}

impl Drop for ReconcileTimer {
    fn drop(&mut self) {
        let families = &self.metrics.families;
        families
            .reconcile_time
            .get_or_create(&self.metrics.labels)
            .observe(self.started.elapsed().as_secs_f64());
        families
            .active_workers
            .get_or_create(&self.metrics.labels)
            .dec();
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[derive(Debug)]
    struct Failed;

    fn sample(text: &str, prefix: &str) -> Option<f64> {
        text.lines()
            .find_map(|line| line.strip_prefix(prefix)?.trim().parse().ok())
    }

    #[tokio::test]
    async fn exposes_controller_runtime_names_and_labels() {
        let metrics = Metrics::new();
        let captain = metrics.controller("captain", 3);
        captain
            .measure(async { Ok::<_, Failed>(Action::await_change()) })
            .await
            .unwrap();
        captain
            .measure(async { Ok::<_, Failed>(Action::requeue(Duration::from_secs(5))) })
            .await
            .unwrap();
        captain
            .measure(async { Err::<Action, _>(Failed) })
            .await
            .unwrap_err();
        captain
            .measure(async { Err::<Action, _>(Failed) })
            .await
            .unwrap_err();

        let text = metrics.encode().unwrap();
        let value = |prefix: &str| {
            sample(&text, prefix).unwrap_or_else(|| panic!("no {prefix} in\n{text}"))
        };
        assert_eq!(
            value(r#"controller_runtime_reconcile_total{controller="captain",result="success"}"#),
            1.0
        );
        assert_eq!(
            value(
                r#"controller_runtime_reconcile_total{controller="captain",result="requeue_after"}"#
            ),
            1.0
        );
        assert_eq!(
            value(r#"controller_runtime_reconcile_total{controller="captain",result="error"}"#),
            2.0
        );
        assert_eq!(
            value(r#"controller_runtime_reconcile_total{controller="captain",result="requeue"}"#),
            0.0
        );
        assert_eq!(
            value(r#"controller_runtime_reconcile_errors_total{controller="captain"}"#),
            2.0
        );
        assert_eq!(
            value(r#"controller_runtime_reconcile_time_seconds_count{controller="captain"}"#),
            4.0
        );
        assert_eq!(
            value(
                r#"controller_runtime_reconcile_time_seconds_bucket{le="0.005",controller="captain"}"#
            ),
            4.0
        );
        assert_eq!(
            value(r#"controller_runtime_max_concurrent_reconciles{controller="captain"}"#),
            3.0
        );
        assert_eq!(
            value(r#"controller_runtime_active_workers{controller="captain"}"#),
            0.0
        );
        assert!(text.contains("# TYPE controller_runtime_reconcile_time_seconds histogram"));
        assert!(text.ends_with("# EOF\n"));
    }

    #[tokio::test]
    async fn counts_active_workers_while_reconciling() {
        let metrics = Metrics::new();
        let captain = metrics.controller("captain", 2);
        let active = r#"controller_runtime_active_workers{controller="captain"}"#;
        let first = captain.reconcile_started();
        let second = captain.reconcile_started();
        assert_eq!(sample(&metrics.encode().unwrap(), active), Some(2.0));
        first.finish(ReconcileResult::Success);
        // A reconcile cancelled during shutdown: timed, but without a result.
        drop(second);
        let text = metrics.encode().unwrap();
        assert_eq!(sample(&text, active), Some(0.0));
        assert_eq!(
            sample(
                &text,
                r#"controller_runtime_reconcile_total{controller="captain",result="success"}"#
            ),
            Some(1.0)
        );
        assert_eq!(
            sample(
                &text,
                r#"controller_runtime_reconcile_time_seconds_count{controller="captain"}"#
            ),
            Some(2.0)
        );
    }

    #[test]
    fn every_counter_starts_at_zero() {
        let metrics = Metrics::new();
        metrics.controller("a", 1);
        let text = metrics.encode().unwrap();
        for result in ["success", "error", "requeue", "requeue_after"] {
            // Built with concat, as doubled braces would clash with the project templates' syntax.
            let line = String::from("controller_runtime_reconcile_total{")
                + &format!(r#"controller="a",result="{result}""#)
                + "} 0";
            assert!(text.contains(&line), "missing {line} in\n{text}");
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn includes_process_metrics() {
        let text = Metrics::new().encode().unwrap();
        for name in [
            "process_cpu_seconds_total ",
            "process_resident_memory_bytes ",
            "process_open_fds ",
            "process_max_fds ",
            "process_virtual_memory_bytes ",
            "process_start_time_seconds ",
        ] {
            let value = sample(&text, name).unwrap_or_else(|| panic!("no {name} in\n{text}"));
            assert!(value >= 0.0);
        }
        assert!(sample(&text, "process_resident_memory_bytes ").unwrap() > 0.0);
    }

    /// `leader_election_master_status`: 0 for a standby, 1 for the leader.
    #[test]
    fn reports_leadership() {
        let metrics = Metrics::new();
        let status = metrics.leader_election("6e1ac2c5.example.com");
        let series = r#"leader_election_master_status{name="6e1ac2c5.example.com"}"#;
        assert_eq!(sample(&metrics.encode().unwrap(), series), Some(0.0));
        status.set_leading(true);
        assert_eq!(sample(&metrics.encode().unwrap(), series), Some(1.0));
        status.set_leading(false);
        assert_eq!(sample(&metrics.encode().unwrap(), series), Some(0.0));
    }

    #[test]
    fn registers_custom_metrics() {
        let metrics = Metrics::new();
        let widgets = Counter::<u64>::default();
        metrics.register("widgets_built", "Widgets built", widgets.clone());
        widgets.inc();
        assert_eq!(
            sample(&metrics.encode().unwrap(), "widgets_built_total "),
            Some(1.0)
        );
    }
}
