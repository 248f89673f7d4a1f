//! Controllers for kinds the project does not own (`--external-api-path`, types
//! generated from the CRD), several controllers per kind (`--controller-name`), controllers of
//! other groups in single-group projects, and what PROJECT records for `alpha generate` to replay
//! them. Bad input is refused with one line and changes nothing.

mod support;

use std::path::{Path, PathBuf};

use operator_rs::project::Project;
use support::{assert_nothing_twice, assert_refused, assert_tree_parses, folder, run_ok};

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
