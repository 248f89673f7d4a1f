//! Plugins, as kubebuilder has them: a plugin adds flags, templates, variables and its own record
//! under `plugins:` in PROJECT to the commands, which run it at each of their steps.
//!
//! The base layout (kubebuilder's `go/v4`, this tool's `rust.operator-rs.io/v1-alpha`) is what
//! the commands themselves write; a plugin is a value of the [`Plugin`] trait, listed in [`ALL`],
//! and selected by kubebuilder's plugin keys (`--plugins deploy-image/v1-alpha`) or by its own
//! flags (`--image`). A command asks each plugin for its part ([`Plugin::create_api`] …) and
//! calls that part at its steps: validate (flags and PROJECT; nothing written) → resolve (the
//! plugin's typed variables, from the command's) → render (its tables of templates, which may
//! stand in for the command's own) → record (its config in PROJECT). A plugin knows the commands
//! through the types here and in [`crate::vars`], never through the commands' code, and the
//! commands know no plugin by name: adding one is a module here and a line in [`ALL`].
//! docs/plugins.md tells how to write one.
//!
//! External plugins ([`external`]), executables speaking kubebuilder's JSON protocol, are named
//! by `--plugins <name>/<version>` too and run after these, with the command's plan.

pub mod autoupdate;
pub mod deploy_image;
pub mod external;
pub mod grafana;
pub mod helm;

use anyhow::{Result, bail};
use clap::Args;
use serde_yaml::Value;

use crate::names::{Group, InvalidInput, Kind, Version};
use crate::project::{LAYOUT, Project, Resource};
use crate::scaffold::Plan;
use crate::scaffold::table::Renderer;
use crate::vars::{ApiVars, ProjectVars, SpecVars};

/// Every plugin operator-rs has.
pub static ALL: &[&dyn Plugin] = &[
    &deploy_image::DeployImage,
    &grafana::Grafana,
    &helm::Helm,
    &autoupdate::AutoUpdate,
];

/// A plugin: its keys, its record in PROJECT, and its part in each command it works with (none
/// by default).
pub trait Plugin: Sync {
    /// The key PROJECT records its config under (`plugins.<key>`).
    fn key(&self) -> &'static str;

    /// The name `--plugins` is told in messages, which it accepts too: `deploy-image/v1-alpha`.
    fn short_key(&self) -> &'static str;

    /// Names `--plugins` accepts besides the key and the short key (kubebuilder's other spellings).
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }

    /// What it does, and with which command: for messages.
    fn usage(&self) -> &'static str;

    /// Checks its config in PROJECT, with the rules of the flags it records; an error names the
    /// path under `plugins.<key>` and the value.
    fn check_config(&self, _config: &Value) -> Result<(), (String, InvalidInput)> {
        Ok(())
    }

    /// Its part in one `create api`, made from its flags; `selected`: `--plugins` named it. None
    /// when it takes no part.
    fn create_api(
        &self,
        _args: &ApiPluginArgs,
        selected: bool,
    ) -> Result<Option<Box<dyn ApiPart>>> {
        if selected {
            bail!(
                "--plugins {}: the plugin has no part in create api; {}",
                self.short_key(),
                self.usage()
            );
        }
        Ok(None)
    }

    /// Its part in the `create api` that wrote the kind `gvk`, as PROJECT recorded it, if it took
    /// part: `--force` compares the files with what that part wrote, `alpha generate` replays it.
    fn recorded_api(&self, _project: &Project, _gvk: Gvk) -> Option<Box<dyn ApiPart>> {
        None
    }

    /// The fields of the spec of a kind whose types it wrote (the webhooks' examples use them).
    fn spec_of(&self, _project: &Project, _gvk: Gvk) -> Option<SpecVars> {
        None
    }

    /// Its part in `init --plugins` and `edit --plugins`, if it writes files of the whole project
    /// (kubebuilder's grafana, helm and autoupdate plugins): None for a plugin of another
    /// command.
    fn project(&self) -> Option<&dyn ProjectPart> {
        None
    }

    /// The files of the user's that its part reads (a configuration it renders from): `alpha
    /// generate` and `alpha update` carry them into the project they scaffold again.
    fn input_files(&self, _project: &Project) -> Vec<String> {
        Vec::new()
    }

    /// The flags of `edit --plugins <key>` that do again what PROJECT records of its project
    /// part (`alpha generate` and `alpha update` replay them): (flag, value).
    fn replay_flags(&self, _project: &Project) -> Vec<(&'static str, String)> {
        Vec::new()
    }

    /// Whether its project part renders from what `make manifests` writes (the Helm chart is
    /// made from the CRDs and webhook manifests): `alpha generate` and `alpha update` replay it
    /// after `make manifests`, and not at all when they do not run it.
    fn renders_manifests(&self) -> bool {
        false
    }
}

/// A plugin's part in `init --plugins` and `edit --plugins`: files of the whole project. Run again
/// (`edit --plugins <key>`), it brings them up to date with the project and the user's
/// configuration.
pub trait ProjectPart: Sync {
    /// Configure: its flags of `edit` (`args`), checked, into its record in `project`, which
    /// [`ProjectPart::render`] then reads (so that a later run without them does the same).
    /// Nothing by default.
    fn configure(&self, _project: &mut Project, _args: &ProjectPluginArgs) -> Result<()> {
        Ok(())
    }

    /// Render: its files and edits, for the project as the command leaves it.
    fn render(&self, plan: &mut Plan, project: &Project, vars: &ProjectVars) -> Result<()>;

    /// Record: its config in PROJECT (kubebuilder's `plugins.<key>: {}` for these plugins).
    fn record(&self, project: &mut Project);

    /// `edit` changed the project's configuration from `old` to `new` (`--sharding`): bring the
    /// plugin's files that are the user's, but hold settings `init`'s files have too, in line, as
    /// `edit` does with `init`'s files (each changed block replaced where it is as operator-rs
    /// wrote it, a refusal naming the file where it is not). Its own files come with its next
    /// run. Nothing by default.
    fn retarget(&self, _plan: &mut Plan, _old: &Project, _new: &Project) -> Result<()> {
        Ok(())
    }
}

/// The plugins that PROJECT records a project-wide part of, in the order of [`ALL`]: what `edit
/// --plugins` runs again when the project is scaffolded again.
pub fn recorded_project_parts(project: &Project) -> Vec<&'static dyn Plugin> {
    ALL.iter()
        .copied()
        .filter(|p| p.project().is_some() && project.plugins.contains_key(p.key()))
        .collect()
}

/// A kind, by group (as PROJECT records it), version and kind.
#[derive(Debug, Clone, Copy)]
pub struct Gvk<'a> {
    pub group: &'a str,
    pub version: &'a str,
    pub kind: &'a str,
}

impl<'a> Gvk<'a> {
    pub fn of(resource: &'a Resource) -> Self {
        Self {
            group: &resource.group,
            version: &resource.version,
            kind: &resource.kind,
        }
    }

    pub fn new(group: &'a Group, version: &'a Version, kind: &'a Kind) -> Self {
        Self {
            group: group.as_str(),
            version: version.as_str(),
            kind: kind.as_str(),
        }
    }
}

/// The flags of the plugins of the whole project in `edit`, under their own `--help` headings.
#[derive(Debug, Default, Args)]
pub struct ProjectPluginArgs {
    #[command(flatten)]
    pub helm: helm::Flags,
}

impl ProjectPluginArgs {
    /// Refuses the flags of a plugin that `selected` (the plugins `--plugins` names) lacks.
    pub fn check(&self, selected: &[&dyn Plugin]) -> Result<()> {
        if !selected.iter().any(|p| p.key() == helm::PLUGIN_KEY) {
            helm::refuse_flags(&self.helm)?;
        }
        Ok(())
    }
}

/// The flags of the plugins that take part in `create api`, under their own `--help` headings.
#[derive(Debug, Default, Args)]
pub struct ApiPluginArgs {
    /// Plugins to run (comma-separated): `deploy-image/v1-alpha` writes a controller that runs
    /// --image in a Deployment. Implied by --image.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "PLUGIN",
        allow_hyphen_values = true,
        help_heading = "Plugin deploy-image/v1-alpha"
    )]
    pub plugins: Vec<String>,

    #[command(flatten)]
    pub deploy_image: deploy_image::Flags,
}

/// `create api`'s flags that a plugin may require or imply, before the questions are asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiFlags {
    /// `--resource`, if given.
    pub resource: Option<bool>,
    /// `--controller`, if given.
    pub controller: Option<bool>,
    pub namespaced: bool,
    /// `--external-api-path` is given.
    pub external: bool,
}

/// A plugin's part in one `create api`, at each of the command's steps.
pub trait ApiPart {
    /// Validate: refuses the flags the part cannot work with, and sets what it implies.
    fn constrain(&self, flags: &mut ApiFlags) -> Result<()>;

    /// Validate: refuses what conflicts with the project. Nothing is written.
    fn check(&self, project: &Project, gvk: Gvk) -> Result<()>;

    /// Render: the kind's types and sample, in place of the command's own.
    fn types(&self, project: &Project, vars: &ApiVars) -> Option<Box<dyn Renderer>>;

    /// Render: the kind's controller and its tests, in place of the command's own.
    fn controller(&self, project: &Project, vars: &ApiVars) -> Option<Box<dyn Renderer>>;

    /// Render: what else it writes or edits once the command's files are planned (`controller`:
    /// this run writes a controller).
    fn render(
        &self,
        plan: &mut Plan,
        project: &Project,
        vars: &ApiVars,
        controller: bool,
    ) -> Result<()>;

    /// Record: its config in PROJECT.
    fn record(&self, project: &mut Project, gvk: Gvk);

    /// The flags of `create api` that do again what it did (`alpha generate`), as (name, value).
    fn flags(&self) -> Vec<(&'static str, String)>;

    /// The key of the plugin it is part of.
    fn key(&self) -> &'static str;
}

/// What the `--plugins` keys of a command select.
#[derive(Default)]
pub struct Selection {
    /// The plugins named, in the order given.
    pub plugins: Vec<&'static dyn Plugin>,
    /// The keys that name the base layout (`go/v4` …): nothing to run, a note to print.
    pub layout: Vec<String>,
    /// The external plugins named, in the order given: they run after the others.
    pub external: Vec<external::Found>,
}

impl std::fmt::Debug for Selection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let keys: Vec<&str> = self.plugins.iter().map(|p| p.key()).collect();
        f.debug_struct("Selection")
            .field("plugins", &keys)
            .field("layout", &self.layout)
            .field("external", &self.external)
            .finish()
    }
}

impl Selection {
    /// Whether `plugin` was named.
    pub fn has(&self, plugin: &dyn Plugin) -> bool {
        self.plugins.iter().any(|p| p.key() == plugin.key())
    }
}

/// Keys that name kubebuilder's go/v4 bundle or its parts (`go/v4` is
/// `base.go.kubebuilder.io/v4` + `kustomize.common.kubebuilder.io/v2`), or this tool's layout.
const LAYOUT_KEYS: &[&str] = &[
    "go/v4",
    "go.kubebuilder.io/v4",
    "base.go.kubebuilder.io/v4",
    "kustomize/v2",
    "kustomize.common.kubebuilder.io/v2",
    "rust/v1-alpha",
    LAYOUT,
];

/// kubebuilder's optional plugins that operator-rs does not have.
const UNAVAILABLE: &[&str] = &["helm", "kustomize/v1", "declarative"];

/// The plugins and layout keys that `keys` (the values of `--plugins`) name; `command` names the
/// command in errors. A key of no plugin of operator-rs's is looked for among the external
/// plugins.
pub fn select(keys: &[String], command: &str) -> Result<Selection, InvalidInput> {
    let mut selection = Selection::default();
    for key in keys {
        let key = key.trim();
        if LAYOUT_KEYS.contains(&key) {
            selection.layout.push(key.to_string());
        } else if let Some(plugin) = find(key) {
            if !selection.has(plugin) {
                selection.plugins.push(plugin);
            }
        } else if let Some(found) = find_external(key, command)? {
            if !selection.external.contains(&found) {
                selection.external.push(found);
            }
        } else {
            return Err(InvalidInput::new("--plugins", key, unknown(key, command)));
        }
    }
    Ok(selection)
}

/// Whether `key` names a plugin of operator-rs's, the layout, or one operator-rs refuses: not an
/// external plugin.
pub fn is_builtin(key: &str) -> bool {
    LAYOUT_KEYS.contains(&key)
        || find(key).is_some()
        || key.starts_with("go/v")
        || key.starts_with("go.kubebuilder.io/")
        || UNAVAILABLE
            .iter()
            .any(|name| key.starts_with(name) || key.split('.').next() == Some(*name))
}

/// The external plugin `key` names, for `command`: not for a key kubebuilder's refusals cover.
fn find_external(key: &str, command: &str) -> Result<Option<external::Found>, InvalidInput> {
    if is_builtin(key) {
        return Ok(None);
    }
    external::discovery::find(key)
        .map_err(|err| InvalidInput::new("--plugins", key, format!("{err:#} (for {command})")))
}

/// The plugin a key names (its record key, or one of its aliases).
pub fn find(key: &str) -> Option<&'static dyn Plugin> {
    ALL.iter()
        .copied()
        .find(|p| p.key() == key || p.short_key() == key || p.aliases().contains(&key))
}

/// Why `key` names no plugin here.
fn unknown(key: &str, command: &str) -> String {
    let available: Vec<String> = ALL
        .iter()
        .map(|p| format!("{} ({})", p.short_key(), p.usage()))
        .collect();
    let available = format!(
        "available for {command}: go/v4 (this layout) and {}",
        available.join(", ")
    );
    if key.starts_with("go/v") || key.starts_with("go.kubebuilder.io/v") {
        "is an older kubebuilder Go layout; operator-rs writes the go/v4 layout (pass --plugins go/v4 or nothing)".to_string()
    } else if let Some(name) = UNAVAILABLE
        .iter()
        .find(|name| key.starts_with(*name) || key.split('.').next() == Some(**name))
    {
        format!("is kubebuilder's {name} plugin, which operator-rs does not have; {available}")
    } else {
        let searched = external::discovery::root()
            .map(|root| format!("; no external plugin {key} in {}", root.display()))
            .unwrap_or_default();
        format!("unknown plugin; {available}{searched}")
    }
}

/// Checks the plugins' records in PROJECT (each plugin its own; keys of other tools are kept as
/// they are): an error names the key under `plugins` and the value, as [`Project::validate`] does
/// for the rest of the file.
pub fn check_configs(project: &Project) -> Result<()> {
    for (key, config) in &project.plugins {
        if let Some(plugin) = ALL.iter().find(|p| p.key() == key)
            && let Err((path, err)) = plugin.check_config(config)
        {
            return Err(crate::project::in_project(
                &format!("plugins.{key}.{path}"),
                err,
            ));
        }
    }
    Ok(())
}

/// The parts that plugins took in the `create api` of `gvk`, as PROJECT recorded them.
pub fn recorded_api(project: &Project, gvk: Gvk) -> Vec<Box<dyn ApiPart>> {
    ALL.iter()
        .filter_map(|p| p.recorded_api(project, gvk))
        .collect()
}

/// The spec of a kind as the plugin that wrote its types left it, if one did.
pub fn spec_of(project: &Project, gvk: Gvk) -> Option<SpecVars> {
    ALL.iter().find_map(|p| p.spec_of(project, gvk))
}

/// Every table of templates of the plugins, for the test of template variables.
#[cfg(test)]
pub(crate) fn tables() -> Vec<&'static dyn crate::scaffold::table::Checked> {
    let mut tables = deploy_image::tables();
    tables.extend(grafana::tables());
    tables.extend(helm::tables());
    tables.extend(autoupdate::tables());
    tables
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(keys: &[&str]) -> Vec<String> {
        keys.iter().map(|k| k.to_string()).collect()
    }

    #[test]
    fn kubebuilder_keys() {
        for key in [
            "go/v4",
            "go.kubebuilder.io/v4",
            "base.go.kubebuilder.io/v4",
            LAYOUT,
        ] {
            let selection = select(&keys(&[key]), "init").unwrap();
            assert_eq!(selection.layout, [key]);
            assert!(selection.plugins.is_empty());
        }
        for key in [
            "deploy-image/v1-alpha",
            "deploy-image.go.kubebuilder.io/v1-alpha",
            deploy_image::PLUGIN_KEY,
        ] {
            let selection = select(&keys(&[key, key]), "edit").unwrap();
            assert_eq!(selection.plugins.len(), 1, "{key}");
            assert_eq!(selection.plugins[0].key(), deploy_image::PLUGIN_KEY);
        }
        let err = select(&keys(&["helm.kubebuilder.io/v1-alpha"]), "edit").unwrap_err();
        assert!(err.to_string().contains("helm plugin"), "{err}");
        assert!(err.to_string().contains("deploy-image/v1-alpha"), "{err}");
        let err = select(&keys(&["go/v3"]), "init").unwrap_err();
        assert!(err.to_string().contains("older"), "{err}");
        assert!(select(&keys(&["nope/v1"]), "init").is_err());
    }

    #[test]
    fn every_plugin_has_keys_of_its_own() {
        let mut seen = Vec::new();
        for plugin in ALL {
            for key in [plugin.key(), plugin.short_key()]
                .into_iter()
                .chain(plugin.aliases().iter().copied())
            {
                assert!(!LAYOUT_KEYS.contains(&key), "{key}");
                assert!(!seen.contains(&key), "{key} names two plugins");
                seen.push(key);
            }
            // `--plugins <short key>` selects the plugin.
            assert_eq!(
                find(plugin.short_key()).map(|p| p.key()),
                Some(plugin.key())
            );
        }
    }
}
