//! The analysis: an object schema to the Rust types that hold it, as kopium maps them.
//!
//! - An object with `properties` (with or without `type: object`) is a struct, named after its
//!   path (`CertificateSpecIssuerRef`); one that also has `x-kubernetes-preserve-unknown-fields`
//!   keeps the fields its schema does not name in a flattened map, as the API server keeps them
//!   (and one with `additionalProperties` too, in a map of their type).
//! - An object without properties is a `BTreeMap` of its `additionalProperties`, or, when it has
//!   none (its fields preserved, or none at all), a `serde_json::Value`.
//! - `nullable` makes a field an `Option` (written back as `null` when the field is required), and
//!   the items of a list or the values of a map `Option`s, so that a `null` among them reads.
//! - A string with an `enum` of strings is a Rust enum; `x-kubernetes-int-or-string`
//!   k8s-openapi's `IntOrString`; `integer` is `i32` (`format: int32`) or `i64`, `number` `f64`.
//! - Anything else (no type, `anyOf` without a type) is a `serde_json::Value`.
//!
//! Field, variant and type names follow the identifier policy of [`crate::names::ident`]: every
//! outside name gets a Rust name, and keeps its own on the wire.
//!
//! A schema met again, the same to the last character (descriptions included), is the same Rust
//! type, named where it was first met: CRDs inline every Go type where it is used, and Argo
//! Workflows' 900 kB ClusterWorkflowTemplate holds some 1,700 objects but only 160 different
//! ones (containers, volumes, probes …), which Go, and now Rust, declare once.

use std::collections::{BTreeSet, HashMap};

use anyhow::{Result, bail};
use serde_yaml::Value;

use crate::names::ident::{self, Namer};

/// Schemas nested deeper than this are refused: no real CRD comes close (Gateway API's reach
/// about 15 levels), and the generated code would be unreadable long before.
pub const MAX_DEPTH: usize = 64;

/// Type names the generated code uses besides its own types: a generated type of that name
/// would shadow them (a kind `Custom` with a field `resource` would declare `CustomResource`).
const NAMES_IN_GENERATED_CODE: &[&str] = &[
    "BTreeMap",
    "Condition",
    "CustomResource",
    "Default",
    "Deserialize",
    "IntOrString",
    "JsonSchema",
    "KubeSchema",
    "None",
    "Option",
    "Serialize",
    "Some",
    "String",
    "Value",
    "Vec",
];

/// The Rust type of one schema.
#[derive(Debug, Clone, PartialEq)]
pub enum Type {
    Bool,
    I32,
    I64,
    F64,
    String,
    IntOrString,
    /// Anything (`serde_json::Value`): no schema, a free-form object, or preserved fields.
    Any,
    List(Box<Type>),
    /// A `BTreeMap<String, _>`.
    Map(Box<Type>),
    /// An `Option<_>`: a nullable item of a list or value of a map.
    Optional(Box<Type>),
    /// A generated struct, by name.
    Struct(String),
    /// A generated enum, by name.
    Enum(String),
}

/// A field of a struct.
#[derive(Debug, Clone)]
pub struct Field<'s> {
    /// The name on the wire.
    pub json: String,
    /// The Rust name, raw (`r#type`) where it is a keyword.
    pub rust: String,
    pub ty: Type,
    /// Required and not nullable: not an `Option`.
    pub required: bool,
    /// Required and nullable: an `Option` written back as `null` when it is `None` (a required
    /// field left out would be refused).
    pub write_null: bool,
    pub doc: Option<String>,
    /// The field's schema, for what the type does not say (validations, example values).
    pub schema: &'s Value,
}

#[derive(Debug, Clone)]
pub struct Struct<'s> {
    pub name: String,
    pub doc: Option<String>,
    pub fields: Vec<Field<'s>>,
    /// The flattened map of the fields its schema does not name, if it keeps them.
    pub rest: Option<Rest>,
    /// The object's schema.
    pub schema: &'s Value,
}

/// The fields of an object that its schema does not name, kept in a flattened `BTreeMap`.
#[derive(Debug, Clone)]
pub struct Rest {
    /// The map's Rust name: `unknown_fields`, `additional_properties`.
    pub rust: String,
    /// The type of its values: anything for preserved fields, `additionalProperties`' type.
    pub ty: Type,
    /// `x-kubernetes-preserve-unknown-fields` (else `additionalProperties`).
    pub preserved: bool,
    /// The fields are a kind's top-level ones, beside `apiVersion` and `kind`, which kube's
    /// object reads itself: the map must leave those two out.
    pub beside_object_fields: bool,
}

#[derive(Debug, Clone)]
pub struct Variant {
    pub rust: String,
    pub json: String,
}

#[derive(Debug, Clone)]
pub struct Enum {
    pub name: String,
    pub doc: Option<String>,
    pub variants: Vec<Variant>,
    /// The schema's `default`, when it is one of the variants.
    pub default: Option<usize>,
}

/// The types of one schema: structs in the order they are met (a struct before the types nested
/// in it), then enums.
#[derive(Debug, Default)]
pub struct Types<'s> {
    pub structs: Vec<Struct<'s>>,
    pub enums: Vec<Enum>,
    taken: BTreeSet<String>,
    /// The type of every struct and enum schema met so far.
    seen: HashMap<&'s Value, Type>,
}

/// How [`Types::add_struct`] reads an object schema.
pub struct StructSpec<'a, 's> {
    /// The struct's name (taken as it is: the caller reserved it).
    pub name: &'a str,
    /// What the names of the nested types start with: usually the struct's name.
    pub prefix: &'a str,
    pub schema: &'s Value,
    /// Properties left out (the caller has fields of its own for them).
    pub except: &'a [&'a str],
    /// Rust field names the struct has besides the generated ones.
    pub reserved_fields: &'a [&'a str],
    /// Whether unknown fields are kept; None: as the schema says.
    pub keep_unknown: Option<bool>,
    /// How deep the schema is nested in the whole.
    pub depth: usize,
}

impl<'s> Types<'s> {
    /// No types yet; `reserved`: type names none of them may have (the kind's own, for one).
    pub fn new<'a>(reserved: impl IntoIterator<Item = &'a str>) -> Self {
        let mut taken: BTreeSet<String> = reserved.into_iter().map(str::to_string).collect();
        taken.extend(NAMES_IN_GENERATED_CODE.iter().map(|n| n.to_string()));
        Self {
            taken,
            ..Self::default()
        }
    }

    pub fn find_struct(&self, name: &str) -> Option<&Struct<'s>> {
        self.structs.iter().find(|s| s.name == name)
    }

    pub fn find_enum(&self, name: &str) -> Option<&Enum> {
        self.enums.iter().find(|e| e.name == name)
    }

    /// Whether any field (or a struct's unknown fields) has a type that `wanted` matches, at any
    /// depth of lists and maps.
    pub fn any_type(&self, wanted: fn(&Type) -> bool) -> bool {
        fn walk(ty: &Type, wanted: fn(&Type) -> bool) -> bool {
            wanted(ty)
                || matches!(ty, Type::List(inner) | Type::Map(inner) | Type::Optional(inner)
                    if walk(inner, wanted))
        }
        self.structs.iter().any(|s| {
            s.fields.iter().any(|f| walk(&f.ty, wanted))
                || s.rest.as_ref().is_some_and(|r| walk(&r.ty, wanted))
        })
    }

    /// Whether the code needs `BTreeMap`.
    pub fn uses_map(&self) -> bool {
        self.structs.iter().any(|s| s.rest.is_some())
            || self.any_type(|ty| matches!(ty, Type::Map(_)))
    }

    /// Whether a struct's map of the fields it does not name sits beside `apiVersion` and `kind`.
    pub fn beside_object_fields(&self) -> bool {
        self.structs
            .iter()
            .any(|s| s.rest.as_ref().is_some_and(|r| r.beside_object_fields))
    }

    /// Whether the code needs `IntOrString`.
    pub fn uses_int_or_string(&self) -> bool {
        self.any_type(|ty| *ty == Type::IntOrString)
    }

    /// Takes `name` for a type, so that no generated type gets it.
    pub fn reserve(&mut self, name: &str) -> bool {
        self.taken.insert(name.to_string())
    }

    /// A type name not yet used (`Name`, `Name2`, `Name3` …).
    fn fresh(&mut self, base: &str) -> String {
        let name = std::iter::once(base.to_string())
            .chain((2..).map(|n| format!("{base}{n}")))
            .find(|name| !self.taken.contains(name))
            .expect("some number is free");
        self.taken.insert(name.clone());
        name
    }

    /// Adds the struct of an object schema and the types nested in it; returns its index.
    pub fn add_struct(&mut self, spec: StructSpec<'_, 's>) -> Result<usize> {
        if spec.depth > MAX_DEPTH {
            bail!(
                "the schema nests objects more than {MAX_DEPTH} levels deep (at {}); no Rust types \
                 are generated for such a schema",
                spec.name
            );
        }
        let schema = spec.schema;
        let index = self.structs.len();
        self.structs.push(Struct {
            name: spec.name.to_string(),
            doc: description(schema),
            fields: Vec::new(),
            rest: None,
            schema,
        });
        let fields = self.fields(&spec)?;
        let rest = self.rest(&spec, &fields)?;
        let s = &mut self.structs[index];
        s.fields = fields;
        s.rest = rest;
        Ok(index)
    }

    /// The fields of the object schema of `spec`, each with its type (nested types added).
    fn fields(&mut self, spec: &StructSpec<'_, 's>) -> Result<Vec<Field<'s>>> {
        let schema = spec.schema;
        let required = required(schema);
        let properties: Vec<(String, &'s Value)> = schema
            .get("properties")
            .and_then(Value::as_mapping)
            .map(|p| {
                p.iter()
                    .filter_map(|(k, v)| Some((key_text(k)?, v)))
                    .filter(|(k, _)| !spec.except.contains(&k.as_str()))
                    .collect()
            })
            .unwrap_or_default();
        let wire: Vec<&str> = properties.iter().map(|(k, _)| k.as_str()).collect();
        let rust = Namer::snake()
            .reserve(spec.reserved_fields.iter().copied())
            .names(&wire, ident::field_name);
        let mut fields = Vec::new();
        for ((json, property), rust) in properties.iter().zip(rust) {
            // Named after the field, so that the types of `aB` and `a-b` are numbered as the
            // fields are, whatever their order.
            let stem = ident::pascal_stem(rust.trim_start_matches("r#"));
            let nested = format!("{}{stem}", spec.prefix);
            let ty = self.type_of(&nested, property, spec.depth + 1)?;
            let required = required.contains(json);
            fields.push(Field {
                required: required && !flag(property, "nullable"),
                write_null: required && flag(property, "nullable"),
                doc: description(property),
                json: json.clone(),
                rust,
                ty,
                schema: property,
            });
        }
        Ok(fields)
    }

    /// Where the fields the schema does not name go: the unknown fields it keeps, or its
    /// `additionalProperties`, under a name none of `fields` has.
    fn rest(&mut self, spec: &StructSpec<'_, 's>, fields: &[Field<'s>]) -> Result<Option<Rest>> {
        let schema = spec.schema;
        let keep_unknown = spec
            .keep_unknown
            .unwrap_or_else(|| flag(schema, "x-kubernetes-preserve-unknown-fields"));
        let rest = match schema.get("additionalProperties") {
            _ if keep_unknown => Some((Type::Any, true, "unknown_fields")),
            Some(values @ Value::Mapping(_)) => {
                let name = format!("{}Value", spec.prefix);
                let ty = self.item_type(&name, values, spec.depth + 1)?;
                Some((ty, false, "additional_properties"))
            }
            Some(Value::Bool(true)) => Some((Type::Any, false, "additional_properties")),
            _ => None,
        };
        Ok(rest.map(|(ty, preserved, base)| {
            let taken: BTreeSet<&str> = fields
                .iter()
                .map(|f| f.rust.as_str())
                .chain(spec.reserved_fields.iter().copied())
                .collect();
            let rust = std::iter::once(base.to_string())
                .chain((2..).map(|n| format!("{base}_{n}")))
                .find(|name| !taken.contains(name.as_str()))
                .expect("some number is free");
            Rest {
                rust,
                ty,
                preserved,
                beside_object_fields: spec.depth == 0,
            }
        }))
    }

    /// The type of the items of a list or the values of a map: an `Option` when `null` is one.
    fn item_type(&mut self, name: &str, schema: &'s Value, depth: usize) -> Result<Type> {
        let ty = self.type_of(name, schema, depth)?;
        Ok(if flag(schema, "nullable") && ty != Type::Any {
            Type::Optional(Box::new(ty))
        } else {
            ty
        })
    }

    /// The type of `schema`, named `name` if it is a struct or an enum (and not met before).
    fn type_of(&mut self, name: &str, schema: &'s Value, depth: usize) -> Result<Type> {
        if !schema.is_mapping() {
            return Ok(Type::Any);
        }
        if let Some(ty) = self.seen.get(schema) {
            return Ok(ty.clone());
        }
        let ty = self.new_type_of(name, schema, depth)?;
        if matches!(ty, Type::Struct(_) | Type::Enum(_)) {
            self.seen.insert(schema, ty.clone());
        }
        Ok(ty)
    }

    fn new_type_of(&mut self, name: &str, schema: &'s Value, depth: usize) -> Result<Type> {
        if flag(schema, "x-kubernetes-int-or-string") {
            return Ok(Type::IntOrString);
        }
        let format = schema.get("format").and_then(Value::as_str);
        let ty = schema.get("type").and_then(Value::as_str);
        Ok(match ty {
            Some("boolean") => Type::Bool,
            Some("integer") if format == Some("int32") => Type::I32,
            Some("integer") => Type::I64,
            Some("number") => Type::F64,
            Some("string") => match string_enum(schema) {
                Some(values) => Type::Enum(self.add_enum(name, schema, values)),
                None => Type::String,
            },
            Some("array") => {
                let items = schema.get("items").unwrap_or(&EMPTY);
                Type::List(Box::new(self.item_type(name, items, depth + 1)?))
            }
            Some("object") | None if schema.get("properties").is_some() => {
                let name = self.fresh(name);
                self.add_struct(StructSpec {
                    name: &name,
                    prefix: &name,
                    schema,
                    except: &[],
                    reserved_fields: &[],
                    keep_unknown: None,
                    depth,
                })?;
                Type::Struct(name)
            }
            Some("object") => match schema.get("additionalProperties") {
                Some(values @ Value::Mapping(_)) => {
                    Type::Map(Box::new(self.item_type(name, values, depth + 1)?))
                }
                Some(Value::Bool(true)) => Type::Map(Box::new(Type::Any)),
                // Preserved fields, or a bare object (whose fields the API server prunes).
                _ => Type::Any,
            },
            _ => Type::Any,
        })
    }

    fn add_enum(&mut self, name: &str, schema: &Value, values: Vec<String>) -> String {
        let name = self.fresh(name);
        let mut unique: Vec<&str> = Vec::new();
        for value in &values {
            if !unique.contains(&value.as_str()) {
                unique.push(value);
            }
        }
        let rust = Namer::pascal().names(&unique, ident::variant_name);
        let variants: Vec<Variant> = unique
            .iter()
            .zip(rust)
            .map(|(json, rust)| Variant {
                rust,
                json: json.to_string(),
            })
            .collect();
        let default = schema
            .get("default")
            .and_then(Value::as_str)
            .and_then(|d| variants.iter().position(|v| v.json == d));
        self.enums.push(Enum {
            name: name.clone(),
            doc: description(schema),
            variants,
            default,
        });
        name
    }
}

/// An empty schema: anything.
pub static EMPTY: Value = Value::Null;

/// The string values of `enum`, when all of them are strings.
fn string_enum(schema: &Value) -> Option<Vec<String>> {
    let values = schema.get("enum")?.as_sequence()?;
    let strings: Vec<String> = values
        .iter()
        .map(|v| v.as_str().map(str::to_string))
        .collect::<Option<_>>()?;
    (!strings.is_empty()).then_some(strings)
}

/// A property name as the API server reads it: YAML may spell `200:` or `true:` without quotes,
/// which JSON (and so Kubernetes) reads as the strings "200" and "true".
pub fn key_text(key: &Value) -> Option<String> {
    match key {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null => Some("null".into()),
        _ => None,
    }
}

/// The names an object schema lists under `required`.
pub fn required(schema: &Value) -> BTreeSet<String> {
    schema
        .get("required")
        .and_then(Value::as_sequence)
        .map(|r| r.iter().filter_map(key_text).collect())
        .unwrap_or_default()
}

pub fn flag(schema: &Value, key: &str) -> bool {
    schema.get(key).and_then(Value::as_bool) == Some(true)
}

fn description(schema: &Value) -> Option<String> {
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

    fn analyze<'s>(schema: &'s Value, name: &str) -> Types<'s> {
        let mut types = Types::new([name]);
        types
            .add_struct(StructSpec {
                name,
                prefix: name,
                schema,
                except: &[],
                reserved_fields: &[],
                keep_unknown: None,
                depth: 1,
            })
            .unwrap();
        types
    }

    #[test]
    fn maps_every_kind_of_schema() {
        let spec = schema(
            "type: object
required: [name, nullable]
properties:
  name: {type: string}
  nullable: {type: string, nullable: true}
  replicas: {type: integer, format: int32}
  size: {type: integer}
  ratio: {type: number}
  on: {type: boolean}
  port: {anyOf: [{type: integer}, {type: string}], x-kubernetes-int-or-string: true}
  labels: {type: object, additionalProperties: {type: string}}
  anything: {type: object, additionalProperties: true}
  config: {type: object, x-kubernetes-preserve-unknown-fields: true}
  bare: {type: object}
  raw: {x-kubernetes-preserve-unknown-fields: true}
  untyped: {properties: {a: {type: string}}}
  kept: {type: object, x-kubernetes-preserve-unknown-fields: true, properties: {a: {type: string}}}
  usages: {type: array, items: {type: string, enum: [signing, digital signature, '', signing]}}
  numbers: {type: integer, enum: [1, 2]}
  list: {type: array}
  ref: {type: object, properties: {type: {type: string}, self: {type: string}}}
  200: {type: string}
",
        );
        let types = analyze(&spec, "ThingSpec");
        let s = &types.structs[0];
        let field = |name: &str| s.fields.iter().find(|f| f.json == name).unwrap();
        assert!(field("name").required && !field("size").required);
        assert!(!field("nullable").required, "nullable is optional");
        assert_eq!(field("replicas").ty, Type::I32);
        assert_eq!(field("size").ty, Type::I64);
        assert_eq!(field("ratio").ty, Type::F64);
        assert_eq!(field("on").ty, Type::Bool);
        assert_eq!(field("port").ty, Type::IntOrString);
        assert_eq!(field("labels").ty, Type::Map(Box::new(Type::String)));
        assert_eq!(field("anything").ty, Type::Map(Box::new(Type::Any)));
        assert_eq!(field("config").ty, Type::Any);
        assert_eq!(field("bare").ty, Type::Any);
        assert_eq!(field("raw").ty, Type::Any);
        assert_eq!(field("untyped").ty, Type::Struct("ThingSpecUntyped".into()));
        assert_eq!(field("kept").ty, Type::Struct("ThingSpecKept".into()));
        assert_eq!(field("numbers").ty, Type::I64);
        assert_eq!(field("list").ty, Type::List(Box::new(Type::Any)));
        assert_eq!(field("200").rust, "field_200");
        let kept = types.find_struct("ThingSpecKept").unwrap();
        assert_eq!(kept.rest.as_ref().unwrap().rust, "unknown_fields");
        assert_eq!(
            field("usages").ty,
            Type::List(Box::new(Type::Enum("ThingSpecUsages".into())))
        );
        let reference = types.find_struct("ThingSpecRef").unwrap();
        let names: Vec<&str> = reference.fields.iter().map(|f| f.rust.as_str()).collect();
        assert_eq!(names, ["r#type", "self_"]);
        let variants: Vec<&str> = types.enums[0]
            .variants
            .iter()
            .map(|v| v.rust.as_str())
            .collect();
        assert_eq!(variants, ["Signing", "DigitalSignature", "Empty"]);
        assert!(types.uses_map() && types.uses_int_or_string());
    }

    #[test]
    fn names_never_clash() {
        let spec = schema(
            "properties:
  fooBar: {type: string}
  foo_bar: {type: string}
  aB: {type: object, properties: {x: {type: string}}}
  a-b: {type: object, properties: {y: {type: string}}}
  unknownFields: {type: string}
x-kubernetes-preserve-unknown-fields: true
",
        );
        let types = analyze(&spec, "ThingSpec");
        let s = &types.structs[0];
        let rust: Vec<&str> = s.fields.iter().map(|f| f.rust.as_str()).collect();
        assert_eq!(
            rust,
            ["foo_bar_2", "foo_bar", "a_b_2", "a_b", "unknown_fields"]
        );
        assert_eq!(s.rest.as_ref().unwrap().rust, "unknown_fields_2");
        let types_of: Vec<(&str, &Type)> =
            s.fields.iter().map(|f| (f.rust.as_str(), &f.ty)).collect();
        assert_eq!(types_of[2], ("a_b_2", &Type::Struct("ThingSpecAB2".into())));
        assert_eq!(types_of[3], ("a_b", &Type::Struct("ThingSpecAB".into())));
        // A field whose Rust name is the stem of another's type is numbered like any name.
        let spec = schema(
            "properties:\n  a: {properties: {b: {type: string}}}\n  a_b: {properties: {c: {type: string}}}\n",
        );
        let types = analyze(&spec, "ThingSpec");
        let names: Vec<&str> = types.structs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["ThingSpec", "ThingSpecA", "ThingSpecAB"]);
        // Names the generated code uses are never a generated type's.
        let spec = schema("properties:\n  resource: {properties: {a: {type: string}}}\n");
        let mut types = Types::new(["Custom"]);
        types
            .add_struct(StructSpec {
                name: "Custom",
                prefix: "Custom",
                schema: &spec,
                except: &[],
                reserved_fields: &[],
                keep_unknown: None,
                depth: 1,
            })
            .unwrap();
        assert_eq!(types.structs[1].name, "CustomResource2");
    }

    /// The same schema twice is one type, named where it was first met; a description that
    /// differs makes another.
    #[test]
    fn the_same_schema_is_the_same_type() {
        let spec = schema(
            "properties:
  containers: {type: array, items: {type: object, properties: {env: {type: object, properties: {name: {type: string}}}}}}
  initContainers: {type: array, items: {type: object, properties: {env: {type: object, properties: {name: {type: string}}}}}}
  sidecar: {type: object, properties: {env: {type: object, description: other, properties: {name: {type: string}}}}}
  policy: {type: string, enum: [a, b]}
  otherPolicy: {type: string, enum: [a, b]}
",
        );
        let types = analyze(&spec, "PodSpec2");
        let names: Vec<&str> = types.structs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "PodSpec2",
                "PodSpec2Containers",
                "PodSpec2ContainersEnv",
                "PodSpec2Sidecar",
                "PodSpec2SidecarEnv"
            ]
        );
        let ty = |json: &str| {
            &types.structs[0]
                .fields
                .iter()
                .find(|f| f.json == json)
                .unwrap()
                .ty
        };
        assert_eq!(ty("initContainers"), ty("containers"));
        assert_eq!(ty("otherPolicy"), &Type::Enum("PodSpec2Policy".into()));
        assert_eq!(types.enums.len(), 1);
    }

    #[test]
    fn absurd_depth_is_refused() {
        let mut deep = schema("{type: string}");
        for _ in 0..=MAX_DEPTH {
            let mut properties = serde_yaml::Mapping::new();
            properties.insert("a".into(), deep);
            let mut object = serde_yaml::Mapping::new();
            object.insert("properties".into(), Value::Mapping(properties));
            deep = Value::Mapping(object);
        }
        let mut types = Types::new(["Deep"]);
        let err = types
            .add_struct(StructSpec {
                name: "Deep",
                prefix: "Deep",
                schema: &deep,
                except: &[],
                reserved_fields: &[],
                keep_unknown: None,
                depth: 1,
            })
            .unwrap_err();
        assert!(err.to_string().contains("levels deep"), "{err}");
    }
}
