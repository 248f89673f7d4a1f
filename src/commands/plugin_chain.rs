//! The external plugins of a command (`--plugins <name>/<version>`), run after its own files are
//! planned, in the order given: each is sent the project's files as the plan leaves them (the
//! files on disk, as git sees them, with the plan's changes) and PROJECT as the command leaves
//! it, and what it answers joins the plan, to be written with the command's files, all or
//! nothing. A file it would change that exists on disk is refused (operator-rs never overwrites
//! a project's files); files of this plan it may change. Its own entry of PROJECT is recorded.

use std::collections::BTreeMap;

use anyhow::{Result, bail};

use super::alpha::tree;
use crate::plugins::external::{self, Found, protocol::PluginRequest};
use crate::project::{self, Project};
use crate::scaffold::{Action, Plan};

/// Runs `plugins` for `command` (`init`, `create api`, `create webhook`, `edit`) on `plan`, and
/// records what they add to PROJECT in `project` (the caller writes PROJECT after).
pub fn run(plugins: &[Found], command: &str, plan: &mut Plan, project: &mut Project) -> Result<()> {
    if plugins.is_empty() {
        return Ok(());
    }
    let mut universe = universe(plan, project)?;
    let args = external::args_of(&std::env::args().collect::<Vec<_>>());
    let chain: Vec<String> = project
        .layout
        .iter()
        .cloned()
        .chain(plugins.iter().map(Found::key))
        .collect();
    let mut written = BTreeMap::new();
    for plugin in plugins {
        let key = plugin.key();
        let mut request = PluginRequest::new(command, args.clone());
        request.universe = universe.clone();
        request.plugin_chain = chain.clone();
        // PROJECT as a map, `init`'s too (the project it writes), which plugins that read the
        // project's name need (kubebuilder's sample does).
        request.config = Some(serde_yaml::from_str(&project.render_now())?);
        let response = external::call::call(plugin, &request, plan.root())?;
        let changes = external::changes(&key, &universe, &response, project::FILE)?;
        for (path, text) in changes.files {
            universe.insert(path.clone(), text.clone());
            written.insert(path, (key.clone(), text));
        }
        if let Some(entry) = changes.project_entry {
            project.plugins.insert(key.clone(), entry);
        }
        universe.insert(project::FILE.into(), project.render_now());
    }
    for (path, (key, text)) in written {
        if is_on_disk(plan, &key, &path, &text)? {
            continue;
        }
        plan.write(&path, text)?;
    }
    Ok(())
}

/// The project's files as the plan leaves them, with PROJECT as the command leaves it.
fn universe(plan: &Plan, project: &Project) -> Result<BTreeMap<String, String>> {
    let mut files = tree::read(plan.root())?;
    for change in plan.changes() {
        if change.action == Action::Delete {
            files.remove(&change.path);
        } else {
            files.insert(change.path.clone(), change.contents.clone());
        }
    }
    files.insert(project::FILE.into(), project.render_now());
    Ok(files)
}

/// Whether `path` is on disk as `text` already (nothing to write); a file on disk with other
/// text is the user's, which the plugin may not change: it may add files, and change those of
/// this plan, only.
fn is_on_disk(plan: &Plan, key: &str, path: &str, text: &str) -> Result<bool> {
    let on_disk = plan.root().join(path);
    if std::fs::read(&on_disk).is_ok_and(|bytes| bytes == text.as_bytes()) {
        return Ok(true);
    }
    if on_disk.exists() || on_disk.is_symlink() {
        bail!(
            "plugin {key} would overwrite {path}, which exists: operator-rs never overwrites a \
             project's files; nothing was written (move it away to have the plugin write it)"
        );
    }
    Ok(false)
}
