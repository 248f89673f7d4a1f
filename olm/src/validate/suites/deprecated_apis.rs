//! Manifests that use Kubernetes APIs removed in 1.22, 1.25 and 1.26 (operator-framework's
//! `AlphaDeprecatedAPIsValidator`, also part of the OperatorHub suites): an error when the
//! bundle targets that Kubernetes version or later (its `minKubeVersion`, or `--optional-values
//! k8s-version=<version>`), a warning otherwise.

use std::collections::BTreeMap;

use super::Context;
use crate::gosemver::Version;
use crate::validate::Report;
use crate::validate::fields::{list, strings, text};
use crate::validate::load::Bundle;

pub const K8S_VERSION_KEY: &str = "k8s-version";

/// Kind → names of the objects of that kind, as the peer lists them.
pub type Found = BTreeMap<String, Vec<String>>;

pub fn check(context: &Context, report: &mut Report) {
    let Some(csv) = &context.bundle.csv else {
        return report.error("bundle", "Bundle csv is nil");
    };
    let k8s = context
        .values
        .get(K8S_VERSION_KEY)
        .map(String::as_str)
        .unwrap_or("");
    let (errors, warnings) = deprecated_apis(context.bundle, k8s);
    for message in errors {
        report.error(&csv.file, message);
    }
    for message in warnings {
        report.warn(&csv.file, message);
    }
}

/// The peer's `validateDeprecatedAPIS`: errors and warnings.
pub fn deprecated_apis(bundle: &Bundle, k8s_version: &str) -> (Vec<String>, Vec<String>) {
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let provided = Version::parse_tolerant(k8s_version).ok();
    if !k8s_version.is_empty() && provided.is_none() {
        errors.push(format!(
            "invalid value informed via the k8s key option : {k8s_version}"
        ));
    }
    let min_kube = bundle
        .csv
        .as_ref()
        .map(|c| text(&c.value, &["spec", "minKubeVersion"]))
        .unwrap_or("");
    let mut min = None;
    if !min_kube.is_empty() {
        match Version::parse_tolerant(min_kube) {
            Ok(v) => min = Some(v),
            Err(_) => errors.push(format!(
                "unable to use csv.Spec.MinKubeVersion to verify the CRD/Webhook apis because it has an invalid value: {min_kube}"
            )),
        }
    }
    for (minor, (found, warn_found)) in [
        (22, (removed_1_22(bundle), Found::new())),
        (25, removed_1_25(bundle)),
        (26, (removed_1_26(bundle), Found::new())),
    ] {
        let target = Version::parse(&format!("1.{minor}.0")).expect("a version");
        let targets = |v: &Option<Version>| v.as_ref().is_some_and(|v| *v >= target);
        if !found.is_empty() {
            let message = message(minor, &found);
            if targets(&provided) || targets(&min) {
                errors.push(message);
            } else {
                warnings.push(message);
            }
        }
        if !warn_found.is_empty() {
            warnings.push(message(minor, &warn_found));
        }
    }
    (errors, warnings)
}

fn message(minor: u32, found: &Found) -> String {
    format!(
        "this bundle is using APIs which were deprecated and removed in v1.{minor}. More info: https://kubernetes.io/docs/reference/using-api/deprecation-guide/#v1-{minor}. Migrate the API(s) for {}",
        apis_text(found)
    )
}

/// The objects found, as the peer lists them: `Kind: (["a" "b"])`, each followed by a comma
/// when there are several kinds (the peer's separator logic, kept for identical messages).
pub fn apis_text(found: &Found) -> String {
    let several = found.len() > 1;
    found
        .iter()
        .map(|(kind, names)| {
            let quoted: Vec<String> = names.iter().map(|n| format!("{n:?}")).collect();
            format!(
                "{kind}: ([{}]){}",
                quoted.join(" "),
                if several { "," } else { "" }
            )
        })
        .collect()
}

/// CRDs of apiextensions.k8s.io/v1beta1 and the other kinds whose betas 1.22 removed.
pub fn removed_1_22(bundle: &Bundle) -> Found {
    let mut found = Found::new();
    let v1beta1_crds: Vec<String> = bundle
        .crds
        .iter()
        .filter(|c| text(&c.value, &["apiVersion"]) == "apiextensions.k8s.io/v1beta1")
        .map(|c| text(&c.value, &["metadata", "name"]).to_string())
        .collect();
    if !v1beta1_crds.is_empty() {
        found.insert("CRD".into(), v1beta1_crds);
    }
    const REMOVED: &[(&str, &[&str])] = &[
        ("scheduling.k8s.io/v1beta1", &["PriorityClass"]),
        (
            "rbac.authorization.k8s.io/v1beta1",
            &["Role", "ClusterRoleBinding", "RoleBinding", "ClusterRole"],
        ),
        ("apiregistration.k8s.io/v1beta1", &["APIService"]),
        ("authentication.k8s.io/v1beta1", &["TokenReview"]),
        (
            "authorization.k8s.io/v1beta1",
            &[
                "LocalSubjectAccessReview",
                "SelfSubjectAccessReview",
                "SubjectAccessReview",
            ],
        ),
        (
            "admissionregistration.k8s.io/v1beta1",
            &[
                "MutatingWebhookConfiguration",
                "ValidatingWebhookConfiguration",
            ],
        ),
        ("coordination.k8s.io/v1beta1", &["Lease"]),
        ("extensions/v1beta1", &["Ingress"]),
        ("networking.k8s.io/v1beta1", &["Ingress", "IngressClass"]),
        (
            "storage.k8s.io/v1beta1",
            &["CSIDriver", "CSINode", "StorageClass", "VolumeAttachment"],
        ),
        (
            "certificates.k8s.io/v1beta1",
            &["CertificateSigningRequest"],
        ),
    ];
    for object in &bundle.objects {
        if REMOVED
            .iter()
            .any(|(api, kinds)| *api == object.api_version && kinds.contains(&object.kind.as_str()))
        {
            found
                .entry(object.kind.clone())
                .or_default()
                .push(object.name.clone());
        }
    }
    found
}

const REMOVED_1_25: &[(&str, &str)] = &[
    ("batch/v1beta1", "CronJob"),
    ("discovery.k8s.io/v1beta1", "EndpointSlice"),
    ("events.k8s.io/v1beta1", "Event"),
    ("autoscaling/v2beta1", "HorizontalPodAutoscaler"),
    ("policy/v1beta1", "PodDisruptionBudget"),
    ("policy/v1beta1", "PodSecurityPolicy"),
    ("node.k8s.io/v1beta1", "RuntimeClass"),
];

/// Objects of the kinds 1.25 removed (errors), and RBAC rules for PodSecurityPolicies, which
/// 1.25 removed entirely (warnings); the CSV's owned and required CRD resources count as objects.
fn removed_1_25(bundle: &Bundle) -> (Found, Found) {
    let mut found = Found::new();
    let mut warnings = Found::new();
    let mut add = |api: &str, kind: &str, name: String| {
        if REMOVED_1_25.iter().any(|(a, k)| *a == api && *k == kind) {
            found.entry(kind.to_string()).or_default().push(name);
        }
    };
    for object in &bundle.objects {
        if object.api_version != "operators.coreos.com/v1alpha1" {
            add(&object.api_version, &object.kind, object.name.clone());
            continue;
        }
        if object.kind != "ClusterServiceVersion" {
            continue;
        }
        let Some(csv) = &bundle.csv else { continue };
        let mut crd_resources = std::collections::BTreeSet::new();
        for (field, go) in [("owned", "Owned"), ("required", "Required")] {
            for (i, description) in list(&csv.value, &["spec", "customresourcedefinitions", field])
                .iter()
                .enumerate()
            {
                for (j, resource) in list(description, &["resources"]).iter().enumerate() {
                    let kind = text(resource, &["kind"]);
                    crd_resources.insert(format!("{}s", kind.to_lowercase()));
                    add(
                        text(resource, &["version"]),
                        kind,
                        format!(
                            "ClusterServiceVersion.Spec.CustomResourceDefinitions.{go}[{i}].Resource[{j}]"
                        ),
                    );
                }
            }
        }
        for (field, go) in [
            ("clusterPermissions", "ClusterPermissions"),
            ("permissions", "Permissions"),
        ] {
            for (i, permission) in list(&csv.value, &["spec", "install", "spec", field])
                .iter()
                .enumerate()
            {
                for (j, rule) in list(permission, &["rules"]).iter().enumerate() {
                    for group in strings(rule, &["apiGroups"]) {
                        for resource in strings(rule, &["resources"]) {
                            if crd_resources.contains(resource) {
                                continue;
                            }
                            if group == "policy" && resource == "podsecuritypolicies" {
                                warnings.entry(resource.to_string()).or_default().push(format!(
                                    "ClusterServiceVersion.Spec.InstallStrategy.StrategySpec.{go}[{i}].Rules[{j}]"
                                ));
                            }
                        }
                    }
                }
            }
        }
    }
    (found, warnings)
}

fn removed_1_26(bundle: &Bundle) -> Found {
    let mut found = Found::new();
    for object in &bundle.objects {
        if object.api_version == "autoscaling/v2beta2" && object.kind == "HorizontalPodAutoscaler" {
            found
                .entry(object.kind.clone())
                .or_default()
                .push(object.name.clone());
        }
    }
    found
}
