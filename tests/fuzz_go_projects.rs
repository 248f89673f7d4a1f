//! Fuzz target: `alpha migrate` of kubebuilder Go projects as people leave them: PROJECT records
//! of kinds with names Rust must work around (`Self`, `Box`, `Option`, a kind named like its
//! group or its version, keywords as groups and versions), single- and multi-group, webhooks of
//! every type, CRDs with hostile field names and schemas of odd shapes, or none, samples with a
//! null spec, a missing one or no YAML at all. Each run either refuses with one line and writes
//! nothing, or leaves a project whose every file parses (the migrate scenario of
//! hack/test-generated builds and tests real ones).

mod support;

use std::fmt::Write as _;
use std::path::Path;

use proptest::prelude::*;
use serde_json::{Value, json};
use support::{assert_tree_parses, fuzz, operator_rs, tree};

#[derive(Debug, Clone)]
struct GoKind {
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    controller: bool,
    webhooks: u8,
    crd: Option<Value>,
    sample: u8,
}

#[derive(Debug, Clone)]
struct GoProject {
    multigroup: bool,
    kinds: Vec<GoKind>,
}

fn field_schema() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!({"type": "string"})),
        Just(json!({"type": "integer", "format": "int32", "minimum": 1})),
        Just(json!({"type": "string", "enum": ["self", "Self", "", "a-b"]})),
        Just(json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})),
        Just(
            json!({"type": "object", "properties": {}, "x-kubernetes-preserve-unknown-fields": true})
        ),
        Just(json!({"type": "array", "items": {"type": "string", "nullable": true}})),
        Just(json!({"type": "object", "additionalProperties": {"type": "integer"}})),
        Just(
            json!({"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]})
        ),
        Just(
            json!({"type": "object", "properties": {"type": {"type": "string"}}, "required": ["type"]})
        ),
        Just(json!({"type": "string", "description": "> ```\n> fn main() {}\n> ```"})),
        Just(json!("not a schema")),
    ]
}

fn spec_schema() -> impl Strategy<Value = Value> {
    let names = proptest::sample::select(vec![
        "size",
        "type",
        "self",
        "Self",
        "crate",
        "foo",
        "fooBar",
        "foo_bar",
        "9lives",
        "gen",
        "unknownFields",
        "Option",
    ]);
    (
        proptest::collection::btree_map(names, field_schema(), 0..5),
        proptest::collection::vec(any::<bool>(), 5),
    )
        .prop_map(|(fields, required)| {
            let names: Vec<&&str> = fields.keys().collect();
            let required: Vec<&&str> = names
                .iter()
                .zip(&required)
                .filter(|(_, r)| **r)
                .map(|(n, _)| *n)
                .collect();
            json!({"type": "object", "properties": fields, "required": required})
        })
}

fn go_kind() -> impl Strategy<Value = GoKind> {
    (
        proptest::sample::select(vec!["crew", "ship", "type", "kafka", "apps", "v1", "self"]),
        proptest::sample::select(vec!["v1", "v1alpha1", "v2", "crate", "self"]),
        proptest::sample::select(vec![
            "Captain",
            "Ship",
            "Self",
            "Box",
            "Option",
            "V1",
            "Controller",
            "Kafka",
            "Type",
        ]),
        any::<bool>(),
        any::<u8>(),
        proptest::option::weighted(0.8, spec_schema()),
        any::<u8>(),
    )
        .prop_map(
            |(group, version, kind, controller, webhooks, crd, sample)| GoKind {
                group,
                version,
                kind,
                controller,
                webhooks,
                crd,
                sample,
            },
        )
}

fn go_project() -> impl Strategy<Value = GoProject> {
    (any::<bool>(), proptest::collection::vec(go_kind(), 1..4))
        .prop_map(|(multigroup, kinds)| GoProject { multigroup, kinds })
}

impl GoProject {
    /// Writes the Go project into `dir`: PROJECT, the CRDs and the samples.
    fn write(&self, dir: &Path) {
        let mut project = String::from(
            "domain: example.com\nlayout:\n- go.kubebuilder.io/v4\nprojectName: fuzz-operator\nrepo: example.com/fuzz-operator\n",
        );
        if self.multigroup {
            project.push_str("multigroup: true\n");
        }
        project.push_str("resources:\n");
        std::fs::create_dir_all(dir.join("config/crd/bases")).unwrap();
        std::fs::create_dir_all(dir.join("config/samples")).unwrap();
        for (i, k) in self.kinds.iter().enumerate() {
            let _ = write!(
                project,
                "- api:\n    crdVersion: v1\n    namespaced: true\n  controller: {}\n  domain: example.com\n  group: {}\n  kind: {}\n  path: example.com/fuzz-operator/api/{}\n  version: {}\n",
                k.controller, k.group, k.kind, k.version, k.version
            );
            if k.webhooks % 4 != 0 {
                let _ = write!(
                    project,
                    "  webhooks:\n    defaulting: {}\n    validation: {}\n    webhookVersion: v1\n",
                    k.webhooks & 1 != 0,
                    k.webhooks & 2 != 0
                );
            }
            let plural = format!("{}s", k.kind.to_lowercase());
            let group = format!("{}.example.com", k.group);
            if let Some(spec) = &k.crd {
                let crd = json!({
                    "apiVersion": "apiextensions.k8s.io/v1",
                    "kind": "CustomResourceDefinition",
                    "metadata": {"name": format!("{plural}.{group}")},
                    "spec": {
                        "group": group,
                        "names": {"kind": k.kind, "listKind": format!("{}List", k.kind), "plural": plural, "singular": k.kind.to_lowercase()},
                        "scope": "Namespaced",
                        "versions": [{"name": k.version, "served": true, "storage": true,
                            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                "apiVersion": {"type": "string"}, "kind": {"type": "string"},
                                "metadata": {"type": "object"}, "spec": spec,
                                "status": {"type": "object", "properties": {"conditions": {"type": "array", "items": {"type": "object"}}}},
                            }}},
                            "subresources": {"status": {}}}],
                    },
                });
                std::fs::write(
                    dir.join(format!("config/crd/bases/{group}_{plural}_{i}.yaml")),
                    serde_yaml::to_string(&crd).unwrap(),
                )
                .unwrap();
            }
            let sample = match k.sample % 4 {
                0 => None,
                1 => Some("spec:\n  # TODO(user): Add fields here\n".to_string()),
                2 => Some("spec: [unclosed\n".to_string()),
                _ => Some("spec:\n  size: 1\n".to_string()),
            };
            if let Some(spec) = sample {
                std::fs::write(
                    dir.join(format!(
                        "config/samples/{}_{}_{}.yaml",
                        k.group,
                        k.version,
                        k.kind.to_lowercase()
                    )),
                    format!(
                        "apiVersion: {group}/{}\nkind: {}\nmetadata:\n  name: sample\n{spec}",
                        k.version, k.kind
                    ),
                )
                .unwrap();
            }
        }
        project.push_str("version: \"3\"\n");
        std::fs::write(dir.join("PROJECT"), project).unwrap();
    }
}

fn check(project: &GoProject) -> Result<(), TestCaseError> {
    let tmp = tempfile::tempdir().unwrap();
    let go = tmp.path().join("go");
    let out = tmp.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    project.write(&go);
    let before = tree(&out);
    let run = operator_rs(&out)
        .args(["alpha", "migrate", "--from"])
        .arg(&go)
        .arg("--make=false")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    prop_assert!(!stderr.contains("panicked"), "{stderr}");
    if run.status.success() {
        assert_tree_parses(&out);
    } else {
        prop_assert_eq!(stderr.trim_end().lines().count(), 1, "{}", stderr);
        prop_assert!(before == tree(&out), "a refused migration wrote files");
    }
    Ok(())
}

#[test]
fn go_projects_migrate_or_are_refused_with_one_line() {
    fuzz::run("go_projects", 6, go_project(), |project| check(&project));
}
