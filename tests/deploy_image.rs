//! `operator-rs create api --image …`: the deploy-image plugin. Snapshots of what the Memcached
//! tutorial's command changes, its PROJECT record, refusals of bad flags, and re-runs that change
//! nothing.

mod support;

use std::path::{Path, PathBuf};

use support::{assert_refused, folder, run_ok, tree};

/// The (and the tutorial's) command, after `init --domain example.com`.
const MEMCACHED: &[&str] = &[
    "create",
    "api",
    "--group",
    "cache",
    "--version",
    "v1alpha1",
    "--kind",
    "Memcached",
    "--image=memcached:1.6.26-alpine3.19",
    "--image-container-command=memcached,--memory-limit=64,-o,modern,-v",
    "--image-container-port=11211",
    "--run-as-user=1001",
    "--make=false",
];

fn init(name: &str, flags: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let (tmp, dir) = folder(name);
    let mut argv = vec!["init", "--domain", "example.com", "--owner", "Acme"];
    argv.extend(flags);
    run_ok(&dir, &argv);
    (tmp, dir)
}

fn memcached_operator() -> (tempfile::TempDir, PathBuf) {
    let (tmp, dir) = init("memcached-operator", &[]);
    run_ok(&dir, MEMCACHED);
    (tmp, dir)
}

fn read(dir: &Path, path: &str) -> String {
    std::fs::read_to_string(dir.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// One snapshot per command after `init` (snapshotted by init_snapshots.rs) of what it created,
/// updated or deleted: `<scenario>__NN_…`.
fn snapshot_steps(scenario: &str, dir: &Path, commands: &[&[&str]]) {
    let commands: Vec<Vec<&str>> = commands.iter().map(|argv| argv.to_vec()).collect();
    support::snapshot_steps("deploy_image", scenario, dir, &commands, |name, doc| {
        insta::assert_snapshot!(name.to_string(), doc)
    });
}

#[test]
fn memcached_tutorial_tree() {
    let (_tmp, dir) = init("memcached-operator", &[]);
    snapshot_steps("memcached", &dir, &[MEMCACHED]);
}

/// `--plugins=deploy-image/v1-alpha` with `--image` is the same command.
#[test]
fn the_plugins_flag_changes_nothing() {
    let (_tmp, dir) = memcached_operator();
    let (_tmp2, other) = init("memcached-operator", &[]);
    let mut argv = MEMCACHED.to_vec();
    argv.push("--plugins=deploy-image/v1-alpha");
    run_ok(&other, &argv);
    assert!(tree(&dir) == tree(&other));
}

#[test]
fn project_records_the_plugin_like_kubebuilder() {
    let (_tmp, dir) = memcached_operator();
    let project = read(&dir, "PROJECT");
    let expected = "\
plugins:
  deploy-image.rust.operator-rs.io/v1-alpha:
    resources:
    - domain: example.com
      group: cache
      kind: Memcached
      options:
        containerCommand: memcached,--memory-limit=64,-o,modern,-v
        containerPort: \"11211\"
        image: memcached:1.6.26-alpine3.19
        runAsUser: \"1001\"
      version: v1alpha1
";
    assert!(project.contains(expected), "{project}");
    // An ordinary resources[] entry as well, with its controller.
    assert!(
        project.contains(
            "  controller: true\n  domain: example.com\n  group: cache\n  kind: Memcached\n"
        ),
        "{project}"
    );
}

/// A second kind with only an image, in a multigroup, namespaced project: no port field, no
/// command, no user; the manager gets a second image variable next to WATCH_NAMESPACE.
#[test]
fn a_second_kind_with_only_an_image() {
    let (_tmp, dir) = init("fleet-images", &["--multigroup", "--namespaced"]);
    let busybox: &[&str] = &[
        "create",
        "api",
        "--group",
        "cache",
        "--version",
        "v1alpha1",
        "--kind",
        "Busybox",
        "--image=busybox:1.36.1",
        "--plugins=deploy-image/v1-alpha",
        "--make=false",
    ];
    snapshot_steps("busybox", &dir, &[MEMCACHED, busybox]);
    let busybox = read(&dir, "src/api/cache/v1alpha1/busybox.rs");
    assert!(!busybox.contains("container_port"), "{busybox}");
}

/// Re-running with `--force` re-renders the kind's files and changes nothing else: the image
/// variable, the e2e module and the PROJECT record are not added twice.
#[test]
fn force_is_idempotent() {
    let (_tmp, dir) = memcached_operator();
    let once = tree(&dir);
    let mut argv = MEMCACHED.to_vec();
    argv.push("--force");
    run_ok(&dir, &argv);
    run_ok(&dir, &argv);
    assert!(once == tree(&dir), "--force changed the tree");
}

/// A new image with `--force` replaces the variable's value and the recorded option.
#[test]
fn force_with_a_new_image_updates_it() {
    let (_tmp, dir) = memcached_operator();
    let argv: Vec<&str> = MEMCACHED
        .iter()
        .map(|a| {
            if a.starts_with("--image=") {
                "--image=memcached:1.6.38"
            } else {
                a
            }
        })
        .chain(["--force"])
        .collect();
    run_ok(&dir, &argv);
    let manager = read(&dir, "config/manager/manager.yaml");
    assert_eq!(manager.matches("MEMCACHED_IMAGE").count(), 1, "{manager}");
    assert!(
        manager.contains("          value: memcached:1.6.38\n"),
        "{manager}"
    );
    let project = read(&dir, "PROJECT");
    assert!(
        project.contains("        image: memcached:1.6.38\n"),
        "{project}"
    );
    assert_eq!(project.matches("kind: Memcached").count(), 2, "{project}");
}

#[test]
fn bad_flags_are_refused_and_change_nothing() {
    let (_tmp, dir) = init("memcached-operator", &[]);
    let base = [
        "create",
        "api",
        "--group",
        "cache",
        "--version",
        "v1alpha1",
        "--kind",
        "Memcached",
    ];
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["--plugins=deploy-image/v1-alpha"],
            &["--image", "you MUST inform the image"],
        ),
        (
            &["--plugins=helm/v2-alpha", "--image=memcached:1"],
            &["--plugins", "helm/v2-alpha", "no part in create api"],
        ),
        (
            &["--image=Memcached:1"],
            &["--image", "\"Memcached:1\"", "lowercase"],
        ),
        (&["--image="], &["--image", "must not be empty"]),
        (
            &["--image=memcached:1", "--image-container-port=0"],
            &["--image-container-port", "\"0\"", "1 to 65535"],
        ),
        (
            &["--image=memcached:1", "--image-container-port=70000"],
            &["--image-container-port", "\"70000\"", "1 to 65535"],
        ),
        (
            &["--image=memcached:1", "--run-as-user=0"],
            &["--run-as-user", "\"0\"", "runAsNonRoot"],
        ),
        (
            &["--image=memcached:1", "--run-as-user=-1"],
            &["--run-as-user", "\"-1\"", "user ID"],
        ),
        (
            &[
                "--image=memcached:1",
                "--image-container-command=memcached,,-v",
            ],
            &["--image-container-command", "none of them empty"],
        ),
        (
            &["--image=memcached:1", "--resource=false"],
            &["--resource", "always creates the kind"],
        ),
        (
            &["--image=memcached:1", "--namespaced=false"],
            &["--namespaced", "namespaced kind"],
        ),
        (&["--image-container-port=11211"], &["--image"]),
    ];
    for (flags, expected) in cases {
        let mut argv = base.to_vec();
        argv.extend(*flags);
        assert_refused(&dir, &argv, expected);
    }

    // The same kind again, without --force.
    run_ok(&dir, MEMCACHED);
    assert_refused(&dir, MEMCACHED, &["API resource already exists", "--force"]);
}

/// Without `tests/e2e/main.rs` (deleted by the user) there is nowhere to add the e2e checks:
/// refused, with the file named, and nothing written.
#[test]
fn a_missing_e2e_suite_is_named() {
    let (_tmp, dir) = init("memcached-operator", &[]);
    std::fs::remove_file(dir.join("tests/e2e/main.rs")).unwrap();
    assert_refused(&dir, MEMCACHED, &["tests/e2e/main.rs"]);
}

/// The plain templates over a deploy-image kind would leave its image variable, plugin record and
/// e2e test behind, and that test would no longer compile: refused, whatever is asked.
#[test]
fn plain_create_api_over_an_image_kind_is_refused() {
    let (_tmp, dir) = memcached_operator();
    for extra in [&["--force"][..], &["--resource=false", "--force"], &[]] {
        let mut argv = vec![
            "create",
            "api",
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
            "--make=false",
        ];
        argv.extend(extra);
        assert_refused(&dir, &argv, &["Memcached cache/v1alpha1", "--image"]);
    }
}
