//! External plugins with kubebuilder's protocol, through the CLI: found where kubebuilder finds
//! them, chained after the built-in plugins of init, create api, create webhook and edit, their
//! flags and help the command's; what they answer written all or nothing, never over a file of
//! the project; and every way a plugin can fail refused with one line, nothing written.
//!
//! The plugins are tests/data/external-plugins/ (tests/data/README.md): `notes/v1`, a small
//! plugin of this repository, and `sampleexternalplugin/v1`, a stand-in for kubebuilder's sample
//! that speaks its protocol as Go writes it.

mod support;

use std::path::{Path, PathBuf};

use support::{dirs, executable, folder, operator_rs, tree};

fn plugins_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/external-plugins")
}

/// operator-rs in `dir`, finding the plugins in `plugins`.
fn ors(dir: &Path, plugins: &Path, args: &[&str]) -> std::process::Output {
    operator_rs(dir)
        .env("EXTERNAL_PLUGINS_PATH", plugins)
        .args(args)
        .output()
        .unwrap()
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let out = ors(dir, &plugins_dir(), args);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{args:?}: {text}");
    text
}

/// A refusal: one line on stderr with every `expected` piece, and nothing changed.
fn refused(dir: &Path, plugins: &Path, args: &[&str], expected: &[&str]) {
    let before = (tree(dir), dirs(dir));
    let out = ors(dir, plugins, args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} succeeded");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
    for piece in expected {
        assert!(
            stderr.contains(piece),
            "{args:?}: {stderr:?} lacks {piece:?}"
        );
    }
    assert!(
        before == (tree(dir), dirs(dir)),
        "{args:?} changed the tree"
    );
}

fn read(dir: &Path, path: &str) -> String {
    std::fs::read_to_string(dir.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn project(name: &str) -> (tempfile::TempDir, PathBuf) {
    let (tmp, dir) = folder(name);
    ok(&dir, &["init", "--domain", "example.com"]);
    (tmp, dir)
}

/// kubebuilder's sample, as its docs run it: `init --plugins go/v4,sampleexternalplugin/v1`
/// with its flag, in the chain after the layout; its files written with init's.
#[test]
fn kubebuilders_sample_runs_in_the_init_chain() {
    let (_tmp, dir) = folder("fleet");
    let out = ok(
        &dir,
        &[
            "init",
            "--plugins",
            "go/v4,sampleexternalplugin/v1",
            "--domain",
            "example.com",
            "--prometheus-namespace",
            "monitoring",
        ],
    );
    assert!(!out.contains("error"), "{out}");
    let prometheus = read(&dir, "config/prometheus/prometheus.yaml");
    assert!(
        prometheus.contains("name: fleet-prometheus")
            && prometheus.contains("namespace: monitoring"),
        "{prometheus}"
    );
    assert_eq!(
        read(&dir, "config/prometheus/kustomization.yaml"),
        "resources:\n- prometheus.yaml\n"
    );
    assert!(
        dir.join("config/default/kustomization_prometheus_patch.yaml")
            .is_file()
    );
    // The chain is recorded as kubebuilder records it, after operator-rs's layout.
    let recorded = read(&dir, "PROJECT");
    assert!(
        recorded.contains("layout:\n- rust.operator-rs.io/v1-alpha\n- sampleexternalplugin/v1\n"),
        "{recorded}"
    );
    // Later commands load the project as before.
    ok(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "crew",
            "--version",
            "v1",
            "--kind",
            "Captain",
            "--make=false",
        ],
    );

    // alpha generate does not run external plugins again, and says so.
    let out = ok(
        &dir,
        &[
            "alpha",
            "generate",
            "--output-dir",
            "../regenerated",
            "--make=false",
        ],
    );
    assert!(
        out.contains("the external plugin sampleexternalplugin/v1 of the layout was not run again"),
        "{out}"
    );
    // Run again with the same flag, it writes what is there: nothing changes.
    let before = tree(&dir);
    ok(
        &dir,
        &[
            "edit",
            "--plugins",
            "sampleexternalplugin/v1",
            "--prometheus-namespace",
            "monitoring",
        ],
    );
    assert_eq!(before, tree(&dir));
    // On a project whose init wrote config/prometheus/kustomization.yaml, the sample would
    // replace it: refused, naming the file; its validation errors come back as one line.
    let (_other_tmp, other) = project("other");
    refused(
        &other,
        &plugins_dir(),
        &["edit", "--plugins", "sampleexternalplugin/v1"],
        &[
            "plugin sampleexternalplugin/v1 would overwrite config/prometheus/kustomization.yaml",
            "never overwrites",
        ],
    );
    refused(
        &dir,
        &plugins_dir(),
        &[
            "edit",
            "--plugins",
            "sampleexternalplugin/v1",
            "--prometheus-namespace",
            "Bad_NS",
        ],
        &["plugin sampleexternalplugin/v1: namespace must be a DNS-1123 label"],
    );
    // A subcommand it does not have.
    refused(
        &dir,
        &plugins_dir(),
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
            "--plugins",
            "sampleexternalplugin/v1",
        ],
        &["plugin sampleexternalplugin/v1: unknown subcommand: create webhook"],
    );
}

/// `--help` with an external plugin shows its flags and its description, as kubebuilder's does.
#[test]
fn help_shows_the_plugins_flags_and_description() {
    let (_tmp, dir) = project("fleet");
    let help = ok(
        &dir,
        &["edit", "--plugins", "sampleexternalplugin/v1", "--help"],
    );
    assert!(help.contains("Plugin sampleexternalplugin/v1"), "{help}");
    assert!(help.contains("--prometheus-namespace"), "{help}");
    assert!(
        help.contains("Namespace where Prometheus instance will be deployed"),
        "{help}"
    );
    assert!(
        help.contains("Add Prometheus instance to an existing project"),
        "{help}"
    );
    let help = ok(&dir, &["create", "api", "--plugins", "notes/v1", "--help"]);
    assert!(
        help.contains("--notes-owner") && help.contains("--notes-draft"),
        "{help}"
    );
    assert!(help.contains("Adds notes on the project (api)"), "{help}");
    // Without --plugins, the command has no such flag.
    let out = ors(&dir, &plugins_dir(), &["edit", "--notes-owner", "x"]);
    assert!(!out.status.success());
}

/// The repository's sample plugin on every command: its file and its PROJECT entry, written
/// again as they are on a second run, refused when they would change a file of the project.
#[test]
fn a_plugin_adds_files_and_its_project_entry_on_every_command() {
    let (_tmp, dir) = project("fleet");
    ok(
        &dir,
        &[
            "edit",
            "--plugins",
            "notes/v1",
            "--notes-owner",
            "Acme",
            "--notes-draft",
        ],
    );
    assert_eq!(
        read(&dir, "docs/operator-notes.md"),
        "# Notes on fleet (draft)\n\nWritten by Acme.\n"
    );
    let project = read(&dir, "PROJECT");
    assert!(
        project.contains("plugins:\n  notes/v1:\n    owner: Acme\n"),
        "{project}"
    );
    // The same run again changes nothing.
    let before = tree(&dir);
    ok(
        &dir,
        &[
            "edit",
            "--plugins",
            "notes/v1",
            "--notes-owner",
            "Acme",
            "--notes-draft",
        ],
    );
    assert_eq!(before, tree(&dir));
    // Other flags would rewrite the notes, which are the user's now.
    refused(
        &dir,
        &plugins_dir(),
        &["edit", "--plugins", "notes/v1", "--notes-owner", "Other"],
        &["would overwrite docs/operator-notes.md"],
    );
    ok(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "crew",
            "--version",
            "v1",
            "--kind",
            "Captain",
            "--make=false",
            "--plugins",
            "notes/v1",
            "--notes-owner",
            "Acme",
        ],
    );
    assert!(read(&dir, "docs/kinds/captain.md").starts_with("# Captain\n\ncreate api notes"));
    assert!(dir.join("src/api/v1/captain.rs").is_file());
    ok(
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
            "--plugins=notes/v1",
            "--notes-owner=Acme",
        ],
    );
    let project = read(&dir, "PROJECT");
    assert!(project.contains("    kinds:\n    - Captain\n"), "{project}");
    // --dry-run shows the plugin's files and writes nothing.
    let before = tree(&dir);
    let out = ok(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "crew",
            "--version",
            "v1",
            "--kind",
            "Admiral",
            "--make=false",
            "--plugins",
            "notes/v1",
            "--notes-owner",
            "Acme",
            "--dry-run",
        ],
    );
    assert!(out.contains("docs/kinds/admiral.md"), "{out}");
    assert_eq!(before, tree(&dir));
}

/// kubebuilder's folders: $EXTERNAL_PLUGINS_PATH, $XDG_CONFIG_HOME/kubebuilder/plugins, and
/// ~/.config/kubebuilder/plugins; a plugin that is not there is refused, saying where it looked.
#[test]
fn plugins_are_found_where_kubebuilder_finds_them() {
    let (tmp, dir) = project("fleet");
    let install = |root: &Path| {
        let folder = root.join("kubebuilder/plugins/notes/v1");
        std::fs::create_dir_all(&folder).unwrap();
        let script = std::fs::read_to_string(plugins_dir().join("notes/v1/notes.py")).unwrap();
        executable(&folder.join("notes"), &script);
    };
    let xdg = tmp.path().join("xdg");
    install(&xdg);
    let home = tmp.path().join("home");
    install(&home.join(".config"));
    let edit = ["edit", "--plugins", "notes/v1", "--notes-owner", "Acme"];
    let run = |env: &[(&str, &Path)]| {
        let mut command = operator_rs(&dir);
        command
            .env_remove("EXTERNAL_PLUGINS_PATH")
            .env_remove("XDG_CONFIG_HOME");
        for (name, value) in env {
            command.env(name, value);
        }
        let out = command.args(edit).output().unwrap();
        let _ = std::fs::remove_file(dir.join("docs/operator-notes.md"));
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    assert!(run(&[("XDG_CONFIG_HOME", &xdg), ("HOME", &home)]).0);
    assert!(run(&[("HOME", &home)]).0);
    let (found, stderr) = run(&[("HOME", tmp.path())]);
    assert!(!found);
    assert!(
        stderr.contains("no external plugin notes/v1 in")
            && stderr.contains(".config/kubebuilder/plugins"),
        "{stderr}"
    );
    let (found, stderr) = run(&[("EXTERNAL_PLUGINS_PATH", &tmp.path().join("missing"))]);
    assert!(!found);
    assert!(stderr.contains("does not exist"), "{stderr}");
}

/// Every way a plugin can fail is refused with one line, and nothing is written.
#[test]
fn broken_plugins_are_refused_and_write_nothing() {
    let (tmp, dir) = project("fleet");
    let plugins = tmp.path().join("plugins");
    let add = |name: &str, script: &str| {
        let folder = plugins.join(name).join("v1");
        std::fs::create_dir_all(&folder).unwrap();
        executable(
            &folder.join(name),
            &format!("#!/bin/sh\ncat >/dev/null\n{script}\n"),
        );
    };
    let answer = |universe: &str| {
        format!(
            "printf '%s' '{{\"apiVersion\":\"v1alpha1\",\"command\":\"edit\",\"universe\":{universe}}}'"
        )
    };
    add("crashes", "echo 'boom: no config' >&2\nexit 3");
    add("sleeps", "sleep 10");
    add("garbles", "echo 'this is not JSON'");
    add(
        "errs",
        "echo '{\"error\":true,\"errorMsgs\":[\"first\",\"second\"]}'",
    );
    add("escapes", &answer("{\"../outside.txt\":\"x\"}"));
    add(
        "absolute",
        &answer("{\"/tmp/operator-rs-escape.txt\":\"x\"}"),
    );
    add("golang", &answer("{\"api/v1/types.go\":\"package v1\"}"));
    add(
        "rewrites",
        &answer("{\"PROJECT\":\"domain: evil.com\\n\",\"notes.md\":\"x\"}"),
    );
    add("overwrites", &answer("{\"Makefile\":\"all:\\n\"}"));
    add("good", &answer("{\"notes.md\":\"x\"}"));
    let folder = plugins.join("plain/v1");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("plain"), "#!/bin/sh\n").unwrap();

    let cases: &[(&str, &[&str])] = &[
        ("crashes", &["plugin crashes/v1 failed", "boom: no config"]),
        ("sleeps", &["plugin sleeps/v1 did not answer within"]),
        (
            "garbles",
            &["plugin garbles/v1 answered something that is not a kubebuilder PluginResponse"],
        ),
        ("errs", &["plugin errs/v1: first; second"]),
        (
            "escapes",
            &["answered a file outside the project: \"../outside.txt\""],
        ),
        ("absolute", &["outside the project"]),
        ("golang", &["writes Go source (api/v1/types.go)"]),
        ("rewrites", &["changed PROJECT beyond its own entry"]),
        ("overwrites", &["would overwrite Makefile"]),
        ("plain", &["is not an executable"]),
        ("missing", &["unknown plugin"]),
    ];
    for (name, expected) in cases {
        let key = format!("{name}/v1");
        let mut command = operator_rs(&dir);
        command
            .env("EXTERNAL_PLUGINS_PATH", &plugins)
            .env("OPERATOR_RS_PLUGIN_TIMEOUT", "1");
        let before = (tree(&dir), dirs(&dir));
        let out = command.args(["edit", "--plugins", &key]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{name} succeeded");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{name}: {stderr}");
        for piece in *expected {
            assert!(stderr.contains(piece), "{name}: {stderr:?} lacks {piece:?}");
        }
        assert!(
            before == (tree(&dir), dirs(&dir)),
            "{name} changed the project"
        );
    }
    assert!(!tmp.path().join("outside.txt").exists());
    assert!(!Path::new("/tmp/operator-rs-escape.txt").exists());
    // Two plugins chained: the second sees the first's file, and a failure of either writes
    // nothing of both.
    refused(
        &dir,
        &plugins,
        &["edit", "--plugins", "good/v1,crashes/v1"],
        &["plugin crashes/v1 failed"],
    );
    let out = ors(&dir, &plugins, &["edit", "--plugins", "good/v1"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(read(&dir, "notes.md"), "x");
}
