//! The built-in kinds checked against k8s-openapi's Rust types, which follow the API's OpenAPI
//! schema: a field of the wrong type is refused as the API server refuses a body it cannot
//! decode (`400 BadRequest`). The API server's validation of the kinds is `built_in/
//! validation.rs`'s.

use std::borrow::Cow;

use serde::de::DeserializeOwned;
use serde_json::Value;

/// Checks that an object decodes as its kind's Rust type; the error names the field that does
/// not.
pub(super) type Check = fn(&Value) -> Result<(), String>;

/// The [`Check`] of the kind `K`. (k8s-openapi decodes a missing required field as its
/// default: required fields are the schema's to check.)
pub(super) fn check<K: DeserializeOwned>(object: &Value) -> Result<(), String> {
    match serde_path_to_error::deserialize::<_, K>(object) {
        Ok(_) => Ok(()),
        Err(error) => {
            let path = error.path().to_string();
            let at = if path == "." { "(root)" } else { &path };
            Err(format!("{at}: {}", error.inner()))
        }
    }
}

/// `object` as the API server decodes a built-in kind into its Go type, for its checks
/// (the type check and validation): a `null` member is the field's zero value, as if absent. The kubelet writes
/// `lastProbeTime: null` in every pod condition, and a JSON merge patch keeps the nulls inside a
/// list it replaces; only a CRD's schema refuses a `null` that is not `nullable`.
pub(super) fn decoded(object: &Value) -> Cow<'_, Value> {
    decoded_but(object, &[])
}

/// The members of a CRD that its Go type keeps as raw JSON, nulls and all: a schema node's
/// `default`, `example` and `enum` (`apiextensions.JSON`).
pub(super) const CRD_RAW_JSON: &[&str] = &["default", "example", "enum"];

/// `object` decoded as [`decoded`] decodes it, but for the members named `raw`, which are kept
/// as they are.
pub(super) fn decoded_but<'a>(object: &'a Value, raw: &[&str]) -> Cow<'a, Value> {
    fn has_null(value: &Value, raw: &[&str]) -> bool {
        match value {
            Value::Object(fields) => fields
                .iter()
                .any(|(key, v)| !raw.contains(&key.as_str()) && (v.is_null() || has_null(v, raw))),
            Value::Array(items) => items.iter().any(|item| has_null(item, raw)),
            _ => false,
        }
    }
    fn strip(value: &mut Value, raw: &[&str]) {
        match value {
            Value::Object(fields) => {
                fields.retain(|key, v| raw.contains(&key.as_str()) || !v.is_null());
                for (key, value) in fields.iter_mut() {
                    if !raw.contains(&key.as_str()) {
                        strip(value, raw);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| strip(item, raw)),
            _ => {}
        }
    }
    if !has_null(object, raw) {
        return Cow::Borrowed(object);
    }
    let mut object = object.clone();
    strip(&mut object, raw);
    Cow::Owned(object)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::Pod;
    use kube::Api;
    use kube::api::{Patch, PatchParams, PostParams};
    use serde_json::json;

    use super::*;
    use crate::fake::FakeApiServer;

    /// A `null` in a built-in kind is decoded as the field's zero value, as kube-apiserver 1.28
    /// does (checked against it): a condition with `lastProbeTime: null`, as the kubelet writes
    /// it, in a create and in a merge patch of the status; not a refusal of its type.
    #[tokio::test]
    async fn nulls_in_built_in_kinds_are_absent_fields() {
        let fake = FakeApiServer::new();
        let pods = Api::<Pod>::namespaced(fake.client(), "default");
        let condition = json!({ "type": "Ready", "status": "True", "lastProbeTime": null });
        let pod = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": { "name": "p", "namespace": "default", "annotations": null },
            "spec": { "containers": [{ "name": "main", "image": "i", "args": null }] },
        });
        let pod = serde_json::from_value(pod).unwrap();
        pods.create(&PostParams::default(), &pod).await.unwrap();
        let status = json!({ "status": { "phase": "Running", "conditions": [condition] } });
        let patch = Patch::Merge(status);
        let patched = pods
            .patch_status("p", &PatchParams::default(), &patch)
            .await
            .unwrap();
        assert_eq!(
            patched.status.unwrap().conditions.unwrap()[0].type_,
            "Ready"
        );
        assert_eq!(
            *decoded(&json!({ "a": [{ "b": null, "c": 1 }] })),
            json!({ "a": [{ "c": 1 }] })
        );
        // A CRD schema's default is raw JSON: its nulls are kept.
        let schema = json!({ "x": null, "default": { "a": null }, "enum": [null] });
        assert_eq!(
            *decoded_but(&schema, CRD_RAW_JSON),
            json!({ "default": { "a": null }, "enum": [null] })
        );
    }

    #[test]
    fn wrong_types_are_found_with_their_paths() {
        let deployment =
            |spec: Value| json!({ "apiVersion": "apps/v1", "kind": "Deployment", "spec": spec });
        let valid = deployment(json!({
            "selector": { "matchLabels": { "app": "a" } },
            "template": { "spec": { "containers": [{ "name": "a", "image": "i" }] } },
        }));
        assert_eq!(check::<Deployment>(&valid), Ok(()));

        let wrong = deployment(json!({ "replicas": "two", "selector": {}, "template": {} }));
        let Err(message) = check::<Deployment>(&wrong) else {
            panic!("a string for an integer is refused");
        };
        assert!(
            message.starts_with("spec.replicas: invalid type: string \"two\""),
            "{message}"
        );
    }
}
