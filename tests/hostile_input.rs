//! Hostile input: nothing a user types, and no hand edit of PROJECT, may
//! give a broken project. Every case ends one of two ways: refused (a non-zero exit, one line on
//! stderr naming the input and the rule, the tree byte for byte as it was), or written, with
//! every output parsing (PROJECT re-loads, YAML loads, TOML parses, Rust parses, no
//! bidirectional or invisible characters in Rust sources) and later commands still working.
//!
//! The classes: strings that land in generated files (§1), names that must be valid Rust,
//! Cargo and Kubernetes names (§2), PROJECT as a hand edit leaves it (§5), and messages that
//! suggest only what exists (§6). The property tests at the end feed arbitrary Unicode through
//! every flag.

mod support;

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use operator_rs::boilerplate::License;
use operator_rs::cli::{CommonArgs, InitArgs};
use operator_rs::commands::create_api::{self, Request};
use operator_rs::commands::init;
use operator_rs::plugins::deploy_image::{DeployImage, Flags};
use operator_rs::plugins::{ApiPluginArgs, Plugin as _};
use operator_rs::project::Project;
use operator_rs::scaffold::{self, Plan};
use proptest::prelude::*;
use support::{
    assert_files_parse, assert_refused, assert_tree_parses, folder, operator_rs, run_ok, tree,
};
use tempfile::TempDir;

// ---------------------------------------------------------------------------------------------
// Helpers

/// A project made by `operator-rs init --domain example.com <flags>` in a folder `name`.
fn project(name: &str, flags: &[&str]) -> (TempDir, PathBuf) {
    let (tmp, dir) = folder(name);
    let mut argv = vec!["init", "--domain", "example.com"];
    argv.extend(flags);
    run_ok(&dir, &argv);
    (tmp, dir)
}

/// `create api --group <group> --version <version> --kind <kind> --make=false <flags>`.
fn api<'a>(group: &'a str, version: &'a str, kind: &'a str, flags: &[&'a str]) -> Vec<&'a str> {
    let mut argv = vec![
        "create",
        "api",
        "--group",
        group,
        "--version",
        version,
        "--kind",
        kind,
        "--make=false",
    ];
    argv.extend(flags);
    argv
}

/// The long flags `operator-rs <command…> --help` lists.
fn flags_of(command: &[&str]) -> Vec<String> {
    let mut argv = command.to_vec();
    argv.push("--help");
    let out = operator_rs(Path::new(".")).args(&argv).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout).into_owned();
    long_flags(&help)
}

fn long_flags(text: &str) -> Vec<String> {
    let mut flags = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("--") {
        let tail = &rest[i + 2..];
        let len = tail
            .find(|c: char| !(c.is_ascii_lowercase() || c == '-'))
            .unwrap_or(tail.len());
        if len > 0 {
            flags.push(format!("--{}", tail[..len].trim_end_matches('-')));
        }
        rest = &tail[len..];
    }
    flags
}

/// The subcommand of an argument list: `["init"]` or `["create", "api"]`.
fn subcommand<'a>(args: &[&'a str]) -> Vec<&'a str> {
    match args.first() {
        Some(&"create") => args[..2].to_vec(),
        _ => args[..1].to_vec(),
    }
}

/// [`support::assert_refused`], which also checks §6: every `--flag` the message suggests is a
/// flag of the command. Returns the message.
fn refused(dir: &Path, args: &[&str], expected: &[&str]) -> String {
    let stderr = assert_refused(dir, args, expected);
    let known = flags_of(&subcommand(args));
    // Flags are suggested after "pass", "rerun with", "e.g." …; values are quoted, and a
    // flag the user typed is named as the subject ("for --kind").
    let typed: Vec<String> = args.iter().flat_map(|a| long_flags(a)).collect();
    let message = strip_command_lines(&strip_quoted(&stderr));
    for flag in long_flags(&message) {
        assert!(
            known.contains(&flag) || typed.contains(&flag),
            "{args:?}: the message suggests {flag}, which {:?} does not have: {stderr}",
            subcommand(args)
        );
    }
    stderr
}

/// `text` without its double-quoted parts (the values a message quotes).
fn strip_quoted(text: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    let mut escaped = false;
    for c in text.chars() {
        if quoted {
            match (escaped, c) {
                (false, '\\') => escaped = true,
                (false, '"') => quoted = false,
                _ => escaped = false,
            }
        } else if c == '"' {
            quoted = true;
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` without the command lines it quotes in backticks (`operator-rs alpha migrate --from
/// …`): their flags are those of the command they name, not of the one that failed.
fn strip_command_lines(text: &str) -> String {
    let mut out = String::new();
    for (i, part) in text.split('`').enumerate() {
        if i % 2 == 0 || !part.starts_with("operator-rs ") {
            out.push_str(part);
        }
    }
    out
}

fn read(dir: &Path, path: &str) -> String {
    std::fs::read_to_string(dir.join(path)).unwrap()
}

/// The value of `key` of the only deploy-image record of `group`/`kind` in PROJECT.
fn recorded_option(dir: &Path, kind: &str, key: &str) -> String {
    let project = Project::load(dir).unwrap();
    let records = project
        .plugins
        .values()
        .flat_map(|c| c.get("resources").and_then(|r| r.as_sequence()).cloned())
        .flatten()
        .collect::<Vec<_>>();
    let record = records
        .iter()
        .find(|r| r.get("kind").and_then(|k| k.as_str()) == Some(kind))
        .expect("a record");
    record["options"][key].as_str().unwrap().to_string()
}

// ---------------------------------------------------------------------------------------------
// §1 Strings that land in generated files

/// The issue's severe finding: PROJECT got Rust's `\u{a0}` escape, which is not YAML, and every
/// later command failed.
#[test]
fn a_non_ascii_command_is_written_so_that_later_commands_work() {
    let (_tmp, dir) = project("busybox-operator", &[]);
    let command = "sh,-c,echo café\u{a0}: ok";
    let flag = format!("--image-container-command={command}");
    run_ok(
        &dir,
        &api("cache", "v1alpha1", "Busybox", &["--image=busybox", &flag]),
    );
    assert_eq!(
        recorded_option(&dir, "Busybox", "containerCommand"),
        command
    );
    let controller = read(&dir, "src/controller/busybox.rs");
    assert!(
        controller.contains(r#""echo caf\u{e9}\u{a0}: ok""#),
        "{controller}"
    );
    // The next command reads PROJECT, and writes it back with the command unchanged.
    run_ok(&dir, &api("cache", "v1alpha1", "Memcached", &[]));
    assert_eq!(
        recorded_option(&dir, "Busybox", "containerCommand"),
        command
    );
    assert_tree_parses(&dir);
}

/// Commands with every kind of character a shell user might type: quotes, backslashes, `$`,
/// braces, YAML and tera syntax, comment openers, non-Latin scripts, emoji, bidi controls.
#[test]
fn container_commands_are_escaped_for_rust_and_yaml() {
    let (_tmp, dir) = project("cmd-operator", &["--multigroup"]);
    let commands = [
        r#"sh,-c,echo "quoted" 'single' \back\slash $HOME `tick`"#,
        "sh,-c,key: value # not a comment,- item,[a]{b}",
        "sh,-c,{{ kind }} {% if x %} {# c #}",
        "sh,-c,/* open // line */ \"unterminated",
        "echo,日本語,Ελληνικά,עברית,😀,\u{202e}rtl\u{202c},zero\u{200b}width,\u{feff}bom",
        "yes,no,on,null,~,3,1.5,0x1F,1e3,true",
    ];
    for (i, command) in commands.iter().enumerate() {
        let kind = format!("Cmd{i}");
        let flag = format!("--image-container-command={command}");
        run_ok(
            &dir,
            &api("tools", "v1", &kind, &["--image=busybox:1.36", &flag]),
        );
        assert_eq!(&recorded_option(&dir, &kind, "containerCommand"), command);
    }
    assert_tree_parses(&dir);
}

/// Images that YAML 1.1 readers (kubectl, kustomize) would take for numbers or booleans if
/// they were written unquoted, as the manager's environment variable is.
#[test]
fn images_that_look_like_numbers_or_booleans_stay_strings() {
    let (_tmp, dir) = project("images", &["--multigroup"]);
    let images = ["123", "true", "yes", "null", "1.5", "0x1f", "1:20", "on"];
    for (i, image) in images.iter().enumerate() {
        let kind = format!("Image{i}");
        let flag = format!("--image={image}");
        run_ok(&dir, &api("img", "v1", &kind, &[&flag]));
        assert_eq!(&recorded_option(&dir, &kind, "image"), image);
    }
    let text = read(&dir, "config/manager/manager.yaml");
    let manager = serde_yaml::Deserializer::from_str(&text)
        .map(|doc| <serde_yaml::Value as serde::Deserialize>::deserialize(doc).unwrap())
        .find(|doc| doc["kind"].as_str() == Some("Deployment"))
        .unwrap();
    let env = manager["spec"]["template"]["spec"]["containers"][0]["env"]
        .as_sequence()
        .unwrap()
        .clone();
    for (i, image) in images.iter().enumerate() {
        let name = format!("IMAGE{i}_IMAGE");
        let var = env
            .iter()
            .find(|v| v["name"].as_str() == Some(&name))
            .unwrap();
        assert_eq!(
            var["value"],
            serde_yaml::Value::String(image.to_string()),
            "{name}"
        );
    }
    assert_tree_parses(&dir);
}

#[test]
fn owners_that_would_break_a_comment_are_refused() {
    let (_tmp, dir) = folder("demo");
    let long = "x".repeat(300);
    for (owner, rule) in [
        ("Acme\u{202e}evil", "bidirectional"),
        ("Acme\u{2066}", "bidirectional"),
        ("Acme\u{2028}Corp", "line break"),
        ("Acme\r", "line break"),
        ("Acme\u{1b}[31m", "control character"),
        ("Ac\u{200b}me", "invisible"),
        ("\u{feff}Acme", "invisible"),
        ("Acme\u{a0}Corp", "white space"),
        ("Acme\tCorp", "control character"),
        (long.as_str(), "at most 200"),
    ] {
        let shown = if owner.len() > 80 {
            "xxxx".to_string()
        } else {
            format!("{owner:?}")
        };
        refused(
            &dir,
            &["init", "--owner", owner],
            &["--owner", &shown, rule],
        );
    }
}

#[test]
fn owners_in_any_script_are_written_as_they_are() {
    for owner in [
        "Zoë Müller GmbH",
        "株式会社アクメ",
        r#"O'Brien & "Sons" */ /* // <a@b.c> {{ x }} $(rm -rf)"#,
        "😀 Emoji Inc.",
    ] {
        let (_tmp, dir) = folder("demo");
        run_ok(&dir, &["init", "--owner", owner]);
        let header = format!("// Copyright 2026 {owner}.\n");
        assert!(read(&dir, "src/main.rs").contains(&header), "{owner}");
        assert!(read(&dir, "README.md").contains(owner), "{owner}");
        run_ok(&dir, &api("crew", "v1", "Captain", &[]));
        assert!(read(&dir, "src/controller/captain.rs").starts_with(&header));
        assert_tree_parses(&dir);
    }
}

// ---------------------------------------------------------------------------------------------
// §2 Names valid for every place they are used

#[test]
fn project_names_that_would_not_build_or_deploy_are_refused() {
    let (_tmp, dir) = folder("demo");
    for (name, rule) in [
        ("3d-printer", "start with a letter"),
        ("42", "start with a letter"),
        ("fn", "Rust keyword"),
        ("self", "Rust keyword"),
        ("kube", "crate"),
        ("serde-json", "crate"),
        ("tokio", "crate"),
        ("operator-rs-runtime", "crate"),
        ("std", "crate"),
        ("yes", "YAML"),
        ("null", "YAML"),
        ("a-very-long-project-name-over", "at most 28"),
    ] {
        refused(
            &dir,
            &["init", "--project-name", name],
            &["--project-name", &format!("{name:?}"), rule],
        );
    }
}

#[test]
fn a_folder_that_is_no_project_name_suggests_one() {
    for (folder_name, lowered, suggestion) in [
        ("3D Printer", "3d printer", "--project-name my-3d-printer"),
        ("Kube", "kube", "--project-name kube-operator"),
        ("Café_Ops", "café_ops", "--project-name caf-ops"),
        ("42", "42", "--project-name my-42"),
        ("on", "on", "--project-name on-operator"),
    ] {
        let (_tmp, dir) = folder(folder_name);
        refused(
            &dir,
            &["init"],
            &[
                "--project-name",
                &format!("{lowered:?}"),
                "derived from the folder name",
                suggestion,
            ],
        );
        // The suggestion works.
        let name = suggestion.trim_start_matches("--project-name ");
        run_ok(&dir, &["init", "--project-name", name]);
    }
}

#[test]
fn kinds_named_like_what_the_generated_code_uses_are_refused() {
    let (_tmp, dir) = project("kinds", &[]);
    for (kind, rule) in [
        ("Deserialize", "already uses"),
        ("CustomResource", "already uses"),
        ("Registration", "already uses"),
        ("ControllerSetup", "already uses"),
        ("Option", "already uses"),
        ("Result", "already uses"),
        ("Webhook", "already uses"),
        ("Pod", "already uses"),
        ("Deployment", "already uses"),
        ("Kube", "crate"),
        ("Std", "crate"),
        ("Str", "primitive"),
        ("Self", "keyword"),
        ("Manager", "module"),
        ("Yes", "YAML"),
        ("True", "YAML"),
    ] {
        refused(
            &dir,
            &api("crew", "v1", kind, &[]),
            &["--kind", &format!("{kind:?}"), rule],
        );
    }
    let long = format!("K{}", "a".repeat(59));
    refused(&dir, &api("crew", "v1", &long, &[]), &["--kind", "List"]);
}

#[test]
fn groups_and_versions_that_are_no_module_names_are_refused() {
    let (_tmp, dir) = project("fleet", &["--multigroup"]);
    for (group, rule) in [
        ("3d", "cannot start with a digit"),
        ("9.ships", "cannot start with a digit"),
        ("kube", "crate"),
        ("tokio", "crate"),
        ("std", "crate"),
        ("u8", "primitive"),
    ] {
        refused(
            &dir,
            &api(group, "v1", "Ship", &[]),
            &["--group", &format!("{group:?}"), rule],
        );
    }
    for (version, rule) in [("u8", "primitive"), ("kube", "crate"), ("str", "primitive")] {
        refused(
            &dir,
            &api("ship", version, "Ship", &[]),
            &["--version", &format!("{version:?}"), rule],
        );
    }
    // One group: the group names no module, so a leading digit is fine.
    let (_tmp, single) = project("single", &[]);
    run_ok(&single, &api("3d", "v1", "Printer", &[]));
    assert_tree_parses(&single);
}

#[test]
fn kinds_of_a_group_have_distinct_names() {
    let (_tmp, dir) = project("crew", &[]);
    run_ok(&dir, &api("crew", "v1", "FirstMate", &[]));
    run_ok(&dir, &api("crew", "v1", "Datum", &[])); // plural data
    run_ok(
        &dir,
        &api("crew", "v1", "Captain", &["--plural", "skippers"]),
    );
    run_ok(&dir, &api("crew", "v1", "Boat", &[]));
    for (kind, flags, expected) in [
        (
            "Firstmate",
            &[][..],
            &["--kind", "\"Firstmate\"", "only in case"][..],
        ),
        ("FIRSTMATE", &[], &["--kind", "only in case"]),
        (
            "Firstmate",
            &["--version", "v2"][..],
            &["--kind", "only in case"],
        ),
        ("Skipper", &[], &["--kind", "\"skippers\"", "Captain"]),
        (
            "Sailor",
            &["--plural", "boats"][..],
            &["--plural", "\"boats\"", "Boat"],
        ),
        ("Data", &[], &["--kind", "\"data\"", "Datum"]),
        ("BoatList", &[], &["--kind", "List", "Boat"]),
        ("BoatSpec", &[], &["--kind", "Spec", "Boat"]),
        ("BoatStatus", &[], &["--kind", "Status", "Boat"]),
    ] {
        let mut argv = api("crew", "v1", kind, &[]);
        if let Some(i) = flags.iter().position(|f| *f == "--version") {
            argv[5] = flags[i + 1];
        } else {
            argv.extend(flags);
        }
        refused(&dir, &argv, expected);
    }
    // The same kind in another version is the same kind.
    run_ok(
        &dir,
        &api("crew", "v2", "FirstMate", &["--controller=false"]),
    );
    assert_tree_parses(&dir);
}

#[test]
fn two_controllers_never_share_a_file() {
    let (_tmp, dir) = project("leases", &[]);
    run_ok(&dir, &api("crew", "v1", "Lease", &[]));
    refused(
        &dir,
        &api("coordination", "v1", "Lease", &["--resource=false"]),
        &["--kind", "src/controller/lease.rs", "Lease"],
    );
    // Multigroup: `foo-bar`/`Baz` and `foo`/`BarBaz` would share their e2e test module.
    let (_tmp, fleet) = project("fleet", &["--multigroup"]);
    run_ok(&fleet, &api("foo-bar", "v1", "Baz", &["--image=busybox"]));
    refused(
        &fleet,
        &api("foo", "v1", "BarBaz", &["--image=busybox"]),
        &["--kind", "tests/e2e/foo_bar_baz.rs"],
    );
    run_ok(&fleet, &api("foo", "v1", "BarBaz", &[]));
    assert_tree_parses(&fleet);
}

/// A kind in two groups gets two image variables, on every rerun.
#[test]
fn a_kind_in_two_groups_gets_its_own_image_variable() {
    let (_tmp, dir) = project("caches", &["--multigroup"]);
    run_ok(
        &dir,
        &api("cache", "v1", "Memcached", &["--image=memcached:1.6"]),
    );
    run_ok(
        &dir,
        &api("store.data", "v1", "Memcached", &["--image=memcached:1.5"]),
    );
    let manager = read(&dir, "config/manager/manager.yaml");
    assert!(
        manager.contains("- name: MEMCACHED_IMAGE\n          value: memcached:1.6\n"),
        "{manager}"
    );
    assert!(
        manager.contains("- name: STORE_DATA_MEMCACHED_IMAGE\n          value: memcached:1.5\n"),
        "{manager}"
    );
    assert!(
        read(&dir, "src/controller/store_data/memcached.rs")
            .contains("\"STORE_DATA_MEMCACHED_IMAGE\"")
    );
    assert!(read(&dir, "src/controller/cache/memcached.rs").contains("\"MEMCACHED_IMAGE\""));
    // Re-rendering either one keeps its variable.
    let before = tree(&dir);
    run_ok(
        &dir,
        &api(
            "store.data",
            "v1",
            "Memcached",
            &["--image=memcached:1.5", "--force"],
        ),
    );
    run_ok(
        &dir,
        &api(
            "cache",
            "v1",
            "Memcached",
            &["--image=memcached:1.6", "--force"],
        ),
    );
    assert!(before == tree(&dir), "--force changed the tree");
    assert_tree_parses(&dir);
}

// ---------------------------------------------------------------------------------------------
// §5 PROJECT, validated on load

/// A kubebuilder Go project: kubebuilder's own reference PROJECT.
#[test]
fn a_kubebuilder_go_project_is_named_as_such() {
    let reference =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/kubebuilder-project-v4/PROJECT");
    let text = std::fs::read_to_string(reference).unwrap();
    let (_tmp, dir) = folder("project-v4");
    std::fs::write(dir.join("PROJECT"), &text).unwrap();
    std::fs::create_dir_all(dir.join("cmd")).unwrap();
    std::fs::write(dir.join("cmd/main.go"), "package main\n").unwrap();
    let expected = [
        "kubebuilder Go project (layout go.kubebuilder.io/v4)",
        "cannot add Rust code",
        "operator-rs alpha migrate --from",
    ];
    refused(&dir, &api("crew", "v1", "Captain", &[]), &expected);
    refused(
        &dir,
        &[
            "create",
            "webhook",
            "--group",
            "crew",
            "--version",
            "v1",
            "--kind",
            "Captain",
            "--defaulting",
            "--make=false",
        ],
        &expected,
    );
    // The PROJECT file still parses, for the migration that will read it.
    assert!(Project::parse(&text).is_ok());
}

#[test]
fn hand_edits_of_project_are_refused_with_the_key_and_the_value() {
    let (_tmp, dir) = project("edited", &[]);
    run_ok(
        &dir,
        &api(
            "cache",
            "v1",
            "Memcached",
            &["--image=memcached:1.6", "--image-container-port=11211"],
        ),
    );
    let original = read(&dir, "PROJECT");
    for (from, to, expected) in [
        (
            "domain: example.com",
            "domain: Example.COM",
            &["domain in PROJECT", "\"Example.COM\"", "DNS-1123"][..],
        ),
        (
            "projectName: edited",
            "projectName: 3d",
            &["projectName in PROJECT", "\"3d\"", "letter"],
        ),
        (
            "projectName: edited",
            "projectName: \"yes\"",
            &["projectName in PROJECT", "YAML"],
        ),
        (
            "  kind: Memcached\n  path",
            "  kind: memcached\n  path",
            &["resources[0].kind in PROJECT", "\"memcached\""],
        ),
        (
            "  group: cache\n",
            "  group: ../etc\n",
            &["resources[0].group in PROJECT", "\"../etc\""],
        ),
        (
            "  version: v1\n",
            "  version: \"1\"\n",
            &["resources[0].version in PROJECT", "\"1\""],
        ),
        (
            "        image: memcached:1.6",
            "        image: Mem Cached",
            &["options.image in PROJECT", "\"Mem Cached\""],
        ),
        (
            "        containerPort: \"11211\"",
            "        containerPort: \"99999\"",
            &[
                "options.containerPort in PROJECT",
                "\"99999\"",
                "1 to 65535",
            ],
        ),
        (
            "        containerPort: \"11211\"",
            "        containerPort: [1]",
            &["options.containerPort in PROJECT", "must be a string"],
        ),
        (
            "layout:\n- rust.operator-rs.io/v1-alpha\n",
            "",
            &["PROJECT has no layout", "rust.operator-rs.io/v1-alpha"],
        ),
        (
            "- rust.operator-rs.io/v1-alpha",
            "- helm.kubebuilder.io/v1-alpha",
            &["helm.kubebuilder.io/v1-alpha", "operator-rs init"],
        ),
        (
            "version: \"3\"",
            "version: \"2\"",
            &["version \"2\"", "version \"3\""],
        ),
        (
            "version: \"3\"",
            "version: [3",
            &["PROJECT is not valid YAML"],
        ),
    ] {
        assert!(original.contains(from), "{from}");
        std::fs::write(dir.join("PROJECT"), original.replacen(from, to, 1)).unwrap();
        refused(&dir, &api("cache", "v1", "Busybox", &[]), expected);
    }
    // A resource recorded twice.
    let mut twice = Project::parse(&original).unwrap();
    twice.resources.push(twice.resources[0].clone());
    std::fs::write(dir.join("PROJECT"), twice.render()).unwrap();
    refused(
        &dir,
        &api("cache", "v1", "Busybox", &[]),
        &["resources[1] repeats resources[0]"],
    );
    // A multigroup project whose group names no module.
    let multigroup = original
        .replacen("layout:", "multigroup: true\nlayout:", 1)
        .replace("  group: cache\n", "  group: 3d\n");
    std::fs::write(dir.join("PROJECT"), multigroup).unwrap();
    refused(
        &dir,
        &api("cache", "v1", "Busybox", &[]),
        &["resources[0].group in PROJECT", "\"3d\"", "digit"],
    );
    std::fs::write(dir.join("PROJECT"), &original).unwrap();
    run_ok(&dir, &api("cache", "v1", "Busybox", &[]));
}

/// The license header, read back from hack/boilerplate.rs.txt, goes on top of every Rust file.
#[test]
fn a_hand_edited_license_header_must_stay_a_comment() {
    let (_tmp, dir) = project("headers", &[]);
    for (header, expected) in [
        (
            "Copyright Acme\n",
            &[
                "hack/boilerplate.rs.txt",
                "not a comment",
                "\"Copyright Acme\"",
            ][..],
        ),
        (
            "/// Copyright Acme\n",
            &["hack/boilerplate.rs.txt", "doc comment"],
        ),
        (
            "// Copyright \u{202e}Acme\n",
            &["hack/boilerplate.rs.txt", "U+202E"],
        ),
        (
            "/* Copyright Acme\n",
            &["hack/boilerplate.rs.txt", "never closed"],
        ),
    ] {
        std::fs::write(dir.join("hack/boilerplate.rs.txt"), header).unwrap();
        refused(&dir, &api("crew", "v1", "Captain", &[]), expected);
    }
    // kubebuilder's block-comment style is fine.
    let block = "/*\nCopyright 2026 Acme.\n\nLicensed under the Apache License.\n*/\n";
    std::fs::write(dir.join("hack/boilerplate.rs.txt"), block).unwrap();
    run_ok(&dir, &api("crew", "v1", "Captain", &[]));
    assert!(read(&dir, "src/controller/captain.rs").starts_with(block));
    assert_tree_parses(&dir);
}

#[test]
fn names_too_long_for_what_kubernetes_builds_from_them() {
    let (_tmp, dir) = folder("demo");
    let domain = format!(
        "{}.{}.{}.{}",
        "a".repeat(63),
        "b".repeat(63),
        "c".repeat(63),
        "d".repeat(60)
    );
    refused(&dir, &["init", "--domain", &domain], &["--domain", "Lease"]);
    let (_tmp, dir) = project("long", &["--multigroup"]);
    let group = format!("{}.{}", "g".repeat(63), "h".repeat(60));
    let kind = format!("K{}", "a".repeat(58));
    refused(&dir, &api(&group, "v1", &kind, &[]), &["--group", "128"]);
    // Without a controller the name is not used.
    run_ok(&dir, &api(&group, "v1", &kind, &["--controller=false"]));
    assert_tree_parses(&dir);
}

// ---------------------------------------------------------------------------------------------
// §6 Messages say what to do, and suggest only flags that exist

#[test]
fn init_suggests_nothing_it_does_not_have() {
    let (_tmp, dir) = folder("demo");
    std::fs::write(dir.join("Cargo.toml"), "[package]\nname = \"mine\"\n").unwrap();
    let message = refused(
        &dir,
        &["init"],
        &["Cargo.toml already exists", "move Cargo.toml away"],
    );
    assert!(!message.contains("--force"), "{message}");
    // A file where init puts a folder.
    let (_tmp, dir) = folder("demo");
    std::fs::write(dir.join("config"), "mine\n").unwrap();
    refused(
        &dir,
        &["init"],
        &[
            "config already exists and is not a plain folder",
            "move config away",
        ],
    );
    // The other refusals of init, create api and create webhook.
    let (_tmp, dir) = project("crew", &[]);
    refused(&dir, &["init"], &["already initialized"]);
    refused(
        &dir,
        &api(
            "crew",
            "v1",
            "Captain",
            &["--resource=false", "--controller=false"],
        ),
        &["nothing to create"],
    );
    run_ok(&dir, &api("crew", "v1", "Captain", &[]));
    refused(
        &dir,
        &api("crew", "v1", "Captain", &[]),
        &["already exists", "--force"],
    );
}

// ---------------------------------------------------------------------------------------------
// Property tests: arbitrary Unicode through every flag

/// Text that is sometimes valid, often hostile: pieces that mean something in YAML, TOML, Rust,
/// tera, shells or Unicode, mixed with arbitrary characters.
fn hostile() -> impl Strategy<Value = String> {
    let pieces = prop_oneof![
        Just("a".to_string()),
        Just("Captain".to_string()),
        Just("v1".to_string()),
        Just("example.com".to_string()),
        Just("busybox:1.36".to_string()),
        "[a-z][a-z0-9-]{0,8}",
        "[A-Z][A-Za-z0-9]{0,8}",
        prop::sample::select(vec![
            "\u{202e}", "\u{2066}", "\u{200b}", "\u{feff}", "\u{a0}", "\u{2028}", "\u{85}", "\n",
            "\r", "\t", "\0", "\"", "'", "\\", ":", ": ", " #", "#", "-", "--", ",", ".", "..",
            "/", "{{", "}}", "{%", "{#", "${", "`", "$(", "*/", "/*", "//", "é", "😀", "ß", "İ",
            "yes", "null", "3", "1.5", "0x1F", "~", "[", "]", "&", "*", "!", "|", ">", "%", "@",
            "=", "<<", " ", "fn", "Self", "kube", "Option",
        ])
        .prop_map(str::to_string),
        any::<char>().prop_map(|c| c.to_string()),
    ];
    prop::collection::vec(pieces, 0..5).prop_map(|parts| parts.concat())
}

/// `valid` most of the time, else hostile text: enough runs get past every check to prove that
/// what is accepted parses.
fn mostly(valid: &'static str, near: &'static str) -> impl Strategy<Value = String> {
    prop_oneof![
        4 => Just(valid.to_string()),
        2 => near, // near-valid names: keywords, reserved and clashing names turn up here
        1 => hostile(),
    ]
}

/// The strings of one `create api --image …` run: group, version, kind, plural, image, command,
/// port, user. The command is free text and always hostile.
fn api_inputs() -> impl Strategy<Value = [String; 8]> {
    (
        mostly("cache", "[a-z0-9][a-z0-9.-]{0,8}"),
        mostly("v1", "[a-z][a-z0-9]{0,5}"),
        mostly("Memcached", "[A-Z][A-Za-z0-9]{0,10}"),
        mostly("memcacheds", "[a-z][a-z0-9-]{0,10}"),
        mostly("busybox", "[a-z0-9][a-z0-9._/:-]{0,12}"),
        prop_oneof![hostile(), any::<String>()],
        mostly("8080", "[0-9]{1,6}"),
        mostly("1001", "[0-9]{1,11}"),
    )
        .prop_map(|(g, v, k, p, i, c, port, u)| [g, v, k, p, i, c, port, u])
}

fn init_args(domain: &str, name: Option<&str>, owner: &str, multigroup: bool) -> InitArgs {
    InitArgs {
        domain: domain.to_string(),
        project_name: name.map(str::to_string),
        owner: owner.to_string(),
        license: License::Apache2,
        license_file: None,
        namespaced: false,
        multigroup,
        sharding: false,
        runtime: operator_rs::runtime_source::DEFAULT,
        kubebuilder: Default::default(),
        common: CommonArgs { dry_run: false },
    }
}

/// A refusal's message is one line, and names what was refused.
fn assert_one_line(err: &anyhow::Error) {
    let message = format!("{err:#}");
    assert!(
        !message.contains('\n') && !message.contains('\r'),
        "{message:?}"
    );
    assert!(!message.is_empty());
}

fn plan_files(plan: &Plan) -> Vec<(&str, &str)> {
    plan.changes()
        .iter()
        .map(|c| (c.path.as_str(), c.contents.as_str()))
        .collect()
}

/// Initialized projects (single-group and multigroup) that the property tests plan against.
static PROJECTS: LazyLock<Vec<(TempDir, PathBuf)>> = LazyLock::new(|| {
    [false, true]
        .into_iter()
        .map(|multigroup| {
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path().join("prop-operator");
            std::fs::create_dir(&dir).unwrap();
            let plan =
                init::plan(&init_args("example.com", None, "", multigroup), &dir, 2026).unwrap();
            scaffold::apply(&plan).unwrap();
            (tmp, dir)
        })
        .collect()
});

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// `init` with arbitrary --domain, --project-name and --owner: refused on one line, or a
    /// project whose every file parses.
    #[test]
    fn init_takes_any_text(
        domain in mostly("example.com", "[a-z0-9][a-z0-9.-]{0,20}"),
        name in mostly("demo", "[a-z0-9][a-z0-9-]{0,30}"),
        owner in prop_oneof![hostile(), any::<String>()],
        multigroup in any::<bool>(),
    ) {
        let tmp = tempfile::tempdir().unwrap();
        match init::plan(&init_args(&domain, Some(&name), &owner, multigroup), tmp.path(), 2026) {
            Err(err) => assert_one_line(&err),
            Ok(plan) => assert_files_parse(plan_files(&plan)),
        }
    }

    /// `create api` with the deploy-image plugin and arbitrary values in every flag.
    #[test]
    fn create_api_takes_any_text(inputs in api_inputs(), multigroup in any::<bool>(), plural in any::<bool>()) {
        let [group, version, kind, plural_value, image, command, port, user] = inputs;
        let (_, dir) = &PROJECTS[usize::from(multigroup)];
        let args = ApiPluginArgs {
            plugins: Vec::new(),
            deploy_image: Flags {
                image: Some(image),
                image_container_command: Some(command.clone()),
                image_container_port: Some(port),
                run_as_user: Some(user),
            },
        };
        let request = DeployImage.create_api(&args, false).and_then(|part| {
            let request = Request {
                plural: plural.then_some(plural_value),
                parts: part.into_iter().collect(),
                ..Request::new(&group, &version, &kind)
            };
            create_api::plan(&request, dir)
        });
        match request {
            Err(err) => assert_one_line(&err),
            Ok(plan) => {
                let files = plan_files(&plan);
                assert_files_parse(files.iter().copied());
                let text = files.iter().find(|(p, _)| *p == "PROJECT").unwrap().1;
                prop_assert!(text.contains("containerCommand"));
                let project = Project::parse(text).unwrap();
                let recorded = serde_yaml::to_string(&project.plugins).unwrap();
                let back: serde_yaml::Value = serde_yaml::from_str(&recorded).unwrap();
                let found = back
                    .as_mapping()
                    .unwrap()
                    .values()
                    .filter_map(|c| c.get("resources")?.as_sequence().cloned())
                    .flatten()
                    .any(|r| r["options"]["containerCommand"].as_str() == Some(command.as_str()));
                prop_assert!(found, "the command is recorded as typed");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// The binary: refusals are one line and leave the tree as it was; successes parse.
    #[test]
    fn the_binary_refuses_on_one_line_or_writes_a_project_that_parses(
        kind in mostly("Memcached", "[A-Z][A-Za-z0-9]{0,10}"),
        command in prop_oneof![hostile(), any::<String>()],
    ) {
        // A process argument cannot hold a NUL.
        let (kind, command) = (kind.replace('\0', ""), command.replace('\0', ""));
        let (_tmp, dir) = project("bin-operator", &[]);
        let before = tree(&dir);
        let out = operator_rs(&dir)
            .args(api("cache", "v1", &kind, &["--image=busybox"]))
            .arg(format!("--image-container-command={command}"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        prop_assert!(!stderr.contains("panicked"), "{}", stderr);
        if out.status.success() {
            assert_tree_parses(&dir);
            run_ok(&dir, &api("cache", "v1", "Other", &[]));
        } else {
            prop_assert_eq!(stderr.trim_end().lines().count(), 1, "{}", stderr);
            prop_assert!(before == tree(&dir), "the tree changed");
        }
    }
}
