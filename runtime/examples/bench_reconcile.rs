//! The reconcile benchmark (`hack/bench-reconcile`): a cold backlog of N Memcached objects, all
//! created before the controller starts, run through a Memcached controller built on the
//! runtime's `Runner` against the in-memory `FakeApiServer` (with its stand-in Deployment
//! controller), 2 workers, until every Memcached is Available and the controller is idle.
//!
//! Prints the API writes and the reconciliations per object, the wall time, and the peak RSS of
//! the process (`VmHWM`), which includes the fake API server and everything it stores.
//!
//! The controller is a faithful copy of the logic of the deploy-image template
//! (`templates/deploy-image/src/controller/{{ controller_path }}.rs`): the finalizer through
//! kube's `finalizer` helper, a GET of the Deployment, a server-side apply of the Deployment with
//! a controller owner reference unless it is already as desired (`is_applied`), a `Created`
//! Event, status conditions from `availableReplicas` applied only when they change
//! (`conditions_to_apply`), and the same `owns_on` predicate. It is a copy, not the generated
//! project, so that the benchmark runs in this repository's workspace: keep the two in step.
//!
//! usage: cargo run --release --example bench_reconcile -p operator-rs-runtime -- N

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector, ObjectMeta};
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::events::EventType;
use kube::runtime::finalizer::{self, finalizer};
use kube::runtime::watcher;
use kube::{CustomResource, CustomResourceExt as _, KubeSchema, Resource as _, ResourceExt as _};
use operator_rs_runtime::controller::{
    Context, Runner, Shared, condition, conditions_to_apply, hash_of, is_applied,
};
use operator_rs_runtime::manager::health::Readiness;
use operator_rs_runtime::manager::metrics::Metrics;
use operator_rs_runtime::manager::namespaces::WatchNamespaces;
use operator_rs_runtime::testing::fake::{FakeApiServer, Verb};
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const NAME: &str = "memcached-controller";
const FINALIZER: &str = "cache.example.com/finalizer";
const MANAGED_BY: &str = "MemcachedController";
const IMAGE: &str = "memcached:1.6.26-alpine3.19";

/// The Memcached kind of the deploy-image tutorial.
#[derive(CustomResource, KubeSchema, Clone, Debug, Default, Deserialize, Serialize)]
#[kube(
    group = "cache.example.com",
    version = "v1alpha1",
    kind = "Memcached",
    namespaced,
    status = "MemcachedStatus"
)]
struct MemcachedSpec {
    size: i32,
}

#[derive(KubeSchema, Clone, Debug, Default, Deserialize, Serialize)]
struct MemcachedStatus {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["type".into()]))]
    conditions: Vec<Condition>,
}

#[derive(Debug, thiserror::Error)]
#[error("reconcile failed: {0}")]
struct Error(#[source] Box<dyn std::error::Error + Send + Sync>);

impl From<kube::Error> for Error {
    fn from(error: kube::Error) -> Self {
        Self(Box::new(error))
    }
}

/// The controller's state: the count of reconciliations.
type State = Arc<AtomicUsize>;

async fn reconcile(object: Arc<Memcached>, ctx: Arc<Context<State>>) -> Result<Action, Error> {
    ctx.state.fetch_add(1, Ordering::Relaxed);
    let api = Api::<Memcached>::namespaced(ctx.client.clone(), &object.namespace().unwrap());
    finalizer(&api, FINALIZER, object, |event| async {
        match event {
            finalizer::Event::Apply(object) => apply(&object, &ctx).await,
            finalizer::Event::Cleanup(_) => Ok(Action::await_change()),
        }
    })
    .await
    .map_err(|error| Error(Box::new(error)))
}

async fn apply(object: &Memcached, ctx: &Context<State>) -> Result<Action, Error> {
    let name = object.name_any();
    let namespace = object.namespace().unwrap();
    let deployments = Api::<Deployment>::namespaced(ctx.client.clone(), &namespace);
    let current = deployments.get_opt(&name).await?;
    let desired = deployment(object);
    let applied = match &current {
        Some(current) if is_applied(current, &desired) => current.clone(),
        _ => {
            let params = PatchParams::apply(NAME).force();
            deployments
                .patch(&name, &params, &Patch::Apply(&desired))
                .await?
        }
    };
    if current.is_none() {
        let note = format!("Created Deployment {name}");
        ctx.publish(object, EventType::Normal, "Created", "Reconcile", note)
            .await;
    }
    let size = object.spec.size;
    let available = applied
        .status
        .and_then(|status| status.available_replicas)
        .unwrap_or(0);
    let generation = object.meta().generation;
    let reason = if available >= size {
        "ReplicasAvailable"
    } else {
        "ReplicasUnavailable"
    };
    let message = format!("Deployment {name} has {available} of {size} replicas available");
    let conditions = vec![
        condition("Available", available >= size, reason, message, generation),
        condition(
            "Degraded",
            false,
            "Reconciled",
            "matches the spec",
            generation,
        ),
    ];
    let current = object.status.clone().unwrap_or_default().conditions;
    if let Some(conditions) = conditions_to_apply(&current, conditions) {
        ctx.apply_status(object, json!({ "conditions": conditions }))
            .await?;
    }
    Ok(Action::requeue(Duration::from_secs(300)))
}

fn deployment(object: &Memcached) -> Deployment {
    let name = object.name_any();
    let selector = BTreeMap::from([
        ("app.kubernetes.io/name".to_owned(), "memcached".to_owned()),
        ("app.kubernetes.io/instance".to_owned(), name.clone()),
    ]);
    let mut labels = selector.clone();
    labels.insert(
        "app.kubernetes.io/managed-by".to_owned(),
        MANAGED_BY.to_owned(),
    );
    Deployment {
        metadata: ObjectMeta {
            name: Some(name),
            namespace: object.namespace(),
            labels: Some(labels.clone()),
            owner_references: object.controller_owner_ref(&()).map(|owner| vec![owner]),
            ..ObjectMeta::default()
        },
        spec: Some(DeploymentSpec {
            replicas: Some(object.spec.size),
            selector: LabelSelector {
                match_labels: Some(selector),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "memcached".to_owned(),
                        image: Some(IMAGE.to_owned()),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        }),
        status: None,
    }
}

fn available(object: &Memcached) -> bool {
    object.status.as_ref().is_some_and(|status| {
        status
            .conditions
            .iter()
            .any(|c| c.type_ == "Available" && c.status == "True")
    })
}

/// The peak resident set size of this process, in KiB.
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

#[tokio::main]
async fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(1000);
    let fake = FakeApiServer::new();
    fake.register_crd(&Memcached::crd())
        .simulate_deployments(true);
    for i in 0..n {
        let mut object = Memcached::new(&format!("memcached-{i}"), MemcachedSpec { size: 1 });
        object.metadata.namespace = Some("default".to_owned());
        fake.put(&object);
    }
    let rss_before = peak_rss_kib();

    let shared = Shared {
        client: fake.client(),
        readiness: Readiness::default(),
        shutdown: CancellationToken::new(),
        metrics: Metrics::new(),
        watch_namespaces: WatchNamespaces::All,
        max_concurrent_reconciles: 2,
    };
    let reconciles = Arc::new(AtomicUsize::new(0));
    let managed = format!("app.kubernetes.io/managed-by={MANAGED_BY}");
    let start = Instant::now();
    let controller = Runner::<Memcached>::new(NAME, &shared)
        .owns_on::<Deployment>(watcher::Config::default().labels(&managed), |deployment| {
            let available = deployment
                .status
                .as_ref()
                .and_then(|s| s.available_replicas);
            Some(hash_of(&(
                deployment.metadata.generation,
                &deployment.metadata.labels,
                available,
            )))
        })
        .run(reconcile, Arc::clone(&reconciles));
    let controller = tokio::spawn(controller);

    // Until every Memcached is Available, then until the controller has been idle for a while.
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let objects = fake.list::<Memcached>();
        if objects.iter().filter(|o| available(o)).count() == n {
            break;
        }
    }
    let converged = start.elapsed();
    let mut requests = fake.requests().len();
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let now = fake.requests().len();
        if now == requests {
            break;
        }
        requests = now;
    }
    shared.shutdown.cancel();
    controller.await.unwrap().unwrap();

    let events = fake
        .requests()
        .iter()
        .filter(|r| r.verb.is_write() && r.resource == "events")
        .count();
    let writes = fake.writes();
    let per = |count: usize| count as f64 / n as f64;
    println!("objects:                 {n}");
    println!(
        "API writes per object:   {:.2} ({:.2} without Events)",
        per(writes),
        per(writes - events)
    );
    println!(
        "  patches {:.2}, creates {:.2}, updates {:.2}",
        per(fake.count(Verb::Patch)),
        per(fake.count(Verb::Create)),
        per(fake.count(Verb::Update))
    );
    println!("API GETs per object:     {:.2}", per(fake.count(Verb::Get)));
    println!(
        "reconciles per object:   {:.2}",
        per(reconciles.load(Ordering::Relaxed))
    );
    println!("wall time to converge:   {:.2?}", converged);
    println!(
        "peak RSS:                {} MiB ({} MiB with the backlog stored, before the controller)",
        peak_rss_kib() / 1024,
        rss_before / 1024
    );
}
