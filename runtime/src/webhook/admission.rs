//! Admission webhooks: the machinery between the API server's `AdmissionReview`s and your
//! [`Defaulter`]s and [`Validator`]s, like controller-runtime's `CustomDefaulter` and
//! `CustomValidator`.
//!
//! For every request the API server sends, [`AdmissionWebhook::admit`]:
//!
//! 1. decodes the object (and the old object) into the kind's Rust type;
//! 2. calls your defaulter or validator with them;
//! 3. answers with an `AdmissionResponse`: allowed or denied (with a reason and warnings), plus
//!    a JSON patch for defaulters, computed from the changes your defaulter made to the object.
//!
//! A request that cannot be decoded, or a handler that panics, never takes the server down: the
//! API server gets a response that says what went wrong, with the request's `uid`, so that
//! `kubectl` shows that message instead of a bare "webhook call failed".

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use json_patch::{Patch, PatchOperation};
use kube::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview, Operation};
use kube::core::{Resource, Status};
use serde::de::{Deserialize as _, DeserializeOwned};
use serde::ser::Serialize;
use serde_json::Value;

/// Warnings for the client that made the request; `kubectl` prints them. They go back with allowed
/// and denied requests alike. Keep each under 120 characters.
pub type Warnings = Vec<String>;

/// A request the webhook refuses. The API server rejects the create, update or delete and shows
/// `reason` to the user, after `admission webhook "<name>" denied the request: `.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Denial {
    /// Why the request is refused, e.g. `spec.replicas: must be at most 5`.
    pub reason: String,
    /// Warnings to return along with the denial.
    pub warnings: Warnings,
}

impl Denial {
    /// A denial with `reason` and no warnings.
    pub fn new(reason: impl Into<String>) -> Self {
        Denial {
            reason: reason.into(),
            warnings: Warnings::new(),
        }
    }

    /// Adds a warning to the denial.
    #[must_use]
    pub fn with_warning(mut self, warning: impl Into<String>) -> Self {
        self.warnings.push(warning.into());
        self
    }
}

impl fmt::Display for Denial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

/// Sets default values on objects of kind `K` as they are created or updated (a mutating webhook).
///
/// Change the object in place: the webhook sends the API server a JSON patch with exactly the
/// fields that changed. Fields can be added and changed, not removed (the patch never removes
/// anything, so that fields the Rust type does not know about survive).
pub trait Defaulter<K: Resource>: Send + Sync + 'static {
    /// Sets the defaults of `object`. `request` tells who asks for what (`operation`, `user_info`,
    /// `dry_run` ...). Returning an error denies the request.
    fn apply_defaults(&self, object: &mut K, request: &AdmissionRequest<K>) -> Result<(), Denial>;
}

/// Accepts or refuses operations on objects of kind `K` (a validating webhook). Return
/// `Ok(warnings)` to allow the operation, `Err(Denial)` to refuse it.
///
/// Validating webhooks run after every mutating webhook and after the API server's own schema
/// validation, so they see the object as it will be stored.
pub trait Validator<K: Resource>: Send + Sync + 'static {
    /// Checks an object that is being created.
    fn validate_create(
        &self,
        object: &K,
        request: &AdmissionRequest<K>,
    ) -> Result<Warnings, Denial>;

    /// Checks an update from `old` to `new`, e.g. fields that must not change.
    fn validate_update(
        &self,
        old: &K,
        new: &K,
        request: &AdmissionRequest<K>,
    ) -> Result<Warnings, Denial>;

    /// Checks the deletion of `object`. Only called if the webhook's [`Registration`] lists
    /// `Operation::Delete`.
    fn validate_delete(
        &self,
        object: &K,
        request: &AdmissionRequest<K>,
    ) -> Result<Warnings, Denial>;
}

/// What the API server does when the webhook cannot be called or fails to answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailurePolicy {
    /// Reject the request (the safe choice, and kubebuilder's default).
    Fail,
    /// Let the request through as if the webhook had allowed it.
    Ignore,
}

impl FailurePolicy {
    /// The value of `failurePolicy` in the webhook configuration.
    pub fn as_str(self) -> &'static str {
        match self {
            FailurePolicy::Fail => "Fail",
            FailurePolicy::Ignore => "Ignore",
        }
    }
}

/// How the API server calls an admission webhook: its entry in
/// `config/webhook/manifests.yaml`, which `make manifests` writes from it. Which resources the
/// webhook applies to comes from the kind's Rust type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Registration {
    /// The webhook's name, unique among all webhooks of the cluster; kubebuilder's convention is
    /// `m<kind>-<version>.kb.io` for defaulting and `v<kind>-<version>.kb.io` for validation.
    pub name: &'static str,
    /// The HTTPS path the webhook is served at.
    pub path: &'static str,
    /// The operations the API server sends to the webhook.
    pub operations: &'static [Operation],
    /// What the API server does when the webhook is unavailable.
    pub failure_policy: FailurePolicy,
}

/// The resource an admission webhook applies to, from the kind's Rust type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The API group, `""` for the core group.
    pub group: String,
    /// The API version.
    pub version: String,
    /// The kind, e.g. `Pod`.
    pub kind: String,
    /// The resource (plural), e.g. `pods`.
    pub plural: String,
}

impl Target {
    fn of<K: Resource<DynamicType = ()>>() -> Self {
        Target {
            group: K::group(&()).into_owned(),
            version: K::version(&()).into_owned(),
            kind: K::kind(&()).into_owned(),
            plural: K::plural(&()).into_owned(),
        }
    }
}

/// Whether an admission webhook may change objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// A defaulter, registered in the MutatingWebhookConfiguration.
    Mutating,
    /// A validator, registered in the ValidatingWebhookConfiguration.
    Validating,
}

/// Decodes an `AdmissionReview` (as JSON), calls the handler and returns its response.
type Handler = dyn Fn(&Value) -> AdmissionResponse + Send + Sync;

/// A defaulter or validator with its [`Registration`], ready to be served.
#[derive(Clone)]
pub struct AdmissionWebhook {
    registration: Registration,
    mode: Mode,
    target: Target,
    handler: Arc<Handler>,
}

impl fmt::Debug for AdmissionWebhook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AdmissionWebhook")
            .field("registration", &self.registration)
            .field("mode", &self.mode)
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

/// What the machinery needs from a kind: it must be a Kubernetes resource that (de)serializes.
/// Both kube-derived custom resources and k8s-openapi's built-in kinds qualify.
pub trait Kind:
    Resource<DynamicType = ()> + Clone + DeserializeOwned + Serialize + Send + Sync + 'static
{
}

impl<K> Kind for K where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Serialize + Send + Sync + 'static
{
}

impl AdmissionWebhook {
    /// A mutating webhook that sets defaults with `defaulter`.
    pub fn defaulting<K: Kind>(registration: Registration, defaulter: impl Defaulter<K>) -> Self {
        let handler = move |review: &Value| {
            handle::<K>(review, |request| {
                apply_defaults(&defaulter, review, request)
            })
        };
        AdmissionWebhook {
            registration,
            mode: Mode::Mutating,
            target: Target::of::<K>(),
            handler: Arc::new(handler),
        }
    }

    /// A validating webhook that accepts or refuses operations with `validator`.
    pub fn validating<K: Kind>(registration: Registration, validator: impl Validator<K>) -> Self {
        let handler =
            move |review: &Value| handle::<K>(review, |request| validate(&validator, request));
        AdmissionWebhook {
            registration,
            mode: Mode::Validating,
            target: Target::of::<K>(),
            handler: Arc::new(handler),
        }
    }

    /// How the API server calls this webhook.
    pub fn registration(&self) -> &Registration {
        &self.registration
    }

    /// Whether this webhook is a defaulter or a validator.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The resource this webhook applies to.
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// Answers an `AdmissionReview` (the JSON the API server posted). Never panics: undecodable
    /// reviews and panicking handlers get a response that says what went wrong.
    pub fn admit(&self, review: &Value) -> AdmissionResponse {
        // The handlers are plain functions that do not share state with the server, so a panic
        // cannot leave anything half-updated behind: answering and carrying on is safe.
        catch_unwind(AssertUnwindSafe(|| (self.handler)(review))).unwrap_or_else(|panic| {
            let message = panic_message(panic.as_ref());
            tracing::error!(webhook = self.registration.name, %message, "the webhook panicked");
            let mut response = AdmissionResponse::invalid(format!(
                "internal error in webhook {}: {message}",
                self.registration.name
            ));
            response.uid = request_uid(review);
            response.result.code = 500;
            response.result.reason = "InternalError".to_owned();
            response
        })
    }
}

/// Decodes `review` for kind `K` and hands the request to `decide`, or answers with an error that
/// echoes the request's `uid` (without it, the API server would only report a `uid` mismatch).
fn handle<K: Kind>(
    review: &Value,
    decide: impl FnOnce(&AdmissionRequest<K>) -> AdmissionResponse,
) -> AdmissionResponse {
    let request = AdmissionReview::<K>::deserialize(review)
        .map_err(|error| format!("cannot decode the AdmissionReview: {error}"))
        .and_then(|review| {
            review
                .try_into()
                .map_err(|_| "the AdmissionReview has no request".to_owned())
        });
    match request {
        Ok(request) => decide(&request),
        Err(message) => bad_request(review, message),
    }
}

/// Runs the defaulter on a copy of the object and turns its changes into a JSON patch.
fn apply_defaults<K: Kind>(
    defaulter: &impl Defaulter<K>,
    review: &Value,
    request: &AdmissionRequest<K>,
) -> AdmissionResponse {
    // Deletes and connects carry no object to default.
    let Some(object) = &request.object else {
        return AdmissionResponse::from(request);
    };
    let mut defaulted = object.clone();
    if let Err(denial) = defaulter.apply_defaults(&mut defaulted, request) {
        return deny(request, denial);
    }
    // Compare against the object exactly as the API server sent it (not as the Rust type
    // re-serializes it), so that the patch applies to what the API server holds. Like
    // controller-runtime, drop `remove` operations: they only mean that the Rust type does not
    // know a field, or leaves out an empty one, and must not delete the user's data.
    let original = review.pointer("/request/object").unwrap_or(&Value::Null);
    let patch = match serde_json::to_value(&defaulted) {
        Ok(defaulted) => json_patch::diff(original, &defaulted),
        Err(error) => return internal_error(request, format!("cannot encode the object: {error}")),
    };
    let operations: Vec<PatchOperation> = patch
        .0
        .into_iter()
        .filter(|operation| !matches!(operation, PatchOperation::Remove(_)))
        .collect();
    if operations.is_empty() {
        return AdmissionResponse::from(request);
    }
    AdmissionResponse::from(request)
        .with_patch(Patch(operations))
        .unwrap_or_else(|error| internal_error(request, error.to_string()))
}

/// Calls the validator that matches the operation.
fn validate<K: Kind>(
    validator: &impl Validator<K>,
    request: &AdmissionRequest<K>,
) -> AdmissionResponse {
    let object = request.object.as_ref();
    let old_object = request.old_object.as_ref();
    let verdict = match (&request.operation, object, old_object) {
        (Operation::Create, Some(object), _) => validator.validate_create(object, request),
        (Operation::Update, Some(new), Some(old)) => validator.validate_update(old, new, request),
        // The API server sends the object being deleted as the old object.
        (Operation::Delete, _, Some(old)) => validator.validate_delete(old, request),
        (Operation::Connect, _, _) => Ok(Warnings::new()),
        (operation, _, _) => {
            let message = format!("the {operation:?} request lacks the object(s) to validate");
            let mut response = AdmissionResponse::from(request).deny(&message);
            response.result = Status::failure(&message, "BadRequest").with_code(400);
            return response;
        }
    };
    match verdict {
        Ok(warnings) => with_warnings(AdmissionResponse::from(request), warnings),
        Err(denial) => deny(request, denial),
    }
}

/// Refuses the request for the reason in `denial`, with HTTP 403 like controller-runtime.
fn deny<K: Resource>(request: &AdmissionRequest<K>, denial: Denial) -> AdmissionResponse {
    let mut response = AdmissionResponse::from(request).deny(&denial.reason);
    response.result = Status::failure(&denial.reason, "Forbidden").with_code(403);
    with_warnings(response, denial.warnings)
}

fn with_warnings(mut response: AdmissionResponse, warnings: Warnings) -> AdmissionResponse {
    if !warnings.is_empty() {
        response.warnings = Some(warnings);
    }
    response
}

/// Refuses the request because the webhook failed, not because of the object.
fn internal_error<K: Resource>(
    request: &AdmissionRequest<K>,
    message: String,
) -> AdmissionResponse {
    let mut response = AdmissionResponse::from(request).deny(&message);
    response.result = Status::failure(&message, "InternalError").with_code(500);
    response
}

/// Answers a review that cannot be decoded.
fn bad_request(review: &Value, message: String) -> AdmissionResponse {
    tracing::warn!(%message, "invalid AdmissionReview");
    let mut response = AdmissionResponse::invalid(message);
    response.uid = request_uid(review);
    response.result.code = 400;
    response
}

/// The `request.uid` of a review that may not decode otherwise, or `""`.
fn request_uid(review: &Value) -> String {
    review
        .pointer("/request/uid")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// The message of a panic payload (`panic!` passes a `&str` or a `String`).
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|message| (*message).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}

#[cfg(feature = "testing")]
pub mod testing {
    //! Helpers for the tests of admission webhooks: AdmissionReviews as the API server sends
    //! them, and what the API server does with the responses.
    //!
    //! A project's webhook tests build a review with [`review`], answer it with [`admit`], and
    //! check the response, e.g. the object after defaulting with [`patched`]. The helpers panic
    //! on misuse (they are for tests):
    //!
    //! ```
    //! use operator_rs_runtime::k8s_openapi::api::core::v1::ConfigMap;
    //! use operator_rs_runtime::webhook::admission::testing::{UID, admit, patched, review};
    //! use operator_rs_runtime::webhook::{
    //!     AdmissionRequest, Defaulter, Denial, FailurePolicy, Operation, Registration, Webhook,
    //! };
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

    use kube::core::admission::{AdmissionResponse, Operation};
    use kube::core::{Resource, TypeMeta};
    use serde::Serialize;
    use serde_json::{Value, json};

    use crate::webhook::Webhook;

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
        K: Serialize + serde::de::DeserializeOwned,
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
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{ConfigMap, Pod};
    use kube::api::ObjectMeta;
    use serde_json::json;

    use super::testing::{UID, patch, patched, review};
    use super::*;

    const REGISTRATION: Registration = Registration {
        name: "mconfigmap-v1.kb.io",
        path: "/mutate--v1-configmap",
        operations: &[Operation::Create, Operation::Update],
        failure_policy: FailurePolicy::Fail,
    };

    /// Adds a `defaulted` label; refuses ConfigMaps named `forbidden`; panics on `boom`.
    struct LabelDefaulter;

    impl Defaulter<ConfigMap> for LabelDefaulter {
        fn apply_defaults(
            &self,
            config_map: &mut ConfigMap,
            _request: &AdmissionRequest<ConfigMap>,
        ) -> Result<(), Denial> {
            match config_map.metadata.name.as_deref() {
                Some("forbidden") => {
                    Err(Denial::new("forbidden name").with_warning("pick another"))
                }
                Some("boom") => panic!("boom"),
                _ => {
                    let labels = config_map.metadata.labels.get_or_insert_default();
                    labels.insert("defaulted".to_owned(), "true".to_owned());
                    Ok(())
                }
            }
        }
    }

    /// Refuses ConfigMaps without data; refuses changing `data.key`; warns on deletes.
    struct DataValidator;

    impl Validator<ConfigMap> for DataValidator {
        fn validate_create(
            &self,
            config_map: &ConfigMap,
            _request: &AdmissionRequest<ConfigMap>,
        ) -> Result<Warnings, Denial> {
            match &config_map.data {
                Some(_) => Ok(vec!["data is public".to_owned()]),
                None => Err(Denial::new("data: required")),
            }
        }

        fn validate_update(
            &self,
            old: &ConfigMap,
            new: &ConfigMap,
            _request: &AdmissionRequest<ConfigMap>,
        ) -> Result<Warnings, Denial> {
            let key = |c: &ConfigMap| c.data.as_ref().and_then(|d| d.get("key").cloned());
            if key(old) == key(new) {
                Ok(Warnings::new())
            } else {
                Err(Denial::new("data.key: immutable"))
            }
        }

        fn validate_delete(
            &self,
            _config_map: &ConfigMap,
            _request: &AdmissionRequest<ConfigMap>,
        ) -> Result<Warnings, Denial> {
            Ok(vec!["deleted".to_owned()])
        }
    }

    fn config_map(name: &str, data: Option<&str>) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                namespace: Some("default".to_owned()),
                ..ObjectMeta::default()
            },
            data: data.map(|value| [("key".to_owned(), value.to_owned())].into()),
            ..ConfigMap::default()
        }
    }

    fn defaulter() -> AdmissionWebhook {
        AdmissionWebhook::defaulting(REGISTRATION, LabelDefaulter)
    }

    fn validator() -> AdmissionWebhook {
        AdmissionWebhook::validating(REGISTRATION, DataValidator)
    }

    #[test]
    fn knows_its_target_from_the_rust_type() {
        let target = defaulter().target().clone();
        assert_eq!(target.group, "");
        assert_eq!(target.version, "v1");
        assert_eq!(target.kind, "ConfigMap");
        assert_eq!(target.plural, "configmaps");
        assert_eq!(defaulter().mode(), Mode::Mutating);
        assert_eq!(validator().mode(), Mode::Validating);
    }

    #[test]
    fn defaulting_patches_only_what_changed() {
        let object = config_map("a", Some("x"));
        let response = defaulter().admit(&review(Operation::Create, Some(&object), None));
        assert!(response.allowed);
        assert_eq!(response.uid, UID);
        assert_eq!(
            patch(&response),
            json!([{"op": "add", "path": "/metadata/labels", "value": {"defaulted": "true"}}])
        );
        let labels = patched(&object, &response)
            .metadata
            .labels
            .unwrap_or_default();
        assert_eq!(labels.get("defaulted").map(String::as_str), Some("true"));
    }

    #[test]
    fn defaulting_without_changes_sends_no_patch() {
        let mut object = config_map("a", None);
        object.metadata.labels = Some([("defaulted".to_owned(), "true".to_owned())].into());
        let response = defaulter().admit(&review(Operation::Update, Some(&object), Some(&object)));
        assert!(response.allowed);
        assert_eq!(response.patch, None);
    }

    #[test]
    fn defaulting_never_removes_fields_the_type_does_not_know() {
        let object = config_map("a", None);
        let mut review = review(Operation::Create, Some(&object), None);
        review["request"]["object"]["futureField"] = json!({"keep": "me"});
        review["request"]["object"]["metadata"]["creationTimestamp"] = Value::Null;
        let response = defaulter().admit(&review);
        assert_eq!(
            patch(&response),
            json!([{"op": "add", "path": "/metadata/labels", "value": {"defaulted": "true"}}])
        );
    }

    /// Changes nothing, to check that decoding and re-encoding alone produce no patch.
    struct NoDefaults;

    impl Defaulter<Pod> for NoDefaults {
        fn apply_defaults(&self, _: &mut Pod, _: &AdmissionRequest<Pod>) -> Result<(), Denial> {
            Ok(())
        }
    }

    /// A Pod as the API server sends it, with the fields that a careless round trip through the
    /// Rust type would change: nulls, empty objects, timestamps, quantities and managed fields.
    #[test]
    fn defaulting_a_real_pod_without_changes_sends_no_patch() {
        let pod = json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "echo",
                "namespace": "default",
                "creationTimestamp": null,
                "labels": {"app": "echo"},
                "managedFields": [{
                    "manager": "kubectl",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": "2021-03-29T23:02:16Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}},
                }],
            },
            "spec": {
                "containers": [{
                    "name": "echo",
                    "image": "jmalloc/echo-server",
                    "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                    "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}},
                    "terminationMessagePath": "/dev/termination-log",
                    "imagePullPolicy": "Always",
                }],
                "restartPolicy": "Always",
                "terminationGracePeriodSeconds": 30,
                "securityContext": {},
                "tolerations": [{
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                }],
                "priority": 0,
                "enableServiceLinks": true,
            },
            "status": {},
        });
        let mut review = review::<Pod>(Operation::Create, None, None);
        review["request"]["object"] = pod;
        let webhook = AdmissionWebhook::defaulting(REGISTRATION, NoDefaults);
        let response = webhook.admit(&review);
        assert!(response.allowed, "{:?}", response.result);
        assert_eq!(patch(&response), Value::Null);
    }

    #[test]
    fn defaulting_can_deny_with_warnings() {
        let object = config_map("forbidden", None);
        let response = defaulter().admit(&review(Operation::Create, Some(&object), None));
        assert!(!response.allowed);
        assert_eq!(response.uid, UID);
        assert_eq!(response.result.message, "forbidden name");
        assert_eq!(response.result.code, 403);
        assert_eq!(response.warnings, Some(vec!["pick another".to_owned()]));
        assert_eq!(response.patch, None);
    }

    #[test]
    fn defaulting_ignores_deletes() {
        let object = config_map("forbidden", None);
        let response = defaulter().admit(&review(Operation::Delete, None, Some(&object)));
        assert!(response.allowed);
        assert_eq!(response.patch, None);
    }

    #[test]
    fn validation_dispatches_on_the_operation() {
        let validator = validator();
        let with_data = config_map("a", Some("x"));
        let without_data = config_map("a", None);
        let changed = config_map("a", Some("y"));

        let created = validator.admit(&review(Operation::Create, Some(&with_data), None));
        assert!(created.allowed);
        assert_eq!(created.warnings, Some(vec!["data is public".to_owned()]));

        let refused = validator.admit(&review(Operation::Create, Some(&without_data), None));
        assert!(!refused.allowed);
        assert_eq!(refused.result.message, "data: required");

        let update = review(Operation::Update, Some(&changed), Some(&with_data));
        let updated = validator.admit(&update);
        assert!(!updated.allowed);
        assert_eq!(updated.result.message, "data.key: immutable");
        assert_eq!(updated.warnings, None);

        let deleted = validator.admit(&review(Operation::Delete, None, Some(&with_data)));
        assert!(deleted.allowed);
        assert_eq!(deleted.warnings, Some(vec!["deleted".to_owned()]));
    }

    #[test]
    fn validation_refuses_requests_without_their_objects() {
        let review = review::<ConfigMap>(Operation::Update, None, None);
        let response = validator().admit(&review);
        assert!(!response.allowed);
        assert_eq!(response.uid, UID);
        assert_eq!(response.result.code, 400);
    }

    #[test]
    fn malformed_reviews_are_answered_with_their_uid() {
        let mut wrong_type = review(Operation::Create, Some(&config_map("a", None)), None);
        wrong_type["request"]["object"]["data"] = json!(["not", "a", "map"]);
        for (review, uid) in [
            (wrong_type, UID),
            (
                json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}),
                "",
            ),
            (json!("not a review"), ""),
        ] {
            for webhook in [defaulter(), validator()] {
                let response = webhook.admit(&review);
                assert!(!response.allowed, "{review}");
                assert_eq!(response.uid, uid);
                assert_eq!(response.result.code, 400);
                assert!(!response.result.message.is_empty());
            }
        }
    }

    #[test]
    fn a_panicking_handler_is_an_internal_error() {
        let object = config_map("boom", None);
        let response = defaulter().admit(&review(Operation::Create, Some(&object), None));
        assert!(!response.allowed);
        assert_eq!(response.uid, UID);
        assert_eq!(response.result.code, 500);
        assert!(
            response.result.message.contains("boom"),
            "{}",
            response.result.message
        );
    }

    #[test]
    fn responses_are_admission_reviews() {
        let object = config_map("a", None);
        let webhook = crate::webhook::Webhook::defaulting(REGISTRATION, LabelDefaulter);
        let response =
            super::testing::admit(&webhook, &review(Operation::Create, Some(&object), None));
        let review = serde_json::to_value(response.into_review()).unwrap();
        assert_eq!(review["apiVersion"], "admission.k8s.io/v1");
        assert_eq!(review["kind"], "AdmissionReview");
        assert_eq!(review["response"]["uid"], UID);
        assert_eq!(review["response"]["patchType"], "JSONPatch");
    }
}
