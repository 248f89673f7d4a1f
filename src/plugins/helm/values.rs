//! `<chart>/values.yaml`: kubebuilder 4's values, with its names, comments and defaults
//! (`nameOverride`, `fullnameOverride`, `manager.*`, `rbac`, `serviceAccount`, `crd`, `metrics`,
//! `certManager`, `webhook`, `prometheus`, `networkPolicy`), the defaults taken from config/ so
//! that `helm template` with no values installs what `make deploy` does.
//!
//! The file is the user's once written: a later run never changes a line of it. It only appends
//! the blocks of what the project has gained since (`webhook` and `certManager` after the first
//! `create webhook`), and puts back into a block the values the templates cannot do without
//! (the servers' ports, `metrics.secure`, `serviceAccount.enabled`) if the file lacks them.

use anyhow::{Context as _, Result, bail};
use serde_yaml::{Mapping, Value};

use super::manager::Defaults;
use super::manager::fields::{FIELDS, Field, Form};
use super::switches::Features;

/// One top-level block: its key (None: comments only) and its entries.
pub struct Block {
    pub key: Option<&'static str>,
    /// Its comment and `key:` line.
    head: String,
    entries: Vec<Entry>,
}

/// One entry of a block: its key, its text (comment included, at the block's indentation), and
/// whether the templates need it.
struct Entry {
    key: Option<&'static str>,
    text: String,
    required: bool,
}

impl Entry {
    fn new(key: &'static str, text: impl Into<String>) -> Self {
        Self {
            key: Some(key),
            text: text.into(),
            required: false,
        }
    }

    fn required(key: &'static str, text: impl Into<String>) -> Self {
        Self {
            required: true,
            ..Self::new(key, text)
        }
    }

    /// Comments or commented-out examples only.
    fn comment(text: impl Into<String>) -> Self {
        Self {
            key: None,
            text: text.into(),
            required: false,
        }
    }
}

impl Block {
    fn text(&self) -> String {
        let mut text = self.head.clone();
        for entry in &self.entries {
            text.push_str(&entry.text);
        }
        text
    }
}

/// The file's first lines.
const HEADER: &str = "\
# Values of the chart that operator-rs made from config/ (helm/v2-alpha plugin), with
# kubebuilder's names and defaults. This file is yours: `make helm-chart` never changes what is
# here; it only appends the blocks of what the project gains (webhook and certManager after its
# first webhook). The defaults install what `make deploy` installs.
";

/// The blocks for a project with `features`, its manager as `manager` has it; `metrics`: config/
/// turns the metrics server on.
pub fn blocks(features: &Features, manager: &Defaults, metrics: bool) -> Vec<Block> {
    let mut blocks = vec![
        Block {
            key: None,
            head: "## String to partially override chart.fullname template (will maintain the release name)\n##\n# nameOverride: \"\"\n\n## String to fully override chart.fullname template\n##\n# fullnameOverride: \"\"\n".into(),
            entries: Vec::new(),
        },
        manager_block(manager, features),
        rbac_block(),
    ];
    if features.service_account {
        blocks.push(service_account_block());
    }
    blocks.push(simple(
        "crd",
        "## Custom Resource Definitions\n##\ncrd:\n",
        vec![
            Entry::new(
                "enabled",
                "  # Install CRDs with the chart\n  enabled: true\n",
            ),
            Entry::new(
                "keep",
                "  # Keep CRDs (and every object of their kinds) when uninstalling\n  keep: true\n",
            ),
        ],
    ));
    blocks.push(metrics_block(features, metrics));
    if features.cert_manager {
        blocks.push(simple(
            "certManager",
            "## Cert-manager integration for TLS certificates.\n## Required for webhook certificates and metrics endpoint certificates\n## (off: provide the Secret webhook-server-cert yourself).\n##\ncertManager:\n",
            vec![Entry::new("enabled", "  enabled: true\n")],
        ));
    }
    if features.webhooks {
        blocks.push(webhook_block(features));
    }
    blocks.push(simple(
        "prometheus",
        "## Prometheus ServiceMonitor for metrics scraping.\n## Requires prometheus-operator to be installed in the cluster.\n##\nprometheus:\n",
        vec![Entry::new(
            "enabled",
            format!("  enabled: {}\n", features.prometheus_by_default),
        )],
    ));
    blocks.push(simple(
        "networkPolicy",
        "## Network policies for controlling traffic flow.\n## Enable to restrict ingress to the controller manager.\n##\nnetworkPolicy:\n",
        vec![Entry::new(
            "enabled",
            format!("  enabled: {}\n", features.network_policy_by_default),
        )],
    ));
    blocks
}

fn simple(key: &'static str, head: &str, entries: Vec<Entry>) -> Block {
    Block {
        key: Some(key),
        head: head.to_string(),
        entries,
    }
}

fn metrics_block(features: &Features, metrics: bool) -> Block {
    simple(
        "metrics",
        "## Controller metrics endpoint.\n## Enable to expose /metrics endpoint\n##\nmetrics:\n",
        vec![
            Entry::new("enabled", format!("  enabled: {metrics}\n")),
            Entry::required(
                "port",
                format!(
                    "  # Metrics server port\n  port: {}\n",
                    features.ports.metrics
                ),
            ),
            Entry::required(
                "secure",
                format!(
                    "  # Enable secure metrics: HTTPS with certs/auth (true) or HTTP (false).\n  # Note: Metrics authn/authz needs ClusterRole access.\n  secure: {}\n",
                    features.metrics_secure
                ),
            ),
        ],
    )
}

fn webhook_block(features: &Features) -> Block {
    simple(
        "webhook",
        "## Webhook server configuration (off: ENABLE_WEBHOOKS=false, and CRDs without\n## conversion webhooks)\n##\nwebhook:\n",
        vec![
            Entry::new("enabled", "  enabled: true\n"),
            Entry::required(
                "port",
                format!(
                    "  # Webhook server port\n  port: {}\n",
                    features.ports.webhook
                ),
            ),
        ],
    )
}

fn rbac_block() -> Block {
    simple(
        "rbac",
        "## RBAC configuration\n##\nrbac:\n",
        vec![
            Entry::new(
                "namespaced",
                "  ## RBAC resource scope\n  ## - false (default): ClusterRole/ClusterRoleBinding (all namespaces)\n  ## - true: Role/RoleBinding (release namespace only): the manager's role and the helper\n  ##   roles; the roles of cluster-scoped APIs (metrics authentication, webhook\n  ##   certificates, cluster-scoped kinds) stay cluster roles\n  ##\n  namespaced: false\n",
            ),
            Entry::new(
                "helpers",
                "\n  ## Helper roles for CRD management (admin/editor/viewer)\n  ##\n  helpers:\n    ## Install convenience admin/editor/viewer roles for CRDs (true: as `make deploy`\n    ## does; kubebuilder's chart defaults to false)\n    ##\n    enabled: true\n",
            ),
        ],
    )
}

fn service_account_block() -> Block {
    simple(
        "serviceAccount",
        "## ServiceAccount configuration\n##\nserviceAccount:\n",
        vec![
            Entry::required(
                "enabled",
                "  # Install default ServiceAccount provided\n  enabled: true\n",
            ),
            Entry::comment(
                "\n  ## Existing ServiceAccount name (required when enabled=false)\n  ## Set to \"default\" to use the namespace default ServiceAccount\n  ## Note: When enabled=true, respects nameOverride/fullnameOverride\n  ##\n  # name: \"\"\n\n  ## Custom ServiceAccount annotations\n  ##\n  # annotations: {}\n\n  ## Custom ServiceAccount labels\n  ##\n  # labels: {}\n",
            ),
        ],
    )
}

fn manager_block(m: &Defaults, features: &Features) -> Block {
    let tag = if m.tag.is_empty() {
        "    # tag: \"\"\n".to_string()
    } else {
        format!("    tag: {}\n", quote(&m.tag))
    };
    let mut entries = vec![
        Entry::new(
            "enabled",
            "  ## Set to false to skip manager installation\n  ##\n  enabled: true\n",
        ),
        Entry::new("replicas", format!("\n{}", replicas_lines(&m.replicas))),
        Entry::new(
            "image",
            format!(
                "\n  image:\n    repository: {}\n    ## Image tag (defaults to Chart.appVersion if not set)\n    ##\n{tag}    pullPolicy: {}\n",
                quote(&m.repository),
                quote(&m.pull_policy)
            ),
        ),
        Entry::new(
            "args",
            format!(
                "\n  ## Arguments, after the metrics, webhook and health probe servers' (set those with\n  ## metrics.*, webhook.* and healthProbe); each goes through tpl ({{{{ .Release.Namespace }}}})\n  ##\n{}",
                args_lines(&m.args)
            ),
        ),
        Entry::required(
            "healthProbe",
            format!(
                "\n  ## Health probes.\n  ## The manager serves the liveness (/healthz) and readiness (/readyz) endpoints on this port.\n  ##\n  healthProbe:\n    # Health probe server port\n    port: {}\n",
                features.ports.health
            ),
        ),
        Entry::new(
            "env",
            "\n  ## Environment variables, after config/'s (a deploy-image kind's <KIND>_IMAGE stays in the\n  ## template); a name given here replaces config/'s variable\n  ##\n  env: []\n",
        ),
        Entry::new(
            "envOverrides",
            "\n  ## Env overrides (--set manager.envOverrides.VAR=value)\n  ## Same name in env above: this value takes precedence.\n  ##\n  envOverrides: {}\n",
        ),
    ];
    for (field, value) in FIELDS.iter().zip(&m.fields) {
        entries.push(field_entry(field, value));
    }
    entries.push(Entry::comment(
        "\n  ## Custom Deployment labels\n  ##\n  # labels: {}\n\n  ## Custom Deployment annotations\n  ##\n  # annotations: {}\n\n  ## Custom Pod labels and annotations\n  ##\n  # pod:\n  #   labels: {}\n  #   annotations: {}\n\n  ## Extra volumes and volume mounts of the manager, after config/'s\n  ##\n  # extraVolumes:\n  #   - name: config\n  #     configMap:\n  #       name: my-config\n  # extraVolumeMounts:\n  #   - name: config\n  #     mountPath: /etc/config\n",
    ));
    Block {
        key: Some("manager"),
        head: "## Configure the controller manager deployment\n##\nmanager:\n".into(),
        entries,
    }
}

/// One of [`FIELDS`]: config/'s value, or what kubebuilder writes without one.
fn field_entry(field: &'static Field, value: &Value) -> Entry {
    let comment = format!("\n  ## {}\n  ##\n", field.comment);
    if !Field::is_set(value) {
        let absent: Vec<String> = field.absent.lines().map(|l| format!("  {l}\n")).collect();
        return Entry::comment(format!("{comment}{}", absent.concat()));
    }
    let text = match field.form {
        Form::Block => indented(field.value, value),
        Form::Text | Form::Number => format!("  {}: {}", field.value, scalar(value)),
    };
    Entry::new(field.value, format!("{comment}{text}\n"))
}

/// `values.yaml` as first written.
pub fn initial(blocks: &[Block]) -> String {
    let mut text = HEADER.to_string();
    for block in blocks {
        text.push('\n');
        text.push_str(&block.text());
    }
    text
}

/// The user's `values.yaml` (`path`) with the blocks it lacks appended and the entries the
/// templates need put back at the end of their block (unchanged if it has them all).
pub fn complete(path: &str, existing: &str, blocks: &[Block]) -> Result<String> {
    let parsed: Value = if existing.trim().is_empty() {
        Value::Mapping(Mapping::new())
    } else {
        serde_yaml::from_str(existing).with_context(|| {
            format!("{path} is not YAML; fix it, then run make helm-chart again")
        })?
    };
    let mut text = existing.to_string();
    for block in blocks {
        let Some(key) = block.key else {
            continue;
        };
        let Some(present) = parsed.get(key) else {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push('\n');
            text.push_str(&block.text());
            continue;
        };
        for entry in block.entries.iter().filter(|e| e.required) {
            let entry_key = entry.key.expect("a required entry has a key");
            if present.get(entry_key).is_none() {
                text = insert_into(path, &text, key, entry_key, &entry.text)?;
            }
        }
    }
    Ok(text)
}

/// `text` with `entry` added after the last line of the top-level block `key`.
fn insert_into(path: &str, text: &str, key: &str, entry_key: &str, entry: &str) -> Result<String> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.iter().position(|l| {
        l.strip_prefix(key)
            .and_then(|rest| rest.strip_prefix(':'))
            .is_some_and(|rest| rest.trim().is_empty() || rest.trim_start().starts_with('#'))
    });
    let mut last = None;
    if let Some(start) = start {
        for (i, line) in lines.iter().enumerate().skip(start + 1) {
            let top = !line.starts_with([' ', '\t']) && !line.trim().is_empty();
            if top && !line.starts_with('#') {
                break;
            }
            if !top && !line.trim().is_empty() {
                last = Some(i);
            }
        }
    }
    let Some(last) = last else {
        bail!(
            "{path}: {key}.{entry_key} is missing and the chart needs it; {key} is not a block of \
             one key a line, so add it by hand:\n{entry}"
        );
    };
    let mut out: Vec<String> = lines[..=last].iter().map(|l| l.to_string()).collect();
    out.extend(entry.trim_end_matches('\n').lines().map(str::to_string));
    out.extend(lines[last + 1..].iter().map(|l| l.to_string()));
    let mut joined = out.join("\n");
    if text.ends_with('\n') {
        joined.push('\n');
    }
    Ok(joined)
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
    format!("  replicas: {}\n", scalar(replicas))
}

/// The lines of `manager.args` in the manager's block.
pub fn args_lines(args: &[String]) -> String {
    let args = Value::Sequence(args.iter().map(|a| Value::from(a.as_str())).collect());
    format!("{}\n", indented("args", &args))
}

/// A scalar as YAML writes it.
fn scalar(value: &Value) -> String {
    serde_yaml::to_string(value)
        .expect("a YAML value serializes")
        .trim()
        .to_string()
}

/// A string as a YAML scalar.
fn quote(s: &str) -> String {
    scalar(&Value::from(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manager() -> Defaults {
        Defaults {
            replicas: Value::from(1),
            repository: "controller".into(),
            pull_policy: "IfNotPresent".into(),
            args: vec!["--leader-elect".into()],
            fields: FIELDS.iter().map(|_| Value::Null).collect(),
            ..Defaults::default()
        }
    }

    #[test]
    fn kubebuilders_values_with_config_defaults() {
        let mut m = manager();
        m.fields[FIELDS
            .iter()
            .position(|f| f.value == "terminationGracePeriodSeconds")
            .unwrap()] = Value::from(10);
        let features = Features {
            service_account: true,
            metrics_secure: true,
            ..Features::default()
        };
        let text = initial(&blocks(&features, &m, true));
        let parsed: Value = serde_yaml::from_str(&text).unwrap();
        let manager = &parsed["manager"];
        assert_eq!(manager["enabled"], true);
        assert_eq!(manager["image"]["pullPolicy"], "IfNotPresent");
        assert!(manager["image"].get("tag").is_none(), "{text}");
        assert_eq!(manager["healthProbe"]["port"], 8081);
        assert_eq!(manager["terminationGracePeriodSeconds"], 10);
        assert_eq!(manager["affinity"], Value::Mapping(Mapping::new()));
        assert!(manager.get("strategy").is_none());
        assert!(
            text.contains("  # strategy:\n  #   type: RollingUpdate\n"),
            "{text}"
        );
        assert_eq!(parsed["metrics"]["port"], 8443);
        assert_eq!(parsed["metrics"]["secure"], true);
        assert_eq!(parsed["serviceAccount"]["enabled"], true);
        assert_eq!(parsed["rbac"]["namespaced"], false);
        assert!(parsed.get("webhook").is_none());
        assert!(text.contains("# nameOverride: \"\""), "{text}");
    }

    #[test]
    fn the_users_file_only_grows() {
        let mut features = Features::default();
        let first = initial(&blocks(&features, &manager(), true));
        let edited = first.replace("replicas: 1", "replicas: 3 # mine");
        assert_eq!(
            complete("v", &edited, &blocks(&features, &manager(), true)).unwrap(),
            edited
        );
        features.webhooks = true;
        let grown = complete("v", &edited, &blocks(&features, &manager(), true)).unwrap();
        assert!(grown.starts_with(&edited));
        let parsed: Value = serde_yaml::from_str(&grown).unwrap();
        assert_eq!(parsed["webhook"]["enabled"], true);
        assert_eq!(parsed["webhook"]["port"], 9443);
        assert_eq!(parsed["manager"]["replicas"], 3);
        assert!(complete("v", "a: [", &[]).is_err());
    }

    #[test]
    fn what_the_templates_need_is_put_back_in_its_block() {
        let features = Features {
            metrics_secure: true,
            ..Features::default()
        };
        let old = "# mine\nmanager:\n  replicas: 2\n  image:\n    repository: r\n\n# next\nmetrics:\n  enabled: true # on\n";
        let completed = complete("v", old, &blocks(&features, &manager(), true)).unwrap();
        assert!(
            completed.starts_with(
                "# mine\nmanager:\n  replicas: 2\n  image:\n    repository: r\n\n  ## Health probes."
            ),
            "{completed}"
        );
        assert!(
            completed.contains(
                "metrics:\n  enabled: true # on\n  # Metrics server port\n  port: 8443\n"
            ),
            "{completed}"
        );
        let parsed: Value = serde_yaml::from_str(&completed).unwrap();
        assert_eq!(parsed["manager"]["healthProbe"]["port"], 8081);
        assert_eq!(parsed["metrics"]["secure"], true);
        assert_eq!(parsed["manager"]["replicas"], 2);
        // Once complete, nothing more.
        assert_eq!(
            complete("v", &completed, &blocks(&features, &manager(), true)).unwrap(),
            completed
        );
        let flow = "manager: {replicas: 1}\n";
        let err = complete("v", flow, &blocks(&features, &manager(), true)).unwrap_err();
        assert!(err.to_string().contains("manager.healthProbe"), "{err}");
    }
}
