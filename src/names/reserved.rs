//! The names that a name from outside must not become: Rust's keywords, primitive types and
//! prelude, the crates and modules the generated project has, and every type name its templates
//! import or declare. [`super::ident`] is the policy that keeps names from outside clear of them.

use std::collections::BTreeSet;
use std::sync::LazyLock;

/// Rust keywords (strict, reserved and 2024's `gen`): no module or crate can have these names.
pub(crate) const RUST_KEYWORDS: &[&str] = &[
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
    include_str!("../../templates/init/Cargo.toml.in"),
    include_str!("../../embedded-runtime/Cargo.toml.in"),
    include_str!("../../embedded-testing/Cargo.toml.in"),
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
pub(crate) fn is_crate_name(name: &str) -> bool {
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

/// Type names that no type from outside (a kind, of the project's own or another's) can have: every name that the Rust templates
/// import or declare (a kind of the same name, imported next to it, would not compile; a test
/// scans the templates so that this list keeps up with them), and the names of Rust's prelude
/// (a kind of that name would shadow it). Built-in kinds are imported differently and are fine.
pub const RESERVED_TYPES: &[&str] = &[
    // Imported or declared by the templates.
    "Action",
    "AdmissionRequest",
    "Api",
    "ApiServer",
    "Arc",
    "BTreeMap",
    "Capabilities",
    "Client",
    "Condition",
    "Container",
    "ContainerPort",
    "Context",
    "ControllerFuture",
    "ControllerSetup",
    "Converter",
    "CustomResource",
    "CustomResourceDefinition",
    "CustomResourceExt",
    "Defaulter",
    "DeleteParams",
    "Denial",
    "Deployment",
    "DeploymentSpec",
    "DeploymentStatus",
    "Deserialize",
    "Duration",
    "EffectiveSecurity",
    "Error",
    "Event",
    "EventType",
    "ExitCode",
    "FailurePolicy",
    "Flags",
    "JsonSchema",
    "KubeSchema",
    "LabelSelector",
    "ListParams",
    "Manager",
    "Manifests",
    "Method",
    "ObjectMeta",
    "ObjectRef",
    "Operation",
    "OwnerReference",
    "Patch",
    "PatchParams",
    "Pod",
    "PodSecurityContext",
    "PodSpec",
    "PodTemplateSpec",
    "PolicyRule",
    "RbacScope",
    "Registration",
    "RoleScope",
    "Runner",
    "SeccompProfile",
    "SecurityContext",
    "Serialize",
    "Shared",
    "Spoke",
    "StatusCode",
    "StorageMigration",
    "Time",
    "Timestamp",
    "Validator",
    "Value",
    "Warnings",
    "Webhook",
    // Rust's prelude (edition 2024), with the derive macros.
    "AsMut",
    "AsRef",
    "AsyncFn",
    "AsyncFnMut",
    "AsyncFnOnce",
    "Box",
    "Clone",
    "Copy",
    "Debug",
    "Default",
    "DoubleEndedIterator",
    "Drop",
    "Eq",
    "Err",
    "ExactSizeIterator",
    "Extend",
    "Fn",
    "FnMut",
    "FnOnce",
    "From",
    "FromIterator",
    "Future",
    "Hash",
    "Into",
    "IntoFuture",
    "IntoIterator",
    "Iterator",
    "None",
    "Ok",
    "Option",
    "Ord",
    "PartialEq",
    "PartialOrd",
    "Result",
    "Send",
    "Sized",
    "Some",
    "String",
    "Sync",
    "ToOwned",
    "ToString",
    "TryFrom",
    "TryInto",
    "Unpin",
    "Vec",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The names that a Rust template imports (`use a::{B, C as D}` binds B and D) or declares
    /// (`struct`, `enum`, `trait`, `union`, top-level `type`). Tera tags are dropped, and a name
    /// glued to a `{{ … }}` expression (`{{ kind }}Spec`) is the kind's, not a fixed one.
    fn names_in_template(source: &str) -> BTreeSet<String> {
        // Tera blocks and comments become line breaks; expressions become a `#`.
        let mut text = String::new();
        let mut rest = source;
        while let Some(start) = rest.find(['{']) {
            text.push_str(&rest[..start]);
            let tail = &rest[start..];
            let close = match &tail[..tail.len().min(2)] {
                "{%" => Some(("%}", "\n")),
                "{#" => Some(("#}", "\n")),
                "{{" => Some(("}}", "#")),
                _ => None,
            };
            match close.and_then(|(end, with)| tail.find(end).map(|i| (i + end.len(), with))) {
                Some((len, with)) => {
                    text.push_str(with);
                    rest = &tail[len..];
                }
                None => {
                    text.push('{');
                    rest = &tail[1..];
                }
            }
        }
        text.push_str(rest);
        // Tokens, without comments; `#` marks a template expression.
        let mut tokens: Vec<(String, bool, bool)> = Vec::new(); // (token, templated, line start)
        for line in text.lines() {
            let code = line.split("//").next().unwrap_or_default();
            let mut chars = code.char_indices().peekable();
            let mut first = true;
            let indented = code.starts_with(char::is_whitespace);
            while let Some((i, c)) = chars.next() {
                if c.is_alphanumeric() || c == '_' || c == '#' {
                    let mut end = i + c.len_utf8();
                    while let Some(&(j, d)) = chars.peek() {
                        if d.is_alphanumeric() || d == '_' || d == '#' {
                            end = j + d.len_utf8();
                            chars.next();
                        } else {
                            break;
                        }
                    }
                    let word = &code[i..end];
                    tokens.push((word.to_string(), word.contains('#'), first && !indented));
                } else if c == ':' && chars.peek().is_some_and(|&(_, d)| d == ':') {
                    chars.next();
                    tokens.push(("::".into(), false, false));
                } else if !c.is_whitespace() {
                    tokens.push((c.to_string(), false, first && !indented));
                }
                first = false;
            }
        }
        let mut names = BTreeSet::new();
        let mut i = 0;
        while i < tokens.len() {
            let (word, _, at_line_start) = &tokens[i];
            if word == "use" {
                let end = (i..tokens.len())
                    .find(|&j| tokens[j].0 == ";")
                    .unwrap_or(tokens.len());
                let body = &tokens[i + 1..end];
                for (k, (token, templated, _)) in body.iter().enumerate() {
                    let next = body.get(k + 1).map(|t| t.0.as_str());
                    let previous = k.checked_sub(1).map(|p| body[p].0.as_str());
                    let is_name = !templated
                        && token.starts_with(|c: char| c.is_alphabetic() || c == '_')
                        && token != "as"
                        && token != "self";
                    let bound = match (previous, next) {
                        (Some("as"), _) => true,
                        (_, Some("as")) | (_, Some("::")) => false,
                        _ => true,
                    };
                    if is_name && bound && token != "_" {
                        names.insert(token.clone());
                    }
                }
                i = end;
            } else if ["struct", "enum", "trait", "union"].contains(&word.as_str())
                || (word == "type" && *at_line_start)
                || (word == "type" && i > 0 && tokens[i - 1].0 == "pub" && tokens[i - 1].2)
            {
                if let Some((name, false, _)) = tokens.get(i + 1) {
                    names.insert(name.clone());
                }
                i += 1;
            } else {
                i += 1;
            }
        }
        names
    }

    #[test]
    fn the_scanner_finds_imports_and_declarations() {
        let names = names_in_template(
            "{{ rust_header }}\nuse a::b::{C, D as E, F as _, self};\n{% if x %}use g::H;{% endif %}\n\
             use {{ api_module }}::{{ kind }};\nuse x::{{ kind }}Spec;\n// use z::Z;\n\
             pub struct {{ kind }}Validator;\nenum Error {}\nimpl X { type Output = u8; }\n\
             use m::{\n    N,\n    o::P,\n};\n",
        );
        assert_eq!(
            names.into_iter().collect::<Vec<_>>(),
            ["C", "E", "Error", "H", "N", "P"]
        );
    }

    /// Every PascalCase name the Rust templates bring into a module is reserved, so that no kind
    /// can clash with one: this fails when a template imports a name the list does not have.
    #[test]
    fn reserved_types_cover_every_name_the_templates_use() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("templates");
        let mut missing = BTreeSet::new();
        let mut seen = 0;
        for entry in walkdir::WalkDir::new(&root) {
            let entry = entry.unwrap();
            if entry.path().extension().is_none_or(|e| e != "rs") {
                continue;
            }
            seen += 1;
            let source = std::fs::read_to_string(entry.path()).unwrap();
            for name in names_in_template(&source) {
                let pascal = name.starts_with(|c: char| c.is_ascii_uppercase())
                    && name.chars().any(|c| c.is_ascii_lowercase());
                if pascal && !RESERVED_TYPES.contains(&name.as_str()) {
                    missing.insert(format!(
                        "{name} ({})",
                        entry.path().strip_prefix(&root).unwrap().display()
                    ));
                }
            }
        }
        assert!(seen > 10, "found only {seen} Rust templates");
        assert!(
            missing.is_empty(),
            "add these to RESERVED_TYPES: {missing:#?}"
        );
        for name in [
            "Deserialize",
            "CustomResource",
            "Registration",
            "ControllerSetup",
        ] {
            assert!(RESERVED_TYPES.contains(&name), "{name}");
        }
    }
}
