//! The Helm plugin (kubebuilder's `helm.kubebuilder.io/v2-alpha`): a chart in
//! `<output>/chart/` (`dist/chart/` by default) that installs what `make deploy` does, made from
//! `kubectl kustomize config/default` (or a `--manifests` file) so that the user's patches in
//! config/ reach it, with kubebuilder's values.
//!
//! `edit --plugins helm/v2-alpha` (or `make helm-chart`, which runs `make manifests` first, as the
//! CRDs and webhook manifests must be there) writes:
//! - operator-rs's, rewritten on every run while unedited (`generated.rs`): a template per object
//!   under `templates/<area>/` (`chart.rs`, `manager/`, `ports.rs`, `rbac.rs`, `names.rs`);
//! - the user's, written once: `Chart.yaml`, `values.yaml` (to which later runs only append what
//!   the templates need, `values.rs`), `templates/_helpers.tpl` (the same, `helpers.rs`),
//!   `.helmignore`, `templates/NOTES.txt` and `.github/workflows/test-chart.yml`; and any template
//!   the user edited or added. `--force` writes them all again, but Chart.yaml, as kubebuilder's.
//! - edits: the Helm targets of the Makefile (`makefile.rs`), and `.gitignore`, which ignored all
//!   of dist/, now ignores dist/ but the chart.
//!
//! Its flags and its record in PROJECT (`manifests`, `output`) are `settings.rs`'s.

mod chart;
mod generated;
mod helpers;
mod makefile;
mod manager;
mod names;
mod ports;
mod rbac;
mod render;
mod retarget;
mod settings;
mod switches;
mod values;
mod yaml;

use anyhow::{Context as _, Result};
use serde::Serialize;
use serde_yaml::Value;

use settings::Settings;
pub use settings::{Flags, refuse_without_plugin as refuse_flags};

use super::{Plugin, ProjectPart, ProjectPluginArgs};
use crate::names::InvalidInput;
use crate::project::Project;
use crate::scaffold::table::DirTable;
use crate::scaffold::{Owner, Plan};
use crate::vars::ProjectVars;

/// The plugin's key in PROJECT, kubebuilder's.
pub const PLUGIN_KEY: &str = "helm.kubebuilder.io/v2-alpha";

/// The short name `--plugins` accepts.
pub const PLUGIN_SHORT: &str = "helm/v2-alpha";

/// The chart's files that are operator-rs's templates at `dist/chart/` (`templates/helm/`),
/// written under the chart's folder.
const TEMPLATE_CHART: &str = "dist/chart";

/// Chart.yaml, .helmignore, NOTES.txt and the workflow: `templates/helm/`.
static FILES: DirTable<HelmVars> = DirTable::new("helm");

/// The variables of [`FILES`].
#[derive(Debug, Clone, Default, Serialize)]
pub struct HelmVars {
    #[serde(flatten)]
    pub project: ProjectVars,
    /// The chart's folder in the project (`dist/chart`).
    pub chart_dir: String,
    /// The namespace `make deploy` installs into, which the workflow installs the chart into.
    pub namespace: String,
}

/// The plugin.
pub struct Helm;

impl Plugin for Helm {
    fn key(&self) -> &'static str {
        PLUGIN_KEY
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["helm/v2"]
    }

    fn short_key(&self) -> &'static str {
        PLUGIN_SHORT
    }

    fn usage(&self) -> &'static str {
        "edit --plugins helm/v2-alpha: a Helm chart in dist/chart made from config/"
    }

    fn check_config(&self, config: &Value) -> Result<(), (String, InvalidInput)> {
        settings::check(config)
    }

    fn project(&self) -> Option<&dyn ProjectPart> {
        Some(self)
    }

    fn renders_manifests(&self) -> bool {
        true
    }

    /// `--manifests` and `--output-dir` as PROJECT records them, where they are not the defaults.
    fn replay_flags(&self, project: &Project) -> Vec<(&'static str, String)> {
        let settings = Settings::recorded(project.plugins.get(PLUGIN_KEY)).unwrap_or_default();
        let defaults = Settings::default();
        let mut flags = Vec::new();
        if !settings.renders_config() {
            flags.push(("manifests", settings.manifests));
        }
        if settings.output != defaults.output {
            flags.push(("output-dir", settings.output));
        }
        flags
    }

    /// The user's files of the chart, and a `--manifests` file of the project's, which `alpha
    /// generate` keeps.
    fn input_files(&self, project: &Project) -> Vec<String> {
        let settings = Settings::recorded(project.plugins.get(PLUGIN_KEY)).unwrap_or_default();
        let chart = settings.chart();
        let mut files: Vec<String> = USERS.iter().map(|f| format!("{chart}/{f}")).collect();
        if !settings.renders_config() && std::path::Path::new(&settings.manifests).is_relative() {
            files.push(settings.manifests.clone());
        }
        files
    }
}

/// The chart's files that are the user's once written (besides templates they edit or add).
const USERS: &[&str] = &[
    "Chart.yaml",
    "values.yaml",
    ".helmignore",
    "templates/_helpers.tpl",
    "templates/NOTES.txt",
];

impl ProjectPart for Helm {
    /// `--manifests` and `--output-dir` into PROJECT's record, which [`ProjectPart::render`]
    /// reads.
    fn configure(&self, project: &mut Project, args: &ProjectPluginArgs) -> Result<()> {
        let settings =
            Settings::recorded(project.plugins.get(PLUGIN_KEY))?.with_flags(&args.helm)?;
        project
            .plugins
            .insert(PLUGIN_KEY.to_string(), settings.record());
        Ok(())
    }

    fn render(&self, plan: &mut Plan, project: &Project, vars: &ProjectVars) -> Result<()> {
        let settings = Settings::recorded(project.plugins.get(PLUGIN_KEY))?;
        let chart_dir = settings.chart();
        let rendered = render::render(plan, &settings)?;
        let chart = chart::build(&rendered, &project.project_name)?;
        let namespace = rendered
            .namespace
            .clone()
            .unwrap_or_else(|| format!("{}-system", project.project_name));
        let helm_vars = HelmVars {
            project: vars.clone(),
            chart_dir: chart_dir.clone(),
            namespace: namespace.clone(),
        };
        // --force writes the user's files again, but Chart.yaml (kubebuilder's rule).
        let force = plan.force();
        for file in FILES.render(&helm_vars)? {
            let path = match file.path.strip_prefix(TEMPLATE_CHART) {
                Some(rest) => format!("{chart_dir}{rest}"),
                None => file.path.clone(),
            };
            if force && !path.ends_with("/Chart.yaml") {
                plan.write(&path, file.contents)?;
            } else {
                plan.create(&path, file.contents, Owner::Shared)?;
            }
        }
        let helpers_path = format!("{chart_dir}/templates/_helpers.tpl");
        let helpers = match plan.read(&helpers_path)? {
            Some(existing) if !force => helpers::complete(&existing, &project.project_name),
            _ => helpers::initial(&project.project_name),
        };
        write_changed(plan, &helpers_path, helpers)?;

        let values_path = format!("{chart_dir}/values.yaml");
        let blocks = values::blocks(&chart.features, &chart.manager, chart.metrics);
        let values = match plan.read(&values_path)? {
            Some(existing) if !force => values::complete(&values_path, &existing, &blocks)?,
            _ => values::initial(&blocks),
        };
        write_changed(plan, &values_path, values)?;

        write_templates(plan, &chart, &format!("{chart_dir}/templates"), force)?;
        let defaults = makefile::Defaults {
            namespace: &namespace,
            release: &project.project_name,
            chart: &chart_dir,
        };
        makefile::add_targets(plan, &defaults)?;
        unignore_chart(plan, &chart_dir)?;
        Ok(())
    }

    /// `--sharding` changes the manager's replicas and arguments, which values.yaml holds.
    fn retarget(&self, plan: &mut Plan, old: &Project, new: &Project) -> Result<()> {
        if old.sharding == new.sharding {
            return Ok(());
        }
        let settings = Settings::recorded(old.plugins.get(PLUGIN_KEY))?;
        retarget::values(plan, &format!("{}/values.yaml", settings.chart()), old, new)
    }

    fn record(&self, project: &mut Project) {
        project
            .plugins
            .entry(PLUGIN_KEY.to_string())
            .or_insert_with(|| Settings::default().record());
    }
}

/// Plans `path` with `text` unless it is that already.
fn write_changed(plan: &mut Plan, path: &str, text: String) -> Result<()> {
    if plan.read(path)?.as_deref() != Some(text.as_str()) {
        plan.write(path, text)?;
    }
    Ok(())
}

/// The templates made from config/ under `dir`: each written unless the user edited it (`force`:
/// written all the same), and those of objects config/ no longer renders removed unless edited.
fn write_templates(plan: &mut Plan, chart: &chart::Chart, dir: &str, force: bool) -> Result<()> {
    let mut made = Vec::new();
    for template in &chart.templates {
        let path = format!("{dir}/{}", template.path);
        let text = generated::with_header(&template.text);
        match plan.read(&path)? {
            Some(existing) if !force && !generated::is_unedited(&existing) => {
                if existing != text {
                    plan.note(format!(
                        "kept {path}: it was edited (remove it, or run with --force, to get the \
                         one made from config/)"
                    ));
                }
            }
            Some(existing) if existing == text => {}
            _ => plan.write(&path, text)?,
        }
        made.push(path);
    }
    for path in files_under(plan, dir)? {
        if !made.contains(&path)
            && plan
                .read(&path)?
                .is_some_and(|text| generated::is_unedited(&text))
        {
            plan.delete(&path)?;
        }
    }
    Ok(())
}

/// The files on disk under `dir`, as paths relative to the project.
fn files_under(plan: &Plan, dir: &str) -> Result<Vec<String>> {
    let root = plan.root();
    let full = root.join(dir);
    if !full.is_dir() {
        return Ok(Vec::new());
    }
    let mut files = Vec::new();
    for entry in walkdir::WalkDir::new(&full).sort_by_file_name() {
        let entry = entry.with_context(|| format!("reading {}", full.display()))?;
        if entry.file_type().is_file()
            && let Some(rel) = entry.path().strip_prefix(root)?.to_str()
        {
            files.push(rel.replace('\\', "/"));
        }
    }
    Ok(files)
}

/// init's .gitignore ignores dist/ (`make build-installer`'s dist/install.yaml): the chart is
/// source, so dist/ is ignored but for it (a chart elsewhere is not ignored). A .gitignore
/// without init's line is left alone.
fn unignore_chart(plan: &mut Plan, chart_dir: &str) -> Result<()> {
    let Some(under_dist) = chart_dir.strip_prefix("dist/") else {
        return Ok(());
    };
    // The folder under dist/ that holds the chart.
    let top = under_dist
        .split('/')
        .next()
        .unwrap_or(under_dist)
        .to_string();
    let Some(text) = plan.read(".gitignore")? else {
        return Ok(());
    };
    if !text.lines().any(|l| l.trim_end() == "/dist/") {
        return Ok(());
    }
    plan.edit(".gitignore", |text| {
        let lines: Vec<String> = text
            .lines()
            .map(|l| {
                if l.trim_end() == "/dist/" {
                    format!(
                        "/dist/*\n# dist/{top}/ holds the Helm chart (helm/v2-alpha plugin), kept in the repository.\n!/dist/{top}/"
                    )
                } else {
                    l.to_string()
                }
            })
            .collect();
        let mut out = lines.join("\n");
        if text.ends_with('\n') {
            out.push('\n');
        }
        Ok(out)
    })
}

#[cfg(test)]
pub(crate) fn tables() -> Vec<&'static dyn crate::scaffold::table::Checked> {
    vec![&FILES]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A project's config/default as kubectl kustomize renders it (trimmed), with webhooks.
    const RENDERED: &str = include_str!("testdata/rendered.yaml");

    fn chart() -> chart::Chart {
        let rendered = render::Rendered {
            default: render::parse(RENDERED).unwrap(),
            optional: Vec::new(),
            namespace: Some("memc-system".into()),
            name_prefix: "memc-".into(),
        };
        chart::build(&rendered, "memc").unwrap()
    }

    #[test]
    fn areas_and_switches() {
        let chart = chart();
        let paths: Vec<&str> = chart.templates.iter().map(|t| t.path.as_str()).collect();
        assert!(
            paths.contains(&"crd/memcacheds.cache.example.com.yaml"),
            "{paths:?}"
        );
        assert!(
            paths.contains(&"manager/controller-manager.yaml"),
            "{paths:?}"
        );
        assert!(paths.contains(&"rbac/controller-manager.yaml"), "{paths:?}");
        assert!(paths.contains(&"webhook/webhook-service.yaml"), "{paths:?}");
        assert!(
            paths.contains(&"cert-manager/serving-cert.yaml"),
            "{paths:?}"
        );
        assert!(!paths.iter().any(|p| p.contains("system")), "{paths:?}");
        assert!(chart.features.webhooks && chart.features.cert_manager);
        let text = |p: &str| &chart.templates.iter().find(|t| t.path == p).unwrap().text;
        assert!(
            text("webhook/webhook-service.yaml").starts_with("{{- if .Values.webhook.enabled }}")
        );
        assert!(
            text("cert-manager/serving-cert.yaml")
                .starts_with("{{- if and .Values.certManager.enabled .Values.webhook.enabled }}")
        );
        let crd = text("crd/memcacheds.cache.example.com.yaml");
        assert!(crd.starts_with("{{- if .Values.crd.enabled }}"), "{crd}");
        assert!(crd.contains("helm.sh/resource-policy: keep"), "{crd}");
        let cert = text("cert-manager/serving-cert.yaml");
        assert!(
            cert.contains("- {{ include \"memc.resourceName\" (dict \"suffix\" \"webhook-service\" \"context\" $) }}.{{ .Release.Namespace }}.svc\n"),
            "{cert}"
        );
        assert!(!cert.contains("managed-by: kustomize"), "{cert}");
        assert!(
            cert.contains("{{- include \"memc.labels\" . | nindent 4 }}"),
            "{cert}"
        );
    }

    #[test]
    fn the_manager_takes_its_values() {
        let chart = chart();
        let manager = &chart
            .templates
            .iter()
            .find(|t| t.path == "manager/controller-manager.yaml")
            .unwrap()
            .text;
        for expected in [
            "{{- if (or (not (hasKey .Values.manager \"enabled\")) .Values.manager.enabled) }}\n",
            "replicas: {{ .Values.manager.replicas }}",
            ".Values.manager.image.repository",
            "- --metrics-bind-address=:{{ .Values.metrics.port }}",
            "- --metrics-bind-address=0",
            "- --health-probe-bind-address=:{{ .Values.manager.healthProbe.port }}",
            "- --webhook-port={{ .Values.webhook.port }}",
            "- containerPort: {{ .Values.webhook.port }}",
            "{{- range .Values.manager.args }}",
            "{{- if not (has \"MEMCACHED_IMAGE\" $given) }}\n        - name: MEMCACHED_IMAGE",
            "{{- if and (not .Values.webhook.enabled) (not (has \"ENABLE_WEBHOOKS\" $given)) }}",
            "{{- range $name, $value := $overrides }}",
            "{{- with .Values.manager.resources }}",
            "{{- with .Values.manager.extraVolumeMounts }}",
            "{{- with .Values.manager.topologySpreadConstraints }}",
            "serviceAccountName: {{ include \"memc.serviceAccountName\" $ }}",
            "name: {{ include \"memc.resourceName\" (dict \"suffix\" \"controller-manager\" \"context\" $) }}",
            "namespace: {{ .Release.Namespace }}",
        ] {
            assert!(manager.contains(expected), "{expected} in\n{manager}");
        }
        assert_eq!(chart.manager.args, ["--leader-elect"]);
        assert_eq!(chart.manager.repository, "controller");
        assert_eq!(chart.manager.tag, "");
        assert_eq!(chart.features.ports, switches::Ports::default());
        assert!(chart.features.service_account && chart.features.metrics_secure);
    }

    #[test]
    fn the_gitignore_keeps_the_chart() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".gitignore"), "/target/\n/dist/\n").unwrap();
        let mut plan = Plan::new(dir.path(), false);
        unignore_chart(&mut plan, "dist/chart").unwrap();
        let text = plan.read(".gitignore").unwrap().unwrap();
        assert!(
            text.contains("/dist/*\n") && text.contains("!/dist/chart/\n"),
            "{text}"
        );
        assert!(!text.lines().any(|l| l == "/dist/"));
        // A chart outside dist/: nothing to keep.
        let mut plan = Plan::new(dir.path(), false);
        unignore_chart(&mut plan, "charts/chart").unwrap();
        assert!(plan.changes().is_empty());
    }
}
