{{ rust_header }}//! Custom resource types served by this operator.
//!
//! `operator-rs create api` adds {% if multigroup %}one module per API group here, with one module per
//! version inside (`src/api/<group>/<version>/<kind>.rs`){% else %}one module per API version here, with
//! one module per kind inside (`src/api/<version>/<kind>.rs`){% endif %}. Each kind
//! is a Rust struct with `#[derive(CustomResource)]`; the CRD that Kubernetes needs is generated from it
//! by `make manifests`, so the Rust type is the single source of truth for the schema.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
// `crd()` below comes from this trait. It stays unused until the first `create api`.
#[allow(unused_imports)]
use kube::CustomResourceExt;

// +operator-rs:scaffold:api-modules

/// Every CustomResourceDefinition this operator owns, one entry per kind and version.
///
/// `make manifests` writes them to `config/crd/bases/`. Several versions of the same kind are merged
/// into one CRD; the version whose derive keeps the default `storage = true` becomes the storage
/// version, so exactly one version of each kind may do so (mark the others `#[kube(storage = false)]`).
/// `operator-rs create api` adds entries here; remove an entry to stop publishing that version.
pub fn crds() -> Vec<CustomResourceDefinition> {
    vec![
        // +operator-rs:scaffold:crds
    ]
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    /// The API server only accepts CRDs whose schemas are "structural": every field has a `type`
    /// (or says it may hold anything), nothing hides behind references, and no object mixes
    /// `properties` with `additionalProperties`. kube-derive produces such schemas from plain
    /// structs; this catches types that do not (some enums, or hand-written schemas).
    /// <https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#specifying-a-structural-schema>
    #[test]
    fn every_crd_is_structural() {
        for crd in crds() {
            for version in &crd.spec.versions {
                let schema = serde_json::to_value(&version.schema).unwrap();
                let name = format!("{} {}", crd.spec.names.kind, version.name);
                let problems = structural_problems(&schema["openAPIV3Schema"], &name);
                assert!(problems.is_empty(), "{}", problems.join("\n"));
            }
        }
    }

    /// What makes `schema` (at `path`) and its subschemas non-structural.
    fn structural_problems(schema: &Value, path: &str) -> Vec<String> {
        let Some(object) = schema.as_object() else {
            return vec![format!("{path}: the schema is not an object")];
        };
        let mut problems = Vec::new();
        let anything = |key: &str| object.get(key) == Some(&Value::Bool(true));
        if !object.contains_key("type")
            && !anything("x-kubernetes-int-or-string")
            && !anything("x-kubernetes-preserve-unknown-fields")
        {
            problems.push(format!("{path}: no type"));
        }
        if object.contains_key("$ref") {
            problems.push(format!("{path}: a $ref (CRD schemas must be inlined)"));
        }
        if object.contains_key("properties") && object.contains_key("additionalProperties") {
            problems.push(format!("{path}: both properties and additionalProperties"));
        }
        if let Some(Value::Object(properties)) = object.get("properties") {
            for (name, property) in properties {
                problems.extend(structural_problems(property, &format!("{path}.{name}")));
            }
        }
        for key in ["items", "additionalProperties"] {
            if let Some(sub @ Value::Object(_)) = object.get(key) {
                problems.extend(structural_problems(sub, &format!("{path}[{key}]")));
            }
        }
        problems
    }
}
