//! operator-rs's own checks, beyond operator-framework's defaults (`--select-optional
//! name=operator-rs`; `make bundle` runs them). Errors are what breaks an install, an upgrade
//! or a catalog build; warnings are conventions and what catalogs show.
//!
//! - names: package and channels are valid catalog names; the default channel is one of the
//!   channels (a catalog needs its default channel), or there is one when several channels are;
//!   the CSV is `<package>.v<spec.version>`, `spec.replaces` `<package>.v<semver>`;
//! - `olm.skipRange` parses as OLM's version ranges (opm refuses a catalog otherwise);
//! - CRDs are `apiextensions.k8s.io/v1` (Kubernetes 1.22 and later serve no other);
//! - install modes: none listed twice;
//! - webhook definitions: their deployment exists, a valid port, side effects the API server
//!   accepts, review versions, conversion webhooks and CRDs with webhook conversion agree;
//! - what catalogs show: description, icon, keywords, maintainers, provider, links, maturity.

use std::collections::BTreeSet;

use serde_json::Value;

use super::Context;
use crate::gosemver::{Range, Version};
use crate::metadata;
use crate::validate::Report;
use crate::validate::fields::{at, list, map, strings, text};
use crate::validate::load::Typed;

pub fn check(context: &Context, report: &mut Report) {
    check_annotations(context, report);
    for crd in &context.bundle.crds {
        if text(&crd.value, &["apiVersion"]) != "apiextensions.k8s.io/v1" {
            report.error(
                &crd.file,
                "apiextensions.k8s.io/v1beta1 is not served by Kubernetes 1.22 and later: OLM cannot install this CRD there (use apiextensions.k8s.io/v1)",
            );
        }
    }
    let Some(csv) = &context.bundle.csv else {
        return;
    };
    check_names(context, csv, report);
    check_install_modes(csv, report);
    check_webhooks(context, csv, report);
    check_shown_fields(csv, report);
}

fn check_annotations(context: &Context, report: &mut Report) {
    let Some((file, annotations)) = &context.format.annotations else {
        return;
    };
    let bundle = context.bundle;
    if let Err(err) = metadata::check_name("package", bundle.package()) {
        report.error(file, err.to_string());
    }
    let channels = bundle.channels();
    for channel in &channels {
        if let Err(err) = metadata::check_name("channel", channel) {
            report.error(file, err.to_string());
        }
    }
    let default = bundle.default_channel();
    if !default.is_empty() && !channels.contains(&default) {
        report.error(
            file,
            format!(
                "the default channel {default:?} is not one of the bundle's channels ({}): a catalog built from this bundle alone has no such channel",
                channels.join(",")
            ),
        );
    } else if default.is_empty() && channels.len() > 1 {
        report.warn(
            file,
            format!(
                "{} is not set: with several channels, the catalog needs a default",
                metadata::DEFAULT_CHANNEL
            ),
        );
    }
    for key in annotations.keys() {
        if !key.starts_with(metadata::PREFIX) && !key.starts_with("com.redhat.") {
            report.warn(
                file,
                format!("{key} is not an operator-framework annotation"),
            );
        }
    }
}

/// `<package>.v<version>`: what `generate bundle` writes and catalogs show.
fn check_names(context: &Context, csv: &Typed, report: &mut Report) {
    let value = &csv.value;
    let package = context.bundle.package();
    let name = text(value, &["metadata", "name"]);
    let version = text(value, &["spec", "version"]);
    let expected = Version::parse_tolerant(version)
        .map(|v| format!("{package}.v{v}"))
        .unwrap_or_default();
    if !expected.is_empty() && name != expected {
        report.warn(
            format!("{}: metadata.name", csv.file),
            format!("{name:?} is not {expected:?} (<package>.v<spec.version>), the name catalogs and `replaces` use for this version"),
        );
    }
    let replaces = text(value, &["spec", "replaces"]);
    if !replaces.is_empty() {
        let shaped = replaces
            .split_once(".v")
            .is_some_and(|(p, v)| p == package && Version::parse(v).is_ok());
        if !shaped {
            report.warn(
                format!("{}: spec.replaces", csv.file),
                format!("{replaces:?} is not <package>.v<semver> of package {package:?}"),
            );
        }
        if replaces == name {
            report.error(
                format!("{}: spec.replaces", csv.file),
                "a bundle cannot replace itself",
            );
        }
    }
    if let Some(range) = value
        .pointer("/metadata/annotations/olm.skipRange")
        .and_then(Value::as_str)
        && let Err(err) = Range::parse(range)
    {
        report.error(
            format!("{}: metadata.annotations.olm.skipRange", csv.file),
            format!("{range:?} is not a version range OLM reads: {err}"),
        );
    }
}

fn check_install_modes(csv: &Typed, report: &mut Report) {
    let mut seen = BTreeSet::new();
    for mode in list(&csv.value, &["spec", "installModes"]) {
        let kind = text(mode, &["type"]);
        if !seen.insert(kind) {
            report.error(
                format!("{}: spec.installModes", csv.file),
                format!("{kind} is listed twice"),
            );
        }
    }
}

fn check_webhooks(context: &Context, csv: &Typed, report: &mut Report) {
    let value = &csv.value;
    let deployments: BTreeSet<&str> = list(value, &["spec", "install", "spec", "deployments"])
        .iter()
        .map(|d| text(d, &["name"]))
        .collect();
    let owned: BTreeSet<&str> = list(value, &["spec", "customresourcedefinitions", "owned"])
        .iter()
        .map(|o| text(o, &["name"]))
        .collect();
    let mut converted = BTreeSet::new();
    for webhook in list(value, &["spec", "webhookdefinitions"]) {
        let name = text(webhook, &["generateName"]);
        let kind = text(webhook, &["type"]);
        let at = format!("{}: spec.webhookdefinitions[{name}]", csv.file);
        if !deployments.contains(text(webhook, &["deploymentName"])) {
            report.error(
                &at,
                format!(
                    "deploymentName {:?} is none of the CSV's deployments",
                    text(webhook, &["deploymentName"])
                ),
            );
        }
        if let Some(port) = webhook.get("containerPort").and_then(Value::as_i64)
            && !(1..=65535).contains(&port)
        {
            report.error(&at, format!("containerPort {port} is not a port"));
        }
        if list(webhook, &["admissionReviewVersions"]).is_empty() {
            report.error(&at, "admissionReviewVersions is empty");
        }
        let side_effects = text(webhook, &["sideEffects"]);
        if !matches!(side_effects, "None" | "NoneOnDryRun") {
            report.error(
                &at,
                format!(
                    "sideEffects {side_effects:?}: the API server accepts None or NoneOnDryRun"
                ),
            );
        }
        let crds = strings(webhook, &["conversionCRDs"]);
        match kind {
            "ConversionWebhook" if crds.is_empty() => {
                report.error(&at, "a ConversionWebhook without conversionCRDs")
            }
            "ConversionWebhook" => {
                for crd in crds {
                    if !owned.contains(crd) {
                        report.error(
                            &at,
                            format!("conversionCRDs names {crd}, which the CSV does not own"),
                        );
                    }
                    converted.insert(crd);
                }
            }
            _ if !crds.is_empty() => report.error(&at, format!("conversionCRDs on a {kind}")),
            _ => {}
        }
    }
    for crd in &context.bundle.crds {
        let name = text(&crd.value, &["metadata", "name"]);
        let webhook = text(&crd.value, &["spec", "conversion", "strategy"]) == "Webhook";
        if webhook && !converted.contains(name) {
            report.error(&crd.file, format!("{name} converts through a webhook, and no ConversionWebhook of the CSV lists it in conversionCRDs: OLM would not serve its conversions"));
        }
        if !webhook && converted.contains(name) {
            report.error(&crd.file, format!("{name} is in a ConversionWebhook's conversionCRDs, and its conversion strategy is not Webhook"));
        }
    }
}

fn check_shown_fields(csv: &Typed, report: &mut Report) {
    let value = &csv.value;
    let missing = |path: &[&str]| match at(value, path) {
        None => true,
        Some(Value::String(s)) => s.trim().is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        Some(Value::Object(o)) => o.is_empty(),
        Some(_) => false,
    };
    for (field, path) in [
        ("spec.description", &["spec", "description"][..]),
        ("spec.icon", &["spec", "icon"]),
        ("spec.keywords", &["spec", "keywords"]),
        ("spec.maintainers", &["spec", "maintainers"]),
        ("spec.provider.name", &["spec", "provider", "name"]),
        ("spec.links", &["spec", "links"]),
        ("spec.maturity", &["spec", "maturity"]),
    ] {
        if missing(path) {
            report.warn(
                format!("{}: {field}", csv.file),
                "not set (catalogs show it)",
            );
        }
    }
    if map(value, &["metadata", "annotations"]).is_none_or(|a| !a.contains_key("capabilities")) {
        report.warn(
            format!("{}: metadata.annotations.capabilities", csv.file),
            "not set (catalogs show the capability level)",
        );
    }
}
