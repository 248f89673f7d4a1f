{{ rust_header }}//! Webhooks: admission webhooks that default and validate objects as the API server admits them,
//! and conversion webhooks that convert custom resources between their versions.
//!
//! Each kind with webhooks has a module under this one, written by `operator-rs create webhook`:
//! `src/webhook/{% if multigroup %}<group>/{% endif %}<version>/<kind>/`, with one file per webhook:
//!
//! - `defaulting.rs`: a [`Defaulter`] that sets default values (a mutating webhook);
//! - `validation.rs`: a [`Validator`] that accepts or refuses creates, updates and deletes;
//! - `conversion.rs`: the [`Converter`] between the kind's versions, with one
//!   `conversion_<version>.rs` per spoke version.
//!
//! [`webhooks`] lists them all. The manager serves them over HTTPS with [`start`] (see
//! [`server`]), and `make manifests` writes `config/webhook/manifests.yaml` from the same list
//! ([`webhook_manifests`]), so the paths the API server calls are always the ones served.
//!
//! Set `ENABLE_WEBHOOKS=false` to run the manager without webhooks, e.g. `make run` on your
//! machine, which the API server cannot call back.

pub mod admission;
pub mod conversion;
pub mod server;

// One module per API {% if multigroup %}group{% else %}version{% endif %} with webhooks; `operator-rs create webhook` adds them.
// +operator-rs:scaffold:webhook-modules

use std::future::Future;

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhook, MutatingWebhookConfiguration, RuleWithOperations, ServiceReference,
    ValidatingWebhook, ValidatingWebhookConfiguration, WebhookClientConfig,
};
use kube::api::ObjectMeta;
use kube::core::admission::Operation;
use tokio_util::sync::CancellationToken;

pub use admission::{
    AdmissionWebhook, Defaulter, Denial, FailurePolicy, Kind, Mode, Registration, Validator,
    Warnings,
};
pub use conversion::{Converter, Spoke};
pub use server::{ServerError, WebhookServer, WebhookServerConfig};

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

/// Every webhook of this operator. `operator-rs create webhook` adds the webhooks of each kind.
pub fn webhooks() -> Vec<Webhook> {
    let kinds: Vec<Vec<Webhook>> = vec![
        // +operator-rs:scaffold:webhooks
    ];
    kinds.into_iter().flatten().collect()
}

/// Whether the manager serves the webhooks: unless the environment variable `ENABLE_WEBHOOKS` is
/// `false`, as in kubebuilder projects.
pub fn enabled() -> bool {
    std::env::var_os("ENABLE_WEBHOOKS").is_none_or(|value| value != "false")
}

/// Starts the webhook server for the manager: loads the certificate and listens, then returns
/// the future that serves [`webhooks`] until `shutdown`. Returns `None` when the webhooks are
/// disabled (see [`enabled`]).
pub fn start(
    config: &WebhookServerConfig,
    shutdown: CancellationToken,
) -> Result<Option<impl Future<Output = Result<(), ServerError>> + Send + 'static>, ServerError> {
    if !enabled() {
        tracing::info!("ENABLE_WEBHOOKS=false: not serving webhooks");
        return Ok(None);
    }
    let server = WebhookServer::bind(config, webhooks())?;
    Ok(Some(server.serve(shutdown)))
}

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

/// The webhook configurations for [`webhooks`], for `make manifests`.
pub fn webhook_manifests() -> WebhookManifests {
    manifests_of(&webhooks())
}

/// The webhook configurations that register the admission webhooks in `webhooks` with the API
/// server, sorted by name like controller-gen's. Conversion webhooks are registered in the CRDs
/// instead (`config/crd/patches/`).
pub fn manifests_of(webhooks: &[Webhook]) -> WebhookManifests {
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
    use axum::body::Body;
    use axum::http::{Method, Request, StatusCode};
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::core::DynamicObject;
    use kube::core::admission::{AdmissionRequest, AdmissionReview};
    use serde_json::json;
    use tower::ServiceExt as _;

    use super::*;

    /// Every webhook of the operator has a path of its own; `make manifests` and the manager
    /// would fail otherwise.
    #[test]
    fn the_webhooks_can_be_served() {
        if let Err(error) = server::router(webhooks()) {
            panic!("{error}");
        }
    }

    /// The manifests register every admission webhook at the path it is served at, and the
    /// server answers there.
    #[tokio::test]
    async fn every_registered_webhook_answers_at_its_path() {
        let manifests = webhook_manifests();
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

    struct AllowAll;

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
        let manifests = manifests_of(&webhooks);
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
        assert_eq!(manifests_of(&only_conversion), WebhookManifests::default());
    }
}
