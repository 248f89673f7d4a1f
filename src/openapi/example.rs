//! An example object for generated types: every field set, to a value the schema allows (the
//! first value of an enum, the minimum of a number …), and one field the schema does not name
//! wherever it keeps unknown fields. A field the types missed, or a rename that reads another
//! name, fails the round trip of this object (read into the types, written back, compared).

use std::fmt::Write as _;

use heck::ToKebabCase as _;
use serde_yaml::Value;

use super::ir::{EMPTY, Type, Types, flag};
use super::kind::{KindAttributes, KindTypes};

/// An object of the kind with every field set, as JSON in a Rust raw string literal.
/// (`serde_json::json!` would hit the compiler's recursion limit on a large schema.)
pub fn object(kind: &KindTypes, attributes: &KindAttributes) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{{");
    let api_version = format!("{}/{}", attributes.group, attributes.version);
    let _ = writeln!(out, "    \"apiVersion\": {},", json_str(&api_version));
    let _ = writeln!(out, "    \"kind\": {},", json_str(attributes.kind));
    let namespace = if attributes.namespaced {
        ", \"namespace\": \"default\""
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "    \"metadata\": {{ \"name\": \"example\"{namespace} }},"
    );
    let types = &kind.types;
    let mut parts = Vec::new();
    if let Some(root) = types.structs.first() {
        if kind.no_spec {
            for (key, value) in entries(types, &root.name, 0) {
                parts.push(format!("    {}: {value}", json_str(&key)));
            }
        } else {
            let spec = value(types, &Type::Struct(root.name.clone()), &EMPTY, "spec", 1);
            parts.push(format!("    \"spec\": {spec}"));
        }
    }
    if let Some(status) = &kind.status {
        let status = value(types, &Type::Struct(status.clone()), &EMPTY, "status", 1);
        parts.push(format!("    \"status\": {status}"));
    }
    out.push_str(&parts.join(",\n"));
    out.push_str("\n}");
    raw_string(&out)
}

/// A value of the struct `name` with every field set, as JSON text.
pub fn struct_value(types: &Types, name: &str) -> String {
    value(types, &Type::Struct(name.to_string()), &EMPTY, "value", 0)
}

/// The entries of the struct `name`: each field's wire name and example value, then a field
/// the schema does not name if the struct keeps those.
fn entries(types: &Types, name: &str, depth: usize) -> Vec<(String, String)> {
    let Some(s) = types.find_struct(name) else {
        return Vec::new();
    };
    let mut entries: Vec<(String, String)> = s
        .fields
        .iter()
        .map(|f| {
            (
                f.json.clone(),
                value(types, &f.ty, f.schema, &f.json, depth + 1),
            )
        })
        .collect();
    if s.unknown_fields.is_some() {
        let key = std::iter::once("notInTheSchema".to_string())
            .chain((2..).map(|n| format!("notInTheSchema{n}")))
            .find(|k| s.fields.iter().all(|f| f.json != *k))
            .expect("some number is free");
        entries.push((key, "\"kept\"".into()));
    }
    entries
}

/// An example value of type `ty` (with `schema`), for a field named `name`, at indentation
/// `depth`.
fn value(types: &Types, ty: &Type, schema: &Value, name: &str, depth: usize) -> String {
    let pad = "    ".repeat(depth + 1);
    let end = "    ".repeat(depth);
    let object = |entries: Vec<(String, String)>| {
        if entries.is_empty() {
            return "{}".to_string();
        }
        let lines: Vec<String> = entries
            .into_iter()
            .map(|(key, value)| format!("{pad}{}: {value}", json_str(&key)))
            .collect();
        format!("{{\n{}\n{end}}}", lines.join(",\n"))
    };
    if let Some(first) = first_enum_number(ty, schema) {
        return first;
    }
    match ty {
        Type::IntOrString => "1".into(),
        Type::Bool => "true".into(),
        Type::I32 | Type::I64 => integer(ty, schema),
        Type::F64 => "1.5".into(),
        Type::String => match schema.get("format").and_then(Value::as_str) {
            Some("date-time") => "\"2025-01-01T00:00:00Z\"".into(),
            _ => json_str(&name.to_kebab_case()),
        },
        Type::Enum(e) => {
            let first = types
                .find_enum(e)
                .and_then(|e| e.variants.first())
                .map(|v| v.json.as_str())
                .unwrap_or_default();
            json_str(first)
        }
        Type::List(inner) => {
            let items = schema.get("items").unwrap_or(&EMPTY);
            format!("[{}]", value(types, inner, items, name, depth))
        }
        Type::Map(inner) => {
            let values = schema.get("additionalProperties").unwrap_or(&EMPTY);
            object(vec![(
                "key".into(),
                value(types, inner, values, "value", depth + 1),
            )])
        }
        Type::Struct(s) => object(entries(types, s, depth)),
        // A bare object: the API server keeps none of its fields.
        Type::Any
            if schema.get("type").and_then(Value::as_str) == Some("object")
                && !flag(schema, "x-kubernetes-preserve-unknown-fields")
                && schema.get("additionalProperties").is_none() =>
        {
            "{}".into()
        }
        Type::Any => object(vec![("key".into(), "\"value\"".into())]),
    }
}

/// A number with an `enum` (a string enum is a Rust enum) takes its first value, when it fits
/// the type.
fn first_enum_number(ty: &Type, schema: &Value) -> Option<String> {
    if !matches!(ty, Type::I32 | Type::I64 | Type::F64) {
        return None;
    }
    let Some(Value::Number(first)) = schema
        .get("enum")
        .and_then(Value::as_sequence)
        .and_then(|values| values.first())
    else {
        return None;
    };
    let fits = match ty {
        // A whole number would come back from an `f64` as `1.0`.
        Type::F64 => first.is_f64() && first.as_f64().is_some_and(f64::is_finite),
        _ => first.as_i64().is_some(),
    };
    fits.then(|| first.to_string())
}

/// An integer of type `ty` (`I32` or `I64`): 1, or the schema's minimum when above it, within
/// its maximum and the type's range.
fn integer(ty: &Type, schema: &Value) -> String {
    let (lowest, highest) = match ty {
        Type::I32 => (i64::from(i32::MIN), i64::from(i32::MAX)),
        _ => (i64::MIN, i64::MAX),
    };
    let min = schema
        .get("minimum")
        .and_then(Value::as_i64)
        .unwrap_or(1)
        .max(1);
    let max = schema
        .get("maximum")
        .and_then(Value::as_i64)
        .unwrap_or(highest);
    min.min(max).clamp(lowest, highest).to_string()
}

/// `text` as a Rust raw string literal, with enough `#`s that no `"#…` inside ends it.
pub fn raw_string(text: &str) -> String {
    let mut longest = 0;
    for (i, _) in text.match_indices('"') {
        let run = text[i + 1..].chars().take_while(|&c| c == '#').count();
        longest = longest.max(run);
    }
    let hashes = "#".repeat(longest + 1);
    format!("r{hashes}\"{text}\"{hashes}")
}

/// `text` as a JSON string in plain ASCII: quotes, backslashes, and every character outside
/// printable ASCII escaped.
pub fn json_str(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_strings_are_never_cut_short() {
        assert_eq!(raw_string("{}"), "r#\"{}\"#");
        assert_eq!(raw_string("{\"#a\": 1}"), "r##\"{\"#a\": 1}\"##");
        assert_eq!(
            json_str("a\"\\\u{e9}\u{1F600}"),
            r#""a\"\\\u00e9\ud83d\ude00""#
        );
    }
}
