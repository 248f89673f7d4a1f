//! `dist/chart/values.yaml`: kubebuilder's names (`manager.*`, `rbac.helpers`, `crd`, `metrics`,
//! `webhook`, `certManager`, `prometheus`, `networkPolicy`), with the defaults config/ has, so
//! that `helm template` with no values installs what `make deploy` does.
//!
//! The file is the user's once written: a later run never changes a line of it, and only appends
//! the blocks of what the project has gained since (`webhook` and `certManager` after the first
//! `create webhook`), whose switches the new templates read.

use anyhow::{Context as _, Result};
use serde_yaml::{Mapping, Value};

use super::manager::Defaults;
use super::switches::Features;

/// One top-level block: its key and its text (comments included).
pub struct Block {
    pub key: &'static str,
    pub text: String,
}

/// The file's first lines.
const HEADER: &str = "\
# Values of the chart that operator-rs made from config/ (helm/v2-alpha plugin).
# This file is yours: `make helm-chart` never changes what is here, and only appends the
# blocks of what the project gains (webhook and certManager after its first webhook).
# Defaults install what `make deploy` installs.
";

/// The blocks for a project with `features`, its manager as `manager` has it.
pub fn blocks(features: &Features, manager: &Defaults) -> Vec<Block> {
    let mut blocks = vec![Block {
        key: "manager",
        text: manager_block(manager),
    }];
    blocks.push(Block {
        key: "rbac",
        text: "\
## RBAC
rbac:
  ## The admin, editor and viewer ClusterRoles of each kind (config/rbac), for cluster admins
  ## to grant; the manager does not need them.
  helpers:
    enabled: true
"
        .to_string(),
    });
    blocks.push(Block {
        key: "crd",
        text: "\
## The CustomResourceDefinitions (templates/crd)
crd:
  # Install them with the chart.
  enabled: true
  # Keep them (and every object of their kinds) when the release is uninstalled.
  keep: true
"
        .to_string(),
    });
    blocks.push(Block {
        key: "metrics",
        text: "\
## The manager's metrics endpoint (HTTPS, authenticated) and its Service and roles
metrics:
  enabled: true
"
        .to_string(),
    });
    if features.webhooks {
        blocks.push(Block {
            key: "webhook",
            text: "\
## The admission and conversion webhooks, their Service and the manager's webhook server
## (off: ENABLE_WEBHOOKS=false, and CRDs without conversion webhooks)
webhook:
  enabled: true
"
            .to_string(),
        });
    }
    if features.cert_manager {
        blocks.push(Block {
            key: "certManager",
            text: "\
## cert-manager's Issuer and Certificates for the webhook server (and metrics, if
## config/default uses them). Off: provide the Secret webhook-server-cert yourself.
certManager:
  enabled: true
"
            .to_string(),
        });
    }
    blocks.push(Block {
        key: "prometheus",
        text: format!(
            "\
## A ServiceMonitor for the metrics (config/prometheus); needs the prometheus-operator.
prometheus:
  enabled: {}
",
            features.prometheus_by_default
        ),
    });
    blocks.push(Block {
        key: "networkPolicy",
        text: format!(
            "\
## The NetworkPolicies of config/network-policy: only namespaces labelled metrics: enabled
## reach the metrics (and webhooks: webhook: enabled).
networkPolicy:
  enabled: {}
",
            features.network_policy_by_default
        ),
    });
    blocks
}

/// `values.yaml` as first written.
pub fn initial(blocks: &[Block]) -> String {
    let mut text = HEADER.to_string();
    for block in blocks {
        text.push('\n');
        text.push_str(&block.text);
    }
    text
}

/// The user's `values.yaml` with the blocks it lacks appended (unchanged if it has them all).
pub fn complete(path: &str, existing: &str, blocks: &[Block]) -> Result<String> {
    let parsed: Value = if existing.trim().is_empty() {
        Value::Mapping(Mapping::new())
    } else {
        serde_yaml::from_str(existing).with_context(|| {
            format!("{path} is not YAML; fix it, then run make helm-chart again")
        })?
    };
    let has = |key: &str| parsed.as_mapping().is_some_and(|m| m.contains_key(key));
    let mut text = existing.to_string();
    for block in blocks.iter().filter(|b| !has(b.key)) {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push('\n');
        text.push_str(&block.text);
    }
    Ok(text)
}

/// `manager.<key>` as the manager's block writes it: on one line when empty, else below it.
fn indented(key: &str, value: &Value) -> String {
    let yaml = serde_yaml::to_string(value).expect("a YAML value serializes");
    let empty = matches!(value, Value::Mapping(map) if map.is_empty())
        || matches!(value, Value::Sequence(s) if s.is_empty());
    if empty {
        return format!("  {key}: {}", yaml.trim());
    }
    let body: Vec<String> = yaml.lines().map(|l| format!("    {l}")).collect();
    format!("  {key}:\n{}", body.join("\n"))
}

/// The lines of `manager.replicas` in the manager's block.
pub fn replicas_lines(replicas: &Value) -> String {
    let replicas = serde_yaml::to_string(replicas).unwrap_or_else(|_| "1".into());
    format!("  replicas: {}\n", replicas.trim())
}

/// The lines of `manager.args` in the manager's block.
pub fn args_lines(args: &[String]) -> String {
    let args = Value::Sequence(args.iter().map(|a| Value::from(a.as_str())).collect());
    format!("{}\n", indented("args", &args))
}

fn manager_block(m: &Defaults) -> String {
    format!(
        "\
## The manager's Deployment
manager:
{replicas}  image:
    repository: {repository}
    # Defaults to the chart's appVersion when empty.
    tag: {tag}
    # Empty: the cluster's default (IfNotPresent, or Always for :latest).
    pullPolicy: {pull_policy}
  ## Its arguments, after those of the metrics and webhook servers (set by metrics and webhook).
{args}  ## Environment variables added to config/'s (a name given here wins).
  env: []
{resources}
{pod_security_context}
{security_context}
{node_selector}
{tolerations}
{affinity}
",
        replicas = replicas_lines(&m.replicas),
        repository = quote(&m.repository),
        tag = quote(&m.tag),
        pull_policy = quote(&m.pull_policy),
        args = args_lines(&m.args),
        resources = indented("resources", &m.resources),
        pod_security_context = indented("podSecurityContext", &m.pod_security_context),
        security_context = indented("securityContext", &m.security_context),
        node_selector = indented("nodeSelector", &m.node_selector),
        tolerations = indented("tolerations", &m.tolerations),
        affinity = indented("affinity", &m.affinity),
    )
}

/// A string as a YAML scalar.
fn quote(s: &str) -> String {
    serde_yaml::to_string(&Value::from(s))
        .expect("a string serializes")
        .trim()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_users_file_only_grows() {
        let mut features = Features::default();
        let manager = Defaults {
            replicas: Value::from(1),
            repository: "controller".into(),
            tag: "latest".into(),
            ..Defaults::default()
        };
        let first = initial(&blocks(&features, &manager));
        let parsed: Value = serde_yaml::from_str(&first).unwrap();
        assert_eq!(parsed["manager"]["image"]["repository"], "controller");
        assert_eq!(parsed["manager"]["env"], Value::Sequence(vec![]));
        assert!(parsed.get("webhook").is_none());
        let edited = first.replace("replicas: 1", "replicas: 3 # mine");
        assert_eq!(
            complete("v", &edited, &blocks(&features, &manager)).unwrap(),
            edited
        );
        features.webhooks = true;
        let grown = complete("v", &edited, &blocks(&features, &manager)).unwrap();
        assert!(grown.starts_with(&edited));
        let parsed: Value = serde_yaml::from_str(&grown).unwrap();
        assert_eq!(parsed["webhook"]["enabled"], true);
        assert_eq!(parsed["manager"]["replicas"], 3);
        assert!(complete("v", "a: [", &[]).is_err());
    }
}
