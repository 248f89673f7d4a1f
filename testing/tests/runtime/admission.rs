//! Admission webhooks (`webhook::admission`): what they answer to the API server's reviews.

use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::ObjectMeta;
use operator_rs_runtime::webhook::admission::*;
use operator_rs_runtime::webhook::{AdmissionRequest, Operation, Webhook};
use operator_rs_testing::webhook::{UID, admit, patch, patched, review};
use serde_json::{Value, json};

const REGISTRATION: Registration = Registration {
    name: "mconfigmap-v1.kb.io",
    path: "/mutate--v1-configmap",
    operations: &[Operation::Create, Operation::Update],
    failure_policy: FailurePolicy::Fail,
};

/// Adds a `defaulted` label; refuses ConfigMaps named `forbidden`; panics on `boom`.
struct LabelDefaulter;

impl Defaulter<ConfigMap> for LabelDefaulter {
    fn apply_defaults(
        &self,
        config_map: &mut ConfigMap,
        _request: &AdmissionRequest<ConfigMap>,
    ) -> Result<(), Denial> {
        match config_map.metadata.name.as_deref() {
            Some("forbidden") => Err(Denial::new("forbidden name").with_warning("pick another")),
            Some("boom") => panic!("boom"),
            _ => {
                let labels = config_map.metadata.labels.get_or_insert_default();
                labels.insert("defaulted".to_owned(), "true".to_owned());
                Ok(())
            }
        }
    }
}

/// Refuses ConfigMaps without data; refuses changing `data.key`; warns on deletes.
struct DataValidator;

impl Validator<ConfigMap> for DataValidator {
    fn validate_create(
        &self,
        config_map: &ConfigMap,
        _request: &AdmissionRequest<ConfigMap>,
    ) -> Result<Warnings, Denial> {
        match &config_map.data {
            Some(_) => Ok(vec!["data is public".to_owned()]),
            None => Err(Denial::new("data: required")),
        }
    }

    fn validate_update(
        &self,
        old: &ConfigMap,
        new: &ConfigMap,
        _request: &AdmissionRequest<ConfigMap>,
    ) -> Result<Warnings, Denial> {
        let key = |c: &ConfigMap| c.data.as_ref().and_then(|d| d.get("key").cloned());
        if key(old) == key(new) {
            Ok(Warnings::new())
        } else {
            Err(Denial::new("data.key: immutable"))
        }
    }

    fn validate_delete(
        &self,
        _config_map: &ConfigMap,
        _request: &AdmissionRequest<ConfigMap>,
    ) -> Result<Warnings, Denial> {
        Ok(vec!["deleted".to_owned()])
    }
}

fn config_map(name: &str, data: Option<&str>) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some("default".to_owned()),
            ..ObjectMeta::default()
        },
        data: data.map(|value| [("key".to_owned(), value.to_owned())].into()),
        ..ConfigMap::default()
    }
}

fn defaulter() -> AdmissionWebhook {
    AdmissionWebhook::defaulting(REGISTRATION, LabelDefaulter)
}

fn validator() -> AdmissionWebhook {
    AdmissionWebhook::validating(REGISTRATION, DataValidator)
}

#[test]
fn knows_its_target_from_the_rust_type() {
    let target = defaulter().target().clone();
    assert_eq!(target.group, "");
    assert_eq!(target.version, "v1");
    assert_eq!(target.kind, "ConfigMap");
    assert_eq!(target.plural, "configmaps");
    assert_eq!(defaulter().mode(), Mode::Mutating);
    assert_eq!(validator().mode(), Mode::Validating);
}

#[test]
fn defaulting_patches_only_what_changed() {
    let object = config_map("a", Some("x"));
    let response = defaulter().admit(&review(Operation::Create, Some(&object), None));
    assert!(response.allowed);
    assert_eq!(response.uid, UID);
    assert_eq!(
        patch(&response),
        json!([{"op": "add", "path": "/metadata/labels", "value": {"defaulted": "true"}}])
    );
    let labels = patched(&object, &response)
        .metadata
        .labels
        .unwrap_or_default();
    assert_eq!(labels.get("defaulted").map(String::as_str), Some("true"));
}

#[test]
fn defaulting_without_changes_sends_no_patch() {
    let mut object = config_map("a", None);
    object.metadata.labels = Some([("defaulted".to_owned(), "true".to_owned())].into());
    let response = defaulter().admit(&review(Operation::Update, Some(&object), Some(&object)));
    assert!(response.allowed);
    assert_eq!(response.patch, None);
}

#[test]
fn defaulting_never_removes_fields_the_type_does_not_know() {
    let object = config_map("a", None);
    let mut review = review(Operation::Create, Some(&object), None);
    review["request"]["object"]["futureField"] = json!({"keep": "me"});
    review["request"]["object"]["metadata"]["creationTimestamp"] = Value::Null;
    let response = defaulter().admit(&review);
    assert_eq!(
        patch(&response),
        json!([{"op": "add", "path": "/metadata/labels", "value": {"defaulted": "true"}}])
    );
}

/// Changes nothing, to check that decoding and re-encoding alone produce no patch.
struct NoDefaults;

impl Defaulter<Pod> for NoDefaults {
    fn apply_defaults(&self, _: &mut Pod, _: &AdmissionRequest<Pod>) -> Result<(), Denial> {
        Ok(())
    }
}

/// A Pod as the API server sends it, with the fields that a careless round trip through the
/// Rust type would change: nulls, empty objects, timestamps, quantities and managed fields.
#[test]
fn defaulting_a_real_pod_without_changes_sends_no_patch() {
    let pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "echo",
            "namespace": "default",
            "creationTimestamp": null,
            "labels": {"app": "echo"},
            "managedFields": [{
                "manager": "kubectl",
                "operation": "Update",
                "apiVersion": "v1",
                "time": "2021-03-29T23:02:16Z",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}},
            }],
        },
        "spec": {
            "containers": [{
                "name": "echo",
                "image": "jmalloc/echo-server",
                "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}},
                "terminationMessagePath": "/dev/termination-log",
                "imagePullPolicy": "Always",
            }],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "securityContext": {},
            "tolerations": [{
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            }],
            "priority": 0,
            "enableServiceLinks": true,
        },
        "status": {},
    });
    let mut review = review::<Pod>(Operation::Create, None, None);
    review["request"]["object"] = pod;
    let webhook = AdmissionWebhook::defaulting(REGISTRATION, NoDefaults);
    let response = webhook.admit(&review);
    assert!(response.allowed, "{:?}", response.result);
    assert_eq!(patch(&response), Value::Null);
}

#[test]
fn defaulting_can_deny_with_warnings() {
    let object = config_map("forbidden", None);
    let response = defaulter().admit(&review(Operation::Create, Some(&object), None));
    assert!(!response.allowed);
    assert_eq!(response.uid, UID);
    assert_eq!(response.result.message, "forbidden name");
    assert_eq!(response.result.code, 403);
    assert_eq!(response.warnings, Some(vec!["pick another".to_owned()]));
    assert_eq!(response.patch, None);
}

#[test]
fn defaulting_ignores_deletes() {
    let object = config_map("forbidden", None);
    let response = defaulter().admit(&review(Operation::Delete, None, Some(&object)));
    assert!(response.allowed);
    assert_eq!(response.patch, None);
}

#[test]
fn validation_dispatches_on_the_operation() {
    let validator = validator();
    let with_data = config_map("a", Some("x"));
    let without_data = config_map("a", None);
    let changed = config_map("a", Some("y"));

    let created = validator.admit(&review(Operation::Create, Some(&with_data), None));
    assert!(created.allowed);
    assert_eq!(created.warnings, Some(vec!["data is public".to_owned()]));

    let refused = validator.admit(&review(Operation::Create, Some(&without_data), None));
    assert!(!refused.allowed);
    assert_eq!(refused.result.message, "data: required");

    let update = review(Operation::Update, Some(&changed), Some(&with_data));
    let updated = validator.admit(&update);
    assert!(!updated.allowed);
    assert_eq!(updated.result.message, "data.key: immutable");
    assert_eq!(updated.warnings, None);

    let deleted = validator.admit(&review(Operation::Delete, None, Some(&with_data)));
    assert!(deleted.allowed);
    assert_eq!(deleted.warnings, Some(vec!["deleted".to_owned()]));
}

#[test]
fn validation_refuses_requests_without_their_objects() {
    let review = review::<ConfigMap>(Operation::Update, None, None);
    let response = validator().admit(&review);
    assert!(!response.allowed);
    assert_eq!(response.uid, UID);
    assert_eq!(response.result.code, 400);
}

#[test]
fn malformed_reviews_are_answered_with_their_uid() {
    let mut wrong_type = review(Operation::Create, Some(&config_map("a", None)), None);
    wrong_type["request"]["object"]["data"] = json!(["not", "a", "map"]);
    for (review, uid) in [
        (wrong_type, UID),
        (
            json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}),
            "",
        ),
        (json!("not a review"), ""),
    ] {
        for webhook in [defaulter(), validator()] {
            let response = webhook.admit(&review);
            assert!(!response.allowed, "{review}");
            assert_eq!(response.uid, uid);
            assert_eq!(response.result.code, 400);
            assert!(!response.result.message.is_empty());
        }
    }
}

#[test]
fn a_panicking_handler_is_an_internal_error() {
    let object = config_map("boom", None);
    let response = defaulter().admit(&review(Operation::Create, Some(&object), None));
    assert!(!response.allowed);
    assert_eq!(response.uid, UID);
    assert_eq!(response.result.code, 500);
    assert!(
        response.result.message.contains("boom"),
        "{}",
        response.result.message
    );
}

#[test]
fn responses_are_admission_reviews() {
    let object = config_map("a", None);
    let webhook = Webhook::defaulting(REGISTRATION, LabelDefaulter);
    let response = admit(&webhook, &review(Operation::Create, Some(&object), None));
    let review = serde_json::to_value(response.into_review()).unwrap();
    assert_eq!(review["apiVersion"], "admission.k8s.io/v1");
    assert_eq!(review["kind"], "AdmissionReview");
    assert_eq!(review["response"]["uid"], UID);
    assert_eq!(review["response"]["patchType"], "JSONPatch");
}
