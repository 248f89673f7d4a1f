//! The chart's templates, one per object that config/ renders, under `templates/<area>/` as
//! kubebuilder lays them out (crd, rbac, manager, metrics, webhook, cert-manager, prometheus,
//! network-policy; `extra` for objects of the user's own kinds of patch). Each object is the
//! rendered one with the release's namespace, Helm's labels and the `values.yaml` switches of its
//! area; the manager's Deployment takes its settings from `values.yaml` (`manager.rs`).

use anyhow::{Result, bail};
use serde_yaml::{Mapping, Value};

use super::manager;
use super::render::Rendered;
use super::switches::{
    CERT_MANAGER, CRD, Features, HELPERS, METRICS, NETWORK_POLICY, PROMETHEUS, WEBHOOK,
};
use super::yaml::{self, Doc};

/// A template of the chart: its path under `templates/` and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pub path: String,
    pub text: String,
}

/// The chart made from the rendered config.
pub struct Chart {
    pub templates: Vec<Template>,
    pub features: Features,
    /// The manager's settings that `values.yaml` starts from.
    pub manager: manager::Defaults,
}

/// The chart of the objects `rendered` holds; `chart` is the chart's name (the project's).
pub fn build(rendered: &Rendered, chart: &str) -> Result<Chart> {
    let mut objects: Vec<&Value> = rendered.default.iter().collect();
    let in_default = |kind: &str| rendered.default.iter().any(|o| kind_of(o) == kind);
    let features = Features {
        webhooks: rendered.default.iter().any(|o| {
            kind_of(o).ends_with("WebhookConfiguration") || conversion_webhook(o).is_some()
        }),
        cert_manager: rendered.default.iter().any(is_cert_manager),
        prometheus_by_default: in_default("ServiceMonitor"),
        network_policy_by_default: in_default("NetworkPolicy"),
    };
    // The opt-in overlays, unless config/default has them already.
    for object in &rendered.optional {
        if !rendered
            .default
            .iter()
            .any(|o| kind_of(o) == kind_of(object) && name_of(o) == name_of(object))
        {
            objects.push(object);
        }
    }

    let mut templates: Vec<Template> = Vec::new();
    let mut manager_defaults = None;
    for object in objects {
        let kind = kind_of(object);
        let name = name_of(object);
        if kind == "Namespace" {
            // The release's namespace (`helm install --namespace … --create-namespace`).
            continue;
        }
        if kind.is_empty() || name.is_empty() {
            bail!("kubectl kustomize config/default rendered an object without kind or name");
        }
        let short = name.strip_prefix(&rendered.name_prefix).unwrap_or(name);
        let (area, conditions) = area(object, short, &features);
        let mut value = object.clone();
        yaml::prepare(&mut value, rendered.namespace.as_deref());
        let mut doc = Doc::default();
        common(&mut doc, &mut value, chart, &features);
        if kind == "CustomResourceDefinition" {
            crd(&mut doc, &mut value);
        }
        if kind == "Deployment" && area == "manager" && manager_defaults.is_none() {
            manager_defaults = Some(manager::template(&mut doc, &mut value, &features)?);
        }
        let file = if kind == "CustomResourceDefinition" {
            name
        } else {
            short
        };
        let mut path = format!("{area}/{file}.yaml");
        if templates.iter().any(|t| t.path == path) {
            path = format!("{area}/{file}-{}.yaml", kind.to_lowercase());
        }
        let body = doc.text(&value);
        let text = match conditions.as_slice() {
            [] => body,
            [one] => format!("{{{{- if {one} }}}}\n{body}{{{{- end }}}}\n"),
            many => format!(
                "{{{{- if and {} }}}}\n{body}{{{{- end }}}}\n",
                many.join(" ")
            ),
        };
        templates.push(Template { path, text });
    }
    let Some(manager) = manager_defaults else {
        bail!(
            "kubectl kustomize config/default rendered no manager Deployment \
             (control-plane: controller-manager); the chart is made around it"
        );
    };
    Ok(Chart {
        templates,
        features,
        manager,
    })
}

pub fn kind_of(object: &Value) -> &str {
    yaml::str_at(object, "kind").unwrap_or_default()
}

pub fn name_of(object: &Value) -> &str {
    object
        .get("metadata")
        .and_then(|m| yaml::str_at(m, "name"))
        .unwrap_or_default()
}

fn is_cert_manager(object: &Value) -> bool {
    yaml::str_at(object, "apiVersion").is_some_and(|a| a.starts_with("cert-manager.io/"))
}

/// A CRD's conversion webhook, if it has one.
fn conversion_webhook(object: &Value) -> Option<&Value> {
    let conversion = object.get("spec")?.get("conversion")?;
    (yaml::str_at(conversion, "strategy") == Some("Webhook")).then_some(conversion)
}

/// The folder of an object's template and the values that switch it on (all must be true).
fn area(object: &Value, short: &str, features: &Features) -> (&'static str, Vec<&'static str>) {
    let kind = kind_of(object);
    let metrics = short.contains("metrics");
    let webhook = short.contains("webhook");
    match kind {
        "CustomResourceDefinition" => ("crd", vec![CRD]),
        "Deployment" if manager::is_manager(object) => ("manager", vec![]),
        // The manager's with --sharding (config/manager/pod_disruption_budget.yaml).
        "PodDisruptionBudget" if manager::is_manager(object) => ("manager", vec![]),
        "ServiceAccount" | "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding" => {
            if ["-admin-role", "-editor-role", "-viewer-role"]
                .iter()
                .any(|s| short.ends_with(s))
            {
                ("rbac", vec![HELPERS])
            } else if metrics {
                ("rbac", vec![METRICS])
            } else if webhook && features.webhooks {
                // The RBAC of the manager's own webhook certificates (config/webhook-certs):
                // without webhooks the manager makes none.
                ("rbac", vec![WEBHOOK])
            } else {
                ("rbac", vec![])
            }
        }
        "Service" if webhook => ("webhook", vec![WEBHOOK]),
        "Service" if metrics => ("metrics", vec![METRICS]),
        "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration" => {
            ("webhook", vec![WEBHOOK])
        }
        _ if is_cert_manager(object) => {
            if kind != "Certificate" {
                ("cert-manager", vec![CERT_MANAGER])
            } else if metrics {
                ("cert-manager", vec![CERT_MANAGER, METRICS])
            } else if features.webhooks {
                ("cert-manager", vec![CERT_MANAGER, WEBHOOK])
            } else {
                ("cert-manager", vec![CERT_MANAGER])
            }
        }
        "ServiceMonitor" => ("prometheus", vec![PROMETHEUS, METRICS]),
        "NetworkPolicy" if webhook && features.webhooks => {
            ("network-policy", vec![NETWORK_POLICY, WEBHOOK])
        }
        "NetworkPolicy" if metrics => ("network-policy", vec![NETWORK_POLICY, METRICS]),
        "NetworkPolicy" => ("network-policy", vec![NETWORK_POLICY]),
        _ => ("extra", vec![]),
    }
}

/// What every object gets: Helm's labels in place of kustomize's `managed-by`, and cert-manager's
/// CA injection only while cert-manager is on.
fn common(doc: &mut Doc, value: &mut Value, chart: &str, features: &Features) {
    let Some(metadata) = value.get_mut("metadata").and_then(Value::as_mapping_mut) else {
        return;
    };
    let labels = yaml::mapping(metadata, "labels");
    labels.shift_remove("app.kubernetes.io/managed-by");
    let include = format!("{{{{- include \"{chart}.labels\" . | nindent ");
    let (k, v) = doc.block(move |indent| vec![format!("{indent}{include}{} }}}}", indent.len())]);
    labels.insert(k, v);

    if let Some(annotations) = metadata
        .get_mut("annotations")
        .and_then(Value::as_mapping_mut)
        && features.cert_manager
        && let Some(inject) = yaml::take(annotations, "cert-manager.io/inject-ca-from")
    {
        let (k, v) = doc.block(move |indent| {
            let mut line = Mapping::new();
            line.insert("cert-manager.io/inject-ca-from".into(), inject.clone());
            yaml::when(
                Some(CERT_MANAGER),
                indent,
                yaml::lines(&Value::Mapping(line), indent),
            )
        });
        yaml::put_at(annotations, "cert-manager.io/inject-ca-from", k, v);
    }
}

/// A CRD: kept on uninstall while `crd.keep`, its conversion webhook only while webhooks are on
/// (without them the API server could not convert).
fn crd(doc: &mut Doc, value: &mut Value) {
    if let Some(metadata) = value.get_mut("metadata").and_then(Value::as_mapping_mut) {
        let annotations = yaml::mapping(metadata, "annotations");
        let (k, v) = doc.block(|indent| {
            yaml::when(
                Some(".Values.crd.keep"),
                indent,
                vec![format!("{indent}helm.sh/resource-policy: keep")],
            )
        });
        annotations.insert(k, v);
    }
    if conversion_webhook(value).is_none() {
        return;
    }
    let Some(spec) = value.get_mut("spec").and_then(Value::as_mapping_mut) else {
        return;
    };
    let Some(conversion) = yaml::take(spec, "conversion") else {
        return;
    };
    let (k, v) = doc.block(move |indent| {
        let mut entry = Mapping::new();
        entry.insert("conversion".into(), conversion.clone());
        yaml::when(
            Some(WEBHOOK),
            indent,
            yaml::lines(&Value::Mapping(entry), indent),
        )
    });
    yaml::put_at(spec, "conversion", k, v);
}
