//! The sample of a migrated kind (`config/samples/<group>_<version>_<kind>.yaml`): the Go
//! project's, or the scaffold's without the example field, with a spec the generated tests can
//! read. kubebuilder scaffolds every sample with a spec that holds only a comment (`spec:` then
//! `# TODO(user): Add fields here`), which YAML reads as `spec: null`: the API server drops such
//! a null, but a Rust kind's `spec` is no `Option`, and the sample's tests would fail. A spec that
//! is null, or missing, gets the least value the kind's schema accepts: its required fields, set
//! to example values ([`crate::openapi::example::required_struct_value`]), or `{}`.

use serde_json::Value as Json;
use serde_yaml::Value;

/// Whether `text` is a YAML mapping (one document), as a sample must be.
pub fn is_object(text: &str) -> bool {
    matches!(serde_yaml::from_str::<Value>(text), Ok(Value::Mapping(_)))
}

/// `text` (a sample) with its null or missing top-level `spec` set to `spec` (a JSON object), or
/// unchanged: when its spec has a value, or it is no YAML mapping (the user's to correct).
pub fn with_spec(text: &str, spec: &Json) -> String {
    let Ok(Value::Mapping(sample)) = serde_yaml::from_str::<Value>(text) else {
        return text.to_string();
    };
    if !matches!(sample.get("spec"), None | Some(Value::Null)) {
        return text.to_string();
    }
    let block = spec_block(spec);
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let spec_line = lines.iter().position(|line| {
        line.strip_prefix("spec:")
            .is_some_and(|rest| is_null_rest(rest.trim()))
    });
    let mut out = String::with_capacity(text.len() + block.len());
    match spec_line {
        Some(at) => {
            for (i, line) in lines.iter().enumerate() {
                if i == at {
                    // The line's own comment, if it had one, stays on it.
                    let comment = line.find('#').map(|c| line[c..].trim_end()).unwrap_or("");
                    out.push_str(&block_with_comment(&block, comment));
                } else {
                    out.push_str(line);
                }
            }
        }
        None => {
            out.push_str(text);
            if !text.is_empty() && !text.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(&block);
        }
    }
    out
}

/// What may follow `spec:` on a line whose value is null: nothing, `null` or `~`, a comment.
fn is_null_rest(rest: &str) -> bool {
    let value = rest.split('#').next().unwrap_or_default().trim();
    matches!(value, "" | "null" | "Null" | "NULL" | "~")
}

/// `spec:` with the value's lines under it, or `spec: {}`.
fn spec_block(spec: &Json) -> String {
    match spec.as_object() {
        Some(map) if !map.is_empty() => {
            let yaml = serde_yaml::to_string(spec).unwrap_or_default();
            let mut out = String::from("spec:\n");
            for line in yaml.lines() {
                out.push_str("  ");
                out.push_str(line);
                out.push('\n');
            }
            out
        }
        _ => "spec: {}\n".to_string(),
    }
}

fn block_with_comment(block: &str, comment: &str) -> String {
    if comment.is_empty() {
        return block.to_string();
    }
    let (first, rest) = block.split_once('\n').unwrap_or((block, ""));
    format!("{first} {comment}\n{rest}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const KUBEBUILDER: &str = "apiVersion: cache.example.com/v1\nkind: Memcached\nmetadata:\n  name: memcached-sample\nspec:\n  # TODO(user): Add fields here\n";

    #[test]
    fn a_spec_of_only_a_comment_gets_the_required_fields() {
        let out = with_spec(
            KUBEBUILDER,
            &json!({"size": 1, "backup": {"schedule": "s"}}),
        );
        assert_eq!(
            out,
            "apiVersion: cache.example.com/v1\nkind: Memcached\nmetadata:\n  name: memcached-sample\nspec:\n  backup:\n    schedule: s\n  size: 1\n  # TODO(user): Add fields here\n"
        );
        let read: Value = serde_yaml::from_str(&out).unwrap();
        assert_eq!(read["spec"]["size"], Value::from(1));
        let empty = with_spec(KUBEBUILDER, &json!({}));
        assert!(empty.contains("spec: {}\n  # TODO(user)"), "{empty}");
        let read: Value = serde_yaml::from_str(&empty).unwrap();
        assert!(read["spec"].is_mapping());
    }

    #[test]
    fn null_spellings_and_a_missing_spec() {
        for spec in ["spec: ~", "spec: null # none", "spec:"] {
            let text = format!("kind: A\n{spec}\n");
            let out = with_spec(&text, &json!({"a": "b"}));
            let read: Value = serde_yaml::from_str(&out).unwrap();
            assert_eq!(read["spec"]["a"], Value::from("b"), "{out}");
        }
        let out = with_spec("kind: A\nmetadata:\n  name: a", &json!({}));
        assert_eq!(out, "kind: A\nmetadata:\n  name: a\nspec: {}\n");
        // A spec with a value, or text that is no mapping, is the user's.
        for text in ["kind: A\nspec:\n  size: 3\n", "- a\n", "{{"] {
            assert_eq!(with_spec(text, &json!({"size": 1})), text);
        }
    }
}
