//! The auto-update plugin (kubebuilder's `autoupdate.kubebuilder.io/v1-alpha`): a GitHub workflow,
//! `.github/workflows/auto_update.yml`, that brings the project onto each new operator-rs release
//! on a branch and opens an issue to review it.
//!
//! It is kubebuilder's workflow with operator-rs for kubebuilder: it installs the newest
//! operator-rs from crates.io and runs kubebuilder's line, `alpha update --force --push
//! --restore-path .github/workflows --open-gh-issue` (alpha update installs the release that made
//! the project itself). The file is the user's once written.

use anyhow::Result;
use serde_yaml::{Mapping, Value};

use super::{Plugin, ProjectPart};
use crate::project::Project;
use crate::scaffold::table::DirTable;
use crate::scaffold::{Owner, Plan};
use crate::vars::ProjectVars;

/// The plugin's key in PROJECT, kubebuilder's.
pub const PLUGIN_KEY: &str = "autoupdate.kubebuilder.io/v1-alpha";

/// The short name `--plugins` accepts.
pub const PLUGIN_SHORT: &str = "autoupdate/v1-alpha";

/// The workflow: `templates/autoupdate/`.
static FILES: DirTable<ProjectVars> = DirTable::new("autoupdate");

/// The plugin.
pub struct AutoUpdate;

impl Plugin for AutoUpdate {
    fn key(&self) -> &'static str {
        PLUGIN_KEY
    }

    fn short_key(&self) -> &'static str {
        PLUGIN_SHORT
    }

    fn usage(&self) -> &'static str {
        "edit --plugins autoupdate/v1-alpha: a GitHub workflow that updates the scaffold to each new operator-rs"
    }

    fn project(&self) -> Option<&dyn ProjectPart> {
        Some(self)
    }
}

impl ProjectPart for AutoUpdate {
    fn render(&self, plan: &mut Plan, _project: &Project, vars: &ProjectVars) -> Result<()> {
        for file in FILES.render(vars)? {
            // The user's once written (its schedule, its steps).
            plan.create(&file.path, file.contents, Owner::Shared)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workflow_updates_from_the_recorded_release() {
        let files = FILES.render(&ProjectVars::default()).unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].path, ".github/workflows/auto_update.yml");
        let text = &files[0].contents;
        let workflow: Value = serde_yaml::from_str(text).unwrap();
        let steps = workflow["jobs"]["auto-update"]["steps"]
            .as_sequence()
            .unwrap();
        let run: String = steps
            .iter()
            .filter_map(|s| s.get("run").and_then(Value::as_str))
            .collect();
        for expected in [
            "cargo install --locked operator-rs\n",
            "operator-rs alpha update \\\n  --force \\\n  --push \\\n  --restore-path .github/workflows \\\n  --open-gh-issue",
        ] {
            assert!(run.contains(expected), "{expected:?} in {run}");
        }
        assert!(text.contains("${{ secrets.GITHUB_TOKEN }}"));
    }
}
