//! `operator-rs create api`: kubebuilder's project-v4 sequences, with a snapshot of what each
//! command changes, refusals and idempotency.

mod support;

use std::path::Path;

use support::{assert_refused, folder, operator_rs, tree};

fn run(dir: &Path, args: &[&str]) {
    support::run_ok(dir, args);
}

fn create_api(dir: &Path, args: &str) {
    run(dir, &create_api_argv(args));
}

/// kubebuilder's project-v4 sequence (issue acceptance), in folder crew-operator.
pub const CREW_SEQUENCE: &[&str] = &[
    "--group crew --version v1 --kind Captain --resource=true --controller=true",
    "--group crew --version v1 --kind FirstMate",
    "--group crew --version v2 --kind FirstMate --controller=false",
    "--group crew --version v1 --kind Admiral --plural admirales --namespaced=false",
    "--group crew --version v1 --kind Sailor --controller=false",
    "--group apps --version v1 --kind Deployment --resource=false --controller=true",
    "--group crew --version v1 --kind Captain --force",
];

/// kubebuilder's project-v4-multigroup sequence, in folder fleet.
pub const FLEET_SEQUENCE: &[&str] = &[
    "--group ship --version v1beta1 --kind Frigate",
    "--group ship --version v1 --kind Destroyer --namespaced=false",
    "--group sea-creatures --version v1beta1 --kind Kraken",
    "--group foo.policy --version v1 --kind HealthCheckPolicy",
    "--group foo --version v1 --kind Bar",
    "--group fiz --version v1 --kind Bar",
];

fn scaffold(
    name: &str,
    init: &[&str],
    sequence: &[&str],
) -> (tempfile::TempDir, std::path::PathBuf) {
    let (tmp, dir) = folder(name);
    let mut argv = vec!["init", "--domain", "example.com", "--owner", "Acme"];
    argv.extend(init);
    run(&dir, &argv);
    for args in sequence {
        create_api(&dir, args);
    }
    (tmp, dir)
}

/// The argv of `create api <args> --make=false`.
fn create_api_argv(args: &str) -> Vec<&str> {
    let mut argv = vec!["create", "api"];
    argv.extend(args.split_whitespace());
    argv.push("--make=false");
    argv
}

/// Runs `init` (flags `init`; snapshotted by init_snapshots.rs), then `sequence` with one
/// snapshot per command of what it created, updated or deleted: `<scenario>__NN_…`.
fn snapshot_sequence(scenario: &str, folder_name: &str, init: &[&str], sequence: &[&str]) {
    let (_tmp, dir) = scaffold(folder_name, init, &[]);
    let commands: Vec<Vec<&str>> = sequence.iter().map(|args| create_api_argv(args)).collect();
    support::snapshot_steps("create_api", scenario, &dir, &commands, |name, doc| {
        insta::assert_snapshot!(name.to_string(), doc)
    });
}

#[test]
fn crew_sequence() {
    snapshot_sequence("crew", "crew-operator", &[], CREW_SEQUENCE);
}

#[test]
fn fleet_multigroup_sequence() {
    snapshot_sequence("fleet", "fleet", &["--multigroup"], FLEET_SEQUENCE);
}

#[test]
fn crew_sequence_namespaced() {
    let (_tmp, dir) = scaffold("crew-operator", &["--namespaced"], CREW_SEQUENCE);
    let role = std::fs::read_to_string(dir.join("config/rbac/captain_admin_role.yaml")).unwrap();
    assert!(role.contains("kind: Role\n"), "{role}");
    let project = std::fs::read_to_string(dir.join("PROJECT")).unwrap();
    assert!(project.contains("namespaced: true\n"), "{project}");
}

#[test]
fn the_project_file_records_every_resource() {
    let (_tmp, dir) = scaffold("crew-operator", &[], CREW_SEQUENCE);
    let project = std::fs::read_to_string(dir.join("PROJECT")).unwrap();
    let resources = project.split("resources:\n").nth(1).unwrap();
    insta::assert_snapshot!("crew_project_resources", resources);
    assert!(resources.contains("  plural: admirales\n"));
    assert_eq!(
        resources.matches("- api:").count(),
        5,
        "Captain, FirstMate v1+v2, Admiral, Sailor"
    );
    assert!(
        resources.contains("- controller: true\n  core: true\n  group: apps\n  kind: Deployment\n"),
        "{resources}"
    );
}

#[test]
fn force_never_duplicates_inserted_code_and_is_stable() {
    let (_tmp, dir) = scaffold("crew-operator", &[], &CREW_SEQUENCE[..1]);
    let once = tree(&dir);
    create_api(&dir, "--group crew --version v1 --kind Captain --force");
    create_api(&dir, "--group crew --version v1 --kind Captain --force");
    assert!(once == tree(&dir), "--force changed the tree");
    let controllers = std::fs::read_to_string(dir.join("src/controller/mod.rs")).unwrap();
    assert_eq!(controllers.matches("captain::CONTROLLER,").count(), 1);
}

#[test]
fn dry_run_writes_nothing() {
    let (_tmp, dir) = scaffold("crew-operator", &[], &[]);
    let before = tree(&dir);
    let out = operator_rs(&dir)
        .args([
            "create",
            "api",
            "--group",
            "crew",
            "--version",
            "v1",
            "--kind",
            "Captain",
            "--dry-run",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("create    src/api/v1/captain.rs"),
        "{stdout}"
    );
    assert!(stdout.contains("update    PROJECT"), "{stdout}");
    assert!(before == tree(&dir));
}

const CAPTAIN: [&str; 8] = [
    "create",
    "api",
    "--group",
    "crew",
    "--version",
    "v1",
    "--kind",
    "Captain",
];

fn with(extra: &[&'static str]) -> Vec<&'static str> {
    let mut argv = CAPTAIN.to_vec();
    argv.push("--make=false");
    argv.extend(extra);
    argv
}

#[test]
fn refusals_leave_the_tree_unchanged() {
    let (_tmp, empty) = folder("empty");
    std::fs::write(empty.join("notes.txt"), "mine").unwrap();
    assert_refused(&empty, &with(&[]), &["PROJECT", "must be initialized"]);

    let (_tmp2, dir) = scaffold("crew-operator", &[], &CREW_SEQUENCE[..1]);
    assert_refused(&dir, &with(&[]), &["API resource already exists"]);
    assert_refused(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "ship",
            "--version",
            "v1",
            "--kind",
            "Frigate",
            "--make=false",
        ],
        &["multiple groups are not allowed by default", "multi-group"],
    );
    for (flag, bad) in [
        ("--group", "Crew"),
        ("--group", "../x"),
        ("--version", "1.0"),
        ("--version", "V1"),
        ("--kind", "captain"),
        ("--kind", "First-Mate"),
        ("--kind", "{{ x }}"),
        ("--kind", "Context"),
        ("--plural", "Captains"),
    ] {
        let mut argv = vec![
            "create",
            "api",
            "--group",
            "crew",
            "--version",
            "v3",
            "--kind",
            "Bosun",
            "--make=false",
        ];
        match argv.iter().position(|a| *a == flag) {
            Some(i) => argv[i + 1] = bad,
            None => argv.extend([flag, bad]),
        }
        assert_refused(&dir, &argv, &[flag, &format!("{bad:?}")]);
    }
    assert_refused(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "apps",
            "--version",
            "v1",
            "--kind",
            "Deploymnet",
            "--resource=false",
            "--make=false",
        ],
        &["--kind", "Deploymnet", "StatefulSet"],
    );
    assert_refused(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "crew",
            "--version",
            "v1",
            "--kind",
            "Bosun",
            "--resource=false",
            "--make=false",
        ],
        &["no API found for crew.example.com/v1, Kind Bosun"],
    );
    assert_refused(
        &dir,
        &with(&["--resource=false", "--controller=false"]),
        &["nothing to create"],
    );
    assert_refused(&dir, &with(&["--resource=maybe"]), &["--resource", "maybe"]);
}

#[test]
fn a_deleted_marker_is_reported_and_nothing_changes() {
    let (_tmp, dir) = scaffold("crew-operator", &[], &[]);
    let path = dir.join("src/controller/mod.rs");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace("// +operator-rs:scaffold:controllers", ""),
    )
    .unwrap();
    assert_refused(
        &dir,
        &with(&[]),
        &["src/controller/mod.rs", "+operator-rs:scaffold:controllers"],
    );
}
