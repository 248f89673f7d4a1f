//! OperatorHub.io's requirements (operator-framework's `OperatorHubV2Validator`, the
//! `StandardCapabilitiesValidator` and `StandardCategoriesValidator`, and the deprecated
//! `OperatorHubValidator` that runs the three).

use serde_json::Value;

use super::Context;
use super::deprecated_apis::{K8S_VERSION_KEY, deprecated_apis};
use crate::base::CAPABILITIES;
use crate::gosemver::Version;
use crate::validate::Report;
use crate::validate::fields::{list, text};
use crate::validate::load::Typed;

/// OperatorHub.io's categories (the peer's `validCategories`).
pub const CATEGORIES: &[&str] = &[
    "AI/Machine Learning",
    "Application Runtime",
    "Big Data",
    "Cloud Provider",
    "Developer Tools",
    "Database",
    "Integration & Delivery",
    "Logging & Tracing",
    "Monitoring",
    "Modernization & Migration",
    "Networking",
    "OpenShift Optional",
    "Security",
    "Storage",
    "Streaming & Messaging",
    "Observability",
];

const ICON_TYPES: &[&str] = &["image/gif", "image/jpeg", "image/png", "image/svg+xml"];

pub fn operatorhub_v2(context: &Context, report: &mut Report) {
    let Some(csv) = csv(context, report) else {
        return;
    };
    spec_checks(csv, report);
    removed_apis(context, csv, report);
}

pub fn capabilities(context: &Context, report: &mut Report) {
    if let Some(csv) = csv(context, report) {
        check_capabilities(csv, report);
    }
}

pub fn categories(context: &Context, report: &mut Report) {
    if let Some(csv) = csv(context, report) {
        check_categories(csv, report);
    }
}

pub fn operatorhub(context: &Context, report: &mut Report) {
    if let Some(csv) = csv(context, report) {
        spec_checks(csv, report);
        check_capabilities(csv, report);
        check_categories(csv, report);
        removed_apis(context, csv, report);
    }
    report.warn(
        "bundle",
        "The \"operatorhub\" validator is deprecated; for equivalent validation use \"operatorhubv2\", \"capabilities\" and \"categories\" validators",
    );
}

fn csv<'a>(context: &'a Context, report: &mut Report) -> Option<&'a Typed> {
    if context.bundle.csv.is_none() {
        report.error("bundle", "Bundle csv is nil");
    }
    context.bundle.csv.as_ref()
}

fn removed_apis(context: &Context, csv: &Typed, report: &mut Report) {
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

/// Provider, maintainers, links, version, icon and minKubeVersion, as OperatorHub.io shows them.
fn spec_checks(csv: &Typed, report: &mut Report) {
    let value = &csv.value;
    let at = |field: &str| format!("{}: {field}", csv.file);
    check_contacts(csv, report);
    let version = text(value, &["spec", "version"]);
    if Version::parse_tolerant(version).is_ok_and(|v| v.is_zero()) || version.is_empty() {
        report.error(at("spec.version"), "csv.Spec.Version must be set");
    }
    check_icon(csv, report);
    let min = text(value, &["spec", "minKubeVersion"]);
    if min.trim().is_empty() {
        report.warn(at("spec.minKubeVersion"), "csv.Spec.minKubeVersion is not informed. It is recommended you provide this information. Otherwise, it would mean that your operator project can be distributed and installed in any cluster version available, which is not necessarily the case for all projects.");
    } else if Version::parse(min).is_err() {
        report.error(
            at("spec.minKubeVersion"),
            format!("csv.Spec.MinKubeVersion has an invalid value: {min}"),
        );
    }
}

/// The provider's name, and each maintainer's name and email and each link's name and URL.
fn check_contacts(csv: &Typed, report: &mut Report) {
    let value = &csv.value;
    let at = |field: &str| format!("{}: {field}", csv.file);
    if text(value, &["spec", "provider", "name"]).trim().is_empty() {
        report.error(
            at("spec.provider.name"),
            "csv.Spec.Provider.Name not specified",
        );
    }
    for maintainer in list(value, &["spec", "maintainers"]) {
        let email = text(maintainer, &["email"]);
        if text(maintainer, &["name"]).is_empty() || email.is_empty() {
            report.error(
                at("spec.maintainers"),
                "csv.Spec.Maintainers elements should contain both name and email",
            );
        }
        if !email.is_empty()
            && let Err(err) = parse_address(email)
        {
            report.error(
                at("spec.maintainers"),
                format!("csv.Spec.Maintainers email {email} is invalid: {err}"),
            );
        }
    }
    for link in list(value, &["spec", "links"]) {
        let url = text(link, &["url"]);
        if text(link, &["name"]).is_empty() || url.is_empty() {
            report.error(
                at("spec.links"),
                "csv.Spec.Links elements should contain both name and url",
            );
        }
        if !url.is_empty()
            && let Err(err) = parse_request_uri(url)
        {
            report.error(
                at("spec.links"),
                format!("csv.Spec.Links url {url} is invalid: {err}"),
            );
        }
    }
}

/// One icon, with data and one of the media types OperatorHub.io shows (a warning when the CSV
/// has none).
fn check_icon(csv: &Typed, report: &mut Report) {
    let value = &csv.value;
    let at = |field: &str| format!("{}: {field}", csv.file);
    let icons = list(value, &["spec", "icon"]);
    match icons {
        [] if value.pointer("/spec/icon").is_none_or(Value::is_null) => {
            report.warn(at("spec.icon"), "csv.Spec.Icon not specified")
        }
        [] => report.error(
            at("spec.icon"),
            "csv.Spec.Icon should only have one element",
        ),
        [first, rest @ ..] => {
            if !rest.is_empty() {
                report.error(
                    at("spec.icon"),
                    "csv.Spec.Icon should only have one element",
                );
            }
            let media = text(first, &["mediatype"]);
            if media.is_empty() || text(first, &["base64data"]).is_empty() {
                report.error(
                    at("spec.icon"),
                    "csv.Spec.Icon elements should contain both data and mediatype",
                );
            }
            if !media.is_empty() && !ICON_TYPES.contains(&media) {
                report.error(
                    at("spec.icon"),
                    format!("csv.Spec.Icon {media} does not have a valid mediatype"),
                );
            }
        }
    }
}

fn check_capabilities(csv: &Typed, report: &mut Report) {
    let capability = text(&csv.value, &["metadata", "annotations", "capabilities"]);
    let set = csv
        .value
        .pointer("/metadata/annotations/capabilities")
        .is_some();
    if set && !CAPABILITIES.contains(&capability) {
        report.error(
            format!("{}: metadata.annotations.capabilities", csv.file),
            format!("csv.Metadata.Annotations.Capabilities {capability:?} is not a valid capabilities level"),
        );
    }
}

/// Each of the comma-separated `categories` is OperatorHub.io's, or one of the list in the JSON
/// file `$OPERATOR_BUNDLE_CATEGORIES` names (`{"categories": […]}`).
fn check_categories(csv: &Typed, report: &mut Report) {
    let Some(categories) = csv
        .value
        .pointer("/metadata/annotations/categories")
        .and_then(Value::as_str)
    else {
        return;
    };
    let at = format!("{}: metadata.annotations.categories", csv.file);
    let custom = std::env::var("OPERATOR_BUNDLE_CATEGORIES")
        .ok()
        .filter(|p| !p.is_empty());
    let (allowed, which): (Vec<String>, &str) = match custom {
        Some(path) => {
            let read = crate::files::read_named_text(std::path::Path::new(&path))
                .map_err(|e| e.to_string())
                .and_then(|t| serde_json::from_str::<Value>(&t).map_err(|e| e.to_string()));
            match read {
                Ok(file) => (
                    list(&file, &["categories"])
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect(),
                    "custom",
                ),
                Err(err) => {
                    return report.error(
                        at,
                        format!("could not extract custom categories from {path}: {err}"),
                    );
                }
            }
        }
        None => (
            CATEGORIES.iter().map(|c| c.to_string()).collect(),
            "standard",
        ),
    };
    for category in categories.split(',') {
        if !allowed.iter().any(|a| a == category.trim()) {
            report.error(
                &at,
                format!("csv.Metadata.Annotations[\"categories\"] value {category:?} is not in the set of {which} categories"),
            );
        }
    }
}

/// Go's `net/mail.ParseAddress`, for the addresses maintainers give: `jane@example.com` or
/// `Jane Doe <jane@example.com>`.
pub fn parse_address(text: &str) -> Result<(), String> {
    let text = text.trim();
    let address = match (text.find('<'), text.ends_with('>')) {
        (Some(open), true) => &text[open + 1..text.len() - 1],
        (Some(_), false) => return Err("mail: unclosed angle-addr".into()),
        (None, _) => text,
    };
    let Some((local, domain)) = address.rsplit_once('@') else {
        return Err("mail: missing '@' or angle-addr".into());
    };
    let atext = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-/=?^_`{|}~".contains(c);
    let dot_atom =
        |s: &str| !s.is_empty() && s.split('.').all(|p| !p.is_empty() && p.chars().all(atext));
    let quoted = local.len() >= 2 && local.starts_with('"') && local.ends_with('"');
    if !(quoted || dot_atom(local)) {
        return Err("mail: invalid string".into());
    }
    if local.is_empty() {
        return Err("mail: no address".into());
    }
    let literal = domain.starts_with('[') && domain.ends_with(']');
    if !(literal || dot_atom(domain)) {
        return Err("mail: invalid string".into());
    }
    Ok(())
}

/// Go's `net/url.ParseRequestURI`: an absolute URL (`scheme:…`) or an absolute path.
pub fn parse_request_uri(text: &str) -> Result<(), String> {
    if text.is_empty() {
        return Err("empty url".into());
    }
    if text.chars().any(|c| c.is_ascii_control()) {
        return Err(format!(
            "parse {text:?}: net/url: invalid control character in URL"
        ));
    }
    if text.starts_with('/') {
        return Ok(());
    }
    let scheme_ok = text.split_once(':').is_some_and(|(scheme, _)| {
        scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    });
    if !scheme_ok {
        return Err(format!("parse {text:?}: invalid URI for request"));
    }
    if let Some(rest) = text.split_once("://").map(|(_, r)| r) {
        let host = rest.split(['/', '?', '#']).next().unwrap_or("");
        if host.contains(' ') {
            return Err(format!(
                "parse {text:?}: invalid character \" \" in host name"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_and_urls_read_as_go_reads_them() {
        assert!(parse_address("jane@example.com").is_ok());
        assert!(parse_address("Jane Doe <jane@example.com>").is_ok());
        assert!(parse_address("jane").is_err());
        assert!(parse_address("jane@").is_err());
        assert!(parse_request_uri("https://example.com/docs").is_ok());
        assert!(parse_request_uri("example.com").is_err());
        assert!(parse_request_uri("").is_err());
    }
}
