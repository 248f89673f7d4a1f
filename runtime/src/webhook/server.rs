//! The webhook server: HTTPS on `--webhook-port` (9443), like controller-runtime's webhook server.
//!
//! - The certificate and key are PEM files in `--webhook-cert-path` (`--webhook-cert-name`,
//!   `--webhook-cert-key`); in the cluster, cert-manager writes them into the Secret that
//!   `config/default/manager_webhook_patch.yaml` mounts, or, for an operator installed by OLM,
//!   OLM mounts its own certificate Secret at `/tmp/k8s-webhook-server/serving-certs` (`tls.crt`,
//!   `tls.key`, the folder that patch points `--webhook-cert-path` at; `operator-rs generate
//!   bundle` removes cert-manager's volume there). They are re-read when their contents change,
//!   so a renewed certificate is served without a restart, also when the kubelet swaps a Secret
//!   volume's `..data` link.
//! - HTTP/2 is refused unless `--enable-http2` is set (ALPN offers only `http/1.1` and the server
//!   speaks only HTTP/1), because of the HTTP/2 "Stream Cancellation" and "Rapid Reset" CVEs.
//! - Requests are limited to [`MAX_REQUEST_BYTES`]; bodies that are too large or not JSON are
//!   answered with 413 or 400 and a message, never with a crash.
//! - In the self-signed mode (`--webhook-certs=self-signed`) there are no files: the manager
//!   makes and rotates the certificate itself, and the server gets it from a
//!   [`ServingCertResolver`](super::certs::ServingCertResolver) at every handshake
//!   ([`WebhookServer::bind_with_resolver`], see [`super::certs`]).
//! - TLS uses rustls with the ring crypto provider, the one kube's client already uses.

use std::collections::BTreeSet;
use std::convert::Infallible;
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::http::{StatusCode, Uri};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Json, Response};
use axum::routing::post;
use axum_server::Handle;
use axum_server::tls_rustls::RustlsConfig;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::ResolvesServerCert;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::Webhook;
use super::admission::AdmissionWebhook;
use super::conversion::{CONVERT_PATH, Converter};
use crate::metrics::WebhookMetrics;

/// The default of `--webhook-port`.
pub const DEFAULT_PORT: u16 = 9443;

/// The largest request accepted, like controller-runtime: the API server's limit for an object
/// is 3 MiB, and an update review carries the object twice.
pub const MAX_REQUEST_BYTES: usize = 7 * 1024 * 1024;

/// How often the certificate files are checked for changes. cert-manager renews certificates
/// well before they expire, so this only has to be much shorter than that margin.
const CERT_RELOAD_INTERVAL: Duration = Duration::from_secs(10);

/// How long open requests may take to finish once shutdown starts: the API server gives up on a
/// webhook after 10 s by default.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// How the webhook server serves, from the manager's `--webhook-*` and `--enable-http2` flags.
///
/// [`WebhookServerConfig::default`] is what the flags default to; the manager overrides the
/// fields that flags set:
///
/// ```
/// use std::net::SocketAddr;
/// use std::path::PathBuf;
///
/// use operator_rs_runtime::webhook::WebhookServerConfig;
///
/// let cert_dir: Option<PathBuf> = None; // --webhook-cert-path
/// let config = WebhookServerConfig {
///     address: SocketAddr::from(([0, 0, 0, 0], 9443)), // --webhook-port
///     cert_dir: cert_dir.unwrap_or_else(|| WebhookServerConfig::default().cert_dir),
///     ..WebhookServerConfig::default()
/// };
/// assert!(config.cert_path().ends_with("k8s-webhook-server/serving-certs/tls.crt"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookServerConfig {
    /// Where to listen: all interfaces on `--webhook-port`.
    pub address: SocketAddr,
    /// The folder with the certificate and key (`--webhook-cert-path`).
    pub cert_dir: PathBuf,
    /// The certificate's file name in `cert_dir` (`--webhook-cert-name`), a PEM chain, leaf first.
    pub cert_name: String,
    /// The private key's file name in `cert_dir` (`--webhook-cert-key`), PEM.
    pub key_name: String,
    /// Allow HTTP/2 (`--enable-http2`).
    pub enable_http2: bool,
}

impl Default for WebhookServerConfig {
    /// controller-runtime's defaults: port 9443 and the certificate in
    /// `<temp dir>/k8s-webhook-server/serving-certs/tls.{crt,key}`, where
    /// `config/default/manager_webhook_patch.yaml` mounts it.
    fn default() -> Self {
        WebhookServerConfig {
            address: SocketAddr::from(([0, 0, 0, 0], DEFAULT_PORT)),
            cert_dir: default_cert_dir(),
            cert_name: "tls.crt".to_owned(),
            key_name: "tls.key".to_owned(),
            enable_http2: false,
        }
    }
}

/// controller-runtime's default certificate folder, `<temp dir>/k8s-webhook-server/serving-certs`.
pub fn default_cert_dir() -> PathBuf {
    std::env::temp_dir()
        .join("k8s-webhook-server")
        .join("serving-certs")
}

impl WebhookServerConfig {
    /// The path of the certificate file.
    pub fn cert_path(&self) -> PathBuf {
        self.cert_dir.join(&self.cert_name)
    }

    /// The path of the private key file.
    pub fn key_path(&self) -> PathBuf {
        self.cert_dir.join(&self.key_name)
    }
}

/// Why the webhook server cannot start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// A certificate or key file cannot be read.
    #[error(
        "cannot read {path}: {source}; the webhooks need a serving certificate (in the cluster, \
         cert-manager provides it: see config/certmanager; under OLM, OLM mounts it); outside \
         the cluster (make run), give --webhook-url=https://<address the API server reaches>:<port> \
         (make run WEBHOOK_URL=…) for a certificate of the manager's own, or set \
         ENABLE_WEBHOOKS=false to run without webhooks"
    )]
    ReadCertificate {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        source: io::Error,
    },
    /// The certificate or key files do not hold a usable certificate and key.
    #[error("invalid certificate or key in {cert} and {key}: {reason}")]
    InvalidCertificate {
        /// The certificate file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
        /// What is wrong with them.
        reason: String,
    },
    /// rustls refused the TLS settings of a certificate resolver.
    #[error("cannot set up TLS for the webhook server: {0}")]
    InvalidResolver(String),
    /// Two webhooks want the same path, or a path is invalid.
    #[error("invalid webhook routes: {0}")]
    Routes(String),
    /// The address cannot be listened on.
    #[error("cannot listen on {address}: {source}")]
    Bind {
        /// The address.
        address: SocketAddr,
        /// What went wrong.
        source: io::Error,
    },
    /// The server failed while serving.
    #[error("the webhook server failed: {0}")]
    Serve(#[source] io::Error),
}

/// A webhook server that listens and has loaded its certificate, ready to [`serve`](Self::serve).
#[derive(Debug)]
pub struct WebhookServer {
    listener: TcpListener,
    local_addr: SocketAddr,
    router: Router,
    /// The paths the router serves webhooks on.
    paths: Vec<&'static str>,
    tls: RustlsConfig,
    /// The certificate files and their contents as loaded, to reload them when they change;
    /// `None` when a resolver provides the certificate.
    files: Option<(CertFiles, Loaded)>,
    enable_http2: bool,
}

impl WebhookServer {
    /// Loads the certificate, checks the webhooks' paths (see [`check_routes`]) and starts
    /// listening, so that every configuration problem shows at startup; requests wait until
    /// [`serve`](Self::serve).
    pub fn bind(config: &WebhookServerConfig, webhooks: Vec<Webhook>) -> Result<Self, ServerError> {
        let paths = paths(&webhooks);
        let router = router(webhooks)?;
        let cert_files = CertFiles {
            cert: config.cert_path(),
            key: config.key_path(),
        };
        let loaded = cert_files.read()?;
        let tls_config = cert_files.server_config(&loaded, config.enable_http2)?;
        let tls = RustlsConfig::from_config(Arc::new(tls_config));
        let (listener, local_addr) = listen(config.address)?;
        Ok(WebhookServer {
            listener,
            local_addr,
            router,
            paths,
            tls,
            files: Some((cert_files, loaded)),
            enable_http2: config.enable_http2,
        })
    }

    /// Like [`bind`](Self::bind), on `address`, with the certificate of each handshake from
    /// `resolver` instead of files: the self-signed mode's
    /// [`ServingCertResolver`](super::certs::ServingCertResolver), which swaps it when the
    /// Secret changes. HTTP/2 as [`WebhookServerConfig::enable_http2`].
    pub fn bind_with_resolver(
        address: SocketAddr,
        enable_http2: bool,
        webhooks: Vec<Webhook>,
        resolver: Arc<dyn ResolvesServerCert>,
    ) -> Result<Self, ServerError> {
        let paths = paths(&webhooks);
        let router = router(webhooks)?;
        let invalid = |reason: String| ServerError::InvalidResolver(reason);
        let mut tls_config = rustls::ServerConfig::builder_with_provider(ring_provider())
            .with_safe_default_protocol_versions()
            .map_err(|error| invalid(error.to_string()))?
            .with_no_client_auth()
            .with_cert_resolver(resolver);
        tls_config.alpn_protocols = alpn_protocols(enable_http2);
        let tls = RustlsConfig::from_config(Arc::new(tls_config));
        let (listener, local_addr) = listen(address)?;
        Ok(WebhookServer {
            listener,
            local_addr,
            router,
            paths,
            tls,
            files: None,
            enable_http2,
        })
    }

    /// Records controller-runtime's webhook metrics of every request to a webhook in `metrics`:
    /// `controller_runtime_webhook_requests_total`, `_requests_in_flight` and `_latency_seconds`,
    /// by path (their `webhook` label).
    pub fn with_metrics(mut self, metrics: &WebhookMetrics) -> Self {
        self.router = instrument(self.router, &self.paths, metrics);
        self
    }

    /// The address the server listens on (with the actual port when the configured one is 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Serves until `shutdown` is cancelled, then lets open requests finish (at most 10 s).
    pub async fn serve(self, shutdown: CancellationToken) -> Result<(), ServerError> {
        let handle = Handle::new();
        let mut server = axum_server::from_tcp_rustls(self.listener, self.tls.clone())
            .map_err(ServerError::Serve)?
            .handle(handle.clone());
        if !self.enable_http2 {
            server = server.http1_only();
        }
        tracing::info!(address = %self.local_addr, "serving webhooks");
        let serving = server.serve(self.router.into_make_service());
        let (tls, enable_http2) = (self.tls, self.enable_http2);
        let reloading = async move {
            match self.files {
                Some((files, loaded)) => {
                    reload_on_change(tls, files, loaded, enable_http2, CERT_RELOAD_INTERVAL).await
                }
                // The resolver swaps certificates itself.
                None => std::future::pending().await,
            }
        };
        // Only `serving` ever completes; the other two run alongside it and stop with it.
        tokio::select! {
            served = serving => served.map_err(ServerError::Serve),
            never = reloading => match never {},
            never = stop_on(shutdown, handle) => match never {},
        }
    }
}

/// Listens on `address`, for the server to accept connections from once it serves.
fn listen(address: SocketAddr) -> Result<(TcpListener, SocketAddr), ServerError> {
    let bind_error = |source| ServerError::Bind { address, source };
    let listener = TcpListener::bind(address).map_err(bind_error)?;
    listener.set_nonblocking(true).map_err(bind_error)?;
    let local_addr = listener.local_addr().map_err(bind_error)?;
    Ok((listener, local_addr))
}

/// The ring provider explicitly: kube's client uses it, and relying on the process-wide default
/// would panic if a dependency ever enabled a second provider.
fn ring_provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The protocols ALPN offers: HTTP/2 only when enabled.
fn alpn_protocols(enable_http2: bool) -> Vec<Vec<u8>> {
    if enable_http2 {
        vec![b"h2".to_vec(), b"http/1.1".to_vec()]
    } else {
        vec![b"http/1.1".to_vec()]
    }
}

/// Starts the graceful shutdown of the server when `shutdown` is cancelled.
async fn stop_on(shutdown: CancellationToken, handle: Handle<SocketAddr>) -> Infallible {
    shutdown.cancelled().await;
    handle.graceful_shutdown(Some(SHUTDOWN_GRACE));
    std::future::pending().await
}

/// The bytes of the certificate and key files as last read.
type Loaded = (Vec<u8>, Vec<u8>);

/// The certificate and key files.
#[derive(Clone, Debug, PartialEq, Eq)]
struct CertFiles {
    cert: PathBuf,
    key: PathBuf,
}

impl CertFiles {
    /// Reads both files; the bytes tell later whether they changed.
    fn read(&self) -> Result<(Vec<u8>, Vec<u8>), ServerError> {
        let read = |path: &Path| {
            std::fs::read(path).map_err(|source| ServerError::ReadCertificate {
                path: path.to_owned(),
                source,
            })
        };
        Ok((read(&self.cert)?, read(&self.key)?))
    }

    /// The rustls configuration that serves the certificate and key in `pem`.
    fn server_config(
        &self,
        (cert, key): &(Vec<u8>, Vec<u8>),
        enable_http2: bool,
    ) -> Result<rustls::ServerConfig, ServerError> {
        let invalid = |reason: String| ServerError::InvalidCertificate {
            cert: self.cert.clone(),
            key: self.key.clone(),
            reason,
        };
        let chain = CertificateDer::pem_slice_iter(cert)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|error| invalid(format!("cannot parse the certificate: {error}")))?;
        if chain.is_empty() {
            return Err(invalid("no certificate in the certificate file".to_owned()));
        }
        let key = PrivateKeyDer::from_pem_slice(key)
            .map_err(|error| invalid(format!("cannot parse the private key: {error}")))?;
        let mut config = rustls::ServerConfig::builder_with_provider(ring_provider())
            .with_safe_default_protocol_versions()
            .map_err(|error| invalid(error.to_string()))?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|error| invalid(error.to_string()))?;
        config.alpn_protocols = alpn_protocols(enable_http2);
        Ok(config)
    }
}

/// Polls the certificate files and swaps in the new certificate when they change. A broken
/// update (say, the key written before the certificate) is logged, and the previous certificate
/// stays in use until the files are consistent again.
async fn reload_on_change(
    tls: RustlsConfig,
    files: CertFiles,
    mut loaded: (Vec<u8>, Vec<u8>),
    enable_http2: bool,
    interval: Duration,
) -> Infallible {
    let mut ticks = tokio::time::interval(interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let current = match files.read() {
            Ok(current) if current != loaded => current,
            Ok(_) => continue,
            Err(error) => {
                tracing::error!(%error, "cannot re-read the webhook certificate");
                continue;
            }
        };
        match files.server_config(&current, enable_http2) {
            Ok(config) => {
                tls.reload_from_config(Arc::new(config));
                tracing::info!(cert = %files.cert.display(), "reloaded the webhook certificate");
                loaded = current;
            }
            Err(error) => tracing::error!(%error, "keeping the previous webhook certificate"),
        }
    }
}

/// Checks that `webhooks` can be served together: every admission webhook has a path of its
/// own that starts with `/` and holds no braces, `*`, `?` or `#` (and is not [`CONVERT_PATH`]),
/// and no kind has two conversion webhooks.
///
/// [`WebhookServer::bind`] and [`router`] check this, and so does `make manifests`
/// ([`crate::manifests::Manifests::render`]), so that a conflict shows before deploying.
pub fn check_routes(webhooks: &[Webhook]) -> Result<(), ServerError> {
    let mut paths = BTreeSet::new();
    let mut converters: Vec<&Converter> = Vec::new();
    for webhook in webhooks {
        match webhook {
            Webhook::Admission(webhook) => {
                let path = webhook.registration().path;
                if !path.starts_with('/') || path.contains(['{', '}', '*', '?', '#']) {
                    return Err(ServerError::Routes(format!(
                        "webhook {}: path {path:?} must start with / and hold no braces, *, ? or #",
                        webhook.registration().name
                    )));
                }
                if path == CONVERT_PATH || !paths.insert(path) {
                    return Err(ServerError::Routes(format!(
                        "webhook {}: path {path} is taken by another webhook",
                        webhook.registration().name
                    )));
                }
            }
            Webhook::Conversion(converter) => {
                let taken = converters
                    .iter()
                    .any(|c| c.group() == converter.group() && c.kind() == converter.kind());
                if taken {
                    return Err(ServerError::Routes(format!(
                        "kind {} of group {} has two conversion webhooks",
                        converter.kind(),
                        converter.group()
                    )));
                }
                converters.push(converter);
            }
        }
    }
    Ok(())
}

/// The routes of `webhooks`: one per admission webhook, plus [`CONVERT_PATH`] for every
/// conversion webhook, and a 404 with a message for every other path. Fails on paths that are
/// invalid or taken twice (see [`check_routes`]; axum would panic).
///
/// [`WebhookServer`] serves this router over HTTPS; tests can call it directly, e.g. with
/// `tower::ServiceExt::oneshot`.
pub fn router(webhooks: Vec<Webhook>) -> Result<Router, ServerError> {
    check_routes(&webhooks)?;
    let mut router = Router::new();
    let mut converters: Vec<Converter> = Vec::new();
    for webhook in webhooks {
        match webhook {
            Webhook::Admission(webhook) => {
                let path = webhook.registration().path;
                let webhook = Arc::new(webhook);
                router = router.route(path, post(move |body| admit(webhook, body)));
            }
            Webhook::Conversion(converter) => converters.push(converter),
        }
    }
    if !converters.is_empty() {
        let converters = Arc::new(converters);
        router = router.route(CONVERT_PATH, post(move |body| convert(converters, body)));
    }
    Ok(router
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(MAX_REQUEST_BYTES)))
}

/// The paths that `webhooks` are served on: each admission webhook's, and [`CONVERT_PATH`] for
/// the conversion webhooks.
fn paths(webhooks: &[Webhook]) -> Vec<&'static str> {
    let mut paths = Vec::new();
    for webhook in webhooks {
        let path = match webhook {
            Webhook::Admission(webhook) => webhook.registration().path,
            Webhook::Conversion(_) => CONVERT_PATH,
        };
        if !paths.contains(&path) {
            paths.push(path);
        }
    }
    paths
}

/// `router` (of [`router`]), recording the webhook metrics of the requests to `paths` (their
/// series start at 0) in `metrics`. Requests to other paths, answered 404, are not recorded.
pub fn instrument(router: Router, paths: &[&str], metrics: &WebhookMetrics) -> Router {
    if paths.is_empty() {
        // No webhook, nothing to record (and axum refuses a route layer without routes).
        return router;
    }
    for path in paths {
        metrics.serve(path);
    }
    router.route_layer(middleware::from_fn_with_state(metrics.clone(), record))
}

/// Records one request to a webhook: in flight while it is served, then its status code and
/// latency.
async fn record(
    State(metrics): State<WebhookMetrics>,
    path: MatchedPath,
    request: Request,
    next: Next,
) -> Response {
    let served = metrics.request(path.as_str());
    let response = next.run(request).await;
    served.answered(response.status().as_u16());
    response
}

/// Serves an admission webhook.
async fn admit(webhook: Arc<AdmissionWebhook>, body: Result<Bytes, BytesRejection>) -> Response {
    let review = match json_body(body) {
        Ok(review) => review,
        Err(error) => return error.into_response(),
    };
    let response = webhook.admit(&review);
    tracing::debug!(
        webhook = webhook.registration().name,
        uid = %response.uid,
        allowed = response.allowed,
        patched = response.patch.is_some(),
        reason = %response.result.message,
        "admission review"
    );
    Json(response.into_review()).into_response()
}

/// Serves the conversion webhook.
async fn convert(converters: Arc<Vec<Converter>>, body: Result<Bytes, BytesRejection>) -> Response {
    match json_body(body) {
        Ok(review) => Json(super::conversion::review(&converters, &review)).into_response(),
        Err(error) => error.into_response(),
    }
}

/// The request body as JSON, or the status and message to answer with: 413 when the body is too
/// large, 400 when it is not JSON. (The API server always sends JSON; this is for humans with
/// curl.)
fn json_body(body: Result<Bytes, BytesRejection>) -> Result<Value, (StatusCode, String)> {
    let body = body.map_err(|rejection| (rejection.status(), rejection.body_text()))?;
    serde_json::from_slice(&body).map_err(|error| {
        let message = format!("the request body is not JSON: {error}\n");
        (StatusCode::BAD_REQUEST, message)
    })
}

/// Answers requests for paths without a webhook.
async fn not_found(uri: Uri) -> Response {
    let message = format!("no webhook is served at {}\n", uri.path());
    (StatusCode::NOT_FOUND, message).into_response()
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use axum::body::Body;
    use axum::http::{Method, Request, header};
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;
    use kube::core::admission::{AdmissionRequest, AdmissionReview, Operation};
    use kube::core::conversion::ConversionReview;
    use kube::core::{DynamicObject, TypeMeta};
    use serde_json::json;
    use tower::ServiceExt as _;

    use super::*;
    use crate::webhook::admission::{Defaulter, Denial, FailurePolicy, Registration};

    /// Labels every ConfigMap `defaulted: "true"`.
    struct LabelDefaulter;

    impl Defaulter<ConfigMap> for LabelDefaulter {
        fn apply_defaults(
            &self,
            config_map: &mut ConfigMap,
            _request: &AdmissionRequest<ConfigMap>,
        ) -> Result<(), Denial> {
            let labels = config_map.metadata.labels.get_or_insert_default();
            labels.insert("defaulted".to_owned(), "true".to_owned());
            Ok(())
        }
    }

    const PATH: &str = "/mutate--v1-configmap";

    fn webhooks() -> Vec<Webhook> {
        let registration = Registration {
            name: "mconfigmap-v1.kb.io",
            path: PATH,
            operations: &[Operation::Create],
            failure_policy: FailurePolicy::Fail,
        };
        vec![Webhook::defaulting(registration, LabelDefaulter)]
    }

    fn config_map() -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some("settings".to_owned()),
                namespace: Some("default".to_owned()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
    }

    /// The AdmissionReview the API server sends to create [`config_map`]. (A project's tests
    /// build theirs with operator-rs-testing's `webhook::review`, which this crate's unit tests
    /// cannot link.)
    fn create_review() -> serde_json::Value {
        json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
                "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
                "resource": {"group": "", "version": "v1", "resource": "configmaps"},
                "name": "settings",
                "namespace": "default",
                "operation": "CREATE",
                "userInfo": {"username": "jane@example.com"},
                "object": config_map(),
            }
        })
    }

    fn post_request(path: &str, body: impl Into<Body>) -> Request<Body> {
        Request::builder()
            .method(Method::POST)
            .uri(path)
            .header(header::CONTENT_TYPE, "application/json")
            .body(body.into())
            .unwrap()
    }

    async fn call(router: Router, request: Request<Body>) -> (StatusCode, Bytes) {
        let response = router.oneshot(request).await.unwrap();
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        (status, body)
    }

    #[tokio::test]
    async fn serves_admission_reviews() {
        let body = create_review().to_string();
        let (status, body) = call(router(webhooks()).unwrap(), post_request(PATH, body)).await;
        assert_eq!(status, StatusCode::OK);
        let review: AdmissionReview<DynamicObject> = serde_json::from_slice(&body).unwrap();
        let response = review.response.unwrap();
        assert!(response.allowed);
        assert!(response.patch.is_some());
    }

    /// controller-runtime's webhook metrics, by path: every answer by code, its latency, and
    /// nothing for paths that serve no webhook.
    #[tokio::test]
    async fn records_webhook_metrics_by_path() {
        let metrics = crate::metrics::Metrics::new();
        let served = paths(&webhooks());
        let router = instrument(router(webhooks()).unwrap(), &served, &metrics.webhooks());
        let body = create_review().to_string();
        call(router.clone(), post_request(PATH, body)).await;
        call(router.clone(), post_request(PATH, "{not json")).await;
        call(router, post_request("/nothing-here", "{}")).await;

        let text = metrics.encode().unwrap();
        let sample = |series: &str| {
            let line = text.lines().find_map(|line| line.strip_prefix(series));
            line.and_then(|value| value.trim().parse::<f64>().ok())
        };
        let requests = |code: &str| {
            // Built with concat, as doubled braces would clash with the project templates' syntax.
            let labels = format!(r#"webhook="{PATH}",code="{code}""#);
            sample(&(String::from("controller_runtime_webhook_requests_total{") + &labels + "} "))
        };
        assert_eq!(requests("200"), Some(1.0), "{text}");
        assert_eq!(requests("400"), Some(1.0));
        assert_eq!(
            requests("500"),
            Some(0.0),
            "started at 0, as controller-runtime's"
        );
        let path = format!(r#"webhook="{PATH}""#);
        let in_flight =
            String::from("controller_runtime_webhook_requests_in_flight{") + &path + "} ";
        assert_eq!(sample(&in_flight), Some(0.0));
        let latency =
            String::from("controller_runtime_webhook_latency_seconds_count{") + &path + "} ";
        assert_eq!(sample(&latency), Some(2.0));
        assert!(!text.contains("/nothing-here"));
    }

    #[tokio::test]
    async fn answers_bad_requests_with_a_message() {
        let router = router(webhooks()).unwrap();
        let (status, body) = call(router.clone(), post_request(PATH, "{not json")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(String::from_utf8_lossy(&body).contains("not JSON"));

        let too_large = vec![b' '; MAX_REQUEST_BYTES + 1];
        let (status, _) = call(router.clone(), post_request(PATH, too_large)).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);

        let (status, body) = call(router.clone(), post_request("/nothing", "{}")).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert!(String::from_utf8_lossy(&body).contains("/nothing"));

        // JSON that is not a review is an AdmissionReview error, which the API server shows.
        let (status, body) = call(router, post_request(PATH, "{}")).await;
        assert_eq!(status, StatusCode::OK);
        let review: AdmissionReview<DynamicObject> = serde_json::from_slice(&body).unwrap();
        assert!(!review.response.unwrap().allowed);
    }

    #[tokio::test]
    async fn serves_conversions_only_when_a_kind_converts() {
        let (status, _) = call(
            router(webhooks()).unwrap(),
            post_request(CONVERT_PATH, "{}"),
        )
        .await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    }

    #[test]
    fn refuses_conflicting_routes() {
        let twice = webhooks().into_iter().chain(webhooks()).collect();
        assert!(matches!(router(twice), Err(ServerError::Routes(_))));

        let registration = Registration {
            name: "bad",
            path: "mutate",
            operations: &[Operation::Create],
            failure_policy: FailurePolicy::Ignore,
        };
        let bad = vec![Webhook::defaulting(registration, LabelDefaulter)];
        assert!(matches!(router(bad), Err(ServerError::Routes(_))));
    }

    /// A certificate for `localhost` and 127.0.0.1, written to a fresh folder.
    struct TestCert {
        dir: PathBuf,
        cert_pem: String,
    }

    impl TestCert {
        fn new(name: &str) -> Self {
            let names = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
            let certified = rcgen::generate_simple_self_signed(names).unwrap();
            let dir = std::env::temp_dir()
                .join(format!("webhook-server-test-{name}-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let cert_pem = certified.cert.pem();
            std::fs::write(dir.join("tls.crt"), &cert_pem).unwrap();
            std::fs::write(dir.join("tls.key"), certified.signing_key.serialize_pem()).unwrap();
            TestCert { dir, cert_pem }
        }

        fn config(&self) -> WebhookServerConfig {
            WebhookServerConfig {
                address: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
                cert_dir: self.dir.clone(),
                ..WebhookServerConfig::default()
            }
        }
    }

    impl Drop for TestCert {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }

    /// OLM mounts its certificate Secret the way the kubelet mounts every Secret volume: the
    /// files are links through `..data` to a timestamped folder, and a renewal swaps the link.
    #[cfg(unix)]
    #[test]
    fn reads_a_secret_volume_as_olm_mounts_it() {
        let first = TestCert::new("olm-first");
        let second = TestCert::new("olm-second");
        let volume =
            std::env::temp_dir().join(format!("webhook-server-test-olm-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&volume);
        std::fs::create_dir_all(&volume).unwrap();
        let link_data = |target: &Path| {
            let tmp = volume.join("..data_tmp");
            std::os::unix::fs::symlink(target, &tmp).unwrap();
            std::fs::rename(&tmp, volume.join("..data")).unwrap();
        };
        link_data(&first.dir);
        for file in ["tls.crt", "tls.key"] {
            std::os::unix::fs::symlink(Path::new("..data").join(file), volume.join(file)).unwrap();
        }
        let config = WebhookServerConfig {
            cert_dir: volume.clone(),
            ..first.config()
        };
        let server = WebhookServer::bind(&config, webhooks());
        assert!(server.is_ok(), "{:?}", server.err());
        let files = CertFiles {
            cert: config.cert_path(),
            key: config.key_path(),
        };
        assert_eq!(files.read().unwrap().0, first.cert_pem.as_bytes());
        link_data(&second.dir);
        assert_eq!(files.read().unwrap().0, second.cert_pem.as_bytes());
        let _ = std::fs::remove_dir_all(&volume);
    }

    #[test]
    fn offers_http2_only_when_enabled() {
        let cert = TestCert::new("alpn");
        let files = CertFiles {
            cert: cert.config().cert_path(),
            key: cert.config().key_path(),
        };
        let pem = files.read().unwrap();
        let http1 = files.server_config(&pem, false).unwrap();
        assert_eq!(http1.alpn_protocols, [b"http/1.1".to_vec()]);
        let http2 = files.server_config(&pem, true).unwrap();
        assert_eq!(http2.alpn_protocols, [b"h2".to_vec(), b"http/1.1".to_vec()]);
    }

    #[test]
    fn reports_missing_and_invalid_certificates() {
        let cert = TestCert::new("invalid");
        let mut config = cert.config();
        config.cert_name = "missing.crt".to_owned();
        let error = WebhookServer::bind(&config, webhooks()).unwrap_err();
        assert!(
            matches!(error, ServerError::ReadCertificate { .. }),
            "{error}"
        );
        assert!(error.to_string().contains("ENABLE_WEBHOOKS=false"));
        assert!(error.to_string().contains("--webhook-url"));

        std::fs::write(cert.dir.join("tls.crt"), "not a certificate").unwrap();
        let error = WebhookServer::bind(&cert.config(), webhooks()).unwrap_err();
        assert!(
            matches!(error, ServerError::InvalidCertificate { .. }),
            "{error}"
        );
    }

    #[tokio::test]
    async fn reloads_a_renewed_certificate() {
        let cert = TestCert::new("reload");
        let config = cert.config();
        let files = CertFiles {
            cert: config.cert_path(),
            key: config.key_path(),
        };
        let loaded = files.read().unwrap();
        let tls = RustlsConfig::from_config(Arc::new(files.server_config(&loaded, false).unwrap()));
        let before = tls.get_inner();
        let reloading = tokio::spawn(reload_on_change(
            tls.clone(),
            files,
            loaded,
            false,
            Duration::from_millis(20),
        ));

        // A half-written update keeps the old certificate; the complete one replaces it.
        std::fs::write(config.cert_path(), "garbage").unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(Arc::ptr_eq(&before, &tls.get_inner()));
        let renewed = TestCert::new("reload-renewed");
        std::fs::copy(renewed.dir.join("tls.crt"), config.cert_path()).unwrap();
        std::fs::copy(renewed.dir.join("tls.key"), config.key_path()).unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(!Arc::ptr_eq(&before, &tls.get_inner()));
        reloading.abort();
    }

    /// A kube client that trusts the test certificate, as the API server trusts the CA bundle.
    fn client(cert: &TestCert, address: SocketAddr) -> kube::Client {
        let url = format!("https://{address}").parse().unwrap();
        let mut config = kube::Config::new(url);
        let der = CertificateDer::from_pem_slice(cert.cert_pem.as_bytes()).unwrap();
        config.root_cert = Some(vec![der.to_vec()]);
        kube::Client::try_from(config).unwrap()
    }

    /// The whole path: TLS, routing, admission and conversion, and graceful shutdown.
    #[tokio::test]
    async fn serves_reviews_over_https_until_shutdown() {
        let cert = TestCert::new("https");
        let mut all = webhooks();
        all.push(Webhook::conversion(Converter::new::<ConfigMap>(vec![])));
        let server = WebhookServer::bind(&cert.config(), all).unwrap();
        let address = server.local_addr();
        let shutdown = CancellationToken::new();
        let serving = tokio::spawn(server.serve(shutdown.clone()));
        let client = client(&cert, address);

        let admission = create_review();
        let answer: AdmissionReview<DynamicObject> = client
            .request(json_request(PATH, &admission))
            .await
            .unwrap();
        let response = answer.response.unwrap();
        assert!(response.allowed);
        assert!(response.patch.is_some());

        let conversion = json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "ConversionReview",
            "request": {"uid": "9", "desiredAPIVersion": "v1", "objects": [config_map()]},
        });
        let answer: ConversionReview = client
            .request(json_request(CONVERT_PATH, &conversion))
            .await
            .unwrap();
        let response = answer.response.unwrap();
        assert!(response.result.is_success(), "{:?}", response.result);
        assert_eq!(response.converted_objects.len(), 1);
        assert_eq!(
            answer.types,
            TypeMeta {
                api_version: "apiextensions.k8s.io/v1".to_owned(),
                kind: "ConversionReview".to_owned(),
            }
        );

        shutdown.cancel();
        let stopped = tokio::time::timeout(Duration::from_secs(15), serving).await;
        assert!(matches!(stopped, Ok(Ok(Ok(())))), "{stopped:?}");
    }

    fn json_request(path: &str, body: &Value) -> Request<Vec<u8>> {
        Request::builder()
            .method(Method::POST)
            .uri(path)
            .header(header::CONTENT_TYPE, "application/json")
            .body(body.to_string().into_bytes())
            .unwrap()
    }
}
