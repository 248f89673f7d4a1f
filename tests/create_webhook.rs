//! `operator-rs create webhook`: the acceptance sequence with a snapshot of what each
//! command changes, refusals, extending a kind's webhooks, idempotency and multigroup layout.

mod support;

use std::path::Path;

use support::{assert_refused, folder, operator_rs, tree};

use support::run_ok as run;

/// Runs `operator-rs <args> --make=false` (a `create api` or `create webhook` line).
fn create(dir: &Path, args: &str) -> String {
    run(dir, &argv(args))
}

/// The acceptance sequence, after `init --domain example.com` in folder crew-operator.
pub const WEBHOOKS_SEQUENCE: &[&str] = &[
    "create api --group crew --version v1 --kind Captain",
    "create webhook --group crew --version v1 --kind Captain --defaulting",
    "create webhook --group crew --version v1 --kind Captain --programmatic-validation",
    "create api --group crew --version v1 --kind FirstMate",
    "create api --group crew --version v2 --kind FirstMate --controller=false",
    "create webhook --group crew --version v1 --kind FirstMate --conversion --spoke v2",
    "create api --group crew --version v1 --kind Sailor",
    "create webhook --group crew --version v1 --kind Sailor --defaulting --defaulting-path=/custom-mutate-sailor",
    "create webhook --group crew --version v1 --kind Sailor --programmatic-validation --validation-path=/custom-validate-sailor",
    "create api --group crew --version v1 --kind Admiral --plural admirales --namespaced=false",
    "create webhook --group crew --version v1 --kind Admiral --plural admirales --defaulting",
    "create webhook --group core --version v1 --kind Pod --defaulting",
    "create webhook --group apps --version v1 --kind Deployment --defaulting --programmatic-validation",
];

fn scaffold(
    name: &str,
    init: &[&str],
    sequence: &[&str],
) -> (tempfile::TempDir, std::path::PathBuf) {
    let (tmp, dir) = folder(name);
    let mut argv = vec!["init", "--domain", "example.com"];
    argv.extend(init);
    run(&dir, &argv);
    for args in sequence {
        create(&dir, args);
    }
    (tmp, dir)
}

fn read(dir: &Path, path: &str) -> String {
    std::fs::read_to_string(dir.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The argv of `operator-rs <args> --make=false`.
fn argv(args: &str) -> Vec<&str> {
    let mut argv: Vec<&str> = args.split_whitespace().collect();
    argv.push("--make=false");
    argv
}

#[test]
fn webhooks_sequence() {
    // One snapshot per command of what it created, updated or deleted (init is snapshotted by
    // init_snapshots.rs).
    let (_tmp, dir) = scaffold("crew-operator", &[], &[]);
    let commands: Vec<Vec<&str>> = WEBHOOKS_SEQUENCE.iter().map(|args| argv(args)).collect();
    support::snapshot_steps(
        "create_webhook",
        "webhooks",
        &dir,
        &commands,
        |name, doc| insta::assert_snapshot!(name.to_string(), doc),
    );

    let project = read(&dir, "PROJECT");
    for expected in [
        "  kind: Captain\n  path: crate::api::v1\n  version: v1\n  webhooks:\n    defaulting: true\n    validation: true\n    webhookVersion: v1\n",
        "  webhooks:\n    conversion: true\n    spoke:\n    - v2\n    webhookVersion: v1\n",
        "    defaultingPath: /custom-mutate-sailor\n",
        "    validationPath: /custom-validate-sailor\n",
        "- core: true\n  group: core\n  kind: Pod\n  path: k8s_openapi::api::core::v1\n  version: v1\n  webhooks:\n    defaulting: true\n    webhookVersion: v1\n",
        "- core: true\n  group: apps\n  kind: Deployment\n",
    ] {
        assert!(project.contains(expected), "{expected:?} not in\n{project}");
    }
    // The manager's own certificates, the default: no cert-manager, its RBAC by name.
    assert!(
        project.ends_with("webhookCerts: self-signed\n"),
        "{project}"
    );
    let default = read(&dir, "config/default/kustomization.yaml");
    for active in [
        "\n- ../crd\n",
        "\n- ../webhook\n",
        "\n- ../webhook-certs\n",
        "\n- path: manager_webhook_patch.yaml\n",
        "\n#- ../certmanager\n",
        "\n#replacements:\n",
        "\n#         name: firstmates.crew.example.com\n",
    ] {
        assert!(default.contains(active), "{active:?} not in\n{default}");
    }
    assert!(!dir.join("config/certmanager").exists());
    let patch = read(&dir, "config/default/manager_webhook_patch.yaml");
    for arg in [
        "--webhook-certs=self-signed",
        "--webhook-cert-secret=crew-operator-webhook-server-self-signed-cert",
        "--webhook-service-name=crew-operator-webhook-service",
        "--webhook-mutating-configuration=crew-operator-mutating-webhook-configuration",
        "--webhook-validating-configuration=crew-operator-validating-webhook-configuration",
        "--webhook-conversion-crd=firstmates.crew.example.com",
    ] {
        assert!(
            patch.contains(&format!("value: {arg}\n")),
            "{arg} not in\n{patch}"
        );
    }
    let cluster_role = read(&dir, "config/webhook-certs/cluster_role.yaml");
    for name in [
        "  - crew-operator-mutating-webhook-configuration\n",
        "  - crew-operator-validating-webhook-configuration\n",
        "  - firstmates.crew.example.com\n",
    ] {
        assert!(cluster_role.contains(name), "{name} not in\n{cluster_role}");
    }
    let role = read(&dir, "config/webhook-certs/role.yaml");
    assert!(
        role.contains("  - crew-operator-webhook-server-self-signed-cert\n"),
        "{role}"
    );

    // cert-manager instead, for every webhook at once; and back, to the same bytes.
    let self_signed = tree(&dir);
    run(&dir, &["edit", "--webhook-certs=cert-manager"]);
    let default = read(&dir, "config/default/kustomization.yaml");
    for active in [
        "\n- ../webhook\n",
        "\n- ../certmanager\n",
        "\n#- ../webhook-certs\n",
        "\n- path: manager_webhook_patch.yaml\n",
        "\nreplacements:\n",
        "\n         kind: MutatingWebhookConfiguration\n",
        "\n         kind: ValidatingWebhookConfiguration\n",
        "\n         name: firstmates.crew.example.com\n",
    ] {
        assert!(
            default.contains(active),
            "{active:?} not active in\n{default}"
        );
    }
    assert!(
        dir.join("config/certmanager/certificate-webhook.yaml")
            .is_file()
    );
    assert!(!dir.join("config/webhook-certs").exists());
    assert!(
        read(&dir, "config/default/manager_webhook_patch.yaml")
            .contains("secretName: webhook-server-cert")
    );
    assert!(read(&dir, "PROJECT").ends_with("webhookCerts: cert-manager\n"));
    // A webhook added now is cert-manager's too, and the flag cannot split the project.
    assert_refused(
        &dir,
        &argv(
            "create webhook --group crew --version v1 --kind Sailor --defaulting --webhook-certs=self-signed",
        ),
        &[
            "the project's webhooks get their certificates from cert-manager",
            "edit --webhook-certs=self-signed",
        ],
    );
    run(&dir, &["edit", "--webhook-certs=self-signed"]);
    assert!(
        tree(&dir) == self_signed,
        "not the same tree after switching back"
    );
    let crd = read(&dir, "config/crd/kustomization.yaml");
    assert!(
        crd.contains("\npatches:\n")
            && crd.contains("- path: patches/webhook_in_firstmates.yaml\n"),
        "{crd}"
    );
    assert!(
        crd.contains("\nconfigurations:\n- kustomizeconfig.yaml\n"),
        "{crd}"
    );
    let root = read(&dir, "src/webhook/mod.rs");
    for line in [
        "v1::captain::webhooks(),",
        "v1::first_mate::webhooks(),",
        "v1::sailor::webhooks(),",
        "v1::admiral::webhooks(),",
        "v1::pod::webhooks(),",
        "v1::deployment::webhooks(),",
    ] {
        assert_eq!(root.matches(line).count(), 1, "{line} in\n{root}");
    }
}

#[test]
fn builtin_kinds_print_the_bootstrap_warning() {
    let (_tmp, dir) = scaffold("crew-operator", &[], &[]);
    let stderr = create(
        &dir,
        "create webhook --group core --version v1 --kind Pod --defaulting",
    );
    assert!(
        stderr.contains("https://book.kubebuilder.io/reference/webhook-bootstrap-problem"),
        "{stderr}"
    );
    let stderr = create(
        &dir,
        "create webhook --group core --version v1 --kind Pod --programmatic-validation",
    );
    assert!(stderr.contains("bootstrap problem"), "{stderr}");
    let project = read(&dir, "PROJECT");
    assert_eq!(project.matches("kind: Pod").count(), 1, "{project}");
    assert!(project.contains("- core: true\n"), "{project}");
}

#[test]
fn adding_validation_keeps_the_defaulting_webhook_byte_for_byte() {
    let (_tmp, dir) = scaffold("crew-operator", &[], &WEBHOOKS_SEQUENCE[..2]);
    let file = "src/webhook/v1/captain/defaulting.rs";
    let mut edited = read(&dir, file);
    edited.push_str("// my own code\n");
    std::fs::write(dir.join(file), &edited).unwrap();
    create(&dir, WEBHOOKS_SEQUENCE[2]);
    assert_eq!(read(&dir, file), edited);
    let kind_mod = read(&dir, "src/webhook/v1/captain/mod.rs");
    assert!(
        kind_mod.contains("pub mod defaulting;\npub mod validation;\n"),
        "{kind_mod}"
    );
    assert!(
        kind_mod.contains(
            "        defaulting::webhook(),\n        validation::webhook(),\n        // +operator-rs"
        ),
        "{kind_mod}"
    );
}

#[test]
fn force_never_duplicates_inserted_code_and_is_stable() {
    let sequence = &WEBHOOKS_SEQUENCE[..9];
    let (_tmp, dir) = scaffold("crew-operator", &[], sequence);
    let once = tree(&dir);
    for command in [
        "create webhook --group crew --version v1 --kind Captain --defaulting --programmatic-validation --force",
        "create webhook --group crew --version v1 --kind FirstMate --conversion --spoke v2 --force",
        // The custom paths are kept.
        "create webhook --group crew --version v1 --kind Sailor --defaulting --programmatic-validation --force",
    ] {
        create(&dir, command);
        create(&dir, command);
    }
    let twice = tree(&dir);
    let changed: Vec<&String> = twice
        .iter()
        .filter(|(path, bytes)| once.get(*path) != Some(bytes))
        .map(|(path, _)| path)
        .collect();
    assert!(changed.is_empty(), "--force changed {changed:?}");
    assert_eq!(once.len(), twice.len());
    let root = read(&dir, "src/webhook/mod.rs");
    for line in [
        "pub mod v1;",
        "v1::captain::webhooks(),",
        "v1::sailor::webhooks(),",
    ] {
        assert_eq!(root.matches(line).count(), 1, "{line} in\n{root}");
    }
    let conversion = read(&dir, "src/webhook/v1/first_mate/conversion.rs");
    assert_eq!(conversion.matches("Spoke::new::<").count(), 1);
}

/// The runtime serves and registers `webhook::webhooks()` from `init` on: webhooks for one kind
/// or several add their modules and list entries, and nothing once per project, neither code
/// (the manager, `manifests()`, the machinery) nor dependencies (Cargo.lock stays valid).
#[test]
fn webhooks_insert_nothing_once_per_project() {
    let (_tmp, dir) = scaffold(
        "crew-operator",
        &[],
        &[
            "create api --group crew --version v1 --kind Captain",
            "create api --group crew --version v1 --kind Sailor",
        ],
    );
    // Cargo.toml changes once, on the runtime's line (its `webhooks` feature): checked below.
    let project_files = [
        "Cargo.lock",
        "src/lib.rs",
        "src/main.rs",
        "src/api/mod.rs",
        "src/controller/mod.rs",
    ];
    let before: Vec<String> = project_files.iter().map(|f| read(&dir, f)).collect();
    for args in [
        "create webhook --group crew --version v1 --kind Captain --defaulting",
        "create webhook --group crew --version v1 --kind Sailor --defaulting --programmatic-validation",
        "create webhook --group core --version v1 --kind Pod --defaulting",
    ] {
        create(&dir, args);
    }
    for (file, before) in project_files.iter().zip(&before) {
        assert_eq!(&read(&dir, file), before, "{file} changed");
    }
    let manifest = read(&dir, "Cargo.toml");
    assert_eq!(manifest.matches("\"webhooks\"").count(), 1, "{manifest}");
    for gone in [
        "src/manager",
        "src/manifests.rs",
        "src/webhook/admission.rs",
        "src/webhook/conversion.rs",
        "src/webhook/server.rs",
    ] {
        assert!(!dir.join(gone).exists(), "{gone} was written");
    }
    let root = read(&dir, "src/webhook/mod.rs");
    for line in [
        "pub use operator_rs_runtime::webhook::Webhook;",
        "pub mod v1;",
        "v1::captain::webhooks(),",
        "v1::sailor::webhooks(),",
        "v1::pod::webhooks(),",
    ] {
        assert_eq!(root.matches(line).count(), 1, "{line} in\n{root}");
    }
    let defaulting = read(&dir, "src/webhook/v1/sailor/defaulting.rs");
    assert!(
        defaulting.contains("use operator_rs_runtime::webhook::{")
            && !defaulting.contains("crate::webhook"),
        "{defaulting}"
    );
}

#[test]
fn a_spoke_can_be_added_later_with_force() {
    let (_tmp, dir) = scaffold("crew-operator", &[], &WEBHOOKS_SEQUENCE[3..6]);
    create(
        &dir,
        "create api --group crew --version v3 --kind FirstMate --controller=false",
    );
    create(
        &dir,
        "create webhook --group crew --version v1 --kind FirstMate --conversion --spoke v3 --force",
    );
    let conversion = read(&dir, "src/webhook/v1/first_mate/conversion.rs");
    assert!(
        conversion.contains(
            "Spoke::new::<crate::api::v2::FirstMate>(),\n        Spoke::new::<crate::api::v3::FirstMate>(),"
        ),
        "{conversion}"
    );
    assert!(
        dir.join("src/webhook/v1/first_mate/conversion_v3.rs")
            .exists()
    );
    let project = read(&dir, "PROJECT");
    assert!(
        project.contains("    spoke:\n    - v2\n    - v3\n"),
        "{project}"
    );
}

#[test]
fn conversion_makes_the_hub_the_storage_version() {
    let (_tmp, dir) = scaffold(
        "crew-operator",
        &[],
        &[
            "create api --group crew --version v1 --kind FirstMate",
            "create api --group crew --version v2 --kind FirstMate --controller=false",
            "create webhook --group crew --version v2 --kind FirstMate --conversion --spoke v1",
        ],
    );
    let v1 = read(&dir, "src/api/v1/first_mate.rs");
    let v2 = read(&dir, "src/api/v2/first_mate.rs");
    assert!(v1.contains("    storage = false,\n"), "{v1}");
    assert!(!v2.contains("storage = false"), "{v2}");
    assert!(
        v1.contains("    status = \"FirstMateStatus\",\n    // Another version of FirstMate is the storage version"),
        "{v1}"
    );
}

#[test]
fn multigroup_conversion_patches_are_named_by_group() {
    let (_tmp, dir) = scaffold(
        "fleet",
        &["--multigroup"],
        &[
            "create api --group sea-creatures --version v1beta1 --kind Kraken",
            "create api --group sea-creatures --version v1 --kind Kraken --controller=false",
            "create webhook --group sea-creatures --version v1beta1 --kind Kraken --conversion --spoke v1",
            "create webhook --group apps --version v1 --kind Deployment --defaulting",
        ],
    );
    assert!(
        dir.join("config/crd/patches/webhook_in_sea-creatures_krakens.yaml")
            .exists()
    );
    let crd = read(&dir, "config/crd/kustomization.yaml");
    assert!(
        crd.contains("- path: patches/webhook_in_sea-creatures_krakens.yaml\n"),
        "{crd}"
    );
    for file in [
        "src/webhook/sea_creatures/mod.rs",
        "src/webhook/sea_creatures/v1beta1/kraken/conversion.rs",
        "src/webhook/sea_creatures/v1beta1/kraken/conversion_v1.rs",
        "src/webhook/apps/v1/deployment/defaulting.rs",
    ] {
        assert!(dir.join(file).exists(), "{file}");
    }
    let root = read(&dir, "src/webhook/mod.rs");
    assert!(
        root.contains("pub mod apps;\npub mod sea_creatures;\n"),
        "{root}"
    );
    let conversion = read(
        &dir,
        "src/webhook/sea_creatures/v1beta1/kraken/conversion.rs",
    );
    assert!(
        conversion.contains("Spoke::new::<crate::api::sea_creatures::v1::Kraken>(),"),
        "{conversion}"
    );
}

#[test]
fn dry_run_writes_nothing() {
    let (_tmp, dir) = scaffold("crew-operator", &[], &WEBHOOKS_SEQUENCE[..1]);
    let before = tree(&dir);
    let out = operator_rs(&dir)
        .args([
            "create",
            "webhook",
            "--group",
            "crew",
            "--version",
            "v1",
            "--kind",
            "Captain",
            "--defaulting",
            "--dry-run",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("create    src/webhook/v1/captain/defaulting.rs"),
        "{stdout}"
    );
    assert!(stdout.contains("update    src/webhook/mod.rs"), "{stdout}");
    // The runtime's `webhooks` feature, on its line of Cargo.toml.
    assert!(stdout.contains("update    Cargo.toml"), "{stdout}");
    for untouched in ["src/lib.rs", "src/main.rs", "Cargo.lock"] {
        assert!(!stdout.contains(untouched), "{untouched} in\n{stdout}");
    }
    assert!(before == tree(&dir));
}

fn webhook(args: &str) -> Vec<&str> {
    let mut argv = vec!["create", "webhook"];
    argv.extend(args.split_whitespace());
    argv.push("--make=false");
    argv
}

#[test]
fn refusals_leave_the_tree_unchanged() {
    let (_tmp, empty) = folder("empty");
    std::fs::write(empty.join("notes.txt"), "mine").unwrap();
    assert_refused(
        &empty,
        &webhook("--group crew --version v1 --kind Captain --defaulting"),
        &["PROJECT", "must be initialized"],
    );

    let (_tmp2, dir) = scaffold(
        "crew-operator",
        &[],
        &[
            "create api --group crew --version v1 --kind Captain",
            "create webhook --group crew --version v1 --kind Captain --defaulting --programmatic-validation",
            "create api --group crew --version v1 --kind FirstMate",
            "create api --group crew --version v2 --kind FirstMate --controller=false",
            "create webhook --group crew --version v1 --kind FirstMate --conversion --spoke v2",
            "create webhook --group core --version v1 --kind Pod --defaulting",
        ],
    );
    let cases: &[(&str, &[&str])] = &[
        (
            "--group crew --version v1 --kind Captain",
            &[
                "operator-rs create webhook requires at least one of --defaulting, --programmatic-validation and --conversion to be true",
            ],
        ),
        (
            "--group crew --version v1 --kind Bosun --defaulting",
            &["no API found for crew.example.com/v1, Kind Bosun: run 'create api' first"],
        ),
        (
            "--group crew --version v3 --kind Captain --programmatic-validation",
            &["no API found for crew.example.com/v3, Kind Captain"],
        ),
        (
            "--group apps --version v1 --kind Deploymnet --defaulting",
            &["--kind", "Deploymnet", "StatefulSet"],
        ),
        (
            "--group crew --version v1 --kind Captain --defaulting",
            &[
                "defaulting webhook already exists for this resource",
                "--force",
            ],
        ),
        (
            "--group crew --version v1 --kind Captain --programmatic-validation",
            &["validation webhook already exists for this resource"],
        ),
        (
            "--group crew --version v1 --kind FirstMate --conversion --spoke v2",
            &["conversion webhook already exists for this resource"],
        ),
        (
            "--group core --version v1 --kind Pod --defaulting",
            &["defaulting webhook already exists for this resource"],
        ),
        (
            "--group crew --version v1 --kind Captain --conversion --spoke v7",
            &["invalid spoke version \"v7\""],
        ),
        (
            "--group crew --version v1 --kind Captain --conversion --spoke V2",
            &["invalid spoke version \"V2\""],
        ),
        (
            "--group crew --version v2 --kind FirstMate --conversion --spoke v2",
            &["invalid spoke version \"v2\"", "hub"],
        ),
        (
            "--group crew --version v1 --kind FirstMate --conversion --spoke v2,v2 --force",
            &["duplicate spoke version: v2"],
        ),
        (
            "--group crew --version v1 --kind FirstMate --conversion --spoke v2 --spoke v2 --force",
            &["duplicate spoke version: v2"],
        ),
        (
            "--group crew --version v2 --kind FirstMate --conversion --spoke v1",
            &["already has a conversion webhook", "hub version v1"],
        ),
        (
            "--group crew --version v1 --kind Captain --conversion=false --spoke v2 --defaulting --force",
            &["--spoke can only be used with --conversion"],
        ),
        (
            "--group crew --version v1 --kind Captain --programmatic-validation --defaulting-path=/x --force",
            &["--defaulting-path can only be used with --defaulting"],
        ),
        (
            "--group crew --version v1 --kind Captain --defaulting --validation-path=/x --force",
            &["--validation-path can only be used with --programmatic-validation"],
        ),
        (
            "--group crew --version v1 --kind Captain --defaulting --defaulting-path=mutate --force",
            &["--defaulting-path", "\"mutate\"", "absolute URL path"],
        ),
        (
            "--group crew --version v1 --kind Captain --defaulting --programmatic-validation --defaulting-path=/same --validation-path=/same --force",
            &["--validation-path", "\"/same\"", "path of its own"],
        ),
        (
            "--group crew --version v1 --kind Captain --defaulting --defaulting-path=/convert --force",
            &["--defaulting-path", "conversion"],
        ),
        (
            "--group core --version v1 --kind Pod --conversion",
            &["--conversion", "built-in kind"],
        ),
        (
            "--group crew --version v1 --kind Captain --defaulting --plural captainz --force",
            &["--plural", "\"captainz\"", "captains"],
        ),
        (
            "--group crew --version v1 --kind Captain --defaulting=maybe",
            &["--defaulting", "maybe"],
        ),
    ];
    for (args, expected) in cases {
        assert_refused(&dir, &webhook(args), expected);
    }
}

#[test]
fn a_deleted_marker_is_reported_and_nothing_changes() {
    let (_tmp, dir) = scaffold("crew-operator", &[], &WEBHOOKS_SEQUENCE[..1]);
    let path = dir.join("src/webhook/mod.rs");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("// +operator-rs:scaffold:webhooks", "")).unwrap();
    assert_refused(
        &dir,
        &webhook("--group crew --version v1 --kind Captain --defaulting"),
        &["src/webhook/mod.rs", "+operator-rs:scaffold:webhooks"],
    );
}

/// The license header goes on top of every Rust file `create webhook` writes, so a header that is
/// not plain comments would give files that do not compile: refused, like `create api` does.
#[test]
fn a_license_header_that_is_not_comments_is_refused() {
    let (_tmp, dir) = scaffold("crew-operator", &[], &WEBHOOKS_SEQUENCE[..1]);
    std::fs::write(dir.join("hack/boilerplate.rs.txt"), "Copyright Acme\n").unwrap();
    assert_refused(
        &dir,
        &webhook("--group crew --version v1 --kind Captain --defaulting"),
        &["hack/boilerplate.rs.txt"],
    );
}

/// The manager serves each path once: a webhook may not take the path of another kind's webhook,
/// whether that one has its default path or a custom one.
#[test]
fn a_path_of_another_kinds_webhook_is_refused() {
    let (_tmp, dir) = scaffold("crew-operator", &[], &WEBHOOKS_SEQUENCE[..2]);
    create(&dir, "create api --group crew --version v1 --kind Sailor");
    assert_refused(
        &dir,
        &webhook(
            "--group crew --version v1 --kind Sailor --defaulting \
             --defaulting-path=/mutate-crew-example-com-v1-captain",
        ),
        &[
            "--defaulting-path",
            "/mutate-crew-example-com-v1-captain",
            "Captain crew/v1",
        ],
    );
}

#[test]
fn certificate_files_keep_the_users_edits_and_older_projects_switch() {
    // A project whose webhooks are older than the choice: cert-manager, no webhookCerts in
    // PROJECT, no `#- ../webhook-certs` line in config/default.
    let (_tmp, dir) = scaffold(
        "crew-operator",
        &[],
        &[
            "create api --group crew --version v1 --kind Captain",
            "create webhook --group crew --version v1 --kind Captain --defaulting --webhook-certs=cert-manager",
        ],
    );
    let edit_file = |path: &str, f: &dyn Fn(String) -> String| {
        let text = read(&dir, path);
        std::fs::write(dir.join(path), f(text)).unwrap();
    };
    edit_file("PROJECT", &|t| {
        t.replace("webhookCerts: cert-manager\n", "")
    });
    edit_file("config/default/kustomization.yaml", &|t| {
        t.replace("#- ../webhook-certs\n", "")
    });
    // Another webhook in an old project stays cert-manager's.
    create(
        &dir,
        "create webhook --group crew --version v1 --kind Captain --programmatic-validation",
    );
    assert!(dir.join("config/certmanager/issuer.yaml").is_file());
    assert!(!read(&dir, "PROJECT").contains("webhookCerts: self-signed"));
    run(&dir, &["edit", "--webhook-certs=self-signed"]);
    let default = read(&dir, "config/default/kustomization.yaml");
    assert!(
        default.contains("#- ../certmanager\n- ../webhook-certs\n"),
        "{default}"
    );
    assert!(!dir.join("config/certmanager").exists());

    // The user's own line in the patch survives a webhook that changes the patch's names.
    edit_file("config/default/manager_webhook_patch.yaml", &|t| {
        format!("{t}\n# mine: keep\n")
    });
    create(
        &dir,
        "create api --group crew --version v1 --kind FirstMate",
    );
    create(
        &dir,
        "create api --group crew --version v2 --kind FirstMate --controller=false",
    );
    create(
        &dir,
        "create webhook --group crew --version v1 --kind FirstMate --conversion --spoke v2",
    );
    let patch = read(&dir, "config/default/manager_webhook_patch.yaml");
    assert!(patch.contains("# mine: keep\n"), "{patch}");
    assert!(
        patch.contains("value: --webhook-conversion-crd=firstmates.crew.example.com\n"),
        "{patch}"
    );
    let cluster_role = read(&dir, "config/webhook-certs/cluster_role.yaml");
    assert!(
        cluster_role.contains("  - firstmates.crew.example.com\n"),
        "{cluster_role}"
    );
    let migrations = read(&dir, "src/webhook/mod.rs");
    assert!(
        migrations.contains("StorageMigration::of::<crate::api::v1::FirstMate>(),"),
        "{migrations}"
    );

    // An edited file of the mode being left is kept, and said so.
    edit_file("config/webhook-certs/role.yaml", &|t| {
        format!("{t}# mine\n")
    });
    let out = run(&dir, &["edit", "--webhook-certs=cert-manager"]);
    assert!(
        out.contains("kept config/webhook-certs/role.yaml: you edited it"),
        "{out}"
    );
    assert!(!dir.join("config/webhook-certs/cluster_role.yaml").exists());
}

#[test]
fn a_certificate_file_edited_where_it_changes_is_refused_and_nothing_written() {
    let (_tmp, dir) = scaffold(
        "crew-operator",
        &[],
        &[
            "create api --group crew --version v1 --kind Captain",
            "create webhook --group crew --version v1 --kind Captain --programmatic-validation",
            "create api --group crew --version v2 --kind Captain --controller=false",
        ],
    );
    let path = "config/default/manager_webhook_patch.yaml";
    let edited = read(&dir, path).replace(
        "--webhook-validating-configuration=crew-operator-validating-webhook-configuration",
        "--webhook-validating-configuration=mine",
    );
    std::fs::write(dir.join(path), edited).unwrap();
    assert_refused(
        &dir,
        &argv("create webhook --group crew --version v1 --kind Captain --conversion --spoke v2"),
        &[
            "cannot update config/default/manager_webhook_patch.yaml",
            "change it by hand, or move it away",
        ],
    );
}
