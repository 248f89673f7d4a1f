// Copyright 2026 The operator-rs authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//! The `WebServer` kind, version `v1` of the API group `web.example.com`.
//!
//! `#[derive(CustomResource)]` turns [`WebServerSpec`] into the [`WebServer`] type that the API
//! serves (`metadata`, `spec` and `status`) and generates its CustomResourceDefinition, which
//! `make manifests` writes to `config/crd/bases/web.example.com_webservers.yaml`. Run
//! `make manifests` after every change here: `cargo test` fails while that file is out of date.
//!
//! Doc comments (`///`) on the types and fields become the descriptions in the CRD's schema, which
//! `kubectl explain webservers.spec` shows to your users; write them for users. Plain `//`
//! comments stay in the code.
//!
//! Kubernetes API conventions, worth a read before designing the fields:
//! <https://github.com/kubernetes/community/blob/master/contributors/devel/sig-architecture/api-conventions.md>

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

/// WebServerSpec defines the desired state of WebServer.
//
// `KubeSchema`, rather than schemars' `JsonSchema`, generates the schema: it also understands
// `#[x_kube(...)]` attributes, for CEL validation rules and server-side apply merge strategies.
#[derive(CustomResource, KubeSchema, Clone, Debug, Default, Deserialize, Serialize)]
#[kube(
    group = "web.example.com",
    version = "v1",
    kind = "WebServer",
    plural = "webservers",
    doc = "WebServer is the Schema for the webservers API.",
    namespaced,
    status = "WebServerStatus",
    // More options, to uncomment and adapt (see the docs of `kube::CustomResource`):
    //
    // An abbreviation for kubectl, as in `kubectl get deploy`:
    // shortname = "...",
    // `kubectl get webserver-operator` lists the objects of every kind in this category:
    // category = "webserver-operator",
    // A column of `kubectl get webservers`, next to NAME and AGE:
    // printcolumn(
    //     name = "Available",
    //     type_ = "string",
    //     json_path = r#".status.conditions[?(@.type=="Available")].status"#,
    // ),
    // A CEL rule on the whole object, checked by the API server:
    // validation = Rule::new("self.metadata.name.size() <= 40").message("name is too long"),
)]
#[serde(rename_all = "camelCase")]
pub struct WebServerSpec {
    // TODO(user): define the desired state of WebServer here, then run `make manifests`.
    //
    // Fields are required unless they are an `Option` or have `#[serde(default)]`. Validation the
    // API server enforces:
    // - schemars attributes: `#[schemars(length(min = 1, max = 63))]`, `#[schemars(range(min = 1))]`,
    //   `#[schemars(regex(pattern = r"^[a-z]+$"))]`;
    // - CEL rules: `#[x_kube(validation = Rule::new("self == oldSelf").message("is immutable"))]`,
    //   also on the struct for rules that relate fields (`"self.min <= self.max"`).
    // Nested structs derive `KubeSchema` (or `schemars::JsonSchema`) too. Prefer structs and
    // `Option`s over enums with data: the CRD schema must be structural.
    /// foo is an example field of WebServer. Edit web_server.rs to remove or update it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foo: Option<String>,
}

/// WebServerStatus defines the observed state of WebServer.
///
/// Only the controller writes it, through the status subresource: users edit the spec and read
/// the status.
#[derive(KubeSchema, Clone, Debug, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WebServerStatus {
    // TODO(user): add fields for what the controller observes, then run `make manifests`.
    // Everything in the status must be recomputable from the cluster: do not keep state here
    // that the controller cannot find again.
    /// conditions represent the current state of the WebServer: one entry per condition type,
    /// whose status is one of True, False or Unknown.
    ///
    /// Standard condition types include:
    /// - "Available": the WebServer is fully functional;
    /// - "Progressing": the WebServer is being created or updated;
    /// - "Degraded": the WebServer failed to reach or maintain its desired state.
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
        let crd = WebServer::crd();
        let name = crd.metadata.name.unwrap_or_default();
        assert_eq!(name, "webservers.web.example.com");
        assert_eq!(crd.spec.scope, "Namespaced");

        let version = serde_json::to_value(&crd.spec.versions[0]).unwrap();
        assert_eq!(version["subresources"]["status"], json!({}));

        let schema = &version["schema"]["openAPIV3Schema"];
        let conditions = &schema["properties"]["status"]["properties"]["conditions"];
        assert_eq!(conditions["x-kubernetes-list-type"], "map");
        assert_eq!(conditions["x-kubernetes-list-map-keys"], json!(["type"]));
    }

    /// The sample in `config/samples/` (`kubectl apply -k config/samples`) must stay a valid
    /// WebServer while the types change.
    #[test]
    fn sample_is_valid() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/config/samples/web_v1_webserver.yaml"
        );
        let sample = std::fs::read_to_string(path).unwrap();
        if let Err(error) = operator_rs_runtime::testing::from_yaml::<WebServer>(&sample) {
            panic!("{path} is not a valid WebServer: {error}");
        }
    }
}
