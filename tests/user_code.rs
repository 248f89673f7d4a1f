//! User code is never overwritten. A kind's files (types, controller, sample,
//! webhooks, conversions) are the user's once written: later commands only add lines at their
//! scaffold markers, and `--force` renders one again only while it is still what operator-rs
//! wrote and the options it depends on changed. Adding a conversion spoke adds one file and its
//! registration lines; re-rendering a kind's types keeps the storage version where the hub moved
//! it.
//!
//! Every case ends one of two ways: refused (a non-zero exit, one line on stderr naming the file
//! and the rule, the tree byte for byte as it was), or written, with the user's edits intact,
//! every file parsing and nothing declared or listed twice.

mod support;

use std::path::{Path, PathBuf};

use support::{
    Tree, assert_nothing_twice, assert_refused, assert_tree_parses, folder, run_ok, tree,
};
use tempfile::TempDir;

/// A project made by `init --domain example.com`, then `commands` (each `operator-rs <args>
/// --make=false`).
fn project(commands: &[&str]) -> (TempDir, PathBuf) {
    let (tmp, dir) = folder("crew-operator");
    run_ok(&dir, &["init", "--domain", "example.com"]);
    for command in commands {
        run(&dir, command);
    }
    (tmp, dir)
}

/// `operator-rs <args> --make=false`, which must succeed.
fn run(dir: &Path, args: &str) -> String {
    run_ok(dir, &argv(args))
}

fn argv(args: &str) -> Vec<&str> {
    let mut argv: Vec<&str> = args.split_whitespace().collect();
    argv.push("--make=false");
    argv
}

fn read(dir: &Path, path: &str) -> String {
    std::fs::read_to_string(dir.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Edits `path` as a user would: appends code (and a comment) to it. Returns the new text.
fn edit(dir: &Path, path: &str, code: &str) -> String {
    let text = format!("{}{code}", read(dir, path));
    std::fs::write(dir.join(path), &text).unwrap();
    text
}

/// The paths that differ between two trees, with how.
fn changes(before: &Tree, after: &Tree) -> Vec<String> {
    let mut paths: Vec<&String> = before.keys().chain(after.keys()).collect();
    paths.sort();
    paths.dedup();
    paths
        .into_iter()
        .filter_map(|path| match (before.get(path), after.get(path)) {
            (None, Some(_)) => Some(format!("created {path}")),
            (Some(_), None) => Some(format!("deleted {path}")),
            (Some(a), Some(b)) if a != b => Some(format!("updated {path}")),
            _ => None,
        })
        .collect()
}

/// The project is sound: every file parses, nothing is declared or listed twice.
fn assert_sound(dir: &Path) {
    assert_tree_parses(dir);
    assert_nothing_twice(dir);
}

const FIRST_MATE: &[&str] = &[
    "create api --group crew --version v1 --kind FirstMate",
    "create api --group crew --version v2 --kind FirstMate --controller=false",
    "create api --group crew --version v3 --kind FirstMate --controller=false",
    "create webhook --group crew --version v1 --kind FirstMate --conversion --spoke v2",
];
const CONVERSION: &str = "src/webhook/v1/first_mate/conversion.rs";
const CONVERSION_V2: &str = "src/webhook/v1/first_mate/conversion_v2.rs";
const ADD_V3: &str =
    "create webhook --group crew --version v1 --kind FirstMate --conversion --spoke v3 --force";

/// The finding: adding a second spoke the way docs/create-webhook.md says overwrote the
/// hand-written conversion.rs and the existing spoke's file. It adds conversion_v3.rs and its
/// lines, and changes nothing else.
#[test]
fn adding_a_spoke_adds_its_file_and_keeps_the_hand_written_ones() {
    let (_tmp, dir) = project(FIRST_MATE);
    let conversion = edit(
        &dir,
        CONVERSION,
        "\n/// Hand-written.\npub fn versions() -> usize {\n    3\n}\n",
    );
    let conversion = conversion.replace(
        "/// The conversion webhook of FirstMate, with every spoke version.\n",
        "/// The conversion webhook of FirstMate: spokes oldest first (hand-written).\n",
    );
    std::fs::write(dir.join(CONVERSION), &conversion).unwrap();
    let spoke = read(&dir, CONVERSION_V2).replacen(
        "// TODO(user): convert the fields that differ between the versions.",
        "// v1 and v2 have the same fields (hand-written).",
        1,
    );
    std::fs::write(dir.join(CONVERSION_V2), &spoke).unwrap();
    let before = tree(&dir);

    run(&dir, ADD_V3);
    let after = tree(&dir);
    assert_eq!(
        changes(&before, &after),
        [
            "updated PROJECT",
            "updated src/webhook/v1/first_mate/conversion.rs",
            "created src/webhook/v1/first_mate/conversion_v3.rs",
            "updated src/webhook/v1/first_mate/mod.rs",
        ]
    );
    assert_eq!(
        read(&dir, CONVERSION),
        conversion.replace(
            "        Spoke::new::<crate::api::v2::FirstMate>(),\n",
            "        Spoke::new::<crate::api::v2::FirstMate>(),\n        Spoke::new::<crate::api::v3::FirstMate>(),\n",
        )
    );
    assert_eq!(read(&dir, CONVERSION_V2), spoke);
    let kind_mod = read(&dir, "src/webhook/v1/first_mate/mod.rs");
    assert!(
        kind_mod.contains("pub mod conversion_v2;\npub mod conversion_v3;\n"),
        "{kind_mod}"
    );
    assert!(
        read(&dir, "PROJECT").contains("    spoke:\n    - v2\n    - v3\n"),
        "the spokes in PROJECT"
    );
    assert_sound(&dir);

    // Again: nothing to do. Both spokes at once, as in a fresh project: the same.
    run(&dir, ADD_V3);
    run(
        &dir,
        "create webhook --group crew --version v1 --kind FirstMate --conversion --spoke v2 --spoke v3 --force",
    );
    assert!(after == tree(&dir), "re-running changed the tree");
}

const CAPTAIN: &[&str] = &[
    "create api --group crew --version v1 --kind Captain",
    "create webhook --group crew --version v1 --kind Captain --defaulting --programmatic-validation --defaulting-path=/mutate-captain",
    "create api --group crew --version v1 --kind Memcached --image=memcached:1.6 --image-container-port=11211",
    "create api --group apps --version v1 --kind Deployment --resource=false",
];

/// Every file of the kinds of [`CAPTAIN`] that is the user's.
const CAPTAIN_USER_FILES: &[&str] = &[
    "src/api/v1/captain.rs",
    "src/controller/captain.rs",
    "config/samples/crew_v1_captain.yaml",
    "src/webhook/v1/captain/defaulting.rs",
    "src/webhook/v1/captain/validation.rs",
    "src/api/v1/memcached.rs",
    "src/controller/memcached.rs",
    "config/samples/crew_v1_memcached.yaml",
    "tests/e2e/memcached.rs",
    "src/controller/deployment.rs",
];

/// Appends the user's code to `path`: a Rust function, or a YAML comment.
fn edit_user_file(dir: &Path, path: &str) -> String {
    if path.ends_with(".rs") {
        edit(
            dir,
            path,
            "\n/// Hand-written.\npub fn mine() -> u8 {\n    1\n}\n",
        )
    } else {
        edit(dir, path, "# Hand-written.\n")
    }
}

/// `--force` with the options the kinds were written with changes none of their files that the
/// user edited, and nothing else: everything is there already.
#[test]
fn force_with_the_same_options_keeps_every_edited_file() {
    let (_tmp, dir) = project(CAPTAIN);
    for path in CAPTAIN_USER_FILES {
        edit_user_file(&dir, path);
    }
    let before = tree(&dir);
    for command in CAPTAIN {
        run(&dir, &format!("{command} --force"));
    }
    // The recorded path is kept when none is given.
    run(
        &dir,
        "create webhook --group crew --version v1 --kind Captain --defaulting --force",
    );
    assert_eq!(changes(&before, &tree(&dir)), Vec::<String>::new());
    assert_sound(&dir);
}

/// `--force` with new options renders the files that depend on them again, while they are as
/// operator-rs wrote them.
#[test]
fn force_with_new_options_renders_unedited_files_again() {
    let (_tmp, dir) = project(CAPTAIN);
    let before = tree(&dir);
    run(
        &dir,
        "create api --group crew --version v1 --kind Captain --namespaced=false --force",
    );
    run(
        &dir,
        "create webhook --group crew --version v1 --kind Captain --defaulting --defaulting-path=/mutate-captain-v2 --force",
    );
    run(
        &dir,
        "create api --group crew --version v1 --kind Memcached --image=memcached:1.7 --image-container-port=11211 --force",
    );
    let changed = changes(&before, &tree(&dir));
    for path in [
        "src/api/v1/captain.rs",
        "src/webhook/v1/captain/defaulting.rs",
        "src/api/v1/memcached.rs",
        "src/controller/memcached.rs",
    ] {
        assert!(changed.contains(&format!("updated {path}")), "{changed:?}");
    }
    assert!(!read(&dir, "src/api/v1/captain.rs").contains("    namespaced,\n"));
    let defaulting = read(&dir, "src/webhook/v1/captain/defaulting.rs");
    assert!(
        defaulting.contains("\"/mutate-captain-v2\""),
        "{defaulting}"
    );
    assert!(read(&dir, "src/controller/memcached.rs").contains("memcached:1.7"));
    assert_sound(&dir);
}

/// An edited file that new options would change is refused, even with `--force`: one line
/// naming the file, and nothing written.
#[test]
fn force_never_replaces_an_edited_file() {
    let cases: &[(&str, &str)] = &[
        (
            "src/api/v1/captain.rs",
            "create api --group crew --version v1 --kind Captain --namespaced=false --force",
        ),
        (
            "src/controller/captain.rs",
            "create api --group crew --version v1 --kind Captain --namespaced=false --force",
        ),
        (
            "src/webhook/v1/captain/defaulting.rs",
            "create webhook --group crew --version v1 --kind Captain --defaulting --defaulting-path=/other --force",
        ),
        (
            "src/webhook/v1/captain/validation.rs",
            "create webhook --group crew --version v1 --kind Captain --programmatic-validation --validation-path=/other --force",
        ),
        (
            "src/controller/memcached.rs",
            "create api --group crew --version v1 --kind Memcached --image=memcached:1.7 --image-container-port=11211 --force",
        ),
        (
            "config/samples/crew_v1_memcached.yaml",
            "create api --group crew --version v1 --kind Memcached --image=memcached:1.6 --force",
        ),
    ];
    let (_tmp, dir) = project(CAPTAIN);
    for (path, command) in cases {
        let original = read(&dir, path);
        edit_user_file(&dir, path);
        assert_refused(
            &dir,
            &argv(command),
            &[
                &format!("{path} was edited since operator-rs wrote it"),
                "never replaces your code, even with --force",
                "move the file away",
            ],
        );
        std::fs::write(dir.join(path), original).unwrap();
    }
}

/// A file at a kind file's path that operator-rs did not write is the user's too.
#[test]
fn files_operator_rs_did_not_write_are_never_replaced() {
    let (_tmp, dir) = project(&FIRST_MATE[..3]);
    let cases: &[(&str, &str)] = &[
        (
            "src/api/v1/bosun.rs",
            "create api --group crew --version v1 --kind Bosun",
        ),
        (
            "src/api/v1/bosun.rs",
            "create api --group crew --version v1 --kind Bosun --force",
        ),
        (
            "src/controller/bosun.rs",
            "create api --group crew --version v1 --kind Bosun --force",
        ),
        (
            "src/webhook/v1/first_mate/defaulting.rs",
            "create webhook --group crew --version v1 --kind FirstMate --defaulting",
        ),
        (
            "src/webhook/v1/first_mate/conversion_v2.rs",
            "create webhook --group crew --version v1 --kind FirstMate --conversion --spoke v2",
        ),
    ];
    for (path, command) in cases {
        let file = dir.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "// Mine.\n").unwrap();
        assert_refused(
            &dir,
            &argv(command),
            &[
                &format!("{path} already exists"),
                "never replaces your code, even with --force",
            ],
        );
        std::fs::remove_file(&file).unwrap();
    }
}

/// `create webhook --conversion` makes the hub the storage version; re-rendering the kind's
/// types keeps it there, and a version written again gets it right.
#[test]
fn the_storage_version_stays_where_the_hub_moved_it() {
    let (_tmp, dir) = project(&[
        "create api --group crew --version v1 --kind FirstMate",
        "create api --group crew --version v2 --kind FirstMate --controller=false",
        "create webhook --group crew --version v2 --kind FirstMate --conversion --spoke v1",
    ]);
    let storing = |dir: &Path| -> Vec<String> {
        ["v1", "v2", "v3"]
            .into_iter()
            .filter(|v| {
                std::fs::read_to_string(dir.join(format!("src/api/{v}/first_mate.rs")))
                    .is_ok_and(|types| !types.contains("    storage = false,\n"))
            })
            .map(str::to_string)
            .collect()
    };
    assert_eq!(storing(&dir), ["v2"]);
    let v1 = read(&dir, "src/api/v1/first_mate.rs");
    let before = tree(&dir);
    run(
        &dir,
        "create api --group crew --version v1 --kind FirstMate --force",
    );
    run(
        &dir,
        "create api --group crew --version v2 --kind FirstMate --controller=false --force",
    );
    assert!(before == tree(&dir), "--force changed the tree");

    // A new version, then a new spoke: still one storage version.
    run(
        &dir,
        "create api --group crew --version v3 --kind FirstMate --controller=false",
    );
    run(
        &dir,
        "create webhook --group crew --version v2 --kind FirstMate --conversion --spoke v3 --force",
    );
    assert_eq!(storing(&dir), ["v2"]);

    // Deleted and written again: not the storage version, as before.
    std::fs::remove_file(dir.join("src/api/v1/first_mate.rs")).unwrap();
    run(
        &dir,
        "create api --group crew --version v1 --kind FirstMate --force",
    );
    assert_eq!(read(&dir, "src/api/v1/first_mate.rs"), v1);
    assert_eq!(storing(&dir), ["v2"]);
    assert_sound(&dir);
}

/// `--force` writes a kind's missing files again, as they were.
#[test]
fn force_writes_deleted_files_again() {
    let (_tmp, dir) = project(FIRST_MATE);
    let before = tree(&dir);
    for path in [CONVERSION_V2, "src/controller/first_mate.rs"] {
        std::fs::remove_file(dir.join(path)).unwrap();
    }
    run(
        &dir,
        "create webhook --group crew --version v1 --kind FirstMate --conversion --force",
    );
    run(
        &dir,
        "create api --group crew --version v1 --kind FirstMate --force",
    );
    assert!(before == tree(&dir), "{:?}", changes(&before, &tree(&dir)));
}

/// A file checked out with CRLF line endings is as operator-rs wrote it: `--force` with new
/// options renders it again, in CRLF; with the same options it is left alone.
#[test]
fn crlf_checkouts_are_unedited() {
    let (_tmp, dir) = project(&CAPTAIN[..1]);
    let path = "src/api/v1/captain.rs";
    let crlf = read(&dir, path).replace('\n', "\r\n");
    std::fs::write(dir.join(path), &crlf).unwrap();
    run(
        &dir,
        "create api --group crew --version v1 --kind Captain --force",
    );
    assert_eq!(read(&dir, path), crlf);
    run(
        &dir,
        "create api --group crew --version v1 --kind Captain --namespaced=false --force",
    );
    let types = read(&dir, path);
    assert!(!types.contains("namespaced,"), "{types}");
    assert_eq!(types.matches('\n').count(), types.matches("\r\n").count());
    assert_sound(&dir);
}

/// Adding a spoke to a conversion.rs whose marker the user removed is refused, naming the file
/// and the marker; nothing is written.
#[test]
fn a_spoke_needs_the_marker_of_conversion_rs() {
    let (_tmp, dir) = project(FIRST_MATE);
    let text = read(&dir, CONVERSION).replace("// +operator-rs:scaffold:conversion-spokes\n", "");
    std::fs::write(dir.join(CONVERSION), text).unwrap();
    assert_refused(
        &dir,
        &argv(ADD_V3),
        &[CONVERSION, "// +operator-rs:scaffold:conversion-spokes"],
    );
}
