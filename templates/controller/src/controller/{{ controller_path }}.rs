{{ rust_header }}//! The {{ kind }} controller: makes the cluster match the spec of every {{ kind }}
//! (`{{ qualified_group }}/{{ version }}`) and reports how that went in its status.
//!
//! kube-runtime's [`Controller`] watches {{ plural }} and calls `reconcile` for each {{ kind }}
//! whenever it changes, whenever something else the controller watches changes, and whenever
//! `reconcile` asks for it. `reconcile` gets no diff, only the object as it is now, and works out
//! what to do from the object and the cluster: it must be idempotent, changing nothing when
//! nothing has to change. The same object is never reconciled twice at the same time.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::{self, Action, Controller};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Api, Client, Resource as _, ResourceExt as _};
use serde_json::json;

use {{ api_module }}::{{ kind }};
use crate::controller::{
    ControllerFuture, PolicyRule, Shared, conditions_to_apply, log_result, rule,
};
use crate::manager::backoff::Backoff;
use crate::manager::metrics::ControllerMetrics;
use crate::manager::namespaces::join_controllers;

/// The controller's name in logs, the `reportingController` of its Events, and its field manager
/// name for server-side apply (the owner of the fields it writes, see `kubectl get
/// --show-managed-fields`).
const CONTROLLER_NAME: &str = "{{ controller_name }}";

/// How long `reconcile` waits before it looks at an unchanged {{ kind }} again. Changes of the
/// {{ kind }} and of the objects watched in `setup` trigger a reconciliation right away; this
/// catches drift in whatever the controller does not watch.
const RESYNC_PERIOD: Duration = Duration::from_secs(5 * 60);


/// The condition type that `reconcile` sets: whether the {{ kind }} is fully functional.
const AVAILABLE: &str = "Available";

/// Sets up the controller; the manager calls it once at startup (see `Shared::controllers`).
///
/// There is one kube-runtime `Controller` per watched namespace (see `watched_apis`), each with
/// its own cache, sharing one context: metrics and retry backoff are per kind, not per namespace.
pub fn setup(shared: &Shared) -> ControllerFuture {
    let metrics = shared
        .metrics
        .controller(CONTROLLER_NAME, shared.max_concurrent_reconciles);
    let context = Arc::new(Context::new(shared.client.clone(), metrics));
    let config = controller::Config::default().concurrency(shared.max_concurrent_reconciles);
    let controllers = watched_apis(shared)
        .into_iter()
        .map(|api| {
            // `/readyz` names each namespace's cache on its own: "{{ controller_name }}/<namespace>".
            let name = match api.namespace() {
                Some(namespace) => format!("{CONTROLLER_NAME}/{namespace}"),
                None => CONTROLLER_NAME.to_owned(),
            };
                // TODO(user): watch the objects that reconcile creates, so that their changes reconcile
            // the {{ kind }} that owns them: `.owns(Api::<ConfigMap>::namespaced(client, ns), config)`
            // in the namespace of `api` (`api.namespace()`, or `Api::all` when it is `None`).
            let controller = Controller::new(api, watcher::Config::default())
                .with_config(config.clone())
                .graceful_shutdown_on(shared.shutdown.clone().cancelled_owned());
            let store = controller.store();
            let main_loop = controller
                .run(reconcile, error_policy, Arc::clone(&context))
                .for_each(|result| async move { log_result(CONTROLLER_NAME, result) });
            shared.run_controller(&name, store, main_loop)
        })
        .collect();
    join_controllers(controllers, shared.shutdown.clone())
}

/// The {{ plural }} that the controller watches, one `Api` per watch.
{%- if api_namespaced %}
/// `WATCH_NAMESPACE` decides: every namespace when it is unset, else one watch per namespace.
fn watched_apis(shared: &Shared) -> Vec<Api<{{ kind }}>> {
    shared.watch_namespaces.apis(&shared.client)
}
{%- else %}
/// {{ plural }} are cluster-scoped, so `WATCH_NAMESPACE` does not apply: one watch of them all.
fn watched_apis(shared: &Shared) -> Vec<Api<{{ kind }}>> {
    vec![Api::all(shared.client.clone())]
}
{%- endif %}

/// The API permissions of this controller, right next to the code that needs them: `make
/// manifests` writes the rules of all controllers to `config/rbac/role.yaml`.
pub fn rbac_rules() -> Vec<PolicyRule> {
    // The group and plural of {{ kind }}, from its `#[kube(...)]` attribute (`&()`: a typed
    // resource needs no runtime type information).
    let group = {{ kind }}::group(&());
    let plural = {{ kind }}::plural(&());
    vec![
        // kubebuilder's defaults: reconcile only reads {{ plural }}, but code that also creates or
        // deletes them is common. Remove the verbs you do not need.
        rule(
            &[&group],
            &[&plural],
            &[
                "get", "list", "watch", "create", "update", "patch", "delete",
            ],
        ),
        // Writing the status subresource.
        rule(
            &[&group],
            &[&format!("{plural}/status")],
            &["get", "update", "patch"],
        ),
        // Setting `blockOwnerDeletion` in the owner references of the objects reconcile creates.
        rule(&[&group], &[&format!("{plural}/finalizers")], &["update"]),
        // Publishing Events (the recorder patches an Event when it repeats).
        rule(&["events.k8s.io"], &["events"], &["create", "patch"]),
        // TODO(user): add the rules for the objects that reconcile reads or writes, e.g.
        // rule(&[""], &["configmaps"], &["get", "list", "watch", "create", "update", "patch"]),
    ]
}

/// Shared by all reconciliations of the controller: built once, in `setup`.
pub struct Context {
    /// Client for the Kubernetes API server.
    pub client: Client,
    /// Publishes Events about {{ plural }}, as shown by `kubectl describe` and `kubectl events`.
    /// Created once because it remembers recent Events: a repeated Event becomes a count on the
    /// first one instead of a new object.
    pub recorder: Recorder,
    /// The controller's reconcile metrics (`controller_runtime_reconcile_*{controller="{{ controller_name }}"}`).
    pub metrics: ControllerMetrics,
    /// Per-object retry delays after failures: 5 ms doubling up to 1000 s, reset by a success
    /// (controller-runtime's default rate limiter).
    pub backoff: Backoff<{{ kind }}>,
}

impl Context {
    /// A context for this controller, talking to the API server through `client`.
    pub fn new(client: Client, metrics: ControllerMetrics) -> Self {
        let reporter = Reporter {
            controller: CONTROLLER_NAME.to_owned(),
            instance: None,
        };
        Self {
            recorder: Recorder::new(client.clone(), reporter),
            client,
            metrics,
            backoff: Backoff::default(),
        }
    }
}

/// Why a reconciliation failed. Every variant names the {{ kind }}, because `error_policy` logs
/// the error and the log line should say which object it is about.
#[derive(Debug, thiserror::Error)]
pub enum Error {
{%- if api_namespaced %}
    #[error("cannot update the status of {{ kind }} {namespace}/{name}")]
    UpdateStatus {
        namespace: String,
        name: String,
        #[source]
        source: kube::Error,
    },
{%- else %}
    #[error("cannot update the status of {{ kind }} {name}")]
    UpdateStatus {
        name: String,
        #[source]
        source: kube::Error,
    },
{%- endif %}
}

/// Reconciles one {{ kind }}: the work is done in `reconcile_object`; this wrapper records the
/// reconcile metrics and, on success, resets the object's retry backoff.
async fn reconcile(object: Arc<{{ kind }}>, ctx: Arc<Context>) -> Result<Action, Error> {
    let result = ctx.metrics.measure(reconcile_object(&object, &ctx)).await;
    if result.is_ok() {
        ctx.backoff.on_success(&ObjectRef::from_obj(object.as_ref()));
    }
    result
}

/// Brings the cluster in line with one {{ kind }} and records the outcome in its status.
async fn reconcile_object(object: &{{ kind }}, ctx: &Context) -> Result<Action, Error> {
    let name = object.name_any();
{%- if api_namespaced %}
    // Always set: {{ plural }} are namespaced.
    let namespace = object.namespace().unwrap_or_default();
    tracing::info!(controller = CONTROLLER_NAME, namespace, name, "reconciling");
{%- else %}
    tracing::info!(controller = CONTROLLER_NAME, name, "reconciling");
{%- endif %}

    if object.meta().deletion_timestamp.is_some() {
        // It is being deleted, and Kubernetes deletes the objects it owns along with it. For
        // clean-up outside the cluster, see `kube::runtime::finalizer`.
        return Ok(Action::await_change());
    }

    // TODO(user): compare `object.spec` with the cluster and create, update or delete what
    // differs. Give the objects you create an owner reference (`object.controller_owner_ref(&())`)
    // so that they are deleted with the {{ kind }}, and watch them in `setup`.

    // Report the outcome. TODO(user): set the conditions that describe your {{ kind }}; an error
    // returned above leaves the status as it was and retries.
    let available = Condition {
        type_: AVAILABLE.to_owned(),
        status: "True".to_owned(),
        reason: "Reconciled".to_owned(),
        message: "The {{ kind }} is reconciled.".to_owned(),
        observed_generation: object.meta().generation,
        last_transition_time: Time(Timestamp::now()),
    };
    let status = object.status.clone().unwrap_or_default();
    let Some(conditions) = conditions_to_apply(&status.conditions, vec![available]) else {
        // The status says it all already.
        return Ok(Action::requeue(RESYNC_PERIOD));
    };

    // Server-side apply of the status: the body holds only the fields this controller owns
    // (apiVersion and kind are required), and `force` takes them over should someone else have
    // set them (controllers should always force).
    let patch = json!({
        "apiVersion": {{ kind }}::api_version(&()),
        "kind": {{ kind }}::kind(&()),
        "status": { "conditions": conditions },
    });
    let params = PatchParams::apply(CONTROLLER_NAME).force();
{%- if api_namespaced %}
    let api = Api::<{{ kind }}>::namespaced(ctx.client.clone(), &namespace);
    api.patch_status(&name, &params, &Patch::Apply(&patch))
        .await
        .map_err(|source| Error::UpdateStatus {
            namespace: namespace.clone(),
            name: name.clone(),
            source,
        })?;
    tracing::info!(namespace, name, "{{ kind }} is available");
{%- else %}
    let api = Api::<{{ kind }}>::all(ctx.client.clone());
    api.patch_status(&name, &params, &Patch::Apply(&patch))
        .await
        .map_err(|source| Error::UpdateStatus {
            name: name.clone(),
            source,
        })?;
    tracing::info!(name, "{{ kind }} is available");
{%- endif %}

    // Events tell users what happened, in `kubectl describe`. Like in controller-runtime, failing
    // to publish one does not fail the reconciliation.
    let event = Event {
        type_: EventType::Normal,
        reason: "Reconciled".to_owned(),
        note: Some("The {{ kind }} is available.".to_owned()),
        action: "Reconcile".to_owned(),
        secondary: None,
    };
    if let Err(error) = ctx.recorder.publish(&event, &object.object_ref(&())).await {
        let error = &error as &dyn std::error::Error;
        tracing::warn!(error, "cannot publish an Event");
    }

    Ok(Action::requeue(RESYNC_PERIOD))
}

/// Called when `reconcile` fails: logs the error and retries the {{ kind }} after its backoff
/// delay, which doubles with each consecutive failure of the same object.
fn error_policy(object: Arc<{{ kind }}>, error: &Error, ctx: Arc<Context>) -> Action {
    let delay = ctx.backoff.on_error(&ObjectRef::from_obj(object.as_ref()));
    tracing::warn!(
        controller = CONTROLLER_NAME,
        error = error as &dyn std::error::Error,
        "reconciliation failed; retrying in {delay:?}"
    );
    Action::requeue(delay)
}

/// `reconcile` against a mocked API server: each test says which requests it expects, checks
/// them, and answers them. A request that is not expected fails the test, and so does an expected
/// request that never comes.
#[cfg(test)]
mod tests {
    use std::future::Future;

    use http::{Method, Request, Response, StatusCode};
    use kube::client::Body;
    use serde::Serialize;
    use serde_json::Value;
    use tower_test::mock::{self, Handle, SendResponse};

    use super::*;
    use {{ api_module }}::{{ kind }}Spec;

    /// The test's end of the connection: it receives the client's requests and answers them.
    type ApiServer = Handle<Request<Body>, Response<Body>>;

    const TIMEOUT: Duration = Duration::from_secs(5);

    /// The {{ kind }} to reconcile, as the controller sees it after `kubectl apply`.
    fn {{ kind_snake }}() -> {{ kind }} {
        let mut object = {{ kind }}::new("test", {{ kind }}Spec::default());
{%- if api_namespaced %}
        object.metadata.namespace = Some("default".to_owned());
{%- endif %}
        object.metadata.generation = Some(1);
        object
    }

    /// Runs `reconcile(object)` while `api_server` plays the API server, and returns the results
    /// of both.
    async fn reconcile_with<F, T>(
        object: {{ kind }},
        api_server: impl FnOnce(ApiServer) -> F,
    ) -> (Result<Action, Error>, T)
    where
        F: Future<Output = T> + Send + 'static,
        T: Send + 'static,
    {
        let (service, handle) = mock::pair::<Request<Body>, Response<Body>>();
        let context = Arc::new(Context::new(Client::new(service, "default"), test_metrics()));
        let api_server = tokio::spawn(api_server(handle));
        let result = tokio::time::timeout(TIMEOUT, reconcile(Arc::new(object), context))
            .await
            .expect("reconcile did not finish: is it waiting for an answer?");
        match tokio::time::timeout(TIMEOUT, api_server).await {
            Ok(Ok(output)) => (result, output),
            Ok(Err(failed)) => std::panic::resume_unwind(failed.into_panic()),
            Err(_) => panic!("the API server still expects requests"),
        }
    }

    /// Receives the next request, checks its method and URL, and returns its JSON body along
    /// with the means to answer it.
    async fn expect(
        api_server: &mut ApiServer,
        method: Method,
        url: &str,
    ) -> (Value, SendResponse<Response<Body>>) {
        let Some((request, send)) = api_server.next_request().await else {
            panic!("expected {method} {url}, but reconcile made no more requests");
        };
        assert_eq!(
            (request.method(), request.uri().to_string().as_str()),
            (&method, url)
        );
        let body = request.into_body().collect_bytes().await.unwrap();
        (serde_json::from_slice(&body).unwrap(), send)
    }

    /// Waits until the client is dropped (reconcile has finished) and fails on any request made
    /// until then.
    async fn expect_no_more_requests(mut api_server: ApiServer) {
        if let Some((request, _)) = api_server.next_request().await {
            panic!("unexpected request: {} {}", request.method(), request.uri());
        }
    }

    fn answer(send: SendResponse<Response<Body>>, status: StatusCode, body: &impl Serialize) {
        let mut response = Response::new(Body::from(serde_json::to_vec(body).unwrap()));
        *response.status_mut() = status;
        send.send_response(response);
    }

    /// The first reconciliation sets the Available condition (and publishes an Event); the next
    /// one, of the {{ kind }} with that status, has nothing to do.
    #[tokio::test]
    async fn reconcile_sets_status_once() {
        let url = format!(
{%- if api_namespaced %}
            "/apis/{{ qualified_group }}/{{ version }}/namespaces/default/{{ plural }}/test/status?&force=true&fieldManager={CONTROLLER_NAME}"
{%- else %}
            "/apis/{{ qualified_group }}/{{ version }}/{{ plural }}/test/status?&force=true&fieldManager={CONTROLLER_NAME}"
{%- endif %}
        );
        let (result, status) = reconcile_with({{ kind_snake }}(), |mut api_server| async move {
            let (body, send) = expect(&mut api_server, Method::PATCH, &url).await;
            assert_eq!(body["apiVersion"], "{{ qualified_group }}/{{ version }}");
            assert_eq!(body["kind"], "{{ kind }}");
            let condition = &body["status"]["conditions"][0];
            assert_eq!(condition["type"], "Available");
            assert_eq!(condition["status"], "True");
            assert_eq!(condition["observedGeneration"], 1);
            let mut updated = {{ kind_snake }}();
            updated.status = serde_json::from_value(body["status"].clone()).unwrap();
            answer(send, StatusCode::OK, &updated);

            let url = "/apis/events.k8s.io/v1/namespaces/default/events?";
            let (event, send) = expect(&mut api_server, Method::POST, url).await;
            assert_eq!(event["reason"], "Reconciled");
            assert_eq!(event["regarding"]["name"], "test");
            answer(send, StatusCode::CREATED, &event);

            expect_no_more_requests(api_server).await;
            updated.status
        })
        .await;
        assert_eq!(result.unwrap(), Action::requeue(RESYNC_PERIOD));

        // Again, with the status that the first reconciliation applied.
        let mut object = {{ kind_snake }}();
        object.status = status;
        let (result, ()) = reconcile_with(object, expect_no_more_requests).await;
        assert_eq!(result.unwrap(), Action::requeue(RESYNC_PERIOD));
    }

    /// A failed status update fails the reconciliation with an error that names the object.
    #[tokio::test]
    async fn status_update_failure_is_an_error() {
        let (result, ()) = reconcile_with({{ kind_snake }}(), |mut api_server| async move {
            let (_, send) = api_server.next_request().await.unwrap();
            let status = json!({
                "apiVersion": "v1",
                "kind": "Status",
                "status": "Failure",
                "reason": "Forbidden",
                "message": "forbidden",
                "code": 403,
            });
            answer(send, StatusCode::FORBIDDEN, &status);
            expect_no_more_requests(api_server).await;
        })
        .await;
        let error = result.unwrap_err();
        assert!(matches!(error, Error::UpdateStatus { .. }), "{error:?}");
        let expected = "cannot update the status of {{ kind }} {% if api_namespaced %}default/{% endif %}test";
        assert_eq!(error.to_string(), expected);

        let action = error_policy(Arc::new({{ kind_snake }}()), &error, test_context());
        // The first failure of an object is retried after 5 ms, the next after 10 ms …
        assert_eq!(action, Action::requeue(Duration::from_millis(5)));
    }

    /// Metrics for a test: a registry of its own, so tests do not share counters.
    fn test_metrics() -> ControllerMetrics {
        crate::manager::metrics::Metrics::new().controller(CONTROLLER_NAME, 1)
    }

    /// A context for calls that make no requests.
    fn test_context() -> Arc<Context> {
        let (service, _) = mock::pair::<Request<Body>, Response<Body>>();
        let client = Client::new(service, "default");
        Arc::new(Context::new(client, test_metrics()))
    }
}
