//! `operator-rs init` refuses bad input with one clear line and leaves the folder untouched.

mod support;

use support::{assert_refused, folder, operator_rs, tree};

/// A folder with a user's file in it, so "unchanged" means something.
fn user_folder(name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let (tmp, dir) = folder(name);
    std::fs::write(dir.join("notes.txt"), "mine\n").unwrap();
    (tmp, dir)
}

#[test]
fn invalid_domains() {
    let (_tmp, dir) = user_folder("demo");
    let long = format!("{}.com", "a".repeat(296));
    for bad in [
        "Example.COM",
        "-x.com",
        "a..b",
        "a b",
        &long,
        "../etc",
        "{{ domain }}",
        "{% if x %}",
        "",
    ] {
        let rule = if bad.is_empty() {
            "must not be empty"
        } else {
            "DNS-1123 subdomain"
        };
        let shown = if bad.len() > 80 {
            "aaaa".to_string()
        } else {
            format!("{bad:?}")
        };
        assert_refused(
            &dir,
            &["init", "--domain", bad],
            &["--domain", &shown, rule],
        );
    }
}

#[test]
fn invalid_project_names() {
    let (_tmp, dir) = user_folder("demo");
    let long = "a".repeat(70);
    for bad in ["My_Project", "../x", "a/b", "UPPER", &long, ""] {
        let rule = if bad.is_empty() {
            "must not be empty"
        } else {
            "DNS-1123 label"
        };
        let shown = if bad.len() > 80 {
            bad.to_string()
        } else {
            format!("{bad:?}")
        };
        assert_refused(
            &dir,
            &["init", "--domain", "example.com", "--project-name", bad],
            &["--project-name", &shown, rule],
        );
    }
}

#[test]
fn a_folder_name_that_is_not_a_valid_project_name() {
    let (_tmp, dir) = user_folder("My_Project");
    assert_refused(
        &dir,
        &["init"],
        &[
            "--project-name",
            "\"my_project\"",
            "derived from the folder name",
        ],
    );
}

#[test]
fn unknown_license() {
    let (_tmp, dir) = user_folder("demo");
    assert_refused(
        &dir,
        &["init", "--license", "mit"],
        &["--license", "'mit'", "apache2, copyright, none"],
    );
}

#[test]
fn unknown_flag() {
    let (_tmp, dir) = user_folder("demo");
    assert_refused(&dir, &["init", "--frobnicate"], &["'--frobnicate'"]);
}

#[test]
fn owner_with_a_new_line() {
    let (_tmp, dir) = user_folder("demo");
    assert_refused(
        &dir,
        &["init", "--owner", "Acme\nEvil"],
        &["--owner", "\"Acme\\nEvil\"", "line break"],
    );
}

#[test]
fn an_already_initialized_folder() {
    for existing in ["PROJECT", "Makefile", "src/main.rs"] {
        let (_tmp, dir) = user_folder("demo");
        let path = dir.join(existing);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "user content\n").unwrap();
        assert_refused(
            &dir,
            &["init", "--domain", "example.com"],
            &["already initialized", existing],
        );
    }
}

#[test]
fn a_second_init_is_refused_and_changes_nothing() {
    let (_tmp, dir) = folder("demo");
    operator_rs(&dir)
        .args(["init", "--domain", "example.com"])
        .assert()
        .success();
    assert_refused(
        &dir,
        &["init", "--domain", "example.com"],
        &["already initialized", "PROJECT"],
    );
}

#[test]
fn an_existing_file_init_would_write_is_never_overwritten() {
    let (_tmp, dir) = user_folder("demo");
    std::fs::write(dir.join("Cargo.toml"), "[package]\nname = \"mine\"\n").unwrap();
    assert_refused(
        &dir,
        &["init", "--domain", "example.com"],
        &["Cargo.toml already exists", "move Cargo.toml away"],
    );
    // init has no --force, so its refusal does not suggest one.
    let out = operator_rs(&dir)
        .args(["init", "--domain", "example.com"])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("--force"));
}

#[test]
fn project_names_that_cannot_build() {
    let (_tmp, dir) = user_folder("demo");
    for (bad, rule) in [
        ("3d", "start with a letter"),
        ("fn", "Rust keyword"),
        ("kube", "crate"),
        ("off", "YAML"),
    ] {
        assert_refused(
            &dir,
            &["init", "--project-name", bad],
            &["--project-name", &format!("{bad:?}"), rule],
        );
    }
}

#[test]
fn a_folder_name_that_starts_with_a_digit() {
    let (_tmp, dir) = user_folder("3d-printer");
    assert_refused(
        &dir,
        &["init"],
        &[
            "\"3d-printer\"",
            "start with a letter",
            "derived from the folder name",
            "--project-name my-3d-printer",
        ],
    );
}

#[test]
fn dry_run_writes_nothing_and_lists_every_file() {
    let (_tmp, dir) = user_folder("demo");
    let before = tree(&dir);
    let out = operator_rs(&dir)
        .args(["init", "--domain", "example.com", "--dry-run"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    for file in [
        "create    PROJECT",
        "create    Makefile",
        "create    src/main.rs",
        "create    config/default/kustomization.yaml",
    ] {
        assert!(stdout.contains(file), "{stdout}");
    }
    assert_eq!(before, tree(&dir));
}
