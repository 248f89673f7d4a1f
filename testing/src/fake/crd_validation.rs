//! The API server's validation of a CustomResourceDefinition (apiextensions'
//! `ValidateCustomResourceDefinition`), in its order and words: the name (`<plural>.<group>`),
//! the group and scope, the versions (names, one storage version, schemas required), the names,
//! and each schema's defaults (`crd_defaults.rs`) and CEL rules (rules and message expressions
//! that do not compile or name fields the schema does not have, and rules that cost too much:
//! `cel_check.rs`).
//!
//! The API server validates a CRD in its internal form, where a schema every version shares is
//! `spec.validation`: errors about it are named so (`spec.validation.openAPIV3Schema.
//! properties[spec].x-kubernetes-validations[0].rule`), and values are printed as Go prints the
//! internal types (`apiextensions.ValidationRule{Rule:"…", …}`).

use serde_json::Value;

use super::cel_check::{self, Cost, RuleCost};
use super::crd_defaults;
use super::errors::{ErrorType, FieldError, go_quote};
use super::names;

/// The largest estimated cost of one rule, and of all the rules of a CRD's schema.
const RULE_COST_LIMIT: u64 = 10_000_000;
const TOTAL_COST_LIMIT: u64 = 100_000_000;

fn invalid(field: &str, value: &str, detail: impl Into<String>) -> FieldError {
    FieldError::new(ErrorType::Invalid, field, Some(Value::from(value)), detail)
}

fn required(field: &str, detail: &str) -> FieldError {
    FieldError::new(ErrorType::Required, field, None, detail)
}

fn versions(crd: &Value) -> &[Value] {
    crd["spec"]["versions"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// Whether every version has the same schema: the internal form keeps it once, as
/// `spec.validation`.
fn shared_schema(crd: &Value) -> Option<&Value> {
    let versions = versions(crd);
    let first = versions.first()?.get("schema").filter(|s| !s.is_null())?;
    versions
        .iter()
        .all(|version| version.get("schema") == Some(first))
        .then_some(first)
}

/// The errors of the CRD `crd` (`old` before an update) beyond its metadata (checked as every
/// object's, with [`name_errors`] besides): its spec, then the stored versions it will have.
pub(super) fn validate(crd: &Value, old: Option<&Value>) -> Vec<FieldError> {
    // A CRD that had defaults with unknown fields may keep them (they were allowed once).
    let require_pruned = !old.is_some_and(|old| {
        versions(old)
            .iter()
            .any(|version| crd_defaults::has_unpruned(&version["schema"]["openAPIV3Schema"]))
    });
    let mut errors = spec_errors(crd, require_pruned);
    errors.extend(stored_versions_errors(crd, old));
    errors
}

/// The versions stored in etcd once `crd` is written: those of `old`, or for a new CRD its
/// first storage version; and its storage version in any case.
fn stored_versions_errors(crd: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let storage: Vec<&str> = versions(crd)
        .iter()
        .filter(|v| v["storage"] == true)
        .filter_map(|v| v["name"].as_str())
        .collect();
    let mut stored: Vec<&str> = match old {
        Some(old) => old["status"]["storedVersions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect(),
        None => storage.first().copied().into_iter().collect(),
    };
    if old.is_some() && storage.len() == 1 && !stored.contains(&storage[0]) {
        stored.push(storage[0]);
    }
    let field = "status.storedVersions";
    let quoted: Vec<String> = stored.iter().map(|v| go_quote(v)).collect();
    let go_stored = format!("[]string{{{}}}", quoted.join(", "));
    if stored.is_empty() {
        return vec![FieldError::go(
            ErrorType::Invalid,
            field,
            go_stored,
            "must have at least one stored version",
        )];
    }
    let mut errors = Vec::new();
    for version in &storage {
        if !stored.contains(version) {
            let detail = format!("must have the storage version {version}");
            errors.push(FieldError::go(
                ErrorType::Invalid,
                field,
                go_stored.clone(),
                detail,
            ));
        }
    }
    let names: Vec<&str> = versions(crd)
        .iter()
        .filter_map(|v| v["name"].as_str())
        .collect();
    for (index, version) in stored.iter().enumerate() {
        if !names.contains(version) {
            errors.push(invalid(
                &format!("{field}[{index}]"),
                version,
                "must appear in spec.versions",
            ));
        }
    }
    errors
}

/// The errors of the CRD's spec (`require_pruned`: defaults must not have unknown fields).
fn spec_errors(crd: &Value, require_pruned: bool) -> Vec<FieldError> {
    let spec = &crd["spec"];
    let mut errors = Vec::new();
    errors.extend(group_errors(spec["group"].as_str().unwrap_or_default()));
    match spec["scope"].as_str().unwrap_or_default() {
        "" => errors.push(required("spec.scope", "")),
        "Cluster" | "Namespaced" => {}
        other => errors.push(FieldError::new(
            ErrorType::NotSupported,
            "spec.scope",
            Some(Value::from(other)),
            "supported values: \"Cluster\", \"Namespaced\"",
        )),
    }
    let shared = shared_schema(crd);
    if shared.is_none() {
        for (index, version) in versions(crd).iter().enumerate() {
            if version["schema"]["openAPIV3Schema"].is_null() {
                let field = format!("spec.versions[{index}].schema.openAPIV3Schema");
                errors.push(required(&field, "schemas are required"));
            }
        }
    }
    errors.extend(version_errors(crd, shared.is_none(), require_pruned));
    errors.extend(names_errors(&spec["names"]));
    if let Some(schema) = shared {
        errors.extend(schema_errors(
            &schema["openAPIV3Schema"],
            "spec.validation.openAPIV3Schema",
            require_pruned,
        ));
    }
    errors
}

/// `metadata.name` must be `<plural>.<group>` (besides a DNS subdomain).
pub(super) fn name_errors(crd: &Value) -> Vec<FieldError> {
    let name = crd["metadata"]["name"].as_str().unwrap_or_default();
    let spec = &crd["spec"];
    let expected = format!(
        "{}.{}",
        spec["names"]["plural"].as_str().unwrap_or_default(),
        spec["group"].as_str().unwrap_or_default()
    );
    if name.is_empty() || name == expected {
        return Vec::new();
    }
    vec![invalid(
        "metadata.name",
        name,
        "must be spec.names.plural+\".\"+spec.group",
    )]
}

fn group_errors(group: &str) -> Vec<FieldError> {
    if group.is_empty() {
        return vec![required("spec.group", "")];
    }
    let errors = names::dns1123_subdomain(group);
    if !errors.is_empty() {
        return vec![invalid("spec.group", group, errors.join(","))];
    }
    if !group.contains('.') {
        return vec![invalid(
            "spec.group",
            group,
            "should be a domain with at least one dot",
        )];
    }
    Vec::new()
}

fn version_errors(crd: &Value, per_version_schemas: bool, require_pruned: bool) -> Vec<FieldError> {
    let versions = versions(crd);
    let mut errors = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    let mut unique = true;
    for (index, version) in versions.iter().enumerate() {
        let name = version["name"].as_str().unwrap_or_default();
        unique &= !seen.contains(&name);
        seen.push(name);
        let found = names::dns1035_label(name);
        if !found.is_empty() {
            errors.push(invalid(
                &format!("spec.versions[{index}].name"),
                name,
                found.join(","),
            ));
        }
        if per_version_schemas && !version["schema"]["openAPIV3Schema"].is_null() {
            let at = format!("spec.versions[{index}].schema.openAPIV3Schema");
            let schema = &version["schema"]["openAPIV3Schema"];
            errors.extend(schema_errors(schema, &at, require_pruned));
        }
    }
    let go_versions = || go_versions(crd, per_version_schemas);
    if !unique {
        errors.push(FieldError::go(
            ErrorType::Invalid,
            "spec.versions",
            go_versions(),
            "must contain unique version names",
        ));
    }
    if versions.iter().filter(|v| v["storage"] == true).count() != 1 {
        errors.push(FieldError::go(
            ErrorType::Invalid,
            "spec.versions",
            go_versions(),
            "must have exactly one version marked as storage version",
        ));
    }
    errors
}

/// The versions as Go prints the internal type (`%#v`): a schema every version shares is not
/// theirs but `spec.validation`'s.
fn go_versions(crd: &Value, per_version_schemas: bool) -> String {
    let pointer = |present: bool, go_type: &str| {
        if present {
            format!("(*{go_type})(0xc000000000)")
        } else {
            format!("(*{go_type})(nil)")
        }
    };
    let items: Vec<String> = versions(crd)
        .iter()
        .map(|version| {
            format!(
                "apiextensions.CustomResourceDefinitionVersion{{Name:{}, Served:{}, Storage:{}, Deprecated:{}, DeprecationWarning:{}, Schema:{}, Subresources:{}, AdditionalPrinterColumns:[]apiextensions.CustomResourceColumnDefinition(nil)}}",
                go_quote(version["name"].as_str().unwrap_or_default()),
                version["served"] == true,
                version["storage"] == true,
                version["deprecated"] == true,
                pointer(version["deprecationWarning"].is_string(), "string"),
                pointer(per_version_schemas && !version["schema"].is_null(), "apiextensions.CustomResourceValidation"),
                pointer(false, "apiextensions.CustomResourceSubresources"),
            )
        })
        .collect();
    format!(
        "[]apiextensions.CustomResourceDefinitionVersion{{{}}}",
        items.join(", ")
    )
}

fn names_errors(names: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let text = |key: &str| names[key].as_str().unwrap_or_default();
    for key in ["plural", "singular", "kind", "listKind"] {
        if text(key).is_empty() {
            errors.push(required(&format!("spec.names.{key}"), ""));
        }
    }
    for key in ["plural", "singular"] {
        let found = names::dns1035_label(text(key));
        if !text(key).is_empty() && !found.is_empty() {
            errors.push(invalid(
                &format!("spec.names.{key}"),
                text(key),
                found.join(","),
            ));
        }
    }
    for key in ["kind", "listKind"] {
        let found = names::dns1035_label(&text(key).to_lowercase());
        if !text(key).is_empty() && !found.is_empty() {
            let detail = format!(
                "may have mixed case, but should otherwise match: {}",
                found.join(",")
            );
            errors.push(invalid(&format!("spec.names.{key}"), text(key), detail));
        }
    }
    if !text("kind").is_empty() && text("kind") == text("listKind") {
        errors.push(invalid(
            "spec.names.listKind",
            text("listKind"),
            "kind and listKind may not be the same",
        ));
    }
    errors
}

/// The errors of a schema: its defaults (`crd_defaults.rs`), the defaults it forbids, then,
/// if its defaults are valid (the API server checks the rules of such schemas only), its CEL
/// rules, node by node, and their cost in all.
fn schema_errors(schema: &Value, at: &str, require_pruned: bool) -> Vec<FieldError> {
    let mut errors = crd_defaults::errors(schema, at, require_pruned);
    let defaults_valid = errors.is_empty();
    errors.extend(crd_defaults::forbidden(schema, at));
    if !defaults_valid {
        return errors;
    }
    let mut costs = Vec::new();
    node_errors(schema, at, Cost::ONE, &mut errors, &mut costs);
    let total: u64 = costs
        .iter()
        .fold(0, |total: u64, cost| total.saturating_add(cost.cost));
    if total > TOTAL_COST_LIMIT {
        costs.sort_by_key(|rule| std::cmp::Reverse(rule.cost));
        for expensive in costs
            .iter()
            .take(4)
            .filter(|c| c.cost >= TOTAL_COST_LIMIT / 100)
        {
            errors.push(FieldError::new(
                ErrorType::Forbidden,
                &expensive.path,
                None,
                "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
            ));
        }
        errors.push(FieldError::new(
            ErrorType::Forbidden,
            at,
            None,
            cost_message(
                "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
                total,
                TOTAL_COST_LIMIT,
            ),
        ));
    }
    errors
}

/// `estimated rule cost exceeds budget by factor of 1.5x (try simplifying …)`.
fn cost_message(what: &str, cost: u64, limit: u64) -> String {
    let factor = cost as f64 / limit as f64;
    let factor = if factor > 100.0 {
        "more than 100x".to_owned()
    } else if factor < 1.5 {
        format!("{factor:.6}x")
    } else {
        format!("{factor:.1}x")
    };
    format!(
        "{what} exceeds budget by factor of {factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
}

/// The errors of the rules of `node` (at `at`) and of the nodes below, each node evaluated
/// `cardinality` times at most.
fn node_errors(
    node: &Value,
    at: &str,
    cardinality: Cost,
    errors: &mut Vec<FieldError>,
    costs: &mut Vec<RuleCost>,
) {
    for (index, rule) in node["x-kubernetes-validations"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let path = format!("{at}.x-kubernetes-validations[{index}]");
        errors.extend(rule_errors(node, rule, &path, cardinality, costs));
    }
    let mut properties: Vec<(&String, &Value)> = node["properties"]
        .as_object()
        .into_iter()
        .flatten()
        .collect();
    properties.sort_by_key(|(name, _)| *name);
    for (name, property) in properties {
        let at = format!("{at}.properties[{name}]");
        node_errors(property, &at, cardinality, errors, costs);
    }
    if node["items"].is_object() {
        let each = cardinality.times(cel_check::max_items(node));
        node_errors(&node["items"], &format!("{at}.items"), each, errors, costs);
    }
    if node["additionalProperties"].is_object() {
        let each = cardinality.times(cel_check::max_properties(node));
        let at = format!("{at}.additionalProperties");
        node_errors(&node["additionalProperties"], &at, each, errors, costs);
    }
}

/// The errors of one rule: what the API server checks of its text, then what compiling it
/// finds, then its cost.
fn rule_errors(
    node: &Value,
    rule: &Value,
    path: &str,
    cardinality: Cost,
    costs: &mut Vec<RuleCost>,
) -> Vec<FieldError> {
    let text = |key: &str| rule[key].as_str().unwrap_or_default();
    if text("rule").trim().is_empty() {
        return vec![required(&format!("{path}.rule"), "rule is not specified")];
    }
    let mut errors = Vec::new();
    let go_rule = go_validation_rule(rule);
    match cel_check::check(text("rule"), node) {
        Err(error) => errors.push(FieldError::go(
            ErrorType::Invalid,
            &format!("{path}.rule"),
            go_rule.clone(),
            format!("compilation failed: {error}"),
        )),
        Ok(cost) => {
            let cost = cost.times(cardinality.value()).value();
            if cost > RULE_COST_LIMIT {
                errors.push(FieldError::new(
                    ErrorType::Forbidden,
                    &format!("{path}.rule"),
                    None,
                    cost_message("estimated rule cost", cost, RULE_COST_LIMIT),
                ));
            }
            costs.push(RuleCost {
                path: format!("{path}.rule"),
                cost,
            });
        }
    }
    if !text("messageExpression").is_empty()
        && let Err(error) = cel_check::check(text("messageExpression"), node)
    {
        errors.push(FieldError::go(
            ErrorType::Invalid,
            &format!("{path}.messageExpression"),
            go_rule,
            format!("messageExpression compilation failed: {error}"),
        ));
    }
    errors
}

/// A rule as Go prints the internal `ValidationRule` with `%#v`.
fn go_validation_rule(rule: &Value) -> String {
    let text = |key: &str| go_quote(rule[key].as_str().unwrap_or_default());
    let reason = if rule["reason"].is_string() {
        "(*apiextensions.FieldValueErrorReason)(0xc000000000)"
    } else {
        "(*apiextensions.FieldValueErrorReason)(nil)"
    };
    format!(
        "apiextensions.ValidationRule{{Rule:{}, Message:{}, MessageExpression:{}, Reason:{reason}, FieldPath:{}}}",
        text("rule"),
        text("message"),
        text("messageExpression"),
        text("fieldPath"),
    )
}
