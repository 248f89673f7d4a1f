//! Whether OLM v1 (operator-controller) can install the bundle as a ClusterExtension, and why
//! not: its registry+v1 renderer's checks and its documented limitations
//! (operator-controller's `docs/project/olmv1_limitations.md`, `rukpak/render/registryv1`,
//! `applier/provider.go`, `resolve/validation.go`, as of 2026-08):
//!
//! - the bundle must support the `AllNamespaces` install mode (SingleNamespace and
//!   OwnNamespace only behind the alpha feature gate `SingleOwnNamespaceInstallSupport`);
//! - no dependencies: `olm.gvk.required`, `olm.package.required`, `olm.constraint` (from
//!   `metadata/dependencies.yaml`, `metadata/properties.yaml`, or the CSV's required CRDs and
//!   API services);
//! - no API services (`apiservicedefinitions.owned`);
//! - webhooks are supported, with a certificate provider in the cluster (cert-manager by
//!   default, or OpenShift's service CA); conversion webhooks only with AllNamespaces alone;
//! - the renderer's consistency checks: unique deployment names that are DNS names, unique CRDs,
//!   owned CRDs present, webhooks naming existing deployments and owned CRDs, unique webhook
//!   names that are DNS names, webhook rules that do not intercept OLM or admission webhooks,
//!   supported kinds;
//! - the OperatorConditions API does not exist under OLM v1 (a warning when the CSV grants it).

use std::collections::{BTreeMap, BTreeSet};

use super::Context;
use crate::k8s_names;
use crate::validate::Report;
use crate::validate::fields::{list, strings, text};
use crate::validate::load::Typed;
use crate::validate::objects::SUPPORTED_KINDS;

pub fn check(context: &Context, report: &mut Report) {
    let bundle = context.bundle;
    let Some(csv) = &bundle.csv else {
        return report.error(
            "bundle",
            "OLM v1 cannot install it: the bundle has no ClusterServiceVersion",
        );
    };
    let file = &csv.file;
    let value = &csv.value;
    let at = |field: &str| format!("{file}: {field}");
    let unsupported = |reason: &str| format!("OLM v1 cannot install this bundle: {reason}");

    if !list(value, &["spec", "apiservicedefinitions", "owned"]).is_empty() {
        report.error(
            at("spec.apiservicedefinitions.owned"),
            unsupported("apiServiceDefinitions are not supported"),
        );
    }
    let modes: BTreeSet<&str> = list(value, &["spec", "installModes"])
        .iter()
        .filter(|m| m.get("supported").and_then(serde_json::Value::as_bool) == Some(true))
        .map(|m| text(m, &["type"]))
        .collect();
    if !modes.contains("AllNamespaces") {
        if modes.contains("SingleNamespace") || modes.contains("OwnNamespace") {
            report.error(at("spec.installModes"), unsupported("the bundle does not support the AllNamespaces install mode (SingleNamespace and OwnNamespace need operator-controller's alpha feature gate SingleOwnNamespaceInstallSupport, and a watchNamespace in the ClusterExtension's configuration)"));
        } else {
            report.error(at("spec.installModes"), unsupported("the bundle must support at least one of [AllNamespaces SingleNamespace OwnNamespace] install modes"));
        }
    }
    check_dependencies(context, report);
    check_webhooks(csv, &modes, report);
    check_consistency(context, report);
    let grants_conditions = ["permissions", "clusterPermissions"].iter().any(|field| {
        list(value, &["spec", "install", "spec", field])
            .iter()
            .any(|p| {
                list(p, &["rules"]).iter().any(|rule| {
                    strings(rule, &["resources"])
                        .iter()
                        .any(|r| r.starts_with("operatorconditions"))
                })
            })
    });
    if grants_conditions {
        report.warn(
            at("spec.install.spec"),
            "the CSV grants access to OperatorConditions: OLM v1 has no OperatorConditions API, and an operator that relies on it does not work there",
        );
    }
}

/// Dependencies OLM v1 does not resolve, wherever the bundle declares them.
fn check_dependencies(context: &Context, report: &mut Report) {
    let unsupported = |what: &str| {
        format!(
            "OLM v1 cannot install this bundle: it has a dependency declared via property {what:?} which is currently not supported"
        )
    };
    for (i, dependency) in context.format.dependencies.iter().enumerate() {
        let kind = match text(dependency, &["type"]) {
            "olm.gvk" => "olm.gvk.required",
            "olm.package" => "olm.package.required",
            other => other,
        };
        if matches!(
            kind,
            "olm.gvk.required" | "olm.package.required" | "olm.constraint"
        ) {
            report.error(
                format!("metadata/dependencies.yaml: dependencies[{i}]"),
                unsupported(kind),
            );
        }
    }
    for (i, property) in context.format.properties.iter().enumerate() {
        let kind = text(property, &["type"]);
        if matches!(
            kind,
            "olm.gvk.required" | "olm.package.required" | "olm.constraint"
        ) {
            report.error(
                format!("metadata/properties.yaml: properties[{i}]"),
                unsupported(kind),
            );
        }
    }
    if let Some(csv) = &context.bundle.csv {
        for field in ["customresourcedefinitions", "apiservicedefinitions"] {
            if !list(&csv.value, &["spec", field, "required"]).is_empty() {
                report.error(
                    format!("{}: spec.{field}.required", csv.file),
                    unsupported("olm.gvk.required"),
                );
            }
        }
    }
}

fn check_webhooks(csv: &Typed, modes: &BTreeSet<&str>, report: &mut Report) {
    let webhooks = list(&csv.value, &["spec", "webhookdefinitions"]);
    let at = format!("{}: spec.webhookdefinitions", csv.file);
    if !webhooks.is_empty() {
        report.warn(
            &at,
            "OLM v1 installs webhooks with a certificate provider: cert-manager must be installed in the cluster (or OpenShift's service CA, with operator-controller's WebhookProviderOpenshiftServiceCA feature gate)",
        );
    }
    let conversions: Vec<&str> = webhooks
        .iter()
        .filter(|w| text(w, &["type"]) == "ConversionWebhook")
        .map(|w| text(w, &["generateName"]))
        .collect();
    if !conversions.is_empty() && (modes.len() != 1 || !modes.contains("AllNamespaces")) {
        for name in conversions {
            report.error(
                &at,
                format!("OLM v1 cannot install this bundle: it contains conversion webhook {name:?} and supports install modes {modes:?} - conversion webhooks are only supported for bundles that only support AllNamespaces install mode"),
            );
        }
    }
    for webhook in webhooks {
        let name = text(webhook, &["generateName"]);
        if text(webhook, &["type"]) == "ConversionWebhook" {
            continue;
        }
        for rule in list(webhook, &["rules"]) {
            for group in strings(rule, &["apiGroups"]) {
                if group == "olm.operatorframework.io" || group == "*" {
                    report.error(&at, format!("OLM v1 cannot install this bundle: webhook {name:?} contains forbidden rule: admission webhook rules cannot reference API group {group:?}"));
                }
                if group == "admissionregistration.k8s.io" {
                    for resource in strings(rule, &["resources"]) {
                        let lower = resource.to_lowercase();
                        if lower == "*"
                            || lower.starts_with("mutatingwebhookconfiguration")
                            || lower.starts_with("validatingwebhookconfiguration")
                        {
                            report.error(&at, format!("OLM v1 cannot install this bundle: webhook {name:?} contains forbidden rule: admission webhook rules cannot reference resource {resource:?} for API group {group:?}"));
                        }
                    }
                }
            }
        }
    }
}

/// operator-controller's registry+v1 renderer's own checks.
fn check_consistency(context: &Context, report: &mut Report) {
    let bundle = context.bundle;
    let Some(csv) = &bundle.csv else { return };
    if bundle.package().is_empty() {
        report.error(
            "metadata/annotations.yaml",
            not_installable("package name is empty".into()),
        );
    }
    let deployments = check_deployment_names(csv, report);
    let mut crd_names = BTreeSet::new();
    for crd in &bundle.crds {
        let name = text(&crd.value, &["metadata", "name"]);
        if !crd_names.insert(name) {
            report.error(
                &crd.file,
                not_installable(format!(
                    "bundle contains duplicate custom resource definition '{name}'"
                )),
            );
        }
    }
    let owned: BTreeSet<&str> = list(&csv.value, &["spec", "customresourcedefinitions", "owned"])
        .iter()
        .map(|o| text(o, &["name"]))
        .collect();
    for name in owned.difference(&crd_names) {
        report.error(format!("{}: spec.customresourcedefinitions.owned", csv.file), not_installable(format!("cluster service definition references owned custom resource definition '{name}' not found in bundle")));
    }
    check_webhook_definitions(csv, &deployments, &owned, report);
    for object in &bundle.objects {
        if matches!(
            object.kind.as_str(),
            "ClusterServiceVersion" | "CustomResourceDefinition"
        ) {
            continue;
        }
        if !SUPPORTED_KINDS.contains(&object.kind.as_str()) {
            report.error(
                &object.file,
                not_installable(format!(
                    "unsupported resource {:?} with kind {:?}",
                    object.name, object.kind
                )),
            );
        }
    }
}

/// A finding of the renderer's checks, as operator-controller words it.
fn not_installable(reason: String) -> String {
    format!("OLM v1 cannot install this bundle: {reason}")
}

/// The names of the CSV's deployments, each of which must be unique and a DNS name.
fn check_deployment_names<'a>(csv: &'a Typed, report: &mut Report) -> BTreeSet<&'a str> {
    let at = format!("{}: spec.install.spec.deployments", csv.file);
    let mut deployments = BTreeSet::new();
    for deployment in list(&csv.value, &["spec", "install", "spec", "deployments"]) {
        let name = text(deployment, &["name"]);
        if !deployments.insert(name) {
            report.error(
                &at,
                not_installable(format!(
                    "cluster service version contains duplicate strategy deployment spec '{name}'"
                )),
            );
        }
        let problems = k8s_names::dns1123_subdomain(name);
        if !problems.is_empty() {
            report.error(
                &at,
                not_installable(format!(
                    "invalid cluster service version strategy deployment name '{name}': {}",
                    problems.join(", ")
                )),
            );
        }
    }
    deployments
}

/// The CSV's webhooks: each names one of its `deployments`, has a unique DNS name within its
/// type, and converts `owned` CRDs only, no CRD by two conversion webhooks.
fn check_webhook_definitions(
    csv: &Typed,
    deployments: &BTreeSet<&str>,
    owned: &BTreeSet<&str>,
    report: &mut Report,
) {
    let at = format!("{}: spec.webhookdefinitions", csv.file);
    let mut names: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut converted: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for webhook in list(&csv.value, &["spec", "webhookdefinitions"]) {
        let kind = text(webhook, &["type"]);
        let name = text(webhook, &["generateName"]);
        let deployment = text(webhook, &["deploymentName"]);
        if !deployments.contains(deployment) {
            report.error(&at, not_installable(format!("webhook of type '{kind}' with name '{name}' references non-existent deployment '{deployment}'")));
        }
        if !names.entry(kind).or_default().insert(name) {
            report.error(
                &at,
                not_installable(format!("duplicate webhook '{name}' of type '{kind}'")),
            );
        }
        let problems = k8s_names::dns1123_subdomain(name);
        if !problems.is_empty() {
            report.error(
                &at,
                not_installable(format!(
                    "webhook of type '{kind}' has invalid name '{name}': {}",
                    problems.join(",")
                )),
            );
        }
        if kind == "ConversionWebhook" {
            for crd in strings(webhook, &["conversionCRDs"]) {
                if !owned.contains(crd) {
                    report.error(&at, not_installable(format!("conversion webhook '{name}' references custom resource definition '{crd}' not owned bundle")));
                }
                converted.entry(crd).or_default().push(name);
            }
        }
    }
    for (crd, webhooks) in converted.into_iter().filter(|(_, w)| w.len() > 1) {
        report.error(
            &at,
            not_installable(format!(
                "conversion webhooks [{}] reference same custom resource definition '{crd}'",
                webhooks.join(",")
            )),
        );
    }
}
