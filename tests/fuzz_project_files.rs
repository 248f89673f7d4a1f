//! Fuzz target: PROJECT as a hand edit, a merge or a bad tool leaves it. A PROJECT that
//! operator-rs wrote (kinds of its own, built in and external, named controllers, webhooks,
//! plugin records) is mutated line by line (values replaced by hostile ones, lines dropped,
//! doubled, re-indented, keys added, characters cut), and the commands that read it plan on it
//! in-process: loading it, `create api`, `create webhook`, `edit --multigroup`, `edit
//! --namespaced`. None may panic; each either plans files that parse or returns one line.

mod support;

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use clap::Parser as _;
use operator_rs::cli::{Cli, Command, CreateCommand};
use operator_rs::commands::{create_api, create_webhook, edit};
use operator_rs::project::Project;
use operator_rs::scaffold::Plan;
use proptest::prelude::*;
use support::{assert_files_parse, folder, fuzz, run_ok};
use tempfile::TempDir;

/// A project with a record of every kind PROJECT holds, and its PROJECT.
static PROJECT: LazyLock<(TempDir, PathBuf, String)> = LazyLock::new(|| {
    let (tmp, dir) = folder("fleet");
    let crds = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hostile/hostile-crds.yaml");
    std::fs::create_dir(dir.join("crds")).unwrap();
    std::fs::copy(crds, dir.join("crds/hostile.yaml")).unwrap();
    for line in [
        "init --domain example.com --owner Acme",
        "create api --group crew --version v1 --kind Captain --make=false",
        "create api --group crew --version v1 --kind Captain --resource=false --controller-name captain-backup --make=false",
        "create api --group apps --version v1 --kind Deployment --resource=false --controller --make=false",
        "create api --group hostile --external-api-domain io --version v1 --kind Self --resource=false --controller --external-api-path crds/hostile.yaml --make=false",
        "create webhook --group crew --version v1 --kind Captain --defaulting --programmatic-validation --make=false",
        "create api --group crew --version v1alpha1 --kind Memcached --plugins deploy-image/v1-alpha --image memcached:1.6 --make=false",
    ] {
        let args: Vec<&str> = line.split(' ').collect();
        run_ok(&dir, &args);
    }
    let text = std::fs::read_to_string(dir.join("PROJECT")).unwrap();
    (tmp, dir, text)
});

/// Values a hand edit may leave.
fn hostile_value() -> impl Strategy<Value = String> {
    const VALUES: &[&str] = &[
        "",
        "~",
        "null",
        "true",
        "3",
        "-1",
        "1e9",
        "[]",
        "{}",
        "[a, b]",
        "{a: 1}",
        "Self",
        "self",
        "crate",
        "type",
        "Box",
        "9lives",
        "a_b",
        "a.b",
        "../../etc",
        "\"x\ny\"",
        "'",
        "\"",
        "é",
        "\u{202E}",
        "\t",
        "*anchor",
        "&anchor x",
        "!!binary aGk=",
        "- item",
        "crate::api::v1",
        "v1",
        "v1alpha1",
        "core",
        "apps",
        "example.com",
        "go.kubebuilder.io/v4",
        "deploy-image.go.kubebuilder.io/v1-alpha",
        "4",
        "\"3\"",
    ];
    prop_oneof![
        4 => proptest::sample::select(VALUES).prop_map(str::to_string),
        1 => "[ -~é\u{0}\u{202E}]{0,12}",
    ]
}

#[derive(Debug, Clone)]
enum Mutation {
    /// The value after the line's first `:` (or the line itself) replaced.
    Value(usize, String),
    Drop(usize),
    Double(usize),
    /// The line's indentation changed by this many spaces.
    Indent(usize, i8),
    /// A line of its own inserted before this one.
    Insert(usize, String),
    /// The text cut at this byte (on a char boundary at or after it).
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        6 => (any::<usize>(), hostile_value()).prop_map(|(i, v)| Mutation::Value(i, v)),
        2 => any::<usize>().prop_map(Mutation::Drop),
        1 => any::<usize>().prop_map(Mutation::Double),
        1 => (any::<usize>(), -4i8..4).prop_map(|(i, d)| Mutation::Indent(i, d)),
        1 => (any::<usize>(), hostile_value(), "[a-zA-Z]{1,10}").prop_map(|(i, v, k)| Mutation::Insert(i, format!("{k}: {v}"))),
        1 => any::<usize>().prop_map(Mutation::Truncate),
    ]
}

fn mutate(text: &str, mutations: &[Mutation]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for m in mutations {
        if lines.is_empty() {
            break;
        }
        let n = lines.len();
        match m {
            Mutation::Value(i, value) => {
                let line = &mut lines[i % n];
                *line = match line.split_once(':') {
                    Some((key, _)) => format!("{key}: {value}"),
                    None => format!("{}{value}", &line[..line.len() - line.trim_start().len()]),
                };
            }
            Mutation::Drop(i) => {
                lines.remove(i % n);
            }
            Mutation::Double(i) => {
                let line = lines[i % n].clone();
                lines.insert(i % n, line);
            }
            Mutation::Indent(i, by) => {
                let line = &mut lines[i % n];
                let indent = (line.len() - line.trim_start().len()) as i64 + i64::from(*by);
                *line = format!(
                    "{}{}",
                    " ".repeat(indent.max(0) as usize),
                    line.trim_start()
                );
            }
            Mutation::Insert(i, line) => lines.insert(i % n, line.clone()),
            Mutation::Truncate(at) => {
                let text = lines.join("\n");
                let mut at = at % (text.len() + 1);
                while !text.is_char_boundary(at) {
                    at += 1;
                }
                lines = text[..at].lines().map(str::to_string).collect();
            }
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

fn one_line(err: &anyhow::Error) -> Result<(), TestCaseError> {
    let message = format!("{err:#}");
    prop_assert!(
        !message.contains('\n') && !message.contains('\r'),
        "{message:?}"
    );
    prop_assert!(!message.is_empty());
    Ok(())
}

fn planned(plan: &Plan) -> Result<(), TestCaseError> {
    let files: Vec<(&str, &str)> = plan
        .changes()
        .iter()
        .map(|c| (c.path.as_str(), c.contents.as_str()))
        .collect();
    assert_files_parse(files);
    Ok(())
}

/// The command line `args` parsed as the CLI does.
fn command(args: &str) -> Command {
    let args = std::iter::once("operator-rs").chain(args.split(' '));
    Cli::try_parse_from(args).unwrap().command
}

fn check(dir: &Path, text: &str) -> Result<(), TestCaseError> {
    std::fs::write(dir.join("PROJECT"), text).unwrap();
    if let Err(err) = Project::load(dir) {
        return one_line(&err);
    }
    let api = create_api::Request::new("crew", "v2", "Boat");
    match create_api::plan(&api, dir) {
        Ok(plan) => planned(&plan)?,
        Err(err) => one_line(&err)?,
    }
    if let Command::Create(CreateCommand::Webhook(args)) =
        command("create webhook --group crew --version v1 --kind Captain --conversion --spoke v2")
    {
        let planned_webhook = create_webhook::Request::from_args(&args)
            .and_then(|request| create_webhook::plan(&request, dir));
        match planned_webhook {
            Ok(webhook) => planned(&webhook.plan)?,
            Err(err) => one_line(&err)?,
        }
    }
    for line in ["edit --multigroup", "edit --namespaced --sharding"] {
        if let Command::Edit(args) = command(line) {
            match edit::plan(&args, dir, 2026) {
                Ok((plan, _)) => planned(&plan)?,
                Err(err) => one_line(&err)?,
            }
        }
    }
    Ok(())
}

#[test]
fn project_files_never_panic_a_command() {
    let (_tmp, dir, text) = &*PROJECT;
    fuzz::run(
        "project_files",
        64,
        proptest::collection::vec(mutation(), 1..6),
        |mutations| check(dir, &mutate(text, &mutations)),
    );
    std::fs::write(dir.join("PROJECT"), text).unwrap();
}
