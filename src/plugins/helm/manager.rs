//! The manager's Deployment as a template: what users change per install comes from
//! `values.yaml` (`manager.replicas`, `manager.image`, `manager.args`, `manager.env`,
//! `manager.resources`, the security contexts, scheduling), and the parts of the metrics and
//! webhook servers follow `metrics.enabled` and `webhook.enabled`. The rest is config/'s, and
//! comes again from it on every `make helm-chart` (a deploy-image kind's `<KIND>_IMAGE` variable,
//! a user's patch).

use anyhow::{Result, bail};
use serde::Serialize;
use serde_yaml::{Mapping, Value};

use super::switches::{Features, METRICS, WEBHOOK};
use super::yaml::{self, Doc};

/// The manager's settings as config/ has them: where `values.yaml` starts.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Defaults {
    pub replicas: Value,
    pub repository: String,
    pub tag: String,
    pub pull_policy: String,
    /// The arguments other than those of the metrics and webhook servers.
    pub args: Vec<String>,
    pub resources: Value,
    pub security_context: Value,
    pub pod_security_context: Value,
    pub node_selector: Value,
    pub tolerations: Value,
    pub affinity: Value,
}

/// Whether `object` is the manager's Deployment (`control-plane: controller-manager`).
pub fn is_manager(object: &Value) -> bool {
    object
        .get("metadata")
        .and_then(|m| m.get("labels"))
        .and_then(|l| yaml::str_at(l, "control-plane"))
        == Some("controller-manager")
        || object
            .get("metadata")
            .and_then(|m| yaml::str_at(m, "name"))
            .is_some_and(|n| n.ends_with("controller-manager"))
}

/// What a container's item (an argument, port, mount or volume) belongs to, by its name.
fn switch(name: &str, features: &Features) -> Option<&'static str> {
    if name.contains("webhook") && features.webhooks {
        Some(WEBHOOK)
    } else if name.contains("metrics") {
        Some(METRICS)
    } else {
        None
    }
}

/// Turns the Deployment `value` into the manager's template; returns its settings for
/// `values.yaml`.
pub fn template(doc: &mut Doc, value: &mut Value, features: &Features) -> Result<Defaults> {
    let features = features.clone();
    let mut defaults = Defaults::default();
    let Some(spec) = value.get_mut("spec").and_then(Value::as_mapping_mut) else {
        bail!("the manager Deployment has no spec");
    };
    defaults.replicas = yaml::take(spec, "replicas").unwrap_or(Value::from(1));
    let (k, v) = doc.block(|indent| {
        vec![format!(
            "{indent}replicas: {{{{ .Values.manager.replicas }}}}"
        )]
    });
    yaml::put_at(spec, "replicas", k, v);

    let Some(pod) = spec
        .get_mut("template")
        .and_then(|t| t.get_mut("spec"))
        .and_then(Value::as_mapping_mut)
    else {
        bail!("the manager Deployment has no pod template");
    };
    defaults.pod_security_context =
        yaml::take(pod, "securityContext").unwrap_or(Value::Mapping(Mapping::new()));
    defaults.node_selector =
        yaml::take(pod, "nodeSelector").unwrap_or(Value::Mapping(Mapping::new()));
    defaults.tolerations = yaml::take(pod, "tolerations").unwrap_or(Value::Sequence(Vec::new()));
    defaults.affinity = yaml::take(pod, "affinity").unwrap_or(Value::Mapping(Mapping::new()));
    let (k, v) = doc.block(|indent| to_yaml("securityContext", "podSecurityContext", indent));
    yaml::put_at(pod, "securityContext", k, v);
    for (key, value) in [
        ("nodeSelector", "nodeSelector"),
        ("tolerations", "tolerations"),
        ("affinity", "affinity"),
    ] {
        let (k, v) = doc.block(move |indent| {
            vec![
                format!("{indent}{{{{- with .Values.manager.{value} }}}}"),
                format!("{indent}{key}:"),
                format!(
                    "{indent}  {{{{- toYaml . | nindent {} }}}}",
                    indent.len() + 2
                ),
                format!("{indent}{{{{- end }}}}"),
            ]
        });
        yaml::put_at(pod, key, k, v);
    }
    if let Some(volumes) = yaml::take(pod, "volumes") {
        let volumes = volumes.as_sequence().cloned().unwrap_or_default();
        let f = features.clone();
        let (k, v) = doc.block(move |indent| list("volumes", &volumes, indent, &f));
        yaml::put_at(pod, "volumes", k, v);
    }

    let Some(containers) = pod.get_mut("containers").and_then(Value::as_sequence_mut) else {
        bail!("the manager Deployment has no containers");
    };
    let index = containers
        .iter()
        .position(|c| yaml::str_at(c, "name") == Some("manager"))
        .unwrap_or(0);
    let Some(container) = containers.get_mut(index).and_then(Value::as_mapping_mut) else {
        bail!("the manager Deployment has no containers");
    };

    let image = container
        .get("image")
        .and_then(Value::as_str)
        .unwrap_or("controller:latest")
        .to_string();
    (defaults.repository, defaults.tag) = split_image(&image);
    yaml::take(container, "image");
    defaults.pull_policy = container
        .shift_remove("imagePullPolicy")
        .and_then(|p| p.as_str().map(str::to_string))
        .unwrap_or_default();
    let (k, v) = doc.block(|indent| {
        vec![
            format!(
                "{indent}image: \"{{{{ .Values.manager.image.repository }}}}{{{{ if not (contains \"@\" .Values.manager.image.repository) }}}}:{{{{ .Values.manager.image.tag | default .Chart.AppVersion }}}}{{{{ end }}}}\""
            ),
            format!("{indent}{{{{- with .Values.manager.image.pullPolicy }}}}"),
            format!("{indent}imagePullPolicy: {{{{ . }}}}"),
            format!("{indent}{{{{- end }}}}"),
        ]
    });
    yaml::put_at(container, "image", k, v);

    // Arguments: the metrics address follows metrics.enabled, the webhook server's flags
    // webhook.enabled, the rest are values.yaml's manager.args.
    let args: Vec<String> = yaml::take(container, "args")
        .and_then(|a| a.as_sequence().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|a| a.as_str().map(str::to_string))
        .collect();
    let mut servers = Vec::new();
    for arg in args {
        if arg.starts_with("--metrics-bind-address") {
            servers.push(Arg::MetricsAddress(arg));
        } else if let Some(on) = (arg.starts_with("--webhook-") || arg.starts_with("--metrics-"))
            .then(|| switch(&arg, &features))
            .flatten()
        {
            servers.push(Arg::When(on, arg));
        } else {
            defaults.args.push(arg);
        }
    }
    let (k, v) = doc.block(move |indent| {
        let mut out = vec![format!("{indent}args:")];
        for arg in &servers {
            match arg {
                Arg::MetricsAddress(arg) => {
                    out.push(format!("{indent}{{{{- if {METRICS} }}}}"));
                    out.extend(yaml::item(&Value::from(arg.as_str()), indent));
                    out.push(format!("{indent}{{{{- else }}}}"));
                    out.push(format!("{indent}- --metrics-bind-address=0"));
                    out.push(format!("{indent}{{{{- end }}}}"));
                }
                Arg::When(on, arg) => out.extend(yaml::when(
                    Some(on),
                    indent,
                    yaml::item(&Value::from(arg.as_str()), indent),
                )),
            }
        }
        out.push(format!("{indent}{{{{- range .Values.manager.args }}}}"));
        out.push(format!("{indent}- {{{{ . | quote }}}}"));
        out.push(format!("{indent}{{{{- end }}}}"));
        out
    });
    yaml::put_at(container, "args", k, v);

    // Environment: config/'s variables (a deploy-image kind's image, a patch's), then, with
    // webhooks off, ENABLE_WEBHOOKS=false (the manager would look for its certificate), then
    // values.yaml's manager.env (a variable named again there wins: the last one counts).
    let env = yaml::take(container, "env")
        .and_then(|e| e.as_sequence().cloned())
        .unwrap_or_default();
    let webhooks = features.webhooks;
    let (k, v) = doc.block(move |indent| {
        let mut out = vec![format!("{indent}env:")];
        for var in &env {
            out.extend(yaml::item(var, indent));
        }
        if webhooks {
            out.push(format!("{indent}{{{{- if not {WEBHOOK} }}}}"));
            out.push(format!("{indent}- name: ENABLE_WEBHOOKS"));
            out.push(format!("{indent}  value: \"false\""));
            out.push(format!("{indent}{{{{- end }}}}"));
        }
        out.push(format!("{indent}{{{{- with .Values.manager.env }}}}"));
        out.push(format!(
            "{indent}{{{{- toYaml . | nindent {} }}}}",
            indent.len()
        ));
        out.push(format!("{indent}{{{{- end }}}}"));
        out
    });
    yaml::put_at(container, "env", k, v);

    for key in ["ports", "volumeMounts"] {
        if let Some(items) = yaml::take(container, key) {
            let items = items.as_sequence().cloned().unwrap_or_default();
            let f = features.clone();
            let (k, v) = doc.block(move |indent| list(key, &items, indent, &f));
            yaml::put_at(container, key, k, v);
        }
    }
    defaults.resources =
        yaml::take(container, "resources").unwrap_or(Value::Mapping(Mapping::new()));
    let (k, v) = doc.block(|indent| to_yaml("resources", "resources", indent));
    yaml::put_at(container, "resources", k, v);
    defaults.security_context =
        yaml::take(container, "securityContext").unwrap_or(Value::Mapping(Mapping::new()));
    let (k, v) = doc.block(|indent| to_yaml("securityContext", "securityContext", indent));
    yaml::put_at(container, "securityContext", k, v);
    Ok(defaults)
}

enum Arg {
    MetricsAddress(String),
    When(&'static str, String),
}

/// `key:` and `.Values.manager.<value>` under it.
fn to_yaml(key: &str, value: &str, indent: &str) -> Vec<String> {
    vec![
        format!("{indent}{key}:"),
        format!(
            "{indent}  {{{{- toYaml .Values.manager.{value} | nindent {} }}}}",
            indent.len() + 2
        ),
    ]
}

/// A list of ports, mounts or volumes, each of the metrics or webhook server under its switch.
fn list(key: &str, items: &[Value], indent: &str, features: &Features) -> Vec<String> {
    let mut out = vec![format!("{indent}{key}:")];
    for item in items {
        let name = yaml::str_at(item, "name").unwrap_or_default();
        out.extend(yaml::when(
            switch(name, features),
            indent,
            yaml::item(item, indent),
        ));
    }
    out
}

/// `repository:tag` (a digest stays in the repository; no tag: `latest`).
fn split_image(image: &str) -> (String, String) {
    if image.contains('@') {
        return (image.to_string(), String::new());
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    match last.rsplit_once(':') {
        Some((_, tag)) => (
            image[..image.len() - tag.len() - 1].to_string(),
            tag.to_string(),
        ),
        None => (image.to_string(), "latest".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images() {
        assert_eq!(
            split_image("controller:latest"),
            ("controller".into(), "latest".into())
        );
        assert_eq!(
            split_image("localhost:5000/x/op:v1"),
            ("localhost:5000/x/op".into(), "v1".into())
        );
        assert_eq!(split_image("op"), ("op".into(), "latest".into()));
    }
}
