//! The manager's Deployment as a template, with kubebuilder's `manager.*` values: `enabled`,
//! `replicas`, `image`, `args`, `healthProbe.port`, `env` and `envOverrides`, the fields of
//! [`fields::FIELDS`] (security contexts, resources, scheduling, `strategy`,
//! `priorityClassName`, `terminationGracePeriodSeconds` …), `labels`, `annotations`,
//! `pod.labels`, `pod.annotations`, `extraVolumes`, `extraVolumeMounts`; and the parts of the
//! metrics and webhook servers follow `metrics.*` and `webhook.*`. The rest is config/'s, and
//! comes again from it on every `make helm-chart` (a deploy-image kind's `<KIND>_IMAGE` variable,
//! a user's patch).
//!
//! [`Defaults`] are config/'s settings, read from the rendered Deployment as it is (before any
//! templating): where `values.yaml` starts.

mod container;
pub mod fields;

use anyhow::{Result, bail};
use serde::Serialize;
use serde_yaml::{Mapping, Value};

use super::names::Names;
use super::switches::{CERT_MANAGER, Features, METRICS, METRICS_SECURE, Ports, WEBHOOK};
use super::yaml::{self, Doc};
use fields::{FIELDS, Place};

/// The manager's settings as config/ has them: where `values.yaml` starts.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Defaults {
    pub replicas: Value,
    pub repository: String,
    /// Empty for `latest` (the chart's appVersion then), as kubebuilder.
    pub tag: String,
    pub pull_policy: String,
    /// The arguments other than those of the metrics, webhook and health probe servers.
    pub args: Vec<String>,
    /// config/'s value of each of [`FIELDS`], in their order (Null where it has none).
    pub fields: Vec<Value>,
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

/// The manager container of the Deployment `object` (named `manager`, else the first).
fn container(object: &Value) -> Option<&Value> {
    let containers = object
        .get("spec")?
        .get("template")?
        .get("spec")?
        .get("containers")?
        .as_sequence()?;
    containers
        .iter()
        .find(|c| yaml::str_at(c, "name") == Some("manager"))
        .or_else(|| containers.first())
}

/// The manager container's arguments.
fn args(object: &Value) -> Vec<String> {
    container(object)
        .and_then(|c| c.get("args"))
        .and_then(Value::as_sequence)
        .into_iter()
        .flatten()
        .filter_map(|a| a.as_str().map(str::to_string))
        .collect()
}

/// The value of the flag `--<name>=…` among `args`.
fn flag<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .find_map(|a| a.strip_prefix("--")?.strip_prefix(name)?.strip_prefix('='))
}

/// The port of an address `[host]:port`.
fn port_of(address: &str) -> Option<u16> {
    address.rsplit_once(':')?.1.parse().ok()
}

/// The manager's ports and metrics settings as config/ sets them: (ports, metrics on, HTTPS).
pub fn servers(object: &Value) -> (Ports, bool, bool) {
    let args = args(object);
    let mut ports = Ports::default();
    let metrics = flag(&args, "metrics-bind-address").and_then(port_of);
    if let Some(port) = metrics.filter(|&p| p != 0) {
        ports.metrics = port;
    }
    if let Some(port) = flag(&args, "health-probe-bind-address").and_then(port_of) {
        ports.health = port;
    }
    let webhook_container_port = container(object)
        .and_then(|c| c.get("ports"))
        .and_then(Value::as_sequence)
        .into_iter()
        .flatten()
        .find(|p| yaml::str_at(p, "name") == Some("webhook-server"))
        .and_then(|p| p.get("containerPort"))
        .and_then(Value::as_u64)
        .and_then(|p| u16::try_from(p).ok());
    if let Some(port) = flag(&args, "webhook-port")
        .and_then(|p| p.parse().ok())
        .or(webhook_container_port)
    {
        ports.webhook = port;
    }
    let secure = flag(&args, "metrics-secure") != Some("false");
    (ports, metrics.is_some_and(|p| p != 0), secure)
}

/// What an item of the manager's (an argument, port, mount or volume) belongs to, by its name:
/// the switches it is under.
fn switches(name: &str, features: &Features) -> Vec<&'static str> {
    if name.contains("webhook") && features.webhooks {
        vec![WEBHOOK]
    } else if name.contains("metrics") && name.contains("cert") {
        // The metrics server's certificate (cert-manager's): HTTPS only; without it the manager
        // makes its own.
        let mut on = vec![METRICS, METRICS_SECURE];
        if features.cert_manager {
            on.push(CERT_MANAGER);
        }
        on
    } else if name.contains("metrics") {
        vec![METRICS]
    } else {
        vec![]
    }
}

/// Whether an argument is one of the servers' (the chart sets it from their values).
pub fn is_server_arg(arg: &str, features: &Features) -> bool {
    [
        "--metrics-bind-address",
        "--metrics-secure",
        "--health-probe-bind-address",
        "--webhook-port",
    ]
    .iter()
    .any(|f| arg == *f || arg.starts_with(&format!("{f}=")))
        || ((arg.starts_with("--webhook-") || arg.starts_with("--metrics-"))
            && !switches(arg, features).is_empty())
}

/// config/'s settings of the Deployment `object`, as it is rendered.
pub fn defaults(object: &Value, features: &Features, namespace: Option<&str>) -> Defaults {
    let spec = object.get("spec");
    let pod = spec
        .and_then(|s| s.get("template"))
        .and_then(|t| t.get("spec"));
    let container = container(object);
    let image = container
        .and_then(|c| yaml::str_at(c, "image"))
        .unwrap_or("controller:latest");
    let (repository, tag) = split_image(image);
    let fields = FIELDS
        .iter()
        .map(|f| {
            let place = match f.place {
                Place::Deployment => spec,
                Place::Pod => pod,
                Place::Container => container,
            };
            place
                .and_then(|p| p.get(f.field))
                .cloned()
                .unwrap_or(Value::Null)
        })
        .collect();
    // The arguments go through `tpl`: a `{{` of config/'s is printed, its namespace is the
    // release's.
    let args = args(object)
        .into_iter()
        .filter(|a| !is_server_arg(a, features))
        .map(|a| {
            let a = a.replace("{{", "{{ \"{{\" }}");
            match namespace {
                Some(ns) => super::names::replace_name(&a, ns, "{{ .Release.Namespace }}"),
                None => a,
            }
        })
        .collect();
    Defaults {
        replicas: spec
            .and_then(|s| s.get("replicas"))
            .cloned()
            .unwrap_or(Value::from(1)),
        repository,
        tag: if tag == "latest" { String::new() } else { tag },
        pull_policy: container
            .and_then(|c| yaml::str_at(c, "imagePullPolicy"))
            .unwrap_or("IfNotPresent")
            .to_string(),
        args,
        fields,
    }
}

/// Helm's labels, which `manager.labels` and `serviceAccount.labels` do not replace.
pub const HELM_LABELS: [&str; 3] = [
    "helm.sh/chart",
    "app.kubernetes.io/managed-by",
    "app.kubernetes.io/instance",
];

/// Turns the Deployment `value` (its strings prepared by [`Names::prepare`]) into the manager's
/// template.
pub fn template(
    doc: &mut Doc,
    value: &mut Value,
    features: &Features,
    names: &Names,
) -> Result<()> {
    let Some(deployment) = value.as_mapping_mut() else {
        bail!("the manager Deployment is not a mapping");
    };
    let metadata = yaml::mapping(deployment, "metadata");
    let labels = [".Values.manager.labels"];
    yaml::values_into(doc, metadata, "labels", &labels, &HELM_LABELS);
    let annotations = [".Values.manager.annotations"];
    yaml::values_into(doc, metadata, "annotations", &annotations, &[]);

    let Some(spec) = deployment.get_mut("spec").and_then(Value::as_mapping_mut) else {
        bail!("the manager Deployment has no spec");
    };
    let (k, v) = doc.block(|indent| {
        vec![format!(
            "{indent}replicas: {{{{ .Values.manager.replicas }}}}"
        )]
    });
    yaml::put_at(spec, "replicas", k, v);
    put_fields(doc, spec, Place::Deployment);

    let Some(template) = spec.get_mut("template").and_then(Value::as_mapping_mut) else {
        bail!("the manager Deployment has no pod template");
    };
    let metadata = yaml::mapping(template, "metadata");
    for key in ["labels", "annotations"] {
        let source = [".Values.manager.pod", &format!(".{key}")];
        yaml::values_into(doc, metadata, key, &source, &[]);
    }
    let Some(pod) = template.get_mut("spec").and_then(Value::as_mapping_mut) else {
        bail!("the manager Deployment has no pod template");
    };
    pod_template(doc, pod, features, names)
}

/// The pod's spec: its fields, ServiceAccount and volumes, and the manager container.
fn pod_template(
    doc: &mut Doc,
    pod: &mut Mapping,
    features: &Features,
    names: &Names,
) -> Result<()> {
    put_fields(doc, pod, Place::Pod);
    if names.service_account().is_some() {
        let name = names.service_account_name();
        let (k, v) = doc.block(move |indent| vec![format!("{indent}serviceAccountName: {name}")]);
        yaml::put_at(pod, "serviceAccountName", k, v);
    }
    let volumes = yaml::take(pod, "volumes");
    let extra = ".Values.manager.extraVolumes";
    let (k, v) = list(doc, "volumes", volumes, extra, features);
    yaml::put_at(pod, "volumes", k, v);

    let Some(containers) = pod.get_mut("containers").and_then(Value::as_sequence_mut) else {
        bail!("the manager Deployment has no containers");
    };
    let index = containers
        .iter()
        .position(|c| yaml::str_at(c, "name") == Some("manager"))
        .unwrap_or(0);
    let Some(manager) = containers.get_mut(index).and_then(Value::as_mapping_mut) else {
        bail!("the manager Deployment has no containers");
    };
    container::template(doc, manager, features)?;
    put_fields(doc, manager, Place::Container);
    let mounts = yaml::take(manager, "volumeMounts");
    let extra = ".Values.manager.extraVolumeMounts";
    let (k, v) = list(doc, "volumeMounts", mounts, extra, features);
    yaml::put_at(manager, "volumeMounts", k, v);
    Ok(())
}

/// The fields of [`FIELDS`] at `place` in `map`, from values.yaml (where config/ had them, or
/// last).
fn put_fields(doc: &mut Doc, map: &mut Mapping, place: Place) {
    for field in FIELDS.iter().filter(|f| f.place == place) {
        yaml::take(map, field.field);
        let (k, v) = doc.block(move |indent| field.lines(indent));
        yaml::put_at(map, field.field, k, v);
    }
}

/// A list of volumes or mounts: config/'s, each of the metrics or webhook server under its
/// switch, then values.yaml's `extra` ones; `key:` left out when there are none.
fn list(
    doc: &mut Doc,
    key: &'static str,
    items: Option<Value>,
    extra: &'static str,
    features: &Features,
) -> (Value, Value) {
    let items = items
        .and_then(|i| i.as_sequence().cloned())
        .unwrap_or_default();
    let features = features.clone();
    doc.block(move |indent| {
        let mut out = Vec::new();
        if items.is_empty() {
            out.push(format!("{indent}{{{{- with {extra} }}}}"));
            out.push(format!("{indent}{key}:"));
            out.push(format!(
                "{indent}{{{{- toYaml . | nindent {} }}}}",
                indent.len()
            ));
            out.push(format!("{indent}{{{{- end }}}}"));
            return out;
        }
        out.push(format!("{indent}{key}:"));
        for item in &items {
            let name = yaml::str_at(item, "name").unwrap_or_default();
            let on = switches(name, &features);
            let condition = super::switches::all(&on);
            out.extend(yaml::when(
                condition.as_deref(),
                indent,
                yaml::item(item, indent),
            ));
        }
        out.push(format!("{indent}{{{{- with {extra} }}}}"));
        out.push(format!(
            "{indent}{{{{- toYaml . | nindent {} }}}}",
            indent.len()
        ));
        out.push(format!("{indent}{{{{- end }}}}"));
        out
    })
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

    #[test]
    fn the_servers_ports_come_from_the_arguments() {
        let deployment: Value = serde_yaml::from_str(
            "spec:\n  template:\n    spec:\n      containers:\n      - name: manager\n        args:\n        - --metrics-bind-address=127.0.0.1:9000\n        - --health-probe-bind-address=:9001\n        - --metrics-secure=false\n        ports:\n        - containerPort: 9002\n          name: webhook-server\n",
        )
        .unwrap();
        let (ports, metrics, secure) = servers(&deployment);
        assert_eq!(
            (ports.metrics, ports.health, ports.webhook),
            (9000, 9001, 9002)
        );
        assert!(metrics && !secure);
        let off: Value = serde_yaml::from_str(
            "spec:\n  template:\n    spec:\n      containers:\n      - args: [--metrics-bind-address=0]\n",
        )
        .unwrap();
        let (ports, metrics, secure) = servers(&off);
        assert_eq!(ports, Ports::default());
        assert!(!metrics && secure);
    }

    #[test]
    fn the_values_args_are_the_users() {
        let features = Features {
            webhooks: true,
            ..Features::default()
        };
        for (arg, server) in [
            ("--metrics-bind-address=:8443", true),
            ("--health-probe-bind-address=:8081", true),
            ("--webhook-port=9443", true),
            ("--webhook-cert-path=/tmp/certs", true),
            ("--metrics-cert-path=/tmp/certs", true),
            ("--metrics-secure=false", true),
            ("--leader-elect", false),
            ("--health-probe-bind-address-x=1", false),
            ("--zap-log-level=debug", false),
        ] {
            assert_eq!(is_server_arg(arg, &features), server, "{arg}");
        }
    }
}
