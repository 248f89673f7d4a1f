//! Snapshots of every file `init` writes, for each flag combination the issue names.
//! Review changes with `cargo insta review` (or `INSTA_UPDATE=always cargo test`).

mod support;

use clap::Parser;
use operator_rs::cli::{Cli, Command};
use operator_rs::commands::init;

fn snapshot_init(scenario: &str, flags: &[&str]) {
    let (_tmp, dir) = support::folder("demo");
    let mut argv = vec![
        "operator-rs",
        "init",
        "--domain",
        "example.com",
        "--owner",
        "Acme",
    ];
    argv.extend(flags);
    let Command::Init(args) = Cli::try_parse_from(argv).unwrap().command else {
        unreachable!()
    };
    let plan = init::plan(&args, &dir, 2026).unwrap();

    let listing: Vec<String> = plan.changes().iter().map(|c| c.path.clone()).collect();
    insta::assert_snapshot!(format!("{scenario}__files"), listing.join("\n"));
    let mut names = vec![format!("{scenario}__files")];
    for change in plan.changes() {
        let name = format!("{scenario}__{}", change.path.replace('/', "__"));
        insta::assert_snapshot!(name.clone(), change.contents);
        names.push(name);
    }
    support::assert_no_stale_snapshots("init_snapshots", scenario, &names);
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
