// Copyright 2026 The operator-rs authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//! The WebServer controller: makes the cluster match the spec of every WebServer
//! (`web.example.com/v1`) and reports how that went in its status.
//!
//! The runtime's [`Runner`] watches webservers and calls `reconcile` for each WebServer
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
    Context, ControllerFuture, ControllerSetup, PolicyRule, Runner, Shared, condition,
    conditions_to_apply, qualified_name, rule,
};
use serde_json::json;

use crate::api::v1::WebServer;

/// The controller's name in logs and metrics, the `reportingController` of its Events, and its
/// field manager name for server-side apply (the owner of the fields it writes, see `kubectl get
/// --show-managed-fields`).
const CONTROLLER_NAME: &str = "webserver";

/// How long `reconcile` waits before it looks at an unchanged WebServer again. Changes of the
/// WebServer and of the objects watched in `setup` trigger a reconciliation right away; this
/// catches drift in whatever the controller does not watch.
const RESYNC_PERIOD: Duration = Duration::from_secs(5 * 60);

/// The condition type that `reconcile` sets: whether the WebServer is fully functional.
const AVAILABLE: &str = "Available";

/// This controller, as listed in `controllers()` of `src/controller/mod.rs`.
pub const CONTROLLER: ControllerSetup = ControllerSetup {
    name: CONTROLLER_NAME,
    rbac_rules,
    setup,
};

/// Sets up the controller; the manager calls it once at startup.
///
/// The runner watches webservers in the namespaces of `WATCH_NAMESPACE` (all by default) and calls
/// `reconcile` for each one, with metrics, retries and graceful shutdown.
fn setup(shared: &Shared) -> ControllerFuture {
    Runner::<WebServer>::new(CONTROLLER_NAME, shared)
        // TODO(user): watch the objects that reconcile creates, so that their changes reconcile
        // the WebServer that owns them: `.owns::<ConfigMap>(watcher::Config::default())`.
        .run(reconcile, ())
}

/// The API permissions of this controller, right next to the code that needs them: `make
/// manifests` writes the rules of all controllers to `config/rbac/role.yaml`.
pub fn rbac_rules() -> Vec<PolicyRule> {
    // The group and plural of WebServer, from its `#[kube(...)]` attribute (`&()`: a typed
    // resource needs no runtime type information).
    let group = WebServer::group(&());
    let plural = WebServer::plural(&());
    vec![
        // kubebuilder's defaults: reconcile only reads webservers, but code that also creates or
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

/// Why a reconciliation failed. Every variant names the WebServer, because the runner logs the
/// error and the log line should say which object it is about.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot update the status of WebServer {name}")]
    UpdateStatus {
        name: String,
        #[source]
        source: kube::Error,
    },
}

/// Brings the cluster in line with one WebServer and records the outcome in its status.
async fn reconcile(object: Arc<WebServer>, ctx: Arc<Context>) -> Result<Action, Error> {
    let name = qualified_name(object.as_ref());
    tracing::info!(controller = CONTROLLER_NAME, name, "reconciling");

    if object.meta().deletion_timestamp.is_some() {
        // It is being deleted, and Kubernetes deletes the objects it owns along with it. For
        // clean-up outside the cluster, see `kube::runtime::finalizer`.
        return Ok(Action::await_change());
    }

    // TODO(user): compare `object.spec` with the cluster and create, update or delete what
    // differs. Give the objects you create an owner reference (`object.controller_owner_ref(&())`)
    // so that they are deleted with the WebServer, and watch them in `setup`.

    // Report the outcome. TODO(user): set the conditions that describe your WebServer; an error
    // returned above leaves the status as it was and retries.
    let generation = object.meta().generation;
    let available = condition(
        AVAILABLE,
        true,
        "Reconciled",
        "The WebServer is reconciled.",
        generation,
    );
    let current = object
        .status
        .as_ref()
        .map_or(&[][..], |status| &status.conditions);
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
    tracing::info!(name, "WebServer is available");

    // Events tell users what happened, in `kubectl describe`.
    let note = "The WebServer is available.";
    ctx.publish(
        object.as_ref(),
        EventType::Normal,
        "Reconciled",
        "Reconcile",
        note,
    )
    .await;

    Ok(Action::requeue(RESYNC_PERIOD))
}

/// `reconcile` against a mocked API server: each test says which requests it expects, checks
/// them, and answers them. A request that is not expected fails the test, and so does an expected
/// request that never comes.
#[cfg(test)]
mod tests {
    use kube::Client;
    use operator_rs_runtime::testing::{Method, StatusCode, reconcile_with};

    use super::*;
    use crate::api::v1::WebServerSpec;

    /// The WebServer to reconcile, as the controller sees it after `kubectl apply`.
    fn web_server() -> WebServer {
        let mut object = WebServer::new("test", WebServerSpec::default());
        object.metadata.namespace = Some("default".to_owned());
        object.metadata.generation = Some(1);
        object
    }

    /// `reconcile(object)`, with the context the runner would give it.
    async fn run(object: WebServer, client: Client) -> Result<Action, Error> {
        reconcile(
            Arc::new(object),
            Arc::new(Context::new(client, CONTROLLER_NAME, ())),
        )
        .await
    }

    /// The first reconciliation sets the Available condition (and publishes an Event); the next
    /// one, of the WebServer with that status, has nothing to do.
    #[tokio::test]
    async fn reconcile_sets_status_once() {
        let url = format!(
            "/apis/web.example.com/v1/namespaces/default/webservers/test/status?&force=true&fieldManager={CONTROLLER_NAME}"
        );
        let (result, status) = reconcile_with(
            |client| run(web_server(), client),
            |mut api_server| async move {
                let apply = api_server.expect(Method::PATCH, &url).await;
                assert_eq!(apply.body["apiVersion"], "web.example.com/v1");
                assert_eq!(apply.body["kind"], "WebServer");
                let condition = &apply.body["status"]["conditions"][0];
                assert_eq!(condition["type"], "Available");
                assert_eq!(condition["status"], "True");
                assert_eq!(condition["observedGeneration"], 1);
                let mut updated = web_server();
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
        let mut object = web_server();
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
            |client| run(web_server(), client),
            |mut api_server| async move {
                let call = api_server.next().await.unwrap();
                call.respond_error(StatusCode::FORBIDDEN, "Forbidden");
                api_server.expect_no_more_requests().await;
            },
        )
        .await;
        let error = result.unwrap_err();
        assert!(matches!(error, Error::UpdateStatus { .. }), "{error:?}");
        let expected = "cannot update the status of WebServer default/test";
        assert_eq!(error.to_string(), expected);
    }
}
