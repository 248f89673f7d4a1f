//! operator-framework/api's `ClusterServiceVersionValidator`, check for check: the CSV's name
//! and `spec.replaces` are DNS names fit for a label, the examples are JSON objects of provided
//! APIs, install modes exist and allow conversion webhooks, `minKubeVersion` is semver, the
//! required fields are set, OLM's case-sensitive annotations are spelled right.
//!
//! Deliberately as the peer: the name need not carry the version (`<package>.v<X.Y.Z>` is a
//! convention, which the `good-practices` suite warns about), `spec.replaces` is any DNS name,
//! an install mode listed twice passes (the peer's check never fires), `olm.skipRange` is not
//! parsed here (the `operator-rs` suite does).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::Report;
use super::fields::{at, group_version, gvk_text, is_zero, list, map, text};
use super::load::Typed;
use crate::gosemver;
use crate::k8s_names;

/// apimachinery's `IsDNS1123Subdomain` and `IsValidLabelValue`, as the CSV name's check.
pub fn name_problems(name: &str) -> Vec<String> {
    let mut errs = k8s_names::dns1123_subdomain(name);
    errs.extend(k8s_names::label_value(name));
    errs
}

/// Annotations OLM reads case-sensitively (the peer's `CaseSensitiveAnnotationKeySet`).
const CASE_SENSITIVE_ANNOTATIONS: &[&str] = &[
    "olm.operatorGroup",
    "olm.operatorNamespace",
    "olm.targetNamespaces",
    "olm.providedAPIs",
    "olm.skipRange",
];

const MIN_KUBE_VERSION_WARNING: &str = "csv.Spec.minKubeVersion is not informed. It is recommended you provide this information. Otherwise, it would mean that your operator project can be distributed and installed in any cluster version available, which is not necessarily the case for all projects.";

pub fn check(csv: &Typed, report: &mut Report) {
    let file = &csv.file;
    let value = &csv.value;
    let field = |name: &str| format!("{file}: {name}");
    let name = text(value, &["metadata", "name"]);
    let problems = name_problems(name);
    if !problems.is_empty() {
        report.error(
            field("metadata.name"),
            format!("{name:?} is invalid: {}", problems.join(",")),
        );
    }
    let replaces = text(value, &["spec", "replaces"]);
    if !replaces.is_empty() {
        let problems = name_problems(replaces);
        if !problems.is_empty() {
            report.error(
                field("spec.replaces"),
                format!("{replaces:?} is invalid: {}", problems.join(",")),
            );
        }
    }
    check_examples(value, file, report);
    check_install_modes(value, &field("spec.installModes"), report);
    check_min_kube_version(value, &field("spec.minKubeVersion"), report);
    check_required_fields(value, file, report);
    check_annotation_names(value, &field("metadata.annotations"), report);
    if group_version(text(value, &["apiVersion"])).1.is_empty() {
        report.error(field("apiVersion"), "'apiVersion' is missing");
    }
    if text(value, &["kind"]).is_empty() {
        report.error(field("kind"), "'kind' is missing");
    }
}

/// `alm-examples` (or `olm.examples`): a JSON list of objects, each of a kind the CSV provides
/// (owned CRDs and API services); a provided kind without an example is a warning.
fn check_examples(csv: &Value, file: &str, report: &mut Report) {
    let at_annotations = &format!("{file}: metadata.annotations");
    let annotations = map(csv, &["metadata", "annotations"]);
    let Some(annotations) = annotations.filter(|a| !a.is_empty()) else {
        return report.warn(at_annotations, "annotations not found");
    };
    let get = |key: &str| annotations.get(key).and_then(Value::as_str);
    let examples = match (get("alm-examples"), get("olm.examples")) {
        (None, None) => return report.warn(at_annotations, "example annotations not found"),
        (Some(alm), Some(_)) => {
            report.warn(
                at_annotations,
                "both `alm-examples` and `olm.examples` are present. Checking only `alm-examples`",
            );
            alm
        }
        (Some(alm), None) => alm,
        (None, Some(olm)) => olm,
    };
    let at = format!("{at_annotations}.alm-examples");
    let mut shown = BTreeSet::new();
    if !examples.trim().is_empty() {
        let parsed: Value = match serde_json::from_str(examples) {
            Ok(parsed) => parsed,
            Err(err) => {
                return report.error(at, format!("invalid example: not JSON: {err}"));
            }
        };
        let Some(items) = parsed.as_array() else {
            return report.error(
                at,
                "error decoding example CustomResource: not a JSON list of objects",
            );
        };
        for (i, item) in items.iter().enumerate() {
            let kind = item.get("kind").and_then(Value::as_str).unwrap_or("");
            if kind.is_empty() {
                return report.error(
                    at,
                    format!(
                        "error decoding example CustomResource: item {i}: Object 'Kind' is missing"
                    ),
                );
            }
            let (group, version) =
                group_version(item.get("apiVersion").and_then(Value::as_str).unwrap_or(""));
            shown.insert((group.to_string(), version.to_string(), kind.to_string()));
        }
    }
    let mut provided = BTreeSet::new();
    for owned in list(csv, &["spec", "customresourcedefinitions", "owned"]) {
        let name = text(owned, &["name"]);
        match name.split_once('.') {
            Some((_, group)) => {
                provided.insert((
                    group.to_string(),
                    text(owned, &["version"]).to_string(),
                    text(owned, &["kind"]).to_string(),
                ));
            }
            None => report.error(
                format!("{file}: spec.customresourcedefinitions.owned"),
                format!("couldn't parse plural.group from crd name: {name}"),
            ),
        }
    }
    for owned in list(csv, &["spec", "apiservicedefinitions", "owned"]) {
        provided.insert((
            text(owned, &["group"]).to_string(),
            text(owned, &["version"]).to_string(),
            text(owned, &["kind"]).to_string(),
        ));
    }
    for (group, version, kind) in shown.difference(&provided) {
        report.error(
            &at,
            format!(
                "example must have a provided API: {} is not a kind the CSV owns",
                gvk_text(group, version, kind)
            ),
        );
    }
    for (group, version, kind) in provided.difference(&shown) {
        report.warn(
            &at,
            format!(
                "provided API should have an example annotation: {}",
                gvk_text(group, version, kind)
            ),
        );
    }
}

/// Install modes listed, one supported, and with conversion webhooks only AllNamespaces.
fn check_install_modes(csv: &Value, at: &str, report: &mut Report) {
    let modes = list(csv, &["spec", "installModes"]);
    if modes.is_empty() {
        return report.error(at, "install modes not found");
    }
    let supported: BTreeMap<&str, bool> = modes
        .iter()
        .map(|m| (text(m, &["type"]), super::fields::flag(m, &["supported"])))
        .collect();
    let only_all = modes.iter().all(|m| {
        let all = text(m, &["type"]) == "AllNamespaces";
        super::fields::flag(m, &["supported"]) == all
    });
    for webhook in list(csv, &["spec", "webhookdefinitions"]) {
        if !list(webhook, &["conversionCRDs"]).is_empty() && !only_all {
            report.error(
                at,
                format!(
                    "only AllNamespaces InstallModeType is supported when conversionCRDs is present (webhook {})",
                    text(webhook, &["generateName"])
                ),
            );
        }
    }
    if !supported.values().any(|s| *s) {
        report.error(at, "none of InstallModeTypes are supported");
    }
}

fn check_min_kube_version(csv: &Value, at: &str, report: &mut Report) {
    let min = text(csv, &["spec", "minKubeVersion"]);
    if min.trim().is_empty() {
        report.warn(at, MIN_KUBE_VERSION_WARNING);
    } else if let Err(err) = gosemver::Version::parse(min) {
        report.error(
            at,
            format!("csv.Spec.MinKubeVersion has an invalid value: {min} ({err}; e.g. 1.30.0)"),
        );
    }
}

/// The peer's `checkEmptyFields`: the fields of the CSV's Go type without `omitempty`, inside
/// structs that are set, must be set.
fn check_required_fields(csv: &Value, file: &str, report: &mut Report) {
    let missing = |field: &str, go: &str| {
        (
            format!("{file}: {field}"),
            format!("required field missing ({go})"),
        )
    };
    let mut errors = Vec::new();
    if is_zero(csv.get("apiVersion")) && is_zero(csv.get("kind")) {
        errors.push(missing("apiVersion, kind", "TypeMeta"));
    }
    if is_zero(csv.get("metadata")) {
        errors.push(missing("metadata", "ObjectMeta"));
    }
    let spec = at(csv, &["spec"]);
    if is_zero(spec) {
        errors.push(missing("spec", "Spec"));
    } else {
        let spec = spec.expect("not zero");
        let install = at(spec, &["install"]);
        if is_zero(install) {
            errors.push(missing("spec.install", "Spec.InstallStrategy"));
        } else {
            let install = install.expect("not zero");
            if text(install, &["strategy"]).is_empty() {
                errors.push(missing(
                    "spec.install.strategy",
                    "Spec.InstallStrategy.StrategyName",
                ));
            }
            let strategy = at(install, &["spec"]);
            if !is_zero(strategy) && at(strategy.expect("not zero"), &["deployments"]).is_none() {
                errors.push(missing(
                    "spec.install.spec.deployments",
                    "Spec.InstallStrategy.StrategySpec.DeploymentSpecs",
                ));
            }
        }
        if text(spec, &["displayName"]).is_empty() {
            errors.push(missing("spec.displayName", "Spec.DisplayName"));
        }
    }
    for (location, message) in errors {
        report.error(location, message);
    }
}

fn check_annotation_names(csv: &Value, at: &str, report: &mut Report) {
    let Some(annotations) = map(csv, &["metadata", "annotations"]) else {
        return;
    };
    for key in annotations.keys() {
        if let Some(right) = CASE_SENSITIVE_ANNOTATIONS
            .iter()
            .find(|k| k.eq_ignore_ascii_case(key) && *k != key)
        {
            report.error(
                at,
                format!("provided annotation {key} uses wrong case and should be {right} instead"),
            );
        }
        if key == "olm.properties" {
            report.warn(
                at,
                "found olm.properties annotation, please define these properties in metadata/properties.yaml instead",
            );
        }
    }
}
