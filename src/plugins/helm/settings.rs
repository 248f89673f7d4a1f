//! The plugin's flags of `edit` (kubebuilder's `--manifests`, `--output-dir`; `--force` is
//! `edit`'s own) and its record in PROJECT, kubebuilder's `manifests` and `output`.
//!
//! kubebuilder's `--manifests` defaults to `dist/install.yaml`, which it makes first with `make
//! build-installer` (kustomize's render of config/default); operator-rs renders config/default
//! itself for that default (with the command's plan, so `init --plugins helm/v2-alpha` works
//! too), and reads any other file as it is. Unlike kubebuilder, a later run without the flags
//! keeps the values PROJECT records (`make helm-chart` makes the chart where it was made).

use std::path::Path;

use anyhow::{Result, bail};
use clap::Args;
use serde_yaml::{Mapping, Value};

use crate::names::InvalidInput;

/// kubebuilder's default manifests file: `make build-installer`'s render of config/default.
pub const DEFAULT_MANIFESTS: &str = "dist/install.yaml";

/// kubebuilder's default output folder; the chart is `<output>/chart`.
pub const DEFAULT_OUTPUT: &str = "dist";

/// The flags of the helm/v2-alpha plugin of `edit`.
#[derive(Debug, Default, Clone, Args)]
#[command(next_help_heading = "helm/v2-alpha plugin (edit --plugins helm/v2-alpha)")]
pub struct Flags {
    /// The manifests the chart is made from: a multi-document YAML file of kustomize's output.
    /// The default, dist/install.yaml (`make build-installer`'s), is config/default rendered
    /// afresh.
    #[arg(long, value_name = "FILE", allow_hyphen_values = true)]
    pub manifests: Option<String>,

    /// The folder the chart goes into, as `<folder>/chart` (default: dist); a folder of the
    /// project.
    #[arg(long = "output-dir", value_name = "DIR", allow_hyphen_values = true)]
    pub output_dir: Option<String>,
}

impl Flags {
    /// The flags given, for a message.
    pub fn given(&self) -> Vec<&'static str> {
        let mut given = Vec::new();
        if self.manifests.is_some() {
            given.push("--manifests");
        }
        if self.output_dir.is_some() {
            given.push("--output-dir");
        }
        given
    }
}

/// Where the chart comes from and goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// The manifests file; [`DEFAULT_MANIFESTS`]: config/default rendered.
    pub manifests: String,
    /// The output folder, relative to the project, without a trailing `/`.
    pub output: String,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            manifests: DEFAULT_MANIFESTS.into(),
            output: DEFAULT_OUTPUT.into(),
        }
    }
}

impl Settings {
    /// The settings PROJECT records (its `plugins.helm.kubebuilder.io/v2-alpha`), checked.
    pub fn recorded(config: Option<&Value>) -> Result<Self> {
        let mut settings = Self::default();
        if let Some(config) = config {
            check(config).map_err(|(path, err)| anyhow::anyhow!("PROJECT: {path}: {err}"))?;
            if let Some(m) = config.get("manifests").and_then(Value::as_str) {
                settings.manifests = m.to_string();
            }
            if let Some(o) = config.get("output").and_then(Value::as_str) {
                settings.output = normalized(o);
            }
        }
        Ok(settings)
    }

    /// These settings with the flags given in their place, checked.
    pub fn with_flags(mut self, flags: &Flags) -> Result<Self> {
        if let Some(m) = &flags.manifests {
            check_manifests(m).map_err(anyhow::Error::from)?;
            self.manifests = m.clone();
        }
        if let Some(o) = &flags.output_dir {
            check_output(o).map_err(anyhow::Error::from)?;
            self.output = normalized(o);
        }
        Ok(self)
    }

    /// Whether the chart is made from config/default rendered afresh.
    pub fn renders_config(&self) -> bool {
        let parts = |p: &'static str| Path::new(p).components();
        let mine = Path::new(&self.manifests)
            .components()
            .filter(|c| *c != std::path::Component::CurDir);
        mine.eq(parts(DEFAULT_MANIFESTS))
    }

    /// The chart's folder, relative to the project.
    pub fn chart(&self) -> String {
        if self.output == "." {
            "chart".to_string()
        } else {
            format!("{}/chart", self.output)
        }
    }

    /// The record in PROJECT: kubebuilder's keys, `{}` for the defaults.
    pub fn record(&self) -> Value {
        let mut map = Mapping::new();
        if *self != Self::default() {
            map.insert("manifests".into(), self.manifests.clone().into());
            map.insert("output".into(), self.output.clone().into());
        }
        Value::Mapping(map)
    }
}

/// A folder as given, without `./` in front or `/` behind.
fn normalized(dir: &str) -> String {
    let trimmed = dir.trim_end_matches('/');
    let trimmed = trimmed.strip_prefix("./").unwrap_or(trimmed);
    if trimmed.is_empty() {
        ".".into()
    } else {
        trimmed.to_string()
    }
}

/// `--output-dir`: a folder of the project (relative, without `..`).
fn check_output(dir: &str) -> Result<(), InvalidInput> {
    let invalid = |why: &str| Err(InvalidInput::new("--output-dir", dir, why));
    if dir.trim().is_empty() {
        return invalid("must name a folder of the project (kubebuilder's default: dist)");
    }
    let path = Path::new(dir);
    if path.is_absolute() || dir.starts_with('~') {
        return invalid("must be a folder of the project, relative to it (such as dist or charts)");
    }
    if path.components().any(|c| {
        !matches!(
            c,
            std::path::Component::Normal(_) | std::path::Component::CurDir
        )
    }) {
        return invalid("must be a folder inside the project (no `..`)");
    }
    if dir.chars().any(|c| c.is_control() || c == '\\') {
        return invalid("must be a plain path (no control characters or backslashes)");
    }
    Ok(())
}

/// `--manifests`: a file name.
fn check_manifests(file: &str) -> Result<(), InvalidInput> {
    if file.trim().is_empty() || file.chars().any(char::is_control) {
        return Err(InvalidInput::new(
            "--manifests",
            file,
            "must name a YAML file of manifests (kubebuilder's default: dist/install.yaml)",
        ));
    }
    Ok(())
}

/// The plugin's record in PROJECT, with the rules of its flags.
pub fn check(config: &Value) -> Result<(), (String, InvalidInput)> {
    let Some(map) = config.as_mapping() else {
        if config.is_null() {
            return Ok(());
        }
        return Err((
            String::new(),
            InvalidInput::new("config", "", "must be a mapping (manifests, output) or {}"),
        ));
    };
    for (key, value) in map {
        let key = key.as_str().unwrap_or_default();
        let text = value.as_str();
        let result = match (key, text) {
            ("manifests", Some(m)) => check_manifests(m),
            ("output", Some(o)) => check_output(o),
            ("manifests" | "output", None) => Err(InvalidInput::new(
                key.to_string(),
                "",
                "must be a string (a path)",
            )),
            _ => Err(InvalidInput::new(
                key.to_string(),
                "",
                "is not a setting of the helm/v2-alpha plugin (manifests, output)",
            )),
        };
        result.map_err(|err| (key.to_string(), err))?;
    }
    Ok(())
}

/// Refuses the plugin's flags without the plugin.
pub fn refuse_without_plugin(flags: &Flags) -> Result<()> {
    let given = flags.given();
    if !given.is_empty() {
        bail!(
            "{} {} of the helm/v2-alpha plugin: add --plugins helm/v2-alpha",
            given.join(" and "),
            if given.len() == 1 {
                "is a flag"
            } else {
                "are flags"
            }
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(manifests: Option<&str>, output: Option<&str>) -> Flags {
        Flags {
            manifests: manifests.map(str::to_string),
            output_dir: output.map(str::to_string),
        }
    }

    #[test]
    fn flags_over_the_record_over_the_defaults() {
        let none = Settings::recorded(None).unwrap();
        assert_eq!(none, Settings::default());
        assert!(none.renders_config());
        assert_eq!(none.chart(), "dist/chart");
        assert_eq!(none.record(), Value::Mapping(Mapping::new()));

        let kubebuilders: Value =
            serde_yaml::from_str("manifests: dist/install.yaml\noutput: dist\n").unwrap();
        assert_eq!(
            Settings::recorded(Some(&kubebuilders)).unwrap(),
            Settings::default()
        );

        let set = none
            .with_flags(&flags(Some("custom/install.yaml"), Some("./charts/")))
            .unwrap();
        assert_eq!(set.chart(), "charts/chart");
        assert!(!set.renders_config());
        let recorded = Settings::recorded(Some(&set.record())).unwrap();
        assert_eq!(recorded, set);
        let again = recorded
            .with_flags(&flags(Some("./dist/install.yaml"), None))
            .unwrap();
        assert!(again.renders_config());
        assert_eq!(again.chart(), "charts/chart");
    }

    #[test]
    fn outside_the_project_is_refused() {
        for bad in [
            "",
            "/tmp/x",
            "../x",
            "a/../../b",
            "~/charts",
            "a\tb",
            "a\\b",
        ] {
            let err = Settings::default()
                .with_flags(&flags(None, Some(bad)))
                .unwrap_err();
            assert!(err.to_string().contains("--output-dir"), "{bad}: {err}");
        }
        let bad: Value = serde_yaml::from_str("outputDir: charts\n").unwrap();
        assert!(Settings::recorded(Some(&bad)).is_err());
        let bad: Value = serde_yaml::from_str("output: /etc\n").unwrap();
        assert!(Settings::recorded(Some(&bad)).is_err());
        let err = refuse_without_plugin(&flags(Some("x.yaml"), Some("c"))).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--manifests and --output-dir are flags of the helm/v2-alpha plugin: add --plugins helm/v2-alpha"
        );
        assert!(refuse_without_plugin(&flags(None, None)).is_ok());
    }
}
