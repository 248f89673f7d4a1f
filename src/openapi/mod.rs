//! From a CRD's OpenAPI v3 schema to Rust types: one analysis ([`ir`]) and one renderer
//! ([`render`]) for both commands that need them.
//!
//! - `create api --external-api-path`: the types of another project's kind, from its CRD, with an
//!   example object for their round-trip test ([`KindTypes`], [`example`]; [`Style::Foreign`]).
//! - `alpha migrate`: the fields of a Go kind's spec and status as the fields of the Rust kind
//!   the scaffold wrote, with the validations `make manifests` needs to render the same schema
//!   ([`translate`]; [`Style::Own`]).
//!
//! The same schema gives the same Rust types in both: the same structs, enums, field names and
//! field types; only the attributes differ with who owns the kind.
//!
//! kopium's own analyzer works on k8s-openapi's `JSONSchemaProps` and would bring kube,
//! k8s-openapi and tokio into this CLI; the mapping itself is small, so it is done here on the
//! YAML of the schema.

pub mod doc;
pub mod example;
pub mod ir;
pub mod kind;
pub mod render;

use serde_yaml::Value;

pub use ir::{Type, Types};
pub use kind::{KindAttributes, KindTypes};
pub use render::Style;

use crate::names::ident::field_name;

/// The translated fields of one of the project's own structs, and the nested types they need.
#[derive(Debug, Default)]
pub struct Translation {
    /// Field declarations, indented for a struct body.
    pub fields: String,
    /// Nested struct and enum definitions, each preceded by a blank line.
    pub structs: String,
    /// What the fields cannot carry over, with why.
    pub skipped: Vec<String>,
}

/// The fields of `schema` (an object schema: `properties` and `required`), for the project's own
/// struct `owner` (which names the nested types), leaving out the properties in `except` (the
/// struct has fields of its own for them, whose Rust names no translated field takes).
pub fn translate(schema: &Value, owner: &str, except: &[&str]) -> anyhow::Result<Translation> {
    let types = own_types(schema, owner, except)?;
    let mut out = Translation::default();
    let root = &types.structs[0];
    render::fields(&mut out.fields, root, Style::Own);
    if root.rest.as_ref().is_some_and(|r| r.preserved) {
        out.skipped.push(format!(
            "{owner}: its schema keeps unknown fields (x-kubernetes-preserve-unknown-fields), and so \
             do its Rust fields; add #[schemars(extend(\"x-kubernetes-preserve-unknown-fields\" = \
             true))] to {owner} for the CRD to say so"
        ));
    }
    render::items(&mut out.structs, &types, Style::Own, 1);
    Ok(out)
}

/// The types [`translate`] writes: `owner` first (its fields only are written), then the nested
/// types.
pub fn own_types<'s>(schema: &'s Value, owner: &str, except: &[&str]) -> anyhow::Result<Types<'s>> {
    let mut types = Types::new([owner]);
    let reserved: Vec<String> = except.iter().map(|e| field_name(e)).collect();
    let reserved: Vec<&str> = reserved.iter().map(String::as_str).collect();
    types.add_struct(ir::StructSpec {
        name: owner,
        prefix: owner,
        schema,
        except,
        reserved_fields: &reserved,
        keep_unknown: None,
        depth: 1,
    })?;
    Ok(types)
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
  levels:
    enum: [1, 2]
    type: integer
  conditions:
    type: array
required: [size]
type: object
"##,
            ),
            "MemcachedSpec",
            &["conditions"],
        )
        .unwrap();
        assert_eq!(
            t.fields,
            r###"    /// size is the number of pods.
    #[schemars(range(min = 1, max = 5))]
    pub size: i32,
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "imageURL")]
    #[schemars(regex(pattern = r##"^[a-z]+"#$"##))]
    pub image_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Fast"))]
    pub r#type: Option<MemcachedSpecType>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = [1, 2]))]
    pub levels: Option<i64>,
"###
        );
        assert_eq!(
            t.structs,
            "
#[derive(schemars::JsonSchema, Clone, Copy, Debug, Default, PartialEq, Deserialize, Serialize)]
pub enum MemcachedSpecType {
    #[default]
    Fast,
    Slow,
}
"
        );
        assert!(t.skipped.is_empty());
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
  bare:
    type: object
  cargo:
    type: object
    x-kubernetes-preserve-unknown-fields: true
    properties:
      weight: {type: number}
type: object
"#,
            ),
            "ShipSpec",
            &[],
        )
        .unwrap();
        let has = |text: &str, part: &str| assert!(text.contains(part), "{part}\n---\n{text}");
        has(&t.fields, "pub engine: Option<ShipSpecEngine>,");
        has(&t.fields, "pub crew: Option<Vec<String>>,");
        has(
            &t.fields,
            "pub labels: Option<std::collections::BTreeMap<String, String>>,",
        );
        has(
            &t.fields,
            "pub port: Option<k8s_openapi::apimachinery::pkg::util::intstr::IntOrString>,",
        );
        has(
            &t.fields,
            "    #[schemars(extend(\"type\" = \"object\", \"x-kubernetes-preserve-unknown-fields\" = true))]\n    pub extra: Option<serde_json::Value>,",
        );
        // A bare object is pruned by the API server: no preserved fields are made up.
        has(
            &t.fields,
            "    #[schemars(extend(\"type\" = \"object\"))]\n    pub bare: Option<serde_json::Value>,",
        );
        has(&t.structs, "/// engine of the ship.\n#[derive(KubeSchema");
        has(
            &t.structs,
            "pub struct ShipSpecEngine {\n    pub power: i64,\n}",
        );
        has(
            &t.structs,
            "#[schemars(extend(\"x-kubernetes-preserve-unknown-fields\" = true))]\npub struct ShipSpecCargo {",
        );
        has(
            &t.structs,
            "    #[serde(flatten)]\n    #[schemars(skip)]\n    pub unknown_fields: std::collections::BTreeMap<String, serde_json::Value>,",
        );
    }

    /// The scaffold's own fields keep their names: a property that would take one is renamed.
    #[test]
    fn the_scaffold_s_fields_are_never_taken() {
        let t = translate(
            &schema("properties:\n  foo: {type: integer}\n  Foo: {type: string}\n"),
            "CaptainSpec",
            &["foo"],
        )
        .unwrap();
        assert_eq!(
            t.fields,
            "    #[serde(default, skip_serializing_if = \"Option::is_none\", rename = \"Foo\")]\n    pub foo_2: Option<String>,\n"
        );
        let preserved = translate(
            &schema("type: object\nx-kubernetes-preserve-unknown-fields: true\n"),
            "CaptainSpec",
            &[],
        )
        .unwrap();
        assert!(preserved.fields.contains("#[serde(flatten)]"));
        assert!(preserved.skipped[0].contains("x-kubernetes-preserve-unknown-fields"));
    }
}
