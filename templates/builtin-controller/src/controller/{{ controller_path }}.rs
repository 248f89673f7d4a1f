{{ rust_header }}{% if core -%}
//! The {{ kind }} controller: acts on {{ plural }}, a kind built into Kubernetes
//! (`{% if qualified_group == "" %}{{ version }}`, the core API group{% else %}{{ qualified_group }}/{{ version }}`{% endif %}).
{%- elif external -%}
//! The {{ kind }} controller: acts on {{ plural }}, a kind of another project
//! (`{{ qualified_group }}/{{ version }}`, whose CRD must be installed in the cluster).
{%- else -%}
//! The `{{ controller_name }}` controller: another controller of the project's {{ kind }}
//! (`{{ qualified_group }}/{{ version }}`), next to the one that reconciles its spec and status.
{%- endif %}
//!
//! The runner built in `setup` watches {{ plural }} and calls `reconcile` for each {{ kind }}
//! whenever it changes, whenever something else the controller watches changes, and whenever
//! `reconcile` asks for it. `reconcile` gets no diff, only the object as it is now, and works out
//! what to do from the object and the cluster: it must be idempotent, changing nothing when
//! nothing has to change. The same object is never reconciled twice at the same time.
//!
//! Other controllers ({% if core %}Kubernetes' own, at least{% elif external %}the other project's, at least{% else %}the kind's main one, at least{% endif %}) work on the {{ plural }} too: change only
//! what this controller is responsible for, and prefer server-side apply with its field manager,
//! which touches only the fields it sends.

use std::sync::Arc;

{% if core %}use {{ rust_type }};
{% endif %}use kube::runtime::controller::Action;
use kube::{Resource as _, ResourceExt as _};
use operator_rs_runtime::controller::{
    Context, ControllerFuture, ControllerSetup, PolicyRule, RbacScope, Runner, Shared, rule,
};
{%- if not core %}

use {{ rust_type }};
{%- endif %}

/// The controller's name in logs and metrics, the `reportingController` of its Events, and its
/// field manager name for server-side apply (the owner of the fields it writes, see `kubectl get
/// --show-managed-fields`).
const CONTROLLER_NAME: &str = "{{ controller_name }}";

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
        // TODO(user): the controller caches every {{ kind }} it watches; narrow that down if you
        // can: `.with_watcher_config(watcher::Config::default().labels("app=x"))`.
        .run(reconcile, ())
}

/// The API permissions of this controller, right next to the code that needs them: `make
/// manifests` writes the rules of all controllers to `config/rbac/`.
pub fn rbac_rules() -> Vec<PolicyRule> {
    // The API group and plural of {{ kind }} (`&()`: a typed resource needs no runtime type
    // information).
    let group = {{ kind }}::group(&());
    let plural = {{ kind }}::plural(&());
    vec![
        // kubebuilder's defaults: reconcile only reads {{ plural }}, but code that also writes them
        // is common. Remove the verbs you do not need.
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
        // Adding and removing finalizers, and setting `blockOwnerDeletion` in the owner
        // references of the objects reconcile creates.
        rule(&[&group], &[&format!("{plural}/finalizers")], &["update"]),
        // Publishing Events (the recorder patches an Event when it repeats).
        rule(&["events.k8s.io"], &["events"], &["create", "patch"]),
    ]
}

/// Why a reconciliation failed. Every variant names the {{ kind }}, because the runner logs the
/// error and the log line should say which object it is about.
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

/// Does what the operator needs done about one {{ kind }}. An error is logged and the {{ kind }}
/// retried with a growing delay.
async fn reconcile(object: Arc<{{ kind }}>, _ctx: Arc<Context>) -> Result<Action, Error> {
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
    //     let api = kube::Api::<{{ kind }}>::{% if api_namespaced %}namespaced(ctx.client.clone(), &namespace){% else %}all(ctx.client.clone()){% endif %};
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

/// `reconcile` against a mocked API server that fails the test on any request, because this
/// reconcile makes none yet. When yours does, expect its requests one by one, as the tests of the
/// controllers of your own kinds do (`operator-rs create api` with `--resource`).
#[cfg(test)]
mod tests {
    use operator_rs_testing::reconcile_with;

    use super::*;

    #[tokio::test]
    async fn reconcile_makes_no_requests() {
{%- if external %}
        let mut object: {{ kind }} = serde_json::from_value({{ rust_module }}::{{ kind_snake }}::example()).unwrap();
{%- elif core %}
        let mut object = {{ kind }}::default();
{%- else %}
        let mut object = {{ kind }}::new("test", Default::default());
{%- endif %}
        object.metadata.name = Some("test".to_owned());
{%- if api_namespaced %}
        object.metadata.namespace = Some("default".to_owned());
{%- endif %}

        let (result, ()) = reconcile_with(
            |client| {
                let ctx = Context::new(client, CONTROLLER_NAME, ());
                reconcile(Arc::new(object), Arc::new(ctx))
            },
            |api_server| api_server.expect_no_more_requests(),
        )
        .await;
        assert_eq!(result.unwrap(), Action::await_change());
    }
}
