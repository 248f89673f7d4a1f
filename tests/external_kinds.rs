//! Controllers for kinds the project does not own (`--external-api-path`, types
//! generated from the CRD), several controllers per kind (`--controller-name`), controllers of
//! other groups in single-group projects, and what PROJECT records for `alpha generate` to replay
//! them. Bad input is refused with one line and changes nothing.

mod support;

use std::path::{Path, PathBuf};

use operator_rs::project::Project;
use support::{
    assert_nothing_twice, assert_refused, assert_tree_parses, folder, generate_into, run_ok,
};

const CERTIFICATES: &str = "tests/data/cert-manager/cert-manager.io_certificates.yaml";
const ISSUERS: &str = "tests/data/cert-manager/cert-manager.io_issuers.yaml";

/// A project (namespaced or not) with the cert-manager CRDs in `crds/`.
fn project(namespaced: bool) -> (tempfile::TempDir, PathBuf) {
    let (tmp, dir) = folder("demo");
    let mut init = vec!["init", "--domain", "example.com", "--owner", "Acme"];
    if namespaced {
        init.push("--namespaced");
    }
    run_ok(&dir, &init);
    std::fs::create_dir(dir.join("crds")).unwrap();
    for file in [CERTIFICATES, ISSUERS] {
        let name = Path::new(file).file_name().unwrap();
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
        std::fs::copy(source, dir.join("crds").join(name)).unwrap();
    }
    (tmp, dir)
}

fn external(kind: &str, file: &str) -> Vec<String> {
    format!(
        "create api --group cert-manager --version v1 --kind {kind} --controller --resource=false \
         --external-api-path crds/{file} --external-api-domain io \
         --external-api-module github.com/cert-manager/cert-manager@v1.21.1 --make=false"
    )
    .split_whitespace()
    .map(str::to_string)
    .collect()
}

fn run(dir: &Path, args: &[String]) -> String {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run_ok(dir, &args)
}

fn read(dir: &Path, path: &str) -> String {
    std::fs::read_to_string(dir.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn external_kinds_get_types_a_controller_and_a_project_record() {
    let (_tmp, dir) = project(false);
    run(
        &dir,
        &external("Certificate", "cert-manager.io_certificates.yaml"),
    );
    run(&dir, &external("Issuer", "cert-manager.io_issuers.yaml"));

    let types = read(&dir, "src/external/cert_manager/v1/certificate.rs");
    for expected in [
        "status = \"CertificateStatus\"",
        "schema = \"disabled\"",
        "pub struct CertificateSpec {",
        "pub issuer_ref: CertificateSpecIssuerRef,",
        "pub enum CertificateSpecPrivateKeyAlgorithm {",
        "pub annotations: Option<BTreeMap<String, String>>,",
        "fn every_field_round_trips()",
    ] {
        assert!(
            types.contains(expected),
            "certificate.rs lacks {expected:?}"
        );
    }
    // Issuer's schema has what Certificate's lacks: int-or-string and preserved unknown fields.
    let issuer = read(&dir, "src/external/cert_manager/v1/issuer.rs");
    assert!(issuer.contains("use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;"));
    assert!(
        issuer.contains("Option<serde_json::Value>")
            || issuer.contains("BTreeMap<String, serde_json::Value>")
    );
    assert!(
        read(&dir, "src/external/cert_manager/v1/mod.rs")
            .contains("pub use certificate::Certificate;")
    );
    assert!(read(&dir, "src/lib.rs").contains("pub mod external;"));
    let controller = read(&dir, "src/controller/certificate.rs");
    assert!(controller.contains("use crate::external::cert_manager::v1::Certificate;"));
    assert!(controller.contains("&[&format!(\"{plural}/status\")]"));
    // Their CRDs are cert-manager's: nothing under config/crd, no crds() entry.
    assert!(!dir.join("config/crd").exists());
    assert!(!read(&dir, "src/api/mod.rs").contains("Certificate"));

    let project = Project::load(&dir).unwrap();
    let record = &project.resources[0];
    assert!(record.external && record.controller);
    assert_eq!(
        (
            record.group.as_str(),
            record.domain.as_str(),
            record.path.as_str(),
            record.module.as_str()
        ),
        (
            "cert-manager",
            "io",
            "crds/cert-manager.io_certificates.yaml",
            "github.com/cert-manager/cert-manager@v1.21.1"
        )
    );
    assert!(read(&dir, "PROJECT").contains("  external: true\n"));
    assert_tree_parses(&dir);
    assert_nothing_twice(&dir);

    // Again: the controller exists; a named one may join it.
    let again = external("Certificate", "cert-manager.io_certificates.yaml");
    let again: Vec<&str> = again.iter().map(String::as_str).collect();
    assert_refused(
        &dir,
        &again,
        &["already has controllers defined", "--controller-name"],
    );
    let mut named = again.clone();
    named.extend(["--controller-name", "certificate-audit"]);
    run_ok(&dir, &named);
    assert!(read(&dir, "src/controller/certificate_audit.rs").contains("\"certificate-audit\""));
    let record = &Project::load(&dir).unwrap().resources[0];
    assert_eq!(
        record.controller_names(),
        ["certificate", "certificate-audit"]
    );
}

#[test]
fn bad_external_input_is_refused_and_changes_nothing() {
    let (_tmp, dir) = project(false);
    let with = |change: &dyn Fn(&mut Vec<String>)| {
        let mut args = external("Certificate", "cert-manager.io_certificates.yaml");
        change(&mut args);
        args
    };
    let set = |flag: &'static str, value: &'static str| {
        move |args: &mut Vec<String>| {
            let i = args.iter().position(|a| a == flag).unwrap();
            args[i + 1] = value.to_string();
        }
    };
    std::fs::write(dir.join("crds/not-a-crd.yaml"), "kind: ConfigMap\n").unwrap();
    std::fs::write(dir.join("crds/broken.yaml"), "kind: [\n").unwrap();
    for (args, expected) in [
        (
            with(&set(
                "--external-api-path",
                "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1",
            )),
            vec!["Go import path", "CustomResourceDefinition"],
        ),
        (
            with(&set("--external-api-path", "crds/missing.yaml")),
            vec!["no such file"],
        ),
        (
            with(&set("--external-api-path", "https://x.io/c.yaml")),
            vec!["does not download"],
        ),
        (
            with(&set("--external-api-path", "crds/not-a-crd.yaml")),
            vec!["holds no CustomResourceDefinition"],
        ),
        (
            with(&set("--external-api-path", "crds/broken.yaml")),
            vec!["not valid YAML"],
        ),
        (
            with(&set("--kind", "Certificat")),
            vec![
                "no CustomResourceDefinition of Kind Certificat",
                "Certificate.cert-manager.io",
            ],
        ),
        (
            with(&set("--external-api-domain", "com")),
            vec!["in group cert-manager.com"],
        ),
        (
            with(&set("--version", "v2")),
            vec!["has no version v2", "serves: v1"],
        ),
        (
            with(&set("--external-api-domain", "-io")),
            vec!["--external-api-domain"],
        ),
        (
            with(&|a| {
                let i = a.iter().position(|x| x == "--resource=false").unwrap();
                a[i] = "--resource=true".into();
            }),
            vec!["Use '--resource=false'"],
        ),
        (
            with(&|a| a.extend(["--controller-name".into(), "Bad_Name".into()])),
            vec!["--controller-name"],
        ),
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_refused(
            &dir,
            &args,
            &expected.iter().map(|s| &**s).collect::<Vec<_>>(),
        );
    }
    assert_refused(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "x",
            "--version",
            "v1",
            "--kind",
            "Y",
            "--external-api-module",
            "m@v1",
        ],
        &["require '--external-api-path'"],
    );
}

#[test]
fn named_controllers_and_other_groups_in_a_single_group_project() {
    let (_tmp, dir) = project(true);
    run_ok(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "crew",
            "--version",
            "v1",
            "--kind",
            "Captain",
            "--make=false",
        ],
    );
    let second = [
        "create",
        "api",
        "--group",
        "crew",
        "--version",
        "v1",
        "--kind",
        "Captain",
        "--resource=false",
        "--make=false",
    ];
    assert_refused(&dir, &second, &["please specify '--controller-name'"]);
    let mut named = second.to_vec();
    named.extend(["--controller-name", "captain-backup"]);
    run_ok(&dir, &named);
    assert_refused(
        &dir,
        &named,
        &["controller with name \"captain-backup\" already exists"],
    );
    let backup = read(&dir, "src/controller/captain_backup.rs");
    assert!(backup.contains("const CONTROLLER_NAME: &str = \"captain-backup\";"));
    assert!(backup.contains("use crate::api::v1::Captain;"));
    assert!(read(&dir, "src/controller/mod.rs").contains("captain_backup::CONTROLLER,"));
    let text = read(&dir, "PROJECT");
    assert!(
        text.contains("  controllers:\n  - name: captain\n  - name: captain-backup\n"),
        "{text}"
    );
    assert!(!text.contains("controller: true"), "{text}");
    // A name another controller has, in any kind, is refused: names are metrics labels.
    run_ok(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "crew",
            "--version",
            "v1",
            "--kind",
            "Sailor",
            "--make=false",
        ],
    );
    let mut clash = second.to_vec();
    clash.extend(["--controller-name", "sailor"]);
    assert_refused(&dir, &clash, &["src/controller/sailor.rs"]);

    // Another group's controller is allowed (kubebuilder's one-group rule is for resources).
    let core = [
        "create",
        "api",
        "--group",
        "core",
        "--version",
        "v1",
        "--kind",
        "Namespace",
        "--resource=false",
        "--make=false",
    ];
    let out = support::operator_rs(&dir).args(core).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Namespace is cluster-scoped: a ClusterRole of its own, and a note that says so.
    assert!(String::from_utf8_lossy(&out.stdout).contains("note: Namespace is cluster-scoped"));
    assert!(read(&dir, "src/controller/namespace.rs").contains("rbac_scope: RbacScope::Cluster,"));
    assert!(read(&dir, "config/rbac/kustomization.yaml").contains("- cluster_role_binding.yaml\n"));
    assert!(dir.join("config/rbac/cluster_role_binding.yaml").exists());
    assert_refused(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "other",
            "--version",
            "v1",
            "--kind",
            "Thing",
            "--make=false",
        ],
        &["multiple groups are not allowed"],
    );
    assert_tree_parses(&dir);
    assert_nothing_twice(&dir);
}

/// kubebuilder's deploy-image plus a custom controller: the plugin's controller stays, the named
/// one reads the kind.
#[test]
fn a_named_controller_next_to_a_deploy_image_controller() {
    let (_tmp, dir) = project(false);
    run_ok(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
            "--image=memcached:1.6.26-alpine3.19",
            "--make=false",
        ],
    );
    let before = read(&dir, "src/controller/memcached.rs");
    run_ok(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
            "--resource=false",
            "--controller-name",
            "memcached-audit",
            "--make=false",
        ],
    );
    assert_eq!(read(&dir, "src/controller/memcached.rs"), before);
    assert!(
        read(&dir, "src/controller/memcached_audit.rs")
            .contains("use crate::api::v1alpha1::Memcached;")
    );
    assert!(read(&dir, "PROJECT").contains("  - name: memcached-audit\n"));
    assert_tree_parses(&dir);
}

/// kubebuilder's project-v4 hooks cert-manager's Issuer without a controller: `create webhook`
/// with the external flags writes its types too; a recorded external kind needs no flags.
#[test]
fn webhooks_for_external_kinds() {
    let (_tmp, dir) = project(false);
    let mut issuer = external("Issuer", "cert-manager.io_issuers.yaml");
    issuer.splice(0..2, ["create".to_string(), "webhook".to_string()]);
    issuer.retain(|a| a != "--controller" && a != "--resource=false");
    issuer.push("--defaulting".into());
    run(&dir, &issuer);
    let defaulting = read(&dir, "src/webhook/v1/issuer/defaulting.rs");
    assert!(defaulting.contains("use crate::external::cert_manager::v1::Issuer;"));
    assert!(defaulting.contains("crate::external::cert_manager::v1::issuer::example()"));
    assert!(!defaulting.contains("spec.foo"));
    assert!(dir.join("src/external/cert_manager/v1/issuer.rs").exists());
    let record = &Project::load(&dir).unwrap().resources[0];
    assert!(record.external && record.webhooks.as_ref().is_some_and(|w| w.defaulting));
    assert_eq!(record.path, "crds/cert-manager.io_issuers.yaml");

    let validation = [
        "create",
        "webhook",
        "--group",
        "cert-manager",
        "--version",
        "v1",
        "--kind",
        "Issuer",
        "--programmatic-validation",
        "--make=false",
    ];
    run_ok(&dir, &validation);
    assert!(read(&dir, "src/webhook/v1/issuer/validation.rs").contains("_old: &Issuer"));
    let conversion = [
        "create",
        "webhook",
        "--group",
        "cert-manager",
        "--version",
        "v1",
        "--kind",
        "Issuer",
        "--conversion",
        "--make=false",
    ];
    assert_refused(&dir, &conversion, &["another project's kind"]);
    assert_tree_parses(&dir);
    assert_nothing_twice(&dir);
}

/// kopium's test suite: the real CRDs it checks itself on (tests/data/kopium/README.md).
fn kopium_crds() -> Vec<(PathBuf, serde_yaml::Value)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/kopium");
    let mut crds: Vec<(PathBuf, serde_yaml::Value)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .map(|p| {
            let crd = serde_yaml::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            (p, crd)
        })
        .collect();
    crds.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(crds.len(), 18, "tests/data/kopium/ has kopium's 18 CRDs");
    crds
}

/// (group, kind, served versions, storage version) of a CRD.
fn crd_names(crd: &serde_yaml::Value) -> (String, String, Vec<String>, String) {
    let spec = &crd["spec"];
    let versions = spec["versions"].as_sequence().unwrap();
    let name = |v: &serde_yaml::Value| v["name"].as_str().unwrap().to_string();
    (
        spec["group"].as_str().unwrap().into(),
        spec["names"]["kind"].as_str().unwrap().into(),
        versions
            .iter()
            .filter(|v| v["served"] == true)
            .map(name)
            .collect(),
        versions
            .iter()
            .find(|v| v["storage"] == true)
            .map(name)
            .unwrap(),
    )
}

/// Every served version of every kind of kopium's suite through `create api
/// --external-api-path`, into one project: all accepted, and the code parses. (The
/// `external_kinds` scenario of hack/test-generated builds and tests such a project.)
#[test]
fn every_crd_of_kopiums_suite_is_accepted() {
    let (_tmp, dir) = folder("real-crds");
    run_ok(&dir, &["init", "--domain", "example.com"]);
    std::fs::create_dir(dir.join("crds")).unwrap();
    for (path, crd) in kopium_crds() {
        let file = format!("crds/{}", path.file_name().unwrap().to_str().unwrap());
        std::fs::copy(&path, dir.join(&file)).unwrap();
        let (group, kind, served, storage) = crd_names(&crd);
        let (first, domain) = group.split_once('.').unwrap();
        let mut versions = served.clone();
        versions.sort_by_key(|v| v != &storage);
        for version in &versions {
            let mut args = vec![
                "create",
                "api",
                "--group",
                first,
                "--external-api-domain",
                domain,
                "--version",
                version,
                "--kind",
                &kind,
                "--resource=false",
                "--external-api-path",
                &file,
                "--make=false",
            ];
            // The kind's first controller watches the storage version, a named one each other.
            let name = format!("{}-{version}", kind.to_lowercase());
            if version != &storage {
                args.extend(["--controller-name", &name]);
            }
            let out = support::operator_rs(&dir).args(&args).output().unwrap();
            assert!(
                out.status.success(),
                "{kind} {group}/{version}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    // Zalando's kind keeps its name on the wire and gets a Rust one.
    let postgresql = read(&dir, "src/external/acid/v1/postgresql.rs");
    assert!(postgresql.contains("kind = \"postgresql\""));
    assert!(postgresql.contains("root = \"Postgresql\""));
    assert!(read(&dir, "src/controller/postgresql.rs").contains("acid::v1::Postgresql"));
    // Argo CD's `operation` is kept next to spec and status.
    let application = read(&dir, "src/external/argoproj/v1alpha1/application.rs");
    assert!(application.contains("no_spec"));
    assert!(application.contains("pub operation: Option<ApplicationOperation>,"));
    let project = Project::load(&dir).unwrap();
    assert!(
        project
            .resources
            .iter()
            .any(|r| r.kind == "postgresql" && r.external)
    );
    assert_tree_parses(&dir);
    assert_nothing_twice(&dir);
}

/// Every served version of every kind of kopium's suite through the mapping: the code parses,
/// and the example object is valid for the schema and survives the types whole.
#[test]
fn every_version_of_kopiums_crds_round_trips() {
    use operator_rs::openapi::{KindAttributes, KindTypes, example};
    use support::serde_model::Model;
    for (path, crd) in kopium_crds() {
        let (group, kind, served, _) = crd_names(&crd);
        let type_name = operator_rs::names::Kind::parse_foreign(&kind).unwrap();
        for version in served {
            let at = format!("{} {version}", path.display());
            let schema = crd["spec"]["versions"]
                .as_sequence()
                .unwrap()
                .iter()
                .find(|v| v["name"].as_str() == Some(&version))
                .map(|v| v["schema"]["openAPIV3Schema"].clone())
                .unwrap();
            let types = KindTypes::analyze(&schema, type_name.type_name()).unwrap();
            let attributes = KindAttributes {
                group: &group,
                version: &version,
                kind: &kind,
                type_name: type_name.type_name(),
                plural: crd["spec"]["names"]["plural"].as_str().unwrap(),
                namespaced: crd["spec"]["scope"] == "Namespaced",
            };
            let literal = example::object(&types, &attributes);
            let code = format!("{}{}", types.imports(), types.items(&attributes));
            let model = Model::parse(&code).unwrap_or_else(|e| panic!("{at}: {e}"));
            let text = syn::parse_str::<syn::LitStr>(&literal).unwrap().value();
            let object: serde_json::Value = serde_json::from_str(&text).unwrap();
            let back = model
                .round_trip_object(&object)
                .unwrap_or_else(|e| panic!("{at}: {e}"));
            assert_eq!(back, object, "{at}: the example does not round-trip");
            let schema: serde_json::Value = serde_json::to_value(&schema).unwrap();
            let problems = support::openapi::problems(&schema, &object);
            assert!(problems.is_empty(), "{at}: {problems:?}");
        }
    }
}

/// monitoring.coreos.com and monitoring.rhobs (the Prometheus operator and its fork) share
/// `--group monitoring` and their kinds' names: each group gets a module of its own, every error
/// says what to do without undoing the other group's files, and `alpha generate` replays PROJECT
/// into the same modules.
#[test]
fn two_groups_that_share_a_first_label() {
    let (tmp, dir) = folder("two-monitorings");
    run_ok(&dir, &["init", "--domain", "example.com"]);
    std::fs::create_dir(dir.join("crds")).unwrap();
    let coreos = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/kopium/servicemonitors.monitoring.coreos.com.yaml"),
    )
    .unwrap();
    std::fs::write(dir.join("crds/coreos.yaml"), &coreos).unwrap();
    std::fs::write(
        dir.join("crds/rhobs.yaml"),
        coreos.replace("monitoring.coreos.com", "monitoring.rhobs"),
    )
    .unwrap();
    let api = |domain: &str, more: &[&str]| {
        let file = format!("crds/{}.yaml", domain.split('.').next().unwrap());
        let mut args: Vec<String> = [
            "create",
            "api",
            "--group",
            "monitoring",
            "--external-api-domain",
            domain,
            "--version",
            "v1",
            "--kind",
            "ServiceMonitor",
            "--resource=false",
            "--external-api-path",
            &file,
            "--make=false",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.extend(more.iter().map(|s| s.to_string()));
        args
    };
    run(&dir, &api("coreos.com", &[]));
    // The controller's file is the first group's: a name for the second, not a move.
    let second = api("rhobs", &[]);
    let second: Vec<&str> = second.iter().map(String::as_str).collect();
    let message = assert_refused(
        &dir,
        &second,
        &["monitoring.coreos.com", "pass --controller-name"],
    );
    assert!(!message.contains("move it away"), "{message}");
    run(
        &dir,
        &api("rhobs", &["--controller-name", "servicemonitor-rhobs"]),
    );
    assert!(
        read(&dir, "src/controller/service_monitor.rs")
            .contains("use crate::external::monitoring::v1::ServiceMonitor;")
    );
    assert!(
        read(&dir, "src/controller/servicemonitor_rhobs.rs")
            .contains("use crate::external::monitoring_rhobs::v1::ServiceMonitor;")
    );
    assert!(
        read(&dir, "src/external/monitoring_rhobs/v1/service_monitor.rs")
            .contains("group = \"monitoring.rhobs\"")
    );
    // Without the flags, a webhook cannot tell which kind is meant; with them, the second
    // group's would take the first one's files.
    let webhook = [
        "create",
        "webhook",
        "--group",
        "monitoring",
        "--version",
        "v1",
        "--kind",
        "ServiceMonitor",
        "--defaulting",
        "--make=false",
    ];
    assert_refused(&dir, &webhook, &["two groups", "--external-api-domain"]);
    let mut coreos_webhook = webhook.to_vec();
    coreos_webhook.extend([
        "--external-api-domain",
        "coreos.com",
        "--external-api-path",
        "crds/coreos.yaml",
    ]);
    run_ok(&dir, &coreos_webhook);
    let mut rhobs_webhook = webhook.to_vec();
    rhobs_webhook.extend([
        "--external-api-domain",
        "rhobs",
        "--external-api-path",
        "crds/rhobs.yaml",
    ]);
    assert_refused(&dir, &rhobs_webhook, &["only one of the two groups"]);
    assert_tree_parses(&dir);
    assert_nothing_twice(&dir);
    // PROJECT alone gives the same modules.
    let again = tmp.path().join("again");
    generate_into(&dir, &again);
    for file in [
        "src/external/mod.rs",
        "src/external/monitoring_rhobs/v1/service_monitor.rs",
        "src/controller/servicemonitor_rhobs.rs",
    ] {
        assert_eq!(read(&again, file), read(&dir, file), "{file}");
    }
}
