//! The defaults the API server sets on the built-in kinds the fake serves, when it decodes an
//! object (Kubernetes' `SetDefaults_<Type>` functions of `pkg/apis/*/v1/defaults.go` and the
//! `+default` markers of the types), and what the kinds' strategies set on a new object
//! (`PrepareForCreate`: a Pod's phase and QoS class, a Namespace's finalizer …). Each type's
//! defaults are a function of the table below; an object is walked along its type, parents
//! before children, as the generated defaulters call them.

use serde_json::{Map, Value, json};

use super::super::api_types::Ty;
use super::super::kinds::Kind;

type Defaulter = fn(&mut Map<String, Value>);

/// The defaulters, by type.
const DEFAULTERS: &[(&str, Defaulter)] = &[
    ("io.k8s.api.apps.v1.Deployment", deployment),
    ("io.k8s.api.apps.v1.DaemonSet", daemon_set),
    ("io.k8s.api.apps.v1.StatefulSet", stateful_set),
    ("io.k8s.api.apps.v1.ReplicaSet", replicas_default),
    ("io.k8s.api.core.v1.Pod", pod),
    ("io.k8s.api.core.v1.PodSpec", pod_spec),
    ("io.k8s.api.core.v1.Container", container),
    ("io.k8s.api.core.v1.EphemeralContainer", container),
    ("io.k8s.api.core.v1.ContainerPort", protocol),
    ("io.k8s.api.core.v1.ServicePort", protocol),
    ("io.k8s.api.core.v1.Probe", probe),
    ("io.k8s.api.core.v1.HTTPGetAction", http_get),
    ("io.k8s.api.core.v1.Volume", volume),
    ("io.k8s.api.core.v1.SecretVolumeSource", default_mode),
    ("io.k8s.api.core.v1.ConfigMapVolumeSource", default_mode),
    ("io.k8s.api.core.v1.DownwardAPIVolumeSource", default_mode),
    ("io.k8s.api.core.v1.ProjectedVolumeSource", default_mode),
    (
        "io.k8s.api.core.v1.ServiceAccountTokenProjection",
        token_projection,
    ),
    ("io.k8s.api.core.v1.ObjectFieldSelector", field_selector),
    ("io.k8s.api.core.v1.Service", service),
    ("io.k8s.api.core.v1.Secret", secret),
    ("io.k8s.api.core.v1.PersistentVolumeClaim", volume_claim),
    (
        "io.k8s.api.core.v1.PersistentVolumeClaimSpec",
        volume_claim_spec,
    ),
    ("io.k8s.api.core.v1.Namespace", namespace),
    ("io.k8s.api.core.v1.NamespaceStatus", namespace_status),
    (
        "io.k8s.api.admissionregistration.v1.MutatingWebhook",
        mutating_webhook,
    ),
    (
        "io.k8s.api.admissionregistration.v1.ValidatingWebhook",
        webhook,
    ),
    (
        "io.k8s.api.admissionregistration.v1.RuleWithOperations",
        webhook_rule,
    ),
    (
        "io.k8s.api.admissionregistration.v1.ServiceReference",
        service_reference,
    ),
    (
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionSpec",
        crd_spec,
    ),
    (
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.ServiceReference",
        service_reference,
    ),
];

/// Sets the defaults of `value`, of type `ty`, and of everything in it.
pub(in super::super) fn apply(ty: Ty, value: &mut Value) {
    match (ty, value) {
        (Ty::Named(api_type), Value::Object(fields)) => {
            if let Some((_, defaulter)) = DEFAULTERS.iter().find(|(name, _)| *name == api_type.name)
            {
                defaulter(fields);
            }
            for (key, child) in fields.iter_mut() {
                apply(ty.child(Some(key)), child);
            }
        }
        (Ty::Map(_), Value::Object(fields)) => {
            for (key, child) in fields.iter_mut() {
                apply(ty.child(Some(key)), child);
            }
        }
        (Ty::List(_), Value::Array(items)) => {
            for item in items {
                apply(ty.child(None), item);
            }
        }
        _ => {}
    }
}

/// Sets `key` to `value` if it is missing (or `null`, or, for strings, empty: Go's zero).
fn or_default(fields: &mut Map<String, Value>, key: &str, value: Value) {
    let missing = match fields.get(key) {
        None | Some(Value::Null) => true,
        Some(Value::String(text)) => text.is_empty(),
        Some(_) => false,
    };
    if missing {
        fields.insert(key.to_owned(), value);
    }
}

/// The object `fields[key]`, made one if it is not.
fn object<'a>(fields: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    let child = fields.entry(key).or_insert_with(|| json!({}));
    if !child.is_object() {
        *child = json!({});
    }
    child.as_object_mut().expect("just made an object")
}

fn deployment(fields: &mut Map<String, Value>) {
    let spec = object(fields, "spec");
    or_default(spec, "replicas", json!(1));
    let strategy = object(spec, "strategy");
    or_default(strategy, "type", json!("RollingUpdate"));
    if strategy["type"] == "RollingUpdate" {
        let rolling = object(strategy, "rollingUpdate");
        or_default(rolling, "maxUnavailable", json!("25%"));
        or_default(rolling, "maxSurge", json!("25%"));
    }
    or_default(spec, "revisionHistoryLimit", json!(10));
    or_default(spec, "progressDeadlineSeconds", json!(600));
}

fn daemon_set(fields: &mut Map<String, Value>) {
    let spec = object(fields, "spec");
    let strategy = object(spec, "updateStrategy");
    or_default(strategy, "type", json!("RollingUpdate"));
    if strategy["type"] == "RollingUpdate" {
        let rolling = object(strategy, "rollingUpdate");
        or_default(rolling, "maxUnavailable", json!(1));
        or_default(rolling, "maxSurge", json!(0));
    }
    or_default(spec, "revisionHistoryLimit", json!(10));
}

fn stateful_set(fields: &mut Map<String, Value>) {
    let spec = object(fields, "spec");
    or_default(spec, "podManagementPolicy", json!("OrderedReady"));
    let strategy = object(spec, "updateStrategy");
    if strategy.get("type").is_none_or(|t| t == "") {
        strategy.insert("type".to_owned(), json!("RollingUpdate"));
        object(strategy, "rollingUpdate");
    }
    if strategy["type"] == "RollingUpdate"
        && let Some(Value::Object(rolling)) = strategy.get_mut("rollingUpdate")
    {
        or_default(rolling, "partition", json!(0));
    }
    let retention = object(spec, "persistentVolumeClaimRetentionPolicy");
    or_default(retention, "whenDeleted", json!("Retain"));
    or_default(retention, "whenScaled", json!("Retain"));
    or_default(spec, "replicas", json!(1));
    or_default(spec, "revisionHistoryLimit", json!(10));
}

fn replicas_default(fields: &mut Map<String, Value>) {
    or_default(object(fields, "spec"), "replicas", json!(1));
}

/// A Pod's own defaults (not a pod template's): containers' requests from their limits, and
/// service links on.
fn pod(fields: &mut Map<String, Value>) {
    let spec = object(fields, "spec");
    for list in ["containers", "initContainers"] {
        for container in spec
            .get_mut(list)
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
            .filter_map(Value::as_object_mut)
        {
            let resources = object(container, "resources");
            let Some(limits) = resources.get("limits").and_then(Value::as_object).cloned() else {
                continue;
            };
            let requests = object(resources, "requests");
            for (resource, quantity) in limits {
                requests.entry(resource).or_insert(quantity);
            }
        }
    }
    or_default(spec, "enableServiceLinks", json!(true));
}

fn pod_spec(fields: &mut Map<String, Value>) {
    or_default(fields, "dnsPolicy", json!("ClusterFirst"));
    or_default(fields, "restartPolicy", json!("Always"));
    or_default(fields, "securityContext", json!({}));
    or_default(fields, "terminationGracePeriodSeconds", json!(30));
    or_default(fields, "schedulerName", json!("default-scheduler"));
}

fn container(fields: &mut Map<String, Value>) {
    let image = fields
        .get("image")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let policy = if image_tag(image) == Some("latest") {
        "Always"
    } else {
        "IfNotPresent"
    };
    or_default(fields, "imagePullPolicy", json!(policy));
    or_default(
        fields,
        "terminationMessagePath",
        json!("/dev/termination-log"),
    );
    or_default(fields, "terminationMessagePolicy", json!("File"));
}

/// The tag of an image reference, `latest` when it names neither a tag nor a digest.
fn image_tag(image: &str) -> Option<&str> {
    let (name, digest) = match image.split_once('@') {
        Some((name, _)) => (name, true),
        None => (image, false),
    };
    let last = name.rsplit('/').next().unwrap_or(name);
    match last.split_once(':') {
        Some((_, tag)) => Some(tag),
        None if digest => None,
        None => Some("latest"),
    }
}

fn protocol(fields: &mut Map<String, Value>) {
    or_default(fields, "protocol", json!("TCP"));
}

fn probe(fields: &mut Map<String, Value>) {
    for (key, value) in [
        ("timeoutSeconds", 1),
        ("periodSeconds", 10),
        ("successThreshold", 1),
        ("failureThreshold", 3),
    ] {
        if fields.get(key).is_none_or(|v| v.is_null() || *v == 0) {
            fields.insert(key.to_owned(), json!(value));
        }
    }
}

fn http_get(fields: &mut Map<String, Value>) {
    or_default(fields, "path", json!("/"));
    or_default(fields, "scheme", json!("HTTP"));
}

/// A volume of no source is an `emptyDir`.
fn volume(fields: &mut Map<String, Value>) {
    let has_source = fields
        .iter()
        .any(|(key, value)| key != "name" && !value.is_null());
    if !has_source {
        fields.insert("emptyDir".to_owned(), json!({}));
    }
}

fn default_mode(fields: &mut Map<String, Value>) {
    or_default(fields, "defaultMode", json!(0o644));
}

fn token_projection(fields: &mut Map<String, Value>) {
    or_default(fields, "expirationSeconds", json!(3600));
}

fn field_selector(fields: &mut Map<String, Value>) {
    or_default(fields, "apiVersion", json!("v1"));
}

fn service(fields: &mut Map<String, Value>) {
    let spec = object(fields, "spec");
    or_default(spec, "sessionAffinity", json!("None"));
    if spec["sessionAffinity"] == "None" {
        spec.remove("sessionAffinityConfig");
    }
    or_default(spec, "type", json!("ClusterIP"));
    for port in spec
        .get_mut("ports")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
    {
        or_default(port, "protocol", json!("TCP"));
        if port
            .get("targetPort")
            .is_none_or(|t| t.is_null() || *t == 0 || *t == "")
        {
            let number = port.get("port").cloned().unwrap_or(json!(0));
            port.insert("targetPort".to_owned(), number);
        }
    }
    let kind = spec["type"].as_str().unwrap_or_default().to_owned();
    if matches!(kind.as_str(), "NodePort" | "LoadBalancer") {
        or_default(spec, "externalTrafficPolicy", json!("Cluster"));
    }
    if matches!(kind.as_str(), "NodePort" | "LoadBalancer" | "ClusterIP") {
        or_default(spec, "internalTrafficPolicy", json!("Cluster"));
    }
    if kind == "LoadBalancer" {
        or_default(spec, "allocateLoadBalancerNodePorts", json!(true));
    }
}

/// A Secret's type defaults to `Opaque`, and its `stringData` is written into its `data` (as
/// the API server converts it: `stringData` is never stored).
fn secret(fields: &mut Map<String, Value>) {
    or_default(fields, "type", json!("Opaque"));
    if let Some(Value::Object(strings)) = fields.remove("stringData") {
        let data = object(fields, "data");
        for (key, value) in strings {
            let text = value.as_str().unwrap_or_default();
            data.insert(key, json!(super::base64::encode(text.as_bytes())));
        }
    }
}

fn volume_claim(fields: &mut Map<String, Value>) {
    or_default(object(fields, "status"), "phase", json!("Pending"));
}

fn volume_claim_spec(fields: &mut Map<String, Value>) {
    or_default(fields, "volumeMode", json!("Filesystem"));
}

/// A namespace is labelled with its name.
fn namespace(fields: &mut Map<String, Value>) {
    let metadata = object(fields, "metadata");
    if let Some(name) = metadata
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_owned)
        && !name.is_empty()
    {
        object(metadata, "labels").insert("kubernetes.io/metadata.name".to_owned(), json!(name));
    }
}

fn namespace_status(fields: &mut Map<String, Value>) {
    or_default(fields, "phase", json!("Active"));
}

fn webhook(fields: &mut Map<String, Value>) {
    or_default(fields, "failurePolicy", json!("Fail"));
    or_default(fields, "matchPolicy", json!("Equivalent"));
    or_default(fields, "namespaceSelector", json!({}));
    or_default(fields, "objectSelector", json!({}));
    or_default(fields, "timeoutSeconds", json!(10));
}

fn mutating_webhook(fields: &mut Map<String, Value>) {
    webhook(fields);
    or_default(fields, "reinvocationPolicy", json!("Never"));
}

fn webhook_rule(fields: &mut Map<String, Value>) {
    or_default(fields, "scope", json!("*"));
}

fn service_reference(fields: &mut Map<String, Value>) {
    or_default(fields, "port", json!(443));
}

fn crd_spec(fields: &mut Map<String, Value>) {
    let names = object(fields, "names");
    let kind = names
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    or_default(names, "singular", json!(kind.to_lowercase()));
    if !kind.is_empty() {
        or_default(names, "listKind", json!(format!("{kind}List")));
    }
    or_default(fields, "conversion", json!({ "strategy": "None" }));
}

/// What the strategy of a built-in kind sets on a new object, after its status was cleared.
pub(in super::super) fn prepare_create(kind: &Kind, object: &mut Value) {
    match (kind.group.as_str(), kind.plural.as_str()) {
        ("", "namespaces") => {
            object["status"] = json!({ "phase": "Active" });
            let spec = object_of(object, "spec");
            let finalizers = spec.entry("finalizers").or_insert_with(|| json!([]));
            if let Some(list) = finalizers.as_array_mut()
                && !list.iter().any(|f| f == "kubernetes")
            {
                list.push(json!("kubernetes"));
            }
        }
        ("", "pods") => {
            let qos = qos_class(&object["spec"]);
            object["status"] = json!({ "phase": "Pending", "qosClass": qos });
            pod_admission(object_of(object, "spec"));
        }
        ("", "persistentvolumeclaims") => {
            object["status"] = json!({ "phase": "Pending" });
        }
        ("", "services") => allocate_cluster_ip(object),
        _ => {}
    }
}

/// What the API server's default admission plugins set on a new pod: its priority (`Priority`:
/// 0 and `PreemptLowerPriority` without a class), and tolerations of 300 s for unready and
/// unreachable nodes (`DefaultTolerationSeconds`).
fn pod_admission(spec: &mut Map<String, Value>) {
    if spec
        .get("priorityClassName")
        .is_none_or(|c| c.is_null() || *c == "")
    {
        or_default(spec, "priority", json!(0));
        or_default(spec, "preemptionPolicy", json!("PreemptLowerPriority"));
    }
    let tolerations = spec.entry("tolerations").or_insert_with(|| json!([]));
    if let Some(list) = tolerations.as_array_mut() {
        for key in [
            "node.kubernetes.io/not-ready",
            "node.kubernetes.io/unreachable",
        ] {
            let tolerated = list.iter().any(|t| {
                (t["key"] == key || (t["key"].is_null() && t["operator"] == "Exists"))
                    && (t["effect"] == "NoExecute" || t["effect"].is_null())
            });
            if !tolerated {
                list.push(json!({ "key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300 }));
            }
        }
    }
}

/// A Service's cluster IP, as the API server allocates one (a made-up address in
/// 10.0.0.0/16), unless it is headless or an external name.
fn allocate_cluster_ip(object: &mut Value) {
    let spec = object_of(object, "spec");
    if spec.get("type").and_then(Value::as_str) == Some("ExternalName") {
        return;
    }
    let ip = match spec.get("clusterIP").and_then(Value::as_str) {
        Some(ip) if !ip.is_empty() => ip.to_owned(),
        _ => {
            static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(10);
            let host = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            format!("10.0.{}.{}", (host >> 8) & 0xff, host & 0xff)
        }
    };
    spec.insert("clusterIP".to_owned(), json!(ip));
    spec.entry("clusterIPs").or_insert_with(|| json!([ip]));
    // A headless Service without a selector may have endpoints of both families.
    let selectorless = spec
        .get("selector")
        .is_none_or(|s| s.as_object().is_none_or(Map::is_empty));
    let (families, policy) = if ip == "None" && selectorless {
        (json!(["IPv4", "IPv6"]), "RequireDualStack")
    } else {
        (json!(["IPv4"]), "SingleStack")
    };
    spec.entry("ipFamilies").or_insert(families);
    spec.entry("ipFamilyPolicy")
        .or_insert_with(|| json!(policy));
}

fn object_of<'a>(value: &'a mut Value, key: &str) -> &'a mut Map<String, Value> {
    if !value[key].is_object() {
        value[key] = json!({});
    }
    value[key].as_object_mut().expect("just made an object")
}

/// A pod's quality of service class: `BestEffort` without requests and limits, `Guaranteed`
/// when every container limits CPU and memory to what it requests, `Burstable` otherwise.
fn qos_class(spec: &Value) -> &'static str {
    let containers: Vec<&Value> = ["containers", "initContainers"]
        .iter()
        .flat_map(|list| spec[*list].as_array().into_iter().flatten())
        .collect();
    let resources = |container: &Value, kind: &str| -> Map<String, Value> {
        container["resources"][kind]
            .as_object()
            .cloned()
            .unwrap_or_default()
    };
    let any = containers
        .iter()
        .any(|c| !resources(c, "requests").is_empty() || !resources(c, "limits").is_empty());
    if !any {
        return "BestEffort";
    }
    let guaranteed = containers.iter().all(|c| {
        let (requests, limits) = (resources(c, "requests"), resources(c, "limits"));
        ["cpu", "memory"].iter().all(|resource| {
            limits.contains_key(*resource)
                && requests
                    .get(*resource)
                    .is_none_or(|r| Some(r) == limits.get(*resource))
        })
    });
    if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deployment_is_defaulted_as_the_api_server_defaults_it() {
        let mut object = json!({
            "spec": { "template": { "spec": {
                "containers": [{ "name": "app", "image": "nginx:1.27", "ports": [{ "containerPort": 80 }] }],
            } } },
        });
        apply(Ty::parse("io.k8s.api.apps.v1.Deployment"), &mut object);
        assert_eq!(object["spec"]["replicas"], 1);
        assert_eq!(
            object["spec"]["strategy"]["rollingUpdate"]["maxSurge"],
            "25%"
        );
        let container = &object["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(container["imagePullPolicy"], "IfNotPresent");
        assert_eq!(container["ports"][0]["protocol"], "TCP");
        assert_eq!(
            object["spec"]["template"]["spec"]["dnsPolicy"],
            "ClusterFirst"
        );
        assert_eq!(image_tag("nginx"), Some("latest"));
        assert_eq!(image_tag("registry:5000/nginx"), Some("latest"));
        assert_eq!(image_tag("nginx@sha256:abc"), None);
    }
}
