//! The validation of `metadata` that the API server makes for every kind: the object's name
//! (a DNS subdomain for most kinds; a DNS label for Namespaces and Services) and its labels, with
//! the API server's messages.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use super::errors::{ErrorType, FieldError};

const SUBDOMAIN: &str = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const LABEL_1123: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const LABEL_1035: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const QUALIFIED_NAME: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_VALUE: &str = "(([A-Za-z0-9][-_A-Za-z0-9.]*)?[A-Za-z0-9])?";

fn anchored(pattern: &str) -> Regex {
    Regex::new(&format!("^(?:{pattern})$")).expect("the patterns are valid")
}

static SUBDOMAIN_RE: LazyLock<Regex> = LazyLock::new(|| anchored(SUBDOMAIN));
static LABEL_1123_RE: LazyLock<Regex> = LazyLock::new(|| anchored(LABEL_1123));
static LABEL_1035_RE: LazyLock<Regex> = LazyLock::new(|| anchored(LABEL_1035));
static QUALIFIED_NAME_RE: LazyLock<Regex> = LazyLock::new(|| anchored(QUALIFIED_NAME));
static LABEL_VALUE_RE: LazyLock<Regex> = LazyLock::new(|| anchored(LABEL_VALUE));

/// Which names a kind's objects may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum NameRule {
    /// An RFC 1123 subdomain (`example.com`): most kinds, custom resources included.
    Subdomain,
    /// An RFC 1123 label (`my-name`): Namespaces.
    Label1123,
    /// An RFC 1035 label (`my-name`, starting with a letter): Services.
    Label1035,
}

impl NameRule {
    /// The rule of the kind `kind` of the core or another group.
    pub(super) fn of(group: &str, kind: &str) -> Self {
        match (group, kind) {
            ("", "Namespace") => NameRule::Label1123,
            ("", "Service") => NameRule::Label1035,
            _ => NameRule::Subdomain,
        }
    }
}

/// The errors of `object`'s name and labels.
pub(super) fn validate(object: &Value, rule: NameRule) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(name) = object["metadata"]["name"].as_str() {
        errors.extend(name_errors(name, rule));
    }
    for (key, value) in object["metadata"]["labels"]
        .as_object()
        .into_iter()
        .flatten()
    {
        errors.extend(label_key_errors(key));
        match value.as_str() {
            Some(value) => errors.extend(label_value_errors(value)),
            None => errors.push(invalid(
                "metadata.labels",
                value.clone(),
                "a label value must be a string",
            )),
        }
    }
    errors
}

fn invalid(field: &str, value: impl Into<Value>, detail: &str) -> FieldError {
    FieldError::new(ErrorType::Invalid, field, Some(value.into()), detail)
}

fn name_errors(name: &str, rule: NameRule) -> Vec<FieldError> {
    let field = "metadata.name";
    let mut errors = Vec::new();
    let (max, regex, explanation) = match rule {
        NameRule::Subdomain => (
            253,
            &*SUBDOMAIN_RE,
            format!(
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '{SUBDOMAIN}')"
            ),
        ),
        NameRule::Label1123 => (
            63,
            &*LABEL_1123_RE,
            format!(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '{LABEL_1123}')"
            ),
        ),
        NameRule::Label1035 => (
            63,
            &*LABEL_1035_RE,
            format!(
                "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '{LABEL_1035}')"
            ),
        ),
    };
    if name.len() > max {
        errors.push(invalid(
            field,
            name,
            &format!("must be no more than {max} characters"),
        ));
    }
    if !regex.is_match(name) {
        errors.push(invalid(field, name, &explanation));
    }
    errors
}

/// A label key: an optional DNS subdomain prefix and `/`, then a name of up to 63 characters.
fn label_key_errors(key: &str) -> Vec<FieldError> {
    let field = "metadata.labels";
    let mut errors = Vec::new();
    let (prefix, name) = match key.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if let Some(prefix) = prefix
        && (prefix.is_empty() || prefix.len() > 253 || !SUBDOMAIN_RE.is_match(prefix))
    {
        errors.push(invalid(
            field,
            key,
            &format!("prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '{SUBDOMAIN}')"),
        ));
    }
    if name.is_empty() {
        errors.push(invalid(field, key, "name part must be non-empty"));
    } else if name.len() > 63 {
        errors.push(invalid(
            field,
            key,
            "name part must be no more than 63 characters",
        ));
    } else if !QUALIFIED_NAME_RE.is_match(name) {
        errors.push(invalid(
            field,
            key,
            &format!("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '{QUALIFIED_NAME}')"),
        ));
    }
    errors
}

fn label_value_errors(value: &str) -> Vec<FieldError> {
    let field = "metadata.labels";
    let mut errors = Vec::new();
    if value.len() > 63 {
        errors.push(invalid(field, value, "must be no more than 63 characters"));
    }
    if !LABEL_VALUE_RE.is_match(value) {
        errors.push(invalid(
            field,
            value,
            &format!("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '{LABEL_VALUE}')"),
        ));
    }
    errors
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn errors(object: Value, rule: NameRule) -> Vec<String> {
        validate(&object, rule)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn names_and_labels() {
        let good = json!({ "metadata": {
            "name": "memcached-sample.v1",
            "labels": { "app.kubernetes.io/name": "memcached", "empty": "" },
        } });
        assert!(errors(good, NameRule::Subdomain).is_empty());
        let upper = errors(
            json!({ "metadata": { "name": "Memcached" } }),
            NameRule::Subdomain,
        );
        assert_eq!(upper.len(), 1);
        assert!(
            upper[0].starts_with(
                r#"metadata.name: Invalid value: "Memcached": a lowercase RFC 1123 subdomain"#
            ),
            "{upper:?}"
        );
        assert_eq!(
            errors(
                json!({ "metadata": { "name": "1st" } }),
                NameRule::Label1035
            )
            .len(),
            1
        );
        assert!(
            errors(
                json!({ "metadata": { "name": "1st" } }),
                NameRule::Label1123
            )
            .is_empty()
        );
        let labels = json!({ "metadata": { "labels": { "bad key": "x", "k": "bad value!" } } });
        assert_eq!(errors(labels, NameRule::Subdomain).len(), 2);
    }
}
