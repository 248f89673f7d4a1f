//! The built-in kinds checked against k8s-openapi's Rust types, which follow the API's OpenAPI
//! schema: a field of the wrong type is refused as the API server refuses a body it cannot
//! decode (`400 BadRequest`). The API server's validation of the kinds is `built_in/
//! validation.rs`'s.

use serde::de::DeserializeOwned;
use serde_json::Value;

/// Checks that an object decodes as its kind's Rust type; the error names the field that does
/// not.
pub(super) type Check = fn(&Value) -> Result<(), String>;

/// The [`Check`] of the kind `K`. (k8s-openapi decodes a missing required field as its
/// default: required fields are the schema's to check.)
pub(super) fn check<K: DeserializeOwned>(object: &Value) -> Result<(), String> {
    match serde_path_to_error::deserialize::<_, K>(object) {
        Ok(_) => Ok(()),
        Err(error) => {
            let path = error.path().to_string();
            let at = if path == "." { "(root)" } else { &path };
            Err(format!("{at}: {}", error.inner()))
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::Deployment;
    use serde_json::json;

    use super::*;

    #[test]
    fn wrong_types_are_found_with_their_paths() {
        let deployment =
            |spec: Value| json!({ "apiVersion": "apps/v1", "kind": "Deployment", "spec": spec });
        let valid = deployment(json!({
            "selector": { "matchLabels": { "app": "a" } },
            "template": { "spec": { "containers": [{ "name": "a", "image": "i" }] } },
        }));
        assert_eq!(check::<Deployment>(&valid), Ok(()));

        let wrong = deployment(json!({ "replicas": "two", "selector": {}, "template": {} }));
        let Err(message) = check::<Deployment>(&wrong) else {
            panic!("a string for an integer is refused");
        };
        assert!(
            message.starts_with("spec.replicas: invalid type: string \"two\""),
            "{message}"
        );
    }
}
