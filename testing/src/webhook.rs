//! Helpers for the tests of webhooks: AdmissionReviews and ConversionReviews as the API server
//! sends them, and what the API server does with the responses.
//!
//! # Admission webhooks
//!
//! A project's webhook tests build a review with [`review`], answer it with [`admit`], and
//! check the response, e.g. the object after defaulting with [`patched`]. The helpers panic
//! on misuse (they are for tests):
//!
//! ```
//! use operator_rs_runtime::k8s_openapi::api::core::v1::ConfigMap;
//! use operator_rs_runtime::webhook::{
//!     AdmissionRequest, Defaulter, Denial, FailurePolicy, Operation, Registration, Webhook,
//! };
//! use operator_rs_testing::webhook::{UID, admit, patched, review};
//!
//! /// Labels every ConfigMap `defaulted: "true"`.
//! struct Label;
//!
//! impl Defaulter<ConfigMap> for Label {
//!     fn apply_defaults(
//!         &self,
//!         config_map: &mut ConfigMap,
//!         _request: &AdmissionRequest<ConfigMap>,
//!     ) -> Result<(), Denial> {
//!         let labels = config_map.metadata.labels.get_or_insert_default();
//!         labels.insert("defaulted".to_owned(), "true".to_owned());
//!         Ok(())
//!     }
//! }
//!
//! let registration = Registration {
//!     name: "mconfigmap-v1.kb.io",
//!     path: "/mutate--v1-configmap",
//!     operations: &[Operation::Create, Operation::Update],
//!     failure_policy: FailurePolicy::Fail,
//! };
//! let webhook = Webhook::defaulting(registration, Label);
//!
//! let object = ConfigMap::default();
//! let response = admit(&webhook, &review(Operation::Create, Some(&object), None));
//! assert!(response.allowed);
//! assert_eq!(response.uid, UID);
//! let labels = patched(&object, &response).metadata.labels.unwrap();
//! assert_eq!(labels["defaulted"], "true");
//! ```
//!
//! # Conversion webhooks
//!
//! A project's conversion tests convert objects of every version to every other one with
//! [`convert`] and check that the round trips lose nothing:
//!
//! ```
//! use operator_rs_runtime::kube::CustomResource;
//! use operator_rs_runtime::webhook::{Converter, Spoke, Webhook};
//! use operator_rs_testing::webhook::convert;
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//!
//! mod v1 {
//!     use super::*;
//!
//!     /// The hub: the storage version.
//!     #[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
//!     #[kube(group = "example.com", version = "v1", kind = "Parcel", namespaced)]
//!     pub struct ParcelSpec {
//!         pub size: u32,
//!     }
//! }
//!
//! mod v2 {
//!     use super::*;
//!
//!     #[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
//!     #[kube(group = "example.com", version = "v2", kind = "Parcel", namespaced)]
//!     pub struct ParcelSpec {
//!         pub width: u32,
//!     }
//! }
//!
//! impl From<v1::Parcel> for v2::Parcel {
//!     fn from(hub: v1::Parcel) -> Self {
//!         let spec = v2::ParcelSpec { width: hub.spec.size };
//!         v2::Parcel { metadata: hub.metadata, spec }
//!     }
//! }
//!
//! impl From<v2::Parcel> for v1::Parcel {
//!     fn from(spoke: v2::Parcel) -> Self {
//!         let spec = v1::ParcelSpec { size: spoke.spec.width };
//!         v1::Parcel { metadata: spoke.metadata, spec }
//!     }
//! }
//!
//! # fn main() {
//! let webhook = Webhook::conversion(Converter::new::<v1::Parcel>(vec![
//!     Spoke::new::<v2::Parcel>(),
//! ]));
//! let hub = v1::Parcel::new("sample", v1::ParcelSpec { size: 3 });
//! let spoke: v2::Parcel = convert(&webhook, &hub);
//! assert_eq!(spoke.spec.width, 3);
//! let back: v1::Parcel = convert(&webhook, &spoke);
//! assert_eq!(back.spec, hub.spec);
//! assert_eq!(back.metadata, hub.metadata);
//! # }
//! ```

use kube::core::admission::{AdmissionResponse, Operation};
use kube::core::{Resource, TypeMeta};
use operator_rs_runtime::webhook::{Webhook, conversion};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// The `uid` of every review built by [`review`]; a response must echo it.
pub const UID: &str = "705ab4f5-6393-11e8-b7cc-42010a800002";

/// An `admission.k8s.io/v1` AdmissionReview for `operation` on `object` (the new object) and
/// `old_object`, as the API server sends it, from the user `jane@example.com`.
///
/// Pass the object as `object` for a create, both for an update, and the object being
/// deleted as `old_object` for a delete. The review's name and namespace are the object's.
pub fn review<K>(operation: Operation, object: Option<&K>, old_object: Option<&K>) -> Value
where
    K: Resource<DynamicType = ()> + Serialize,
{
    let meta = object
        .or(old_object)
        .map(|o| o.meta().clone())
        .unwrap_or_default();
    let gvk = json!({"group": K::group(&()), "version": K::version(&()), "kind": K::kind(&())});
    let gvr =
        json!({"group": K::group(&()), "version": K::version(&()), "resource": K::plural(&())});
    let types = TypeMeta {
        api_version: "admission.k8s.io/v1".to_owned(),
        kind: "AdmissionReview".to_owned(),
    };
    json!({
        "apiVersion": types.api_version,
        "kind": types.kind,
        "request": {
            "uid": UID,
            "kind": gvk,
            "resource": gvr,
            "requestKind": gvk,
            "requestResource": gvr,
            "name": meta.name.unwrap_or_default(),
            "namespace": meta.namespace,
            "operation": operation,
            "userInfo": {"username": "jane@example.com", "groups": ["system:authenticated"]},
            "object": object,
            "oldObject": old_object,
            "dryRun": false,
        }
    })
}

/// The response of the admission webhook `webhook` to `review`.
///
/// # Panics
///
/// If `webhook` is a conversion webhook.
pub fn admit(webhook: &Webhook, review: &Value) -> AdmissionResponse {
    match webhook {
        Webhook::Admission(webhook) => webhook.admit(review),
        Webhook::Conversion(_) => panic!("not an admission webhook: {webhook:?}"),
    }
}

/// `object` after the API server applied the response's JSON patch (`object` itself when the
/// response has no patch).
///
/// # Panics
///
/// If the patch is not a JSON patch that applies to `object`, or the patched object is no
/// longer a `K`.
pub fn patched<K>(object: &K, response: &AdmissionResponse) -> K
where
    K: Serialize + DeserializeOwned,
{
    let mut value = serde_json::to_value(object).unwrap();
    if let Some(patch) = &response.patch {
        let patch: json_patch::Patch = serde_json::from_slice(patch).unwrap();
        json_patch::patch(&mut value, &patch).unwrap();
    }
    serde_json::from_value(value).unwrap()
}

/// The JSON patch of the response, as JSON (`null` without a patch), to compare with
/// `serde_json::json!([...])`.
///
/// # Panics
///
/// If the patch is not JSON.
pub fn patch(response: &AdmissionResponse) -> Value {
    response
        .patch
        .as_ref()
        .map_or(Value::Null, |patch| serde_json::from_slice(patch).unwrap())
}

/// Converts `object` to the version of `To` through the conversion webhook `webhook`, as the
/// API server would, and fails the test if the webhook refuses.
///
/// See the [module documentation](self#conversion-webhooks) for an example.
///
/// # Panics
///
/// If `webhook` is not a conversion webhook, or the conversion fails.
pub fn convert<From, To>(webhook: &Webhook, object: &From) -> To
where
    From: Serialize,
    To: Resource<DynamicType = ()> + DeserializeOwned,
{
    let Webhook::Conversion(converter) = webhook else {
        panic!("not a conversion webhook: {webhook:?}");
    };
    let review = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {
            "uid": "0000-1111",
            "desiredAPIVersion": To::api_version(&()),
            "objects": [object],
        }
    });
    let review = conversion::review(std::slice::from_ref(converter), &review);
    let response = review.response.unwrap();
    assert_eq!(response.uid, "0000-1111");
    assert!(response.result.is_success(), "{:?}", response.result);
    let [converted]: [Value; 1] = response.converted_objects.try_into().unwrap();
    serde_json::from_value(converted).unwrap()
}
