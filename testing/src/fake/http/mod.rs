//! The HTTP side of the fake API server: the URLs and query parameters that kube's client
//! sends, the answers it expects, and watch streams (one JSON event per line).

mod requests;

use std::io;

use axum::body::Body;
use http::{Method, Request, Response, StatusCode, header};
use serde_json::Value;
use tokio::time::Instant;

use super::admission::User;
use super::errors::ApiError;
use super::kinds::{Kind, ResourceKey};
use super::query::Query;
use super::rbac::{Attributes, Identity};
use super::selector::Selector;
use super::store::{Filter, Store};
use super::watch_lines::{self, LineReceiver, Unread};
use super::{Denial, Inner, RecordedRequest, Verb};
use requests::Incoming;

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
    let (reply, unread) = answer(&shared, identity, &parts, &body)?;
    watch_lines::until_read(unread).await;
    Ok(reply.into_response())
}

/// The answer to one request, and the watch events its response waits for (see
/// [`super::FakeApiServer::deliver_watch_events_first`]).
fn answer(
    shared: &Inner,
    identity: &Identity,
    parts: &http::request::Parts,
    body: &[u8],
) -> Result<(Reply, Vec<Unread>), io::Error> {
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
                    body,
                    user,
                };
                requests::handle(&mut state.store, route, &request)
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
        None if routes_to_json(path) => Err(ApiError::no_resource()),
        None => Ok(Reply::Text(StatusCode::NOT_FOUND, "404 page not found\n")),
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
    let unread = match state.watch_events_first && verb.is_write() {
        true => state.store.unread(),
        false => Vec::new(),
    };
    Ok((reply, unread))
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

/// Whether the API server answers a URL it serves nothing at with a `Status` (under the
/// groups it has built in) or with plain text (elsewhere: custom resources' groups).
fn routes_to_json(path: &str) -> bool {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    match segments.as_slice() {
        ["api", ..] => true,
        ["apis", group, ..] => !group.contains('.') || group.ends_with(".k8s.io"),
        _ => false,
    }
}

fn unavailable() -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionRefused,
        "the fake API server is unavailable",
    )
}

/// What a URL names: a collection, or one object, or one object's subresource.
pub(super) struct Route {
    pub(super) resource: ResourceKey,
    pub(super) namespace: Option<String>,
    pub(super) name: Option<String>,
    pub(super) subresource: Option<String>,
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

/// An answer: a JSON object, or a watch stream that lasts until the watch ends or its
/// `timeoutSeconds` are up.
pub(super) enum Reply {
    Json(StatusCode, Value),
    /// A plain text answer (the API server's `404 page not found` of URLs it routes nowhere).
    Text(StatusCode, &'static str),
    Watch(LineReceiver, Option<Instant>),
}

impl Reply {
    fn status(&self) -> StatusCode {
        match self {
            Reply::Json(status, _) | Reply::Text(status, _) => *status,
            Reply::Watch(..) => StatusCode::OK,
        }
    }

    fn into_response(self) -> Response<Body> {
        let (status, body, content_type) = match self {
            Reply::Json(status, value) => (
                status,
                Body::from(serde_json::to_vec(&value).expect("JSON values serialize")),
                "application/json",
            ),
            Reply::Text(status, text) => (status, Body::from(text), "text/plain; charset=utf-8"),
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
                (StatusCode::OK, Body::from_stream(lines), "application/json")
            }
        };
        let mut response = Response::new(body);
        *response.status_mut() = status;
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static(content_type),
        );
        response
    }
}

/// The selectors of a list, watch or collection delete; the fields of a field selector must
/// be ones the kind lets clients select by.
pub(super) fn filter(query: &Query, kind: &Kind) -> Result<Filter, ApiError> {
    let supported = |field: &str| field_label(kind, field);
    Ok(Filter {
        labels: Selector::labels(query.get("labelSelector").unwrap_or_default())
            .map_err(ApiError::bad_request)?,
        fields: Selector::fields(query.get("fieldSelector").unwrap_or_default(), &supported)
            .map_err(ApiError::bad_request)?,
    })
}

/// Whether clients may select objects of `kind` by `field`, or the API server's refusal.
fn field_label(kind: &Kind, field: &str) -> Result<(), String> {
    let metadata = field == "metadata.name" || (kind.namespaced && field == "metadata.namespace");
    let extra: &[&str] = match (kind.group.as_str(), kind.plural.as_str()) {
        ("", "pods") => &[
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.podIPs",
            "status.nominatedNodeName",
        ],
        ("", "secrets") => &["type"],
        ("", "namespaces") => &["status.phase"],
        ("", "events") => &[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        ],
        ("events.k8s.io", "events") => &[
            "reason",
            "regarding.kind",
            "regarding.namespace",
            "regarding.name",
            "regarding.uid",
            "regarding.apiVersion",
            "regarding.resourceVersion",
            "regarding.fieldPath",
            "reportingController",
            "type",
        ],
        _ => &[],
    };
    if metadata || extra.contains(&field) {
        return Ok(());
    }
    let converts = !extra.is_empty() || kind.built_in_type().is_none();
    Err(if converts {
        format!("field label not supported: {field}")
    } else {
        format!(
            "{field:?} is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        for (kind, check) in super::super::kinds::built_in() {
            store.register_built_in(kind, check);
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
