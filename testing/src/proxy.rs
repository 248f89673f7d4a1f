//! [`RecordingProxy`]: what a process asks of a real API server, request by request.
//!
//! The fake API server records every request it answers ([`FakeApiServer::requests`]); a real one
//! keeps no such list for one client. The proxy stands between them: it serves plain HTTP on
//! 127.0.0.1, forwards each request to the API server of a [`kube::Client`] (with that client's
//! credentials and TLS), streams the answer back (watches included), and records the request as
//! the fake would: its verb (`get`, `list` and `watch` told apart as the API server's
//! `RequestInfo` does), resource, subresource, namespace, name and answer. Give the process under
//! test [`RecordingProxy::kubeconfig`] (a manager started with `KUBECONFIG` pointing to it).
//! `hack/bench-reconcile --cluster` counts a manager's requests per object this way.
//!
//! [`FakeApiServer::requests`]: crate::fake::FakeApiServer::requests

use std::sync::{Arc, Mutex, PoisonError};

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use http::StatusCode;
use kube::Client;
use tokio_util::task::AbortOnDropHandle;

use crate::fake::{RecordedRequest, Verb};

/// A local HTTP server that forwards every request to an API server and records it. Clones share
/// the server and its records; it stops when the last of them is dropped.
#[derive(Clone)]
pub struct RecordingProxy {
    url: String,
    requests: Arc<Mutex<Vec<RecordedRequest>>>,
    _server: Arc<AbortOnDropHandle<std::io::Result<()>>>,
}

impl RecordingProxy {
    /// Starts a proxy to the API server that `client` talks to, on a free port of 127.0.0.1.
    pub async fn start(client: Client) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}", listener.local_addr()?);
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&requests);
        let app = axum::Router::new().fallback(move |request: Request| {
            forward(client.clone(), Arc::clone(&recorded), request)
        });
        let server = tokio::spawn(async move { axum::serve(listener, app).await });
        Ok(Self {
            url,
            requests,
            _server: Arc::new(AbortOnDropHandle::new(server)),
        })
    }

    /// The proxy's address, `http://127.0.0.1:<port>`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// A kubeconfig for the proxy: its URL, no credentials (the proxy adds its client's), and
    /// `namespace` as the default namespace.
    pub fn kubeconfig(&self, namespace: &str) -> String {
        format!(
            "apiVersion: v1
kind: Config
clusters: [{{name: proxy, cluster: {{server: \"{url}\"}}}}]
users: [{{name: proxy, user: {{}}}}]
contexts: [{{name: proxy, context: {{cluster: proxy, user: proxy, namespace: {namespace}}}}}]
current-context: proxy
",
            url = self.url
        )
    }

    /// The requests forwarded so far, in the order their answers came (a watch when its
    /// answer started).
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.lock().clone()
    }

    /// How many requests were forwarded so far.
    pub fn count(&self) -> usize {
        self.lock().len()
    }

    /// Forgets the requests forwarded so far.
    pub fn clear_requests(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<RecordedRequest>> {
        self.requests.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Forwards `request` through `client` and records it once its answer starts.
async fn forward(
    client: Client,
    requests: Arc<Mutex<Vec<RecordedRequest>>>,
    request: Request,
) -> Response {
    let (parts, body) = request.into_parts();
    let mut recorded = describe(&parts.method, &parts.uri);
    let answer = match axum::body::to_bytes(body, usize::MAX).await {
        Ok(body) => {
            let request = http::Request::from_parts(parts, kube::client::Body::from(body));
            client.send(request).await
        }
        Err(error) => Err(kube::Error::Service(error.into())),
    };
    let response = match answer {
        Ok(response) => response.map(Body::new),
        // What kube's client says of a request it could not send: the API server could not be
        // reached, as a load balancer in front of it would answer.
        Err(error) => {
            let mut response = Response::new(Body::from(error.to_string()));
            *response.status_mut() = StatusCode::BAD_GATEWAY;
            response
        }
    };
    recorded.status = response.status();
    requests
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(recorded);
    response
}

/// What a request does, from its method and URL alone, as the API server's `RequestInfo` tells
/// it (`k8s.io/apiserver/pkg/endpoints/request`): the parts after `/api/<version>` or
/// `/apis/<group>/<version>` are `[namespaces/<namespace>/]<resource>[/<name>[/<subresource>]]`,
/// where `namespaces/<name>` alone (or with `status` or `finalize`) is the Namespace itself. A
/// `GET` without a name is a list, or a watch with `watch=true`. Paths of no resource
/// (`/version`, `/openapi/v2`, discovery) have an empty resource.
pub fn describe(method: &http::Method, uri: &http::Uri) -> RecordedRequest {
    let segments: Vec<&str> = uri.path().trim_matches('/').split('/').collect();
    let mut parts: &[&str] = match segments.as_slice() {
        ["api", _version, rest @ ..] | ["apis", _, _version, rest @ ..] => rest,
        _ => &[],
    };
    let mut namespace = None;
    if let ["namespaces", name, next, ..] = parts
        && !matches!(*next, "status" | "finalize")
    {
        namespace = Some((*name).to_owned());
        parts = &parts[2..];
    }
    let part = |index: usize| parts.get(index).map(|part| (*part).to_owned());
    let (resource, name, subresource) = (part(0).unwrap_or_default(), part(1), part(2));
    let watch = uri
        .query()
        .unwrap_or_default()
        .split('&')
        .any(|pair| matches!(pair, "watch=true" | "watch=1"));
    let verb = match *method {
        http::Method::POST => Verb::Create,
        http::Method::PUT => Verb::Update,
        http::Method::PATCH => Verb::Patch,
        http::Method::DELETE if name.is_some() => Verb::Delete,
        http::Method::DELETE => Verb::DeleteCollection,
        _ if name.is_some() => Verb::Get,
        _ if watch => Verb::Watch,
        _ => Verb::List,
    };
    RecordedRequest {
        verb,
        url: uri.to_string(),
        resource,
        subresource,
        namespace,
        name,
        status: StatusCode::OK,
    }
}

#[cfg(test)]
mod tests {
    use futures::StreamExt as _;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{Api, ObjectMeta, Patch, PatchParams, PostParams, WatchParams};

    use super::*;
    use crate::fake::FakeApiServer;

    fn described(
        method: http::Method,
        url: &str,
    ) -> (Verb, String, Option<String>, Option<String>, Option<String>) {
        let request = describe(&method, &url.parse().unwrap());
        (
            request.verb,
            request.resource,
            request.namespace,
            request.name,
            request.subresource,
        )
    }

    fn some(text: &str) -> Option<String> {
        Some(text.to_owned())
    }

    /// As the API server's `RequestInfo` reads URLs.
    #[test]
    fn requests_are_described_as_the_api_server_does() {
        use http::Method;
        assert_eq!(
            described(Method::GET, "/api/v1/namespaces/a/pods/p"),
            (Verb::Get, "pods".into(), some("a"), some("p"), None)
        );
        assert_eq!(
            described(
                Method::GET,
                "/apis/apps/v1/namespaces/a/deployments?&watch=true&timeoutSeconds=290"
            ),
            (Verb::Watch, "deployments".into(), some("a"), None, None)
        );
        assert_eq!(
            described(Method::GET, "/apis/apps/v1/deployments?limit=500"),
            (Verb::List, "deployments".into(), None, None, None)
        );
        assert_eq!(
            described(
                Method::PATCH,
                "/apis/g/v1/namespaces/a/widgets/w/status?&force=true"
            ),
            (
                Verb::Patch,
                "widgets".into(),
                some("a"),
                some("w"),
                some("status")
            )
        );
        assert_eq!(
            described(Method::GET, "/api/v1/namespaces/a"),
            (Verb::Get, "namespaces".into(), None, some("a"), None)
        );
        assert_eq!(
            described(Method::PUT, "/api/v1/namespaces/a/finalize"),
            (
                Verb::Update,
                "namespaces".into(),
                None,
                some("a"),
                some("finalize")
            )
        );
        assert_eq!(
            described(Method::DELETE, "/api/v1/namespaces/a/configmaps"),
            (
                Verb::DeleteCollection,
                "configmaps".into(),
                some("a"),
                None,
                None
            )
        );
        assert_eq!(
            described(Method::POST, "/apis/events.k8s.io/v1/namespaces/a/events?"),
            (Verb::Create, "events".into(), some("a"), None, None)
        );
        assert_eq!(described(Method::GET, "/version").1, "");
    }

    /// Through the proxy, a client gets what the API server answers (watches streamed), and the
    /// proxy records what the API server itself records.
    #[tokio::test]
    async fn the_proxy_forwards_and_records_as_the_api_server_sees_it() {
        let fake = FakeApiServer::new();
        let proxy = RecordingProxy::start(fake.client()).await.unwrap();
        let config = kube::Config::new(proxy.url().parse().unwrap());
        let client = Client::try_from(config).unwrap();
        let api = Api::<ConfigMap>::namespaced(client, "default");

        let mut watch = api
            .watch(&WatchParams::default(), "0")
            .await
            .unwrap()
            .boxed();
        let object = ConfigMap {
            metadata: ObjectMeta {
                name: Some("a".to_owned()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        api.create(&PostParams::default(), &object).await.unwrap();
        let seen = watch.next().await.unwrap().unwrap();
        assert!(matches!(seen, kube::api::WatchEvent::Added(_)), "{seen:?}");
        let patch = serde_json::json!({ "data": { "k": "v" } });
        api.patch("a", &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .unwrap();
        assert_eq!(api.get("a").await.unwrap().data.unwrap()["k"], "v");
        assert!(api.get_opt("missing").await.unwrap().is_none());
        drop(watch);

        let summary = |requests: Vec<RecordedRequest>| {
            requests
                .into_iter()
                .map(|r| (r.verb, r.resource, r.namespace, r.name, r.status))
                .collect::<Vec<_>>()
        };
        let mut recorded = summary(proxy.requests());
        let mut answered = summary(fake.requests());
        // The proxy records a watch when its answer starts, the fake when it accepts it: in the
        // same order here, but compare as sets.
        recorded.sort_by_key(|r| format!("{r:?}"));
        answered.sort_by_key(|r| format!("{r:?}"));
        assert_eq!(recorded, answered);
        assert_eq!(proxy.count(), 5);
    }
}
