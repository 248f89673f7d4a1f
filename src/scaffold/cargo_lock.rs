//! The `Cargo.lock` that `init` writes, so that a new project builds the very dependency tree
//! that operator-rs's CI built and tested, on any day, without asking the registry for an index.
//!
//! `templates/init/Cargo.lock` is the lock of a reference project (written by
//! `hack/update-project-lock`) whose package is called [`PLACEHOLDER`]. A project gets it with
//! its own package name, moved to where cargo sorts it: cargo compares the lock it would write
//! with the file, so a lock out of order would be rewritten by the first build and refused by
//! `cargo build --locked`.
//!
//! A project that takes operator-rs's crates from crates.io gets `crates-io.Cargo.lock` beside
//! this file instead (from the same script): cargo locks all the dependencies of a workspace's
//! members (vendored crates), optional and dev ones included, but of a dependency only what the
//! features turned on need.

use anyhow::{Result, bail};

use super::templates;
use crate::project::RuntimeSource;

/// The package name of the reference project in the template lock.
pub const PLACEHOLDER: &str = "operator-rs-lock-reference";

/// The lock `init` writes for the project `project_name` that takes operator-rs's crates from
/// `source`.
pub fn for_source(source: RuntimeSource, project_name: &str) -> Result<String> {
    let template = match source {
        RuntimeSource::Vendored => templates::source("init/Cargo.lock")?,
        // Not a template of init's table, whose files every project gets.
        RuntimeSource::CratesIo => include_str!("crates-io.Cargo.lock"),
    };
    for_project(template, project_name)
}

/// What every `[[package]]` entry of a lock file starts with.
const ENTRY: &str = "[[package]]\n";

/// `template` (a lock file) with the package [`PLACEHOLDER`] renamed to `project_name` and
/// placed in cargo's order (by name, then version).
pub fn for_project(template: &str, project_name: &str) -> Result<String> {
    let Some(first) = template.find(ENTRY) else {
        bail!("the template Cargo.lock has no packages");
    };
    let (header, body) = template.split_at(first);
    let mut entries: Vec<String> = body
        .split(ENTRY)
        .filter(|entry| !entry.is_empty())
        .map(|entry| format!("{ENTRY}{}", entry.trim_end_matches('\n')))
        .collect();
    let placeholder_line = format!("name = \"{PLACEHOLDER}\"\n");
    let Some(index) = entries.iter().position(|e| e.contains(&placeholder_line)) else {
        bail!("the template Cargo.lock has no package {PLACEHOLDER}");
    };
    let project = entries.remove(index).replacen(
        &placeholder_line,
        &format!("name = \"{project_name}\"\n"),
        1,
    );
    let position = entries
        .iter()
        .position(|entry| name_of(entry) > project_name)
        .unwrap_or(entries.len());
    entries.insert(position, project);
    Ok(format!("{header}{}\n", entries.join("\n\n")))
}

/// The package name of one `[[package]]` entry.
fn name_of(entry: &str) -> &str {
    entry
        .lines()
        .find_map(|line| line.strip_prefix("name = \""))
        .and_then(|rest| rest.strip_suffix('"'))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lock(names: &[&str]) -> String {
        let mut text = String::from("# header\nversion = 4\n\n");
        let entries: Vec<String> = names
            .iter()
            .map(|name| format!("[[package]]\nname = \"{name}\"\nversion = \"1.0.0\""))
            .collect();
        text.push_str(&entries.join("\n\n"));
        text.push('\n');
        text
    }

    #[test]
    fn the_project_is_renamed_and_sorted() {
        let template = lock(&["anyhow", "kube", PLACEHOLDER, "serde"]);
        assert_eq!(
            for_project(&template, "memcached-operator").unwrap(),
            lock(&["anyhow", "kube", "memcached-operator", "serde"])
        );
        assert_eq!(
            for_project(&template, "zz").unwrap(),
            lock(&["anyhow", "kube", "serde", "zz"])
        );
        assert_eq!(
            for_project(&template, "a").unwrap(),
            lock(&["a", "anyhow", "kube", "serde"])
        );
    }

    #[test]
    fn the_embedded_template_has_the_reference_project() {
        let template = include_str!("../../templates/init/Cargo.lock");
        let project = for_project(template, "demo").unwrap();
        assert!(project.contains("name = \"demo\"\n"));
        assert!(project.contains("name = \"operator-rs-runtime\"\n"));
        assert!(project.contains("name = \"operator-rs-testing\"\n"));
        assert!(!project.contains(PLACEHOLDER));
    }

    /// The crates-io lock leaves out the runtime's optional dependencies that init turns off
    /// (its `webhooks` feature's certificate authority).
    #[test]
    fn the_crates_io_template_has_the_reference_project_without_optional_dependencies() {
        let project = for_source(RuntimeSource::CratesIo, "demo").unwrap();
        let runtime = project
            .split(ENTRY)
            .find(|entry| name_of(entry) == "operator-rs-runtime")
            .unwrap();
        assert!(runtime.contains(" \"kube\",\n"), "{runtime}");
        assert!(!runtime.contains(" \"rcgen\",\n"), "{runtime}");
        let vendored = for_source(RuntimeSource::Vendored, "demo").unwrap();
        assert!(vendored.contains(" \"rcgen\",\n"));
    }

    #[test]
    fn a_lock_without_the_placeholder_is_an_error() {
        assert!(for_project(&lock(&["anyhow"]), "demo").is_err());
        assert!(for_project("version = 4\n", "demo").is_err());
    }
}
