//! Webhooks: admission webhooks that default and validate objects as the API server admits them,
//! and conversion webhooks that convert custom resources between their versions.
//!
//! A project's webhooks live in its own `src/webhook/`, one module per kind, written by
//! `operator-rs create webhook`: `src/webhook/<version>/<kind>/` in a single-group project, and
//! `src/webhook/<group>/<version>/<kind>/` in a multigroup one. Each holds one file per webhook:
//!
//! - `defaulting.rs`: a [`Defaulter`] that sets default values (a mutating webhook);
//! - `validation.rs`: a [`Validator`] that accepts or refuses creates, updates and deletes;
//! - `conversion.rs`: the [`Converter`] between the kind's versions, with one
//!   `conversion_<version>.rs` per spoke version.
//!
//! The project's `webhooks()` (in `src/webhook/mod.rs`) lists them all as [`Webhook`]s. The
//! manager serves that list over HTTPS with [`start`] (see [`server`]), and `make manifests`
//! writes `config/webhook/manifests.yaml` from the same list ([`webhook_manifests`], through
//! [`crate::manifests::Manifests`]), so the paths the API server calls are always the ones
//! served.
//!
//! Under `make run`, the manager runs on your machine, outside the cluster: give it
//! `--webhook-url` (`make run WEBHOOK_URL=https://<address>:9443`, an address the API server can
//! reach) and it registers temporary webhook configurations that call it there, until it exits
//! ([`local`]). Or set `ENABLE_WEBHOOKS=false` to run the manager without webhooks.
//!
//! # Example
//!
//! A validating webhook for ConfigMaps, served and registered:
//!
//! ```
//! use operator_rs_runtime::k8s_openapi::api::core::v1::ConfigMap;
//! use operator_rs_runtime::webhook::{
//!     self, AdmissionRequest, Denial, FailurePolicy, Operation, Registration, Validator, Warnings,
//!     Webhook,
//! };
//!
//! struct NeedsData;
//!
//! impl Validator<ConfigMap> for NeedsData {
//!     fn validate_create(
//!         &self,
//!         config_map: &ConfigMap,
//!         _request: &AdmissionRequest<ConfigMap>,
//!     ) -> Result<Warnings, Denial> {
//!         match config_map.data {
//!             Some(_) => Ok(Warnings::new()),
//!             None => Err(Denial::new("data: required")),
//!         }
//!     }
//!
//!     fn validate_update(
//!         &self,
//!         _old: &ConfigMap,
//!         new: &ConfigMap,
//!         request: &AdmissionRequest<ConfigMap>,
//!     ) -> Result<Warnings, Denial> {
//!         self.validate_create(new, request)
//!     }
//!
//!     fn validate_delete(
//!         &self,
//!         _config_map: &ConfigMap,
//!         _request: &AdmissionRequest<ConfigMap>,
//!     ) -> Result<Warnings, Denial> {
//!         Ok(Warnings::new())
//!     }
//! }
//!
//! fn webhooks() -> Vec<Webhook> {
//!     let registration = Registration {
//!         name: "vconfigmap-v1.kb.io",
//!         path: "/validate--v1-configmap",
//!         operations: &[Operation::Create, Operation::Update],
//!         failure_policy: FailurePolicy::Fail,
//!     };
//!     vec![Webhook::validating(registration, NeedsData)]
//! }
//!
//! let manifests = webhook::webhook_manifests(&webhooks());
//! assert!(manifests.mutating.is_none());
//! assert!(manifests.validating.is_some());
//! ```

pub mod admission;
#[cfg(feature = "webhooks")]
pub mod certs;
pub mod conversion;
#[cfg(feature = "webhooks")]
pub mod local;
pub mod server;
mod url;

use std::future::Future;

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhook, MutatingWebhookConfiguration, RuleWithOperations, ServiceReference,
    ValidatingWebhook, ValidatingWebhookConfiguration, WebhookClientConfig,
};
use kube::api::ObjectMeta;
use tokio_util::sync::CancellationToken;

use crate::metrics::Metrics;

pub use admission::{
    AdmissionWebhook, Defaulter, Denial, FailurePolicy, Kind, Mode, Registration, Validator,
    Warnings,
};
pub use conversion::{Converter, Spoke};
// What defaulters and validators get with the object, and the operations of a registration:
// kube's admission types, re-exported so that a project's webhooks need nothing but this module
// (and no `admission` feature of their own `kube` dependency).
pub use kube::core::admission::{AdmissionRequest, Operation};
pub use server::{ServerError, WebhookServer, WebhookServerConfig, check_routes};
pub use url::{InvalidWebhookUrl, WebhookUrl};

/// One webhook, ready to be served and written to the manifests.
#[derive(Debug)]
pub enum Webhook {
    /// A defaulting or validating webhook for one kind.
    Admission(AdmissionWebhook),
    /// The conversions between the versions of one kind, served at `/convert`.
    Conversion(Converter),
}

impl Webhook {
    /// A mutating webhook that sets defaults on objects of kind `K` with `defaulter`.
    pub fn defaulting<K: Kind>(registration: Registration, defaulter: impl Defaulter<K>) -> Self {
        Webhook::Admission(AdmissionWebhook::defaulting(registration, defaulter))
    }

    /// A validating webhook that accepts or refuses operations on objects of kind `K`.
    pub fn validating<K: Kind>(registration: Registration, validator: impl Validator<K>) -> Self {
        Webhook::Admission(AdmissionWebhook::validating(registration, validator))
    }

    /// A conversion webhook for the kind of `converter`.
    pub fn conversion(converter: Converter) -> Self {
        Webhook::Conversion(converter)
    }
}

/// Whether the manager serves the webhooks: unless the environment variable `ENABLE_WEBHOOKS` is
/// `false`, as in kubebuilder projects.
pub fn enabled() -> bool {
    enabled_by(std::env::var_os("ENABLE_WEBHOOKS").as_deref())
}

/// Whether webhooks are enabled when `ENABLE_WEBHOOKS` has `value`.
fn enabled_by(value: Option<&std::ffi::OsStr>) -> bool {
    value.is_none_or(|value| value != "false")
}

/// Starts the webhook server for the manager: loads the certificate and listens, then returns
/// the future that serves `webhooks` until `shutdown` is cancelled, recording controller-runtime's
/// webhook metrics in `metrics`.
///
/// Returns `None`, and needs no certificate, when there is nothing to serve: when the webhooks
/// are disabled (see [`enabled`]) or when `webhooks` is empty (a project without webhooks).
/// Fails when the certificate cannot be loaded, the address cannot be listened on, or two
/// webhooks want the same path (see [`check_routes`]).
///
/// ```no_run
/// # async fn run() -> Result<(), operator_rs_runtime::webhook::ServerError> {
/// use operator_rs_runtime::metrics::Metrics;
/// use operator_rs_runtime::webhook::{self, WebhookServerConfig};
/// use tokio_util::sync::CancellationToken;
///
/// let (shutdown, metrics) = (CancellationToken::new(), Metrics::new());
/// let webhooks = Vec::new(); // the project's `webhook::webhooks()`
/// let config = WebhookServerConfig::default();
/// if let Some(server) = webhook::start(&config, webhooks, &metrics, shutdown)? {
///     server.await?;
/// }
/// # Ok(())
/// # }
/// ```
pub fn start(
    config: &WebhookServerConfig,
    webhooks: Vec<Webhook>,
    metrics: &Metrics,
    shutdown: CancellationToken,
) -> Result<Option<impl Future<Output = Result<(), ServerError>> + Send + 'static>, ServerError> {
    start_if(enabled(), config, webhooks, metrics, shutdown)
}

/// [`start`], with whether the webhooks are enabled given.
fn start_if(
    enabled: bool,
    config: &WebhookServerConfig,
    webhooks: Vec<Webhook>,
    metrics: &Metrics,
    shutdown: CancellationToken,
) -> Result<Option<impl Future<Output = Result<(), ServerError>> + Send + 'static>, ServerError> {
    if !serves(enabled, &webhooks) {
        return Ok(None);
    }
    let server = WebhookServer::bind(config, webhooks)?.with_metrics(&metrics.webhooks());
    Ok(Some(server.serve(shutdown)))
}

/// Whether the manager serves `webhooks`: they are [`enabled`] and there is at least one. In
/// the self-signed mode the manager sets up its certificates only then.
pub fn will_serve(webhooks: &[Webhook]) -> bool {
    serves(enabled(), webhooks)
}

fn serves(enabled: bool, webhooks: &[Webhook]) -> bool {
    if !enabled {
        tracing::info!("ENABLE_WEBHOOKS=false: not serving webhooks");
        return false;
    }
    if webhooks.is_empty() {
        tracing::debug!("no webhooks to serve");
        return false;
    }
    true
}

/// [`start`] for the self-signed mode ([`certs`]): listens on `address` and returns the future
/// that serves `webhooks` with the certificate `certificates` holds at each handshake. Unlike
/// [`start`], it always starts: the manager calls it only when [`will_serve`] says so, after
/// making its certificates.
#[cfg(feature = "webhooks")]
pub fn start_with_resolver(
    address: std::net::SocketAddr,
    enable_http2: bool,
    certificates: std::sync::Arc<certs::ServingCertResolver>,
    webhooks: Vec<Webhook>,
    metrics: &Metrics,
    shutdown: CancellationToken,
) -> Result<impl Future<Output = Result<(), ServerError>> + Send + 'static, ServerError> {
    let server = WebhookServer::bind_with_resolver(address, enable_http2, webhooks, certificates)?
        .with_metrics(&metrics.webhooks());
    Ok(server.serve(shutdown))
}

/// The default of `--webhook-cert-secret` (kustomize prefixes it with the project's name): the
/// Secret of the self-signed mode ([`certs`]). Not cert-manager's `webhook-server-cert`: a project
/// that moves from cert-manager to this mode may still have cert-manager's Certificate in the
/// cluster (`kubectl apply` prunes nothing), which would keep rewriting that Secret.
pub const SELF_SIGNED_SECRET_NAME: &str = "webhook-server-self-signed-cert";

/// The name of the Service in front of the webhook server (`config/webhook/service.yaml`).
pub const SERVICE_NAME: &str = "webhook-service";

/// The namespace of that Service before kustomize sets the real one.
pub const SERVICE_NAMESPACE: &str = "system";

/// The name of the MutatingWebhookConfiguration (kustomize adds the name prefix).
pub const MUTATING_CONFIGURATION_NAME: &str = "mutating-webhook-configuration";

/// The name of the ValidatingWebhookConfiguration (kustomize adds the name prefix).
pub const VALIDATING_CONFIGURATION_NAME: &str = "validating-webhook-configuration";

/// The webhook configurations of `config/webhook/manifests.yaml`; a configuration without
/// webhooks is left out.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WebhookManifests {
    /// The defaulting webhooks, if any.
    pub mutating: Option<MutatingWebhookConfiguration>,
    /// The validating webhooks, if any.
    pub validating: Option<ValidatingWebhookConfiguration>,
}

/// The webhook configurations that register the admission webhooks in `webhooks` with the API
/// server, sorted by name like controller-gen's, for `make manifests`
/// (`config/webhook/manifests.yaml`, see [`crate::manifests::Manifests`]).
///
/// Every webhook points at its [`Registration::path`] on the Service [`SERVICE_NAME`] in
/// [`SERVICE_NAMESPACE`]; kustomize sets the real namespace and name prefix. Conversion webhooks
/// are registered in the CRDs instead (`config/crd/patches/`), so they add nothing here.
pub fn webhook_manifests(webhooks: &[Webhook]) -> WebhookManifests {
    let mut mutating = Vec::new();
    let mut validating = Vec::new();
    for webhook in webhooks {
        let Webhook::Admission(webhook) = webhook else {
            continue;
        };
        let registration = webhook.registration();
        let target = webhook.target();
        let client_config = WebhookClientConfig {
            service: Some(ServiceReference {
                name: SERVICE_NAME.to_owned(),
                namespace: SERVICE_NAMESPACE.to_owned(),
                path: Some(registration.path.to_owned()),
                port: None,
            }),
            ..WebhookClientConfig::default()
        };
        let rules = vec![RuleWithOperations {
            api_groups: Some(vec![target.group.clone()]),
            api_versions: Some(vec![target.version.clone()]),
            operations: Some(registration.operations.iter().map(operation_name).collect()),
            resources: Some(vec![target.plural.clone()]),
            scope: None,
        }];
        // The webhooks only read the request, so they have no side effects, and they speak the
        // `admission.k8s.io/v1` AdmissionReview.
        let admission_review_versions = vec!["v1".to_owned()];
        let failure_policy = Some(registration.failure_policy.as_str().to_owned());
        let side_effects = "None".to_owned();
        let name = registration.name.to_owned();
        match webhook.mode() {
            Mode::Mutating => mutating.push(MutatingWebhook {
                admission_review_versions,
                client_config,
                failure_policy,
                name,
                rules: Some(rules),
                side_effects,
                ..MutatingWebhook::default()
            }),
            Mode::Validating => validating.push(ValidatingWebhook {
                admission_review_versions,
                client_config,
                failure_policy,
                name,
                rules: Some(rules),
                side_effects,
                ..ValidatingWebhook::default()
            }),
        }
    }
    mutating.sort_by(|a, b| a.name.cmp(&b.name));
    validating.sort_by(|a, b| a.name.cmp(&b.name));
    let metadata = |name: &str| ObjectMeta {
        name: Some(name.to_owned()),
        ..ObjectMeta::default()
    };
    WebhookManifests {
        mutating: (!mutating.is_empty()).then(|| MutatingWebhookConfiguration {
            metadata: metadata(MUTATING_CONFIGURATION_NAME),
            webhooks: Some(mutating),
        }),
        validating: (!validating.is_empty()).then(|| ValidatingWebhookConfiguration {
            metadata: metadata(VALIDATING_CONFIGURATION_NAME),
            webhooks: Some(validating),
        }),
    }
}

/// An operation as webhook rules spell it.
fn operation_name(operation: &Operation) -> String {
    match operation {
        Operation::Create => "CREATE",
        Operation::Update => "UPDATE",
        Operation::Delete => "DELETE",
        Operation::Connect => "CONNECT",
    }
    .to_owned()
}

#[cfg(test)]
mod tests {
    use super::test_fixtures::AllowAll;
    use axum::body::Body;
    use axum::http::{Method, Request, StatusCode};
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::core::DynamicObject;
    use kube::core::admission::{AdmissionRequest, AdmissionReview};
    use serde_json::json;
    use tower::ServiceExt as _;

    use super::*;

    /// A list of webhooks like a project's: a defaulter, two validators and a conversion.
    fn webhooks() -> Vec<Webhook> {
        vec![
            Webhook::defaulting(registration("ma.kb.io", "/mutate-a"), NoDefaults),
            Webhook::validating(registration("vb.kb.io", "/validate-b"), AllowAll),
            Webhook::validating(registration("va.kb.io", "/validate-a"), AllowAll),
            Webhook::conversion(Converter::new::<ConfigMap>(vec![])),
        ]
    }

    /// Every webhook has a path of its own; `make manifests` and the manager would fail
    /// otherwise.
    #[test]
    fn the_webhooks_can_be_served() {
        if let Err(error) = check_routes(&webhooks()) {
            panic!("{error}");
        }
        if let Err(error) = server::router(webhooks()) {
            panic!("{error}");
        }
    }

    /// The manifests register every admission webhook at the path it is served at, and the
    /// server answers there.
    #[tokio::test]
    async fn every_registered_webhook_answers_at_its_path() {
        let manifests = webhook_manifests(&webhooks());
        let mutating = manifests
            .mutating
            .and_then(|c| c.webhooks)
            .unwrap_or_default();
        let validating = manifests
            .validating
            .and_then(|c| c.webhooks)
            .unwrap_or_default();
        let configs = mutating.iter().map(|w| &w.client_config);
        let paths: Vec<String> = configs
            .chain(validating.iter().map(|w| &w.client_config))
            .filter_map(|config| config.service.as_ref()?.path.clone())
            .collect();
        let admission = webhooks()
            .iter()
            .filter(|w| matches!(w, Webhook::Admission(_)))
            .count();
        assert_eq!(paths.len(), admission);
        assert_eq!(admission, 3);

        let router = server::router(webhooks()).unwrap();
        for path in paths {
            let request = Request::builder()
                .method(Method::POST)
                .uri(&path)
                .body(Body::from("{}"))
                .unwrap();
            let response = router.clone().oneshot(request).await.unwrap();
            assert_eq!(response.status(), StatusCode::OK, "{path}");
            let body = axum::body::to_bytes(response.into_body(), usize::MAX)
                .await
                .unwrap();
            let review: AdmissionReview<DynamicObject> = serde_json::from_slice(&body).unwrap();
            assert!(review.response.is_some(), "{path}");
        }
    }

    #[test]
    fn webhooks_are_enabled_unless_disabled_explicitly() {
        assert!(enabled_by(None));
        assert!(enabled_by(Some("true".as_ref())));
        assert!(enabled_by(Some("".as_ref())));
        assert!(!enabled_by(Some("false".as_ref())));
    }

    /// A config whose certificate does not exist: starting a server with it fails.
    fn config_without_certificate() -> WebhookServerConfig {
        WebhookServerConfig {
            address: std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
            cert_dir: std::env::temp_dir().join("operator-rs-runtime-no-such-cert-dir"),
            ..WebhookServerConfig::default()
        }
    }

    /// Without webhooks, or with webhooks disabled, nothing is served and no certificate is
    /// needed; otherwise a missing certificate is an error.
    #[test]
    fn starts_only_when_there_is_something_to_serve() {
        let config = config_without_certificate();
        let shutdown = CancellationToken::new();
        let metrics = Metrics::new();
        let none = start_if(true, &config, Vec::new(), &metrics, shutdown.clone());
        assert!(matches!(none, Ok(None)));
        let disabled = start_if(false, &config, webhooks(), &metrics, shutdown.clone());
        assert!(matches!(disabled, Ok(None)));
        let missing = start_if(true, &config, webhooks(), &metrics, shutdown);
        assert!(
            matches!(missing, Err(ServerError::ReadCertificate { .. })),
            "the certificate is missing"
        );
    }

    /// Changes nothing.
    struct NoDefaults;

    impl Defaulter<ConfigMap> for NoDefaults {
        fn apply_defaults(
            &self,
            _: &mut ConfigMap,
            _: &AdmissionRequest<ConfigMap>,
        ) -> Result<(), Denial> {
            Ok(())
        }
    }

    fn registration(name: &'static str, path: &'static str) -> Registration {
        Registration {
            name,
            path,
            operations: &[Operation::Create, Operation::Update, Operation::Delete],
            failure_policy: FailurePolicy::Ignore,
        }
    }

    #[test]
    fn manifests_look_like_controller_gen_ones() {
        let webhooks = vec![
            Webhook::validating(registration("vb.kb.io", "/validate-b"), AllowAll),
            Webhook::validating(registration("va.kb.io", "/validate-a"), AllowAll),
            Webhook::conversion(Converter::new::<ConfigMap>(vec![])),
        ];
        let manifests = webhook_manifests(&webhooks);
        assert_eq!(manifests.mutating, None);
        let validating = serde_json::to_value(manifests.validating).unwrap();
        assert_eq!(validating["apiVersion"], "admissionregistration.k8s.io/v1");
        assert_eq!(validating["kind"], "ValidatingWebhookConfiguration");
        assert_eq!(
            validating["metadata"],
            json!({"name": "validating-webhook-configuration"})
        );
        assert_eq!(
            validating["webhooks"][0],
            json!({
                "admissionReviewVersions": ["v1"],
                "clientConfig": {
                    "service": {"name": "webhook-service", "namespace": "system", "path": "/validate-a"}
                },
                "failurePolicy": "Ignore",
                "name": "va.kb.io",
                "rules": [{
                    "apiGroups": [""],
                    "apiVersions": ["v1"],
                    "operations": ["CREATE", "UPDATE", "DELETE"],
                    "resources": ["configmaps"],
                }],
                "sideEffects": "None",
            })
        );
        assert_eq!(validating["webhooks"][1]["name"], "vb.kb.io");
    }

    #[test]
    fn without_admission_webhooks_there_is_no_configuration() {
        let only_conversion = vec![Webhook::conversion(Converter::new::<ConfigMap>(vec![]))];
        assert_eq!(
            webhook_manifests(&only_conversion),
            WebhookManifests::default()
        );
        assert_eq!(webhook_manifests(&[]), WebhookManifests::default());
    }
}

/// Fixtures shared by the tests of the webhook and manifests modules.
#[cfg(test)]
pub(crate) mod test_fixtures {
    use k8s_openapi::api::core::v1::ConfigMap;

    use super::{AdmissionRequest, Denial, Validator, Warnings};

    /// A validator that allows everything.
    pub(crate) struct AllowAll;

    impl Validator<ConfigMap> for AllowAll {
        fn validate_create(
            &self,
            _: &ConfigMap,
            _: &AdmissionRequest<ConfigMap>,
        ) -> Result<Warnings, Denial> {
            Ok(Warnings::new())
        }

        fn validate_update(
            &self,
            _: &ConfigMap,
            _: &ConfigMap,
            _: &AdmissionRequest<ConfigMap>,
        ) -> Result<Warnings, Denial> {
            Ok(Warnings::new())
        }

        fn validate_delete(
            &self,
            _: &ConfigMap,
            _: &AdmissionRequest<ConfigMap>,
        ) -> Result<Warnings, Denial> {
            Ok(Warnings::new())
        }
    }
}
