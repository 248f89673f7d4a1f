//! Reading the CustomResourceDefinition of an external kind (`--external-api-path`): the file is
//! the user's, so everything about it is checked and every problem named, before anything is
//! written.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use serde::Deserialize as _;
use serde_yaml::Value;

use crate::names::shown;

/// The largest CRD file read. cert-manager's whole bundle is about 1 MB; this bounds what a
/// wrong path (a log, an image) can make operator-rs load.
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// The parts of a CRD that the generated code needs, for one served version.
#[derive(Debug, Clone)]
pub struct ExternalCrd {
    /// `spec.group`, e.g. `cert-manager.io`.
    pub group: String,
    pub version: String,
    pub kind: String,
    pub plural: String,
    pub namespaced: bool,
    /// The version's `schema.openAPIV3Schema`.
    pub schema: Value,
}

/// What `--external-api-path` names: a CRD file, or (refused) a Go import path as kubebuilder
/// takes it.
pub fn resolve_path(project_dir: &Path, given: &str) -> Result<PathBuf> {
    if given.is_empty() {
        bail!(
            "--external-api-path is empty: pass the path of the kind's CustomResourceDefinition YAML file"
        );
    }
    let path = project_dir.join(given);
    if path.is_file() {
        return Ok(path);
    }
    if given.contains("://") {
        bail!(
            "invalid value {} for --external-api-path: operator-rs does not download; save the \
             CustomResourceDefinition and pass the path of the file",
            shown(given)
        );
    }
    if looks_like_go_import_path(given) {
        bail!(
            "invalid value {} for --external-api-path: this is a Go import path (kubebuilder imports \
             the Go types from it); operator-rs generates Rust types from the kind's \
             CustomResourceDefinition: pass the path of its YAML file (for cert-manager, \
             deploy/crds/cert-manager.io_certificates.yaml of its repository), and keep the Go \
             module in --external-api-module",
            shown(given)
        );
    }
    bail!(
        "invalid value {} for --external-api-path: no such file (relative paths are from the project \
         folder); pass the path of the kind's CustomResourceDefinition YAML file",
        shown(given)
    )
}

/// `github.com/org/repo/pkg/apis/x/v1`: a host with a dot, then a path, and no file extension.
fn looks_like_go_import_path(text: &str) -> bool {
    let mut parts = text.split('/');
    let host = parts.next().unwrap_or_default();
    host.contains('.')
        && !host.starts_with('.')
        && parts.next().is_some()
        && !text.ends_with(".yaml")
        && !text.ends_with(".yml")
        && !text.ends_with(".json")
}

/// Reads `path` (one or several YAML documents, as `kubectl apply -f` takes them, or JSON) and
/// returns the CRD of `group`/`kind`, at `version`, which must be served.
pub fn load(
    path: &Path,
    shown_path: &str,
    group: &str,
    version: &str,
    kind: &str,
) -> Result<ExternalCrd> {
    let crds = read_crds(path, shown_path)?;
    let crd = find_crd(crds, shown_path, group, kind)?;
    let plural = str_at(&crd, &["spec", "names", "plural"])
        .filter(|p| crate::names::is_dns1123_subdomain(p))
        .with_context(|| {
            format!(
                "the CRD of {kind} in {} has no valid spec.names.plural",
                shown(shown_path)
            )
        })?
        .to_string();
    let namespaced = match str_at(&crd, &["spec", "scope"]) {
        Some("Namespaced") => true,
        Some("Cluster") => false,
        other => bail!(
            "the CRD of {kind} in {} has spec.scope {}, neither Namespaced nor Cluster",
            shown(shown_path),
            shown(other.unwrap_or_default())
        ),
    };
    let schema = served_schema(&crd, shown_path, kind, version)?;
    Ok(ExternalCrd {
        group: group.to_string(),
        version: version.to_string(),
        kind: kind.to_string(),
        plural,
        namespaced,
        schema,
    })
}

/// The CustomResourceDefinitions of the file at `path` (its other documents left out), refused
/// when the file is too large, no UTF-8 text or no YAML, or holds none.
fn read_crds(path: &Path, shown_path: &str) -> Result<Vec<Value>> {
    let size = std::fs::metadata(path)
        .with_context(|| format!("cannot read --external-api-path {}", shown(shown_path)))?
        .len();
    if size > MAX_FILE_BYTES {
        bail!(
            "--external-api-path {} has {size} bytes, more than the {MAX_FILE_BYTES} a CRD file can have",
            shown(shown_path)
        );
    }
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "cannot read --external-api-path {} as UTF-8 text",
            shown(shown_path)
        )
    })?;
    let mut crds = Vec::new();
    for (i, document) in serde_yaml::Deserializer::from_str(&text).enumerate() {
        let value = Value::deserialize(document).with_context(|| {
            format!(
                "--external-api-path {}: document {} is not valid YAML",
                shown(shown_path),
                i + 1
            )
        })?;
        if str_at(&value, &["kind"]) == Some("CustomResourceDefinition") {
            crds.push(value);
        }
    }
    if crds.is_empty() {
        bail!(
            "--external-api-path {} holds no CustomResourceDefinition",
            shown(shown_path)
        );
    }
    Ok(crds)
}

/// The CRD of `group`/`kind` among `crds`, or an error that lists those the file has.
fn find_crd(crds: Vec<Value>, shown_path: &str, group: &str, kind: &str) -> Result<Value> {
    let found: Vec<String> = crds
        .iter()
        .map(|crd| {
            format!(
                "{}.{}",
                str_at(crd, &["spec", "names", "kind"]).unwrap_or("?"),
                str_at(crd, &["spec", "group"]).unwrap_or("?")
            )
        })
        .collect();
    let Some(crd) = crds.into_iter().find(|crd| {
        str_at(crd, &["spec", "group"]) == Some(group)
            && str_at(crd, &["spec", "names", "kind"]) == Some(kind)
    }) else {
        bail!(
            "--external-api-path {} has no CustomResourceDefinition of Kind {kind} in group {group} \
             (it has {}); check --kind, --group and --external-api-domain",
            shown(shown_path),
            found.join(", ")
        );
    };
    Ok(crd)
}

/// The `openAPIV3Schema` of `version` of the CRD, which must be served.
fn served_schema(crd: &Value, shown_path: &str, kind: &str, version: &str) -> Result<Value> {
    let versions = crd
        .get("spec")
        .and_then(|s| s.get("versions"))
        .and_then(Value::as_sequence)
        .cloned()
        .unwrap_or_default();
    let served: Vec<&str> = versions
        .iter()
        .filter(|v| v.get("served").and_then(Value::as_bool) == Some(true))
        .filter_map(|v| str_at(v, &["name"]))
        .collect();
    let Some(entry) = versions
        .iter()
        .find(|v| str_at(v, &["name"]) == Some(version))
    else {
        bail!(
            "the CRD of {kind} in {} has no version {version} (it serves: {})",
            shown(shown_path),
            served.join(", ")
        );
    };
    if !served.contains(&version) {
        bail!(
            "version {version} of {kind} in {} is not served (served: {}); a controller can only \
             watch a served version",
            shown(shown_path),
            served.join(", ")
        );
    }
    let Some(schema) = entry
        .get("schema")
        .and_then(|s| s.get("openAPIV3Schema"))
        .filter(|s| s.is_mapping())
    else {
        bail!(
            "version {version} of {kind} in {} has no schema.openAPIV3Schema to generate Rust types from",
            shown(shown_path)
        );
    };
    Ok(schema.clone())
}

/// The string at `path` in nested mappings.
fn str_at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a str> {
    path.iter()
        .try_fold(value, |value, key| value.get(key))
        .and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_import_paths_are_told_apart_from_files() {
        assert!(looks_like_go_import_path(
            "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
        ));
        assert!(!looks_like_go_import_path(
            "crds/cert-manager.io_certificates.yaml"
        ));
        assert!(!looks_like_go_import_path("certificates.yaml"));
        assert!(!looks_like_go_import_path("./crds/x"));
    }
}
