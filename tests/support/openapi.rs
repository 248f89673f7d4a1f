//! Structural validation against a CRD's OpenAPI v3 schema, the way the API server sees an
//! object: every field must be declared (an undeclared one would be pruned, i.e. silently lost),
//! have its declared type and enum value, and required fields must be there.

use serde_json::Value;

/// The `openAPIV3Schema` of the served version `version` of the CRD in `crd_yaml`.
pub fn crd_schema(crd_yaml: &str, version: &str) -> Value {
    let crd: Value = serde_yaml::from_str(crd_yaml).expect("the CRD parses");
    crd["spec"]["versions"]
        .as_array()
        .expect("versions")
        .iter()
        .find(|v| v["name"] == version)
        .unwrap_or_else(|| panic!("the CRD has no version {version}"))["schema"]["openAPIV3Schema"]
        .clone()
}

/// Every way `value` breaks `schema`, one line each (`spec.install.spec: unknown field foo`).
pub fn problems(schema: &Value, value: &Value) -> Vec<String> {
    let mut out = Vec::new();
    check(schema, value, "", &mut out);
    out
}

fn check(schema: &Value, value: &Value, path: &str, out: &mut Vec<String>) {
    let at = if path.is_empty() { "<root>" } else { path };
    if path == "metadata" {
        return; // ObjectMeta: the API server's, not the CRD schema's, to check
    }
    if value.is_null() && schema["nullable"] == true {
        return;
    }
    if schema["x-kubernetes-int-or-string"] == true {
        if !(value.is_i64() || value.is_u64() || value.is_string()) {
            out.push(format!("{at}: not an integer or a string"));
        }
        return;
    }
    let preserve = schema["x-kubernetes-preserve-unknown-fields"] == true;
    match schema["type"].as_str() {
        Some("object") => {
            let Some(object) = value.as_object() else {
                return out.push(format!("{at}: not an object"));
            };
            for required in schema["required"].as_array().into_iter().flatten() {
                let key = required.as_str().unwrap_or_default();
                if !object.contains_key(key) {
                    out.push(format!("{at}: required field {key} is missing"));
                }
            }
            for (key, field) in object {
                let child = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                // Every object has these, whether its schema says so or not.
                let implicit =
                    path.is_empty() && ["apiVersion", "kind", "metadata"].contains(&key.as_str());
                if let Some(field_schema) = schema["properties"].get(key) {
                    check(field_schema, field, &child, out);
                } else if implicit {
                    continue;
                } else if schema["additionalProperties"].is_object() {
                    check(&schema["additionalProperties"], field, &child, out);
                } else if !preserve && schema["additionalProperties"] != true {
                    out.push(format!("{at}: unknown field {key}"));
                }
            }
        }
        Some("array") => {
            let Some(items) = value.as_array() else {
                return out.push(format!("{at}: not an array"));
            };
            for (i, item) in items.iter().enumerate() {
                check(&schema["items"], item, &format!("{path}[{i}]"), out);
            }
        }
        Some("string") if !value.is_string() => out.push(format!("{at}: not a string")),
        Some("integer") if !(value.is_i64() || value.is_u64()) => {
            out.push(format!("{at}: not an integer"))
        }
        Some("number") if !value.is_number() => out.push(format!("{at}: not a number")),
        Some("boolean") if !value.is_boolean() => out.push(format!("{at}: not a boolean")),
        _ => {}
    }
    if let Some(allowed) = schema["enum"].as_array()
        && !allowed.contains(value)
    {
        out.push(format!("{at}: {value} is not one of {allowed:?}"));
    }
}
