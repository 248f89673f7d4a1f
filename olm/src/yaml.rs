//! Reading Kubernetes objects as YAML values: multi-document streams, paths, identities.

use anyhow::{Context as _, Result, bail};
use serde::Deserialize as _;
use serde_yaml::Value;

/// The value at `path` (mapping keys) in `value`.
pub fn value_at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(value, |v, key| v.get(*key))
}

/// The string at `path` in `value`.
pub fn str_at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a str> {
    value_at(value, path).and_then(Value::as_str)
}

/// Every object of a multi-document YAML stream (kustomize's output), empty documents skipped.
/// `source` names the stream in errors.
pub fn objects(text: &str, source: &str) -> Result<Vec<Value>> {
    let mut out = Vec::new();
    for (i, document) in serde_yaml::Deserializer::from_str(text).enumerate() {
        let value = Value::deserialize(document)
            .with_context(|| format!("{source}: document {} is not valid YAML", i + 1))?;
        match value {
            Value::Null => {}
            Value::Mapping(_) => out.push(value),
            _ => bail!("{source}: document {} is not a Kubernetes object", i + 1),
        }
    }
    Ok(out)
}

/// What identifies an object: its group, version, kind and name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ObjectId {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub name: String,
}

impl ObjectId {
    pub fn of(object: &Value) -> Result<Self> {
        let api_version = str_at(object, &["apiVersion"]).unwrap_or_default();
        let kind = str_at(object, &["kind"]).unwrap_or_default();
        let name = str_at(object, &["metadata", "name"]).unwrap_or_default();
        if api_version.is_empty() || kind.is_empty() || name.is_empty() {
            bail!(
                "an object without apiVersion, kind or metadata.name (apiVersion {api_version:?}, kind {kind:?}, name {name:?})"
            );
        }
        let (group, version) = match api_version.split_once('/') {
            Some((group, version)) => (group, version),
            None => ("", api_version),
        };
        Ok(Self {
            group: group.to_string(),
            version: version.to_string(),
            kind: kind.to_string(),
            name: name.to_string(),
        })
    }

    pub fn is(&self, group: &str, kind: &str) -> bool {
        self.group == group && self.kind == kind
    }
}

impl std::fmt::Display for ObjectId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.kind, self.name)
    }
}

/// Serializes `value` as one YAML document.
pub fn to_yaml(value: &Value) -> String {
    serde_yaml::to_string(value).expect("YAML values always serialize")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_split_into_objects() {
        let objects = objects("---\na: 1\n---\n---\nb: 2\n", "test").unwrap();
        assert_eq!(objects.len(), 2);
    }

    #[test]
    fn scalars_are_not_objects() {
        let err = objects("a: 1\n---\njust text\n", "stdin").unwrap_err();
        assert_eq!(
            err.to_string(),
            "stdin: document 2 is not a Kubernetes object"
        );
    }

    #[test]
    fn core_objects_have_an_empty_group() {
        let svc: Value =
            serde_yaml::from_str("apiVersion: v1\nkind: Service\nmetadata: {name: s}").unwrap();
        let id = ObjectId::of(&svc).unwrap();
        assert!(id.is("", "Service"));
        assert_eq!(id.version, "v1");
    }
}
