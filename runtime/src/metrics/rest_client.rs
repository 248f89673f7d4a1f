//! `rest_client_requests_total`: the requests the manager's Kubernetes client sends, by status
//! code, method and host, as client-go counts them for controller-runtime.
//!
//! A tower layer of the client ([`RequestCounter`], which `manager::client` adds) counts every
//! request as its answer comes: the code of the answer (`200`, `404` …), or `<error>` when none
//! came (no connection, a timeout), like client-go.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::{Request, Response};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;
use tower::{Layer, Service};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    code: String,
    method: String,
    host: String,
}

/// The family of a registry.
#[derive(Clone, Debug, Default)]
pub(super) struct Requests(Family<RequestLabels, Counter>);

impl Requests {
    pub(super) fn register(registry: &mut Registry) -> Self {
        let requests = Requests::default();
        registry.register(
            "rest_client_requests",
            "Number of HTTP requests, partitioned by status code, method, and host.",
            requests.0.clone(),
        );
        requests
    }

    pub(super) fn counter(&self, host: &str) -> RequestCounter {
        RequestCounter {
            family: self.0.clone(),
            host: Arc::from(host),
        }
    }
}

/// Counts the requests of a client to the API server at `host` in
/// `rest_client_requests_total`; from [`Metrics::rest_client`](super::Metrics::rest_client).
/// A tower [`Layer`], for kube's `ClientBuilder::with_layer`.
#[derive(Clone, Debug)]
pub struct RequestCounter {
    family: Family<RequestLabels, Counter>,
    host: Arc<str>,
}

impl<S> Layer<S> for RequestCounter {
    type Service = Counted<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Counted {
            inner,
            counter: self.clone(),
        }
    }
}

/// A service whose requests [`RequestCounter`] counts.
#[derive(Clone, Debug)]
pub struct Counted<S> {
    inner: S,
    counter: RequestCounter,
}

impl<S, B, R> Service<Request<B>> for Counted<S>
where
    S: Service<Request<B>, Response = Response<R>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let method = request.method().as_str().to_owned();
        let counter = self.counter.clone();
        let answered = self.inner.call(request);
        Box::pin(async move {
            let answer = answered.await;
            let code = match &answer {
                Ok(response) => response.status().as_u16().to_string(),
                Err(_) => "<error>".to_owned(),
            };
            let labels = RequestLabels {
                code,
                method,
                host: counter.host.to_string(),
            };
            counter.family.get_or_create(&labels).inc();
            answer
        })
    }
}
