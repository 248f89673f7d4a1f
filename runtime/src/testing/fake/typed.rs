//! The built-in kinds checked against k8s-openapi's Rust types, which follow the API's OpenAPI
//! schema: a field of the wrong type is refused as the API server refuses a body it cannot
//! decode (`400 BadRequest`), and a missing required field as an invalid object
//! (`422 Invalid`, `<field>: Required value`). The API server's further validation of built-in
//! kinds (value ranges, cross-field rules) is not reproduced.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::errors::{ErrorType, FieldError};

/// Checks that an object fits its kind's Rust type.
pub(super) type Check = fn(&Value) -> Result<(), Mismatch>;

/// How an object does not fit its kind's Rust type.
#[derive(Debug, PartialEq)]
pub(super) enum Mismatch {
    /// A required field is missing: the object is invalid.
    Missing(FieldError),
    /// A field has the wrong type: the body cannot be decoded. The message names the field.
    Undecodable(String),
}

/// The [`Check`] of the kind `K`.
pub(super) fn check<K: DeserializeOwned>(object: &Value) -> Result<(), Mismatch> {
    match serde_path_to_error::deserialize::<_, K>(object) {
        Ok(_) => Ok(()),
        Err(error) => {
            let path = error.path().to_string();
            let path = if path == "." { String::new() } else { path };
            let message = error.inner().to_string();
            Err(mismatch(&path, &message))
        }
    }
}

fn mismatch(path: &str, message: &str) -> Mismatch {
    // serde's wording for a missing field of a struct: "missing field `name`".
    if let Some(field) = message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.strip_suffix('`'))
    {
        let field = if path.is_empty() {
            field.to_owned()
        } else {
            format!("{path}.{field}")
        };
        return Mismatch::Missing(FieldError::new(ErrorType::Required, &field, None, ""));
    }
    let at = if path.is_empty() { "(root)" } else { path };
    Mismatch::Undecodable(format!("{at}: {message}"))
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::Deployment;
    use serde_json::json;

    use super::*;

    #[test]
    fn wrong_types_and_missing_fields_are_found_with_their_paths() {
        let deployment =
            |spec: Value| json!({ "apiVersion": "apps/v1", "kind": "Deployment", "spec": spec });
        let valid = deployment(json!({
            "selector": { "matchLabels": { "app": "a" } },
            "template": { "spec": { "containers": [{ "name": "a", "image": "i" }] } },
        }));
        assert_eq!(check::<Deployment>(&valid), Ok(()));

        let nameless = deployment(json!({
            "selector": {},
            "template": { "spec": { "containers": [{ "image": "i" }] } },
        }));
        let Err(Mismatch::Missing(error)) = check::<Deployment>(&nameless) else {
            panic!("a container without a name is refused");
        };
        assert_eq!(
            error.to_string(),
            "spec.template.spec.containers[0].name: Required value"
        );

        let wrong = deployment(json!({ "replicas": "two", "selector": {}, "template": {} }));
        let Err(Mismatch::Undecodable(message)) = check::<Deployment>(&wrong) else {
            panic!("a string for an integer is refused");
        };
        assert!(
            message.starts_with("spec.replicas: invalid type: string \"two\""),
            "{message}"
        );
    }
}
