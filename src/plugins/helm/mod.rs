//! The Helm plugin (kubebuilder's `helm.kubebuilder.io/v2-alpha`): a chart in `dist/chart/` that
//! installs what `make deploy` does, made from `kubectl kustomize config/default` so that the
//! user's patches in config/ reach it.
//!
//! `edit --plugins helm/v2-alpha` (or `make helm-chart`, which runs `make manifests` first, as the
//! CRDs and webhook manifests must be there) writes:
//! - operator-rs's, rewritten on every run while unedited (`generated.rs`): a template per object
//!   under `dist/chart/templates/<area>/` (`chart.rs`, `manager.rs`);
//! - the user's, written once: `Chart.yaml`, `values.yaml` (to which later runs only append the
//!   blocks of new features, `values.rs`), `.helmignore`, `templates/_helpers.tpl`,
//!   `templates/NOTES.txt` and `.github/workflows/test-chart.yml`; and any template the user
//!   edited or added;
//! - edits: the `helm-chart`, `helm-deploy` and `helm-uninstall` targets of the Makefile, and
//!   `.gitignore`, which ignored all of dist/, now ignores dist/ but the chart.

mod chart;
mod generated;
mod manager;
mod render;
mod retarget;
mod switches;
mod values;
mod yaml;

use anyhow::{Context as _, Result};
use serde_yaml::{Mapping, Value};

use super::{Plugin, ProjectPart};
use crate::project::Project;
use crate::scaffold::table::DirTable;
use crate::scaffold::{Owner, Plan};
use crate::vars::ProjectVars;

/// The plugin's key in PROJECT, kubebuilder's.
pub const PLUGIN_KEY: &str = "helm.kubebuilder.io/v2-alpha";

/// The short name `--plugins` accepts.
pub const PLUGIN_SHORT: &str = "helm/v2-alpha";

/// The chart's folder.
pub const CHART: &str = "dist/chart";

/// The chart's values, the user's.
const VALUES: &str = "dist/chart/values.yaml";

/// The folder of the templates made from config/.
const TEMPLATES: &str = "dist/chart/templates";

/// Chart.yaml, .helmignore, _helpers.tpl, NOTES.txt and the workflow: `templates/helm/`.
static FILES: DirTable<ProjectVars> = DirTable::new("helm");

/// The Makefile's targets, appended once.
const MAKEFILE_TARGETS: &str = "
##@ Helm chart (helm/v2-alpha plugin)

HELM ?= helm
HELM_RELEASE ?= $(shell sed -n 's/^name: *//p' dist/chart/Chart.yaml)
HELM_NAMESPACE ?= $(HELM_RELEASE)-system

.PHONY: helm-chart
helm-chart: manifests ## Make dist/chart/ again from config/ (kubectl kustomize config/default); keeps values.yaml and the templates you edited.
\t$(OPERATOR_RS) edit --plugins helm/v2-alpha

.PHONY: helm-deploy
helm-deploy: ## Install or upgrade the chart in the K8s cluster specified in ~/.kube/config, with the image IMG.
\t$(HELM) upgrade --install $(HELM_RELEASE) dist/chart --namespace $(HELM_NAMESPACE) --create-namespace \\
\t\t--set manager.image.repository=$${IMG%:*} --set manager.image.tag=$${IMG##*:} --wait

.PHONY: helm-uninstall
helm-uninstall: ## Uninstall the chart's release from the K8s cluster specified in ~/.kube/config.
\t$(HELM) uninstall $(HELM_RELEASE) --namespace $(HELM_NAMESPACE)
";

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

    fn project(&self) -> Option<&dyn ProjectPart> {
        Some(self)
    }

    fn renders_manifests(&self) -> bool {
        true
    }

    /// The user's files of the chart, which `alpha generate` keeps.
    fn input_files(&self, _project: &Project) -> Vec<String> {
        USERS.iter().map(|f| format!("{CHART}/{f}")).collect()
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
    fn render(&self, plan: &mut Plan, project: &Project, vars: &ProjectVars) -> Result<()> {
        let rendered = render::render(plan)?;
        let chart = chart::build(&rendered, &project.project_name)?;

        for file in FILES.render(vars)? {
            plan.create(&file.path, file.contents, Owner::Shared)?;
        }
        let blocks = values::blocks(&chart.features, &chart.manager);
        match plan.read(VALUES)? {
            None => plan.write(VALUES, values::initial(&blocks))?,
            Some(existing) => {
                let completed = values::complete(VALUES, &existing, &blocks)?;
                if completed != existing {
                    plan.write(VALUES, completed)?;
                }
            }
        }

        let mut made = Vec::new();
        for template in &chart.templates {
            let path = format!("{TEMPLATES}/{}", template.path);
            match plan.read(&path)? {
                Some(existing) if !generated::is_unedited(&existing) => {
                    if existing != generated::with_header(&template.text) {
                        plan.note(format!(
                            "kept {path}: it was edited (remove it to get the one made from config/)"
                        ));
                    }
                }
                _ => plan.write(&path, generated::with_header(&template.text))?,
            }
            made.push(path);
        }
        // Templates of objects that config/ no longer renders, unless the user edited them.
        for path in files_under(plan, TEMPLATES)? {
            if !made.contains(&path)
                && plan
                    .read(&path)?
                    .is_some_and(|text| generated::is_unedited(&text))
            {
                plan.delete(&path)?;
            }
        }

        add_makefile_targets(plan)?;
        unignore_chart(plan)?;
        Ok(())
    }

    /// `--sharding` changes the manager's replicas and arguments, which values.yaml holds.
    fn retarget(&self, plan: &mut Plan, old: &Project, new: &Project) -> Result<()> {
        if old.sharding == new.sharding {
            return Ok(());
        }
        retarget::values(plan, old, new)
    }

    fn record(&self, project: &mut Project) {
        project
            .plugins
            .entry(PLUGIN_KEY.to_string())
            .or_insert_with(|| Value::Mapping(Mapping::new()));
    }
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

/// The chart's targets at the end of the Makefile, once.
fn add_makefile_targets(plan: &mut Plan) -> Result<()> {
    match plan.read("Makefile")? {
        Some(text) if !text.contains("\nhelm-chart:") => plan.edit("Makefile", |text| {
            let mut text = text.to_string();
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(MAKEFILE_TARGETS);
            Ok(text)
        }),
        Some(_) => Ok(()),
        None => {
            plan.note("no Makefile: add a target that runs `make manifests`, then `operator-rs edit --plugins helm/v2-alpha`".into());
            Ok(())
        }
    }
}

/// init's .gitignore ignores dist/ (`make build-installer`'s dist/install.yaml): the chart is
/// source, so dist/ is ignored but for it. A .gitignore without init's line is left alone.
fn unignore_chart(plan: &mut Plan) -> Result<()> {
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
                    "/dist/*\n# dist/chart/ is the Helm chart (helm/v2-alpha plugin), kept in the repository.\n!/dist/chart/".to_string()
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
            cert.contains("memc-webhook-service.{{ .Release.Namespace }}.svc"),
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
            "replicas: {{ .Values.manager.replicas }}",
            ".Values.manager.image.repository",
            "- --metrics-bind-address=:8443",
            "- --metrics-bind-address=0",
            "{{- range .Values.manager.args }}",
            "- name: MEMCACHED_IMAGE",
            "{{- if not .Values.webhook.enabled }}",
            "toYaml .Values.manager.resources",
            "namespace: {{ .Release.Namespace }}",
        ] {
            assert!(manager.contains(expected), "{expected} in\n{manager}");
        }
        assert_eq!(
            chart.manager.args,
            ["--leader-elect", "--health-probe-bind-address=:8081"]
        );
        assert_eq!(chart.manager.repository, "controller");
        assert_eq!(chart.manager.tag, "latest");
    }

    #[test]
    fn the_gitignore_keeps_the_chart() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".gitignore"), "/target/\n/dist/\n").unwrap();
        let mut plan = Plan::new(dir.path(), false);
        unignore_chart(&mut plan).unwrap();
        let text = plan.read(".gitignore").unwrap().unwrap();
        assert!(
            text.contains("/dist/*\n") && text.contains("!/dist/chart/\n"),
            "{text}"
        );
        assert!(!text.lines().any(|l| l == "/dist/"));
    }
}
