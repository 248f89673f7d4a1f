//! The ClusterServiceVersion, typed: the parts operator-rs reads or writes are fields, and
//! everything else a user puts in a CSV is kept verbatim in an `extra` map, so that reading a
//! base and writing it back never loses a field (operator-sdk#5000, #4418).
//!
//! Fields are declared in alphabetical order: serde writes them in declaration order, and
//! operator-sdk's CSVs (Go structs through sigs.k8s.io/yaml) list keys alphabetically.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_yaml::{Mapping, Value};

pub const API_VERSION: &str = "operators.coreos.com/v1alpha1";
pub const KIND: &str = "ClusterServiceVersion";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterServiceVersion {
    pub api_version: String,
    pub kind: String,
    #[serde(default)]
    pub metadata: Metadata,
    #[serde(default)]
    pub spec: Spec,
    #[serde(flatten)]
    pub extra: Mapping,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    #[serde(default)]
    pub name: String,
    #[serde(flatten)]
    pub extra: Mapping,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Spec {
    #[serde(default, rename = "customresourcedefinitions")]
    pub custom_resource_definitions: CustomResourceDefinitions,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub display_name: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub icon: Vec<Icon>,
    #[serde(default)]
    pub install: Install,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub install_modes: Vec<InstallMode>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keywords: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<Link>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub maintainers: Vec<Maintainer>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maturity: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_kube_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<Provider>,
    /// Images the operator uses besides its own (what disconnected installs mirror).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub related_images: Vec<RelatedImage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaces: Option<String>,
    #[serde(default)]
    pub version: String,
    #[serde(
        default,
        rename = "webhookdefinitions",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub webhook_definitions: Vec<WebhookDescription>,
    #[serde(flatten)]
    pub extra: Mapping,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CustomResourceDefinitions {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub owned: Vec<CrdDescription>,
    #[serde(flatten)]
    pub extra: Mapping,
}

/// One owned CRD version, as the console shows it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CrdDescription {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub display_name: String,
    pub kind: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spec_descriptors: Vec<Descriptor>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub status_descriptors: Vec<Descriptor>,
    pub version: String,
    #[serde(flatten)]
    pub extra: Mapping,
}

/// A field of a custom resource the console shows, with a widget (`x-descriptors`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub display_name: String,
    pub path: String,
    #[serde(
        default,
        rename = "x-descriptors",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub x_descriptors: Vec<String>,
    #[serde(flatten)]
    pub extra: Mapping,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Icon {
    pub base64data: String,
    pub mediatype: String,
}

/// `spec.install`: OLM's deployment strategy, the manager's Deployments and their RBAC.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Install {
    #[serde(default)]
    pub spec: InstallSpec,
    pub strategy: String,
}

impl Default for Install {
    fn default() -> Self {
        Self {
            spec: InstallSpec::default(),
            strategy: "deployment".to_string(),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InstallSpec {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cluster_permissions: Vec<Permission>,
    #[serde(default)]
    pub deployments: Vec<DeploymentSpec>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub permissions: Vec<Permission>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeploymentSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<Mapping>,
    pub name: String,
    /// A Deployment's `spec`, as kustomize rendered it.
    pub spec: Value,
}

/// RBAC rules OLM grants to a service account: namespaced (`permissions`, a Role in the
/// operator's namespace) or cluster-wide (`clusterPermissions`, a ClusterRole).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Permission {
    pub rules: Vec<Value>,
    pub service_account_name: String,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct InstallMode {
    pub supported: bool,
    #[serde(rename = "type")]
    pub kind: InstallModeType,
}

/// OLM's four install modes: which namespaces an OperatorGroup may make the operator watch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum InstallModeType {
    OwnNamespace,
    SingleNamespace,
    MultiNamespace,
    AllNamespaces,
}

impl InstallModeType {
    pub const ALL: [InstallModeType; 4] = [
        InstallModeType::OwnNamespace,
        InstallModeType::SingleNamespace,
        InstallModeType::MultiNamespace,
        InstallModeType::AllNamespaces,
    ];

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|mode| mode.as_str().eq_ignore_ascii_case(text))
    }

    pub fn as_str(self) -> &'static str {
        match self {
            InstallModeType::OwnNamespace => "OwnNamespace",
            InstallModeType::SingleNamespace => "SingleNamespace",
            InstallModeType::MultiNamespace => "MultiNamespace",
            InstallModeType::AllNamespaces => "AllNamespaces",
        }
    }
}

/// The four install modes, `supported` for those in `modes`.
pub fn install_modes(modes: &[InstallModeType]) -> Vec<InstallMode> {
    InstallModeType::ALL
        .into_iter()
        .map(|kind| InstallMode {
            supported: modes.contains(&kind),
            kind,
        })
        .collect()
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Link {
    pub name: String,
    pub url: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Maintainer {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub email: String,
    pub name: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RelatedImage {
    pub image: String,
    #[serde(default)]
    pub name: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Provider {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub url: String,
}

/// A webhook OLM registers and serves certificates for (`spec.webhookdefinitions[]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookDescription {
    pub admission_review_versions: Vec<String>,
    pub container_port: i64,
    #[serde(
        default,
        rename = "conversionCRDs",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub conversion_crds: Vec<String>,
    pub deployment_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_policy: Option<String>,
    pub generate_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_selector: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reinvocation_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<Value>,
    pub side_effects: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_port: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<i64>,
    #[serde(rename = "type")]
    pub kind: WebhookType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook_path: Option<String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum WebhookType {
    #[default]
    ValidatingAdmissionWebhook,
    MutatingAdmissionWebhook,
    ConversionWebhook,
}

impl ClusterServiceVersion {
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        let csv: Self = serde_yaml::from_str(text)?;
        if csv.kind != KIND || csv.api_version != API_VERSION {
            anyhow::bail!(
                "not a {KIND} ({API_VERSION}): apiVersion {:?}, kind {:?}",
                csv.api_version,
                csv.kind
            );
        }
        Ok(csv)
    }

    pub fn to_yaml(&self) -> String {
        serde_yaml::to_string(self).expect("a CSV always serializes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_operator_rs_does_not_know_are_kept() {
        let text = "apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  labels:
    team: storage
  name: demo.v0.0.0
spec:
  displayName: Demo
  install:
    strategy: deployment
  nativeAPIs:
  - group: ''
    kind: Pod
    version: v1
  relatedImages:
  - image: quay.io/demo/operand:v1
    name: operand
";
        let csv = ClusterServiceVersion::parse(text).unwrap();
        let again = ClusterServiceVersion::parse(&csv.to_yaml()).unwrap();
        assert_eq!(csv, again);
        let out = csv.to_yaml();
        assert!(out.contains("team: storage"), "{out}");
        assert!(out.contains("relatedImages:"), "{out}");
        assert!(out.contains("nativeAPIs:"), "{out}");
    }

    #[test]
    fn other_kinds_are_refused() {
        let err = ClusterServiceVersion::parse("apiVersion: v1\nkind: ConfigMap\n").unwrap_err();
        assert!(
            err.to_string().contains("not a ClusterServiceVersion"),
            "{err}"
        );
    }

    #[test]
    fn install_modes_are_listed_in_olm_order() {
        let modes = install_modes(&[InstallModeType::AllNamespaces]);
        let supported: Vec<_> = modes
            .iter()
            .map(|m| (m.kind.as_str(), m.supported))
            .collect();
        assert_eq!(
            supported,
            [
                ("OwnNamespace", false),
                ("SingleNamespace", false),
                ("MultiNamespace", false),
                ("AllNamespaces", true)
            ]
        );
    }
}
