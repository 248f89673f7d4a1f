{{ rust_header }}//! The `{{ kind }}` kind, version `{{ version }}` of the API group `{{ qualified_group }}`.
//!
//! `#[derive(CustomResource)]` turns [`{{ kind }}Spec`] into the [`{{ kind }}`] type that the API
//! serves (`metadata`, `spec` and `status`) and generates its CustomResourceDefinition, which
//! `make manifests` writes to `config/crd/bases/{{ qualified_group }}_{{ plural }}.yaml`. Run
//! `make manifests` after every change here: `cargo test` fails while that file is out of date.
//!
//! Doc comments (`///`) on the types and fields become the descriptions in the CRD's schema, which
//! `kubectl explain {{ plural }}.spec` shows to your users; write them for users. Plain `//`
//! comments stay in the code.
//!
//! Kubernetes API conventions, worth a read before designing the fields:
//! <https://github.com/kubernetes/community/blob/master/contributors/devel/sig-architecture/api-conventions.md>

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

/// {{ kind }}Spec defines the desired state of {{ kind }}.
//
// `KubeSchema`, rather than schemars' `JsonSchema`, generates the schema: it also understands
// `#[x_kube(...)]` attributes, for CEL validation rules and server-side apply merge strategies.
#[derive(CustomResource, KubeSchema, Clone, Debug, Default, Deserialize, Serialize)]
#[kube(
    group = "{{ qualified_group }}",
    version = "{{ version }}",
    kind = "{{ kind }}",
    plural = "{{ plural }}",
    doc = "{{ kind }} is the Schema for the {{ plural }} API.",
{%- if api_namespaced %}
    namespaced,
{%- endif %}
    status = "{{ kind }}Status",
{%- if not storage %}
    // Another version of {{ kind }} is the storage version: the one version in which the API
    // server stores every {{ kind }}, whatever version it was written in. To make this one the
    // storage version, delete this line and add `storage = false` to the other version.
    storage = false,
{%- endif %}
    // More options, to uncomment and adapt (see the docs of `kube::CustomResource`):
    //
    // An abbreviation for kubectl, as in `kubectl get deploy`:
    // shortname = "...",
    // `kubectl get {{ project_name }}` lists the objects of every kind in this category:
    // category = "{{ project_name }}",
    // A column of `kubectl get {{ plural }}`, next to NAME and AGE:
    // printcolumn(
    //     name = "Available",
    //     type_ = "string",
    //     json_path = r#".status.conditions[?(@.type=="Available")].status"#,
    // ),
    // A CEL rule on the whole object, checked by the API server:
    // validation = Rule::new("self.metadata.name.size() <= 40").message("name is too long"),
)]
#[serde(rename_all = "camelCase")]
pub struct {{ kind }}Spec {
    // TODO(user): define the desired state of {{ kind }} here, then run `make manifests`.
    //
    // Fields are required unless they are an `Option` or have `#[serde(default)]`. Validation the
    // API server enforces:
    // - schemars attributes: `#[schemars(length(min = 1, max = 63))]`, `#[schemars(range(min = 1))]`,
    //   `#[schemars(regex(pattern = r"^[a-z]+$"))]`;
    // - CEL rules: `#[x_kube(validation = Rule::new("self == oldSelf").message("is immutable"))]`,
    //   also on the struct for rules that relate fields (`"self.min <= self.max"`).
    // Nested structs derive `KubeSchema` (or `schemars::JsonSchema`) too. Prefer structs and
    // `Option`s over enums with data: the CRD schema must be structural.
    /// foo is an example field of {{ kind }}. Edit {{ kind_snake }}.rs to remove or update it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foo: Option<String>,
}

/// {{ kind }}Status defines the observed state of {{ kind }}.
///
/// Only the controller writes it, through the status subresource: users edit the spec and read
/// the status.
#[derive(KubeSchema, Clone, Debug, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct {{ kind }}Status {
    // TODO(user): add fields for what the controller observes, then run `make manifests`.
    // Everything in the status must be recomputable from the cluster: do not keep state here
    // that the controller cannot find again.
    /// conditions represent the current state of the {{ kind }}: one entry per condition type,
    /// whose status is one of True, False or Unknown.
    ///
    /// Standard condition types include:
    /// - "Available": the {{ kind }} is fully functional;
    /// - "Progressing": the {{ kind }} is being created or updated;
    /// - "Degraded": the {{ kind }} failed to reach or maintain its desired state.
    //
    // A list keyed by `type` (`x-kubernetes-list-type: map`), like the conditions of the built-in
    // kinds: server-side apply then merges conditions by type, so several controllers can each
    // own their own conditions on one object.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["type".into()]))]
    pub conditions: Vec<Condition>,
}

#[cfg(test)]
mod tests {
    use kube::CustomResourceExt as _;
    use serde_json::json;

    use super::*;

    /// The parts of the CRD that the controller relies on. (`make manifests` and
    /// `tests/manifests.rs` check that every CRD is structural, as the API server requires.)
    #[test]
    fn crd() {
        let crd = {{ kind }}::crd();
        let name = crd.metadata.name.unwrap_or_default();
        assert_eq!(name, "{{ plural }}.{{ qualified_group }}");
        assert_eq!(crd.spec.scope, "{% if api_namespaced %}Namespaced{% else %}Cluster{% endif %}");

        let version = serde_json::to_value(&crd.spec.versions[0]).unwrap();
        assert_eq!(version["subresources"]["status"], json!({}));

        let schema = &version["schema"]["openAPIV3Schema"];
        let conditions = &schema["properties"]["status"]["properties"]["conditions"];
        assert_eq!(conditions["x-kubernetes-list-type"], "map");
        assert_eq!(conditions["x-kubernetes-list-map-keys"], json!(["type"]));
    }

    /// The sample in `config/samples/` (`kubectl apply -k config/samples`) must stay a valid
    /// {{ kind }} while the types change.
    #[test]
    fn sample_is_valid() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/config/samples/{{ group }}_{{ version }}_{{ kind_lower }}.yaml"
        );
        let sample = std::fs::read_to_string(path).unwrap();
        if let Err(error) = operator_rs_testing::from_yaml::<{{ kind }}>(&sample) {
            panic!("{path} is not a valid {{ kind }}: {error}");
        }
    }
}
