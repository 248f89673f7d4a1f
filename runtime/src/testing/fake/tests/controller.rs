//! A controller like the deploy-image plugin's, run by the runtime's `Runner` against the fake
//! API server until its objects converge: a finalizer, a Deployment applied with a controller
//! owner reference and watched by label, status conditions applied to the status subresource,
//! Events; then scaling by hand, a new spec, an outage with a `410` re-list, and deletion.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::events::v1::Event as K8sEvent;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, ResourceExt};
use kube::runtime::controller::Action;
use kube::runtime::events::EventType;
use kube::runtime::finalizer::{self, finalizer};
use kube::runtime::watcher;
use kube::{Client, CustomResourceExt as _, Resource as _};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::controller::{Context, Runner, Shared, condition, conditions_to_apply};
use crate::manager::health::Readiness;
use crate::manager::metrics::Metrics;
use crate::manager::namespaces::WatchNamespaces;
use crate::testing::fake::{FakeApiServer, Verb};

const NAME: &str = "widget-controller";
const FINALIZER: &str = "example.com/finalizer";
const MANAGED: &str = "app.kubernetes.io/managed-by=widget-controller";
const TIMEOUT: Duration = Duration::from_secs(20);

#[derive(Debug, thiserror::Error)]
#[error("reconcile failed: {0}")]
struct Error(#[source] Box<dyn std::error::Error + Send + Sync>);

impl From<kube::Error> for Error {
    fn from(error: kube::Error) -> Self {
        Self(Box::new(error))
    }
}

async fn reconcile(widget: Arc<Widget>, ctx: Arc<Context>) -> Result<Action, Error> {
    let api = Api::<Widget>::namespaced(ctx.client.clone(), &widget.namespace().unwrap());
    finalizer(&api, FINALIZER, widget, |event| async {
        match event {
            finalizer::Event::Apply(widget) => apply(&widget, &ctx).await,
            finalizer::Event::Cleanup(widget) => {
                ctx.publish(
                    widget.as_ref(),
                    EventType::Normal,
                    "Deleting",
                    "Cleanup",
                    "bye",
                )
                .await;
                Ok(Action::await_change())
            }
        }
    })
    .await
    .map_err(|error| Error(Box::new(error)))
}

async fn apply(widget: &Widget, ctx: &Context) -> Result<Action, Error> {
    let name = widget.name_any();
    let deployments = Api::<Deployment>::namespaced(ctx.client.clone(), "default");
    let existed = deployments.get_opt(&name).await?.is_some();
    let labels = json!({ "app": name });
    let desired = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "labels": { "app.kubernetes.io/managed-by": NAME },
            "ownerReferences": [widget.controller_owner_ref(&()).unwrap()],
        },
        "spec": {
            "replicas": widget.spec.size,
            "selector": { "matchLabels": labels },
            "template": {
                "metadata": { "labels": labels },
                "spec": { "containers": [{ "name": "main", "image": "nginx" }] },
            },
        },
    });
    let params = PatchParams::apply(NAME).force();
    let applied = deployments
        .patch(&name, &params, &Patch::Apply(&desired))
        .await?;
    if !existed {
        ctx.publish(widget, EventType::Normal, "Created", "Reconcile", "created")
            .await;
    }
    let available = applied
        .status
        .and_then(|status| status.available_replicas)
        .unwrap_or(0);
    let generation = widget.meta().generation;
    let current = widget.status.clone().unwrap_or_default().conditions;
    let ready = available >= widget.spec.size;
    let desired = vec![condition("Available", ready, "Replicas", "", generation)];
    if let Some(conditions) = conditions_to_apply(&current, desired) {
        ctx.apply_status(widget, json!({ "conditions": conditions }))
            .await?;
    }
    Ok(Action::requeue(Duration::from_secs(300)))
}

/// What the manager would hand the controller, around `client`.
fn shared(client: Client) -> Shared {
    Shared {
        client,
        readiness: Readiness::default(),
        shutdown: CancellationToken::new(),
        metrics: Metrics::new(),
        watch_namespaces: WatchNamespaces::All,
        max_concurrent_reconciles: 2,
    }
}

/// Starts the controller; it runs until `shared.shutdown` is cancelled.
fn start(shared: &Shared) -> tokio::task::JoinHandle<anyhow::Result<()>> {
    let controller = Runner::<Widget>::new(NAME, shared)
        .owns::<Deployment>(watcher::Config::default().labels(MANAGED))
        .run(reconcile, ());
    tokio::spawn(controller)
}

/// Whether the Widget `name` says its pods are available, for the spec of `generation`.
fn available(fake: &FakeApiServer, name: &str, generation: i64) -> bool {
    let Some(widget) = fake.get::<Widget>(Some("default"), name) else {
        return false;
    };
    widget
        .status
        .unwrap_or_default()
        .conditions
        .iter()
        .any(|c| {
            c.type_ == "Available"
                && c.status == "True"
                && c.observed_generation == Some(generation)
        })
}

fn replicas(fake: &FakeApiServer, name: &str) -> Option<i32> {
    fake.get::<Deployment>(Some("default"), name)?
        .spec?
        .replicas
}

#[tokio::test]
async fn a_widget_converges_follows_its_spec_and_is_cleaned_up() {
    let fake = FakeApiServer::new();
    fake.register_crd(&Widget::crd()).simulate_deployments(true);
    let shared = shared(fake.client());
    let controller = start(&shared);

    let user = Api::<Widget>::namespaced(fake.client(), "default");
    let kubectl = PatchParams {
        field_manager: Some("kubectl".to_owned()),
        ..PatchParams::default()
    };
    user.create(&PostParams::default(), &widget("w", 2))
        .await
        .unwrap();
    eventually("the widget is available", TIMEOUT, || {
        available(&fake, "w", 1)
    })
    .await;

    let deployment = fake.get::<Deployment>(Some("default"), "w").unwrap();
    assert_eq!(deployment.spec.as_ref().unwrap().replicas, Some(2));
    let owner = &deployment.owner_references()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.controller),
        ("Widget", Some(true))
    );
    let widget_now = fake.get::<Widget>(Some("default"), "w").unwrap();
    assert_eq!(widget_now.finalizers(), [FINALIZER]);
    let reasons: Vec<String> = fake
        .list::<K8sEvent>()
        .into_iter()
        .filter_map(|e| e.reason)
        .collect();
    assert_eq!(reasons, ["Created"]);

    // Once the last reconciliation (triggered by its own status write) is done, the controller
    // idles: no requests, no changes.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (requests, version) = (fake.requests().len(), fake.resource_version());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(fake.requests()[requests..], []);
    assert_eq!(fake.resource_version(), version);

    // Scaled by hand: put back.
    let deployments = Api::<Deployment>::namespaced(fake.client(), "default");
    deployments
        .patch(
            "w",
            &kubectl,
            &Patch::Merge(json!({ "spec": { "replicas": 5 } })),
        )
        .await
        .unwrap();
    eventually("the Deployment is scaled back", TIMEOUT, || {
        replicas(&fake, "w") == Some(2)
    })
    .await;

    // A new size: a new generation, followed.
    user.patch(
        "w",
        &kubectl,
        &Patch::Merge(json!({ "spec": { "size": 3 } })),
    )
    .await
    .unwrap();
    eventually("the new size is available", TIMEOUT, || {
        replicas(&fake, "w") == Some(3) && available(&fake, "w", 2)
    })
    .await;

    // Deleted: the finalizer runs, then the garbage collector takes the Deployment.
    user.delete("w", &DeleteParams::default()).await.unwrap();
    eventually("the widget and its Deployment are gone", TIMEOUT, || {
        fake.get::<Widget>(Some("default"), "w").is_none() && replicas(&fake, "w").is_none()
    })
    .await;
    let reasons: Vec<String> = fake
        .list::<K8sEvent>()
        .into_iter()
        .filter_map(|e| e.reason)
        .collect();
    assert_eq!(reasons.iter().filter(|r| *r == "Deleting").count(), 1);

    shared.shutdown.cancel();
    controller.await.unwrap().unwrap();
}

#[tokio::test]
async fn the_controller_rides_out_an_outage_and_a_410() {
    let fake = FakeApiServer::new();
    fake.register_crd(&Widget::crd()).simulate_deployments(true);
    let shared = shared(fake.client());
    let controller = start(&shared);
    fake.put(&widget("w", 1));
    eventually("the widget is available", TIMEOUT, || {
        available(&fake, "w", 1)
    })
    .await;
    let lists = fake.count(Verb::List);

    // The API server goes away; meanwhile the widget changes, and the server forgets the
    // changes the controller has not seen, so its watches get 410 Gone and list again.
    fake.set_watch_window(0);
    fake.unavailable_for(Duration::from_millis(500));
    let mut changed = fake.get::<Widget>(Some("default"), "w").unwrap();
    changed.spec.size = 4;
    fake.put(&changed);

    eventually("the new size is available", TIMEOUT, || {
        replicas(&fake, "w") == Some(4) && available(&fake, "w", 2)
    })
    .await;
    assert!(fake.count(Verb::List) > lists, "the watches listed again");

    shared.shutdown.cancel();
    controller.await.unwrap().unwrap();
}
