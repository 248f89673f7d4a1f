//! External plugins, with kubebuilder's protocol: executables in any language, found where
//! kubebuilder finds them ([`discovery`]), told the command, its flags, the project's files and
//! PROJECT as JSON on stdin and answering the files they write as JSON on stdout ([`protocol`],
//! [`call`]). `--plugins <name>/<version>` runs one after the built-in plugins of `init`, `create
//! api`, `create webhook` and `edit`, several in the order given, each seeing the files of the
//! ones before; its flags are the command's ([`flags`]).
//!
//! What a plugin answers becomes part of the command's plan ([`changes`] checks it): the files it
//! adds are written with the command's, all or nothing; it may not change a file that exists
//! (operator-rs never overwrites a project's files), write outside the project, write Go source
//! (an operator-rs project is Rust), or change PROJECT but for its own entry under `plugins:`.

pub mod call;
pub mod discovery;
pub mod flags;
pub mod protocol;

use std::collections::BTreeMap;

use anyhow::{Result, bail};
use serde_yaml::Value;

pub use discovery::Found;
use protocol::PluginResponse;

/// The flags of a command line that kubebuilder passes to external plugins (its
/// `parseExternalPluginArgs`): every argument that starts with `--`, but `--plugins`, each with
/// the argument after it unless that one starts with `--`.
pub fn args_of(argv: &[String]) -> Vec<String> {
    let is_plugins = |a: &str| a == "--plugins" || a.starts_with("--plugins=");
    let mut out = Vec::new();
    for (i, arg) in argv.iter().enumerate() {
        if arg.starts_with("--") && !is_plugins(arg) {
            out.push(arg.clone());
            if let Some(next) = argv.get(i + 1).filter(|n| !n.starts_with("--")) {
                out.push(next.clone());
            }
        }
    }
    out
}

/// What one plugin's answer changes, checked.
#[derive(Debug, Default, PartialEq)]
pub struct Changes {
    /// Files it adds or changes, by path: only those that differ from what it was sent.
    pub files: BTreeMap<String, String>,
    /// Its entry under `plugins:` in PROJECT (`plugins.<key>`), if it wrote one.
    pub project_entry: Option<Value>,
}

/// The changes of `response`, `plugin`'s answer to the files `sent` (PROJECT among them under
/// `project_file`); refused, naming the path, for a path outside the project, Go source, or a
/// change of PROJECT beyond the plugin's entry.
pub fn changes(
    key: &str,
    sent: &BTreeMap<String, String>,
    response: &PluginResponse,
    project_file: &str,
) -> Result<Changes> {
    let mut out = Changes::default();
    let Some(universe) = &response.universe else {
        return Ok(out);
    };
    for (given, text) in universe {
        let path = project_path(given).ok_or_else(|| {
            anyhow::anyhow!(
                "plugin {key} answered a file outside the project: {given:?}; nothing was written"
            )
        })?;
        if sent.get(&path) == Some(text) {
            continue;
        }
        if path == project_file {
            out.project_entry = project_entry(key, sent.get(&path), text)?;
            continue;
        }
        if path.ends_with(".go") {
            bail!(
                "plugin {key} writes Go source ({path}), which an operator-rs project (Rust) cannot \
                 build; nothing was written"
            );
        }
        out.files.insert(path, text.clone());
    }
    Ok(out)
}

/// `given` as a path of the project: relative, `/`-separated, without `.` steps; None for one
/// that leaves it (absolute, `..`), or names git's or operator-rs's own files.
fn project_path(given: &str) -> Option<String> {
    let parts: Vec<&str> = given
        .split(['/', '\\'])
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    let bad = given.starts_with(['/', '\\'])
        || given.contains(':')
        || parts.is_empty()
        || parts
            .iter()
            .any(|p| *p == ".." || p.chars().any(char::is_control))
        || parts[0] == ".git"
        || (parts.len() == 1 && parts[0].starts_with(".operator-rs."));
    (!bad).then(|| parts.join("/"))
}

/// The plugin's own entry of PROJECT as it answered it (`plugins.<key>`); any other change of
/// PROJECT is refused: operator-rs writes PROJECT.
fn project_entry(key: &str, sent: Option<&String>, answered: &str) -> Result<Option<Value>> {
    let parse = |text: &str| -> Result<Value> {
        serde_yaml::from_str(text)
            .map_err(|e| anyhow::anyhow!("plugin {key} answered a PROJECT that is not YAML: {e}"))
    };
    let mut before = sent.map(|t| parse(t)).transpose()?.unwrap_or(Value::Null);
    let mut after = parse(answered)?;
    let entry = take_entry(&mut after, key);
    let _ = take_entry(&mut before, key);
    if before != after {
        bail!(
            "plugin {key} changed PROJECT beyond its own entry (plugins.{key}): operator-rs writes \
             PROJECT; nothing was written"
        );
    }
    Ok(entry)
}

/// Removes and returns `plugins.<key>`; an emptied `plugins` goes too.
fn take_entry(project: &mut Value, key: &str) -> Option<Value> {
    let map = project.as_mapping_mut()?;
    let plugins = map.get_mut("plugins")?.as_mapping_mut()?;
    let entry = plugins.remove(key);
    if plugins.is_empty() {
        map.remove("plugins");
    }
    entry
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(line: &str) -> Vec<String> {
        line.split(' ').map(str::to_string).collect()
    }

    #[test]
    fn args_are_kubebuilders() {
        assert_eq!(
            args_of(&argv(
                "operator-rs init --plugins go/v4,sample/v1 --domain my.domain --owner=Acme -q --fetch-deps"
            )),
            [
                "--domain",
                "my.domain",
                "--owner=Acme",
                "-q",
                "--fetch-deps"
            ]
        );
        assert_eq!(
            args_of(&argv(
                "operator-rs edit --plugins=sample/v1 --prometheus-namespace mon"
            )),
            ["--prometheus-namespace", "mon"]
        );
    }

    fn response(universe: &[(&str, &str)]) -> PluginResponse {
        PluginResponse {
            universe: Some(
                universe
                    .iter()
                    .map(|(p, t)| (p.to_string(), t.to_string()))
                    .collect(),
            ),
            ..PluginResponse::default()
        }
    }

    #[test]
    fn only_what_changed_is_taken() {
        let sent = BTreeMap::from([("Makefile".to_string(), "all:\n".to_string())]);
        let changes = changes(
            "s/v1",
            &sent,
            &response(&[("Makefile", "all:\n"), ("./config/p/a.yaml", "a: 1\n")]),
            "PROJECT",
        )
        .unwrap();
        assert_eq!(
            changes.files,
            BTreeMap::from([("config/p/a.yaml".to_string(), "a: 1\n".to_string())])
        );
    }

    #[test]
    fn paths_outside_the_project_and_go_are_refused() {
        let sent = BTreeMap::new();
        for bad in [
            "../x",
            "/etc/passwd",
            "a/../../b",
            ".git/config",
            "C:\\x",
            ".operator-rs.lock",
        ] {
            let err = changes("s/v1", &sent, &response(&[(bad, "x")]), "PROJECT").unwrap_err();
            assert!(
                err.to_string().contains("outside the project"),
                "{bad}: {err}"
            );
        }
        let err = changes(
            "s/v1",
            &sent,
            &response(&[("api/v1/x.go", "package v1")]),
            "PROJECT",
        )
        .unwrap_err();
        assert!(err.to_string().contains("Go source"), "{err}");
    }

    #[test]
    fn project_may_change_by_the_plugins_entry_only() {
        let sent = BTreeMap::from([(
            "PROJECT".to_string(),
            "domain: d\nlayout:\n- l\nversion: \"3\"\n".to_string(),
        )]);
        let mine = "domain: d\nlayout: [l]\nversion: '3'\nplugins:\n  s/v1:\n    namespace: mon\n";
        let changes = changes("s/v1", &sent, &response(&[("PROJECT", mine)]), "PROJECT").unwrap();
        assert_eq!(
            changes.project_entry,
            Some(serde_yaml::from_str("namespace: mon").unwrap())
        );
        let theirs = "domain: other\nlayout: [l]\nversion: '3'\n";
        let err = super::changes("s/v1", &sent, &response(&[("PROJECT", theirs)]), "PROJECT")
            .unwrap_err();
        assert!(err.to_string().contains("beyond its own entry"), "{err}");
    }
}
