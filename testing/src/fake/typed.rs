//! The built-in kinds checked against k8s-openapi's Rust types, which follow the API's OpenAPI
//! schema: a field of the wrong type is refused as the API server refuses a body it cannot
//! decode (`400 BadRequest`); the required fields and formats are checked against the OpenAPI
//! schema of the type (k8s-openapi's `JsonSchema`), a missing one refused as an invalid object
//! (`422 Invalid`, `<field>: Required value`). The API server's further validation of built-in
//! kinds (value ranges, cross-field rules) is not reproduced.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
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

/// The OpenAPI v3 schema of `K`, inlined (no `$ref`s) as a CRD's schema is.
pub(super) fn schema<K: JsonSchema>() -> Value {
    let schema = SchemaSettings::openapi3()
        .with(|settings| settings.inline_subschemas = true)
        .into_generator()
        .into_root_schema_for::<K>();
    serde_json::to_value(schema).expect("schemas serialize")
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
        let schema = schema::<Deployment>();
        let containers = &schema["properties"]["spec"]["properties"]["template"]["properties"]["spec"]
            ["properties"]["containers"];
        assert_eq!(containers["items"]["required"], json!(["name"]));

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
