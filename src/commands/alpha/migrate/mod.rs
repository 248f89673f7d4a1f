//! `operator-rs alpha migrate --from <Go project>`: a Rust project with what a kubebuilder Go
//! project's PROJECT records (domain, name, repo, layout, scope, kinds, versions, controllers,
//! webhooks, deploy-image options), scaffolded by the same command lines `alpha generate` runs;
//! then each kind's spec and status fields from the CRDs controller-gen wrote in the Go project's
//! config/crd/bases, and the Go project's samples. What cannot be carried over is listed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use serde::Deserialize as _;
use serde_yaml::Value;

use super::replay::{License, Replay};
use crate::boilerplate;
use crate::cli::AlphaMigrateArgs;
use crate::openapi::{Translation, example, kind, own_types, translate};
use crate::plugins::{self, Gvk};
use crate::project::{self, Api, LAYOUT, Project, Resource};
use crate::scaffold::rustfmt;

mod absent_spec;

pub fn run(args: &AlphaMigrateArgs, cwd: &Path) -> Result<()> {
    let from = cwd.join(&args.from);
    let output = args
        .output_dir
        .as_deref()
        .map_or(cwd.to_path_buf(), |d| cwd.join(d));
    let go = read_go_project(&from)?;
    let mut report = Vec::new();
    let project = rust_project(&go, &from, &mut report)?;
    project.validate()?;
    let license = go_license(&from)?;
    super::generate::check_output(None, &output)?;

    // The Go project holds what the plugins read (the Grafana plugin's config of custom metrics).
    let replay = Replay::new(&project, license, Some(&from))?;
    let binary = super::this_binary()?;
    let tree_dir = replay.scaffold(&binary, "migrated", false)?;

    let migration = Migration {
        project: &project,
        crds: read_crds(&from.join("config/crd/bases"))?,
        from: &from,
        tree: &tree_dir,
    };
    let api_files = migration.carry_kinds(&mut report)?;
    // One rustfmt for every API file written to: the fields as `cargo fmt` lays them out.
    let (paths, texts): (Vec<_>, Vec<_>) = api_files.into_iter().unzip();
    for (path, text) in paths.iter().zip(rustfmt::format_all(&tree_dir, texts)) {
        std::fs::write(path, text)?;
    }
    if args.make {
        replay.make_manifests(&binary, &tree_dir)?;
    }
    super::generate::write_tree(&tree_dir, &output, None, args.common.dry_run)?;
    println!(
        "Migrated the kubebuilder project {} to {}.",
        from.display(),
        output.display()
    );
    println!("Not carried over (do these by hand):");
    report.push(
        "the Go code: port each controller's Reconcile into src/controller/, webhook logic into \
         src/webhook/, conversions into the conversion files"
            .into(),
    );
    for line in &report {
        println!("- {line}");
    }
    Ok(())
}

/// The Go project's PROJECT, which must be a kubebuilder Go project's.
fn read_go_project(from: &Path) -> Result<Project> {
    let path = from.join(project::FILE);
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "reading {} (--from must be the folder of a kubebuilder project)",
            path.display()
        )
    })?;
    let go = Project::parse(&text)?;
    if !go
        .layout
        .iter()
        .any(|l| l.starts_with("go.kubebuilder.io/"))
    {
        if go.layout.iter().any(|l| l == LAYOUT) {
            bail!(
                "{} is an operator-rs project already; `operator-rs alpha update` brings it onto \
                 this release",
                from.display()
            );
        }
        bail!(
            "{} is not a kubebuilder Go project (its layout is {:?}, not go.kubebuilder.io/v4)",
            from.display(),
            go.layout
        );
    }
    Ok(go)
}

/// The operator-rs PROJECT the migration scaffolds: the Go one's records that mean something
/// here. What is left out goes to `report`.
fn rust_project(go: &Project, from: &Path, report: &mut Vec<String>) -> Result<Project> {
    let project_name = if go.project_name.is_empty() {
        folder_name(from)?
    } else {
        go.project_name.clone()
    };
    let mut project = Project {
        cli_version: env!("CARGO_PKG_VERSION").into(),
        domain: go.domain.clone(),
        layout: vec![LAYOUT.into()],
        multigroup: go.multigroup,
        namespaced: go.namespaced,
        project_name,
        repo: go.repo.clone(),
        version: "3".into(),
        ..Project::default()
    };
    for r in &go.resources {
        let shown = format!("{} {}/{}", r.kind, r.group, r.version);
        if r.external {
            report.push(format!(
                "{shown}: a type of another project ({}); add its controller or webhook with \
                 `operator-rs create api --external-api-path <its CRD file>` where available",
                r.path
            ));
            continue;
        }
        let api = r.api.as_ref().map(|a| {
            if a.unknown.get("ssa").and_then(Value::as_bool) == Some(true) {
                report.push(format!(
                    "{shown}: --ssa needs nothing in Rust (controllers apply server-side already)"
                ));
            }
            Api {
                crd_version: "v1".into(),
                namespaced: a.namespaced,
                ..Api::default()
            }
        });
        project.resources.push(Resource {
            api,
            // Named controllers (`--controller-name`) are replayed as such.
            controller: r.controller,
            controllers: r.controllers.clone(),
            core: r.core,
            group: r.group.clone(),
            kind: r.kind.clone(),
            plural: r.plural.clone(),
            version: r.version.clone(),
            webhooks: r.webhooks.clone(),
            ..Resource::default()
        });
    }
    for (key, config) in &go.plugins {
        // kubebuilder's keys are the plugins' aliases; the config is recorded under operator-rs's.
        match plugins::find(key) {
            Some(plugin) => {
                project.plugins.insert(plugin.key().into(), config.clone());
            }
            None => report.push(format!("plugin {key}: operator-rs has no such plugin")),
        }
    }
    Ok(project)
}

fn folder_name(dir: &Path) -> Result<String> {
    let full = dir.canonicalize()?;
    Ok(full
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_lowercase())
}

/// The Go project's license header (`hack/boilerplate.go.txt`, a `/* */` block): the flags that
/// write the same text as `//` lines if it is a header kubebuilder's `--license` wrote, else the
/// block as it is (a Rust comment too).
fn go_license(from: &Path) -> Result<License> {
    let text = match std::fs::read_to_string(from.join("hack/boilerplate.go.txt")) {
        Ok(text) if !text.trim().is_empty() => text,
        Ok(_) => return Ok(License::None),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(License::None),
        Err(err) => return Err(err).context("reading hack/boilerplate.go.txt"),
    };
    let inner = text
        .trim()
        .strip_prefix("/*")
        .and_then(|t| t.strip_suffix("*/"))
        .map(str::trim);
    if let Some(inner) = inner {
        let as_lines: String = inner
            .lines()
            .map(|l| format!("// {l}").trim_end().to_string() + "\n")
            .collect();
        if let Some(recognized) = boilerplate::recognize(&as_lines) {
            return Ok(License::Flags(recognized));
        }
    }
    boilerplate::check_header(&text).map_err(|problem| {
        anyhow::anyhow!("hack/boilerplate.go.txt {problem}; it cannot head Rust files")
    })?;
    Ok(License::File(text.trim_end().to_string() + "\n"))
}

/// Every CRD in `dir`, by (group, kind).
fn read_crds(dir: &Path) -> Result<BTreeMap<(String, String), Value>> {
    let mut crds = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(crds);
    };
    let mut paths: Vec<_> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
    paths.sort();
    for path in paths
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
    {
        let text = std::fs::read_to_string(path)?;
        for document in serde_yaml::Deserializer::from_str(&text) {
            let crd = Value::deserialize(document)
                .with_context(|| format!("{} is not valid YAML", path.display()))?;
            let spec = crd.get("spec");
            let field = |k: &str| -> Option<String> {
                Some(match k {
                    "kind" => spec?.get("names")?.get("kind")?.as_str()?.to_string(),
                    _ => spec?.get(k)?.as_str()?.to_string(),
                })
            };
            if let (Some(group), Some(kind)) = (field("group"), field("kind")) {
                crds.insert((group, kind), crd);
            }
        }
    }
    Ok(crds)
}

/// Carrying the kinds of a Go project (at `from`) into the Rust project scaffolded at `tree`.
struct Migration<'a> {
    project: &'a Project,
    /// The Go project's CRDs by qualified group and kind.
    crds: BTreeMap<(String, String), Value>,
    from: &'a Path,
    tree: &'a Path,
}

/// One kind's version, carried.
struct CarriedKind {
    /// Its API file, and the file's new text.
    file: PathBuf,
    text: String,
    /// Its module under src/api and its kind, when objects may lack a spec (see [`absent_spec`]).
    absent_spec: Option<(String, String)>,
}

impl Migration<'_> {
    /// Every kind's fields and spec presence carried: the API files to write (with
    /// src/api/mod.rs), formatted by the caller.
    fn carry_kinds(&self, report: &mut Vec<String>) -> Result<Vec<(PathBuf, String)>> {
        let mut api_files = Vec::new();
        let mut absent_specs = Vec::new();
        for r in self.project.resources.iter().filter(|r| r.api.is_some()) {
            if let Some(carried) = self.carry_kind(r, report)? {
                api_files.push((carried.file, carried.text));
                absent_specs.extend(carried.absent_spec);
            }
        }
        if !absent_specs.is_empty() {
            let path = self.tree.join("src/api/mod.rs");
            let mut text = std::fs::read_to_string(&path)?;
            for (module, kind) in &absent_specs {
                text = absent_spec::crds_entry(&text, module, kind).with_context(|| {
                    format!("src/api/mod.rs has no crds() entry for {module}::{kind}")
                })?;
            }
            api_files.push((path, text));
        }
        Ok(api_files)
    }

    /// One kind's version; None when the scaffold's API file stays as it is.
    fn carry_kind(&self, r: &Resource, report: &mut Vec<String>) -> Result<Option<CarriedKind>> {
        let shown = format!("{} {}/{}", r.kind, r.group, r.version);
        let Some(schema) = schema_to_carry(self.project, r, &self.crds, &shown, report) else {
            return Ok(None);
        };
        let qualified = format!("{}.{}", r.group, self.project.domain);
        let Some(file) = api_file(self.tree, &qualified, &r.version, &r.kind)? else {
            bail!("the scaffold has no API file for {shown}");
        };
        let scaffolded = std::fs::read_to_string(&file)?;
        let carried = self.carry_types(r, schema, &scaffolded, &file, report)?;
        let mut text = carried.unwrap_or_else(|| scaffolded.clone());
        let mut absent_spec = None;
        if kind::may_be_absent(schema, schema.get("properties").and_then(|p| p.get("spec"))) {
            text = absent_spec::spec_type(&text, &r.kind, &r.version)
                .with_context(|| format!("the scaffold of {shown} has no spec struct"))?;
            absent_spec = Some((api_module(self.tree, &file)?, r.kind.clone()));
        }
        Ok((text != scaffolded).then_some(CarriedKind {
            file,
            text,
            absent_spec,
        }))
    }

    /// The spec and status fields of one kind's version, from its CRD (`schema`), into the text of
    /// the Rust API file the scaffold wrote (`text`, at `file`), which is returned; and the Go
    /// project's sample of it, written. None when there is nothing to carry.
    fn carry_types(
        &self,
        r: &Resource,
        schema: &Value,
        text: &str,
        file: &Path,
        report: &mut Vec<String>,
    ) -> Result<Option<String>> {
        let shown = format!("{} {}/{}", r.kind, r.group, r.version);
        let empty = Value::Mapping(Default::default());
        let props = |part: &str| {
            schema
                .get("properties")
                .and_then(|p| p.get(part))
                .unwrap_or(&empty)
        };
        let names = |part: &str| property_names(props(part));
        // The scaffold's own fields: nothing to carry.
        let as_scaffolded = names("spec") == ["foo"]
            && is_optional_string(props("spec"), "foo")
            && names("status").iter().all(|n| n == "conditions");
        if as_scaffolded {
            return Ok(None);
        }
        // A kind converted between versions: its conversions copy the scaffold's fields.
        let converts = self.project.resources.iter().any(|o| {
            o.group == r.group
                && o.kind == r.kind
                && o.webhooks.as_ref().is_some_and(|w| w.conversion)
        });
        if converts {
            report.push(format!(
            "{shown}: has a conversion webhook, whose scaffolded conversions copy the example field \
             `foo` between versions: its fields are the scaffold's; port the fields from the CRD \
             together with the conversions"
        ));
            return Ok(None);
        }
        let has_webhooks = r
            .webhooks
            .as_ref()
            .is_some_and(|w| w.defaulting || w.validation);
        // Defaulting and validation examples use `spec.foo`: keep the scaffold's field for them.
        let spec_except: &[&str] = if has_webhooks { &["foo"] } else { &[] };
        if has_webhooks && !is_optional_string(props("spec"), "foo") {
            report.push(format!(
            "{shown}: kept the scaffold's example field spec.foo, which its webhook examples use; \
             remove it with them"
        ));
        }
        let spec = translate(props("spec"), &format!("{}Spec", r.kind), spec_except)?;
        let status = translate(
            props("status"),
            &format!("{}Status", r.kind),
            &["conditions"],
        )?;
        for skipped in spec.skipped.iter().chain(&status.skipped) {
            report.push(format!("{shown}: {skipped}"));
        }
        let file_name = file
            .file_name()
            .and_then(|f| f.to_str())
            .unwrap_or_default();
        let Some(text) = splice_types(text, &r.kind, file_name, has_webhooks, &spec, &status)
        else {
            bail!("the scaffold of {shown} has no example field to replace");
        };
        let spec_types = own_types(props("spec"), &format!("{}Spec", r.kind), spec_except)?;
        let least_spec = example::required_struct_value(&spec_types, &format!("{}Spec", r.kind));
        carry_sample(r, self.from, self.tree, has_webhooks, &least_spec, report)?;
        Ok(Some(text))
    }
}

/// The schema of the kind's version that `carry_types` carries: none for a plugin's kinds, which
/// get the plugin's types (deploy-image's size, containerPort) as in Go, nor for a kind without
/// a CRD or a schema of the version, which the report names.
fn schema_to_carry<'a>(
    project: &Project,
    r: &Resource,
    crds: &'a BTreeMap<(String, String), Value>,
    shown: &str,
    report: &mut Vec<String>,
) -> Option<&'a Value> {
    if plugins::spec_of(project, Gvk::of(r)).is_some() {
        return None;
    }
    let qualified = format!("{}.{}", r.group, project.domain);
    let Some(crd) = crds.get(&(qualified, r.kind.clone())) else {
        report.push(format!(
            "{shown}: no CRD for it in config/crd/bases (run `make manifests` in the Go project \
             first); its fields are the scaffold's example"
        ));
        return None;
    };
    let schema = version_schema(crd, &r.version);
    if schema.is_none() {
        report.push(format!(
            "{shown}: its CRD has no schema for {}; its fields are the scaffold's example",
            r.version
        ));
    }
    schema
}

/// The names of the properties of an object's schema.
fn property_names(schema: &Value) -> Vec<String> {
    schema
        .get("properties")
        .and_then(Value::as_mapping)
        .map(|m| {
            m.keys()
                .filter_map(|k| k.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// The `openAPIV3Schema` of `version` in `crd`.
fn version_schema<'a>(crd: &'a Value, version: &str) -> Option<&'a Value> {
    crd.get("spec")?
        .get("versions")?
        .as_sequence()?
        .iter()
        .find(|v| v.get("name").and_then(Value::as_str) == Some(version))?
        .get("schema")?
        .get("openAPIV3Schema")
}

/// The scaffolded API file `text` of `kind` (file `file_name`) with the translated fields in
/// place of the example field `foo` (kept beside them when `keep_example`: the webhooks use it),
/// the status fields after `conditions`, and the nested types after the status struct; `None`
/// when the scaffold has no example field.
fn splice_types(
    text: &str,
    kind: &str,
    file_name: &str,
    keep_example: bool,
    spec: &Translation,
    status: &Translation,
) -> Option<String> {
    let example = format!(
        "    /// foo is an example field of {kind}. Edit {file_name} to remove or update it.\n    \
         #[serde(default, skip_serializing_if = \"Option::is_none\")]\n    pub foo: Option<String>,\n"
    );
    if !text.contains(&example) {
        return None;
    }
    let keep = if keep_example { example.as_str() } else { "" };
    let text = text.replacen(&example, &format!("{keep}{}", spec.fields), 1);
    let status_end = "    pub conditions: Vec<Condition>,\n}\n";
    Some(text.replacen(
        status_end,
        &format!(
            "    pub conditions: Vec<Condition>,\n{}}}\n{}{}",
            status.fields, spec.structs, status.structs
        ),
        1,
    ))
}

fn is_optional_string(spec: &Value, field: &str) -> bool {
    let required = spec
        .get("required")
        .and_then(Value::as_sequence)
        .is_some_and(|r| r.iter().any(|f| f.as_str() == Some(field)));
    let property = spec.get("properties").and_then(|p| p.get(field));
    !required && property.and_then(|p| p.get("type")?.as_str()) == Some("string")
}

/// The Go project's sample of the kind replaces the scaffold's (same file name); without one,
/// the scaffold's loses the example field if the type did. A spec left null (kubebuilder's
/// samples hold only a comment) or missing gets `least_spec` (see [`super::sample`]). A Go sample
/// that is no YAML object is reported and not carried: the generated tests read the sample.
fn carry_sample(
    r: &Resource,
    from: &Path,
    tree: &Path,
    kept_foo: bool,
    least_spec: &serde_json::Value,
    report: &mut Vec<String>,
) -> Result<()> {
    let name = format!(
        "config/samples/{}_{}_{}.yaml",
        r.group,
        r.version,
        r.kind.to_lowercase()
    );
    let ours = tree.join(&name);
    let go = std::fs::read_to_string(from.join(&name)).ok();
    let go = go.filter(|text| {
        let object = super::sample::is_object(text);
        if !object {
            report.push(format!(
                "{name}: not carried over, it is no YAML object; the scaffold's sample is in its place"
            ));
        }
        object
    });
    let sample = if let Some(go) = go {
        go
    } else if let Ok(text) = std::fs::read_to_string(&ours) {
        if kept_foo {
            text
        } else {
            text.replace("  foo: bar\n", "")
        }
    } else {
        return Ok(());
    };
    std::fs::write(&ours, super::sample::with_spec(&sample, least_spec))?;
    Ok(())
}

/// The module of an API file under src/api, as `crds()` names it: `v1` for src/api/v1/ship.rs,
/// `ship::v1` for src/api/ship/v1/ship.rs.
fn api_module(tree: &Path, file: &Path) -> Result<String> {
    let dir = file
        .parent()
        .and_then(|dir| dir.strip_prefix(tree.join("src/api")).ok())
        .with_context(|| format!("{} is not under src/api", file.display()))?;
    let parts: Vec<_> = dir.iter().filter_map(|part| part.to_str()).collect();
    Ok(parts.join("::"))
}

/// The API file of group/version/kind in the scaffolded tree: the `.rs` file under src/api whose
/// `#[kube(...)]` names them.
fn api_file(tree: &Path, group: &str, version: &str, kind: &str) -> Result<Option<PathBuf>> {
    let wanted = [
        format!("group = \"{group}\""),
        format!("version = \"{version}\""),
        format!("kind = \"{kind}\""),
    ];
    for entry in walkdir::WalkDir::new(tree.join("src/api")).sort_by_file_name() {
        let entry = entry?;
        if entry.path().extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(entry.path())?;
            if wanted.iter().all(|w| text.contains(w.as_str())) {
                return Ok(Some(entry.into_path()));
            }
        }
    }
    Ok(None)
}
