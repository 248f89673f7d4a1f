//! Multiple architectures (operator-framework's `MultipleArchitecturesValidator`, alpha), the
//! part that needs no registry. The peer pulls every image of the CSV (`docker manifest
//! inspect`) and compares the platforms they are built for with the CSV's
//! `operatorframework.io/arch.<arch>` and `operatorframework.io/os.<os>` labels and the node
//! affinity of its deployments. Offline, the images' platforms are unknown: this checks that the
//! labels and the node affinity agree, and says which images were not inspected.

use std::collections::BTreeSet;

use serde_json::Value;

use super::Context;
use crate::validate::Report;
use crate::validate::fields::{list, string_map, strings, text};

const ARCH_LABEL: &str = "operatorframework.io/arch.";
const OS_LABEL: &str = "operatorframework.io/os.";

pub fn check(context: &Context, report: &mut Report) {
    let Some(csv) = &context.bundle.csv else {
        return report.error("bundle", "bundle csv is nil");
    };
    let value = &csv.value;
    let labels = string_map(value, &["metadata", "labels"]);
    let supported = |prefix: &str, default: &str| -> BTreeSet<String> {
        let set: BTreeSet<String> = labels
            .iter()
            .filter(|(k, v)| k.starts_with(prefix) && *v == "supported")
            .map(|(k, _)| k[prefix.len()..].to_string())
            .collect();
        if set.is_empty() {
            [default.to_string()].into()
        } else {
            set
        }
    };
    let archs = supported(ARCH_LABEL, "amd64");
    let systems = supported(OS_LABEL, "linux");
    let mut images = BTreeSet::new();
    for deployment in list(value, &["spec", "install", "spec", "deployments"]) {
        let name = text(deployment, &["name"]);
        let pod = &deployment["spec"]["template"]["spec"];
        for container in list(pod, &["containers"]) {
            images.insert(text(container, &["image"]).to_string());
        }
        let at = format!(
            "{}: spec.install.spec.deployments[{name}].spec.template.spec.affinity",
            csv.file
        );
        for (what, label, declared, allowed) in [
            (
                "architecture",
                ARCH_LABEL,
                &archs,
                node_affinity(pod, "kubernetes.io/arch"),
            ),
            (
                "OS",
                OS_LABEL,
                &systems,
                node_affinity(pod, "kubernetes.io/os"),
            ),
        ] {
            // No constraint on this key: the pods go anywhere.
            let Some(allowed) = allowed else { continue };
            for value in allowed.difference(declared) {
                report.warn(&at, format!("the node affinity allows the {what} {value:?}, which no {label}<value> label of the CSV says is supported"));
            }
            for value in declared.difference(&allowed) {
                report.warn(&at, format!("the CSV's labels say the {what} {value:?} is supported, and the node affinity keeps the pods off it"));
            }
        }
    }
    for related in list(value, &["spec", "relatedImages"]) {
        images.insert(text(related, &["image"]).to_string());
    }
    images.remove("");
    if !images.is_empty() {
        let platforms: Vec<String> = systems
            .iter()
            .flat_map(|os| archs.iter().map(move |arch| format!("{os}/{arch}")))
            .collect();
        report.warn(
            format!("{}: metadata.labels", csv.file),
            format!(
                "the images were not inspected (that needs a registry: `operator-sdk bundle validate --select-optional name=multiarch` pulls them); check that {} are built for {}",
                images.into_iter().collect::<Vec<_>>().join(", "),
                platforms.join(", ")
            ),
        );
    }
}

/// The values a pod's required node affinity allows for `key` (`In` expressions on
/// `kubernetes.io/arch` or `kubernetes.io/os`), when it constrains it.
fn node_affinity(pod: &Value, key: &str) -> Option<BTreeSet<String>> {
    let terms = list(
        pod,
        &[
            "affinity",
            "nodeAffinity",
            "requiredDuringSchedulingIgnoredDuringExecution",
            "nodeSelectorTerms",
        ],
    );
    let values: BTreeSet<String> = terms
        .iter()
        .flat_map(|term| list(term, &["matchExpressions"]))
        .filter(|e| text(e, &["operator"]) == "In" && text(e, &["key"]) == key)
        .flat_map(|e| strings(e, &["values"]))
        .map(str::to_string)
        .collect();
    (!values.is_empty()).then_some(values)
}
