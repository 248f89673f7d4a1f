//! The metrics server: `GET /metrics` on `--metrics-bind-address`, like controller-runtime's.
//!
//! - `--metrics-secure` (the default): HTTPS, and every request must carry a bearer token that may
//!   `get` `/metrics` (see [`super::Authorizer`]). The certificate comes from `--metrics-cert-path`
//!   (`--metrics-cert-name`, `--metrics-cert-key`; re-read when the files change, e.g. when
//!   cert-manager renews them), or is generated and self-signed at startup.
//! - `--metrics-secure=false`: plain HTTP without authentication, for local development.
//!
//! HTTP/2 is refused unless `--enable-http2` is set (ALPN offers only `http/1.1` and the server
//! speaks only HTTP/1), because of the HTTP/2 "Stream Cancellation" and "Rapid Reset" CVEs.

use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum_server::Handle;
use axum_server::tls_rustls::{RustlsAcceptor, RustlsConfig};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::auth::require_authorization;
use super::{Authorizer, CONTENT_TYPE, Metrics};

/// How long open scrapes may take to finish once shutdown starts.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// How often the certificate files are checked for changes.
const CERT_RELOAD_INTERVAL: Duration = Duration::from_secs(10);

/// How the metrics server serves, from the `--metrics-*` and `--enable-http2` flags.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// HTTPS with authentication and authorization (`--metrics-secure`), or plain HTTP.
    pub secure: bool,
    /// Allow HTTP/2 (`--enable-http2`).
    pub enable_http2: bool,
    /// The certificate files, or `None` for a self-signed certificate.
    pub cert_files: Option<CertFiles>,
}

/// A certificate and its private key as PEM files (`--metrics-cert-path` joined with
/// `--metrics-cert-name` and `--metrics-cert-key`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CertFiles {
    /// The certificate chain, leaf first.
    pub cert: PathBuf,
    /// The private key (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
}

impl CertFiles {
    /// `dir/cert_name` and `dir/key_name`.
    pub fn new(dir: &Path, cert_name: &str, key_name: &str) -> Self {
        CertFiles {
            cert: dir.join(cert_name),
            key: dir.join(key_name),
        }
    }

    /// Reads both files. Returns the raw bytes too, to notice when they change.
    fn read(&self) -> Result<(Vec<u8>, Vec<u8>), ServerError> {
        let read = |path: &Path| {
            std::fs::read(path).map_err(|source| ServerError::ReadCert {
                path: path.to_owned(),
                source,
            })
        };
        Ok((read(&self.cert)?, read(&self.key)?))
    }
}

/// What can go wrong when starting or running the metrics server. The messages leave the
/// underlying cause to [`std::error::Error::source`], which `anyhow`'s `{:#}` prints after them.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// A certificate or key file cannot be read.
    #[error("cannot read {path}")]
    ReadCert {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A certificate or key file holds no usable PEM data.
    #[error("invalid PEM in {path}: {message}")]
    Pem {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// rustls refused the certificate and key (e.g. they do not match).
    #[error("invalid TLS certificate or key")]
    Tls(#[from] rustls::Error),
    /// The self-signed certificate could not be generated.
    #[error("cannot generate a self-signed certificate")]
    SelfSigned(#[from] super::self_signed::SelfSignedError),
    /// The server failed while running.
    #[error("metrics server failed")]
    Serve(#[from] io::Error),
}

/// The routes: `GET /metrics`, behind [`Authorizer`] when one is given.
pub fn router(metrics: Metrics, authorizer: Option<Authorizer>) -> Router {
    let router = Router::new()
        .route("/metrics", get(scrape))
        .with_state(metrics);
    match authorizer {
        Some(authorizer) => router.layer(axum::middleware::from_fn_with_state(
            authorizer,
            require_authorization,
        )),
        None => router,
    }
}

async fn scrape(State(metrics): State<Metrics>) -> Response {
    match metrics.encode() {
        Ok(text) => ([(header::CONTENT_TYPE, CONTENT_TYPE)], text).into_response(),
        Err(error) => {
            tracing::error!("cannot encode the metrics: {error}");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

/// Binds the metrics address. Done at startup so that a port conflict is reported at once.
pub async fn bind(address: SocketAddr) -> io::Result<TcpListener> {
    TcpListener::bind(address).await
}

/// Prepares TLS before serving, so that bad certificate files fail the startup instead of every
/// scrape. Returns `None` for plain HTTP.
pub fn tls_config(options: &Options) -> Result<Option<RustlsConfig>, ServerError> {
    if !options.secure {
        return Ok(None);
    }
    let config = match &options.cert_files {
        Some(files) => {
            let (cert, key) = files.read()?;
            server_config(files, &cert, &key, options.enable_http2)?
        }
        None => self_signed_config(options.enable_http2)?,
    };
    Ok(Some(RustlsConfig::from_config(Arc::new(config))))
}

/// Serves `router` on `listener` until `shutdown` is cancelled: HTTPS when `tls` is given (see
/// [`tls_config`]), plain HTTP otherwise.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    options: Options,
    tls: Option<RustlsConfig>,
    shutdown: CancellationToken,
) -> Result<(), ServerError> {
    let handle: Handle<SocketAddr> = Handle::new();
    let stopper = {
        let (handle, shutdown) = (handle.clone(), shutdown.clone());
        tokio::spawn(async move {
            shutdown.cancelled().await;
            handle.graceful_shutdown(Some(SHUTDOWN_GRACE));
        })
    };
    let mut server = axum_server::Server::from_listener(listener).handle(handle);
    if !options.enable_http2 {
        server = server.http1_only();
    }
    let service = router.into_make_service();
    let result = match tls {
        None => server.serve(service).await,
        Some(tls) => {
            if let Some(files) = options.cert_files.clone() {
                tokio::spawn(reload_on_change(
                    files,
                    tls.clone(),
                    options.enable_http2,
                    shutdown,
                ));
            }
            server
                .acceptor(RustlsAcceptor::new(tls))
                .serve(service)
                .await
        }
    };
    stopper.abort();
    Ok(result?)
}

/// A rustls server configuration with the ring provider (the one kube uses) and ALPN limited to
/// HTTP/1.1 unless HTTP/2 is enabled.
fn server_config(
    files: &CertFiles,
    cert: &[u8],
    key: &[u8],
    enable_http2: bool,
) -> Result<rustls::ServerConfig, ServerError> {
    let pem_error = |path: &Path| {
        let path = path.to_owned();
        move |error: rustls::pki_types::pem::Error| ServerError::Pem {
            path,
            message: error.to_string(),
        }
    };
    let chain = CertificateDer::pem_slice_iter(cert)
        .collect::<Result<Vec<_>, _>>()
        .map_err(pem_error(&files.cert))?;
    if chain.is_empty() {
        return Err(ServerError::Pem {
            path: files.cert.clone(),
            message: "no certificate found".to_owned(),
        });
    }
    let key = PrivateKeyDer::from_pem_slice(key).map_err(pem_error(&files.key))?;
    build_server_config(chain, key, enable_http2)
}

/// A certificate for `localhost` and this host's name, valid until the process exits (it is
/// regenerated at every start, like controller-runtime's).
fn self_signed_config(enable_http2: bool) -> Result<rustls::ServerConfig, ServerError> {
    let mut names = vec!["localhost".to_owned()];
    if let Ok(host) = std::env::var("HOSTNAME")
        && !host.is_empty()
    {
        names.push(host);
    }
    let (certificate, key) = super::self_signed::certificate(&names)?;
    build_server_config(vec![certificate], key, enable_http2)
}

fn build_server_config(
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    enable_http2: bool,
) -> Result<rustls::ServerConfig, ServerError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(chain, key)?;
    config.alpn_protocols = alpn_protocols(enable_http2);
    Ok(config)
}

fn alpn_protocols(enable_http2: bool) -> Vec<Vec<u8>> {
    if enable_http2 {
        vec![b"h2".to_vec(), b"http/1.1".to_vec()]
    } else {
        vec![b"http/1.1".to_vec()]
    }
}

/// Re-reads the certificate files every [`CERT_RELOAD_INTERVAL`] and switches to them when they
/// changed (mounted Secrets are updated in place when cert-manager renews a certificate). A broken
/// update is logged and the previous certificate kept.
async fn reload_on_change(
    files: CertFiles,
    tls: RustlsConfig,
    enable_http2: bool,
    shutdown: CancellationToken,
) {
    let mut current = files.read().ok();
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(CERT_RELOAD_INTERVAL) => {}
        }
        let read = match files.read() {
            Ok(read) => read,
            Err(error) => {
                tracing::warn!("keeping the current metrics certificate: {error}");
                continue;
            }
        };
        if current.as_ref() == Some(&read) {
            continue;
        }
        match server_config(&files, &read.0, &read.1, enable_http2) {
            Ok(config) => {
                tls.reload_from_config(Arc::new(config));
                tracing::info!(cert = %files.cert.display(), "reloaded the metrics certificate");
                current = Some(read);
            }
            Err(error) => tracing::warn!("keeping the current metrics certificate: {error}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use axum::body::Body;
    use axum::http::{Method, Request};
    use serde_json::{Value, json};
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    use tower::ServiceExt as _;

    use super::*;

    #[tokio::test]
    async fn serves_metrics_over_plain_http() {
        let metrics = Metrics::new();
        metrics.controller("captain", 1);
        let listener = bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
        let address = listener.local_addr().unwrap();
        let shutdown = CancellationToken::new();
        let options = Options {
            secure: false,
            enable_http2: false,
            cert_files: None,
        };
        let server = tokio::spawn(serve(
            listener,
            router(metrics, None),
            options,
            None,
            shutdown.clone(),
        ));

        let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
        stream
            .write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).await.unwrap();
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
        assert!(
            response.contains("application/openmetrics-text"),
            "{response}"
        );
        assert!(
            response.contains(
                r#"controller_runtime_reconcile_total{controller="captain",result="success"} 0"#
            ),
            "{response}"
        );

        shutdown.cancel();
        tokio::time::timeout(Duration::from_secs(10), server)
            .await
            .unwrap()
            .unwrap()
            .unwrap();
    }

    #[test]
    fn tls_offers_http2_only_when_enabled() {
        let config = self_signed_config(false).unwrap();
        assert_eq!(config.alpn_protocols, vec![b"http/1.1".to_vec()]);
        let config = self_signed_config(true).unwrap();
        assert_eq!(config.alpn_protocols[0], b"h2".to_vec());
    }

    #[test]
    fn loads_certificate_files_and_reports_bad_ones() {
        let dir = std::env::temp_dir().join(format!("metrics-certs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let generated = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
        std::fs::write(dir.join("tls.crt"), generated.cert.pem()).unwrap();
        std::fs::write(dir.join("tls.key"), generated.signing_key.serialize_pem()).unwrap();
        let files = CertFiles::new(&dir, "tls.crt", "tls.key");
        let options = Options {
            secure: true,
            enable_http2: false,
            cert_files: Some(files.clone()),
        };
        assert!(tls_config(&options).unwrap().is_some());

        std::fs::write(dir.join("tls.crt"), "not a certificate").unwrap();
        assert!(matches!(tls_config(&options), Err(ServerError::Pem { .. })));
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(matches!(
            tls_config(&options),
            Err(ServerError::ReadCert { .. })
        ));
        // Plain HTTP needs no certificate at all.
        let plain = Options {
            secure: false,
            ..options
        };
        assert!(tls_config(&plain).unwrap().is_none());
    }

    /// The API server's answers to the reviews, by the token the caller sent.
    fn review_answer(request: &Value) -> Value {
        match request["kind"].as_str() {
            Some("TokenReview") => {
                let token = request["spec"]["token"].as_str().unwrap_or_default();
                let user = match token {
                    "reader-token" => {
                        json!({"username": "system:serviceaccount:monitoring:prometheus", "groups": ["system:serviceaccounts"]})
                    }
                    "other-token" => json!({"username": "alice"}),
                    _ => {
                        return json!({"kind": "TokenReview", "apiVersion": "authentication.k8s.io/v1", "spec": {}, "status": {"authenticated": false}});
                    }
                };
                json!({"kind": "TokenReview", "apiVersion": "authentication.k8s.io/v1", "spec": {}, "status": {"authenticated": true, "user": user}})
            }
            Some("SubjectAccessReview") => {
                let spec = &request["spec"];
                let allowed = spec["user"] == "system:serviceaccount:monitoring:prometheus"
                    && spec["nonResourceAttributes"] == json!({"path": "/metrics", "verb": "get"});
                json!({"kind": "SubjectAccessReview", "apiVersion": "authorization.k8s.io/v1", "spec": spec, "status": {"allowed": allowed}})
            }
            other => panic!("unexpected request kind {other:?}"),
        }
    }

    #[tokio::test]
    async fn authenticates_and_authorizes_every_request() {
        let (client, mut server) = crate::manager::client::scripted();
        let reviews = tokio::spawn(async move {
            let mut paths = BTreeMap::<String, usize>::new();
            while let Some((request, respond)) = server.next_request().await {
                assert_eq!(request.method(), Method::POST);
                *paths.entry(request.uri().path().to_owned()).or_default() += 1;
                let bytes = request.into_body().collect_bytes().await.unwrap();
                let answer = review_answer(&serde_json::from_slice(&bytes).unwrap());
                respond.send_json(201, &answer);
            }
            paths
        });
        let app = router(Metrics::new(), Some(Authorizer::new(client)));
        let status = |authorization: Option<&str>| {
            let app = app.clone();
            let mut request = Request::get("/metrics");
            if let Some(value) = authorization {
                request = request.header(header::AUTHORIZATION, value);
            }
            async move {
                app.oneshot(request.body(Body::empty()).unwrap())
                    .await
                    .unwrap()
                    .status()
            }
        };
        assert_eq!(status(None).await, StatusCode::UNAUTHORIZED);
        assert_eq!(
            status(Some("Basic dXNlcjpwYXNz")).await,
            StatusCode::UNAUTHORIZED
        );
        assert_eq!(
            status(Some("Bearer bad-token")).await,
            StatusCode::UNAUTHORIZED
        );
        assert_eq!(
            status(Some("Bearer other-token")).await,
            StatusCode::FORBIDDEN
        );
        assert_eq!(status(Some("Bearer reader-token")).await, StatusCode::OK);
        drop(app);
        let paths = reviews.await.unwrap();
        // No review without a bearer token; one TokenReview per token, one SAR per authenticated user.
        assert_eq!(
            paths.get("/apis/authentication.k8s.io/v1/tokenreviews"),
            Some(&3)
        );
        assert_eq!(
            paths.get("/apis/authorization.k8s.io/v1/subjectaccessreviews"),
            Some(&2)
        );
    }
}
