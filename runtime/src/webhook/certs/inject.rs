//! Puts the CA bundle where the API server reads it: the `caBundle` of every webhook of the
//! project's MutatingWebhookConfigurations and ValidatingWebhookConfigurations, and of the
//! conversion webhook of its CRDs (`spec.conversion.webhook.clientConfig.caBundle`).
//!
//! Each object is read, and patched only where its bundle differs, with a JSON patch that
//! touches nothing but those `caBundle` fields (so fields this k8s-openapi version does not know
//! survive) and that `test`s the webhook names at the indices it writes, so that a configuration
//! re-applied in between with other webhooks is not patched at the wrong index (the patch fails,
//! and the next pass reads it again).
//!
//! Objects that do not exist are skipped: the project may have no validating webhook, or be
//! installed without one of its CRDs. A CRD without a webhook conversion has no `caBundle` to
//! hold, and is skipped with a warning: its name should not have been given.

use json_patch::jsonptr::PointerBuf;
use json_patch::{AddOperation, PatchOperation, TestOperation};
use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration, WebhookClientConfig,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Patch, PatchParams};
use kube::{Api, Client, Resource};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::CertsError;

/// The field manager of the patches, as `kubectl get --show-managed-fields` shows it.
pub const FIELD_MANAGER: &str = "operator-rs-webhook-certs";

/// The objects that get the CA bundle, by name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Targets {
    /// MutatingWebhookConfigurations.
    pub mutating: Vec<String>,
    /// ValidatingWebhookConfigurations.
    pub validating: Vec<String>,
    /// CustomResourceDefinitions with a webhook conversion.
    pub crds: Vec<String>,
}

/// What an injection pass did.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Injected {
    /// The objects patched, as `kind/name`.
    pub(super) patched: Vec<String>,
    /// The objects that do not exist, as `kind/name`.
    pub(super) missing: Vec<String>,
}

/// Makes every target carry `bundle` (PEM). Goes on with the other objects when one fails, and
/// then returns the first failure: the bundle is only known to be everywhere on success.
pub(super) async fn inject(
    client: &Client,
    targets: &Targets,
    bundle: &str,
) -> Result<Injected, CertsError> {
    let mut injected = Injected::default();
    let mut first_error = None;
    let objects = targets
        .mutating
        .iter()
        .map(|name| (Target::Mutating, name))
        .chain(
            targets
                .validating
                .iter()
                .map(|name| (Target::Validating, name)),
        )
        .chain(targets.crds.iter().map(|name| (Target::Crd, name)));
    for (target, name) in objects {
        let label = format!("{}/{name}", target.kind());
        match target.inject(client, name, bundle).await {
            Ok(Outcome::Patched) => injected.patched.push(label),
            Ok(Outcome::Unchanged) => {}
            Ok(Outcome::Missing) => injected.missing.push(label),
            Err(source) => {
                first_error.get_or_insert(CertsError::Inject {
                    object: label,
                    source: Box::new(source),
                });
            }
        }
    }
    match first_error {
        Some(error) => Err(error),
        None => Ok(injected),
    }
}

/// The kinds of objects that get the bundle.
#[derive(Clone, Copy, Debug)]
enum Target {
    Mutating,
    Validating,
    Crd,
}

enum Outcome {
    Patched,
    Unchanged,
    Missing,
}

/// Why one object could not be patched.
#[derive(Debug, thiserror::Error)]
pub enum InjectError {
    /// The API server refused a request.
    #[error(transparent)]
    Api(#[from] kube::Error),
    /// The CRD converts without a webhook, so it has no `caBundle`.
    #[error("the CRD has no webhook conversion (spec.conversion.strategy is not Webhook)")]
    NoWebhookConversion,
}

impl Target {
    fn kind(self) -> &'static str {
        match self {
            Target::Mutating => "MutatingWebhookConfiguration",
            Target::Validating => "ValidatingWebhookConfiguration",
            Target::Crd => "CustomResourceDefinition",
        }
    }

    async fn inject(
        self,
        client: &Client,
        name: &str,
        bundle: &str,
    ) -> Result<Outcome, InjectError> {
        match self {
            Target::Mutating => {
                let Some(object) = get::<MutatingWebhookConfiguration>(client, name).await? else {
                    return Ok(Outcome::Missing);
                };
                let webhooks = object.webhooks.unwrap_or_default();
                let webhooks = webhooks.iter().map(|w| (&w.name, &w.client_config));
                let patch = webhooks_patch(webhooks, bundle);
                apply::<MutatingWebhookConfiguration>(client, name, patch).await
            }
            Target::Validating => {
                let Some(object) = get::<ValidatingWebhookConfiguration>(client, name).await?
                else {
                    return Ok(Outcome::Missing);
                };
                let webhooks = object.webhooks.unwrap_or_default();
                let webhooks = webhooks.iter().map(|w| (&w.name, &w.client_config));
                let patch = webhooks_patch(webhooks, bundle);
                apply::<ValidatingWebhookConfiguration>(client, name, patch).await
            }
            Target::Crd => {
                let Some(crd) = get::<CustomResourceDefinition>(client, name).await? else {
                    return Ok(Outcome::Missing);
                };
                let conversion = crd.spec.conversion.as_ref();
                let client_config = conversion
                    .filter(|conversion| conversion.strategy == "Webhook")
                    .and_then(|conversion| conversion.webhook.as_ref())
                    .and_then(|webhook| webhook.client_config.as_ref());
                let Some(client_config) = client_config else {
                    tracing::warn!(crd = name, "{}", InjectError::NoWebhookConversion);
                    return Ok(Outcome::Unchanged);
                };
                if carries(client_config.ca_bundle.as_ref(), bundle) {
                    return Ok(Outcome::Unchanged);
                }
                let conversion = ["spec", "conversion"];
                let patch = vec![
                    test(conversion.iter().chain(&["strategy"]), "Webhook".into()),
                    set_bundle(
                        conversion
                            .iter()
                            .chain(&["webhook", "clientConfig", "caBundle"]),
                        bundle,
                    ),
                ];
                apply::<CustomResourceDefinition>(client, name, patch).await
            }
        }
    }
}

/// Whether a `caBundle` is `bundle`.
fn carries(ca_bundle: Option<&ByteString>, bundle: &str) -> bool {
    ca_bundle.is_some_and(|ca_bundle| ca_bundle.0 == bundle.as_bytes())
}

/// The operations that set `bundle` in every webhook that lacks it; each first tests that the
/// webhook at that index is still the one read.
fn webhooks_patch<'a>(
    webhooks: impl Iterator<Item = (&'a String, &'a WebhookClientConfig)>,
    bundle: &str,
) -> Vec<PatchOperation> {
    let mut operations = Vec::new();
    for (index, (name, client_config)) in webhooks.enumerate() {
        if carries(client_config.ca_bundle.as_ref(), bundle) {
            continue;
        }
        let index = index.to_string();
        let webhook = ["webhooks", index.as_str()];
        operations.push(test(webhook.iter().chain(&["name"]), name.as_str().into()));
        let ca_bundle = webhook.iter().chain(&["clientConfig", "caBundle"]);
        operations.push(set_bundle(ca_bundle, bundle));
    }
    operations
}

/// `test` that the field at `path` (its keys) holds `value`.
fn test<'a>(path: impl IntoIterator<Item = &'a &'a str>, value: Value) -> PatchOperation {
    let path = PointerBuf::from_tokens(path.into_iter().copied());
    PatchOperation::Test(TestOperation { path, value })
}

/// Set the `caBundle` at `path` (its keys) to `bundle`, base64 as the API wants bytes.
fn set_bundle<'a>(path: impl IntoIterator<Item = &'a &'a str>, bundle: &str) -> PatchOperation {
    let path = PointerBuf::from_tokens(path.into_iter().copied());
    let value = serde_json::to_value(ByteString(bundle.as_bytes().to_vec()))
        .expect("bytes serialize as a base64 string");
    PatchOperation::Add(AddOperation { path, value })
}

async fn get<K>(client: &Client, name: &str) -> Result<Option<K>, kube::Error>
where
    K: Resource<DynamicType = (), Scope = k8s_openapi::ClusterResourceScope>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug,
{
    Api::<K>::all(client.clone()).get_opt(name).await
}

/// Sends `operations` as one JSON patch, unless there are none.
async fn apply<K>(
    client: &Client,
    name: &str,
    operations: Vec<PatchOperation>,
) -> Result<Outcome, InjectError>
where
    K: Resource<DynamicType = (), Scope = k8s_openapi::ClusterResourceScope>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug,
{
    if operations.is_empty() {
        return Ok(Outcome::Unchanged);
    }
    let patch = json_patch::Patch(operations);
    let params = PatchParams {
        field_manager: Some(FIELD_MANAGER.to_owned()),
        ..PatchParams::default()
    };
    let api = Api::<K>::all(client.clone());
    api.patch(name, &params, &Patch::Json::<()>(patch)).await?;
    Ok(Outcome::Patched)
}
