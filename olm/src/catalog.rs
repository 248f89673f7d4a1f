//! File-based catalogs (operator-registry's declarative config): what `operator-rs generate
//! catalog` and `make catalog` write, the format OLM's catalogs are served from since opm dropped
//! SQLite catalogs.
//!
//! A catalog of one package is a YAML stream of objects: one `olm.package` (name, default
//! channel, icon, description), one `olm.channel` per channel (its entries: each bundle, what it
//! `replaces`, `skips` and its `skipRange`), and one `olm.bundle` per bundle version (its image
//! and properties: `olm.package`, `olm.gvk`, the dependencies, `olm.csv.metadata`), as
//! `opm render` describes a bundle (with `olm.csv.metadata` rather than the bulky
//! `olm.bundle.object`s, as opm's `bundle-object-to-csv-metadata` migration writes).
//!
//! Bundles are added one version at a time, from the bundle directory `make bundle` writes, so a
//! catalog grows with each release without keeping old bundle directories; `validate` checks
//! what opm checks offline (schemas, one head per channel, every entry reachable from it, no
//! cycle) and that no `replaces` points outside its channel.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{Context as _, Result, bail};
use serde_json::{Map, Value, json};

use super::gosemver::{Range, Version};
use super::k8s_names;
use super::kyaml;
use super::validate::{self, Severity};

pub const SCHEMA_PACKAGE: &str = "olm.package";
pub const SCHEMA_CHANNEL: &str = "olm.channel";
pub const SCHEMA_BUNDLE: &str = "olm.bundle";

/// The catalog of one package.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Catalog {
    pub package: Package,
    pub channels: Vec<Channel>,
    pub bundles: Vec<Bundle>,
    /// Objects of other schemas (`olm.deprecations`, …), kept as they are.
    pub others: Vec<Value>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Package {
    pub name: String,
    pub default_channel: String,
    pub icon: Option<Value>,
    pub description: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Channel {
    pub name: String,
    pub entries: Vec<Entry>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Entry {
    pub name: String,
    pub replaces: Option<String>,
    pub skips: Vec<String>,
    pub skip_range: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Bundle {
    pub name: String,
    pub image: String,
    /// `{type, value}` objects, sorted as opm sorts them.
    pub properties: Vec<Value>,
    pub related_images: Vec<Value>,
}

impl Bundle {
    /// The version of its `olm.package` property.
    pub fn version(&self) -> Option<Version> {
        self.properties
            .iter()
            .find(|p| p["type"] == "olm.package")
            .and_then(|p| p["value"]["version"].as_str())
            .and_then(|v| Version::parse(v).ok())
    }
}

/// A bundle directory rendered for a catalog: its `olm.bundle`, the channels it is in (with its
/// entry) and what it says of the package.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub package: String,
    pub bundle: Bundle,
    pub entry: Entry,
    pub channels: Vec<String>,
    pub default_channel: Option<String>,
    pub icon: Option<Value>,
    pub description: Option<String>,
}

/// The bundle in `dir`, published as `image`; a bundle `bundle validate` refuses is refused.
pub fn render_bundle(dir: &Path, image: &str) -> Result<Rendered> {
    if let Err(err) = super::image_ref::parse(image) {
        bail!("--image {image:?} is not an image reference: {err}");
    }
    let (bundle, format) = read_valid(dir)?;
    let csv = bundle
        .csv
        .as_ref()
        .context("the bundle has no ClusterServiceVersion")?;
    let value = &csv.value;
    let package = bundle.package().to_string();
    let name = text(value, &["metadata", "name"]);
    let version = Version::parse_tolerant(&text(value, &["spec", "version"]))
        .map_err(|e| anyhow::anyhow!("{}: spec.version: {e}", csv.file))?;
    let properties = properties(&package, &version, value, &format)?;
    let channels: Vec<String> = bundle
        .channels()
        .iter()
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty())
        .collect();
    let default_channel = Some(bundle.default_channel().to_string()).filter(|d| !d.is_empty());
    Ok(Rendered {
        package,
        bundle: Bundle {
            name: name.clone(),
            image: image.to_string(),
            properties,
            related_images: related_images(value, image),
        },
        entry: entry(value, name),
        channels,
        default_channel,
        icon: list(value, &["spec", "icon"]).into_iter().next(),
        description: Some(text(value, &["spec", "description"])).filter(|d| !d.is_empty()),
    })
}

/// The bundle in `dir` and its metadata files, or every error `bundle validate` finds in it.
fn read_valid(dir: &Path) -> Result<(validate::load::Bundle, validate::format::Format)> {
    let (bundle, format, problems) = validate::read(dir);
    let errors: Vec<String> = problems
        .iter()
        .filter(|p| p.severity == Severity::Error)
        .map(ToString::to_string)
        .collect();
    if !errors.is_empty() {
        bail!(
            "the bundle in {} is not valid (operator-rs bundle validate {}): {}",
            dir.display(),
            dir.display(),
            errors.join("; ")
        );
    }
    Ok((bundle, format))
}

/// The string at `path` in the CSV, empty when it is missing or not a string.
fn text(csv: &Value, path: &[&str]) -> String {
    path.iter()
        .try_fold(csv, |v, k| v.get(*k))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

/// The list at `path` in the CSV, empty when it is missing or not a list.
fn list(csv: &Value, path: &[&str]) -> Vec<Value> {
    path.iter()
        .try_fold(csv, |v, k| v.get(*k))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// The bundle's properties as `opm render` lists them: `olm.package`, the GVKs it provides and
/// requires, its dependencies and `metadata/properties.yaml`'s properties, sorted by type and
/// value, then `olm.csv.metadata`.
fn properties(
    package: &str,
    version: &Version,
    csv: &Value,
    format: &validate::format::Format,
) -> Result<Vec<Value>> {
    let mut properties = Vec::new();
    let mut package_property = json!({"packageName": package, "version": version.to_string()});
    let release = text(csv, &["spec", "release"]);
    if !release.is_empty() {
        package_property["release"] = json!(release);
    }
    properties.push(json!({"type": "olm.package", "value": package_property}));
    let provided = gvks(csv, "owned");
    let mut required = gvks(csv, "required");
    let others = metadata_properties(format, &mut required);
    for p in provided {
        properties.push(json!({"type": "olm.gvk", "value": serde_json::from_str::<Value>(&p)?}));
    }
    for r in required {
        properties
            .push(json!({"type": "olm.gvk.required", "value": serde_json::from_str::<Value>(&r)?}));
    }
    properties.extend(others);
    properties.sort_by_key(|p| {
        (
            p["type"].as_str().unwrap_or("").to_string(),
            p["value"].to_string(),
        )
    });
    properties.push(json!({"type": "olm.csv.metadata", "value": csv_metadata(csv)}));
    Ok(properties)
}

/// The `{group, kind, version}` (as JSON text) of the CSV's `owned` or `required` CRDs (the group
/// from the CRD's name) and API services.
fn gvks(csv: &Value, role: &str) -> BTreeSet<String> {
    let gvk = |group: &str, definition: &Value| {
        json!({
            "group": group,
            "kind": definition["kind"].as_str().unwrap_or(""),
            "version": definition["version"].as_str().unwrap_or(""),
        })
        .to_string()
    };
    let mut out = BTreeSet::new();
    for crd in list(csv, &["spec", "customresourcedefinitions", role]) {
        let name = crd["name"].as_str().unwrap_or("");
        out.insert(gvk(name.split_once('.').map_or("", |(_, g)| g), &crd));
    }
    for service in list(csv, &["spec", "apiservicedefinitions", role]) {
        out.insert(gvk(service["group"].as_str().unwrap_or(""), &service));
    }
    out
}

/// The properties of `metadata/dependencies.yaml` (an `olm.gvk` dependency joins `required`; an
/// `olm.package` one is `olm.package.required`) and of `metadata/properties.yaml`, in that order.
fn metadata_properties(
    format: &validate::format::Format,
    required: &mut BTreeSet<String>,
) -> Vec<Value> {
    let mut others = Vec::new();
    for dependency in &format.dependencies {
        let value = dependency.get("value").cloned().unwrap_or(Value::Null);
        match dependency["type"].as_str().unwrap_or("") {
            "olm.gvk" => {
                required.insert(value.to_string());
            }
            "olm.package" => others.push(json!({"type": "olm.package.required", "value": {
                "packageName": value["packageName"], "versionRange": value["version"]}})),
            other => others.push(json!({"type": other, "value": value})),
        }
    }
    for property in &format.properties {
        others.push(json!({"type": property["type"], "value": property.get("value").cloned().unwrap_or(Value::Null)}));
    }
    others
}

/// `relatedImages`: the CSV's, then the bundle's own `image` and its deployments' container
/// images it does not name already (without a name), sorted by image.
fn related_images(csv: &Value, image: &str) -> Vec<Value> {
    let mut images: Vec<(String, String)> = list(csv, &["spec", "relatedImages"])
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap_or("").to_string(),
                r["image"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let mut add = |image: String| {
        if !image.is_empty() && !images.iter().any(|(_, i)| *i == image) {
            images.push((String::new(), image));
        }
    };
    add(image.to_string());
    for deployment in list(csv, &["spec", "install", "spec", "deployments"]) {
        for key in ["containers", "initContainers"] {
            for container in deployment["spec"]["template"]["spec"][key]
                .as_array()
                .into_iter()
                .flatten()
            {
                add(container["image"].as_str().unwrap_or("").to_string());
            }
        }
    }
    images.sort_by(|a, b| a.1.cmp(&b.1));
    images
        .into_iter()
        .map(|(name, image)| {
            if name.is_empty() {
                json!({"image": image})
            } else {
                json!({"name": name, "image": image})
            }
        })
        .collect()
}

/// The bundle's channel entry: its name and what it `replaces`, `skips` and its `skipRange`.
fn entry(csv: &Value, name: String) -> Entry {
    Entry {
        name,
        replaces: Some(text(csv, &["spec", "replaces"])).filter(|r| !r.is_empty()),
        skips: list(csv, &["spec", "skips"])
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        skip_range: csv
            .pointer("/metadata/annotations/olm.skipRange")
            .and_then(Value::as_str)
            .map(str::to_string),
    }
}

/// `olm.csv.metadata`: what a catalog shows of the CSV.
fn csv_metadata(csv: &Value) -> Value {
    let mut out = Map::new();
    let mut put = |key: &str, value: Option<&Value>| {
        if let Some(v) = value.filter(|v| !is_empty(v)) {
            out.insert(key.to_string(), v.clone());
        }
    };
    put("annotations", csv.pointer("/metadata/annotations"));
    put(
        "apiServiceDefinitions",
        csv.pointer("/spec/apiservicedefinitions"),
    );
    put(
        "crdDescriptions",
        csv.pointer("/spec/customresourcedefinitions"),
    );
    put("description", csv.pointer("/spec/description"));
    put("displayName", csv.pointer("/spec/displayName"));
    put("installModes", csv.pointer("/spec/installModes"));
    put("keywords", csv.pointer("/spec/keywords"));
    put("labels", csv.pointer("/metadata/labels"));
    put("links", csv.pointer("/spec/links"));
    put("maintainers", csv.pointer("/spec/maintainers"));
    put("maturity", csv.pointer("/spec/maturity"));
    put("minKubeVersion", csv.pointer("/spec/minKubeVersion"));
    put("nativeAPIs", csv.pointer("/spec/nativeAPIs"));
    put("provider", csv.pointer("/spec/provider"));
    Value::Object(out)
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

impl Catalog {
    /// `rendered` added to the catalog (a bundle of the same name replaced, in every channel):
    /// it joins the channels it names; the package takes its default channel, icon and
    /// description when it is the newest version.
    pub fn with_bundle(mut self, rendered: Rendered) -> Result<Catalog> {
        if self.package.name.is_empty() {
            self.package.name = rendered.package.clone();
        } else if self.package.name != rendered.package {
            bail!(
                "the bundle is of package {:?}, the catalog of package {:?}: one catalog file holds one package",
                rendered.package,
                self.package.name
            );
        }
        let name = rendered.bundle.name.clone();
        self.bundles.retain(|b| b.name != name);
        for channel in &mut self.channels {
            channel.entries.retain(|e| e.name != name);
        }
        let version = rendered.bundle.version();
        let newest = self
            .bundles
            .iter()
            .filter_map(Bundle::version)
            .all(|other| version.as_ref().is_some_and(|v| *v >= other));
        self.bundles.push(rendered.bundle);
        self.bundles
            .sort_by(|a, b| a.version().cmp(&b.version()).then(a.name.cmp(&b.name)));
        for channel_name in &rendered.channels {
            match self.channels.iter_mut().find(|c| c.name == *channel_name) {
                Some(channel) => channel.entries.push(rendered.entry.clone()),
                None => self.channels.push(Channel {
                    name: channel_name.clone(),
                    entries: vec![rendered.entry.clone()],
                }),
            }
        }
        self.channels.retain(|c| !c.entries.is_empty());
        self.channels.sort_by(|a, b| a.name.cmp(&b.name));
        let versions: BTreeMap<String, Option<Version>> = self
            .bundles
            .iter()
            .map(|b| (b.name.clone(), b.version()))
            .collect();
        for channel in &mut self.channels {
            channel
                .entries
                .sort_by(|a, b| versions.get(&a.name).cmp(&versions.get(&b.name)));
        }
        if newest {
            if let Some(default) = rendered.default_channel {
                self.package.default_channel = default;
            } else if rendered.channels.len() == 1 {
                self.package.default_channel = rendered.channels[0].clone();
            }
            if rendered.icon.is_some() {
                self.package.icon = rendered.icon;
            }
            if rendered.description.is_some() {
                self.package.description = rendered.description;
            }
        }
        // A default channel gone (or never set) is the only channel, when there is one.
        let default_exists = self
            .channels
            .iter()
            .any(|c| c.name == self.package.default_channel);
        if !default_exists && let [only] = self.channels.as_slice() {
            self.package.default_channel = only.name.clone();
        }
        Ok(self)
    }

    /// Reads a catalog written by [`Catalog::to_yaml`] (or by opm, for one package).
    pub fn parse(text: &str, source: &str) -> Result<Catalog> {
        let documents = kyaml::documents(text).map_err(|e| anyhow::anyhow!("{source}: {e}"))?;
        let mut catalog = Catalog::default();
        let mut packages = 0;
        for (i, document) in documents.iter().filter(|d| !d.is_null()).enumerate() {
            let object = document.to_json();
            let at = format!("{source}: object {}", i + 1);
            match object.get("schema").and_then(Value::as_str) {
                Some(SCHEMA_PACKAGE) => {
                    packages += 1;
                    catalog.package = Package::from_object(&object);
                }
                Some(SCHEMA_CHANNEL) => {
                    catalog.channels.push(Channel::from_object(&object, &at)?);
                    let package = string_at(&object, "package");
                    if package != catalog.package.name && !catalog.package.name.is_empty() {
                        bail!(
                            "{at}: channel {:?} is of package {:?}, not {:?}",
                            string_at(&object, "name"),
                            package,
                            catalog.package.name
                        );
                    }
                }
                Some(SCHEMA_BUNDLE) => catalog.bundles.push(Bundle::from_object(&object)),
                Some(_) => catalog.others.push(object),
                None => bail!("{at}: an object without schema"),
            }
        }
        if packages != 1 {
            bail!(
                "{source}: {packages} olm.package objects; a catalog file of operator-rs holds one package"
            );
        }
        Ok(catalog)
    }

    /// The catalog as a YAML stream: the package, its channels, its bundles by version.
    pub fn to_yaml(&self) -> String {
        let mut documents = Vec::new();
        let mut package = Map::new();
        package.insert("schema".into(), json!(SCHEMA_PACKAGE));
        package.insert("name".into(), json!(self.package.name));
        package.insert("defaultChannel".into(), json!(self.package.default_channel));
        if let Some(icon) = &self.package.icon {
            package.insert("icon".into(), icon.clone());
        }
        if let Some(description) = &self.package.description {
            package.insert("description".into(), json!(description));
        }
        documents.push(Value::Object(package));
        for channel in &self.channels {
            let entries: Vec<Value> = channel
                .entries
                .iter()
                .map(|e| {
                    let mut entry = Map::new();
                    entry.insert("name".into(), json!(e.name));
                    if let Some(replaces) = &e.replaces {
                        entry.insert("replaces".into(), json!(replaces));
                    }
                    if !e.skips.is_empty() {
                        entry.insert("skips".into(), json!(e.skips));
                    }
                    if let Some(range) = &e.skip_range {
                        entry.insert("skipRange".into(), json!(range));
                    }
                    Value::Object(entry)
                })
                .collect();
            let mut object = Map::new();
            object.insert("schema".into(), json!(SCHEMA_CHANNEL));
            object.insert("name".into(), json!(channel.name));
            object.insert("package".into(), json!(self.package.name));
            object.insert("entries".into(), Value::Array(entries));
            documents.push(Value::Object(object));
        }
        for bundle in &self.bundles {
            let mut object = Map::new();
            object.insert("schema".into(), json!(SCHEMA_BUNDLE));
            object.insert("name".into(), json!(bundle.name));
            object.insert("package".into(), json!(self.package.name));
            object.insert("image".into(), json!(bundle.image));
            object.insert("properties".into(), Value::Array(bundle.properties.clone()));
            if !bundle.related_images.is_empty() {
                object.insert(
                    "relatedImages".into(),
                    Value::Array(bundle.related_images.clone()),
                );
            }
            documents.push(Value::Object(object));
        }
        documents.extend(self.others.iter().cloned());
        documents
            .iter()
            .map(|d| format!("---\n{}", ordered_yaml(d)))
            .collect()
    }
}

/// The string field `key` of a catalog object, empty when it is missing or not a string.
fn string_at(object: &Value, key: &str) -> String {
    object
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

impl Package {
    /// The package of an `olm.package` object.
    fn from_object(object: &Value) -> Package {
        Package {
            name: string_at(object, "name"),
            default_channel: string_at(object, "defaultChannel"),
            icon: object.get("icon").cloned(),
            description: object
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_string),
        }
    }
}

impl Channel {
    /// The channel of an `olm.channel` object (`at` names it in the error when it has no entries).
    fn from_object(object: &Value, at: &str) -> Result<Channel> {
        let entries = object
            .get("entries")
            .and_then(Value::as_array)
            .with_context(|| format!("{at}: an olm.channel without entries"))?;
        Ok(Channel {
            name: string_at(object, "name"),
            entries: entries.iter().map(Entry::from_value).collect(),
        })
    }
}

impl Entry {
    /// An entry of an `olm.channel` object's `entries`.
    fn from_value(entry: &Value) -> Entry {
        Entry {
            name: entry["name"].as_str().unwrap_or("").to_string(),
            replaces: entry["replaces"].as_str().map(str::to_string),
            skips: entry["skips"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            skip_range: entry["skipRange"].as_str().map(str::to_string),
        }
    }
}

impl Bundle {
    /// The bundle of an `olm.bundle` object.
    fn from_object(object: &Value) -> Bundle {
        let array = |key: &str| {
            object
                .get(key)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        Bundle {
            name: string_at(object, "name"),
            image: string_at(object, "image"),
            properties: array("properties"),
            related_images: array("relatedImages"),
        }
    }
}

/// YAML of a JSON value, with the keys in the order the value holds them (serde_json sorts
/// them; the catalog reads better with `schema` and `name` first).
fn ordered_yaml(value: &Value) -> String {
    fn convert(value: &Value, top: bool) -> serde_yaml::Value {
        match value {
            Value::Object(map) => {
                let mut out = serde_yaml::Mapping::new();
                let mut keys: Vec<&String> = map.keys().collect();
                if top {
                    let rank = |k: &str| {
                        [
                            "schema",
                            "name",
                            "package",
                            "defaultChannel",
                            "image",
                            "entries",
                            "properties",
                        ]
                        .iter()
                        .position(|r| *r == k)
                        .unwrap_or(usize::MAX)
                    };
                    keys.sort_by_key(|k| (rank(k), (*k).clone()));
                }
                for key in keys {
                    out.insert(
                        serde_yaml::Value::from(key.clone()),
                        convert(&map[key], false),
                    );
                }
                serde_yaml::Value::Mapping(out)
            }
            other => serde_yaml::to_value(other).expect("JSON values convert"),
        }
    }
    serde_yaml::to_string(&convert(value, true)).expect("YAML values serialize")
}

/// What opm's `validate` refuses in a catalog of one package, and a `replaces` that points
/// outside its channel (opm tolerates one at the tail of a channel; operator-rs builds catalogs
/// from all of a package's bundles, so it names a bundle that is missing).
pub fn validate(catalog: &Catalog) -> Vec<String> {
    let mut problems = package_problems(catalog);
    let bundles: BTreeMap<&str, &Bundle> = catalog
        .bundles
        .iter()
        .map(|b| (b.name.as_str(), b))
        .collect();
    if bundles.len() != catalog.bundles.len() {
        problems.push(format!(
            "package {:?} has duplicate bundles",
            catalog.package.name
        ));
    }
    problems.extend(bundle_problems(catalog));
    for channel in &catalog.channels {
        problems.extend(
            validate_channel(channel, &bundles)
                .into_iter()
                .map(|p| format!("invalid channel {:?}: {p}", channel.name)),
        );
    }
    problems
}

/// The `olm.package` object's problems: its name, its default channel, no channel at all.
fn package_problems(catalog: &Catalog) -> Vec<String> {
    let mut problems = Vec::new();
    let package = &catalog.package;
    if package.name.is_empty() {
        problems.push("olm.package: name must be set".to_string());
    } else if let Some(err) = k8s_names::dns1123_label(&package.name).first() {
        problems.push(format!(
            "olm.package: invalid package name {:?}: {err}",
            package.name
        ));
    }
    if package.default_channel.is_empty() {
        problems.push(format!(
            "olm.package {}: default channel must be set",
            package.name
        ));
    } else if !catalog
        .channels
        .iter()
        .any(|c| c.name == package.default_channel)
    {
        problems.push(format!(
            "olm.package {}: default channel {:?} not found in channels list",
            package.name, package.default_channel
        ));
    }
    if catalog.channels.is_empty() {
        problems.push(format!(
            "olm.package {}: package must contain at least one channel",
            package.name
        ));
    }
    problems
}

/// The `olm.bundle` objects' problems, bundle by bundle (name, image, `olm.package` property,
/// in a channel), then the versions more than one bundle has.
fn bundle_problems(catalog: &Catalog) -> Vec<String> {
    let mut problems = Vec::new();
    let package = &catalog.package;
    let mut versions: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for bundle in &catalog.bundles {
        let at = format!("olm.bundle {:?}", bundle.name);
        if bundle.name.is_empty() {
            problems.push("olm.bundle: name must be set".into());
        }
        if bundle.image.is_empty() {
            problems.push(format!("{at}: bundle image must be set"));
        }
        if let Some(version) = bundle_version(bundle, &package.name, &at, &mut problems) {
            versions.entry(version).or_default().push(&bundle.name);
        }
        if !catalog
            .channels
            .iter()
            .any(|c| c.entries.iter().any(|e| e.name == bundle.name))
        {
            problems.push(format!(
                "package {:?}, bundle {:?} not found in any channel entries",
                package.name, bundle.name
            ));
        }
    }
    for (version, names) in versions.into_iter().filter(|(_, n)| n.len() > 1) {
        problems.push(format!(
            "duplicate versions found in bundles: {{{version}: [{}]}}",
            names.join(", ")
        ));
    }
    problems
}

/// The version of the bundle's one `olm.package` property (which must name `package`), or the
/// problem with that property in `problems`.
fn bundle_version(
    bundle: &Bundle,
    package: &str,
    at: &str,
    problems: &mut Vec<String>,
) -> Option<String> {
    let packages: Vec<&Value> = bundle
        .properties
        .iter()
        .filter(|p| p["type"] == "olm.package")
        .collect();
    let [p] = packages.as_slice() else {
        problems.push(format!(
            "{at}: must be exactly one property with type \"olm.package\""
        ));
        return None;
    };
    if p["value"]["packageName"].as_str() != Some(package) {
        problems.push(format!(
            "{at}: package {package:?} does not match olm.package property {}",
            p["value"]["packageName"]
        ));
    }
    match p["value"]["version"].as_str().map(Version::parse) {
        Some(Ok(v)) => Some(v.to_string()),
        _ => {
            problems.push(format!(
                "{at}: error parsing bundle version {}",
                p["value"]["version"]
            ));
            None
        }
    }
}

/// A channel's problems: its name, its entries, and its graph as opm's `validateReplacesChain`
/// walks it.
fn validate_channel(channel: &Channel, bundles: &BTreeMap<&str, &Bundle>) -> Vec<String> {
    let mut problems = Vec::new();
    if channel.name.is_empty() {
        problems.push("channel name must not be empty".to_string());
    }
    if channel.entries.is_empty() {
        problems.push("channel must contain at least one bundle".to_string());
        return problems;
    }
    problems.extend(entry_problems(channel, bundles));
    if let Err(problem) = check_graph(channel) {
        problems.push(problem);
    }
    problems
}

/// Each entry's problems: a duplicate, no bundle of its name, an empty skip, a skipRange that is
/// no range, a `replaces` outside the channel.
fn entry_problems(channel: &Channel, bundles: &BTreeMap<&str, &Bundle>) -> Vec<String> {
    let mut problems = Vec::new();
    let mut names = BTreeSet::new();
    for entry in &channel.entries {
        if !names.insert(entry.name.as_str()) {
            problems.push(format!("duplicate entry {:?}", entry.name));
        }
        if !bundles.contains_key(entry.name.as_str()) {
            problems.push(format!(
                "no olm.bundle blob found for olm.channel entry {:?}",
                entry.name
            ));
        }
        for (i, skip) in entry.skips.iter().enumerate() {
            if skip.is_empty() {
                problems.push(format!("bundle {:?}: skip[{i}] is empty", entry.name));
            }
        }
        if let Some(range) = &entry.skip_range
            && let Err(err) = Range::parse(range)
        {
            problems.push(format!(
                "bundle {:?}: invalid skipRange {range:?}: {err}",
                entry.name
            ));
        }
        if let Some(replaces) = &entry.replaces
            && !names_in(channel).contains(replaces.as_str())
        {
            problems.push(format!(
                "bundle {:?} replaces {replaces:?}, which is not in the channel: add that bundle to the catalog (make bundle VERSION=… then make catalog), or drop the replaces",
                entry.name
            ));
        }
    }
    problems
}

/// The channel's graph: one head (no entry replaces or skips it), the `replaces` chain from the
/// head reaches every entry that is not skipped, and has no cycle; the first problem found.
fn check_graph(channel: &Channel) -> Result<(), String> {
    let mut incoming = BTreeSet::new();
    let mut skipped = BTreeSet::new();
    for entry in &channel.entries {
        if let Some(replaces) = &entry.replaces {
            incoming.insert(replaces.as_str());
        }
        for skip in &entry.skips {
            incoming.insert(skip.as_str());
            skipped.insert(skip.as_str());
        }
    }
    let head = channel_head(channel, &incoming)?;
    let reached = replaces_chain(channel, head, &skipped)?;
    let stranded: Vec<&str> = channel
        .entries
        .iter()
        .map(|e| e.name.as_str())
        .filter(|n| !reached.contains(n) && !skipped.contains(n))
        .collect();
    if !stranded.is_empty() {
        return Err(format!(
            "channel contains one or more stranded bundles: {}",
            stranded.join(", ")
        ));
    }
    Ok(())
}

/// The one entry nothing replaces or skips (`incoming` holds the names something does).
fn channel_head<'a>(channel: &'a Channel, incoming: &BTreeSet<&str>) -> Result<&'a str, String> {
    let mut heads: Vec<&str> = channel
        .entries
        .iter()
        .map(|e| e.name.as_str())
        .filter(|n| !incoming.contains(n))
        .collect();
    match heads.as_slice() {
        [head] => Ok(*head),
        [] => Err("no channel head found in graph".into()),
        _ => {
            heads.sort();
            Err(format!(
                "multiple channel heads found in graph: {}",
                heads.join(", ")
            ))
        }
    }
}

/// The entries the `replaces` chain from `head` reaches, up to an entry that is skipped or
/// replaces nothing; a cycle is refused with the chain that closes it.
fn replaces_chain<'a>(
    channel: &'a Channel,
    head: &'a str,
    skipped: &BTreeSet<&str>,
) -> Result<BTreeSet<&'a str>, String> {
    let by_name: BTreeMap<&str, &Entry> = channel
        .entries
        .iter()
        .map(|e| (e.name.as_str(), e))
        .collect();
    let mut chain = vec![head];
    let mut reached: BTreeSet<&str> = [head].into();
    let mut current = by_name.get(head).copied();
    while let Some(entry) = current {
        let Some(replaces) = entry.replaces.as_deref() else {
            break;
        };
        if skipped.contains(replaces) {
            break;
        }
        chain.push(replaces);
        if !reached.insert(replaces) {
            return Err(format!(
                "detected cycle in replaces chain of upgrade graph: {}",
                chain.join(" -> ")
            ));
        }
        current = by_name.get(replaces).copied();
    }
    Ok(reached)
}

fn names_in(channel: &Channel) -> BTreeSet<&str> {
    channel.entries.iter().map(|e| e.name.as_str()).collect()
}

/// The upgrade edges of a channel, `from → to`, for people: `replaces` and `skips` edges, and
/// the versions a `skipRange` covers.
pub fn edges(catalog: &Catalog, channel: &str) -> Vec<(String, String)> {
    let Some(channel) = catalog.channels.iter().find(|c| c.name == channel) else {
        return Vec::new();
    };
    let versions: BTreeMap<&str, Option<Version>> = catalog
        .bundles
        .iter()
        .map(|b| (b.name.as_str(), b.version()))
        .collect();
    let mut out = BTreeSet::new();
    for entry in &channel.entries {
        if let Some(replaces) = &entry.replaces {
            out.insert((replaces.clone(), entry.name.clone()));
        }
        for skip in &entry.skips {
            out.insert((skip.clone(), entry.name.clone()));
        }
        if let Some(range) = entry
            .skip_range
            .as_deref()
            .and_then(|r| Range::parse(r).ok())
        {
            for other in &channel.entries {
                if let Some(Some(v)) = versions.get(other.name.as_str())
                    && other.name != entry.name
                    && range.contains(v)
                {
                    out.insert((other.name.clone(), entry.name.clone()));
                }
            }
        }
    }
    out.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundle(version: &str) -> Bundle {
        Bundle {
            name: format!("op.v{version}"),
            image: format!("example.com/op-bundle:v{version}"),
            properties: vec![
                json!({"type": "olm.package", "value": {"packageName": "op", "version": version}}),
            ],
            related_images: Vec::new(),
        }
    }

    fn entry(version: &str, replaces: Option<&str>) -> Entry {
        Entry {
            name: format!("op.v{version}"),
            replaces: replaces.map(|r| format!("op.v{r}")),
            ..Entry::default()
        }
    }

    fn catalog(entries: Vec<Entry>) -> Catalog {
        Catalog {
            package: Package {
                name: "op".into(),
                default_channel: "stable".into(),
                ..Package::default()
            },
            bundles: entries
                .iter()
                .map(|e| bundle(e.name.trim_start_matches("op.v")))
                .collect(),
            channels: vec![Channel {
                name: "stable".into(),
                entries,
            }],
            others: Vec::new(),
        }
    }

    #[test]
    fn a_chain_from_one_head_is_valid_and_reads_back() {
        let good = catalog(vec![entry("1.0.0", None), entry("1.1.0", Some("1.0.0"))]);
        assert_eq!(validate(&good), Vec::<String>::new());
        let again = Catalog::parse(&good.to_yaml(), "index.yaml").unwrap();
        assert_eq!(again, good);
        assert_eq!(
            edges(&again, "stable"),
            [("op.v1.0.0".to_string(), "op.v1.1.0".to_string())]
        );
    }

    #[test]
    fn broken_graphs_are_named_as_opm_names_them() {
        let two_heads = catalog(vec![entry("1.0.0", None), entry("1.1.0", None)]);
        assert!(
            validate(&two_heads)[0]
                .contains("multiple channel heads found in graph: op.v1.0.0, op.v1.1.0")
        );
        let cycle = catalog(vec![
            entry("1.0.0", Some("1.1.0")),
            entry("1.1.0", Some("1.0.0")),
            entry("1.2.0", Some("1.1.0")),
        ]);
        assert!(
            validate(&cycle)
                .iter()
                .any(|p| p.contains("detected cycle in replaces chain")),
            "{:?}",
            validate(&cycle)
        );
        let dangling = catalog(vec![entry("1.1.0", Some("1.0.0"))]);
        assert!(
            validate(&dangling)[0].contains("replaces \"op.v1.0.0\", which is not in the channel")
        );
        let mut skipped = catalog(vec![
            entry("1.0.0", None),
            entry("1.1.0", None),
            entry("1.2.0", Some("1.1.0")),
        ]);
        assert!(
            validate(&skipped)
                .iter()
                .any(|p| p.contains("multiple channel heads"))
        );
        skipped.channels[0].entries[2].skips = vec!["op.v1.0.0".into()];
        assert_eq!(
            validate(&skipped),
            Vec::<String>::new(),
            "a skipped entry is no head"
        );
        let mut no_default = catalog(vec![entry("1.0.0", None)]);
        no_default.package.default_channel = "fast".into();
        assert!(
            validate(&no_default)[0]
                .contains("default channel \"fast\" not found in channels list")
        );
        let mut bad_range = catalog(vec![entry("1.0.0", None)]);
        bad_range.channels[0].entries[0].skip_range = Some("~1.0".into());
        assert!(validate(&bad_range)[0].contains("invalid skipRange \"~1.0\""));
    }
}
