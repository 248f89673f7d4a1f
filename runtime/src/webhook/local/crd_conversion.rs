//! Points a CRD's conversion webhook at the manager run outside the cluster, and back.
//!
//! A CRD has one conversion webhook, so there is no temporary copy to add beside the deployed
//! one: the CRD itself changes. What its `spec.conversion` held before is kept in the CRD, in the
//! annotation [`CONVERSION_BEFORE`], and written back on exit. Kept in the CRD rather than in
//! the manager's memory so that a run after a killed one (whose CRD still points at a URL nobody
//! serves) still knows what to restore: the annotation is only written when absent, so the
//! first run's record survives any number of killed runs.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceConversion, CustomResourceDefinition, WebhookClientConfig, WebhookConversion,
};
use kube::api::PostParams;
use kube::{Api, Client};

use super::LocalError;

/// The annotation that holds a CRD's `spec.conversion` from before `--webhook-url` (JSON;
/// `null` when it had none).
pub const CONVERSION_BEFORE: &str = "operator-rs-runtime/conversion-before-webhook-url";

/// How many times a CRD written by someone else in between is read and written again.
const ATTEMPTS: usize = 5;

/// Makes the CRD `name` convert through `client_config`; `false` when there is no such CRD.
pub(super) async fn take_over(
    client: &Client,
    name: &str,
    client_config: &WebhookClientConfig,
) -> Result<bool, LocalError> {
    rewrite(client, name, |crd| {
        let before = &crd.spec.conversion;
        // The review versions the project's CRD patch declares, as the deployed webhook speaks.
        let review_versions = before
            .as_ref()
            .and_then(|conversion| conversion.webhook.as_ref())
            .map(|webhook| webhook.conversion_review_versions.clone())
            .filter(|versions| !versions.is_empty())
            .unwrap_or_else(|| vec!["v1".to_owned()]);
        let record = serde_json::to_string(before).expect("a CRD's conversion serializes");
        crd.metadata
            .annotations
            .get_or_insert_default()
            .entry(CONVERSION_BEFORE.to_owned())
            .or_insert(record);
        crd.spec.conversion = Some(CustomResourceConversion {
            strategy: "Webhook".to_owned(),
            webhook: Some(WebhookConversion {
                client_config: Some(client_config.clone()),
                conversion_review_versions: review_versions,
            }),
        });
        Ok(true)
    })
    .await
    .map(|found| found.is_some())
}

/// Writes back the conversion the CRD `name` had before [`take_over`], if it carries the record
/// of one; a CRD without it (restored already, or never taken over) is left alone.
pub(super) async fn restore(client: &Client, name: &str) -> Result<(), LocalError> {
    rewrite(client, name, |crd| {
        let annotations = crd.metadata.annotations.get_or_insert_default();
        let Some(record) = annotations.remove(CONVERSION_BEFORE) else {
            return Ok(false);
        };
        crd.spec.conversion =
            serde_json::from_str(&record).map_err(|source| LocalError::Record {
                crd: name.to_owned(),
                source,
            })?;
        Ok(true)
    })
    .await
    .map(|_| ())
}

/// Reads the CRD `name`, lets `change` edit it (returning whether to write it), and replaces
/// it with the `resourceVersion` read, again after a `409 Conflict`. `None` when there is no
/// such CRD, else whether it was written.
async fn rewrite(
    client: &Client,
    name: &str,
    change: impl Fn(&mut CustomResourceDefinition) -> Result<bool, LocalError>,
) -> Result<Option<bool>, LocalError> {
    let api = Api::<CustomResourceDefinition>::all(client.clone());
    let failed = |action, source| LocalError::Api {
        action,
        object: format!("CustomResourceDefinition/{name}"),
        source,
    };
    for _ in 0..ATTEMPTS {
        let Some(mut crd) = api.get_opt(name).await.map_err(|e| failed("read", e))? else {
            return Ok(None);
        };
        if !change(&mut crd)? {
            return Ok(Some(false));
        }
        match api.replace(name, &PostParams::default(), &crd).await {
            Ok(_) => return Ok(Some(true)),
            Err(kube::Error::Api(status)) if status.is_conflict() => continue,
            Err(error) => return Err(failed("write", error)),
        }
    }
    Err(LocalError::Contended {
        crd: name.to_owned(),
        attempts: ATTEMPTS,
    })
}
