//! Objects: create, read, update, patch, delete; preconditions; generations and the status
//! subresource; finalizers; garbage collection.

use k8s_openapi::api::apps::v1::{Deployment, DeploymentStatus};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{
    Api, DeleteParams, ListParams, ObjectMeta, Patch, PatchParams, PostParams, Preconditions,
    ResourceExt,
};
use kube::{CustomResourceExt as _, Resource as _};
use serde_json::json;

use super::*;
use crate::fake::{FakeApiServer, Verb};

#[tokio::test]
async fn objects_are_created_read_listed_replaced_patched_and_deleted() {
    let fake = FakeApiServer::new();
    let api = Api::<ConfigMap>::namespaced(fake.client(), "default");

    let created = api
        .create(&PostParams::default(), &config_map("a", &[("k", "1")]))
        .await
        .unwrap();
    let metadata = &created.metadata;
    assert!(metadata.uid.is_some());
    assert!(metadata.creation_timestamp.is_some());
    // ConfigMaps have no generation (the API server counts it for kinds with a spec).
    assert_eq!(metadata.generation, None);
    let version: u64 = created.resource_version().unwrap().parse().unwrap();
    assert_eq!(version, fake.resource_version());

    let again = api
        .create(&PostParams::default(), &config_map("a", &[]))
        .await;
    assert_eq!(api_error(again), ("AlreadyExists".to_owned(), 409));

    let mut labelled = config_map("b", &[]);
    labelled.metadata.labels = Some([("app".to_owned(), "web".to_owned())].into());
    api.create(&PostParams::default(), &labelled).await.unwrap();

    assert_eq!(api.get("a").await.unwrap().data, created.data);
    assert_eq!(
        api_error(api.get("missing").await),
        ("NotFound".to_owned(), 404)
    );
    let all = api.list(&ListParams::default()).await.unwrap();
    assert_eq!(all.items.len(), 2);
    assert_eq!(
        all.metadata.resource_version,
        Some(fake.resource_version().to_string())
    );
    let web = api
        .list(&ListParams::default().labels("app=web"))
        .await
        .unwrap();
    assert_eq!(
        web.items.iter().map(|cm| cm.name_any()).collect::<Vec<_>>(),
        ["b"]
    );
    let named = api
        .list(&ListParams::default().fields("metadata.name=a"))
        .await
        .unwrap();
    assert_eq!(named.items.len(), 1);
    let paged = api.list(&ListParams::default().limit(1)).await.unwrap();
    assert_eq!(paged.items.len(), 1);
    let token = paged.metadata.continue_.unwrap();
    let rest = api
        .list(&ListParams::default().limit(1).continue_token(&token))
        .await
        .unwrap();
    assert_eq!(rest.items[0].name_any(), "b");
    assert_eq!(rest.metadata.continue_, None);

    // Replace with the version read: fine; with an older one: a conflict.
    let mut changed = created.clone();
    changed.data = Some([("k".to_owned(), "2".to_owned())].into());
    let replaced = api
        .replace("a", &PostParams::default(), &changed)
        .await
        .unwrap();
    assert_eq!(replaced.data.as_ref().unwrap()["k"], "2");
    let stale = api.replace("a", &PostParams::default(), &changed).await;
    assert_eq!(api_error(stale), ("Conflict".to_owned(), 409));

    let merged = api
        .patch(
            "a",
            &PatchParams::default(),
            &Patch::Merge(json!({ "data": { "m": "3" } })),
        )
        .await
        .unwrap();
    assert_eq!(merged.data.as_ref().unwrap()["m"], "3");
    let patch: json_patch::Patch =
        serde_json::from_value(json!([{ "op": "remove", "path": "/data/k" }])).unwrap();
    let patched = api
        .patch("a", &PatchParams::default(), &Patch::Json::<()>(patch))
        .await
        .unwrap();
    assert_eq!(patched.data.unwrap().keys().collect::<Vec<_>>(), ["m"]);
    // A merge patch that names an old resourceVersion is a conflict too.
    let old = json!({ "metadata": { "resourceVersion": created.resource_version() }, "data": {} });
    let conflict = api
        .patch("a", &PatchParams::default(), &Patch::Merge(old))
        .await;
    assert_eq!(api_error(conflict), ("Conflict".to_owned(), 409));

    let deleted = api.delete("a", &DeleteParams::default()).await.unwrap();
    assert!(deleted.is_right(), "deleted at once, without finalizers");
    assert_eq!(api_error(api.get("a").await), ("NotFound".to_owned(), 404));
    assert_eq!(
        api_error(api.delete("a", &DeleteParams::default()).await),
        ("NotFound".to_owned(), 404)
    );

    assert_eq!(fake.count(Verb::Create), 3);
    assert_eq!(fake.count(Verb::Get), 3);
    assert_eq!(fake.count(Verb::List), 5);
    assert_eq!(fake.count(Verb::Update), 2);
    assert_eq!(fake.count(Verb::Patch), 3);
    assert_eq!(fake.count(Verb::Delete), 2);
    assert_eq!(fake.writes(), 10);
    let last = fake.requests().pop().unwrap();
    assert_eq!(
        (
            last.resource.as_str(),
            last.name.as_deref(),
            last.status.as_u16()
        ),
        ("configmaps", Some("a"), 404)
    );
}

#[tokio::test]
async fn names_can_be_generated_and_writes_dry_run() {
    let fake = FakeApiServer::new();
    let api = Api::<ConfigMap>::namespaced(fake.client(), "default");
    let mut generated = config_map("", &[]);
    generated.metadata.name = None;
    generated.metadata.generate_name = Some("gen-".to_owned());
    let first = api
        .create(&PostParams::default(), &generated)
        .await
        .unwrap();
    let second = api
        .create(&PostParams::default(), &generated)
        .await
        .unwrap();
    assert!(first.name_any().starts_with("gen-"));
    assert_ne!(first.name_any(), second.name_any());

    let version = fake.resource_version();
    let dry_run = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    api.create(&dry_run, &config_map("dry", &[])).await.unwrap();
    assert_eq!(api_error(api.get("dry").await).1, 404);
    assert_eq!(fake.resource_version(), version);
}

#[tokio::test]
async fn kinds_that_are_not_registered_are_not_found() {
    let fake = FakeApiServer::new();
    let api = Api::<Widget>::namespaced(fake.client(), "default");
    assert_eq!(api_error(api.list(&ListParams::default()).await).1, 404);
    fake.register_crd(&Widget::crd());
    assert!(
        api.list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
}

/// A Deployment `d` of `replicas` pods of one container, with a status the API server drops.
fn deployment(replicas: i32) -> Deployment {
    serde_json::from_value(json!({
        "metadata": { "name": "d", "namespace": "default" },
        "spec": {
            "replicas": replicas,
            "selector": { "matchLabels": { "app": "web" } },
            "template": {
                "metadata": { "labels": { "app": "web" } },
                "spec": { "containers": [{ "name": "web", "image": "nginx:1.27" }] },
            },
        },
        "status": { "replicas": 7 },
    }))
    .unwrap()
}

#[tokio::test]
async fn generation_counts_spec_changes_and_status_is_a_subresource() {
    let fake = FakeApiServer::new();
    let api = Api::<Deployment>::namespaced(fake.client(), "default");
    let created = api
        .create(&PostParams::default(), &deployment(1))
        .await
        .unwrap();
    // A create drops the status (Go writes the empty one).
    assert_eq!(created.status, Some(DeploymentStatus::default()));
    assert_eq!(created.metadata.generation, Some(1));

    // Metadata changes keep the generation.
    let labels = json!({ "metadata": { "labels": { "a": "b" } } });
    let labelled = api
        .patch("d", &PatchParams::default(), &Patch::Merge(labels))
        .await
        .unwrap();
    assert_eq!(labelled.metadata.generation, Some(1));
    assert_ne!(labelled.resource_version(), created.resource_version());

    // A status change through the object changes nothing at all.
    let version = fake.resource_version();
    let status = json!({ "status": { "replicas": 3 } });
    let ignored = api
        .patch("d", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
    assert_eq!(ignored.status, Some(DeploymentStatus::default()));
    assert_eq!(fake.resource_version(), version);

    // Through the status subresource it changes, and only the status does.
    let with_spec = json!({ "spec": { "replicas": 9 }, "status": { "replicas": 3 } });
    let updated = api
        .patch_status("d", &PatchParams::default(), &Patch::Merge(&with_spec))
        .await
        .unwrap();
    assert_eq!(updated.status.unwrap().replicas, Some(3));
    assert_eq!(updated.spec.unwrap().replicas, Some(1));
    assert_eq!(updated.metadata.generation, Some(1));

    // A spec change bumps it, once per write.
    let mut scaled = api.get("d").await.unwrap();
    scaled.spec.as_mut().unwrap().replicas = Some(2);
    scaled.status = None;
    let replaced = api
        .replace("d", &PostParams::default(), &scaled)
        .await
        .unwrap();
    assert_eq!(replaced.metadata.generation, Some(2));
    assert_eq!(
        replaced.status.unwrap().replicas,
        Some(3),
        "a replace keeps the status"
    );
}

#[tokio::test]
async fn custom_resources_follow_their_crd() {
    let fake = FakeApiServer::new();
    fake.register_crd(&Widget::crd());
    let api = Api::<Widget>::namespaced(fake.client(), "default");
    api.create(&PostParams::default(), &widget("w", 1))
        .await
        .unwrap();
    let status = json!({ "status": { "conditions": [] } });
    api.patch_status("w", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
    let resized = api
        .patch(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({ "spec": { "size": 2 } })),
        )
        .await
        .unwrap();
    assert_eq!(resized.metadata.generation, Some(2));
    assert_eq!(
        fake.get::<Widget>(Some("default"), "w").unwrap().spec.size,
        2
    );
}

#[tokio::test]
async fn finalizers_hold_deletion_until_they_are_removed() {
    let fake = FakeApiServer::new();
    let api = Api::<ConfigMap>::namespaced(fake.client(), "default");
    let mut finalized = config_map("f", &[]);
    finalized.metadata.finalizers = Some(vec!["example.com/cleanup".to_owned()]);
    api.create(&PostParams::default(), &finalized)
        .await
        .unwrap();

    let deleting = api
        .delete("f", &DeleteParams::default())
        .await
        .unwrap()
        .left()
        .expect("the object stays while it has finalizers");
    assert!(deleting.metadata.deletion_timestamp.is_some());
    let version = fake.resource_version();
    api.delete("f", &DeleteParams::default()).await.unwrap();
    assert_eq!(
        fake.resource_version(),
        version,
        "deleting again changes nothing"
    );

    let add = json!({ "metadata": { "finalizers": ["example.com/cleanup", "another"] } });
    let refused = api
        .patch("f", &PatchParams::default(), &Patch::Merge(add))
        .await;
    assert_eq!(api_error(refused), ("Invalid".to_owned(), 422));

    // kube's finalizer helper removes its finalizer with a JSON patch.
    let remove: json_patch::Patch = serde_json::from_value(json!([
        { "op": "test", "path": "/metadata/finalizers/0", "value": "example.com/cleanup" },
        { "op": "remove", "path": "/metadata/finalizers/0" },
    ]))
    .unwrap();
    api.patch("f", &PatchParams::default(), &Patch::Json::<()>(remove))
        .await
        .unwrap();
    assert_eq!(api_error(api.get("f").await).1, 404);
}

#[tokio::test]
async fn finalizers_are_added_as_kube_adds_them() {
    let fake = FakeApiServer::new();
    let api = Api::<ConfigMap>::namespaced(fake.client(), "default");
    api.create(&PostParams::default(), &config_map("f", &[]))
        .await
        .unwrap();
    // A `test` for null of a missing path succeeds on the API server (and not in RFC 6902).
    let add: json_patch::Patch = serde_json::from_value(json!([
        { "op": "test", "path": "/metadata/finalizers", "value": null },
        { "op": "add", "path": "/metadata/finalizers", "value": ["x"] },
    ]))
    .unwrap();
    let added = api
        .patch(
            "f",
            &PatchParams::default(),
            &Patch::Json::<()>(add.clone()),
        )
        .await
        .unwrap();
    assert_eq!(added.metadata.finalizers, Some(vec!["x".to_owned()]));
    let again = api
        .patch("f", &PatchParams::default(), &Patch::Json::<()>(add))
        .await;
    assert_eq!(api_error(again), ("Invalid".to_owned(), 422));
}

#[tokio::test]
async fn delete_preconditions_are_checked() {
    let fake = FakeApiServer::new();
    let api = Api::<ConfigMap>::namespaced(fake.client(), "default");
    api.create(&PostParams::default(), &config_map("p", &[]))
        .await
        .unwrap();
    let params = DeleteParams {
        preconditions: Some(Preconditions {
            uid: Some("another".to_owned()),
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    assert_eq!(api_error(api.delete("p", &params).await).1, 409);
}

#[tokio::test]
async fn dependents_are_garbage_collected_with_their_last_owner() {
    let fake = FakeApiServer::new();
    fake.register_crd(&Widget::crd());
    let client = fake.client();
    let widgets = Api::<Widget>::namespaced(client.clone(), "default");
    let maps = Api::<ConfigMap>::namespaced(client, "default");

    let mut finalized = widget("owner", 1);
    finalized.metadata.finalizers = Some(vec!["example.com/cleanup".to_owned()]);
    let owner = widgets
        .create(&PostParams::default(), &finalized)
        .await
        .unwrap();
    let other = widgets
        .create(&PostParams::default(), &widget("other", 1))
        .await
        .unwrap();
    // One owner may be the controller; the API server refuses two.
    let owned_by = |name: &str, owners: &[&Widget]| {
        let mut map = config_map(name, &[]);
        map.metadata.owner_references = Some(
            owners
                .iter()
                .enumerate()
                .map(|(index, owner)| match index {
                    0 => owner.controller_owner_ref(&()).unwrap(),
                    _ => owner.owner_ref(&()).unwrap(),
                })
                .collect(),
        );
        map
    };
    let child = maps
        .create(&PostParams::default(), &owned_by("child", &[&owner]))
        .await
        .unwrap();
    maps.create(
        &PostParams::default(),
        &owned_by("shared", &[&owner, &other]),
    )
    .await
    .unwrap();
    let mut grandchild = config_map("grandchild", &[]);
    grandchild.metadata.owner_references = Some(vec![child.controller_owner_ref(&()).unwrap()]);
    maps.create(&PostParams::default(), &grandchild)
        .await
        .unwrap();

    // While the owner waits for its finalizer, its dependents stay.
    widgets
        .delete("owner", &DeleteParams::default())
        .await
        .unwrap();
    assert_eq!(fake.list::<ConfigMap>().len(), 3);

    let done = json!({ "metadata": { "finalizers": null } });
    widgets
        .patch("owner", &PatchParams::default(), &Patch::Merge(done))
        .await
        .unwrap();
    assert!(fake.get::<Widget>(Some("default"), "owner").is_none());
    let left: Vec<String> = fake
        .list::<ConfigMap>()
        .iter()
        .map(|m| m.name_any())
        .collect();
    assert_eq!(left, ["shared"], "the other owner still holds it");
}

/// A Role for one Secret by name grants a list or watch that selects that name with a field
/// selector (the API server authorizes it as a request for the name), and nothing wider.
#[tokio::test]
async fn a_rule_for_one_name_grants_the_watch_of_that_name_only() {
    use k8s_openapi::api::core::v1::Secret;
    use k8s_openapi::api::rbac::v1::PolicyRule;

    use crate::fake::Identity;

    let fake = FakeApiServer::new();
    let identity = Identity::service_account("ns", "reader").with_namespace_rules(
        "ns",
        vec![PolicyRule {
            resource_names: Some(vec!["certs".to_owned()]),
            ..operator_rs_runtime::controller::rule(&[""], &["secrets"], &["get", "list", "watch"])
        }],
    );
    let api = kube::Api::<Secret>::namespaced(fake.client_as(identity), "ns");
    let named = ListParams::default().fields("metadata.name=certs");
    assert!(api.list(&named).await.is_ok());
    let watched = api
        .watch(
            &kube::api::WatchParams::default().fields("metadata.name=certs"),
            "0",
        )
        .await;
    assert!(watched.is_ok());
    assert!(
        api.list(&ListParams::default()).await.is_err(),
        "every Secret"
    );
    let other = ListParams::default().fields("metadata.name=other");
    assert!(api.list(&other).await.is_err(), "another name");
    assert_eq!(fake.denials().len(), 2);
}

/// Webhook configurations and CRDs are stored as objects, whole (the caBundle the self-signed
/// webhook certificates patch in included); storing a CRD serves no kind.
#[tokio::test]
async fn webhook_configurations_and_crds_are_stored_as_objects() {
    use k8s_openapi::api::admissionregistration::v1::MutatingWebhookConfiguration;
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
        CustomResourceConversion, CustomResourceDefinition,
    };

    let fake = FakeApiServer::new();
    let client = fake.client();
    let configuration: MutatingWebhookConfiguration = serde_json::from_value(json!({
        "metadata": {"name": "mutating"},
        "webhooks": [{
            "name": "m.kb.io", "admissionReviewVersions": ["v1"], "sideEffects": "None",
            "clientConfig": {"service": {"name": "svc", "namespace": "ns"}, "caBundle": "Y2E="},
        }],
    }))
    .unwrap();
    let api = kube::Api::<MutatingWebhookConfiguration>::all(client.clone());
    let created = api
        .create(&PostParams::default(), &configuration)
        .await
        .unwrap();
    // Stored whole, with the API server's defaults.
    let webhook = &created.webhooks.as_ref().unwrap()[0];
    assert_eq!(webhook.client_config, {
        let mut config = configuration.webhooks.as_ref().unwrap()[0]
            .client_config
            .clone();
        config.service.as_mut().unwrap().port = Some(443);
        config
    });
    assert_eq!(
        (webhook.failure_policy.as_deref(), webhook.timeout_seconds),
        (Some("Fail"), Some(10))
    );

    let mut crd = Widget::crd();
    crd.metadata.resource_version = None;
    let crds = kube::Api::<CustomResourceDefinition>::all(client.clone());
    let stored = crds.create(&PostParams::default(), &crd).await.unwrap();
    // Stored with the API server's defaults.
    let mut defaulted = crd.spec.clone();
    defaulted.conversion = Some(CustomResourceConversion {
        strategy: "None".to_owned(),
        webhook: None,
    });
    defaulted.names.list_kind = Some("WidgetList".to_owned());
    assert_eq!(stored.spec, defaulted);
    // As on a real API server, a CRD written as an object serves its kind.
    let widgets = kube::Api::<Widget>::namespaced(client, "default");
    let listed = widgets.list(&ListParams::default()).await.unwrap();
    assert!(listed.items.is_empty());
}

/// The stand-in for the Deployment controller and the kubelet makes a Deployment's pods from its
/// template, owned by it, running and ready; follows its scale and its template; and the
/// garbage collector deletes them with it.
#[tokio::test]
async fn the_stand_in_deployment_controller_runs_a_deployments_pods() {
    use k8s_openapi::api::core::v1::{Container, Pod, PodSpec, PodTemplateSpec};
    let fake = FakeApiServer::new();
    fake.simulate_deployments(true);
    let api = Api::<Deployment>::namespaced(fake.client(), "default");
    let pods = Api::<Pod>::namespaced(fake.client(), "default");
    let labels = [("app".to_owned(), "web".to_owned())];
    let mut web = deployment(2);
    web.status = None;
    web.spec.as_mut().unwrap().selector.match_labels = Some(labels.clone().into());
    web.spec.as_mut().unwrap().template = PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: Some(labels.clone().into()),
            ..ObjectMeta::default()
        }),
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "web".to_owned(),
                image: Some("nginx".to_owned()),
                ..Container::default()
            }],
            ..PodSpec::default()
        }),
    };
    let created = api.create(&PostParams::default(), &web).await.unwrap();
    let listed = || async { pods.list(&ListParams::default()).await.unwrap().items };
    let running = listed().await;
    assert_eq!(running.len(), 2);
    for pod in &running {
        assert_eq!(pod.labels().get("app").map(String::as_str), Some("web"));
        let owner = &pod.owner_references()[0];
        assert_eq!(
            (owner.kind.as_str(), owner.uid.as_str()),
            ("Deployment", created.uid().unwrap().as_str())
        );
        assert_eq!(owner.controller, Some(true));
        let status = pod.status.as_ref().unwrap();
        assert_eq!(status.phase.as_deref(), Some("Running"));
        let ready = status
            .conditions
            .iter()
            .flatten()
            .find(|c| c.type_ == "Ready");
        assert_eq!(ready.map(|c| c.status.as_str()), Some("True"));
        let containers = status.container_statuses.as_ref().unwrap();
        assert!(containers[0].ready && containers[0].state.as_ref().unwrap().running.is_some());
    }
    let available = api
        .get("d")
        .await
        .unwrap()
        .status
        .unwrap()
        .available_replicas;
    assert_eq!(available, Some(2));

    // Scaled down: one pod goes.
    let scale = json!({ "spec": { "replicas": 1 } });
    api.patch("d", &PatchParams::default(), &Patch::Merge(scale))
        .await
        .unwrap();
    let scaled = listed().await;
    assert_eq!(scaled.len(), 1);
    assert!(
        running
            .iter()
            .any(|pod| pod.name_any() == scaled[0].name_any())
    );

    // A new template: its pod replaces the old one.
    let relabel =
        json!({ "spec": { "template": { "metadata": { "labels": { "version": "2" } } } } });
    api.patch("d", &PatchParams::default(), &Patch::Merge(relabel))
        .await
        .unwrap();
    let rolled = listed().await;
    assert_eq!(rolled.len(), 1);
    assert_ne!(rolled[0].name_any(), scaled[0].name_any());
    assert_eq!(
        rolled[0].labels().get("version").map(String::as_str),
        Some("2")
    );

    // Deleted with their Deployment.
    api.delete("d", &DeleteParams::default()).await.unwrap();
    assert!(listed().await.is_empty());
}
