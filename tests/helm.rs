//! The Helm plugin (`helm.kubebuilder.io/v2-alpha`) and the auto-update plugin
//! (`autoupdate.kubebuilder.io/v1-alpha`): `init --plugins` and `edit --plugins` write the chart
//! made from `kubectl kustomize config/default`, the Makefile targets and the workflows; the
//! user's files and edited templates are kept, templates of objects gone are removed, and
//! without kubectl nothing is written. (hack/check-helm-chart checks charts with a real Helm.)

mod support;

use support::{folder, generate_into, operator_rs, run_ok, tree};

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
        assert_eq!(
            args,
            [
                "--leader-elect",
                "--sharding",
                "--health-probe-bind-address=:8081"
            ]
        );
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
