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
