//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::Path;

use assert_cmd::Command;

/// The operator-rs binary, run in `dir`, with a fixed year so trees are reproducible.
pub fn operator_rs(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("operator-rs").expect("the binary is built for tests");
    cmd.current_dir(dir)
        .env("SOURCE_DATE_EPOCH", "1790000000")
        .env_remove("RUST_BACKTRACE");
    cmd
}

/// Every file under `dir` with its bytes, keyed by relative path: the whole state of a tree.
pub fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
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
pub fn assert_refused(dir: &Path, args: &[&str], expected: &[&str]) {
    let before = (tree(dir), dirs(dir));
    let out = operator_rs(dir).args(args).output().expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
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
}

/// Fails when `tests/snapshots/` holds a snapshot of `scenario` that the test no longer makes
/// (a file that is not generated any more), so removed files cannot hide in stale snapshots.
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

/// Runs operator-rs in `dir` and fails the test unless it succeeds; returns its stderr (where
/// warnings go).
pub fn run_ok(dir: &Path, args: &[&str]) -> String {
    let out = operator_rs(dir).args(args).output().expect("runs");
    assert!(
        out.status.success(),
        "{args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}
