//! operator-framework's `GoodPracticesValidator`: containers request CPU and memory, owned and
//! required CRDs have descriptions, channels follow OLM's naming (candidate, stable, fast), the
//! operator does not create CRDs, and the CSV is named `<operator>.v<semver>`.

use std::sync::LazyLock;

use regex::Regex;

use super::Context;
use crate::gosemver::Version;
use crate::validate::Report;
use crate::validate::fields::{at, list, strings, text};

pub fn check(context: &Context, report: &mut Report) {
    let Some(csv) = &context.bundle.csv else {
        return report.error("bundle", "Bundle csv is nil");
    };
    let file = &csv.file;
    let value = &csv.value;
    let deployments = at(value, &["spec", "install", "spec", "deployments"]);
    if deployments.is_none() {
        report.error(
            format!("{file}: spec.install.spec.deployments"),
            "unable to find a deployment to install in the CSV",
        );
    }
    for deployment in list(value, &["spec", "install", "spec", "deployments"]) {
        for container in list(deployment, &["spec", "template", "spec", "containers"]) {
            // As the peer: a missing requests map (a zero quantity still prints as "0").
            if at(container, &["resources", "requests"]).is_none() {
                report.warn(
                    format!("{file}: spec.install.spec.deployments[{}]", text(deployment, &["name"])),
                    format!(
                        "unable to find the resource requests for the container: ({}). It is recommended to ensure the resource request for CPU and Memory. Be aware that for some clusters configurations it is required to specify requests or limits for those values. Otherwise, the system or quota may reject Pod creation. More info: https://master.sdk.operatorframework.io/docs/best-practices/managing-resources/",
                        text(container, &["name"])
                    ),
                );
            }
        }
    }
    for (field, relation) in [("owned", "owned"), ("required", "required")] {
        for crd in list(value, &["spec", "customresourcedefinitions", field]) {
            if text(crd, &["description"]).is_empty() {
                report.warn(
                    format!("{file}: spec.customresourcedefinitions.{field}"),
                    format!(
                        "{relation} CRD {:?} has an empty description",
                        text(crd, &["name"])
                    ),
                );
            }
        }
    }
    let mut channels: Vec<&str> = context.bundle.channels();
    channels.push(context.bundle.default_channel());
    let mut odd: Vec<String> = channels
        .into_iter()
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .filter(|c| {
            !["candidate", "stable", "fast"]
                .iter()
                .any(|p| c.starts_with(p))
        })
        .map(|c| format!("{c:?}"))
        .collect();
    odd.sort();
    odd.dedup();
    if !odd.is_empty() {
        report.warn(
            "metadata/annotations.yaml",
            format!(
                "channel(s) [{}] are not following the recommended naming convention: https://olm.operatorframework.io/docs/best-practices/channel-naming",
                odd.join(" ")
            ),
        );
    }
    if creates_crds(value) {
        report.warn(
            format!("{file}: spec.install.spec"),
            "CSV contains permissions to create CRD. An Operator shouldn't deploy or manage other operators (such patterns are known as meta or super operators or include CRDs in its Operands). It's the Operator Lifecycle Manager's job to manage the deployment and lifecycle of operators.  Please, review the design of your solution and if you should not be using Dependency Resolution from OLM instead. More info: https://sdk.operatorframework.io/docs/best-practices/common-recommendation/",
        );
    }
    let name = text(value, &["metadata", "name"]);
    for warning in name_warnings(name) {
        report.warn(format!("{file}: metadata.name"), warning);
    }
}

/// Permissions that let the operator create CRDs.
fn creates_crds(csv: &serde_json::Value) -> bool {
    ["permissions", "clusterPermissions"].iter().any(|field| {
        list(csv, &["spec", "install", "spec", field])
            .iter()
            .any(|permission| {
                list(permission, &["rules"]).iter().any(|rule| {
                    strings(rule, &["apiGroups"]).contains(&"apiextensions.k8s.io")
                        && strings(rule, &["resources"])
                            .iter()
                            .any(|r| ["customresourcedefinitions", "*", "[*]"].contains(r))
                        && strings(rule, &["verbs"])
                            .iter()
                            .any(|v| ["create", "*", "[*]", "patch"].contains(v))
                })
            })
    })
}

static TRAILING_VERSION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"([0-9]+)\.([0-9]+)\.([0-9]+)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+)?$")
        .expect("a valid pattern")
});

/// The peer's `checkBundleName`: a semantic version at the end, and `<name>.v<version>`.
pub fn name_warnings(name: &str) -> Vec<String> {
    let mut warnings = Vec::new();
    let semver = TRAILING_VERSION
        .find(name)
        .is_some_and(|m| Version::parse(m.as_str()).is_ok());
    if !semver {
        warnings.push(format!("csv.metadata.Name {name} is not following the versioning convention (MAJOR.MINOR.PATCH e.g 0.0.1): https://semver.org/"));
    }
    if name.split(".v").count() != 2 {
        warnings.push(format!("csv.metadata.Name {name} is not following the recommended naming convention: <operator-name>.v<semver> e.g. memcached-operator.v0.0.1"));
    }
    warnings
}
