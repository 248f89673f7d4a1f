//! The built-in kinds an operator writes, by class: what the API server defaults and writes
//! of them (Go's empty fields, managed fields), how it validates them, and their strategies
//! (which need a `resourceVersion`, which an update creates, which count a generation).

use http::Method;
use serde_json::{Value, json};

use super::Case;
use super::cases::*;

/// A Secret `name` of `type_` with `data` (base64).
fn secret(name: &str, type_: Option<&str>, data: Value) -> Value {
    let mut secret = json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": { "name": name },
        "data": data,
    });
    if let Some(type_) = type_ {
        secret["type"] = json!(type_);
    }
    secret
}

fn pod(name: &str, containers: Value) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": { "name": name, "labels": { "app": name } },
        "spec": { "containers": containers },
    })
}

fn lease(name: &str) -> Value {
    json!({
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": { "name": name },
        "spec": { "holderIdentity": "me", "leaseDurationSeconds": 15 },
    })
}

fn with(mut object: Value, pointer: &str, value: Value) -> Value {
    let (parent, key) = pointer.rsplit_once('/').expect("a pointer");
    object
        .pointer_mut(parent)
        .and_then(Value::as_object_mut)
        .expect("the parent exists")
        .insert(key.to_owned(), value);
    object
}

pub(super) fn cases() -> Vec<Case> {
    [config_maps(), secrets(), deployments(), pods(), others()]
        .into_iter()
        .flatten()
        .collect()
}

fn config_maps() -> Vec<Case> {
    let path = one(CONFIGMAPS, "c");
    let created = || vec![post(CONFIGMAPS, config_map("c", json!({ "a": "1" })))];
    vec![
        case(
            "create a ConfigMap with data and binary data",
            vec![],
            post(CONFIGMAPS, {
                let mut map = config_map("c", json!({ "a": "1" }));
                map["binaryData"] = json!({ "b": "AAE=" });
                map
            }),
        ),
        case(
            "create a ConfigMap whose key is both data and binary data",
            vec![],
            post(CONFIGMAPS, {
                let mut map = config_map("c", json!({ "a": "1" }));
                map["binaryData"] = json!({ "a": "AAE=" });
                map
            }),
        ),
        case(
            "create a ConfigMap with the key ..",
            vec![],
            post(CONFIGMAPS, config_map("c", json!({ "..": "x" }))),
        ),
        case(
            "create a ConfigMap with metadata.generation",
            vec![],
            post(
                CONFIGMAPS,
                with(config_map("c", json!({})), "/metadata/generation", json!(7)),
            ),
        ),
        case(
            "replace an immutable ConfigMap's data",
            vec![post(
                CONFIGMAPS,
                with(
                    config_map("c", json!({ "a": "1" })),
                    "/immutable",
                    json!(true),
                ),
            )],
            put(
                &path,
                with(
                    config_map("c", json!({ "a": "2" })),
                    "/immutable",
                    json!(true),
                ),
            ),
        ),
        case(
            "merge patch of a ConfigMap's data",
            created(),
            patch(&path, MERGE, json!({ "data": { "b": "2", "a": null } })),
        ),
        case(
            "strategic-merge patch of a ConfigMap",
            created(),
            patch(&path, STRATEGIC, json!({ "data": { "b": "2" } })),
        ),
        case(
            "replace a ConfigMap with a stale resourceVersion",
            created(),
            put(
                &path,
                with(
                    config_map("c", json!({})),
                    "/metadata/resourceVersion",
                    json!("1"),
                ),
            ),
        ),
        case(
            "status of a ConfigMap",
            created(),
            get(&format!("{path}/status")),
        ),
    ]
}

fn secrets() -> Vec<Case> {
    vec![
        case(
            "create a Secret without a type",
            vec![],
            post(
                SECRETS,
                secret("s", None, json!({ "password": "c2VjcmV0" })),
            ),
        ),
        case(
            "create a Secret with stringData",
            vec![],
            post(SECRETS, {
                let mut secret = secret("s", None, json!({ "a": "YQ==" }));
                secret["stringData"] = json!({ "b": "bee" });
                secret
            }),
        ),
        case(
            "create a TLS Secret without its keys",
            vec![],
            post(SECRETS, secret("s", Some("kubernetes.io/tls"), json!({}))),
        ),
        case(
            "create a Secret whose data is not base64",
            vec![],
            post(SECRETS, secret("s", None, json!({ "a": "not base64!" }))),
        ),
        case(
            "change a Secret's type",
            vec![post(SECRETS, secret("s", None, json!({})))],
            patch(
                &one(SECRETS, "s"),
                MERGE,
                json!({ "type": "kubernetes.io/basic-auth", "data": { "username": "dQ==" } }),
            ),
        ),
    ]
}

fn deployments() -> Vec<Case> {
    let path = one(DEPLOYMENTS, "web");
    let created = || vec![post(DEPLOYMENTS, deployment("web", 1))];
    vec![
        case(
            "create a Deployment without a selector",
            vec![],
            post(DEPLOYMENTS, {
                let mut d = deployment("web", 1);
                d["spec"].as_object_mut().unwrap().remove("selector");
                d
            }),
        ),
        case(
            "create a Deployment without containers",
            vec![],
            post(
                DEPLOYMENTS,
                with(
                    deployment("web", 1),
                    "/spec/template/spec/containers",
                    json!([]),
                ),
            ),
        ),
        case(
            "create a Deployment with negative replicas",
            vec![],
            post(DEPLOYMENTS, deployment("web", -1)),
        ),
        case(
            "create a Deployment whose container has no image",
            vec![],
            post(
                DEPLOYMENTS,
                with(
                    deployment("web", 1),
                    "/spec/template/spec/containers",
                    json!([{ "name": "app" }]),
                ),
            ),
        ),
        case(
            "create a Deployment whose containers share a name",
            vec![],
            post(
                DEPLOYMENTS,
                with(
                    deployment("web", 1),
                    "/spec/template/spec/containers",
                    json!([{ "name": "app", "image": "a:1" }, { "name": "app", "image": "b:1" }]),
                ),
            ),
        ),
        case(
            "create a Deployment whose template restarts never",
            vec![],
            post(
                DEPLOYMENTS,
                with(
                    deployment("web", 1),
                    "/spec/template/spec/restartPolicy",
                    json!("Never"),
                ),
            ),
        ),
        case(
            "create a Deployment with ports, probes and the latest image",
            vec![],
            post(
                DEPLOYMENTS,
                with(
                    deployment("web", 1),
                    "/spec/template/spec/containers",
                    json!([{
                        "name": "app", "image": "nginx",
                        "ports": [{ "containerPort": 80, "name": "http" }],
                        "readinessProbe": { "httpGet": { "port": 80 } },
                        "env": [{ "name": "A", "value": "1" }],
                    }]),
                ),
            ),
        ),
        case(
            "create a Deployment with the Recreate strategy",
            vec![],
            post(
                DEPLOYMENTS,
                with(
                    deployment("web", 1),
                    "/spec/strategy",
                    json!({ "type": "Recreate" }),
                ),
            ),
        ),
        case(
            "create a Deployment with an unknown field under fieldValidation=Strict",
            vec![],
            post(
                &format!("{DEPLOYMENTS}?fieldValidation=Strict"),
                with(deployment("web", 1), "/spec/colour", json!("red")),
            ),
        ),
        case(
            "replace a Deployment without resourceVersion",
            created(),
            put(&path, deployment("web", 3)),
        ),
        case(
            "replace a Deployment's selector",
            created(),
            put(&path, {
                let mut d = deployment("web", 1);
                d["spec"]["selector"]["matchLabels"]["tier"] = json!("x");
                d["spec"]["template"]["metadata"]["labels"]["tier"] = json!("x");
                d
            }),
        ),
        case(
            "strategic-merge patch of a Deployment's containers by name",
            created(),
            patch(
                &path,
                STRATEGIC,
                json!({ "spec": { "template": { "spec": { "containers": [
                    { "name": "app", "image": "nginx:1.28" },
                    { "name": "side", "image": "busybox:1" },
                ] } } } }),
            ),
        ),
        case(
            "merge patch of a Deployment's containers",
            created(),
            patch(
                &path,
                MERGE,
                json!({ "spec": { "template": { "spec": { "containers": [{ "name": "side", "image": "busybox:1" }] } } } }),
            ),
        ),
        case(
            "annotation patch of a Deployment",
            created(),
            patch(
                &path,
                MERGE,
                json!({ "metadata": { "annotations": { "a": "b" } } }),
            ),
        ),
        case(
            "status patch of a Deployment",
            created(),
            patch(
                &format!("{path}/status"),
                MERGE,
                json!({ "status": { "replicas": 1 }, "metadata": { "labels": { "x": "y" } } }),
            ),
        ),
        case(
            "apply of a Deployment",
            vec![],
            patch(
                &format!("{path}?fieldManager=tester"),
                APPLY,
                deployment("web", 2),
            ),
        ),
        case(
            "apply of a Deployment's replicas after an update",
            created(),
            patch(
                &format!("{path}?fieldManager=tester"),
                APPLY,
                json!({ "apiVersion": "apps/v1", "kind": "Deployment", "metadata": { "name": "web" }, "spec": { "replicas": 4 } }),
            ),
        ),
    ]
}

fn pods() -> Vec<Case> {
    vec![
        case(
            "create a Pod",
            vec![],
            post(
                PODS,
                pod("p", json!([{ "name": "app", "image": "nginx:1.27" }])),
            ),
        ),
        case(
            "create a Pod with limits",
            vec![],
            post(
                PODS,
                pod(
                    "p",
                    json!([{ "name": "app", "image": "nginx:1.27", "resources": { "limits": { "cpu": "500m", "memory": "64Mi" } } }]),
                ),
            ),
        ),
        case(
            "create a Pod whose container name is no DNS label",
            vec![],
            post(
                PODS,
                pod("p", json!([{ "name": "App_1", "image": "nginx:1.27" }])),
            ),
        ),
        case(
            "create a Pod with a port out of range",
            vec![],
            post(
                PODS,
                pod(
                    "p",
                    json!([{ "name": "app", "image": "nginx:1.27", "ports": [{ "containerPort": 70000 }] }]),
                ),
            ),
        ),
        case(
            "list pods by phase",
            vec![post(
                PODS,
                pod("p", json!([{ "name": "app", "image": "nginx:1.27" }])),
            )],
            get(&format!("{PODS}?fieldSelector=status.phase%3DPending")),
        ),
    ]
}

fn others() -> Vec<Case> {
    let namespace = |name: &str| json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": name } });
    vec![
        case(
            "create a Namespace",
            vec![],
            post(NAMESPACES, namespace("created-{n}")),
        ),
        case(
            "create a Namespace whose name has dots",
            vec![],
            post(NAMESPACES, namespace("a.b{n}")),
        ),
        case(
            "delete a Namespace",
            vec![post(NAMESPACES, namespace("deleted-{n}"))],
            delete(&one(NAMESPACES, "deleted-{n}"), None),
        ),
        case("create a Lease", vec![], post(LEASES, lease("l"))),
        case(
            "replace a Lease without resourceVersion",
            vec![post(LEASES, lease("l"))],
            put(&one(LEASES, "l"), lease("l")),
        ),
        case(
            "replace a Lease that does not exist",
            vec![],
            put(&one(LEASES, "l"), lease("l")),
        ),
        case(
            "create a ServiceAccount",
            vec![],
            post(
                SERVICE_ACCOUNTS,
                json!({ "apiVersion": "v1", "kind": "ServiceAccount", "metadata": { "name": "sa" } }),
            ),
        ),
        case(
            "create a Service",
            vec![],
            post(
                SERVICES,
                json!({ "apiVersion": "v1", "kind": "Service", "metadata": { "name": "web" },
                        "spec": { "selector": { "app": "web" }, "ports": [{ "port": 80, "name": "http" }] } }),
            ),
        ),
        case(
            "create a headless Service",
            vec![],
            post(
                SERVICES,
                json!({ "apiVersion": "v1", "kind": "Service", "metadata": { "name": "web" },
                        "spec": { "clusterIP": "None", "ports": [{ "port": 80, "targetPort": "http" }] } }),
            ),
        ),
        case(
            "create a Service whose name starts with a digit",
            vec![],
            post(
                SERVICES,
                json!({ "apiVersion": "v1", "kind": "Service", "metadata": { "name": "1web" }, "spec": { "ports": [{ "port": 80 }] } }),
            ),
        ),
        case(
            "create a Service without ports",
            vec![],
            post(
                SERVICES,
                json!({ "apiVersion": "v1", "kind": "Service", "metadata": { "name": "web" }, "spec": {} }),
            ),
        ),
        case(
            "create a mutating webhook configuration",
            vec![],
            post(
                MUTATING_WEBHOOKS,
                json!({
                    "apiVersion": "admissionregistration.k8s.io/v1",
                    "kind": "MutatingWebhookConfiguration",
                    "metadata": { "name": "m{n}" },
                    "webhooks": [{
                        "name": "m.example.com", "admissionReviewVersions": ["v1"], "sideEffects": "None",
                        "clientConfig": { "service": { "name": "svc", "namespace": "{ns}" } },
                        "rules": [{ "operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"] }],
                    }],
                }),
            ),
        ),
        case(
            "create a ConfigMap whose body is another kind",
            vec![],
            post(
                CONFIGMAPS,
                json!({ "apiVersion": "v1", "kind": "Secret", "metadata": { "name": "c" } }),
            ),
        ),
        case(
            "create a ConfigMap whose body is a list",
            vec![],
            raw(Method::POST, CONFIGMAPS, JSON, "[1, 2]"),
        ),
    ]
}
