//! The servers' ports and scheme outside the manager's Deployment, as kubebuilder's chart has
//! them: `metrics.port` in the metrics Service (port and targetPort) and the metrics
//! NetworkPolicy, `metrics.secure` in the Service's port name and the ServiceMonitor's scheme,
//! token and TLS settings, `webhook.port` in the webhook Service's targetPort and the webhook
//! NetworkPolicy. A Service's port is templated where it is config/'s number for that server
//! (any other stays as config/ has it); a NetworkPolicy's ports are the server's.

use serde_yaml::{Mapping, Value};

use super::switches::{
    CERT_MANAGER, Features, METRICS_PORT, METRICS_SCHEME, METRICS_SECURE, WEBHOOK_PORT,
};
use super::yaml::{self, Doc};

/// Which server an object serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Server {
    Metrics,
    Webhook,
}

/// The ports of a Service (`spec.ports`) or NetworkPolicy (`spec.ingress[].ports`) of `server`.
pub fn template(doc: &mut Doc, value: &mut Value, server: Server, features: &Features) {
    let (number, text) = match server {
        Server::Metrics => (features.ports.metrics, METRICS_PORT),
        Server::Webhook => (features.ports.webhook, WEBHOOK_PORT),
    };
    let is_number = |v: Option<&Value>| v.and_then(Value::as_u64) == Some(u64::from(number));
    let Some(spec) = value.get_mut("spec").and_then(Value::as_mapping_mut) else {
        return;
    };
    let service = spec.contains_key("selector");
    let mut lists: Vec<&mut Value> = Vec::new();
    for (key, entry) in spec.iter_mut() {
        match key.as_str() {
            Some("ports") => lists.push(entry),
            Some("ingress") => {
                let rules = entry.as_sequence_mut().into_iter().flatten();
                lists.extend(rules.filter_map(|r| r.get_mut("ports")));
            }
            _ => {}
        }
    }
    for port in lists
        .into_iter()
        .filter_map(Value::as_sequence_mut)
        .flatten()
    {
        let Some(port) = port.as_mapping_mut() else {
            continue;
        };
        // A Service's `port` is the webhook client's (443); only the metrics Service's follows.
        let keys: &[&str] = match (server, service) {
            (Server::Webhook, true) => &["targetPort"],
            _ => &["port", "targetPort"],
        };
        for key in keys {
            // A NetworkPolicy's port is the pod's, the server's whatever config/ says (its
            // webhook policy has the Service's 443): kubebuilder's chart sets it from the value.
            let numeric = port.get(*key).is_some_and(Value::is_u64);
            if is_number(port.get(*key)) || (!service && numeric) {
                port.insert((*key).into(), Value::from(doc.inline(text)));
            }
        }
        if server == Server::Metrics
            && service
            && yaml::str_at(&Value::Mapping(port.clone()), "name") == Some("https")
        {
            port.insert("name".into(), Value::from(doc.inline(METRICS_SCHEME)));
        }
    }
}

/// The ServiceMonitor: HTTPS with the ServiceAccount's token and TLS while `metrics.secure`
/// (with cert-manager, the metrics certificate's CA while `certManager.enabled`, else no check
/// of the server's certificate), plain HTTP without.
pub fn service_monitor(doc: &mut Doc, value: &mut Value, features: &Features) {
    let Some(endpoints) = value
        .get_mut("spec")
        .and_then(|s| s.get_mut("endpoints"))
        .and_then(Value::as_sequence_mut)
    else {
        return;
    };
    for endpoint in endpoints.iter_mut().filter_map(Value::as_mapping_mut) {
        for key in ["port", "scheme"] {
            if endpoint.get(key).and_then(Value::as_str) == Some("https") {
                endpoint.insert(key.into(), Value::from(doc.inline(METRICS_SCHEME)));
            }
        }
        for key in ["bearerTokenFile", "authorization"] {
            if let Some(token) = yaml::take(endpoint, key) {
                let (k, v) = doc.block(move |indent| {
                    yaml::when(
                        Some(METRICS_SECURE),
                        indent,
                        entry_lines(key, &token, indent),
                    )
                });
                yaml::put_at(endpoint, key, k, v);
            }
        }
        if let Some(tls) = yaml::take(endpoint, "tlsConfig") {
            let cert_manager = features.cert_manager;
            let (k, v) = doc.block(move |indent| tls_lines(&tls, cert_manager, indent));
            yaml::put_at(endpoint, "tlsConfig", k, v);
        }
    }
}

/// `key: value` as lines at `indent`.
fn entry_lines(key: &str, value: &Value, indent: &str) -> Vec<String> {
    let mut entry = Mapping::new();
    entry.insert(key.into(), value.clone());
    yaml::lines(&Value::Mapping(entry), indent)
}

/// The ServiceMonitor's `tlsConfig`, only while `metrics.secure`. One that checks the server
/// with cert-manager's certificate (`ca`, `cert`, `keySecret`) does so while
/// `certManager.enabled`; without cert-manager the manager's certificate is its own, and the
/// ServiceMonitor skips the check, as kubebuilder's.
fn tls_lines(tls: &Value, cert_manager: bool, indent: &str) -> Vec<String> {
    let certs = ["ca", "cert", "keySecret"];
    let checks = tls
        .as_mapping()
        .is_some_and(|m| certs.iter().any(|k| m.contains_key(*k)));
    let mut out = vec![format!("{indent}{{{{- if {METRICS_SECURE} }}}}")];
    if checks && cert_manager {
        let mut without = tls.as_mapping().cloned().unwrap_or_default();
        for key in certs.iter().chain(&["insecureSkipVerify"]) {
            without.shift_remove(*key);
        }
        without.insert("insecureSkipVerify".into(), Value::from(true));
        out.push(format!("{indent}{{{{- if {CERT_MANAGER} }}}}"));
        out.extend(entry_lines("tlsConfig", tls, indent));
        out.push(format!("{indent}{{{{- else }}}}"));
        out.extend(entry_lines("tlsConfig", &Value::Mapping(without), indent));
        out.push(format!("{indent}{{{{- end }}}}"));
    } else {
        out.extend(entry_lines("tlsConfig", tls, indent));
    }
    out.push(format!("{indent}{{{{- end }}}}"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn features() -> Features {
        Features {
            cert_manager: true,
            ..Features::default()
        }
    }

    #[test]
    fn service_ports_follow_their_values() {
        let mut doc = Doc::default();
        let mut metrics: Value = serde_yaml::from_str(
            "spec:\n  ports:\n  - name: https\n    port: 8443\n    targetPort: 8443\n  selector: {a: b}\n",
        )
        .unwrap();
        template(&mut doc, &mut metrics, Server::Metrics, &features());
        let text = doc.text(&metrics);
        assert!(
            text.contains("- name: {{ if .Values.metrics.secure }}https{{ else }}http{{ end }}"),
            "{text}"
        );
        assert!(text.contains("port: {{ .Values.metrics.port }}"), "{text}");
        assert!(
            text.contains("targetPort: {{ .Values.metrics.port }}"),
            "{text}"
        );

        let mut doc = Doc::default();
        let mut webhook: Value = serde_yaml::from_str(
            "spec:\n  ports:\n  - port: 443\n    targetPort: 9443\n  selector: {a: b}\n",
        )
        .unwrap();
        template(&mut doc, &mut webhook, Server::Webhook, &features());
        let text = doc.text(&webhook);
        assert!(text.contains("port: 443"), "{text}");
        assert!(
            text.contains("targetPort: {{ .Values.webhook.port }}"),
            "{text}"
        );

        let mut doc = Doc::default();
        let mut policy: Value = serde_yaml::from_str(
            "spec:\n  ingress:\n  - ports:\n    - port: 443\n      protocol: TCP\n",
        )
        .unwrap();
        template(&mut doc, &mut policy, Server::Webhook, &features());
        assert!(
            doc.text(&policy)
                .contains("- port: {{ .Values.webhook.port }}")
        );
    }

    #[test]
    fn the_service_monitor_follows_metrics_secure() {
        let mut doc = Doc::default();
        let mut monitor: Value = serde_yaml::from_str(
            "spec:\n  endpoints:\n  - bearerTokenFile: /token\n    path: /metrics\n    port: https\n    scheme: https\n    tlsConfig:\n      ca:\n        secret: {name: metrics-server-cert, key: ca.crt}\n      insecureSkipVerify: false\n      serverName: svc\n",
        )
        .unwrap();
        service_monitor(&mut doc, &mut monitor, &features());
        let text = doc.text(&monitor);
        assert!(text.contains("  - {{- if .Values.metrics.secure }}\n    bearerTokenFile: /token\n    {{- end }}\n"), "{text}");
        assert!(
            text.contains("scheme: {{ if .Values.metrics.secure }}https{{ else }}http{{ end }}"),
            "{text}"
        );
        assert!(
            text.contains("{{- if .Values.certManager.enabled }}\n    tlsConfig:\n      ca:"),
            "{text}"
        );
        assert!(text.contains("{{- else }}\n    tlsConfig:\n      serverName: svc\n      insecureSkipVerify: true\n"), "{text}");
    }
}
