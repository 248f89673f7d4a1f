//! From a CRD's OpenAPI v3 schema to Rust types, the way kopium maps them: an object with
//! properties is a struct, `additionalProperties` a `BTreeMap`, a string enum a Rust enum,
//! `x-kubernetes-int-or-string` k8s-openapi's `IntOrString`, and a value the API server keeps
//! as it is (`x-kubernetes-preserve-unknown-fields`, no schema) a `serde_json::Value`.
//!
//! kopium's own analyzer works on k8s-openapi's `JSONSchemaProps` and would bring kube,
//! k8s-openapi and tokio into this CLI; the mapping itself is small, so it is done here on the
//! YAML of the schema.

use std::collections::BTreeSet;

use anyhow::{Result, bail};
use heck::{ToSnakeCase as _, ToUpperCamelCase as _};
use serde_yaml::Value;

/// The Rust type of one schema.
#[derive(Debug, Clone, PartialEq)]
pub enum Type {
    Bool,
    I32,
    I64,
    F64,
    String,
    IntOrString,
    /// Anything (`serde_json::Value`): no schema, or one the API server does not prune.
    Any,
    List(Box<Type>),
    Map(Box<Type>),
    /// A generated struct, by name.
    Struct(String),
    /// A generated enum, by name.
    Enum(String),
}

/// A field of a struct.
#[derive(Debug, Clone)]
pub struct Field {
    /// The JSON name.
    pub json: String,
    /// The Rust name, a raw identifier (`r#type`) where it is a keyword.
    pub rust: String,
    pub ty: Type,
    pub required: bool,
    pub doc: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Struct {
    pub name: String,
    pub doc: Option<String>,
    pub fields: Vec<Field>,
    /// `x-kubernetes-preserve-unknown-fields` with properties: the fields not in the schema are
    /// kept too (in a flattened map), as the API server keeps them.
    pub keeps_unknown_fields: bool,
}

#[derive(Debug, Clone)]
pub struct Enum {
    pub name: String,
    pub doc: Option<String>,
    /// (Rust variant, JSON value).
    pub variants: Vec<(String, String)>,
}

/// Every type of a kind: `<Kind>Spec` first, then `<Kind>Status` (when the schema has one), then
/// the nested types in the order they appear.
#[derive(Debug, Default)]
pub struct Types {
    pub structs: Vec<Struct>,
    pub enums: Vec<Enum>,
    /// Whether `status` is in the schema.
    pub has_status: bool,
    taken: BTreeSet<String>,
}

impl Types {
    /// Whether any field has a type that `wanted` matches, at any depth of lists and maps.
    fn any_field(&self, wanted: fn(&Type) -> bool) -> bool {
        fn walk(ty: &Type, wanted: fn(&Type) -> bool) -> bool {
            wanted(ty) || matches!(ty, Type::List(inner) | Type::Map(inner) if walk(inner, wanted))
        }
        self.structs
            .iter()
            .flat_map(|s| &s.fields)
            .any(|f| walk(&f.ty, wanted))
    }

    /// Whether the code needs `BTreeMap`.
    pub fn uses_map(&self) -> bool {
        self.structs.iter().any(|s| s.keeps_unknown_fields)
            || self.any_field(|ty| matches!(ty, Type::Map(_)))
    }

    /// Whether the code needs `IntOrString`.
    pub fn uses_int_or_string(&self) -> bool {
        self.any_field(|ty| *ty == Type::IntOrString)
    }

    /// A type name not yet used (`Name`, `Name2`, `Name3` …).
    fn fresh(&mut self, base: &str) -> String {
        let mut name = base.to_string();
        let mut n = 2;
        while !self.taken.insert(name.clone()) {
            name = format!("{base}{n}");
            n += 1;
        }
        name
    }
}

/// The types of a kind from its `openAPIV3Schema`.
pub fn analyze(schema: &Value, kind: &str) -> Result<Types> {
    let mut types = Types::default();
    // The kind's own name and its list are kube's: never a generated type's.
    types.taken.insert(kind.to_string());
    types.taken.insert(format!("{kind}List"));
    let properties = schema.get("properties").and_then(Value::as_mapping);
    let top: Vec<&str> = properties
        .map(|p| p.keys().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let unknown: Vec<&&str> = top
        .iter()
        .filter(|k| !["apiVersion", "kind", "metadata", "spec", "status"].contains(k))
        .collect();
    if !unknown.is_empty() {
        bail!(
            "the schema of {kind} has top-level fields besides spec and status ({}); kube-rs types \
             a custom resource as metadata, spec and status",
            unknown
                .iter()
                .map(|k| k.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let empty = Value::Mapping(Default::default());
    let spec = properties.and_then(|p| p.get("spec")).unwrap_or(&empty);
    struct_type(&mut types, &format!("{kind}Spec"), spec)?;
    if let Some(status) = properties.and_then(|p| p.get("status")) {
        types.has_status = true;
        struct_type(&mut types, &format!("{kind}Status"), status)?;
    }
    Ok(types)
}

/// Adds the struct `name` for an object schema (its fields' types first registered, so that the
/// struct comes before the types nested in it).
fn struct_type(types: &mut Types, name: &str, schema: &Value) -> Result<String> {
    let name = types.fresh(name);
    let index = types.structs.len();
    types.structs.push(Struct {
        name: name.clone(),
        doc: doc(schema),
        fields: Vec::new(),
        keeps_unknown_fields: flag(schema, "x-kubernetes-preserve-unknown-fields"),
    });
    let required: BTreeSet<&str> = schema
        .get("required")
        .and_then(Value::as_sequence)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut fields = Vec::new();
    let mut rust_names = BTreeSet::new();
    if let Some(properties) = schema.get("properties").and_then(Value::as_mapping) {
        for (key, property) in properties {
            let Some(json) = key.as_str() else {
                bail!("the schema of {name} has a property name that is not a string");
            };
            let ty = type_of(types, &format!("{name}{}", type_part(json)), property)?;
            let rust = unique_field_name(&mut rust_names, json);
            fields.push(Field {
                json: json.to_string(),
                rust,
                ty,
                required: required.contains(json) && !flag(property, "nullable"),
                doc: doc(property),
            });
        }
    }
    types.structs[index].fields = fields;
    Ok(name)
}

fn type_of(types: &mut Types, name: &str, schema: &Value) -> Result<Type> {
    if flag(schema, "x-kubernetes-int-or-string") {
        return Ok(Type::IntOrString);
    }
    let format = schema.get("format").and_then(Value::as_str);
    Ok(match schema.get("type").and_then(Value::as_str) {
        Some("boolean") => Type::Bool,
        Some("integer") if format == Some("int32") => Type::I32,
        Some("integer") => Type::I64,
        Some("number") => Type::F64,
        Some("string") => match string_enum(schema) {
            Some(values) => Type::Enum(enum_type(types, name, schema, values)),
            None => Type::String,
        },
        Some("array") => {
            let empty = Value::Mapping(Default::default());
            let items = schema.get("items").unwrap_or(&empty);
            Type::List(Box::new(type_of(types, name, items)?))
        }
        Some("object") | None if schema.get("properties").is_some() => {
            Type::Struct(struct_type(types, name, schema)?)
        }
        Some("object") => match schema.get("additionalProperties") {
            Some(values @ Value::Mapping(_)) => Type::Map(Box::new(type_of(types, name, values)?)),
            // `additionalProperties: true`, preserved unknown fields, or no schema at all (the
            // API server then keeps only `{}`): a map of anything.
            _ => Type::Map(Box::new(Type::Any)),
        },
        _ => Type::Any,
    })
}

/// The string values of `enum`, when all of them are strings.
fn string_enum(schema: &Value) -> Option<Vec<String>> {
    let values = schema.get("enum")?.as_sequence()?;
    let strings: Vec<String> = values
        .iter()
        .map(|v| v.as_str().map(str::to_string))
        .collect::<Option<_>>()?;
    (!strings.is_empty()).then_some(strings)
}

fn enum_type(types: &mut Types, name: &str, schema: &Value, values: Vec<String>) -> String {
    let name = types.fresh(name);
    let mut taken = BTreeSet::new();
    let mut variants = Vec::new();
    for value in values {
        if variants.iter().any(|(_, v)| *v == value) {
            continue; // a repeated value
        }
        let base = match type_part(&value) {
            part if part.is_empty() => "Empty".to_string(),
            part if part.starts_with(|c: char| c.is_ascii_digit()) => format!("V{part}"),
            part => part,
        };
        let mut variant = base.clone();
        let mut n = 2;
        while !taken.insert(variant.clone()) {
            variant = format!("{base}{n}");
            n += 1;
        }
        variants.push((variant, value));
    }
    types.enums.push(Enum {
        name: name.clone(),
        doc: doc(schema),
        variants,
    });
    name
}

/// A JSON name as a part of a Rust type name: `issuerRef` → `IssuerRef`, `digital signature` →
/// `DigitalSignature`; characters that cannot be in an identifier are dropped.
fn type_part(json: &str) -> String {
    let cleaned: String = json
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { ' ' })
        .collect();
    cleaned.to_upper_camel_case()
}

/// Rust's keywords that can be raw identifiers (`r#type`), and those that cannot.
const KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "do", "dyn",
    "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl", "in", "let",
    "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref", "return",
    "static", "struct", "trait", "true", "try", "type", "typeof", "unsafe", "unsized", "use",
    "virtual", "where", "while", "yield",
];
const NOT_RAW: &[&str] = &["self", "super", "crate", "_"];

/// The snake_case Rust name of a JSON field, distinct from the struct's other fields.
fn unique_field_name(taken: &mut BTreeSet<String>, json: &str) -> String {
    let cleaned: String = json
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let mut base = cleaned.to_snake_case();
    if base.is_empty()
        || base.starts_with(|c: char| c.is_ascii_digit())
        || NOT_RAW.contains(&base.as_str())
    {
        base = format!("field_{base}").trim_end_matches('_').to_string();
    }
    let mut name = base.clone();
    let mut n = 2;
    while !taken.insert(name.clone()) {
        name = format!("{base}_{n}");
        n += 1;
    }
    if KEYWORDS.contains(&name.as_str()) {
        format!("r#{name}")
    } else {
        name
    }
}

fn flag(schema: &Value, key: &str) -> bool {
    schema.get(key).and_then(Value::as_bool) == Some(true)
}

fn doc(schema: &Value) -> Option<String> {
    schema
        .get("description")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(yaml: &str) -> Value {
        serde_yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn maps_every_kind_of_schema() {
        let types = analyze(
            &schema(
                "properties:
  spec:
    type: object
    required: [name]
    properties:
      name: {type: string}
      replicas: {type: integer, format: int32}
      size: {type: integer}
      ratio: {type: number}
      on: {type: boolean}
      port: {anyOf: [{type: integer}, {type: string}], x-kubernetes-int-or-string: true}
      labels: {type: object, additionalProperties: {type: string}}
      config: {type: object, x-kubernetes-preserve-unknown-fields: true}
      raw: {x-kubernetes-preserve-unknown-fields: true}
      usages: {type: array, items: {type: string, enum: [signing, digital signature, '']}}
      ref: {type: object, properties: {type: {type: string}, self: {type: string}}}
  status: {type: object, properties: {}}",
            ),
            "Thing",
        )
        .unwrap();
        let spec = &types.structs[0];
        assert_eq!(spec.name, "ThingSpec");
        let field = |name: &str| spec.fields.iter().find(|f| f.json == name).unwrap();
        assert!(field("name").required && !field("size").required);
        assert_eq!(field("replicas").ty, Type::I32);
        assert_eq!(field("size").ty, Type::I64);
        assert_eq!(field("ratio").ty, Type::F64);
        assert_eq!(field("on").ty, Type::Bool);
        assert_eq!(field("port").ty, Type::IntOrString);
        assert_eq!(field("labels").ty, Type::Map(Box::new(Type::String)));
        assert_eq!(field("config").ty, Type::Map(Box::new(Type::Any)));
        assert_eq!(field("raw").ty, Type::Any);
        assert_eq!(
            field("usages").ty,
            Type::List(Box::new(Type::Enum("ThingSpecUsages".into())))
        );
        assert_eq!(field("ref").ty, Type::Struct("ThingSpecRef".into()));
        let reference = types
            .structs
            .iter()
            .find(|s| s.name == "ThingSpecRef")
            .unwrap();
        let names: Vec<&str> = reference.fields.iter().map(|f| f.rust.as_str()).collect();
        assert_eq!(names, ["r#type", "field_self"]);
        let variants: Vec<&str> = types.enums[0]
            .variants
            .iter()
            .map(|(v, _)| v.as_str())
            .collect();
        assert_eq!(variants, ["Signing", "DigitalSignature", "Empty"]);
        assert!(types.has_status);
    }

    #[test]
    fn names_never_clash() {
        let mut taken = BTreeSet::new();
        assert_eq!(unique_field_name(&mut taken, "fooBar"), "foo_bar");
        assert_eq!(unique_field_name(&mut taken, "foo_bar"), "foo_bar_2");
        assert_eq!(unique_field_name(&mut taken, "9lives"), "field_9lives");
        assert_eq!(unique_field_name(&mut taken, "$ref"), "r#ref");
        let types = analyze(
            &schema("properties:\n  spec:\n    properties:\n      list: {type: object, properties: {a: {type: string}}}\n  status:\n    properties: {}\n"),
            "ThingSpecList",
        )
        .unwrap();
        // `ThingSpecListSpec` + `List` is not `ThingSpecList`'s list kind, but the kind's own
        // names are reserved all the same.
        assert!(types.structs.iter().all(|s| s.name != "ThingSpecList"));
    }

    #[test]
    fn other_top_level_fields_are_refused() {
        let err = analyze(&schema("properties:\n  data: {type: object}\n"), "Thing").unwrap_err();
        assert!(err.to_string().contains("data"), "{err}");
    }
}
