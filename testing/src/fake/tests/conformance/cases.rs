//! The requests of the comparison, by class. Each class holds the requests that work and the
//! misuses a user's code or tests make, so that both verdicts are compared.

use http::Method;
use serde_json::{Value, json};

use super::{Call, Case};

pub(super) const JSON: &str = "application/json";
pub(super) const MERGE: &str = "application/merge-patch+json";
pub(super) const JSON_PATCH: &str = "application/json-patch+json";
pub(super) const STRATEGIC: &str = "application/strategic-merge-patch+json";
pub(super) const APPLY: &str = "application/apply-patch+yaml";

pub(super) const MEMCACHEDS: &str = "/apis/cache.example.com/v1alpha1/namespaces/{ns}/memcacheds";
pub(super) const WEBSERVERS: &str = "/apis/web.example.com/v1/namespaces/{ns}/webservers";
pub(super) const ATS: &str = "/apis/at.example.com/v1alpha1/namespaces/{ns}/ats";
pub(super) const CONFIGMAPS: &str = "/api/v1/namespaces/{ns}/configmaps";
pub(super) const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/{ns}/deployments";
pub(super) const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
pub(super) const SECRETS: &str = "/api/v1/namespaces/{ns}/secrets";
pub(super) const SERVICES: &str = "/api/v1/namespaces/{ns}/services";
pub(super) const PODS: &str = "/api/v1/namespaces/{ns}/pods";
pub(super) const LEASES: &str = "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases";
pub(super) const NAMESPACES: &str = "/api/v1/namespaces";
pub(super) const SERVICE_ACCOUNTS: &str = "/api/v1/namespaces/{ns}/serviceaccounts";
pub(super) const MUTATING_WEBHOOKS: &str =
    "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations";

pub(super) fn call(
    method: Method,
    path: &str,
    content_type: &'static str,
    body: Option<Value>,
) -> Call {
    Call {
        method,
        path: path.to_owned(),
        content_type,
        body: body.map(|body| body.to_string()),
    }
}

pub(super) fn get(path: &str) -> Call {
    call(Method::GET, path, JSON, None)
}

pub(super) fn post(path: &str, body: Value) -> Call {
    call(Method::POST, path, JSON, Some(body))
}

pub(super) fn put(path: &str, body: Value) -> Call {
    call(Method::PUT, path, JSON, Some(body))
}

pub(super) fn patch(path: &str, content_type: &'static str, body: Value) -> Call {
    call(Method::PATCH, path, content_type, Some(body))
}

pub(super) fn delete(path: &str, body: Option<Value>) -> Call {
    call(Method::DELETE, path, JSON, body)
}

/// A request whose body is sent as written (not valid JSON, or with duplicate keys).
pub(super) fn raw(method: Method, path: &str, content_type: &'static str, body: &str) -> Call {
    Call {
        method,
        path: path.to_owned(),
        content_type,
        body: Some(body.to_owned()),
    }
}

pub(super) fn case(name: &'static str, setup: Vec<Call>, call: Call) -> Case {
    Case {
        name,
        setup,
        call,
        version_difference: None,
    }
}

/// A case whose answers differ between Kubernetes 1.28 (envtest's) and 1.33 (the fake's), for
/// the reason given (a change checked in Kubernetes' history).
pub(super) fn differs(name: &'static str, setup: Vec<Call>, call: Call, why: &'static str) -> Case {
    Case {
        version_difference: Some(why),
        ..case(name, setup, call)
    }
}

pub(super) fn memcached(name: &str, spec: Value) -> Value {
    json!({
        "apiVersion": "cache.example.com/v1alpha1",
        "kind": "Memcached",
        "metadata": { "name": name },
        "spec": spec,
    })
}

pub(super) fn memcached_with(name: &str, metadata: Value) -> Value {
    let mut object = memcached(name, json!({ "size": 1 }));
    for (key, value) in metadata.as_object().expect("metadata is an object") {
        object["metadata"][key] = value.clone();
    }
    object
}

pub(super) fn config_map(name: &str, data: Value) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": { "name": name },
        "data": data,
    })
}

pub(super) fn deployment(name: &str, replicas: i64) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": { "name": name, "labels": { "app": name } },
        "spec": {
            "replicas": replicas,
            "selector": { "matchLabels": { "app": name } },
            "template": {
                "metadata": { "labels": { "app": name } },
                "spec": { "containers": [{ "name": "app", "image": "nginx:1.27" }] },
            },
        },
    })
}

/// A CRD of its own for the case (`widgets{n}.c{n}.example.com`), whose spec has `rules`.
pub(super) fn crd_with_rules(rules: Value) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": { "name": "widgets.c{n}.example.com" },
        "spec": {
            "group": "c{n}.example.com",
            "names": { "kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList" },
            "scope": "Namespaced",
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": { "openAPIV3Schema": {
                    "type": "object",
                    "properties": { "spec": {
                        "type": "object",
                        "properties": {
                            "size": { "type": "integer" },
                            "names": { "type": "array", "items": { "type": "string" } },
                        },
                        "x-kubernetes-validations": rules,
                    } },
                } },
            }],
        },
    })
}

pub(super) fn one(path: &str, name: &str) -> String {
    format!("{path}/{name}")
}

/// Every case, by class.
pub(in super::super) fn table() -> Vec<Case> {
    [
        creates(),
        replaces(),
        patches(),
        status_writes(),
        deletes(),
        reads(),
        metadata(),
        applies(),
        query_parameters(),
        crds(),
        super::built_in::cases(),
        super::more::cases(),
        super::defaults::cases(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

fn creates() -> Vec<Case> {
    let a = || memcached("a", json!({ "size": 2 }));
    vec![
        case("create a custom resource", vec![], post(MEMCACHEDS, a())),
        case(
            "create one that exists",
            vec![post(MEMCACHEDS, a())],
            post(MEMCACHEDS, a()),
        ),
        case(
            "create with a resourceVersion",
            vec![],
            post(
                MEMCACHEDS,
                memcached_with("a", json!({ "resourceVersion": "12" })),
            ),
        ),
        case(
            "create in a namespace that does not exist",
            vec![],
            post(
                "/apis/cache.example.com/v1alpha1/namespaces/nowhere/memcacheds",
                a(),
            ),
        ),
        case(
            "create with another namespace in the body",
            vec![],
            post(
                MEMCACHEDS,
                memcached_with("a", json!({ "namespace": "other" })),
            ),
        ),
        case(
            "create with generateName",
            vec![],
            post(
                CONFIGMAPS,
                json!({ "apiVersion": "v1", "kind": "ConfigMap", "metadata": { "generateName": "x-" } }),
            ),
        ),
        case(
            "create without a name",
            vec![],
            post(
                CONFIGMAPS,
                json!({ "apiVersion": "v1", "kind": "ConfigMap", "metadata": {} }),
            ),
        ),
        case(
            "create of a kind other than the URL's",
            vec![],
            post(MEMCACHEDS, config_map("a", json!({}))),
        ),
        case(
            "create without apiVersion and kind",
            vec![],
            post(CONFIGMAPS, json!({ "metadata": { "name": "a" } })),
        ),
        case(
            "create with a body that is no JSON",
            vec![],
            raw(Method::POST, CONFIGMAPS, JSON, "{ not json"),
        ),
        case(
            "create a Deployment",
            vec![],
            post(DEPLOYMENTS, deployment("web", 2)),
        ),
        case(
            "create a Deployment whose selector does not match its template",
            vec![],
            post(DEPLOYMENTS, {
                let mut d = deployment("web", 2);
                d["spec"]["selector"]["matchLabels"]["app"] = json!("other");
                d
            }),
        ),
        case(
            "create a ConfigMap with a key that is not allowed",
            vec![],
            post(CONFIGMAPS, config_map("a", json!({ "not/allowed": "x" }))),
        ),
        case(
            "create a WebServer without its required fields",
            vec![],
            post(
                WEBSERVERS,
                json!({ "apiVersion": "web.example.com/v1", "kind": "WebServer", "metadata": { "name": "w" }, "spec": {} }),
            ),
        ),
        case(
            "create an At whose schedule is no date-time",
            vec![],
            post(
                ATS,
                json!({ "apiVersion": "at.example.com/v1alpha1", "kind": "At", "metadata": { "name": "a" }, "spec": { "command": "echo", "schedule": "tomorrow" } }),
            ),
        ),
    ]
}

fn replaces() -> Vec<Case> {
    let a = |size| memcached("a", json!({ "size": size }));
    let path = one(MEMCACHEDS, "a");
    vec![
        case(
            "replace without resourceVersion",
            vec![post(MEMCACHEDS, a(1))],
            put(&path, a(3)),
        ),
        case(
            "replace a ConfigMap without resourceVersion",
            vec![post(CONFIGMAPS, config_map("c", json!({ "k": "v" })))],
            put(&one(CONFIGMAPS, "c"), config_map("c", json!({ "k": "w" }))),
        ),
        case(
            "replace with a stale resourceVersion",
            vec![post(MEMCACHEDS, a(1))],
            put(
                &path,
                memcached_with("a", json!({ "resourceVersion": "1" })),
            ),
        ),
        case(
            "replace with a resourceVersion that is no number",
            vec![post(MEMCACHEDS, a(1))],
            put(
                &path,
                memcached_with("a", json!({ "resourceVersion": "abc" })),
            ),
        ),
        case("replace one that does not exist", vec![], put(&path, a(1))),
        case(
            "replace with another name in the body",
            vec![post(MEMCACHEDS, a(1))],
            put(&path, memcached("b", json!({ "size": 1 }))),
        ),
        case(
            "replace with another uid in the body",
            vec![post(MEMCACHEDS, a(1))],
            put(
                &path,
                memcached_with(
                    "a",
                    json!({ "uid": "00000000-0000-0000-0000-000000000000" }),
                ),
            ),
        ),
    ]
}

fn patches() -> Vec<Case> {
    let path = one(MEMCACHEDS, "a");
    let created = || vec![post(MEMCACHEDS, memcached("a", json!({ "size": 2 })))];
    vec![
        case(
            "merge patch of the spec",
            created(),
            patch(&path, MERGE, json!({ "spec": { "size": 4 } })),
        ),
        case(
            "merge patch that removes a defaulted field",
            created(),
            patch(&path, MERGE, json!({ "spec": { "containerPort": null } })),
        ),
        case(
            "merge patch that breaks the schema",
            created(),
            patch(&path, MERGE, json!({ "spec": { "size": -1 } })),
        ),
        case(
            "strategic-merge patch of a custom resource",
            created(),
            patch(&path, STRATEGIC, json!({ "spec": { "size": 4 } })),
        ),
        case(
            "strategic-merge patch of a Deployment",
            vec![post(DEPLOYMENTS, deployment("web", 1))],
            patch(
                &one(DEPLOYMENTS, "web"),
                STRATEGIC,
                json!({ "spec": { "replicas": 3 } }),
            ),
        ),
        case(
            "JSON patch",
            created(),
            patch(
                &path,
                JSON_PATCH,
                json!([{ "op": "replace", "path": "/spec/size", "value": 5 }]),
            ),
        ),
        case(
            "JSON patch whose test fails",
            created(),
            patch(
                &path,
                JSON_PATCH,
                json!([{ "op": "test", "path": "/spec/size", "value": 9 }, { "op": "replace", "path": "/spec/size", "value": 5 }]),
            ),
        ),
        case(
            "JSON patch of a path that does not exist",
            created(),
            patch(
                &path,
                JSON_PATCH,
                json!([{ "op": "remove", "path": "/spec/nothing" }]),
            ),
        ),
        case(
            "patch with a body that is no JSON",
            created(),
            raw(Method::PATCH, &path, MERGE, "{ nope"),
        ),
        case(
            "patch of an object that does not exist",
            vec![],
            patch(&path, MERGE, json!({ "spec": { "size": 1 } })),
        ),
        case(
            "merge patch with a stale resourceVersion",
            created(),
            patch(
                &path,
                MERGE,
                json!({ "metadata": { "resourceVersion": "1" }, "spec": { "size": 3 } }),
            ),
        ),
        case(
            "patch with an unsupported content type",
            created(),
            patch(&path, "text/plain", json!({})),
        ),
    ]
}

fn status_writes() -> Vec<Case> {
    let path = one(MEMCACHEDS, "a");
    let status = format!("{path}/status");
    let created = || vec![post(MEMCACHEDS, memcached("a", json!({ "size": 2 })))];
    let condition = json!({
        "type": "Available", "status": "True", "reason": "Reconciled", "message": "ok",
        "lastTransitionTime": "2026-01-02T03:04:05Z",
    });
    vec![
        case(
            "status merge patch",
            created(),
            patch(
                &status,
                MERGE,
                json!({ "status": { "conditions": [condition.clone()] } }),
            ),
        ),
        case(
            "status patch that also changes the spec",
            created(),
            patch(
                &status,
                MERGE,
                json!({ "spec": { "size": 9 }, "status": { "conditions": [condition.clone()] } }),
            ),
        ),
        differs(
            "status patch with a condition without a reason",
            created(),
            patch(
                &status,
                MERGE,
                json!({ "status": { "conditions": [{ "type": "Available", "status": "True", "message": "", "lastTransitionTime": "2026-01-02T03:04:05Z" }] } }),
            ),
            "Kubernetes 1.28 names the fields of a status write's errors without their `status.` \
             prefix (`conditions[0].reason`); 1.30 put it back (kubernetes/kubernetes#123822)",
        ),
        case(
            "spec patch that sets a status",
            created(),
            patch(
                &path,
                MERGE,
                json!({ "status": { "conditions": [condition] } }),
            ),
        ),
        case(
            "status of a kind without a status subresource",
            vec![post(CONFIGMAPS, config_map("c", json!({})))],
            patch(&one(CONFIGMAPS, "c/status"), MERGE, json!({ "data": {} })),
        ),
    ]
}

fn deletes() -> Vec<Case> {
    let path = one(MEMCACHEDS, "a");
    let created = || vec![post(MEMCACHEDS, memcached("a", json!({ "size": 2 })))];
    let with_finalizer = || {
        vec![post(
            MEMCACHEDS,
            memcached_with("a", json!({ "finalizers": ["example.com/cleanup"] })),
        )]
    };
    vec![
        case("delete", created(), delete(&path, None)),
        case(
            "delete one that does not exist",
            vec![],
            delete(&path, None),
        ),
        case(
            "delete with a finalizer",
            with_finalizer(),
            delete(&path, None),
        ),
        case(
            "get after a delete held by a finalizer",
            {
                let mut setup = with_finalizer();
                setup.push(delete(&path, None));
                setup
            },
            get(&path),
        ),
        case(
            "delete with a uid precondition that does not match",
            created(),
            delete(
                &path,
                Some(
                    json!({ "kind": "DeleteOptions", "apiVersion": "v1", "preconditions": { "uid": "00000000-0000-0000-0000-000000000000" } }),
                ),
            ),
        ),
        case(
            "delete with a propagation policy that does not exist",
            created(),
            delete(
                &path,
                Some(
                    json!({ "kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Sometimes" }),
                ),
            ),
        ),
        case(
            "delete a collection by label",
            vec![
                post(
                    MEMCACHEDS,
                    memcached_with("a", json!({ "labels": { "tier": "cache" } })),
                ),
                post(
                    MEMCACHEDS,
                    memcached_with("b", json!({ "labels": { "tier": "other" } })),
                ),
            ],
            delete(&format!("{MEMCACHEDS}?labelSelector=tier%3Dcache"), None),
        ),
    ]
}

fn reads() -> Vec<Case> {
    let two = || {
        vec![
            post(
                MEMCACHEDS,
                memcached_with("a", json!({ "labels": { "tier": "cache" } })),
            ),
            post(
                MEMCACHEDS,
                memcached_with("b", json!({ "labels": { "tier": "other" } })),
            ),
        ]
    };
    vec![
        case(
            "get one that does not exist",
            vec![],
            get(&one(MEMCACHEDS, "a")),
        ),
        case("list", two(), get(MEMCACHEDS)),
        case(
            "list by label",
            two(),
            get(&format!("{MEMCACHEDS}?labelSelector=tier%3Dcache")),
        ),
        case(
            "list by a set-based selector",
            two(),
            get(&format!(
                "{MEMCACHEDS}?labelSelector=tier+in+%28cache%2Cx%29"
            )),
        ),
        case(
            "list by a label selector that does not parse",
            two(),
            get(&format!("{MEMCACHEDS}?labelSelector=tier%3D%3D%3Dx")),
        ),
        case(
            "list by name",
            two(),
            get(&format!("{MEMCACHEDS}?fieldSelector=metadata.name%3Db")),
        ),
        case(
            "list by a field custom resources cannot select",
            two(),
            get(&format!("{MEMCACHEDS}?fieldSelector=spec.size%3D1")),
        ),
        case(
            "list with a limit",
            two(),
            get(&format!("{MEMCACHEDS}?limit=1")),
        ),
        case(
            "list of a resource that does not exist",
            vec![],
            get("/apis/cache.example.com/v1alpha1/namespaces/{ns}/nothings"),
        ),
        case(
            "list of a version that is not served",
            vec![],
            get("/apis/cache.example.com/v9/namespaces/{ns}/memcacheds"),
        ),
    ]
}

fn metadata() -> Vec<Case> {
    let with = |metadata: Value| post(MEMCACHEDS, memcached_with("a", metadata));
    let big = "x".repeat(256 * 1024);
    vec![
        case(
            "a name with capitals",
            vec![],
            post(MEMCACHEDS, memcached("Bad", json!({}))),
        ),
        case(
            "a name too long",
            vec![],
            post(CONFIGMAPS, config_map(&"a".repeat(254), json!({}))),
        ),
        case(
            "a label value with spaces",
            vec![],
            with(json!({ "labels": { "tier": "a b" } })),
        ),
        case(
            "a label key with two slashes",
            vec![],
            with(json!({ "labels": { "a/b/c": "x" } })),
        ),
        case(
            "annotations over the size limit",
            vec![],
            with(json!({ "annotations": { "big": big } })),
        ),
        case(
            "an annotation key that is not allowed",
            vec![],
            with(json!({ "annotations": { "no spaces": "x" } })),
        ),
        case(
            "a finalizer name that is not qualified",
            vec![],
            with(json!({ "finalizers": ["cleanup"] })),
        ),
        case(
            "a finalizer name that is not allowed",
            vec![],
            with(json!({ "finalizers": ["example.com/clean up"] })),
        ),
        case(
            "an owner reference without a uid",
            vec![],
            with(
                json!({ "ownerReferences": [{ "apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "" }] }),
            ),
        ),
        case(
            "an owner reference without a kind",
            vec![],
            with(
                json!({ "ownerReferences": [{ "apiVersion": "v1", "kind": "", "name": "c", "uid": "11111111-1111-1111-1111-111111111111" }] }),
            ),
        ),
        case(
            "two controller owner references",
            vec![],
            with(json!({ "ownerReferences": [
                { "apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "11111111-1111-1111-1111-111111111111", "controller": true },
                { "apiVersion": "v1", "kind": "ConfigMap", "name": "d", "uid": "22222222-2222-2222-2222-222222222222", "controller": true },
            ] })),
        ),
    ]
}

fn applies() -> Vec<Case> {
    let path = one(MEMCACHEDS, "a");
    let apply = |manager: &str, force: bool, size: i64| {
        let force = if force { "&force=true" } else { "" };
        patch(
            &format!("{path}?fieldManager={manager}{force}"),
            APPLY,
            memcached("a", json!({ "size": size })),
        )
    };
    vec![
        case("apply that creates", vec![], apply("tester", false, 2)),
        case(
            "apply without a field manager",
            vec![],
            patch(&path, APPLY, memcached("a", json!({ "size": 2 }))),
        ),
        case(
            "apply that conflicts with another manager",
            vec![apply("first", false, 2)],
            apply("second", false, 3),
        ),
        case(
            "apply that forces a conflict",
            vec![apply("first", false, 2)],
            apply("second", true, 3),
        ),
        case(
            "apply of the same fields by their manager",
            vec![apply("first", false, 2)],
            apply("first", false, 3),
        ),
        case(
            "apply with another name in the body",
            vec![],
            patch(
                &format!("{path}?fieldManager=tester"),
                APPLY,
                memcached("b", json!({ "size": 2 })),
            ),
        ),
        case(
            "apply without apiVersion",
            vec![],
            patch(
                &format!("{path}?fieldManager=tester"),
                APPLY,
                json!({ "kind": "Memcached", "metadata": { "name": "a" } }),
            ),
        ),
        case(
            "apply that breaks the schema",
            vec![],
            apply("tester", false, -3),
        ),
        case(
            "apply of a status",
            vec![apply("tester", false, 2)],
            patch(
                &format!("{path}/status?fieldManager=tester&force=true"),
                APPLY,
                json!({
                    "apiVersion": "cache.example.com/v1alpha1", "kind": "Memcached",
                    "metadata": { "name": "a" },
                    "status": { "conditions": [{ "type": "Available", "status": "False", "reason": "Waiting", "message": "", "lastTransitionTime": "2026-01-02T03:04:05Z" }] },
                }),
            ),
        ),
    ]
}

fn query_parameters() -> Vec<Case> {
    let a = || memcached("a", json!({ "size": 2 }));
    let duplicate = r#"{"apiVersion":"cache.example.com/v1alpha1","kind":"Memcached","metadata":{"name":"a"},"spec":{"size":1,"size":2}}"#;
    let unknown = r#"{"apiVersion":"cache.example.com/v1alpha1","kind":"Memcached","metadata":{"name":"a"},"spec":{"size":1,"colour":"red"}}"#;
    vec![
        case(
            "a dry run create",
            vec![],
            post(&format!("{MEMCACHEDS}?dryRun=All"), a()),
        ),
        case(
            "a dry run leaves nothing",
            vec![post(&format!("{MEMCACHEDS}?dryRun=All"), a())],
            get(&one(MEMCACHEDS, "a")),
        ),
        case(
            "a dryRun value that does not exist",
            vec![],
            post(&format!("{MEMCACHEDS}?dryRun=Yes"), a()),
        ),
        case(
            "a duplicate field under fieldValidation=Strict",
            vec![],
            raw(
                Method::POST,
                &format!("{MEMCACHEDS}?fieldValidation=Strict"),
                JSON,
                duplicate,
            ),
        ),
        case(
            "a duplicate field by default",
            vec![],
            raw(Method::POST, MEMCACHEDS, JSON, duplicate),
        ),
        case(
            "an unknown field under fieldValidation=Strict",
            vec![],
            raw(
                Method::POST,
                &format!("{MEMCACHEDS}?fieldValidation=Strict"),
                JSON,
                unknown,
            ),
        ),
        case(
            "an unknown field under fieldValidation=Ignore",
            vec![],
            raw(
                Method::POST,
                &format!("{MEMCACHEDS}?fieldValidation=Ignore"),
                JSON,
                unknown,
            ),
        ),
        case(
            "a fieldValidation value that does not exist",
            vec![],
            post(&format!("{MEMCACHEDS}?fieldValidation=Sometimes"), a()),
        ),
        case(
            "a field manager name too long",
            vec![],
            post(
                &format!("{MEMCACHEDS}?fieldManager={}", "m".repeat(200)),
                a(),
            ),
        ),
    ]
}

fn crds() -> Vec<Case> {
    vec![
        case(
            "a CRD with a CEL rule",
            vec![],
            post(
                CRDS,
                crd_with_rules(json!([{ "rule": "self.size <= 5", "message": "at most 5" }])),
            ),
        ),
        case(
            "a CRD whose CEL rule does not compile",
            vec![],
            post(
                CRDS,
                crd_with_rules(json!([{ "rule": "self.size <= ", "message": "broken" }])),
            ),
        ),
        case(
            "a CRD whose CEL rule names a field that does not exist",
            vec![],
            post(
                CRDS,
                crd_with_rules(json!([{ "rule": "self.colour == 'red'" }])),
            ),
        ),
        case(
            "a CRD whose CEL rule costs too much",
            vec![],
            post(
                CRDS,
                crd_with_rules(
                    json!([{ "rule": "self.names.all(a, self.names.all(b, self.names.all(c, a + b + c != '')))" }]),
                ),
            ),
        ),
        case(
            "a CRD whose name is not plural.group",
            vec![],
            post(CRDS, {
                let mut crd = crd_with_rules(json!([]));
                crd["metadata"]["name"] = json!("widget.c{n}.example.com");
                crd
            }),
        ),
        case(
            "a CRD with two storage versions",
            vec![],
            post(CRDS, {
                let mut crd = crd_with_rules(json!([{ "rule": "true" }]));
                let mut v2 = crd["spec"]["versions"][0].clone();
                v2["name"] = json!("v2");
                crd["spec"]["versions"].as_array_mut().unwrap().push(v2);
                crd
            }),
        ),
        case(
            "a CRD without a schema",
            vec![],
            post(CRDS, {
                let mut crd = crd_with_rules(json!([]));
                crd["spec"]["versions"][0]
                    .as_object_mut()
                    .unwrap()
                    .remove("schema");
                crd
            }),
        ),
    ]
}
