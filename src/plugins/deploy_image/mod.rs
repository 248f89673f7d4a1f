//! The deploy-image plugin of `create api` (kubebuilder's `deploy-image.go.kubebuilder.io/v1-alpha`):
//! a kind whose controller runs one container image in a Deployment of `spec.size` pods.
//!
//! It takes part in `create api` when `--image` is given (or `--plugins deploy-image/v1-alpha`,
//! which then requires `--image`): its types (with `size` and `containerPort`), sample and
//! controller stand in for the command's own (`templates/deploy-image/`, at the same paths), it
//! adds an end-to-end test and the `<KIND>_IMAGE` variable of the manager's Deployment, and it
//! records its options under `plugins:` in PROJECT, in kubebuilder's format.

mod config;
mod flags;
mod manager_env;

use anyhow::{Result, bail};
use serde::Serialize;
use serde_yaml::Value;

pub use flags::Flags;
use flags::Options;

use super::{ApiFlags, ApiPart, ApiPluginArgs, Gvk, Plugin};
use crate::names::{InvalidInput, rust_str_literal};
use crate::project::Project;
use crate::scaffold::Plan;
use crate::scaffold::table::{Bound, Renderer, Table, insert, user_file};
use crate::vars::{ApiVars, SpecVars};

/// The plugin's key in PROJECT, after kubebuilder's `deploy-image.go.kubebuilder.io/v1-alpha`
/// (`rust.operator-rs.io` is this tool's layout; the generated code is Rust, not Go).
pub const PLUGIN_KEY: &str = "deploy-image.rust.operator-rs.io/v1-alpha";

/// The short name `--plugins` accepts, as kubebuilder's CLI does.
pub const PLUGIN_SHORT: &str = "deploy-image/v1-alpha";

/// kubebuilder's key, which PROJECT files of Go projects record.
pub const GO_KEY: &str = "deploy-image.go.kubebuilder.io/v1-alpha";

/// The kind's types and sample, in place of `create api`'s.
static TYPES: Table<DeployImageVars> = Table::new(
    &[
        user_file("deploy-image/src/api/{{ api_dir }}/{{ kind_snake }}.rs"),
        user_file("deploy-image/config/samples/{{ group }}_{{ version }}_{{ kind_lower }}.yaml"),
    ],
    &[],
);

/// The kind's controller, in place of `create api`'s, and its end-to-end test.
static CONTROLLER: Table<DeployImageVars> = Table::new(
    &[
        user_file("deploy-image/src/controller/{{ controller_path }}.rs"),
        user_file("deploy-image/tests/e2e/{{ e2e_module }}.rs"),
    ],
    &[insert(
        "tests/e2e/main.rs",
        "e2e-modules",
        "mod {{ e2e_module }};",
    )],
);

/// The plugin.
pub struct DeployImage;

impl Plugin for DeployImage {
    fn key(&self) -> &'static str {
        PLUGIN_KEY
    }

    fn aliases(&self) -> &'static [&'static str] {
        &[GO_KEY]
    }

    fn short_key(&self) -> &'static str {
        PLUGIN_SHORT
    }

    fn usage(&self) -> &'static str {
        "create api --image"
    }

    fn check_config(&self, config: &Value) -> Result<(), (String, InvalidInput)> {
        config::check(config)
    }

    fn create_api(&self, args: &ApiPluginArgs, selected: bool) -> Result<Option<Box<dyn ApiPart>>> {
        Ok(Options::from_flags(&args.deploy_image, selected)?
            .map(|options| Box::new(Part { options }) as Box<dyn ApiPart>))
    }

    fn recorded_api(&self, project: &Project, gvk: Gvk) -> Option<Box<dyn ApiPart>> {
        config::recorded(project, gvk).map(|options| Box::new(Part { options }) as Box<dyn ApiPart>)
    }

    fn spec_of(&self, project: &Project, gvk: Gvk) -> Option<SpecVars> {
        let record = config::record_of(project, gvk)?;
        let port = record
            .get("options")
            .and_then(|o| o.get("containerPort"))
            .is_some();
        Some(SpecVars {
            foo: false,
            size: true,
            container_port: port,
        })
    }
}

/// The plugin's part in one `create api`: its options.
struct Part {
    options: Options,
}

impl ApiPart for Part {
    /// The plugin always writes a namespaced kind (its pods run in the custom resource's
    /// namespace) and, unless `--controller=false` (for a second version of a kind: a kind has
    /// one controller), its controller. Flags that say otherwise are refused.
    fn constrain(&self, flags: &mut ApiFlags) -> Result<()> {
        if flags.external {
            bail!(
                "--image (the deploy-image plugin) creates a kind of the project's own, not with --external-api-path"
            );
        }
        if flags.resource == Some(false) {
            return Err(InvalidInput::new(
                "--resource",
                "false",
                "the deploy-image plugin (--image) always creates the kind",
            )
            .into());
        }
        if !flags.namespaced {
            return Err(InvalidInput::new(
                "--namespaced",
                "false",
                "the deploy-image plugin (--image) needs a namespaced kind: its Deployment lives in the custom resource's namespace",
            )
            .into());
        }
        flags.resource = Some(true);
        flags.controller = Some(flags.controller.unwrap_or(true));
        Ok(())
    }

    /// The plugin's end-to-end test module (`tests/e2e/<module>.rs`) of each kind is its own.
    fn check(&self, project: &Project, gvk: Gvk) -> Result<()> {
        let mine = e2e_module(project.multigroup, gvk.group, gvk.kind);
        for record in config::records(project) {
            let field = |name: &str| record.get(name).and_then(Value::as_str);
            let (Some(group), Some(kind)) = (field("group"), field("kind")) else {
                continue;
            };
            if (group, kind) != (gvk.group, gvk.kind)
                && e2e_module(project.multigroup, group, kind) == mine
            {
                return Err(InvalidInput::new(
                    "--kind",
                    gvk.kind,
                    format!(
                        "its e2e tests would be tests/e2e/{mine}.rs, which already tests {kind} of \
                         group {group}; choose another kind"
                    ),
                )
                .into());
            }
        }
        Ok(())
    }

    fn types(&self, project: &Project, vars: &ApiVars) -> Option<Box<dyn Renderer>> {
        Some(Box::new(Bound {
            table: &TYPES,
            vars: self.vars(project, vars),
        }))
    }

    fn controller(&self, project: &Project, vars: &ApiVars) -> Option<Box<dyn Renderer>> {
        Some(Box::new(Bound {
            table: &CONTROLLER,
            vars: self.vars(project, vars),
        }))
    }

    fn render(
        &self,
        plan: &mut Plan,
        project: &Project,
        vars: &ApiVars,
        controller: bool,
    ) -> Result<()> {
        if controller {
            let variable = config::image_env(project, &vars.kind.group, &vars.kind.kind);
            manager_env::add_image_env(plan, &variable, &self.options.image)?;
        }
        Ok(())
    }

    fn record(&self, project: &mut Project, gvk: Gvk) {
        config::record(project, gvk, &self.options);
    }

    fn flags(&self) -> Vec<(&'static str, String)> {
        let options = &self.options;
        let mut flags = vec![("image", options.image.clone())];
        if let Some(command) = &options.command_flag {
            flags.push(("image-container-command", command.clone()));
        }
        if let Some(port) = options.port {
            flags.push(("image-container-port", port.to_string()));
        }
        if let Some(user) = options.run_as_user {
            flags.push(("run-as-user", user.to_string()));
        }
        flags
    }

    fn key(&self) -> &'static str {
        PLUGIN_KEY
    }
}

impl Part {
    fn vars(&self, project: &Project, api: &ApiVars) -> DeployImageVars {
        let kind = &api.kind;
        let options = &self.options;
        DeployImageVars {
            api: api.clone(),
            image: options.image.clone(),
            image_env: config::image_env(project, &kind.group, &kind.kind),
            // Rust string literals, quoted and escaped, for `vec![...]`.
            container_command: options
                .command
                .iter()
                .map(|a| rust_str_literal(a))
                .collect(),
            has_container_port: options.port.is_some(),
            container_port: options.port.unwrap_or_default(),
            has_run_as_user: options.run_as_user.is_some(),
            run_as_user: options.run_as_user.unwrap_or_default(),
            finalizer: format!("{}/finalizer", kind.qualified_group),
            // A container port's name is an IANA service name: at most 15 characters.
            port_name: kind.kind_lower.chars().take(15).collect(),
            api_path: format!("api::{}", api.types.api_rel_module),
            e2e_module: e2e_module(project.multigroup, &kind.group, &kind.kind),
            sample_file: format!(
                "config/samples/{}_{}_{}.yaml",
                kind.group, kind.version, kind.kind_lower
            ),
            sample_name: format!("{}-sample", kind.kind_lower),
        }
    }
}

/// The module of a kind's end-to-end test under `tests/e2e/`: `memcached`, or `cache_memcached`
/// in the multigroup layout, where two groups may share a kind.
fn e2e_module(multigroup: bool, group: &str, kind: &str) -> String {
    let kind_snake = heck::ToSnakeCase::to_snake_case(kind);
    if multigroup {
        format!("{}_{kind_snake}", group.replace(['.', '-'], "_"))
    } else {
        kind_snake
    }
}

/// The plugin's variables, beside `create api`'s.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DeployImageVars {
    #[serde(flatten)]
    pub api: ApiVars,
    /// `--image`.
    pub image: String,
    /// The manager's environment variable that holds the image: `MEMCACHED_IMAGE`.
    pub image_env: String,
    /// The container's command and arguments, as Rust string literals.
    pub container_command: Vec<String>,
    pub has_container_port: bool,
    pub container_port: u16,
    pub has_run_as_user: bool,
    pub run_as_user: u32,
    /// The controller's finalizer: `<group>/finalizer`.
    pub finalizer: String,
    /// The name of the container's port (at most 15 characters).
    pub port_name: String,
    /// The kind's module under the crate: `api::v1alpha1`.
    pub api_path: String,
    /// The end-to-end test's module (see [`e2e_module`]).
    pub e2e_module: String,
    /// The sample's file and its object's name, which the end-to-end test applies.
    pub sample_file: String,
    pub sample_name: String,
}

#[cfg(test)]
pub(crate) fn tables() -> Vec<&'static dyn crate::scaffold::table::Checked> {
    vec![&TYPES, &CONTROLLER]
}
