//! The objects of a registry+v1 bundle besides its CSV and CRDs, as operator-sdk's content
//! check sees them: only the kinds OLM installs from a bundle (operator-registry's supported
//! kinds, by kind name), each with valid object metadata: a name, no namespace (OLM installs
//! them in the operator's), valid labels, annotations, owner references, finalizers and
//! managed fields.
//!
//! operator-sdk validates the metadata through apimachinery's `Unstructured` accessors, not a
//! typed decode, and so does this: a field of another type than the accessor reads is as if it
//! were not there (a `name: 123` is no name; labels with one number among them are no labels at
//! all), and a `generateName` does not stand in for a name (the accessor's object has none).

use serde_json::{Map, Value};

use super::Report;
use super::fields::{group_version, string_map, text};
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

/// apimachinery's `ValidateObjectMetaAccessor` with no name rule (operator-sdk's), for an object
/// OLM installs into the operator's namespace (so none of its own).
fn check_metadata(object: &Object, report: &mut Report) {
    let empty = Map::new();
    let meta = object.value["metadata"].as_object().unwrap_or(&empty);
    let at = |field: &str| format!("{}: metadata.{field}", object.file);
    let string = |key: &str| meta.get(key).and_then(Value::as_str).unwrap_or("");
    if string("name").is_empty() {
        let generated = if string("generateName").is_empty() {
            ""
        } else {
            " (a generateName is not enough: nothing generates the name of a bundle's object)"
        };
        report.error(
            at("name"),
            format!("Required value: name or generateName is required{generated}"),
        );
    }
    if !string("namespace").is_empty() {
        report.error(
            at("namespace"),
            "Forbidden: not allowed on this type (OLM installs the bundle's objects in the operator's namespace)",
        );
    }
    let labels = strings_only(meta.get("labels"));
    let annotations = strings_only(meta.get("annotations"));
    check_other_fields(meta, &labels, &annotations, &at, report);
}

/// The rest of apimachinery's metadata checks, for any object (CRDs too): generation, labels,
/// annotations, owner references, finalizers, managed fields.
pub fn check_other_fields(
    meta: &Map<String, Value>,
    labels: &[(&str, &str)],
    annotations: &[(&str, &str)],
    at: &dyn Fn(&str) -> String,
    report: &mut Report,
) {
    // apimachinery's JSON reading makes an integral number an int64, whatever its spelling.
    let generation = meta.get("generation").and_then(|g| {
        g.as_i64()
            .or_else(|| g.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
    });
    if let Some(generation) = generation
        && generation < 0
    {
        report.error(
            at("generation"),
            "Invalid value: must be greater than or equal to 0",
        );
    }
    check_labels_and_annotations(labels, annotations, at, report);
    check_owner_references(meta.get("ownerReferences"), at, report);
    check_finalizers(meta.get("finalizers"), at, report);
    check_managed_fields(meta.get("managedFields"), at, report);
}

/// A string map as `Unstructured` reads labels and annotations: all its values strings, or
/// none at all.
fn strings_only(value: Option<&Value>) -> Vec<(&str, &str)> {
    let Some(map) = value.and_then(Value::as_object) else {
        return Vec::new();
    };
    map.iter()
        .map(|(k, v)| v.as_str().map(|v| (k.as_str(), v)))
        .collect::<Option<Vec<_>>>()
        .unwrap_or_default()
}

/// Finalizers are qualified names, and `orphan` and `foregroundDeletion` exclude each other
/// (read as `Unstructured` reads them: all strings, or none).
fn check_finalizers(value: Option<&Value>, at: &dyn Fn(&str) -> String, report: &mut Report) {
    let finalizers: Vec<&str> = value
        .and_then(Value::as_array)
        .and_then(|items| items.iter().map(Value::as_str).collect::<Option<_>>())
        .unwrap_or_default();
    for finalizer in &finalizers {
        for err in k8s_names::qualified_name(finalizer) {
            report.error(
                at("finalizers"),
                format!("Invalid value: {finalizer:?}: {err}"),
            );
        }
    }
    if finalizers.contains(&"orphan") && finalizers.contains(&"foregroundDeletion") {
        report.error(
            at("finalizers"),
            "Invalid value: finalizer orphan and foregroundDeletion cannot be both set",
        );
    }
}

/// Managed fields, each an `Apply` or `Update` of `FieldsV1` by a printable manager name (none
/// are read when one entry is not of their type, as `Unstructured` reads them).
fn check_managed_fields(value: Option<&Value>, at: &dyn Fn(&str) -> String, report: &mut Report) {
    const STRINGS: [&str; 6] = [
        "manager",
        "operation",
        "apiVersion",
        "time",
        "fieldsType",
        "subresource",
    ];
    let Some(entries) = value.and_then(Value::as_array) else {
        return;
    };
    let readable = entries.iter().all(|e| {
        e.as_object().is_some_and(|e| {
            STRINGS
                .iter()
                .all(|k| e.get(*k).is_none_or(|v| v.is_string() || v.is_null()))
        })
    });
    if !readable {
        return;
    }
    for (i, entry) in entries.iter().enumerate() {
        let field = |name: &str| at(&format!("managedFields[{i}].{name}"));
        let operation = text(entry, &["operation"]);
        if !matches!(operation, "Apply" | "Update") {
            report.error(
                field("operation"),
                format!("Invalid value: {operation:?}: must be `Apply` or `Update`"),
            );
        }
        let fields_type = text(entry, &["fieldsType"]);
        if !fields_type.is_empty() && fields_type != "FieldsV1" {
            report.error(
                field("fieldsType"),
                format!("Invalid value: {fields_type:?}: must be `FieldsV1`"),
            );
        }
        let manager = text(entry, &["manager"]);
        if manager.len() > 128 {
            report.error(field("manager"), "Too long: may not be more than 128 bytes");
        }
        if let Some((i, c)) = manager.char_indices().find(|(_, c)| !is_go_printable(*c)) {
            report.error(
                field("manager"),
                format!("Invalid value: {manager:?}: invalid character {c:?} (at position {i})"),
            );
        }
        if text(entry, &["subresource"]).len() > 256 {
            report.error(
                field("subresource"),
                "Too long: may not be more than 256 bytes",
            );
        }
    }
}

/// Go's `unicode.IsPrint`: letters, marks, numbers, punctuation, symbols and the ASCII space.
fn is_go_printable(c: char) -> bool {
    c == ' ' || !(c.is_control() || c.is_whitespace() || is_format_or_unassigned(c))
}

/// Characters Go does not print besides controls and spaces: format characters (Cf) and the
/// private-use, surrogate and unassigned planes, approximated by the ranges that hold them.
fn is_format_or_unassigned(c: char) -> bool {
    matches!(c as u32,
        0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x180E | 0x200B..=0x200F | 0x202A..=0x202E
        | 0x2060..=0x206F | 0xFEFF | 0xFFF9..=0xFFFB | 0xE000..=0xF8FF | 0xF0000..=0x10FFFF)
}

/// Labels (keys qualified names, values label values) and annotations (keys qualified names,
/// 256 kB at most in all), as apimachinery validates them.
fn check_labels_and_annotations(
    labels: &[(&str, &str)],
    annotations: &[(&str, &str)],
    at: &dyn Fn(&str) -> String,
    report: &mut Report,
) {
    for (key, value) in labels {
        for err in k8s_names::qualified_name(key) {
            report.error(at("labels"), format!("Invalid value: {key:?}: {err}"));
        }
        for err in k8s_names::label_value(value) {
            report.error(at("labels"), format!("Invalid value: {value:?}: {err}"));
        }
    }
    for (key, _) in annotations {
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

/// The labels and annotations of a typed object's metadata (a CRD's), where every value is a
/// string once decoded.
pub fn typed_labels_and_annotations(meta: &Value) -> [Vec<(&str, &str)>; 2] {
    [
        string_map(meta, &["labels"]),
        string_map(meta, &["annotations"]),
    ]
}

/// Owner references as `Unstructured` reads them (none at all when one is not an object;
/// strings and booleans of another type as unset), checked as apimachinery checks them.
fn check_owner_references(value: Option<&Value>, at: &dyn Fn(&str) -> String, report: &mut Report) {
    let Some(references) = value
        .and_then(Value::as_array)
        .filter(|refs| refs.iter().all(Value::is_object))
    else {
        return;
    };
    let mut controller: Option<String> = None;
    for reference in references {
        let api_version = text(reference, &["apiVersion"]);
        // apimachinery's ParseGroupVersion: more than one slash is no version at all.
        let (group, version) = match api_version.matches('/').count() {
            0 | 1 => group_version(api_version),
            _ => ("", ""),
        };
        let kind = text(reference, &["kind"]);
        if version.is_empty() {
            report.error(
                at("ownerReferences.apiVersion"),
                format!("Invalid value: {api_version:?}: version must not be empty"),
            );
        }
        for field in ["kind", "name", "uid"] {
            if text(reference, &[field]).is_empty() {
                report.error(
                    at(&format!("ownerReferences.{field}")),
                    format!("Invalid value: \"\": {field} must not be empty"),
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
