//! The errors of the fake API server, answered as the API server answers them: a `Status`
//! object with an HTTP code and a machine-readable reason, which kube turns into
//! `kube::Error::Api`.

use http::StatusCode;
use serde_json::{Value, json};

use super::kinds::Kind;

/// A failed request.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct ApiError {
    pub(super) code: StatusCode,
    pub(super) reason: &'static str,
    pub(super) message: String,
}

impl ApiError {
    fn new(code: StatusCode, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason,
            message: message.into(),
        }
    }

    pub(super) fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "BadRequest", message)
    }

    pub(super) fn not_found(kind: &Kind, name: &str) -> Self {
        let message = format!("{} \"{name}\" not found", kind.qualified_plural());
        Self::new(StatusCode::NOT_FOUND, "NotFound", message)
    }

    /// A URL that names no resource the fake serves (a CRD that is not installed).
    pub(super) fn no_resource() -> Self {
        let message = "the server could not find the requested resource";
        Self::new(StatusCode::NOT_FOUND, "NotFound", message)
    }

    pub(super) fn already_exists(kind: &Kind, name: &str) -> Self {
        let message = format!("{} \"{name}\" already exists", kind.qualified_plural());
        Self::new(StatusCode::CONFLICT, "AlreadyExists", message)
    }

    /// A write whose preconditions (`resourceVersion`, `uid`) do not hold, or a server-side
    /// apply that would take fields from another manager.
    pub(super) fn conflict(kind: &Kind, name: &str, why: &str) -> Self {
        let message = format!(
            "Operation cannot be fulfilled on {} \"{name}\": {why}",
            kind.qualified_plural()
        );
        Self::new(StatusCode::CONFLICT, "Conflict", message)
    }

    pub(super) fn invalid(kind: &Kind, name: &str, why: &str) -> Self {
        let message = format!("{} \"{name}\" is invalid: {why}", kind.qualified_plural());
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, "Invalid", message)
    }

    /// A watch from a `resourceVersion` older than the fake remembers.
    pub(super) fn expired(requested: u64, oldest: u64) -> Self {
        let message = format!("too old resource version: {requested} ({oldest})");
        Self::new(StatusCode::GONE, "Expired", message)
    }

    pub(super) fn method_not_allowed() -> Self {
        let message = "the server does not allow this method on the requested resource";
        Self::new(StatusCode::METHOD_NOT_ALLOWED, "MethodNotAllowed", message)
    }

    pub(super) fn unsupported_media_type(content_type: &str) -> Self {
        let message = format!("the body of the request was in an unknown format: {content_type}");
        Self::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "UnsupportedMediaType",
            message,
        )
    }

    /// The `Status` object of the answer.
    pub(super) fn status(&self) -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "Status",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code.as_u16(),
        })
    }
}
