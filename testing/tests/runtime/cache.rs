//! The caches of a controller as its `Runner` fills them: cached reads, an index, a mapped watch,
//! metadata only, and the workqueue metrics of its reconciliations.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret};
use kube::ResourceExt as _;
use kube::api::{Api, ObjectMeta, Patch, PatchParams};
use kube::core::PartialObjectMeta;
use kube::runtime::controller::Action;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;

use operator_rs_runtime::cache::Cache;
use operator_rs_runtime::controller::{Context, Runner};
use operator_rs_runtime::manager::Shared;
use operator_rs_testing::fake::{FakeApiServer, Verb};

use operator_rs_testing::wait_until;

const TIMEOUT: Duration = Duration::from_secs(10);

/// A ConfigMap of the `default` namespace with the data `secret: <secret>`.
fn config_map(name: &str, secret: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some("default".to_owned()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("secret".to_owned(), secret.to_owned())])),
        ..ConfigMap::default()
    }
}

/// The Secret named in a ConfigMap's data: the key of the index `secret`.
fn secret_of(map: &ConfigMap) -> Vec<String> {
    let data = map.data.as_ref();
    data.and_then(|data| data.get("secret"))
        .cloned()
        .into_iter()
        .collect()
}

/// What a controller saw, one line per reconciliation.
type Seen = Arc<Mutex<Vec<String>>>;

/// The mapper of the tests' Secret watches: the ConfigMaps that name the changed Secret, found
/// through the `secret` index of `maps`.
fn naming(maps: Cache<ConfigMap>) -> impl Fn(Secret) -> Vec<ObjectRef<ConfigMap>> {
    move |secret: Secret| {
        let namespace = secret.namespace();
        let named = maps.indexed(namespace.as_deref(), "secret", &secret.name_any());
        named
            .iter()
            .map(|map| ObjectRef::from_obj(map.as_ref()))
            .collect()
    }
}

/// A controller of ConfigMaps that notes, for every reconciliation, the `value` annotation of the
/// Secret that the ConfigMap's `secret` value names (`-` when there is none) and the names of the
/// Pods of its namespace, as its caches give them.
async fn reconcile(map: Arc<ConfigMap>, ctx: Arc<Context<Seen>>) -> Result<Action, kube::Error> {
    let namespace = map.namespace();
    let secret_name = secret_of(&map).pop().unwrap_or_default();
    let secret = ctx
        .get::<Secret>(namespace.as_deref(), &secret_name)
        .await?;
    let value = secret.map_or("-".to_owned(), |secret| {
        secret.annotations()["value"].clone()
    });
    let pods = ctx.cache::<PartialObjectMeta<Pod>>().expect("cached");
    let pods = pods.list(namespace.as_deref());
    let pods: Vec<String> = pods.iter().map(|pod| pod.name_any()).collect();
    let seen = format!("{} {value} {}", map.name_any(), pods.join(","));
    ctx.state.lock().unwrap().push(seen);
    Ok(Action::await_change())
}

/// A Secret of the `default` namespace whose annotation `value` is `value`.
fn secret(name: &str, value: &str) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some("default".to_owned()),
            annotations: Some(BTreeMap::from([("value".to_owned(), value.to_owned())])),
            ..ObjectMeta::default()
        },
        ..Secret::default()
    }
}

/// The sample of `prefix` (a series with its labels) in `text`.
fn sample(text: &str, prefix: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(prefix)?.trim().parse().ok())
}

#[tokio::test]
async fn a_controller_reads_its_caches_and_a_secret_change_reconciles_what_names_it() {
    let fake = FakeApiServer::new();
    fake.put(&config_map("a", "s1"));
    fake.put(&config_map("b", "s2"));
    fake.put(&secret("s1", "one"));
    fake.put(&Pod {
        metadata: ObjectMeta {
            name: Some("p".to_owned()),
            namespace: Some("default".to_owned()),
            ..ObjectMeta::default()
        },
        spec: Some(k8s_openapi::api::core::v1::PodSpec {
            containers: vec![k8s_openapi::api::core::v1::Container {
                name: "app".to_owned(),
                image: Some("app:1".to_owned()),
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..Pod::default()
    });

    let shared = Shared::new(fake.client());
    let seen = Seen::default();
    // The index of ConfigMaps by the Secret they name, and a watch of Secrets that reconciles
    // the ConfigMaps the changed Secret's name finds there; the Pods' metadata, cached only.
    let runner = Runner::<ConfigMap>::new("test", &shared)
        .index("secret", secret_of)
        .caches::<PartialObjectMeta<Pod>>(watcher::Config::default());
    let maps = runner.cache::<ConfigMap>();
    let controller = runner
        .watches(watcher::Config::default(), naming(maps))
        .run(reconcile, Arc::clone(&seen));
    let controller = tokio::spawn(controller);
    let seen_now = || {
        let mut seen = seen.lock().unwrap().clone();
        seen.sort();
        seen
    };

    // Every ConfigMap once, at startup, with the caches of Secrets and Pods listed already.
    wait_until("both are reconciled", TIMEOUT, || seen_now().len() == 2).await;
    assert_eq!(seen_now(), ["a one p", "b - p"]);

    // A change of s1 reconciles the ConfigMap that names it, and only that one; a new s2 too.
    let secrets = Api::<Secret>::namespaced(fake.client(), "default");
    let patch = serde_json::json!({ "metadata": { "annotations": { "value": "two" } } });
    let params = PatchParams::default();
    secrets
        .patch("s1", &params, &Patch::Merge(&patch))
        .await
        .unwrap();
    wait_until("a is reconciled again", TIMEOUT, || seen_now().len() == 3).await;
    fake.put(&secret("s2", "three"));
    wait_until("b is reconciled again", TIMEOUT, || seen_now().len() == 4).await;
    assert_eq!(seen_now(), ["a one p", "a two p", "b - p", "b three p"]);

    // Not one read went to the API server: lists and watches only.
    assert_eq!(fake.count(Verb::Get), 0, "{:#?}", fake.requests());

    // controller-runtime's workqueue metrics: 4 adds, all done.
    let text = shared.metrics.encode().unwrap();
    let labels = r#"{name="test",controller="test"}"#;
    assert_eq!(
        sample(&text, &format!("workqueue_adds_total{labels}")),
        Some(4.0),
        "{text}"
    );
    let depth = r#"workqueue_depth{name="test",controller="test",priority=""}"#;
    assert_eq!(sample(&text, depth), Some(0.0));
    let worked = format!("workqueue_work_duration_seconds_count{labels}");
    assert_eq!(sample(&text, &worked), Some(4.0));

    shared.shutdown.cancel();
    controller.await.unwrap().unwrap();
}

/// A mapped watch with a predicate (`watches_on`): a Secret reconciles the ConfigMap that names it
/// only when its `value` annotation changes, not on another change (a new label).
#[tokio::test]
async fn a_watch_with_a_predicate_reconciles_only_the_changes_it_sees() {
    let fake = FakeApiServer::new();
    fake.put(&config_map("a", "s1"));
    fake.put(&secret("s1", "one"));
    let shared = Shared::new(fake.client());
    let seen = Seen::default();
    let value =
        |secret: Option<&Secret>| secret.map(|secret| secret.annotations()["value"].clone());
    let runner = Runner::<ConfigMap>::new("test", &shared)
        .index("secret", secret_of)
        .caches::<PartialObjectMeta<Pod>>(watcher::Config::default());
    let maps = runner.cache::<ConfigMap>();
    let controller = runner
        .watches_on(
            watcher::Config::default(),
            move |before, secret: &Secret| value(before) != value(Some(secret)),
            naming(maps),
        )
        .run(reconcile, Arc::clone(&seen));
    let controller = tokio::spawn(controller);
    let seen_now = || seen.lock().unwrap().clone();
    wait_until("a is reconciled", TIMEOUT, || seen_now().len() == 1).await;

    // A label, then a new value: the watch brings both changes in that order, and only the
    // second one reconciles.
    let secrets = Api::<Secret>::namespaced(fake.client(), "default");
    let params = PatchParams::default();
    for patch in [
        serde_json::json!({ "metadata": { "labels": { "team": "web" } } }),
        serde_json::json!({ "metadata": { "annotations": { "value": "two" } } }),
    ] {
        secrets
            .patch("s1", &params, &Patch::Merge(&patch))
            .await
            .unwrap();
    }
    wait_until("a is reconciled again", TIMEOUT, || seen_now().len() == 2).await;
    assert_eq!(seen_now(), ["a one ", "a two "]);
    // Two adds to the workqueue: the start, and the new value (not the label).
    let text = shared.metrics.encode().unwrap();
    let adds = r#"workqueue_adds_total{name="test",controller="test"}"#;
    assert_eq!(sample(&text, adds), Some(2.0), "{text}");

    shared.shutdown.cancel();
    controller.await.unwrap().unwrap();
}

/// The controller's writes stay in its caches' read-your-writes map ([`Cache::unseen_writes`])
/// only until their watch events arrive, in either order: the fake delivers a write's watch
/// event before its response, as kube-apiserver often does, and then the write must not be
/// remembered at all (it would wait for a next event that a converged object never gets).
#[tokio::test]
async fn a_converged_controller_remembers_none_of_its_writes() {
    const MAPS: usize = 20;
    let fake = FakeApiServer::new();
    for at in 0..MAPS {
        fake.put(&config_map(&format!("map-{at}"), "-"));
    }
    let shared = Shared::new(fake.client());
    // Nothing reads a write again: the Secrets are cached, not owned (their events reconcile
    // nothing), and a ConfigMap is reconciled only when first seen (its annotation's event
    // reconciles nothing), so an entry goes only by its watch event.
    let runner = Runner::<ConfigMap>::new("test", &shared)
        .caches::<Secret>(watcher::Config::default())
        .reconcile_on(|_| Some(0));
    let (maps, secrets) = (runner.cache::<ConfigMap>(), runner.cache::<Secret>());
    // Each ConfigMap gets a Secret it owns and an annotation (a write of the reconciled object).
    let controller = runner.run(
        |map: Arc<ConfigMap>, ctx: Arc<Context<()>>| async move {
            ctx.apply_owned(map.as_ref(), secret(&map.name_any(), "owned"))
                .await?;
            let api = Api::<ConfigMap>::namespaced(ctx.client.clone(), "default");
            let patch = serde_json::json!({ "metadata": { "annotations": { "seen": "yes" } } });
            let params = PatchParams::default();
            let patched = api
                .patch(&map.name_any(), &params, &Patch::Merge(&patch))
                .await?;
            ctx.wrote(&patched);
            Ok::<_, kube::Error>(Action::await_change())
        },
        (),
    );
    let controller = tokio::spawn(controller);

    let converged = || {
        let annotated = (0..MAPS).all(|at| {
            let map = fake.get::<ConfigMap>(Some("default"), &format!("map-{at}"));
            map.is_some_and(|map| map.annotations().contains_key("seen"))
        });
        annotated && fake.list::<Secret>().len() == MAPS
    };
    wait_until(
        "every ConfigMap is annotated and owns a Secret",
        TIMEOUT,
        converged,
    )
    .await;
    // The last events may still be on their way; entries that stay, stay for good.
    let remembered = || (maps.unseen_writes(), secrets.unseen_writes());
    let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
    while remembered() != (0, 0) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let what = "the writes (of ConfigMaps, of Secrets) the caches remember after convergence";
    assert_eq!(remembered(), (0, 0), "{what}");

    shared.shutdown.cancel();
    controller.await.unwrap().unwrap();
}
