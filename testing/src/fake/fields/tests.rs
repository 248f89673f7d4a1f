use k8s_openapi::api::apps::v1::Deployment;

use super::*;

fn kind() -> Kind {
    let mut kind = Kind::of::<Deployment>();
    kind.status_subresource = true;
    kind
}

fn writer<'a>(kind: &'a Kind, scope: Scope, manager: &'a str, reset: &'a [Path]) -> Writer<'a> {
    Writer {
        kind,
        scope,
        manager,
        reset,
    }
}

fn empty() -> Value {
    json!({ "apiVersion": "apps/v1", "kind": "Deployment", "metadata": { "name": "d" } })
}

fn status_reset() -> Vec<Path> {
    vec![vec![Step::Field("status".to_owned())]]
}

#[test]
fn a_create_owns_what_it_set_and_the_maps_it_added() {
    let kind = kind();
    let object = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": { "name": "d", "labels": { "a": "b" }, "finalizers": ["x"] },
        "spec": { "replicas": 1, "template": { "spec": { "containers": [{ "name": "c", "image": "i" }] } } },
        "status": { "replicas": 1 },
    });
    let mut managers = Managers::default();
    let reset = status_reset();
    managers.record_update(&writer(&kind, Scope::Main, "me", &reset), &empty(), &object);
    let rendered = managers.render();
    assert_eq!(
        rendered[0]["fieldsV1"],
        json!({
            "f:metadata": {
                "f:labels": { ".": {}, "f:a": {} },
                "f:finalizers": { ".": {}, "v:\"x\"": {} },
            },
            "f:spec": {
                ".": {},
                "f:replicas": {},
                "f:template": { ".": {}, "f:spec": { ".": {}, "f:containers": {
                    ".": {},
                    "k:{\"name\":\"c\"}": { ".": {}, "f:image": {}, "f:name": {} },
                } } },
            },
        })
    );
}

#[test]
fn apply_merges_and_removes_what_is_no_longer_applied() {
    let kind = kind();
    let reset = status_reset();
    let me = writer(&kind, Scope::Main, "me", &reset);
    let mut managers = Managers::default();
    let config = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": { "name": "d", "labels": { "a": "1", "b": "2" } },
        "spec": { "replicas": 2, "paused": false },
    });
    let object = managers.apply(&me, &empty(), &config, false).unwrap();
    assert_eq!(object["metadata"]["labels"], json!({ "a": "1", "b": "2" }));
    assert_eq!(object["spec"]["replicas"], 2);

    // Someone else adds a label of their own.
    let mut labelled = object.clone();
    labelled["metadata"]["labels"]["c"] = json!("3");
    managers.record_update(
        &writer(&kind, Scope::Main, "kubectl", &reset),
        &object,
        &labelled,
    );

    // Applying without `b` and `paused` removes them, but not the other manager's label.
    let config = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": { "name": "d", "labels": { "a": "1" } },
        "spec": { "replicas": 2 },
    });
    let object = managers.apply(&me, &labelled, &config, false).unwrap();
    assert_eq!(object["metadata"]["labels"], json!({ "a": "1", "c": "3" }));
    assert_eq!(object["spec"], json!({ "replicas": 2 }));
}

#[test]
fn conflicts_unless_forced() {
    let kind = kind();
    let reset = status_reset();
    let controller = writer(&kind, Scope::Main, "controller", &reset);
    let mut managers = Managers::default();
    let config =
        json!({ "apiVersion": "apps/v1", "kind": "Deployment", "spec": { "replicas": 2 } });
    let object = managers
        .apply(&controller, &empty(), &config, false)
        .unwrap();
    let mut scaled = object.clone();
    scaled["spec"]["replicas"] = json!(5);
    managers.record_update(
        &writer(&kind, Scope::Main, "kubectl", &reset),
        &object,
        &scaled,
    );

    // The same value is no conflict.
    let same = json!({ "apiVersion": "apps/v1", "kind": "Deployment", "spec": { "replicas": 5 } });
    managers
        .clone()
        .apply(
            &writer(&kind, Scope::Main, "other", &reset),
            &scaled,
            &same,
            false,
        )
        .unwrap();

    let conflicts = managers
        .clone()
        .apply(&controller, &scaled, &config, false)
        .unwrap_err();
    assert_eq!(conflicts.len(), 1);
    // An updater is named with the version it wrote.
    assert_eq!(conflicts[0].0, "\"kubectl\" using apps/v1");
    assert_eq!(conflicts[0].1, ".spec.replicas");
    let object = managers.apply(&controller, &scaled, &config, true).unwrap();
    assert_eq!(object["spec"]["replicas"], 2);
    let rendered = managers.render();
    let owners: Vec<&str> = rendered
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["manager"].as_str().unwrap())
        .collect();
    assert_eq!(owners, ["controller"], "kubectl lost its only field");
}

#[test]
fn keyed_lists_merge_by_key() {
    let kind = kind();
    let reset: Vec<Path> = vec![vec![Step::Field("spec".to_owned())]];
    let status = |conditions: Value| json!({ "apiVersion": "apps/v1", "kind": "Deployment", "status": { "conditions": conditions } });
    let one = writer(&kind, Scope::Status, "one", &reset);
    let two = writer(&kind, Scope::Status, "two", &reset);
    let mut managers = Managers::default();
    let a = status(json!([{ "type": "A", "status": "True" }]));
    let object = managers.apply(&one, &empty(), &a, false).unwrap();
    let b = status(json!([{ "type": "B", "status": "False" }]));
    let object = managers.apply(&two, &object, &b, false).unwrap();
    assert_eq!(
        object["status"]["conditions"],
        json!([{ "type": "A", "status": "True" }, { "type": "B", "status": "False" }])
    );
    // "one" no longer applies A: it goes; B stays, it is "two"'s.
    let none = status(json!([]));
    let object = managers.apply(&one, &object, &none, false).unwrap();
    assert_eq!(
        object["status"]["conditions"],
        json!([{ "type": "B", "status": "False" }])
    );
}
