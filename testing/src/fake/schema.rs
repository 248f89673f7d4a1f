//! The OpenAPI v3 schema of a custom resource, enforced as the API server enforces a CRD's
//! schema: unknown fields pruned, `default`s set, then the object validated (types, formats,
//! enums, bounds, patterns, required fields, list types), then its CEL rules ([`super::cel`])
//! evaluated, with the API server's messages.
//!
//! Written here, not taken from a JSON Schema crate: what matters is the API server's behaviour
//! (structural pruning and defaulting, `x-kubernetes-*` extensions, the ratcheting of unchanged
//! fields on updates, which errors stop the CEL rules) and its exact wording, which tests and
//! users read; a general validator has neither. The rules are those of the apiextensions
//! apiserver and kube-openapi's validator, as documented in "Extend the Kubernetes API with
//! CustomResourceDefinitions" (validation, defaulting, pruning, ratcheting).

use serde_json::{Map, Value};

use super::cel::Rules;
use super::errors::{ErrorType, FieldError, go_float, go_quote};

/// A custom resource's schema, ready to prune, default and validate objects.
pub(super) struct Schema {
    root: Value,
    rules: Rules,
}

impl std::fmt::Debug for Schema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Schema").finish_non_exhaustive()
    }
}

/// The fields every object has whatever its schema says: the API server handles them itself.
const TYPE_AND_METADATA: [&str; 3] = ["apiVersion", "kind", "metadata"];

impl Schema {
    /// The schema `root` (a CRD version's `openAPIV3Schema`), with its CEL rules compiled; an
    /// error names a rule that does not compile, as the API server refuses such a CRD.
    pub(super) fn new(root: Value) -> Result<Self, String> {
        let rules = Rules::compile(&root)?;
        Ok(Self { root, rules })
    }

    /// Removes the fields the schema does not know (but `apiVersion`, `kind` and `metadata`),
    /// as the API server does when it decodes an object, and returns their paths.
    pub(super) fn prune(&self, object: &mut Value) -> Vec<String> {
        let mut pruned = Vec::new();
        prune(&self.root, object, "", true, &mut pruned);
        pruned
    }

    /// The errors of `value` as the `default` of this schema's root, a node of a CRD's schema
    /// (not a resource's root: `apiVersion`, `kind` and `metadata` are checked as any field),
    /// with paths relative to the node (`""`, `size`, `[0]`): the value as kube-openapi checks
    /// it, then, if it passes, the CEL rules of the node and of the nodes below, the default
    /// being `oldSelf` too, as the API server evaluates them (an update from the default to
    /// itself: transition rules run).
    pub(super) fn validate_default(&self, value: &Value) -> Vec<FieldError> {
        let mut walk = Walk {
            errors: Vec::new(),
            cel: Vec::new(),
            rules: &self.rules,
            of_object: false,
        };
        let at = At {
            field: String::new(),
            schema: String::new(),
        };
        walk.node(&self.root, &at, value, None, Ratchet::Check, false);
        if !walk.errors.is_empty() {
            return walk.errors;
        }
        let mut errors = Vec::new();
        for call in walk.cel {
            errors.extend(self.rules.evaluate(
                &call.at.schema,
                &call.at.field,
                call.type_name,
                call.value,
                Some(call.value),
                false,
            ));
        }
        errors
    }

    /// Sets the `default` of every missing field (and of `null` fields that may not be null),
    /// within defaults too, as the API server does when it decodes or reads an object.
    pub(super) fn default(&self, object: &mut Value) {
        default(&self.root, object, true);
    }

    /// The errors of `object` against the schema and its CEL rules; `old` is the object before
    /// an update, for the rules that compare with `oldSelf` and for ratcheting: a field that the
    /// update left as it was is not checked again (Kubernetes 1.33, KEP-4008), so a schema made
    /// stricter does not lock objects written before.
    pub(super) fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let mut walk = Walk {
            errors: Vec::new(),
            cel: Vec::new(),
            rules: &self.rules,
            of_object: true,
        };
        let at = At {
            field: String::new(),
            schema: String::new(),
        };
        walk.node(
            &self.root,
            &at,
            object,
            old,
            Ratchet::from(old, object),
            true,
        );
        let blocked = walk.errors.iter().any(|error| error.kind.blocks_cel());
        let Walk {
            mut errors, cel, ..
        } = walk;
        if blocked {
            if !cel.is_empty() {
                errors.push(FieldError::new(
                    ErrorType::Invalid,
                    "",
                    Some(Value::Null),
                    "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
                ));
            }
            return errors;
        }
        for call in cel {
            errors.extend(self.rules.evaluate(
                &call.at.schema,
                &call.at.field,
                call.type_name,
                call.value,
                call.old,
                call.ratcheted,
            ));
        }
        errors
    }
}

/// Where the walk is: the field path for messages, and the JSON pointer of the schema node, by
/// which the CEL rules are found.
#[derive(Clone)]
struct At {
    field: String,
    schema: String,
}

impl At {
    fn property(&self, name: &str) -> At {
        At {
            field: child(&self.field, name),
            schema: format!("{}/properties/{}", self.schema, escape_pointer(name)),
        }
    }

    fn additional(&self, key: &str) -> At {
        At {
            field: child(&self.field, key),
            schema: format!("{}/additionalProperties", self.schema),
        }
    }

    fn item(&self, index: usize) -> At {
        At {
            field: format!("{}[{index}]", self.field),
            schema: format!("{}/items", self.schema),
        }
    }
}

/// `spec.size`: the path of `name` within `parent`.
fn child(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_owned()
    } else {
        format!("{parent}.{name}")
    }
}

fn escape_pointer(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// Whether a node is checked: on an update, a node whose value did not change is not, except by
/// the rules that compare with `oldSelf`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ratchet {
    Check,
    Unchanged,
}

impl Ratchet {
    fn from(old: Option<&Value>, value: &Value) -> Self {
        if old == Some(value) {
            Ratchet::Unchanged
        } else {
            Ratchet::Check
        }
    }
}

/// A node with CEL rules, to evaluate once the schema found no blocking error.
struct CelCall<'a> {
    at: At,
    type_name: &'static str,
    value: &'a Value,
    old: Option<&'a Value>,
    ratcheted: bool,
}

struct Walk<'s, 'v> {
    errors: Vec<FieldError>,
    cel: Vec<CelCall<'v>>,
    rules: &'s Rules,
    /// Whether the walk checks an object, not a CRD schema's default: the items of `set` and
    /// `map` lists must be unique (the API server checks list types apart from the schema's
    /// validator, which is all a default gets), and an embedded resource's `apiVersion`, `kind`
    /// and `metadata` are not checked against the schema (a default's are).
    of_object: bool,
}

impl<'v> Walk<'_, 'v> {
    fn error(&mut self, kind: ErrorType, at: &At, value: Option<Value>, detail: String) {
        self.errors
            .push(FieldError::new(kind, &at.field, value, detail));
    }

    /// Checks `value` against `schema` at `at`, then its children.
    fn node(
        &mut self,
        schema: &Value,
        at: &At,
        value: &'v Value,
        old: Option<&'v Value>,
        ratchet: Ratchet,
        root: bool,
    ) {
        if self.rules.has(&at.schema) {
            self.cel.push(CelCall {
                at: at.clone(),
                type_name: declared_type(schema),
                value,
                old,
                ratcheted: ratchet == Ratchet::Unchanged,
            });
        }
        if value.is_null() && schema["nullable"] == true {
            return;
        }
        if ratchet == Ratchet::Check && !self.value(schema, at, value) {
            return;
        }
        match value {
            Value::Object(fields) => self.object(schema, at, fields, old, ratchet, root),
            Value::Array(items) => self.array(schema, at, items, old, ratchet),
            _ => {}
        }
    }

    /// The checks of the node itself, in kube-openapi's order (its validators: the junctors,
    /// the string, the number, the list, the enum, the object); false when its type is wrong
    /// (nothing else is checked).
    fn value(&mut self, schema: &Value, at: &At, value: &Value) -> bool {
        if !self.type_fits(schema, at, value) {
            return false;
        }
        for junctor in ["anyOf", "oneOf", "allOf", "not"] {
            self.junctor(schema, junctor, at, value);
        }
        match value {
            Value::Number(_) => self.number(schema, at, value),
            Value::String(text) => self.string(schema, at, text),
            Value::Array(items) => self.bounds(schema, at, items.len(), "items"),
            _ => {}
        }
        if let Some(allowed) = schema["enum"].as_array()
            && !allowed.iter().any(|allowed| same(allowed, value))
        {
            let supported: Vec<String> = allowed
                .iter()
                .map(|allowed| match allowed {
                    Value::String(text) => Value::String(text.clone()).to_string(),
                    other => Value::String(other.to_string()).to_string(),
                })
                .collect();
            let detail = format!("supported values: {}", supported.join(", "));
            self.error(ErrorType::NotSupported, at, Some(value.clone()), detail);
        }
        if let Value::Object(fields) = value {
            self.bounds(schema, at, fields.len(), "properties");
        }
        true
    }

    fn type_fits(&mut self, schema: &Value, at: &At, value: &Value) -> bool {
        if let Some(fits) = self.format_decides_type(schema, at, value) {
            return fits;
        }
        let int_or_string = schema["x-kubernetes-int-or-string"] == true;
        let fits = match schema["type"].as_str() {
            _ if int_or_string => value.is_string() || is_integer(value),
            Some("object") => value.is_object(),
            Some("array") => value.is_array(),
            Some("string") => value.is_string(),
            Some("integer") => is_integer(value),
            Some("number") => value.is_number(),
            Some("boolean") => value.is_boolean(),
            _ => true,
        };
        if !fits {
            let expected = if int_or_string {
                "integer,string"
            } else {
                schema["type"].as_str().unwrap_or_default()
            };
            let actual = type_name(value);
            let detail = format!(
                "{} in body must be of type {expected}: \"{actual}\"",
                at.field
            );
            self.error(
                ErrorType::TypeInvalid,
                at,
                Some(Value::String(actual.to_owned())),
                detail,
            );
        }
        fits
    }

    /// kube-openapi's type validator looks at a string `format` before the type: a value that
    /// is neither a string nor an array, of another type than the schema's, is reported as not
    /// of the format (`must be of type date-time: "int64"`, the value's Go format as the bad
    /// value); a string or an array under a non-numeric schema with a format passes the type
    /// check whatever the type. `None` where the format decides nothing.
    fn format_decides_type(&mut self, schema: &Value, at: &At, value: &Value) -> Option<bool> {
        let format = schema["format"]
            .as_str()
            .filter(|format| super::formats::is_supported(format))?;
        let declared = schema["type"].as_str().unwrap_or_default();
        let numeric = matches!(declared, "integer" | "number");
        match value {
            Value::Null => None,
            Value::String(_) | Value::Array(_) => (!numeric).then_some(true),
            _ if declared == type_name(value)
                || (declared == "integer" && is_integer(value))
                || (declared == "number" && value.is_number()) =>
            {
                None
            }
            _ => {
                // The format of the value as Go decoded it (kube-openapi's `schemaInfoForType`).
                let actual = match value {
                    Value::Number(number) if number.is_i64() || number.is_u64() => "int64",
                    Value::Number(_) => "double",
                    _ => "",
                };
                let detail = format!(
                    "{} in body must be of type {format}: \"{actual}\"",
                    at.field
                );
                let bad = Some(Value::String(actual.to_owned()));
                self.error(ErrorType::TypeInvalid, at, bad, detail);
                Some(false)
            }
        }
    }

    fn number(&mut self, schema: &Value, at: &At, value: &Value) {
        let number = value.as_f64().unwrap_or_default();
        let path = &at.field;
        // kube-openapi's order: the multiple, then the minimum, then the maximum.
        if let Some(factor) = schema["multipleOf"].as_f64()
            && factor > 0.0
            && (number / factor).fract() != 0.0
        {
            let detail = format!(
                "{path} in body should be a multiple of {}",
                go_float(factor)
            );
            self.error(ErrorType::Invalid, at, Some(value.clone()), detail);
        }
        let bounds = [
            ("minimum", "exclusiveMinimum", "greater than"),
            ("maximum", "exclusiveMaximum", "less than"),
        ];
        for (bound, exclusive, relation) in bounds {
            let Some(limit) = schema[bound].as_f64() else {
                continue;
            };
            let exclusive = schema[exclusive] == true;
            let outside = match (relation, exclusive) {
                ("less than", false) => number > limit,
                ("less than", true) => number >= limit,
                (_, false) => number < limit,
                (_, true) => number <= limit,
            };
            if outside {
                let or_equal = if exclusive { "" } else { " or equal to" };
                let detail = format!(
                    "{path} in body should be {relation}{or_equal} {}",
                    go_float(limit)
                );
                self.error(ErrorType::Invalid, at, Some(value.clone()), detail);
            }
        }
    }

    /// The length bounds and the pattern, of which kube-openapi reports the first that fails
    /// only; then the format.
    fn string(&mut self, schema: &Value, at: &At, text: &str) {
        if let Some((kind, detail)) = string_bounds_error(schema, &at.field, text) {
            self.error(kind, at, Some(Value::String(text.to_owned())), detail);
        }
        let path = &at.field;
        if let Some(format) = schema["format"].as_str()
            && !super::formats::is_valid(format, text)
        {
            let detail = format!("{path} in body must be of type {format}: \"{text}\"");
            let value = Some(Value::String(text.to_owned()));
            self.error(ErrorType::TypeInvalid, at, value, detail);
        }
    }

    /// `maxItems` and `minItems`, or `maxProperties` and `minProperties`.
    fn bounds(&mut self, schema: &Value, at: &At, count: usize, what: &str) {
        let (max, min) = match what {
            "items" => ("maxItems", "minItems"),
            _ => ("maxProperties", "minProperties"),
        };
        if let Some(max) = schema[max].as_u64()
            && count as u64 > max
        {
            let detail = format!("must have at most {max} items");
            self.error(ErrorType::TooMany, at, Some(count.into()), detail);
        }
        if let Some(min) = schema[min].as_u64()
            && (count as u64) < min
        {
            let detail = format!("{} in body should have at least {min} {what}", at.field);
            self.error(ErrorType::Invalid, at, Some(count.into()), detail);
        }
    }

    /// `anyOf`, `oneOf`, `allOf` and `not` (value validations only, in structural schemas), as
    /// kube-openapi checks them: each branch against the value, its children too; a junctor
    /// that fails says so (`"spec.n" must validate at least one schema (anyOf)`, the path
    /// quoted, the value shown as `""`) with the errors of its first failing branch (of every
    /// branch for `allOf`, before it).
    fn junctor(&mut self, schema: &Value, junctor: &str, at: &At, value: &Value) {
        let branches: Vec<&Value> = match &schema[junctor] {
            Value::Array(branches) => branches.iter().collect(),
            Value::Object(_) => vec![&schema[junctor]],
            _ => return,
        };
        let results: Vec<Vec<FieldError>> = branches
            .iter()
            .map(|branch| {
                let mut inner = Walk {
                    errors: Vec::new(),
                    cel: Vec::new(),
                    rules: self.rules,
                    of_object: self.of_object,
                };
                inner.node(branch, at, value, None, Ratchet::Check, false);
                inner.errors
            })
            .collect();
        let valid = results.iter().filter(|errors| errors.is_empty()).count();
        let first_failure = results.iter().find(|errors| !errors.is_empty());
        let (failed, shown) = match junctor {
            "anyOf" if valid == 0 => (
                "must validate at least one schema (anyOf)".to_owned(),
                first_failure,
            ),
            "oneOf" if valid == 0 => (
                "must validate one and only one schema (oneOf). Found none valid".to_owned(),
                first_failure,
            ),
            "oneOf" if valid > 1 => (
                format!(
                    "must validate one and only one schema (oneOf). Found {valid} valid alternatives"
                ),
                None,
            ),
            "allOf" => {
                self.errors.extend(results.iter().flatten().cloned());
                if valid == results.len() {
                    return;
                }
                let none = if valid == 0 { ". None validated" } else { "" };
                (format!("must validate all the schemas (allOf){none}"), None)
            }
            "not" if valid == 1 => ("must not validate the schema (not)".to_owned(), None),
            _ => return,
        };
        let detail = format!("{} {failed}", go_quote(&at.field));
        self.error(ErrorType::Invalid, at, Some(Value::from("")), detail);
        self.errors.extend(shown.into_iter().flatten().cloned());
    }

    fn object(
        &mut self,
        schema: &Value,
        at: &At,
        fields: &'v Map<String, Value>,
        old: Option<&'v Value>,
        ratchet: Ratchet,
        root: bool,
    ) {
        let properties = schema["properties"].as_object();
        if ratchet == Ratchet::Check {
            for required in schema["required"].as_array().into_iter().flatten() {
                if let Some(name) = required.as_str()
                    && !fields.contains_key(name)
                {
                    self.error(ErrorType::Required, &at.property(name), None, String::new());
                }
            }
        }
        let additional = schema["additionalProperties"]
            .is_object()
            .then_some(&schema["additionalProperties"]);
        let embedded = self.of_object && schema["x-kubernetes-embedded-resource"] == true;
        for (name, value) in fields {
            if (root || embedded) && TYPE_AND_METADATA.contains(&name.as_str()) {
                continue;
            }
            let old = old.and_then(|old| old.get(name));
            let child_ratchet = descend(ratchet, old, value);
            if let Some(property) = properties.and_then(|properties| properties.get(name)) {
                self.node(
                    property,
                    &at.property(name),
                    value,
                    old,
                    child_ratchet,
                    false,
                );
            } else if let Some(additional) = additional {
                self.node(
                    additional,
                    &at.additional(name),
                    value,
                    old,
                    child_ratchet,
                    false,
                );
            }
        }
    }

    fn array(
        &mut self,
        schema: &Value,
        at: &At,
        items: &'v [Value],
        old: Option<&'v Value>,
        ratchet: Ratchet,
    ) {
        let list_type = schema["x-kubernetes-list-type"].as_str();
        let keys: Vec<&str> = schema["x-kubernetes-list-map-keys"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let old_items = old.and_then(Value::as_array);
        let mut seen: Vec<Value> = Vec::new();
        for (index, item) in items.iter().enumerate() {
            // The API server correlates the items of map lists by key (for `oldSelf` and
            // ratcheting), of set lists by value, and not those of atomic lists.
            let identity = match list_type {
                Some("map") => Some(map_key(item, &keys)),
                Some("set") => Some(item.clone()),
                _ => None,
            };
            if let Some(identity) = identity {
                if self.of_object && ratchet == Ratchet::Check && seen.contains(&identity) {
                    let at = at.item(index);
                    self.error(
                        ErrorType::Duplicate,
                        &at,
                        Some(identity.clone()),
                        String::new(),
                    );
                }
                seen.push(identity);
            }
            let old_item = match list_type {
                Some("map") => old_items.and_then(|old| {
                    let key = map_key(item, &keys);
                    old.iter().find(|old| map_key(old, &keys) == key)
                }),
                Some("set") => old_items.and_then(|old| old.iter().find(|old| *old == item)),
                _ => None,
            };
            let Some(item_schema) = schema.get("items") else {
                continue;
            };
            let item_ratchet = descend(ratchet, old_item, item);
            self.node(
                item_schema,
                &at.item(index),
                item,
                old_item,
                item_ratchet,
                false,
            );
        }
    }
}

/// The first of a string's `maxLength`, `minLength` and `pattern` that `text` (at `path`) fails.
fn string_bounds_error(schema: &Value, path: &str, text: &str) -> Option<(ErrorType, String)> {
    let length = text.chars().count() as u64;
    if let Some(max) = schema["maxLength"].as_u64()
        && length > max
    {
        let bytes = if max == 1 { "byte" } else { "bytes" };
        let detail = format!("may not be more than {max} {bytes}");
        return Some((ErrorType::TooLong, detail));
    }
    if let Some(min) = schema["minLength"].as_u64()
        && length < min
    {
        let detail = format!("{path} in body should be at least {min} chars long");
        return Some((ErrorType::Invalid, detail));
    }
    let pattern = schema["pattern"].as_str()?;
    match regex::Regex::new(pattern) {
        Ok(regex) if regex.is_match(text) => None,
        Ok(_) => Some((
            ErrorType::Invalid,
            format!("{path} in body should match '{pattern}'"),
        )),
        Err(error) => Some((
            ErrorType::Invalid,
            format!("the schema's pattern '{pattern}' is invalid: {error}"),
        )),
    }
}

/// How a child is checked: an unchanged parent has unchanged children.
fn descend(parent: Ratchet, old: Option<&Value>, value: &Value) -> Ratchet {
    match parent {
        Ratchet::Unchanged => Ratchet::Unchanged,
        Ratchet::Check => Ratchet::from(old, value),
    }
}

/// The key of an item of a map list: its key fields, as an object.
fn map_key(item: &Value, keys: &[&str]) -> Value {
    let key: Map<String, Value> = keys
        .iter()
        .filter_map(|key| Some(((*key).to_owned(), item.get(*key)?.clone())))
        .collect();
    Value::Object(key)
}

/// Equal as JSON values, numbers by value (`1` and `1.0` are the same integer).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        _ => a == b,
    }
}

fn is_integer(value: &Value) -> bool {
    match value {
        Value::Number(number) => {
            number.is_i64() || number.is_u64() || number.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => false,
    }
}

/// The OpenAPI type of a JSON value, as kube-openapi names it in its messages.
fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) if is_integer(value) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The type a schema node declares, which the API server shows as the value of a failed CEL
/// rule (`spec: Invalid value: "object": …`).
fn declared_type(schema: &Value) -> &'static str {
    match schema["type"].as_str() {
        Some("object") => "object",
        Some("array") => "array",
        Some("string") => "string",
        Some("integer") => "integer",
        Some("number") => "number",
        Some("boolean") => "boolean",
        _ => "",
    }
}

/// Removes from `value` the fields that the schema node `schema` does not know, as the API
/// server prunes a default (`resource_root`: the node is a resource's root or an embedded
/// resource, whose `apiVersion`, `kind` and `metadata` are kept); returns their paths.
pub(super) fn prune_node(schema: &Value, value: &mut Value, resource_root: bool) -> Vec<String> {
    let mut pruned = Vec::new();
    prune(schema, value, "", resource_root, &mut pruned);
    pruned
}

/// Drops the fields `schema` does not declare, unless it keeps unknown fields.
fn prune(schema: &Value, value: &mut Value, path: &str, root: bool, pruned: &mut Vec<String>) {
    match value {
        Value::Object(fields) => {
            let properties = schema["properties"].as_object();
            let additional = &schema["additionalProperties"];
            let keeps_unknown =
                schema["x-kubernetes-preserve-unknown-fields"] == true || *additional == true;
            let embedded = root || schema["x-kubernetes-embedded-resource"] == true;
            fields.retain(|name, _| {
                let known = properties.is_some_and(|p| p.contains_key(name))
                    || additional.is_object()
                    || keeps_unknown
                    || (embedded && TYPE_AND_METADATA.contains(&name.as_str()));
                if !known {
                    pruned.push(child(path, name));
                }
                known
            });
            for (name, value) in fields.iter_mut() {
                if embedded && name == "metadata" {
                    continue;
                }
                let child_path = child(path, name);
                if let Some(property) = properties.and_then(|p| p.get(name)) {
                    prune(property, value, &child_path, false, pruned);
                } else if additional.is_object() {
                    prune(additional, value, &child_path, false, pruned);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (index, item) in items.iter_mut().enumerate() {
                    prune(
                        item_schema,
                        item,
                        &format!("{path}[{index}]"),
                        false,
                        pruned,
                    );
                }
            }
        }
        _ => {}
    }
}

/// Sets the defaults of `schema` in `value`, recursively (into defaults just set too).
fn default(schema: &Value, value: &mut Value, root: bool) {
    match value {
        Value::Object(fields) => {
            let properties = schema["properties"].as_object();
            for (name, property) in properties.into_iter().flatten() {
                let Some(default) = property.get("default") else {
                    continue;
                };
                let missing = match fields.get(name) {
                    None => true,
                    Some(Value::Null) => property["nullable"] != true,
                    Some(_) => false,
                };
                if missing {
                    fields.insert(name.clone(), default.clone());
                }
            }
            let additional = &schema["additionalProperties"];
            for (name, value) in fields.iter_mut() {
                if root && name == "metadata" {
                    continue;
                }
                if let Some(property) = properties.and_then(|p| p.get(name)) {
                    default(property, value, false);
                } else if additional.is_object() {
                    default(additional, value, false);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for item in items {
                    default(item_schema, item, false);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> Schema {
        Schema::new(json!({
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "required": ["size"],
                    "properties": {
                        "size": { "type": "integer", "minimum": 1, "maximum": 3 },
                        "mode": { "type": "string", "enum": ["fast", "slow"], "default": "fast" },
                        "limits": {
                            "type": "object",
                            "default": {},
                            "properties": { "cpu": { "type": "string", "default": "1" } },
                        },
                        "free": { "type": "object", "x-kubernetes-preserve-unknown-fields": true },
                        "labels": { "type": "object", "additionalProperties": { "type": "string", "maxLength": 3 } },
                    },
                },
            },
        }))
        .unwrap()
    }

    fn messages(errors: &[FieldError]) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn unknown_fields_are_pruned_but_where_the_schema_keeps_them() {
        let mut object = json!({
            "apiVersion": "v", "kind": "K", "metadata": { "name": "a", "whatever": 1 },
            "spec": { "size": 1, "color": "red", "free": { "any": { "thing": 1 } } },
            "extra": true,
        });
        let pruned = schema().prune(&mut object);
        assert_eq!(pruned, ["extra", "spec.color"]);
        assert_eq!(object["spec"]["free"]["any"]["thing"], 1);
        assert_eq!(object["metadata"]["whatever"], 1);
    }

    #[test]
    fn defaults_are_set_within_defaults_too() {
        let mut object = json!({ "spec": { "size": 1, "mode": null } });
        schema().default(&mut object);
        assert_eq!(
            object["spec"],
            json!({ "size": 1, "mode": "fast", "limits": { "cpu": "1" } })
        );
    }

    #[test]
    fn errors_are_worded_as_the_api_server_words_them() {
        let schema = schema();
        let check = |spec: Value| messages(&schema.validate(&json!({ "spec": spec }), None));
        assert_eq!(
            check(json!({ "size": "two" })),
            [
                r#"spec.size: Invalid value: "string": spec.size in body must be of type integer: "string""#
            ]
        );
        assert_eq!(
            check(json!({ "size": 10 })),
            ["spec.size: Invalid value: 10: spec.size in body should be less than or equal to 3"]
        );
        assert_eq!(check(json!({})), ["spec.size: Required value"]);
        assert_eq!(
            check(json!({ "size": 1, "mode": "slowest" })),
            [r#"spec.mode: Unsupported value: "slowest": supported values: "fast", "slow""#]
        );
        assert_eq!(
            check(json!({ "size": 1, "labels": { "a": "long" } })),
            ["spec.labels.a: Too long: may not be more than 3 bytes"]
        );
        assert!(check(json!({ "size": 2, "labels": { "a": "ok" } })).is_empty());
    }

    #[test]
    fn junctors_and_bounds_are_reported_as_kube_openapi_reports_them() {
        let check = |node: Value, value: Value| {
            let schema = Schema::new(json!({ "type": "object", "properties": { "n": node } }));
            messages(&schema.unwrap().validate(&json!({ "n": value }), None))
        };
        let outside = json!([{ "maximum": 2 }, { "minimum": 10 }]);
        assert_eq!(
            check(json!({ "type": "integer", "anyOf": outside }), json!(5)),
            [
                r#"n: Invalid value: "": "n" must validate at least one schema (anyOf)"#,
                "n: Invalid value: 5: n in body should be less than or equal to 2",
            ]
        );
        assert_eq!(
            check(
                json!({ "type": "integer", "allOf": [{ "maximum": 2 }, { "minimum": 1 }] }),
                json!(5)
            ),
            [
                "n: Invalid value: 5: n in body should be less than or equal to 2",
                r#"n: Invalid value: "": "n" must validate all the schemas (allOf)"#,
            ]
        );
        assert_eq!(
            check(
                json!({ "type": "integer", "not": { "maximum": 10 } }),
                json!(5)
            ),
            [r#"n: Invalid value: "": "n" must not validate the schema (not)"#]
        );
        // A string's first failing bound only; a number's multiple, minimum, maximum in turn.
        assert_eq!(
            check(
                json!({ "type": "string", "maxLength": 1, "pattern": "^z" }),
                json!("ab")
            ),
            ["n: Too long: may not be more than 1 byte"]
        );
        assert_eq!(
            check(
                json!({ "type": "number", "multipleOf": 2, "minimum": 10, "maximum": 5 }),
                json!(7)
            ),
            [
                "n: Invalid value: 7: n in body should be a multiple of 2",
                "n: Invalid value: 7: n in body should be greater than or equal to 10",
                "n: Invalid value: 7: n in body should be less than or equal to 5",
            ]
        );
    }

    #[test]
    fn unchanged_fields_are_not_checked_again() {
        let schema = schema();
        let old = json!({ "spec": { "size": 10 } });
        let relabelled = json!({ "spec": { "size": 10, "labels": { "a": "b" } } });
        assert!(schema.validate(&relabelled, Some(&old)).is_empty());
        let resized = json!({ "spec": { "size": 11 } });
        assert_eq!(schema.validate(&resized, Some(&old)).len(), 1);
    }
}
