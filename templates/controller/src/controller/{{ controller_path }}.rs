{{ rust_header }}//! The {{ kind }} controller: makes the cluster match the spec of every {{ kind }}
//! (`{{ qualified_group }}/{{ version }}`) and reports how that went in its status.
//!
//! The runtime's [`Runner`] watches {{ plural }} and calls `reconcile` for each {{ kind }}
//! whenever it changes, whenever something else the controller watches changes, and whenever
//! `reconcile` asks for it. `reconcile` gets no diff, only the object as it is now, and works out
//! what to do from the object and the cluster: it must be idempotent, changing nothing when
//! nothing has to change. The same object is never reconciled twice at the same time.

use std::sync::Arc;
use std::time::Duration;

use kube::Resource as _;
use kube::runtime::controller::Action;
use kube::runtime::events::EventType;
use operator_rs_runtime::controller::{
    Context, ControllerFuture, ControllerSetup, PolicyRule, RbacScope, Runner, Shared, condition,
    conditions_to_apply, qualified_name, rule,
};
use serde_json::json;

use {{ api_module }}::{{ kind }};

/// The controller's name in logs and metrics, the `reportingController` of its Events, and its
/// field manager name for server-side apply (the owner of the fields it writes, see `kubectl get
/// --show-managed-fields`).
const CONTROLLER_NAME: &str = "{{ controller_name }}";

/// How long `reconcile` waits before it looks at an unchanged {{ kind }} again. Changes of the
/// {{ kind }} and of the objects watched in `setup` trigger a reconciliation right away; this
/// catches drift in whatever the controller does not watch.
const RESYNC_PERIOD: Duration = Duration::from_secs(5 * 60);

/// The condition type that `reconcile` sets: whether the {{ kind }} is fully functional.
const AVAILABLE: &str = "Available";

/// This controller, as listed in `controllers()` of `src/controller/mod.rs`.
pub const CONTROLLER: ControllerSetup = ControllerSetup {
    name: CONTROLLER_NAME,
    rbac_rules,
{%- if api_namespaced %}
    rbac_scope: RbacScope::Project,
{%- else %}
    // {{ kind }} is cluster-scoped: the controller watches it across the cluster, which only a
    // ClusterRole can grant, even in a namespaced project (see `make manifests`).
    rbac_scope: RbacScope::Cluster,
{%- endif %}
    setup,
};

/// Sets up the controller; the manager calls it once at startup.
///
/// The runner watches {{ plural }}{% if api_namespaced %} in the namespaces of `WATCH_NAMESPACE` (all by default){% endif %} and calls
/// `reconcile` for each one, with metrics, retries and graceful shutdown.
fn setup(shared: &Shared) -> ControllerFuture {
    Runner::<{{ kind }}>::new(CONTROLLER_NAME, shared)
        // TODO(user): watch the objects that reconcile creates, so that their changes reconcile
        // the {{ kind }} that owns them: `.owns::<ConfigMap>(watcher::Config::default())`.
        .run(reconcile, ())
}

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

/// Why a reconciliation failed. Every variant names the {{ kind }}, because the runner logs the
/// error and the log line should say which object it is about.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot update the status of {{ kind }} {name}")]
    UpdateStatus {
        name: String,
        #[source]
        source: kube::Error,
    },
}

/// Brings the cluster in line with one {{ kind }} and records the outcome in its status.
async fn reconcile(object: Arc<{{ kind }}>, ctx: Arc<Context>) -> Result<Action, Error> {
    let name = qualified_name(object.as_ref());
    tracing::info!(controller = CONTROLLER_NAME, name, "reconciling");

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
    let generation = object.meta().generation;
    let available = condition(AVAILABLE, true, "Reconciled", "The {{ kind }} is reconciled.", generation);
    let current = object.status.as_ref().map_or(&[][..], |status| &status.conditions);
    let Some(conditions) = conditions_to_apply(current, vec![available]) else {
        // The status says it all already: writing it again would only trigger another reconcile.
        return Ok(Action::requeue(RESYNC_PERIOD));
    };
    ctx.apply_status(object.as_ref(), json!({ "conditions": conditions }))
        .await
        .map_err(|source| Error::UpdateStatus {
            name: name.clone(),
            source,
        })?;
    tracing::info!(name, "{{ kind }} is available");

    // Events tell users what happened, in `kubectl describe`.
    let note = "The {{ kind }} is available.";
    ctx.publish(object.as_ref(), EventType::Normal, "Reconciled", "Reconcile", note)
        .await;

    Ok(Action::requeue(RESYNC_PERIOD))
}

/// `reconcile` against a mocked API server: each test says which requests it expects, checks
/// them, and answers them. A request that is not expected fails the test, and so does an expected
/// request that never comes.
#[cfg(test)]
mod tests {
    use kube::Client;
    use operator_rs_testing::{Method, StatusCode, reconcile_with};

    use super::*;
    use {{ api_module }}::{{ kind }}Spec;

    /// The {{ kind }} to reconcile, as the controller sees it after `kubectl apply`.
    fn {{ kind_snake }}() -> {{ kind }} {
        let mut object = {{ kind }}::new("test", {{ kind }}Spec::default());
{%- if api_namespaced %}
        object.metadata.namespace = Some("default".to_owned());
{%- endif %}
        object.metadata.generation = Some(1);
        object
    }

    /// `reconcile(object)`, with the context the runner would give it.
    async fn run(object: {{ kind }}, client: Client) -> Result<Action, Error> {
        reconcile(Arc::new(object), Arc::new(Context::new(client, CONTROLLER_NAME, ()))).await
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
        let (result, status) = reconcile_with(
            |client| run({{ kind_snake }}(), client),
            |mut api_server| async move {
                let apply = api_server.expect(Method::PATCH, &url).await;
                assert_eq!(apply.body["apiVersion"], "{{ qualified_group }}/{{ version }}");
                assert_eq!(apply.body["kind"], "{{ kind }}");
                let condition = &apply.body["status"]["conditions"][0];
                assert_eq!(condition["type"], "Available");
                assert_eq!(condition["status"], "True");
                assert_eq!(condition["observedGeneration"], 1);
                let mut updated = {{ kind_snake }}();
                updated.status = serde_json::from_value(apply.body["status"].clone()).unwrap();
                apply.ok(&updated);

                let url = "/apis/events.k8s.io/v1/namespaces/default/events?";
                let event = api_server.expect(Method::POST, url).await;
                assert_eq!(event.body["reason"], "Reconciled");
                assert_eq!(event.body["regarding"]["name"], "test");
                let body = event.body.clone();
                event.respond(StatusCode::CREATED, &body);

                api_server.expect_no_more_requests().await;
                updated.status
            },
        )
        .await;
        assert_eq!(result.unwrap(), Action::requeue(RESYNC_PERIOD));

        // Again, with the status that the first reconciliation applied.
        let mut object = {{ kind_snake }}();
        object.status = status;
        let (result, ()) = reconcile_with(
            |client| run(object, client),
            |api_server| api_server.expect_no_more_requests(),
        )
        .await;
        assert_eq!(result.unwrap(), Action::requeue(RESYNC_PERIOD));
    }

    /// A failed status update fails the reconciliation with an error that names the object (the
    /// runner logs it and retries the object with a growing delay).
    #[tokio::test]
    async fn status_update_failure_is_an_error() {
        let (result, ()) = reconcile_with(
            |client| run({{ kind_snake }}(), client),
            |mut api_server| async move {
                let call = api_server.next().await.unwrap();
                call.respond_error(StatusCode::FORBIDDEN, "Forbidden");
                api_server.expect_no_more_requests().await;
            },
        )
        .await;
        let error = result.unwrap_err();
        assert!(matches!(error, Error::UpdateStatus { .. }), "{error:?}");
        let expected = "cannot update the status of {{ kind }} {% if api_namespaced %}default/{% endif %}test";
        assert_eq!(error.to_string(), expected);
    }
}

/// `reconcile` against an API server that refuses what a real one refuses: objects that do not
/// fit the CRD (the one `make manifests` writes) and requests that the controller's own
/// `rbac_rules()` do not grant. The same test body runs against the runtime's fake API server
/// (which also calls the project's webhooks), and against a real kube-apiserver started by
/// envtest (kubebuilder's envtest: `make test` runs it where its binaries are).
#[cfg(test)]
mod against_the_api_server {
    // Types named by their modules: a kind of the project may have any of their names.
    use kube::Api;
    use operator_rs_testing::{cluster, fake};

    use super::*;
{%- if external %}
    use {{ api_module }}::{{ kind }}Spec;
{%- endif %}

    /// The status that `reconcile` writes with the controller's own permissions (those the
    /// manager has in a cluster) is one the CRD accepts.
    async fn reconcile_works_with_the_controllers_permissions(cluster: cluster::TestCluster) {
        // What `make install` installs: the CRDs (and, on the fake, the webhooks).
        cluster.install(crate::manifests()).await;
{%- if api_namespaced %}
        let api = Api::<{{ kind }}>::namespaced(cluster.client(), cluster.namespace());
{%- else %}
        let api = Api::<{{ kind }}>::all(cluster.client());
{%- endif %}
{%- if external %}
        let object = {{ kind }}::new("test", {{ kind }}Spec::default());
{%- else %}
        // The sample of `config/samples`: an object the CRD accepts, whatever its schema requires.
        let mut object: {{ kind }} = operator_rs_testing::from_yaml(include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/config/samples/{{ group }}_{{ version }}_{{ kind_lower }}.yaml"
        )))
        .unwrap();
        object.metadata.name = Some("test".to_owned());
{%- endif %}
        let created = api.create(&kube::api::PostParams::default(), &object).await.unwrap();

        let identity = fake::Identity::controller(env!("CARGO_PKG_NAME"), &CONTROLLER);
        let ctx = Context::new(cluster.client_as(identity).await, CONTROLLER_NAME, ());
        let action = reconcile(Arc::new(created), Arc::new(ctx)).await.unwrap();
        assert_eq!(action, Action::requeue(RESYNC_PERIOD));

        let status = api.get("test").await.unwrap().status.unwrap();
        assert_eq!(status.conditions[0].type_, AVAILABLE);
        assert!(cluster.denials().is_empty(), "{:?}", cluster.denials());
    }

    #[tokio::test]
    async fn reconcile_works_with_the_controllers_permissions_on_the_fake() {
        reconcile_works_with_the_controllers_permissions(cluster::TestCluster::fake()).await;
    }

    #[tokio::test]
    #[ignore = "envtest: needs envtest's binaries (make test, or KUBEBUILDER_ASSETS)"]
    async fn reconcile_works_with_the_controllers_permissions_on_envtest() {
        reconcile_works_with_the_controllers_permissions(cluster::TestCluster::envtest().await).await;
    }
}
