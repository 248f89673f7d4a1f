//! Markers survive ordinary editing: `cargo fmt` reflowing inserted lines,
//! CRLF line endings, reformatted marker comments and edited module declarations. Commands
//! still insert at the markers, keep every insertion idempotent and never declare a module or
//! list an entry twice. A marker edited beyond recognition is refused: one line naming the file
//! and the marker, the tree byte for byte as it was.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::{
    Tree, assert_nothing_twice, assert_refused, assert_tree_parses, folder, is_runtime, run_ok,
    tree,
};
use tempfile::TempDir;

/// A project made by `init --domain example.com <init>` in a folder `name`.
fn init(name: &str, flags: &[&str]) -> (TempDir, PathBuf) {
    let (tmp, dir) = folder(name);
    let mut argv = vec!["init", "--domain", "example.com"];
    argv.extend(flags);
    run_ok(&dir, &argv);
    (tmp, dir)
}

/// `operator-rs <args> --make=false`, which must succeed.
fn run(dir: &Path, args: &str) {
    run_ok(dir, &argv(args));
}

fn argv(args: &str) -> Vec<&str> {
    let mut argv: Vec<&str> = args.split_whitespace().collect();
    argv.push("--make=false");
    argv
}

fn read(dir: &Path, path: &str) -> String {
    std::fs::read_to_string(dir.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Rewrites every text file of the project outside the runtime crate with `f` (path, text).
fn rewrite(dir: &Path, f: impl Fn(&str, &str) -> String) {
    for (path, bytes) in tree(dir) {
        if is_runtime(&path) {
            continue;
        }
        if let Ok(text) = String::from_utf8(bytes) {
            let new = f(&path, &text);
            if new != text {
                std::fs::write(dir.join(&path), new).unwrap();
            }
        }
    }
}

/// Commands that insert at every kind of marker: Rust and YAML, modules (sorted), lists,
/// multi-line fragments, uncommented blocks, the storage version moved to a hub, a spoke added
/// later, and the deploy-image plugin's image variable.
const SEQUENCE: &[&str] = &[
    "create api --group crew --version v1 --kind Captain",
    "create api --group crew --version v1 --kind FirstMate",
    "create api --group crew --version v2 --kind FirstMate --controller=false",
    "create webhook --group crew --version v1 --kind Captain --defaulting --programmatic-validation",
    "create webhook --group crew --version v2 --kind FirstMate --conversion --spoke v1",
    "create api --group crew --version v1alpha1 --kind Memcached --image=memcached:1.6",
    "create api --group crew --version v3 --kind FirstMate --controller=false",
    "create webhook --group crew --version v2 --kind FirstMate --conversion --spoke v3 --force",
    "create api --group apps --version v1 --kind Deployment --resource=false",
];

/// Runs the sequence in two projects: one as init wrote it, one edited by `edit` after init
/// (and after the first two commands), and returns both trees.
fn both(edit: impl Fn(&Path)) -> (Tree, Tree, TempDir, TempDir) {
    let (tmp_a, plain) = init("crew-operator", &[]);
    let (tmp_b, edited) = init("crew-operator", &[]);
    edit(&edited);
    for (i, command) in SEQUENCE.iter().enumerate() {
        run(&plain, command);
        run(&edited, command);
        if i == 1 {
            edit(&edited);
        }
    }
    // Everything again with --force: nothing is added twice.
    let once = tree(&edited);
    for command in SEQUENCE {
        let command = command.replace(" --force", "");
        run(&edited, &format!("{command} --force"));
    }
    assert!(once == tree(&edited), "--force changed the edited project");
    assert_tree_parses(&edited);
    assert_nothing_twice(&edited);
    (tree(&plain), tree(&edited), tmp_a, tmp_b)
}

/// CRLF line endings: every command makes the same changes as in an LF project, and the files
/// it edits keep their CRLF line endings.
#[test]
fn crlf_files_get_the_same_insertions_and_keep_their_line_endings() {
    let to_crlf = |dir: &Path| {
        rewrite(dir, |_, text| {
            text.replace("\r\n", "\n").replace('\n', "\r\n")
        });
    };
    let (plain, edited, _a, _b) = both(to_crlf);
    let mut crlf_files = 0;
    for (path, bytes) in &edited {
        let text = String::from_utf8_lossy(bytes);
        let lf = text.replace("\r\n", "\n");
        assert_eq!(
            Some(&lf.into_bytes()),
            plain.get(path),
            "{path} differs from the LF project's"
        );
        // Files the sequence created are LF; PROJECT is operator-rs's and rewritten. Every other
        // file was CRLF and still is, edited or not.
        if text.contains("\r\n") && path != "PROJECT" {
            crlf_files += 1;
            let bare = text.replace("\r\n", "").matches('\n').count();
            assert_eq!(bare, 0, "{path} has LF lines among its CRLF lines");
        }
    }
    assert!(crlf_files > 20, "{crlf_files}");
    for edited_by_the_sequence in [
        "src/api/mod.rs",
        "src/api/v1/mod.rs",
        "src/api/v1/first_mate.rs",
        "src/controller/mod.rs",
        "src/webhook/mod.rs",
        "config/default/kustomization.yaml",
        "config/crd/kustomization.yaml",
        "config/manager/manager.yaml",
        "tests/e2e/main.rs",
    ] {
        let text = String::from_utf8_lossy(&edited[edited_by_the_sequence]);
        assert!(text.contains("\r\n"), "{edited_by_the_sequence} lost CRLF");
    }
}

/// Marker comments reformatted (no space after the comment token, trailing white space, tabs):
/// every command inserts exactly as it does at the markers that init wrote.
#[test]
fn reformatted_markers_are_found() {
    let reformat = |text: &str| {
        text.lines()
            .map(|line| {
                let indent = &line[..line.len() - line.trim_start().len()];
                match line.trim_start() {
                    rest if rest.starts_with("// +operator-rs:scaffold:") => {
                        format!("{indent}//+{}  ", &rest["// +".len()..])
                    }
                    rest if rest.starts_with("# +operator-rs:scaffold:") => {
                        format!("{indent}#   +{}\t", &rest["# +".len()..])
                    }
                    _ => line.to_string(),
                }
            })
            .map(|line| line + "\n")
            .collect::<String>()
    };
    let (plain, edited, _a, _b) = both(|dir| rewrite(dir, |_, text| reformat(text)));
    // Files the sequence created have the markers as templates write them: compare both trees
    // with every marker reformatted.
    let reformatted = |tree: &Tree| -> Tree {
        tree.iter()
            .map(|(path, bytes)| {
                let text = String::from_utf8_lossy(bytes);
                let same = is_runtime(path) || !text.contains("+operator-rs:scaffold:");
                let text = if same {
                    text.into_owned()
                } else {
                    reformat(&text)
                };
                (path.clone(), text.into_bytes())
            })
            .collect()
    };
    let (plain, edited) = (reformatted(&plain), reformatted(&edited));
    let differ: Vec<&String> = edited
        .keys()
        .filter(|path| edited.get(*path) != plain.get(*path))
        .collect();
    assert!(differ.is_empty(), "{differ:?}");
    assert_eq!(edited.len(), plain.len());
}

/// Module declarations edited (visibility) and list entries reflowed: nothing is added again.
#[test]
fn edited_declarations_are_not_added_again() {
    let edit = |dir: &Path| {
        rewrite(dir, |path, text| match path {
            "src/api/mod.rs" => text.replace("pub mod v1;", "pub(crate) mod v1;"),
            "src/controller/mod.rs" => text
                .replace("pub mod captain;", "pub(crate) mod captain;")
                .replace("captain::CONTROLLER,", "captain :: CONTROLLER ,"),
            "src/api/v1/mod.rs" => text.replace(
                "pub use captain::{Captain, CaptainSpec, CaptainStatus};",
                "pub use captain::{\n    Captain, CaptainSpec,\n    CaptainStatus,\n};",
            ),
            _ => text.to_string(),
        })
    };
    let (_plain, edited, _a, _b) = both(edit);
    let text = |path: &str| String::from_utf8_lossy(&edited[path]).into_owned();
    assert!(text("src/api/mod.rs").contains("pub(crate) mod v1;\npub mod v1alpha1;\n"));
    assert_eq!(text("src/api/mod.rs").matches("mod v1;").count(), 1);
    // Captain, FirstMate, Memcached and Deployment, once each.
    assert_eq!(
        text("src/controller/mod.rs").matches("CONTROLLER").count(),
        4
    );
}

/// Whether rustfmt leaves the project's Rust files as they are (`cargo fmt --check`).
fn rustfmt_check(dir: &Path) -> bool {
    Command::new("rustfmt")
        .args(["--edition", "2024", "--check", "src/lib.rs", "src/main.rs"])
        .current_dir(dir)
        .output()
        .unwrap()
        .status
        .success()
}

/// `cargo fmt` reflows the lines inserted for long names that a project generated without
/// rustfmt has (a `pub use` over several lines, with rustfmt's trailing comma): commands run
/// afterwards find them and add nothing twice. With rustfmt, operator-rs writes those lines
/// reflowed itself: the project stays `cargo fmt --check` clean.
#[test]
fn lines_reflowed_by_rustfmt_are_found() {
    let rustfmt = Command::new("rustfmt").arg("--version").output();
    if !rustfmt.is_ok_and(|out| out.status.success()) {
        eprintln!("rustfmt is not installed: skipped");
        return;
    }
    let kind = "ThirdOfficerOfTheWatchOnTheStarboardSide";
    let commands = [
        format!("create api --group crew --version v1 --kind {kind}"),
        format!("create api --group crew --version v2 --kind {kind} --controller=false"),
        format!(
            "create webhook --group crew --version v1 --kind {kind} --conversion --spoke v2 --defaulting"
        ),
    ];
    let (_tmp, dir) = init("crew-operator", &[]);
    // Without rustfmt on the PATH, the inserted lines stay as long as they are.
    let no_tools = tempfile::tempdir().unwrap();
    for command in &commands {
        let out = support::operator_rs(&dir)
            .env("PATH", no_tools.path())
            .args(argv(command))
            .output()
            .unwrap();
        assert!(out.status.success(), "{command}: {out:?}");
    }
    assert!(!rustfmt_check(&dir), "the long lines are there");
    // `cargo fmt`: rustfmt on the crate roots formats every module.
    let status = Command::new("rustfmt")
        .args(["--edition", "2024", "src/lib.rs", "src/main.rs"])
        .current_dir(&dir)
        .status()
        .unwrap();
    assert!(status.success());
    let modules = read(&dir, "src/api/v1/mod.rs");
    assert!(
        modules.contains("pub use third_officer_of_the_watch_on_the_starboard_side::{\n"),
        "rustfmt did not reflow the re-export:\n{modules}"
    );
    let formatted = tree(&dir);
    for command in &commands {
        run(&dir, &format!("{command} --force"));
    }
    assert!(
        formatted == tree(&dir),
        "--force changed the formatted tree"
    );
    // More versions and kinds: their lines are added next to the reflowed ones, reflowed too.
    run(
        &dir,
        &format!("create api --group crew --version v3 --kind {kind} --controller=false"),
    );
    run(
        &dir,
        &format!(
            "create webhook --group crew --version v1 --kind {kind} --conversion --spoke v3 --force"
        ),
    );
    run(&dir, "create api --group crew --version v1 --kind Captain");
    run(
        &dir,
        &format!(
            "create webhook --group crew --version v2 --kind {kind} --programmatic-validation"
        ),
    );
    assert_tree_parses(&dir);
    assert_nothing_twice(&dir);
    assert!(rustfmt_check(&dir), "cargo fmt --check fails");
    let modules = read(&dir, "src/api/v1/mod.rs");
    assert!(
        modules.contains(
            "pub mod captain;\npub use captain::{Captain, CaptainSpec, CaptainStatus};\n"
        ),
        "{modules}"
    );
    // The same commands in a project made with rustfmt: clean all along.
    let (_tmp, fresh) = init("crew-operator", &[]);
    for command in &commands {
        run(&fresh, command);
        assert!(rustfmt_check(&fresh), "{command}: cargo fmt --check fails");
    }
}

/// A marker edited beyond recognition (its `+` or its name changed, or moved after code) is not
/// a marker: the command is refused, naming the file and the marker to restore.
#[test]
fn markers_edited_beyond_recognition_are_refused() {
    let (_tmp, dir) = init("crew-operator", &[]);
    run(&dir, "create api --group crew --version v1 --kind Captain");
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "src/controller/mod.rs",
            "// +operator-rs:scaffold:controllers",
            "// operator-rs:scaffold:controllers",
            "create api --group crew --version v1 --kind Sailor",
        ),
        (
            "src/api/mod.rs",
            "// +operator-rs:scaffold:crds",
            "// +operator-rs:scaffold:crd",
            "create api --group crew --version v1 --kind Sailor",
        ),
        (
            "src/webhook/mod.rs",
            "        // +operator-rs:scaffold:webhooks",
            "        vec![]; // +operator-rs:scaffold:webhooks",
            "create webhook --group crew --version v1 --kind Captain --defaulting",
        ),
        (
            "config/crd/kustomization.yaml",
            "# +operator-rs:scaffold:crdkustomizeresource",
            "# operator-rs scaffold crdkustomizeresource",
            "create api --group crew --version v1 --kind Sailor",
        ),
        (
            "config/samples/kustomization.yaml",
            "# +operator-rs:scaffold:manifestskustomizesamples",
            "// +operator-rs:scaffold:manifestskustomizesamples",
            "create api --group crew --version v1 --kind Sailor",
        ),
    ];
    for (path, marker, mangled, command) in cases {
        let original = read(&dir, path);
        assert!(original.contains(marker), "{path}");
        std::fs::write(dir.join(path), original.replace(marker, mangled)).unwrap();
        let name = marker.trim_start().trim_start_matches(['/', '#', ' ']);
        assert_refused(&dir, &argv(command), &[path, name, "Restore the line"]);
        std::fs::write(dir.join(path), original).unwrap();
    }
}
