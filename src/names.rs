//! Validated names.
//!
//! Every name a user types ends up in file paths, Rust identifiers, YAML and Kubernetes object
//! names, so each one is a newtype whose constructor enforces the rule kubebuilder applies
//! (reference §4.2) and reports a failure as [`InvalidInput`]: the flag, the value and the rule,
//! on one line. The DNS rules alone already exclude path separators, `..`, white space, control
//! characters and template syntax, which is what keeps a name from escaping the project folder
//! or a template.

use std::fmt;

/// A rejected command-line value: which flag, what value, which rule it broke.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidInput {
    pub flag: &'static str,
    pub value: String,
    pub rule: String,
}

impl InvalidInput {
    pub fn new(flag: &'static str, value: &str, rule: impl Into<String>) -> Self {
        Self {
            flag,
            value: value.to_string(),
            rule: rule.into(),
        }
    }
}

impl fmt::Display for InvalidInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Debug formatting quotes the value and escapes control characters, so the message
        // stays on one line whatever was typed. Very long values are shortened.
        let shown: String = if self.value.chars().count() > 80 {
            let head: String = self.value.chars().take(60).collect();
            format!("{head:?}… ({} characters)", self.value.chars().count())
        } else {
            format!("{:?}", self.value)
        };
        write!(f, "invalid value {shown} for {}: {}", self.flag, self.rule)
    }
}

impl std::error::Error for InvalidInput {}

const DNS1123_LABEL_RULE: &str = "must be a DNS-1123 label: at most 63 characters, only lower-case \
     letters, digits and '-', starting and ending with a letter or digit";
const DNS1123_SUBDOMAIN_RULE: &str = "must be a DNS-1123 subdomain: at most 253 characters, \
     lower-case letters, digits, '-' and '.', every dot-separated part starting and ending with a \
     letter or digit";

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most 63 characters.
pub fn is_dns1123_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// Dot-separated DNS-1123 labels, at most 253 characters.
pub fn is_dns1123_subdomain(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s.split('.').all(is_dns1123_label)
}

/// `[a-z]([-a-z0-9]*[a-z0-9])?`, at most 63 characters.
pub fn is_dns1035_label(s: &str) -> bool {
    is_dns1123_label(s) && s.as_bytes()[0].is_ascii_lowercase()
}

/// The project's domain (`--domain`); API groups are `<group>.<domain>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Domain(String);

impl Domain {
    pub fn parse(value: &str) -> Result<Self, InvalidInput> {
        if value.is_empty() {
            return Err(InvalidInput::new(
                "--domain",
                value,
                "must not be empty (for example example.com)",
            ));
        }
        if !is_dns1123_subdomain(value) {
            return Err(InvalidInput::new("--domain", value, DNS1123_SUBDOMAIN_RULE));
        }
        Ok(Self(value.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The project's name (`--project-name`): Cargo package name, kustomize name prefix and
/// namespace `<name>-system`, so it has to be a DNS-1123 label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectName(String);

impl ProjectName {
    pub fn parse(value: &str) -> Result<Self, InvalidInput> {
        if value.is_empty() {
            return Err(InvalidInput::new(
                "--project-name",
                value,
                "must not be empty",
            ));
        }
        if !is_dns1123_label(value) {
            return Err(InvalidInput::new(
                "--project-name",
                value,
                DNS1123_LABEL_RULE,
            ));
        }
        Ok(Self(value.to_string()))
    }

    /// The default name: the folder's name, lower-cased (as kubebuilder does). When that is
    /// not a valid name the error says where it came from and how to override it.
    pub fn from_folder(folder: &str) -> Result<Self, InvalidInput> {
        let lowered = folder.to_lowercase();
        Self::parse(&lowered).map_err(|err| {
            InvalidInput::new(
                "--project-name",
                &lowered,
                format!(
                    "{} (derived from the folder name; pass --project-name to choose one)",
                    err.rule
                ),
            )
        })
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domains() {
        for ok in ["example.com", "my.domain", "a", "a-b.c0", "1.2"] {
            assert!(Domain::parse(ok).is_ok(), "{ok}");
        }
        let long = "a".repeat(300);
        for bad in [
            "Example.COM",
            "-x.com",
            "a..b",
            "a b",
            "../etc",
            "{{ x }}",
            "",
            "x.",
            ".x",
            "a/b",
            &long,
        ] {
            let err = Domain::parse(bad).unwrap_err();
            assert_eq!(err.flag, "--domain", "{bad}");
        }
    }

    #[test]
    fn project_names() {
        for ok in ["demo", "crew-operator", "a1"] {
            assert!(ProjectName::parse(ok).is_ok(), "{ok}");
        }
        let long = "a".repeat(70);
        for bad in ["My_Project", "../x", "a/b", "UPPER", "", "-a", "a.b", &long] {
            assert!(ProjectName::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(ProjectName::from_folder("Demo").unwrap().as_str(), "demo");
        let err = ProjectName::from_folder("My_Project").unwrap_err();
        assert!(
            err.to_string().contains("derived from the folder name"),
            "{err}"
        );
    }

    #[test]
    fn messages_stay_on_one_line() {
        let err = Domain::parse("a\nb").unwrap_err().to_string();
        assert!(!err.contains('\n'), "{err}");
        let err = Domain::parse(&"x".repeat(300)).unwrap_err().to_string();
        assert!(err.contains("(300 characters)"), "{err}");
    }

    #[test]
    fn dns1035() {
        assert!(is_dns1035_label("captain"));
        assert!(!is_dns1035_label("1captain"));
    }
}
