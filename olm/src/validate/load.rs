//! Reading `manifests/` the way operator-framework/api's `GetBundleFromDir` does: the folder of
//! the ClusterServiceVersion holds the bundle; every file in it is one object (the first
//! document of the file as apimachinery's YAML reader cuts it, [`crate::yaml_stream`]),
//! read as sigs.k8s.io/yaml reads it; the CSV and the CRDs are decoded into their types from
//! the loader's second read of the file, which in a file of several documents is not the first
//! one. Where the Go loader gives up on the bundle (a sub-folder, a hidden file, a file that is
//! no object, a second CSV, a CRD of another API version, a field of the wrong type) each of
//! those is an error here, and the rest is still read.
//!
//! Only regular files are read ([`crate::files`]); the others are named by the
//! `file_kinds` check and passed by here.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;

use serde_json::Value;

use super::Report;
use super::fields::text;
use super::format::MANIFESTS;
use crate::files::Root;
use crate::gosemver;
use crate::kyaml::{self, Node};
use crate::metadata;
use crate::typed;
use crate::yaml_stream::{self, LoaderReads};

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
    /// Whether its metadata converts into apimachinery's typed `ObjectMeta` (every field of its
    /// type), as the checks that convert the object first need (BundleValidator's service
    /// accounts: an object that does not convert is passed over).
    pub typed_metadata: bool,
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
    root: &Root,
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
    bundle.media_type = match super::format::media_type(root, &folder) {
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
        let Some((object, mut reads)) = read_entry(root, &manifests, &name, is_dir, dir, report)
        else {
            continue;
        };
        match object.kind.as_str() {
            CSV_KIND => {
                csvs += 1;
                if csvs > 1 {
                    report.error(&file, "invalid bundle: contains multiple CSVs");
                } else {
                    bundle.csv = decode_csv(&object, &mut reads, report);
                }
            }
            CRD_KIND => {
                if let Some(crd) = decode_crd(&object, &mut reads, report) {
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
    (bundle.size, bundle.compressed_size) = sizes(root, &folder);
    bundle
}

/// One entry of the manifests folder, read as an object (with the reader its typed read goes on
/// with), or the loader's problem with it.
fn read_entry(
    root: &Root,
    manifests: &str,
    name: &str,
    is_dir: bool,
    dir: &Path,
    report: &mut Report,
) -> Option<(Object, LoaderReads<'static>)> {
    let file = format!("{manifests}/{name}");
    if is_dir {
        report.error(
            &file,
            "bundle manifests dir contains directory: a bundle's manifests are files of one folder",
        );
        return None;
    }
    if name.starts_with('.') {
        report.error(&file, "bundle manifests dir has hidden file");
        return None;
    }
    let bytes = match root.read(&dir.join(manifests).join(name)) {
        Ok(bytes) => bytes,
        // Named by the `files` check.
        Err(err) if err.is_refusal() => return None,
        Err(err) => {
            report.error(&file, format!("unable to load file: {err}"));
            return None;
        }
    };
    let mut reads = LoaderReads::new(bytes);
    let object = read_object(&mut reads, &file, report)?;
    Some((object, reads))
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

/// The file's first document as an untyped object with a kind (apimachinery's
/// `Unstructured`), or the loader's error for it.
fn read_object(reads: &mut LoaderReads, file: &str, report: &mut Report) -> Option<Object> {
    let node = match reads
        .object()
        .map_err(|e| e.to_string())
        .and_then(unmarshal)
    {
        Ok(node) => node,
        Err(err) => {
            report.error(file, format!("unable to decode object: {err}"));
            return None;
        }
    };
    let more = more_documents(reads.bytes());
    if more > 0 {
        report.warn(
            file,
            format!(
                "{more} more YAML document(s) after the first: OLM reads only the first object of a manifest file"
            ),
        );
    }
    let problem = match &node {
        Node::Map(_) => None,
        Node::Null => Some(
            "Object 'Kind' is missing in 'null': the file's first document is empty".to_string(),
        ),
        other => Some(format!(
            "json: cannot unmarshal {} into Go value of type map[string]interface {{}}: a {} is not a Kubernetes object",
            go_json_kind(other),
            other.kind_name()
        )),
    };
    if let Some(problem) = problem {
        report.error(file, format!("unable to decode object: {problem}"));
        return None;
    }
    // Unstructured reads only strings: a kind of another type is no kind.
    let kind = string_at(&node, &["kind"]);
    if kind.is_empty() {
        report.error(file, "unable to decode object: Object 'Kind' is missing");
        return None;
    }
    Some(Object {
        file: file.to_string(),
        api_version: string_at(&node, &["apiVersion"]),
        name: string_at(&node, &["metadata", "name"]),
        typed_metadata: typed::decode(&node, &typed::object()).1.is_empty(),
        value: node.to_json(),
        kind,
    })
}

/// A decoder's read, parsed as sigs.k8s.io/yaml parses it (`None`, the end of the stream, is
/// Go's `EOF`).
fn unmarshal(chunk: Option<Vec<u8>>) -> Result<Node, String> {
    let chunk = chunk.ok_or("EOF")?;
    let text = kyaml::decode_text(&chunk)
        .map_err(|e| format!("error converting YAML to JSON: yaml: {e}"))?;
    kyaml::unmarshal(&text).map_err(|e| format!("error converting YAML to JSON: yaml: {e}"))
}

/// Documents with something in them after the first, which the loader never looks at.
fn more_documents(bytes: &[u8]) -> usize {
    yaml_stream::chunks(bytes)
        .map(|chunks| {
            chunks
                .iter()
                .skip(1)
                .filter(|c| yaml_stream::has_content(c))
                .count()
        })
        .unwrap_or(0)
}

/// encoding/json's name of a JSON value's type, in its type errors.
fn go_json_kind(node: &Node) -> &'static str {
    match node {
        Node::Null => "null",
        Node::Bool(_) => "bool",
        Node::Int(_) | Node::Uint(_) | Node::Float(_) => "number",
        Node::Str(_) => "string",
        Node::Seq(_) => "array",
        Node::Map(_) => "object",
    }
}

/// The string at `path`, as apimachinery's `Unstructured` accessors read it: `""` when it is
/// missing or not a string.
fn string_at(node: &Node, path: &[&str]) -> String {
    node.at(path)
        .and_then(Node::as_str)
        .unwrap_or_default()
        .to_string()
}

/// The loader's second read of a file, decoded into the CSV's or CRD's type.
fn typed_node(
    object: &Object,
    reads: &mut LoaderReads,
    what: &str,
    report: &mut Report,
) -> Option<Node> {
    match reads.typed().map_err(|e| e.to_string()).and_then(unmarshal) {
        Ok(node) => Some(node),
        Err(err) => {
            report.error(
                &object.file,
                format!(
                    "unable to parse {what}: {err} (the loader reads a file of several documents on from where its first read stopped)"
                ),
            );
            None
        }
    }
}

/// The CSV decoded into its type: each field of the wrong type is an error; `spec.version` and
/// `spec.release` must parse, as their Go decoders require.
fn decode_csv(object: &Object, reads: &mut LoaderReads, report: &mut Report) -> Option<Typed> {
    let node = typed_node(object, reads, "CSV", report)?;
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

fn decode_crd(object: &Object, reads: &mut LoaderReads, report: &mut Report) -> Option<Typed> {
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
    let node = typed_node(object, reads, "CRD", report)?;
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
/// as is and gzipped then base64-encoded. (Files the readers refuse are not counted: the
/// `files` check names them.)
fn sizes(root: &Root, folder: &Path) -> (u64, u64) {
    let mut size = 0;
    let mut compressed = 0;
    for entry in walkdir::WalkDir::new(folder)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| !e.file_type().is_dir())
    {
        let Ok(data) = root.read(entry.path()) else {
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
