//! Migrations against the fake API server, which stores objects in the version they were written
//! in and keeps the CRD's `status.storedVersions` as the API server does.

use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::core::crd::merge_crds;
use kube::{Client, CustomResource, CustomResourceExt as _, KubeSchema};
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::time::Instant;

use operator_rs_runtime::manager::Shared;
use operator_rs_runtime::manager::storage_migrations::{StorageMigrations, run_once};
use operator_rs_runtime::metrics::Metrics;
use operator_rs_runtime::migration::*;
use operator_rs_runtime::webhook::{Converter, Spoke, Webhook};
use operator_rs_testing::fake::{FakeApiServer, Identity, Verb};

mod v1 {
    use super::*;

    /// The spoke, once the storage version.
    #[derive(
        CustomResource, KubeSchema, Clone, Debug, Default, PartialEq, Deserialize, Serialize,
    )]
    #[kube(group = "example.com", version = "v1", kind = "Widget", namespaced)]
    pub struct WidgetSpec {
        pub size: i32,
    }
}

mod v2 {
    use super::*;

    /// The hub, the storage version after the move: `size` is called `replicas`.
    #[derive(
        CustomResource, KubeSchema, Clone, Debug, Default, PartialEq, Deserialize, Serialize,
    )]
    #[kube(group = "example.com", version = "v2", kind = "Widget", namespaced)]
    pub struct WidgetSpec {
        pub replicas: i32,
    }
}

impl From<v1::Widget> for v2::Widget {
    fn from(widget: v1::Widget) -> Self {
        let spec = v2::WidgetSpec {
            replicas: widget.spec.size,
        };
        v2::Widget {
            metadata: widget.metadata,
            spec,
        }
    }
}

impl From<v2::Widget> for v1::Widget {
    fn from(widget: v2::Widget) -> Self {
        let spec = v1::WidgetSpec {
            size: widget.spec.replicas,
        };
        v1::Widget {
            metadata: widget.metadata,
            spec,
        }
    }
}

const CRD: &str = "widgets.example.com";

/// The Widget CRD with `storage` as its storage version.
fn crd(storage: &str) -> CustomResourceDefinition {
    merge_crds(vec![v1::Widget::crd(), v2::Widget::crd()], storage).unwrap()
}

/// A fake API server with the CRD installed with v1 as the storage version, the conversion
/// webhook, and `count` Widgets created then (in two namespaces); then v2 becomes the storage
/// version.
async fn moved_to_v2(count: usize) -> FakeApiServer {
    let fake = FakeApiServer::new();
    let conversion = Converter::new::<v2::Widget>(vec![Spoke::new::<v1::Widget>()]);
    fake.register_crd(&crd("v1"))
        .register_webhooks(vec![Webhook::conversion(conversion)]);
    for index in 0..count {
        let namespace = if index % 2 == 0 { "default" } else { "other" };
        let api = Api::<v1::Widget>::namespaced(fake.client(), namespace);
        let widget = v1::Widget::new(&name(index), v1::WidgetSpec { size: 3 });
        api.create(&PostParams::default(), &widget).await.unwrap();
    }
    fake.register_crd(&crd("v2"));
    assert_eq!(stored_versions(&fake).await, ["v1", "v2"]);
    fake.clear_requests();
    fake
}

fn name(index: usize) -> String {
    format!("widget-{index:02}")
}

async fn stored_versions(fake: &FakeApiServer) -> Vec<String> {
    let crd = Api::<CustomResourceDefinition>::all(fake.client())
        .get(CRD)
        .await
        .unwrap();
    crd.status.unwrap().stored_versions.unwrap_or_default()
}

/// The versions the Widgets are stored in, as etcd would show them.
fn versions_stored(fake: &FakeApiServer) -> Vec<String> {
    let widgets = fake.list::<v1::Widget>();
    let stored = widgets.iter().map(|widget| {
        let namespace = widget.metadata.namespace.as_deref();
        fake.stored_version::<v1::Widget>(namespace, widget.metadata.name.as_deref().unwrap())
            .unwrap()
    });
    stored.collect()
}

fn unpaced(page_size: u32) -> Options {
    Options {
        writes_per_second: 0.0,
        page_size,
    }
}

async fn migrate(client: &Client, options: &Options, metrics: &Metrics) -> Outcome {
    StorageMigration::of::<v2::Widget>()
        .run(client, options, metrics)
        .await
        .unwrap()
}

#[tokio::test]
async fn every_object_is_stored_in_the_new_storage_version_and_stored_versions_trimmed() {
    let fake = moved_to_v2(7).await;
    let metrics = Metrics::new();
    let outcome = migrate(&fake.client(), &unpaced(3), &metrics).await;
    assert_eq!(
        outcome,
        Outcome::Migrated {
            storage_version: "v2".to_owned(),
            from: vec!["v1".to_owned()],
            written: 7,
        }
    );
    assert_eq!(versions_stored(&fake), vec!["example.com/v2"; 7]);
    assert_eq!(stored_versions(&fake).await, ["v2"]);
    // The objects are as they were, read in either version.
    for widget in fake.list::<v2::Widget>() {
        assert_eq!(widget.spec.replicas, 3);
    }
    // One apply per object, in pages of 3, and one status write.
    assert_eq!(fake.count(Verb::Patch), 7);
    assert_eq!(fake.count(Verb::List), 3);
    assert_eq!(fake.count(Verb::Update), 1);
    let text = metrics.encode().unwrap();
    for line in [
        "storage_migrator_core_migrator_migrated_objects_total{resource=\"widgets.example.com\"} 7",
        "storage_migrator_core_migrator_remaining_objects{resource=\"widgets.example.com\"} 0",
        "storage_migrator_core_migrator_migrations_total{resource=\"widgets.example.com\",status=\"Succeeded\"} 1",
        "storage_migrator_core_migrator_migrations_total{resource=\"widgets.example.com\",status=\"Failed\"} 0",
    ] {
        assert!(text.contains(line), "no {line} in\n{text}");
    }

    // Again: nothing to do, nothing written.
    fake.clear_requests();
    let outcome = migrate(&fake.client(), &unpaced(3), &metrics).await;
    let storage_version = "v2".to_owned();
    assert_eq!(outcome, Outcome::UpToDate { storage_version });
    assert_eq!((fake.writes(), fake.count(Verb::Get)), (0, 1));
}

#[tokio::test]
async fn a_crd_with_nothing_to_migrate_is_not_written() {
    let fake = FakeApiServer::new();
    fake.register_crd(&crd("v1"));
    let api = Api::<v1::Widget>::namespaced(fake.client(), "default");
    let widget = v1::Widget::new("a", v1::WidgetSpec { size: 1 });
    api.create(&PostParams::default(), &widget).await.unwrap();
    fake.clear_requests();
    let outcome = migrate(&fake.client(), &unpaced(500), &Metrics::new()).await;
    let storage_version = "v1".to_owned();
    assert_eq!(outcome, Outcome::UpToDate { storage_version });
    assert_eq!(fake.writes(), 0);
    assert_eq!(fake.count(Verb::List), 0);
}

#[tokio::test(start_paused = true)]
async fn a_migration_stopped_midway_is_completed_by_the_next() {
    let fake = moved_to_v2(10).await;
    let client = fake.client();
    // One write a second: stopped after 4.5 seconds, the first has written five objects.
    let options = Options {
        writes_per_second: 1.0,
        page_size: 4,
    };
    let metrics = Metrics::new();
    tokio::select! {
        outcome = migrate(&client, &options, &metrics) => panic!("the migration ended: {outcome:?}"),
        () = tokio::time::sleep(Duration::from_millis(4500)) => {}
    }
    let stored = versions_stored(&fake);
    let moved = stored.iter().filter(|v| *v == "example.com/v2").count();
    assert_eq!(moved, 5, "{stored:?}");
    assert_eq!(stored_versions(&fake).await, ["v1", "v2"]);

    // The next pass writes all ten again; the five done already are not stored again.
    let version = fake.resource_version();
    let outcome = migrate(&client, &unpaced(4), &metrics).await;
    assert!(
        matches!(outcome, Outcome::Migrated { written: 10, .. }),
        "{outcome:?}"
    );
    assert_eq!(versions_stored(&fake), vec!["example.com/v2"; 10]);
    assert_eq!(stored_versions(&fake).await, ["v2"]);
    // Five objects and the CRD's status.
    assert_eq!(fake.resource_version(), version + 6);
}

#[tokio::test(start_paused = true)]
async fn objects_deleted_or_changed_during_the_migration_are_left_alone() {
    let fake = moved_to_v2(6).await;
    let client = fake.client();
    // While the migration waits for its second write, one object goes, one is changed.
    let meanwhile = {
        let client = client.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(500)).await;
            let default = Api::<v1::Widget>::namespaced(client, "default");
            default
                .delete(&name(2), &DeleteParams::default())
                .await
                .unwrap();
            let patch = json!({ "spec": { "size": 9 } });
            default
                .patch(&name(4), &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .unwrap();
        })
    };
    let options = Options {
        writes_per_second: 1.0,
        page_size: 500,
    };
    let outcome = migrate(&client, &options, &Metrics::new()).await;
    meanwhile.await.unwrap();
    assert!(
        matches!(outcome, Outcome::Migrated { written: 4, .. }),
        "{outcome:?}"
    );
    assert_eq!(versions_stored(&fake), vec!["example.com/v2"; 5]);
    assert_eq!(stored_versions(&fake).await, ["v2"]);
    // The change stays.
    let changed = fake.get::<v2::Widget>(Some("default"), &name(4)).unwrap();
    assert_eq!(changed.spec.replicas, 9);
}

#[tokio::test(start_paused = true)]
async fn writes_keep_the_pace() {
    let fake = moved_to_v2(6).await;
    let options = Options {
        writes_per_second: 2.0,
        page_size: 4,
    };
    let start = Instant::now();
    migrate(&fake.client(), &options, &Metrics::new()).await;
    // Six writes half a second apart: the first at once.
    assert_eq!(start.elapsed(), Duration::from_millis(2500));
}

#[tokio::test]
async fn an_expired_continue_token_lists_again_from_the_start() {
    let fake = moved_to_v2(6).await;
    // The fake forgets every change but the last: the token of a page expires as soon as the
    // page's objects are written.
    fake.set_watch_window(1);
    let outcome = migrate(&fake.client(), &unpaced(2), &Metrics::new()).await;
    assert!(matches!(outcome, Outcome::Migrated { .. }), "{outcome:?}");
    assert_eq!(versions_stored(&fake), vec!["example.com/v2"; 6]);
    assert_eq!(stored_versions(&fake).await, ["v2"]);
    let expired = fake
        .requests()
        .into_iter()
        .filter(|request| request.verb == Verb::List && request.status == http::StatusCode::GONE);
    assert!(expired.count() > 0, "no continue token expired");
}

#[tokio::test]
async fn a_storage_version_moved_again_during_the_pass_makes_it_start_again() {
    let fake = moved_to_v2(3).await;
    // The CRD is written (its spec changes) while the objects are: the generation the pass
    // started with is gone, and storedVersions must not be trimmed on the strength of it.
    let mut changed = crd("v2");
    changed.spec.versions[0].deprecated = Some(true);
    let writer = {
        let fake = fake.clone();
        tokio::spawn(async move {
            while fake.count(Verb::Patch) == 0 {
                tokio::task::yield_now().await;
            }
            fake.register_crd(&changed);
        })
    };
    let outcome = migrate(&fake.client(), &unpaced(500), &Metrics::new()).await;
    writer.await.unwrap();
    assert!(matches!(outcome, Outcome::Migrated { .. }), "{outcome:?}");
    // Two passes: three objects listed twice.
    assert_eq!(fake.count(Verb::List), 2);
    assert_eq!(stored_versions(&fake).await, ["v2"]);
}

#[tokio::test]
async fn the_rbac_rules_are_all_it_needs() {
    let fake = moved_to_v2(4).await;
    let migration = StorageMigration::of::<v2::Widget>();
    assert_eq!(migration.crd_name(), CRD);
    let identity = Identity::service_account("system", "manager")
        .with_cluster_rules(rbac_rules(std::slice::from_ref(&migration)));
    let client = fake.client_as(identity);
    migration
        .run(&client, &unpaced(2), &Metrics::new())
        .await
        .unwrap();
    assert_eq!(fake.denials(), []);
    assert_eq!(stored_versions(&fake).await, ["v2"]);
}

#[tokio::test(start_paused = true)]
async fn the_manager_retries_until_the_crd_is_installed_then_waits_for_shutdown() {
    let fake = FakeApiServer::new();
    let shared = Shared::new(fake.client());
    let migrations =
        StorageMigrations::new(vec![StorageMigration::of::<v2::Widget>()], unpaced(500));
    let running = tokio::spawn(operator_rs_runtime::manager::Runnable::start(
        &migrations,
        &shared,
    ));
    // Not installed: the first attempt fails, the next one comes after 5 seconds.
    tokio::time::sleep(Duration::from_secs(1)).await;
    fake.register_crd(&crd("v1"));
    let api = Api::<v1::Widget>::namespaced(fake.client(), "default");
    let widget = v1::Widget::new("a", v1::WidgetSpec { size: 1 });
    api.create(&PostParams::default(), &widget).await.unwrap();
    fake.register_crd(&crd("v2"));
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(stored_versions(&fake).await, ["v2"]);
    let failed = "storage_migrator_core_migrator_migrations_total{resource=\"widgets.example.com\",status=\"Failed\"} 1";
    assert!(shared.metrics.encode().unwrap().contains(failed));
    // Done, it runs on until shutdown, as the manager expects of what it runs.
    assert!(!running.is_finished());
    shared.shutdown.cancel();
    running.await.unwrap().unwrap();
}

#[tokio::test]
async fn run_once_names_the_kinds_it_could_not_migrate() {
    let fake = moved_to_v2(2).await;
    let missing = StorageMigration::named("example.com", "gadgets");
    let migrations = [StorageMigration::of::<v2::Widget>(), missing];
    let error = run_once(&fake.client(), &migrations, &unpaced(500), &Metrics::new())
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "the storage version migration of gadgets.example.com failed (see the errors above)"
    );
    // The others were migrated all the same.
    assert_eq!(stored_versions(&fake).await, ["v2"]);
    let nothing = run_once(&fake.client(), &[], &unpaced(500), &Metrics::new()).await;
    assert!(nothing.is_err());
}
