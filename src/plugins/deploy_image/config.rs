//! The plugin's record in PROJECT: `plugins.<key>.resources`, one entry per kind it wrote, with
//! the options it was given, in kubebuilder's format (numbers as strings).

use serde_yaml::{Mapping, Value};

use super::PLUGIN_KEY;
use super::flags::{Options, check_image, parse_command, parse_port, parse_run_as_user};
use crate::names::{InvalidInput, Kind, Version, is_dns1123_subdomain};
use crate::plugins::Gvk;
use crate::project::Project;

/// The plugin's records in PROJECT, in order.
pub(super) fn records(project: &Project) -> &[Value] {
    project
        .plugins
        .get(PLUGIN_KEY)
        .and_then(|config| config.get("resources"))
        .and_then(Value::as_sequence)
        .map_or(&[], Vec::as_slice)
}

/// Whether `record` is the one of `gvk`.
fn is(record: &Value, gvk: Gvk) -> bool {
    let field = |name: &str| record.get(name).and_then(Value::as_str);
    (field("group"), field("version"), field("kind"))
        == (Some(gvk.group), Some(gvk.version), Some(gvk.kind))
}

/// The record of `gvk`, if the plugin wrote that version of the kind.
pub(super) fn record_of<'p>(project: &'p Project, gvk: Gvk) -> Option<&'p Value> {
    records(project).iter().find(|r| is(r, gvk))
}

/// The options PROJECT records for `gvk` (None also when they are not valid: `check` refuses
/// such a PROJECT before any command runs).
pub(super) fn recorded(project: &Project, gvk: Gvk) -> Option<Options> {
    let record = record_of(project, gvk)?;
    let option = |name: &str| match record.get("options")?.get(name)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    Options::parse(
        &option("image")?,
        option("containerCommand").as_deref(),
        option("containerPort").as_deref(),
        option("runAsUser").as_deref(),
    )
    .ok()
}

/// Records the options of `gvk`, replacing an earlier record of the same kind and version.
pub(super) fn record(project: &mut Project, gvk: Gvk, options: &Options) {
    let mut values = Mapping::new();
    if let Some(command) = &options.command_flag {
        values.insert("containerCommand".into(), command.clone().into());
    }
    if let Some(port) = options.port {
        values.insert("containerPort".into(), port.to_string().into());
    }
    values.insert("image".into(), options.image.clone().into());
    if let Some(user) = options.run_as_user {
        values.insert("runAsUser".into(), user.to_string().into());
    }
    let mut entry = Mapping::new();
    entry.insert("domain".into(), project.domain.clone().into());
    entry.insert("group".into(), gvk.group.into());
    entry.insert("kind".into(), gvk.kind.into());
    entry.insert("options".into(), Value::Mapping(values));
    entry.insert("version".into(), gvk.version.into());

    // `plugins.<key>.resources`, created as needed (and replaced if it is not a list).
    let config = project
        .plugins
        .entry(PLUGIN_KEY.to_string())
        .or_insert_with(|| Value::Mapping(Mapping::new()));
    if !config.is_mapping() {
        *config = Value::Mapping(Mapping::new());
    }
    let Value::Mapping(config) = config else {
        unreachable!("made a mapping above")
    };
    let resources = config
        .entry("resources".into())
        .or_insert_with(|| Value::Sequence(Vec::new()));
    if !resources.is_sequence() {
        *resources = Value::Sequence(Vec::new());
    }
    let Value::Sequence(resources) = resources else {
        unreachable!("made a sequence above")
    };
    match resources.iter_mut().find(|r| is(r, gvk)) {
        Some(existing) => *existing = Value::Mapping(entry),
        None => resources.push(Value::Mapping(entry)),
    }
}

/// The environment variable the manager reads the kind's image from: `MEMCACHED_IMAGE` for
/// kind Memcached. Two groups of a multigroup project may each have a kind Memcached: the
/// first one recorded in PROJECT keeps `MEMCACHED_IMAGE`, the others get their group's name in
/// theirs (`STORE_MEMCACHED_IMAGE` for group store), so that every kind keeps its own image,
/// on every rerun.
pub(super) fn image_env(project: &Project, group: &str, kind: &str) -> String {
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
    if !kinds.iter().any(|(g, k)| g == group && k == kind) {
        kinds.push((group.to_string(), kind.to_string()));
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
        if g == group && k == kind {
            return name;
        }
        taken.push(name);
    }
    unreachable!("the kind was added to the list")
}

/// Checks the plugin's record in PROJECT with the rules of the flags it records. An error names
/// the path under `plugins.<key>` and the value.
pub(super) fn check(config: &Value) -> Result<(), (String, InvalidInput)> {
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
        check_record(record).map_err(|(field, err)| (format!("resources[{i}].{field}"), err))?;
    }
    Ok(())
}

/// One record: an error names the field in it.
fn check_record(record: &Value) -> Result<(), (String, InvalidInput)> {
    let text = |field: &str, value: Option<&Value>| -> Result<String, (String, InvalidInput)> {
        match value {
            Some(Value::String(s)) => Ok(s.clone()),
            // kubebuilder writes numbers as strings; a hand edit may not.
            Some(Value::Number(n)) => Ok(n.to_string()),
            Some(other) => Err((
                field.to_string(),
                InvalidInput::new("", &describe(other), "must be a string"),
            )),
            None => Err((field.to_string(), InvalidInput::new("", "", "is missing"))),
        }
    };
    let at = |field: &'static str| move |err| (field.to_string(), err);
    let group = text("group", record.get("group"))?;
    if !is_dns1123_subdomain(&group) {
        return Err((
            "group".into(),
            InvalidInput::new("", &group, "must be an API group like cache"),
        ));
    }
    Version::parse(&text("version", record.get("version"))?).map_err(at("version"))?;
    Kind::parse(&text("kind", record.get("kind"))?).map_err(at("kind"))?;
    let option = |name: &str| record.get("options").and_then(|o| o.get(name));
    let image = text("options.image", option("image"))?;
    check_image(&image).map_err(at("options.image"))?;
    if let Some(value) = option("containerCommand") {
        let command = text("options.containerCommand", Some(value))?;
        parse_command(&command).map_err(at("options.containerCommand"))?;
    }
    if let Some(value) = option("containerPort") {
        let port = text("options.containerPort", Some(value))?;
        parse_port(&port).map_err(at("options.containerPort"))?;
    }
    if let Some(value) = option("runAsUser") {
        let user = text("options.runAsUser", Some(value))?;
        parse_run_as_user(&user).map_err(at("options.runAsUser"))?;
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
