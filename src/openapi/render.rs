//! The Rust source of [`Types`], in one of two styles.
//!
//! - [`Style::Foreign`]: another project's kind (`create api --external-api-path`), kopium's
//!   way: serde derives only (the CRD is the other project's, no schema is derived from the
//!   types), every wire name that differs from the Rust one renamed, `BTreeMap` and
//!   `IntOrString` imported; `Default` too where the kind's spec may be absent, which then reads
//!   as the default spec.
//! - [`Style::Own`]: the project's own kind (`alpha migrate`): the types `make manifests` derives
//!   the CRD from, so they derive `KubeSchema` and `Default`, read camelCase like the scaffold's
//!   types, and carry the schema's validations (ranges, lengths, patterns, defaults, formats) as
//!   schemars attributes; paths are written in full, as the file's imports are the scaffold's.

use std::fmt::Write as _;

use serde_yaml::Value;

use super::doc;
use super::ir::{Enum, Field, Struct, Type, Types, flag};
use crate::names::ident::serde_camel_case;
use crate::names::rust_str_literal as lit;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// `default`: every type derives `Default` (and each enum names its default variant), for a
    /// kind whose spec may be absent (see `KindTypes::spec_may_be_absent`).
    Foreign {
        default: bool,
    },
    Own,
}

impl Style {
    /// `Default, ` where the types derive it.
    fn default_derive(self) -> &'static str {
        match self {
            Style::Foreign { default: false } => "",
            Style::Foreign { default: true } | Style::Own => "Default, ",
        }
    }
}

/// A struct's definition: its doc comment, derives and fields. `kube`: the `#[kube(...)]`
/// attributes of a kind of another project, whose struct also derives `CustomResource`.
pub fn struct_item(out: &mut String, s: &Struct, style: Style, kube: Option<&str>) {
    doc::write(out, "", s.doc.as_deref());
    match style {
        Style::Foreign { .. } => {
            let custom_resource = if kube.is_some() {
                "CustomResource, "
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "#[derive({custom_resource}Clone, Debug, {}PartialEq, Serialize, Deserialize)]",
                style.default_derive()
            );
            out.push_str(kube.unwrap_or_default());
        }
        Style::Own => {
            out.push_str(
                "#[derive(KubeSchema, Clone, Debug, Default, Deserialize, Serialize)]\n\
                 #[serde(rename_all = \"camelCase\")]\n",
            );
            if s.rest.as_ref().is_some_and(|r| r.preserved) {
                out.push_str(
                    "#[schemars(extend(\"x-kubernetes-preserve-unknown-fields\" = true))]\n",
                );
            }
        }
    }
    let _ = writeln!(out, "pub struct {} {{", s.name);
    fields(out, s, style);
    out.push_str("}\n");
}

/// A struct's fields, indented for its body.
pub fn fields(out: &mut String, s: &Struct, style: Style) {
    for field in &s.fields {
        struct_field(out, field, style);
    }
    if let Some(rest) = &s.rest {
        out.push_str(if rest.preserved {
            "    /// The fields that the schema does not name, which the API server keeps\n    \
             /// (`x-kubernetes-preserve-unknown-fields`).\n"
        } else {
            "    /// The fields besides the named ones (`additionalProperties`).\n"
        });
        if rest.beside_object_fields {
            let _ = writeln!(
                out,
                "    #[serde(flatten, deserialize_with = \"{WITHOUT_OBJECT_FIELDS}\")]"
            );
        } else {
            out.push_str("    #[serde(flatten)]\n");
        }
        if style == Style::Own {
            // The struct's `x-kubernetes-preserve-unknown-fields` says it in the schema.
            out.push_str("    #[schemars(skip)]\n");
        }
        let _ = writeln!(
            out,
            "    pub {}: {},",
            rest.rust,
            rust_type(&Type::Map(Box::new(rest.ty.clone())), style)
        );
    }
}

/// The function that reads the top-level fields a kind's schema does not name, without the
/// `apiVersion` and `kind` that kube's object reads (and writes) itself.
const WITHOUT_OBJECT_FIELDS: &str = "without_object_fields";

/// [`WITHOUT_OBJECT_FIELDS`]'s definition, for the types file that uses it.
pub fn without_object_fields(out: &mut String) {
    let _ = write!(
        out,
        "
/// Reads the top-level fields that the schema does not name, leaving out `apiVersion` and
/// `kind`: kube's object writes those itself, and would write them twice.
fn {WITHOUT_OBJECT_FIELDS}<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeMap<String, serde_json::Value>, D::Error> {{
    let mut fields = BTreeMap::<String, serde_json::Value>::deserialize(deserializer)?;
    fields.remove(\"apiVersion\");
    fields.remove(\"kind\");
    Ok(fields)
}}
"
    );
}

fn struct_field(out: &mut String, field: &Field, style: Style) {
    doc::write(out, "    ", field.doc.as_deref());
    let mut serde = Vec::new();
    if !field.required {
        serde.push("default".to_string());
    }
    if !field.required && !field.write_null {
        serde.push("skip_serializing_if = \"Option::is_none\"".to_string());
    }
    let rust = field.rust.trim_start_matches("r#");
    let read_as = match style {
        Style::Foreign { .. } => rust.to_string(),
        Style::Own => serde_camel_case(rust),
    };
    if read_as != field.json {
        serde.push(format!("rename = {}", lit(&field.json)));
    }
    if !serde.is_empty() {
        let _ = writeln!(out, "    #[serde({})]", serde.join(", "));
    }
    if style == Style::Own {
        validations(out, field);
    }
    let ty = rust_type(&field.ty, style);
    let ty = if field.required {
        ty
    } else {
        format!("Option<{ty}>")
    };
    let _ = writeln!(out, "    pub {}: {ty},", field.rust);
}

/// The Rust spelling of a type.
pub fn rust_type(ty: &Type, style: Style) -> String {
    match ty {
        Type::Bool => "bool".into(),
        Type::I32 => "i32".into(),
        Type::I64 => "i64".into(),
        Type::F64 => "f64".into(),
        Type::String => "String".into(),
        Type::IntOrString => match style {
            Style::Foreign { .. } => "IntOrString".into(),
            Style::Own => "k8s_openapi::apimachinery::pkg::util::intstr::IntOrString".into(),
        },
        Type::Any => "serde_json::Value".into(),
        Type::List(inner) => format!("Vec<{}>", rust_type(inner, style)),
        Type::Optional(inner) => format!("Option<{}>", rust_type(inner, style)),
        Type::Map(inner) => match style {
            Style::Foreign { .. } => format!("BTreeMap<String, {}>", rust_type(inner, style)),
            Style::Own => format!(
                "std::collections::BTreeMap<String, {}>",
                rust_type(inner, style)
            ),
        },
        Type::Struct(name) | Type::Enum(name) => name.clone(),
    }
}

/// An enum's definition.
pub fn enum_item(out: &mut String, e: &Enum, style: Style) {
    doc::write(out, "", e.doc.as_deref());
    match style {
        Style::Foreign { .. } => {
            let _ = writeln!(
                out,
                "#[derive(Clone, Copy, Debug, {}PartialEq, Eq, Serialize, Deserialize)]",
                style.default_derive()
            );
        }
        Style::Own => out.push_str(
            "#[derive(schemars::JsonSchema, Clone, Copy, Debug, Default, PartialEq, Deserialize, Serialize)]\n",
        ),
    }
    let _ = writeln!(out, "pub enum {} {{", e.name);
    for (i, variant) in e.variants.iter().enumerate() {
        if variant.rust != variant.json {
            let _ = writeln!(out, "    #[serde(rename = {})]", lit(&variant.json));
        }
        // The schema's default, else the first value: what `Default` gives.
        if !style.default_derive().is_empty() && i == e.default.unwrap_or(0) {
            out.push_str("    #[default]\n");
        }
        let _ = writeln!(out, "    {},", variant.rust);
    }
    out.push_str("}\n");
}

/// Every struct from the `skip`-th on, then every enum, each after a blank line.
pub fn items(out: &mut String, types: &Types, style: Style, skip: usize) {
    for s in types.structs.iter().skip(skip) {
        out.push('\n');
        struct_item(out, s, style, None);
    }
    for e in &types.enums {
        out.push('\n');
        enum_item(out, e, style);
    }
}

/// `#[schemars(...)]` for the validations of a field that its Rust type does not carry.
fn validations(out: &mut String, field: &Field) {
    let schema = field.schema;
    let number = |key: &str| {
        schema.get(key).and_then(|v| match v {
            Value::Number(n) if n.as_f64().is_some_and(f64::is_finite) => Some(n.to_string()),
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
        parts.push(format!("regex(pattern = {})", pattern_literal(pattern)));
    }
    // Keywords schemars has no attribute for, added to the schema as they are (one `extend`).
    let mut extend = Vec::new();
    // A Rust enum carries its values itself.
    if !matches!(field.ty, Type::Enum(_))
        && let Some(values) = schema.get("enum").and_then(Value::as_sequence)
    {
        let json: Vec<String> = values.iter().filter_map(json_literal).collect();
        extend.push(format!("\"enum\" = [{}]", json.join(", ")));
    }
    // The API server fills in defaults; scalars only (an object default would need its JSON).
    if let Some(default) = schema.get("default").and_then(json_literal) {
        extend.push(format!("\"default\" = {default}"));
    }
    // `serde_json::Value` has no schema of its own: the CRD's type and its preserved fields.
    if field.ty == Type::Any {
        if schema.get("type").and_then(Value::as_str) == Some("object") {
            extend.push("\"type\" = \"object\"".into());
        }
        if flag(schema, "x-kubernetes-preserve-unknown-fields") {
            extend.push("\"x-kubernetes-preserve-unknown-fields\" = true".into());
        }
    }
    if let Some(format) = schema.get("format").and_then(Value::as_str)
        && !matches!(format, "int32" | "int64")
    {
        extend.push(format!("\"format\" = {}", lit(format)));
    }
    if !extend.is_empty() {
        parts.push(format!("extend({})", extend.join(", ")));
    }
    if !parts.is_empty() {
        let _ = writeln!(out, "    #[schemars({})]", parts.join(", "));
    }
}

/// A regular expression as a raw string literal (as people write them), unless it has
/// characters outside printable ASCII, which are escaped in a plain literal.
fn pattern_literal(pattern: &str) -> String {
    if !pattern.chars().all(|c| matches!(c, ' '..='~')) {
        return lit(pattern);
    }
    let mut hashes = String::from("#");
    while pattern.contains(&format!("\"{hashes}")) {
        hashes.push('#');
    }
    format!("r{hashes}\"{pattern}\"{hashes}")
}

/// A YAML scalar as a JSON literal for `extend(...)`.
fn json_literal(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(lit(s)),
        Value::Number(n) if n.as_f64().is_some_and(f64::is_finite) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}
