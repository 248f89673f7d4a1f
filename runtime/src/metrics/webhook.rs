//! controller-runtime's webhook metrics, by webhook path (its `webhook` label):
//! `controller_runtime_webhook_requests_total` (by HTTP status code too),
//! `controller_runtime_webhook_requests_in_flight` and
//! `controller_runtime_webhook_latency_seconds`. The webhook server records them for every path
//! it serves (`WebhookServer::with_metrics`).

use std::sync::Arc;
use std::time::Instant;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// The buckets of `controller_runtime_webhook_latency_seconds`: controller-runtime's
/// `prometheus.ExponentialBuckets(10e-9, 10, 12)`, 10 ns to 1000 s.
const LATENCY_BUCKETS: [f64; 12] = [
    1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0, 1000.0,
];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PathLabels {
    webhook: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CodeLabels {
    webhook: String,
    code: String,
}

fn latency_histogram() -> Histogram {
    Histogram::new(LATENCY_BUCKETS)
}

/// The webhook families of a registry. Cheap to clone: the webhook server keeps one.
#[derive(Clone, Debug)]
pub struct WebhookMetrics {
    requests: Family<CodeLabels, Counter>,
    in_flight: Family<PathLabels, Gauge>,
    latency: Family<PathLabels, Histogram, fn() -> Histogram>,
}

impl WebhookMetrics {
    pub(super) fn register(registry: &mut Registry) -> Self {
        let metrics = WebhookMetrics {
            requests: Family::default(),
            in_flight: Family::default(),
            latency: Family::new_with_constructor(latency_histogram),
        };
        registry.register(
            "controller_runtime_webhook_requests",
            "Total number of admission requests by HTTP status code.",
            metrics.requests.clone(),
        );
        registry.register(
            "controller_runtime_webhook_requests_in_flight",
            "Current number of admission requests being served.",
            metrics.in_flight.clone(),
        );
        registry.register(
            "controller_runtime_webhook_latency_seconds",
            "Histogram of the latency of processing admission requests",
            metrics.latency.clone(),
        );
        metrics
    }

    /// Adds the series of the webhook served at `path`, at 0: its requests answered 200 and
    /// 500 (the codes controller-runtime starts with), in flight, and its latency.
    pub fn serve(&self, path: &str) {
        for code in ["200", "500"] {
            let labels = CodeLabels {
                webhook: path.to_owned(),
                code: code.to_owned(),
            };
            drop(self.requests.get_or_create(&labels));
        }
        let labels = PathLabels {
            webhook: path.to_owned(),
        };
        self.in_flight.get_or_create(&labels).set(0);
        drop(self.latency.get_or_create(&labels));
    }

    /// A request to the webhook at `path` starts: it is in flight until the returned
    /// [`WebhookRequest`] is finished or dropped.
    pub fn request(&self, path: &str) -> WebhookRequest {
        let labels = PathLabels {
            webhook: path.to_owned(),
        };
        self.in_flight.get_or_create(&labels).inc();
        WebhookRequest {
            metrics: self.clone(),
            path: Arc::new(labels),
            started: Instant::now(),
        }
    }
}

/// A webhook request in flight; see [`WebhookMetrics::request`].
#[derive(Debug)]
#[must_use = "dropping the request right away records nothing but its time in flight"]
pub struct WebhookRequest {
    metrics: WebhookMetrics,
    path: Arc<PathLabels>,
    started: Instant,
}

impl WebhookRequest {
    /// The request was answered with the HTTP status `code`: counted, and its latency recorded.
    pub fn answered(self, code: u16) {
        let labels = CodeLabels {
            webhook: self.path.webhook.clone(),
            code: code.to_string(),
        };
        self.metrics.requests.get_or_create(&labels).inc();
        let latency = self.metrics.latency.get_or_create(&self.path);
        latency.observe(self.started.elapsed().as_secs_f64());
    }
}

impl Drop for WebhookRequest {
    fn drop(&mut self) {
        self.metrics.in_flight.get_or_create(&self.path).dec();
    }
}
