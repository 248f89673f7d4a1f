//! `bundle validate`: the checks of operator-framework's default validators (operator-sdk
//! `bundle validate` without `--select-optional`), offline, on a bundle directory.
//!
//! Each check is a small function that adds [`Problem`]s; the report is one line per problem.
//! Beyond operator-framework: a CRD in the bundle that the CSV does not own is an error (it only
//! warns: OLM would install a CRD that no CSV owns, and never upgrade or remove it), and the CSV's
//! name must carry `spec.version` (a mismatch breaks `replaces` chains).
//!
//! Symbolic links in the bundle are followed, as the image build that copies the bundle follows
//! them, as long as they stay inside it: a link that leaves the bundle, a loop and a link to
//! nothing are errors that name the link.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use serde_yaml::Value;

use super::csv::{ClusterServiceVersion, InstallModeType, WebhookType};
use super::metadata::{self, REGISTRY_V1};
use super::yaml::{ObjectId, str_at, value_at};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
}

/// One finding, about one file or field.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Problem {
    pub severity: Severity,
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.severity {
            Severity::Error => "ERROR",
            Severity::Warning => "WARNING",
        };
        write!(f, "{level}: {}", self.message)
    }
}

#[derive(Default)]
struct Report(Vec<Problem>);

impl Report {
    fn error(&mut self, message: impl Into<String>) {
        self.0.push(Problem {
            severity: Severity::Error,
            message: message.into(),
        });
    }
    fn warn(&mut self, message: impl Into<String>) {
        self.0.push(Problem {
            severity: Severity::Warning,
            message: message.into(),
        });
    }
}

/// Annotations OLM reads case-sensitively (operator-framework's `CaseSensitiveAnnotationKeySet`).
const CASE_SENSITIVE_ANNOTATIONS: &[&str] = &[
    "olm.operatorGroup",
    "olm.operatorNamespace",
    "olm.targetNamespaces",
    "olm.providedAPIs",
    "olm.skipRange",
];

/// Every problem of the bundle in `dir` (`metadata/` and `manifests/`), errors first.
pub fn validate(dir: &Path) -> Result<Vec<Problem>> {
    if !dir.is_dir() {
        bail!("{} is not a directory", dir.display());
    }
    let dir = &dir.canonicalize()?;
    let mut report = Report::default();
    check_annotations(dir, &mut report);
    let manifests = read_manifests(dir, &mut report)?;
    let csvs: Vec<_> = manifests
        .iter()
        .filter(|(_, o)| {
            ObjectId::of(o).is_ok_and(|id| id.is("operators.coreos.com", "ClusterServiceVersion"))
        })
        .collect();
    match csvs.as_slice() {
        [] => report.error("manifests/: no ClusterServiceVersion"),
        [(file, csv)] => check_csv(file, csv, &manifests, &mut report),
        _ => report.error(format!(
            "manifests/: {} ClusterServiceVersions; a bundle has one",
            csvs.len()
        )),
    }
    let mut problems = report.0;
    problems.sort();
    problems.dedup();
    Ok(problems)
}

/// `rel` in the bundle `dir` (canonical), its symbolic links followed: Err(why) when one is a
/// loop, leads to nothing, or leaves the bundle.
fn in_bundle(dir: &Path, rel: &str) -> std::result::Result<PathBuf, String> {
    let path = dir.join(rel);
    let linked = rel
        .split('/')
        .scan(dir.to_path_buf(), |at, part| {
            at.push(part);
            Some(at.is_symlink())
        })
        .any(|link| link);
    match path.canonicalize() {
        Ok(real) if real.starts_with(dir) => Ok(real),
        Ok(real) => Err(format!(
            "{rel}: a symbolic link out of the bundle (to {}); a bundle image holds only the bundle",
            real.display()
        )),
        Err(err) if linked => Err(format!(
            "{rel}: a symbolic link that cannot be followed (a loop, or a link to nothing): {err}"
        )),
        Err(err) => Err(format!("{rel}: cannot read it: {err}")),
    }
}

fn check_annotations(dir: &Path, report: &mut Report) {
    let path = match in_bundle(dir, "metadata/annotations.yaml") {
        Ok(path) => path,
        Err(problem) => return report.error(problem),
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) => {
            return report.error(format!("metadata/annotations.yaml: cannot read it: {err}"));
        }
    };
    let annotations: BTreeMap<String, String> = match serde_yaml::from_str::<Value>(&text)
        .map_err(|e| e.to_string())
        .and_then(|v| {
            serde_yaml::from_value(v.get("annotations").cloned().unwrap_or(Value::Null))
                .map_err(|e| e.to_string())
        }) {
        Ok(Some(map)) => map,
        Ok(None) => return report.error("metadata/annotations.yaml: no `annotations` map"),
        Err(err) => return report.error(format!("metadata/annotations.yaml: {err}")),
    };
    let get = |key: &str| annotations.get(key).map(String::as_str);
    let expected = [
        (metadata::MEDIATYPE, REGISTRY_V1),
        (metadata::MANIFESTS, metadata::MANIFESTS_DIR),
        (metadata::METADATA, metadata::METADATA_DIR),
    ];
    for (key, want) in expected {
        match get(key) {
            None => report.error(format!("metadata/annotations.yaml: {key} is missing")),
            Some(value) if value != want => report.error(format!(
                "metadata/annotations.yaml: {key} is {value:?}, OLM needs {want:?}"
            )),
            Some(_) => {}
        }
    }
    match get(metadata::PACKAGE) {
        None => report.error(format!(
            "metadata/annotations.yaml: {} (the package name) is missing",
            metadata::PACKAGE
        )),
        Some(package) => {
            if let Err(err) = metadata::check_name("package", package) {
                report.error(format!("metadata/annotations.yaml: {err}"));
            }
        }
    }
    let channels: Vec<&str> = get(metadata::CHANNELS)
        .map(|c| c.split(',').map(str::trim).collect())
        .unwrap_or_default();
    if channels.is_empty() {
        report.error(format!(
            "metadata/annotations.yaml: {} (the channels) is missing",
            metadata::CHANNELS
        ));
    }
    for channel in &channels {
        if let Err(err) = metadata::check_name("channel", channel) {
            report.error(format!("metadata/annotations.yaml: {err}"));
        }
    }
    match get(metadata::DEFAULT_CHANNEL) {
        Some(default) if !channels.contains(&default) => report.error(format!(
            "metadata/annotations.yaml: the default channel {default:?} is not one of the channels ({})",
            channels.join(",")
        )),
        None if channels.len() > 1 => report.warn(format!(
            "metadata/annotations.yaml: {} is not set; with several channels, catalogs need a default",
            metadata::DEFAULT_CHANNEL
        )),
        _ => {}
    }
    for key in annotations.keys() {
        if !key.starts_with(metadata::PREFIX) {
            report.warn(format!(
                "metadata/annotations.yaml: {key} is not an operator-framework annotation"
            ));
        }
    }
}

/// Every object of `manifests/`, with its file name; files that do not parse are reported.
fn read_manifests(dir: &Path, report: &mut Report) -> Result<Vec<(String, Value)>> {
    let manifests = match in_bundle(dir, "manifests") {
        Ok(path) => path,
        Err(problem) => {
            report.error(problem);
            return Ok(Vec::new());
        }
    };
    let entries = match std::fs::read_dir(&manifests) {
        Ok(entries) => entries,
        Err(err) => {
            report.error(format!("manifests/: cannot read it: {err}"));
            return Ok(Vec::new());
        }
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        // Folders are not manifests (OLM skips them too); links are followed below.
        .filter(|e| e.file_type().is_ok_and(|t| !t.is_dir()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut out = Vec::new();
    for name in names {
        let file = format!("manifests/{name}");
        let path = match in_bundle(dir, &file) {
            Ok(path) if path.is_file() => path,
            Ok(_) => continue, // a link to a folder
            Err(problem) => {
                report.error(problem);
                continue;
            }
        };
        if !(name.ends_with(".yaml") || name.ends_with(".yml") || name.ends_with(".json")) {
            report.error(format!("{file}: not a YAML or JSON manifest"));
            continue;
        }
        let text = std::fs::read_to_string(&path)?;
        match super::yaml::objects(&text, &file) {
            Ok(objects) if objects.len() == 1 => match ObjectId::of(&objects[0]) {
                Ok(_) => out.push((file, objects.into_iter().next().unwrap())),
                Err(err) => report.error(format!("{file}: {err}")),
            },
            Ok(objects) => report.error(format!(
                "{file}: {} objects; each manifest holds one",
                objects.len()
            )),
            Err(err) => report.error(format!("{err:#}")),
        }
    }
    Ok(out)
}

fn check_csv(file: &str, object: &Value, manifests: &[(String, Value)], report: &mut Report) {
    let csv: ClusterServiceVersion = match serde_yaml::from_value(object.clone()) {
        Ok(csv) => csv,
        Err(err) => {
            return report.error(format!("{file}: not a valid ClusterServiceVersion: {err}"));
        }
    };
    let at = |field: &str| format!("{file}: {field}");
    let name = &csv.metadata.name;
    if let Err(err) = parse_csv_name(name) {
        report.error(format!("{}: {err}", at("metadata.name")));
    }
    if let Some(replaces) = &csv.spec.replaces
        && let Err(err) = parse_csv_name(replaces)
    {
        report.error(format!("{}: {err}", at("spec.replaces")));
    }
    match semver::Version::parse(&csv.spec.version) {
        Err(err) => report.error(format!(
            "{}: {:?} is not a semantic version: {err}",
            at("spec.version"),
            csv.spec.version
        )),
        Ok(version) => {
            if let Ok((_, named)) = parse_csv_name(name)
                && named != version
            {
                report.error(format!(
                    "{}: {name} does not carry spec.version {version}",
                    at("metadata.name")
                ));
            }
        }
    }
    if let Some(min) = &csv.spec.min_kube_version
        && semver::Version::parse(min.trim_start_matches('v')).is_err()
    {
        report.error(format!(
            "{}: {min:?} is not a semantic version",
            at("spec.minKubeVersion")
        ));
    }
    if csv.spec.display_name.trim().is_empty() {
        report.error(format!("{}: required, and empty", at("spec.displayName")));
    }
    let optional = [
        ("spec.description", csv.spec.description.trim().is_empty()),
        ("spec.icon", csv.spec.icon.is_empty()),
        ("spec.keywords", csv.spec.keywords.is_empty()),
        ("spec.maintainers", csv.spec.maintainers.is_empty()),
        (
            "spec.provider",
            csv.spec.provider.as_ref().is_none_or(|p| p.name.is_empty()),
        ),
        ("spec.links", csv.spec.links.is_empty()),
        ("spec.maturity", csv.spec.maturity.is_none()),
    ];
    for (field, empty) in optional {
        if empty {
            report.warn(format!("{}: not set (the catalog shows it)", at(field)));
        }
    }
    if csv.spec.install.strategy != "deployment" {
        report.error(format!(
            "{}: {:?}; OLM knows only \"deployment\"",
            at("spec.install.strategy"),
            csv.spec.install.strategy
        ));
    }
    if csv.spec.install.spec.deployments.is_empty() {
        report.error(format!(
            "{}: no deployment; OLM would install nothing to run",
            at("spec.install.spec.deployments")
        ));
    }
    for key in csv.metadata.annotations.keys() {
        if let Some(right) = CASE_SENSITIVE_ANNOTATIONS
            .iter()
            .find(|k| k.eq_ignore_ascii_case(key) && *k != key)
        {
            report.error(format!(
                "{}: annotation {key} uses the wrong case; OLM reads {right}",
                at("metadata.annotations")
            ));
        }
    }
    if let Some(range) = csv.metadata.annotations.get("olm.skipRange")
        && semver::VersionReq::parse(&range.replace(' ', ", ")).is_err()
    {
        report.error(format!(
            "{}: olm.skipRange {range:?} is not a semver range",
            at("metadata.annotations")
        ));
    }
    check_install_modes(&csv, &at("spec.installModes"), report);
    check_examples(&csv, &at("metadata.annotations.alm-examples"), report);
    check_crds(&csv, file, manifests, report);
    check_webhooks(&csv, &at("spec.webhookdefinitions"), manifests, report);
    check_service_accounts(&csv, manifests, report);
}

/// `<package>.v<semver>` (the `v` optional), a DNS-1123 subdomain of at most 63 characters.
fn parse_csv_name(name: &str) -> std::result::Result<(String, semver::Version), String> {
    let dns = name.len() <= 63
        && !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    if !dns {
        return Err(format!(
            "{name:?} is not a DNS-1123 subdomain of at most 63 characters (lowercase letters, digits, '-', '.')"
        ));
    }
    let Some((package, version)) = name.split_once('.') else {
        return Err(format!("{name:?} must have the format <package>.v<X.Y.Z>"));
    };
    semver::Version::parse(version.trim_start_matches('v'))
        .map(|v| (package.to_string(), v))
        .map_err(|_| {
            format!(
                "{name:?} holds no semantic version after the package name (<package>.v<X.Y.Z>)"
            )
        })
}

/// For `generate bundle --replaces`: a CSV name of the same package.
pub fn check_csv_name(flag: &str, name: &str, package: &str) -> Result<()> {
    match parse_csv_name(name) {
        Err(err) => bail!("{flag}: {err}"),
        Ok((named, _)) if named != package => {
            bail!(
                "{flag} {name}: a bundle of package {package} replaces an earlier one of the same package ({package}.v<X.Y.Z>)"
            )
        }
        Ok(_) => Ok(()),
    }
}

fn check_install_modes(csv: &ClusterServiceVersion, at: &str, report: &mut Report) {
    let modes = &csv.spec.install_modes;
    if modes.is_empty() {
        return report.error(format!("{at}: no install modes"));
    }
    let mut seen = BTreeSet::new();
    for mode in modes {
        if !seen.insert(mode.kind) {
            report.error(format!("{at}: {} is listed twice", mode.kind.as_str()));
        }
    }
    if !modes.iter().any(|m| m.supported) {
        report.error(format!("{at}: none is supported"));
    }
    let converts = csv
        .spec
        .webhook_definitions
        .iter()
        .any(|w| !w.conversion_crds.is_empty());
    let only_all = modes
        .iter()
        .all(|m| m.supported == (m.kind == InstallModeType::AllNamespaces))
        && modes.iter().any(|m| m.supported);
    if converts && !only_all {
        report.error(format!(
            "{at}: with conversion webhooks (conversionCRDs), OLM supports only the AllNamespaces install mode"
        ));
    }
}

/// The owned kinds as `(group, version, kind)`; the group is the CRD name after the plural.
fn owned_keys(csv: &ClusterServiceVersion) -> Vec<(String, String, String)> {
    csv.spec
        .custom_resource_definitions
        .owned
        .iter()
        .map(|o| {
            let group = o.name.split_once('.').map(|(_, g)| g).unwrap_or(&o.name);
            (group.to_string(), o.version.clone(), o.kind.clone())
        })
        .collect()
}

fn check_examples(csv: &ClusterServiceVersion, at: &str, report: &mut Report) {
    let owned: BTreeSet<_> = owned_keys(csv).into_iter().collect();
    let Some(text) = csv.metadata.annotations.get("alm-examples") else {
        return report.warn(format!("{at}: no examples"));
    };
    let examples: Vec<serde_json::Value> = match serde_json::from_str(text) {
        Ok(examples) => examples,
        Err(err) => return report.error(format!("{at}: not a JSON array of objects: {err}")),
    };
    let mut shown = BTreeSet::new();
    for example in &examples {
        let api_version = example["apiVersion"].as_str().unwrap_or_default();
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let key = (
            group.to_string(),
            version.to_string(),
            example["kind"].as_str().unwrap_or_default().to_string(),
        );
        if !owned.contains(&key) {
            report.error(format!(
                "{at}: the example of {} {api_version} is not of a kind the CSV owns",
                key.2
            ));
        }
        shown.insert(key);
    }
    for key in owned.difference(&shown) {
        report.warn(format!("{at}: no example of {} {}/{}", key.2, key.0, key.1));
    }
}

/// Owned CRDs and the bundle's CRDs must be the same set of group/version/kinds.
fn check_crds(
    csv: &ClusterServiceVersion,
    file: &str,
    manifests: &[(String, Value)],
    report: &mut Report,
) {
    let mut in_bundle: BTreeMap<(String, String, String), String> = BTreeMap::new();
    for (crd_file, crd) in crds(manifests) {
        if str_at(crd, &["apiVersion"]) != Some("apiextensions.k8s.io/v1") {
            report.error(format!(
                "{crd_file}: apiextensions.k8s.io/v1 is the only CRD version Kubernetes serves"
            ));
        }
        let group = str_at(crd, &["spec", "group"]).unwrap_or_default();
        let kind = str_at(crd, &["spec", "names", "kind"]).unwrap_or_default();
        for version in value_at(crd, &["spec", "versions"])
            .and_then(Value::as_sequence)
            .into_iter()
            .flatten()
        {
            let key = (
                group.to_string(),
                str_at(version, &["name"]).unwrap_or_default().to_string(),
                kind.to_string(),
            );
            if in_bundle
                .insert(key.clone(), crd_file.to_string())
                .is_some()
            {
                report.error(format!(
                    "{crd_file}: {} {}/{} is defined by two CRDs",
                    key.2, key.0, key.1
                ));
            }
        }
    }
    let owned = owned_keys(csv);
    for (group, version, kind) in &owned {
        if !in_bundle.contains_key(&(group.clone(), version.clone(), kind.clone())) {
            report.error(format!(
                "{file}: spec.customresourcedefinitions.owned: {kind} {group}/{version} has no CRD in the bundle"
            ));
        }
    }
    let owned_kinds: BTreeSet<_> = owned
        .iter()
        .map(|(g, _, k)| (g.clone(), k.clone()))
        .collect();
    for ((group, version, kind), crd_file) in &in_bundle {
        // As operator-framework: other versions of an owned kind need no entry of their own.
        if !owned_kinds.contains(&(group.clone(), kind.clone())) {
            report.error(format!("{crd_file}: {kind} {group}/{version} is not owned by the CSV (spec.customresourcedefinitions.owned)"));
        }
    }
}

fn crds(manifests: &[(String, Value)]) -> impl Iterator<Item = (&str, &Value)> {
    manifests
        .iter()
        .filter(|(_, o)| {
            ObjectId::of(o)
                .is_ok_and(|id| id.is("apiextensions.k8s.io", "CustomResourceDefinition"))
        })
        .map(|(f, o)| (f.as_str(), o))
}

fn check_webhooks(
    csv: &ClusterServiceVersion,
    at: &str,
    manifests: &[(String, Value)],
    report: &mut Report,
) {
    let deployments: BTreeSet<&str> = csv
        .spec
        .install
        .spec
        .deployments
        .iter()
        .map(|d| d.name.as_str())
        .collect();
    let owned: BTreeSet<&str> = csv
        .spec
        .custom_resource_definitions
        .owned
        .iter()
        .map(|o| o.name.as_str())
        .collect();
    let mut converted = BTreeSet::new();
    let mut names = BTreeSet::new();
    for webhook in &csv.spec.webhook_definitions {
        let name = &webhook.generate_name;
        let at = format!("{at}[{name}]");
        if name.is_empty() {
            report.error(format!("{at}: generateName is empty"));
        } else if !names.insert((name.clone(), webhook.kind)) {
            report.error(format!(
                "{at}: two {:?} webhooks have this generateName",
                webhook.kind
            ));
        }
        if !deployments.contains(webhook.deployment_name.as_str()) {
            report.error(format!(
                "{at}: deploymentName {:?} is none of the CSV's deployments",
                webhook.deployment_name
            ));
        }
        if !(1..=65535).contains(&webhook.container_port) {
            report.error(format!(
                "{at}: containerPort {} is not a port",
                webhook.container_port
            ));
        }
        if webhook.admission_review_versions.is_empty() {
            report.error(format!("{at}: admissionReviewVersions is empty"));
        }
        if !matches!(webhook.side_effects.as_str(), "None" | "NoneOnDryRun") {
            report.error(format!(
                "{at}: sideEffects {:?}; the API server accepts None or NoneOnDryRun",
                webhook.side_effects
            ));
        }
        match webhook.kind {
            WebhookType::ConversionWebhook => {
                if webhook.conversion_crds.is_empty() {
                    report.error(format!("{at}: a ConversionWebhook without conversionCRDs"));
                }
                for crd in &webhook.conversion_crds {
                    if !owned.contains(crd.as_str()) {
                        report.error(format!(
                            "{at}: conversionCRDs names {crd}, which the CSV does not own"
                        ));
                    }
                    converted.insert(crd.as_str());
                }
            }
            _ if !webhook.conversion_crds.is_empty() => {
                report.error(format!("{at}: conversionCRDs on a {:?}", webhook.kind));
            }
            _ => {}
        }
    }
    for (crd_file, crd) in crds(manifests) {
        let name = str_at(crd, &["metadata", "name"]).unwrap_or_default();
        let webhook = str_at(crd, &["spec", "conversion", "strategy"]) == Some("Webhook");
        if webhook && !converted.contains(name) {
            report.error(format!(
                "{crd_file}: {name} converts through a webhook, and no ConversionWebhook of the CSV lists it in conversionCRDs"
            ));
        }
        if !webhook && converted.contains(name) {
            report.error(format!(
                "{crd_file}: {name} is in a ConversionWebhook's conversionCRDs, and its conversion strategy is not Webhook"
            ));
        }
        if webhook
            && value_at(crd, &["spec", "preserveUnknownFields"]).and_then(Value::as_bool)
                == Some(true)
        {
            report.error(format!(
                "{crd_file}: conversion webhooks need spec.preserveUnknownFields false"
            ));
        }
    }
}

/// OLM makes the service accounts the deployments run as; the bundle must not.
fn check_service_accounts(
    csv: &ClusterServiceVersion,
    manifests: &[(String, Value)],
    report: &mut Report,
) {
    let accounts: BTreeSet<&str> = csv
        .spec
        .install
        .spec
        .deployments
        .iter()
        .filter_map(|d| str_at(&d.spec, &["template", "spec", "serviceAccountName"]))
        .collect();
    for (file, object) in manifests {
        if ObjectId::of(object).is_ok_and(|id| id.is("", "ServiceAccount"))
            && str_at(object, &["metadata", "name"]).is_some_and(|n| accounts.contains(n))
        {
            report.error(format!("{file}: the service account of a CSV deployment; OLM creates it, the bundle must not"));
        }
    }
}
