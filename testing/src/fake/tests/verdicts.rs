//! The fake's schema and CEL checks against a table of objects with the verdicts of a real API
//! server (Kubernetes 1.33), over the CRDs of the Memcached operator (the deploy-image
//! scaffold), the WebServer and At examples and cert-manager's Certificate.
//!
//! How the expected verdicts and messages were derived: from the rules of the apiextensions
//! apiserver, as documented in "Extend the Kubernetes API with CustomResourceDefinitions"
//! (validation, defaulting, pruning, `x-kubernetes-validations`, validation ratcheting) and as
//! its code words them: kube-openapi's validation messages (`<path> in body must be of type
//! <type>: "<actual type>"`, `should be greater than or equal to`, `should match '<pattern>'`,
//! `should be at least <n> chars long`), their mapping to field errors (`Required value`,
//! `Unsupported value: …: supported values: …`, `Too long`, `Too many`, `Duplicate value`), the
//! CEL failure `<path>: Invalid value: "<schema type>": <message>`, the note that CEL rules are
//! skipped after a type, enum, required, size or length error, and `NewInvalid`'s
//! `<Kind>.<group> "<name>" is invalid: <errors>` with one cause per field error.
//!
//! The CRD files live outside the runtime crate (examples/, tests/data/ of operator-rs's
//! repository), so this test runs in that repository only.

use std::path::Path;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{Value, json};

use crate::fake::FakeApiServer;
use crate::from_yaml;

/// The CRDs of the table.
#[derive(Clone, Copy, Debug)]
enum Crd {
    Memcached,
    /// Memcached with two CEL rules added to `spec`: `self.size <= 5` ("size must be at most
    /// 5"), and the transition rule `self.size >= oldSelf.size` with a `messageExpression`.
    MemcachedCel,
    WebServer,
    At,
    Certificate,
}

impl Crd {
    fn load(self) -> CustomResourceDefinition {
        let file = match self {
            Crd::Memcached | Crd::MemcachedCel => {
                "tests/data/memcached/cache.example.com_memcacheds.yaml"
            }
            Crd::WebServer => {
                "examples/webserver-operator/config/crd/bases/web.example.com_webservers.yaml"
            }
            Crd::At => "examples/at-operator/config/crd/bases/at.example.com_ats.yaml",
            Crd::Certificate => "tests/data/cert-manager/cert-manager.io_certificates.yaml",
        };
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(file);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|error| {
            panic!(
                "{} (this test runs in operator-rs's repository): {error}",
                path.display()
            )
        });
        let mut crd: CustomResourceDefinition = from_yaml(&text).unwrap();
        if let Crd::MemcachedCel = self {
            let mut schema = serde_json::to_value(&crd.spec.versions[0].schema).unwrap();
            schema["openAPIV3Schema"]["properties"]["spec"]["x-kubernetes-validations"] = json!([
                { "rule": "self.size <= 5", "message": "size must be at most 5" },
                {
                    "rule": "self.size >= oldSelf.size",
                    "messageExpression": "'size may not shrink below ' + string(oldSelf.size)",
                },
            ]);
            crd.spec.versions[0].schema = serde_json::from_value(schema).unwrap();
        }
        crd
    }
}

/// What is written.
enum Write {
    /// A create of an object with this `spec`.
    Create(Value),
    /// A create with the first `spec`, then an update (PUT) to the second.
    Update(Value, Value),
    /// A create with `spec`, then a write of `status` to the status subresource.
    Status(Value, Value),
}

/// The API server's verdict: accepted, or `422 Invalid` with these field errors, each as
/// `<field>: <message>`, in any order.
enum Verdict {
    Valid,
    Invalid(&'static [&'static str]),
}

use Crd::*;
use Verdict::*;
use Write::*;

const NOT_CHECKED: &str = r#"<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"#;

/// A valid condition of metav1.Condition's schema.
fn condition(overrides: Value) -> Value {
    let mut condition = json!({
        "type": "Available",
        "status": "True",
        "reason": "Reconciled",
        "message": "all good",
        "lastTransitionTime": "2026-01-02T03:04:05Z",
        "observedGeneration": 1,
    });
    for (key, value) in overrides.as_object().unwrap() {
        match value {
            Value::Null => condition.as_object_mut().unwrap().remove(key),
            value => condition
                .as_object_mut()
                .unwrap()
                .insert(key.clone(), value.clone()),
        };
    }
    condition
}

fn table() -> Vec<(Crd, &'static str, Write, Verdict)> {
    let web = json!({ "image": "nginx:1.27.3", "replicas": 3 });
    let at = json!({ "command": "echo hi", "schedule": "2026-11-24T09:30:00Z" });
    let cert =
        json!({ "secretName": "tls", "issuerRef": { "name": "ca" }, "dnsNames": ["example.com"] });
    let with = |base: &Value, extra: Value| {
        let mut object = base.clone();
        for (key, value) in extra.as_object().unwrap() {
            match value {
                Value::Null => object.as_object_mut().unwrap().remove(key),
                value => object
                    .as_object_mut()
                    .unwrap()
                    .insert(key.clone(), value.clone()),
            };
        }
        object
    };
    let conditions = |list: Vec<Value>| json!({ "conditions": list });
    vec![
        // Memcached, as the deploy-image scaffold writes it.
        (
            Memcached,
            "a valid spec",
            Create(json!({ "size": 3, "containerPort": 11211 })),
            Valid,
        ),
        (
            Memcached,
            "an empty spec takes the defaults",
            Create(json!({})),
            Valid,
        ),
        (
            Memcached,
            "size 0 is the minimum",
            Create(json!({ "size": 0 })),
            Valid,
        ),
        (
            Memcached,
            "a string for an integer",
            Create(json!({ "size": "two" })),
            Invalid(&[
                r#"spec.size: Invalid value: "string": spec.size in body must be of type integer: "string""#,
            ]),
        ),
        (
            Memcached,
            "a negative size",
            Create(json!({ "size": -1 })),
            Invalid(&[
                "spec.size: Invalid value: -1: spec.size in body should be greater than or equal to 0",
            ]),
        ),
        (
            Memcached,
            "a port above the maximum",
            Create(json!({ "containerPort": 70000 })),
            Invalid(&[
                "spec.containerPort: Invalid value: 70000: spec.containerPort in body should be less than or equal to 65535",
            ]),
        ),
        (
            Memcached,
            "port 0",
            Create(json!({ "containerPort": 0 })),
            Invalid(&[
                "spec.containerPort: Invalid value: 0: spec.containerPort in body should be greater than or equal to 1",
            ]),
        ),
        (
            Memcached,
            "a whole float is an integer",
            Create(json!({ "size": 2.0 })),
            Valid,
        ),
        (
            Memcached,
            "a fraction is not",
            Create(json!({ "size": 2.5 })),
            Invalid(&[
                r#"spec.size: Invalid value: "number": spec.size in body must be of type integer: "number""#,
            ]),
        ),
        (
            Memcached,
            "an unknown field is dropped",
            Create(json!({ "size": 1, "colour": "red" })),
            Valid,
        ),
        (
            Memcached,
            "a valid status",
            Status(json!({}), conditions(vec![condition(json!({}))])),
            Valid,
        ),
        (
            Memcached,
            "a condition status outside its enum",
            Status(
                json!({}),
                conditions(vec![condition(json!({ "status": "Maybe" }))]),
            ),
            Invalid(&[
                r#"status.conditions[0].status: Unsupported value: "Maybe": supported values: "True", "False", "Unknown""#,
            ]),
        ),
        (
            Memcached,
            "a condition without a reason",
            Status(
                json!({}),
                conditions(vec![condition(json!({ "reason": null }))]),
            ),
            Invalid(&["status.conditions[0].reason: Required value"]),
        ),
        (
            Memcached,
            "a reason that is not CamelCase",
            Status(
                json!({}),
                conditions(vec![condition(json!({ "reason": "not valid!" }))]),
            ),
            Invalid(&[
                r#"status.conditions[0].reason: Invalid value: "not valid!": status.conditions[0].reason in body should match '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$'"#,
            ]),
        ),
        (
            Memcached,
            "a transition time that is no date-time",
            Status(
                json!({}),
                conditions(vec![condition(
                    json!({ "lastTransitionTime": "yesterday" }),
                )]),
            ),
            Invalid(&[
                r#"status.conditions[0].lastTransitionTime: Invalid value: "yesterday": status.conditions[0].lastTransitionTime in body must be of type date-time: "yesterday""#,
            ]),
        ),
        (
            Memcached,
            "two conditions of one type (a map list keyed by type)",
            Status(
                json!({}),
                conditions(vec![
                    condition(json!({})),
                    condition(json!({ "status": "False" })),
                ]),
            ),
            Invalid(&[
                r#"status.conditions[1]: Duplicate value: map[string]interface {}{"type":"Available"}"#,
            ]),
        ),
        (
            Memcached,
            "a negative observedGeneration",
            Status(
                json!({}),
                conditions(vec![condition(json!({ "observedGeneration": -1 }))]),
            ),
            Invalid(&[
                "status.conditions[0].observedGeneration: Invalid value: -1: status.conditions[0].observedGeneration in body should be greater than or equal to 0",
            ]),
        ),
        // Memcached with CEL rules.
        (
            MemcachedCel,
            "within the rule",
            Create(json!({ "size": 5 })),
            Valid,
        ),
        (
            MemcachedCel,
            "a rule violated",
            Create(json!({ "size": 6 })),
            Invalid(&[r#"spec: Invalid value: "object": size must be at most 5"#]),
        ),
        (
            MemcachedCel,
            "a transition rule kept",
            Update(json!({ "size": 3 }), json!({ "size": 4 })),
            Valid,
        ),
        (
            MemcachedCel,
            "a transition rule violated, with its messageExpression",
            Update(json!({ "size": 3 }), json!({ "size": 2 })),
            Invalid(&[r#"spec: Invalid value: "object": size may not shrink below 3"#]),
        ),
        (
            MemcachedCel,
            "a schema error stops the rules",
            Create(json!({ "size": "two" })),
            Invalid(&[
                r#"spec.size: Invalid value: "string": spec.size in body must be of type integer: "string""#,
                NOT_CHECKED,
            ]),
        ),
        (
            MemcachedCel,
            "a schema error that does not stop them",
            Create(json!({ "size": 6, "containerPort": 0 })),
            Invalid(&[
                "spec.containerPort: Invalid value: 0: spec.containerPort in body should be greater than or equal to 1",
                r#"spec: Invalid value: "object": size must be at most 5"#,
            ]),
        ),
        // WebServer (examples/webserver-operator).
        (WebServer, "a valid spec", Create(web.clone()), Valid),
        (
            WebServer,
            "zero replicas",
            Create(with(&web, json!({ "replicas": 0 }))),
            Valid,
        ),
        (
            WebServer,
            "a string for an integer",
            Create(with(&web, json!({ "replicas": "three" }))),
            Invalid(&[
                r#"spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string""#,
            ]),
        ),
        (
            WebServer,
            "negative replicas",
            Create(with(&web, json!({ "replicas": -1 }))),
            Invalid(&[
                "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0",
            ]),
        ),
        (
            WebServer,
            "an empty image",
            Create(with(&web, json!({ "image": "" }))),
            Invalid(&[
                r#"spec.image: Invalid value: "": spec.image in body should be at least 1 chars long"#,
            ]),
        ),
        (
            WebServer,
            "no image",
            Create(with(&web, json!({ "image": null }))),
            Invalid(&["spec.image: Required value"]),
        ),
        (
            WebServer,
            "neither field",
            Create(json!({})),
            Invalid(&[
                "spec.image: Required value",
                "spec.replicas: Required value",
            ]),
        ),
        (
            WebServer,
            "a status condition of an unknown status",
            Status(
                web.clone(),
                conditions(vec![condition(json!({ "status": "yes" }))]),
            ),
            Invalid(&[
                r#"status.conditions[0].status: Unsupported value: "yes": supported values: "True", "False", "Unknown""#,
            ]),
        ),
        // At (examples/at-operator).
        (At, "a valid spec", Create(at.clone()), Valid),
        (
            At,
            "a schedule with an offset and fractions",
            Create(with(
                &at,
                json!({ "schedule": "2026-11-24T09:30:00.5+01:00" }),
            )),
            Valid,
        ),
        (
            At,
            "a schedule that is no date-time",
            Create(with(&at, json!({ "schedule": "tomorrow" }))),
            Invalid(&[
                r#"spec.schedule: Invalid value: "tomorrow": spec.schedule in body must be of type date-time: "tomorrow""#,
            ]),
        ),
        (
            At,
            "a number for a string",
            Create(with(&at, json!({ "schedule": 20261124 }))),
            Invalid(&[
                r#"spec.schedule: Invalid value: "integer": spec.schedule in body must be of type string: "integer""#,
            ]),
        ),
        (
            At,
            "an empty command",
            Create(with(&at, json!({ "command": "" }))),
            Invalid(&[
                r#"spec.command: Invalid value: "": spec.command in body should be at least 1 chars long"#,
            ]),
        ),
        (
            At,
            "a phase outside its enum",
            Status(at.clone(), json!({ "phase": "SLEEPING" })),
            Invalid(&[
                r#"status.phase: Unsupported value: "SLEEPING": supported values: "PENDING", "RUNNING", "DONE", "FAILED", "null""#,
            ]),
        ),
        (
            At,
            "a null phase (nullable)",
            Status(at.clone(), json!({ "phase": null })),
            Valid,
        ),
        (
            At,
            "a valid phase",
            Status(at.clone(), json!({ "phase": "DONE" })),
            Valid,
        ),
        // cert-manager's Certificate (tests/data/cert-manager).
        (Certificate, "a valid spec", Create(cert.clone()), Valid),
        (
            Certificate,
            "no secretName",
            Create(with(&cert, json!({ "secretName": null }))),
            Invalid(&["spec.secretName: Required value"]),
        ),
        (
            Certificate,
            "an issuerRef without a name",
            Create(with(&cert, json!({ "issuerRef": { "kind": "Issuer" } }))),
            Invalid(&["spec.issuerRef.name: Required value"]),
        ),
        (
            Certificate,
            "an algorithm outside the enum",
            Create(with(&cert, json!({ "privateKey": { "algorithm": "DSA" } }))),
            Invalid(&[
                r#"spec.privateKey.algorithm: Unsupported value: "DSA": supported values: "RSA", "ECDSA", "Ed25519""#,
            ]),
        ),
        (
            Certificate,
            "a string for a list",
            Create(with(&cert, json!({ "dnsNames": "example.com" }))),
            Invalid(&[
                r#"spec.dnsNames: Invalid value: "string": spec.dnsNames in body must be of type array: "string""#,
            ]),
        ),
        (
            Certificate,
            "a number in a list of strings",
            Create(with(
                &cert,
                json!({ "subject": { "organizations": ["Acme", 1] } }),
            )),
            Invalid(&[
                r#"spec.subject.organizations[1]: Invalid value: "integer": spec.subject.organizations[1] in body must be of type string: "integer""#,
            ]),
        ),
        (
            Certificate,
            "a string for a boolean",
            Create(with(&cert, json!({ "isCA": "yes" }))),
            Invalid(&[
                r#"spec.isCA: Invalid value: "string": spec.isCA in body must be of type boolean: "string""#,
            ]),
        ),
        (
            Certificate,
            "a number for a map's string value",
            Create(with(
                &cert,
                json!({ "secretTemplate": { "labels": { "tier": 1 } } }),
            )),
            Invalid(&[
                r#"spec.secretTemplate.labels.tier: Invalid value: "integer": spec.secretTemplate.labels.tier in body must be of type string: "integer""#,
            ]),
        ),
        (
            Certificate,
            "a keystore without create",
            Create(with(
                &cert,
                json!({ "keystores": { "pkcs12": { "profile": "Modern2023" } } }),
            )),
            Invalid(&["spec.keystores.pkcs12.create: Required value"]),
        ),
        (
            Certificate,
            "an output format outside the enum",
            Create(with(
                &cert,
                json!({ "additionalOutputFormats": [{ "type": "PEM" }] }),
            )),
            Invalid(&[
                r#"spec.additionalOutputFormats[0].type: Unsupported value: "PEM": supported values: "DER", "CombinedPEM""#,
            ]),
        ),
        (
            Certificate,
            "a renewal window without its duration",
            Create(with(
                &cert,
                json!({ "renewal": { "windows": [{ "cron": "0 0 * * *" }] } }),
            )),
            Invalid(&["spec.renewal.windows[0].windowDuration: Required value"]),
        ),
        (
            Certificate,
            "a fraction for an int32",
            Create(with(&cert, json!({ "revisionHistoryLimit": 1.5 }))),
            Invalid(&[
                r#"spec.revisionHistoryLimit: Invalid value: "number": spec.revisionHistoryLimit in body must be of type integer: "number""#,
            ]),
        ),
        (
            Certificate,
            "unknown fields are dropped",
            Create(with(&cert, json!({ "colour": "red" }))),
            Valid,
        ),
    ]
}

/// Writes `write` to a fake API server that serves `crd`, and returns its refusal, if any, as
/// the list of field errors.
async fn verdict(
    crd: &CustomResourceDefinition,
    write: Write,
) -> Result<DynamicObject, Vec<String>> {
    let fake = FakeApiServer::new();
    fake.register_crd(crd);
    let version = &crd.spec.versions[0].name;
    let gvk = GroupVersionKind::gvk(&crd.spec.group, version, &crd.spec.names.kind);
    let resource = ApiResource::from_gvk_with_plural(&gvk, &crd.spec.names.plural);
    let api = Api::<DynamicObject>::namespaced_with(fake.client(), "default", &resource);
    let object = |spec: Value| {
        let mut object = DynamicObject::new("sample", &resource);
        object.data = json!({ "spec": spec });
        object
    };
    let causes = |result: Result<DynamicObject, kube::Error>| match result {
        Ok(object) => Ok(object),
        Err(kube::Error::Api(status)) => {
            assert_eq!(
                (status.code, status.reason.as_str()),
                (422, "Invalid"),
                "{status:?}"
            );
            let causes = status
                .details
                .map(|details| details.causes)
                .unwrap_or_default();
            Err(causes
                .iter()
                .map(|c| format!("{}: {}", c.field, c.message))
                .collect())
        }
        Err(other) => panic!("{other}"),
    };
    let post = PostParams::default();
    match write {
        Create(spec) => causes(api.create(&post, &object(spec)).await),
        Update(old, new) => {
            let created = api
                .create(&post, &object(old))
                .await
                .expect("the old object is valid");
            let mut updated = object(new);
            updated.metadata.resource_version = created.metadata.resource_version;
            causes(api.replace("sample", &post, &updated).await)
        }
        Status(spec, status) => {
            api.create(&post, &object(spec))
                .await
                .expect("the spec is valid");
            let patch = Patch::Merge(json!({ "status": status }));
            causes(
                api.patch_status("sample", &PatchParams::default(), &patch)
                    .await,
            )
        }
    }
}

#[tokio::test]
async fn the_fake_agrees_with_the_api_server_on_the_table() {
    let table = table();
    assert!(table.len() >= 40, "{} cases", table.len());
    let mut disagreements = Vec::new();
    for (crd, case, write, expected) in table {
        let got = verdict(&crd.load(), write).await;
        let agrees = match (&expected, &got) {
            (Valid, Ok(_)) => true,
            (Invalid(expected), Err(got)) => {
                let mut expected: Vec<String> = expected.iter().map(|e| (*e).to_owned()).collect();
                let mut got = got.clone();
                expected.sort();
                got.sort();
                expected == got
            }
            _ => false,
        };
        if !agrees {
            let got = got.map(|_| "accepted");
            disagreements.push(format!("{crd:?}: {case}: got {got:?}"));
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}

/// What the table's verdicts do not show: defaults set and unknown fields dropped in the
/// stored object, and ratcheting (a rule added later does not lock objects stored before).
#[tokio::test]
async fn defaults_pruning_and_ratcheting() {
    let crd = Memcached.load();
    let stored = verdict(&crd, Create(json!({ "colour": "red" })))
        .await
        .unwrap();
    assert_eq!(
        stored.data["spec"],
        json!({ "size": 1, "containerPort": 11211 })
    );

    let fake = FakeApiServer::new();
    fake.register_crd(&crd);
    let gvk = GroupVersionKind::gvk("cache.example.com", "v1alpha1", "Memcached");
    let resource = ApiResource::from_gvk_with_plural(&gvk, "memcacheds");
    let api = Api::<DynamicObject>::namespaced_with(fake.client(), "default", &resource);
    let mut big = DynamicObject::new("big", &resource);
    big.data = json!({ "spec": { "size": 9 } });
    api.create(&PostParams::default(), &big).await.unwrap();
    // The CRD gains the rule `size <= 5`: the object stays, and updates that leave the size
    // alone are accepted; a new size must follow the rule.
    fake.register_crd(&MemcachedCel.load());
    let params = PatchParams::default();
    let relabel = Patch::Merge(json!({ "metadata": { "labels": { "a": "b" } } }));
    api.patch("big", &params, &relabel).await.unwrap();
    let resize = Patch::Merge(json!({ "spec": { "size": 8 } }));
    let refused = api.patch("big", &params, &resize).await.unwrap_err();
    assert!(
        refused.to_string().contains("size must be at most 5"),
        "{refused}"
    );
}
