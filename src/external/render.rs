//! The Rust source of an external kind's types, and an example object of the kind with every
//! field of its schema set, for the round-trip test generated next to the types.

use std::fmt::Write as _;

use heck::ToKebabCase as _;
use serde_yaml::Value;

use super::types::{Enum, Field, Struct, Type, Types};
use crate::names::{is_format_char, rust_str_literal as lit};

/// What `#[kube(...)]` says about the kind.
pub struct KindAttributes<'a> {
    pub group: &'a str,
    pub version: &'a str,
    pub kind: &'a str,
    pub plural: &'a str,
    pub namespaced: bool,
}

/// The `use` lines the types need.
pub fn imports(types: &Types) -> String {
    let mut out = String::new();
    if types.uses_map() {
        out.push_str("use std::collections::BTreeMap;\n\n");
    }
    if types.uses_int_or_string() {
        out.push_str("use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;\n");
    }
    out.push_str("use kube::CustomResource;\nuse serde::{Deserialize, Serialize};\n");
    out
}

/// The structs and enums, the spec first with the `#[kube(...)]` attributes that make the kind.
pub fn items(types: &Types, kind: &KindAttributes) -> String {
    let mut out = String::new();
    for (i, s) in types.structs.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if i == 0 {
            spec_struct(&mut out, s, kind, types.has_status);
        } else {
            plain_struct(&mut out, s);
        }
    }
    for e in &types.enums {
        out.push('\n');
        enumeration(&mut out, e);
    }
    out
}

fn spec_struct(out: &mut String, s: &Struct, kind: &KindAttributes, has_status: bool) {
    doc_lines(out, "", s.doc.as_deref());
    out.push_str("#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]\n");
    let _ = writeln!(
        out,
        "#[kube(group = {}, version = {}, kind = {}, plural = {})]",
        lit(kind.group),
        lit(kind.version),
        lit(kind.kind),
        lit(kind.plural)
    );
    let mut more = Vec::new();
    if kind.namespaced {
        more.push("namespaced".to_string());
    }
    if has_status {
        more.push(format!("status = \"{}Status\"", kind.kind));
    }
    // The CRD is the other project's: no schema to derive, and none is rendered.
    more.push("schema = \"disabled\"".to_string());
    // `<Kind>` compares like its spec and status (the webhooks' tests compare objects).
    more.push("derive = \"PartialEq\"".to_string());
    let _ = writeln!(out, "#[kube({})]", more.join(", "));
    struct_body(out, s);
}

fn plain_struct(out: &mut String, s: &Struct) {
    doc_lines(out, "", s.doc.as_deref());
    out.push_str("#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]\n");
    struct_body(out, s);
}

fn struct_body(out: &mut String, s: &Struct) {
    let _ = writeln!(out, "pub struct {} {{", s.name);
    for field in &s.fields {
        struct_field(out, field);
    }
    if s.keeps_unknown_fields {
        let name = unknown_fields_name(s);
        out.push_str(
            "    /// The fields that the schema does not name, which the API server keeps\n    \
             /// (`x-kubernetes-preserve-unknown-fields`).\n    #[serde(flatten)]\n",
        );
        let _ = writeln!(out, "    pub {name}: BTreeMap<String, serde_json::Value>,");
    }
    out.push_str("}\n");
}

/// `unknown_fields`, or a variant of it that no field of the struct has.
fn unknown_fields_name(s: &Struct) -> String {
    let mut name = "unknown_fields".to_string();
    while s.fields.iter().any(|f| f.rust == name) {
        name.push('_');
    }
    name
}

fn struct_field(out: &mut String, field: &Field) {
    doc_lines(out, "    ", field.doc.as_deref());
    let mut serde = Vec::new();
    if !field.required {
        serde.push("default".to_string());
        serde.push("skip_serializing_if = \"Option::is_none\"".to_string());
    }
    if field.rust.trim_start_matches("r#") != field.json {
        serde.push(format!("rename = {}", lit(&field.json)));
    }
    if !serde.is_empty() {
        let _ = writeln!(out, "    #[serde({})]", serde.join(", "));
    }
    let ty = rust_type(&field.ty);
    let ty = if field.required {
        ty
    } else {
        format!("Option<{ty}>")
    };
    let _ = writeln!(out, "    pub {}: {ty},", field.rust);
}

fn rust_type(ty: &Type) -> String {
    match ty {
        Type::Bool => "bool".into(),
        Type::I32 => "i32".into(),
        Type::I64 => "i64".into(),
        Type::F64 => "f64".into(),
        Type::String => "String".into(),
        Type::IntOrString => "IntOrString".into(),
        Type::Any => "serde_json::Value".into(),
        Type::List(inner) => format!("Vec<{}>", rust_type(inner)),
        Type::Map(inner) => format!("BTreeMap<String, {}>", rust_type(inner)),
        Type::Struct(name) | Type::Enum(name) => name.clone(),
    }
}

fn enumeration(out: &mut String, e: &Enum) {
    doc_lines(out, "", e.doc.as_deref());
    out.push_str("#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]\n");
    let _ = writeln!(out, "pub enum {} {{", e.name);
    for (variant, value) in &e.variants {
        if variant != value {
            let _ = writeln!(out, "    #[serde(rename = {})]", lit(value));
        }
        let _ = writeln!(out, "    {variant},");
    }
    out.push_str("}\n");
}

/// The CRD's description as doc comment lines: its text as written, without control and
/// invisible characters (a description is free text from another project, and rustc refuses
/// bidirectional controls in comments).
fn doc_lines(out: &mut String, indent: &str, doc: Option<&str>) {
    let Some(doc) = doc else { return };
    for line in doc.lines() {
        let line: String = line
            .chars()
            .map(|c| {
                if c.is_control() || is_format_char(c) || matches!(c, '\u{2028}' | '\u{2029}') {
                    ' '
                } else {
                    c
                }
            })
            .collect();
        let line = line.trim_end();
        if line.is_empty() {
            let _ = writeln!(out, "{indent}///");
        } else {
            let _ = writeln!(out, "{indent}/// {line}");
        }
    }
}

/// An object of the kind with every field of `schema` set to a value the schema allows (the
/// first value of an enum, the minimum of a number …), as JSON in a Rust raw string literal.
/// (`serde_json::json!` would hit the compiler's recursion limit on a large schema.)
pub fn example(schema: &Value, kind: &KindAttributes) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{{");
    let api_version = format!("{}/{}", kind.group, kind.version);
    let _ = writeln!(out, "    \"apiVersion\": {},", json_str(&api_version));
    let _ = writeln!(out, "    \"kind\": {},", json_str(kind.kind));
    let namespace = if kind.namespaced {
        ", \"namespace\": \"default\""
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "    \"metadata\": {{ \"name\": \"example\"{namespace} }},"
    );
    let properties = schema.get("properties").and_then(Value::as_mapping);
    let parts: Vec<String> = ["spec", "status"]
        .into_iter()
        .filter_map(|name| properties.and_then(|p| p.get(name)).map(|s| (name, s)))
        .map(|(name, s)| format!("    \"{name}\": {}", value(s, name, 1)))
        .collect();
    out.push_str(&parts.join(",\n"));
    out.push_str("\n}");
    raw_string(&out)
}

/// `text` as a Rust raw string literal, with enough `#`s that no `"#…` inside ends it.
fn raw_string(text: &str) -> String {
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
fn json_str(text: &str) -> String {
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

/// An example value for `schema`, named `name`, at indentation `depth`.
fn value(schema: &Value, name: &str, depth: usize) -> String {
    let pad = "    ".repeat(depth + 1);
    let end = "    ".repeat(depth);
    if schema
        .get("x-kubernetes-int-or-string")
        .and_then(Value::as_bool)
        == Some(true)
    {
        return "1".into();
    }
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
    match schema.get("type").and_then(Value::as_str) {
        Some("boolean") => "true".into(),
        Some("integer") => {
            let min = schema
                .get("minimum")
                .and_then(Value::as_i64)
                .unwrap_or(1)
                .max(1);
            let max = schema
                .get("maximum")
                .and_then(Value::as_i64)
                .unwrap_or(i64::MAX);
            min.min(max).to_string()
        }
        Some("number") => "1.5".into(),
        Some("string") => {
            if let Some(first) = schema
                .get("enum")
                .and_then(Value::as_sequence)
                .and_then(|e| e.first())
            {
                return json_str(first.as_str().unwrap_or_default());
            }
            match schema.get("format").and_then(Value::as_str) {
                Some("date-time") => "\"2025-01-01T00:00:00Z\"".into(),
                _ => json_str(&name.to_kebab_case()),
            }
        }
        Some("array") => {
            let empty = Value::Mapping(Default::default());
            let items = schema.get("items").unwrap_or(&empty);
            format!("[{}]", value(items, name, depth))
        }
        _ => {
            if let Some(properties) = schema.get("properties").and_then(Value::as_mapping) {
                let mut entries: Vec<(String, String)> = properties
                    .iter()
                    .filter_map(|(k, s)| {
                        Some((k.as_str()?.to_string(), value(s, k.as_str()?, depth + 1)))
                    })
                    .collect();
                if schema
                    .get("x-kubernetes-preserve-unknown-fields")
                    .and_then(Value::as_bool)
                    == Some(true)
                {
                    entries.push(("notInTheSchema".into(), "\"kept\"".into()));
                }
                object(entries)
            } else if let Some(values @ Value::Mapping(_)) = schema.get("additionalProperties") {
                object(vec![("key".into(), value(values, "value", depth + 1))])
            } else {
                object(vec![("key".into(), "\"value\"".into())])
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::external::types::analyze;

    /// A schema from a hostile CRD: names and values that are not identifiers, quotes,
    /// backslashes, invisible and bidirectional characters. The code must parse, and hold
    /// nothing invisible.
    #[test]
    fn hostile_schemas_give_plain_rust() {
        let schema: Value = serde_yaml::from_str(
            "properties:
  spec:
    description: \"evil \\u202E text\\u0007 */ \\\"quoted\\\"\"
    properties:
      \"a\\\"b\": {type: string, enum: [\"x\\u202Ey\", \"\\\\\", \"\"]}
      \"\\u200Bzero\": {type: object, additionalProperties: {type: integer}}
      type: {type: array, items: {type: object, x-kubernetes-preserve-unknown-fields: true, properties: {self: {type: boolean}}}}
",
        )
        .unwrap();
        let types = analyze(&schema, "Thing").unwrap();
        let kind = KindAttributes {
            group: "example.io",
            version: "v1",
            kind: "Thing",
            plural: "things",
            namespaced: true,
        };
        let code = format!(
            "{}{}\nconst EXAMPLE: &str = {};",
            imports(&types),
            items(&types, &kind),
            example(&schema, &kind)
        );
        assert!(code.is_ascii(), "{code}");
        assert!(!code.chars().any(is_format_char));
        syn::parse_file(&code).unwrap_or_else(|e| panic!("{e}\n{code}"));
        assert!(code.contains("#[serde(flatten)]"), "{code}");
        assert!(code.contains(r#""x\u202ey""#), "{code}");
    }

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
