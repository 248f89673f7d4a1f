//! The HTTP side of the fake API server: the URLs and query parameters that kube's client
//! sends, the answers it expects, and watch streams (one JSON event per line).

use std::io;
use std::time::Duration;

use axum::body::{Body, Bytes};
use http::{HeaderMap, Method, Request, Response, StatusCode, header};
use serde_json::Value;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::Instant;

use super::admission::User;
use super::errors::ApiError;
use super::fields::Scope;
use super::kinds::ResourceKey;
use super::rbac::{Attributes, Identity};
use super::selector::Selector;
use super::store::{Caller, Edit, Filter, Since, Store, Write};
use super::{Denial, Inner, RecordedRequest, Verb};

/// Answers one request of a [`kube::Client`] of `identity`, or fails it like a connection that
/// cannot be made while the server is unavailable.
pub(super) async fn serve(
    shared: Inner,
    identity: &Identity,
    request: Request<kube::client::Body>,
) -> Result<Response<Body>, io::Error> {
    if shared.lock().is_unavailable() {
        return Err(unavailable());
    }
    let (parts, body) = request.into_parts();
    let body = body.collect_bytes().await.map_err(io::Error::other)?;
    let mut state = shared.lock();
    if state.is_unavailable() {
        return Err(unavailable());
    }
    let path = parts.uri.path();
    let query = Query::parse(parts.uri.query().unwrap_or_default());
    let route = route(&state.store, path);
    let verb = verb(&parts.method, route.as_ref(), &query);
    let user = User {
        name: identity.user().to_owned(),
        groups: identity.groups().to_vec(),
    };
    let reply = match route.as_ref() {
        Some(route) => {
            let attributes = Attributes {
                verb: verb.as_rbac(),
                group: route.resource.group.clone(),
                resource: route.resource.plural.clone(),
                subresource: route.subresource.clone(),
                namespace: route.namespace.clone(),
                name: route.name.clone().or_else(|| selected_name(verb, &query)),
            };
            if identity.allows(&attributes) {
                let request = Incoming {
                    method: &parts.method,
                    headers: &parts.headers,
                    query: &query,
                    body: &body,
                    user,
                };
                handle(&mut state.store, route, &request)
            } else {
                let denial = Denial::new(identity, &attributes);
                denial.report();
                let why = attributes.forbidden_message(identity.user());
                state.denials.push(denial);
                Err(ApiError::forbidden(
                    &attributes.group,
                    &attributes.resource,
                    attributes.name.as_deref(),
                    &why,
                ))
            }
        }
        None => Err(ApiError::no_resource()),
    }
    .unwrap_or_else(|error| Reply::Json(error.code, error.status()));
    state.requests.push(RecordedRequest {
        verb,
        url: parts.uri.to_string(),
        resource: route
            .as_ref()
            .map(|route| route.resource.plural.clone())
            .unwrap_or_default(),
        subresource: route.as_ref().and_then(|route| route.subresource.clone()),
        namespace: route.as_ref().and_then(|route| route.namespace.clone()),
        name: route.as_ref().and_then(|route| route.name.clone()),
        status: reply.status(),
    });
    drop(state);
    Ok(reply.into_response())
}

/// Answers one request that came over TCP ([`super::FakeApiServer::serve`]) as [`serve`] does;
/// while the server is unavailable, with `503 Service Unavailable`: a listener cannot refuse
/// connections and go on listening. Remote clients are administrators.
pub(super) async fn serve_remote(shared: Inner, request: Request<Body>) -> Response<Body> {
    let (parts, body) = request.into_parts();
    let reply = match axum::body::to_bytes(body, usize::MAX).await {
        Ok(body) => {
            let request = Request::from_parts(parts, kube::client::Body::from(body));
            serve(shared, &Identity::admin(), request).await
        }
        Err(error) => Err(io::Error::other(error)),
    };
    reply.unwrap_or_else(|error| {
        let status = ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "ServiceUnavailable",
            error.to_string(),
        );
        Reply::Json(status.code, status.status()).into_response()
    })
}

fn unavailable() -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionRefused,
        "the fake API server is unavailable",
    )
}

/// What a URL names: a collection, or one object, or one object's subresource.
struct Route {
    resource: ResourceKey,
    namespace: Option<String>,
    name: Option<String>,
    subresource: Option<String>,
}

/// `/api/v1/namespaces/default/configmaps/x`, `/apis/apps/v1/deployments`,
/// `/apis/g/v1/namespaces/ns/widgets/x/status`, `/api/v1/namespaces/ns` … for the kinds `store`
/// serves.
fn route(store: &Store, path: &str) -> Option<Route> {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, rest) = match segments.as_slice() {
        ["api", version, rest @ ..] => ("", *version, rest),
        ["apis", group, version, rest @ ..] => (*group, *version, rest),
        _ => return None,
    };
    let resource = |plural: &str| ResourceKey {
        group: group.to_owned(),
        version: version.to_owned(),
        plural: plural.to_owned(),
    };
    let namespaced = |plural: &str| store.kind(&resource(plural)).is_ok_and(|k| k.namespaced);
    let (namespace, rest) = match rest {
        ["namespaces", namespace, rest @ ..] if rest.first().is_some_and(|p| namespaced(p)) => {
            (Some((*namespace).to_owned()), rest)
        }
        rest => (None, rest),
    };
    let (plural, name, subresource) = match rest {
        [plural] => (*plural, None, None),
        [plural, name] => (*plural, Some(*name), None),
        [plural, name, subresource] => (*plural, Some(*name), Some(*subresource)),
        _ => return None,
    };
    let kind = store.kind(&resource(plural)).ok()?;
    // A namespaced object is only found in its namespace.
    if kind.namespaced && namespace.is_none() && name.is_some() {
        return None;
    }
    Some(Route {
        resource: resource(plural),
        namespace,
        name: name.map(str::to_owned),
        subresource: subresource.map(str::to_owned),
    })
}

/// The verb of a request, as RBAC and audit logs name it.
fn verb(method: &Method, route: Option<&Route>, query: &Query) -> Verb {
    let named = route.is_some_and(|route| route.name.is_some());
    match *method {
        Method::POST => Verb::Create,
        Method::PUT => Verb::Update,
        Method::PATCH => Verb::Patch,
        Method::DELETE if named => Verb::Delete,
        Method::DELETE => Verb::DeleteCollection,
        _ if named => Verb::Get,
        _ if query.flag("watch") => Verb::Watch,
        _ => Verb::List,
    }
}

/// The object a list or watch selects by name (`fieldSelector=metadata.name=<name>`), which the
/// API server's RBAC authorizes as a request for that name (its `RequestInfo`), so that a rule
/// with `resourceNames` grants a watch of one object.
fn selected_name(verb: Verb, query: &Query) -> Option<String> {
    if !matches!(verb, Verb::List | Verb::Watch) {
        return None;
    }
    // A term that requires exactly that name (`=` or `==`), as `RequiresExactMatch`.
    let selector = query.get("fieldSelector")?;
    selector.split(',').find_map(|term| {
        let name = term.trim().strip_prefix("metadata.name=")?;
        let name = name.strip_prefix('=').unwrap_or(name);
        (!name.is_empty()).then(|| name.to_owned())
    })
}

/// The query parameters of a request, decoded.
struct Query(Vec<(String, String)>);

impl Query {
    fn parse(query: &str) -> Self {
        let pairs = query
            .split('&')
            .filter(|pair| !pair.is_empty())
            .map(|pair| {
                let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                (percent_decode(key), percent_decode(value))
            })
            .collect();
        Self(pairs)
    }

    fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, value)| value.as_str())
    }

    fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some("true" | "1"))
    }
}

/// Decodes `application/x-www-form-urlencoded` text (`%3D` and `+`). Written here because the
/// crates that do it are not dependencies of the runtime.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%'
            && let Some(byte) = text
                .get(index + 1..index + 3)
                .and_then(|hex| u8::from_str_radix(hex, 16).ok())
        {
            decoded.push(byte);
            index += 3;
            continue;
        }
        decoded.push(if bytes[index] == b'+' {
            b' '
        } else {
            bytes[index]
        });
        index += 1;
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

/// An answer: a JSON object, or a watch stream that lasts until the watch ends or its
/// `timeoutSeconds` are up.
enum Reply {
    Json(StatusCode, Value),
    Watch(UnboundedReceiver<Bytes>, Option<Instant>),
}

impl Reply {
    fn status(&self) -> StatusCode {
        match self {
            Reply::Json(status, _) => *status,
            Reply::Watch(..) => StatusCode::OK,
        }
    }

    fn into_response(self) -> Response<Body> {
        let (status, body) = match self {
            Reply::Json(status, value) => (
                status,
                Body::from(serde_json::to_vec(&value).expect("JSON values serialize")),
            ),
            Reply::Watch(receiver, deadline) => {
                let lines = futures::stream::unfold(receiver, move |mut receiver| async move {
                    let line = match deadline {
                        Some(deadline) => tokio::time::timeout_at(deadline, receiver.recv())
                            .await
                            .ok()
                            .flatten(),
                        None => receiver.recv().await,
                    };
                    line.map(|line| (Ok::<_, io::Error>(line), receiver))
                });
                (StatusCode::OK, Body::from_stream(lines))
            }
        };
        let mut response = Response::new(body);
        *response.status_mut() = status;
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static("application/json"),
        );
        response
    }
}

/// A request as [`handle`] reads it.
struct Incoming<'a> {
    method: &'a Method,
    headers: &'a HeaderMap,
    query: &'a Query,
    body: &'a [u8],
    user: User,
}

/// Answers a request for a resource the store serves.
fn handle(store: &mut Store, route: &Route, request: &Incoming) -> Result<Reply, ApiError> {
    let Incoming {
        method,
        headers,
        query,
        body,
        user,
    } = request;
    let kind = store.kind(&route.resource)?;
    let resource = &route.resource;
    let namespace = route.namespace.as_deref();
    let scope = match route.subresource.as_deref() {
        None => Scope::Main,
        Some("status") if kind.status_subresource => Scope::Status,
        Some(_) => return Err(ApiError::no_resource()),
    };
    let dry_run = query.get("dryRun").is_some_and(|value| !value.is_empty());
    let caller = |manager: String| Caller {
        scope,
        manager,
        dry_run,
        strict: query.get("fieldValidation") == Some("Strict"),
        user: user.clone(),
    };
    let manager = || field_manager(query, headers);
    let json = |body: &[u8]| -> Result<Value, ApiError> {
        serde_json::from_slice(body)
            .map_err(|error| ApiError::bad_request(format!("the body is not JSON: {error}")))
    };
    let ok = |value| Ok(Reply::Json(StatusCode::OK, value));

    match ((*method).clone(), route.name.as_deref()) {
        (Method::GET, Some(name)) => ok(store.get(resource, namespace, name)?),
        (Method::GET, None) if scope == Scope::Main => read(store, resource, namespace, query),
        // Namespaced objects are created in a namespace's collection only.
        (Method::POST, None) if scope == Scope::Main && kind.namespaced == namespace.is_some() => {
            let object = store.create(resource, namespace, json(body)?, &caller(manager()))?;
            Ok(Reply::Json(StatusCode::CREATED, object))
        }
        (Method::PUT, Some(name)) => {
            let write = Write {
                caller: caller(manager()),
                edit: Edit::Replace(json(body)?),
            };
            let (status, object) = store.write(resource, namespace, name, write)?;
            Ok(Reply::Json(status, object))
        }
        (Method::PATCH, Some(name)) => {
            let (edit, manager) = patch_edit(headers, query, body, manager)?;
            let write = Write {
                caller: caller(manager),
                edit,
            };
            let (status, object) = store.write(resource, namespace, name, write)?;
            Ok(Reply::Json(status, object))
        }
        (Method::DELETE, name) if scope == Scope::Main => {
            let options = if body.is_empty() {
                Value::Null
            } else {
                json(body)?
            };
            let deleted = match name {
                Some(name) => {
                    store.delete(resource, namespace, name, &options, dry_run, Some(user))?
                }
                None => delete_collection(store, route, query, &options, dry_run, user)?,
            };
            ok(deleted)
        }
        _ => Err(ApiError::method_not_allowed()),
    }
}

/// A list of the collection of `resource`, or a watch of it (`?watch`).
fn read(
    store: &mut Store,
    resource: &ResourceKey,
    namespace: Option<&str>,
    query: &Query,
) -> Result<Reply, ApiError> {
    let filter = filter(query)?;
    if !query.flag("watch") {
        let limit = query.get("limit").and_then(|limit| limit.parse().ok());
        let list = store.list(resource, namespace, &filter, limit, query.get("continue"))?;
        return Ok(Reply::Json(StatusCode::OK, list));
    }
    let since =
        match query.get("resourceVersion") {
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
    Ok(Reply::Watch(receiver, deadline))
}

/// The edit of a PATCH by its content type, and the field manager it writes as (`manager` for
/// every type but server-side apply, which names its own).
fn patch_edit(
    headers: &HeaderMap,
    query: &Query,
    body: &[u8],
    manager: impl Fn() -> String,
) -> Result<(Edit, String), ApiError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    let media_type = content_type.split(';').next().unwrap_or_default().trim();
    match media_type {
        "application/json-patch+json" => {
            let patch = serde_json::from_slice(body).map_err(|error| {
                ApiError::bad_request(format!("the body is not a JSON patch: {error}"))
            })?;
            Ok((Edit::Json(patch), manager()))
        }
        "application/merge-patch+json" | "application/strategic-merge-patch+json" => {
            let merge = serde_json::from_slice(body)
                .map_err(|error| ApiError::bad_request(format!("the body is not JSON: {error}")))?;
            Ok((Edit::Merge(merge), manager()))
        }
        "application/apply-patch+yaml" => {
            let Some(manager) = query.get("fieldManager").filter(|m| !m.is_empty()) else {
                return Err(ApiError::bad_request(
                    "PATCH requests with an apply content type require a fieldManager",
                ));
            };
            let config = apply_config(body)?;
            let force = query.flag("force");
            Ok((Edit::Apply { config, force }, manager.to_owned()))
        }
        other => Err(ApiError::unsupported_media_type(other)),
    }
}

/// Deletes every object of the collection of `route` that the query selects; the list of them.
fn delete_collection(
    store: &mut Store,
    route: &Route,
    query: &Query,
    options: &Value,
    dry_run: bool,
    user: &User,
) -> Result<Value, ApiError> {
    let (resource, namespace) = (&route.resource, route.namespace.as_deref());
    let mut list = store.list(resource, namespace, &filter(query)?, None, None)?;
    let mut deleted = Vec::new();
    for object in list["items"].as_array().into_iter().flatten() {
        let metadata = &object["metadata"];
        let name = metadata["name"].as_str().unwrap_or_default();
        let namespace = metadata["namespace"].as_str();
        store.delete(resource, namespace, name, options, dry_run, Some(user))?;
        deleted.push(object.clone());
    }
    list["items"] = Value::Array(deleted);
    Ok(list)
}

/// The selectors of a list, watch or collection delete.
fn filter(query: &Query) -> Result<Filter, ApiError> {
    Ok(Filter {
        labels: Selector::labels(query.get("labelSelector").unwrap_or_default())
            .map_err(ApiError::bad_request)?,
        fields: Selector::fields(query.get("fieldSelector").unwrap_or_default())
            .map_err(ApiError::bad_request)?,
    })
}

/// The field manager of a write that is not an apply: `fieldManager`, or the program in the
/// `User-Agent` (as the API server does), or `unknown`.
fn field_manager(query: &Query, headers: &HeaderMap) -> String {
    if let Some(manager) = query.get("fieldManager").filter(|m| !m.is_empty()) {
        return manager.to_owned();
    }
    headers
        .get(header::USER_AGENT)
        .and_then(|agent| agent.to_str().ok())
        .and_then(|agent| agent.split('/').next())
        .filter(|agent| !agent.is_empty())
        .unwrap_or("unknown")
        .to_owned()
}

/// The body of an apply: YAML, of which JSON (what kube sends) is a part.
fn apply_config(body: &[u8]) -> Result<Value, ApiError> {
    if let Ok(config) = serde_json::from_slice(body) {
        return Ok(config);
    }
    let text = std::str::from_utf8(body)
        .map_err(|_| ApiError::bad_request("the applied configuration is not UTF-8"))?;
    serde_saphyr::from_str(text).map_err(|error| {
        ApiError::bad_request(format!("the applied configuration is not YAML: {error}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_are_decoded() {
        let query = Query::parse("&watch=true&labelSelector=app%3Dweb%2Ctier+in+%28a%29&x");
        assert!(query.flag("watch"));
        assert_eq!(query.get("labelSelector"), Some("app=web,tier in (a)"));
        assert_eq!(query.get("x"), Some(""));
        assert_eq!(query.get("y"), None);
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz%41"), "%zzA");
    }

    /// As the API server's `RequestInfo`: a list or watch whose field selector requires one
    /// name is a request for that name; anything else names nothing.
    #[test]
    fn lists_and_watches_of_one_name_name_it() {
        let name = |verb, query: &str| selected_name(verb, &Query::parse(query));
        let one = "fieldSelector=metadata.name%3Dcerts";
        assert_eq!(name(Verb::Watch, one), Some("certs".to_owned()));
        assert_eq!(name(Verb::List, one), Some("certs".to_owned()));
        let twice = "fieldSelector=metadata.namespace%3Dns%2Cmetadata.name%3D%3Dcerts";
        assert_eq!(name(Verb::List, twice), Some("certs".to_owned()));
        assert_eq!(name(Verb::Create, one), None);
        assert_eq!(
            name(Verb::List, "fieldSelector=metadata.name%21%3Dcerts"),
            None
        );
        assert_eq!(
            name(Verb::List, "labelSelector=metadata.name%3Dcerts"),
            None
        );
        assert_eq!(name(Verb::List, "fieldSelector=metadata.name%3D"), None);
    }

    #[test]
    fn routes() {
        let mut store = Store::new(10);
        for (kind, check, schema) in super::super::kinds::built_in() {
            store.register_built_in(kind, check, schema);
        }
        let route_of = |path| {
            route(&store, path).map(|r| (r.resource.plural, r.namespace, r.name, r.subresource))
        };
        let some = |s: &str| Some(s.to_owned());
        assert_eq!(
            route_of("/apis/apps/v1/namespaces/ns/deployments/d/status"),
            Some(("deployments".into(), some("ns"), some("d"), some("status")))
        );
        assert_eq!(
            route_of("/apis/apps/v1/deployments"),
            Some(("deployments".into(), None, None, None))
        );
        assert_eq!(
            route_of("/api/v1/namespaces/ns"),
            Some(("namespaces".into(), None, some("ns"), None))
        );
        assert_eq!(
            route_of("/api/v1/namespaces/ns/status"),
            Some(("namespaces".into(), None, some("ns"), some("status")))
        );
        assert_eq!(route_of("/apis/apps/v1/deployments/d"), None);
        assert_eq!(route_of("/apis/example.com/v1/widgets"), None);
        assert_eq!(route_of("/version"), None);
    }
}
