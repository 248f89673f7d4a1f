{{ rust_header }}//! The {{ kind }} controller: acts on {{ plural }}, a kind built into Kubernetes
//! (`{% if api_group == "" %}{{ version }}`, the core API group{% else %}{{ api_group }}/{{ version }}`{% endif %}).
//!
//! kube-runtime's [`Controller`] watches {{ plural }} and calls `reconcile` for each {{ kind }}
//! whenever it changes, whenever something else the controller watches changes, and whenever
//! `reconcile` asks for it. `reconcile` gets no diff, only the object as it is now, and works out
//! what to do from the object and the cluster: it must be idempotent, changing nothing when
//! nothing has to change. The same object is never reconciled twice at the same time.
//!
//! Other controllers (Kubernetes' own, at least) own the {{ plural }} too: change only what your
//! operator is responsible for, and prefer server-side apply with this controller's field
//! manager, which touches only the fields it sends.

use std::sync::Arc;

use futures::StreamExt as _;
use {{ rust_type }};
use kube::runtime::controller::{self, Action, Controller};
use kube::runtime::events::{Recorder, Reporter};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Api, Client, Resource as _, ResourceExt as _};

use crate::controller::{ControllerFuture, PolicyRule, Shared, log_result, rule};
use crate::manager::backoff::Backoff;
use crate::manager::metrics::ControllerMetrics;
use crate::manager::namespaces::join_controllers;

/// The controller's name in logs, the `reportingController` of its Events, and its field manager
/// name for server-side apply (the owner of the fields it writes, see `kubectl get
/// --show-managed-fields`).
const CONTROLLER_NAME: &str = "{{ controller_name }}";


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
                // TODO(user): narrow down what to watch, e.g. `watcher::Config::default().labels("app=x")`:
            // the controller caches every {{ kind }} it watches.
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
    // The API group and plural of {{ kind }} (`&()`: a typed resource needs no runtime type
    // information).
    let group = {{ kind }}::group(&());
    let plural = {{ kind }}::plural(&());
    vec![
        // Watching {{ plural }}. TODO(user): add "update" and "patch" (or more) when reconcile
        // writes them.
        rule(&[&group], &[&plural], &["get", "list", "watch"]),
        // Publishing Events (the recorder patches an Event when it repeats).
        rule(&["events.k8s.io"], &["events"], &["create", "patch"]),
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
    /// A request to the API server failed. TODO(user): wrap the errors of the requests that
    /// reconcile makes, or add variants of your own.
{%- if api_namespaced %}
    #[error("request about {{ kind }} {namespace}/{name} failed")]
    Request {
        namespace: String,
        name: String,
        #[source]
        source: kube::Error,
    },
{%- else %}
    #[error("request about {{ kind }} {name} failed")]
    Request {
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

/// Does what the operator needs done about one {{ kind }}.
async fn reconcile_object(object: &{{ kind }}, _ctx: &Context) -> Result<Action, Error> {
    let name = object.name_any();
{%- if api_namespaced %}
    let namespace = object.namespace().unwrap_or_default();
    tracing::info!(controller = CONTROLLER_NAME, namespace, name, "reconciling");
{%- else %}
    tracing::info!(controller = CONTROLLER_NAME, name, "reconciling");
{%- endif %}

    if object.meta().deletion_timestamp.is_some() {
        // It is being deleted. For clean-up first, see `kube::runtime::finalizer`.
        return Ok(Action::await_change());
    }

    // TODO(user): your logic here. For instance, to set a label with server-side apply (rename
    // `_ctx` to `ctx`, and add "patch" to the verbs in `rbac_rules`):
    //
    //     let api = Api::<{{ kind }}>::{% if api_namespaced %}namespaced(ctx.client.clone(), &namespace){% else %}all(ctx.client.clone()){% endif %};
    //     let patch = serde_json::json!({
    //         "apiVersion": {{ kind }}::api_version(&()),
    //         "kind": {{ kind }}::kind(&()),
    //         "metadata": { "labels": { "{{ domain }}/seen": "true" } },
    //     });
    //     let params = kube::api::PatchParams::apply(CONTROLLER_NAME);
    //     api.patch(&name, &params, &kube::api::Patch::Apply(&patch))
    //         .await
    //         .map_err(|source| Error::Request { {% if api_namespaced %}namespace, {% endif %}name, source })?;

    // Nothing to redo until the {{ kind }} changes.
    Ok(Action::await_change())
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

/// `reconcile` against a mocked API server that fails the test on any request, because this
/// reconcile makes none yet. When yours does, expect its requests one by one, as the tests of the
/// controllers of your own kinds do (`operator-rs create api` with `--resource`).
#[cfg(test)]
mod tests {
    use std::time::Duration;

    use http::{Request, Response};
    use kube::client::Body;
    use tower_test::mock;

    use super::*;

    const TIMEOUT: Duration = Duration::from_secs(5);

    /// Metrics for a test: a registry of its own, so tests do not share counters.
    fn test_metrics() -> ControllerMetrics {
        crate::manager::metrics::Metrics::new().controller(CONTROLLER_NAME, 1)
    }

    #[tokio::test]
    async fn reconcile_makes_no_requests() {
        let (service, mut api_server) = mock::pair::<Request<Body>, Response<Body>>();
        let context = Arc::new(Context::new(Client::new(service, "default"), test_metrics()));
        let mut object = {{ kind }}::default();
        object.metadata.name = Some("test".to_owned());
{%- if api_namespaced %}
        object.metadata.namespace = Some("default".to_owned());
{%- endif %}

        let verifier = tokio::spawn(async move {
            // `None` once reconcile has finished and dropped the client.
            if let Some((request, _)) = api_server.next_request().await {
                panic!("unexpected request: {} {}", request.method(), request.uri());
            }
        });
        let result = tokio::time::timeout(TIMEOUT, reconcile(Arc::new(object), context)).await;
        let action = result.expect("reconcile did not finish").unwrap();
        assert_eq!(action, Action::await_change());
        tokio::time::timeout(TIMEOUT, verifier)
            .await
            .expect("the mocked API server did not stop")
            .unwrap();
    }
}
