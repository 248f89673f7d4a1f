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

/// {{ kind }}Spec defines the desired state of {{ kind }}: how many pods of `{{ image }}` to run.
//
// `KubeSchema`, rather than schemars' `JsonSchema`, generates the schema: it also understands
// `#[x_kube(...)]` attributes, for CEL validation rules and server-side apply merge strategies.
#[derive(CustomResource, KubeSchema, Clone, Debug, PartialEq, Deserialize, Serialize)]
#[kube(
    group = "{{ qualified_group }}",
    version = "{{ version }}",
    kind = "{{ kind }}",
    plural = "{{ plural }}",
    doc = "{{ kind }} is the Schema for the {{ plural }} API.",
    namespaced,
    status = "{{ kind }}Status",
    // Derived for the {{ kind }} type too: tests compare whole objects.
    derive = "PartialEq",
{%- if not storage %}
    // Another version of {{ kind }} is the storage version: the one version in which the API
    // server stores every {{ kind }}, whatever version it was written in. To make this one the
    // storage version, delete this line and add `storage = false` to the other version.
    storage = false,
{%- endif %}
    // `kubectl get {{ plural }}` shows the size and whether the pods are available.
    printcolumn(name = "Size", type_ = "integer", json_path = ".spec.size"),
    printcolumn(
        name = "Available",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="Available")].status"#,
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp",
    ),
)]
#[serde(rename_all = "camelCase")]
pub struct {{ kind }}Spec {
    /// size is the number of {{ kind_lower }} pods to run: the replicas of the Deployment that
    /// the controller manages for this {{ kind }}. Defaults to 1; 0 stops every pod but keeps
    /// the Deployment.
    //
    // `default` puts `default: 1` in the CRD, so the API server fills it in when it is left out;
    // `range` puts `minimum: 0` in it, so the API server refuses negative sizes.
    #[serde(default = "default_size")]
    #[schemars(range(min = 0))]
    pub size: i32,
{%- if has_container_port %}

    /// containerPort is the port that {{ kind_lower }} listens on in its pods. Defaults to
    /// {{ container_port }}.
    #[serde(default = "default_container_port")]
    #[schemars(range(min = 1, max = 65535))]
    pub container_port: i32,
{%- endif %}
    // TODO(user): add what your users should be able to configure (a version, resources,
    // settings …), use it in the controller's `deployment` function, then run `make manifests`.
}

/// `size` when the {{ kind }} does not say.
fn default_size() -> i32 {
    1
}
{%- if has_container_port %}

/// `containerPort` when the {{ kind }} does not say (`--image-container-port`).
fn default_container_port() -> i32 {
    {{ container_port }}
}
{%- endif %}

impl Default for {{ kind }}Spec {
    fn default() -> Self {
        Self {
            size: default_size(),
{%- if has_container_port %}
            container_port: default_container_port(),
{%- endif %}
        }
    }
}

/// {{ kind }}Status defines the observed state of {{ kind }}.
///
/// Only the controller writes it, through the status subresource: users edit the spec and read
/// the status.
#[derive(KubeSchema, Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct {{ kind }}Status {
    // Everything in the status must be recomputable from the cluster: do not keep state here
    // that the controller cannot find again.
    /// conditions represent the current state of the {{ kind }}: one entry per condition type,
    /// whose status is one of True, False or Unknown. The controller sets:
    /// - "Available": True when all `size` pods are available (reason ReplicasAvailable), False
    ///   while they are not (ReplicasUnavailable) or while the {{ kind }} is being deleted
    ///   (Finalizing);
    /// - "Degraded": True when the controller cannot create or update the Deployment
    ///   (DeploymentFailed), False otherwise (Reconciled).
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
        assert_eq!(crd.spec.scope, "Namespaced");

        let version = serde_json::to_value(&crd.spec.versions[0]).unwrap();
        assert_eq!(version["subresources"]["status"], json!({}));

        let schema = &version["schema"]["openAPIV3Schema"];
        let conditions = &schema["properties"]["status"]["properties"]["conditions"];
        assert_eq!(conditions["x-kubernetes-list-type"], "map");
        assert_eq!(conditions["x-kubernetes-list-map-keys"], json!(["type"]));

        // The API server fills in the defaults and refuses what the controller cannot run.
        let size = &schema["properties"]["spec"]["properties"]["size"];
        assert_eq!(size["default"], 1);
        assert_eq!(size["minimum"].as_f64(), Some(0.0));
{%- if has_container_port %}
        let port = &schema["properties"]["spec"]["properties"]["containerPort"];
        assert_eq!(port["default"], {{ container_port }});
        assert_eq!(port["minimum"].as_f64(), Some(1.0));
        assert_eq!(port["maximum"].as_f64(), Some(65535.0));
{%- endif %}
    }

    /// An object that leaves the spec out gets the CRD's defaults in Rust too.
    #[test]
    fn defaults() {
        let object: {{ kind }} = serde_json::from_value(json!({
            "apiVersion": "{{ qualified_group }}/{{ version }}",
            "kind": "{{ kind }}",
            "metadata": { "name": "defaults" },
            "spec": {},
        }))
        .unwrap();
        assert_eq!(object.spec.size, 1);
{%- if has_container_port %}
        assert_eq!(object.spec.container_port, {{ container_port }});
{%- endif %}
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
