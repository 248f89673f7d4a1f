//! A controller like the deploy-image plugin's, run by the runtime's `Runner` against the fake
//! API server until its objects converge: a finalizer, a Deployment applied with a controller
//! owner reference and watched by label, status conditions applied to the status subresource,
//! Events; then scaling by hand, a new spec, an outage with a `410` re-list, and deletion. And
//! what it costs: the reconciliations and writes of a cold backlog, none for what changes
//! nothing, and how soon a backlog converges after an outage.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::events::v1::Event as K8sEvent;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, ResourceExt};
use kube::runtime::controller::Action;
use kube::runtime::events::EventType;
use kube::runtime::watcher;
use kube::{Client, CustomResourceExt as _, Resource as _};
use serde_json::json;

use crate::*;
use operator_rs_runtime::controller::finalizer::{self, finalizer};
use operator_rs_runtime::controller::{Context, Runner, Shared, condition, conditions_to_apply};
use operator_rs_testing::fake::{FakeApiServer, Verb};
use operator_rs_testing::wait_until;

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

/// The controller's state: how many reconciliations it ran.
type Reconciles = Arc<AtomicUsize>;

/// How long the status of a Widget whose Deployment was just created waits for its pods.
const FIRST_REPORT_AFTER: Duration = Duration::from_secs(10);

async fn reconcile(widget: Arc<Widget>, ctx: Arc<Context<Reconciles>>) -> Result<Action, Error> {
    ctx.state.fetch_add(1, Ordering::Relaxed);
    finalizer(ctx.as_ref(), FINALIZER, widget, |event| async {
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

async fn apply(widget: &Widget, ctx: &Context<Reconciles>) -> Result<Action, Error> {
    let name = widget.name_any();
    let labels = json!({ "app": name });
    let desired: Deployment = serde_json::from_value(json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "labels": { "app.kubernetes.io/managed-by": NAME },
        },
        "spec": {
            "replicas": widget.spec.size,
            "selector": { "matchLabels": labels },
            "template": {
                "metadata": { "labels": labels },
                "spec": { "containers": [{ "name": "main", "image": "nginx" }] },
            },
        },
    }))
    .unwrap();
    // Read from the cache of owned Deployments, applied unless already as desired.
    let applied = ctx.apply_owned(widget, desired).await?;
    if applied.created() {
        ctx.publish(widget, EventType::Normal, "Created", "Reconcile", "created")
            .await;
        // No pods yet: the status waits for them (they reconcile the Widget).
        return Ok(Action::requeue(FIRST_REPORT_AFTER));
    }
    let applied = applied.after;
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

/// What the manager would hand the controller, around `client`, with 2 workers.
fn shared(client: Client) -> Shared {
    Shared {
        max_concurrent_reconciles: 2,
        ..Shared::new(client)
    }
}

/// Starts the controller; it runs until `shared.shutdown` is cancelled.
fn start(shared: &Shared) -> tokio::task::JoinHandle<anyhow::Result<()>> {
    start_counting(shared).0
}

/// Starts the controller, with the count of its reconciliations.
fn start_counting(shared: &Shared) -> (tokio::task::JoinHandle<anyhow::Result<()>>, Reconciles) {
    let reconciles = Reconciles::default();
    let controller = Runner::<Widget>::new(NAME, shared)
        .owns::<Deployment>(watcher::Config::default().labels(MANAGED))
        .run(reconcile, Arc::clone(&reconciles));
    (tokio::spawn(controller), reconciles)
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
    wait_until("the widget is available", TIMEOUT, || {
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

    // Once the last reconciliation is done, the controller idles: no requests, no changes.
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
    wait_until("the Deployment is scaled back", TIMEOUT, || {
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
    wait_until("the new size is available", TIMEOUT, || {
        replicas(&fake, "w") == Some(3) && available(&fake, "w", 2)
    })
    .await;

    // Deleted: the finalizer runs, then the garbage collector takes the Deployment.
    user.delete("w", &DeleteParams::default()).await.unwrap();
    wait_until("the widget and its Deployment are gone", TIMEOUT, || {
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
    wait_until("the widget is available", TIMEOUT, || {
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

    wait_until("the new size is available", TIMEOUT, || {
        replicas(&fake, "w") == Some(4) && available(&fake, "w", 2)
    })
    .await;
    assert!(fake.count(Verb::List) > lists, "the watches listed again");

    shared.shutdown.cancel();
    controller.await.unwrap().unwrap();
}

/// Waits until `n` widgets are available and no request has come for 500 ms.
async fn converged(fake: &FakeApiServer, n: usize) {
    wait_until("every widget is available", TIMEOUT, || {
        fake.list::<Widget>()
            .iter()
            .filter(|w| available(fake, &w.name_any(), 1))
            .count()
            == n
    })
    .await;
    let mut requests = fake.requests().len();
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let now = fake.requests().len();
        if now == requests {
            break;
        }
        requests = now;
    }
}

/// Writes other than Events.
fn writes(fake: &FakeApiServer) -> usize {
    let requests = fake.requests();
    let events = requests
        .iter()
        .filter(|r| r.verb.is_write() && r.resource == "events")
        .count();
    fake.writes() - events
}

/// A backlog that exists before the controller starts costs each object one reconciliation that
/// adds the finalizer and applies the Deployment, and one, when the pods are available, that
/// writes the status: its own writes (the finalizer, the status, the Deployment's creation)
/// trigger nothing.
#[tokio::test]
async fn a_cold_backlog_costs_three_writes_and_two_reconciles_per_object() {
    const N: usize = 20;
    let fake = FakeApiServer::new();
    fake.register_crd(&Widget::crd()).simulate_deployments(true);
    for i in 0..N {
        fake.put(&widget(&format!("w{i}"), 1));
    }
    let shared = shared(fake.client());
    let (controller, reconciles) = start_counting(&shared);
    converged(&fake, N).await;

    let reconciles = reconciles.load(Ordering::Relaxed);
    assert!(
        reconciles <= 2 * N,
        "{reconciles} reconciliations for {N} objects"
    );
    let writes = writes(&fake);
    assert!(writes <= 3 * N, "{writes} writes for {N} objects");
    // Every read from the caches: no GET (the finalizer's re-read after a refused patch would be
    // one).
    assert_eq!(fake.count(Verb::Get), 0, "{:#?}", fake.requests());
    // None of them refused: the controller reads its own writes (see `Context::wrote`).
    let refused = fake
        .requests()
        .into_iter()
        .filter(|r| r.verb.is_write() && r.status.as_u16() >= 400)
        .count();
    assert_eq!(refused, 0);

    shared.shutdown.cancel();
    controller.await.unwrap().unwrap();
}

/// What would change nothing is not written: a controller that starts over on converged objects
/// (a new leader, a restart) reconciles each once and writes nothing at all.
#[tokio::test]
async fn a_converged_backlog_gets_no_writes() {
    const N: usize = 5;
    let fake = FakeApiServer::new();
    fake.register_crd(&Widget::crd()).simulate_deployments(true);
    for i in 0..N {
        fake.put(&widget(&format!("w{i}"), 1));
    }
    let shared = shared(fake.client());
    let controller = start(&shared);
    converged(&fake, N).await;
    shared.shutdown.cancel();
    controller.await.unwrap().unwrap();

    fake.clear_requests();
    let shared = self::shared(fake.client());
    let (controller, reconciles) = start_counting(&shared);
    wait_until("every widget is reconciled again", TIMEOUT, || {
        reconciles.load(Ordering::Relaxed) == N
    })
    .await;
    converged(&fake, N).await;
    assert_eq!(writes(&fake), 0, "{:#?}", fake.requests());
    assert_eq!(reconciles.load(Ordering::Relaxed), N);

    shared.shutdown.cancel();
    controller.await.unwrap().unwrap();
}

/// Edits that change nothing the controller reads reconcile nothing; a Deployment scaled by
/// hand reconciles its owner at once (long before the 5-minute requeue).
#[tokio::test]
async fn only_changes_that_matter_reconcile() {
    let fake = FakeApiServer::new();
    fake.register_crd(&Widget::crd()).simulate_deployments(true);
    fake.put(&widget("w", 1));
    let shared = shared(fake.client());
    let (controller, reconciles) = start_counting(&shared);
    converged(&fake, 1).await;
    let before = reconciles.load(Ordering::Relaxed);

    // A label on the Widget, an annotation on its Deployment: nothing to do.
    let kubectl = PatchParams {
        field_manager: Some("kubectl".to_owned()),
        ..PatchParams::default()
    };
    let labelled = json!({ "metadata": { "labels": { "team": "a" } } });
    let widgets = Api::<Widget>::namespaced(fake.client(), "default");
    widgets
        .patch("w", &kubectl, &Patch::Merge(&labelled))
        .await
        .unwrap();
    let annotated = json!({ "metadata": { "annotations": { "note": "x" } } });
    let deployments = Api::<Deployment>::namespaced(fake.client(), "default");
    deployments
        .patch("w", &kubectl, &Patch::Merge(&annotated))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(reconciles.load(Ordering::Relaxed), before);

    // Scaled by hand: a new generation of the Deployment, put back at once.
    let scaled = json!({ "spec": { "replicas": 5 } });
    deployments
        .patch("w", &kubectl, &Patch::Merge(&scaled))
        .await
        .unwrap();
    wait_until("the Deployment is scaled back", TIMEOUT, || {
        replicas(&fake, "w") == Some(1)
    })
    .await;
    assert!(reconciles.load(Ordering::Relaxed) > before);

    shared.shutdown.cancel();
    controller.await.unwrap().unwrap();
}

/// A 30 s outage in the middle of a backlog: every reconciliation fails meanwhile and the
/// per-object backoff doubles, but once the API server is back the objects that waited for it
/// start over at once, and the watches resume within 4 s, so the backlog converges within
/// seconds of its return instead of after the 10 s, 20 s … delays that the outage built up.
/// Paused time: the 30 s pass at once, and each reconciliation takes 100 ms, so that the outage
/// comes while the backlog converges.
#[tokio::test(start_paused = true)]
async fn after_an_outage_the_backlog_converges_at_once() {
    const N: usize = 20;
    let fake = FakeApiServer::new();
    fake.register_crd(&Widget::crd()).simulate_deployments(true);
    for i in 0..N {
        fake.put(&widget(&format!("w{i}"), 1));
    }
    let shared = shared(fake.client());
    let slow = |widget, ctx| async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        reconcile(widget, ctx).await
    };
    let controller = Runner::<Widget>::new(NAME, &shared)
        .owns::<Deployment>(watcher::Config::default().labels(MANAGED))
        .run(slow, Reconciles::default());
    let controller = tokio::spawn(controller);
    wait_until("a first Deployment", TIMEOUT, || {
        !fake.list::<Deployment>().is_empty()
    })
    .await;
    let outage = Duration::from_secs(30);
    fake.unavailable_for(outage);
    let back = tokio::time::Instant::now() + outage;
    tokio::time::sleep_until(back).await;
    assert!(
        fake.list::<Deployment>().len() < N,
        "the outage came in the middle of the backlog"
    );
    converged(&fake, N).await;
    assert_eq!(fake.list::<Deployment>().len(), N, "one Deployment each");
    // Converged, then idle for 500 ms before `converged` returned. The watches are back within
    // 5 s and jitter (up to twice that); without the reset the backlog takes over 20 s.
    let after = tokio::time::Instant::now() - back;
    assert!(
        after < Duration::from_secs(15),
        "converged {after:?} after the API server's return"
    );

    shared.shutdown.cancel();
    controller.await.unwrap().unwrap();
}
