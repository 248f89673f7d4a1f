//! What controller-gen writes into every CRD and kube's `#[derive(CustomResource)]` leaves out,
//! so that the CRDs of a Rust operator read like a kubebuilder project's.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, JSONSchemaProps,
};
use serde_json::json;

/// Sets `spec.names.listKind` (`<Kind>List`) and gives `status.conditions`, where it is a list of
/// metav1.Condition, the validation of metav1.Condition's OpenAPI schema.
pub(super) fn complete(crd: &mut CustomResourceDefinition) {
    let names = &mut crd.spec.names;
    if names.list_kind.is_none() {
        names.list_kind = Some(format!("{}List", names.kind));
    }
    for version in &mut crd.spec.versions {
        let conditions = version
            .schema
            .as_mut()
            .and_then(|s| s.open_api_v3_schema.as_mut())
            .and_then(|s| s.properties.as_mut())
            .and_then(|p| p.get_mut("status"))
            .and_then(|s| s.properties.as_mut())
            .and_then(|p| p.get_mut("conditions"));
        if let Some(conditions) = conditions {
            validate_conditions(conditions);
        }
    }
}

/// The properties of metav1.Condition.
const CONDITION_FIELDS: [&str; 6] = [
    "lastTransitionTime",
    "message",
    "observedGeneration",
    "reason",
    "status",
    "type",
];

/// Adds metav1.Condition's validation (its `+kubebuilder:validation` markers, as controller-gen
/// renders them) to a list of conditions. A list of something else is left alone.
fn validate_conditions(conditions: &mut JSONSchemaProps) {
    let Some(item) = conditions
        .items
        .as_mut()
        .and_then(|items| serde_json::to_value(&*items).ok())
    else {
        return;
    };
    let fields: Vec<&str> = item["properties"]
        .as_object()
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default();
    if fields != CONDITION_FIELDS {
        return;
    }
    let mut item = item;
    let properties = &mut item["properties"];
    let set = |properties: &mut serde_json::Value, field: &str, extra: serde_json::Value| {
        if let (Some(target), Some(extra)) = (properties[field].as_object_mut(), extra.as_object())
        {
            target.extend(extra.clone());
        }
    };
    set(
        properties,
        "lastTransitionTime",
        json!({ "format": "date-time" }),
    );
    set(properties, "message", json!({ "maxLength": 32768 }));
    set(
        properties,
        "observedGeneration",
        json!({ "format": "int64", "minimum": 0 }),
    );
    set(
        properties,
        "reason",
        json!({
            "maxLength": 1024,
            "minLength": 1,
            "pattern": "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
        }),
    );
    set(
        properties,
        "status",
        json!({ "enum": ["True", "False", "Unknown"] }),
    );
    set(
        properties,
        "type",
        json!({
            "maxLength": 316,
            "pattern": "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$",
        }),
    );
    item["required"] = json!(["lastTransitionTime", "message", "reason", "status", "type"]);
    if let Ok(items) = serde_json::from_value(item) {
        conditions.items = Some(items);
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
    use kube::{CustomResource, CustomResourceExt as _, KubeSchema};
    use serde::{Deserialize, Serialize};

    use super::*;

    #[derive(CustomResource, KubeSchema, Clone, Debug, Default, Deserialize, Serialize)]
    #[kube(
        group = "test.example.com",
        version = "v1",
        kind = "Ship",
        status = "ShipStatus"
    )]
    struct ShipSpec {
        crew: u32,
    }

    #[derive(KubeSchema, Clone, Debug, Default, Deserialize, Serialize)]
    struct ShipStatus {
        conditions: Vec<Condition>,
    }

    #[test]
    fn list_kind_and_condition_validation() {
        let mut crd = Ship::crd();
        complete(&mut crd);
        assert_eq!(crd.spec.names.list_kind.as_deref(), Some("ShipList"));
        let version = serde_json::to_value(&crd.spec.versions[0]).unwrap();
        let item = &version["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]["conditions"]
            ["items"];
        assert_eq!(
            item["properties"]["status"]["enum"],
            json!(["True", "False", "Unknown"])
        );
        assert_eq!(item["properties"]["reason"]["minLength"], 1);
        assert_eq!(item["properties"]["message"]["maxLength"], 32768);
        assert_eq!(
            item["properties"]["observedGeneration"]["minimum"].as_f64(),
            Some(0.0)
        );
        assert!(item["properties"]["type"]["pattern"].is_string());
        assert_eq!(item["required"].as_array().map(Vec::len), Some(5));
    }
}
