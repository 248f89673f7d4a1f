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

//! The `At` kind, version `v1alpha1` of the API group `at.example.com`.
//!
//! `#[derive(CustomResource)]` turns [`AtSpec`] into the [`At`] type that the API
//! serves (`metadata`, `spec` and `status`) and generates its CustomResourceDefinition, which
//! `make manifests` writes to `config/crd/bases/at.example.com_ats.yaml`. Run
//! `make manifests` after every change here: `cargo test` fails while that file is out of date.
//!
//! Doc comments (`///`) on the types and fields become the descriptions in the CRD's schema, which
//! `kubectl explain ats.spec` shows to your users; write them for users. Plain `//`
//! comments stay in the code.
//!
//! Kubernetes API conventions, worth a read before designing the fields:
//! <https://github.com/kubernetes/community/blob/master/contributors/devel/sig-architecture/api-conventions.md>

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

/// AtSpec defines the desired state of At.
//
// `KubeSchema`, rather than schemars' `JsonSchema`, generates the schema: it also understands
// `#[x_kube(...)]` attributes, for CEL validation rules and server-side apply merge strategies.
// The `printcolumn`s below repeat `type_ = "string"`, which clippy takes for a duplicated attribute.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, KubeSchema, Clone, Debug, Deserialize, Serialize)]
#[kube(
    group = "at.example.com",
    version = "v1alpha1",
    kind = "At",
    plural = "ats",
    doc = "At is the Schema for the ats API.",
    namespaced,
    status = "AtStatus",
    // `kubectl get ats` shows when each At runs, and where it is.
    printcolumn(name = "Schedule", type_ = "string", json_path = ".spec.schedule"),
    printcolumn(name = "Phase", type_ = "string", json_path = ".status.phase"),
)]
#[serde(rename_all = "camelCase")]
pub struct AtSpec {
    /// schedule is when to run the command, as an RFC 3339 time in UTC, e.g.
    /// 2026-11-24T09:30:00Z. A time in the past runs it at once.
    pub schedule: Time,
    /// command is the shell command to run, with `sh -c` in a busybox container, e.g.
    /// `echo "Hello from At"`.
    #[schemars(length(min = 1))]
    pub command: String,
}

/// AtStatus defines the observed state of At.
///
/// Only the controller writes it, through the status subresource: users edit the spec and read
/// the status.
#[derive(KubeSchema, Clone, Debug, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AtStatus {
    /// phase is where the At is: PENDING until its schedule, RUNNING while its Pod runs the
    /// command, then DONE if the command succeeded or FAILED if it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
}

/// The phases of an At, in the order it goes through them.
//
// schemars' `JsonSchema`: `KubeSchema` derives structs only. Plain `//` comments on the
// variants: doc comments would turn the schema's `enum` into a `oneOf` of described constants.
#[derive(schemars::JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Phase {
    // Waiting for the schedule.
    Pending,
    // The Pod that runs the command has been created and has not finished.
    Running,
    // The command exited with status 0.
    Done,
    // The command failed (or its Pod did).
    Failed,
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
        let crd = At::crd();
        let name = crd.metadata.name.unwrap_or_default();
        assert_eq!(name, "ats.at.example.com");
        assert_eq!(crd.spec.scope, "Namespaced");

        let version = serde_json::to_value(&crd.spec.versions[0]).unwrap();
        assert_eq!(version["subresources"]["status"], json!({}));

        // The API server checks the schedule is a time, and the phase one of the four.
        let schema = &version["schema"]["openAPIV3Schema"]["properties"];
        assert_eq!(
            schema["spec"]["properties"]["schedule"]["format"],
            "date-time"
        );
        // (`null` too: the phase is optional, and `nullable`.)
        let phases = json!(["PENDING", "RUNNING", "DONE", "FAILED", null]);
        assert_eq!(schema["status"]["properties"]["phase"]["enum"], phases);
    }

    /// The sample in `config/samples/` (`kubectl apply -k config/samples`) must stay a valid
    /// At while the types change.
    #[test]
    fn sample_is_valid() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/config/samples/at_v1alpha1_at.yaml"
        );
        let sample = std::fs::read_to_string(path).unwrap();
        if let Err(error) = operator_rs_testing::from_yaml::<At>(&sample) {
            panic!("{path} is not a valid At: {error}");
        }
    }
}
