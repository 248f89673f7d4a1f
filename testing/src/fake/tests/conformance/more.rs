//! More requests by class, custom resources first: patches of every type and their misuses,
//! deletes, reads and selectors, metadata, server-side apply, query parameters and CRDs.

use http::Method;
use serde_json::json;

use super::Case;
use super::cases::*;

pub(super) fn cases() -> Vec<Case> {
    [
        patches(),
        deletes(),
        reads(),
        metadata(),
        applies(),
        options(),
        crds(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

fn created() -> Vec<super::Call> {
    vec![post(MEMCACHEDS, memcached("a", json!({ "size": 2 })))]
}

fn patches() -> Vec<Case> {
    let path = one(MEMCACHEDS, "a");
    vec![
        case(
            "JSON patch that adds, tests and removes",
            created(),
            patch(
                &path,
                JSON_PATCH,
                json!([
                    { "op": "add", "path": "/metadata/labels", "value": { "a": "b" } },
                    { "op": "test", "path": "/spec/size", "value": 2 },
                    { "op": "remove", "path": "/metadata/labels/a" },
                ]),
            ),
        ),
        case(
            "JSON patch with an operation that does not exist",
            created(),
            patch(
                &path,
                JSON_PATCH,
                json!([{ "op": "frobnicate", "path": "/spec/size" }]),
            ),
        ),
        case(
            "JSON patch that is an object",
            created(),
            patch(&path, JSON_PATCH, json!({ "op": "add" })),
        ),
        case(
            "merge patch that is a list",
            created(),
            patch(&path, MERGE, json!([1])),
        ),
        case(
            "merge patch that renames the object",
            created(),
            patch(&path, MERGE, json!({ "metadata": { "name": "b" } })),
        ),
        case(
            "merge patch that changes the uid",
            created(),
            patch(
                &path,
                MERGE,
                json!({ "metadata": { "uid": "00000000-0000-0000-0000-000000000001" } }),
            ),
        ),
        case(
            "merge patch that adds a label",
            created(),
            patch(
                &path,
                MERGE,
                json!({ "metadata": { "labels": { "tier": "cache" } } }),
            ),
        ),
        case(
            "merge patch that changes nothing",
            created(),
            patch(&path, MERGE, json!({ "spec": { "size": 2 } })),
        ),
        case(
            "merge patch with force",
            created(),
            patch(
                &format!("{path}?force=true"),
                MERGE,
                json!({ "spec": { "size": 3 } }),
            ),
        ),
        case(
            "dry-run merge patch",
            created(),
            patch(
                &format!("{path}?dryRun=All"),
                MERGE,
                json!({ "spec": { "size": 3 } }),
            ),
        ),
        case(
            "merge patch with an unknown field under fieldValidation=Strict",
            created(),
            patch(
                &format!("{path}?fieldValidation=Strict"),
                MERGE,
                json!({ "spec": { "colour": "red" } }),
            ),
        ),
        case(
            "merge patch of the status subresource that changes a label",
            created(),
            patch(
                &format!("{path}/status"),
                MERGE,
                json!({ "metadata": { "labels": { "x": "y" } } }),
            ),
        ),
        case(
            "replace of the status subresource",
            created(),
            put(
                &format!("{path}/status"),
                memcached("a", json!({ "size": 5 })),
            ),
        ),
        case(
            "merge patch of a subresource that does not exist",
            created(),
            patch(
                &format!("{path}/scale"),
                MERGE,
                json!({ "spec": { "replicas": 2 } }),
            ),
        ),
    ]
}

fn deletes() -> Vec<Case> {
    let path = one(MEMCACHEDS, "a");
    let finalized = || {
        vec![post(
            MEMCACHEDS,
            memcached_with("a", json!({ "finalizers": ["example.com/cleanup"] })),
        )]
    };
    let options = |options: serde_json::Value| {
        let mut body = json!({ "kind": "DeleteOptions", "apiVersion": "v1" });
        for (key, value) in options.as_object().unwrap() {
            body[key] = value.clone();
        }
        Some(body)
    };
    vec![
        case(
            "delete with a resourceVersion precondition that does not match",
            created(),
            delete(
                &path,
                options(json!({ "preconditions": { "resourceVersion": "1" } })),
            ),
        ),
        case(
            "dry-run delete",
            created(),
            delete(&format!("{path}?dryRun=All"), None),
        ),
        case(
            "delete with dryRun=Yes",
            created(),
            delete(&format!("{path}?dryRun=Yes"), None),
        ),
        case(
            "delete with orphanDependents and a propagation policy",
            created(),
            delete(
                &path,
                options(json!({ "orphanDependents": true, "propagationPolicy": "Orphan" })),
            ),
        ),
        case(
            "delete twice with a finalizer",
            {
                let mut setup = finalized();
                setup.push(delete(&path, None));
                setup
            },
            delete(&path, None),
        ),
        case(
            "adding a finalizer while the object is deleted",
            {
                let mut setup = finalized();
                setup.push(delete(&path, None));
                setup
            },
            patch(
                &path,
                JSON_PATCH,
                json!([{ "op": "add", "path": "/metadata/finalizers/-", "value": "example.com/other" }]),
            ),
        ),
        case(
            "removing the last finalizer of a deleted object",
            {
                let mut setup = finalized();
                setup.push(delete(&path, None));
                setup
            },
            patch(&path, MERGE, json!({ "metadata": { "finalizers": null } })),
        ),
        case(
            "get after the last finalizer is removed",
            {
                let mut setup = finalized();
                setup.push(delete(&path, None));
                setup.push(patch(
                    &path,
                    MERGE,
                    json!({ "metadata": { "finalizers": null } }),
                ));
                setup
            },
            get(&path),
        ),
        case(
            "delete a collection by a field",
            vec![
                post(MEMCACHEDS, memcached("a", json!({ "size": 1 }))),
                post(MEMCACHEDS, memcached("b", json!({ "size": 1 }))),
            ],
            delete(
                &format!("{MEMCACHEDS}?fieldSelector=metadata.name%3Db"),
                None,
            ),
        ),
        case(
            "delete with a body that is no JSON",
            created(),
            raw(Method::DELETE, &path, JSON, "{ nope"),
        ),
    ]
}

fn reads() -> Vec<Case> {
    let two = || {
        vec![
            post(
                MEMCACHEDS,
                memcached_with("a", json!({ "labels": { "tier": "cache", "n": "3" } })),
            ),
            post(
                MEMCACHEDS,
                memcached_with("b", json!({ "labels": { "tier": "other" } })),
            ),
        ]
    };
    let by = |selector: &str| get(&format!("{MEMCACHEDS}?labelSelector={selector}"));
    vec![
        case("get", created(), get(&one(MEMCACHEDS, "a"))),
        case("list by a missing label", two(), by("%21n")),
        case("list by notin", two(), by("tier+notin+%28cache%29")),
        case("list by a greater-than selector", two(), by("n%3E2")),
        case(
            "list by a label key with two slashes",
            two(),
            by("a%2Fb%2Fc%3Dx"),
        ),
        case("list by a label value with spaces", two(), by("tier%3Da+b")),
        case("list by an unclosed set", two(), by("tier+in+%28cache")),
        case("list by a selector that starts with =", two(), by("%3Dx")),
        case("list by an empty set", two(), by("tier+in+%28%29")),
        case(
            "list by a field selector without an operator",
            two(),
            get(&format!("{MEMCACHEDS}?fieldSelector=metadata.name")),
        ),
        case(
            "list ConfigMaps by a field they cannot select",
            vec![post(CONFIGMAPS, config_map("c", json!({})))],
            get(&format!("{CONFIGMAPS}?fieldSelector=data.a%3D1")),
        ),
        case(
            "list by two fields",
            two(),
            get(&format!(
                "{MEMCACHEDS}?fieldSelector=metadata.name%3Da%2Cmetadata.namespace%3D{{ns}}"
            )),
        ),
        case(
            "list of a built-in resource that does not exist",
            vec![],
            get("/api/v1/namespaces/{ns}/nothings"),
        ),
        case(
            "list of a group that does not exist",
            vec![],
            get("/apis/nothing.example.com/v1/namespaces/{ns}/things"),
        ),
    ]
}

fn metadata() -> Vec<Case> {
    let with = |metadata: serde_json::Value| post(MEMCACHEDS, memcached_with("a", metadata));
    vec![
        case(
            "a label value too long",
            vec![],
            with(json!({ "labels": { "tier": "x".repeat(64) } })),
        ),
        case(
            "a label key whose prefix is not a subdomain",
            vec![],
            with(json!({ "labels": { "Example.com/tier": "x" } })),
        ),
        case(
            "a label key with an empty name",
            vec![],
            with(json!({ "labels": { "example.com/": "x" } })),
        ),
        case(
            "an annotation key with capitals",
            vec![],
            with(json!({ "annotations": { "Example.com/Note": "x" } })),
        ),
        case(
            "both garbage collection finalizers",
            vec![],
            with(json!({ "finalizers": ["orphan", "foregroundDeletion"] })),
        ),
        case(
            "an owner reference without an apiVersion",
            vec![],
            with(
                json!({ "ownerReferences": [{ "apiVersion": "", "kind": "ConfigMap", "name": "c", "uid": "11111111-1111-1111-1111-111111111111" }] }),
            ),
        ),
        case(
            "an Event as an owner",
            vec![],
            with(
                json!({ "ownerReferences": [{ "apiVersion": "v1", "kind": "Event", "name": "e", "uid": "11111111-1111-1111-1111-111111111111" }] }),
            ),
        ),
        case(
            "a generateName that is not allowed",
            vec![],
            post(
                MEMCACHEDS,
                json!({ "apiVersion": "cache.example.com/v1alpha1", "kind": "Memcached", "metadata": { "generateName": "Bad-" }, "spec": { "size": 1 } }),
            ),
        ),
        case(
            "a custom resource with generateName",
            vec![],
            post(
                MEMCACHEDS,
                json!({ "apiVersion": "cache.example.com/v1alpha1", "kind": "Memcached", "metadata": { "generateName": "cache-" }, "spec": { "size": 1 } }),
            ),
        ),
        case(
            "a name with dots",
            vec![],
            post(MEMCACHEDS, memcached("a.b.c", json!({ "size": 1 }))),
        ),
        case(
            "several invalid fields at once",
            vec![],
            post(
                MEMCACHEDS,
                json!({ "apiVersion": "cache.example.com/v1alpha1", "kind": "Memcached",
                        "metadata": { "name": "Bad", "labels": { "a": "b c" } }, "spec": { "size": -4 } }),
            ),
        ),
    ]
}

fn applies() -> Vec<Case> {
    let path = one(MEMCACHEDS, "a");
    let apply_as = |manager: &str, spec: serde_json::Value| {
        patch(
            &format!("{path}?fieldManager={manager}"),
            APPLY,
            memcached("a", spec),
        )
    };
    vec![
        case(
            "apply after an update by the same manager",
            vec![post(
                &format!("{MEMCACHEDS}?fieldManager=tester"),
                memcached("a", json!({ "size": 2 })),
            )],
            apply_as("tester", json!({ "size": 3 })),
        ),
        case(
            "apply that conflicts with an update",
            created(),
            apply_as("tester", json!({ "size": 3 })),
        ),
        case(
            "apply that conflicts on two fields",
            vec![apply_as("first", json!({ "size": 2, "containerPort": 80 }))],
            apply_as("second", json!({ "size": 3, "containerPort": 81 })),
        ),
        case(
            "apply that leaves out a field it applied before",
            vec![apply_as(
                "tester",
                json!({ "size": 2, "containerPort": 80 }),
            )],
            apply_as("tester", json!({ "size": 2 })),
        ),
        case(
            "apply that changes nothing",
            vec![apply_as("tester", json!({ "size": 2 }))],
            apply_as("tester", json!({ "size": 2 })),
        ),
        case(
            "apply with managedFields",
            vec![],
            patch(
                &format!("{path}?fieldManager=tester"),
                APPLY,
                memcached_with(
                    "a",
                    json!({ "managedFields": [{ "manager": "x", "operation": "Apply" }] }),
                ),
            ),
        ),
        case(
            "apply with another uid",
            created(),
            patch(
                &format!("{path}?fieldManager=tester"),
                APPLY,
                memcached_with(
                    "a",
                    json!({ "uid": "00000000-0000-0000-0000-000000000001" }),
                ),
            ),
        ),
        case(
            "apply with another uid by the only manager",
            vec![apply_as("tester", json!({ "size": 2 }))],
            patch(&format!("{path}?fieldManager=tester"), APPLY, {
                let mut object = memcached("a", json!({ "size": 2 }));
                object["metadata"]["uid"] = json!("00000000-0000-0000-0000-000000000001");
                object
            }),
        ),
        case(
            "forced apply after an update",
            created(),
            patch(
                &format!("{path}?fieldManager=tester&force=true"),
                APPLY,
                memcached("a", json!({ "size": 3 })),
            ),
        ),
        case(
            "apply of another version",
            vec![],
            patch(
                &format!("{path}?fieldManager=tester"),
                APPLY,
                json!({ "apiVersion": "cache.example.com/v1", "kind": "Memcached", "metadata": { "name": "a" } }),
            ),
        ),
        case(
            "apply of YAML",
            vec![],
            raw(
                Method::PATCH,
                &format!("{path}?fieldManager=tester"),
                APPLY,
                "apiVersion: cache.example.com/v1alpha1\nkind: Memcached\nmetadata:\n  name: a\nspec:\n  size: 2\n",
            ),
        ),
        case(
            "apply of a ConfigMap",
            vec![],
            patch(
                &format!("{}?fieldManager=tester", one(CONFIGMAPS, "c")),
                APPLY,
                config_map("c", json!({ "a": "1" })),
            ),
        ),
    ]
}

fn options() -> Vec<Case> {
    let a = || memcached("a", json!({ "size": 2 }));
    vec![
        case(
            "a field manager with a control character",
            vec![],
            post(&format!("{MEMCACHEDS}?fieldManager=a%07b"), a()),
        ),
        case(
            "a field manager by query",
            vec![],
            post(&format!("{MEMCACHEDS}?fieldManager=my-controller"), a()),
        ),
        case(
            "a duplicate field under fieldValidation=Ignore",
            vec![],
            raw(
                Method::POST,
                &format!("{MEMCACHEDS}?fieldValidation=Ignore"),
                JSON,
                r#"{"apiVersion":"cache.example.com/v1alpha1","kind":"Memcached","metadata":{"name":"a"},"spec":{"size":1,"size":2}}"#,
            ),
        ),
        case(
            "a duplicate and an unknown field under fieldValidation=Strict",
            vec![],
            raw(
                Method::POST,
                &format!("{MEMCACHEDS}?fieldValidation=Strict"),
                JSON,
                r#"{"apiVersion":"cache.example.com/v1alpha1","kind":"Memcached","metadata":{"name":"a","colour":"x"},"spec":{"size":1,"size":2,"colour":"red"}}"#,
            ),
        ),
        case(
            "an unknown metadata field by default",
            vec![],
            post(MEMCACHEDS, memcached_with("a", json!({ "colour": "red" }))),
        ),
        case(
            "a dry-run update",
            created(),
            put(
                &format!("{}?dryRun=All", one(MEMCACHEDS, "a")),
                memcached("a", json!({ "size": 3 })),
            ),
        ),
        case(
            "a create with a status",
            vec![],
            post(MEMCACHEDS, {
                let mut object = a();
                object["status"] = json!({ "conditions": [] });
                object
            }),
        ),
        case(
            "a create in another resource's namespace URL",
            vec![],
            post(
                "/api/v1/namespaces/{ns}/namespaces",
                json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": "x{n}" } }),
            ),
        ),
        case(
            "a create of a cluster-scoped object with a namespace",
            vec![],
            post(CRDS, {
                let mut crd = crd_with_rules(json!([]));
                crd["metadata"]["namespace"] = json!("{ns}");
                crd
            }),
        ),
    ]
}

fn crds() -> Vec<Case> {
    let crd = || crd_with_rules(json!([]));
    vec![
        case(
            "replace a CRD without resourceVersion",
            vec![post(CRDS, crd())],
            put(&one(CRDS, "widgets.c{n}.example.com"), crd()),
        ),
        case(
            "a CRD whose messageExpression does not compile",
            vec![],
            post(
                CRDS,
                crd_with_rules(
                    json!([{ "rule": "self.size < 5", "messageExpression": "'too big' +" }]),
                ),
            ),
        ),
        case(
            "a CRD whose rule uses oldSelf",
            vec![],
            post(
                CRDS,
                crd_with_rules(
                    json!([{ "rule": "self.size >= oldSelf.size", "message": "no shrinking" }]),
                ),
            ),
        ),
        case(
            "a CRD of an unknown scope",
            vec![],
            post(CRDS, {
                let mut crd = crd();
                crd["spec"]["scope"] = json!("Everywhere");
                crd
            }),
        ),
        case(
            "a CRD without a kind",
            vec![],
            post(CRDS, {
                let mut crd = crd();
                crd["spec"]["names"].as_object_mut().unwrap().remove("kind");
                crd
            }),
        ),
    ]
}
