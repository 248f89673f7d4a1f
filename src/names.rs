//! Validated names.
//!
//! Every name a user types ends up in file paths, Rust identifiers, YAML and Kubernetes object
//! names, so each one is a newtype whose constructor enforces the rule kubebuilder applies to
//! it (DNS-1123 subdomains and labels, DNS-1035 labels), narrowed where a wider name would give a
//! project that cannot build or deploy, and reports a failure as [`InvalidInput`]: the flag, the
//! value and the rule, on one line. The DNS rules alone already exclude path separators, `..`, white space, control
//! characters and template syntax, which is what keeps a name from escaping the project folder
//! or a template.
//!
//! The free-text values (`--owner`, the deploy-image plugin's command) are checked for where they
//! land by [`check_line_text`] and encoded by [`rust_str_literal`] (Rust) and
//! [`crate::project::yaml_str`] (YAML).

pub mod ident;

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::fmt;
use std::sync::LazyLock;

/// A rejected command-line value: which flag (or PROJECT key), what value, which rule it broke.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidInput {
    pub flag: Cow<'static, str>,
    pub value: String,
    pub rule: String,
}

impl InvalidInput {
    pub fn new(flag: impl Into<Cow<'static, str>>, value: &str, rule: impl Into<String>) -> Self {
        Self {
            flag: flag.into(),
            value: value.to_string(),
            rule: rule.into(),
        }
    }
}

/// A value as messages show it: quoted, with control and invisible characters escaped (so the
/// message stays on one line whatever was typed), and shortened when very long.
pub fn shown(value: &str) -> String {
    let count = value.chars().count();
    if count > 80 {
        let head: String = value.chars().take(60).collect();
        format!("{head:?}… ({count} characters)")
    } else {
        format!("{value:?}")
    }
}

impl fmt::Display for InvalidInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid value {} for {}: {}",
            shown(&self.value),
            self.flag,
            self.rule
        )
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

/// The longest domain: the leader-election Lease `<8 hex digits>.<domain>` is a DNS-1123
/// subdomain too.
pub const MAX_DOMAIN: usize = 253 - "01234567.".len();

/// The longest domain of a project with `--sharding`: the leader election ID,
/// `<8 hex digits>.<domain>`, names the sharding ring, and the ring's name is a label value (at
/// most 63 characters) on every replica's Lease; the manager refuses a longer one when it starts.
pub const MAX_SHARDED_DOMAIN: usize = 63 - "01234567.".len();

/// Whether a project of `domain` can shard: `Err` holds the rule broken, for the caller's message.
pub fn check_sharded_domain(domain: &str) -> Result<(), String> {
    if domain.len() <= MAX_SHARDED_DOMAIN {
        return Ok(());
    }
    Err(format!(
        "--sharding needs a domain of at most {MAX_SHARDED_DOMAIN} characters: the leader \
         election ID, <8 hex digits>.<domain>, names the sharding ring, a label value (at most 63 \
         characters) on every replica's Lease"
    ))
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
        if value.len() > MAX_DOMAIN {
            return Err(InvalidInput::new(
                "--domain",
                value,
                format!(
                    "must be at most {MAX_DOMAIN} characters: the manager's leader-election Lease \
                     is named <8 hex digits>.<domain>, and API groups <group>.<domain>, both at most 253"
                ),
            ));
        }
        Ok(Self(value.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The longest name a project may have. kustomize prefixes `<name>-` to every object of
/// `config/default`, and the longest prefixed name that must stay a DNS-1035 label (63
/// characters) is the Service `controller-manager-metrics-service` (a test checks the templates).
pub const MAX_PROJECT_NAME: usize = 63 - "-controller-manager-metrics-service".len();

/// The project's name (`--project-name`): Cargo package name, kustomize name prefix, namespace
/// `<name>-system` and the value of the `app.kubernetes.io/name` label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectName(String);

impl ProjectName {
    pub fn parse(value: &str) -> Result<Self, InvalidInput> {
        Self::check(value).map_err(|rule| InvalidInput::new("--project-name", value, rule))?;
        Ok(Self(value.to_string()))
    }

    /// The rule `value` breaks, if any.
    fn check(value: &str) -> Result<(), String> {
        if value.is_empty() {
            return Err("must not be empty".into());
        }
        if !is_dns1123_label(value) {
            return Err(DNS1123_LABEL_RULE.into());
        }
        if !value.starts_with(|c: char| c.is_ascii_lowercase()) {
            return Err(
                "must start with a letter: it is the Cargo package name, which cannot \
                        start with a digit, and begins the names of the project's Services"
                    .into(),
            );
        }
        if value.len() > MAX_PROJECT_NAME {
            return Err(format!(
                "must be at most {MAX_PROJECT_NAME} characters: kustomize prefixes it to the \
                 Service controller-manager-metrics-service, whose name must not exceed 63"
            ));
        }
        let crate_name = value.replace('-', "_");
        if RUST_KEYWORDS.contains(&crate_name.as_str()) {
            return Err(format!(
                "its crate name {crate_name:?} is a Rust keyword, which cannot name a crate"
            ));
        }
        if is_crate_name(&crate_name) {
            return Err(format!(
                "its crate name {crate_name:?} is the name of a crate that the generated project \
                 uses, and the two would clash"
            ));
        }
        if is_yaml_ambiguous(value) {
            return Err(YAML_WORD_RULE.into());
        }
        Ok(())
    }

    /// The default name: the folder's name, lower-cased (as kubebuilder does). When that is
    /// not a valid name the error says where it came from, and suggests a name to pass to
    /// `--project-name`.
    pub fn from_folder(folder: &str) -> Result<Self, InvalidInput> {
        let lowered = folder.to_lowercase();
        Self::check(&lowered).map_err(|rule| {
            let example = match suggest_project_name(&lowered) {
                Some(name) => format!("--project-name {name}"),
                None => "--project-name <name>".to_string(),
            };
            InvalidInput::new(
                "--project-name",
                &lowered,
                format!("{rule} (derived from the folder name; pass a valid name, e.g. {example})"),
            )
        })?;
        Ok(Self(lowered))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A valid project name close to `wanted`: letters and digits kept, everything else a `-`.
fn suggest_project_name(wanted: &str) -> Option<String> {
    let mut name = String::new();
    for c in wanted.chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            name.push(c);
        } else if !name.ends_with('-') && !name.is_empty() {
            name.push('-');
        }
    }
    let mut name = name.trim_matches('-').to_string();
    if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        name = format!("my-{name}");
    }
    if ProjectName::check(&name).is_err() {
        name = format!("{name}-operator");
    }
    name.truncate(MAX_PROJECT_NAME);
    let name = name.trim_end_matches('-').to_string();
    ProjectName::check(&name).is_ok().then_some(name)
}

/// Rust keywords (strict, reserved and 2024's `gen`): no module or crate can have these names.
const RUST_KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
    "pub", "ref", "return", "self", "static", "struct", "super", "trait", "true", "type", "unsafe",
    "use", "where", "while", "abstract", "become", "box", "do", "final", "macro", "override",
    "priv", "try", "typeof", "unsized", "virtual", "yield",
];

/// Rust's primitive types: a module of that name would shadow the type where it is declared.
const RUST_PRIMITIVES: &[&str] = &[
    "bool", "char", "str", "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64",
    "i128", "isize", "f16", "f32", "f64", "f128",
];

/// Crates every Rust program can name.
const STD_CRATES: &[&str] = &["std", "core", "alloc", "proc_macro", "test"];

/// Modules declared next to the ones operator-rs adds: tests/e2e/main.rs has `mod manager;` and
/// `use operator_rs_testing::e2e;` beside one module per deploy-image kind.
const SIBLING_MODULES: &[&str] = &["manager", "e2e"];

/// The manifests of the generated project and of operator-rs's crates in it: their dependencies
/// are the crates its code names, so no module or crate of the project may take those names.
const PROJECT_MANIFESTS: [&str; 3] = [
    include_str!("../templates/init/Cargo.toml.in"),
    include_str!("../embedded-runtime/Cargo.toml.in"),
    include_str!("../embedded-testing/Cargo.toml.in"),
];

/// Crate names (`-` as `_`) of operator-rs's crates and of every dependency in
/// [`PROJECT_MANIFESTS`].
static DEPENDENCY_CRATES: LazyLock<BTreeSet<String>> = LazyLock::new(|| {
    let mut names = BTreeSet::from([
        "operator_rs_runtime".to_string(),
        "operator_rs_testing".to_string(),
    ]);
    for manifest in PROJECT_MANIFESTS {
        let Ok(doc) = manifest.parse::<toml_edit::DocumentMut>() else {
            continue;
        };
        for table in ["dependencies", "dev-dependencies", "build-dependencies"] {
            if let Some(deps) = doc.get(table).and_then(|t| t.as_table_like()) {
                names.extend(deps.iter().map(|(name, _)| name.replace('-', "_")));
            }
        }
    }
    names
});

/// Whether `name` is the name of a crate that the generated code can refer to.
fn is_crate_name(name: &str) -> bool {
    STD_CRATES.contains(&name) || DEPENDENCY_CRATES.contains(name)
}

/// Why `module` cannot name a module of the generated project, if it cannot.
pub fn reserved_module(module: &str) -> Option<&'static str> {
    if RUST_KEYWORDS.contains(&module) {
        Some("is a Rust keyword")
    } else if RUST_PRIMITIVES.contains(&module) {
        Some("is a Rust primitive type")
    } else if is_crate_name(module) {
        Some("is the name of a crate that the generated code uses")
    } else if SIBLING_MODULES.contains(&module) {
        Some("is a module that the generated project already has")
    } else {
        None
    }
}

const YAML_WORD_RULE: &str = "reads as a boolean or null in YAML (y, yes, n, no, on, off, true, \
                              false, null, in any case), where it is written unquoted";

/// Words that YAML 1.1 readers (kubectl, kustomize, Go) read as booleans or null: a name that
/// lands in YAML on its own must not be one of them.
pub fn is_yaml_ambiguous(value: &str) -> bool {
    matches!(
        value.to_ascii_lowercase().as_str(),
        "y" | "yes" | "n" | "no" | "true" | "false" | "on" | "off" | "null" | "~"
    )
}

/// An API group as typed (`crew`, `foo.policy`, `sea-creatures`); the full group is `<group>.<domain>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group(String);

impl Group {
    pub fn parse(value: &str, domain: &str) -> Result<Self, InvalidInput> {
        let group = Self::parse_foreign(value, domain)?;
        if RUST_KEYWORDS.contains(&group.module().as_str()) {
            return Err(InvalidInput::new(
                "--group",
                value,
                "is a Rust keyword and cannot name a module",
            ));
        }
        Ok(group)
    }

    /// The group of another project's kind: Kubernetes' rules only, as its Rust module is
    /// derived from the whole group (see `crate::external::group_module`).
    pub fn parse_foreign(value: &str, domain: &str) -> Result<Self, InvalidInput> {
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
        Ok(Self(value.to_string()))
    }

    /// In a multigroup project the group names Rust modules (`src/api/<group>/`): refuses groups
    /// whose module name would not be a valid, free module name (`3d`, `kube`).
    pub fn check_module(&self) -> Result<(), InvalidInput> {
        let module = self.module();
        let rule = if module.starts_with(|c: char| c.is_ascii_digit()) {
            format!(
                "in a multigroup project the group names a Rust module, which cannot start with \
                 a digit (`pub mod {module};`); choose a group that starts with a letter"
            )
        } else if let Some(reason) = reserved_module(&module) {
            format!(
                "in a multigroup project the group names the Rust module {module:?}, which \
                 {reason}; choose another group"
            )
        } else {
            return Ok(());
        };
        Err(InvalidInput::new("--group", &self.0, rule))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The Rust module name in multigroup projects: `foo.policy` → `foo_policy`.
    pub fn module(&self) -> String {
        self.0.replace(['.', '-'], "_")
    }
}

/// A controller's name (`--controller-name`): a DNS-1123 label, as it is the controller's name
/// in metrics, logs and Events, its field manager, and (in snake case) a Rust module.
pub fn parse_controller_name(value: &str) -> Result<String, InvalidInput> {
    if !is_dns1123_label(value) {
        return Err(InvalidInput::new(
            "--controller-name",
            value,
            DNS1123_LABEL_RULE,
        ));
    }
    if value.starts_with(|c: char| c.is_ascii_digit()) {
        return Err(InvalidInput::new(
            "--controller-name",
            value,
            "must start with a letter: it names a Rust module",
        ));
    }
    let module = value.replace('-', "_");
    if let Some(reason) = reserved_module(&module) {
        return Err(InvalidInput::new(
            "--controller-name",
            value,
            format!("names the Rust module {module:?}, which {reason}"),
        ));
    }
    Ok(value.to_string())
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
        if let Some(reason) = reserved_module(value) {
            return Err(InvalidInput::new(
                "--version",
                value,
                format!("names a Rust module, and {value:?} {reason}; choose another version"),
            ));
        }
        Ok(Self(value.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The longest kind: Kubernetes requires the lower-cased list kind, `<Kind>List`, to be a
/// DNS-1035 label of at most 63 characters.
pub const MAX_KIND: usize = 63 - "List".len();

/// A kind (`Captain`, `FirstMate`): PascalCase, because it names a Rust type. A kind of another
/// project keeps the name its CRD gives it (`postgresql`) and gets a Rust type name derived from
/// it (see [`Kind::parse_foreign`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kind {
    /// The kind as Kubernetes has it: in `kind:` of objects and in PROJECT.
    name: String,
    /// Its Rust type: the name itself for a kind of the project's own.
    type_name: String,
    /// Its Rust module and file name: `first_mate`.
    module: String,
}

impl Kind {
    /// kubebuilder's rule (lower-cased it is a DNS-1035 label, first letter upper-case), narrowed
    /// to letters and digits because the kind is a Rust type name.
    pub fn parse(value: &str) -> Result<Self, InvalidInput> {
        let invalid = |rule: String| InvalidInput::new("--kind", value, rule);
        if value.is_empty() {
            return Err(invalid(
                "must not be empty (for example --kind Memcached)".into(),
            ));
        }
        if !value.starts_with(|c: char| c.is_ascii_uppercase()) {
            return Err(invalid(
                "must start with an upper-case letter (PascalCase, like Memcached)".into(),
            ));
        }
        if !value.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(invalid(
                "must be PascalCase: an upper-case letter followed by letters and digits".into(),
            ));
        }
        if value.len() > MAX_KIND {
            return Err(invalid(format!(
                "must be at most {MAX_KIND} characters: Kubernetes limits the list kind, \
                 {value}List, to 63"
            )));
        }
        if is_yaml_ambiguous(value) {
            return Err(invalid(YAML_WORD_RULE.into()));
        }
        let kind = Self {
            name: value.to_string(),
            type_name: value.to_string(),
            module: heck::ToSnakeCase::to_snake_case(value),
        };
        if let Some(reason) = reserved_module(&kind.module) {
            return Err(invalid(format!(
                "its Rust module name {:?} {reason}; choose another kind",
                kind.module
            )));
        }
        Ok(kind)
    }

    /// A kind of another project, as its CRD names it: only Kubernetes' rule applies (lower-cased,
    /// the kind and its list kind are DNS-1035 labels), not ours, because the name is not ours to
    /// choose. Zalando's `postgresql` is one. The Rust type name is the kind in PascalCase
    /// (`Postgresql`), with `Kind` appended when that is a keyword or one of `taken` (the names
    /// the generated code imports, for one); the module name is its snake_case, with `_kind`
    /// appended when that cannot name a module.
    pub fn parse_foreign(value: &str, taken: &[&str]) -> Result<Self, InvalidInput> {
        let invalid = |rule: &str| InvalidInput::new("--kind", value, rule);
        let lower = value.to_ascii_lowercase();
        if !value.is_ascii() || !is_dns1035_label(&lower) || lower.len() > MAX_KIND {
            return Err(invalid(
                "must be a Kubernetes kind: lower-cased, a DNS-1035 label of at most 59 characters \
                 (letters, digits and '-', starting with a letter), as the kind's CRD has it",
            ));
        }
        if is_yaml_ambiguous(value) {
            return Err(invalid(YAML_WORD_RULE));
        }
        let pascal = value.starts_with(|c: char| c.is_ascii_uppercase())
            && value.chars().all(|c| c.is_ascii_alphanumeric());
        let stem = if pascal {
            value.to_string()
        } else {
            ident::pascal_stem(value)
        };
        let clashes = |name: &str| {
            ident::is_keyword(name)
                || [
                    name.to_string(),
                    format!("{name}Spec"),
                    format!("{name}Status"),
                    format!("{name}List"),
                ]
                .iter()
                .any(|n| taken.contains(&n.as_str()))
        };
        let type_name = std::iter::once(stem.clone())
            .chain(std::iter::once(format!("{stem}Kind")))
            .chain((2..).map(|n| format!("{stem}Kind{n}")))
            .find(|name| !clashes(name))
            .expect("some name is free");
        let snake = heck::ToSnakeCase::to_snake_case(type_name.as_str());
        let module = if reserved_module(&snake).is_some() {
            format!("{snake}_kind")
        } else {
            snake
        };
        Ok(Self {
            name: value.to_string(),
            type_name,
            module,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.name
    }

    /// The Rust type of the kind: the kind itself, or the name derived from a foreign kind's.
    pub fn type_name(&self) -> &str {
        &self.type_name
    }

    /// `FirstMate` → `firstmate`: Kubernetes' lower-case form (sample names, resource names).
    pub fn lower(&self) -> String {
        self.name.to_lowercase()
    }

    /// `FirstMate` → `first_mate`: the Rust module and file name.
    pub fn snake(&self) -> String {
        self.module.clone()
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
    if is_yaml_ambiguous(value) {
        return Err(InvalidInput::new("--plural", value, YAML_WORD_RULE));
    }
    Ok(value.to_string())
}

/// Why `text` cannot be written into a comment or a line of text of a generated file, if it
/// cannot: line breaks and other control characters, bidirectional-text controls (which rustc
/// refuses even in comments: they can make code read differently from what it does),
/// invisible formatting characters, and white space other than the plain space.
pub fn check_line_text(text: &str) -> Result<(), String> {
    for c in text.chars() {
        let problem =
            if c == '\n' || c == '\r' || c == '\u{85}' || c == '\u{2028}' || c == '\u{2029}' {
                "a line break"
            } else if c.is_control() {
                "a control character"
            } else if is_bidi_control(c) {
                "a bidirectional-text control, which rustc refuses in source files"
            } else if is_format_char(c) {
                "an invisible formatting character"
            } else if c.is_whitespace() && c != ' ' {
                "white space other than a plain space"
            } else {
                continue;
            };
        return Err(format!(
            "must be one line of visible text, but has {problem} (U+{:04X})",
            u32::from(c)
        ));
    }
    Ok(())
}

/// Unicode's bidirectional-text controls (rustc's `text_direction_codepoint_in_comment` and
/// `..._in_literal` lints refuse them).
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{61C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Unicode's format characters (general category Cf): invisible, and some reorder text.
pub fn is_format_char(c: char) -> bool {
    matches!(c,
        '\u{AD}'
        | '\u{600}'..='\u{605}'
        | '\u{61C}'
        | '\u{6DD}'
        | '\u{70F}'
        | '\u{890}'..='\u{891}'
        | '\u{8E2}'
        | '\u{180E}'
        | '\u{200B}'..='\u{200F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{206F}'
        | '\u{FEFF}'
        | '\u{FFF9}'..='\u{FFFB}'
        | '\u{110BD}'
        | '\u{110CD}'
        | '\u{13430}'..='\u{1343F}'
        | '\u{1BCA0}'..='\u{1BCA3}'
        | '\u{1D173}'..='\u{1D17A}'
        | '\u{E0001}'
        | '\u{E0020}'..='\u{E007F}')
}

/// `text` as a Rust string literal, quotes included, in plain ASCII: every other character is
/// escaped (`\u{a0}`), so that the literal means `text` exactly, whatever it holds, and no
/// invisible or bidirectional character reaches the source file.
pub fn rust_str_literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            ' '..='~' => out.push(c),
            _ => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
        }
    }
    out.push('"');
    out
}

/// A webhook path (`--defaulting-path`, `--validation-path`, and as PROJECT records it): served by
/// the manager and written into the webhook configurations, so an absolute URL path of plain
/// segments.
pub fn check_webhook_path(flag: &'static str, value: &str) -> Result<(), InvalidInput> {
    let valid = value.starts_with('/')
        && value.len() > 1
        && !value.contains("//")
        && !value
            .split('/')
            .any(|segment| segment == "." || segment == "..")
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c));
    if valid {
        Ok(())
    } else {
        Err(InvalidInput::new(
            flag,
            value,
            "must be an absolute URL path of letters, digits, '-', '_', '.' and '/', like /mutate-captain",
        ))
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
        let long = format!(
            "{}.{}.{}.{}",
            "a".repeat(63),
            "b".repeat(63),
            "c".repeat(63),
            "d".repeat(60)
        );
        assert!(Domain::parse(&long).unwrap_err().rule.contains("Lease"));
        assert!(Domain::parse(&long[..MAX_DOMAIN]).is_ok());
    }

    /// Another project's kind keeps its name; its Rust type and module are derived safely.
    #[test]
    fn foreign_kinds() {
        let kind = |value: &str| {
            let k = Kind::parse_foreign(value, &["Deployment", "ContextSpec"]).unwrap();
            (k.as_str().to_string(), k.type_name().to_string(), k.snake())
        };
        let own = |a: &str, b: &str, c: &str| (a.to_string(), b.to_string(), c.to_string());
        assert_eq!(
            kind("postgresql"),
            own("postgresql", "Postgresql", "postgresql")
        );
        assert_eq!(
            kind("HTTPRoute"),
            own("HTTPRoute", "HTTPRoute", "http_route")
        );
        assert_eq!(kind("my-kind"), own("my-kind", "MyKind", "my_kind"));
        assert_eq!(
            kind("Deployment"),
            own("Deployment", "DeploymentKind", "deployment_kind")
        );
        assert_eq!(
            kind("Context"),
            own("Context", "ContextKind", "context_kind")
        );
        assert_eq!(kind("Self"), own("Self", "SelfKind", "self_kind"));
        assert_eq!(kind("Type"), own("Type", "Type", "type_kind"));
        assert_eq!(kind("Kube"), own("Kube", "Kube", "kube_kind"));
        for bad in ["", "9lives", "a_b", "a.b", "é", &"A".repeat(60), "Yes"] {
            assert!(Kind::parse_foreign(bad, &[]).is_err(), "{bad}");
        }
        // The project's own kinds and groups are not so lenient.
        assert!(Kind::parse("postgresql").is_err());
        assert!(Group::parse("box", "com").is_err());
        assert!(Group::parse_foreign("box", "com").is_ok());
        assert_eq!(Kind::parse("FirstMate").unwrap().type_name(), "FirstMate");
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
    fn project_names_that_would_not_build_or_deploy() {
        for (bad, rule) in [
            ("3d-printer", "start with a letter"),
            ("a".repeat(MAX_PROJECT_NAME + 1).as_str(), "at most"),
            ("fn", "Rust keyword"),
            ("kube", "crate"),
            ("serde-json", "crate"),
            ("operator-rs-runtime", "crate"),
            ("operator-rs-testing", "crate"),
            ("kube-cel", "crate"),
            ("std", "crate"),
            ("yes", "YAML"),
            ("off", "YAML"),
        ] {
            let err = ProjectName::parse(bad).unwrap_err().to_string();
            assert!(err.contains(rule), "{bad}: {err}");
        }
        assert!(ProjectName::parse(&"a".repeat(MAX_PROJECT_NAME)).is_ok());
        for (folder, suggestion) in [
            ("My_Project", "--project-name my-project"),
            ("3D Printer", "--project-name my-3d-printer"),
            ("Kube", "--project-name kube-operator"),
        ] {
            let err = ProjectName::from_folder(folder).unwrap_err().to_string();
            assert!(err.contains(suggestion), "{folder}: {err}");
            let name = suggestion.trim_start_matches("--project-name ");
            assert!(ProjectName::parse(name).is_ok(), "{name}");
        }
    }

    /// The longest project name keeps every prefixed Service name a DNS-1035 label.
    #[test]
    fn the_longest_project_name_fits_every_service() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("templates");
        let mut longest = 0;
        for entry in walkdir::WalkDir::new(root) {
            let entry = entry.unwrap();
            let is_yaml = entry.path().extension().is_some_and(|e| e == "yaml");
            let Ok(text) = std::fs::read_to_string(entry.path()) else {
                continue;
            };
            if !is_yaml || !text.lines().any(|l| l == "kind: Service") {
                continue;
            }
            let name = text
                .lines()
                .find_map(|l| l.strip_prefix("  name: "))
                .expect("a Service has a name");
            longest = longest.max(name.len());
        }
        assert_eq!(MAX_PROJECT_NAME + 1 + longest, 63);
    }

    #[test]
    fn module_names_must_be_free() {
        for (bad, why) in [("3d", "digit"), ("kube", "crate"), ("tokio", "crate")] {
            let group = Group::parse(bad, "example.com").unwrap();
            let err = group.check_module().unwrap_err().to_string();
            assert!(err.contains(why) && err.contains("--group"), "{err}");
        }
        assert!(
            Group::parse("3d", "example.com").is_ok(),
            "fine in one group"
        );
        assert!(Group::parse("ship", "x.io").unwrap().check_module().is_ok());
        for bad in ["u8", "str", "kube", "std", "serde", "tokio", "e2e"] {
            assert!(Version::parse(bad).is_err(), "{bad}");
        }
        for bad in [
            "Kube",
            "Tokio",
            "Std",
            "Str",
            "U8",
            "Manager",
            "E2e",
            "SerdeJson",
            "Self",
        ] {
            assert_eq!(Kind::parse(bad).unwrap_err().flag, "--kind", "{bad}");
        }
        for bad in ["Yes", "No", "ON", "Off", "True", "Null", "Y", "N"] {
            let err = Kind::parse(bad).unwrap_err().to_string();
            assert!(err.contains("YAML"), "{err}");
        }
        assert!(Kind::parse(&format!("K{}", "a".repeat(MAX_KIND - 1))).is_ok());
        let err = Kind::parse(&format!("K{}", "a".repeat(MAX_KIND))).unwrap_err();
        assert!(err.rule.contains("List"), "{err}");
        for bad in ["yes", "no", "on", "null", "true", "y"] {
            assert!(parse_plural(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn one_line_of_visible_text() {
        for ok in [
            "Acme Corp.",
            "Zoë Müller GmbH",
            "株式会社アクメ",
            "O'Brien & \"Sons\" <a@b.c>",
            "",
        ] {
            assert_eq!(check_line_text(ok), Ok(()), "{ok}");
        }
        for (bad, why) in [
            ("a\nb", "line break"),
            ("a\u{2028}b", "line break"),
            ("a\u{85}b", "line break"),
            ("a\tb", "control"),
            ("a\u{1b}[31m", "control"),
            ("a\u{202e}b", "bidirectional"),
            ("a\u{2066}b", "bidirectional"),
            ("a\u{200b}b", "invisible"),
            ("\u{feff}a", "invisible"),
            ("a\u{a0}b", "white space"),
            ("a\u{3000}b", "white space"),
        ] {
            let err = check_line_text(bad).unwrap_err();
            assert!(err.contains(why) && err.contains("U+"), "{bad:?}: {err}");
        }
    }

    #[test]
    fn rust_literals_are_ascii_and_exact() {
        assert_eq!(rust_str_literal("memcached"), "\"memcached\"");
        assert_eq!(
            rust_str_literal("echo caf\u{e9}\u{a0}: \"ok\"\\\n"),
            "\"echo caf\\u{e9}\\u{a0}: \\\"ok\\\"\\\\\\n\""
        );
        assert_eq!(
            rust_str_literal("\u{202e}\u{1F600}"),
            "\"\\u{202e}\\u{1f600}\""
        );
    }

    #[test]
    fn dns1035() {
        assert!(is_dns1035_label("captain"));
        assert!(!is_dns1035_label("1captain"));
    }
}
