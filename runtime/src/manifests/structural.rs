//! The "structural schema" check of CRDs.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::Value;

/// What makes the schemas of `crd` non-structural, one line per problem:
/// `<kind> <version>: <field path>: <problem>`, e.g. `Ship v1: spec.cargo: no type`. Empty when
/// every version's schema is structural.
///
/// The API server only accepts CRDs whose schemas are "structural": every field has a `type` (or
/// says it may hold anything, with `x-kubernetes-int-or-string` or
/// `x-kubernetes-preserve-unknown-fields`), nothing hides behind a `$ref`, and no object mixes
/// `properties` with `additionalProperties`. kube-derive produces such schemas from plain
/// structs; this catches types that do not (some enums, `serde_json::Value` fields, or
/// hand-written schemas) before the API server refuses them. [`render_crds`](super::render_crds),
/// and so `make manifests`, refuses such CRDs.
///
/// See <https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#specifying-a-structural-schema>.
///
/// ```
/// use operator_rs_runtime::kube::{CustomResource, CustomResourceExt as _};
/// use operator_rs_runtime::manifests::structural_problems;
/// use schemars::JsonSchema;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
/// #[kube(group = "example.com", version = "v1", kind = "Ship", namespaced)]
/// pub struct ShipSpec {
///     pub crew: u32,
///     pub tags: Vec<String>,
/// }
///
/// assert!(structural_problems(&Ship::crd()).is_empty());
/// ```
pub fn structural_problems(crd: &CustomResourceDefinition) -> Vec<String> {
    let mut problems = Vec::new();
    for version in &crd.spec.versions {
        let name = format!("{} {}", crd.spec.names.kind, version.name);
        let schema = version
            .schema
            .as_ref()
            .and_then(|schema| schema.open_api_v3_schema.as_ref());
        let Some(schema) = schema else {
            problems.push(format!("{name}: no schema"));
            continue;
        };
        match serde_json::to_value(schema) {
            Ok(schema) => schema_problems(&schema, "", &mut |path, problem| {
                let at = if path.is_empty() { "(root)" } else { path };
                problems.push(format!("{name}: {at}: {problem}"));
            }),
            Err(error) => problems.push(format!("{name}: cannot read the schema: {error}")),
        }
    }
    problems
}

/// Reports what makes `schema` (at the field path `path`, `""` for the root) and its subschemas
/// non-structural.
fn schema_problems(schema: &Value, path: &str, report: &mut dyn FnMut(&str, &str)) {
    let Some(object) = schema.as_object() else {
        report(path, "the schema is not an object");
        return;
    };
    let anything = |key: &str| object.get(key) == Some(&Value::Bool(true));
    if !object.contains_key("type")
        && !anything("x-kubernetes-int-or-string")
        && !anything("x-kubernetes-preserve-unknown-fields")
    {
        report(path, "no type");
    }
    if object.contains_key("$ref") {
        report(path, "a $ref (CRD schemas must be inlined)");
    }
    if object.contains_key("properties") && object.contains_key("additionalProperties") {
        report(path, "both properties and additionalProperties");
    }
    if let Some(Value::Object(properties)) = object.get("properties") {
        for (name, property) in properties {
            let field = if path.is_empty() {
                name.clone()
            } else {
                format!("{path}.{name}")
            };
            schema_problems(property, &field, report);
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(sub @ Value::Object(_)) = object.get(key) {
            schema_problems(sub, &format!("{path}[{key}]"), report);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use kube::CustomResource;
    use kube::CustomResourceExt as _;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};
    use serde_json::json;

    use super::*;

    /// A kind with the field types projects use most: all structural.
    #[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
    #[kube(group = "test.example.com", version = "v1", kind = "Ship", namespaced)]
    #[kube(status = "ShipStatus")]
    pub struct ShipSpec {
        pub name: String,
        pub crew: Option<u32>,
        pub tags: Vec<String>,
        pub labels: BTreeMap<String, String>,
        pub cargo: Vec<Cargo>,
        pub engine: Engine,
    }

    #[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
    pub struct Cargo {
        pub weight: u64,
    }

    #[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
    pub enum Engine {
        Steam,
        Diesel,
    }

    #[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
    pub struct ShipStatus {
        pub conditions: Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition>,
    }

    /// `Ship::crd()` with `edit` applied to its schema (as JSON).
    fn edited(edit: impl FnOnce(&mut Value)) -> CustomResourceDefinition {
        let mut crd = serde_json::to_value(Ship::crd()).unwrap();
        edit(
            crd.pointer_mut("/spec/versions/0/schema/openAPIV3Schema")
                .unwrap(),
        );
        serde_json::from_value(crd).unwrap()
    }

    #[test]
    fn derived_schemas_are_structural() {
        assert_eq!(structural_problems(&Ship::crd()), Vec::<String>::new());
    }

    #[test]
    fn names_the_kind_version_and_field_of_each_problem() {
        let crd = edited(|schema| {
            let spec = &mut schema["properties"]["spec"]["properties"];
            spec["anything"] = json!({"description": "no type"});
            spec["reference"] = json!({"type": "object", "$ref": "#/definitions/Cargo"});
            spec["tags"]["items"] = json!({});
            spec["mixed"] = json!({
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "additionalProperties": {"type": "string"},
            });
            spec["labels"]["additionalProperties"] = json!({"x-kubernetes-int-or-string": true});
            spec["free"] = json!({"x-kubernetes-preserve-unknown-fields": true});
        });
        assert_eq!(
            structural_problems(&crd),
            [
                "Ship v1: spec.anything: no type",
                "Ship v1: spec.mixed: both properties and additionalProperties",
                "Ship v1: spec.reference: a $ref (CRD schemas must be inlined)",
                "Ship v1: spec.tags[items]: no type",
            ]
        );
    }

    #[test]
    fn reports_a_root_without_type_and_a_version_without_schema() {
        let crd = edited(|schema| {
            schema.as_object_mut().unwrap().remove("type");
        });
        assert_eq!(structural_problems(&crd), ["Ship v1: (root): no type"]);

        let mut crd = Ship::crd();
        crd.spec.versions[0].schema = None;
        assert_eq!(structural_problems(&crd), ["Ship v1: no schema"]);
    }
}
