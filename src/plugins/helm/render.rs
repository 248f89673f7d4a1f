//! The project's manifests: what `make deploy` installs, as `kubectl kustomize config/default`
//! renders it (user patches in `config/` included), or a file of kustomize's output
//! (`--manifests`); and the opt-in overlays (`config/prometheus`, `config/network-policy`)
//! under the same namespace and name prefix.
//!
//! The command's plan may not be on disk yet (`init --plugins helm/v2-alpha`), so `config/` is
//! copied into a scratch folder as the plan leaves it, and kustomize runs there.

use std::path::Path;
use std::process::Command;

use anyhow::{Context as _, Result, bail};
use serde_yaml::Value;

use super::settings::Settings;
use crate::scaffold::Plan;

/// The rendered objects of the project.
pub struct Rendered {
    /// `kubectl kustomize config/default`, in order.
    pub default: Vec<Value>,
    /// The opt-in overlays, with config/default's namespace and prefix.
    pub optional: Vec<Value>,
    /// config/default's `namespace:`, where the chart puts `{{ .Release.Namespace }}`.
    pub namespace: Option<String>,
    /// config/default's `namePrefix:`.
    pub name_prefix: String,
}

/// The overlays that config/default leaves out unless the user uncomments them.
const OPTIONAL: &[&str] = &["prometheus", "network-policy"];

/// The project's manifests as `settings` name them, config/ as `plan` leaves it.
pub fn render(plan: &Plan, settings: &Settings) -> Result<Rendered> {
    let scratch = tempfile::tempdir().context("creating a scratch folder for kubectl kustomize")?;
    let config = scratch.path().join("config");
    copy_config(plan, &config)?;

    let (default, namespace, name_prefix) = if settings.renders_config() {
        let default_kustomization =
            std::fs::read_to_string(config.join("default/kustomization.yaml"))
                .context("reading config/default/kustomization.yaml (the chart is made from it)")?;
        let kustomization: Value = serde_yaml::from_str(&default_kustomization)
            .context("config/default/kustomization.yaml is not YAML")?;
        let namespace = kustomization
            .get("namespace")
            .and_then(Value::as_str)
            .map(str::to_string);
        let name_prefix = kustomization
            .get("namePrefix")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let default = kustomize(&config.join("default"), "config/default")?;
        (default, namespace, name_prefix)
    } else {
        from_file(plan.root(), &settings.manifests)?
    };
    let mut optional = Vec::new();
    for overlay in OPTIONAL {
        let dir = config.join(overlay);
        if !dir.join("kustomization.yaml").is_file() {
            continue;
        }
        // A kustomization beside config/ that gives the overlay config/default's namespace and
        // prefix, as it would have if config/default listed it.
        let wrapper = scratch.path().join(format!("chart-{overlay}"));
        std::fs::create_dir_all(&wrapper)?;
        let mut text = String::new();
        if let Some(ns) = &namespace {
            text.push_str(&format!("namespace: {ns}\n"));
        }
        text.push_str(&format!(
            "namePrefix: {name_prefix}\nresources:\n- ../config/{overlay}\n"
        ));
        std::fs::write(wrapper.join("kustomization.yaml"), text)?;
        optional.extend(kustomize(&wrapper, &format!("config/{overlay}"))?);
    }
    Ok(Rendered {
        default,
        optional,
        namespace,
        name_prefix,
    })
}

/// The objects of the manifests file `file` (relative to the project, or absolute), but the
/// custom resources of its CRDs (kubebuilder leaves samples out too), with the namespace and
/// name prefix of its manager Deployment.
fn from_file(root: &Path, file: &str) -> Result<(Vec<Value>, Option<String>, String)> {
    let text = match std::fs::read_to_string(root.join(file)) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => bail!(
            "--manifests {file}: no such file (run `make build-installer` to write \
             dist/install.yaml, or leave --manifests out: config/default is rendered then)"
        ),
        Err(err) => bail!("--manifests {file}: {err}"),
    };
    let objects = parse(&text).with_context(|| format!("--manifests {file} is not YAML"))?;
    let kind_of = |o: &Value| super::yaml::kind_of(o).to_string();
    let group_of = |o: &Value| {
        let api = o
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        api.rsplit_once('/').map_or("", |(g, _)| g).to_string()
    };
    let custom: Vec<(String, String)> = objects
        .iter()
        .filter(|o| kind_of(o) == "CustomResourceDefinition")
        .filter_map(|crd| {
            let spec = crd.get("spec")?;
            let group = spec.get("group")?.as_str()?.to_string();
            let kind = spec.get("names")?.get("kind")?.as_str()?.to_string();
            Some((group, kind))
        })
        .collect();
    let objects: Vec<Value> = objects
        .into_iter()
        .filter(|o| o.is_mapping())
        .filter(|o| !custom.contains(&(group_of(o), kind_of(o))))
        .collect();
    let Some(manager) = objects
        .iter()
        .find(|o| kind_of(o) == "Deployment" && super::manager::is_manager(o))
    else {
        bail!(
            "--manifests {file} holds no manager Deployment (control-plane: \
             controller-manager); the chart is made around it"
        );
    };
    let metadata = manager.get("metadata");
    let namespace = metadata
        .and_then(|m| m.get("namespace"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let name = super::yaml::name_of(manager);
    let prefix = name
        .strip_suffix("controller-manager")
        .unwrap_or_default()
        .to_string();
    Ok((objects, namespace, prefix))
}

/// Copies config/ from the disk, then the plan's files under config/ over it.
fn copy_config(plan: &Plan, to: &Path) -> Result<()> {
    let from = plan.root().join("config");
    if from.is_dir() {
        for entry in walkdir::WalkDir::new(&from) {
            let entry = entry.with_context(|| format!("reading {}", from.display()))?;
            let rel = entry.path().strip_prefix(&from)?;
            let target = to.join(rel);
            if entry.file_type().is_dir() {
                std::fs::create_dir_all(&target)?;
            } else if entry.file_type().is_file() {
                std::fs::copy(entry.path(), &target)
                    .with_context(|| format!("copying {}", entry.path().display()))?;
            }
        }
    }
    for change in plan.changes() {
        let Some(rel) = change.path.strip_prefix("config/") else {
            continue;
        };
        let target = to.join(rel);
        if change.action == crate::scaffold::Action::Delete {
            let _ = std::fs::remove_file(&target);
            continue;
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&target, &change.contents)?;
    }
    Ok(())
}

/// `kubectl kustomize dir`, parsed; `shown` names the folder in errors.
fn kustomize(dir: &Path, shown: &str) -> Result<Vec<Value>> {
    let kubectl = std::env::var("KUBECTL").unwrap_or_else(|_| "kubectl".to_string());
    let output = Command::new(&kubectl)
        .arg("kustomize")
        .arg(dir)
        .output()
        .map_err(|err| {
            anyhow::anyhow!(
                "the helm/v2-alpha plugin makes the chart from `kubectl kustomize {shown}`, but \
                 {kubectl} cannot be run ({err}); install kubectl (or set KUBECTL)"
            )
        })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let hint = if stderr.contains("no such file or directory") {
            " (run `make manifests` first: the CRDs and webhook manifests it writes are part of \
             the chart; `make helm-chart` does both)"
        } else {
            ""
        };
        bail!(
            "kubectl kustomize {shown} failed{hint}:\n{}",
            stderr.trim().replace(&dir.display().to_string(), shown)
        );
    }
    parse(&String::from_utf8(output.stdout).context("kubectl kustomize printed no UTF-8")?)
}

/// The objects of a multi-document YAML stream (empty documents skipped).
pub fn parse(text: &str) -> Result<Vec<Value>> {
    let mut objects = Vec::new();
    for document in serde_yaml::Deserializer::from_str(text) {
        let value = <Value as serde::Deserialize>::deserialize(document)
            .context("kubectl kustomize printed YAML that does not parse")?;
        if !value.is_null() {
            objects.push(value);
        }
    }
    Ok(objects)
}
