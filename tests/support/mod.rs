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
