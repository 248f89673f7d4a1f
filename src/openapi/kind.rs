//! The types of a whole kind of another project, from its `openAPIV3Schema`, as kopium writes
//! them: `<Kind>Spec` with `#[derive(CustomResource)]`, `<Kind>Status`, the nested types.
//!
//! kube-rs types a custom resource as `metadata`, `spec` and `status`. A kind whose schema has
//! other top-level fields (Argo CD's Application has `operation`), or keeps top-level fields it
//! does not name (`x-kubernetes-preserve-unknown-fields` on the whole object), or has a `spec`
//! that is not an object, or none, gets kube's `#[kube(no_spec)]` instead: the derived struct
//! `<Kind>Fields` holds every top-level field besides `apiVersion`, `kind`, `metadata` and
//! `status` (`spec` among them), flattened onto the object, so that no field is lost on a read
//! and write.

use std::fmt::Write as _;

use anyhow::{Result, bail};
use serde_yaml::Value;

use super::ir::{EMPTY, StructSpec, Types};
use super::render::{self, Style};
use crate::names::rust_str_literal as lit;

/// The fields kube-rs gives every object: never part of a generated struct.
const OBJECT_FIELDS: &[&str] = &["apiVersion", "kind", "metadata"];

/// What `#[kube(...)]` says about the kind.
pub struct KindAttributes<'a> {
    pub group: &'a str,
    pub version: &'a str,
    /// The kind as the API has it.
    pub kind: &'a str,
    /// Its Rust type: the kind, or a name derived from it (`postgresql` → `Postgresql`).
    pub type_name: &'a str,
    pub plural: &'a str,
    pub namespaced: bool,
}

/// The types of a kind: the first struct is the one with `#[derive(CustomResource)]`.
pub struct KindTypes<'s> {
    pub types: Types<'s>,
    /// The derived struct holds the top-level fields (`#[kube(no_spec)]`), not the spec.
    pub no_spec: bool,
    /// The derived struct is the spec, which the schema does not require: objects may have none.
    pub spec_may_be_absent: bool,
    /// The status struct, if the schema has a status.
    pub status: Option<String>,
}

impl<'s> KindTypes<'s> {
    /// The types of the kind whose Rust type is `type_name`, from its `openAPIV3Schema`.
    pub fn analyze(schema: &'s Value, type_name: &str) -> Result<Self> {
        // The kind's own name and its list are kube's: never a generated type's.
        let mut types = Types::new([type_name, &format!("{type_name}List")]);
        let properties = schema.get("properties").and_then(Value::as_mapping);
        let property = |name: &str| properties.and_then(|p| p.get(name));
        let spec = property("spec");
        let status = property("status");
        if let Some(status) = status
            && !is_object(status)
        {
            bail!(
                "the schema of {type_name} has a status of type {}; kube-rs types a status as an \
                 object",
                status.get("type").and_then(Value::as_str).unwrap_or("?")
            );
        }
        let others = properties.is_some_and(|p| {
            p.keys()
                .filter_map(Value::as_str)
                .any(|k| !OBJECT_FIELDS.contains(&k) && k != "spec" && k != "status")
                || p.keys().any(|k| !k.is_string())
        });
        // Top-level fields the schema does not name, kept: only `no_spec`'s flattened struct
        // can hold them beside kube's own.
        let preserved = super::ir::flag(schema, "x-kubernetes-preserve-unknown-fields");
        let no_spec = others || preserved || !spec.is_some_and(is_object);
        if no_spec {
            let name = format!("{type_name}Fields");
            types.reserve(&name);
            let mut except = OBJECT_FIELDS.to_vec();
            except.push("status");
            types.add_struct(StructSpec {
                name: &name,
                prefix: type_name,
                schema,
                except: &except,
                // kube's object has these: the flattened struct must not.
                reserved_fields: &["metadata", "status", "kind", "api_version"],
                keep_unknown: Some(preserved),
                depth: 0,
            })?;
        } else {
            let name = format!("{type_name}Spec");
            types.reserve(&name);
            types.add_struct(StructSpec {
                name: &name,
                prefix: &name,
                schema: spec.unwrap_or(&EMPTY),
                except: &[],
                reserved_fields: &[],
                keep_unknown: None,
                depth: 1,
            })?;
        }
        let status = match status {
            Some(status) => {
                let name = format!("{type_name}Status");
                if !types.reserve(&name) {
                    bail!("the schema of {type_name} names a type {name} twice");
                }
                types.add_struct(StructSpec {
                    name: &name,
                    prefix: &name,
                    schema: status,
                    except: &[],
                    reserved_fields: &[],
                    keep_unknown: None,
                    depth: 1,
                })?;
                Some(name)
            }
            None => None,
        };
        Ok(Self {
            types,
            no_spec,
            spec_may_be_absent: !no_spec && may_be_absent(schema, spec),
            status,
        })
    }

    /// The `use` lines the types need.
    pub fn imports(&self) -> String {
        let mut out = String::new();
        if self.types.uses_map() {
            out.push_str("use std::collections::BTreeMap;\n\n");
        }
        if self.types.uses_int_or_string() {
            out.push_str("use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;\n");
        }
        out.push_str("use kube::CustomResource;\nuse serde::{Deserialize, Serialize};\n");
        out
    }

    /// The structs and enums, the first with the `#[kube(...)]` attributes that make the kind.
    pub fn items(&self, kind: &KindAttributes) -> String {
        let mut out = String::new();
        let Some(root) = self.types.structs.first() else {
            return out;
        };
        let mut attributes = String::new();
        let _ = writeln!(
            attributes,
            "#[kube(group = {}, version = {}, kind = {}, plural = {})]",
            lit(kind.group),
            lit(kind.version),
            lit(kind.kind),
            lit(kind.plural)
        );
        let mut more = Vec::new();
        if kind.type_name != kind.kind {
            more.push(format!("root = {}", lit(kind.type_name)));
        }
        if self.no_spec {
            more.push("no_spec".to_string());
        }
        if kind.namespaced {
            more.push("namespaced".to_string());
        }
        if let Some(status) = &self.status {
            more.push(format!("status = {}", lit(status)));
        }
        // The CRD is the other project's: no schema to derive, and none is rendered.
        more.push("schema = \"disabled\"".to_string());
        // `<Kind>` compares like its spec and status (the webhooks' tests compare objects).
        more.push("derive = \"PartialEq\"".to_string());
        let _ = writeln!(attributes, "#[kube({})]", more.join(", "));
        if self.spec_may_be_absent {
            attributes.push_str(&ABSENT_SPEC.replace("{kind}", kind.kind));
        }
        let style = Style::Foreign {
            default: self.spec_may_be_absent,
        };
        render::struct_item(&mut out, root, style, Some(&attributes));
        if self.spec_may_be_absent {
            let _ = writeln!(
                out,
                "\noperator_rs_runtime::spec_or_default!({});",
                root.name
            );
        }
        render::items(&mut out, &self.types, style, 1);
        if self.types.beside_object_fields() {
            render::without_object_fields(&mut out);
        }
        out
    }
}

/// Between the spec's `#[kube(...)]` and its fields, where the CRD does not require a spec.
const ABSENT_SPEC: &str = "\
// The CRD does not require a spec: a {kind} without one, or with `spec: null`, reads as the
// default spec (as Go reads its zero value), instead of failing to decode, which would stall
// every watch of the kind. `remote = \"Self\"` keeps the serde derives as plain functions, which
// `spec_or_default!` below wraps in the `Deserialize` and `Serialize` impls.
#[serde(remote = \"Self\")]
";

/// Whether objects of the kind may lack `spec` (of schema `spec`): the root does not require it,
/// or lets it be `null`.
pub fn may_be_absent(schema: &Value, spec: Option<&Value>) -> bool {
    !super::ir::required(schema).contains("spec")
        || spec.is_some_and(|s| super::ir::flag(s, "nullable"))
}

/// Whether a schema describes an object (or leaves the type open).
fn is_object(schema: &Value) -> bool {
    matches!(
        schema.get("type").and_then(Value::as_str),
        None | Some("object")
    ) && schema.is_mapping()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::is_format_char;
    use crate::openapi::example;

    fn schema(yaml: &str) -> Value {
        serde_yaml::from_str(yaml).unwrap()
    }

    fn attributes<'a>(kind: &'a str, type_name: &'a str) -> KindAttributes<'a> {
        KindAttributes {
            group: "example.io",
            version: "v1",
            kind,
            type_name,
            plural: "things",
            namespaced: true,
        }
    }

    /// The types file as the template writes it, parsed.
    fn code(types: &KindTypes, attributes: &KindAttributes) -> String {
        let code = format!(
            "{}{}\nconst EXAMPLE: &str = {};",
            types.imports(),
            types.items(attributes),
            example::object(types, attributes)
        );
        syn::parse_file(&code).unwrap_or_else(|e| panic!("{e}\n{code}"));
        code
    }

    /// A schema from a hostile CRD: names and values that are not identifiers, quotes,
    /// backslashes, invisible and bidirectional characters. The code must parse, and hold
    /// nothing invisible.
    #[test]
    fn hostile_schemas_give_plain_rust() {
        let schema = schema(
            "properties:
  spec:
    description: \"evil \\u202E text\\u0007 */ \\\"quoted\\\"\"
    properties:
      \"a\\\"b\": {type: string, enum: [\"x\\u202Ey\", \"\\\\\", \"\", self, Self]}
      \"\\u200Bzero\": {type: object, additionalProperties: {type: integer}}
      type: {type: array, items: {type: object, x-kubernetes-preserve-unknown-fields: true, properties: {self: {type: boolean}}}}
",
        );
        let types = KindTypes::analyze(&schema, "Thing").unwrap();
        let code = code(&types, &attributes("Thing", "Thing"));
        assert!(code.is_ascii(), "{code}");
        assert!(!code.chars().any(is_format_char));
        assert!(code.contains("#[serde(flatten)]"), "{code}");
        assert!(code.contains(r#""x\u202ey""#), "{code}");
        assert!(code.contains("    SelfValue,\n"), "{code}");
        assert!(!code.contains("root ="), "{code}");
    }

    /// Argo CD's Application has `operation` next to spec and status; kube's `no_spec` keeps it.
    #[test]
    fn top_level_fields_besides_spec_and_status() {
        let schema = schema(
            "description: An Application.
required: [metadata, spec]
properties:
  apiVersion: {type: string}
  kind: {type: string}
  metadata: {type: object}
  operation: {type: object, properties: {sync: {type: object, properties: {prune: {type: boolean}}}}}
  spec: {type: object, required: [project], properties: {project: {type: string}}}
  status: {type: object, properties: {health: {type: string}}}
  Kind: {type: string}
",
        );
        let types = KindTypes::analyze(&schema, "Application").unwrap();
        assert!(types.no_spec);
        let names: Vec<&str> = types
            .types
            .structs
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(
            names,
            [
                "ApplicationFields",
                "ApplicationOperation",
                "ApplicationOperationSync",
                "ApplicationSpec",
                "ApplicationStatus"
            ]
        );
        let root = &types.types.structs[0];
        let fields: Vec<(&str, &str, bool)> = root
            .fields
            .iter()
            .map(|f| (f.json.as_str(), f.rust.as_str(), f.required))
            .collect();
        assert_eq!(
            fields,
            [
                ("operation", "operation", false),
                ("spec", "spec", true),
                ("Kind", "kind_2", false)
            ]
        );
        let attributes = attributes("Application", "Application");
        let code = code(&types, &attributes);
        assert!(
            code.contains("#[kube(no_spec, namespaced, status = \"ApplicationStatus\""),
            "{code}"
        );
        let example = example::object(&types, &attributes);
        assert!(example.contains("\n    \"operation\": {"), "{example}");
        assert!(example.contains("\n    \"spec\": {"), "{example}");
    }

    /// A spec that is only `x-kubernetes-preserve-unknown-fields` keeps every field.
    #[test]
    fn a_preserved_spec_keeps_every_field() {
        let schema = schema(
            "properties:\n  spec: {type: object, x-kubernetes-preserve-unknown-fields: true}\n",
        );
        let types = KindTypes::analyze(&schema, "Thing").unwrap();
        let code = code(&types, &attributes("Thing", "Thing"));
        assert!(
            code.contains(
                "pub struct ThingSpec {\n    /// The fields that the schema does not name"
            ),
            "{code}"
        );
        let example = example::object(&types, &attributes("Thing", "Thing"));
        let json = example.trim_start_matches("r#\"").trim_end_matches("\"#");
        let value: serde_json::Value = serde_json::from_str(json).unwrap();
        assert_eq!(value["spec"], serde_json::json!({"notInTheSchema": "kept"}));
    }

    /// A kind that keeps the top-level fields its schema does not name keeps them beside its
    /// spec, in `no_spec`'s flattened struct, without the `apiVersion` and `kind` kube writes.
    #[test]
    fn a_preserved_root_keeps_every_top_level_field() {
        let schema = schema(
            "type: object\nx-kubernetes-preserve-unknown-fields: true\nproperties:\n  spec: {type: object, properties: {a: {type: string}}}\n",
        );
        let types = KindTypes::analyze(&schema, "Thing").unwrap();
        assert!(types.no_spec);
        let code = code(&types, &attributes("Thing", "Thing"));
        assert!(
            code.contains("#[serde(flatten, deserialize_with = \"without_object_fields\")]\n    pub unknown_fields: BTreeMap<String, serde_json::Value>,"),
            "{code}"
        );
        assert!(code.contains("fn without_object_fields<'de"), "{code}");
        let example = example::object(&types, &attributes("Thing", "Thing"));
        let json = example.trim_start_matches("r#\"").trim_end_matches("\"#");
        let value: serde_json::Value = serde_json::from_str(json).unwrap();
        assert_eq!(value["notInTheSchema"], "kept");
        assert_eq!(value["spec"]["a"], "a");
    }

    /// A schema of `{type: object}` alone: kube's fields only, and an example that parses.
    #[test]
    fn an_object_and_nothing_more() {
        for yaml in ["type: object\n", "type: object\nproperties: {}\n"] {
            let schema = schema(yaml);
            let types = KindTypes::analyze(&schema, "Thing").unwrap();
            code(&types, &attributes("Thing", "Thing"));
            let example = example::object(&types, &attributes("Thing", "Thing"));
            let json = example.trim_start_matches("r#\"").trim_end_matches("\"#");
            let value: serde_json::Value = serde_json::from_str(json).unwrap();
            assert_eq!(value["metadata"]["name"], "example", "{yaml}");
        }
    }

    /// Zalando's `postgresql`: the kind on the wire, the derived name in Rust.
    #[test]
    fn foreign_kind_names() {
        let schema = schema("properties:\n  spec: {properties: {a: {type: string}}}\n");
        let types = KindTypes::analyze(&schema, "Postgresql").unwrap();
        let code = code(&types, &attributes("postgresql", "Postgresql"));
        assert!(code.contains("kind = \"postgresql\""), "{code}");
        assert!(code.contains("root = \"Postgresql\""), "{code}");
        assert!(code.contains("pub struct PostgresqlSpec {"), "{code}");
    }

    /// A spec the schema does not require (or lets be null) reads as its default when absent:
    /// every type derives `Default`, enums name their default variant, and the spec's serde
    /// derives serve `spec_or_default!`. A required spec is left as it was.
    #[test]
    fn a_spec_that_may_be_absent_reads_as_its_default() {
        let spec = "  spec:\n    required: [mode, ref]\n    properties:\n      mode: {type: string, enum: [Fast, Slow], default: Slow}\n      ref: {type: object, properties: {name: {type: string}}}\n";
        let attributes = attributes("Thing", "Thing");
        for (yaml, absent) in [
            (format!("properties:\n{spec}"), true),
            (format!("required: [metadata]\nproperties:\n{spec}"), true),
            (
                format!("required: [spec]\nproperties:\n{spec}    nullable: true\n"),
                true,
            ),
            (format!("required: [spec]\nproperties:\n{spec}"), false),
        ] {
            let schema = schema(&yaml);
            let types = KindTypes::analyze(&schema, "Thing").unwrap();
            assert_eq!(types.spec_may_be_absent, absent, "{yaml}");
            let code = code(&types, &attributes);
            let derives = code.matches("Default, PartialEq").count();
            let remote = "#[serde(remote = \"Self\")]\npub struct ThingSpec {";
            let call = "\noperator_rs_runtime::spec_or_default!(ThingSpec);\n";
            if absent {
                assert_eq!(derives, 3, "{code}");
                assert!(code.contains(remote) && code.contains(call), "{code}");
                assert!(
                    code.contains("    Fast,\n    #[default]\n    Slow,\n"),
                    "{code}"
                );
            } else {
                assert_eq!(derives, 0, "{code}");
                assert!(
                    !code.contains("remote") && !code.contains("spec_or_default"),
                    "{code}"
                );
                assert!(!code.contains("#[default]"), "{code}");
            }
        }
        // `no_spec`'s spec is a field like any other: an `Option` when not required.
        let schema = schema(&format!("properties:\n  other: {{type: string}}\n{spec}"));
        let types = KindTypes::analyze(&schema, "Thing").unwrap();
        assert!(types.no_spec && !types.spec_may_be_absent);
        assert!(code(&types, &attributes).contains("pub spec: Option<ThingSpec>,"));
    }

    #[test]
    fn odd_specs_and_statuses() {
        // No spec at all: the object's other fields, or none.
        let none = schema("properties:\n  status: {type: object}\n");
        let types = KindTypes::analyze(&none, "Thing").unwrap();
        assert!(types.no_spec && types.types.structs[0].fields.is_empty());
        // A spec that is not an object is a field like any other.
        let string = schema("properties:\n  spec: {type: string}\n");
        let types = KindTypes::analyze(&string, "Thing").unwrap();
        assert!(types.no_spec);
        assert_eq!(
            types.types.structs[0].fields[0].ty,
            crate::openapi::Type::String
        );
        let bad = schema("properties:\n  status: {type: string}\n");
        let err = KindTypes::analyze(&bad, "Thing").err().unwrap();
        assert!(err.to_string().contains("status of type string"), "{err}");
    }
}
