//! Where a project takes operator-rs's crates from (`init --runtime`, `edit --runtime`, PROJECT's
//! `runtime`): copies in the project (`vendored`: the folders `operator-rs-runtime/` and
//! `operator-rs-testing/`, [`crate::runtime_crate`]) or crates.io (`crates-io`: dependencies by
//! version, no runtime sources in the project).
//!
//! The choice is one place of the project's `Cargo.toml`: the `[workspace.dependencies]` entries
//! of the two crates (a version and the path of the copy, or a version alone), and the copies in
//! `[workspace] members`. [`set_in_manifest`] writes it there and leaves the rest of the file as
//! it is; `init` and `edit --runtime` both go through it.

use std::sync::LazyLock;

use anyhow::{Result, bail};
use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, Value};

use crate::project::RuntimeSource;
use crate::runtime_crate::CRATES;

/// Whether operator-rs's crates are on crates.io: flipped at the release that publishes them,
/// which makes `crates-io` the default of `init --runtime` (docs/runtime.md, "Publishing").
pub const PUBLISHED: bool = false;

/// What `init` takes without `--runtime`.
pub const DEFAULT: RuntimeSource = if PUBLISHED {
    RuntimeSource::CratesIo
} else {
    RuntimeSource::Vendored
};

/// The version of operator-rs's crates this operator-rs ships (the runtime's and the testing
/// crate's, which move together): the version a project names in either mode.
pub static VERSION: LazyLock<String> = LazyLock::new(|| {
    let manifest = include_str!("../embedded-runtime/Cargo.toml.in");
    let doc: DocumentMut = manifest.parse().expect("runtime/Cargo.toml is TOML");
    doc["package"]["version"]
        .as_str()
        .expect("runtime/Cargo.toml has a package version")
        .to_owned()
});

/// What a user is told when a project takes the crates from crates.io before they are there.
pub fn unpublished_note(source: RuntimeSource) -> Option<String> {
    (source == RuntimeSource::CratesIo && !PUBLISHED).then(|| {
        format!(
            "operator-rs-runtime and operator-rs-testing {} are not on crates.io yet: until they \
             are, the project builds with a [patch.crates-io] of both to a checkout of operator-rs \
             (see docs/runtime.md)",
            *VERSION
        )
    })
}

/// The project's `Cargo.toml` (`text`, named `path` in errors) taking operator-rs's crates from
/// `source`: the crates' `[workspace.dependencies]` entries name [`VERSION`], with the path of
/// the copy when vendored (their other keys, such as features, are kept), and `[workspace]
/// members` holds the copies exactly when vendored (other members are kept). Unchanged when it
/// already says so.
pub fn set_in_manifest(text: &str, path: &str, source: RuntimeSource) -> Result<String> {
    let mut doc: DocumentMut = match text.parse() {
        Ok(doc) => doc,
        Err(error) => bail!("cannot read {path} as TOML: {}", one_line(&error, text)),
    };
    let Some(workspace) = doc.get_mut("workspace").and_then(Item::as_table_mut) else {
        bail!(
            "{path} has no [workspace] table: operator-rs's crates are named in its \
             [workspace.dependencies] (see docs/runtime.md)"
        );
    };
    let vendored = source == RuntimeSource::Vendored;
    let mut changed = set_members(workspace, vendored);
    if !workspace.contains_key("dependencies") {
        workspace.insert("dependencies", Item::Table(Table::new()));
        changed = true;
    }
    let Some(dependencies) = workspace
        .get_mut("dependencies")
        .and_then(Item::as_table_like_mut)
    else {
        bail!("{path}: [workspace.dependencies] is not a table");
    };
    for krate in &CRATES {
        let path = vendored.then_some(krate.dir);
        let current = dependencies.get(krate.name).and_then(Item::as_value);
        if let Some(value) = entry(current, &VERSION, path) {
            dependencies.insert(krate.name, Item::Value(value));
            changed = true;
        }
    }
    Ok(if changed {
        doc.to_string()
    } else {
        text.to_owned()
    })
}

/// A TOML error on one line, with the line it is on (toml_edit's own message draws the line).
fn one_line(error: &toml_edit::TomlError, text: &str) -> String {
    let message = error
        .message()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    match error.span() {
        Some(span) => {
            let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
            format!("{message} (line {line})")
        }
        None => message,
    }
}

/// Makes `members` hold the vendored crates' folders exactly when `vendored`; whether it changed.
fn set_members(workspace: &mut Table, vendored: bool) -> bool {
    let is_vendored = |value: &Value| {
        value
            .as_str()
            .is_some_and(|member| CRATES.iter().any(|k| k.dir == member))
    };
    let mut members = match workspace.get("members").and_then(Item::as_array) {
        Some(members) => members.clone(),
        None => Array::new(),
    };
    let before = members.clone();
    members.retain(|value| !is_vendored(value));
    if vendored {
        for krate in &CRATES {
            members.push(krate.dir);
        }
    }
    let same = members.len() == before.len()
        && members
            .iter()
            .zip(before.iter())
            .all(|(a, b)| a.as_str() == b.as_str());
    if same {
        return false;
    }
    if members.is_empty() {
        workspace.remove("members");
    } else {
        workspace.insert("members", Item::Value(Value::Array(members)));
    }
    true
}

/// The dependency entry naming `version` (and `path`, when vendored), first, then the other keys
/// of `current` (`default-features`, `features`); `None` when `current` already says exactly that.
fn entry(current: Option<&Value>, version: &str, path: Option<&str>) -> Option<Value> {
    let says = |table: &InlineTable| {
        table.get("version").and_then(Value::as_str) == Some(version)
            && table.get("path").and_then(Value::as_str) == path
    };
    match current {
        Some(Value::String(current)) if path.is_none() && current.value() == version => {
            return None;
        }
        Some(Value::InlineTable(table)) if says(table) => return None,
        _ => {}
    }
    let mut table = InlineTable::new();
    table.insert("version", version.into());
    if let Some(path) = path {
        table.insert("path", path.into());
    }
    if let Some(Value::InlineTable(current)) = current {
        let others = current
            .iter()
            .filter(|(key, _)| !["version", "path"].contains(key));
        for (key, value) in others {
            table.insert(key, value.clone());
        }
    }
    // A version alone is written as cargo's documentation writes it: `name = "0.2.0"`.
    if table.len() == 1 {
        return Some(version.into());
    }
    table.fmt();
    Some(Value::InlineTable(table))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEMPLATE: &str = include_str!("../templates/init/Cargo.toml.in");

    fn workspace_dependencies(text: &str) -> Vec<String> {
        let doc: DocumentMut = text.parse().unwrap();
        doc["workspace"]["dependencies"]
            .as_table()
            .unwrap()
            .iter()
            .map(|(name, item)| format!("{name} = {}", item.as_value().unwrap().to_string().trim()))
            .collect()
    }

    fn members(text: &str) -> Vec<String> {
        let doc: DocumentMut = text.parse().unwrap();
        match doc["workspace"].get("members") {
            Some(members) => members
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m.as_str().unwrap().to_owned())
                .collect(),
            None => Vec::new(),
        }
    }

    /// The template writes the vendored form: vendoring it changes nothing, and its versions are
    /// the runtime's.
    #[test]
    fn the_template_is_the_vendored_form_of_this_version() {
        let vendored = set_in_manifest(TEMPLATE, "Cargo.toml", RuntimeSource::Vendored).unwrap();
        assert_eq!(vendored, TEMPLATE);
        assert_eq!(
            workspace_dependencies(TEMPLATE),
            [
                format!(
                    r#"operator-rs-runtime = {{ version = "{}", path = "operator-rs-runtime", default-features = false }}"#,
                    *VERSION
                ),
                format!(
                    r#"operator-rs-testing = {{ version = "{}", path = "operator-rs-testing" }}"#,
                    *VERSION
                ),
            ]
        );
    }

    #[test]
    fn from_crates_io_the_crates_are_versions_and_no_members() {
        let text = set_in_manifest(TEMPLATE, "Cargo.toml", RuntimeSource::CratesIo).unwrap();
        assert_eq!(
            workspace_dependencies(&text),
            [
                format!(
                    r#"operator-rs-runtime = {{ version = "{}", default-features = false }}"#,
                    *VERSION
                ),
                format!(r#"operator-rs-testing = "{}""#, *VERSION),
            ]
        );
        assert!(members(&text).is_empty());
        assert!(text.contains("\n[workspace]\n"), "{text}");
        // Everything else is as it was: the dependencies, the profiles, the comments.
        let rest = |t: &str| -> String {
            t.lines()
                .filter(|l| !l.starts_with("operator-rs-") && !l.starts_with("members ="))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(rest(&text), rest(TEMPLATE));
        // And back: the template again.
        let back = set_in_manifest(&text, "Cargo.toml", RuntimeSource::Vendored).unwrap();
        assert_eq!(
            workspace_dependencies(&back),
            workspace_dependencies(TEMPLATE)
        );
        assert_eq!(
            members(&back),
            ["operator-rs-runtime", "operator-rs-testing"]
        );
    }

    /// A user's own members and the features they gave the crates stay across a switch; an old
    /// version is moved to this one.
    #[test]
    fn the_users_members_and_features_stay() {
        let text = r#"[package]
name = "p"

[workspace]
members = ["operator-rs-runtime", "tools/gen", "operator-rs-testing"]

[workspace.dependencies]
operator-rs-runtime = { version = "0.1.0", path = "operator-rs-runtime" }
operator-rs-testing = { version = "0.1.0", path = "operator-rs-testing", features = ["envtest"] }
"#;
        let text = set_in_manifest(text, "Cargo.toml", RuntimeSource::CratesIo).unwrap();
        assert_eq!(members(&text), ["tools/gen"]);
        assert_eq!(
            workspace_dependencies(&text),
            [
                format!(r#"operator-rs-runtime = "{}""#, *VERSION),
                format!(
                    r#"operator-rs-testing = {{ version = "{}", features = ["envtest"] }}"#,
                    *VERSION
                ),
            ]
        );
        let text = set_in_manifest(&text, "Cargo.toml", RuntimeSource::Vendored).unwrap();
        assert_eq!(
            members(&text),
            ["tools/gen", "operator-rs-runtime", "operator-rs-testing"]
        );
    }

    #[test]
    fn a_manifest_without_a_workspace_is_refused() {
        let error = set_in_manifest("[package]\nname = \"p\"\n", "Cargo.toml", DEFAULT)
            .unwrap_err()
            .to_string();
        assert!(error.contains("no [workspace] table"), "{error}");
        let error = set_in_manifest("[workspace\n", "Cargo.toml", DEFAULT)
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("cannot read Cargo.toml as TOML"),
            "{error}"
        );
    }
}
