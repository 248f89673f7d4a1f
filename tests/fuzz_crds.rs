//! Fuzz target: CustomResourceDefinitions as others publish them, and as no one should: schemas
//! whose keywords hold values of any type (`properties: [..]`, `items: "string"`, `required: 3`,
//! `enum: {}`, `type: [object]`, `nullable: "yes"`), nested at any depth, with hostile names, and
//! CRD documents with parts missing or mistyped. Through `create api --external-api-path` (an
//! external kind's types, in-process) and `alpha migrate`'s translation of a spec: neither may
//! panic; each either plans Rust that parses or returns one line.

mod support;

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use operator_rs::commands::create_api;
use operator_rs::external::ExternalRequest;
use operator_rs::openapi::translate;
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use support::{assert_files_parse, folder, fuzz, run_ok};
use tempfile::TempDir;

static PROJECT: LazyLock<(TempDir, PathBuf)> = LazyLock::new(|| {
    let (tmp, dir) = folder("crds");
    run_ok(
        &dir,
        &["init", "--domain", "example.com", "--owner", "Acme"],
    );
    (tmp, dir)
});

fn any_scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-3i64..300).prop_map(Value::from),
        Just(json!(1.5)),
        "[a-zA-Z_. é-]{0,8}".prop_map(Value::from),
        proptest::sample::select(vec![
            "object",
            "array",
            "string",
            "integer",
            "number",
            "boolean",
            "int32",
            "int64",
            "date-time",
            "self",
            "Self",
            "type",
            "crate",
            "Box",
        ])
        .prop_map(Value::from),
    ]
}

/// Names of properties: hostile ones and plain ones.
fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => proptest::sample::select(vec![
            "spec", "status", "apiVersion", "kind", "metadata", "type", "self", "Self", "crate",
            "super", "_", "", "9", "a-b", "aB", "a_b", "r#x", "gen", "async", "Box", "Option",
            "unknownFields", "unknown_fields", "additional_properties", "名", "\u{202E}",
        ])
        .prop_map(str::to_string),
        1 => "[a-zA-Z0-9_.$-]{1,6}",
    ]
}

/// A schema, or anything where a schema should be.
fn schema() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        3 => proptest::sample::select(vec!["string", "integer", "number", "boolean", "object", "array"])
            .prop_map(|t| json!({"type": t})),
        1 => Just(json!({"x-kubernetes-int-or-string": true})),
        1 => Just(json!({"x-kubernetes-preserve-unknown-fields": true})),
        1 => any_scalar(),
    ];
    leaf.prop_recursive(5, 64, 5, |inner| {
        // Keywords of a schema, each holding a schema, a list of them, or anything at all.
        let keyword = proptest::sample::select(vec![
            "type",
            "properties",
            "items",
            "additionalProperties",
            "required",
            "enum",
            "nullable",
            "default",
            "description",
            "format",
            "minimum",
            "maximum",
            "anyOf",
            "x-kubernetes-preserve-unknown-fields",
            "x-kubernetes-int-or-string",
            "x-kubernetes-embedded-resource",
        ]);
        let value = prop_oneof![
            3 => proptest::collection::btree_map(name(), inner.clone(), 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            2 => inner.clone(),
            1 => proptest::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            1 => proptest::collection::vec(name(), 0..3)
                .prop_map(|n| Value::Array(n.into_iter().map(Value::from).collect())),
            1 => any_scalar(),
        ];
        proptest::collection::vec((keyword, value), 0..5).prop_map(|entries| {
            let mut map = Map::new();
            for (k, v) in entries {
                map.insert(k.to_string(), v);
            }
            Value::Object(map)
        })
    })
}

/// A CRD document of `kind` in `hostile.io` with `schema` as version v1's, some parts perhaps
/// missing or mistyped.
fn crd(kind: &str, schema: Value, damage: u8) -> Value {
    let mut crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.hostile.io"},
        "spec": {
            "group": "hostile.io",
            "scope": "Namespaced",
            "names": {"kind": kind, "plural": "things"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                          "schema": {"openAPIV3Schema": schema}}],
        },
    });
    match damage % 8 {
        0 => crd["spec"]["versions"][0]["schema"] = json!("none"),
        1 => crd["spec"]["scope"] = json!(["Cluster"]),
        2 => crd["spec"]["names"]["plural"] = json!(7),
        3 => crd["spec"]["versions"] = json!({"v1": true}),
        4 => crd["spec"]["versions"][0]["served"] = json!("yes"),
        _ => {}
    }
    crd
}

fn check(dir: &Path, kind: &str, schema: &Value, damage: u8) -> Result<(), TestCaseError> {
    let one_line = |err: anyhow::Error| -> Result<(), TestCaseError> {
        let message = format!("{err:#}");
        prop_assert!(
            !message.contains('\n') && !message.contains('\r'),
            "{message:?}"
        );
        Ok(())
    };
    let document = serde_yaml::to_string(&crd(kind, schema.clone(), damage)).unwrap();
    std::fs::create_dir_all(dir.join("crds")).unwrap();
    std::fs::write(dir.join("crds/fuzz.yaml"), &document).unwrap();
    let request = create_api::Request {
        resource: false,
        controller: true,
        external: Some(ExternalRequest {
            path: "crds/fuzz.yaml".into(),
            domain: Some("io".into()),
            module: None,
        }),
        ..create_api::Request::new("hostile", "v1", kind)
    };
    match create_api::plan(&request, dir) {
        Ok(plan) => {
            let files: Vec<(&str, &str)> = plan
                .changes()
                .iter()
                .map(|c| (c.path.as_str(), c.contents.as_str()))
                .collect();
            assert_files_parse(files);
        }
        Err(err) => one_line(err)?,
    }
    // alpha migrate's translation of the same schema's spec, and of the whole schema.
    let yaml: serde_yaml::Value = serde_yaml::to_value(schema).unwrap();
    let spec = yaml
        .get("properties")
        .and_then(|p| p.get("spec"))
        .cloned()
        .unwrap_or(serde_yaml::Value::Null);
    for part in [&spec, &yaml] {
        match translate(part, "ThingSpec", &["foo"]) {
            Ok(t) => {
                let code = format!("pub struct ThingSpec {{\n{}}}\n{}", t.fields, t.structs);
                prop_assert!(syn::parse_file(&code).is_ok(), "{code}");
            }
            Err(err) => one_line(err)?,
        }
    }
    Ok(())
}

#[test]
fn crds_never_panic_create_api_or_migrate() {
    let (_tmp, dir) = &*PROJECT;
    let kinds =
        proptest::sample::select(vec!["Thing", "Self", "Box", "crate", "Option", "thing-x"]);
    fuzz::run(
        "crds",
        200,
        (kinds, schema(), any::<u8>()),
        |(kind, schema, damage)| check(dir, kind, &schema, damage),
    );
}
