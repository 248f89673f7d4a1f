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
// The `printcolumn`s below repeat `type_ = "string"`, which clippy takes for a duplicated attribute.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, KubeSchema, Clone, Debug, Default, Deserialize, Serialize)]
#[kube(
    group = "web.example.com",
    version = "v1",
    kind = "WebServer",
    plural = "webservers",
    doc = "WebServer is the Schema for the webservers API.",
    namespaced,
    status = "WebServerStatus",
    // `kubectl get webservers` shows the spec and whether the pods are up.
    printcolumn(name = "Replicas", type_ = "integer", json_path = ".spec.replicas"),
    printcolumn(name = "Image", type_ = "string", json_path = ".spec.image"),
    printcolumn(
        name = "Available",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="Available")].status"#,
    ),
)]
#[serde(rename_all = "camelCase")]
pub struct WebServerSpec {
    /// replicas is the number of nginx pods that serve the WebServer.
    #[schemars(range(min = 0))]
    pub replicas: i32,
    /// image is the nginx image the pods run, e.g. nginx:1.27.3. Changing it rolls the pods
    /// over to the new image, a few at a time.
    #[schemars(length(min = 1))]
    pub image: String,
    /// configMap names a ConfigMap of the WebServer's namespace whose files nginx serves
    /// (index.html as the home page) instead of its own page. A change of the ConfigMap rolls
    /// the pods over to the new content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map: Option<String>,
}

/// WebServerStatus defines the observed state of WebServer.
///
/// Only the controller writes it, through the status subresource: users edit the spec and read
/// the status.
#[derive(KubeSchema, Clone, Debug, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WebServerStatus {
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
        if let Err(error) = operator_rs_testing::from_yaml::<WebServer>(&sample) {
            panic!("{path} is not a valid WebServer: {error}");
        }
    }
}
