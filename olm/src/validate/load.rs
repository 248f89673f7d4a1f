//! Reading `manifests/` the way operator-framework/api's `GetBundleFromDir` does: the folder of
//! the ClusterServiceVersion holds the bundle; every file in it is one object (the first YAML
//! document of the file), read as sigs.k8s.io/yaml reads it; the CSV and the CRDs are decoded
//! into their types. Where the Go loader gives up on the bundle (a sub-folder, a hidden file, a
//! file that is no object, a second CSV, a CRD of another API version, a field of the wrong type)
//! each of those is an error here, and the rest is still read.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;

use serde_json::Value;

use super::Report;
use super::fields::text;
use super::format::MANIFESTS;
use crate::gosemver;
use crate::kyaml::{self, Node};
use crate::metadata;
use crate::typed;

/// One object of the bundle: a file of `manifests/`.
#[derive(Debug, Clone)]
pub struct Object {
    /// Relative to the bundle: `manifests/<name>`.
    pub file: String,
    /// The object as an untyped (`unstructured`) value.
    pub value: Value,
    pub api_version: String,
    pub kind: String,
    pub name: String,
}

/// A decoded ClusterServiceVersion or CRD: its file and its fields, type-checked.
#[derive(Debug, Clone)]
pub struct Typed {
    pub file: String,
    pub value: Value,
}

#[derive(Debug, Default)]
pub struct Bundle {
    /// The folder of the manifests, relative to the bundle (`manifests`).
    pub manifests: String,
    /// `registry+v1` when the manifests hold a CSV; `plain` otherwise.
    pub media_type: String,
    pub objects: Vec<Object>,
    pub csv: Option<Typed>,
    pub crds: Vec<Typed>,
    /// The annotations (from `metadata/annotations.yaml`).
    pub annotations: BTreeMap<String, String>,
    /// Bytes of the files under the manifests folder, and of the same gzipped and base64-encoded
    /// (how OLM stores a bundle in a ConfigMap).
    pub size: u64,
    pub compressed_size: u64,
}

impl Bundle {
    pub fn package(&self) -> &str {
        self.annotations
            .get(metadata::PACKAGE)
            .map(String::as_str)
            .unwrap_or("")
    }

    /// The channels, as operator-framework splits them (`a,b`).
    pub fn channels(&self) -> Vec<&str> {
        self.annotations
            .get(metadata::CHANNELS)
            .map(|c| c.split(',').collect())
            .unwrap_or_default()
    }

    pub fn default_channel(&self) -> &str {
        self.annotations
            .get(metadata::DEFAULT_CHANNEL)
            .map(String::as_str)
            .unwrap_or("")
    }

    /// The CSV's name, the bundle's name.
    pub fn name(&self) -> &str {
        self.csv
            .as_ref()
            .map(|c| text(&c.value, &["metadata", "name"]))
            .unwrap_or("")
    }
}

const CSV_KIND: &str = "ClusterServiceVersion";
const CRD_KIND: &str = "CustomResourceDefinition";

pub fn load(
    dir: &Path,
    annotations: Option<&(String, BTreeMap<String, String>)>,
    report: &mut Report,
) -> Bundle {
    let mut bundle = Bundle {
        annotations: annotations.map(|(_, a)| a.clone()).unwrap_or_default(),
        ..Bundle::default()
    };
    // operator-sdk reads the manifests where the annotation says.
    let manifests = bundle
        .annotations
        .get(metadata::MANIFESTS)
        .map(|m| m.trim_end_matches('/').trim_start_matches("./").to_string())
        .filter(|m| !m.is_empty() && !m.contains(".."))
        .unwrap_or_else(|| MANIFESTS.to_string());
    bundle.manifests = manifests.clone();
    let folder = dir.join(&manifests);
    if !folder.is_dir() {
        report.error(
            format!("{manifests}/"),
            "no such directory: the bundle has no manifests",
        );
        return bundle;
    }
    bundle.media_type = match super::format::media_type(&folder) {
        Some(media) => media,
        None => {
            report.error(
                format!("{manifests}/"),
                "The directory contains no yaml files",
            );
            return bundle;
        }
    };
    let entries = match sorted_entries(&folder) {
        Ok(entries) => entries,
        Err(err) => {
            report.error(format!("{manifests}/"), format!("cannot read it: {err}"));
            return bundle;
        }
    };
    let mut csvs = 0;
    for (name, is_dir) in entries {
        let file = format!("{manifests}/{name}");
        if is_dir {
            report.error(
                &file,
                "bundle manifests dir contains directory: a bundle's manifests are files of one folder",
            );
            continue;
        }
        if name.starts_with('.') {
            report.error(&file, "bundle manifests dir has hidden file");
            continue;
        }
        let Some(object) = read_object(&folder.join(&name), &file, report) else {
            continue;
        };
        match object.kind.as_str() {
            CSV_KIND => {
                csvs += 1;
                if csvs > 1 {
                    report.error(&file, "invalid bundle: contains multiple CSVs");
                } else {
                    bundle.csv = decode_csv(&object, &folder.join(&name), report);
                }
            }
            CRD_KIND => {
                if let Some(crd) = decode_crd(&object, &folder.join(&name), report) {
                    bundle.crds.push(crd);
                }
            }
            _ => {}
        }
        bundle.objects.push(object);
    }
    if csvs == 0 {
        report.error(
            format!("{manifests}/"),
            "unable to find a csv in bundle directory: a registry+v1 bundle has one ClusterServiceVersion",
        );
    }
    (bundle.size, bundle.compressed_size) = sizes(&folder);
    bundle
}

fn sorted_entries(folder: &Path) -> std::io::Result<Vec<(String, bool)>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(folder)? {
        let entry = entry?;
        out.push((
            entry.file_name().to_string_lossy().into_owned(),
            entry.file_type()?.is_dir(),
        ));
    }
    out.sort();
    Ok(out)
}

/// The first document of a file, as an object with a kind; problems reported.
fn read_object(path: &Path, file: &str, report: &mut Report) -> Option<Object> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) => {
            report.error(file, format!("unable to load file: {err}"));
            return None;
        }
    };
    let (node, extra) = match kyaml::first_and_rest(&text) {
        Ok((Some(node), extra)) => (node, extra),
        Ok((None, _)) => {
            report.error(file, "unable to decode object: the file holds no object");
            return None;
        }
        Err(err) => {
            report.error(file, format!("unable to decode object: {err}"));
            return None;
        }
    };
    if extra > 0 {
        report.warn(
            file,
            format!(
                "{extra} more YAML document(s) after the first: OLM reads only the first object of a manifest file"
            ),
        );
    }
    if !matches!(node, Node::Map(_)) {
        report.error(
            file,
            format!(
                "unable to decode object: a {} is not a Kubernetes object",
                node.kind_name()
            ),
        );
        return None;
    }
    let kind = text_of(&node, "kind");
    if kind.is_empty() {
        report.error(file, "unable to decode object: Object 'Kind' is missing");
        return None;
    }
    // The CSV and CRDs are decoded into their own types (with sigs.k8s.io/yaml's coercions);
    // other objects as operator-registry checks that they can be applied.
    if kind != CSV_KIND && kind != CRD_KIND {
        let (_, errors) = typed::decode(&node, &typed::object());
        for err in &errors {
            report.error(file, err.to_string());
        }
    }
    let api_version = text_of(&node, "apiVersion");
    let name = node
        .at(&["metadata", "name"])
        .and_then(Node::as_str)
        .unwrap_or("")
        .to_string();
    Some(Object {
        file: file.to_string(),
        value: node.to_json(),
        api_version,
        kind,
        name,
    })
}

fn text_of(node: &Node, key: &str) -> String {
    node.get(key)
        .and_then(Node::scalar_text)
        .unwrap_or_default()
}

fn reread(path: &Path) -> Option<Node> {
    let text = std::fs::read_to_string(path).ok()?;
    kyaml::first_document(&text).ok().flatten()
}

/// The CSV decoded into its type: each field of the wrong type is an error; `spec.version` and
/// `spec.release` must parse, as their Go decoders require.
fn decode_csv(object: &Object, path: &Path, report: &mut Report) -> Option<Typed> {
    let node = reread(path)?;
    let (mut value, errors) = typed::decode(&node, &typed::CSV);
    for err in errors {
        report.error(&object.file, err.to_string());
    }
    let file = &object.file;
    if let Some(version) = value.pointer("/spec/version").and_then(Value::as_str)
        && let Err(err) = gosemver::Version::parse_tolerant(version)
    {
        report.error(
            format!("{file}: spec.version"),
            format!("{version:?} is not a semantic version: {err}"),
        );
        value["spec"]["version"] = Value::Null;
    }
    if let Some(release) = value.pointer("/spec/release").and_then(Value::as_str)
        && let Some(err) = release
            .split('.')
            .find_map(|s| gosemver::Pre::parse(s).err())
    {
        report.error(
            format!("{file}: spec.release"),
            format!("{release:?} is not a release (dot-separated pre-release identifiers): {err}"),
        );
        value["spec"]["release"] = Value::Null;
    }
    Some(Typed {
        file: file.clone(),
        value,
    })
}

fn decode_crd(object: &Object, path: &Path, report: &mut Report) -> Option<Typed> {
    if !matches!(
        object.api_version.as_str(),
        "apiextensions.k8s.io/v1" | "apiextensions.k8s.io/v1beta1"
    ) {
        report.error(
            &object.file,
            format!(
                "unsupported CRD version {}: apiextensions.k8s.io/v1 or v1beta1",
                object.api_version
            ),
        );
        return None;
    }
    let node = reread(path)?;
    let (value, errors) = typed::decode(&node, &typed::CRD);
    for err in errors {
        report.error(&object.file, err.to_string());
    }
    Some(Typed {
        file: object.file.clone(),
        value,
    })
}

/// The bundle's size as operator-framework measures it: every file under the manifests folder,
/// as is and gzipped then base64-encoded.
fn sizes(folder: &Path) -> (u64, u64) {
    let mut size = 0;
    let mut compressed = 0;
    for entry in walkdir::WalkDir::new(folder)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file())
    {
        let Ok(data) = std::fs::read(entry.path()) else {
            continue;
        };
        size += data.len() as u64;
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        if encoder.write_all(&data).is_ok()
            && let Ok(gzipped) = encoder.finish()
        {
            compressed += (gzipped.len() as u64).div_ceil(3) * 4;
        }
    }
    (size, compressed)
}
