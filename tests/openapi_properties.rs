//! The OpenAPI-to-Rust mapping on schemas made up by proptest, by class: names from a hostile
//! alphabet, keywords and names that collide once in Rust, nesting, preserved unknown fields at
//! any depth (the whole spec included), top-level fields besides spec and status, specs that
//! the root requires or not (or lets be null), and descriptions with code and invisible
//! characters. For an external kind and for `alpha
//! migrate`'s fields alike, the generated code must parse, and serde must carry the example
//! object through the generated types and back unchanged (read from the code by
//! `support::serde_model`), the example must be valid for the schema, an object without the spec
//! the schema does not require must read as the default spec, and both commands must give the
//! same Rust types for the same schema.
//!
//! In-process and bounded (a few hundred schemas of at most four levels): a few seconds.

mod support;

use operator_rs::openapi::{KindAttributes, KindTypes, example, own_types, translate};
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use support::serde_model::{Model, Ty, same_types};

/// Names as CRDs have them, and as they should not.
fn name() -> impl Strategy<Value = String> {
    const FIXED: &[&str] = &[
        "type",
        "self",
        "Self",
        "super",
        "crate",
        "fn",
        "gen",
        "async",
        "_",
        "r#x",
        "metadata",
        "kind",
        "Kind",
        "apiVersion",
        "api_version",
        "status",
        "spec",
        "unknownFields",
        "unknown_fields",
        "notInTheSchema",
        "key",
        "",
        "fooBar",
        "foo_bar",
        "foo-bar",
        "foo_bar_2",
        "aB",
        "a-b",
        "a_b",
        "A_B",
        "9lives",
        "200",
        "Option",
        "String",
        "Vec",
        "BTreeMap",
        "resource",
        "Custom",
        "field",
    ];
    prop_oneof![
        3 => proptest::sample::select(FIXED).prop_map(str::to_string),
        2 => "[a-zB_.$ 9-]{1,8}",
        1 => "[aé\"\\\\名\u{202E}\u{200B}\t]{1,4}",
    ]
}

fn description() -> impl Strategy<Value = Option<String>> {
    const PIECES: &[&str] = &[
        "Plain text.",
        "Example:\n```\nfn main() { panic!() }\n```",
        "Unclosed:\n```rust\nlet x: u8 = 300;",
        "Indented:\n\n    assert!(false);\n\nafter",
        "- item\ncontinued\n- other",
        "10. ten\ncontinued",
        "> quoted\nlazy",
        "tab\tin it",
        "bidi \u{202E} and zero\u{200B}width",
        "*/ /* not a comment",
        "~~~\ntilde\n~~~",
        "    indented first line",
    ];
    proptest::option::of(
        proptest::collection::vec(proptest::sample::select(PIECES), 1..3)
            .prop_map(|p| p.join("\n\n")),
    )
}

fn with_description(mut schema: Value, description: Option<String>) -> Value {
    if let (Some(d), Some(map)) = (description, schema.as_object_mut()) {
        map.insert("description".into(), d.into());
    }
    schema
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!({"type": "string"})),
        Just(json!({"type": "string", "format": "date-time"})),
        (-5i64..5, 0i64..10).prop_map(|(min, span)| json!({
            "type": "integer", "format": "int32", "minimum": min, "maximum": min + span
        })),
        Just(json!({"type": "integer"})),
        Just(json!({"type": "integer", "enum": [7, 9]})),
        Just(json!({"type": "number"})),
        Just(json!({"type": "boolean"})),
        proptest::collection::vec(name(), 1..4)
            .prop_map(|values| json!({"type": "string", "enum": values})),
        Just(
            json!({"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]})
        ),
        Just(json!({"type": "object"})),
        Just(json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})),
        Just(json!({"x-kubernetes-preserve-unknown-fields": true})),
        Just(json!({"type": "object", "additionalProperties": true})),
        Just(json!({"type": "object", "additionalProperties": false})),
        Just(json!({"type": "object", "properties": {}})),
        Just(
            json!({"type": "object", "properties": {}, "x-kubernetes-preserve-unknown-fields": true})
        ),
        Just(json!({"properties": {}})),
    ]
}

/// `schema` marked `nullable` when `nullable` says so.
fn nullable(mut schema: Value, nullable: bool) -> Value {
    if nullable && let Some(map) = schema.as_object_mut() {
        map.insert("nullable".into(), true.into());
    }
    schema
}

/// An object schema with `fields` as its properties, some of them required.
fn object(fields: Vec<(String, Value, bool)>, preserve: bool, typed: bool) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for (name, schema, is_required) in fields {
        if is_required && !required.contains(&name) {
            required.push(name.clone());
        }
        properties.insert(name, schema);
    }
    let mut object = json!({ "properties": properties });
    if typed {
        object["type"] = "object".into();
    }
    if preserve {
        object["x-kubernetes-preserve-unknown-fields"] = true.into();
    }
    // Only required names that are properties: the API server refuses others.
    required.retain(|r| object["properties"].get(r).is_some());
    if !required.is_empty() {
        object["required"] = required.into();
    }
    object
}

fn schema() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 48, 4, |inner| {
        let field = (
            name(),
            (inner.clone(), description()),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(|(name, (schema, doc), required, nullable)| {
                let mut schema = with_description(schema, doc);
                if nullable {
                    schema["nullable"] = true.into();
                }
                (name, schema, required)
            });
        prop_oneof![
            (
                proptest::collection::vec(field, 0..4),
                any::<bool>(),
                any::<bool>()
            )
                .prop_map(|(fields, preserve, typed)| object(fields, preserve, typed)),
            (inner.clone(), any::<bool>()).prop_map(
                |(items, null)| json!({"type": "array", "items": nullable(items, null)})
            ),
            (inner.clone(), any::<bool>()).prop_map(
                |(values, null)| json!({"type": "object", "additionalProperties": nullable(values, null)})
            ),
            // Named fields and the others beside them (not structural, but CRDs say it).
            (name(), inner.clone(), prop_oneof![inner.clone(), Just(json!(true))]).prop_map(
                |(name, field, values)| json!({
                    "type": "object",
                    "properties": {name: field},
                    "additionalProperties": values,
                })
            ),
        ]
    })
}

/// An object schema (the spec, or a migrated kind's spec).
fn object_schema() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => (proptest::collection::vec((name(), schema(), any::<bool>()), 0..5), any::<bool>())
            .prop_map(|(fields, preserve)| object(fields, preserve, true)),
        1 => Just(json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})),
    ]
}

/// A kind's whole `openAPIV3Schema`: maybe a spec (or only `{type: object}` as a whole), maybe
/// a status, maybe other top-level fields, maybe the unknown top-level fields kept.
fn kind_schema() -> impl Strategy<Value = Value> {
    let whole = (
        proptest::option::of(object_schema()),
        proptest::option::of(object_schema()),
        proptest::collection::vec((name(), schema()), 0..2),
        any::<bool>(),
        (any::<bool>(), any::<bool>()),
        description(),
    )
        .prop_map(|(spec, status, others, preserve, (required, null), doc)| {
            let mut properties = Map::new();
            properties.insert("apiVersion".into(), json!({"type": "string"}));
            properties.insert("kind".into(), json!({"type": "string"}));
            properties.insert("metadata".into(), json!({"type": "object"}));
            if let Some(spec) = spec {
                properties.insert("spec".into(), nullable(spec, null));
            }
            if let Some(status) = status {
                properties.insert("status".into(), status);
            }
            for (name, schema) in others {
                if !["apiVersion", "kind", "metadata", "spec", "status"].contains(&name.as_str()) {
                    properties.insert(name, schema);
                }
            }
            let has_spec = properties.contains_key("spec");
            let mut schema = json!({"type": "object", "properties": properties});
            if required && has_spec {
                schema["required"] = json!(["spec"]);
            }
            if preserve {
                schema["x-kubernetes-preserve-unknown-fields"] = true.into();
            }
            with_description(schema, doc)
        });
    prop_oneof![
        8 => whole,
        1 => Just(json!({"type": "object"})),
        1 => Just(json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})),
    ]
}

fn yaml(value: &Value) -> serde_yaml::Value {
    serde_yaml::to_value(value).unwrap()
}

/// The JSON in a Rust raw string literal.
fn example_json(literal: &str) -> Value {
    let text = syn::parse_str::<syn::LitStr>(literal).unwrap().value();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn no_invisible_characters(code: &str) {
    assert!(
        !code
            .chars()
            .any(|c| operator_rs::names::is_format_char(c) || (c.is_control() && c != '\n')),
        "{code}"
    );
}

/// The names follow Rust's case conventions, as rustc's `non_snake_case` and
/// `non_camel_case_types` lints (denied with the generated project's `-D warnings`) read them.
fn names_in_rust_case(model: &Model, code: &str) {
    let camel =
        |name: &str| name.starts_with(|c: char| c.is_ascii_uppercase()) && !name.contains('_');
    for (name, s) in &model.structs {
        assert!(camel(name), "type {name}\n{code}");
        for field in &s.fields {
            let rust = &field.rust;
            assert!(
                !rust.contains("__") && !rust.chars().any(|c| c.is_ascii_uppercase()),
                "field {rust}\n{code}"
            );
        }
    }
    for (name, e) in &model.enums {
        assert!(camel(name), "type {name}\n{code}");
        for (variant, _) in &e.variants {
            assert!(camel(variant), "variant {variant}\n{code}");
        }
    }
}

/// An external kind's types file and example, checked; returns its model.
fn check_external(schema: &Value) -> Model {
    let source = yaml(schema);
    let types = KindTypes::analyze(&source, "Thing").unwrap();
    let attributes = KindAttributes {
        group: "example.io",
        version: "v1",
        kind: "Thing",
        type_name: "Thing",
        plural: "things",
        namespaced: true,
    };
    let literal = example::object(&types, &attributes);
    let code = format!(
        "{}{}\nconst EXAMPLE: &str = {literal};\n",
        types.imports(),
        types.items(&attributes)
    );
    no_invisible_characters(&code);
    let model = Model::parse(&code).unwrap_or_else(|e| panic!("{e}\n{code}"));
    names_in_rust_case(&model, &code);
    let example = example_json(&literal);
    let back = model
        .round_trip_object(&example)
        .unwrap_or_else(|e| panic!("{e}\n{code}"));
    assert_eq!(back, example, "the example does not round-trip\n{code}");
    let problems = support::openapi::problems(schema, &example);
    assert!(problems.is_empty(), "{problems:?}\n{example:#}");
    absent_spec_reads_as_the_default(schema, &types, &model, &example, &code);
    model
}

/// A kind whose spec is its derived struct, and which the schema does not require (or lets be
/// null), reads an object without a spec, or with `spec: null`, as the default spec, every other
/// field kept; one whose schema requires it refuses such an object, as before.
fn absent_spec_reads_as_the_default(
    schema: &Value,
    types: &KindTypes,
    model: &Model,
    example: &Value,
    code: &str,
) {
    let spec = &schema["properties"]["spec"];
    let required = schema["required"]
        .as_array()
        .is_some_and(|r| r.contains(&json!("spec")));
    let may_be_absent = !types.no_spec && (!required || spec["nullable"] == json!(true));
    assert_eq!(
        types.spec_may_be_absent, may_be_absent,
        "{schema:#}\n{code}"
    );
    if types.no_spec {
        return;
    }
    let mut missing = example.clone();
    missing.as_object_mut().unwrap().remove("spec");
    let mut null = example.clone();
    null["spec"] = Value::Null;
    for object in [missing, null] {
        let read = model.round_trip_object(&object);
        if !may_be_absent {
            assert!(read.is_err(), "{read:?}\n{code}");
            continue;
        }
        let mut expected = example.clone();
        expected["spec"] = model
            .default_value(&support::serde_model::Ty::Named("ThingSpec".into()))
            .unwrap_or_else(|e| panic!("{e}\n{code}"));
        assert_eq!(read, Ok(expected), "{code}");
    }
}

/// `alpha migrate`'s fields for a spec, in the scaffold's struct (with its own `foo` when
/// `except` says so, as when the kind has webhooks), checked; returns the model.
fn check_migrate(spec: &Value, except: &[&str]) -> Model {
    let source = yaml(spec);
    let translation = translate(&source, "ThingSpec", except).unwrap();
    let scaffold = if except.contains(&"foo") {
        "    #[serde(default, skip_serializing_if = \"Option::is_none\")]\n    pub foo: Option<String>,\n"
    } else {
        ""
    };
    let code = format!(
        "#[serde(rename_all = \"camelCase\")]\npub struct ThingSpec {{\n{scaffold}{}}}\n{}",
        translation.fields, translation.structs
    );
    no_invisible_characters(&code);
    let model = Model::parse(&code).unwrap_or_else(|e| panic!("{e}\n{code}"));
    names_in_rust_case(&model, &code);
    let types = own_types(&source, "ThingSpec", except).unwrap();
    let mut example: Value =
        serde_json::from_str(&example::struct_value(&types, "ThingSpec")).unwrap();
    let back = model
        .read(&Ty::Named("ThingSpec".into()), &example, "spec")
        .unwrap_or_else(|e| panic!("{e}\n{code}"));
    assert_eq!(back, example, "the example does not round-trip\n{code}");
    // `foo` is the scaffold's, left out of the translation: not in the schema's example.
    if let Some(map) = example.as_object_mut() {
        map.remove("foo");
    }
    let problems = support::openapi::problems(spec, &example);
    assert!(problems.is_empty(), "{problems:?}\n{example:#}");
    model
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    #[test]
    fn external_kinds_parse_and_round_trip(schema in kind_schema()) {
        check_external(&schema);
    }

    #[test]
    fn migrated_fields_parse_and_round_trip(spec in object_schema()) {
        check_migrate(&spec, &["foo"]);
    }

    /// One CRD, both commands: the spec's types are the same.
    #[test]
    fn both_commands_give_the_same_types(spec in object_schema()) {
        let kind = json!({"type": "object", "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": spec.clone(),
        }});
        let external = check_external(&kind);
        let migrated = check_migrate(&spec, &[]);
        same_types(&external, &migrated, "ThingSpec", &[]);
    }
}
