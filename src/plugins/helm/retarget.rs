//! `edit --sharding` in a project with a chart. `values.yaml` is the user's, and holds the
//! manager's replicas and arguments as config/ had them when the chart was made, so the next
//! `make helm-chart` would not bring them: `edit` brings `manager.replicas` and `manager.args`
//! from what they are with `init`'s `config/manager/manager.yaml` for the old flags to what they
//! are for the new ones, as it brings `init`'s files, where the user left them as operator-rs
//! wrote them. The chart's templates (the PodDisruptionBudget) come with the next
//! `make helm-chart`.

use anyhow::{Context as _, Result, bail};
use serde::Deserialize;
use serde_yaml::Value;

use super::manager;
use super::switches::Features;
use super::values;
use crate::project::Project;
use crate::scaffold::line_endings;
use crate::scaffold::rerender::patch;
use crate::scaffold::{Plan, templates};
use crate::vars::ProjectVars;

/// The template of the manager's Deployment that `init` writes, which the chart is made from.
const MANAGER_TEMPLATE: &str = "init/config/manager/manager.yaml";

/// Plans `values.yaml` (at `path`) with the manager's settings of `new` in place of those of
/// `old`.
pub fn values(plan: &mut Plan, path: &str, old: &Project, new: &Project) -> Result<()> {
    let Some(current) = plan.read(path)? else {
        return Ok(());
    };
    let (before, after) = (Manager::of(old)?, Manager::of(new)?);
    let changes = [
        (
            "manager.replicas",
            values::replicas_lines(&before.replicas),
            values::replicas_lines(&after.replicas),
            serde_json::to_string(&after.replicas)?,
        ),
        (
            "manager.args",
            values::args_lines(&before.args),
            values::args_lines(&after.args),
            serde_json::to_string(&after.args)?,
        ),
    ];
    let mut text = line_endings::to_lf(&current).into_owned();
    for (key, was, will, value) in changes {
        text = match patch(&text, &was, &will) {
            Some(text) => text,
            None => bail!(
                "cannot update {path}: its {key} is not as operator-rs wrote it; set it to \
                 {value} by hand, then run edit again",
            ),
        };
    }
    plan.write(path, line_endings::like(&current, &text))?;
    plan.note(format!(
        "{path} has the manager's replicas and arguments for --sharding={}; run `make \
         helm-chart` to bring the chart's templates up to date",
        new.sharding
    ));
    Ok(())
}

/// The manager's settings that `values.yaml` holds, as `init` writes them for `project` (the
/// arguments but the servers', which have values of their own).
#[derive(Debug, PartialEq)]
struct Manager {
    replicas: Value,
    args: Vec<String>,
}

impl Manager {
    fn of(project: &Project) -> Result<Self> {
        let vars = ProjectVars::new(project, "");
        let context = tera::Context::from_serialize(&vars)?;
        let text = templates::render(MANAGER_TEMPLATE, &context)?;
        let deployment = serde_yaml::Deserializer::from_str(&text)
            .filter_map(|doc| Value::deserialize(doc).ok())
            .find(|doc| doc.get("kind").and_then(Value::as_str) == Some("Deployment"))
            .context("init's manager.yaml has a Deployment")?;
        let spec = &deployment["spec"];
        let args = spec["template"]["spec"]["containers"][0]["args"]
            .as_sequence()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|a| !manager::is_server_arg(a, &Features::default()))
            .map(str::to_string)
            .collect();
        Ok(Self {
            replicas: spec["replicas"].clone(),
            args,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALUES: &str = "dist/chart/values.yaml";

    fn project(sharding: bool) -> Project {
        Project {
            project_name: "demo".into(),
            domain: "example.com".into(),
            sharding,
            ..Project::default()
        }
    }

    #[test]
    fn the_managers_settings_follow_init() {
        let plain = Manager::of(&project(false)).unwrap();
        assert_eq!(plain.replicas, Value::from(1));
        assert_eq!(plain.args, ["--leader-elect"]);
        let sharded = Manager::of(&project(true)).unwrap();
        assert_eq!(sharded.replicas, Value::from(3));
        assert_eq!(sharded.args, ["--leader-elect", "--sharding"]);
    }

    #[test]
    fn values_change_where_they_are_as_written_and_are_refused_elsewhere() {
        let dir = tempfile::tempdir().unwrap();
        let written = format!(
            "# mine\nmanager:\n{}  image: {{}}\n{}  env: []\n",
            values::replicas_lines(&Value::from(1)),
            values::args_lines(&Manager::of(&project(false)).unwrap().args),
        );
        std::fs::create_dir_all(dir.path().join("dist/chart")).unwrap();
        std::fs::write(dir.path().join(VALUES), &written).unwrap();
        let mut plan = Plan::new(dir.path(), false);
        values(&mut plan, VALUES, &project(false), &project(true)).unwrap();
        let sharded = plan.read(VALUES).unwrap().unwrap();
        assert!(
            sharded.starts_with("# mine\nmanager:\n  replicas: 3\n"),
            "{sharded}"
        );
        assert!(
            sharded.contains("    - --leader-elect\n    - --sharding\n  env"),
            "{sharded}"
        );
        // And back.
        std::fs::write(dir.path().join(VALUES), &sharded).unwrap();
        let mut plan = Plan::new(dir.path(), false);
        values(&mut plan, VALUES, &project(true), &project(false)).unwrap();
        assert_eq!(plan.read(VALUES).unwrap().unwrap(), written);
        // Replicas of the user's: refused, naming the value.
        std::fs::write(
            dir.path().join(VALUES),
            written.replace("replicas: 1", "replicas: 2"),
        )
        .unwrap();
        let mut plan = Plan::new(dir.path(), false);
        let err = values(&mut plan, VALUES, &project(false), &project(true)).unwrap_err();
        assert!(err.to_string().contains("manager.replicas"), "{err}");
    }
}
