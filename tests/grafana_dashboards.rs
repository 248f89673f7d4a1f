//! The Grafana dashboards that `--plugins grafana/v1-alpha` writes (kubebuilder's two, adapted to
//! the runtime): every metric their PromQL names is a series of a family in docs/manager.md's
//! metrics table, which contract/tests/metrics_documented.rs proves is exactly what the manager's
//! registry serves. The table is the contract between the two crates (contract/), so operator-rs's
//! tests do not build the runtime.

mod support;

use std::collections::BTreeSet;

use operator_rs_contract::{documented_series, manager_md};
use serde_json::Value;

const DASHBOARDS: [&str; 2] = [
    "grafana/controller-runtime-metrics.json",
    "grafana/controller-resources-metrics.json",
];

/// The dashboards as the plugin writes them into a new project, by path.
fn dashboards() -> Vec<(&'static str, Value)> {
    let (_tmp, dir) = support::folder("crew");
    support::run_ok(
        &dir,
        &[
            "init",
            "--domain",
            "example.com",
            "--plugins",
            "go/v4,grafana/v1-alpha",
        ],
    );
    let parse = |path: &'static str| {
        let text = std::fs::read_to_string(dir.join(path)).unwrap();
        let dashboard = serde_json::from_str(&text)
            .unwrap_or_else(|error| panic!("{path} is not JSON: {error}"));
        (path, dashboard)
    };
    DASHBOARDS.into_iter().map(parse).collect()
}

/// The PromQL of a dashboard: the panels' targets, and the queries of its variables.
fn queries(dashboard: &Value) -> Vec<String> {
    let mut queries = Vec::new();
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().into_iter().flatten() {
            queries.push(target["expr"].as_str().unwrap().to_owned());
        }
    }
    for variable in dashboard["templating"]["list"].as_array().unwrap() {
        queries.push(variable["query"]["query"].as_str().unwrap().to_owned());
        queries.push(variable["definition"].as_str().unwrap().to_owned());
    }
    queries
}

/// PromQL's aggregation operators (which take `by (…)` before their parentheses) and binary
/// keywords: not metrics.
const KEYWORDS: [&str; 17] = [
    "sum",
    "min",
    "max",
    "avg",
    "group",
    "stddev",
    "stdvar",
    "count",
    "count_values",
    "bottomk",
    "topk",
    "quantile",
    "and",
    "or",
    "unless",
    "bool",
    "offset",
];

/// The metric names of a PromQL expression: its identifiers, but for functions (followed by
/// `(`), aggregation clauses (`by (…)`), label matchers (`{…}`), ranges (`[…]`), strings and
/// Grafana's `label_values(metric, label)`, of which only the metric counts.
fn metric_names(query: &str) -> BTreeSet<String> {
    let mut text = String::new();
    // Strings, matchers and ranges out.
    let mut depth = 0;
    let mut in_string = false;
    for c in query.chars() {
        match c {
            '"' if depth == 0 => in_string = !in_string,
            _ if in_string => {}
            '{' | '[' => depth += 1,
            '}' | ']' => depth -= 1,
            _ if depth == 0 => text.push(c),
            _ => {}
        }
    }
    // `label_values(metric, label)`: the label is not a metric.
    if let Some(arguments) = text.strip_prefix("label_values(") {
        text = arguments.split(',').next().unwrap_or_default().to_owned();
    }
    let mut names = BTreeSet::new();
    let mut rest = text.as_str();
    let identifier = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':';
    while let Some(start) = rest.find(|c: char| c.is_ascii_alphabetic() || c == '_') {
        let tail = &rest[start..];
        let end = tail.find(|c: char| !identifier(c)).unwrap_or(tail.len());
        let (word, after) = tail.split_at(end);
        let after = after.trim_start();
        rest = after;
        if ["by", "without", "on", "ignoring"].contains(&word) {
            // The label list that follows.
            let close = after.find(')').unwrap_or(0);
            rest = &after[close..];
        } else if !after.starts_with('(') && !KEYWORDS.contains(&word) {
            names.insert(word.to_owned());
        }
    }
    names
}

#[test]
fn every_query_names_a_metric_the_manager_serves() {
    let served = documented_series(&manager_md());
    for (file, dashboard) in dashboards() {
        let queries = queries(&dashboard);
        assert!(queries.len() > 3, "{file}: {queries:?}");
        for query in queries {
            let names = metric_names(&query);
            assert!(!names.is_empty(), "{file}: no metric in {query}");
            for name in names {
                assert!(
                    served.contains(&name),
                    "{file}: {name} (in {query}) is not served; served: {served:#?}"
                );
            }
        }
    }
}

/// The panels Grafana needs: an id each, a place, and a query or a row of them.
#[test]
fn dashboards_are_grafana_dashboards() {
    for (file, dashboard) in dashboards() {
        assert!(dashboard["title"].is_string(), "{file}");
        assert_eq!(dashboard["__inputs"][0]["name"], "DS_PROMETHEUS", "{file}");
        let mut ids = BTreeSet::new();
        for panel in dashboard["panels"].as_array().unwrap() {
            assert!(
                ids.insert(panel["id"].as_u64().unwrap()),
                "{file}: id twice"
            );
            for key in ["h", "w", "x", "y"] {
                assert!(panel["gridPos"][key].is_u64(), "{file}: {panel}");
            }
            if panel["type"] != "row" {
                assert_eq!(panel["datasource"], "${DS_PROMETHEUS}", "{file}");
                assert!(!panel["targets"].as_array().unwrap().is_empty(), "{file}");
            }
        }
    }
}

#[test]
fn metric_names_are_read_from_promql() {
    let names = |query: &str| metric_names(query).into_iter().collect::<Vec<_>>();
    assert_eq!(
        names(
            r#"histogram_quantile(0.9, sum by (name, le) (rate(workqueue_work_duration_seconds_bucket{job="$job"}[5m])))"#
        ),
        ["workqueue_work_duration_seconds_bucket"]
    );
    assert_eq!(
        names(r#"rate(process_cpu_seconds_total{pod=~"$pod"}[5m]) * 100 + process_open_fds"#),
        ["process_cpu_seconds_total", "process_open_fds"]
    );
    assert_eq!(
        names(r#"label_values(controller_runtime_reconcile_total{namespace="$namespace"}, job)"#),
        ["controller_runtime_reconcile_total"]
    );
}
