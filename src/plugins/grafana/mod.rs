//! The Grafana plugin (kubebuilder's `grafana.kubebuilder.io/v1-alpha`): dashboards of the
//! metrics the manager exports, under `grafana/`.
//!
//! `init --plugins grafana/v1-alpha` or `edit --plugins grafana/v1-alpha` writes the dashboards of
//! controller-runtime's metric families as the runtime exports them (reconciliations, work
//! queues, REST client, webhooks, process), which operator-rs keeps up to date on every run, and
//! `grafana/custom-metrics/config.yaml`, which is the user's: the metrics of their own that the
//! next run renders into `grafana/custom-metrics/custom-metrics-dashboard.json`.

mod custom;

use anyhow::Result;
use serde_yaml::{Mapping, Value};

use super::{Plugin, ProjectPart};
use crate::project::Project;
use crate::scaffold::table::DirTable;
use crate::scaffold::{Owner, Plan};
use crate::vars::ProjectVars;

/// The plugin's key in PROJECT, kubebuilder's (the dashboards are the same for Go and Rust).
pub const PLUGIN_KEY: &str = "grafana.kubebuilder.io/v1-alpha";

/// The short name `--plugins` accepts.
pub const PLUGIN_SHORT: &str = "grafana/v1-alpha";

/// The user's config of custom metrics.
pub const CONFIG: &str = "grafana/custom-metrics/config.yaml";

/// The dashboard rendered from it.
pub const CUSTOM_DASHBOARD: &str = "grafana/custom-metrics/custom-metrics-dashboard.json";

/// The dashboards and the config: `templates/grafana/`.
static FILES: DirTable<ProjectVars> = DirTable::new("grafana");

/// The plugin.
pub struct Grafana;

impl Plugin for Grafana {
    fn key(&self) -> &'static str {
        PLUGIN_KEY
    }

    fn short_key(&self) -> &'static str {
        PLUGIN_SHORT
    }

    fn usage(&self) -> &'static str {
        "edit --plugins grafana/v1-alpha: Grafana dashboards of the manager's metrics"
    }

    fn project(&self) -> Option<&dyn ProjectPart> {
        Some(self)
    }

    fn input_files(&self, _project: &Project) -> Vec<String> {
        vec![CONFIG.to_string()]
    }
}

impl ProjectPart for Grafana {
    fn render(&self, plan: &mut Plan, _project: &Project, vars: &ProjectVars) -> Result<()> {
        for file in FILES.render(vars)? {
            if file.path == CONFIG {
                // The user's once written.
                plan.create(&file.path, file.contents, Owner::Shared)?;
            } else {
                plan.write(&file.path, file.contents)?;
            }
        }
        let config = plan.read(CONFIG)?.unwrap_or_default();
        let metrics = custom::metrics(CONFIG, &config)?;
        if !metrics.is_empty() {
            plan.write(CUSTOM_DASHBOARD, custom::dashboard(&metrics))?;
        }
        Ok(())
    }

    fn record(&self, project: &mut Project) {
        project
            .plugins
            .entry(PLUGIN_KEY.to_string())
            .or_insert_with(|| Value::Mapping(Mapping::new()));
    }
}

#[cfg(test)]
pub(crate) fn tables() -> Vec<&'static dyn crate::scaffold::table::Checked> {
    vec![&FILES]
}
