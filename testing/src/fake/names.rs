//! The formats of names that the API server checks everywhere (object names, label keys and
//! values, annotation keys, finalizers, ConfigMap keys …), each returning the API server's
//! messages (`apimachinery/pkg/util/validation`): a list of what is wrong, empty when the value
//! is valid.

use std::sync::LazyLock;

use regex::Regex;

pub(super) const DNS1123_LABEL: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
pub(super) const DNS1123_SUBDOMAIN: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1035_LABEL: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const QUALIFIED_NAME: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_VALUE: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const CONFIG_MAP_KEY: &str = "[-._a-zA-Z0-9]+";

const QUALIFIED_NAME_WHAT: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

fn anchored(pattern: &str) -> Regex {
    Regex::new(&format!("^(?:{pattern})$")).expect("the patterns are valid")
}

static DNS1123_LABEL_RE: LazyLock<Regex> = LazyLock::new(|| anchored(DNS1123_LABEL));
static DNS1123_SUBDOMAIN_RE: LazyLock<Regex> = LazyLock::new(|| anchored(DNS1123_SUBDOMAIN));
static DNS1035_LABEL_RE: LazyLock<Regex> = LazyLock::new(|| anchored(DNS1035_LABEL));
static QUALIFIED_NAME_RE: LazyLock<Regex> = LazyLock::new(|| anchored(QUALIFIED_NAME));
static LABEL_VALUE_RE: LazyLock<Regex> = LazyLock::new(|| anchored(LABEL_VALUE));
static CONFIG_MAP_KEY_RE: LazyLock<Regex> = LazyLock::new(|| anchored(CONFIG_MAP_KEY));

/// `must be no more than <n> characters`.
pub(super) fn max_len_error(length: usize) -> String {
    format!("must be no more than {length} characters")
}

/// What a value should look like: `<what> (e.g. 'a',  or 'b', regex used for validation is
/// '<regex>')`, with the API server's double space.
pub(super) fn regex_error(what: &str, regex: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{what} (regex used for validation is '{regex}')");
    }
    let examples: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    format!(
        "{what} (e.g. {}regex used for validation is '{regex}')",
        examples.join(" or ")
    )
}

/// A lowercase RFC 1123 subdomain of at most 253 characters: most objects' names.
pub(super) fn dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 253 {
        errors.push(max_len_error(253));
    }
    if !DNS1123_SUBDOMAIN_RE.is_match(value) {
        errors.push(regex_error(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
            DNS1123_SUBDOMAIN,
            &["example.com"],
        ));
    }
    errors
}

/// A lowercase RFC 1123 label of at most 63 characters: namespaces' names.
pub(super) fn dns1123_label(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 63 {
        errors.push(max_len_error(63));
    }
    if !DNS1123_LABEL_RE.is_match(value) {
        if DNS1123_SUBDOMAIN_RE.is_match(value) {
            errors.push("must not contain dots".to_owned());
        } else {
            errors.push(regex_error(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
                DNS1123_LABEL,
                &["my-name", "123-abc"],
            ));
        }
    }
    errors
}

/// An RFC 1035 label (starting with a letter) of at most 63 characters: Services' names.
pub(super) fn dns1035_label(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 63 {
        errors.push(max_len_error(63));
    }
    if !DNS1035_LABEL_RE.is_match(value) {
        errors.push(regex_error(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
            DNS1035_LABEL,
            &["my-name", "abc-123"],
        ));
    }
    errors
}

/// A qualified name: an optional DNS subdomain prefix and `/`, then a name of up to 63
/// characters (label keys, annotation keys, finalizers).
pub(super) fn qualified_name(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errors.push("prefix part must be non-empty".to_owned());
            } else {
                errors.extend(
                    dns1123_subdomain(prefix)
                        .into_iter()
                        .map(|message| format!("prefix part {message}")),
                );
            }
            *name
        }
        _ => {
            let what = format!("a qualified name {QUALIFIED_NAME_WHAT}");
            let explained = regex_error(&what, QUALIFIED_NAME, &["MyName", "my.name", "123-abc"]);
            errors.push(format!(
                "{explained} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            ));
            return errors;
        }
    };
    if name.is_empty() {
        errors.push("name part must be non-empty".to_owned());
    } else if name.len() > 63 {
        errors.push(format!("name part {}", max_len_error(63)));
    }
    if !QUALIFIED_NAME_RE.is_match(name) {
        let explained = regex_error(
            QUALIFIED_NAME_WHAT,
            QUALIFIED_NAME,
            &["MyName", "my.name", "123-abc"],
        );
        errors.push(format!("name part {explained}"));
    }
    errors
}

/// A label value: empty, or a name of up to 63 characters.
pub(super) fn label_value(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 63 {
        errors.push(max_len_error(63));
    }
    if !LABEL_VALUE_RE.is_match(value) {
        errors.push(regex_error(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
            LABEL_VALUE,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errors
}

/// A key of a ConfigMap's or a Secret's data.
pub(super) fn config_map_key(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 253 {
        errors.push(max_len_error(253));
    }
    if !CONFIG_MAP_KEY_RE.is_match(value) {
        errors.push(regex_error(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
            CONFIG_MAP_KEY,
            &["key.name", "KEY_NAME", "key-name"],
        ));
    }
    match value {
        "." => errors.push("must not be '.'".to_owned()),
        ".." => errors.push("must not be '..'".to_owned()),
        _ if value.starts_with("..") => errors.push("must not start with '..'".to_owned()),
        _ => {}
    }
    errors
}

/// Which names a kind's objects may have (the `ValidateNameFunc` of its validation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum NameRule {
    /// An RFC 1123 subdomain (`example.com`): most kinds, custom resources included.
    Subdomain,
    /// An RFC 1123 label (`my-name`): Namespaces.
    Label1123,
    /// An RFC 1035 label (`my-name`, starting with a letter): Services.
    Label1035,
    /// Anything a URL's path segment can hold (the API server's check of every object's name
    /// on updates): not `.` or `..`, no `/` or `%`.
    PathSegment,
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

    /// What is wrong with `name`; a `prefix` (a `generateName`) may end with `-`.
    pub(super) fn check(self, name: &str, prefix: bool) -> Vec<String> {
        if self == NameRule::PathSegment {
            return path_segment(name, prefix);
        }
        let name = if prefix {
            mask_trailing_dash(name)
        } else {
            name.to_owned()
        };
        match self {
            NameRule::Subdomain => dns1123_subdomain(&name),
            NameRule::Label1123 => dns1123_label(&name),
            NameRule::Label1035 => dns1035_label(&name),
            NameRule::PathSegment => Vec::new(),
        }
    }
}

/// What a name may not be or hold to be a segment of a URL's path.
fn path_segment(name: &str, prefix: bool) -> Vec<String> {
    if !prefix && matches!(name, "." | "..") {
        return vec![format!("may not be '{name}'")];
    }
    ["/", "%"]
        .iter()
        .filter(|illegal| name.contains(**illegal))
        .map(|illegal| format!("may not contain '{illegal}'"))
        .collect()
}

/// A `generateName` checked as a name: its trailing dash stands for the random suffix. (As the
/// API server's `maskTrailingDash`, which replaces the last two characters with `a`.)
fn mask_trailing_dash(name: &str) -> String {
    match name.strip_suffix('-') {
        Some(_) if name.len() > 1 => {
            let mut cut = name.len() - 2;
            while !name.is_char_boundary(cut) {
                cut -= 1;
            }
            format!("{}a", &name[..cut])
        }
        _ => name.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualified_names() {
        assert!(qualified_name("example.com/cleanup").is_empty());
        assert!(qualified_name("cleanup").is_empty());
        assert_eq!(qualified_name("a/b/c").len(), 1);
        assert!(qualified_name("a/b/c")[0].starts_with("a qualified name must consist"));
        assert!(qualified_name("/x")[0].starts_with("prefix part must be non-empty"));
        assert!(qualified_name("Ex.com/x")[0].starts_with("prefix part a lowercase RFC 1123"));
        assert!(qualified_name("example.com/clean up")[0].starts_with("name part must consist"));
    }

    #[test]
    fn names_of_kinds() {
        assert!(
            NameRule::Subdomain
                .check("memcached-sample.v1", false)
                .is_empty()
        );
        assert_eq!(NameRule::Subdomain.check("Bad", false).len(), 1);
        assert!(NameRule::Subdomain.check("x-", true).is_empty());
        assert_eq!(
            NameRule::Label1123.check("a.b", false),
            ["must not contain dots"]
        );
        assert_eq!(NameRule::Label1035.check("1st", false).len(), 1);
        assert!(config_map_key("not/allowed")[0].starts_with("a valid config key"));
        assert_eq!(config_map_key(".."), ["must not be '..'"]);
    }
}
