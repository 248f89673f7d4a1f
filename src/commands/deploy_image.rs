//! The deploy-image plugin of `create api` (kubebuilder's `deploy-image/v1-alpha`, reference
//! §7.1): a kind whose controller runs one container image in a Deployment of `spec.size` pods.
//!
//! This module owns what is specific to the plugin: its flags and their rules, its template and
//! insertion tables, the image variable it adds to the manager's Deployment, and its record under
//! `plugins:` in PROJECT. `create_api` calls it when `--image` or `--plugins=deploy-image/...` is given.

use anyhow::{Result, bail};
use serde_yaml::{Mapping, Value};
use tera::Context;

use super::resource::{InsertRow, TemplateRow, insert, user_file};
use crate::cli::DeployImageArgs;
use crate::names::{InvalidInput, Kind, rust_str_literal};
use crate::project::{Project, yaml_str};
use crate::scaffold::{Plan, line_endings};

/// The plugin's key in PROJECT, after kubebuilder's `deploy-image.go.kubebuilder.io/v1-alpha`
/// (`rust.operator-rs.io` is this tool's layout; the generated code is Rust, not Go).
pub const PLUGIN_KEY: &str = "deploy-image.rust.operator-rs.io/v1-alpha";

/// The short name `--plugins` accepts, as kubebuilder's CLI does.
pub const PLUGIN_SHORT: &str = "deploy-image/v1-alpha";

/// The kind's files: they replace the plain `create api` templates of the same paths.
pub(crate) const RESOURCE_FILES: &[TemplateRow] = &[
    user_file("deploy-image/src/api/{{ api_dir }}/{{ kind_snake }}.rs"),
    user_file("deploy-image/config/samples/{{ group }}_{{ version }}_{{ kind_lower }}.yaml"),
];

pub(crate) const CONTROLLER_FILES: &[TemplateRow] = &[
    user_file("deploy-image/src/controller/{{ controller_path }}.rs"),
    user_file("deploy-image/tests/e2e/{{ e2e_module }}.rs"),
];

pub(crate) const INSERTS: &[InsertRow] = &[insert(
    "tests/e2e/main.rs",
    "e2e-modules",
    "mod {{ e2e_module }};",
)];

/// The manager's Deployment, where the image variable goes.
const MANAGER_YAML: &str = "config/manager/manager.yaml";

/// The plugin's options, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeployImage {
    pub image: String,
    /// `--image-container-command` as given (PROJECT records it so), and split at commas.
    pub command_flag: Option<String>,
    pub command: Vec<String>,
    pub port: Option<u16>,
    pub run_as_user: Option<u32>,
}

impl DeployImage {
    /// The plugin's options if it was asked for (`--image`, or `--plugins` naming it).
    pub fn from_args(args: &DeployImageArgs) -> Result<Option<Self>> {
        let mut wanted = false;
        for plugin in &args.plugins {
            match super::plugins::classify(plugin, "create api")? {
                super::plugins::Plugin::DeployImage => wanted = true,
                // kubebuilder's layout is this one: nothing to do.
                super::plugins::Plugin::Layout => {}
            }
        }
        let Some(image) = &args.image else {
            if wanted {
                bail!(
                    "missing --image: the {PLUGIN_SHORT} plugin runs a container image for each custom \
                     resource; you MUST inform the image that will be used in the reconciliation \
                     (e.g. --image=memcached:1.6.26-alpine3.19)"
                );
            }
            return Ok(None);
        };
        check_image(image)?;
        let command = match &args.image_container_command {
            Some(flag) => parse_command(flag)?,
            None => Vec::new(),
        };
        let port = args
            .image_container_port
            .as_deref()
            .map(parse_port)
            .transpose()?;
        let run_as_user = args
            .run_as_user
            .as_deref()
            .map(parse_run_as_user)
            .transpose()?;
        Ok(Some(Self {
            image: image.clone(),
            command_flag: args.image_container_command.clone(),
            command,
            port,
            run_as_user,
        }))
    }

    /// The options PROJECT records for group/version/kind, if the plugin wrote that version.
    pub fn recorded(project: &Project, group: &str, version: &str, kind: &str) -> Option<Self> {
        let record = records(project).iter().find(|r| {
            r.get("group").and_then(Value::as_str) == Some(group)
                && r.get("version").and_then(Value::as_str) == Some(version)
                && r.get("kind").and_then(Value::as_str) == Some(kind)
        })?;
        let option = |name: &str| match record.get("options")?.get(name)? {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        };
        let command_flag = option("containerCommand");
        Some(Self {
            image: option("image")?,
            command: match &command_flag {
                Some(flag) => parse_command(flag).ok()?,
                None => Vec::new(),
            },
            command_flag,
            port: option("containerPort")
                .map(|p| parse_port(&p))
                .transpose()
                .ok()?,
            run_as_user: (option("runAsUser").map(|u| parse_run_as_user(&u)))
                .transpose()
                .ok()?,
        })
    }

    /// The environment variable the manager reads the kind's image from: `MEMCACHED_IMAGE` for
    /// kind Memcached. Two groups of a multigroup project may each have a kind Memcached: the
    /// first one recorded in PROJECT keeps `MEMCACHED_IMAGE`, the others get their group's name in
    /// theirs (`STORE_MEMCACHED_IMAGE` for group store), so that every kind keeps its own image,
    /// on every rerun.
    pub fn image_env(project: &Project, group: &str, kind: &Kind) -> String {
        let mut kinds: Vec<(String, String)> = Vec::new();
        for record in records(project) {
            let (Some(g), Some(k)) = (
                record.get("group").and_then(Value::as_str),
                record.get("kind").and_then(Value::as_str),
            ) else {
                continue;
            };
            if !kinds.iter().any(|(a, b)| a == g && b == k) {
                kinds.push((g.to_string(), k.to_string()));
            }
        }
        if !kinds.iter().any(|(g, k)| g == group && k == kind.as_str()) {
            kinds.push((group.to_string(), kind.as_str().to_string()));
        }
        let mut taken: Vec<String> = Vec::new();
        for (g, k) in kinds {
            let kind_part = heck::ToShoutySnakeCase::to_shouty_snake_case(k.as_str());
            let group_part = g.replace(['.', '-'], "_").to_uppercase();
            let name = [
                format!("{kind_part}_IMAGE"),
                format!("{group_part}_{kind_part}_IMAGE"),
            ]
            .into_iter()
            .chain((2..).map(|n| format!("{group_part}_{kind_part}_IMAGE_{n}")))
            .find(|name| !taken.contains(name))
            .expect("an endless list has a free name");
            if g == group && k == kind.as_str() {
                return name;
            }
            taken.push(name);
        }
        unreachable!("the kind was added to the list")
    }

    /// The template variables of the plugin (documented in docs/templates.md). `image_env` is
    /// [`DeployImage::image_env`].
    pub fn insert_context(
        &self,
        ctx: &mut Context,
        kind: &Kind,
        qualified_group: &str,
        image_env: &str,
    ) {
        ctx.insert("image", &self.image);
        ctx.insert("image_env", image_env);
        // Rust string literals, quoted and escaped, for `vec![...]`.
        let literals: Vec<String> = self
            .command
            .iter()
            .map(|arg| rust_str_literal(arg))
            .collect();
        ctx.insert("container_command", &literals);
        ctx.insert("has_container_port", &self.port.is_some());
        ctx.insert("container_port", &self.port.unwrap_or_default());
        ctx.insert("has_run_as_user", &self.run_as_user.is_some());
        ctx.insert("run_as_user", &self.run_as_user.unwrap_or_default());
        ctx.insert("finalizer", &format!("{qualified_group}/finalizer"));
        // A container port's name is an IANA service name: at most 15 characters.
        let port_name: String = kind.lower().chars().take(15).collect();
        ctx.insert("port_name", &port_name);
    }

    /// Records the options under `plugins:` in PROJECT, replacing an earlier record of the same
    /// group/version/kind, in kubebuilder's format (reference §3.4: numbers as strings).
    pub fn record(&self, project: &mut Project, group: &str, version: &str, kind: &str) {
        let mut options = Mapping::new();
        if let Some(command) = &self.command_flag {
            options.insert("containerCommand".into(), command.clone().into());
        }
        if let Some(port) = self.port {
            options.insert("containerPort".into(), port.to_string().into());
        }
        options.insert("image".into(), self.image.clone().into());
        if let Some(user) = self.run_as_user {
            options.insert("runAsUser".into(), user.to_string().into());
        }
        let mut entry = Mapping::new();
        entry.insert("domain".into(), project.domain.clone().into());
        entry.insert("group".into(), group.into());
        entry.insert("kind".into(), kind.into());
        entry.insert("options".into(), Value::Mapping(options));
        entry.insert("version".into(), version.into());

        // `plugins.<key>.resources`, created as needed (and replaced if it is not a list).
        let config = project
            .plugins
            .entry(PLUGIN_KEY.to_string())
            .or_insert_with(|| Value::Mapping(Mapping::new()));
        if !config.is_mapping() {
            *config = Value::Mapping(Mapping::new());
        }
        let resources = config
            .as_mapping_mut()
            .expect("a mapping")
            .entry("resources".into())
            .or_insert_with(|| Value::Sequence(Vec::new()));
        if !resources.is_sequence() {
            *resources = Value::Sequence(Vec::new());
        }
        let resources = resources.as_sequence_mut().expect("a sequence");
        let same = |r: &Value| {
            r.get("group").and_then(Value::as_str) == Some(group)
                && r.get("version").and_then(Value::as_str) == Some(version)
                && r.get("kind").and_then(Value::as_str) == Some(kind)
        };
        match resources.iter_mut().find(|r| same(r)) {
            Some(existing) => *existing = Value::Mapping(entry),
            None => resources.push(Value::Mapping(entry)),
        }
    }
}

/// The plugin's records in PROJECT (`plugins.<key>.resources`), in order.
pub(crate) fn records(project: &Project) -> &[Value] {
    project
        .plugins
        .get(PLUGIN_KEY)
        .and_then(|config| config.get("resources"))
        .and_then(Value::as_sequence)
        .map_or(&[], Vec::as_slice)
}

/// Checks the plugin's record in PROJECT (`config` under `plugins.<key>`) with the rules of the
/// flags it records; other plugins' records are theirs. An error names the key under
/// `plugins.<key>` and the value.
pub fn check_plugin_config(key: &str, config: &Value) -> Result<(), (String, InvalidInput)> {
    if key != PLUGIN_KEY {
        return Ok(());
    }
    let Some(resources) = config.get("resources") else {
        return Ok(());
    };
    let Some(resources) = resources.as_sequence() else {
        return Err((
            "resources".into(),
            InvalidInput::new("", &describe(resources), "must be a list of records"),
        ));
    };
    for (i, record) in resources.iter().enumerate() {
        let at = |field: &str| format!("resources[{i}].{field}");
        let text = |field: &str, value: Option<&Value>| -> Result<String, (String, InvalidInput)> {
            match value {
                Some(Value::String(s)) => Ok(s.clone()),
                // kubebuilder writes numbers as strings; a hand edit may not.
                Some(Value::Number(n)) => Ok(n.to_string()),
                Some(other) => Err((
                    at(field),
                    InvalidInput::new("", &describe(other), "must be a string"),
                )),
                None => Err((at(field), InvalidInput::new("", "", "is missing"))),
            }
        };
        let group = text("group", record.get("group"))?;
        if !crate::names::is_dns1123_subdomain(&group) {
            return Err((
                at("group"),
                InvalidInput::new("", &group, "must be an API group like cache"),
            ));
        }
        let version = text("version", record.get("version"))?;
        crate::names::Version::parse(&version).map_err(|e| (at("version"), e))?;
        let kind = text("kind", record.get("kind"))?;
        Kind::parse(&kind).map_err(|e| (at("kind"), e))?;
        let options = record.get("options");
        let option = |name: &str| options.and_then(|o| o.get(name));
        let image = text("options.image", option("image"))?;
        check_image(&image).map_err(|e| (at("options.image"), e))?;
        if let Some(value) = option("containerCommand") {
            let command = text("options.containerCommand", Some(value))?;
            parse_command(&command).map_err(|e| (at("options.containerCommand"), e))?;
        }
        if let Some(value) = option("containerPort") {
            let port = text("options.containerPort", Some(value))?;
            parse_port(&port).map_err(|e| (at("options.containerPort"), e))?;
        }
        if let Some(value) = option("runAsUser") {
            let user = text("options.runAsUser", Some(value))?;
            parse_run_as_user(&user).map_err(|e| (at("options.runAsUser"), e))?;
        }
    }
    Ok(())
}

/// A YAML value of the wrong type, for a message.
fn describe(value: &Value) -> String {
    serde_yaml::to_string(value)
        .unwrap_or_default()
        .trim_end()
        .to_string()
}

/// The fields of a version's spec, as `create api` wrote them: other templates (webhooks) use
/// them in their examples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecShape {
    /// `create api` without the plugin: an example field `foo`.
    Plain,
    /// `size`, and `containerPort` when the plugin was given a port.
    DeployImage { port: bool },
}

impl SpecShape {
    /// The shape of the spec of group/version/kind, from the plugin's record in PROJECT.
    pub fn of(project: &Project, group: &str, version: &str, kind: &str) -> Self {
        let recorded = records(project).iter().find(|r| {
            r.get("group").and_then(Value::as_str) == Some(group)
                && r.get("version").and_then(Value::as_str) == Some(version)
                && r.get("kind").and_then(Value::as_str) == Some(kind)
        });
        match recorded {
            Some(r) => Self::DeployImage {
                port: r
                    .get("options")
                    .and_then(|o| o.get("containerPort"))
                    .is_some(),
            },
            None => Self::Plain,
        }
    }

    /// Template variables `deploy_image_kind` and `deploy_image_port`.
    pub fn insert_context(self, ctx: &mut Context) {
        ctx.insert(
            "deploy_image_kind",
            &matches!(self, Self::DeployImage { .. }),
        );
        ctx.insert(
            "deploy_image_port",
            &(self == Self::DeployImage { port: true }),
        );
    }
}

/// Adds `<KIND>_IMAGE` to the environment of the manager container in
/// config/manager/manager.yaml (kubebuilder inserts it after `name: manager` too). An existing
/// variable of that name gets the new image; nothing else in the file changes.
pub fn add_image_env(plan: &mut Plan, name: &str, image: &str) -> Result<()> {
    plan.edit(MANAGER_YAML, |text| {
        line_endings::edit_lf(text, |text| set_env(text, name, image))
    })
}

fn set_env(text: &str, name: &str, image: &str) -> Result<String> {
    let lines: Vec<&str> = text.lines().collect();
    let indent_of = |line: &str| line.len() - line.trim_start().len();
    // The manager container: `name: manager` as a key of a container (indented, maybe `- name:`).
    let Some(container) = lines.iter().position(|l| {
        let t = l.trim_start().trim_start_matches("- ");
        t == "name: manager"
    }) else {
        bail!(
            "{MANAGER_YAML} has no container `name: manager`; add the environment variable \
             {name}={image} to the manager's container yourself, then rerun with it back in place"
        );
    };
    let key_indent = indent_of(lines[container])
        + if lines[container].trim_start().starts_with("- ") {
            2
        } else {
            0
        };
    // The container's keys run until a line indented less than them (the next container's `-`
    // is). Lists under its keys may start at the keys' own indentation, as `env:` items do.
    let end = lines[container + 1..]
        .iter()
        .position(|l| !l.trim().is_empty() && indent_of(l) < key_indent)
        .map_or(lines.len(), |i| container + 1 + i);
    // Container keys before the manager's `name:` line belong to it as well, back to the `- `
    // that starts the container.
    let start = if lines[container].trim_start().starts_with("- ") {
        container
    } else {
        lines[..container]
            .iter()
            .rposition(|l| !l.trim().is_empty() && indent_of(l) < key_indent)
            .unwrap_or(0)
    };

    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let item_indent = " ".repeat(key_indent);
    let value_line = format!("{item_indent}  value: {}", yaml_str(image));
    // `env:` may also be the container's first key, on its `- ` line.
    let env = (start..end).find(|&i| {
        let line = lines[i].trim_start();
        let column = indent_of(lines[i]) + if line.starts_with("- ") { 2 } else { 0 };
        column == key_indent && line.trim_start_matches("- ") == "env:"
    });
    match env {
        Some(env) => {
            // Items of `env:` are at the key's indentation (`- name:`) or deeper.
            let items_end = lines[env + 1..end]
                .iter()
                .position(|l| {
                    !l.trim().is_empty()
                        && !l.trim_start().starts_with('#')
                        && (indent_of(l) < key_indent
                            || (indent_of(l) == key_indent && !l.trim_start().starts_with("- ")))
                })
                .map_or(end, |i| env + 1 + i);
            let existing = (env + 1..items_end).find(|&i| {
                lines[i].trim_start().trim_start_matches("- ") == format!("name: {name}")
            });
            match existing {
                Some(i) => {
                    let value = (i + 1..items_end)
                        .find(|&j| lines[j].trim_start().starts_with("value:"))
                        .filter(|&j| indent_of(lines[j]) == key_indent + 2);
                    match value {
                        Some(j) => out[j] = value_line,
                        None => bail!(
                            "{MANAGER_YAML} sets {name} without a plain `value:`; set it to {image} yourself"
                        ),
                    }
                }
                None => {
                    out.insert(items_end, value_line);
                    out.insert(items_end, format!("{item_indent}- name: {name}"));
                }
            }
        }
        None => {
            let at = container + 1;
            out.insert(at, value_line);
            out.insert(at, format!("{item_indent}- name: {name}"));
            out.insert(
                at,
                format!(
                    "{item_indent}# The images that the controllers run (operator-rs create api --image)."
                ),
            );
            out.insert(at, format!("{item_indent}env:"));
        }
    }
    let mut result = out.join("\n");
    if text.ends_with('\n') {
        result.push('\n');
    }
    Ok(result)
}

/// A container image reference: `[registry[:port]/]path[:tag][@algorithm:digest]`, with a
/// lowercase repository path (the rules of the distribution reference grammar).
fn check_image(image: &str) -> Result<(), InvalidInput> {
    let invalid = |rule: &str| InvalidInput::new("--image", image, rule);
    const RULE: &str = "must be a container image reference like memcached:1.6.26-alpine3.19 or \
                        registry.example.com/team/memcached:1.6 (lowercase repository, optional :tag \
                        and @sha256:digest)";
    if image.is_empty() {
        return Err(invalid(
            "must not be empty: the deploy-image plugin needs an image",
        ));
    }
    if image.len() > MAX_IMAGE {
        return Err(invalid(
            "must be at most 512 characters (a repository name has at most 255)",
        ));
    }
    let (name_tag, digest) = match image.split_once('@') {
        Some((n, d)) => (n, Some(d)),
        None => (image, None),
    };
    if let Some(digest) = digest {
        let ok = digest.split_once(':').is_some_and(|(algorithm, hex)| {
            !algorithm.is_empty()
                && algorithm
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+._-".contains(c))
                && hex.len() >= 32
                && hex.chars().all(|c| c.is_ascii_hexdigit())
        });
        if !ok {
            return Err(invalid(RULE));
        }
    }
    let last_slash = name_tag.rfind('/').map_or(0, |i| i + 1);
    let (name, tag) = match name_tag[last_slash..].rfind(':') {
        Some(i) => (
            &name_tag[..last_slash + i],
            Some(&name_tag[last_slash + i + 1..]),
        ),
        None => (name_tag, None),
    };
    if let Some(tag) = tag {
        let ok = tag.len() <= 128
            && tag
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            && tag
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
        if !ok {
            return Err(invalid(RULE));
        }
    }
    let mut components: Vec<&str> = name.split('/').collect();
    // The first component is a registry host if it looks like one (has a dot or a port, or is
    // localhost); hosts may have uppercase letters and a port.
    if components.len() > 1 && (components[0].contains(['.', ':']) || components[0] == "localhost")
    {
        let host = components.remove(0);
        let (hostname, port) = match host.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (host, None),
        };
        let host_ok = !hostname.is_empty()
            && hostname.split('.').all(|label| {
                !label.is_empty()
                    && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                    && !label.starts_with('-')
                    && !label.ends_with('-')
            })
            && port.is_none_or(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
        if !host_ok {
            return Err(invalid(RULE));
        }
    }
    let component_ok = |c: &str| {
        let chars: Vec<char> = c.chars().collect();
        !chars.is_empty()
            && chars
                .iter()
                .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c))
            && chars.first().is_some_and(|c| c.is_ascii_alphanumeric())
            && chars.last().is_some_and(|c| c.is_ascii_alphanumeric())
            && !c.contains("..")
            && !c.contains("___")
    };
    if components.is_empty() || !components.iter().all(|c| component_ok(c)) || name.len() > 255 {
        return Err(invalid(RULE));
    }
    Ok(())
}

/// The longest `--image`: a repository name of 255 characters, a tag of 128 and a digest.
const MAX_IMAGE: usize = 512;

/// The longest `--image-container-command`.
const MAX_COMMAND: usize = 4096;

/// The command, split at commas. Each argument becomes a Rust string literal
/// ([`rust_str_literal`] escapes what it must) and the whole a PROJECT value ([`yaml_str`]), so
/// any visible text is fine; control characters (line breaks) are refused as the typing mistakes
/// they are.
fn parse_command(flag: &str) -> Result<Vec<String>, InvalidInput> {
    if flag.chars().count() > MAX_COMMAND {
        return Err(InvalidInput::new(
            "--image-container-command",
            flag,
            format!("must be at most {MAX_COMMAND} characters"),
        ));
    }
    let args: Vec<String> = flag.split(',').map(str::to_string).collect();
    if args
        .iter()
        .any(|a| a.is_empty() || a.chars().any(char::is_control))
    {
        return Err(InvalidInput::new(
            "--image-container-command",
            flag,
            "must be the container's command and arguments separated by commas, none of them empty \
             (e.g. \"memcached,--memory-limit=64,-v\")",
        ));
    }
    Ok(args)
}

fn parse_port(value: &str) -> Result<u16, InvalidInput> {
    match value.parse::<u16>() {
        Ok(port) if port >= 1 => Ok(port),
        _ => Err(InvalidInput::new(
            "--image-container-port",
            value,
            "must be a port number from 1 to 65535",
        )),
    }
}

fn parse_run_as_user(value: &str) -> Result<u32, InvalidInput> {
    match value.parse::<u32>() {
        Ok(uid) if (1..=i32::MAX as u32).contains(&uid) => Ok(uid),
        Ok(0) => Err(InvalidInput::new(
            "--run-as-user",
            value,
            "must not be 0 (root): the generated pods run with runAsNonRoot, which refuses root; \
             use a user ID from 1 to 2147483647",
        )),
        _ => Err(InvalidInput::new(
            "--run-as-user",
            value,
            "must be a user ID from 1 to 2147483647",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images() {
        for good in [
            "memcached:1.6.26-alpine3.19",
            "busybox",
            "docker.io/library/busybox:1.36.1",
            "localhost:5000/team/app",
            "localhost/app:dev",
            "Registry.Example.com:443/a/b_c__d:v1",
            "memcached@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "quay.io/x/y:1.0@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        ] {
            assert_eq!(check_image(good), Ok(()), "{good}");
        }
        for bad in [
            "",
            "Memcached:1",
            "memcached:",
            "memcached:-x",
            "mem cached",
            "/memcached",
            "memcached/",
            "memcached@sha256:xyz",
            "a..b",
            "memcached:1.6\"",
        ] {
            assert!(check_image(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn commands_ports_and_users() {
        assert_eq!(
            parse_command("memcached,--memory-limit=64,-o,modern,-v").unwrap(),
            ["memcached", "--memory-limit=64", "-o", "modern", "-v"]
        );
        assert!(parse_command("memcached,,-v").is_err());
        assert!(parse_command("").is_err());
        assert_eq!(parse_port("11211").unwrap(), 11211);
        for bad in ["0", "65536", "-1", "http", ""] {
            assert!(parse_port(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_run_as_user("1001").unwrap(), 1001);
        for bad in ["0", "-1", "2147483648", "root"] {
            assert!(parse_run_as_user(bad).is_err(), "{bad}");
        }
        let root = parse_run_as_user("0").unwrap_err().to_string();
        assert!(root.contains("runAsNonRoot"), "{root}");
    }

    const MANAGER: &str = "\
    spec:
      containers:
      - command:
        - /manager
        image: controller:latest
        name: manager
        ports:
        - containerPort: 8081
";

    #[test]
    fn env_is_added_after_the_container_name() {
        let once = set_env(MANAGER, "MEMCACHED_IMAGE", "memcached:1.6").unwrap();
        assert_eq!(
            once,
            "\
    spec:
      containers:
      - command:
        - /manager
        image: controller:latest
        name: manager
        env:
        # The images that the controllers run (operator-rs create api --image).
        - name: MEMCACHED_IMAGE
          value: memcached:1.6
        ports:
        - containerPort: 8081
"
        );
        // A second kind joins the list; the same kind again only changes the value.
        let twice = set_env(&once, "BUSYBOX_IMAGE", "busybox:1.36").unwrap();
        assert!(
            twice.contains(
                "          value: memcached:1.6\n        - name: BUSYBOX_IMAGE\n          value: busybox:1.36\n        ports:"
            ),
            "{twice}"
        );
        let again = set_env(&twice, "MEMCACHED_IMAGE", "memcached:1.7").unwrap();
        assert_eq!(again, twice.replace("memcached:1.6", "memcached:1.7"));
        assert_eq!(
            set_env(&again, "MEMCACHED_IMAGE", "memcached:1.7").unwrap(),
            again
        );
    }

    #[test]
    fn env_joins_an_existing_list() {
        let namespaced = MANAGER.replace(
            "        name: manager\n",
            "        name: manager\n        env:\n        # watch one namespace\n        - name: WATCH_NAMESPACE\n          valueFrom:\n            fieldRef:\n              fieldPath: metadata.namespace\n",
        );
        let edited = set_env(&namespaced, "MEMCACHED_IMAGE", "memcached:1.6").unwrap();
        assert!(
            edited.contains(
                "              fieldPath: metadata.namespace\n        - name: MEMCACHED_IMAGE\n          value: memcached:1.6\n        ports:"
            ),
            "{edited}"
        );
    }

    #[test]
    fn env_before_the_name_is_found() {
        let text = "      containers:\n      - env:\n        - name: A\n          value: a\n        name: manager\n        image: x\n      - name: sidecar\n";
        let edited = set_env(text, "B_IMAGE", "b").unwrap();
        assert_eq!(
            edited,
            "      containers:\n      - env:\n        - name: A\n          value: a\n        - name: B_IMAGE\n          value: b\n        name: manager\n        image: x\n      - name: sidecar\n"
        );
    }

    #[test]
    fn a_manifest_without_the_manager_container_is_refused() {
        let error = set_env("kind: Deployment\n", "X_IMAGE", "x").unwrap_err();
        assert!(error.to_string().contains("name: manager"), "{error}");
    }
}
