//! Kubernetes' name rules, with apimachinery's messages (k8s.io/apimachinery
//! `util/validation` and `api/validate/content`), as operator-framework applies them to CSV
//! names, CRDs and the metadata of bundle objects.

use std::sync::LazyLock;

use regex::Regex;

const DNS1123_LABEL: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_SUBDOMAIN: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1035_LABEL: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const LABEL_KEY: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_VALUE: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";

fn anchored(pattern: &str) -> Regex {
    Regex::new(&format!("^{pattern}$")).expect("the patterns are valid")
}

static DNS1123_LABEL_RE: LazyLock<Regex> = LazyLock::new(|| anchored(DNS1123_LABEL));
static DNS1123_SUBDOMAIN_RE: LazyLock<Regex> = LazyLock::new(|| anchored(DNS1123_SUBDOMAIN));
static DNS1035_LABEL_RE: LazyLock<Regex> = LazyLock::new(|| anchored(DNS1035_LABEL));
static LABEL_KEY_RE: LazyLock<Regex> = LazyLock::new(|| anchored(LABEL_KEY));
static LABEL_VALUE_RE: LazyLock<Regex> = LazyLock::new(|| anchored(LABEL_VALUE));

fn regex_error(message: &str, pattern: &str, examples: &[&str]) -> String {
    let examples: String = examples
        .iter()
        .map(|e| format!("'{e}', "))
        .collect::<Vec<_>>()
        .join("or ");
    format!("{message} (e.g. {examples}regex used for validation is '{pattern}')")
}

/// `IsDNS1123Subdomain`: lowercase, `-` and `.`, at most 253 characters.
pub fn dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 253 {
        errs.push("must be no more than 253 characters".to_string());
    }
    if !DNS1123_SUBDOMAIN_RE.is_match(value) {
        errs.push(regex_error(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
            DNS1123_SUBDOMAIN,
            &["example.com"],
        ));
    }
    errs
}

/// `IsDNS1123Label`: a subdomain without dots, at most 63 characters.
pub fn dns1123_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    if !DNS1123_LABEL_RE.is_match(value) {
        if DNS1123_SUBDOMAIN_RE.is_match(value) {
            errs.push("must not contain dots".to_string());
        } else {
            errs.push(regex_error(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
                DNS1123_LABEL,
                &["my-name", "123-abc"],
            ));
        }
    }
    errs
}

/// `IsDNS1035Label`: like a DNS-1123 label, starting with a letter.
pub fn dns1035_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    if !DNS1035_LABEL_RE.is_match(value) {
        errs.push(regex_error(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
            DNS1035_LABEL,
            &["my-name", "abc-123"],
        ));
    }
    errs
}

/// `IsQualifiedName` (a label or annotation key): an optional DNS subdomain prefix and `/`,
/// then a name of at most 63 bytes.
pub fn qualified_name(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                let mut prefix_errs = dns1123_subdomain(prefix);
                for e in &mut prefix_errs {
                    *e = format!("prefix part {}", e.replace("characters", "bytes"));
                }
                errs.extend(prefix_errs);
            }
            *name
        }
        _ => {
            errs.push(format!(
                "a valid label key {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(
                    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
                    LABEL_KEY,
                    &["MyName", "my.name", "123-abc"],
                )
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push("name part must be no more than 63 bytes".to_string());
    }
    if !LABEL_KEY_RE.is_match(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
                LABEL_KEY,
                &["MyName", "my.name", "123-abc"],
            )
        ));
    }
    errs
}

/// `IsValidLabelValue`: empty, or at most 63 bytes of alphanumerics, `-`, `_`, `.`.
pub fn label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push("must be no more than 63 bytes".to_string());
    }
    if !LABEL_VALUE_RE.is_match(value) {
        errs.push(regex_error(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
            LABEL_VALUE,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_apimachinery() {
        assert!(dns1123_subdomain("etcdoperator.v0.9.4").is_empty());
        assert_eq!(dns1123_subdomain("Upper").len(), 1);
        assert_eq!(dns1123_label("a.b"), ["must not contain dots"]);
        assert!(dns1035_label("v1beta1").is_empty());
        assert!(!dns1035_label("1v").is_empty());
        assert!(qualified_name("operators.coreos.com/foo").is_empty());
        assert!(qualified_name("olm.skipRange").is_empty());
        assert!(!qualified_name("a/b/c").is_empty());
        assert!(!qualified_name("/b").is_empty());
        let long = format!("{}.v999.999.999", "a".repeat(60));
        assert_eq!(label_value(&long)[0], "must be no more than 63 bytes");
        assert!(label_value("").is_empty());
        assert!(
            regex_error("m", "p", &["a", "b"])
                .ends_with("(e.g. 'a', or 'b', regex used for validation is 'p')")
        );
    }
}
