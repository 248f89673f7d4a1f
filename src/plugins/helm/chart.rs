//! The chart's templates, one per object that config/ renders, under `templates/<area>/` as
//! kubebuilder lays them out (crd, rbac, manager, metrics, webhook, cert-manager, prometheus,
//! network-policy; `extra` for objects of the user's own kinds of patch). Each object is the
//! rendered one with the release's namespace and names (`names.rs`), Helm's labels and the
//! `values.yaml` switches of its area; the manager's Deployment takes its settings from
//! `values.yaml` (`manager/`), the servers' Services, policies and monitor their ports
//! (`ports.rs`), the roles `rbac.namespaced` and the ServiceAccount `serviceAccount` (`rbac.rs`).

use anyhow::{Result, bail};
use serde_yaml::{Mapping, Value};

use super::manager;
use super::names::Names;
use super::ports::{self, Server};
use super::rbac;
use super::render::Rendered;
use super::switches::{
    self, CERT_MANAGER, CRD, Features, HELPERS, MANAGER, METRICS, METRICS_SECURE, NETWORK_POLICY,
    PROMETHEUS, SERVICE_ACCOUNT, WEBHOOK,
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
    /// Whether config/ turns the metrics server on (`metrics.enabled`'s default).
    pub metrics: bool,
}

/// The chart of the objects `rendered` holds; `chart` is the chart's name (the project's).
pub fn build(rendered: &Rendered, chart: &str) -> Result<Chart> {
    let mut objects: Vec<&Value> = rendered.default.iter().collect();
    // The opt-in overlays, unless config/default has them already.
    for object in &rendered.optional {
        if !objects.iter().any(|o| {
            yaml::kind_of(o) == yaml::kind_of(object) && yaml::name_of(o) == yaml::name_of(object)
        }) {
            objects.push(object);
        }
    }
    let Some(deployment) = objects
        .iter()
        .copied()
        .find(|o| yaml::kind_of(o) == "Deployment" && manager::is_manager(o))
    else {
        bail!(
            "the manifests hold no manager Deployment (control-plane: controller-manager); the \
             chart is made around it"
        );
    };
    let account = service_account(&objects, deployment);
    let features = features(rendered, deployment, account.is_some());
    let namespace = rendered.namespace.as_deref();
    let names = Names::new(&objects, chart, &rendered.name_prefix, namespace, account);
    let defaults = manager::defaults(deployment, &features, namespace);

    let mut templates: Vec<Template> = Vec::new();
    for object in objects {
        let kind = yaml::kind_of(object);
        let name = yaml::name_of(object);
        if kind == "Namespace" {
            // The release's namespace (`helm install --namespace … --create-namespace`).
            continue;
        }
        if kind.is_empty() || name.is_empty() {
            bail!("the manifests hold an object without kind or name");
        }
        let short = name.strip_prefix(&rendered.name_prefix).unwrap_or(name);
        let (area, conditions) = area(object, short, &features, account == Some(name));
        let text = template(object, area, short, chart, &features, &names)?;
        let file = if kind == "CustomResourceDefinition" {
            name
        } else {
            short
        };
        let mut path = format!("{area}/{file}.yaml");
        if templates.iter().any(|t| t.path == path) {
            path = format!("{area}/{file}-{}.yaml", kind.to_lowercase());
        }
        let text = match switches::all(&conditions) {
            None => text,
            Some(condition) => format!("{{{{- if {condition} }}}}\n{text}{{{{- end }}}}\n"),
        };
        templates.push(Template { path, text });
    }
    let metrics = manager::servers(deployment).1;
    Ok(Chart {
        templates,
        features,
        manager: defaults,
        metrics,
    })
}

/// The manager's ServiceAccount, if it is one of the objects.
fn service_account<'a>(objects: &[&'a Value], deployment: &'a Value) -> Option<&'a str> {
    deployment
        .get("spec")
        .and_then(|s| s.get("template"))
        .and_then(|t| t.get("spec"))
        .and_then(|s| yaml::str_at(s, "serviceAccountName"))
        .filter(|sa| {
            objects
                .iter()
                .any(|o| yaml::kind_of(o) == "ServiceAccount" && yaml::name_of(o) == *sa)
        })
}

/// What the project has: its kinds of objects in config/default, its manager's servers.
fn features(rendered: &Rendered, deployment: &Value, service_account: bool) -> Features {
    let in_default = |kind: &str| rendered.default.iter().any(|o| yaml::kind_of(o) == kind);
    let (ports, _, metrics_secure) = manager::servers(deployment);
    Features {
        webhooks: rendered.default.iter().any(|o| {
            yaml::kind_of(o).ends_with("WebhookConfiguration") || conversion_webhook(o).is_some()
        }),
        cert_manager: rendered.default.iter().any(is_cert_manager),
        prometheus_by_default: in_default("ServiceMonitor"),
        network_policy_by_default: in_default("NetworkPolicy"),
        service_account,
        ports,
        metrics_secure,
    }
}

/// The template of one object (without its area's switches).
fn template(
    object: &Value,
    area: &str,
    short: &str,
    chart: &str,
    features: &Features,
    names: &Names,
) -> Result<String> {
    let kind = yaml::kind_of(object);
    let mut value = object.clone();
    let mut doc = Doc::default();
    rbac::service_account_references(&mut doc, &mut value, names);
    // A CRD's versions (their schemas) are the user's data: no name in them is the chart's.
    let spec = value.get_mut("spec").and_then(Value::as_mapping_mut);
    let versions = match spec {
        Some(spec) if kind == "CustomResourceDefinition" => yaml::take(spec, "versions"),
        _ => None,
    };
    names.prepare(&mut value, &mut doc, true);
    if let Some(mut versions) = versions {
        names.prepare(&mut versions, &mut doc, false);
        if let Some(spec) = value.get_mut("spec").and_then(Value::as_mapping_mut) {
            spec.insert("versions".into(), versions);
        }
    }
    common(&mut doc, &mut value, chart, features);
    match kind {
        "CustomResourceDefinition" => crd(&mut doc, &mut value),
        "Deployment" if area == "manager" => {
            manager::template(&mut doc, &mut value, features, names)?
        }
        "ServiceAccount" if names.service_account() == Some(yaml::name_of(object)) => {
            rbac::service_account(&mut doc, &mut value)
        }
        "Service" | "NetworkPolicy" if area == "metrics" || short.contains("metrics") => {
            ports::template(&mut doc, &mut value, Server::Metrics, features)
        }
        "Service" | "NetworkPolicy" if area == "webhook" || short.contains("webhook") => {
            ports::template(&mut doc, &mut value, Server::Webhook, features)
        }
        "ServiceMonitor" => ports::service_monitor(&mut doc, &mut value, features),
        _ => {}
    }
    if rbac::follows_namespaced(kind, short) {
        rbac::namespaced(&mut doc, &mut value);
    }
    Ok(doc.text(&value))
}

fn is_cert_manager(object: &Value) -> bool {
    yaml::str_at(object, "apiVersion").is_some_and(|a| a.starts_with("cert-manager.io/"))
}

/// A CRD's conversion webhook, if it has one.
fn conversion_webhook(object: &Value) -> Option<&Value> {
    let conversion = object.get("spec")?.get("conversion")?;
    (yaml::str_at(conversion, "strategy") == Some("Webhook")).then_some(conversion)
}

/// The folder of an object's template and the values that switch it on (all must be true);
/// `account`: it is the manager's ServiceAccount.
fn area(
    object: &Value,
    short: &str,
    features: &Features,
    account: bool,
) -> (&'static str, Vec<&'static str>) {
    let kind = yaml::kind_of(object);
    let metrics = short.contains("metrics");
    let webhook = short.contains("webhook");
    match kind {
        "CustomResourceDefinition" => ("crd", vec![CRD]),
        "Deployment" if manager::is_manager(object) => ("manager", vec![MANAGER]),
        // The manager's with --sharding (config/manager/pod_disruption_budget.yaml).
        "PodDisruptionBudget" if manager::is_manager(object) => ("manager", vec![MANAGER]),
        "ServiceAccount" if account => ("rbac", vec![SERVICE_ACCOUNT]),
        "ServiceAccount" | "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding" => {
            if ["-admin-role", "-editor-role", "-viewer-role"]
                .iter()
                .any(|s| short.ends_with(s))
            {
                ("rbac", vec![HELPERS])
            } else if metrics {
                // Metrics authentication: HTTPS only, as kubebuilder's chart.
                ("rbac", vec![METRICS, METRICS_SECURE])
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
                ("cert-manager", vec![CERT_MANAGER, METRICS, METRICS_SECURE])
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
