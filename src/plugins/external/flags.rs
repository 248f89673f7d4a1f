//! The flags of external plugins on the command line, as kubebuilder binds them: before the
//! command line is parsed, each external plugin `--plugins` names is asked for its flags
//! (`{"command": "flags", "args": ["--init"]}`) and they become flags of the command, under a
//! `--help` heading of their own, with its description and examples (`"metadata"`) after the
//! command's help. A plugin that does not answer `flags` (or is not found) takes every flag the
//! command does not know, as in kubebuilder: the plugin, or `--plugins`'s check, says what is
//! wrong.

use std::path::Path;

use clap::{Arg, Command};

use super::discovery::{self, Found};
use super::protocol::{Flag, PluginRequest};

/// Flags kubebuilder binds itself, never a plugin's.
const RESERVED: [&str; 4] = ["group", "version", "kind", "help"];

/// `cli` with the flags of the external plugins that `argv` selects for its command; `cli`
/// itself for a command line without any.
pub fn augment(cli: Command, argv: &[String], dir: &Path) -> Command {
    let Some((subcommand, path)) = subcommand_of(argv) else {
        return cli;
    };
    let externals: Vec<String> = plugin_keys(argv)
        .into_iter()
        .filter(|key| !super::super::is_builtin(key))
        .collect();
    if externals.is_empty() {
        return cli;
    }
    let help = argv.iter().any(|a| a == "--help" || a == "-h");
    let mut known = known_flags(&cli, &path);
    let mut args = Vec::new();
    let mut about = String::new();
    let mut bind_all = false;
    for key in &externals {
        let Ok(Some(plugin)) = discovery::find(key) else {
            bind_all = true;
            continue;
        };
        match ask(&plugin, "flags", subcommand, dir) {
            Some(response) => {
                for flag in response.flags {
                    if !RESERVED.contains(&flag.name.as_str()) && known.insert(flag.name.clone()) {
                        args.push(arg(&flag, key));
                    }
                }
            }
            None => bind_all = true,
        }
        if help && let Some(response) = ask(&plugin, "metadata", subcommand, dir) {
            about.push_str(&describe(key, &response.metadata));
        }
    }
    if bind_all {
        args.extend(unknown_flags(argv, &mut known));
    }
    at(cli, &path, &mut |mut command| {
        if !about.is_empty() {
            let after = command
                .get_after_help()
                .map(|h| h.to_string())
                .unwrap_or_default();
            command = command.after_help(format!("{after}{about}"));
        }
        command.args(args.clone())
    })
}

/// The command of `argv` (skipping the global flags before it) as kubebuilder's external plugins
/// name it, and its path of subcommands.
fn subcommand_of(argv: &[String]) -> Option<(&'static str, Vec<&'static str>)> {
    let mut words = argv.iter().skip(1).filter(|a| !a.starts_with('-'));
    match words.next()?.as_str() {
        "init" => Some(("init", vec!["init"])),
        "edit" => Some(("edit", vec!["edit"])),
        "create" => match words.next()?.as_str() {
            "api" => Some(("api", vec!["create", "api"])),
            "webhook" => Some(("webhook", vec!["create", "webhook"])),
            _ => None,
        },
        _ => None,
    }
}

/// The keys `--plugins` gives (repeated or comma-separated).
fn plugin_keys(argv: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, arg) in argv.iter().enumerate() {
        let value = match arg.strip_prefix("--plugins") {
            Some(rest) if rest.starts_with('=') => Some(rest[1..].to_string()),
            Some("") => argv.get(i + 1).cloned(),
            _ => None,
        };
        for key in value.iter().flat_map(|v| v.split(',')) {
            let key = key.trim();
            if !key.is_empty() {
                out.push(key.to_string());
            }
        }
    }
    out
}

/// The long flags of the command at `path`, and the global ones.
fn known_flags(cli: &Command, path: &[&str]) -> std::collections::BTreeSet<String> {
    let mut commands = vec![cli];
    let mut current = cli;
    for name in path {
        match current.find_subcommand(name) {
            Some(sub) => {
                commands.push(sub);
                current = sub;
            }
            None => break,
        }
    }
    commands
        .iter()
        .flat_map(|c| c.get_arguments())
        .filter_map(|a| a.get_long().map(str::to_string))
        .chain(["help".to_string()])
        .collect()
}

/// Asks `plugin` for its `flags` or `metadata` of `subcommand`; None if it does not answer them.
fn ask(
    plugin: &Found,
    command: &str,
    subcommand: &str,
    dir: &Path,
) -> Option<super::protocol::PluginResponse> {
    let request = PluginRequest::new(command, vec![format!("--{subcommand}")]);
    super::call::call(plugin, &request, dir).ok()
}

/// A plugin's flag as a flag of the command: its type (`bool` takes `--flag` and
/// `--flag=false`; `int` and `float` are checked), default and usage.
fn arg(flag: &Flag, key: &str) -> Arg {
    let mut arg = Arg::new(format!("external-plugin:{}", flag.name))
        .long(flag.name.clone())
        .help(flag.usage.clone())
        .help_heading(format!("Plugin {key}"))
        .required(false);
    arg = match flag.kind.as_str() {
        "bool" => arg
            .num_args(0..=1)
            .value_name("BOOL")
            .default_missing_value("true")
            .require_equals(true),
        "int" => arg
            .value_parser(clap::value_parser!(i64))
            .allow_negative_numbers(true),
        "float" => arg
            .value_parser(clap::value_parser!(f64))
            .allow_negative_numbers(true),
        _ => arg.allow_hyphen_values(true),
    };
    if !flag.default.is_empty() {
        arg = arg.default_value(flag.default.clone());
    }
    arg.action(clap::ArgAction::Append)
}

/// kubebuilder's `bindAllFlags`: every `--flag` of `argv` the command does not know, with or
/// without a value.
fn unknown_flags(argv: &[String], known: &mut std::collections::BTreeSet<String>) -> Vec<Arg> {
    let mut out = Vec::new();
    for arg in argv.iter().skip(1) {
        let Some(name) = arg.strip_prefix("--") else {
            continue;
        };
        let name = name.split('=').next().unwrap_or(name);
        if name.is_empty() || RESERVED.contains(&name) || !known.insert(name.to_string()) {
            continue;
        }
        out.push(
            Arg::new(format!("external-plugin:{name}"))
                .long(name.to_string())
                .num_args(0..=1)
                .allow_hyphen_values(true)
                .action(clap::ArgAction::Append)
                .help(
                    "A flag for an external plugin, which operator-rs could not ask for its flags",
                )
                .help_heading("External plugins"),
        );
    }
    out
}

/// The plugin's description and examples, for `--help`.
fn describe(key: &str, metadata: &super::protocol::Metadata) -> String {
    let mut out = String::new();
    if !metadata.description.trim().is_empty() {
        out.push_str(&format!(
            "\n\nPlugin {key}:\n{}",
            metadata.description.trim_end()
        ));
    }
    if !metadata.examples.trim().is_empty() {
        out.push_str(&format!(
            "\n\nExamples of plugin {key}:\n{}",
            metadata.examples.trim_end()
        ));
    }
    out
}

/// `cli` with `f` applied to the subcommand at `path`.
fn at(cli: Command, path: &[&str], f: &mut dyn FnMut(Command) -> Command) -> Command {
    match path.split_first() {
        None => f(cli),
        Some((name, rest)) => cli.mut_subcommand(*name, |sub| at(sub, rest, f)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(line: &str) -> Vec<String> {
        line.split(' ').map(str::to_string).collect()
    }

    #[test]
    fn the_command_and_the_keys_are_read_before_parsing() {
        assert_eq!(
            subcommand_of(&argv("operator-rs --verbose create api --group g")),
            Some(("api", vec!["create", "api"]))
        );
        assert_eq!(subcommand_of(&argv("operator-rs alpha update")), None);
        assert_eq!(
            plugin_keys(&argv(
                "operator-rs init --plugins go/v4,s/v1 --plugins=t/v2"
            )),
            ["go/v4", "s/v1", "t/v2"]
        );
    }

    #[test]
    fn unknown_flags_are_taken_when_the_plugin_cannot_say() {
        let mut known = ["domain".to_string()].into_iter().collect();
        let args = unknown_flags(
            &argv("operator-rs init --domain d --ns=x --flag --group g"),
            &mut known,
        );
        let names: Vec<_> = args
            .iter()
            .map(|a| a.get_long().unwrap().to_string())
            .collect();
        assert_eq!(names, ["ns", "flag"]);
    }
}
