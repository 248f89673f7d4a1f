//! The manager's Kubernetes client: kube's, from the kubeconfig or the pod's service account,
//! with an optional client-side rate limit (`--kube-api-qps`, `--kube-api-burst`), counting the
//! requests it sends in `rest_client_requests_total` (as client-go does for controller-runtime).
//!
//! By default nothing is throttled on the client, as with controller-runtime's client: client-go's
//! old default of 5 requests per second (burst 10) is what makes a Go controller that keeps it
//! take minutes over a backlog that the API server could take in seconds, and the API server's
//! API Priority and Fairness already shares its capacity fairly between clients. The flags are
//! there for API servers that need the client to hold back.
//!
//! Nor does the client retry a request on its own. kube's client retries every `429`, `503` and
//! `504` up to 15 times, 5 ms apart at first and doubling: a request sent while the API server is
//! away (behind a load balancer that answers `503`, or starting up) waits through 2 minutes of
//! retries before it fails, and after the outage it sleeps up to half a minute before its next
//! try. The manager has its own answers, which need the failure to come back at once: watches
//! back off on their own and relist, a failed reconciliation is retried with its object's backoff,
//! and reconciliations that failed for want of an API server run again as soon as it answers
//! (see `controller::recovery`). client-go retries only when the server says when (`Retry-After`).

use std::time::Duration;

use anyhow::Context as _;
use kube::client::ClientBuilder;
use kube::{Client, Config};
use tower::limit::RateLimitLayer;

use crate::metrics::Metrics;

/// A client of the API server of the kubeconfig (or the pod's service account), sending at most
/// `qps` requests per second if `qps` is not 0 (see [`rate_limit`]), and counting its requests in
/// `metrics`.
pub async fn build(qps: f64, burst: u32, metrics: &Metrics) -> anyhow::Result<Client> {
    from_config(config().await?, qps, burst, metrics)
}

/// The configuration of the kubeconfig (KUBECONFIG, else `~/.kube/config`), else of the pod's
/// service account, as kube and client-go infer it.
#[cfg(feature = "kubeconfig")]
async fn config() -> anyhow::Result<Config> {
    Config::infer()
        .await
        .context("cannot create a Kubernetes client from the kubeconfig or in-cluster config")
}

/// The configuration of the pod's service account only: without the `kubeconfig` feature (the
/// image's build) no kubeconfig reader is linked, so that kube's YAML parser stays out of the
/// manager (0.44 MB).
#[cfg(not(feature = "kubeconfig"))]
async fn config() -> anyhow::Result<Config> {
    Config::incluster().context(
        "cannot create a Kubernetes client from the pod's service account; this manager is built \
         without operator-rs-runtime's `kubeconfig` feature (as the Dockerfile builds it, \
         `--no-default-features`), so it reads no kubeconfig and runs only in a cluster: \
         build it with the default features (`make run`, `cargo run`) to run it outside",
    )
}

/// [`build`], from a configuration at hand.
pub fn from_config(
    mut config: Config,
    qps: f64,
    burst: u32,
    metrics: &Metrics,
) -> anyhow::Result<Client> {
    // No retries inside the client: see the module's documentation.
    config.default_retry = false;
    // client-go's `host` label: the API server's host and port.
    let url = &config.cluster_url;
    let host = url
        .authority()
        .map_or_else(String::new, ToString::to_string);
    let builder = ClientBuilder::try_from(config).context("cannot create a Kubernetes client")?;
    // Counted below the rate limit: what is sent, when it is sent.
    let builder = builder.with_layer(&metrics.rest_client(&host));
    Ok(match rate_limit(qps, burst) {
        Some(layer) => builder.with_layer(&layer).build(),
        None => builder.build(),
    })
}

/// The rate limit of `--kube-api-qps` and `--kube-api-burst`: `burst` requests (at least one,
/// `qps` rounded up when 0) per `burst / qps` seconds, the token bucket of client-go as a window
/// of tower's `RateLimit`. `None` for `qps` 0: no limit.
pub fn rate_limit(qps: f64, burst: u32) -> Option<RateLimitLayer> {
    if qps <= 0.0 || !qps.is_finite() {
        return None;
    }
    let burst = if burst == 0 {
        // At most u32::MAX: the cast saturates.
        qps.ceil() as u32
    } else {
        burst
    };
    let burst = burst.max(1);
    let window = Duration::from_secs_f64(f64::from(burst) / qps);
    Some(RateLimitLayer::new(u64::from(burst), window))
}

/// A client with no API server behind it, whose every request fails at once: for the runtime's
/// unit tests that need a client but send nothing. (Tests against an API server are integration
/// tests of operator-rs-testing, in testing/tests/runtime: a unit test here cannot link the
/// harness crate, which links this crate.)
#[cfg(test)]
pub(crate) fn offline() -> Client {
    use kube::client::Body;
    let service = tower::service_fn(|_: http::Request<Body>| async {
        Err::<http::Response<Body>, _>(std::io::Error::other("no API server in unit tests"))
    });
    Client::new(service, "default")
}

/// A client whose requests a test answers one by one ([`Script::next_request`]), as
/// tower-test's mocked service does, for the runtime's unit tests of the requests it sends.
#[cfg(test)]
pub(crate) fn scripted() -> (Client, Script) {
    use kube::client::Body;
    use tokio::sync::{mpsc, oneshot};
    let (requests, script) = mpsc::unbounded_channel();
    let service = tower::service_fn(move |request: http::Request<Body>| {
        let (answer, answered) = oneshot::channel();
        let sent = requests.send((request, Answer(answer)));
        async move {
            sent.map_err(|_| "the test's script has ended")?;
            answered
                .await
                .map_err(|_| "the test did not answer the request")
        }
    });
    (Client::new(service, "default"), Script(script))
}

/// The test's end of a [`scripted`] client.
#[cfg(test)]
pub(crate) struct Script(
    tokio::sync::mpsc::UnboundedReceiver<(http::Request<kube::client::Body>, Answer)>,
);

#[cfg(test)]
impl Script {
    /// The next request the client sent, with its [`Answer`]; `None` once the client is gone.
    pub(crate) async fn next_request(
        &mut self,
    ) -> Option<(http::Request<kube::client::Body>, Answer)> {
        self.0.recv().await
    }
}

/// How a test answers one request of a [`scripted`] client.
#[cfg(test)]
pub(crate) struct Answer(tokio::sync::oneshot::Sender<http::Response<kube::client::Body>>);

#[cfg(test)]
impl Answer {
    pub(crate) fn send_response(self, response: http::Response<kube::client::Body>) {
        // The client may have given up on the request: nothing to answer then.
        let _ = self.0.send(response);
    }

    /// Answers with `body` as JSON, under the HTTP status `status`.
    pub(crate) fn send_json(self, status: u16, body: &serde_json::Value) {
        let body = kube::client::Body::from(serde_json::to_vec(body).unwrap());
        self.send_response(http::Response::builder().status(status).body(body).unwrap());
    }

    /// Answers with the API server's `Status` of a failure with the HTTP status `code` (used by
    /// the tests of sharding's label writes alone).
    #[cfg(feature = "sharding")]
    pub(crate) fn send_failure(self, code: u16) {
        let status = serde_json::json!({
            "kind": "Status", "apiVersion": "v1", "status": "Failure",
            "message": "refused", "reason": "Refused", "code": code,
        });
        self.send_json(code, &status);
    }
}

#[cfg(test)]
mod tests {
    use tokio::time::Instant;
    use tower::{Layer as _, Service as _, ServiceExt as _};

    use super::*;

    #[test]
    fn no_limit_by_default() {
        assert!(rate_limit(0.0, 0).is_none());
        assert!(rate_limit(0.0, 30).is_none());
    }

    /// 20 requests at 10 per second with a burst of 5: 5 at once, then 5 every half second.
    #[tokio::test(start_paused = true)]
    async fn requests_beyond_the_burst_wait_for_the_rate() {
        let layer = rate_limit(10.0, 5).unwrap();
        let mut service = layer.layer(tower::service_fn(|()| async { Ok::<_, ()>(()) }));
        let start = Instant::now();
        let mut times = Vec::new();
        for _ in 0..20 {
            service.ready().await.unwrap().call(()).await.unwrap();
            times.push(start.elapsed());
        }
        assert_eq!(times[4], Duration::ZERO);
        assert_eq!(times[5], Duration::from_millis(500));
        assert_eq!(times[19], Duration::from_millis(1500));
    }
}
