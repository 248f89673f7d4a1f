//! Server-side apply: creating by apply, no-op applies, field ownership, conflicts, and the
//! status subresource.

use k8s_openapi::api::apps::v1::Deployment;
use kube::CustomResourceExt as _;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use super::*;
use crate::fake::FakeApiServer;

fn deployment(replicas: i32, labels: Value) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": { "name": "d", "labels": labels },
        "spec": {
            "replicas": replicas,
            "selector": { "matchLabels": { "app": "d" } },
            "template": {
                "metadata": { "labels": { "app": "d" } },
                "spec": { "containers": [{ "name": "main", "image": "nginx" }] },
            },
        },
    })
}

/// The managers of an object and their operations, as in `managedFields`.
fn managers(deployment: &Deployment) -> Vec<(String, String)> {
    deployment
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .map(|entry| {
            (
                entry.manager.clone().unwrap_or_default(),
                entry.operation.clone().unwrap_or_default(),
            )
        })
        .collect()
}

#[tokio::test]
async fn apply_creates_then_changes_nothing_when_nothing_differs() {
    let fake = FakeApiServer::new();
    let api = Api::<Deployment>::namespaced(fake.client(), "default");
    let params = PatchParams::apply("controller").force();
    let config = deployment(2, json!({ "a": "1" }));
    let created = api
        .patch("d", &params, &Patch::Apply(&config))
        .await
        .unwrap();
    assert_eq!(created.metadata.generation, Some(1));
    assert_eq!(created.metadata.namespace.as_deref(), Some("default"));
    assert_eq!(managers(&created), [("controller".into(), "Apply".into())]);
    let fields = &created.metadata.managed_fields.as_ref().unwrap()[0];
    let fields = serde_json::to_value(fields.fields_v1.as_ref().unwrap()).unwrap();
    assert_eq!(fields["f:spec"]["f:replicas"], json!({}));

    let version = fake.resource_version();
    let same = api
        .patch("d", &params, &Patch::Apply(&config))
        .await
        .unwrap();
    assert_eq!(
        same.metadata.resource_version,
        created.metadata.resource_version
    );
    assert_eq!(fake.resource_version(), version);
}

#[tokio::test]
async fn applies_conflict_with_other_managers_unless_forced() {
    let fake = FakeApiServer::new();
    let api = Api::<Deployment>::namespaced(fake.client(), "default");
    let config = deployment(2, json!({ "a": "1" }));
    api.patch(
        "d",
        &PatchParams::apply("controller"),
        &Patch::Apply(&config),
    )
    .await
    .unwrap();

    // `kubectl scale`: a merge patch by another manager.
    let scale = PatchParams {
        field_manager: Some("kubectl".to_owned()),
        ..PatchParams::default()
    };
    let scaled = api
        .patch(
            "d",
            &scale,
            &Patch::Merge(json!({ "spec": { "replicas": 5 } })),
        )
        .await
        .unwrap();
    assert_eq!(
        managers(&scaled),
        [
            ("controller".into(), "Apply".into()),
            ("kubectl".into(), "Update".into())
        ]
    );

    let conflict = api
        .patch(
            "d",
            &PatchParams::apply("controller"),
            &Patch::Apply(&config),
        )
        .await;
    let Err(kube::Error::Api(status)) = conflict else {
        panic!("expected a conflict, got {conflict:?}");
    };
    assert_eq!((status.code, status.reason.as_str()), (409, "Conflict"));
    assert!(
        status
            .message
            .contains(r#"conflict with "kubectl": .spec.replicas"#),
        "{}",
        status.message
    );

    // Another manager applying fields nobody else owns is no conflict.
    let label = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": { "labels": { "team": "x" } },
    });
    api.patch("d", &PatchParams::apply("labeller"), &Patch::Apply(&label))
        .await
        .unwrap();

    let forced = api
        .patch(
            "d",
            &PatchParams::apply("controller").force(),
            &Patch::Apply(&config),
        )
        .await
        .unwrap();
    assert_eq!(forced.spec.as_ref().unwrap().replicas, Some(2));
    assert_eq!(
        managers(&forced),
        [
            ("controller".into(), "Apply".into()),
            ("labeller".into(), "Apply".into())
        ],
        "kubectl lost its only field"
    );

    // Leaving a label out of the applied configuration removes it, but not another manager's.
    let fewer = deployment(2, json!({}));
    let applied = api
        .patch(
            "d",
            &PatchParams::apply("controller"),
            &Patch::Apply(&fewer),
        )
        .await
        .unwrap();
    let labels = applied.metadata.labels.unwrap();
    assert_eq!(labels.keys().collect::<Vec<_>>(), ["team"]);
}

#[tokio::test]
async fn status_is_applied_to_the_subresource_and_merged_by_key() {
    let fake = FakeApiServer::new();
    fake.register_crd(&Widget::crd());
    let api = Api::<Widget>::namespaced(fake.client(), "default");
    api.create(&PostParams::default(), &widget("w", 1))
        .await
        .unwrap();
    let conditions = |conditions: Value| {
        json!({
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "spec": { "size": 5 },
            "status": { "conditions": conditions },
        })
    };
    let condition = |type_: &str, status: &str| {
        json!({ "type": type_, "status": status, "reason": "R", "message": "",
                "lastTransitionTime": "2024-01-01T00:00:00Z" })
    };

    let one = conditions(json!([condition("Available", "True")]));
    let applied = api
        .patch_status("w", &PatchParams::apply("one"), &Patch::Apply(&one))
        .await
        .unwrap();
    assert_eq!(applied.spec.size, 1, "a status apply ignores the spec");
    assert_eq!(applied.metadata.generation, Some(1));
    let two = conditions(json!([condition("Degraded", "False")]));
    let applied = api
        .patch_status("w", &PatchParams::apply("two"), &Patch::Apply(&two))
        .await
        .unwrap();
    let types: Vec<&str> = applied
        .status
        .as_ref()
        .unwrap()
        .conditions
        .iter()
        .map(|c| c.type_.as_str())
        .collect();
    assert_eq!(types, ["Available", "Degraded"]);

    // Changing another manager's condition without force is a conflict.
    let taken = conditions(json!([condition("Available", "False")]));
    let conflict = api
        .patch_status("w", &PatchParams::apply("two"), &Patch::Apply(&taken))
        .await;
    assert_eq!(api_error(conflict), ("Conflict".to_owned(), 409));

    // An apply of the object ignores the status. (Forced: the size is the creator's field.)
    let spec = conditions(json!([]));
    let applied = api
        .patch(
            "w",
            &PatchParams::apply("user").force(),
            &Patch::Apply(&spec),
        )
        .await
        .unwrap();
    assert_eq!(applied.spec.size, 5);
    assert_eq!(applied.metadata.generation, Some(2));
    assert_eq!(applied.status.unwrap().conditions.len(), 2);
}

#[tokio::test]
async fn applies_need_a_field_manager_and_a_type() {
    let fake = FakeApiServer::new();
    let client = fake.client();
    let api = Api::<Deployment>::namespaced(client.clone(), "default");
    let untyped = json!({ "metadata": { "name": "d" }, "spec": { "replicas": 1 } });
    let refused = api
        .patch("d", &PatchParams::apply("me"), &Patch::Apply(&untyped))
        .await;
    assert_eq!(api_error(refused).1, 400);

    // kube refuses an apply without a field manager itself, so send one by hand.
    let request = http::Request::patch("/apis/apps/v1/namespaces/default/deployments/d?")
        .header("content-type", "application/apply-patch+yaml")
        .body(serde_json::to_vec(&deployment(1, json!({}))).unwrap())
        .unwrap();
    let answer = client.request::<Deployment>(request).await;
    assert_eq!(api_error(answer).1, 400);

    // YAML is an applied configuration too.
    let yaml = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  replicas: 3\n  \
                selector: {}\n  template: {}\n";
    let request =
        http::Request::patch("/apis/apps/v1/namespaces/default/deployments/d?&fieldManager=me")
            .header("content-type", "application/apply-patch+yaml")
            .body(yaml.as_bytes().to_vec())
            .unwrap();
    let created = client.request::<Deployment>(request).await.unwrap();
    assert_eq!(created.spec.unwrap().replicas, Some(3));
}
