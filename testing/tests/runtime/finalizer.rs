//! The controllers' finalizers (`controller::finalizer`) against the fake API server.

use std::sync::{Arc, Mutex};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::ObjectMeta;
use kube::runtime::controller::Action;
use kube::{Resource as _, ResourceExt as _};
use operator_rs_runtime::controller::Context;
use operator_rs_runtime::controller::finalizer::*;
use operator_rs_testing::fake::{FakeApiServer, Verb};

const NAME: &str = "example.com/finalizer";

fn config_map(finalizers: &[&str]) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some("a".to_owned()),
            namespace: Some("default".to_owned()),
            // As the API server stores it: no empty list.
            finalizers: (!finalizers.is_empty())
                .then(|| finalizers.iter().map(|f| (*f).to_owned()).collect()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

/// Runs `finalizer` for `object` against `fake`; returns what the reconciliation got: the
/// event and the finalizers of its object.
async fn run(fake: &FakeApiServer, object: ConfigMap) -> (&'static str, Vec<String>) {
    let ctx = Context::new(fake.client(), "tester", ());
    let seen = Mutex::new(None);
    finalizer(&ctx, NAME, Arc::new(object), |event| async {
        let (event, object) = match event {
            Event::Apply(object) => ("apply", object),
            Event::Cleanup(object) => ("cleanup", object),
        };
        *seen.lock().unwrap() = Some((event, object.finalizers().to_vec()));
        Ok::<_, std::io::Error>(Action::await_change())
    })
    .await
    .unwrap();
    seen.into_inner().unwrap().expect("the reconciliation ran")
}

#[tokio::test]
async fn a_new_object_gets_the_finalizer_and_is_applied_in_the_same_call() {
    let fake = FakeApiServer::new();
    let stored = fake.put(&config_map(&[]));
    assert_eq!(run(&fake, stored).await, ("apply", vec![NAME.to_owned()]));
    let stored = fake.get::<ConfigMap>(Some("default"), "a").unwrap();
    assert_eq!(stored.finalizers(), [NAME]);
    assert_eq!(fake.writes(), 1);
}

#[tokio::test]
async fn an_object_with_the_finalizer_is_not_written() {
    let fake = FakeApiServer::new();
    let stored = fake.put(&config_map(&[NAME]));
    assert_eq!(run(&fake, stored).await, ("apply", vec![NAME.to_owned()]));
    assert_eq!(fake.requests(), []);
}

/// Read-your-writes: a controller run by the `Runner` remembers what its finalizer patch
/// and status write returned, so a second reconciliation from a cache that has seen neither
/// gets the object as written, and sends nothing (no refused patch, no status again).
#[tokio::test]
async fn a_reconciliation_from_a_stale_cache_sees_the_controllers_own_writes() {
    use k8s_openapi::api::apps::v1::Deployment;

    use operator_rs_runtime::cache::Caches;
    let fake = FakeApiServer::new();
    let deployment = Deployment {
        metadata: config_map(&[]).metadata,
        ..Deployment::default()
    };
    let cached = Arc::new(fake.put(&deployment));
    // The Runner's caches, here of Deployments: the cache itself stays empty, as if its
    // watch had not brought anything yet.
    let caches = Caches::default();
    caches.register::<Deployment>();
    let ctx = Context::with_caches(fake.client(), "tester", (), caches);
    let reconcile = |object: Arc<Deployment>| {
        finalizer(&ctx, NAME, object, |event| async {
            let Event::Apply(object) = event else {
                panic!("not deleted")
            };
            if object.status.is_none() {
                let status = serde_json::json!({ "replicas": 1 });
                ctx.apply_status(object.as_ref(), status).await?;
            }
            Ok::<_, kube::Error>(Action::await_change())
        })
    };
    reconcile(ctx.latest(Arc::clone(&cached))).await.unwrap();
    assert_eq!(fake.count(Verb::Patch), 2, "the finalizer, the status");

    fake.clear_requests();
    let latest = ctx.latest(Arc::clone(&cached));
    assert_eq!(latest.finalizers(), [NAME]);
    assert!(
        latest.meta().managed_fields.is_none(),
        "stored as the cache"
    );
    // The status write is what is remembered: it came last.
    assert_eq!(latest.status.as_ref().unwrap().replicas, Some(1));
    reconcile(latest).await.unwrap();
    assert_eq!(fake.requests(), [], "nothing sent again");
}

/// The object from the cache lacks the finalizer that the API server already has: the
/// patch's `test` fails, and the reconciliation goes on with the object as stored.
#[tokio::test]
async fn a_stale_object_is_read_again_rather_than_failed() {
    let fake = FakeApiServer::new();
    let stale = fake.put(&config_map(&["other"]));
    fake.put(&config_map(&["other", NAME]));
    let seen = run(&fake, stale).await;
    assert_eq!(seen, ("apply", vec!["other".to_owned(), NAME.to_owned()]));
    assert_eq!((fake.count(Verb::Patch), fake.count(Verb::Get)), (1, 1));
    let stored = fake.get::<ConfigMap>(Some("default"), "a").unwrap();
    assert_eq!(stored.finalizers(), ["other", NAME], "not added twice");
}
