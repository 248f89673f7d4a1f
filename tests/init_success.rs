//! `operator-rs init` on good input: what it prints, that it is deterministic, and the other
//! commands of the CLI.

mod support;

use support::{folder, operator_rs, tree};

#[test]
fn init_prints_the_next_step() {
    let (_tmp, dir) = folder("demo");
    let out = operator_rs(&dir)
        .args(["init", "--domain", "example.com"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("operator-rs create api"), "{stdout}");
}

#[test]
fn two_runs_write_byte_identical_trees() {
    let (_a, first) = folder("demo");
    let (_b, second) = folder("demo");
    for dir in [&first, &second] {
        operator_rs(dir)
            .args(["init", "--domain", "example.com", "--owner", "Acme"])
            .assert()
            .success();
    }
    let (a, b) = (tree(&first), tree(&second));
    assert!(a.len() > 30, "init wrote only {} files", a.len());
    assert!(a == b, "the two trees differ");
}

#[test]
fn the_project_file_records_init() {
    let (_tmp, dir) = folder("crew-operator");
    operator_rs(&dir)
        .args([
            "init",
            "--domain",
            "example.com",
            "--namespaced",
            "--multigroup",
        ])
        .assert()
        .success();
    let project = std::fs::read_to_string(dir.join("PROJECT")).unwrap();
    let body: Vec<&str> = project.lines().skip(4).collect();
    assert_eq!(
        body,
        [
            &format!("cliVersion: {}", env!("CARGO_PKG_VERSION")) as &str,
            "domain: example.com",
            "layout:",
            "- rust.operator-rs.io/v1-alpha",
            "multigroup: true",
            "namespaced: true",
            "projectName: crew-operator",
            "version: \"3\"",
        ]
    );
}

#[test]
fn license_none_writes_no_header() {
    let (_tmp, dir) = folder("demo");
    operator_rs(&dir)
        .args(["init", "--license", "none"])
        .assert()
        .success();
    assert!(!dir.join("hack/boilerplate.rs.txt").exists());
    let main = std::fs::read_to_string(dir.join("src/main.rs")).unwrap();
    assert!(!main.contains("Copyright"), "{main}");
}

#[test]
fn the_license_header_names_owner_and_year() {
    let (_tmp, dir) = folder("demo");
    operator_rs(&dir)
        .args(["init", "--owner", "Acme Corp"])
        .assert()
        .success();
    let header = std::fs::read_to_string(dir.join("hack/boilerplate.rs.txt")).unwrap();
    // SOURCE_DATE_EPOCH=1790000000 is in 2026.
    assert!(
        header.starts_with("// Copyright 2026 Acme Corp.\n"),
        "{header}"
    );
    let main = std::fs::read_to_string(dir.join("src/main.rs")).unwrap();
    assert!(
        main.starts_with(&header),
        "src/main.rs does not start with the header"
    );
}

#[test]
fn version_and_completion() {
    let (_tmp, dir) = folder("x");
    let out = operator_rs(&dir).arg("version").output().unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .starts_with(&format!("operator-rs {}", env!("CARGO_PKG_VERSION")))
    );
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let out = operator_rs(&dir)
            .args(["completion", shell])
            .output()
            .unwrap();
        assert!(out.status.success(), "{shell}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("init"),
            "{shell}"
        );
    }
}

#[test]
fn every_help_has_examples() {
    let (_tmp, dir) = folder("x");
    for args in [
        vec!["--help"],
        vec!["init", "--help"],
        vec!["version", "--help"],
        vec!["completion", "--help"],
    ] {
        let out = operator_rs(&dir).args(&args).output().unwrap();
        assert!(out.status.success());
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("Example"),
            "{args:?}"
        );
    }
}
