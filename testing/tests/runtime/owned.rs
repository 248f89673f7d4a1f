//! Owned objects (`Context::apply_owned`) against the fake API server.

use k8s_openapi::api::core::v1::{ConfigMap, Service, ServicePort, ServiceSpec};
use kube::Resource;
use kube::api::{Api, DeleteParams, ObjectMeta, PostParams};
use operator_rs_runtime::controller::Context;
use operator_rs_testing::fake::FakeApiServer;

fn named<K: Resource + Default>(name: &str) -> K {
    let mut object = K::default();
    object.meta_mut().name = Some(name.to_owned());
    object
}

/// The owner, as created on the API server (with a uid).
async fn owner(fake: &FakeApiServer) -> ConfigMap {
    let mut owner = named::<ConfigMap>("owner");
    owner.metadata.namespace = Some("apps".to_owned());
    Api::<ConfigMap>::namespaced(fake.client(), "apps")
        .create(&PostParams::default(), &owner)
        .await
        .unwrap()
}

#[tokio::test]
async fn owned_objects_are_applied_in_the_owners_namespace_and_collected_with_it() {
    let fake = FakeApiServer::new();
    let owner = owner(&fake).await;
    let ctx = Context::new(fake.client(), "tester", ());

    let applied = ctx.apply_owned(&owner, named::<ConfigMap>("child")).await;
    let applied = applied.unwrap();
    assert!(applied.created());
    let applied = applied.after;
    assert_eq!(applied.metadata.namespace.as_deref(), Some("apps"));
    let reference = &applied.metadata.owner_references.unwrap()[0];
    assert_eq!(reference.kind, "ConfigMap");
    assert_eq!(reference.name, "owner");
    assert_eq!(reference.uid, owner.metadata.uid.clone().unwrap());
    assert_eq!(reference.controller, Some(true));
    assert_eq!(reference.block_owner_deletion, Some(true));
    let managers = applied.metadata.managed_fields.unwrap();
    assert_eq!(managers[0].manager.as_deref(), Some("tester"));
    assert_eq!(managers[0].operation.as_deref(), Some("Apply"));

    let api = Api::<ConfigMap>::namespaced(fake.client(), "apps");
    api.delete("owner", &DeleteParams::default()).await.unwrap();
    assert!(fake.get::<ConfigMap>(Some("apps"), "child").is_none());
}

/// What the API server allocates (a Service's cluster IP and node port) is not the
/// controller's: applying the Service again keeps it.
#[tokio::test]
async fn fields_the_controller_does_not_set_are_kept() {
    let fake = FakeApiServer::new();
    let owner = owner(&fake).await;
    let ctx = Context::new(fake.client(), "tester", ());
    let service = || Service {
        metadata: ObjectMeta {
            name: Some("web".to_owned()),
            ..ObjectMeta::default()
        },
        spec: Some(ServiceSpec {
            type_: Some("NodePort".to_owned()),
            ports: Some(vec![ServicePort {
                port: 80,
                protocol: Some("TCP".to_owned()),
                ..ServicePort::default()
            }]),
            ..ServiceSpec::default()
        }),
        ..Service::default()
    };
    ctx.apply_owned(&owner, service()).await.unwrap();

    // The API server's allocation, by another field manager (`FakeApiServer::put`).
    let mut allocated = fake.get::<Service>(Some("apps"), "web").unwrap();
    let spec = allocated.spec.as_mut().unwrap();
    spec.cluster_ip = Some("10.96.0.10".to_owned());
    spec.ports.as_mut().unwrap()[0].node_port = Some(30080);
    fake.put(&allocated);

    let applied = ctx.apply_owned(&owner, service()).await.unwrap();
    let spec = applied.after.spec.unwrap();
    assert_eq!(spec.cluster_ip.as_deref(), Some("10.96.0.10"));
    assert_eq!(spec.ports.unwrap()[0].node_port, Some(30080));
}

/// An object that already has every field the controller applies is not written again; one
/// changed by hand is, and `before` shows the change.
#[tokio::test]
async fn only_objects_that_differ_are_written() {
    let fake = FakeApiServer::new();
    let owner = owner(&fake).await;
    let ctx = Context::new(fake.client(), "tester", ());
    let child = |value: &str| {
        let mut child = named::<ConfigMap>("child");
        child.data = Some([("key".to_owned(), value.to_owned())].into());
        child
    };
    ctx.apply_owned(&owner, child("a")).await.unwrap();

    fake.clear_requests();
    let again = ctx.apply_owned(&owner, child("a")).await.unwrap();
    assert!(!again.created());
    assert_eq!(fake.writes(), 0, "{:?}", fake.requests());
    assert_eq!(
        again.before.unwrap().metadata.resource_version,
        again.after.metadata.resource_version
    );

    let changed = ctx.apply_owned(&owner, child("b")).await.unwrap();
    assert_eq!(fake.writes(), 1);
    let value = |map: &ConfigMap| map.data.as_ref().unwrap()["key"].clone();
    assert_eq!(value(&changed.before.unwrap()), "a");
    assert_eq!(value(&changed.after), "b");
}

/// With `--sharding`, the child of an object taken over from another member is missing from
/// the cache (whose watch selects this member's label) but not from the cluster: the apply
/// relabels it, and says that it existed.
#[tokio::test]
async fn a_sharded_child_of_another_member_is_taken_over_not_created() {
    use kube::runtime::watcher::Event;
    use operator_rs_runtime::cache::Caches;
    use operator_rs_runtime::sharding::SHARD_LABEL;

    let fake = FakeApiServer::new();
    let owner = owner(&fake).await;
    for name in ["first", "second"] {
        let mut child = named::<ConfigMap>(name);
        child.metadata.labels = Some([(SHARD_LABEL.to_owned(), "a".to_owned())].into());
        Api::<ConfigMap>::namespaced(fake.client(), "apps")
            .create(&PostParams::default(), &child)
            .await
            .unwrap();
    }
    // The synced cache of member b, which the watch of b's label filled: without them.
    let caches = Caches::default();
    let mut feed = caches.register::<ConfigMap>().feed(Some("apps"));
    feed.apply(&Event::Init);
    feed.apply(&Event::InitDone);
    let mut ctx = Context::with_caches(fake.client(), "tester", (), caches);
    // Not sharded, the cache is the truth: an object its watch does not select is missing.
    let unsharded = ctx.apply_owned(&owner, named::<ConfigMap>("first")).await;
    assert!(unsharded.unwrap().created());

    ctx.shard = Some("b".to_owned());
    let applied = ctx.apply_owned(&owner, named::<ConfigMap>("second")).await;
    let applied = applied.unwrap();
    assert!(!applied.created());
    let label = |map: &ConfigMap| map.metadata.labels.as_ref().unwrap()[SHARD_LABEL].clone();
    assert_eq!(label(&applied.before.unwrap()), "a");
    assert_eq!(label(&applied.after), "b");
}
