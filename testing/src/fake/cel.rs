//! The CEL rules of a schema (`x-kubernetes-validations`), compiled and evaluated by kube-cel
//! (kube-rs's CEL with Kubernetes' function libraries), one schema node at a time, so that the
//! schema walk decides what a rule sees: `oldSelf` correlated as the API server correlates it
//! (by property, by map key), and ratcheting (a rule without `oldSelf` is not evaluated again on
//! a node that an update left unchanged).

use std::collections::HashMap;

use kube_cel::CompiledSchema;
use serde_json::{Value, json};

use super::errors::{ErrorType, FieldError};

/// The compiled rules of a schema, by the JSON pointer of the node that declares them.
#[derive(Default)]
pub(super) struct Rules {
    by_node: HashMap<String, Vec<Rule>>,
}

/// One rule, compiled on a copy of its node without the rules of the nodes below (those are
/// evaluated at their own nodes), so that kube-cel converts `self` with the node's formats.
struct Rule {
    transition: bool,
    compiled: CompiledSchema,
}

impl Rules {
    /// Compiles every rule of `schema`; an error names the first rule that does not compile,
    /// as the API server refuses a CRD with such a rule.
    pub(super) fn compile(schema: &Value) -> Result<Self, String> {
        let mut rules = Rules::default();
        rules.compile_node(schema, "", "")?;
        Ok(rules)
    }

    fn compile_node(&mut self, schema: &Value, pointer: &str, field: &str) -> Result<(), String> {
        if let Some(declared) = schema["x-kubernetes-validations"].as_array() {
            let mut node = schema.clone();
            strip_rules(&mut node);
            let mut compiled_rules = Vec::new();
            for (index, rule) in declared.iter().enumerate() {
                node["x-kubernetes-validations"] = json!([rule]);
                let compiled = kube_cel::compile_schema(&node);
                let transition = match compiled.validations.first() {
                    Some(Ok(result)) => result.is_transition_rule,
                    Some(Err(error)) => {
                        let at = if field.is_empty() { "<root>" } else { field };
                        return Err(format!("{at}: x-kubernetes-validations[{index}]: {error}"));
                    }
                    None => continue,
                };
                compiled_rules.push(Rule {
                    transition,
                    compiled,
                });
            }
            self.by_node.insert(pointer.to_owned(), compiled_rules);
        }
        for (name, property) in schema["properties"].as_object().into_iter().flatten() {
            let pointer = format!(
                "{pointer}/properties/{}",
                name.replace('~', "~0").replace('/', "~1")
            );
            let field = if field.is_empty() {
                name.clone()
            } else {
                format!("{field}.{name}")
            };
            self.compile_node(property, &pointer, &field)?;
        }
        if schema["items"].is_object() {
            let field = format!("{field}[*]");
            self.compile_node(&schema["items"], &format!("{pointer}/items"), &field)?;
        }
        if schema["additionalProperties"].is_object() {
            let pointer = format!("{pointer}/additionalProperties");
            self.compile_node(
                &schema["additionalProperties"],
                &pointer,
                &format!("{field}[*]"),
            )?;
        }
        Ok(())
    }

    /// Whether the node at `pointer` has rules.
    pub(super) fn has(&self, pointer: &str) -> bool {
        self.by_node.contains_key(pointer)
    }

    /// Evaluates the rules of the node at `pointer` on `value` (at the field path `field`, of
    /// the schema type `type_name`), with `old` as `oldSelf`. A `ratcheted` node (unchanged by
    /// an update) only runs the rules that compare with `oldSelf`.
    pub(super) fn evaluate(
        &self,
        pointer: &str,
        field: &str,
        type_name: &str,
        value: &Value,
        old: Option<&Value>,
        ratcheted: bool,
    ) -> Vec<FieldError> {
        let mut errors = Vec::new();
        for rule in self.by_node.get(pointer).into_iter().flatten() {
            if ratcheted && !rule.transition {
                continue;
            }
            let Err(failures) = kube_cel::validate_compiled(&rule.compiled, value, old) else {
                continue;
            };
            for failure in failures {
                errors.push(field_error(field, type_name, &failure));
            }
        }
        errors
    }
}

/// Removes the rules of the schema node `schema` and of every node below it.
pub(super) fn strip_rules(schema: &mut Value) {
    let Some(node) = schema.as_object_mut() else {
        return;
    };
    node.remove("x-kubernetes-validations");
    if let Some(properties) = node.get_mut("properties").and_then(Value::as_object_mut) {
        properties.values_mut().for_each(strip_rules);
    }
    for below in ["items", "additionalProperties", "not"] {
        if let Some(below) = node.get_mut(below) {
            strip_rules(below);
        }
    }
    for junctor in ["allOf", "anyOf", "oneOf"] {
        if let Some(branches) = node.get_mut(junctor).and_then(Value::as_array_mut) {
            branches.iter_mut().for_each(strip_rules);
        }
    }
}

/// A failed rule as the API server reports it: `Invalid value: "<schema type>": <message>` at the
/// node (or at its `fieldPath`), or the error its `reason` asks for.
fn field_error(node: &str, type_name: &str, failure: &kube_cel::ValidationError) -> FieldError {
    let field = match failure.field_path.strip_prefix('.') {
        Some(relative) if node.is_empty() => relative.to_owned(),
        Some(_) => format!("{node}{}", failure.field_path),
        None if failure.field_path.is_empty() => node.to_owned(),
        None if node.is_empty() => failure.field_path.clone(),
        None => format!("{node}.{}", failure.field_path),
    };
    let value = Some(Value::String(type_name.to_owned()));
    let message = failure.message.clone();
    match failure.reason.as_deref() {
        Some("FieldValueForbidden") => FieldError::new(ErrorType::Forbidden, &field, None, message),
        Some("FieldValueRequired") => FieldError::new(ErrorType::Required, &field, None, message),
        Some("FieldValueDuplicate") => {
            FieldError::new(ErrorType::Duplicate, &field, value, String::new())
        }
        _ => FieldError::new(ErrorType::Invalid, &field, value, message),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rules() -> Rules {
        Rules::compile(&json!({
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "x-kubernetes-validations": [
                        { "rule": "self.min <= self.max", "message": "min must not exceed max" },
                        {
                            "rule": "self.max >= oldSelf.max",
                            "messageExpression": "'max may not shrink from ' + string(oldSelf.max)",
                        },
                    ],
                    "properties": {
                        "min": { "type": "integer" },
                        "max": { "type": "integer" },
                    },
                },
            },
        }))
        .unwrap()
    }

    fn evaluate(rules: &Rules, value: Value, old: Option<Value>, ratcheted: bool) -> Vec<String> {
        let errors = rules.evaluate(
            "/properties/spec",
            "spec",
            "object",
            &value,
            old.as_ref(),
            ratcheted,
        );
        errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn rules_and_transition_rules() {
        let rules = rules();
        assert!(rules.has("/properties/spec"));
        assert!(!rules.has(""));
        assert_eq!(
            evaluate(&rules, json!({ "min": 3, "max": 2 }), None, false),
            [r#"spec: Invalid value: "object": min must not exceed max"#]
        );
        // The transition rule needs an old object: only on updates.
        assert!(evaluate(&rules, json!({ "min": 1, "max": 2 }), None, false).is_empty());
        assert_eq!(
            evaluate(
                &rules,
                json!({ "min": 1, "max": 2 }),
                Some(json!({ "min": 1, "max": 5 })),
                false
            ),
            [r#"spec: Invalid value: "object": max may not shrink from 5"#]
        );
        // Unchanged: only transition rules run.
        let same = json!({ "min": 3, "max": 2 });
        assert!(evaluate(&rules, same.clone(), Some(same), true).is_empty());
    }

    #[test]
    fn a_rule_that_does_not_compile_is_refused() {
        let schema = json!({
            "type": "object",
            "properties": { "spec": {
                "type": "object",
                "x-kubernetes-validations": [{ "rule": "self.size >" }],
            } },
        });
        let error = Rules::compile(&schema).err().unwrap();
        assert!(
            error.starts_with("spec: x-kubernetes-validations[0]: "),
            "{error}"
        );
    }
}
