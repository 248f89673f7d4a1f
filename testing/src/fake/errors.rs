//! The errors of the fake API server, answered as the API server answers them: a `Status`
//! object with an HTTP code and a machine-readable reason, which kube turns into
//! `kube::Error::Api`; and the field errors of validation, worded as the API server words them
//! (`spec.size: Invalid value: 10: spec.size in body should be less than or equal to 3`).

use std::fmt;

use http::StatusCode;
use serde_json::{Value, json};

/// What the API server's messages name of an object's kind ([`super::kinds::Kind`] has it):
/// a trait here so that the errors need not know how the fake keeps its kinds.
pub(super) trait KindNames {
    /// `Memcached.cache.example.com` (`Pod` for the core group).
    fn group_kind(&self) -> String;
    /// `memcacheds.cache.example.com` (`pods` for the core group).
    fn qualified_plural(&self) -> String;
    fn group(&self) -> &str;
    fn kind(&self) -> &str;
}

/// The fake's kinds are shared (`Arc<Kind>`).
impl<K: KindNames> KindNames for std::sync::Arc<K> {
    fn group_kind(&self) -> String {
        (**self).group_kind()
    }
    fn qualified_plural(&self) -> String {
        (**self).qualified_plural()
    }
    fn group(&self) -> &str {
        (**self).group()
    }
    fn kind(&self) -> &str {
        (**self).kind()
    }
}

/// A failed request.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct ApiError {
    pub(super) code: StatusCode,
    pub(super) reason: String,
    pub(super) message: String,
    /// The `details` of the `Status`: the object and, for `Invalid`, the field errors.
    pub(super) details: Option<Value>,
}

impl ApiError {
    pub(super) fn new(code: StatusCode, reason: &str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason: reason.to_owned(),
            message: message.into(),
            details: None,
        }
    }

    pub(super) fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "BadRequest", message)
    }

    pub(super) fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "InternalError", message)
    }

    pub(super) fn not_found(kind: &impl KindNames, name: &str) -> Self {
        let message = format!("{} \"{name}\" not found", kind.qualified_plural());
        Self::new(StatusCode::NOT_FOUND, "NotFound", message)
    }

    /// A URL that names no resource the fake serves (a CRD that is not installed).
    pub(super) fn no_resource() -> Self {
        let message = "the server could not find the requested resource";
        Self::new(StatusCode::NOT_FOUND, "NotFound", message)
    }

    pub(super) fn already_exists(kind: &impl KindNames, name: &str) -> Self {
        let message = format!("{} \"{name}\" already exists", kind.qualified_plural());
        Self::new(StatusCode::CONFLICT, "AlreadyExists", message)
    }

    /// A write whose preconditions (`resourceVersion`, `uid`) do not hold, or a server-side
    /// apply that would take fields from another manager.
    pub(super) fn conflict(kind: &impl KindNames, name: &str, why: &str) -> Self {
        let message = format!(
            "Operation cannot be fulfilled on {} \"{name}\": {why}",
            kind.qualified_plural()
        );
        Self::new(StatusCode::CONFLICT, "Conflict", message)
    }

    /// An object that fails validation for one reason, e.g. `metadata.finalizers: Forbidden: …`.
    pub(super) fn invalid(kind: &impl KindNames, name: &str, why: &str) -> Self {
        let message = format!("{} \"{name}\" is invalid: {why}", kind.group_kind());
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, "Invalid", message)
    }

    /// An object that fails validation: `422 Invalid` with one cause per field error, as the API
    /// server's `NewInvalid` words it: `Memcached.cache.example.com "x" is invalid: <error>`, or
    /// `[<error>, <error>]` for several.
    pub(super) fn invalid_fields(kind: &impl KindNames, name: &str, errors: &[FieldError]) -> Self {
        let mut unique: Vec<String> = Vec::new();
        for error in errors {
            let text = error.to_string();
            if !unique.contains(&text) {
                unique.push(text);
            }
        }
        let why = match unique.as_slice() {
            [one] => one.clone(),
            many => format!("[{}]", many.join(", ")),
        };
        let causes: Vec<Value> = errors
            .iter()
            .map(|error| {
                json!({
                    "reason": error.kind.cause(),
                    "message": error.body(),
                    // A field error about the whole object has the path Go prints as `<nil>`.
                    "field": if error.field.is_empty() { "<nil>" } else { &error.field },
                })
            })
            .collect();
        let mut invalid = Self::invalid(kind, name, &why);
        invalid.details = Some(json!({
            "name": name,
            "group": kind.group(),
            "kind": kind.kind(),
            "causes": causes,
        }));
        invalid
    }

    /// A request that the client's RBAC rules do not grant: `403 Forbidden`, worded as the API
    /// server's authorization filter words it.
    pub(super) fn forbidden(group: &str, plural: &str, name: Option<&str>, why: &str) -> Self {
        let resource = if group.is_empty() {
            plural.to_owned()
        } else {
            format!("{plural}.{group}")
        };
        let message = match name {
            Some(name) => format!("{resource} \"{name}\" is forbidden: {why}"),
            None => format!("{resource} is forbidden: {why}"),
        };
        let mut forbidden = Self::new(StatusCode::FORBIDDEN, "Forbidden", message);
        forbidden.details = Some(json!({
            "name": name.unwrap_or_default(),
            "group": group,
            "kind": plural,
        }));
        forbidden
    }

    /// A request an admission webhook refused, as the API server reports it: the webhook's
    /// status, its message prefixed with `admission webhook "<name>" denied the request: `.
    pub(super) fn denied(webhook: &str, status: &kube::core::Status) -> Self {
        let denied_by = format!("admission webhook \"{webhook}\" denied the request");
        let message = match (status.message.as_str(), status.reason.as_str()) {
            ("", "") => format!("{denied_by} without explanation"),
            ("", reason) => format!("{denied_by}: {reason}"),
            (message, _) => format!("{denied_by}: {message}"),
        };
        let code = StatusCode::from_u16(status.code)
            .ok()
            .filter(|code| code.as_u16() >= 400)
            .unwrap_or(StatusCode::BAD_REQUEST);
        Self::new(code, &status.reason, message)
    }

    /// A watch from a `resourceVersion` older than the fake remembers.
    pub(super) fn expired(requested: u64, oldest: u64) -> Self {
        let message = format!("too old resource version: {requested} ({oldest})");
        Self::new(StatusCode::GONE, "Expired", message)
    }

    /// A list continued from a token older than the fake remembers, worded as the API server
    /// words it when etcd has compacted the list's revision.
    pub(super) fn continue_expired() -> Self {
        let message = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";
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
        let mut status = json!({
            "apiVersion": "v1",
            "kind": "Status",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code.as_u16(),
        });
        if let Some(details) = &self.details {
            status["details"] = details.clone();
        }
        status
    }
}

/// The type of a field error, as the API server's `field.ErrorType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ErrorType {
    Invalid,
    TypeInvalid,
    Required,
    NotSupported,
    TooLong,
    TooMany,
    Forbidden,
    Duplicate,
}

impl ErrorType {
    /// How the error's text starts.
    fn title(self) -> &'static str {
        match self {
            ErrorType::Invalid | ErrorType::TypeInvalid => "Invalid value",
            ErrorType::Required => "Required value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::TooLong => "Too long",
            ErrorType::TooMany => "Too many",
            ErrorType::Forbidden => "Forbidden",
            ErrorType::Duplicate => "Duplicate value",
        }
    }

    /// The `reason` of the error's cause in the `Status`.
    fn cause(self) -> &'static str {
        match self {
            ErrorType::Invalid => "FieldValueInvalid",
            ErrorType::TypeInvalid => "FieldValueTypeInvalid",
            ErrorType::Required => "FieldValueRequired",
            ErrorType::NotSupported => "FieldValueNotSupported",
            ErrorType::TooLong => "FieldValueTooLong",
            ErrorType::TooMany => "FieldValueTooMany",
            ErrorType::Forbidden => "FieldValueForbidden",
            ErrorType::Duplicate => "FieldValueDuplicate",
        }
    }

    /// Whether the API server skips the CEL rules when such an error is found
    /// (`hasBlockingErr`): the rules would see values of the wrong shape.
    pub(super) fn blocks_cel(self) -> bool {
        matches!(
            self,
            ErrorType::NotSupported
                | ErrorType::Required
                | ErrorType::TooLong
                | ErrorType::TooMany
                | ErrorType::TypeInvalid
        )
    }
}

/// One field error of a validation, as the API server's `field.Error`.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct FieldError {
    pub(super) kind: ErrorType,
    /// The field path: `spec.size`, `spec.ports[0].name`; empty for the whole object.
    pub(super) field: String,
    /// The value shown after the type, or `None` for the types that show none.
    pub(super) value: Option<Value>,
    pub(super) detail: String,
}

impl FieldError {
    pub(super) fn new(
        kind: ErrorType,
        field: &str,
        value: Option<Value>,
        detail: impl Into<String>,
    ) -> Self {
        Self {
            kind,
            field: field.to_owned(),
            value,
            detail: detail.into(),
        }
    }

    /// The error without its field: `Invalid value: 10: spec.size in body should be …`.
    pub(super) fn body(&self) -> String {
        let title = self.kind.title();
        let mut body = match (&self.value, self.kind) {
            (_, ErrorType::Required | ErrorType::Forbidden | ErrorType::TooLong) | (None, _) => {
                title.to_owned()
            }
            (Some(value), _) => format!("{title}: {}", go_value(value)),
        };
        if !self.detail.is_empty() {
            body.push_str(": ");
            body.push_str(&self.detail);
        }
        body
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let field = if self.field.is_empty() {
            "<nil>"
        } else {
            &self.field
        };
        write!(f, "{field}: {}", self.body())
    }
}

/// A value as the API server prints it in a field error: strings quoted, numbers and booleans
/// plain, `null` as `"null"`, objects and lists in Go syntax (`%#v`), as Go prints the
/// `map[string]interface {}` and `[]interface {}` of a decoded object.
fn go_value(value: &Value) -> String {
    match value {
        Value::Null => "\"null\"".to_owned(),
        other => go_syntax(other),
    }
}

/// Go's `%#v` of a decoded JSON value (map keys sorted, as Go prints them).
fn go_syntax(value: &Value) -> String {
    match value {
        Value::Null => "interface {}(nil)".to_owned(),
        Value::String(text) => Value::String(text.clone()).to_string(),
        Value::Number(number) => match number.as_f64() {
            Some(float) if !number.is_i64() && !number.is_u64() => go_float(float),
            _ => number.to_string(),
        },
        Value::Bool(flag) => flag.to_string(),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(go_syntax).collect();
            format!("[]interface {{}}{{{}}}", items.join(", "))
        }
        Value::Object(fields) => {
            let mut keys: Vec<&String> = fields.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|key| format!("{:?}:{}", key, go_syntax(&fields[key])))
                .collect();
            format!("map[string]interface {{}}{{{}}}", fields.join(", "))
        }
    }
}

/// A float as Go's `%v` prints it (`3`, `2.5`).
pub(super) fn go_float(float: f64) -> String {
    if float.fract() == 0.0 && float.abs() < 1e21 {
        format!("{float:.0}")
    } else {
        float.to_string()
    }
}
