//! `--sharding` (`init` and `edit`): the manager's replicas share every controller's objects
//! (docs/sharding.md). `init`'s own templates render what depends on it in the files every
//! project has (the Deployment's replicas and `--sharding` in `config/manager/manager.yaml`, the
//! entry of `config/manager/kustomization.yaml`), so `edit` changes those as it changes the files
//! of `--namespaced`. This module has the rest: the PodDisruptionBudget, a file only sharded
//! projects have, and the checks of what the manager would refuse when it starts.

use anyhow::{Result, bail};
use serde::Deserialize;
use serde_yaml::Value;

use crate::names::{self, InvalidInput};
use crate::scaffold::Plan;
use crate::scaffold::line_endings;
use crate::scaffold::table::{Table, shared_file};
use crate::vars::ProjectVars;

/// The PodDisruptionBudget of the manager's pods.
static FILES: Table<ProjectVars> = Table::new(
    &[shared_file(
        "sharding/config/manager/pod_disruption_budget.yaml",
    )],
    &[],
);

/// The manager's Deployment, whose arguments must hold `--leader-elect`.
const MANAGER: &str = "config/manager/manager.yaml";

/// The files of a sharded project that `init` writes besides its own: (path, contents).
pub(crate) fn files(vars: &ProjectVars) -> Result<Vec<(String, String)>> {
    FILES.texts(vars, false)
}

/// Refuses `--sharding` at `init` in a domain too long for a ring's name.
pub(crate) fn check_init_domain(domain: &str) -> Result<(), InvalidInput> {
    names::check_sharded_domain(domain).map_err(|rule| InvalidInput::new("--domain", domain, rule))
}

/// Refuses `edit --sharding` where the manager would refuse to start: a domain too long for a
/// ring's name, or a `config/manager/manager.yaml` without `--leader-elect` (the elected replica
/// assigns the objects to the replicas; the manager refuses `--sharding` alone). A manager.yaml
/// that is gone is the user's own business, as `edit --namespaced` treats it.
pub(crate) fn check_edit(plan: &Plan, domain: &str) -> Result<()> {
    if let Err(rule) = names::check_sharded_domain(domain) {
        bail!("cannot turn sharding on in this project, of domain {domain:?}: {rule}");
    }
    let Some(text) = plan.read(MANAGER)? else {
        return Ok(());
    };
    match leader_elect(&text) {
        Some(true) => Ok(()),
        Some(false) => bail!(
            "--sharding needs --leader-elect (the elected replica assigns the objects to the \
             replicas), which {MANAGER} does not pass to the manager: add `- --leader-elect` to \
             its args, then run edit --sharding again"
        ),
        None => bail!(
            "{MANAGER} has no Deployment with a container named manager, which --sharding needs \
             to run with --leader-elect: put it back as `operator-rs init` writes it"
        ),
    }
}

/// Adds (`on`) or removes the PodDisruptionBudget. A file at its path that is not what
/// operator-rs writes is the user's: refused, naming it, unless `force` (as `edit --force`
/// overwrites the files of config/ it cannot edit in place).
pub(crate) fn switch(plan: &mut Plan, vars: &ProjectVars, on: bool, force: bool) -> Result<()> {
    for (path, text) in files(vars)? {
        let ours = |existing: &str| line_endings::to_lf(existing) == text;
        match plan.read(&path)? {
            Some(existing) if on && !ours(&existing) && !force => bail!(
                "cannot write {path}: a file of yours is there; move it away, or pass --force \
                 to overwrite it"
            ),
            Some(existing) if on && ours(&existing) => {}
            _ if on => plan.write(&path, text)?,
            Some(existing) if !ours(&existing) && !force => bail!(
                "cannot remove {path}: it is not as operator-rs wrote it; remove it by hand (and \
                 its line in config/manager/kustomization.yaml), or pass --force"
            ),
            Some(_) => plan.delete(&path)?,
            None => {}
        }
    }
    Ok(())
}

/// Whether the manager container of the Deployment in `text` runs with leader election (its last
/// `--leader-elect` argument, as the manager's flags read them); `None` without such a container.
fn leader_elect(text: &str) -> Option<bool> {
    let container = serde_yaml::Deserializer::from_str(text)
        .filter_map(|doc| Value::deserialize(doc).ok())
        .filter(|doc| doc.get("kind").and_then(Value::as_str) == Some("Deployment"))
        .filter_map(|doc| {
            doc.get("spec")?
                .get("template")?
                .get("spec")?
                .get("containers")?
                .as_sequence()?
                .iter()
                .find(|c| c.get("name").and_then(Value::as_str) == Some("manager"))
                .cloned()
        })
        .next()?;
    let args = container.get("args").and_then(Value::as_sequence);
    let last = args
        .into_iter()
        .flatten()
        .rev()
        .filter_map(Value::as_str)
        .find_map(|arg| match arg.strip_prefix("--leader-elect") {
            Some("") => Some(true),
            Some(value) => value.strip_prefix('=').map(|v| v == "true" || v == "1"),
            None => None,
        });
    Some(last.unwrap_or(false))
}

#[cfg(test)]
pub(crate) fn tables() -> Vec<&'static dyn crate::scaffold::table::Checked> {
    vec![&FILES]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manager(args: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Namespace\n---\nkind: Deployment\nspec:\n  template:\n    \
             spec:\n      containers:\n      - name: manager\n        args: [{args}]\n"
        )
    }

    #[test]
    fn leader_election_is_read_as_the_manager_reads_its_flags() {
        assert_eq!(leader_elect(&manager("--leader-elect, --x")), Some(true));
        assert_eq!(leader_elect(&manager("--leader-elect=true")), Some(true));
        assert_eq!(
            leader_elect(&manager("--leader-elect, --leader-elect=false")),
            Some(false)
        );
        assert_eq!(
            leader_elect(&manager("--leader-election-id=x")),
            Some(false)
        );
        assert_eq!(leader_elect(&manager("")), Some(false));
        assert_eq!(leader_elect("kind: Deployment\nspec: {}\n"), None);
    }

    #[test]
    fn the_ring_name_fits_a_label_value() {
        let longest = format!("{}.com", "a".repeat(names::MAX_SHARDED_DOMAIN - 4));
        assert!(check_init_domain(&longest).is_ok());
        let longer = format!("a{longest}");
        let err = check_init_domain(&longer).unwrap_err().to_string();
        assert!(
            err.contains("--domain") && err.contains("--sharding"),
            "{err}"
        );
        // The ring's name, `<8 hex digits>.<domain>`, at the longest.
        assert_eq!(format!("01234567.{longest}").len(), 63);
    }
}
