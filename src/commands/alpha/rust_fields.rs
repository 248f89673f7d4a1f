//! Rust fields from a CRD's OpenAPI schema, for `alpha migrate`: the properties of a Go kind's
//! `spec` or `status` (as controller-gen wrote them into config/crd/bases) as the fields of the
//! Rust struct, with their doc comments, whether they are required, and the validations the CRD
//! carries (ranges, lengths, patterns, enums), so that `make manifests` renders the same schema.
//!
//! Nested objects become nested structs named after their path (`CaptainSpecEngine`), arrays
//! `Vec`, maps `BTreeMap<String, _>`, `x-kubernetes-int-or-string` k8s-openapi's `IntOrString`,
//! `x-kubernetes-preserve-unknown-fields` objects `serde_json::Value`.

use std::fmt::Write as _;

use heck::{ToLowerCamelCase as _, ToSnakeCase as _, ToUpperCamelCase as _};
use serde_yaml::Value;

/// The translated fields of one struct, and the nested structs they need.
#[derive(Debug, Default)]
pub struct Translation {
    /// Field declarations, indented for a struct body.
    pub fields: String,
    /// Nested struct definitions, each preceded by a blank line.
    pub structs: String,
    /// Properties that could not be translated, with why.
    pub skipped: Vec<String>,
}

/// The fields of `schema` (an object schema: `properties` and `required`), for a struct named
/// `owner` (which names the nested structs), leaving out the properties in `except`.
pub fn translate(schema: &Value, owner: &str, except: &[&str]) -> Translation {
    let mut out = Translation::default();
    out.fields = fields(schema, owner, except, &mut out.structs, &mut out.skipped);
    out
}

fn fields(
    schema: &Value,
    owner: &str,
    except: &[&str],
    structs: &mut String,
    skipped: &mut Vec<String>,
) -> String {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_sequence)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_mapping) else {
        return String::new();
    };
    let mut out = String::new();
    for (name, property) in properties {
        let Some(name) = name.as_str() else { continue };
        if except.contains(&name) {
            continue;
        }
        let Some(ident) = rust_ident(name) else {
            skipped.push(format!("{owner}.{name}: not a name a Rust field can have"));
            continue;
        };
        let nested = format!("{owner}{}", name.to_upper_camel_case());
        let ty = rust_type(property, &nested, structs, skipped);
        doc_comment(property, "    ", &mut out);
        let optional = !required.contains(&name);
        let mut serde = Vec::new();
        if ident.trim_start_matches("r#").to_lower_camel_case() != name {
            serde.push(format!("rename = {name:?}"));
        }
        if optional {
            serde.push("default".to_string());
            serde.push("skip_serializing_if = \"Option::is_none\"".to_string());
        }
        if !serde.is_empty() {
            let _ = writeln!(out, "    #[serde({})]", serde.join(", "));
        }
        validations(property, &mut out);
        let ty = if optional {
            format!("Option<{ty}>")
        } else {
            ty
        };
        let _ = writeln!(out, "    pub {ident}: {ty},");
    }
    out
}

/// The Rust type of a property schema; nested objects are added to `structs` as `name`.
fn rust_type(
    schema: &Value,
    name: &str,
    structs: &mut String,
    skipped: &mut Vec<String>,
) -> String {
    let flag = |key: &str| schema.get(key).and_then(Value::as_bool) == Some(true);
    if flag("x-kubernetes-int-or-string") {
        return "k8s_openapi::apimachinery::pkg::util::intstr::IntOrString".into();
    }
    let ty = schema
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let format = schema
        .get("format")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match ty {
        "string" => "String".into(),
        "integer" if format == "int32" => "i32".into(),
        "integer" => "i64".into(),
        "number" => "f64".into(),
        "boolean" => "bool".into(),
        "array" => match schema.get("items") {
            Some(items) => format!("Vec<{}>", rust_type(items, name, structs, skipped)),
            None => "Vec<serde_json::Value>".into(),
        },
        "object" if schema.get("properties").is_some() => {
            let body = fields(schema, name, &[], structs, skipped);
            let mut def = String::from("\n");
            doc_comment(schema, "", &mut def);
            def.push_str(
                "#[derive(KubeSchema, Clone, Debug, Default, Deserialize, Serialize)]\n\
                 #[serde(rename_all = \"camelCase\")]\n",
            );
            let _ = write!(def, "pub struct {name} {{\n{body}}}\n");
            structs.push_str(&def);
            name.to_string()
        }
        "object" => match schema.get("additionalProperties") {
            Some(values) if values.is_mapping() => format!(
                "std::collections::BTreeMap<String, {}>",
                rust_type(values, name, structs, skipped)
            ),
            _ => "serde_json::Value".into(),
        },
        _ => "serde_json::Value".into(),
    }
}

/// The schema's description as `///` lines. Lines after a list item are indented under it, as
/// clippy's `doc_lazy_continuation` wants.
fn doc_comment(schema: &Value, indent: &str, out: &mut String) {
    let Some(description) = schema.get("description").and_then(Value::as_str) else {
        return;
    };
    let mut in_item = false;
    for line in description.trim().lines() {
        let line = line.trim_end();
        let trimmed = line.trim_start();
        let item = trimmed.starts_with("- ")
            || trimmed.starts_with("* ")
            || trimmed
                .split_once(". ")
                .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
        if line.is_empty() {
            in_item = false;
            let _ = writeln!(out, "{indent}///");
            continue;
        }
        let text = if in_item && !item {
            format!("  {trimmed}")
        } else {
            line.to_string()
        };
        in_item |= item;
        let _ = writeln!(out, "{indent}/// {text}");
    }
}

/// `#[schemars(...)]` for the validations of a property that the Rust type does not carry.
fn validations(schema: &Value, out: &mut String) {
    let number = |key: &str| {
        schema.get(key).and_then(|v| match v {
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
    };
    let mut parts = Vec::new();
    let pair = |min: Option<String>, max: Option<String>| {
        [("min", min), ("max", max)]
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| format!("{k} = {v}")))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let range = pair(number("minimum"), number("maximum"));
    if !range.is_empty() {
        parts.push(format!("range({range})"));
    }
    let length = match schema.get("type").and_then(Value::as_str) {
        Some("array") => pair(number("minItems"), number("maxItems")),
        _ => pair(number("minLength"), number("maxLength")),
    };
    if !length.is_empty() {
        parts.push(format!("length({length})"));
    }
    if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
        parts.push(format!("regex(pattern = {})", raw_string(pattern)));
    }
    // Keywords schemars has no attribute for, added to the schema as they are (one `extend`).
    let mut extend = Vec::new();
    if let Some(values) = schema.get("enum").and_then(Value::as_sequence) {
        let json: Vec<String> = values.iter().filter_map(serde_json_literal).collect();
        extend.push(format!("\"enum\" = [{}]", json.join(", ")));
    }
    // The API server fills in defaults; scalars only (an object default would need its JSON).
    if let Some(default) = schema.get("default").and_then(serde_json_literal) {
        extend.push(format!("\"default\" = {default}"));
    }
    // `serde_json::Value` has no schema of its own; the API server wants a type.
    if is_free_form(schema) {
        extend.push("\"type\" = \"object\"".into());
        extend.push("\"x-kubernetes-preserve-unknown-fields\" = true".into());
    }
    if let Some(format) = schema.get("format").and_then(Value::as_str)
        && !matches!(format, "int32" | "int64")
    {
        extend.push(format!("\"format\" = {format:?}"));
    }
    if !extend.is_empty() {
        parts.push(format!("extend({})", extend.join(", ")));
    }
    if !parts.is_empty() {
        let _ = writeln!(out, "    #[schemars({})]", parts.join(", "));
    }
}

/// An object of any fields, which becomes a `serde_json::Value`.
fn is_free_form(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
        && schema.get("properties").is_none()
        && !schema
            .get("additionalProperties")
            .is_some_and(Value::is_mapping)
}

/// A YAML scalar as a JSON literal for `extend(...)`.
fn serde_json_literal(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(format!("{s:?}")),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// `s` as a Rust raw string literal with enough `#`s.
fn raw_string(s: &str) -> String {
    let mut hashes = String::from("#");
    while s.contains(&format!("\"{hashes}")) {
        hashes.push('#');
    }
    format!("r{hashes}\"{s}\"{hashes}")
}

/// The snake_case Rust identifier of a JSON property name (raw for keywords), if it has one.
fn rust_ident(name: &str) -> Option<String> {
    let snake = name.to_snake_case();
    let valid = snake
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && snake.chars().all(|c| c.is_alphanumeric() || c == '_');
    if !valid {
        return None;
    }
    const KEYWORDS: &[&str] = &[
        "as", "async", "await", "break", "const", "continue", "dyn", "else", "enum", "extern",
        "false", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move",
        "mut", "pub", "ref", "return", "static", "struct", "trait", "true", "type", "unsafe",
        "use", "where", "while", "abstract", "become", "box", "do", "final", "macro", "override",
        "priv", "try", "typeof", "unsized", "virtual", "yield",
    ];
    Some(if KEYWORDS.contains(&snake.as_str()) {
        format!("r#{snake}")
    } else {
        snake
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(yaml: &str) -> Value {
        serde_yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn scalars_options_renames_and_validations() {
        let t = translate(
            &schema(
                r##"
properties:
  size:
    description: size is the number of pods.
    format: int32
    minimum: 1
    maximum: 5
    type: integer
  imageURL:
    type: string
    pattern: '^[a-z]+"#$'
  type:
    default: Fast
    enum: [Fast, Slow]
    type: string
  conditions:
    type: array
required: [size]
type: object
"##,
            ),
            "MemcachedSpec",
            &["conditions"],
        );
        assert_eq!(
            t.fields,
            r###"    /// size is the number of pods.
    #[schemars(range(min = 1, max = 5))]
    pub size: i32,
    #[serde(rename = "imageURL", default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r##"^[a-z]+"#$"##))]
    pub image_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["Fast", "Slow"], "default" = "Fast"))]
    pub r#type: Option<String>,
"###
        );
        assert!(t.structs.is_empty() && t.skipped.is_empty());
    }

    #[test]
    fn nested_objects_arrays_maps_and_free_form() {
        let t = translate(
            &schema(
                r#"
properties:
  engine:
    description: engine of the ship.
    properties:
      power: {type: integer}
    required: [power]
    type: object
  crew:
    items: {type: string}
    type: array
  labels:
    additionalProperties: {type: string}
    type: object
  port:
    x-kubernetes-int-or-string: true
  extra:
    type: object
    x-kubernetes-preserve-unknown-fields: true
type: object
"#,
            ),
            "ShipSpec",
            &[],
        );
        assert!(
            t.fields.contains("pub engine: Option<ShipSpecEngine>,"),
            "{}",
            t.fields
        );
        assert!(t.fields.contains("pub crew: Option<Vec<String>>,"));
        assert!(
            t.fields
                .contains("pub labels: Option<std::collections::BTreeMap<String, String>>,")
        );
        assert!(t.fields.contains(
            "pub port: Option<k8s_openapi::apimachinery::pkg::util::intstr::IntOrString>,"
        ));
        assert!(t.fields.contains(
            "    #[schemars(extend(\"type\" = \"object\", \"x-kubernetes-preserve-unknown-fields\" = true))]\n    pub extra: Option<serde_json::Value>,"
        ));
        assert!(
            t.structs
                .contains("/// engine of the ship.\n#[derive(KubeSchema"),
            "{}",
            t.structs
        );
        assert!(
            t.structs
                .contains("pub struct ShipSpecEngine {\n    pub power: i64,\n}")
        );
    }

    #[test]
    fn list_continuations_are_indented() {
        let mut out = String::new();
        doc_comment(
            &schema("description: \"Types:\\n- Available: all\\nis well\\n\\nThe end.\""),
            "",
            &mut out,
        );
        assert_eq!(
            out,
            "/// Types:\n/// - Available: all\n///   is well\n///\n/// The end.\n"
        );
    }
}
