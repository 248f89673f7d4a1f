//! The manager container: its image, its arguments (the servers' from `metrics.*`, `webhook.*`
//! and `manager.healthProbe.port`, then `manager.args`), its environment (config/'s, then
//! `manager.env`, then `manager.envOverrides`, a name given later replacing an earlier one), and
//! the servers' ports in its ports and probes.

use anyhow::Result;
use serde_yaml::{Mapping, Value};

use super::switches;
use crate::plugins::helm::switches::{
    Features, HEALTH_PORT, METRICS, METRICS_PORT, METRICS_SECURE, WEBHOOK, WEBHOOK_PORT, all,
};
use crate::plugins::helm::yaml::{self, Doc};

/// Makes the manager container `container` a template.
pub fn template(doc: &mut Doc, container: &mut Mapping, features: &Features) -> Result<()> {
    yaml::take(container, "image");
    container.shift_remove("imagePullPolicy");
    let (k, v) = doc.block(|indent| {
        vec![
            format!(
                "{indent}image: \"{{{{ .Values.manager.image.repository | default \"controller\" }}}}{{{{- if not (contains \"@\" (.Values.manager.image.repository | default \"controller\")) }}}}:{{{{ .Values.manager.image.tag | default .Chart.AppVersion }}}}{{{{- end }}}}\""
            ),
            format!("{indent}{{{{- with .Values.manager.image.pullPolicy }}}}"),
            format!("{indent}imagePullPolicy: {{{{ . }}}}"),
            format!("{indent}{{{{- end }}}}"),
        ]
    });
    yaml::put_at(container, "image", k, v);

    let args: Vec<String> = yaml::take(container, "args")
        .and_then(|a| a.as_sequence().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|a| a.as_str().map(str::to_string))
        .collect();
    let lines = server_args(&args, features);
    let (k, v) = doc.block(move |indent| {
        let mut out = vec![format!("{indent}args:")];
        out.extend(lines.iter().map(|l| format!("{indent}{l}")));
        out.extend(users_args(indent));
        out
    });
    yaml::put_at(container, "args", k, v);

    let env = yaml::take(container, "env")
        .and_then(|e| e.as_sequence().cloned())
        .unwrap_or_default();
    let webhooks = features.webhooks;
    let (k, v) = doc.block(move |indent| env_lines(&env, webhooks, indent));
    yaml::put_at(container, "env", k, v);

    ports(doc, container, features);
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(get) = container
            .get_mut(probe)
            .and_then(|p| p.get_mut("httpGet"))
            .and_then(Value::as_mapping_mut)
            && get.get("port").and_then(Value::as_u64) == Some(u64::from(features.ports.health))
        {
            get.insert("port".into(), Value::from(doc.inline(HEALTH_PORT)));
        }
    }
    Ok(())
}

/// The servers' arguments, in config/'s order, each under its switch and with its port from
/// values.yaml (`--webhook-port` with webhooks and `--health-probe-bind-address` added where
/// config/ has none, as kubebuilder's chart has them).
fn server_args(args: &[String], features: &Features) -> Vec<String> {
    let mut out = Vec::new();
    let mut health = false;
    let mut webhook_port = false;
    for arg in args {
        if let Some(address) = arg.strip_prefix("--metrics-bind-address=") {
            let host = address.rsplit_once(':').map_or("", |(h, _)| h);
            out.push(format!("{{{{- if {METRICS} }}}}"));
            out.push(format!("- --metrics-bind-address={host}:{METRICS_PORT}"));
            out.push(format!("{{{{- if not {METRICS_SECURE} }}}}"));
            out.push("- --metrics-secure=false".into());
            out.push("{{- end }}".into());
            out.push("{{- else }}".into());
            out.push("- --metrics-bind-address=0".into());
            out.push("{{- end }}".into());
        } else if let Some(address) = arg.strip_prefix("--health-probe-bind-address=") {
            let host = address.rsplit_once(':').map_or("", |(h, _)| h);
            out.push(format!(
                "- --health-probe-bind-address={host}:{HEALTH_PORT}"
            ));
            health = true;
        } else if arg.starts_with("--webhook-port") && features.webhooks {
            out.push(format!("{{{{- if {WEBHOOK} }}}}"));
            out.push(format!("- --webhook-port={WEBHOOK_PORT}"));
            out.push("{{- end }}".into());
            webhook_port = true;
        } else if super::is_server_arg(arg, features) && !arg.starts_with("--metrics-secure") {
            let on = switches(arg, features);
            let item = yaml::item(&Value::from(arg.as_str()), "");
            out.extend(yaml::when(all(&on).as_deref(), "", item));
        }
    }
    if !health {
        out.push(format!("- --health-probe-bind-address=:{HEALTH_PORT}"));
    }
    if features.webhooks && !webhook_port {
        out.push(format!("{{{{- if {WEBHOOK} }}}}"));
        out.push(format!("- --webhook-port={WEBHOOK_PORT}"));
        out.push("{{- end }}".into());
    }
    out
}

/// `manager.args`, each through `tpl`; one that sets a server's flag fails the render with what
/// to set instead (the chart passes those flags: a second one would stop the manager).
fn users_args(indent: &str) -> Vec<String> {
    [
        "{{- range .Values.manager.args }}",
        "{{- if regexMatch \"^--(metrics-bind-address|metrics-secure|health-probe-bind-address|webhook-port)(=|$)\" (toString .) }}",
        "{{- fail (printf \"manager.args: %s is set by the chart from metrics.port, metrics.secure, manager.healthProbe.port or webhook.port; set those instead\" .) }}",
        "{{- end }}",
        "- {{ tpl (toString .) $ | quote }}",
        "{{- end }}",
    ]
    .iter()
    .map(|l| format!("{indent}{l}"))
    .collect()
}

/// The environment: config/'s variables (a deploy-image kind's image, a patch's), then, with
/// webhooks off, `ENABLE_WEBHOOKS=false` (the manager would look for its certificate), then
/// `manager.env`, then `manager.envOverrides` (`--set manager.envOverrides.VAR=value`). A name
/// given again later replaces the earlier variable, which is left out.
fn env_lines(env: &[Value], webhooks: bool, indent: &str) -> Vec<String> {
    let mut out: Vec<String> = [
        "env:",
        "{{- $overrides := .Values.manager.envOverrides | default dict }}",
        "{{- $given := keys $overrides }}",
        "{{- range .Values.manager.env }}",
        "{{- $given = append $given .name }}",
        "{{- end }}",
    ]
    .iter()
    .map(|l| format!("{indent}{l}"))
    .collect();
    let mut variable = |name: &str, condition: String, lines: Vec<String>| {
        let unless = format!("not (has {name:?} $given)");
        let condition = if condition.is_empty() {
            unless
        } else {
            format!("and {condition} ({unless})")
        };
        out.extend(yaml::when(Some(&condition), indent, lines));
    };
    for var in env {
        let name = yaml::str_at(var, "name").unwrap_or_default();
        variable(name, String::new(), yaml::item(var, indent));
    }
    if webhooks {
        let lines = vec![
            format!("{indent}- name: ENABLE_WEBHOOKS"),
            format!("{indent}  value: \"false\""),
        ];
        variable("ENABLE_WEBHOOKS", format!("(not {WEBHOOK})"), lines);
    }
    out.extend(
        [
            "{{- range .Values.manager.env }}",
            "{{- if not (hasKey $overrides .name) }}",
            "{{- toYaml (list .) | nindent INDENT }}",
            "{{- end }}",
            "{{- end }}",
            "{{- range $name, $value := $overrides }}",
            "- name: {{ $name }}",
            "  value: {{ $value | quote }}",
            "{{- end }}",
        ]
        .iter()
        .map(|l| format!("{indent}{}", l.replace("INDENT", &indent.len().to_string()))),
    );
    out
}

/// The container's ports: the health probe's, the webhook server's and the metrics server's
/// numbers from their values, each server's under its switch.
fn ports(doc: &mut Doc, container: &mut Mapping, features: &Features) {
    let Some(ports) = yaml::take(container, "ports") else {
        return;
    };
    let mut items = ports.as_sequence().cloned().unwrap_or_default();
    for port in &mut items {
        let name = yaml::str_at(port, "name").unwrap_or_default().to_string();
        let number = port.get("containerPort").and_then(Value::as_u64);
        let value = if name.contains("webhook") && features.webhooks {
            Some(WEBHOOK_PORT)
        } else if name.contains("metrics") && number == Some(u64::from(features.ports.metrics)) {
            Some(METRICS_PORT)
        } else if number == Some(u64::from(features.ports.health)) {
            Some(HEALTH_PORT)
        } else {
            None
        };
        if let (Some(value), Some(map)) = (value, port.as_mapping_mut()) {
            map.insert("containerPort".into(), Value::from(doc.inline(value)));
        }
    }
    let features = features.clone();
    let (k, v) = doc.block(move |indent| {
        let mut out = vec![format!("{indent}ports:")];
        for item in &items {
            let name = yaml::str_at(item, "name").unwrap_or_default();
            let on = switches(name, &features);
            out.extend(yaml::when(
                all(&on).as_deref(),
                indent,
                yaml::item(item, indent),
            ));
        }
        out
    });
    yaml::put_at(container, "ports", k, v);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_servers_args_follow_their_values() {
        let features = Features {
            webhooks: true,
            ..Features::default()
        };
        let args: Vec<String> = [
            "--metrics-bind-address=:8443",
            "--leader-elect",
            "--health-probe-bind-address=:8081",
            "--webhook-cert-path=/tmp/k8s-webhook-server/serving-certs",
        ]
        .iter()
        .map(|a| a.to_string())
        .collect();
        let lines = server_args(&args, &features).join("\n");
        assert_eq!(
            lines,
            "{{- if .Values.metrics.enabled }}
- --metrics-bind-address=:{{ .Values.metrics.port }}
{{- if not .Values.metrics.secure }}
- --metrics-secure=false
{{- end }}
{{- else }}
- --metrics-bind-address=0
{{- end }}
- --health-probe-bind-address=:{{ .Values.manager.healthProbe.port }}
{{- if .Values.webhook.enabled }}
- --webhook-cert-path=/tmp/k8s-webhook-server/serving-certs
{{- end }}
{{- if .Values.webhook.enabled }}
- --webhook-port={{ .Values.webhook.port }}
{{- end }}"
        );
    }
}
