//! The test harnesses of operators built on `operator-rs-runtime`, for their tests only: a
//! generated project takes this crate in its `[dev-dependencies]`, so that the manager it ships
//! links none of it (nor `tower-test`, nor a CEL interpreter).
//!
//! - the mocked API server (below): each test scripts the requests it expects, checks them and
//!   answers them, with no cluster, for tests of one reconciliation;
//! - [`fake`]: a stateful in-memory API server for tests that run whole controllers, as strict as
//!   a real one (CRD schemas, CEL rules, RBAC, admission and conversion webhooks);
//! - `envtest` (cargo feature `envtest`): a real etcd and kube-apiserver from the binaries of
//!   `KUBEBUILDER_ASSETS`, as controller-runtime's envtest, and [`cluster::TestCluster`], one
//!   test body against either the fake or envtest;
//! - [`webhook`]: AdmissionReviews and ConversionReviews as the API server sends them, for the
//!   tests of a project's webhooks;
//! - [`e2e`]: what the generated end-to-end suite (`make test-e2e`) shares: cluster set-up,
//!   `kubectl`, waiting, the metrics endpoint, the restricted Pod Security Standard.
//!
//! # The mocked API server
//!
//! ```
//! use std::sync::Arc;
//!
//! use http::{Method, StatusCode};
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::Api;
//! use operator_rs_testing::reconcile_with;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let (found, ()) = reconcile_with(
//!     // The code under test gets a client whose requests go to the closure below.
//!     |client| async move {
//!         let api = Api::<ConfigMap>::namespaced(client, "default");
//!         api.get_opt("settings").await.unwrap()
//!     },
//!     |mut api_server| async move {
//!         let call = api_server
//!             .expect(Method::GET, "/api/v1/namespaces/default/configmaps/settings")
//!             .await;
//!         call.respond_error(StatusCode::NOT_FOUND, "NotFound");
//!         api_server.expect_no_more_requests().await;
//!     },
//! )
//! .await;
//! assert_eq!(found, None);
//! # }
//! ```
//!
//! A request that the script does not expect fails the test, and so does an expected request
//! that never comes: the script runs until the client is dropped.
//!
//! For tests that run whole controllers rather than one reconciliation, [`fake`] is a stateful
//! in-memory API server that answers every request as a cluster would. Against a real control
//! plane without nodes, [`kubelet`] stands in for the kubelet: pods become ready (or succeed).

pub mod cluster;
pub mod e2e;
#[cfg(feature = "envtest")]
pub mod envtest;
pub mod fake;
pub mod kubelet;
pub mod proxy;
pub mod webhook;

use std::time::Duration;

/// The request methods and answer codes of the mocked API server, re-exported so that tests need
/// no dependency on `http`.
pub use http::{Method, StatusCode};
use http::{Request, Response};
use kube::Client;
use kube::client::Body;
use serde::Serialize;
use serde_json::{Value, json};
use tower_test::mock::{self, Handle, SendResponse};

/// How long a test waits for the code under test or for the script before it fails.
pub const TIMEOUT: Duration = Duration::from_secs(5);

/// Reads a YAML document (a sample of `config/samples/`, a manifest) as a `T`, with the error
/// saying where the document does not fit `T`.
pub fn from_yaml<T: serde::de::DeserializeOwned>(yaml: &str) -> anyhow::Result<T> {
    Ok(serde_saphyr::from_str(yaml)?)
}

/// Waits until `condition` holds, checking every 10 ms, and fails the test after `timeout`
/// naming `what`: for tests that run whole controllers against the [`fake::FakeApiServer`],
/// whose effects arrive when the watches bring them. (The end-to-end suite's `e2e::eventually`
/// retries an async check against a cluster instead.)
pub async fn wait_until(what: &str, timeout: Duration, mut condition: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + timeout;
    while !condition() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting until {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Waits until the async `condition` holds, checking every 50 ms, and fails the test after
/// `timeout` naming `what`: for tests whose checks are requests ([`cluster::TestCluster`] on
/// envtest answers them only over the network).
pub async fn eventually<F, Fut>(what: &str, timeout: Duration, mut condition: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    while !condition().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting until {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The test's end of the connection of a mocked [`Client`]: it receives the client's requests.
pub struct ApiServer {
    handle: Handle<Request<Body>, Response<Body>>,
}

/// A client whose requests go to the returned [`ApiServer`] instead of a cluster.
pub fn mock_client() -> (Client, ApiServer) {
    let (service, handle) = mock::pair::<Request<Body>, Response<Body>>();
    (Client::new(service, "default"), ApiServer { handle })
}

/// Runs `code(client)` while `script` plays the API server that `client` talks to, and returns
/// what both returned.
///
/// Panics (failing the test) when either does not finish within [`TIMEOUT`]: the code under test
/// waits for an answer the script never gives, or the script waits for a request that never
/// comes. A panic in the script is passed on.
pub async fn reconcile_with<C, S>(
    code: impl FnOnce(Client) -> C,
    script: impl FnOnce(ApiServer) -> S,
) -> (C::Output, S::Output)
where
    C: Future,
    S: Future + Send + 'static,
    S::Output: Send + 'static,
{
    let (client, api_server) = mock_client();
    let script = tokio::spawn(script(api_server));
    let result = tokio::time::timeout(TIMEOUT, code(client))
        .await
        .expect("the code under test did not finish: is it waiting for an answer?");
    match tokio::time::timeout(TIMEOUT, script).await {
        Ok(Ok(output)) => (result, output),
        Ok(Err(failed)) => std::panic::resume_unwind(failed.into_panic()),
        Err(_) => panic!("the API server still expects requests"),
    }
}

impl ApiServer {
    /// The next request, or `None` once the client is dropped.
    pub async fn next(&mut self) -> Option<Call> {
        let (request, send) = self.handle.next_request().await?;
        let method = request.method().clone();
        let url = request.uri().to_string();
        let bytes = request
            .into_body()
            .collect_bytes()
            .await
            .expect("the request body is readable");
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).expect("the request body is JSON")
        };
        Some(Call {
            method,
            url,
            body,
            send,
        })
    }

    /// The next request, which must be `method url` (the URL with its query, as sent).
    pub async fn expect(&mut self, method: Method, url: &str) -> Call {
        let Some(call) = self.next().await else {
            panic!("expected {method} {url}, but no more requests came");
        };
        assert_eq!(
            (&call.method, call.url.as_str()),
            (&method, url),
            "unexpected request"
        );
        call
    }

    /// Waits until the client is dropped (the code under test has finished) and fails on any
    /// request made until then.
    pub async fn expect_no_more_requests(mut self) {
        if let Some(call) = self.next().await {
            panic!("unexpected request: {} {}", call.method, call.url);
        }
    }
}

/// One request to the mocked API server, to be answered with one of the `respond` methods.
pub struct Call {
    /// The request's method.
    pub method: Method,
    /// The request's URL: path and query.
    pub url: String,
    /// The request's JSON body, or `null` when it has none.
    pub body: Value,
    send: SendResponse<Response<Body>>,
}

impl Call {
    /// Answers with `status` and `body` as JSON, e.g. the object after a successful write.
    pub fn respond(self, status: StatusCode, body: &impl Serialize) {
        let bytes = serde_json::to_vec(body).expect("the answer serializes to JSON");
        let mut response = Response::new(Body::from(bytes));
        *response.status_mut() = status;
        self.send.send_response(response);
    }

    /// Answers `200 OK` with `body`.
    pub fn ok(self, body: &impl Serialize) {
        self.respond(StatusCode::OK, body);
    }

    /// Answers with a `Status` error as the API server sends it: `reason` is its machine-readable
    /// reason (`NotFound`, `Conflict`, `Forbidden`, `Expired` …), which kube's errors expose.
    pub fn respond_error(self, code: StatusCode, reason: &str) {
        let status = json!({
            "apiVersion": "v1",
            "kind": "Status",
            "status": "Failure",
            "reason": reason,
            "message": reason,
            "code": code.as_u16(),
        });
        self.respond(code, &status);
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::Api;
    use kube::api::{Patch, PatchParams};

    use super::*;

    #[tokio::test]
    async fn requests_are_scripted_and_answered() {
        let (result, seen) = reconcile_with(
            |client| async move {
                let api = Api::<ConfigMap>::namespaced(client, "default");
                let patch = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}});
                api.patch("c", &PatchParams::apply("me"), &Patch::Apply(&patch))
                    .await
            },
            |mut api_server| async move {
                let url = "/api/v1/namespaces/default/configmaps/c?&fieldManager=me";
                let call = api_server.expect(Method::PATCH, url).await;
                let body = call.body.clone();
                call.ok(&body);
                api_server.expect_no_more_requests().await;
                body
            },
        )
        .await;
        assert_eq!(seen["data"]["a"], "b");
        assert_eq!(result.unwrap().data.unwrap()["a"], "b");
    }

    #[tokio::test]
    async fn error_answers_are_kube_errors() {
        let (result, ()) = reconcile_with(
            |client| async move { Api::<ConfigMap>::namespaced(client, "x").get("c").await },
            |mut api_server| async move {
                let call = api_server.next().await.unwrap();
                assert_eq!(call.body, Value::Null);
                call.respond_error(StatusCode::CONFLICT, "Conflict");
            },
        )
        .await;
        match result.unwrap_err() {
            kube::Error::Api(status) => {
                assert_eq!((status.code, status.reason.as_str()), (409, "Conflict"))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn yaml_documents_are_read_with_their_errors() {
        let map: ConfigMap = from_yaml("metadata:\n  name: a\ndata:\n  k: v\n").unwrap();
        assert_eq!(map.metadata.name.as_deref(), Some("a"));
        let error = from_yaml::<ConfigMap>("data: [1, 2]\n")
            .unwrap_err()
            .to_string();
        assert!(error.contains("data"), "{error}");
    }

    #[tokio::test]
    #[should_panic(expected = "unexpected request")]
    async fn unexpected_requests_fail_the_test() {
        reconcile_with(
            |client| async move {
                let _ = Api::<ConfigMap>::namespaced(client, "x").get("c").await;
            },
            |api_server| api_server.expect_no_more_requests(),
        )
        .await;
    }
}
