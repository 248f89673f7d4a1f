//! The Grafana dashboards that `--plugins grafana/v1-alpha` writes (kubebuilder's two, adapted to
//! the runtime): every metric their PromQL names is one that the manager's registry serves, once
//! the code that records each family (a controller's reconciliations, the client's requests,
//! leader election, the webhook server) has run.

mod support;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use operator_rs_runtime::controller::{Context, Runner};
use operator_rs_runtime::k8s_openapi::api::core::v1::ConfigMap;
use operator_rs_runtime::kube::Config;
use operator_rs_runtime::kube::api::ObjectMeta;
use operator_rs_runtime::kube::runtime::controller::Action;
use operator_rs_runtime::manager::{Shared, client};
use operator_rs_runtime::metrics::Metrics;
use operator_rs_runtime::testing::fake::FakeApiServer;
use operator_rs_runtime::webhook::server::{instrument, router};
use operator_rs_runtime::webhook::{
    AdmissionRequest, Denial, FailurePolicy, Operation, Registration, Validator, Warnings, Webhook,
};
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

/// The names of the series the runtime's registry serves once a controller reconciled, the
/// manager's client sent requests, leader election ran and the webhook server started.
async fn served_series() -> BTreeSet<String> {
    let fake = FakeApiServer::new();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = fake.clone();
    tokio::spawn(async move { server.serve(listener).await });
    let metrics = Metrics::new();
    let client = client::from_config(Config::new(url.parse().unwrap()), 0.0, 0, &metrics).unwrap();
    let shared = Shared {
        metrics: metrics.clone(),
        ..Shared::new(client)
    };
    fake.put(&ConfigMap {
        metadata: ObjectMeta {
            name: Some("settings".to_owned()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    });
    let reconcile = |_: Arc<ConfigMap>, _: Arc<Context>| async {
        Ok::<_, operator_rs_runtime::kube::Error>(Action::await_change())
    };
    let controller = tokio::spawn(Runner::<ConfigMap>::new("test", &shared).run(reconcile, ()));
    let reconciled = r#"controller_runtime_reconcile_total{controller="test",result="success"} 1"#;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !metrics.encode().unwrap().contains(reconciled) {
        assert!(tokio::time::Instant::now() < deadline, "no reconciliation");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    shared.shutdown.cancel();
    controller.await.unwrap().unwrap();
    metrics
        .leader_election("6e1ac2c5.example.com")
        .set_leading(true);
    // The webhook server's metrics start with their series at 0, by path.
    let registration = Registration {
        name: "vconfigmap-v1.kb.io",
        path: "/validate--v1-configmap",
        operations: &[Operation::Create],
        failure_policy: FailurePolicy::Fail,
    };
    let webhooks = vec![Webhook::validating(registration, AllowAll)];
    let _served = instrument(
        router(webhooks).unwrap(),
        &[registration.path],
        &metrics.webhooks(),
    );

    let text = metrics.encode().unwrap();
    let samples = text.lines().filter(|line| !line.starts_with('#'));
    let names = samples.map(|line| line.split(['{', ' ']).next().unwrap_or_default().to_owned());
    names.collect()
}

/// A validating webhook that allows everything.
struct AllowAll;

impl Validator<ConfigMap> for AllowAll {
    fn validate_create(
        &self,
        _: &ConfigMap,
        _: &AdmissionRequest<ConfigMap>,
    ) -> Result<Warnings, Denial> {
        Ok(Warnings::default())
    }

    fn validate_update(
        &self,
        _: &ConfigMap,
        _: &ConfigMap,
        _: &AdmissionRequest<ConfigMap>,
    ) -> Result<Warnings, Denial> {
        Ok(Warnings::default())
    }

    fn validate_delete(
        &self,
        _: &ConfigMap,
        _: &AdmissionRequest<ConfigMap>,
    ) -> Result<Warnings, Denial> {
        Ok(Warnings::default())
    }
}

#[tokio::test]
async fn every_query_names_a_metric_the_manager_serves() {
    let served = served_series().await;
    for family in [
        "workqueue_adds_total",
        "rest_client_requests_total",
        "leader_election_master_status",
        "controller_runtime_webhook_requests_total",
    ] {
        assert!(served.contains(family), "{family} not served: {served:#?}");
    }
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
