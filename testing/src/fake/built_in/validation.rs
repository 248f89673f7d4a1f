//! The API server's validation of the built-in kinds the fake serves, beyond their metadata
//! (`metadata.rs`) and types: ConfigMaps' and Secrets' keys, sizes and immutability, the
//! workloads' selectors (which must match their pod template's labels), replicas, strategies
//! and restart policy, pods' containers (names, images, ports), Services' ports, with the
//! messages of Kubernetes' `pkg/apis/*/validation`. What is not reproduced (volumes, probes,
//! security contexts, resources …) is accepted.

use serde_json::{Map, Value};

use super::super::errors::{ErrorType, FieldError, go_quote};
use super::super::kinds::Kind;
use super::super::names;

/// The errors of `object` (`old` before an update) of the built-in `kind`.
pub(in super::super) fn validate(
    kind: &Kind,
    object: &Value,
    old: Option<&Value>,
) -> Vec<FieldError> {
    match (kind.group.as_str(), kind.plural.as_str()) {
        ("", "configmaps") => config_map(object, old),
        ("", "secrets") => secret(object, old),
        ("apps", "deployments" | "replicasets" | "statefulsets" | "daemonsets") => {
            workload(kind, object, old)
        }
        ("", "pods") => pod_spec(&object["spec"], "spec"),
        ("apiextensions.k8s.io", "customresourcedefinitions") => {
            let mut errors = super::super::crd_validation::name_errors(object);
            errors.extend(super::super::crd_validation::validate(object, old));
            errors
        }
        ("", "services") => service(object),
        _ => Vec::new(),
    }
}

/// Why an object of a built-in kind does not decode as its Go type, beyond JSON types: a
/// Secret's `data` or a ConfigMap's `binaryData` that is not base64.
pub(in super::super) fn decode_error(kind: &Kind, object: &Value) -> Option<String> {
    let field = match (kind.group.as_str(), kind.plural.as_str()) {
        ("", "secrets") => "data",
        ("", "configmaps") => "binaryData",
        _ => return None,
    };
    sorted_keys(&object[field])
        .into_iter()
        .find_map(|key| super::base64::check(object[field][key].as_str().unwrap_or_default()).err())
}

fn invalid(field: &str, value: impl Into<Value>, detail: impl Into<String>) -> FieldError {
    FieldError::new(ErrorType::Invalid, field, Some(value.into()), detail)
}

fn required(field: &str) -> FieldError {
    FieldError::new(ErrorType::Required, field, None, "")
}

fn not_supported(field: &str, value: &Value, supported: &[&str]) -> FieldError {
    let quoted: Vec<String> = supported.iter().map(|s| go_quote(s)).collect();
    FieldError::new(
        ErrorType::NotSupported,
        field,
        Some(value.clone()),
        format!("supported values: {}", quoted.join(", ")),
    )
}

/// The keys of a map, sorted (Go's validation walks maps in no order; sorted is one of them).
fn sorted_keys(value: &Value) -> Vec<&String> {
    let mut keys: Vec<&String> = value.as_object().into_iter().flat_map(Map::keys).collect();
    keys.sort();
    keys
}

/// The most bytes a ConfigMap's or a Secret's data may take.
const MAX_DATA_SIZE: usize = 1024 * 1024;

/// The metadata checks of a create that the validation of a ConfigMap's or a Secret's update
/// makes again.
fn create_metadata_again(object: &Value, old: Option<&Value>) -> Vec<FieldError> {
    match old {
        Some(_) => {
            super::super::metadata::validate_create(object, names::NameRule::Subdomain, true)
        }
        None => Vec::new(),
    }
}

fn config_map(object: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errors = immutable_data(object, old, &["data", "binaryData"]);
    errors.extend(create_metadata_again(object, old));
    let mut size = 0;
    for key in sorted_keys(&object["data"]) {
        let path = format!("data[{key}]");
        for message in names::config_map_key(key) {
            errors.push(invalid(&path, key.as_str(), message));
        }
        if object["binaryData"].get(key).is_some() {
            errors.push(invalid(
                &path,
                key.as_str(),
                "duplicate of key present in binaryData",
            ));
        }
        size += object["data"][key].as_str().map_or(0, str::len);
    }
    for key in sorted_keys(&object["binaryData"]) {
        for message in names::config_map_key(key) {
            errors.push(invalid(
                &format!("binaryData[{key}]"),
                key.as_str(),
                message,
            ));
        }
        size += object["binaryData"][key]
            .as_str()
            .map_or(0, |b| b.len() * 3 / 4);
    }
    if size > MAX_DATA_SIZE {
        errors.push(FieldError::new(
            ErrorType::TooLong,
            "",
            None,
            format!("must have at most {MAX_DATA_SIZE} bytes"),
        ));
    }
    errors
}

/// An object marked `immutable` keeps its data (and its mark).
fn immutable_data(object: &Value, old: Option<&Value>, fields: &[&str]) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let Some(old) = old.filter(|old| old["immutable"] == true) else {
        return errors;
    };
    let detail = "field is immutable when `immutable` is set";
    if object["immutable"] != true {
        errors.push(FieldError::new(
            ErrorType::Forbidden,
            "immutable",
            None,
            detail,
        ));
    }
    for field in fields {
        if object[*field] != old[*field] {
            errors.push(FieldError::new(ErrorType::Forbidden, field, None, detail));
        }
    }
    errors
}

fn secret(object: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(old) = old
        && object["type"] != old["type"]
    {
        errors.push(invalid(
            "type",
            object["type"].clone(),
            "field is immutable",
        ));
    }
    errors.extend(immutable_data(object, old, &["data"]));
    errors.extend(create_metadata_again(object, old));
    let mut size = 0;
    for key in sorted_keys(&object["data"]) {
        for message in names::config_map_key(key) {
            errors.push(invalid(&format!("data[{key}]"), key.as_str(), message));
        }
        size += object["data"][key].as_str().map_or(0, |b| b.len() * 3 / 4);
    }
    if size > MAX_DATA_SIZE {
        errors.push(FieldError::new(
            ErrorType::TooLong,
            "data",
            None,
            format!("must have at most {MAX_DATA_SIZE} bytes"),
        ));
    }
    let has = |key: &str| object["data"].get(key).is_some();
    let needs: &[&str] = match object["type"].as_str().unwrap_or_default() {
        "kubernetes.io/tls" => &["tls.crt", "tls.key"],
        "kubernetes.io/dockerconfigjson" => &[".dockerconfigjson"],
        "kubernetes.io/dockercfg" => &[".dockercfg"],
        "kubernetes.io/ssh-auth" => &["ssh-privatekey"],
        "kubernetes.io/basic-auth" if !has("username") && !has("password") => {
            &["username", "password"]
        }
        _ => &[],
    };
    for key in needs.iter().filter(|key| !has(key)) {
        errors.push(required(&format!("data[{key}]")));
    }
    if object["type"] == "kubernetes.io/service-account-token"
        && object["metadata"]["annotations"]["kubernetes.io/service-account.name"]
            .as_str()
            .is_none_or(str::is_empty)
    {
        errors.push(required(
            "metadata.annotations[kubernetes.io/service-account.name]",
        ));
    }
    errors
}

/// Deployments, ReplicaSets, StatefulSets and DaemonSets: replicas, the selector and the pod
/// template it must select.
fn workload(kind: &Kind, object: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let spec = &object["spec"];
    let mut errors = Vec::new();
    if spec["replicas"]
        .as_i64()
        .is_some_and(|replicas| replicas < 0)
    {
        errors.push(invalid(
            "spec.replicas",
            spec["replicas"].clone(),
            "must be greater than or equal to 0",
        ));
    }
    let selector = &spec["selector"];
    if selector.is_null() {
        errors.push(required("spec.selector"));
    } else {
        errors.extend(label_selector(selector, "spec.selector"));
        let empty = sorted_keys(&selector["matchLabels"]).is_empty()
            && selector["matchExpressions"]
                .as_array()
                .is_none_or(Vec::is_empty);
        if empty {
            errors.push(FieldError::go(
                ErrorType::Invalid,
                "spec.selector",
                go_label_selector(selector),
                format!("empty selector is invalid for {}", kind.kind.to_lowercase()),
            ));
        }
    }
    let template = &spec["template"];
    // No selector selects nothing; an empty one everything.
    if !selects(selector, &template["metadata"]["labels"]) {
        errors.push(FieldError::go(
            ErrorType::Invalid,
            "spec.template.metadata.labels",
            go_string_map(&template["metadata"]["labels"]),
            "`selector` does not match template `labels`",
        ));
    }
    errors.extend(pod_template(template, "spec.template"));
    let restart = &template["spec"]["restartPolicy"];
    if restart.as_str().is_some_and(|policy| policy != "Always") {
        errors.push(not_supported(
            "spec.template.spec.restartPolicy",
            restart,
            &["Always"],
        ));
    }
    if let Some(old) = old
        && old["spec"]["selector"] != *selector
    {
        errors.push(FieldError::go(
            ErrorType::Invalid,
            "spec.selector",
            go_label_selector(selector),
            "field is immutable",
        ));
    }
    errors
}

/// Whether the label selector `selector` selects objects of `labels` (a missing selector selects
/// nothing).
fn selects(selector: &Value, labels: &Value) -> bool {
    if selector.is_null() {
        return false;
    }
    let label = |key: &str| labels[key].as_str();
    let matches_labels = selector["matchLabels"]
        .as_object()
        .into_iter()
        .flatten()
        .all(|(key, value)| label(key) == value.as_str());
    let matches_expressions = selector["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
        .all(|expression| {
            let key = expression["key"].as_str().unwrap_or_default();
            let values: Vec<&str> = expression["values"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            match expression["operator"].as_str().unwrap_or_default() {
                "In" => label(key).is_some_and(|v| values.contains(&v)),
                "NotIn" => label(key).is_none_or(|v| !values.contains(&v)),
                "Exists" => label(key).is_some(),
                "DoesNotExist" => label(key).is_none(),
                _ => false,
            }
        });
    matches_labels && matches_expressions
}

fn label_selector(selector: &Value, path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let labels = format!("{path}.matchLabels");
    for key in sorted_keys(&selector["matchLabels"]) {
        for message in names::qualified_name(key) {
            errors.push(invalid(&labels, key.as_str(), message));
        }
        let value = selector["matchLabels"][key].as_str().unwrap_or_default();
        for message in names::label_value(value) {
            errors.push(invalid(&labels, value, message));
        }
    }
    for (index, expression) in selector["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = format!("{path}.matchExpressions[{index}]");
        let values = expression["values"].as_array().map_or(0, Vec::len);
        match expression["operator"].as_str().unwrap_or_default() {
            "In" | "NotIn" if values == 0 => errors.push(FieldError::new(
                ErrorType::Required,
                &format!("{at}.values"),
                None,
                "must be specified when `operator` is 'In' or 'NotIn'",
            )),
            "Exists" | "DoesNotExist" if values > 0 => errors.push(FieldError::new(
                ErrorType::Forbidden,
                &format!("{at}.values"),
                None,
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )),
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            other => errors.push(invalid(
                &format!("{at}.operator"),
                other,
                "not a valid selector operator",
            )),
        }
    }
    errors
}

/// A `map[string]string` as Go prints it with `%#v`: keys sorted.
fn go_string_map(map: &Value) -> String {
    if map.as_object().is_none_or(Map::is_empty) {
        return if map.is_null() {
            "map[string]string(nil)".to_owned()
        } else {
            "map[string]string{}".to_owned()
        };
    }
    let entries: Vec<String> = sorted_keys(map)
        .into_iter()
        .map(|key| {
            format!(
                "{}:{}",
                go_quote(key),
                go_quote(map[key].as_str().unwrap_or_default())
            )
        })
        .collect();
    format!("map[string]string{{{}}}", entries.join(", "))
}

/// A label selector as Go prints it with `%#v` (the error of a field that holds a pointer
/// prints what it points to).
fn go_label_selector(selector: &Value) -> String {
    let labels = if selector["matchLabels"].is_object() {
        go_string_map(&selector["matchLabels"])
    } else {
        "map[string]string(nil)".to_owned()
    };
    let expressions = match selector["matchExpressions"].as_array() {
        None => "[]v1.LabelSelectorRequirement(nil)".to_owned(),
        Some(items) => {
            let items: Vec<String> = items
                .iter()
                .map(|item| {
                    let values = match item["values"].as_array() {
                        None => "[]string(nil)".to_owned(),
                        Some(values) => {
                            let quoted: Vec<String> = values
                                .iter()
                                .map(|v| go_quote(v.as_str().unwrap_or_default()))
                                .collect();
                            format!("[]string{{{}}}", quoted.join(", "))
                        }
                    };
                    format!(
                        "v1.LabelSelectorRequirement{{Key:{}, Operator:{}, Values:{values}}}",
                        go_quote(item["key"].as_str().unwrap_or_default()),
                        go_quote(item["operator"].as_str().unwrap_or_default()),
                    )
                })
                .collect();
            format!("[]v1.LabelSelectorRequirement{{{}}}", items.join(", "))
        }
    };
    format!("v1.LabelSelector{{MatchLabels:{labels}, MatchExpressions:{expressions}}}")
}

fn pod_template(template: &Value, path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let labels = &template["metadata"]["labels"];
    let label_path = format!("{path}.metadata.labels");
    for key in sorted_keys(labels) {
        for message in names::qualified_name(key) {
            errors.push(invalid(&label_path, key.as_str(), message));
        }
        let value = labels[key].as_str().unwrap_or_default();
        for message in names::label_value(value) {
            errors.push(invalid(&label_path, value, message));
        }
    }
    errors.extend(pod_spec(&template["spec"], &format!("{path}.spec")));
    errors
}

fn pod_spec(spec: &Value, path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let containers = format!("{path}.containers");
    match spec["containers"].as_array() {
        Some(list) if !list.is_empty() => errors.extend(containers_errors(list, &containers)),
        _ => errors.push(required(&containers)),
    }
    if let Some(list) = spec["initContainers"].as_array() {
        errors.extend(containers_errors(list, &format!("{path}.initContainers")));
    }
    let restart = &spec["restartPolicy"];
    if restart
        .as_str()
        .is_some_and(|policy| !matches!(policy, "Always" | "OnFailure" | "Never"))
    {
        errors.push(not_supported(
            &format!("{path}.restartPolicy"),
            restart,
            &["Always", "OnFailure", "Never"],
        ));
    }
    let dns = &spec["dnsPolicy"];
    if dns.as_str().is_some_and(|policy| {
        !matches!(
            policy,
            "ClusterFirstWithHostNet" | "ClusterFirst" | "Default" | "None"
        )
    }) {
        errors.push(not_supported(
            &format!("{path}.dnsPolicy"),
            dns,
            &["ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"],
        ));
    }
    errors
}

fn containers_errors(containers: &[Value], path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (index, container) in containers.iter().enumerate() {
        let at = format!("{path}[{index}]");
        let name = container["name"].as_str().unwrap_or_default();
        if name.is_empty() {
            errors.push(required(&format!("{at}.name")));
        } else {
            for message in names::dns1123_label(name) {
                errors.push(invalid(&format!("{at}.name"), name, message));
            }
        }
        if container["image"].as_str().is_none_or(str::is_empty) {
            errors.push(required(&format!("{at}.image")));
        }
        errors.extend(container_ports(&container["ports"], &format!("{at}.ports")));
        let pull = &container["imagePullPolicy"];
        if pull
            .as_str()
            .is_some_and(|policy| !matches!(policy, "Always" | "IfNotPresent" | "Never"))
        {
            errors.push(not_supported(
                &format!("{at}.imagePullPolicy"),
                pull,
                &["Always", "IfNotPresent", "Never"],
            ));
        }
        if seen.contains(&name) {
            errors.push(FieldError::new(
                ErrorType::Duplicate,
                &format!("{at}.name"),
                Some(Value::from(name)),
                "",
            ));
        } else {
            seen.push(name);
        }
    }
    errors
}

fn container_ports(ports: &Value, path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut names_seen: Vec<&str> = Vec::new();
    for (index, port) in ports.as_array().into_iter().flatten().enumerate() {
        let at = format!("{path}[{index}]");
        if let Some(name) = port["name"].as_str().filter(|n| !n.is_empty()) {
            if names_seen.contains(&name) {
                errors.push(FieldError::new(
                    ErrorType::Duplicate,
                    &format!("{at}.name"),
                    Some(Value::from(name)),
                    "",
                ));
            }
            names_seen.push(name);
        }
        match port["containerPort"].as_i64().unwrap_or(0) {
            0 => errors.push(required(&format!("{at}.containerPort"))),
            number if !(1..=65535).contains(&number) => errors.push(invalid(
                &format!("{at}.containerPort"),
                number,
                "must be between 1 and 65535, inclusive",
            )),
            _ => {}
        }
        errors.extend(protocol(&port["protocol"], &format!("{at}.protocol")));
    }
    errors
}

fn protocol(protocol: &Value, path: &str) -> Vec<FieldError> {
    match protocol.as_str() {
        None | Some("") => vec![required(path)],
        Some("TCP" | "UDP" | "SCTP") => Vec::new(),
        Some(_) => vec![not_supported(path, protocol, &["SCTP", "TCP", "UDP"])],
    }
}

fn service(object: &Value) -> Vec<FieldError> {
    let spec = &object["spec"];
    let mut errors = Vec::new();
    let kind = spec["type"].as_str().unwrap_or_default();
    let ports = spec["ports"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    if ports.is_empty() && kind != "ExternalName" && spec["clusterIP"] != "None" {
        errors.push(required("spec.ports"));
    }
    for (index, port) in ports.iter().enumerate() {
        let at = format!("spec.ports[{index}]");
        if ports.len() > 1 && port["name"].as_str().is_none_or(str::is_empty) {
            errors.push(required(&format!("{at}.name")));
        }
        match port["port"].as_i64().unwrap_or(0) {
            number if !(1..=65535).contains(&number) => errors.push(invalid(
                &format!("{at}.port"),
                number,
                "must be between 1 and 65535, inclusive",
            )),
            _ => {}
        }
        errors.extend(protocol(&port["protocol"], &format!("{at}.protocol")));
    }
    if !matches!(
        kind,
        "ClusterIP" | "NodePort" | "LoadBalancer" | "ExternalName"
    ) {
        errors.push(not_supported(
            "spec.type",
            &spec["type"],
            &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"],
        ));
    }
    errors
}
