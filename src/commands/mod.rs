//! One module per command: each turns validated arguments into a [`crate::scaffold::Plan`].

pub mod alpha;
pub mod bundle;
pub mod catalog;
mod cluster_rbac;
pub mod completion;
mod controllers;
pub mod create_api;
pub mod create_webhook;
pub mod edit;
mod external_types;
pub mod generate;
pub mod init;
mod layout;
mod plugin_chain;
mod sharding;
pub mod version;
mod webhook_certs;

use std::borrow::Cow;
use std::io::{Read as _, Write as _};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context as _, Result};

use crate::boilerplate::BOILERPLATE_FILE;
use crate::builtin::{self, BuiltinKind};
use crate::names::{Group, InvalidInput, Kind, Version};
use crate::plugins;
use crate::project::Project;
use crate::scaffold::{self, Plan, line_endings};

/// Reads PROJECT from a project root and checks it: its values (see `Project::validate`) and
/// the plugins' records in it.
pub fn load_project(dir: &Path) -> Result<Project> {
    let project = Project::load(dir)?;
    plugins::check_configs(&project)?;
    Ok(project)
}

/// `--verbose`: show the output of the programs operator-rs runs (`make manifests`) as they run.
static VERBOSE: AtomicBool = AtomicBool::new(false);

/// Sets `--verbose` for the rest of the process (the binary does, from the command line).
pub fn set_verbose(verbose: bool) {
    VERBOSE.store(verbose, Ordering::Relaxed);
}

pub(crate) fn verbose() -> bool {
    VERBOSE.load(Ordering::Relaxed)
}

/// Formats the plan's Rust files (one rustfmt process for all of them), then prints the plan
/// for `--dry-run`, or writes it all or nothing.
pub fn finish(plan: &Plan, dry_run: bool) -> Result<()> {
    let mut plan = Cow::Borrowed(plan);
    if plan.needs_rustfmt() {
        plan.to_mut().format_rust()?;
    }
    if dry_run {
        print!("{}", plan.describe());
        println!("(dry run: nothing was written)");
        return Ok(());
    }
    scaffold::apply(&plan)
}

/// A kind of another project (`--external-api-path`, or as PROJECT records one): the name its
/// CRD gives it, with a Rust type name that no name of the templates takes (`Kind::parse_foreign`).
pub(crate) fn parse_foreign_kind(value: &str) -> Result<Kind, InvalidInput> {
    Kind::parse_foreign(value, create_api::RESERVED_KINDS)
}

/// `--resource=false` on a built-in group: the kind has to exist in Kubernetes.
pub(crate) fn find_builtin(
    group: &Group,
    version: &Version,
    kind: &Kind,
) -> Result<Option<BuiltinKind>> {
    if !builtin::is_builtin_group(group.as_str()) {
        return Ok(None);
    }
    match builtin::find(group.as_str(), version.as_str(), kind.as_str()) {
        Some(b) => Ok(Some(b)),
        None => Err(InvalidInput::new(
            "--kind",
            kind.as_str(),
            format!(
                "is not a built-in kind of {}/{}; known: {}",
                group.as_str(),
                version.as_str(),
                builtin::kinds_of(group.as_str()).join(", ")
            ),
        )
        .into()),
    }
}

/// The license header of the project (empty when there is none), checked: it goes on top of every
/// generated Rust file, so it must be comment lines only. With LF line endings whatever the file's
/// (the files it heads are written with LF line endings).
pub(crate) fn read_boilerplate(dir: &Path) -> Result<String> {
    let text = match std::fs::read_to_string(dir.join(BOILERPLATE_FILE)) {
        Ok(text) => line_endings::to_lf(&text).into_owned(),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(err) => return Err(err).with_context(|| format!("reading {BOILERPLATE_FILE}")),
    };
    crate::boilerplate::check_header(&text).map_err(|problem| {
        anyhow::anyhow!(
            "{BOILERPLATE_FILE} {problem}; it goes on top of every generated Rust file: correct it, \
             or delete it to write no header"
        )
    })?;
    Ok(text)
}

/// kubebuilder's `--make`: bring the manifests in line right away. A failure is not fatal (the
/// scaffold is complete); it says how to retry. The output (cargo's, mostly) is shown only if it
/// fails, or as it comes with `--verbose`.
pub(crate) fn run_make_manifests(dir: &Path) {
    let mut make = Command::new("make");
    make.arg("manifests").current_dir(dir);
    let result = if verbose() {
        println!("$ make manifests");
        make.status()
    } else {
        println!(
            "running make manifests (the first build of a project compiles its dependencies and \
             can take a few minutes)…"
        );
        let _ = std::io::stdout().flush();
        run_quietly(make).map(|(status, output)| {
            if !status.success() {
                let _ = std::io::stderr().write_all(&output);
            }
            status
        })
    };
    match result {
        Ok(status) if status.success() => {}
        Ok(status) => {
            eprintln!("warning: `make manifests` failed ({status}); fix the error and run it again")
        }
        Err(err) => eprintln!("warning: could not run `make manifests` ({err}); run it yourself"),
    }
}
/// Runs `command` with its stdout and stderr captured together, in the order they were written.
pub(crate) fn run_quietly(mut command: Command) -> std::io::Result<(ExitStatus, Vec<u8>)> {
    let (mut reader, writer) = std::io::pipe()?;
    let mut child = command
        .stdin(Stdio::null())
        .stdout(writer.try_clone()?)
        .stderr(writer)
        .spawn()?;
    // The command holds the pipe's write ends: close them, or reading never ends.
    drop(command);
    let mut output = Vec::new();
    let read = reader.read_to_end(&mut output);
    let status = child.wait()?;
    read?;
    Ok((status, output))
}

/// Every table of templates of the commands and the plugins, each with its variables' type.
#[cfg(test)]
fn all_tables() -> Vec<&'static dyn crate::scaffold::table::Checked> {
    let mut tables: Vec<&'static dyn crate::scaffold::table::Checked> =
        vec![&init::FILES, &generate::OLM_FILES, &catalog::FILES];
    tables.extend(create_api::tables());
    tables.extend(create_webhook::tables());
    tables.extend(webhook_certs::tables());
    tables.extend(layout::tables());
    tables.extend(external_types::tables());
    tables.extend(cluster_rbac::tables());
    tables.extend(sharding::tables());
    tables.extend(plugins::tables());
    tables
}

#[cfg(test)]
mod template_tests {
    use std::collections::{BTreeMap, BTreeSet};

    use crate::scaffold::{template_variables, templates};

    /// The names of `names` that are not a field of `fields` (dotted names: a field of a field).
    fn unknown(names: &BTreeSet<String>, fields: &serde_json::Value) -> Vec<String> {
        names
            .iter()
            .filter(|name| {
                let mut value = fields;
                for part in name.split('.') {
                    match value.get(part) {
                        Some(inner) => value = inner,
                        None => return true,
                    }
                }
                false
            })
            .cloned()
            .collect()
    }

    /// Every name a template uses, in `{{ }}`, `{% if %}` or `{% for %}`, in its text, its output
    /// path or an insertion, is a field of the type of variables its table is rendered with: a
    /// misspelt name fails here instead of rendering as false.
    #[test]
    fn every_template_names_only_fields_of_its_variables() {
        let mut problems = Vec::new();
        for table in super::all_tables() {
            let fields = table.fields();
            for (what, text) in table.texts() {
                let names = template_variables::variables(&what, text).unwrap();
                for name in unknown(&names, &fields) {
                    problems.push(format!("{what}: {name}"));
                }
            }
        }
        assert!(
            problems.is_empty(),
            "names that are no field of the table's variables: {problems:#?}"
        );
    }

    /// Every template belongs to exactly one table, so it is checked, with one type of variables.
    #[test]
    fn every_template_is_in_one_table() {
        let mut tables_of: BTreeMap<&str, usize> = BTreeMap::new();
        for table in super::all_tables() {
            for template in table.templates() {
                *tables_of.entry(template).or_default() += 1;
            }
        }
        let all = templates::list("");
        let outside: Vec<_> = all.iter().filter(|t| !tables_of.contains_key(*t)).collect();
        assert!(outside.is_empty(), "templates in no table: {outside:#?}");
        let twice: Vec<_> = tables_of.iter().filter(|(_, n)| **n > 1).collect();
        assert!(twice.is_empty(), "templates in several tables: {twice:#?}");
        assert!(all.len() > 80, "found only {} templates", all.len());
    }

    /// The check finds a misspelt name wherever tera would render it as nothing or as false.
    #[test]
    fn the_check_finds_misspelt_names() {
        let fields =
            serde_json::json!({"namespaced": true, "kind": "Captain", "spec": {"foo": true}});
        for (text, misspelt) in [
            ("{% if namespacd %}x{% endif %}", "namespacd"),
            ("{{ knid }}", "knid"),
            ("{% if spec.fo %}x{% endif %}", "spec.fo"),
            ("{% for a in kinds %}{{ a }}{% endfor %}", "kinds"),
            (
                "{% if kind == \"Pod\" and not namespced %}x{% endif %}",
                "namespced",
            ),
            ("{{ kind | replace(from=\"a\", to=sep) }}", "sep"),
        ] {
            let names = template_variables::variables("test", text).unwrap();
            assert_eq!(unknown(&names, &fields), [misspelt], "{text}");
        }
        let names = template_variables::variables(
            "test",
            "{% for a in spec %}{{ a }}{{ loop.index }}{% endfor %}",
        )
        .unwrap();
        assert!(unknown(&names, &fields).is_empty(), "{names:?}");
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn quiet_runs_keep_the_output_in_order() {
        let mut sh = Command::new("sh");
        sh.args(["-c", "echo one; echo two >&2; echo three; exit 3"]);
        let (status, output) = run_quietly(sh).unwrap();
        assert_eq!(status.code(), Some(3));
        assert_eq!(String::from_utf8(output).unwrap(), "one\ntwo\nthree\n");
    }

    #[test]
    fn quiet_runs_of_missing_programs_are_errors() {
        assert!(run_quietly(Command::new("operator-rs-no-such-program")).is_err());
    }
}
