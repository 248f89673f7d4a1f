//! The bundle's layout and metadata, as operator-registry's `ValidateBundleFormat` checks them:
//! `manifests/` and `metadata/` exist; an annotations file says the media type the manifests
//! have, the package and the channels; `metadata/dependencies.yaml`, when there is one, declares
//! dependencies OLM can read.
//!
//! As there, only the presence of the package and channels is checked, not their spelling, and
//! a default channel need not be one of the channels (the catalog decides); the `operator-rs`
//! suite checks more (`suites::operator_rs`).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::Report;
use super::fields::{list, text};
use crate::gosemver;
use crate::kyaml::{self, Node};
use crate::metadata;
use crate::typed::{self, Shape};

pub const MANIFESTS: &str = "manifests";
pub const METADATA: &str = "metadata";

/// What the format check read, for the others.
#[derive(Debug, Default)]
pub struct Format {
    /// The annotations file (relative path) and its annotations.
    pub annotations: Option<(String, BTreeMap<String, String>)>,
    /// `metadata/dependencies.yaml`'s dependencies, as read.
    pub dependencies: Vec<Value>,
    /// `metadata/properties.yaml`'s properties, as read.
    pub properties: Vec<Value>,
}

fn annotations_shape() -> Shape {
    Shape::Struct(vec![(
        "annotations".into(),
        Shape::Map(Box::new(Shape::Str { coerce: true })),
    )])
}

fn list_file_shape(key: &str) -> Shape {
    Shape::Struct(vec![(
        key.into(),
        Shape::List(Box::new(Shape::Struct(vec![
            ("type".into(), Shape::Str { coerce: true }),
            ("value".into(), Shape::Any),
        ]))),
    )])
}

/// A metadata file decoded as `shape`, as operator-registry's `DecodeFile` does (`None` when it
/// does not decode: the registry then looks at the next file).
fn decode_file(path: &Path, shape: &Shape) -> Option<Value> {
    let text = std::fs::read_to_string(path).ok()?;
    let node = kyaml::first_document(&text).ok()??;
    let (value, errors) = typed::decode(&node, shape);
    errors.is_empty().then_some(value)
}

pub fn check(dir: &Path, report: &mut Report) -> Format {
    let mut format = Format::default();
    let manifests = dir.join(MANIFESTS);
    let metadata_dir = dir.join(METADATA);
    if !manifests.is_dir() {
        report.error(
            format!("{MANIFESTS}/"),
            "Unable to locate manifests directory",
        );
    }
    if !metadata_dir.is_dir() {
        report.error(
            format!("{METADATA}/"),
            "Unable to locate metadata directory",
        );
        read_annotations_elsewhere(dir, &mut format, report);
        return format;
    }
    let mut files: Vec<String> = match std::fs::read_dir(&metadata_dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect(),
        Err(err) => {
            report.error(format!("{METADATA}/"), format!("cannot read it: {err}"));
            return format;
        }
    };
    files.sort();
    for name in &files {
        let path = metadata_dir.join(name);
        let file = format!("{METADATA}/{name}");
        if format.annotations.is_none()
            && let Some(value) = decode_file(&path, &annotations_shape())
            && let Some(map) = value.get("annotations").and_then(Value::as_object)
        {
            let annotations = map
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect();
            format.annotations = Some((file, annotations));
            continue;
        }
        if format.dependencies.is_empty()
            && let Some(value) = decode_file(&path, &list_file_shape("dependencies"))
        {
            format.dependencies = list(&value, &["dependencies"]).to_vec();
        }
        if format.properties.is_empty()
            && let Some(value) = decode_file(&path, &list_file_shape("properties"))
        {
            format.properties = list(&value, &["properties"]).to_vec();
        }
    }
    if format.annotations.is_none() {
        explain_unreadable_annotations(dir, report);
        report.error(
            format!("{METADATA}/annotations.yaml"),
            "Could not find annotations file",
        );
    }
    let media_type = media_type(&manifests);
    if let Some((file, annotations)) = &format.annotations {
        check_annotations(file, annotations, media_type.as_deref(), report);
    }
    check_dependencies(&format.dependencies, report);
    format
}

/// Without `metadata/`, operator-sdk still looks for annotations anywhere in the bundle.
fn read_annotations_elsewhere(dir: &Path, format: &mut Format, report: &mut Report) {
    for entry in walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file())
    {
        if let Some(value) = decode_file(entry.path(), &annotations_shape())
            && let Some(map) = value.get("annotations").and_then(Value::as_object)
            && !map.is_empty()
        {
            let file = entry
                .path()
                .strip_prefix(dir)
                .unwrap_or(entry.path())
                .to_string_lossy()
                .into_owned();
            format.annotations = Some((
                file,
                map.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                    .collect(),
            ));
            return;
        }
    }
    report.error(
        format!("{METADATA}/annotations.yaml"),
        "Could not find annotations file",
    );
}

/// When `metadata/annotations.yaml` exists and does not read, say why (operator-sdk stops
/// there with the parse error).
fn explain_unreadable_annotations(dir: &Path, report: &mut Report) {
    let path = dir.join(METADATA).join("annotations.yaml");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return;
    };
    let location = format!("{METADATA}/annotations.yaml");
    match kyaml::first_document(&text) {
        Err(err) => report.error(location, format!("not valid YAML: {err}")),
        Ok(None) => report.error(location, "empty"),
        Ok(Some(node)) => {
            let (value, errors) = typed::decode(&node, &annotations_shape());
            for err in errors {
                report.error(location.clone(), err.to_string());
            }
            if value.get("annotations").is_none_or(Value::is_null) {
                report.error(location, "no `annotations` map");
            }
        }
    }
}

/// The media type the manifests have, as operator-registry's `GetMediaType` finds it:
/// `registry+v1` when one of the files is a ClusterServiceVersion, else `plain`; `None` when
/// the folder has no file.
pub fn media_type(manifests: &Path) -> Option<String> {
    let mut files: Vec<_> = std::fs::read_dir(manifests)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| !t.is_dir()))
        .map(|e| e.path())
        .collect();
    if files.is_empty() {
        return None;
    }
    files.sort();
    if files
        .iter()
        .any(|f| f.file_name().is_some_and(|n| n == "Chart.yaml"))
    {
        return Some("helm".into());
    }
    let is_csv = |path: &Path| {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|t| kyaml::first_document(&t).ok().flatten())
            .is_some_and(|n| n.get("kind") == Some(&Node::Str("ClusterServiceVersion".into())))
    };
    Some(if files.iter().any(|f| is_csv(f)) {
        metadata::REGISTRY_V1.into()
    } else {
        "plain".into()
    })
}

/// operator-registry's `validateAnnotations`: the core annotations are there, the media type is
/// the manifests', and channels (and a default channel, when given) are not empty.
fn check_annotations(
    file: &str,
    annotations: &BTreeMap<String, String>,
    media_type: Option<&str>,
    report: &mut Report,
) {
    let required = [
        metadata::MEDIATYPE,
        metadata::MANIFESTS,
        metadata::METADATA,
        metadata::PACKAGE,
        metadata::CHANNELS,
    ];
    for key in required {
        if !annotations.contains_key(key) {
            report.error(file, format!("Missing annotation {key:?}"));
        }
    }
    let media = annotations
        .get(metadata::MEDIATYPE)
        .map(String::as_str)
        .unwrap_or("");
    if let Some(detected) = media_type
        && media != detected
    {
        report.error(
            file,
            format!(
                "Expecting annotation {:?} to have value {detected:?} instead of {media:?}",
                metadata::MEDIATYPE
            ),
        );
    }
    if annotations
        .get(metadata::CHANNELS)
        .is_none_or(String::is_empty)
    {
        report.error(
            file,
            format!(
                "Expecting annotation {:?} to have non-empty value",
                metadata::CHANNELS
            ),
        );
    }
    if annotations
        .get(metadata::DEFAULT_CHANNEL)
        .is_some_and(String::is_empty)
    {
        report.error(
            file,
            format!(
                "Expecting annotation {:?} to have non-empty value",
                metadata::DEFAULT_CHANNEL
            ),
        );
    }
}

/// operator-registry's `validateDependencies`: each dependency's value decodes as its type's and
/// holds what the type needs. (An `olm.constraint`'s CEL expression is not compiled here: see
/// docs/olm.md.)
fn check_dependencies(dependencies: &[Value], report: &mut Report) {
    let file = format!("{METADATA}/dependencies.yaml");
    for (i, dependency) in dependencies.iter().enumerate() {
        let kind = text(dependency, &["type"]);
        let at = format!("{file}: dependencies[{i}]");
        let value = dependency.get("value");
        let Some(value) = parse_value(kind, value) else {
            report.error(at, format!("couldn't parse dependency of type {kind}"));
            continue;
        };
        let missing = |field: &str| text(&value, &[field]).is_empty();
        let mut problems = Vec::new();
        match kind {
            "olm.gvk" => {
                for (field, message) in [
                    ("group", "API Group is empty"),
                    ("version", "API Version is empty"),
                    ("kind", "API Kind is empty"),
                ] {
                    if missing(field) {
                        problems.push(message.to_string());
                    }
                }
            }
            "olm.package" => {
                if missing("packageName") {
                    problems.push("Package name is empty".into());
                }
                let range = text(&value, &["version"]);
                if range.is_empty() {
                    problems.push("Package version is empty".into());
                } else if gosemver::Range::parse(range).is_err() {
                    problems.push("Invalid semver format version".into());
                }
            }
            "olm.label" if missing("label") => {
                problems.push("Label information is missing".into());
            }
            "olm.constraint" => match value.get("cel").filter(|c| !c.is_null()) {
                None => problems.push("The CEL field is missing".into()),
                Some(cel) if text(cel, &["rule"]).is_empty() => {
                    problems.push("The CEL expression is missing".into())
                }
                Some(_) => {}
            },
            _ => {}
        }
        for problem in problems {
            report.error(at.clone(), problem);
        }
    }
}

/// A dependency's value decoded with plain encoding/json into its type's struct: `None` when it
/// is missing, of an unknown type, or has a field of the wrong type.
fn parse_value(kind: &str, value: Option<&Value>) -> Option<Value> {
    let string_fields: &[&str] = match kind {
        "olm.gvk" => &["group", "version", "kind"],
        "olm.package" => &["packageName", "version"],
        "olm.label" => &["label"],
        "olm.constraint" => &["failureMessage"],
        _ => return None,
    };
    let value = value?;
    if value.is_null() {
        return Some(Value::Object(Default::default()));
    }
    let object = value.as_object()?;
    for field in string_fields {
        if let Some(v) = find_field(object, field)
            && !(v.is_string() || v.is_null())
        {
            return None;
        }
    }
    if kind == "olm.constraint"
        && let Some(cel) = find_field(object, "cel")
        && !cel.is_null()
    {
        let rule = cel.as_object()?.get("rule");
        if rule.is_some_and(|r| !(r.is_string() || r.is_null())) {
            return None;
        }
    }
    // encoding/json matches field names case-insensitively.
    Some(Value::Object(
        object
            .iter()
            .map(|(k, v)| {
                let canonical = string_fields
                    .iter()
                    .chain(&["cel"])
                    .find(|f| f.eq_ignore_ascii_case(k))
                    .map_or(k.clone(), |f| f.to_string());
                (canonical, v.clone())
            })
            .collect(),
    ))
}

fn find_field<'a>(object: &'a serde_json::Map<String, Value>, field: &str) -> Option<&'a Value> {
    object.get(field).or_else(|| {
        object
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(field))
            .map(|(_, v)| v)
    })
}
