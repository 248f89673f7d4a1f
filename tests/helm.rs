//! The Helm plugin (`helm.kubebuilder.io/v2-alpha`) and the auto-update plugin
//! (`autoupdate.kubebuilder.io/v1-alpha`): `init --plugins` and `edit --plugins` write the chart
//! made from `kubectl kustomize config/default`, the Makefile targets and the workflows; the
//! user's files and edited templates are kept, templates of objects gone are removed, and
//! without kubectl nothing is written; kubebuilder's `--manifests`, `--output-dir` and `--force`
//! and Makefile targets. hack/check-helm-chart checks charts with a real Helm: here, the charts
//! made from kubebuilder's own manifests (tests/data/kubebuilder-charts), in the scenarios of
//! hack/test-generated, operator-rs's projects.

mod support;

use std::path::Path;
use std::process::Command;

use support::{assert_refused, folder, generate_into, operator_rs, run_ok, tree};

const VALUES: &str = "dist/chart/values.yaml";
const SERVICE_ACCOUNT: &str = "dist/chart/templates/rbac/controller-manager.yaml";
const LEADER_ROLE: &str = "dist/chart/templates/rbac/leader-election-role.yaml";

fn read(dir: &std::path::Path, path: &str) -> String {
    std::fs::read_to_string(dir.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn init_writes_the_chart_and_the_workflows() {
    let (_tmp, dir) = folder("crew");
    run_ok(
        &dir,
        &[
            "init",
            "--domain",
            "example.com",
            "--plugins",
            "go/v4,helm/v2-alpha,autoupdate/v1-alpha",
        ],
    );
    for file in [
        "dist/chart/Chart.yaml",
        VALUES,
        "dist/chart/templates/_helpers.tpl",
        "dist/chart/templates/manager/controller-manager.yaml",
        "dist/chart/templates/metrics/controller-manager-metrics-service.yaml",
        SERVICE_ACCOUNT,
        ".github/workflows/test-chart.yml",
        ".github/workflows/auto_update.yml",
    ] {
        assert!(dir.join(file).is_file(), "{file}");
    }
    // A project without webhooks has no webhook block or template.
    let values: serde_yaml::Value = serde_yaml::from_str(&read(&dir, VALUES)).unwrap();
    assert!(values.get("webhook").is_none(), "{values:?}");
    assert_eq!(values["manager"]["image"]["repository"], "controller");
    assert!(!dir.join("dist/chart/templates/webhook").exists());
    let project = read(&dir, "PROJECT");
    assert!(
        project.contains("helm.kubebuilder.io/v2-alpha: {}"),
        "{project}"
    );
    assert!(
        project.contains("autoupdate.kubebuilder.io/v1-alpha: {}"),
        "{project}"
    );
    let makefile = read(&dir, "Makefile");
    assert!(makefile.contains("\nhelm-chart: manifests"), "{makefile}");
    let gitignore = read(&dir, ".gitignore");
    assert!(gitignore.contains("\n/dist/*\n") && gitignore.contains("\n!/dist/chart/\n"));

    // Run again with nothing changed: nothing to write.
    let before = tree(&dir);
    run_ok(&dir, &["edit", "--plugins", "helm/v2-alpha"]);
    assert_eq!(before, tree(&dir));
    assert_eq!(read(&dir, "Makefile").matches("\nhelm-chart:").count(), 1);
}

#[test]
fn the_users_files_are_kept_and_stale_templates_removed() {
    let (_tmp, dir) = folder("crew");
    run_ok(&dir, &["init", "--domain", "example.com"]);
    run_ok(&dir, &["edit", "--plugins", "helm/v2-alpha"]);

    let values = read(&dir, VALUES).replace("replicas: 1", "replicas: 3 # mine");
    std::fs::write(dir.join(VALUES), &values).unwrap();
    let edited = read(&dir, LEADER_ROLE).replace("rules:", "# mine\nrules:");
    std::fs::write(dir.join(LEADER_ROLE), &edited).unwrap();
    // A template operator-rs made for an object config/ no longer renders (as if a kind was
    // removed): copied from an unedited one.
    let stale = "dist/chart/templates/rbac/gone.yaml";
    std::fs::copy(dir.join(SERVICE_ACCOUNT), dir.join(stale)).unwrap();
    let mine = "dist/chart/templates/extra/my-configmap.yaml";
    std::fs::create_dir_all(dir.join("dist/chart/templates/extra")).unwrap();
    std::fs::write(dir.join(mine), "apiVersion: v1\nkind: ConfigMap\n").unwrap();
    std::fs::remove_file(dir.join(SERVICE_ACCOUNT)).unwrap();

    let out = run_ok(&dir, &["edit", "--plugins", "helm/v2-alpha"]);
    assert_eq!(read(&dir, VALUES), values);
    assert_eq!(read(&dir, LEADER_ROLE), edited);
    assert!(out.contains(LEADER_ROLE), "the kept file is named: {out}");
    assert!(!dir.join(stale).exists(), "the stale template is removed");
    assert!(dir.join(mine).is_file(), "the user's own template is kept");
    assert!(
        dir.join(SERVICE_ACCOUNT).is_file(),
        "a removed template is made again"
    );
}

#[test]
fn without_kubectl_nothing_is_written() {
    let (_tmp, dir) = folder("crew");
    run_ok(&dir, &["init", "--domain", "example.com"]);
    let before = tree(&dir);
    let output = operator_rs(&dir)
        .args(["edit", "--plugins", "helm/v2-alpha"])
        .env("KUBECTL", "/nonexistent/kubectl")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("kubectl kustomize config/default") && stderr.contains("install kubectl"),
        "{stderr}"
    );
    assert_eq!(before, tree(&dir));
}

#[test]
fn alpha_generate_makes_the_chart_after_make_manifests_only() {
    let (_tmp, dir) = folder("crew");
    run_ok(
        &dir,
        &[
            "init",
            "--domain",
            "example.com",
            "--plugins",
            "helm/v2-alpha,autoupdate/v1-alpha",
        ],
    );
    let out = dir.parent().unwrap().join("regenerated");
    let printed = generate_into(&dir, &out);
    assert!(
        printed.contains("not run without make manifests") && printed.contains("helm/v2-alpha"),
        "{printed}"
    );
    assert!(out.join(".github/workflows/auto_update.yml").is_file());
    assert!(!out.join("dist/chart/templates").exists());
}

/// With --sharding, the chart runs the manager as config/ does: three replicas, `--sharding` in
/// its arguments, the PodDisruptionBudget; `edit --sharding` brings values.yaml (the user's)
/// along, and the next `edit --plugins helm/v2-alpha` the templates.
#[test]
fn sharding_reaches_the_chart() {
    const PDB: &str = "dist/chart/templates/manager/controller-manager-poddisruptionbudget.yaml";
    let sharded = |dir: &std::path::Path| {
        let values: serde_yaml::Value = serde_yaml::from_str(&read(dir, VALUES)).unwrap();
        assert_eq!(values["manager"]["replicas"], 3, "{values:?}");
        let args: Vec<&str> = values["manager"]["args"]
            .as_sequence()
            .unwrap()
            .iter()
            .filter_map(|a| a.as_str())
            .collect();
        assert_eq!(args, ["--leader-elect", "--sharding"]);
        let pdb = read(dir, PDB);
        assert!(pdb.contains("maxUnavailable: 1"), "{pdb}");
        assert!(pdb.contains("namespace: {{ .Release.Namespace }}"), "{pdb}");
    };
    let (_a, fresh) = folder("fresh");
    run_ok(
        &fresh,
        &[
            "init",
            "--domain",
            "example.com",
            "--sharding",
            "--plugins",
            "helm/v2-alpha",
        ],
    );
    sharded(&fresh);

    let (_b, dir) = folder("later");
    run_ok(
        &dir,
        &[
            "init",
            "--domain",
            "example.com",
            "--plugins",
            "helm/v2-alpha",
        ],
    );
    assert!(!dir.join(PDB).exists());
    let plain_values = read(&dir, VALUES);
    let out = run_ok(&dir, &["edit", "--sharding"]);
    assert!(out.contains("make helm-chart"), "{out}");
    run_ok(&dir, &["edit", "--plugins", "helm/v2-alpha"]);
    sharded(&dir);
    run_ok(
        &dir,
        &["edit", "--sharding=false", "--plugins", "helm/v2-alpha"],
    );
    assert_eq!(read(&dir, VALUES), plain_values);
    assert!(!dir.join(PDB).exists());
}

/// kubebuilder's manifests of testdata/project-v4 (cluster-scoped, webhooks of every kind,
/// cert-manager), in a project of the same name: the chart made from them with `--manifests`
/// passes hack/check-helm-chart, every kubebuilder value changing exactly what it names (needs
/// helm, kubectl and kubernetes-validate, as .ci/run installs them).
#[test]
fn kubebuilders_project_v4_makes_a_chart_whose_values_change_what_they_name() {
    check_chart_of_kubebuilders("project-v4");
}

/// The same with testdata/project-v4-with-plugins (namespaced, deploy-image's variables).
#[test]
fn kubebuilders_project_v4_with_plugins_makes_a_chart_whose_values_change_what_they_name() {
    check_chart_of_kubebuilders("project-v4-with-plugins");
}

fn check_chart_of_kubebuilders(name: &str) {
    let (_tmp, dir) = folder(name);
    run_ok(&dir, &["init", "--domain", "testproject.org"]);
    let manifests = format!("{name}.install.yaml");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/kubebuilder-charts");
    std::fs::copy(data.join(&manifests), dir.join(&manifests)).unwrap();
    run_ok(
        &dir,
        &[
            "edit",
            "--plugins",
            "helm/v2-alpha",
            "--manifests",
            &manifests,
        ],
    );
    let check = Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("hack/check-helm-chart"))
        .arg(&dir)
        .args(["--manifests", &manifests])
        .output()
        .expect("hack/check-helm-chart runs (python3, helm, kubectl, kubernetes-validate)");
    let out = String::from_utf8_lossy(&check.stdout);
    let err = String::from_utf8_lossy(&check.stderr);
    assert!(check.status.success(), "{name}: {out}{err}");
    for value in [
        "nameOverride=other",
        "fullnameOverride=full",
        "rbac.namespaced=true",
        "serviceAccount.enabled=false",
        "metrics.secure=false",
        "webhook.port=9444",
        "manager.healthProbe.port=8082",
        "manager.extraVolumes",
        "renders valid",
    ] {
        assert!(out.contains(value), "{name}: {value} not checked:\n{out}");
    }
}

/// kubebuilder's flags: `--output-dir` puts the chart in `<dir>/chart`, `--manifests` makes it
/// from a file of kustomize's output; PROJECT records both as kubebuilder does, and a later run
/// (`make helm-chart`) without them does the same again.
#[test]
fn output_dir_and_manifests() {
    let (_tmp, dir) = folder("project-v4");
    run_ok(&dir, &["init", "--domain", "testproject.org"]);
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/kubebuilder-charts/project-v4.install.yaml"),
        dir.join("install.yaml"),
    )
    .unwrap();
    run_ok(
        &dir,
        &[
            "edit",
            "--plugins=helm/v2-alpha",
            "--manifests=install.yaml",
            "--output-dir=charts",
        ],
    );
    assert!(!dir.join("dist/chart").exists());
    for file in [
        "charts/chart/Chart.yaml",
        "charts/chart/values.yaml",
        "charts/chart/templates/_helpers.tpl",
        "charts/chart/templates/crd/captains.crew.testproject.org.yaml",
        "charts/chart/templates/webhook/mutating-webhook-configuration.yaml",
    ] {
        assert!(dir.join(file).is_file(), "{file}");
    }
    let project = read(&dir, "PROJECT");
    assert!(
        project.contains(
            "  helm.kubebuilder.io/v2-alpha:\n    manifests: install.yaml\n    output: charts\n"
        ),
        "{project}"
    );
    let makefile = read(&dir, "Makefile");
    assert!(
        makefile.contains("\nHELM_CHART_DIR ?= charts/chart\n"),
        "{makefile}"
    );
    assert!(
        makefile.contains("\nHELM_NAMESPACE ?= project-v4-system\n"),
        "{makefile}"
    );
    let workflow = read(&dir, ".github/workflows/test-chart.yml");
    assert!(workflow.contains("helm lint charts/chart"), "{workflow}");
    // dist/ stays ignored: the chart is elsewhere.
    assert!(read(&dir, ".gitignore").lines().any(|l| l == "/dist/"));

    // Again without the flags: the recorded ones, nothing to write.
    let before = tree(&dir);
    run_ok(&dir, &["edit", "--plugins", "helm/v2-alpha"]);
    assert_eq!(before, tree(&dir));

    // Back to config/default (kubebuilder's default manifests), in dist/.
    run_ok(
        &dir,
        &[
            "edit",
            "--plugins",
            "helm/v2-alpha",
            "--manifests",
            "dist/install.yaml",
            "--output-dir",
            "dist",
        ],
    );
    assert!(dir.join("dist/chart/Chart.yaml").is_file());
    assert!(read(&dir, "PROJECT").contains("  helm.kubebuilder.io/v2-alpha: {}\n"));
    assert!(
        !dir.join("dist/chart/templates/crd").exists(),
        "config/default has no CRDs yet"
    );
}

/// Bad flags are refused with one line, and nothing is written.
#[test]
fn the_plugins_flags_are_checked() {
    let (_tmp, dir) = folder("crew");
    run_ok(&dir, &["init", "--domain", "example.com"]);
    std::fs::write(dir.join("broken.yaml"), "kind: [").unwrap();
    std::fs::write(
        dir.join("no-manager.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
    )
    .unwrap();
    for (args, expected) in [
        (
            vec!["edit", "--output-dir", "charts"],
            vec!["--output-dir", "--plugins helm/v2-alpha"],
        ),
        (
            vec!["edit", "--manifests", "x.yaml", "--output-dir", "c"],
            vec!["--manifests and --output-dir"],
        ),
        (
            vec![
                "edit",
                "--plugins",
                "helm/v2-alpha",
                "--output-dir",
                "../up",
            ],
            vec!["--output-dir", "inside the project"],
        ),
        (
            vec![
                "edit",
                "--plugins",
                "helm/v2-alpha",
                "--output-dir",
                "/tmp/x",
            ],
            vec!["--output-dir"],
        ),
        (
            vec![
                "edit",
                "--plugins",
                "helm/v2-alpha",
                "--manifests",
                "missing.yaml",
            ],
            vec!["missing.yaml", "no such file"],
        ),
        (
            vec![
                "edit",
                "--plugins",
                "helm/v2-alpha",
                "--manifests",
                "broken.yaml",
            ],
            vec!["broken.yaml", "not YAML"],
        ),
        (
            vec![
                "edit",
                "--plugins",
                "helm/v2-alpha",
                "--manifests",
                "no-manager.yaml",
            ],
            vec!["no-manager.yaml", "no manager Deployment"],
        ),
    ] {
        assert_refused(&dir, &args, &expected);
    }
    // A PROJECT record the plugin does not know.
    let project = read(&dir, "PROJECT");
    let broken = project.replace(
        "plugins:",
        "plugins:\n  helm.kubebuilder.io/v2-alpha:\n    outputDir: charts",
    );
    let broken = if broken == project {
        format!("{project}plugins:\n  helm.kubebuilder.io/v2-alpha:\n    outputDir: charts\n")
    } else {
        broken
    };
    std::fs::write(dir.join("PROJECT"), broken).unwrap();
    assert_refused(
        &dir,
        &["edit", "--plugins", "helm/v2-alpha"],
        &["outputDir"],
    );
}

/// `--force` writes the chart's files of the user's again, but Chart.yaml, and the templates
/// they edited, as kubebuilder's `--force`.
#[test]
fn force_writes_the_users_files_again_but_chart_yaml() {
    let (_tmp, dir) = folder("crew");
    run_ok(
        &dir,
        &[
            "init",
            "--domain",
            "example.com",
            "--plugins",
            "helm/v2-alpha",
        ],
    );
    let files = [
        "dist/chart/Chart.yaml",
        VALUES,
        "dist/chart/templates/_helpers.tpl",
        "dist/chart/templates/NOTES.txt",
        "dist/chart/.helmignore",
        ".github/workflows/test-chart.yml",
        LEADER_ROLE,
    ];
    let made: Vec<String> = files.iter().map(|f| read(&dir, f)).collect();
    for file in files {
        std::fs::write(dir.join(file), format!("{}\n# mine\n", read(&dir, file))).unwrap();
    }
    let out = run_ok(&dir, &["edit", "--plugins", "helm/v2-alpha"]);
    assert!(out.contains(LEADER_ROLE), "{out}");
    for file in files {
        assert!(
            read(&dir, file).ends_with("# mine\n"),
            "{file} kept without --force"
        );
    }
    run_ok(&dir, &["edit", "--plugins", "helm/v2-alpha", "--force"]);
    for (file, made) in files.iter().zip(&made) {
        if *file == "dist/chart/Chart.yaml" {
            assert!(
                read(&dir, file).ends_with("# mine\n"),
                "Chart.yaml is never written again"
            );
        } else {
            assert_eq!(&read(&dir, file), made, "{file}");
        }
    }
}

/// kubebuilder's Makefile targets, as `make -n` runs them.
#[test]
fn kubebuilders_makefile_targets() {
    let (_tmp, dir) = folder("crew");
    run_ok(
        &dir,
        &[
            "init",
            "--domain",
            "example.com",
            "--plugins",
            "helm/v2-alpha",
        ],
    );
    let make = |args: &[&str]| {
        let out = Command::new("make")
            .arg("-n")
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "make -n {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let deploy = make(&["helm-deploy", "IMG=example.com/crew:v1"]);
    assert!(
        deploy.contains("command -v helm"),
        "install-helm first: {deploy}"
    );
    assert!(
        deploy.contains("helm upgrade --install crew dist/chart")
            && deploy.contains("--namespace crew-system")
            && deploy.contains("--set manager.image.repository=${IMG%:*}")
            && deploy.contains("--timeout 5m"),
        "{deploy}"
    );
    for (target, command) in [
        (
            "helm-uninstall",
            "helm uninstall crew --namespace crew-system",
        ),
        ("helm-status", "helm status crew --namespace crew-system"),
        ("helm-history", "helm history crew --namespace crew-system"),
        (
            "helm-rollback",
            "helm rollback crew --namespace crew-system",
        ),
    ] {
        assert!(make(&[target]).contains(command), "{target}");
    }
    let extra = make(&["helm-status", "HELM_RELEASE=r", "HELM_NAMESPACE=n"]);
    assert!(extra.contains("helm status r --namespace n"), "{extra}");
}
