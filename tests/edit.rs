//! `operator-rs edit`: the same tree as `init` with the new flags, moves to the multigroup layout,
//! license headers; refusals are one line and leave the tree as it was. Also kubebuilder's
//! command lines (`--plugins go/v4`, `--repo`, `--project-version 3`, `--ssa`).

mod support;

use std::path::Path;

use support::{assert_refused, folder, run_ok, tree};

/// kubebuilder's init flags of test/testdata/generate.sh, then `create api` lines.
fn project(dir: &Path, init: &[&str], creates: &[&str]) {
    let mut args = vec![
        "init",
        "--domain",
        "testproject.org",
        "--license",
        "apache2",
        "--owner",
        "The Kubernetes authors",
        "--project-name",
        "crew",
    ];
    args.extend(init);
    run_ok(dir, &args);
    for line in creates {
        let mut args: Vec<&str> = line.split(' ').collect();
        args.push("--make=false");
        run_ok(dir, &args);
    }
}

const CREW: &[&str] = &[
    "create api --group crew --version v1 --kind Captain --controller=true --resource=true",
    "create webhook --group crew --version v1 --kind Captain --defaulting",
    "create api --group crew --version v1 --kind Admiral --plural=admirales --controller=true --resource=true --namespaced=false",
    "create api --group apps --version v1 --kind Deployment --resource=false --controller=true",
];

#[test]
fn namespaced_gives_what_init_namespaced_gives_and_back() {
    let (_a, plain) = folder("plain");
    let (_b, scoped) = folder("scoped");
    project(&plain, &[], CREW);
    project(&scoped, &["--namespaced"], CREW);
    let (plain_tree, scoped_tree) = (tree(&plain), tree(&scoped));

    let out = run_ok(&plain, &["edit", "--namespaced"]);
    assert!(out.contains("WATCH_NAMESPACE"), "{out}");
    assert_eq!(tree(&plain), scoped_tree);
    // Again: nothing changes.
    run_ok(&plain, &["edit", "--namespaced=true"]);
    assert_eq!(tree(&plain), scoped_tree);

    run_ok(&scoped, &["edit", "--namespaced=false"]);
    assert_eq!(tree(&scoped), plain_tree);
}

#[test]
fn sharding_gives_what_init_sharding_gives_and_back() {
    let (_a, plain) = folder("plain");
    let (_b, sharded) = folder("sharded");
    project(&plain, &[], CREW);
    project(&sharded, &["--sharding"], CREW);
    let (plain_tree, sharded_tree) = (tree(&plain), tree(&sharded));

    run_ok(&plain, &["edit", "--sharding"]);
    assert_eq!(tree(&plain), sharded_tree);
    // Again: nothing changes.
    run_ok(&plain, &["edit", "--sharding=true"]);
    assert_eq!(tree(&plain), sharded_tree);

    run_ok(&sharded, &["edit", "--sharding=false"]);
    assert_eq!(tree(&sharded), plain_tree);
}

/// `init --runtime=crates-io` holds no runtime sources and names the crates by version; `edit
/// --runtime` moves a project between the two sources and gives what `init` with the other
/// gives (Cargo.lock included: each source has its own), `alpha generate` keeps the source, and
/// a switch keeps the user's own edits of Cargo.toml and leaves a lock they changed to cargo.
#[test]
fn runtime_gives_what_init_runtime_gives_and_back() {
    let (_a, vendored) = folder("vendored");
    let (_b, crates_io) = folder("crates-io");
    project(&vendored, &[], CREW);
    let out = run_ok(
        &crates_io,
        &[
            "init",
            "--domain",
            "testproject.org",
            "--license",
            "apache2",
            "--owner",
            "The Kubernetes authors",
            "--project-name",
            "crew",
            "--runtime=crates-io",
        ],
    );
    assert!(out.contains("are not on crates.io yet"), "{out}");
    for line in CREW {
        let mut args: Vec<&str> = line.split(' ').collect();
        args.push("--make=false");
        run_ok(&crates_io, &args);
    }
    let (vendored_tree, crates_io_tree) = (tree(&vendored), tree(&crates_io));
    assert!(
        crates_io_tree.keys().all(|path| !support::is_runtime(path)),
        "runtime sources in a crates-io project"
    );
    let manifest = String::from_utf8(crates_io_tree["Cargo.toml"].clone()).unwrap();
    let version = operator_rs::runtime_source::VERSION.as_str();
    assert!(
        manifest.contains(&format!(
            "\noperator-rs-runtime = {{ version = \"{version}\", default-features = false }}\n"
        )) && manifest.contains(&format!("\noperator-rs-testing = \"{version}\"\n"))
            && !manifest.contains("members ="),
        "{manifest}"
    );
    let project_file = String::from_utf8(crates_io_tree["PROJECT"].clone()).unwrap();
    assert!(
        project_file.contains("\nruntime: crates-io\n"),
        "{project_file}"
    );

    // alpha generate scaffolds each project again in its own mode.
    let (_c, out) = folder("generated");
    support::generate_into(&crates_io, &out);
    assert!(tree(&out).keys().all(|path| !support::is_runtime(path)));

    run_ok(&vendored, &["edit", "--runtime=crates-io"]);
    assert_eq!(tree(&vendored), crates_io_tree);
    // Again: nothing changes.
    run_ok(&vendored, &["edit", "--runtime", "crates-io"]);
    assert_eq!(tree(&vendored), crates_io_tree);
    run_ok(&vendored, &["edit", "--runtime=vendored"]);
    assert_eq!(tree(&vendored), vendored_tree);
    support::assert_runtime_is_the_shipped_crate(&vendored);

    // A dependency and a member of the user's own survive both ways.
    let path = vendored.join("Cargo.toml");
    let edited = std::fs::read_to_string(&path)
        .unwrap()
        .replace(
            "anyhow = \"1\"\n",
            "anyhow = \"1\"\nitertools = \"0.14\" # mine\n",
        )
        .replace(
            "members = [\"operator-rs-runtime\", \"operator-rs-testing\"]",
            "members = [\"xtask\", \"operator-rs-runtime\", \"operator-rs-testing\"]",
        );
    std::fs::write(&path, &edited).unwrap();
    let lock = vendored.join("Cargo.lock");
    let own_lock = format!("{}\n# mine\n", std::fs::read_to_string(&lock).unwrap());
    std::fs::write(&lock, &own_lock).unwrap();
    run_ok(&vendored, &["edit", "--runtime=crates-io"]);
    assert_eq!(std::fs::read_to_string(&lock).unwrap(), own_lock);
    let switched = std::fs::read_to_string(&path).unwrap();
    assert!(
        switched.contains("itertools = \"0.14\" # mine\n"),
        "{switched}"
    );
    assert!(switched.contains("members = [\"xtask\"]"), "{switched}");
    run_ok(&vendored, &["edit", "--runtime=vendored"]);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), edited);
}

#[test]
fn runtime_refusals() {
    let (_a, dir) = folder("crew");
    project(&dir, &[], &[]);
    assert_refused(
        &dir,
        &["edit", "--runtime=github"],
        &["--runtime", "'github'", "vendored, crates-io"],
    );
    // A Cargo.toml that is not TOML is named, and nothing changes.
    std::fs::write(dir.join("Cargo.toml"), "[workspace\n").unwrap();
    assert_refused(
        &dir,
        &["edit", "--runtime=crates-io"],
        &["cannot read Cargo.toml as TOML"],
    );
}

/// What `edit --sharding` changes in a project as `init` wrote it, and `--sharding=false` puts
/// back: one snapshot each.
#[test]
fn sharding_snapshots() {
    let (_tmp, dir) = folder("demo");
    run_ok(
        &dir,
        &["init", "--domain", "example.com", "--owner", "Acme"],
    );
    let commands = vec![vec!["edit", "--sharding"], vec!["edit", "--sharding=false"]];
    support::snapshot_steps("edit", "sharding", &dir, &commands, |name, doc| {
        insta::assert_snapshot!(name.to_string(), doc);
    });
}

/// What the manager would refuse, `edit --sharding` refuses, and the tree stays as it was; a
/// PodDisruptionBudget of the user's is theirs unless --force.
#[test]
fn sharding_refusals() {
    let (_tmp, dir) = folder("crew");
    project(&dir, &[], &[]);
    let manager = dir.join("config/manager/manager.yaml");
    let text = std::fs::read_to_string(&manager).unwrap();
    std::fs::write(&manager, text.replace("          - --leader-elect\n", "")).unwrap();
    assert_refused(
        &dir,
        &["edit", "--sharding"],
        &[
            "--sharding needs --leader-elect",
            "config/manager/manager.yaml",
        ],
    );
    assert_refused(
        &dir,
        &["edit", "--sharding", "--force"],
        &["--sharding needs --leader-elect"],
    );
    std::fs::write(&manager, &text).unwrap();

    let pdb = dir.join("config/manager/pod_disruption_budget.yaml");
    std::fs::write(&pdb, "# mine\n").unwrap();
    assert_refused(
        &dir,
        &["edit", "--sharding"],
        &["config/manager/pod_disruption_budget.yaml", "--force"],
    );
    run_ok(&dir, &["edit", "--sharding", "--force"]);
    let written = std::fs::read_to_string(&pdb).unwrap();
    assert!(written.contains("maxUnavailable: 1"), "{written}");
    std::fs::write(&pdb, format!("{written}# mine\n")).unwrap();
    assert_refused(
        &dir,
        &["edit", "--sharding=false"],
        &["config/manager/pod_disruption_budget.yaml", "--force"],
    );

    let (_tmp2, long) = folder("long");
    let domain = format!("{}.example.com", "d".repeat(50));
    assert_refused(
        &long,
        &["init", "--domain", &domain, "--sharding"],
        &["--domain", "at most 54 characters"],
    );
    run_ok(&long, &["init", "--domain", &domain]);
    assert_refused(&long, &["edit", "--sharding"], &["at most 54 characters"]);
}

#[test]
fn dry_run_writes_nothing() {
    let (_tmp, dir) = folder("crew");
    project(&dir, &[], CREW);
    let before = tree(&dir);
    let out = run_ok(&dir, &["edit", "--multigroup", "--namespaced", "--dry-run"]);
    assert!(out.contains("delete    src/api/v1/captain.rs"), "{out}");
    assert!(
        out.contains("create    src/api/crew/v1/captain.rs"),
        "{out}"
    );
    assert!(
        out.contains("update    config/manager/manager.yaml"),
        "{out}"
    );
    assert_eq!(tree(&dir), before);
}

#[test]
fn multigroup_moves_the_kinds() {
    let (_tmp, dir) = folder("crew");
    project(&dir, &["--plugins", "go/v4"], CREW);
    run_ok(&dir, &["edit", "--multigroup"]);
    let after = tree(&dir);
    let text = |p: &str| String::from_utf8(after[p].clone()).unwrap();
    for gone in [
        "src/api/v1/captain.rs",
        "src/controller/captain.rs",
        "src/webhook/v1/mod.rs",
    ] {
        assert!(!after.contains_key(gone), "{gone} is still there");
    }
    assert!(!dir.join("src/api/v1").exists());
    for moved in [
        "src/api/crew/mod.rs",
        "src/api/crew/v1/captain.rs",
        "src/controller/crew/captain.rs",
        "src/controller/apps/deployment.rs",
        "src/webhook/crew/v1/captain/defaulting.rs",
    ] {
        assert!(after.contains_key(moved), "{moved} is missing");
    }
    assert!(text("src/controller/crew/captain.rs").contains("use crate::api::crew::v1::Captain;"));
    assert!(text("src/api/mod.rs").contains("crew::v1::Captain::crd(),"));
    assert!(text("src/controller/mod.rs").contains("crew::captain::CONTROLLER,"));
    assert!(text("src/webhook/mod.rs").contains("crew::v1::captain::webhooks(),"));
    let project = text("PROJECT");
    assert!(project.contains("multigroup: true"), "{project}");
    assert!(project.contains("path: crate::api::crew::v1"), "{project}");
    // A later create api works in the new layout, with another group.
    run_ok(
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
    );
    assert!(dir.join("src/api/ship/v1/frigate.rs").exists());
}

#[test]
fn license_and_owner_rewrite_the_headers() {
    let (_tmp, dir) = folder("crew");
    project(&dir, &[], &CREW[..1]);
    run_ok(&dir, &["edit", "--license", "copyright", "--owner", "Acme"]);
    let lib = std::fs::read_to_string(dir.join("src/lib.rs")).unwrap();
    assert!(lib.starts_with("// Copyright 2026 Acme.\n\n//!"), "{lib}");
    run_ok(&dir, &["edit", "--license", "none"]);
    assert!(!dir.join("hack/boilerplate.rs.txt").exists());
    let lib = std::fs::read_to_string(dir.join("src/lib.rs")).unwrap();
    assert!(lib.starts_with("//!"), "{lib}");
    run_ok(&dir, &["edit", "--license", "apache2", "--owner", "Zed"]);
    let captain = std::fs::read_to_string(dir.join("src/api/v1/captain.rs")).unwrap();
    assert!(
        captain.starts_with("// Copyright 2026 Zed.\n//\n// Licensed"),
        "{captain}"
    );
}

#[test]
fn kubebuilder_command_lines() {
    let (_tmp, dir) = folder("crew");
    let out = run_ok(
        &dir,
        &[
            "init",
            "--plugins",
            "go/v4",
            "--repo",
            "sigs.k8s.io/kubebuilder/testdata/project-v4",
            "--project-version",
            "3",
            "--domain",
            "testproject.org",
            "--license",
            "apache2",
            "--owner",
            "The Kubernetes authors",
        ],
    );
    assert!(out.contains("note: --plugins go/v4"), "{out}");
    assert!(out.contains("note: --repo"), "{out}");
    let project = std::fs::read_to_string(dir.join("PROJECT")).unwrap();
    assert!(
        project.contains("repo: sigs.k8s.io/kubebuilder/testdata/project-v4"),
        "{project}"
    );
    let out = run_ok(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "crew",
            "--version",
            "v1",
            "--kind",
            "Navigator",
            "--controller=true",
            "--resource=true",
            "--ssa",
            "--make=false",
        ],
    );
    assert!(out.contains("note: --ssa"), "{out}");
    let out = run_ok(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "crew",
            "--version",
            "v1alpha1",
            "--kind",
            "Busybox",
            "--image=busybox:1.36.1",
            "--plugins=deploy-image.go.kubebuilder.io/v1-alpha",
            "--make=false",
        ],
    );
    assert!(!out.contains("note: --plugins"), "{out}");
    assert!(dir.join("src/controller/busybox.rs").exists());
}

#[test]
fn copyright_license_and_license_file_at_init() {
    let (_tmp, dir) = folder("crew");
    run_ok(&dir, &["init", "--license", "copyright", "--owner", "Acme"]);
    let lib = std::fs::read_to_string(dir.join("src/lib.rs")).unwrap();
    assert!(lib.starts_with("// Copyright 2026 Acme.\n\n"), "{lib}");

    let (_tmp2, dir) = folder("crew2");
    let header = dir.parent().unwrap().join("header.txt");
    std::fs::write(&header, "/*\nCopyright 2026 The Kubernetes authors.\n*/\n").unwrap();
    run_ok(&dir, &["init", "--license-file", header.to_str().unwrap()]);
    let lib = std::fs::read_to_string(dir.join("src/lib.rs")).unwrap();
    assert!(
        lib.starts_with("/*\nCopyright 2026 The Kubernetes authors.\n*/\n\n"),
        "{lib}"
    );
}

/// kubebuilder's `YEAR` in a license file: `hack/boilerplate.rs.txt` keeps it and each Rust file
/// gets the year it is written in (SOURCE_DATE_EPOCH here); `edit --license` finds the old header
/// on files of any year.
#[test]
fn the_year_placeholder_of_a_license_file() {
    let (_tmp, dir) = folder("crew");
    let header = dir.parent().unwrap().join("header.txt");
    std::fs::write(&header, "/*\nCopyright YEAR The Kubernetes authors.\n*/\n").unwrap();
    run_ok(&dir, &["init", "--license-file", header.to_str().unwrap()]);
    let boilerplate = std::fs::read_to_string(dir.join("hack/boilerplate.rs.txt")).unwrap();
    assert_eq!(
        boilerplate,
        "/*\nCopyright YEAR The Kubernetes authors.\n*/\n"
    );
    let lib = std::fs::read_to_string(dir.join("src/lib.rs")).unwrap();
    assert!(
        lib.starts_with("/*\nCopyright 2026 The Kubernetes authors.\n*/\n\n"),
        "{lib}"
    );

    // A year later (2027-09-22), a new kind's files have that year.
    let out = support::operator_rs(&dir)
        .args([
            "create",
            "api",
            "--group",
            "ship",
            "--version",
            "v1",
            "--kind",
            "Frigate",
        ])
        .args(["--make=false"])
        .env("SOURCE_DATE_EPOCH", "1821000000")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let types = std::fs::read_to_string(dir.join("src/api/v1/frigate.rs")).unwrap();
    assert!(
        types.starts_with("/*\nCopyright 2027 The Kubernetes authors.\n*/\n"),
        "{types}"
    );

    // Both years' files carry the header that edit replaces.
    run_ok(&dir, &["edit", "--license", "copyright", "--owner", "Acme"]);
    for path in ["src/lib.rs", "src/api/v1/frigate.rs"] {
        let text = std::fs::read_to_string(dir.join(path)).unwrap();
        assert!(
            text.starts_with("// Copyright 2026 Acme.\n\n"),
            "{path}: {text}"
        );
        assert!(!text.contains("Kubernetes authors"), "{path}");
    }
    // And a new file with YEAR: edit writes it with the year, the boilerplate with YEAR.
    std::fs::write(&header, "// (c) YEAR Acme\n").unwrap();
    run_ok(&dir, &["edit", "--license-file", header.to_str().unwrap()]);
    let lib = std::fs::read_to_string(dir.join("src/lib.rs")).unwrap();
    assert!(lib.starts_with("// (c) 2026 Acme\n\n"), "{lib}");
    let boilerplate = std::fs::read_to_string(dir.join("hack/boilerplate.rs.txt")).unwrap();
    assert_eq!(boilerplate, "// (c) YEAR Acme\n");
}

#[test]
fn refusals() {
    let (_tmp, dir) = folder("crew");
    project(
        &dir,
        &["--multigroup"],
        &["create api --group ship --version v1 --kind Frigate"],
    );
    assert_refused(
        &dir,
        &["edit", "--multigroup=false"],
        &["cannot leave the multigroup layout"],
    );
    assert_refused(
        &dir,
        &["edit", "--plugins", "helm.kubebuilder.io/v1-alpha"],
        &["--plugins", "helm plugin"],
    );
    assert_refused(&dir, &["edit", "--owner", "a\tb"], &["--owner"]);
    let missing = dir.join("no-such-header.txt");
    assert_refused(
        &dir,
        &["edit", "--license-file", missing.to_str().unwrap()],
        &["does not exist"],
    );
    // A manager.yaml changed where WATCH_NAMESPACE goes: refused, unless --force.
    let manager = dir.join("config/manager/manager.yaml");
    let text = std::fs::read_to_string(&manager).unwrap();
    std::fs::write(
        &manager,
        text.replace("        name: manager\n", "        name: mine\n"),
    )
    .unwrap();
    assert_refused(
        &dir,
        &["edit", "--namespaced"],
        &["config/manager/manager.yaml", "--force"],
    );
    run_ok(&dir, &["edit", "--namespaced", "--force"]);
    assert!(
        std::fs::read_to_string(&manager)
            .unwrap()
            .contains("WATCH_NAMESPACE")
    );

    let (_tmp2, dir) = folder("crew2");
    assert_refused(&dir, &["edit", "--namespaced"], &["PROJECT"]);
    assert_refused(
        &dir,
        &["init", "--project-version", "2"],
        &["--project-version", "\"3\""],
    );
    assert_refused(
        &dir,
        &["init", "--plugins", "go/v3"],
        &["--plugins", "older"],
    );
}

/// `edit --multigroup` on code as people write it: what it cannot rewrite, or a group's module
/// that is a module of the user's already, is refused with one line naming the file, and the
/// tree is left as it was.
#[test]
fn multigroup_refuses_what_it_cannot_move() {
    let cases: &[(&str, &str, &str, &[&str])] = &[
        // A module of the user's where the group's would go.
        (
            "src/api/crew.rs",
            "//! Mine.\n",
            "pub mod crew;\n",
            &["src/api/crew", "rename it"],
        ),
        // Code that does not parse.
        (
            "src/fleet.rs",
            "fn broken( {\n",
            "pub mod fleet;\n",
            &["src/fleet.rs", "not valid Rust"],
        ),
        // One `use` of two modules that move to different groups.
        (
            "src/fleet.rs",
            "use crate::webhook::v1::{captain, pod};\n",
            "pub mod fleet;\n",
            &["src/fleet.rs", "different groups"],
        ),
    ];
    for (file, text, declaration, expected) in cases {
        let (_tmp, dir) = folder("crew");
        project(
            &dir,
            &[],
            &[
                CREW[0],
                CREW[1],
                "create webhook --group core --version v1 --kind Pod --defaulting",
            ],
        );
        std::fs::write(dir.join(file), text).unwrap();
        let parent = if file.starts_with("src/api/") {
            "src/api/mod.rs"
        } else {
            "src/lib.rs"
        };
        let mut declared = std::fs::read_to_string(dir.join(parent)).unwrap();
        declared.push_str(declaration);
        std::fs::write(dir.join(parent), declared).unwrap();
        assert_refused(&dir, &["edit", "--multigroup"], expected);
    }
}

/// A single-group project with an external kind (cert-manager's Certificate, as README.md's
/// example) moves: its own kinds go into their group, the external kind's types stay in
/// `src/external/`, its controller goes into its group, and PROJECT keeps its CRD file.
#[test]
fn multigroup_moves_a_project_with_an_external_kind() {
    let (_tmp, dir) = folder("crew");
    std::fs::create_dir_all(dir.join("crds")).unwrap();
    let crd = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/cert-manager/cert-manager.io_certificates.yaml");
    project(&dir, &[], &[CREW[0]]);
    std::fs::copy(crd, dir.join("crds/certificates.yaml")).unwrap();
    run_ok(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "cert-manager",
            "--version",
            "v1",
            "--kind",
            "Certificate",
            "--controller",
            "--resource=false",
            "--external-api-path",
            "crds/certificates.yaml",
            "--external-api-domain",
            "io",
            "--make=false",
        ],
    );
    // Code of the user's, as `cargo fmt` leaves it: a path that grows past the line stays so.
    let fleet = "//! The fleet.\n\n/// A captain.\npub fn captain() -> crate::api::v1::Captain {\n    crate::api::v1::Captain::new(\"the first captain\", crate::api::v1::CaptainSpec::default())\n}\n";
    std::fs::write(dir.join("src/fleet.rs"), fleet).unwrap();
    let lib = std::fs::read_to_string(dir.join("src/lib.rs")).unwrap();
    std::fs::write(
        dir.join("src/lib.rs"),
        lib.replace("pub mod api;", "pub mod api;\npub mod fleet;"),
    )
    .unwrap();
    run_ok(&dir, &["edit", "--multigroup"]);
    assert_eq!(
        std::fs::read_to_string(dir.join("src/fleet.rs")).unwrap(),
        "//! The fleet.\n\n/// A captain.\npub fn captain() -> crate::api::crew::v1::Captain {\n    crate::api::crew::v1::Captain::new(\n        \"the first captain\",\n        crate::api::crew::v1::CaptainSpec::default(),\n    )\n}\n"
    );
    for moved in [
        "src/api/crew/v1/captain.rs",
        "src/controller/crew/captain.rs",
        "src/controller/cert_manager/certificate.rs",
        "src/external/cert_manager/v1/certificate.rs",
    ] {
        assert!(dir.join(moved).exists(), "{moved} is missing");
    }
    let project = std::fs::read_to_string(dir.join("PROJECT")).unwrap();
    assert!(
        project.contains("path: crds/certificates.yaml"),
        "{project}"
    );
    let controllers = std::fs::read_to_string(dir.join("src/controller/mod.rs")).unwrap();
    assert!(
        controllers.contains("cert_manager::certificate::CONTROLLER,"),
        "{controllers}"
    );
}

/// Kinds named like their group (the project's own `Ship` in `ship`, another project's `Kafka`
/// in `kafka.hostile.io`), kinds named like keywords and prelude types, and a project of
/// external kinds only, two of them `Mirror` and `MirrorMaker` in one group: the move neither
/// panics nor takes operator-rs's own files for the user's; a module named like the module it
/// is in is declared with clippy's module_inception allowed.
#[test]
fn multigroup_with_kinds_named_like_their_group_or_like_keywords() {
    let crds = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hostile/hostile-crds.yaml");
    let external = |dir: &Path, group: &str, domain: &str, kind: &str| {
        let path = dir.join("crds/hostile.yaml");
        std::fs::create_dir_all(dir.join("crds")).unwrap();
        std::fs::copy(&crds, &path).unwrap();
        run_ok(
            dir,
            &[
                "create",
                "api",
                "--group",
                group,
                "--external-api-domain",
                domain,
                "--version",
                "v1",
                "--kind",
                kind,
                "--resource=false",
                "--controller",
                "--external-api-path",
                "crds/hostile.yaml",
                "--make=false",
            ],
        );
    };
    let (_tmp, dir) = folder("fleet");
    run_ok(
        &dir,
        &["init", "--domain", "example.com", "--license", "none"],
    );
    run_ok(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "ship",
            "--version",
            "v1",
            "--kind",
            "Ship",
            "--make=false",
        ],
    );
    run_ok(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "ship",
            "--version",
            "v1",
            "--kind",
            "V1",
            "--make=false",
        ],
    );
    for kind in ["Self", "Box", "crate", "Option"] {
        external(&dir, "hostile", "io", kind);
    }
    external(&dir, "kafka", "hostile.io", "Kafka");
    let controllers = std::fs::read_to_string(dir.join("src/controller/mod.rs")).unwrap();
    for module in [
        "self_kind",
        "box_kind",
        "crate_kind",
        "option_kind",
        "kafka",
        "ship",
        "v1",
    ] {
        assert!(
            controllers.contains(&format!("pub mod {module};")),
            "{controllers}"
        );
    }
    run_ok(&dir, &["edit", "--multigroup"]);
    support::assert_tree_parses(&dir);
    let read = |p: &str| std::fs::read_to_string(dir.join(p)).unwrap();
    let inception = "#[allow(clippy::module_inception)] // named like the module it is in\n";
    assert!(read("src/controller/ship/mod.rs").contains(&format!("{inception}pub mod ship;")));
    assert!(read("src/controller/kafka/mod.rs").contains(&format!("{inception}pub mod kafka;")));
    assert!(read("src/api/ship/v1/mod.rs").contains(&format!("{inception}pub mod v1;")));
    assert!(dir.join("src/controller/hostile/self_kind.rs").exists());

    // External kinds only.
    let (_tmp, dir) = folder("mirrors");
    run_ok(
        &dir,
        &["init", "--domain", "example.com", "--license", "none"],
    );
    std::fs::create_dir_all(dir.join("crds")).unwrap();
    let mirrors = ["Mirror", "MirrorMaker"].map(|kind| {
        format!(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: {p}.mirror.io\nspec:\n  group: mirror.io\n  scope: Namespaced\n  names: {{kind: {kind}, plural: {p}}}\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema: {{type: object, properties: {{spec: {{type: object}}}}}}\n",
            p = format!("{}s", kind.to_lowercase())
        )
    });
    std::fs::write(dir.join("crds/mirror.yaml"), mirrors.join("---\n")).unwrap();
    for kind in ["Mirror", "MirrorMaker"] {
        run_ok(
            &dir,
            &[
                "create",
                "api",
                "--group",
                "mirror",
                "--external-api-domain",
                "io",
                "--version",
                "v1",
                "--kind",
                kind,
                "--resource=false",
                "--controller",
                "--external-api-path",
                "crds/mirror.yaml",
                "--make=false",
            ],
        );
    }
    run_ok(&dir, &["edit", "--multigroup"]);
    support::assert_tree_parses(&dir);
    assert!(dir.join("src/controller/mirror/mirror.rs").exists());
    assert!(dir.join("src/controller/mirror/mirror_maker.rs").exists());
}

/// Found by tests/fuzz_project_files.rs: a built-in kind's group edited in PROJECT to what no
/// module can be named was moved into `pub mod 4;`.
#[test]
fn multigroup_refuses_a_group_that_cannot_name_a_module() {
    let (_tmp, dir) = folder("fleet");
    run_ok(&dir, &["init", "--domain", "example.com"]);
    run_ok(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "apps",
            "--version",
            "v1",
            "--kind",
            "Deployment",
            "--resource=false",
            "--controller",
            "--make=false",
        ],
    );
    let project = std::fs::read_to_string(dir.join("PROJECT")).unwrap();
    std::fs::write(
        dir.join("PROJECT"),
        project.replace("group: apps", "group: \"4\""),
    )
    .unwrap();
    assert_refused(
        &dir,
        &["edit", "--multigroup"],
        &["\"4\"", "cannot be a Rust module"],
    );
}

/// The runtime's features on the `operator-rs-runtime` line of Cargo.toml follow the project:
/// none in a plain project, `webhooks` with a webhook, `migration` with a conversion, `sharding`
/// with `edit --sharding` and off again with `--sharding=false`; the rest of the file and a
/// feature the user turned on by hand stay as they are.
#[test]
fn runtime_features_follow_the_project() {
    let (_d, dir) = folder("features");
    project(
        &dir,
        &[],
        &["create api --group crew --version v1 --kind Captain --controller=true --resource=true"],
    );
    let manifest = dir.join("Cargo.toml");
    let line = || {
        let text = std::fs::read_to_string(&manifest).unwrap();
        let line = text
            .lines()
            .find(|line| line.starts_with("operator-rs-runtime = "));
        line.unwrap().to_owned()
    };
    assert_eq!(line(), "operator-rs-runtime = { workspace = true }");
    // The user's own edits: a dependency, and the `migration` feature by hand.
    let text = std::fs::read_to_string(&manifest).unwrap();
    let text = text
        .replace(
            "anyhow = \"1\"\n",
            "anyhow = \"1\"\nitertools = \"0.14\" # mine\n",
        )
        .replace(
            "{ workspace = true }\n",
            "{ workspace = true, features = [\"migration\"] }\n",
        );
    std::fs::write(&manifest, &text).unwrap();

    let webhook =
        "create webhook --group crew --version v1 --kind Captain --defaulting --make=false";
    run_ok(&dir, &webhook.split(' ').collect::<Vec<_>>());
    let expected =
        "operator-rs-runtime = { workspace = true, features = [\"webhooks\", \"migration\"] }";
    assert_eq!(line(), expected);
    let after = std::fs::read_to_string(&manifest).unwrap();
    assert_eq!(
        after,
        text.replace(
            "features = [\"migration\"]",
            "features = [\"webhooks\", \"migration\"]"
        )
    );

    run_ok(&dir, &["edit", "--sharding"]);
    assert!(
        line().ends_with("features = [\"webhooks\", \"migration\", \"sharding\"] }"),
        "{}",
        line()
    );
    run_ok(&dir, &["edit", "--sharding=false"]);
    assert_eq!(line(), expected);
    assert!(
        std::fs::read_to_string(&manifest)
            .unwrap()
            .contains("itertools = \"0.14\" # mine\n")
    );
}
