//! The Grafana plugin (`grafana.kubebuilder.io/v1-alpha`): `init --plugins` and `edit --plugins`
//! write the dashboards and the user's config of custom metrics, render that config into a
//! dashboard, keep it across `alpha generate`, and refuse a bad one with nothing written.

mod support;

use support::{assert_refused, folder, generate_into, run_ok, tree};

const CONFIG: &str = "grafana/custom-metrics/config.yaml";
const CUSTOM: &str = "grafana/custom-metrics/custom-metrics-dashboard.json";

#[test]
fn init_and_edit_write_the_dashboards_and_render_the_custom_metrics() {
    let (_tmp, dir) = folder("crew");
    run_ok(
        &dir,
        &[
            "init",
            "--domain",
            "example.com",
            "--plugins",
            "go/v4,grafana/v1-alpha",
        ],
    );
    assert!(dir.join(CONFIG).is_file());
    assert!(!dir.join(CUSTOM).exists(), "no custom metrics yet");
    let project = std::fs::read_to_string(dir.join("PROJECT")).unwrap();
    assert!(
        project.contains("grafana.kubebuilder.io/v1-alpha: {}"),
        "{project}"
    );

    std::fs::write(
        dir.join(CONFIG),
        "customMetrics:\n  - metric: crew_boardings_total\n    type: counter\n",
    )
    .unwrap();
    run_ok(
        &dir,
        &["edit", "--plugins", "grafana.kubebuilder.io/v1-alpha"],
    );
    let board: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(CUSTOM)).unwrap()).unwrap();
    assert_eq!(board["panels"][0]["title"], "crew_boardings_total");
    // The user's config stays as they wrote it.
    assert!(
        std::fs::read_to_string(dir.join(CONFIG))
            .unwrap()
            .contains("crew_boardings_total")
    );

    // alpha generate scaffolds the same tree: the config carried over, the dashboard rendered.
    let out = dir.parent().unwrap().join("regenerated");
    generate_into(&dir, &out);
    assert_eq!(tree(&dir), tree(&out));
}

#[test]
fn a_bad_config_is_refused_and_nothing_is_written() {
    let (_tmp, dir) = folder("crew");
    run_ok(&dir, &["init", "--domain", "example.com"]);
    run_ok(&dir, &["edit", "--plugins", "grafana/v1-alpha"]);
    std::fs::write(
        dir.join(CONFIG),
        "customMetrics:\n  - metric: 1bad\n    type: gauge\n",
    )
    .unwrap();
    assert_refused(
        &dir,
        &["edit", "--plugins", "grafana/v1-alpha"],
        &[CONFIG, "not a Prometheus metric name"],
    );
}

/// The example at the end of the config, uncommented, is a config the plugin renders: a panel per
/// metric, the histogram's with the example's own PromQL.
#[test]
fn the_configs_example_renders() {
    let (_tmp, dir) = folder("crew");
    run_ok(&dir, &["init", "--domain", "example.com"]);
    run_ok(&dir, &["edit", "--plugins", "grafana/v1-alpha"]);
    let config = std::fs::read_to_string(dir.join(CONFIG)).unwrap();
    let (_, example) = config.split_once("# Example:\n").expect("an example");
    let uncommented: Vec<&str> = example
        .lines()
        .map(|line| line.strip_prefix("# ").expect("commented"))
        .collect();
    std::fs::write(dir.join(CONFIG), uncommented.join("\n")).unwrap();
    run_ok(&dir, &["edit", "--plugins", "grafana/v1-alpha"]);
    let board: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(CUSTOM)).unwrap()).unwrap();
    let panels = board["panels"].as_array().unwrap();
    let titles: Vec<&str> = panels
        .iter()
        .map(|p| p["title"].as_str().unwrap())
        .collect();
    assert_eq!(
        titles,
        [
            "memcached_resizes_total",
            "memcached_backup_duration_seconds"
        ]
    );
    let histogram = panels[1]["targets"][0]["expr"].as_str().unwrap();
    assert!(
        histogram.starts_with("histogram_quantile(0.99, "),
        "{histogram}"
    );
}
