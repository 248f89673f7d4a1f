//! What the API server finds when it compiles a CRD's CEL rule that kube-cel (which parses and
//! evaluates, but does not type-check) does not: a field the schema does not have
//! (`undefined field 'colour'`, at the position cel-go reports it), and the rule's estimated
//! cost, which must stay within the API server's budget.
//!
//! The cost is an estimate after cel-go's: every evaluation step costs 1, string operations
//! cost a tenth of the strings' length, and a macro over a list or a map (`all`, `exists`,
//! `map`, `filter`) costs its body times the largest number of items the schema allows: its
//! `maxItems`, `maxProperties` and `maxLength`, or, without them, as many as the largest request
//! (3 MiB) could hold. cel-go's finer costs of single functions are not reproduced: a rule that
//! is far from the budget is judged as the API server judges it; one close to it may not be,
//! and the factor the message gives for a rule within 100 times the budget may differ.

use std::collections::HashMap;

use kube_cel::cel::Program;
use kube_cel::cel::common::ast::{Expr, IdedExpr};
use serde_json::Value;

/// The largest request the API server takes: what bounds a list or a string that the schema
/// does not.
const MAX_REQUEST_BYTES: u64 = 3 * 1024 * 1024;

/// An estimated cost (saturating).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Cost(u64);

impl Cost {
    pub(super) const ONE: Cost = Cost(1);

    pub(super) fn times(self, factor: u64) -> Cost {
        Cost(self.0.saturating_mul(factor.max(1)))
    }

    fn plus(self, other: Cost) -> Cost {
        Cost(self.0.saturating_add(other.0))
    }

    pub(super) fn value(self) -> u64 {
        self.0
    }
}

/// The cost of one rule, where it is.
pub(super) struct RuleCost {
    pub(super) path: String,
    pub(super) cost: u64,
}

/// The most items a list schema allows, or a request could hold.
pub(super) fn max_items(list: &Value) -> u64 {
    list["maxItems"]
        .as_u64()
        .unwrap_or_else(|| (MAX_REQUEST_BYTES - 2) / (min_size(&list["items"]) + 1))
}

/// The most entries a map schema allows, or a request could hold.
pub(super) fn max_properties(map: &Value) -> u64 {
    map["maxProperties"]
        .as_u64()
        .unwrap_or_else(|| (MAX_REQUEST_BYTES - 2) / (min_size(&map["additionalProperties"]) + 6))
}

fn max_length(string: &Value) -> u64 {
    string["maxLength"]
        .as_u64()
        .unwrap_or(MAX_REQUEST_BYTES - 2)
}

/// The fewest bytes a value of `schema` takes in JSON.
fn min_size(schema: &Value) -> u64 {
    match schema["type"].as_str() {
        Some("string") => 2,
        Some("boolean") => 4,
        Some("object" | "array") => 2,
        _ => 1,
    }
}

/// Compiles `source` as a rule of the schema node `node`: cel-go's error, or the rule's
/// estimated cost.
pub(super) fn check(source: &str, node: &Value) -> Result<Cost, String> {
    let program = Program::compile(source).map_err(|error| {
        // cel-go puts a space before the bar of the snippet lines.
        error.to_string().replace("\n| ", "\n | ")
    })?;
    let mut checker = Checker {
        source,
        scope: HashMap::new(),
        errors: Vec::new(),
    };
    checker.scope.insert("self".to_owned(), Type::Schema(node));
    checker
        .scope
        .insert("oldSelf".to_owned(), Type::Schema(node));
    let (_, cost) = checker.walk(program.expression());
    match checker.errors.as_slice() {
        [] => Ok(cost),
        errors => Err(errors.join("\n")),
    }
}

/// What the checker knows of an expression's value.
#[derive(Clone, Copy, Debug)]
enum Type<'a> {
    /// A value of this schema node.
    Schema(&'a Value),
    /// Anything.
    Dyn,
}

struct Checker<'s, 'v> {
    source: &'s str,
    scope: HashMap<String, Type<'v>>,
    errors: Vec<String>,
}

impl<'v> Checker<'_, 'v> {
    /// The type and cost of `expr`.
    fn walk(&mut self, expr: &IdedExpr) -> (Type<'v>, Cost) {
        match &expr.expr {
            Expr::Ident(name) => (
                self.scope.get(name).copied().unwrap_or(Type::Dyn),
                Cost::ONE,
            ),
            Expr::Select(select) => {
                let (operand, cost) = self.walk(&select.operand);
                (self.select(operand, &select.field), cost.plus(Cost::ONE))
            }
            Expr::Call(call) => {
                let mut cost = Cost::ONE;
                let mut types = Vec::new();
                for argument in call.target.iter().map(|t| &**t).chain(&call.args) {
                    let (ty, argument_cost) = self.walk(argument);
                    cost = cost.plus(argument_cost);
                    types.push(ty);
                }
                let ty = match (call.func_name.as_str(), types.as_slice()) {
                    ("_[_]", [Type::Schema(container), ..]) => element(container),
                    _ => Type::Dyn,
                };
                (ty, cost.plus(string_cost(&types)))
            }
            Expr::Comprehension(comprehension) => self.comprehension(comprehension),
            Expr::List(list) => list
                .elements
                .iter()
                .fold((Type::Dyn, Cost(0)), |(ty, cost), e| {
                    (ty, cost.plus(self.walk(e).1))
                }),
            _ => (Type::Dyn, Cost(0)),
        }
    }

    fn comprehension(
        &mut self,
        comprehension: &kube_cel::cel::common::ast::ComprehensionExpr,
    ) -> (Type<'v>, Cost) {
        let (range, range_cost) = self.walk(&comprehension.iter_range);
        let (item, count) = match range {
            Type::Schema(schema) if schema["type"] == "array" => {
                (element(schema), max_items(schema))
            }
            Type::Schema(schema) if schema["type"] == "object" => {
                (Type::Dyn, max_properties(schema))
            }
            _ => (Type::Dyn, 1),
        };
        let shadowed = self.scope.insert(comprehension.iter_var.clone(), item);
        let (_, init) = self.walk(&comprehension.accu_init);
        let (_, condition) = self.walk(&comprehension.loop_cond);
        let (_, step) = self.walk(&comprehension.loop_step);
        let (_, result) = self.walk(&comprehension.result);
        match shadowed {
            Some(ty) => self.scope.insert(comprehension.iter_var.clone(), ty),
            None => self.scope.remove(&comprehension.iter_var),
        };
        let cost = range_cost
            .plus(init)
            .plus(condition.plus(step).times(count))
            .plus(result);
        (Type::Dyn, cost)
    }

    /// The type of `operand.field`; a field an object schema does not have is an error.
    fn select(&mut self, operand: Type<'v>, field: &str) -> Type<'v> {
        let Type::Schema(schema) = operand else {
            return Type::Dyn;
        };
        if let Some(property) = schema["properties"].get(field) {
            return Type::Schema(property);
        }
        if schema["additionalProperties"].is_object() {
            return Type::Schema(&schema["additionalProperties"]);
        }
        let open = schema["x-kubernetes-preserve-unknown-fields"] == true
            || schema["additionalProperties"] == true
            || schema["x-kubernetes-embedded-resource"] == true
            || schema["type"] != "object";
        if !open {
            self.undefined(field);
        }
        Type::Dyn
    }

    /// cel-go's `undefined field` error, at the dot of the selection in the source.
    fn undefined(&mut self, field: &str) {
        let needle = format!(".{field}");
        let found = self
            .source
            .match_indices(&needle)
            .filter(|(at, _)| {
                let after = self.source[at + needle.len()..].chars().next();
                !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
            })
            .nth(0);
        let offset = found.map_or(0, |(at, _)| at);
        let before = &self.source[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |at| at + 1);
        let column = self.source[line_start..offset].chars().count() + 1;
        let text = self.source.lines().nth(line - 1).unwrap_or_default();
        self.errors.push(format!(
            "ERROR: <input>:{line}:{column}: undefined field '{field}'\n | {text}\n | {}^",
            ".".repeat(column - 1)
        ));
    }
}

/// The type of an item of a list schema, or of a value of a map schema.
fn element(container: &Value) -> Type<'_> {
    if container["items"].is_object() {
        return Type::Schema(&container["items"]);
    }
    if container["additionalProperties"].is_object() {
        return Type::Schema(&container["additionalProperties"]);
    }
    Type::Dyn
}

/// What a call on strings costs besides its arguments: a tenth of their largest length.
fn string_cost(types: &[Type]) -> Cost {
    let longest = types
        .iter()
        .filter_map(|ty| match ty {
            Type::Schema(schema) if schema["type"] == "string" => Some(max_length(schema)),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    Cost(longest.div_ceil(10))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn spec() -> Value {
        json!({
            "type": "object",
            "properties": {
                "size": { "type": "integer" },
                "names": { "type": "array", "items": { "type": "string" } },
                "short": { "type": "array", "maxItems": 3, "items": { "type": "string", "maxLength": 5 } },
            },
        })
    }

    #[test]
    fn undefined_fields_are_found_where_cel_go_finds_them() {
        let error = check("self.colour == 'red'", &spec()).unwrap_err();
        assert_eq!(
            error,
            "ERROR: <input>:1:5: undefined field 'colour'\n | self.colour == 'red'\n | ....^"
        );
        assert!(check("self.size <= 5", &spec()).is_ok());
        let syntax = check("self.size <= ", &spec()).unwrap_err();
        assert!(
            syntax.starts_with("ERROR: <input>:1:14: Syntax error:"),
            "{syntax}"
        );
        assert!(syntax.contains("\n | self.size <= \n | "), "{syntax}");
    }

    #[test]
    fn costs_grow_with_the_lists_the_schema_does_not_bound() {
        let bounded = check("self.short.all(a, self.short.all(b, a != b))", &spec()).unwrap();
        assert!(bounded.value() < 1_000, "{bounded:?}");
        let unbounded = check(
            "self.names.all(a, self.names.all(b, self.names.all(c, a + b + c != '')))",
            &spec(),
        )
        .unwrap();
        assert!(unbounded.value() > 1_000_000_000, "{unbounded:?}");
    }
}
