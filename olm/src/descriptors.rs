//! Owned-CRD descriptions for the CSV, read from the CRDs `make manifests` rendered.
//!
//! operator-sdk reads `+operator-sdk:csv:customresourcedefinitions` markers from Go types. A
//! Rust project has its documentation in doc comments instead, and schemars already copies
//! them into the CRD schemas as `description`s: so the rendered CRDs in `config/crd/bases` hold
//! everything needed, and reading them needs no compiled project.

use serde_yaml::Value;

use super::csv::{CrdDescription, Descriptor};
use super::yaml::{str_at, value_at};

/// The console widget for a field, by its schema: the `x-descriptors` OLM documents for plain
/// values. Fields of other types get none (the console shows them as text).
const WIDGETS: &[(&str, &str)] = &[
    ("integer", "urn:alm:descriptor:com.tectonic.ui:number"),
    ("number", "urn:alm:descriptor:com.tectonic.ui:number"),
    (
        "boolean",
        "urn:alm:descriptor:com.tectonic.ui:booleanSwitch",
    ),
    ("string", "urn:alm:descriptor:com.tectonic.ui:text"),
];

/// Status fields named `conditions` are shown as conditions.
const CONDITIONS: &str = "urn:alm:descriptor:io.kubernetes.conditions";

/// One description per version the CRD serves, in the CRD's order.
pub fn owned(crd: &Value) -> Vec<CrdDescription> {
    let name = str_at(crd, &["metadata", "name"]).unwrap_or_default();
    let kind = str_at(crd, &["spec", "names", "kind"]).unwrap_or_default();
    let versions = value_at(crd, &["spec", "versions"])
        .and_then(Value::as_sequence)
        .cloned()
        .unwrap_or_default();
    versions
        .iter()
        .filter(|v| v.get("served").and_then(Value::as_bool).unwrap_or(true))
        .map(|version| {
            let schema = value_at(version, &["schema", "openAPIV3Schema"]);
            let field = |f: &str| schema.and_then(|s| value_at(s, &["properties", f]));
            CrdDescription {
                name: name.to_string(),
                version: str_at(version, &["name"]).unwrap_or_default().to_string(),
                kind: kind.to_string(),
                display_name: words(kind),
                description: schema
                    .and_then(|s| str_at(s, &["description"]))
                    .map(first_paragraph)
                    .unwrap_or_default(),
                spec_descriptors: field("spec")
                    .map(|s| descriptors(s, false))
                    .unwrap_or_default(),
                status_descriptors: field("status")
                    .map(|s| descriptors(s, true))
                    .unwrap_or_default(),
                ..CrdDescription::default()
            }
        })
        .collect()
}

/// A descriptor for each top-level field of `spec` or `status`, sorted by path.
fn descriptors(object: &Value, status: bool) -> Vec<Descriptor> {
    let Some(properties) = value_at(object, &["properties"]).and_then(Value::as_mapping) else {
        return Vec::new();
    };
    let mut out: Vec<Descriptor> = properties
        .iter()
        .filter_map(|(path, schema)| {
            let path = path.as_str()?;
            let widget = if status && path == "conditions" {
                Some(CONDITIONS)
            } else {
                let kind = str_at(schema, &["type"]);
                WIDGETS
                    .iter()
                    .find(|(t, _)| Some(*t) == kind)
                    .map(|(_, w)| *w)
            };
            Some(Descriptor {
                path: path.to_string(),
                display_name: words(path),
                description: str_at(schema, &["description"])
                    .map(first_paragraph)
                    .unwrap_or_default(),
                x_descriptors: widget.into_iter().map(str::to_string).collect(),
                ..Descriptor::default()
            })
        })
        .collect();
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// `FirstMate` and `containerPort` as the console titles them: "First Mate", "Container Port".
pub fn words(name: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = name.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let starts_word = i > 0
            && c.is_uppercase()
            && (chars[i - 1].is_lowercase()
                || chars.get(i + 1).is_some_and(|next| next.is_lowercase()));
        if starts_word {
            out.push(' ');
        }
        if i == 0 {
            out.extend(c.to_uppercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Doc comments can run long; the console wants a summary: the text up to the first blank line,
/// on one line.
fn first_paragraph(text: &str) -> String {
    let paragraph = text.split("\n\n").next().unwrap_or_default();
    paragraph.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: memcacheds.cache.example.com
spec:
  group: cache.example.com
  names:
    kind: Memcached
    plural: memcacheds
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        description: |-
          A memcached cluster.

          The controller keeps a Deployment of spec.size pods.
        properties:
          spec:
            properties:
              size:
                description: How many pods run memcached.
                type: integer
              containerPort:
                type: integer
          status:
            properties:
              conditions:
                type: array
  - name: v0
    served: false
"#;

    #[test]
    fn descriptions_come_from_the_schema_of_each_served_version() {
        let crd: Value = serde_yaml::from_str(CRD).unwrap();
        let owned = owned(&crd);
        assert_eq!(owned.len(), 1, "the unserved version is left out");
        let memcached = &owned[0];
        assert_eq!(memcached.version, "v1alpha1");
        assert_eq!(memcached.display_name, "Memcached");
        assert_eq!(memcached.description, "A memcached cluster.");
        let spec: Vec<_> = memcached
            .spec_descriptors
            .iter()
            .map(|d| {
                (
                    d.path.as_str(),
                    d.display_name.as_str(),
                    d.description.as_str(),
                )
            })
            .collect();
        assert_eq!(
            spec,
            [
                ("containerPort", "Container Port", ""),
                ("size", "Size", "How many pods run memcached.")
            ]
        );
        assert_eq!(memcached.status_descriptors[0].x_descriptors, [CONDITIONS]);
    }

    #[test]
    fn names_become_words() {
        assert_eq!(words("FirstMate"), "First Mate");
        assert_eq!(words("containerPort"), "Container Port");
        assert_eq!(words("HTTPSProxy"), "HTTPS Proxy");
        assert_eq!(words("size"), "Size");
    }
}
