//! The dashboard of the project's own metrics, rendered from `grafana/custom-metrics/config.yaml`
//! (kubebuilder's format): one panel per metric, with the PromQL its type calls for unless the
//! config gives one.

use anyhow::{Context as _, Result, bail};
use serde::Deserialize;
use serde_json::{Value, json};

/// The config, as the user wrote it.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    /// `customMetrics:` with every entry commented out reads as null.
    #[serde(rename = "customMetrics", default)]
    custom_metrics: Option<Vec<Metric>>,
}

/// One metric of the project's own.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Metric {
    pub metric: String,
    #[serde(rename = "type")]
    pub kind: Kind,
    #[serde(default)]
    pub expr: Option<String>,
    #[serde(default)]
    pub unit: Option<String>,
}

/// The Prometheus types a panel is made for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Counter,
    Gauge,
    Histogram,
}

/// The metrics of the config at `path` (its text `text`), checked: names as Prometheus has them.
pub fn metrics(path: &str, text: &str) -> Result<Vec<Metric>> {
    let config: Config = if text.trim().trim_start_matches("---").trim().is_empty() {
        Config::default()
    } else {
        serde_yaml::from_str(text).with_context(|| {
            format!(
                "{path} is not a list of custom metrics (customMetrics: [{{metric, type, expr, \
                 unit}}], type one of counter, gauge, histogram)"
            )
        })?
    };
    let metrics = config.custom_metrics.unwrap_or_default();
    for (i, metric) in metrics.iter().enumerate() {
        let name = &metric.metric;
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':');
        if !valid {
            bail!(
                "{path}: customMetrics[{i}].metric {name:?} is not a Prometheus metric name \
                 ([a-zA-Z_:][a-zA-Z0-9_:]*)"
            );
        }
        if metrics[..i].iter().any(|m| m.metric == *name) {
            bail!("{path}: customMetrics[{i}].metric {name:?} is listed twice");
        }
    }
    Ok(metrics)
}

/// The PromQL of a metric's panel: the config's, else by type, for the dashboard's job and
/// namespace.
pub fn expression(metric: &Metric) -> String {
    if let Some(expr) = &metric.expr {
        return expr.clone();
    }
    let m = &metric.metric;
    let selector = r#"{job=~"$job", namespace=~"$namespace"}"#;
    match metric.kind {
        Kind::Counter => format!("sum by (instance) (rate({m}{selector}[5m]))"),
        Kind::Gauge => format!("sum by (instance) ({m}{selector})"),
        Kind::Histogram => format!(
            "histogram_quantile(0.90, sum by (instance, le) (rate({m}_bucket{selector}[5m])))"
        ),
    }
}

/// The dashboard: one time series panel per metric, two to a row, with the job and namespace
/// variables of the other dashboards.
pub fn dashboard(metrics: &[Metric]) -> String {
    let panels: Vec<Value> = metrics
        .iter()
        .enumerate()
        .map(|(i, metric)| {
            json!({
                "id": i + 1,
                "type": "timeseries",
                "title": metric.metric,
                "datasource": {"type": "prometheus", "uid": "${DS_PROMETHEUS}"},
                "gridPos": {"h": 8, "w": 12, "x": (i % 2) * 12, "y": (i / 2) * 8},
                "fieldConfig": {
                    "defaults": {"unit": metric.unit.as_deref().unwrap_or("none")},
                    "overrides": [],
                },
                "targets": [{
                    "datasource": {"type": "prometheus", "uid": "${DS_PROMETHEUS}"},
                    "expr": expression(metric),
                    "legendFormat": "{{instance}}",
                    "refId": "A",
                }],
            })
        })
        .collect();
    let variable = |name: &str, query: &str| {
        json!({
            "name": name,
            "type": "query",
            "datasource": {"type": "prometheus", "uid": "${DS_PROMETHEUS}"},
            "query": query,
            "definition": query,
            "refresh": 2,
            "includeAll": true,
            "multi": false,
            "current": {},
        })
    };
    let dashboard = json!({
        "title": "Custom Metrics",
        "uid": "custom-metrics",
        "schemaVersion": 39,
        "time": {"from": "now-1h", "to": "now"},
        "refresh": "30s",
        "panels": panels,
        "templating": {"list": [
            {
                "name": "DS_PROMETHEUS",
                "label": "Data source",
                "type": "datasource",
                "query": "prometheus",
                "current": {},
            },
            variable("job", "label_values(controller_runtime_reconcile_total, job)"),
            variable(
                "namespace",
                "label_values(controller_runtime_reconcile_total{job=~\"$job\"}, namespace)",
            ),
        ]},
    });
    let mut text = serde_json::to_string_pretty(&dashboard).expect("a JSON value serializes");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: &str = "---
customMetrics:
  - metric: memcached_resizes_total
    type: counter
  - metric: memcached_pods
    type: gauge
    unit: none
  - metric: memcached_apply_seconds
    type: histogram
    unit: s
  - metric: memcached_ready
    type: gauge
    expr: min(memcached_ready)
";

    #[test]
    fn every_type_gets_its_panel() {
        let metrics = metrics("config.yaml", CONFIG).unwrap();
        assert_eq!(metrics.len(), 4);
        let text = dashboard(&metrics);
        let board: Value = serde_json::from_str(&text).unwrap();
        let exprs: Vec<&str> = board["panels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["targets"][0]["expr"].as_str().unwrap())
            .collect();
        assert_eq!(
            exprs,
            [
                r#"sum by (instance) (rate(memcached_resizes_total{job=~"$job", namespace=~"$namespace"}[5m]))"#,
                r#"sum by (instance) (memcached_pods{job=~"$job", namespace=~"$namespace"})"#,
                r#"histogram_quantile(0.90, sum by (instance, le) (rate(memcached_apply_seconds_bucket{job=~"$job", namespace=~"$namespace"}[5m])))"#,
                "min(memcached_ready)",
            ]
        );
        assert_eq!(board["panels"][2]["fieldConfig"]["defaults"]["unit"], "s");
        assert_eq!(board["panels"][3]["gridPos"]["y"], 8);
    }

    #[test]
    fn the_config_as_written_has_no_metrics() {
        let template =
            include_str!("../../../templates/grafana/grafana/custom-metrics/config.yaml");
        assert!(metrics("config.yaml", template).unwrap().is_empty());
        assert!(metrics("config.yaml", "").unwrap().is_empty());
    }

    #[test]
    fn bad_configs_are_refused_with_the_file_and_what_is_wrong() {
        for (config, expected) in [
            (
                "customMetrics:\n  - metric: x\n    type: summary\n",
                "counter, gauge, histogram",
            ),
            (
                "customMetrics:\n  - metric: 9x\n    type: gauge\n",
                "not a Prometheus metric name",
            ),
            (
                "customMetrics:\n  - metric: a\n    type: gauge\n  - metric: a\n    type: gauge\n",
                "twice",
            ),
            (
                "customMetrics:\n  - metric: a\n    type: gauge\n    colour: red\n",
                "customMetrics",
            ),
            ("customMetric: []\n", "customMetrics"),
        ] {
            let err = format!(
                "{:#}",
                metrics("grafana/custom-metrics/config.yaml", config).unwrap_err()
            );
            assert!(err.contains("grafana/custom-metrics/config.yaml"), "{err}");
            assert!(err.contains(expected), "{config}: {err}");
        }
    }
}
