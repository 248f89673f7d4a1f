//! The versions of a resource, stored as the API server stores them: every object of a resource
//! once, in the version it was written in (the storage version of the time), whatever version it
//! is read and written in; a write stores it in the storage version of the day, and a read
//! converts it to the version asked for: through the kind's conversion webhook (at the URL of the
//! CRD's `clientConfig`, over HTTPS, or the project's converter of
//! [`Store::register_webhooks`] in-process), or, with the `None` strategy, by changing its `apiVersion`
//! only. Either way the result is pruned and defaulted with the schema of the version asked for,
//! as the API server does when it reads an object from etcd.

use serde_json::{Value, json};

use super::super::errors::ApiError;
use super::super::https::{DEFAULT_TIMEOUT, Endpoint};
use super::super::kinds::{Kind, ResourceKey};
use super::Store;

impl Store {
    /// The version that objects of `resource` (of any of its versions) are written in: its
    /// CRD's storage version, or for kinds without a CRD the version registered first.
    pub(in super::super) fn storage_version(&self, resource: &ResourceKey) -> Option<String> {
        let storage = resource.storage();
        match self.crd_of(&storage) {
            Some(crd) => super::crds::storage_version(crd).map(str::to_owned),
            None => self.storage_versions.get(&storage).cloned(),
        }
    }

    /// Whether `object` (as stored) is in the current storage version of its resource.
    pub(super) fn in_storage_version(&self, resource: &ResourceKey, object: &Value) -> bool {
        match self.storage_version(resource) {
            Some(version) => object["apiVersion"] == api_version(&resource.group, &version),
            None => true,
        }
    }

    /// The version a stored object of `storage` is served in when the fake needs one (the
    /// garbage collector): the storage version, or any served version.
    pub(super) fn served(&self, storage: &ResourceKey) -> Option<ResourceKey> {
        let version = self.storage_version(storage);
        let served = |key: &&ResourceKey| key.storage() == *storage;
        let mut versions = self.kinds.keys().filter(served);
        let storage_version = versions
            .clone()
            .find(|key| Some(&key.version) == version.as_ref());
        storage_version.or_else(|| versions.next()).cloned()
    }

    /// `object` (of `kind`, in its version) converted to the storage version, to be stored.
    pub(super) fn to_storage(&self, kind: &Kind, object: Value) -> Result<Value, ApiError> {
        let resource = kind.resource();
        match self.storage_version(&resource) {
            Some(version) if version != kind.version => {
                let storage = ResourceKey {
                    version,
                    ..resource
                };
                self.convert(&storage, &object)
            }
            _ => Ok(object),
        }
    }

    /// `object` (of the resource of `resource`, in any version) in the version of `resource`.
    pub(super) fn convert(
        &self,
        resource: &ResourceKey,
        object: &Value,
    ) -> Result<Value, ApiError> {
        let desired = api_version(&resource.group, &resource.version);
        if object["apiVersion"] == desired.as_str() {
            return Ok(object.clone());
        }
        let kind_name = object["kind"].as_str().unwrap_or_default();
        let from = object["apiVersion"].as_str().unwrap_or_default();
        let failed = |why: &str| {
            // The API server's words (apiextensions-apiserver's webhook converter).
            ApiError::internal(format!(
                "conversion webhook for {from}, Kind={kind_name} failed: {why}"
            ))
        };
        let converter = self.converters.iter().find(|converter| {
            (converter.group(), converter.kind()) == (&resource.group, kind_name)
        });
        let strategy = self
            .crd_of(&resource.storage())
            .and_then(|crd| crd["spec"]["conversion"]["strategy"].as_str())
            .unwrap_or("None");
        let webhook = self
            .crd_of(&resource.storage())
            .map(|crd| &crd["spec"]["conversion"]["webhook"]["clientConfig"])
            .and_then(|client_config| Endpoint::of(client_config, DEFAULT_TIMEOUT));
        let mut converted = match (converter, webhook) {
            // A CRD whose conversion webhook has a URL is converted there, over HTTPS, as the
            // API server does; the project's converter stands in for one behind a Service.
            (_, Some(endpoint)) if strategy == "Webhook" => {
                convert_at(&endpoint, object, &desired).map_err(|why| failed(&why))?
            }
            (Some(converter), _) => {
                // What the API server posts to the webhook, answered by the runtime's own
                // handler of `/convert`.
                let review = conversion_review(object, &desired);
                let answer = operator_rs_runtime::webhook::conversion::review(
                    std::slice::from_ref(converter),
                    &review,
                );
                let response = answer
                    .response
                    .ok_or_else(|| failed("the webhook returned no response"))?;
                if response.result.is_failure() {
                    return Err(failed(&response.result.message));
                }
                match <[Value; 1]>::try_from(response.converted_objects) {
                    Ok([converted]) => converted,
                    Err(objects) => {
                        return Err(failed(&format!(
                            "expected 1 converted object, got {}",
                            objects.len()
                        )));
                    }
                }
            }
            (None, _) if strategy == "Webhook" => {
                return Err(failed(
                    "the fake API server has no conversion webhook for it: register the project's webhooks (FakeApiServer::register_webhooks or install)",
                ));
            }
            (None, _) => {
                let mut converted = object.clone();
                converted["apiVersion"] = json!(desired);
                converted
            }
        };
        if let Some(schema) = self
            .enforcement
            .get(resource)
            .and_then(|enforcement| enforcement.schema.as_ref())
        {
            schema.prune(&mut converted);
            schema.default(&mut converted);
        }
        Ok(converted)
    }
}

/// The `ConversionReview` the API server posts to convert `object` to `desired`.
fn conversion_review(object: &Value, desired: &str) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {
            "uid": "00000000-0000-4000-b000-000000000000",
            "desiredAPIVersion": desired,
            "objects": [object],
        },
    })
}

/// `object` converted to `desired` by the conversion webhook at `endpoint`, with the API
/// server's checks of the answer: the request's `uid`, a `Success`, one object of the desired
/// version.
fn convert_at(endpoint: &Endpoint, object: &Value, desired: &str) -> Result<Value, String> {
    let review = conversion_review(object, desired);
    let answer = endpoint.post(&review)?;
    let response = &answer["response"];
    if response.is_null() {
        return Err("conversion webhook response was absent".to_owned());
    }
    if response["uid"] != review["request"]["uid"] {
        return Err(format!(
            "expected response.uid={}, got {}",
            review["request"]["uid"], response["uid"]
        ));
    }
    if response["result"]["status"] != "Success" {
        let message = response["result"]["message"].as_str().unwrap_or_default();
        return Err(format!("conversion webhook failed: {message}"));
    }
    match response["convertedObjects"].as_array().map(Vec::as_slice) {
        Some([converted]) if converted["apiVersion"] == desired => Ok(converted.clone()),
        Some([converted]) => Err(format!(
            "invalid converted object: expected apiVersion {desired}, got {}",
            converted["apiVersion"]
        )),
        objects => Err(format!(
            "expected 1 converted object, got {}",
            objects.map_or(0, <[Value]>::len)
        )),
    }
}

/// `group/version`, or `version` for the core group.
fn api_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    }
}
