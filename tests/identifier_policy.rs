//! The identifier policy (src/names/ident.rs) at every site: every template variable that ends
//! up in an identifier position of the generated code (a module, a file or folder name, a type, a
//! field, a constant, a path) is fed hostile values through the commands that fill it, and each
//! command either refuses with one line and the tree unchanged, or writes a tree whose every
//! declared name is one Rust takes where it is: no keyword (strict, reserved or of 2024), no
//! module named like a crate the project uses or like the module it is in (without clippy's
//! module_inception allowed), no type named like one the generated code imports or Rust's
//! prelude has, names in Rust's case, none declared twice.
//!
//! The first test finds the variables: it scans the templates for `{{ … }}` in file names and in
//! Rust code (not in strings or comments), and fails when one is not in [`SITES`], the table that
//! says which inputs fill it (and so which hostile values the second test must feed).

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use operator_rs::names::ident::is_keyword;
use operator_rs::names::reserved::RESERVED_TYPES;
use operator_rs::names::reserved_module;
use support::{folder, operator_rs, run_ok, tree};
use syn::visit::Visit;

/// What fills a template variable that lands in an identifier position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Source {
    /// `--kind`: the project's own, a built-in kind, or an external kind as its CRD names it.
    Kind,
    /// `--group` (the project's own, a built-in group, or an external kind's).
    Group,
    /// `--version`, and `--spoke` for conversions.
    Version,
    /// `--controller-name`.
    ControllerName,
    /// `--project-name` (the crate's name).
    ProjectName,
    /// Code the OpenAPI mapping wrote from a CRD's schema (its field names and enum values):
    /// fed hostile schemas here through external kinds, and by tests/openapi_properties.rs.
    Schema,
    /// Not a name: a license header, a number, a JSON literal, a module path built from the
    /// names above.
    NotAName,
}

/// Every variable in an identifier position of a template, and what fills it.
const SITES: &[(&str, Source)] = &[
    ("kind", Source::Kind),
    ("kind_snake", Source::Kind),
    ("kind_lower", Source::Kind),
    ("version", Source::Version),
    ("spoke", Source::Version),
    ("group", Source::Group),
    ("group_module", Source::Group),
    ("api_dir", Source::Group),
    ("api_module", Source::Group),
    ("api_path", Source::Group),
    ("rust_module", Source::Group),
    ("rust_type", Source::Kind),
    ("spoke_api_module", Source::Version),
    ("webhook_dir", Source::Group),
    ("controller_path", Source::ControllerName),
    ("controller_module", Source::ControllerName),
    ("controller_name", Source::ControllerName),
    ("e2e_module", Source::Kind),
    ("crate_name", Source::ProjectName),
    ("project_name", Source::ProjectName),
    ("external_items", Source::Schema),
    ("external_imports", Source::Schema),
    ("external_example", Source::NotAName),
    ("rust_header", Source::NotAName),
    ("container_port", Source::NotAName),
    ("run_as_user", Source::NotAName),
    ("plural", Source::Kind),
    ("qualified_group", Source::Group),
    // File names of YAML: the group and the kind, as Kubernetes names them.
    ("crd_patch_name", Source::Group),
    ("rbac_prefix", Source::Kind),
    // deploy-image's container arguments (string literals a loop writes) and a flag.
    ("arg", Source::NotAName),
    ("namespaced", Source::NotAName),
];

/// The `{{ … }}` variables of `text` outside Rust string literals and comments.
fn variables_in_code(text: &str) -> BTreeSet<String> {
    let bytes = text.as_bytes();
    let mut found = BTreeSet::new();
    let mut i = 0;
    while i < bytes.len() {
        let rest = &text[i..];
        if let Some(inside) = rest.strip_prefix("{{") {
            let name: String = inside
                .trim_start()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                found.insert(name);
            }
            i += 2;
        } else if rest.starts_with("{%") || rest.starts_with("{#") {
            let close = if rest.starts_with("{%") { "%}" } else { "#}" };
            i += rest.find(close).map_or(rest.len(), |e| e + 2);
        } else if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("r#\"") || rest.starts_with("r\"") {
            let hashes = rest[1..].chars().take_while(|c| *c == '#').count();
            let end = format!("\"{}", "#".repeat(hashes));
            let body = 2 + hashes;
            i += body
                + rest[body..]
                    .find(&end)
                    .map_or(rest.len() - body, |e| e + end.len());
        } else if rest.starts_with('"') {
            let mut j = 1;
            while j < rest.len() && !rest[j..].starts_with('"') {
                j += if rest[j..].starts_with('\\') { 2 } else { 1 };
            }
            i += j + 1;
        } else {
            i += rest.chars().next().map_or(1, char::len_utf8);
        }
    }
    found
}

/// Every variable of the templates in an identifier position: in a file or folder name, or in
/// Rust code.
fn template_variables() -> BTreeMap<String, Vec<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("templates");
    let mut found: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for entry in walkdir::WalkDir::new(&root) {
        let entry = entry.unwrap();
        if !entry.file_type().is_file() {
            continue;
        }
        let relative = entry
            .path()
            .strip_prefix(&root)
            .unwrap()
            .display()
            .to_string();
        let mut names = variables_in_code(&relative);
        if relative.ends_with(".rs") || relative.ends_with(".rs.in") {
            let text = std::fs::read_to_string(entry.path()).unwrap();
            names.extend(variables_in_code(&text));
        }
        for name in names {
            found.entry(name).or_default().push(relative.clone());
        }
    }
    found
}

#[test]
fn every_variable_in_an_identifier_position_is_known() {
    let found = template_variables();
    assert!(found.contains_key("kind_snake") && found.contains_key("controller_path"));
    let unknown: Vec<String> = found
        .iter()
        .filter(|(name, _)| !SITES.iter().any(|(site, _)| site == name))
        .map(|(name, files)| format!("{name} (in {})", files.join(", ")))
        .collect();
    assert!(
        unknown.is_empty(),
        "template variables in identifier positions that SITES does not cover (add each with \
         its source, and feed that source hostile values below): {unknown:#?}"
    );
}

/// Names as Rust sees them: every keyword (strict, reserved, weak, 2024's), in the cases a kind
/// (PascalCase) and a module (snake_case) take, names of the prelude and of what the generated
/// code imports, names of its modules and crates.
const KEYWORDS: &[&str] = &[
    "as",
    "async",
    "await",
    "break",
    "const",
    "continue",
    "crate",
    "dyn",
    "else",
    "enum",
    "extern",
    "false",
    "fn",
    "for",
    "gen",
    "if",
    "impl",
    "in",
    "let",
    "loop",
    "match",
    "mod",
    "move",
    "mut",
    "pub",
    "ref",
    "return",
    "self",
    "static",
    "struct",
    "super",
    "trait",
    "true",
    "type",
    "unsafe",
    "use",
    "where",
    "while",
    "abstract",
    "become",
    "box",
    "do",
    "final",
    "macro",
    "override",
    "priv",
    "try",
    "typeof",
    "unsized",
    "virtual",
    "yield",
    "union",
    "raw",
    "safe",
    "auto",
    "default",
    "macro_rules",
];

fn pascal(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
        .replace('_', "")
}

/// Hostile kinds: every keyword as a kind (`Self`, `Type`, `Fn` …) in the single-group layout,
/// and those that cannot be raw identifiers and a few others in the multi-group one (whose
/// modules differ by a level of groups, not in how a name becomes one); in both, prelude and
/// imported type names, names of the project's modules and crates, a kind named like its
/// version or group.
fn hostile_kinds(multigroup: bool) -> Vec<String> {
    let keywords = KEYWORDS.iter().filter(|k| {
        !multigroup
            || [
                "self", "crate", "super", "type", "mod", "box", "gen", "async",
            ]
            .contains(k)
    });
    let mut kinds: Vec<String> = keywords.map(|k| pascal(k)).collect();
    kinds.extend(
        [
            "Self", "Box", "Option", "Result", "String", "Vec", "Ok", "Err", "Some",
        ]
        .map(String::from),
    );
    kinds.extend(
        [
            "Condition",
            "Context",
            "Api",
            "Controller",
            "Webhook",
            "External",
            "Manager",
            "Kube",
            "Serde",
            "Std",
            "Core",
            "V1",
            "Crew",
            "E2e",
            "Tests",
            "Lib",
            "Main",
            "Mod",
        ]
        .map(String::from),
    );
    kinds.extend(["Café", "9Lives", "A", "ABC", "HTTPRoute", "MyKind"].map(String::from));
    kinds
}

/// The declared names of a generated tree that break the policy; `baseline`: names the same
/// commands declare with neutral inputs (the templates' own).
fn problems(dir: &Path, baseline: &BTreeSet<String>) -> Vec<String> {
    let mut out = Vec::new();
    let files = tree(dir);
    let crates = crates_named(&files);
    for (path, bytes) in files {
        if path == "Cargo.toml" {
            crate_name(&String::from_utf8_lossy(&bytes), &crates, &mut out);
        }
        // operator-rs's own crates, copied in: not written from the inputs.
        if path.starts_with("operator-rs-") || path.starts_with("target/") {
            continue;
        }
        if let Some(rust) = path.strip_suffix(".rs")
            && path.starts_with("src/")
        {
            for segment in rust.split('/').skip(1) {
                if segment != "mod" && segment != "lib" && segment != "main" {
                    module_name(segment, &path, (baseline, &crates), &mut out);
                }
            }
        }
        if !path.ends_with(".rs") {
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        let file = match syn::parse_file(&text) {
            Ok(file) => file,
            Err(e) => {
                out.push(format!("{path}: does not parse: {e}"));
                continue;
            }
        };
        let parent = path
            .trim_end_matches(".rs")
            .trim_end_matches("/mod")
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .to_string();
        let mut names = Names {
            path: &path,
            parent: vec![parent],
            baseline,
            crates: &crates,
            out: &mut out,
        };
        names.visit_file(&file);
    }
    out
}

/// The crates the generated code can name: Rust's own and the dependencies of the project's
/// manifests, `-` as `_`.
fn crates_named(files: &support::Tree) -> BTreeSet<String> {
    let mut crates: BTreeSet<String> = ["std", "core", "alloc", "proc_macro", "test"]
        .map(String::from)
        .into();
    for (path, bytes) in files {
        if !path.ends_with("Cargo.toml") {
            continue;
        }
        let Ok(doc) = String::from_utf8_lossy(bytes).parse::<toml_edit::DocumentMut>() else {
            continue;
        };
        for table in ["dependencies", "dev-dependencies", "build-dependencies"] {
            if let Some(deps) = doc.get(table).and_then(|t| t.as_table_like()) {
                crates.extend(deps.iter().map(|(name, _)| name.replace('-', "_")));
            }
        }
    }
    crates
}

/// The crate's name (its package's, `-` as `_`) must be no keyword and no crate's it depends on.
fn crate_name(manifest: &str, crates: &BTreeSet<String>, out: &mut Vec<String>) {
    let Ok(doc) = manifest.parse::<toml_edit::DocumentMut>() else {
        out.push("Cargo.toml does not parse".into());
        return;
    };
    let Some(name) = doc["package"]["name"].as_str() else {
        out.push("Cargo.toml names no package".into());
        return;
    };
    let name = name.replace('-', "_");
    if is_keyword(&name) || crates.contains(&name) {
        out.push(format!(
            "Cargo.toml: crate {name} is a keyword or a crate the code names"
        ));
    }
}

/// A module's name: an identifier in snake_case, no crate's the code names, none
/// [`reserved_module`] keeps modules clear of.
fn module_name(
    name: &str,
    at: &str,
    (baseline, crates): (&BTreeSet<String>, &BTreeSet<String>),
    out: &mut Vec<String>,
) {
    let name = name.trim_start_matches("r#");
    if baseline.contains(name) {
        return;
    }
    if is_keyword(name) || name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        out.push(format!("{at}: module {name} is no identifier"));
    } else if name.chars().any(|c| c.is_ascii_uppercase()) || name.contains("__") {
        out.push(format!("{at}: module {name} is not snake_case"));
    } else if crates.contains(name) {
        out.push(format!(
            "{at}: module {name} is named like a crate the code names"
        ));
    } else if let Some(reason) = reserved_module(name) {
        out.push(format!("{at}: module {name} {reason}"));
    }
}

struct Names<'a> {
    path: &'a str,
    parent: Vec<String>,
    baseline: &'a BTreeSet<String>,
    crates: &'a BTreeSet<String>,
    out: &'a mut Vec<String>,
}

impl Names<'_> {
    fn type_name(&mut self, name: &syn::Ident) {
        let name = name.to_string();
        if self.baseline.contains(&name) {
            return;
        }
        if is_keyword(name.trim_start_matches("r#")) || name.contains('_') {
            self.out.push(format!(
                "{}: type {name} is no CamelCase identifier",
                self.path
            ));
        } else if RESERVED_TYPES.contains(&name.as_str()) {
            self.out.push(format!(
                "{}: type {name} shadows a name the code uses",
                self.path
            ));
        }
    }
}

impl<'ast> Visit<'ast> for Names<'_> {
    fn visit_file(&mut self, file: &'ast syn::File) {
        let mut seen = BTreeSet::new();
        for item in &file.items {
            if let Some(name) = declared(item)
                && !seen.insert(name.clone())
            {
                self.out
                    .push(format!("{}: {name} declared twice", self.path));
            }
        }
        syn::visit::visit_file(self, file);
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        let name = item.ident.to_string();
        module_name(&name, self.path, (self.baseline, self.crates), self.out);
        let inception = item.attrs.iter().any(|a| {
            let text = quote_attr(a);
            text.contains("module_inception")
        });
        if self.parent.last() == Some(&name) && !inception && !self.baseline.contains(&name) {
            self.out.push(format!(
                "{}: module {name} in a module of its name",
                self.path
            ));
        }
        self.parent.push(name);
        syn::visit::visit_item_mod(self, item);
        self.parent.pop();
    }

    fn visit_item_struct(&mut self, item: &'ast syn::ItemStruct) {
        self.type_name(&item.ident);
        for field in &item.fields {
            if let Some(ident) = &field.ident {
                let name = ident.to_string();
                let bare = name.trim_start_matches("r#");
                if bare.chars().any(|c| c.is_ascii_uppercase()) || bare.contains("__") {
                    self.out
                        .push(format!("{}: field {name} is not snake_case", self.path));
                }
            }
        }
        syn::visit::visit_item_struct(self, item);
    }

    fn visit_item_enum(&mut self, item: &'ast syn::ItemEnum) {
        self.type_name(&item.ident);
        for variant in &item.variants {
            if variant.ident.to_string().contains('_') {
                self.out.push(format!(
                    "{}: variant {} is not CamelCase",
                    self.path, variant.ident
                ));
            }
        }
        syn::visit::visit_item_enum(self, item);
    }

    fn visit_item_const(&mut self, item: &'ast syn::ItemConst) {
        let name = item.ident.to_string();
        if name.chars().any(|c| c.is_ascii_lowercase()) && !self.baseline.contains(&name) {
            self.out
                .push(format!("{}: const {name} is not SCREAMING_CASE", self.path));
        }
        syn::visit::visit_item_const(self, item);
    }
}

fn quote_attr(attr: &syn::Attribute) -> String {
    match &attr.meta {
        syn::Meta::List(list) => list.tokens.to_string(),
        _ => String::new(),
    }
}

/// The name an item declares in its module's type or value namespace, for the doubles check.
fn declared(item: &syn::Item) -> Option<String> {
    Some(match item {
        syn::Item::Mod(i) => format!("mod {}", i.ident),
        syn::Item::Struct(i) => format!("type {}", i.ident),
        syn::Item::Enum(i) => format!("type {}", i.ident),
        syn::Item::Type(i) => format!("type {}", i.ident),
        syn::Item::Trait(i) => format!("type {}", i.ident),
        syn::Item::Fn(i) => format!("value {}", i.sig.ident),
        syn::Item::Const(i) => format!("value {}", i.ident),
        syn::Item::Static(i) => format!("value {}", i.ident),
        _ => return None,
    })
}

/// Every name a tree declares (items, fields, variants, files and folders of Rust code), to tell
/// the templates' own names from those of the inputs. Names it only uses (`kube`, `Self`) are
/// not in it: a hostile input that declares one of them is still caught.
fn declared_names(dir: &Path) -> BTreeSet<String> {
    #[derive(Default)]
    struct Declared(BTreeSet<String>);
    impl<'ast> Visit<'ast> for Declared {
        fn visit_item(&mut self, item: &'ast syn::Item) {
            if let Some(name) = declared(item) {
                let name = name.split_once(' ').map_or(name.as_str(), |(_, n)| n);
                self.0.insert(name.trim_start_matches("r#").to_string());
            }
            syn::visit::visit_item(self, item);
        }
        fn visit_field(&mut self, field: &'ast syn::Field) {
            if let Some(ident) = &field.ident {
                self.0.insert(ident.to_string());
            }
            syn::visit::visit_field(self, field);
        }
        fn visit_variant(&mut self, variant: &'ast syn::Variant) {
            self.0.insert(variant.ident.to_string());
            syn::visit::visit_variant(self, variant);
        }
    }
    let mut all = Declared::default();
    for (path, bytes) in tree(dir) {
        if path.ends_with(".rs") && !path.starts_with("operator-rs-") {
            if let Ok(file) = syn::parse_file(&String::from_utf8_lossy(&bytes)) {
                all.visit_file(&file);
            }
            for segment in path.trim_end_matches(".rs").split('/') {
                all.0.insert(segment.to_string());
            }
        }
    }
    all.0
}

/// Runs `args` in `dir`: Ok(()) when it wrote a tree that keeps the policy, Ok when it refused
/// with one line and changed nothing, else the problems.
fn outcome(dir: &Path, args: &[&str], baseline: &BTreeSet<String>) -> Result<bool, String> {
    let before = tree(dir);
    let out = operator_rs(dir).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("panicked") {
        return Err(format!("{args:?} panicked: {stderr}"));
    }
    if !out.status.success() {
        if stderr.trim_end().lines().count() != 1 {
            return Err(format!("{args:?}: not one line: {stderr}"));
        }
        if before != tree(dir) {
            return Err(format!("{args:?}: refused, and changed the tree"));
        }
        return Ok(false);
    }
    let problems = problems(dir, baseline);
    if problems.is_empty() {
        Ok(true)
    } else {
        Err(format!("{args:?}:\n{}", problems.join("\n")))
    }
}

/// A fresh project of `flags` with the hostile CRDs in crds/.
fn project(flags: &[&str]) -> (tempfile::TempDir, std::path::PathBuf) {
    let (tmp, dir) = folder("fleet");
    let mut init = vec!["init", "--domain", "example.com", "--license", "none"];
    init.extend(flags);
    run_ok(&dir, &init);
    std::fs::create_dir(dir.join("crds")).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hostile/hostile-crds.yaml"),
        dir.join("crds/hostile.yaml"),
    )
    .unwrap();
    (tmp, dir)
}

/// A layout (single- or multi-group) the hostile values are fed in: a project of it with the
/// kind Zebra (whose controller the hostile controller names are given to), copied for each
/// hostile value rather than made again, and the names the templates declare in it.
struct Layout {
    flags: &'static [&'static str],
    template: (tempfile::TempDir, std::path::PathBuf),
    baseline: BTreeSet<String>,
}

impl Layout {
    fn new(flags: &'static [&'static str]) -> Self {
        let template = project(flags);
        let line = "create api --group crew --version v1 --kind Zebra --make=false";
        run_ok(&template.1, &line.split(' ').collect::<Vec<_>>());
        Self {
            flags,
            template,
            baseline: baseline(flags),
        }
    }

    /// A fresh copy of the layout's project.
    fn fresh(&self) -> (tempfile::TempDir, std::path::PathBuf) {
        let (tmp, dir) = folder("fleet");
        for (path, bytes) in tree(&self.template.1) {
            let to = dir.join(&path);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::write(to, bytes).unwrap();
        }
        (tmp, dir)
    }
}

/// The names a neutral project of the same layout declares: the templates' own.
fn baseline(flags: &[&str]) -> BTreeSet<String> {
    let (_tmp, dir) = project(flags);
    for line in [
        "create api --group crew --version v1 --kind Zebra --make=false",
        "create webhook --group crew --version v1 --kind Zebra --defaulting --programmatic-validation --conversion --spoke v2 --make=false",
        "create api --group crew --version v1 --kind Zebra --resource=false --controller-name zebra-backup --make=false",
        "create api --group apps --version v1 --kind Deployment --resource=false --controller --make=false",
        "create api --group crew --version v1alpha1 --kind Yak --plugins deploy-image/v1-alpha --image yak:1 --make=false",
    ] {
        let args: Vec<&str> = line.split(' ').collect();
        let _ = operator_rs(&dir).args(&args).output();
    }
    declared_names(&dir)
}

/// A CRD file of one kind named `kind` in `group`, with a schema whose field names are the
/// kind's and keywords, and an enum of keywords.
fn crd(kind: &str, group: &str) -> String {
    let plural = format!("{}s", kind.to_ascii_lowercase());
    format!(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: {plural}.{group}\nspec:\n  group: {group}\n  scope: Namespaced\n  names: {{kind: {kind}, plural: {plural}}}\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          spec:\n            type: object\n            properties:\n              {kind}: {{type: string}}\n              self: {{type: string}}\n              Self: {{type: string, enum: [Self, self, '']}}\n              type: {{type: object, properties: {{crate: {{type: integer}}, super: {{type: boolean}}}}}}\n"
    )
}

/// Hostile project names: keywords, Rust's and the generated project's crates, names of its
/// modules and files, names that are one crate name in Rust (`-` and `_`).
const HOSTILE_PROJECT_NAMES: &[&str] = &[
    "self",
    "crate",
    "super",
    "type",
    "async",
    "gen",
    "std",
    "core",
    "alloc",
    "test",
    "proc-macro",
    "kube",
    "kube-cel",
    "serde",
    "serde-json",
    "tokio",
    "operator-rs-runtime",
    "operator-rs-testing",
    "main",
    "lib",
    "build",
    "manager",
    "e2e",
    "api",
    "controller",
    "webhook",
    "u8",
    "str",
    "fleet--operator",
];

/// What the hostile test ran: how many commands wrote a tree keeping the policy, the sources
/// whose hostile values reached a written tree, and what broke the policy.
#[derive(Default)]
struct Tally {
    written: usize,
    refused: usize,
    reached: BTreeSet<Source>,
    failures: Vec<String>,
}

impl Tally {
    /// Runs `args` in `dir`, whose hostile values fill `sources`.
    fn run(&mut self, dir: &Path, args: &[&str], sources: &[Source], baseline: &BTreeSet<String>) {
        match outcome(dir, args, baseline) {
            Ok(true) => {
                self.written += 1;
                self.reached.extend(sources);
            }
            Ok(false) => self.refused += 1,
            Err(problem) => self.failures.push(problem),
        }
    }

    fn merge(&mut self, other: Tally) {
        self.written += other.written;
        self.refused += other.refused;
        self.reached.extend(other.reached);
        self.failures.extend(other.failures);
    }

    /// Runs a command line written with spaces (no value holds one).
    fn line(&mut self, dir: &Path, line: &str, sources: &[Source], baseline: &BTreeSet<String>) {
        let args: Vec<&str> = line.split(' ').collect();
        self.run(dir, &args, sources, baseline);
    }
}

/// Feeds one hostile kind `kind` to every site a kind, a group, a version and a controller name
/// fill (the latter three as the kind's lower-case spelling), in a project of its own.
fn feed_kind(tally: &mut Tally, layout: &Layout, kind: &str) {
    use Source::*;
    let baseline = &layout.baseline;
    let lower = kind.to_lowercase();
    // A name as a group, version or controller name: the kind's words, as far as a DNS label
    // takes them (the commands refuse the others, which the tally counts as refused).
    let word = lower.as_str();
    let (_tmp, dir) = layout.fresh();
    let lines = [
        (
            format!("create api --group crew --version v1 --kind {kind} --make=false"),
            &[Kind][..],
        ),
        (
            format!(
                "create webhook --group crew --version v1 --kind {kind} --defaulting \
                 --programmatic-validation --conversion --spoke v2 --make=false"
            ),
            &[Kind, Version],
        ),
        (
            format!(
                "create api --group deploy --version v1alpha1 --kind {kind} --plugins \
                 deploy-image/v1-alpha --image busybox:1 --make=false"
            ),
            &[Kind],
        ),
        (
            format!("create api --group {word} --version v1 --kind Zebra --make=false"),
            &[Group],
        ),
        (
            format!("create api --group crew --version {word} --kind Yak --make=false"),
            &[Version],
        ),
        (
            format!(
                "create api --group crew --version v1 --kind Zebra --resource=false \
                 --controller-name {word} --make=false"
            ),
            &[ControllerName],
        ),
    ];
    for (line, sources) in &lines {
        tally.line(&dir, line, sources, baseline);
    }
    // Another project's kind of that name, with fields named like it and like keywords, and a
    // group of another project named like it.
    std::fs::write(dir.join("crds/kind.yaml"), crd(kind, "hostile.io")).unwrap();
    std::fs::write(
        dir.join("crds/group.yaml"),
        crd("Zebra", &format!("{word}.hostile.io")),
    )
    .unwrap();
    for (group, domain, kind, file, sources) in [
        ("hostile", "io", kind, "crds/kind.yaml", &[Kind, Schema][..]),
        (word, "hostile.io", "Zebra", "crds/group.yaml", &[Group]),
    ] {
        let args = external(group, domain, kind, file);
        tally.run(&dir, &args, sources, baseline);
    }
}

/// `create api` of an external kind with its controller.
fn external<'a>(group: &'a str, domain: &'a str, kind: &'a str, file: &'a str) -> Vec<&'a str> {
    vec![
        "create",
        "api",
        "--group",
        group,
        "--external-api-domain",
        domain,
        "--version",
        "v1",
        "--kind",
        kind,
        "--resource=false",
        "--controller",
        "--external-api-path",
        file,
        "--make=false",
    ]
}

/// Feeds the hostile values of every source in `layout`.
fn feed_layout(layout: &Layout) -> Tally {
    // The kinds in threads of their own: each command is a process, most of whose time is
    // spent waiting on the file system.
    let kinds = hostile_kinds(!layout.flags.is_empty());
    let mut tally = std::thread::scope(|scope| {
        let workers: Vec<_> = kinds
            .chunks(kinds.len().div_ceil(4))
            .map(|chunk| {
                scope.spawn(move || {
                    let mut tally = Tally::default();
                    for kind in chunk {
                        feed_kind(&mut tally, layout, kind);
                    }
                    tally
                })
            })
            .collect();
        let mut all = Tally::default();
        for worker in workers {
            all.merge(worker.join().unwrap());
        }
        all
    });
    let baseline = &layout.baseline;
    // Kinds and groups of other projects that are one name in Rust, and a kind named like its
    // group (kafka.strimzi.io's Kafka).
    let (_tmp, dir) = layout.fresh();
    std::fs::write(dir.join("crds/a.yaml"), crd("my-kind", "hostile.io")).unwrap();
    std::fs::write(dir.join("crds/b.yaml"), crd("MyKind", "hostile.io")).unwrap();
    std::fs::write(
        dir.join("crds/c.yaml"),
        crd("MyKind", "my-group.hostile.io"),
    )
    .unwrap();
    std::fs::write(dir.join("crds/d.yaml"), crd("MyKind", "mygroup.hostile.io")).unwrap();
    for args in [
        external("hostile", "io", "my-kind", "crds/a.yaml"),
        external("hostile", "io", "MyKind", "crds/b.yaml"),
        external("my-group", "hostile.io", "MyKind", "crds/c.yaml"),
        external("mygroup", "hostile.io", "MyKind", "crds/d.yaml"),
        external("kafka", "hostile.io", "Kafka", "crds/hostile.yaml"),
    ] {
        tally.run(&dir, &args, &[Source::Kind, Source::Group], baseline);
    }
    // The project's own name, which is its crate's.
    for name in HOSTILE_PROJECT_NAMES {
        let (_tmp, dir) = folder("fleet");
        let mut init = vec![
            "init",
            "--domain",
            "example.com",
            "--license",
            "none",
            "--project-name",
            name,
        ];
        init.extend(layout.flags);
        tally.run(&dir, &init, &[Source::ProjectName], baseline);
        if dir.join("PROJECT").exists() {
            let line = "create api --group crew --version v1 --kind Zebra --make=false";
            tally.line(&dir, line, &[Source::ProjectName], baseline);
        }
    }
    tally
}

#[test]
fn hostile_names_are_refused_or_made_rust() {
    let mut tally = Tally::default();
    for flags in [&[][..], &["--multigroup"]] {
        tally.merge(feed_layout(&Layout::new(flags)));
    }
    assert!(
        tally.failures.is_empty(),
        "{} failures:\n{}",
        tally.failures.len(),
        tally.failures.join("\n\n")
    );
    // Every source of a name reached a tree that was written, so each site was tried with a
    // hostile value, not only refused.
    let sources: BTreeSet<Source> = SITES
        .iter()
        .map(|(_, source)| *source)
        .filter(|source| *source != Source::NotAName)
        .collect();
    let missed: Vec<&Source> = sources.difference(&tally.reached).collect();
    assert!(
        missed.is_empty(),
        "no hostile value of {missed:?} reached a written tree ({} written, {} refused)",
        tally.written,
        tally.refused
    );
}
