//! The label and field selectors of list and watch requests (`?labelSelector=…&fieldSelector=…`).
//!
//! Written here because kube has selector types for building queries (`kube::core::Selector`) but
//! no parser for the text a client sends.

use std::collections::BTreeMap;

use serde_json::Value;

/// A parsed selector: every requirement must hold.
#[derive(Clone, Debug, Default)]
pub(super) struct Selector(Vec<Requirement>);

#[derive(Clone, Debug)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
}

impl Selector {
    /// Parses a label selector: `a=b`, `a==b`, `a!=b`, `a in (b,c)`, `a notin (b)`, `a`, `!a`,
    /// separated by commas. An empty text selects everything.
    pub(super) fn labels(text: &str) -> Result<Self, String> {
        let mut requirements = Vec::new();
        for term in split_terms(text) {
            let term = term.trim();
            if term.is_empty() {
                continue;
            }
            requirements.push(parse_label_term(term)?);
        }
        Ok(Self(requirements))
    }

    /// Parses a field selector: `metadata.name=x`, `status.phase!=Running`, separated by commas.
    /// The fields are dotted paths into the object; a missing field is the empty string.
    pub(super) fn fields(text: &str) -> Result<Self, String> {
        let mut requirements = Vec::new();
        for term in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let requirement = if let Some((key, value)) = term.split_once("!=") {
                Requirement::NotEquals(key.trim().to_owned(), value.trim().to_owned())
            } else if let Some((key, value)) =
                term.split_once("==").or_else(|| term.split_once('='))
            {
                Requirement::Equals(key.trim().to_owned(), value.trim().to_owned())
            } else {
                return Err(format!("invalid field selector {term:?}"));
            };
            requirements.push(requirement);
        }
        Ok(Self(requirements))
    }

    /// Whether `object`'s labels satisfy this (label) selector.
    pub(super) fn matches_labels(&self, object: &Value) -> bool {
        let labels: BTreeMap<String, String> = object["metadata"]["labels"]
            .as_object()
            .map(|labels| {
                labels
                    .iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                    .collect()
            })
            .unwrap_or_default();
        self.matches(|key| labels.get(key).cloned())
    }

    /// Whether `object`'s fields satisfy this (field) selector.
    pub(super) fn matches_fields(&self, object: &Value) -> bool {
        self.matches(|path| {
            let value = path
                .split('.')
                .try_fold(object, |value, key| value.get(key))?;
            Some(match value {
                Value::String(text) => text.clone(),
                Value::Null => String::new(),
                other => other.to_string(),
            })
        })
    }

    fn matches(&self, get: impl Fn(&str) -> Option<String>) -> bool {
        self.0.iter().all(|requirement| match requirement {
            Requirement::Equals(key, value) => get(key).unwrap_or_default() == *value,
            Requirement::NotEquals(key, value) => get(key).unwrap_or_default() != *value,
            Requirement::In(key, values) => get(key).is_some_and(|v| values.contains(&v)),
            Requirement::NotIn(key, values) => !get(key).is_some_and(|v| values.contains(&v)),
            Requirement::Exists(key) => get(key).is_some(),
            Requirement::DoesNotExist(key) => get(key).is_none(),
        })
    }
}

/// Splits at the commas that are not inside the parentheses of a set (`a in (b,c),d`).
fn split_terms(text: &str) -> Vec<&str> {
    let (mut terms, mut depth, mut start) = (Vec::new(), 0, 0);
    for (index, character) in text.char_indices() {
        match character {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                terms.push(&text[start..index]);
                start = index + 1;
            }
            _ => {}
        }
    }
    terms.push(&text[start..]);
    terms
}

fn parse_label_term(term: &str) -> Result<Requirement, String> {
    let invalid = || format!("invalid label selector {term:?}");
    if let Some(key) = term.strip_prefix('!') {
        return Ok(Requirement::DoesNotExist(key.trim().to_owned()));
    }
    if let Some((head, values)) = term.split_once('(') {
        let values = values.strip_suffix(')').ok_or_else(invalid)?;
        let values = values.split(',').map(|v| v.trim().to_owned()).collect();
        let mut words = head.split_whitespace();
        let (Some(key), Some(operator), None) = (words.next(), words.next(), words.next()) else {
            return Err(invalid());
        };
        return match operator {
            "in" => Ok(Requirement::In(key.to_owned(), values)),
            "notin" => Ok(Requirement::NotIn(key.to_owned(), values)),
            _ => Err(invalid()),
        };
    }
    if let Some((key, value)) = term.split_once("!=") {
        return Ok(Requirement::NotEquals(
            key.trim().to_owned(),
            value.trim().to_owned(),
        ));
    }
    if let Some((key, value)) = term.split_once("==").or_else(|| term.split_once('=')) {
        return Ok(Requirement::Equals(
            key.trim().to_owned(),
            value.trim().to_owned(),
        ));
    }
    if term.contains(char::is_whitespace) {
        return Err(invalid());
    }
    Ok(Requirement::Exists(term.to_owned()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn labelled(labels: Value) -> Value {
        json!({ "metadata": { "name": "a", "labels": labels } })
    }

    #[test]
    fn label_selectors() {
        let object = labelled(json!({ "app": "web", "tier": "front" }));
        for (selector, expected) in [
            ("", true),
            ("app=web", true),
            ("app==web,tier=front", true),
            ("app=db", false),
            ("app!=db", true),
            ("app in (db, web)", true),
            ("app notin (db,web)", false),
            ("tier", true),
            ("!tier", false),
            ("!missing,app in (web),tier!=back", true),
        ] {
            let parsed = Selector::labels(selector).unwrap();
            assert_eq!(parsed.matches_labels(&object), expected, "{selector}");
        }
        assert!(Selector::labels("app in web)").is_err());
        assert!(Selector::labels("a b").is_err());
    }

    #[test]
    fn field_selectors() {
        let object =
            json!({ "metadata": { "name": "a", "namespace": "ns" }, "status": { "n": 3 } });
        for (selector, expected) in [
            ("metadata.name=a", true),
            ("metadata.name==b", false),
            ("metadata.namespace!=ns", false),
            ("status.n=3,metadata.name=a", true),
            ("spec.missing=", true),
        ] {
            let parsed = Selector::fields(selector).unwrap();
            assert_eq!(parsed.matches_fields(&object), expected, "{selector}");
        }
        assert!(Selector::fields("metadata.name").is_err());
    }
}
