//! The versions of a custom resource: one storage for all of them, the version each object is
//! stored in, conversion (the `None` strategy, and the conversion webhook), the CRD as an object
//! with the `status.storedVersions` the API server keeps, and lists in pages whose continue
//! tokens expire.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, ResourceExt as _};
use kube::core::crd::merge_crds;
use kube::{CustomResource, CustomResourceExt as _, KubeSchema};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::*;
use operator_rs_runtime::webhook::{Converter, Spoke, Webhook};
use operator_rs_testing::fake::{FakeApiServer, Verb};

/// The second version of [`Widget`]: `size` is called `replicas`.
pub(super) mod v2 {
    use super::*;

    #[derive(
        CustomResource, KubeSchema, Clone, Debug, Default, PartialEq, Deserialize, Serialize,
    )]
    #[kube(
        group = "example.com",
        version = "v2",
        kind = "Widget",
        namespaced,
        status = "WidgetStatus"
    )]
    // The struct `CustomResource` derives takes this visibility, and the tests of webhooks at a
    // URL use the kind too.
    pub(crate) struct WidgetSpec {
        pub(crate) replicas: i32,
    }
}

impl From<Widget> for v2::Widget {
    fn from(v1: Widget) -> Self {
        v2::Widget {
            metadata: v1.metadata,
            spec: v2::WidgetSpec {
                replicas: v1.spec.size,
            },
            status: v1.status,
        }
    }
}

impl From<v2::Widget> for Widget {
    fn from(v2: v2::Widget) -> Self {
        Widget {
            metadata: v2.metadata,
            spec: WidgetSpec {
                size: v2.spec.replicas,
            },
            status: v2.status,
        }
    }
}

/// The Widget CRD with both versions served and `storage` as the storage version.
pub(super) fn crd(storage: &str) -> CustomResourceDefinition {
    merge_crds(vec![Widget::crd(), v2::Widget::crd()], storage).unwrap()
}

/// The conversion webhook of Widget, v2 the hub.
pub(super) fn conversion() -> Webhook {
    Webhook::conversion(Converter::new::<v2::Widget>(vec![Spoke::new::<Widget>()]))
}

fn crds(fake: &FakeApiServer) -> Api<CustomResourceDefinition> {
    Api::all(fake.client())
}

async fn stored_versions(fake: &FakeApiServer) -> Vec<String> {
    let crd = crds(fake).get("widgets.example.com").await.unwrap();
    crd.status.unwrap().stored_versions.unwrap_or_default()
}

#[tokio::test]
async fn objects_are_stored_once_in_the_storage_version_and_served_in_every_version() {
    let fake = FakeApiServer::new();
    fake.register_crd(&crd("v1"))
        .register_webhooks(vec![conversion()]);
    let v1 = Api::<Widget>::namespaced(fake.client(), "default");
    let v2 = Api::<v2::Widget>::namespaced(fake.client(), "default");

    v1.create(&PostParams::default(), &widget("a", 3))
        .await
        .unwrap();
    assert_eq!(
        fake.stored_version::<Widget>(Some("default"), "a")
            .as_deref(),
        Some("example.com/v1")
    );
    // Read in v2 through the conversion webhook; the same object, not a copy.
    let read = v2.get("a").await.unwrap();
    assert_eq!(read.spec.replicas, 3);
    assert_eq!(read.uid(), v1.get("a").await.unwrap().uid());
    let listed = v2.list(&ListParams::default()).await.unwrap();
    assert_eq!(listed.items[0].spec.replicas, 3);

    // Written in v2: converted to the storage version v1 to be stored.
    let patch = json!({ "spec": { "replicas": 5 } });
    v2.patch("a", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    assert_eq!(v1.get("a").await.unwrap().spec.size, 5);
    assert_eq!(
        fake.stored_version::<Widget>(Some("default"), "a")
            .as_deref(),
        Some("example.com/v1")
    );
    assert_eq!(
        api_error(
            v2.create(
                &PostParams::default(),
                &v2::Widget::new("a", v2::WidgetSpec::default())
            )
            .await
        ),
        ("AlreadyExists".to_owned(), 409)
    );
    // Deleted in either version: gone in both.
    v2.delete("a", &DeleteParams::default()).await.unwrap();
    assert_eq!(api_error(v1.get("a").await), ("NotFound".to_owned(), 404));
}

#[tokio::test]
async fn without_a_conversion_webhook_only_the_api_version_changes() {
    let fake = FakeApiServer::new();
    fake.register_crd(&crd("v1"));
    let v1 = Api::<Widget>::namespaced(fake.client(), "default");
    v1.create(&PostParams::default(), &widget("a", 3))
        .await
        .unwrap();
    // The `None` strategy: the v2 schema has no `size`, pruned; `replicas` is required in Rust
    // only, so the untyped object shows what the API server serves.
    let v2 = Api::<kube::api::DynamicObject>::namespaced_with(
        fake.client(),
        "default",
        &kube::core::ApiResource::erase::<v2::Widget>(&()),
    );
    let read = v2.get("a").await.unwrap();
    assert_eq!(read.types.unwrap().api_version, "example.com/v2");
    assert_eq!(read.data["spec"], json!({}));

    // A CRD that says `Webhook` with no webhook registered: conversions fail as the API
    // server's do when it cannot call the webhook.
    let mut webhook = crd("v1");
    webhook.spec.conversion =
        Some(serde_json::from_value(json!({ "strategy": "Webhook" })).unwrap());
    fake.register_crd(&webhook);
    let (reason, code) = api_error(v2.get("a").await);
    assert_eq!((reason.as_str(), code), ("InternalError", 500));
}

#[tokio::test]
async fn the_crd_is_an_object_whose_stored_versions_the_server_keeps() {
    let fake = FakeApiServer::new();
    fake.register_crd(&crd("v1"))
        .register_webhooks(vec![conversion()]);
    assert_eq!(stored_versions(&fake).await, ["v1"]);
    let v1 = Api::<Widget>::namespaced(fake.client(), "default");
    for name in ["a", "b"] {
        v1.create(&PostParams::default(), &widget(name, 1))
            .await
            .unwrap();
    }

    // The storage version moves to v2 (`make install` of the new CRD): both are stored now.
    fake.register_crd(&crd("v2"));
    assert_eq!(stored_versions(&fake).await, ["v1", "v2"]);
    let generation = crds(&fake)
        .get("widgets.example.com")
        .await
        .unwrap()
        .metadata
        .generation;
    assert_eq!(generation, Some(2));
    // The objects stay as they were stored until they are written again.
    assert_eq!(
        fake.stored_version::<Widget>(Some("default"), "a")
            .as_deref(),
        Some("example.com/v1")
    );

    // v1 cannot leave storedVersions before it leaves... nothing: a status write may drop it
    // (whether objects are still stored in it is the writer's business), but not the storage
    // version, and only versions of the spec may be named.
    let status = |versions: serde_json::Value| json!({ "status": { "storedVersions": versions } });
    let params = PatchParams::default();
    let refused = crds(&fake)
        .patch_status(
            "widgets.example.com",
            &params,
            &Patch::Merge(status(json!(["v1"]))),
        )
        .await;
    let Err(kube::Error::Api(error)) = refused else {
        panic!("dropping the storage version is refused: {refused:?}");
    };
    assert_eq!(error.code, 422);
    assert!(
        error.message.ends_with("must have the storage version v2"),
        "{}",
        error.message
    );
    let refused = crds(&fake)
        .patch_status(
            "widgets.example.com",
            &params,
            &Patch::Merge(status(json!(["v2", "v3"]))),
        )
        .await;
    assert_eq!(api_error(refused), ("Invalid".to_owned(), 422));
    // A spec write never drops a stored version, and a version still stored cannot leave the
    // spec.
    let mut only_v2 = crd("v2");
    only_v2.spec.versions.retain(|version| version.name == "v2");
    let refused = crds(&fake)
        .replace("widgets.example.com", &PostParams::default(), &{
            let mut live = crds(&fake).get("widgets.example.com").await.unwrap();
            live.spec = only_v2.spec.clone();
            live
        })
        .await;
    let Err(kube::Error::Api(error)) = refused else {
        panic!("a stored version cannot leave the spec: {refused:?}");
    };
    assert!(
        error.message.contains(
            "status.storedVersions[0]: Invalid value: \"v1\": must appear in spec.versions"
        ),
        "{}",
        error.message
    );

    crds(&fake)
        .patch_status(
            "widgets.example.com",
            &params,
            &Patch::Merge(status(json!(["v2"]))),
        )
        .await
        .unwrap();
    assert_eq!(stored_versions(&fake).await, ["v2"]);
    // Only now may v1 go: the API server no longer serves it.
    let mut live = crds(&fake).get("widgets.example.com").await.unwrap();
    live.spec = only_v2.spec;
    crds(&fake)
        .replace("widgets.example.com", &PostParams::default(), &live)
        .await
        .unwrap();
    let (reason, code) = api_error(v1.get("a").await);
    assert_eq!((reason.as_str(), code), ("NotFound", 404));
}

#[tokio::test]
async fn a_write_that_changes_nothing_stores_an_object_of_an_older_version_again() {
    let fake = FakeApiServer::new();
    fake.register_crd(&crd("v1"))
        .register_webhooks(vec![conversion()]);
    let v1 = Api::<Widget>::namespaced(fake.client(), "default");
    let v2 = Api::<v2::Widget>::namespaced(fake.client(), "default");
    for name in ["a", "b"] {
        v1.create(&PostParams::default(), &widget(name, 2))
            .await
            .unwrap();
    }
    // While v1 is the storage version, writing the object as read stores nothing. (In v1: the
    // fake does not convert `managedFields` between versions as the API server does.)
    let read = v1.get("a").await.unwrap();
    let version = fake.resource_version();
    v1.replace("a", &PostParams::default(), &read)
        .await
        .unwrap();
    assert_eq!(fake.resource_version(), version);

    fake.register_crd(&crd("v2"));
    let version = fake.resource_version();
    // An update of the object as read (what the Kubernetes docs' migration does) …
    let read = v2.get("a").await.unwrap();
    let written = v2
        .replace("a", &PostParams::default(), &read)
        .await
        .unwrap();
    assert_eq!(written.spec, read.spec);
    assert_ne!(written.resource_version(), read.resource_version());
    assert_eq!(
        fake.stored_version::<Widget>(Some("default"), "a")
            .as_deref(),
        Some("example.com/v2")
    );
    // … or an empty merge patch: either is stored again, in the new storage version.
    v1.patch("b", &PatchParams::default(), &Patch::Merge(json!({})))
        .await
        .unwrap();
    assert_eq!(
        fake.stored_version::<Widget>(Some("default"), "b")
            .as_deref(),
        Some("example.com/v2")
    );
    assert_eq!(fake.resource_version(), version + 2);
    // Once they are, the same writes store nothing again; the spec is as it was.
    v1.patch("b", &PatchParams::default(), &Patch::Merge(json!({})))
        .await
        .unwrap();
    assert_eq!(fake.resource_version(), version + 2);
    assert_eq!(v1.get("b").await.unwrap().spec.size, 2);
}

#[tokio::test]
async fn watches_see_objects_in_their_own_version() {
    use futures::{StreamExt as _, TryStreamExt as _};
    use kube::api::WatchParams;
    use kube::core::WatchEvent;

    let fake = FakeApiServer::new();
    fake.register_crd(&crd("v1"))
        .register_webhooks(vec![conversion()]);
    let v1 = Api::<Widget>::namespaced(fake.client(), "default");
    let v2 = Api::<v2::Widget>::namespaced(fake.client(), "default");
    let mut events = v2
        .watch(&WatchParams::default(), "0")
        .await
        .unwrap()
        .boxed();
    v1.create(&PostParams::default(), &widget("a", 4))
        .await
        .unwrap();
    match events.try_next().await.unwrap() {
        Some(WatchEvent::Added(widget)) => assert_eq!(widget.spec.replicas, 4),
        other => panic!("expected the v2 object: {other:?}"),
    }
}

#[tokio::test]
async fn continue_tokens_survive_deletions_and_expire_with_the_history() {
    let fake = FakeApiServer::new();
    let api = Api::<k8s_openapi::api::core::v1::ConfigMap>::namespaced(fake.client(), "default");
    for name in ["a", "b", "c", "d"] {
        api.create(&PostParams::default(), &config_map(name, &[]))
            .await
            .unwrap();
    }
    let first = api.list(&ListParams::default().limit(2)).await.unwrap();
    let names: Vec<String> = first.items.iter().map(|cm| cm.name_any()).collect();
    assert_eq!(names, ["a", "b"]);
    // The last object of the page goes: the next page still starts after it.
    api.delete("b", &DeleteParams::default()).await.unwrap();
    let token = first.metadata.continue_.unwrap();
    let rest = api
        .list(&ListParams::default().limit(2).continue_token(&token))
        .await
        .unwrap();
    let names: Vec<String> = rest.items.iter().map(|cm| cm.name_any()).collect();
    assert_eq!(names, ["c", "d"]);
    assert_eq!(rest.metadata.continue_, None);

    // The changes since the first page are forgotten: the token has expired.
    fake.set_watch_window(0);
    api.delete("c", &DeleteParams::default()).await.unwrap();
    let expired = api
        .list(&ListParams::default().limit(2).continue_token(&token))
        .await;
    assert_eq!(api_error(expired), ("Expired".to_owned(), 410));
    assert_eq!(fake.count(Verb::List), 3);
}

#[tokio::test]
async fn a_write_that_names_a_uid_is_about_that_object_only() {
    let fake = FakeApiServer::new();
    let api = Api::<k8s_openapi::api::core::v1::ConfigMap>::namespaced(fake.client(), "default");
    let created = api
        .create(&PostParams::default(), &config_map("a", &[]))
        .await
        .unwrap();
    let apply = |uid: &str| json!({ "apiVersion": "v1", "kind": "ConfigMap", "metadata": { "name": "a", "uid": uid } });
    let params = PatchParams::apply("tester");
    let other = api
        .patch("a", &params, &Patch::Apply(apply("another")))
        .await;
    assert_eq!(api_error(other), ("Conflict".to_owned(), 409));
    // Gone: an apply with its uid does not make a new one.
    let uid = created.uid().unwrap();
    api.delete("a", &DeleteParams::default()).await.unwrap();
    let gone = api.patch("a", &params, &Patch::Apply(apply(&uid))).await;
    assert_eq!(api_error(gone), ("Conflict".to_owned(), 409));
    assert!(
        fake.list::<k8s_openapi::api::core::v1::ConfigMap>()
            .is_empty()
    );
}

#[tokio::test]
async fn a_crd_needs_one_storage_version_and_its_own_name() {
    let fake = FakeApiServer::new();
    let mut two = crd("v1");
    for version in &mut two.spec.versions {
        version.storage = true;
    }
    let created = crds(&fake).create(&PostParams::default(), &two).await;
    let Err(kube::Error::Api(error)) = created else {
        panic!("two storage versions are refused: {created:?}");
    };
    assert!(
        error
            .message
            .ends_with("must have exactly one version marked as storage version"),
        "{}",
        error.message
    );
    let mut misnamed = crd("v1");
    misnamed.metadata.name = Some("gadgets.example.com".to_owned());
    let created = crds(&fake).create(&PostParams::default(), &misnamed).await;
    assert_eq!(api_error(created), ("Invalid".to_owned(), 422));
    // Created through the API, it serves its versions at once.
    crds(&fake)
        .create(&PostParams::default(), &crd("v1"))
        .await
        .unwrap();
    let v2 = Api::<v2::Widget>::namespaced(fake.client(), "default");
    assert!(
        v2.list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
}

#[tokio::test]
async fn install_merges_the_versions_of_a_kind_as_make_manifests_does() {
    // A project's `crds()`: one CRD per version, the storage version's alone `storage: true`.
    let mut spoke = v2::Widget::crd();
    spoke.spec.versions[0].storage = false;
    let fake = FakeApiServer::new();
    fake.install(operator_rs_runtime::manifests::Manifests {
        crds: vec![Widget::crd(), spoke],
        rbac_rules: Vec::new(),
        cluster_rbac_rules: Vec::new(),
        webhooks: vec![conversion()],
        role_scope: operator_rs_runtime::manifests::RoleScope::Cluster,
    });
    assert_eq!(stored_versions(&fake).await, ["v1"]);
    let v1 = Api::<Widget>::namespaced(fake.client(), "default");
    v1.create(&PostParams::default(), &widget("a", 2))
        .await
        .unwrap();
    let v2 = Api::<v2::Widget>::namespaced(fake.client(), "default");
    assert_eq!(v2.get("a").await.unwrap().spec.replicas, 2);
}
