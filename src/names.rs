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

/// Rust keywords: a kind, group or version whose module name would be one cannot be used.
const RUST_KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
    "pub", "ref", "return", "self", "static", "struct", "super", "trait", "true", "type", "unsafe",
    "use", "where", "while", "abstract", "become", "box", "do", "final", "macro", "override",
    "priv", "try", "typeof", "unsized", "virtual", "yield",
];

/// An API group as typed (`crew`, `foo.policy`, `sea-creatures`); the full group is `<group>.<domain>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group(String);

impl Group {
    pub fn parse(value: &str, domain: &str) -> Result<Self, InvalidInput> {
        if value.is_empty() {
            return Err(InvalidInput::new(
                "--group",
                value,
                "must not be empty (for example --group cache)",
            ));
        }
        if !is_dns1123_subdomain(value) {
            return Err(InvalidInput::new("--group", value, DNS1123_SUBDOMAIN_RULE));
        }
        let qualified = format!("{value}.{domain}");
        if qualified.len() > 253 {
            return Err(InvalidInput::new(
                "--group",
                value,
                format!(
                    "with the domain, {qualified:?} is longer than the 253 characters of a DNS-1123 subdomain"
                ),
            ));
        }
        let group = Self(value.to_string());
        if RUST_KEYWORDS.contains(&group.module().as_str()) {
            return Err(InvalidInput::new(
                "--group",
                value,
                "is a Rust keyword and cannot name a module",
            ));
        }
        Ok(group)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The Rust module name in multigroup projects: `foo.policy` → `foo_policy`.
    pub fn module(&self) -> String {
        self.0.replace(['.', '-'], "_")
    }
}

/// An API version (`v1`, `v1alpha1`, `v2beta3`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version(String);

impl Version {
    /// CustomResourceDefinitions require version names to be DNS-1035 labels (the API server
    /// rejects `1.0` or `v1.2`), and the version names a Rust module, so `-` is refused too.
    pub fn parse(value: &str) -> Result<Self, InvalidInput> {
        if value.is_empty() {
            return Err(InvalidInput::new(
                "--version",
                value,
                "must not be empty (for example --version v1alpha1)",
            ));
        }
        if !is_dns1035_label(value) || value.contains('-') {
            return Err(InvalidInput::new(
                "--version",
                value,
                "must start with a lower-case letter and contain only lower-case letters and digits, \
                 like Kubernetes versions: v1, v1alpha1, v2beta3",
            ));
        }
        if RUST_KEYWORDS.contains(&value) {
            return Err(InvalidInput::new(
                "--version",
                value,
                "is a Rust keyword and cannot name a module",
            ));
        }
        Ok(Self(value.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A kind (`Captain`, `FirstMate`): PascalCase, because it names a Rust type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kind(String);

impl Kind {
    /// kubebuilder's rule (lower-cased it is a DNS-1035 label, first letter upper-case), narrowed
    /// to letters and digits because the kind is a Rust type name.
    pub fn parse(value: &str) -> Result<Self, InvalidInput> {
        if value.is_empty() {
            return Err(InvalidInput::new(
                "--kind",
                value,
                "must not be empty (for example --kind Memcached)",
            ));
        }
        if !value.starts_with(|c: char| c.is_ascii_uppercase()) {
            return Err(InvalidInput::new(
                "--kind",
                value,
                "must start with an upper-case letter (PascalCase, like Memcached)",
            ));
        }
        if !value.chars().all(|c| c.is_ascii_alphanumeric()) || value.len() > 63 {
            return Err(InvalidInput::new(
                "--kind",
                value,
                "must be PascalCase: an upper-case letter followed by letters and digits, at most 63 characters",
            ));
        }
        let kind = Self(value.to_string());
        if RUST_KEYWORDS.contains(&kind.snake().as_str()) {
            return Err(InvalidInput::new(
                "--kind",
                value,
                "its module name would be a Rust keyword; choose another kind",
            ));
        }
        Ok(kind)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// `FirstMate` → `firstmate`: Kubernetes' lower-case form (sample names, resource names).
    pub fn lower(&self) -> String {
        self.0.to_lowercase()
    }

    /// `FirstMate` → `first_mate`: the Rust module and file name.
    pub fn snake(&self) -> String {
        heck::ToSnakeCase::to_snake_case(self.0.as_str())
    }

    /// The default plural, in the spirit of kubebuilder's flect: `firstmates`, `policies`, `classes`.
    pub fn default_plural(&self) -> String {
        pluralize(&self.lower())
    }
}

/// English plural of a lower-case word, for resource names.
pub fn pluralize(word: &str) -> String {
    const IRREGULAR: &[(&str, &str)] = &[
        ("person", "people"),
        ("child", "children"),
        ("man", "men"),
        ("woman", "women"),
        ("mouse", "mice"),
        ("goose", "geese"),
        ("ox", "oxen"),
        ("leaf", "leaves"),
        ("knife", "knives"),
        ("life", "lives"),
        ("wife", "wives"),
        ("half", "halves"),
        ("datum", "data"),
        ("index", "indices"),
        ("matrix", "matrices"),
        ("vertex", "vertices"),
        ("criterion", "criteria"),
        ("schema", "schemas"),
        ("quiz", "quizzes"),
    ];
    const UNCHANGED: &[&str] = &[
        "data",
        "metadata",
        "info",
        "information",
        "equipment",
        "series",
        "species",
        "sheep",
        "fish",
        "deer",
        "endpoints",
    ];
    for (singular, plural) in IRREGULAR {
        // Short words only as whole words: "ox" must not turn "box" into "boxen".
        match word.strip_suffix(singular) {
            Some("") => return plural.to_string(),
            Some(stem) if singular.len() >= 5 => return format!("{stem}{plural}"),
            _ => {}
        }
    }
    if UNCHANGED.iter().any(|w| word.ends_with(w)) {
        return word.to_string();
    }
    let consonant_before = |suffix_len: usize| {
        word.len() > suffix_len
            && !"aeiou".contains(word.as_bytes()[word.len() - suffix_len - 1] as char)
    };
    if word.ends_with('y') && consonant_before(1) {
        format!("{}ies", &word[..word.len() - 1])
    } else if ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|s| word.ends_with(s))
    {
        format!("{word}es")
    } else {
        format!("{word}s")
    }
}

/// A resource's plural name (`--plural`): a DNS-1035 label.
pub fn parse_plural(value: &str) -> Result<String, InvalidInput> {
    if !is_dns1035_label(value) {
        return Err(InvalidInput::new(
            "--plural",
            value,
            "must be a DNS-1035 label: at most 63 lower-case letters, digits and '-', starting with a letter",
        ));
    }
    Ok(value.to_string())
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
    fn groups_versions_kinds() {
        for ok in ["crew", "foo.policy", "sea-creatures", "apps"] {
            assert!(Group::parse(ok, "example.com").is_ok(), "{ok}");
        }
        assert_eq!(
            Group::parse("foo.policy", "x.io").unwrap().module(),
            "foo_policy"
        );
        for bad in ["", "Crew", "a_b", "-a", "a..b", "../x", "type"] {
            assert_eq!(
                Group::parse(bad, "example.com").unwrap_err().flag,
                "--group",
                "{bad}"
            );
        }
        for ok in ["v1", "v1alpha1", "v2beta3"] {
            assert!(Version::parse(ok).is_ok(), "{ok}");
        }
        for bad in ["", "1", "V1", "v1.2", "v-1", "v1_2", "fn"] {
            assert_eq!(Version::parse(bad).unwrap_err().flag, "--version", "{bad}");
        }
        for ok in ["Captain", "FirstMate", "HealthCheckPolicy", "Memcached2"] {
            assert!(Kind::parse(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "captain",
            "First-Mate",
            "First_Mate",
            "9Lives",
            "Type",
            "Ka ren",
        ] {
            assert_eq!(Kind::parse(bad).unwrap_err().flag, "--kind", "{bad}");
        }
        let k = Kind::parse("FirstMate").unwrap();
        assert_eq!(
            (k.lower(), k.snake(), k.default_plural()),
            ("firstmate".into(), "first_mate".into(), "firstmates".into())
        );
    }

    #[test]
    fn plurals() {
        for (word, plural) in [
            ("captain", "captains"),
            ("policy", "policies"),
            ("healthcheckpolicy", "healthcheckpolicies"),
            ("day", "days"),
            ("class", "classes"),
            ("box", "boxes"),
            ("match", "matches"),
            ("memcached", "memcacheds"),
            ("kraken", "krakens"),
            ("salesperson", "salespeople"),
            ("admiral", "admirals"),
            ("bus", "buses"),
        ] {
            assert_eq!(pluralize(word), plural, "{word}");
        }
        assert!(parse_plural("admirales").is_ok());
        assert_eq!(parse_plural("Admirales").unwrap_err().flag, "--plural");
    }

    #[test]
    fn dns1035() {
        assert!(is_dns1035_label("captain"));
        assert!(!is_dns1035_label("1captain"));
    }
}
