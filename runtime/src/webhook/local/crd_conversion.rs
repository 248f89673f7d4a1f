//! Points a CRD's conversion webhook at the manager run outside the cluster, and back.
//!
//! A CRD has one conversion webhook, so there is no temporary copy to add beside the deployed
//! one: the CRD itself changes. What its `spec.conversion` held before is kept in the CRD, in the
//! annotation [`CONVERSION_BEFORE`], and written back on exit. Kept in the CRD rather than in
//! the manager's memory so that a run after a killed one (whose CRD still points at a URL nobody
//! serves) still knows what to restore: the annotation is only written when absent, so the
//! first run's record survives any number of killed runs.
//!
//! The CRD is read untyped and changed with JSON merge patches that carry the `resourceVersion`
//! read (the API server refuses them with `409 Conflict` when the CRD changed in between), so
//! that fields this k8s-openapi version does not know survive, as in `certs`' injection.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, WebhookClientConfig,
};
use kube::api::{ApiResource, DynamicObject, Patch, PatchParams};
use kube::{Api, Client};
use serde_json::{Map, Value, json};

use super::{FIELD_MANAGER, LocalError};

/// The annotation that holds a CRD's `spec.conversion` from before `--webhook-url` (JSON;
/// `null` when it had none).
pub const CONVERSION_BEFORE: &str = "operator-rs-runtime/conversion-before-webhook-url";

/// How many times a CRD written by someone else in between is read and patched again.
const ATTEMPTS: usize = 5;

/// Makes the CRD `name` convert through `client_config`; `false` when there is no such CRD.
pub(super) async fn take_over(
    client: &Client,
    name: &str,
    client_config: &WebhookClientConfig,
) -> Result<bool, LocalError> {
    let client_config = serde_json::to_value(client_config).expect("a clientConfig serializes");
    let found = rewrite(client, name, |crd| {
        let before = &crd["spec"]["conversion"];
        // The review versions the project's CRD patch declares, as the deployed webhook speaks.
        let review_versions = match &before["webhook"]["conversionReviewVersions"] {
            Value::Array(versions) if !versions.is_empty() => json!(versions),
            _ => json!(["v1"]),
        };
        let desired = json!({
            "strategy": "Webhook",
            "webhook": {
                "clientConfig": client_config,
                "conversionReviewVersions": review_versions,
            },
        });
        let mut patch = json!({ "spec": { "conversion": merge_patch(before, &desired) } });
        if crd["metadata"]["annotations"][CONVERSION_BEFORE].is_null() {
            patch["metadata"] = json!({ "annotations": { CONVERSION_BEFORE: before.to_string() } });
        }
        Ok(Some(patch))
    })
    .await?;
    Ok(found)
}

/// Writes back the conversion the CRD `name` had before [`take_over`], if it carries the record
/// of one; a CRD without it (restored already, or never taken over) is left alone.
pub(super) async fn restore(client: &Client, name: &str) -> Result<(), LocalError> {
    rewrite(client, name, |crd| {
        let Some(record) = crd["metadata"]["annotations"][CONVERSION_BEFORE].as_str() else {
            return Ok(None);
        };
        let before: Value = serde_json::from_str(record).map_err(|source| LocalError::Record {
            crd: name.to_owned(),
            source,
        })?;
        let conversion = merge_patch(&crd["spec"]["conversion"], &before);
        Ok(Some(json!({
            "metadata": { "annotations": { CONVERSION_BEFORE: null } },
            "spec": { "conversion": conversion },
        })))
    })
    .await
    .map(|_| ())
}

/// Reads the CRD `name`, asks `change` for a merge patch (`None`: nothing to write), and sends
/// it with the `resourceVersion` read, again after a `409 Conflict`. `false` when there is no
/// such CRD.
async fn rewrite(
    client: &Client,
    name: &str,
    change: impl Fn(&Value) -> Result<Option<Value>, LocalError>,
) -> Result<bool, LocalError> {
    let resource = ApiResource::erase::<CustomResourceDefinition>(&());
    let api = Api::<DynamicObject>::all_with(client.clone(), &resource);
    let failed = |action, source| LocalError::Api {
        action,
        object: format!("CustomResourceDefinition/{name}"),
        source,
    };
    for _ in 0..ATTEMPTS {
        let Some(crd) = api.get_opt(name).await.map_err(|e| failed("read", e))? else {
            return Ok(false);
        };
        let resource_version = crd.metadata.resource_version.clone();
        let crd = serde_json::to_value(crd).expect("an object serializes");
        let Some(mut patch) = change(&crd)? else {
            return Ok(true);
        };
        patch["metadata"]["resourceVersion"] = json!(resource_version);
        let params = PatchParams {
            field_manager: Some(FIELD_MANAGER.to_owned()),
            ..PatchParams::default()
        };
        match api.patch(name, &params, &Patch::Merge(&patch)).await {
            Ok(_) => return Ok(true),
            Err(kube::Error::Api(status)) if status.is_conflict() => continue,
            Err(error) => return Err(failed("patch", error)),
        }
    }
    Err(LocalError::Contended {
        crd: name.to_owned(),
        attempts: ATTEMPTS,
    })
}

/// The JSON merge patch (RFC 7396) that turns `current` into `desired`: objects key by key,
/// `null` for what `desired` lacks, anything else replaced whole.
fn merge_patch(current: &Value, desired: &Value) -> Value {
    match (current, desired) {
        (Value::Object(current), Value::Object(desired)) => {
            let mut patch = Map::new();
            for (key, value) in desired {
                let old = current.get(key).unwrap_or(&Value::Null);
                if old != value {
                    patch.insert(key.clone(), merge_patch(old, value));
                }
            }
            for key in current.keys().filter(|key| !desired.contains_key(*key)) {
                patch.insert(key.clone(), Value::Null);
            }
            Value::Object(patch)
        }
        (_, desired) => desired.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Applying the patch gives `desired`, whatever `current` was.
    #[test]
    fn merge_patches_lead_to_the_desired_value() {
        let service = json!({
            "strategy": "Webhook",
            "webhook": {
                "clientConfig": {"service": {"name": "s", "namespace": "n", "path": "/convert"}, "caBundle": "QQ=="},
                "conversionReviewVersions": ["v1"],
            },
        });
        let url = json!({
            "strategy": "Webhook",
            "webhook": {"clientConfig": {"url": "https://10.0.0.1:9443/convert", "caBundle": "Qg=="}, "conversionReviewVersions": ["v1"]},
        });
        let none = json!({"strategy": "None"});
        for (current, desired) in [
            (&service, &url),
            (&url, &service),
            (&url, &none),
            (&none, &url),
        ] {
            let mut patched = current.clone();
            json_patch::merge(&mut patched, &merge_patch(current, desired));
            assert_eq!(&patched, desired);
        }
        assert_eq!(
            merge_patch(&service, &url)["webhook"]["clientConfig"],
            json!({"service": null, "url": "https://10.0.0.1:9443/convert", "caBundle": "Qg=="})
        );
    }
}
