//! The API server's check of the `default`s of a CRD's schema (apiextensions'
//! `structuraldefaulting.ValidateDefaults`), in its order and words. Each default, node by node
//! (the node, its items, its properties; never through `additionalProperties`):
//! - must not hold fields the node would prune (`must not have unknown fields`), unless the CRD
//!   being updated had such defaults already;
//! - where it is an embedded resource (or the resource's root), must have an `apiVersion` and a
//!   `kind` of the right form, and valid metadata (`metadata.rs`'s checks);
//! - must pass the node's schema as an object's field does (`schema.rs`, paths relative to the
//!   default: `default.size: … size in body should be …`, or `default: … ␣ in body should be …`
//!   for the default itself), and then its CEL rules (the default being `oldSelf` too);
//! - inside a resource's `apiVersion`, `kind` or `metadata`, must make the resource's type and
//!   metadata valid (`must result in valid metadata: kind: …`), where the pruning is not checked.
//!
//! Defaults in the resource's own `apiVersion`, `kind` and `metadata` are checked so too, and
//! besides forbidden (the API server's schema validation), as they are inside
//! `additionalProperties` applying to a resource's metadata: [`forbidden`].

use serde_json::{Value, json};

use super::cel;
use super::cel_check;
use super::errors::{ErrorType, FieldError};
use super::metadata;
use super::names::{self, NameRule};
use super::schema::{self, Schema};

/// The fields of an object's type and metadata.
const TYPE_AND_METADATA: [&str; 3] = ["apiVersion", "kind", "metadata"];

/// A step from a resource (the root or an embedded one) down to a node inside its type and
/// metadata.
#[derive(Clone)]
enum Step {
    Key(String),
    Index,
}

/// Where the walk is in the schema.
#[derive(Clone)]
struct Place {
    /// The node's path in the CRD: `spec.validation.openAPIV3Schema.properties[spec]`.
    at: String,
    /// The schema's root (checked as an embedded resource).
    root: bool,
    /// Under the root's `apiVersion`, `kind` or `metadata`: the reason defaults are forbidden.
    top_level: Option<String>,
    /// Under a resource's `apiVersion`, `kind` or `metadata` (the root's or an embedded
    /// resource's): the steps from the resource.
    meta: Option<Vec<Step>>,
    /// Under `additionalProperties` inside a resource's metadata: defaults forbidden.
    meta_map: bool,
}

impl Place {
    fn new(at: &str) -> Self {
        Place {
            at: at.to_owned(),
            root: true,
            top_level: None,
            meta: None,
            meta_map: false,
        }
    }

    fn property(&self, name: &str, resource_root: bool) -> Place {
        let mut place = self.descend(format!("{}.properties[{name}]", self.at));
        if resource_root && TYPE_AND_METADATA.contains(&name) {
            place.meta = Some(vec![Step::Key(name.to_owned())]);
            if self.root {
                place.top_level = Some(format!("in top-level {name}"));
            }
        } else if let Some(steps) = &mut place.meta {
            steps.push(Step::Key(name.to_owned()));
        }
        place
    }

    fn items(&self) -> Place {
        let mut place = self.descend(format!("{}.items", self.at));
        if let Some(steps) = &mut place.meta {
            steps.push(Step::Index);
        }
        place
    }

    fn additional(&self) -> Place {
        let mut place = self.descend(format!("{}.additionalProperties", self.at));
        place.meta_map |= place.meta.is_some();
        place
    }

    fn descend(&self, at: String) -> Place {
        Place {
            at,
            root: false,
            ..self.clone()
        }
    }
}

fn is_embedded(node: &Value) -> bool {
    node["x-kubernetes-embedded-resource"] == true
}

/// The default of a node, if it has one (`default: null` is none).
fn default_of(node: &Value) -> Option<&Value> {
    node.get("default").filter(|default| !default.is_null())
}

/// The errors of the defaults of the schema `root` (a version's `openAPIV3Schema`, at `at`);
/// `require_pruned` but where the CRD being updated had unpruned defaults.
pub(super) fn errors(root: &Value, at: &str, require_pruned: bool) -> Vec<FieldError> {
    let mut errors = Vec::new();
    walk(root, &Place::new(at), require_pruned, &mut errors);
    errors
}

fn walk(node: &Value, place: &Place, require_pruned: bool, errors: &mut Vec<FieldError>) {
    let mut place = place.clone();
    if is_embedded(node) {
        place.meta = None;
    }
    let resource_root = place.root || is_embedded(node);
    if let Some(default) = default_of(node) {
        let field = format!("{}.default", place.at);
        errors.extend(match &place.meta {
            Some(steps) => meta_default_errors(node, default, steps, &field),
            None => default_errors(node, default, resource_root, require_pruned, &field),
        });
    }
    if node["items"].is_object() {
        walk(&node["items"], &place.items(), require_pruned, errors);
    }
    for (name, property) in properties(node) {
        let below = place.property(name, resource_root);
        walk(property, &below, require_pruned, errors);
    }
}

/// A node's properties, by name.
fn properties(node: &Value) -> Vec<(&str, &Value)> {
    let mut properties: Vec<(&str, &Value)> = node["properties"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, property)| (name.as_str(), property))
        .collect();
    properties.sort_by_key(|(name, _)| *name);
    properties
}

/// The errors of the default of a node outside any resource's type and metadata.
fn default_errors(
    node: &Value,
    default: &Value,
    resource_root: bool,
    require_pruned: bool,
    field: &str,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if require_pruned && is_unpruned(node, default, resource_root) {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            field,
            Some(default.clone()),
            "must not have unknown fields",
        ));
    }
    let mut embedded = Vec::new();
    embedded_resources(node, default, field, resource_root, &mut embedded);
    if embedded.is_empty() {
        errors.extend(value_errors(node, default, field));
    } else {
        errors.extend(embedded);
    }
    errors
}

/// Whether pruning `default` with its node would change it.
fn is_unpruned(node: &Value, default: &Value, resource_root: bool) -> bool {
    let mut pruned = default.clone();
    !schema::prune_node(node, &mut pruned, resource_root).is_empty()
}

/// The errors of a default inside an embedded resource's type and metadata (`steps` from the
/// resource): the resource it makes (`validation/v1` `Validation` around it) must be valid,
/// then the default must pass its node.
fn meta_default_errors(
    node: &Value,
    default: &Value,
    steps: &[Step],
    field: &str,
) -> Vec<FieldError> {
    let mut resource = default.clone();
    for step in steps.iter().rev() {
        resource = match step {
            Step::Key(key) => json!({ key.as_str(): resource }),
            Step::Index => json!([resource]),
        };
    }
    for (key, value) in [("kind", "Validation"), ("apiVersion", "validation/v1")] {
        if resource.get(key).is_none() {
            resource[key] = json!(value);
        }
    }
    let errors = resource_errors(&resource, "");
    if errors.is_empty() {
        return value_errors(node, default, field);
    }
    let texts: Vec<String> = errors.iter().map(ToString::to_string).collect();
    let why = match texts.as_slice() {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    };
    vec![FieldError::new(
        ErrorType::Invalid,
        field,
        Some(default.clone()),
        format!("must result in valid metadata: {why}"),
    )]
}

/// The errors of the embedded resources in `value` (of the node `node`, at `path`; the node
/// itself one when `resource_root`), as the API server checks their type (`objectmeta`).
fn embedded_resources(
    node: &Value,
    value: &Value,
    path: &str,
    resource_root: bool,
    errors: &mut Vec<FieldError>,
) {
    match value {
        Value::Object(fields) => {
            if resource_root || is_embedded(node) {
                errors.extend(resource_errors(value, path));
            }
            for (name, field) in fields {
                let at = format!("{path}.{name}");
                if let Some(property) = node["properties"].get(name) {
                    embedded_resources(property, field, &at, false, errors);
                } else if node["additionalProperties"].is_object() {
                    let at = format!("{path}[{name}]");
                    embedded_resources(&node["additionalProperties"], field, &at, false, errors);
                }
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                let at = format!("{path}[{index}]");
                embedded_resources(&node["items"], item, &at, false, errors);
            }
        }
        _ => {}
    }
}

/// The errors of a resource's `apiVersion` and `kind` (at `path`, empty for none).
fn resource_errors(resource: &Value, path: &str) -> Vec<FieldError> {
    let at = |name: &str| {
        if path.is_empty() {
            name.to_owned()
        } else {
            format!("{path}.{name}")
        }
    };
    let mut errors = Vec::new();
    for key in ["apiVersion", "kind"] {
        if resource.get(key).is_none() {
            errors.push(FieldError::new(
                ErrorType::Required,
                &at(key),
                None,
                "must not be empty",
            ));
        }
    }
    let invalid = |key: &str, value: &Value, detail: String| {
        FieldError::new(ErrorType::Invalid, &at(key), Some(value.clone()), detail)
    };
    if let Some(value) = resource.get("apiVersion") {
        match value.as_str() {
            None => errors.push(invalid("apiVersion", value, "must be a string".into())),
            Some("") => errors.push(invalid("apiVersion", value, "must not be empty".into())),
            Some(text) if text.matches('/').count() > 1 => errors.push(invalid(
                "apiVersion",
                value,
                format!("unexpected GroupVersion string: {text}"),
            )),
            Some(_) => {}
        }
    }
    if let Some(value) = resource.get("kind") {
        match value.as_str() {
            None => errors.push(invalid("kind", value, "must be a string".into())),
            Some("") => errors.push(invalid("kind", value, "must not be empty".into())),
            Some(text) => {
                let found = names::dns1035_label(&text.to_lowercase());
                if !found.is_empty() {
                    let detail = format!(
                        "may have mixed case, but should otherwise match: {}",
                        found.join(",")
                    );
                    errors.push(invalid("kind", value, detail));
                }
            }
        }
    }
    errors.extend(metadata_errors(resource, path));
    errors
}

/// The errors of a resource's `metadata` as an `ObjectMeta` (its name a path segment, or
/// `fakename` where it has none, as the API server checks it).
fn metadata_errors(resource: &Value, path: &str) -> Vec<FieldError> {
    let Some(metadata) = resource.get("metadata").filter(|m| m.is_object()) else {
        return Vec::new();
    };
    let mut metadata = metadata.clone();
    if metadata["name"].as_str().is_none_or(str::is_empty) {
        metadata["name"] = json!("fakename");
    }
    let namespaced = metadata["namespace"]
        .as_str()
        .is_some_and(|n| !n.is_empty());
    let object = json!({ "metadata": metadata });
    let mut errors = metadata::validate_create(&object, NameRule::PathSegment, namespaced);
    if !path.is_empty() {
        for error in &mut errors {
            error.field = format!("{path}.{}", error.field);
        }
    }
    errors
}

/// The errors of `default` against its node's schema, then of the node's CEL rules, at
/// `field` (the default's path in the CRD).
fn value_errors(node: &Value, default: &Value, field: &str) -> Vec<FieldError> {
    let type_name = node["type"].as_str().unwrap_or_default();
    // A rule of the node that does not compile is reported at the default once the value
    // passes the schema (cel-go's compile errors, as `rule compile error: …`).
    let broken: Vec<String> = node["x-kubernetes-validations"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|rule| cel_check::check(rule["rule"].as_str()?, node).err())
        .collect();
    let compiled = Schema::new(node.clone()).ok().filter(|_| broken.is_empty());
    let errors = match &compiled {
        Some(schema) => schema.validate_default(default),
        None => {
            let mut bare = node.clone();
            cel::strip_rules(&mut bare);
            let schema = Schema::new(bare).expect("a schema without rules compiles");
            let errors = schema.validate_default(default);
            if !errors.is_empty() {
                errors
            } else {
                broken
                    .iter()
                    .map(|error| {
                        let detail = format!("rule compile error: compilation failed: {error}");
                        let value = Some(Value::from(type_name));
                        FieldError::new(ErrorType::Invalid, "", value, detail)
                    })
                    .collect()
            }
        }
    };
    errors
        .into_iter()
        .map(|mut error| {
            error.field = if error.field.is_empty() {
                field.to_owned()
            } else {
                format!("{field}.{}", error.field)
            };
            error
        })
        .collect()
}

/// The defaults the API server's schema validation forbids: in the resource's own
/// `apiVersion`, `kind` and `metadata`, and inside `additionalProperties` applying to an
/// embedded resource's metadata. In its order: a node, its `additionalProperties`, its
/// properties, its items.
pub(super) fn forbidden(root: &Value, at: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    forbidden_in(root, &Place::new(at), &mut errors);
    errors
}

fn forbidden_in(node: &Value, place: &Place, errors: &mut Vec<FieldError>) {
    let mut place = place.clone();
    if is_embedded(node) {
        place.meta = None;
        place.meta_map = false;
    }
    let reason = if place.meta_map {
        Some("inside additionalProperties applying to object metadata".to_owned())
    } else {
        place.top_level.clone()
    };
    if let (Some(_), Some(reason)) = (node.get("default"), reason) {
        errors.push(FieldError::new(
            ErrorType::Forbidden,
            &format!("{}.default", place.at),
            None,
            format!("must not be set {reason}"),
        ));
    }
    if node["additionalProperties"].is_object() {
        forbidden_in(&node["additionalProperties"], &place.additional(), errors);
    }
    let resource_root = place.root || is_embedded(node);
    for (name, property) in properties(node) {
        forbidden_in(property, &place.property(name, resource_root), errors);
    }
    if node["items"].is_object() {
        forbidden_in(&node["items"], &place.items(), errors);
    }
}

/// Whether the schema `root` has a default that pruning would change: a CRD that has one may
/// keep such defaults on an update.
pub(super) fn has_unpruned(root: &Value) -> bool {
    let mut found = Vec::new();
    unpruned_in(root, &Place::new(""), &mut found);
    !found.is_empty()
}

fn unpruned_in(node: &Value, place: &Place, found: &mut Vec<String>) {
    let resource_root = place.root || is_embedded(node);
    if let Some(default) = default_of(node)
        && is_unpruned(node, default, resource_root)
    {
        found.push(place.at.clone());
    }
    if node["items"].is_object() {
        unpruned_in(&node["items"], &place.items(), found);
    }
    for (name, property) in properties(node) {
        unpruned_in(property, &place.property(name, resource_root), found);
    }
}

/// The fields of `ObjectMeta`: what is left of an embedded resource's metadata in a default
/// once the API server has read it as one.
const OBJECT_META_FIELDS: [&str; 15] = [
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

/// The schemas of the CRD `crd` as the API server stores them: without `default: null` (nor
/// `example: null`), and with the metadata of the embedded resources in their defaults read as
/// an `ObjectMeta` and written back (the API server's check of a default coerces it in place):
/// unknown and empty fields gone.
pub(super) fn as_stored(crd: &mut Value) {
    for version in crd["spec"]["versions"].as_array_mut().into_iter().flatten() {
        if let Some(root) = version.pointer_mut("/schema/openAPIV3Schema") {
            stored_node(root, true);
        }
    }
}

fn stored_node(node: &mut Value, resource_root: bool) {
    let Some(fields) = node.as_object_mut() else {
        return;
    };
    for key in ["default", "example"] {
        if fields.get(key).is_some_and(Value::is_null) {
            fields.remove(key);
        }
    }
    let embedded =
        resource_root || fields.get("x-kubernetes-embedded-resource") == Some(&json!(true));
    if let Some(mut default) = fields.remove("default") {
        coerce_metadata(node, &mut default, embedded);
        node["default"] = default;
    }
    if let Some(properties) = node.get_mut("properties").and_then(Value::as_object_mut) {
        for property in properties.values_mut() {
            stored_node(property, false);
        }
    }
    for below in ["items", "additionalProperties", "not"] {
        if let Some(below) = node.get_mut(below).filter(|below| below.is_object()) {
            stored_node(below, false);
        }
    }
    for junctor in ["allOf", "anyOf", "oneOf"] {
        for branch in node
            .get_mut(junctor)
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            stored_node(branch, false);
        }
    }
}

/// Rewrites the metadata of the embedded resources in `value` (of the node `node`; the node
/// itself one when `resource_root`) as the API server's `ObjectMeta` writes it.
fn coerce_metadata(node: &Value, value: &mut Value, resource_root: bool) {
    match value {
        Value::Object(fields) => {
            if (resource_root || is_embedded(node))
                && let Some(Value::Object(metadata)) = fields.get_mut("metadata")
            {
                metadata.retain(|key, value| {
                    OBJECT_META_FIELDS.contains(&key.as_str()) && !is_empty(value)
                });
            }
            for (name, field) in fields.iter_mut() {
                if let Some(property) = node["properties"].get(name) {
                    coerce_metadata(property, field, false);
                } else if node["additionalProperties"].is_object() {
                    coerce_metadata(&node["additionalProperties"], field, false);
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                coerce_metadata(&node["items"], item, false);
            }
        }
        _ => {}
    }
}

/// What Go's `omitempty` leaves out.
fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(text) => text.is_empty(),
        Value::Number(number) => number.as_f64() == Some(0.0),
        Value::Array(items) => items.is_empty(),
        Value::Object(fields) => fields.is_empty(),
        Value::Bool(flag) => !flag,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::super::crd_validation;

    /// A CRD of one version whose root has `properties`.
    fn crd(properties: Value) -> Value {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": { "name": "probes.example.com" },
            "spec": {
                "group": "example.com",
                "names": { "kind": "Probe", "plural": "probes", "singular": "probe", "listKind": "ProbeList" },
                "scope": "Namespaced",
                "versions": [{
                    "name": "v1", "served": true, "storage": true,
                    "schema": { "openAPIV3Schema": { "type": "object", "properties": properties } },
                }],
            },
        })
    }

    /// A CRD whose `spec` has `properties` and `more` of its own keys.
    fn with_spec(properties: Value, more: Value) -> Value {
        let mut spec = json!({ "type": "object", "properties": properties });
        for (key, value) in more.as_object().into_iter().flatten() {
            spec[key] = value.clone();
        }
        crd(json!({ "spec": spec }))
    }

    fn errors(crd: &Value, old: Option<&Value>) -> Vec<String> {
        crd_validation::validate(crd, old)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    const AT: &str = "spec.validation.openAPIV3Schema.properties[spec]";

    #[test]
    fn defaults_are_pruned_then_validated_against_their_node() {
        // The CRD kube-apiserver 1.28 was probed with (issue 41), its errors in its words (it
        // orders sibling properties at random; the fake by name), but for a string over its
        // maxLength, worded as Kubernetes 1.33 words it.
        let crd = with_spec(
            json!({
                "size": { "type": "integer", "default": 1, "maximum": 0 },
                "name": { "type": "string", "default": "ab", "maxLength": 1, "pattern": "^z" },
                "list": {
                    "type": "array",
                    "items": { "type": "integer", "minimum": 3, "default": 1 },
                    "default": [1, "x"],
                },
                "obj": { "type": "object", "properties": { "a": { "type": "integer", "maximum": 2 } }, "default": { "a": 5 } },
            }),
            json!({ "default": { "size": 7, "extra": 1 } }),
        );
        assert_eq!(
            errors(&crd, None),
            [
                format!(
                    r#"{AT}.default: Invalid value: map[string]interface {{}}{{"extra":1, "size":7}}: must not have unknown fields"#
                ),
                format!(
                    "{AT}.default.size: Invalid value: 7: size in body should be less than or equal to 0"
                ),
                format!(
                    "{AT}.properties[list].default.[0]: Invalid value: 1: [0] in body should be greater than or equal to 3"
                ),
                format!(
                    r#"{AT}.properties[list].default.[1]: Invalid value: "string": [1] in body must be of type integer: "string""#
                ),
                format!(
                    "{AT}.properties[list].items.default: Invalid value: 1:  in body should be greater than or equal to 3"
                ),
                format!("{AT}.properties[name].default: Too long: may not be more than 1 byte"),
                format!(
                    "{AT}.properties[obj].default.a: Invalid value: 5: a in body should be less than or equal to 2"
                ),
                format!(
                    "{AT}.properties[size].default: Invalid value: 1:  in body should be less than or equal to 0"
                ),
            ]
        );
    }

    #[test]
    fn a_version_of_its_own_names_its_schema() {
        let mut crd = with_spec(
            json!({ "size": { "type": "integer", "default": 5, "maximum": 1 } }),
            json!({}),
        );
        let mut v2 = crd["spec"]["versions"][0].clone();
        v2["name"] = json!("v2");
        v2["storage"] = json!(false);
        v2["schema"]["openAPIV3Schema"]["properties"]["spec"] = json!({ "type": "object" });
        crd["spec"]["versions"].as_array_mut().unwrap().push(v2);
        assert_eq!(
            errors(&crd, None),
            [
                "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[size].default: Invalid value: 5:  in body should be less than or equal to 1"
            ]
        );
    }

    #[test]
    fn defaults_pass_their_cel_rules_with_themselves_as_old_self() {
        let on_node = with_spec(
            json!({ "size": { "type": "integer" } }),
            json!({
                "default": { "size": 9 },
                "x-kubernetes-validations": [{ "rule": "self.size < 5", "message": "small" }],
            }),
        );
        assert_eq!(
            errors(&on_node, None),
            [format!(r#"{AT}.default: Invalid value: "object": small"#)]
        );
        let below = with_spec(
            json!({ "size": { "type": "integer", "x-kubernetes-validations": [{ "rule": "self < 5" }] } }),
            json!({ "default": { "size": 9 } }),
        );
        assert_eq!(
            errors(&below, None),
            [format!(
                r#"{AT}.default.size: Invalid value: "integer": failed rule: self < 5"#
            )]
        );
        let transition = with_spec(
            json!({ "size": {
                "type": "integer",
                "default": 3,
                "x-kubernetes-validations": [{ "rule": "self > oldSelf", "message": "grow" }],
            } }),
            json!({}),
        );
        assert_eq!(
            errors(&transition, None),
            [format!(
                r#"{AT}.properties[size].default: Invalid value: "integer": grow"#
            )]
        );
    }

    #[test]
    fn a_rule_that_does_not_compile_is_reported_at_the_default_and_rules_wait_for_valid_defaults() {
        let broken = |maximum: Value| {
            let mut size = json!({
                "type": "integer",
                "default": 3,
                "x-kubernetes-validations": [{ "rule": "self >" }],
            });
            size["maximum"] = maximum;
            with_spec(json!({ "size": size }), json!({}))
        };
        let found = errors(&broken(json!(10)), None);
        assert_eq!(found.len(), 1);
        assert!(
            found[0].starts_with(&format!(
                r#"{AT}.properties[size].default: Invalid value: "integer": rule compile error: compilation failed: ERROR: <input>:1:7: Syntax error:"#
            )),
            "{found:?}"
        );
        // An invalid default: the rules are not compiled at all.
        assert_eq!(
            errors(&broken(json!(1)), None),
            [format!(
                "{AT}.properties[size].default: Invalid value: 3:  in body should be less than or equal to 1"
            )]
        );
    }

    #[test]
    fn embedded_resources_and_metadata() {
        let embedded = |more: Value| {
            let mut node = json!({
                "type": "object",
                "x-kubernetes-embedded-resource": true,
                "properties": {
                    "apiVersion": { "type": "string" },
                    "kind": { "type": "string" },
                    "metadata": { "type": "object" },
                },
            });
            for (key, value) in more.as_object().into_iter().flatten() {
                node[key] = value.clone();
            }
            with_spec(json!({ "tpl": node }), json!({}))
        };
        assert_eq!(
            errors(&embedded(json!({ "default": {} })), None),
            [
                format!(
                    "{AT}.properties[tpl].default.apiVersion: Required value: must not be empty"
                ),
                format!("{AT}.properties[tpl].default.kind: Required value: must not be empty"),
            ]
        );
        let labels = json!({ "default": { "apiVersion": "v1", "kind": "Pod", "metadata": { "labels": { "bad key!": "x" } } } });
        let found = errors(&embedded(labels), None);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with(&format!(
            r#"{AT}.properties[tpl].default.metadata.labels: Invalid value: "bad key!": name part must consist"#
        )));
        // Its metadata is kept as it is, unknown fields too.
        let kept =
            json!({ "default": { "apiVersion": "v1", "kind": "Pod", "metadata": { "x": 1 } } });
        assert!(errors(&embedded(kept), None).is_empty());
        let mut bad_kind = embedded(json!({}));
        bad_kind["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
            ["tpl"]["properties"]["kind"]["default"] = json!("no_good");
        let found = errors(&bad_kind, None);
        assert_eq!(found.len(), 1);
        assert!(
            found[0].starts_with(&format!(
                r#"{AT}.properties[tpl].properties[kind].default: Invalid value: "no_good": must result in valid metadata: kind: Invalid value: "no_good": may have mixed case, but should otherwise match: a DNS-1035 label"#
            )),
            "{found:?}"
        );
        let top_level = crd(json!({
            "metadata": { "type": "object", "properties": { "name": { "type": "string", "default": "a" } } },
        }));
        assert_eq!(
            errors(&top_level, None),
            [
                "spec.validation.openAPIV3Schema.properties[metadata].properties[name].default: Forbidden: must not be set in top-level metadata"
            ]
        );
        // Checked as an embedded resource's kind, and forbidden besides.
        let top_level_kind = crd(json!({ "kind": { "type": "string", "default": "no_good" } }));
        let found = errors(&top_level_kind, None);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].starts_with(
            r#"spec.validation.openAPIV3Schema.properties[kind].default: Invalid value: "no_good": must result in valid metadata: kind: Invalid value: "no_good""#
        ));
        assert_eq!(
            found[1],
            "spec.validation.openAPIV3Schema.properties[kind].default: Forbidden: must not be set in top-level kind"
        );
    }

    #[test]
    fn what_the_api_server_takes() {
        let crd = with_spec(
            json!({
                "size": { "type": "integer", "default": 1, "maximum": 3 },
                "free": { "type": "object", "x-kubernetes-preserve-unknown-fields": true, "default": { "any": 1 } },
                // Not followed: defaults under additionalProperties are not checked.
                "labels": { "type": "object", "additionalProperties": { "type": "string", "maxLength": 1, "default": "abc" } },
                "maybe": { "type": "integer", "default": null },
                "port": { "x-kubernetes-int-or-string": true, "default": "http" },
                // Nor are list types: a set's default may repeat an item.
                "set": { "type": "array", "x-kubernetes-list-type": "set", "items": { "type": "integer" }, "default": [1, 1] },
            }),
            json!({ "default": {} }),
        );
        assert_eq!(errors(&crd, None), Vec::<String>::new());
    }

    #[test]
    fn an_update_keeps_the_unpruned_defaults_a_crd_had() {
        let unpruned = with_spec(
            json!({ "size": { "type": "integer" } }),
            json!({ "default": { "size": 1, "extra": 1 } }),
        );
        assert_eq!(errors(&unpruned, None).len(), 1);
        let mut old = unpruned.clone();
        old["status"] = json!({ "storedVersions": ["v1"] });
        assert!(errors(&unpruned, Some(&old)).is_empty());
    }

    #[test]
    fn defaults_are_stored_as_the_api_server_stores_them() {
        let schema = json!({
            "type": "object",
            "properties": { "spec": { "type": "object", "properties": {
                "maybe": { "type": "integer", "default": null },
                "tpl": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": true,
                    "properties": { "metadata": { "type": "object" } },
                    "default": { "kind": "Pod", "metadata": { "name": "a", "labels": {}, "whatever": 1 } },
                },
            } } },
        });
        let mut crd =
            json!({ "spec": { "versions": [{ "schema": { "openAPIV3Schema": schema } }] } });
        super::as_stored(&mut crd);
        let spec = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
        assert_eq!(spec["maybe"], json!({ "type": "integer" }));
        assert_eq!(
            spec["tpl"]["default"],
            json!({ "kind": "Pod", "metadata": { "name": "a" } })
        );
    }

    #[test]
    fn the_fake_refuses_to_install_a_crd_whose_default_breaks_its_schema() {
        let crd = with_spec(
            json!({ "size": { "type": "integer", "default": 1, "maximum": 0 } }),
            json!({}),
        );
        let crd = serde_json::from_value(crd).unwrap();
        let refused = std::panic::catch_unwind(|| {
            super::super::FakeApiServer::new().register_crd(&crd);
        })
        .unwrap_err();
        let message = refused.downcast_ref::<String>().unwrap();
        assert_eq!(
            message,
            &format!(
                r#"the API server would refuse the CRD probes.example.com: CustomResourceDefinition.apiextensions.k8s.io "probes.example.com" is invalid: {AT}.properties[size].default: Invalid value: 1:  in body should be less than or equal to 0"#
            )
        );
    }
}
