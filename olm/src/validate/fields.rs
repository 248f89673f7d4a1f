//! Reading decoded objects the way Go reads a typed struct: a field that is missing or `null`
//! reads as its zero value (`""`, an empty list, `false`).

use serde_json::{Map, Value};

pub fn at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter()
        .try_fold(value, |v, key| v.get(*key))
        .filter(|v| !v.is_null())
}

/// The string at `path`, or `""`.
pub fn text<'a>(value: &'a Value, path: &[&str]) -> &'a str {
    at(value, path).and_then(Value::as_str).unwrap_or("")
}

/// The list at `path`, or an empty one.
pub fn list<'a>(value: &'a Value, path: &[&str]) -> &'a [Value] {
    at(value, path)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// The map at `path`, if there is one.
pub fn map<'a>(value: &'a Value, path: &[&str]) -> Option<&'a Map<String, Value>> {
    at(value, path).and_then(Value::as_object)
}

pub fn flag(value: &Value, path: &[&str]) -> bool {
    at(value, path).and_then(Value::as_bool).unwrap_or(false)
}

/// The strings of the list at `path` (other items skipped).
pub fn strings<'a>(value: &'a Value, path: &[&str]) -> Vec<&'a str> {
    list(value, path).iter().filter_map(Value::as_str).collect()
}

/// A string map (labels, annotations) as `(key, value)` pairs.
pub fn string_map<'a>(value: &'a Value, path: &[&str]) -> Vec<(&'a str, &'a str)> {
    map(value, path)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.as_str(), v.as_str().unwrap_or("")))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether Go would see the field as its zero value: missing, `null`, `""`, `false`, `0`, or an
/// object all of whose fields are zero. (A list, even empty, is not zero: JSON decodes `[]`
/// into an empty, non-nil slice.)
pub fn is_zero(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        Some(Value::Bool(b)) => !b,
        Some(Value::Number(n)) => n.as_f64() == Some(0.0),
        Some(Value::Array(_)) => false,
        Some(Value::Object(map)) => map.values().all(|v| is_zero(Some(v))),
    }
}

/// `group/version` of an `apiVersion`, the group empty for the core group.
pub fn group_version(api_version: &str) -> (&str, &str) {
    match api_version.split_once('/') {
        Some((group, version)) => (group, version),
        None => ("", api_version),
    }
}

/// A group/version/kind as Go prints `schema.GroupVersionKind`: `group/version, Kind=Kind`.
pub fn gvk_text(group: &str, version: &str, kind: &str) -> String {
    if group.is_empty() {
        format!("/{version}, Kind={kind}")
    } else {
        format!("{group}/{version}, Kind={kind}")
    }
}
