//! operator-framework's `CommunityOperatorValidator` (alpha, deprecated in operator-sdk): a bundle
//! that uses APIs Kubernetes 1.22 removed must keep OpenShift clusters of 4.9 and later from
//! installing it, with `olm.maxOpenShiftVersion` (< 4.9) in the CSV's `olm.properties` and a
//! `com.redhat.openshift.versions` label (< 4.9) in the bundle's Dockerfile, which
//! `--optional-values index-path=<Dockerfile>` names.

use serde_json::Value;

use super::Context;
use super::deprecated_apis::removed_1_22;
use crate::gosemver::Version;
use crate::validate::Report;

pub const INDEX_PATH_KEY: &str = "index-path";
const OCP_LABEL: &str = "com.redhat.openshift.versions";
const MORE_INFO: &str = "This bundle is using APIs which were deprecated and removed in v1.22. More info: https://kubernetes.io/docs/reference/using-api/deprecation-guide/#v1-22";

pub fn check(context: &Context, report: &mut Report) {
    let Some(csv) = &context.bundle.csv else {
        return report.error("bundle", "Bundle csv is nil");
    };
    let found = removed_1_22(context.bundle);
    if found.is_empty() {
        return;
    }
    let apis = super::deprecated_apis::apis_text(&found);
    let at = format!("{}: metadata.annotations.olm.properties", csv.file);
    match max_openshift_version(&csv.value, &apis) {
        Some(Finding::Error(problem)) => report.error(at, problem),
        Some(Finding::Warning(problem)) => report.warn(at, problem),
        None => {}
    }
    let dockerfile = format!(
        "{}: {OCP_LABEL}",
        context
            .values
            .get(INDEX_PATH_KEY)
            .map(String::as_str)
            .unwrap_or("bundle.Dockerfile")
    );
    match context.values.get(INDEX_PATH_KEY).filter(|p| !p.is_empty()) {
        None => report.warn(
            dockerfile,
            format!("please, inform the path of its index image file via the the optional key values and the key {INDEX_PATH_KEY} to allow this validator check the labels configuration or migrate the API(s) for {apis}. (e.g. {INDEX_PATH_KEY}=./mypath/bundle.Dockerfile). {MORE_INFO} "),
        ),
        Some(path) => {
            if let Some(problem) = openshift_label(std::path::Path::new(path), &apis) {
                report.error(dockerfile, problem);
            }
        }
    }
}

enum Finding {
    Error(String),
    Warning(String),
}

/// The CSV's `olm.maxOpenShiftVersion` property: there, a version, major.minor only (else a
/// warning), below 4.9.
fn max_openshift_version(csv: &Value, apis: &str) -> Option<Finding> {
    let properties = csv
        .pointer("/metadata/annotations/olm.properties")
        .and_then(Value::as_str)
        .unwrap_or("");
    if properties.is_empty() {
        return Some(Finding::Error(format!(
            "csv.Annotations not specified olm.maxOpenShiftVersion for an OCP version < 4.9. This annotation is required to prevent the user from upgrading their OCP cluster before they have installed a version of their operator which is compatible with 4.9. {MORE_INFO} which are no longer supported on 4.9. Migrate the API(s) for {apis} or use the annotation"
        )));
    }
    let Ok(Value::Array(list)) = serde_json::from_str::<Value>(properties) else {
        return Some(Finding::Error(format!(
            "csv.Annotations has an invalid value specified for olm.properties. Please, check the value  ({properties}) and ensure that it is an array such as: \"olm.properties\": '[{{\"type\": \"key name\", \"value\": \"key value\"}}]'"
        )));
    };
    let Some(max) = list
        .iter()
        .find(|p| p.get("type").and_then(Value::as_str) == Some("olm.maxOpenShiftVersion"))
    else {
        return Some(Finding::Error(format!(
            "csv.Annotations.olm.properties with the key `olm.maxOpenShiftVersion` and a value with an OCP version which is < 4.9 is required for any operator bundle that is using APIs which were deprecated and removed in v1.22. More info: https://kubernetes.io/docs/reference/using-api/deprecation-guide/#v1-22. Migrate the API(s) for {apis} or use the annotation"
        )));
    };
    let value = match max.get("value") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    let version = match Version::parse_tolerant(&value) {
        Ok(v) => v,
        Err(err) => {
            return Some(Finding::Error(format!(
                "csv.Annotations.olm.properties has an invalid value. Unable to parse ({value}) using semver : {err}"
            )));
        }
    };
    // As blang's EQ: build metadata does not count.
    if version.patch != 0 || !version.pre.is_empty() {
        return Some(Finding::Warning(format!(
            "csv.Annotations.olm.properties has an invalid value. olm.maxOpenShiftVersion must specify only major.minor versions, {version} will be truncated to {}.{}.0",
            version.major, version.minor
        )));
    }
    if version >= Version::parse("4.9.0").expect("a version") {
        return Some(Finding::Error(format!(
            "csv.Annotations.olm.properties with the key and value for olm.maxOpenShiftVersion has the OCP version value {value} which is >= of 4.9. {MORE_INFO}. Migrate the API(s) for {apis} or inform in this property an OCP version which is < 4.9"
        )));
    }
    None
}

/// The Dockerfile's `com.redhat.openshift.versions` label must keep the bundle below 4.9.
fn openshift_label(path: &std::path::Path, apis: &str) -> Option<String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) => {
            return Some(format!(
                "the index image in the path ({}) was not found. Please, inform the path of the bundle operator index image via the the optional key values and the key {INDEX_PATH_KEY}. (e.g. {INDEX_PATH_KEY}=./mypath/bundle.Dockerfile). Error : {err}",
                path.display()
            ));
        }
    };
    let limit = Version::parse("4.9.0").expect("a version");
    let Some(line) = text.lines().find(|l| l.contains(OCP_LABEL)) else {
        return Some(format!(
            "this bundle is using APIs which were deprecated and removed in v1.22. More info: https://kubernetes.io/docs/reference/using-api/deprecation-guide/#v1-22. Migrate the APIs for {apis} or provide compatible version(s) via the labels. (e.g. LABEL {OCP_LABEL}='4.6-4.8')"
        ));
    };
    let parts: Vec<&str> = line.split('=').collect();
    if parts.len() < 2 {
        return Some(format!("invalid syntax ({line}) for ({OCP_LABEL})"));
    }
    let clean = |s: &str| s.replace(['\'', '"', 'v'], "");
    if parts.len() > 2 && !parts[2].is_empty() {
        let version = clean(parts[2]);
        return match Version::parse_tolerant(version.trim()) {
            Err(_) => Some(format!(
                "unable to parse the value ({version}) on ({OCP_LABEL})"
            )),
            Ok(v) if v >= limit => Some(format!(
                "this bundle is using APIs which were deprecated and removed in v1.22. More info: https://kubernetes.io/docs/reference/using-api/deprecation-guide/#v1-22. Migrate the API(s) for {apis} or provide compatible version(s) by using the {OCP_LABEL} annotation in `metadata/annotations.yaml` to ensure that the index image will be geneared with its label. (e.g. LABEL {OCP_LABEL}='4.6-4.8')"
            )),
            Ok(_) => None,
        };
    }
    let range = clean(parts[1]);
    let range = range.trim();
    if range.len() <= 1 {
        return Some(format!("unable to get the range informed on {OCP_LABEL}"));
    }
    let Some((_, upper)) = range.split_once('-') else {
        return Some(format!(
            "this bundle is using APIs which were deprecated and removed in v1.22. More info: https://kubernetes.io/docs/reference/using-api/deprecation-guide/#v1-22 The {range} allows to distribute it on >= 4.9. Migrate the API(s) for {apis} or provide compatible version(s) by using the {OCP_LABEL} annotation in `metadata/annotations.yaml` to ensure that the index image will be generated with its label. (e.g. LABEL {OCP_LABEL}='4.6-4.8')"
        ));
    };
    match Version::parse_tolerant(upper) {
        Err(_) => Some(format!(
            "unable to parse the value ({upper}) on ({OCP_LABEL})"
        )),
        Ok(v) if v >= limit => Some(format!(
            "this bundle is using APIs which were deprecated and removed in v1.22. More info: https://kubernetes.io/docs/reference/using-api/deprecation-guide/#v1-22. Upgrade the APIs from for {apis} or provide compatible distribution version(s) by using the {OCP_LABEL} annotation in `metadata/annotations.yaml` to ensure that the index image will be generated with its label. (e.g. LABEL {OCP_LABEL}='4.6-4.8')"
        )),
        Ok(_) => None,
    }
}
