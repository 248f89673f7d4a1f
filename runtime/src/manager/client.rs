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
    let config = Config::infer()
        .await
        .context("cannot create a Kubernetes client from the kubeconfig or in-cluster config")?;
    from_config(config, qps, burst, metrics)
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

#[cfg(test)]
mod tests {
    use tokio::time::Instant;
    use tower::{Layer as _, Service as _, ServiceExt as _};

    use super::*;

    /// While the API server answers `503`, a request fails at once, for the manager's own
    /// backoffs and recovery to act on, instead of waiting through kube's retries.
    #[tokio::test]
    async fn an_unavailable_api_server_fails_requests_at_once() {
        use k8s_openapi::api::core::v1::ConfigMap;

        use crate::testing::fake::FakeApiServer;

        let fake = FakeApiServer::new();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let server = fake.clone();
        tokio::spawn(async move { server.serve(listener).await });
        let config = Config::new(url.parse().unwrap());
        let client = from_config(config, 0.0, 0, &Metrics::new()).unwrap();
        let api = kube::Api::<ConfigMap>::namespaced(client, "default");
        api.list(&Default::default()).await.unwrap();

        fake.unavailable_for(Duration::from_secs(600));
        // kube's retries would take minutes.
        let params = kube::api::ListParams::default();
        let listed = tokio::time::timeout(Duration::from_secs(2), api.list(&params));
        let error = listed.await.expect("an answer within 2 s").unwrap_err();
        assert!(
            matches!(&error, kube::Error::Api(status) if status.code == 503),
            "{error:?}"
        );
    }

    /// Every request is counted by code, method and host as its answer comes; a request that got
    /// no answer as `<error>`.
    #[tokio::test]
    async fn requests_are_counted_by_code_method_and_host() {
        use k8s_openapi::api::core::v1::ConfigMap;

        use crate::testing::fake::FakeApiServer;

        let fake = FakeApiServer::new();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let host = listener.local_addr().unwrap().to_string();
        let server = fake.clone();
        tokio::spawn(async move { server.serve(listener).await });
        let metrics = Metrics::new();
        let config = Config::new(format!("http://{host}").parse().unwrap());
        let client = from_config(config, 0.0, 0, &metrics).unwrap();
        let api = kube::Api::<ConfigMap>::namespaced(client, "default");
        api.list(&Default::default()).await.unwrap();
        api.get_opt("missing").await.unwrap();
        api.get_opt("missing").await.unwrap();
        fake.unavailable_for(Duration::from_secs(600));
        api.get_opt("missing").await.unwrap_err();

        let text = metrics.encode().unwrap();
        let count = |code: &str, method: &str| {
            // Built with concat, as doubled braces would clash with the project templates' syntax.
            let labels = format!(r#"code="{code}",method="{method}",host="{host}""#);
            let series = String::from("rest_client_requests_total{") + &labels + "} ";
            let line = text
                .lines()
                .find_map(|line| line.strip_prefix(series.as_str()));
            line.and_then(|value| value.parse::<f64>().ok())
        };
        assert_eq!(count("200", "GET"), Some(1.0), "{text}");
        assert_eq!(count("404", "GET"), Some(2.0), "{text}");
        assert!(
            count("503", "GET").or(count("<error>", "GET")).is_some(),
            "{text}"
        );
    }

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
