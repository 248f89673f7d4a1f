//! The objects of a registry+v1 bundle besides its CSV and CRDs, as operator-sdk's content
//! check sees them: only the kinds OLM installs from a bundle (operator-registry's supported
//! kinds, by kind name), each with valid object metadata: a name, no namespace (OLM installs
//! them in the operator's), valid labels, annotations, owner references and finalizers.

use serde_json::Value;

use super::Report;
use super::fields::{list, string_map, text};
use super::load::{Bundle, Object};
use crate::k8s_names;
use crate::metadata::REGISTRY_V1;

/// operator-registry's `supportedResources`: what OLM installs from a registry+v1 bundle.
pub const SUPPORTED_KINDS: &[&str] = &[
    "ClusterServiceVersion",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleBinding",
    "Service",
    "ServiceAccount",
    "Role",
    "RoleBinding",
    "PrometheusRule",
    "ServiceMonitor",
    "Secret",
    "ConfigMap",
    "PodDisruptionBudget",
    "PriorityClass",
    "VerticalPodAutoscaler",
    "ConsoleYAMLSample",
    "ConsoleQuickStart",
    "ConsoleCLIDownload",
    "ConsoleLink",
    "ConsolePlugin",
    "NetworkPolicy",
    "PodMonitor",
];

pub fn check(bundle: &Bundle, report: &mut Report) {
    for object in &bundle.objects {
        if matches!(
            object.kind.as_str(),
            "ClusterServiceVersion" | "CustomResourceDefinition"
        ) {
            continue;
        }
        if bundle.media_type == REGISTRY_V1 && !SUPPORTED_KINDS.contains(&object.kind.as_str()) {
            report.error(
                &object.file,
                format!(
                    "{} ({}) is not supported in a registry+v1 bundle: OLM installs only a CSV, CRDs and {}",
                    object.kind,
                    object.api_version,
                    SUPPORTED_KINDS[2..].join(", ")
                ),
            );
            continue;
        }
        check_metadata(object, report);
    }
}

/// apimachinery's `ValidateObjectMetaAccessor`, for an object OLM installs into the operator's
/// namespace (so none of its own).
fn check_metadata(object: &Object, report: &mut Report) {
    let meta = &object.value["metadata"];
    let at = |field: &str| format!("{}: metadata.{field}", object.file);
    if text(meta, &["name"]).is_empty() && text(meta, &["generateName"]).is_empty() {
        report.error(
            at("name"),
            "Required value: name or generateName is required",
        );
    }
    if !text(meta, &["namespace"]).is_empty() {
        report.error(
            at("namespace"),
            "Forbidden: not allowed on this type (OLM installs the bundle's objects in the operator's namespace)",
        );
    }
    if let Some(generation) = meta.get("generation").and_then(Value::as_i64)
        && generation < 0
    {
        report.error(
            at("generation"),
            "Invalid value: must be greater than or equal to 0",
        );
    }
    check_labels_and_annotations(meta, &at, report);
    check_owner_references(meta, &at, report);
    for finalizer in list(meta, &["finalizers"]).iter().filter_map(Value::as_str) {
        for err in k8s_names::qualified_name(finalizer) {
            report.error(
                at("finalizers"),
                format!("Invalid value: {finalizer:?}: {err}"),
            );
        }
    }
}

/// Labels (keys qualified names, values label values) and annotations (keys qualified names,
/// 256 kB at most in all), as apimachinery validates them.
pub fn check_labels_and_annotations(
    meta: &Value,
    at: &dyn Fn(&str) -> String,
    report: &mut Report,
) {
    for (key, value) in string_map(meta, &["labels"]) {
        for err in k8s_names::qualified_name(key) {
            report.error(at("labels"), format!("Invalid value: {key:?}: {err}"));
        }
        for err in k8s_names::label_value(value) {
            report.error(at("labels"), format!("Invalid value: {value:?}: {err}"));
        }
    }
    let annotations = string_map(meta, &["annotations"]);
    for (key, _) in &annotations {
        for err in k8s_names::qualified_name(&key.to_lowercase()) {
            report.error(at("annotations"), format!("Invalid value: {key:?}: {err}"));
        }
    }
    let size: usize = annotations.iter().map(|(k, v)| k.len() + v.len()).sum();
    if size > 256 * 1024 {
        report.error(
            at("annotations"),
            format!("Too long: may not be more than 262144 bytes (they hold {size})"),
        );
    }
}

fn check_owner_references(meta: &Value, at: &dyn Fn(&str) -> String, report: &mut Report) {
    let mut controller: Option<String> = None;
    for reference in list(meta, &["ownerReferences"]) {
        let api_version = text(reference, &["apiVersion"]);
        let (group, version) = super::fields::group_version(api_version);
        let kind = text(reference, &["kind"]);
        if version.is_empty() {
            report.error(
                at("ownerReferences.apiVersion"),
                "Invalid value: version must not be empty",
            );
        }
        for field in ["kind", "name", "uid"] {
            if text(reference, &[field]).is_empty() {
                report.error(
                    at(&format!("ownerReferences.{field}")),
                    "Invalid value: must not be empty",
                );
            }
        }
        if group.is_empty() && version == "v1" && kind == "Event" {
            report.error(
                at("ownerReferences"),
                "/v1, Kind=Event is disallowed from being an owner",
            );
        }
        if reference.get("controller").and_then(Value::as_bool) == Some(true) {
            let name = format!("{kind}/{}", text(reference, &["name"]));
            match &controller {
                Some(first) => report.error(
                    at("ownerReferences"),
                    format!("Only one reference can have Controller set to true. Found \"true\" in references for {first} and {name}"),
                ),
                None => controller = Some(name),
            }
        }
    }
}
