//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod openapi;
pub mod serde_model;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use assert_cmd::Command;
use operator_rs::project::Project;
use operator_rs::runtime_crate;

/// A tree as [`tree`] returns it: relative path -> bytes.
pub type Tree = BTreeMap<String, Vec<u8>>;

/// The operator-rs binary, run in `dir`, with a fixed year so trees are reproducible.
pub fn operator_rs(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("operator-rs").expect("the binary is built for tests");
    cmd.current_dir(dir)
        .env("SOURCE_DATE_EPOCH", "1790000000")
        .env_remove("RUST_BACKTRACE");
    cmd
}

/// Every file under `dir` with its bytes, keyed by relative path: the whole state of a tree.
pub fn tree(dir: &Path) -> Tree {
    walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .map(|e| e.expect("readable tree"))
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e
                .path()
                .strip_prefix(dir)
                .expect("under dir")
                .to_string_lossy()
                .replace('\\', "/");
            (rel, std::fs::read(e.path()).expect("readable file"))
        })
        .collect()
}

/// Every directory under `dir` (relative), to check that failed commands leave none behind.
pub fn dirs(dir: &Path) -> Vec<String> {
    walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .map(|e| e.expect("readable tree"))
        .filter(|e| e.file_type().is_dir())
        .map(|e| {
            e.path()
                .strip_prefix(dir)
                .expect("under dir")
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

/// A fresh folder named `name` inside a temporary directory.
pub fn folder(name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().join(name);
    std::fs::create_dir(&dir).expect("create folder");
    (tmp, dir)
}

/// Runs a command that must fail, and checks the failure contract: a non-zero exit, exactly one
/// line on stderr containing every `expected` piece, no panic, nothing on disk changed.
pub fn assert_refused(dir: &Path, args: &[&str], expected: &[&str]) -> String {
    let before = (tree(dir), dirs(dir));
    let out = operator_rs(dir).args(args).output().expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "{args:?} succeeded");
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "{args:?}: not one line: {stderr}"
    );
    for piece in expected {
        assert!(
            stderr.contains(piece),
            "{args:?}: {stderr:?} does not mention {piece:?}"
        );
    }
    assert!(
        before == (tree(dir), dirs(dir)),
        "{args:?} changed the tree"
    );
    stderr
}

/// Fails when `tests/snapshots/` holds a snapshot of `scenario` that the test no longer makes
/// (a step that is gone or was renamed), so removed steps cannot hide in stale snapshots.
pub fn assert_no_stale_snapshots(test_file: &str, scenario: &str, names: &[String]) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    let prefix = format!("{test_file}__{scenario}__");
    let stale: Vec<String> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_else(|_| Vec::new())
        .into_iter()
        .filter_map(|file: String| {
            file.strip_prefix(&prefix)
                .and_then(|rest| rest.strip_suffix(".snap"))
                .map(str::to_string)
        })
        .filter(|name| {
            !names
                .iter()
                .any(|n| n == &format!("{scenario}__{name}") || n == name)
        })
        .collect();
    assert!(
        stale.is_empty(),
        "stale snapshots in tests/snapshots for {scenario}: {stale:?}; delete them"
    );
}

/// Runs operator-rs in `dir` and fails the test unless it succeeds; returns its stdout, then its
/// stderr (where warnings and notes of interrupted commands go).
pub fn run_ok(dir: &Path, args: &[&str]) -> String {
    let out = operator_rs(dir).args(args).output().expect("runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{args:?} failed: {text}");
    text
}

/// `alpha generate` of the project in `dir` into `out`, without `make manifests`; returns what
/// it printed.
pub fn generate_into(dir: &Path, out: &Path) -> String {
    let out = out.display().to_string();
    run_ok(
        dir,
        &["alpha", "generate", "--output-dir", &out, "--make=false"],
    )
}

/// Whether `path` (relative to a project) is in a crate that `init` vendors (the runtime and the
/// testing crate): operator-rs's code, tested as code in `runtime/` and `testing/`, so never part
/// of a snapshot.
pub fn is_runtime(path: &str) -> bool {
    runtime_crate::owns(path)
}

/// Checks that the project in `dir` holds the crates this operator-rs vendors, byte for byte:
/// `operator-rs-runtime/` and `operator-rs-testing/` are exactly
/// `operator_rs::runtime_crate::files()`.
pub fn assert_runtime_is_the_shipped_crate(dir: &Path) {
    let shipped: Tree = runtime_crate::files()
        .into_iter()
        .map(|(path, text)| (path, text.as_bytes().to_vec()))
        .collect();
    assert!(!shipped.is_empty(), "operator-rs vendors no crate");
    let written: Tree = tree(dir)
        .into_iter()
        .filter(|(path, _)| is_runtime(path))
        .collect();
    let paths: BTreeSet<&String> = shipped.keys().chain(written.keys()).collect();
    let wrong: Vec<String> = paths
        .into_iter()
        .filter_map(|path| match (shipped.get(path), written.get(path)) {
            (Some(_), None) => Some(format!("{path}: missing")),
            (None, Some(_)) => Some(format!("{path}: not in the runtime crate")),
            (Some(a), Some(b)) if a != b => Some(format!("{path}: differs")),
            _ => None,
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "the vendored crates are not the ones operator-rs ships: {wrong:#?}"
    );
}

/// What one command of a scenario did to the project.
pub struct Step {
    /// `NN_<command>[_<group>_<version>_<Kind>][_<flag>…]`: the step's snapshot name within its
    /// scenario.
    pub name: String,
    /// The snapshot: the command line, then the files created, updated and deleted, the full
    /// contents of each created file and a unified diff of each updated one. The runtime crate is
    /// left out (see [`is_runtime`]).
    pub document: String,
    /// What the command printed on stderr (warnings).
    pub stderr: String,
}

/// Runs `operator-rs <args>` in `dir` as step `number` of a scenario, which must succeed, and
/// describes what it changed. Only `init` may write the vendored crates.
pub fn step(dir: &Path, number: usize, args: &[&str]) -> Step {
    let before = tree(dir);
    let stderr = run_ok(dir, args);
    let after = tree(dir);
    if args.first() != Some(&"init") {
        let runtime = |t: &Tree| -> Tree {
            t.iter()
                .filter(|(path, _)| is_runtime(path))
                .map(|(path, bytes)| (path.clone(), bytes.clone()))
                .collect()
        };
        assert!(
            runtime(&before) == runtime(&after),
            "{args:?} changed a vendored crate, which only init writes"
        );
    }
    Step {
        name: format!("{number:02}_{}", step_slug(args)),
        document: change_document(args, &before, &after),
        stderr,
    }
}

/// Runs `commands` in `dir` as steps 01, 02, … of `scenario` (step 00, `init`, is snapshotted by
/// init_snapshots.rs), hands each step's document to `snapshot` as
/// `<scenario>__<step name>`, then checks that `tests/snapshots` holds no other step of the
/// scenario. `snapshot` must be a closure in the test file calling `insta::assert_snapshot!`, so
/// that insta names the files after that test file (`test_file`).
pub fn snapshot_steps(
    test_file: &str,
    scenario: &str,
    dir: &Path,
    commands: &[Vec<&str>],
    mut snapshot: impl FnMut(&str, &str),
) {
    let mut names = Vec::new();
    for (i, args) in commands.iter().enumerate() {
        let step = step(dir, i + 1, args);
        let name = format!("{scenario}__{}", step.name);
        snapshot(&name, &step.document);
        names.push(name);
    }
    assert_no_stale_snapshots(test_file, scenario, &names);
}

/// `create_api_crew_v2_FirstMate`: the subcommand, the resource, and the flags that say what kind
/// of change it is, for a snapshot name.
fn step_slug(args: &[&str]) -> String {
    let mut parts: Vec<&str> = args
        .iter()
        .take_while(|arg| !arg.starts_with('-'))
        .copied()
        .collect();
    for flag in ["--group", "--version", "--kind"] {
        let value = args
            .iter()
            .enumerate()
            .find_map(|(i, arg)| match arg.strip_prefix(flag) {
                Some("") => args.get(i + 1).copied(),
                Some(rest) => rest.strip_prefix('='),
                None => None,
            });
        parts.extend(value);
    }
    for (flag, word) in [
        ("--defaulting", "defaulting"),
        ("--programmatic-validation", "validation"),
        ("--conversion", "conversion"),
        ("--force", "force"),
        ("--sharding", "sharding"),
        ("--sharding=false", "sharding_false"),
    ] {
        if args.contains(&flag) {
            parts.push(word);
        }
    }
    parts
        .join("_")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The snapshot document of one command (see [`Step::document`]).
pub fn change_document(args: &[&str], before: &Tree, after: &Tree) -> String {
    let mut out = format!("$ operator-rs {}\n", args.join(" "));
    let paths: BTreeSet<&String> = before
        .keys()
        .chain(after.keys())
        .filter(|path| !is_runtime(path))
        .collect();
    let changes: Vec<(&str, &String)> = paths
        .into_iter()
        .filter_map(|path| match (before.get(path), after.get(path)) {
            (None, Some(_)) => Some(("created", path)),
            (Some(a), Some(b)) if a != b => Some(("updated", path)),
            (Some(_), None) => Some(("deleted", path)),
            _ => None,
        })
        .collect();
    if changes.is_empty() {
        out.push_str("\nno file changed\n");
        return out;
    }
    out.push('\n');
    for (verb, path) in &changes {
        writeln!(out, "{verb} {path}").unwrap();
    }
    for (verb, path) in &changes {
        let new = after.get(*path).map(|b| String::from_utf8_lossy(b));
        match *verb {
            "created" => {
                let text = new.unwrap();
                write!(out, "\n==> created: {path} <==\n{text}").unwrap();
                if !text.ends_with('\n') {
                    out.push_str("\n\\ No newline at end of file\n");
                }
            }
            "updated" => {
                let old = String::from_utf8_lossy(&before[*path]);
                let new = new.unwrap();
                let diff = similar::TextDiff::from_lines(old.as_ref(), new.as_ref())
                    .unified_diff()
                    .context_radius(3)
                    .header(&format!("a/{path}"), &format!("b/{path}"))
                    .to_string();
                write!(out, "\n==> updated: {path} <==\n{diff}").unwrap();
            }
            _ => {}
        }
    }
    out
}

/// Every file of `files` (path, contents) parses as what its name says; PROJECT re-loads.
pub fn assert_files_parse<'a>(files: impl IntoIterator<Item = (&'a str, &'a str)>) {
    for (path, text) in files {
        if is_runtime(path) {
            continue; // operator-rs's own crates, the same bytes in every project
        }
        let name = path.rsplit('/').next().unwrap_or(path);
        if path.ends_with(".yaml") || path.ends_with(".yml") {
            for doc in serde_yaml::Deserializer::from_str(text) {
                let parsed = <serde_yaml::Value as serde::Deserialize>::deserialize(doc);
                assert!(parsed.is_ok(), "{path} is not YAML: {parsed:?}\n{text}");
            }
        } else if path.ends_with(".toml") || name == "Cargo.lock" {
            let parsed = text.parse::<toml_edit::DocumentMut>();
            assert!(parsed.is_ok(), "{path} is not TOML: {parsed:?}\n{text}");
        } else if path.ends_with(".rs") {
            if let Err(err) = syn::parse_file(text) {
                panic!("{path} is not Rust: {err}\n{text}");
            }
            let bad = text
                .chars()
                .find(|&c| operator_rs::names::is_format_char(c) || c == '\u{2028}');
            assert!(bad.is_none(), "{path} has {bad:?}");
        } else if path == "PROJECT" {
            let project = Project::parse(text).unwrap_or_else(|e| panic!("PROJECT: {e:#}\n{text}"));
            project
                .validate()
                .unwrap_or_else(|e| panic!("PROJECT: {e:#}\n{text}"));
            assert_eq!(project.render(), text, "PROJECT does not round-trip");
        }
    }
}

/// Every file in the project folder parses (see [`assert_files_parse`]).
pub fn assert_tree_parses(dir: &Path) {
    let files: Vec<(String, String)> = tree(dir)
        .into_iter()
        .filter_map(|(path, bytes)| String::from_utf8(bytes).ok().map(|text| (path, text)))
        .collect();
    assert_files_parse(files.iter().map(|(p, t)| (p.as_str(), t.as_str())));
}

/// What scaffold markers add is never there twice: no Rust file of the project declares a module
/// twice or lists an entry twice in a `vec![...]` (the kinds' CRDs, controllers, webhooks,
/// conversion spokes), and no kustomization lists an entry twice.
pub fn assert_nothing_twice(dir: &Path) {
    for (path, bytes) in tree(dir) {
        if is_runtime(&path) || path.starts_with("target/") {
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        if path.ends_with(".rs") {
            let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
            let mut modules = BTreeSet::new();
            for item in &file.items {
                if let syn::Item::Mod(module) = item {
                    let name = module.ident.to_string();
                    assert!(
                        modules.insert(name.clone()),
                        "{path} declares mod {name} twice"
                    );
                }
                if let syn::Item::Fn(function) = item {
                    for list in vec_lists(&function.block.stmts) {
                        let mut seen = BTreeSet::new();
                        for entry in list {
                            assert!(seen.insert(entry.clone()), "{path} lists {entry} twice");
                        }
                    }
                }
            }
        } else if path.ends_with("kustomization.yaml") {
            let yaml: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
            for (key, value) in yaml.as_mapping().into_iter().flatten() {
                let mut seen = BTreeSet::new();
                for entry in value.as_sequence().into_iter().flatten() {
                    let entry = serde_yaml::to_string(entry).unwrap();
                    assert!(
                        seen.insert(entry.clone()),
                        "{path}: {key:?} lists {entry} twice"
                    );
                }
            }
        }
    }
}

/// The entries of the `vec![...]` lists in `stmts` (a function's body), as token text.
fn vec_lists(stmts: &[syn::Stmt]) -> Vec<Vec<String>> {
    let macros = stmts.iter().filter_map(|stmt| match stmt {
        syn::Stmt::Local(local) => match local.init.as_ref().map(|init| &*init.expr) {
            Some(syn::Expr::Macro(m)) => Some(&m.mac),
            _ => None,
        },
        syn::Stmt::Expr(syn::Expr::Macro(m), _) => Some(&m.mac),
        syn::Stmt::Macro(m) => Some(&m.mac),
        _ => None,
    });
    macros
        .filter(|mac| mac.path.is_ident("vec"))
        .map(|mac| {
            let mut entries = vec![String::new()];
            for token in mac.tokens.clone() {
                match token.to_string().as_str() {
                    "," => entries.push(String::new()),
                    text => entries.last_mut().unwrap().push_str(text),
                }
            }
            entries.retain(|entry| !entry.is_empty());
            entries
        })
        .collect()
}

/// Writes `text` to `path` as an executable script (a stand-in for a program a command runs).
pub fn executable(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}
