//! The validation of `metadata` that the API server makes for every kind
//! (`ValidateObjectMetaAccessor` on creates, `ValidateObjectMetaAccessorUpdate` on updates):
//! the name (or `generateName`) by the kind's rule, the namespace, labels, annotations (keys and
//! their total size), owner references and finalizers, with the API server's messages and in
//! its order.

use serde_json::Value;

use super::errors::{ErrorType, FieldError, go_quote};
use super::names::{self, NameRule};

/// The most bytes all annotations of an object may take, keys and values.
pub(super) const ANNOTATIONS_SIZE_LIMIT: usize = 256 * 1024;

fn invalid(field: &str, value: &str, detail: String) -> FieldError {
    FieldError::new(ErrorType::Invalid, field, Some(Value::from(value)), detail)
}

fn strings<'a>(object: &'a Value, field: &str) -> Vec<&'a str> {
    object["metadata"][field]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// The errors of a new object's metadata (its name generated already).
pub(super) fn validate_create(object: &Value, rule: NameRule, namespaced: bool) -> Vec<FieldError> {
    let metadata = &object["metadata"];
    let text = |field: &str| metadata[field].as_str().unwrap_or_default();
    let mut errors = Vec::new();
    let generate_name = text("generateName");
    if !generate_name.is_empty() {
        for message in rule.check(generate_name, true) {
            errors.push(invalid("metadata.generateName", generate_name, message));
        }
    }
    match text("name") {
        "" => errors.push(FieldError::new(
            ErrorType::Required,
            "metadata.name",
            None,
            "name or generateName is required",
        )),
        name => {
            for message in rule.check(name, false) {
                errors.push(invalid("metadata.name", name, message));
            }
        }
    }
    match (namespaced, text("namespace")) {
        (true, "") => errors.push(FieldError::new(
            ErrorType::Required,
            "metadata.namespace",
            None,
            "",
        )),
        (true, namespace) => {
            for message in names::dns1123_label(namespace) {
                errors.push(invalid("metadata.namespace", namespace, message));
            }
        }
        (false, "") => {}
        (false, _) => errors.push(FieldError::new(
            ErrorType::Forbidden,
            "metadata.namespace",
            None,
            "not allowed on this type",
        )),
    }
    errors.extend(common(object));
    errors.extend(finalizers(&strings(object, "finalizers")));
    errors
}

/// The errors of an object's metadata on an update from `old`. (Finalizers' names are not
/// checked again: an update may keep one the API server would refuse now.)
pub(super) fn validate_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let (new_meta, old_meta) = (&object["metadata"], &old["metadata"]);
    let mut errors = Vec::new();
    if old_meta["deletionTimestamp"].is_string() {
        let old_finalizers = strings(old, "finalizers");
        let mut added: Vec<&str> = strings(object, "finalizers")
            .into_iter()
            .filter(|finalizer| !old_finalizers.contains(finalizer))
            .collect();
        added.sort_unstable();
        added.dedup();
        if !added.is_empty() {
            let quoted: Vec<String> = added.iter().map(|f| go_quote(f)).collect();
            errors.push(FieldError::new(
                ErrorType::Forbidden,
                "metadata.finalizers",
                None,
                format!(
                    "no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
                    quoted.join(", ")
                ),
            ));
        }
    }
    for field in ["name", "namespace", "uid"] {
        let (new, old) = (&new_meta[field], &old_meta[field]);
        if new.as_str().unwrap_or_default() != old.as_str().unwrap_or_default() {
            let value = new.as_str().unwrap_or_default();
            errors.push(invalid(
                &format!("metadata.{field}"),
                value,
                "field is immutable".to_owned(),
            ));
        }
    }
    errors.extend(common(object));
    errors
}

/// What creates and updates both check: labels, annotations and owner references.
fn common(object: &Value) -> Vec<FieldError> {
    let metadata = &object["metadata"];
    let mut errors = Vec::new();
    let mut labels: Vec<(&String, &Value)> = metadata["labels"]
        .as_object()
        .into_iter()
        .flatten()
        .collect();
    labels.sort_by_key(|(key, _)| *key);
    for (key, value) in labels {
        for message in names::qualified_name(key) {
            errors.push(invalid("metadata.labels", key, message));
        }
        let value = value.as_str().unwrap_or_default();
        for message in names::label_value(value) {
            errors.push(invalid("metadata.labels", value, message));
        }
    }
    errors.extend(annotations(metadata));
    errors.extend(owner_references(metadata));
    errors
}

fn annotations(metadata: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut annotations: Vec<(&String, &Value)> = metadata["annotations"]
        .as_object()
        .into_iter()
        .flatten()
        .collect();
    annotations.sort_by_key(|(key, _)| *key);
    let mut size = 0;
    for (key, value) in annotations {
        // Annotation keys are qualified names but for case.
        for message in names::qualified_name(&key.to_lowercase()) {
            errors.push(invalid("metadata.annotations", key, message));
        }
        size += key.len() + value.as_str().map_or(0, str::len);
    }
    if size > ANNOTATIONS_SIZE_LIMIT {
        errors.push(FieldError::new(
            ErrorType::TooLong,
            "metadata.annotations",
            None,
            format!("must have at most {ANNOTATIONS_SIZE_LIMIT} bytes"),
        ));
    }
    errors
}

fn owner_references(metadata: &Value) -> Vec<FieldError> {
    let field = "metadata.ownerReferences";
    let references = metadata["ownerReferences"].as_array();
    let mut errors = Vec::new();
    let mut controller: Option<String> = None;
    for reference in references.into_iter().flatten() {
        let text = |key: &str| reference[key].as_str().unwrap_or_default();
        let api_version = text("apiVersion");
        let checks = [
            (
                "apiVersion",
                version_of(api_version).is_empty(),
                "version must not be empty",
            ),
            ("kind", text("kind").is_empty(), "kind must not be empty"),
            ("name", text("name").is_empty(), "name must not be empty"),
            ("uid", text("uid").is_empty(), "uid must not be empty"),
        ];
        for (key, failed, message) in checks {
            if failed {
                errors.push(invalid(
                    &format!("{field}.{key}"),
                    text(key),
                    message.to_owned(),
                ));
            }
        }
        if (api_version, text("kind")) == ("v1", "Event") {
            errors.push(FieldError::go(
                ErrorType::Invalid,
                field,
                go_owner_reference(reference),
                "/v1, Kind=Event is disallowed from being an owner",
            ));
        }
        if reference["controller"] == true {
            let this = format!("{}/{}", text("kind"), text("name"));
            match &controller {
                Some(first) => errors.push(FieldError::go(
                    ErrorType::Invalid,
                    field,
                    go_owner_references(references.map(Vec::as_slice).unwrap_or_default()),
                    format!("Only one reference can have Controller set to true. Found \"true\" in references for {first} and {this}"),
                )),
                None => controller = Some(this),
            }
        }
    }
    errors
}

/// The version of an `apiVersion` (`v1` of `apps/v1`), empty when it does not parse.
fn version_of(api_version: &str) -> &str {
    match api_version.split('/').collect::<Vec<_>>().as_slice() {
        [version] | [_, version] => version,
        _ => "",
    }
}

/// Owner references as Go prints them with `%#v` (pointers as addresses, which a comparison
/// with a real API server must take out).
fn go_owner_references(references: &[Value]) -> String {
    let items: Vec<String> = references.iter().map(go_owner_reference).collect();
    format!("[]v1.OwnerReference{{{}}}", items.join(", "))
}

fn go_owner_reference(reference: &Value) -> String {
    let text = |key: &str| go_quote(reference[key].as_str().unwrap_or_default());
    let flag = |key: &str| match reference[key] {
        Value::Bool(_) => "(*bool)(0xc000000000)".to_owned(),
        _ => "(*bool)(nil)".to_owned(),
    };
    format!(
        "v1.OwnerReference{{APIVersion:{}, Kind:{}, Name:{}, UID:{}, Controller:{}, BlockOwnerDeletion:{}}}",
        text("apiVersion"),
        text("kind"),
        text("name"),
        text("uid"),
        flag("controller"),
        flag("blockOwnerDeletion")
    )
}

/// Finalizers' names are qualified names, and the two of the garbage collector exclude each
/// other.
fn finalizers(finalizers: &[&str]) -> Vec<FieldError> {
    let field = "metadata.finalizers";
    let mut errors = Vec::new();
    for finalizer in finalizers {
        for message in names::qualified_name(finalizer) {
            errors.push(invalid(field, finalizer, message));
        }
    }
    let (orphan, foreground) = ("orphan", "foregroundDeletion");
    if finalizers.contains(&orphan) && finalizers.contains(&foreground) {
        let quoted: Vec<String> = finalizers.iter().map(|f| go_quote(f)).collect();
        errors.push(FieldError::go(
            ErrorType::Invalid,
            field,
            format!("[]string{{{}}}", quoted.join(", ")),
            format!("finalizer {orphan} and {foreground} cannot be both set"),
        ));
    }
    errors
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn errors(metadata: Value) -> Vec<String> {
        let object = json!({ "metadata": metadata });
        validate_create(&object, NameRule::Subdomain, true)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn names_labels_annotations_finalizers_owners() {
        assert!(
            errors(json!({ "name": "a", "namespace": "ns", "labels": { "app": "x" } })).is_empty()
        );
        let upper = errors(json!({ "name": "Memcached", "namespace": "ns" }));
        assert!(
            upper[0].starts_with(
                r#"metadata.name: Invalid value: "Memcached": a lowercase RFC 1123 subdomain"#
            ),
            "{upper:?}"
        );
        let big = "x".repeat(ANNOTATIONS_SIZE_LIMIT);
        assert_eq!(
            errors(json!({ "name": "a", "namespace": "ns", "annotations": { "b": big } })),
            ["metadata.annotations: Too long: must have at most 262144 bytes"]
        );
        let finalizer = errors(json!({ "name": "a", "namespace": "ns", "finalizers": ["a b"] }));
        assert!(
            finalizer[0].starts_with(r#"metadata.finalizers: Invalid value: "a b": name part"#)
        );
        let owner = errors(json!({ "name": "a", "namespace": "ns", "ownerReferences": [
            { "apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "" },
        ] }));
        assert_eq!(
            owner,
            [r#"metadata.ownerReferences.uid: Invalid value: "": uid must not be empty"#]
        );
        assert_eq!(
            errors(json!({ "generateName": "x-", "namespace": "ns" })),
            ["metadata.name: Required value: name or generateName is required"]
        );
    }
}
