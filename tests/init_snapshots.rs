//! What `init` writes, for each flag combination the issue names: one snapshot per combination
//! (`<combination>__00_init`), holding the list of files and the contents of each, except the
//! runtime crate, which is checked to be exactly the one operator-rs ships.
//! Review changes with `cargo insta review` (or `INSTA_UPDATE=always cargo test`).

mod support;

fn snapshot_init(scenario: &str, flags: &[&str]) {
    let (_tmp, dir) = support::folder("demo");
    let mut argv = vec!["init", "--domain", "example.com", "--owner", "Acme"];
    argv.extend(flags);
    let step = support::step(&dir, 0, &argv);
    support::assert_runtime_is_the_shipped_crate(&dir);

    let name = format!("{scenario}__{}", step.name);
    insta::assert_snapshot!(name.clone(), step.document);
    support::assert_no_stale_snapshots("init_snapshots", scenario, &[name]);
}

#[test]
fn init_default() {
    snapshot_init("init_default", &[]);
}

#[test]
fn init_namespaced() {
    snapshot_init("init_namespaced", &["--namespaced"]);
}

#[test]
fn init_license_none() {
    snapshot_init("init_license_none", &["--license", "none"]);
}

#[test]
fn init_multigroup() {
    snapshot_init("init_multigroup", &["--multigroup"]);
}

#[test]
fn init_sharding() {
    snapshot_init("init_sharding", &["--sharding"]);
}
