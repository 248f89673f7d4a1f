//! The handlers of the fake API server's requests, one per verb, in the API server's order: the
//! request's options, the body read (with Go's words for what does not decode), the body's type
//! checked against the URL, then the store's write; a patch's media type must be one the
//! resource takes (custom resources take no strategic merge patch).

use std::time::Duration;

use http::{HeaderMap, Method, StatusCode, header};
use serde_json::Value;
use tokio::time::Instant;

use super::super::admission::User;
use super::super::decode;
use super::super::errors::{ApiError, go_quote};
use super::super::fields::Scope;
use super::super::kinds::Kind;
use super::super::query::{self, FieldValidation, Options, Query, WriteOptions};
use super::super::store::{Caller, Edit, Since, Store, Write};
use super::{Reply, Route, filter};

const JSON_PATCH: &str = "application/json-patch+json";
const MERGE_PATCH: &str = "application/merge-patch+json";
const STRATEGIC_MERGE_PATCH: &str = "application/strategic-merge-patch+json";
const APPLY_PATCH: &str = "application/apply-patch+yaml";

/// A request as [`handle`] reads it.
pub(super) struct Incoming<'a> {
    pub(super) method: &'a Method,
    pub(super) headers: &'a HeaderMap,
    pub(super) query: &'a Query,
    pub(super) body: &'a [u8],
    pub(super) user: User,
}

/// Answers a request for a resource the store serves.
pub(super) fn handle(
    store: &mut Store,
    route: &Route,
    request: &Incoming,
) -> Result<Reply, ApiError> {
    let kind = store.kind(&route.resource)?;
    let scope = match route.subresource.as_deref() {
        None => Scope::Main,
        Some("status") if kind.status_subresource => Scope::Status,
        // A custom resource's subresource that is not served is not found as the object.
        Some(_) if kind.built_in_type().is_none() => {
            return Err(ApiError::not_found(
                &kind,
                route.name.as_deref().unwrap_or_default(),
            ));
        }
        Some(_) => return Err(ApiError::no_resource()),
    };
    let named = route.name.as_deref();
    match (request.method.clone(), named) {
        (Method::GET, Some(name)) => {
            let object = store.get(&route.resource, route.namespace.as_deref(), name)?;
            Ok(Reply::Json(StatusCode::OK, object))
        }
        (Method::GET, None) if scope == Scope::Main => read(store, route, request.query),
        // Namespaced objects are created in a namespace's collection only.
        (Method::POST, None)
            if scope == Scope::Main && kind.namespaced == route.namespace.is_some() =>
        {
            create(store, &kind, route, request)
        }
        (Method::PUT, Some(name)) => replace(store, &kind, route, name, scope, request),
        (Method::PATCH, Some(name)) => patch(store, &kind, route, name, scope, request),
        (Method::DELETE, Some(name)) if scope == Scope::Main => delete(store, route, name, request),
        (Method::DELETE, None) if scope == Scope::Main => delete_collection(store, route, request),
        _ => Err(ApiError::method_not_allowed()),
    }
}

/// A list, or a watch.
fn read(store: &mut Store, route: &Route, query: &Query) -> Result<Reply, ApiError> {
    let kind = store.kind(&route.resource)?;
    let filter = filter(query, &kind)?;
    let (resource, namespace) = (&route.resource, route.namespace.as_deref());
    if query.flag("watch") {
        let since = match query.get("resourceVersion") {
            _ if query.flag("sendInitialEvents") => Since::InitialEvents,
            None | Some("" | "0") => Since::Now,
            Some(version) => Since::Revision(version.parse().map_err(|_| {
                ApiError::bad_request(format!("invalid resourceVersion {version:?}"))
            })?),
        };
        let deadline = query
            .get("timeoutSeconds")
            .and_then(|seconds| seconds.parse().ok())
            .map(|seconds| Instant::now() + Duration::from_secs(seconds));
        let receiver = store.watch(resource, namespace, filter, since)?;
        return Ok(Reply::Watch(receiver, deadline));
    }
    let limit = query.get("limit").and_then(|limit| limit.parse().ok());
    let list = store.list(resource, namespace, &filter, limit, query.get("continue"))?;
    Ok(Reply::Json(StatusCode::OK, list))
}

/// The caller of a write: its scope, manager, options and user.
fn caller(
    scope: Scope,
    options: &WriteOptions,
    request: &Incoming,
    duplicates: Vec<String>,
) -> Caller {
    Caller {
        scope,
        manager: options
            .field_manager
            .clone()
            .unwrap_or_else(|| user_agent_manager(request.headers)),
        dry_run: options.dry_run,
        validation: options.validation,
        duplicates,
        user: request.user.clone(),
    }
}

/// The field manager of a write that names none: the program in the `User-Agent` (as the API
/// server does), or `unknown`.
fn user_agent_manager(headers: &HeaderMap) -> String {
    headers
        .get(header::USER_AGENT)
        .and_then(|agent| agent.to_str().ok())
        .and_then(|agent| agent.split('/').next())
        .filter(|agent| !agent.is_empty())
        .unwrap_or("unknown")
        .to_owned()
}

fn create(
    store: &mut Store,
    kind: &Kind,
    route: &Route,
    request: &Incoming,
) -> Result<Reply, ApiError> {
    let options = query::write_options(request.query, Options::Create)?;
    let (object, duplicates) = decode_object(kind, request.body)?;
    let caller = caller(Scope::Main, &options, request, duplicates);
    let object = store.create(&route.resource, route.namespace.as_deref(), object, &caller)?;
    Ok(Reply::Json(StatusCode::CREATED, object))
}

fn replace(
    store: &mut Store,
    kind: &Kind,
    route: &Route,
    name: &str,
    scope: Scope,
    request: &Incoming,
) -> Result<Reply, ApiError> {
    let options = query::write_options(request.query, Options::Update)?;
    let (object, duplicates) = decode_object(kind, request.body)?;
    let write = Write {
        caller: caller(scope, &options, request, duplicates),
        edit: Edit::Replace(object),
    };
    let (status, object) = store.write(&route.resource, route.namespace.as_deref(), name, write)?;
    Ok(Reply::Json(status, object))
}

/// The object of a create or an update: JSON of the URL's version (its kind too, for a
/// built-in kind), and the fields it gives twice.
fn decode_object(kind: &Kind, body: &[u8]) -> Result<(Value, Vec<String>), ApiError> {
    let scan = decode::scan(body);
    let unrecognized = |why: String| {
        ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {}): couldn't get version/kind; json parse error: {why} ({})",
            kind.kind,
            decode::summary(body)
        ))
    };
    if let Some(error) = scan.error {
        return Err(unrecognized(error));
    }
    let object: Value = serde_json::from_slice(body).map_err(|e| unrecognized(e.to_string()))?;
    if !object.is_object() {
        return Err(unrecognized(format!(
            "json: cannot unmarshal {} into Go value of type struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }}",
            go_json_type(&object)
        )));
    }
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let expected = kind.api_version();
    if !api_version.is_empty() && api_version != expected {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({api_version}) does not match the expected API version ({expected})"
        )));
    }
    let given_kind = object["kind"].as_str().unwrap_or_default();
    if kind.built_in_type().is_some() && !given_kind.is_empty() && given_kind != kind.kind {
        return Err(ApiError::bad_request(format!(
            "{given_kind} in version {} cannot be handled as a {}: {}",
            go_quote(&kind.version),
            kind.kind,
            another_kind(kind, given_kind)
        )));
    }
    Ok((object, scan.duplicates))
}

/// Why the body of a built-in kind's URL cannot be of kind `given`: no conversion from another
/// kind of the version, or no such kind.
fn another_kind(kind: &Kind, given: &str) -> String {
    let mut other = kind.clone();
    other.kind = given.to_owned();
    if other.built_in_type().is_none() {
        return format!(
            "no kind {} is registered for version {} in scheme \"pkg/api/legacyscheme/scheme.go:30\"",
            go_quote(given),
            go_quote(&kind.api_version())
        );
    }
    let internal = match kind.group.as_str() {
        "" => "core",
        group => group.split('.').next().unwrap_or(group),
    };
    format!(
        "converting ({}.{given}) to ({internal}.{}): unknown conversion",
        kind.version, kind.kind
    )
}

/// The JSON type of a value as Go's decoder names it in its errors.
fn go_json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn patch(
    store: &mut Store,
    kind: &Kind,
    route: &Route,
    name: &str,
    scope: Scope,
    request: &Incoming,
) -> Result<Reply, ApiError> {
    let content_type = request
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    let media_type = content_type.split(';').next().unwrap_or_default().trim();
    let accepted: &[&str] = if kind.built_in_type().is_some() {
        &[JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH]
    } else {
        &[JSON_PATCH, MERGE_PATCH, APPLY_PATCH]
    };
    if !accepted.contains(&media_type) {
        return Err(ApiError::unsupported_media_type(accepted));
    }
    let apply = media_type == APPLY_PATCH;
    let options = query::write_options(request.query, Options::Patch(apply))?;
    let edit = patch_edit(media_type, request.body, &options)?;
    let write = Write {
        caller: caller(scope, &options, request, Vec::new()),
        edit,
    };
    let (status, object) = store.write(&route.resource, route.namespace.as_deref(), name, write)?;
    Ok(Reply::Json(status, object))
}

/// The edit a patch body makes, or the API server's refusal of the body.
fn patch_edit(media_type: &str, body: &[u8], options: &WriteOptions) -> Result<Edit, ApiError> {
    let checked = options.validation != FieldValidation::Ignore;
    let scan = decode::scan(body);
    match media_type {
        APPLY_PATCH => Ok(Edit::Apply {
            config: apply_config(body)?,
            force: options.force,
        }),
        JSON_PATCH => {
            if let Some(error) = scan.error {
                let message = if checked {
                    format!("error decoding patch: {error}")
                } else {
                    error
                };
                return Err(ApiError::bad_request(message));
            }
            let value: Value = serde_json::from_slice(body).unwrap_or_default();
            if !value.is_array() {
                return Err(ApiError::bad_request(format!(
                    "error decoding patch: json: cannot unmarshal {} into Go value of type []handlers.jsonPatchOp",
                    go_json_type(&value)
                )));
            }
            // Operations that do not parse fail when they are applied, as the API server's.
            let patch = serde_json::from_value(value).map_err(|_| ApiError::unprocessable())?;
            Ok(Edit::Json(patch))
        }
        _ => {
            let strategic = media_type == STRATEGIC_MERGE_PATCH;
            if let Some(error) = scan.error {
                let message = match (strategic, checked) {
                    (false, true) => format!("error decoding patch: {error}"),
                    (false, false) => "Invalid JSON Patch".to_owned(),
                    (true, _) => error,
                };
                return Err(ApiError::bad_request(message));
            }
            let value: Value = serde_json::from_slice(body).unwrap_or_default();
            if !value.is_object() {
                let error = format!(
                    "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                    go_json_type(&value)
                );
                let message = if strategic {
                    error
                } else {
                    format!("error decoding patch: {error}")
                };
                return Err(ApiError::bad_request(message));
            }
            Ok(if strategic {
                Edit::Strategic(value)
            } else {
                Edit::Merge(value)
            })
        }
    }
}

/// The body of an apply: YAML, of which JSON (what kube sends) is a part.
fn apply_config(body: &[u8]) -> Result<Value, ApiError> {
    if let Ok(config) = serde_json::from_slice(body) {
        return Ok(config);
    }
    let text = std::str::from_utf8(body)
        .map_err(|_| ApiError::bad_request("error decoding YAML: the body is not UTF-8"))?;
    serde_saphyr::from_str(text)
        .map_err(|error| ApiError::bad_request(format!("error decoding YAML: {error}")))
}

/// The options of a delete, from its body and query.
fn delete_options(request: &Incoming) -> Result<(Value, bool), ApiError> {
    let body = if request.body.is_empty() {
        Value::Null
    } else {
        if let Some(error) = decode::scan(request.body).error {
            return Err(ApiError::unclassified(format!(
                "couldn't get version/kind; json parse error: {error}"
            )));
        }
        serde_json::from_slice(request.body).unwrap_or_default()
    };
    let options = query::delete_options(request.query, &body)?;
    let dry_run = !request.query.all("dryRun").is_empty()
        || options["dryRun"]
            .as_array()
            .is_some_and(|values| !values.is_empty());
    Ok((options, dry_run))
}

fn delete(
    store: &mut Store,
    route: &Route,
    name: &str,
    request: &Incoming,
) -> Result<Reply, ApiError> {
    let (options, dry_run) = delete_options(request)?;
    let namespace = route.namespace.as_deref();
    let user = Some(&request.user);
    let answer = store.delete(&route.resource, namespace, name, &options, dry_run, user)?;
    Ok(Reply::Json(StatusCode::OK, answer))
}

fn delete_collection(
    store: &mut Store,
    route: &Route,
    request: &Incoming,
) -> Result<Reply, ApiError> {
    let (options, dry_run) = delete_options(request)?;
    let kind = store.kind(&route.resource)?;
    let namespace = route.namespace.as_deref();
    let mut list = store.list(
        &route.resource,
        namespace,
        &filter(request.query, &kind)?,
        None,
        None,
    )?;
    let mut deleted = Vec::new();
    for object in list["items"].as_array().into_iter().flatten() {
        let metadata = &object["metadata"];
        let name = metadata["name"].as_str().unwrap_or_default();
        let namespace = metadata["namespace"].as_str();
        let user = Some(&request.user);
        store.delete(&route.resource, namespace, name, &options, dry_run, user)?;
        deleted.push(object.clone());
    }
    list["items"] = Value::Array(deleted);
    Ok(Reply::Json(StatusCode::OK, list))
}
