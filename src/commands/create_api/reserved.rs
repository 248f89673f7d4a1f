//! The type names a kind of the project's own cannot have.

use crate::names::{InvalidInput, Kind};

/// Type names a kind of the project's own cannot have: every name that the Rust templates
/// import or declare (a kind of the same name, imported next to it, would not compile; a test
/// scans the templates so that this list keeps up with them), and the names of Rust's prelude
/// (a kind of that name would shadow it). Built-in kinds are imported differently and are fine.
pub const RESERVED_KINDS: &[&str] = &[
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

/// Refuses a kind of the project's own whose Rust type, or the `<Kind>Spec` and `<Kind>Status`
/// types generated with it, would clash with a name of [`RESERVED_KINDS`].
pub fn check_reserved_kind(kind: &Kind) -> Result<(), InvalidInput> {
    let clash = [
        kind.type_name().to_string(),
        format!("{}Spec", kind.type_name()),
        format!("{}Status", kind.type_name()),
    ]
    .into_iter()
    .find(|name| RESERVED_KINDS.contains(&name.as_str()));
    match clash {
        None => Ok(()),
        Some(name) if name == kind.type_name() => Err(InvalidInput::new(
            "--kind",
            kind.as_str(),
            "is a name the generated Rust code already uses (imported from kube, k8s-openapi, serde, \
             the runtime crate, or Rust's prelude); choose another kind",
        )),
        Some(name) => Err(InvalidInput::new(
            "--kind",
            kind.as_str(),
            format!(
                "its generated type {name} is a name the generated Rust code already uses; choose another kind"
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

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
    fn reserved_kinds_cover_every_name_the_templates_use() {
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
                if pascal && !RESERVED_KINDS.contains(&name.as_str()) {
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
            "add these to RESERVED_KINDS: {missing:#?}"
        );
        for name in [
            "Deserialize",
            "CustomResource",
            "Registration",
            "ControllerSetup",
        ] {
            assert!(RESERVED_KINDS.contains(&name), "{name}");
        }
    }

    #[test]
    fn reserved_kinds_and_their_generated_types_are_refused() {
        let kind = Kind::parse("Pod").unwrap();
        assert!(check_reserved_kind(&kind).is_err());
        let kind = Kind::parse("Deployment").unwrap();
        assert!(check_reserved_kind(&kind).is_err());
        // `PodSpec` is imported: a kind Pod would clash through its own PodSpec too.
        assert!(RESERVED_KINDS.contains(&"PodSpec"));
        let kind = Kind::parse("Captain").unwrap();
        assert!(check_reserved_kind(&kind).is_ok());
        // DeploymentSpec is imported, so a kind Deployment clashes through its spec type too;
        // Condition is imported, so ConditionSpec is fine but Condition is not.
        for name in ["Option", "Serialize", "Webhook", "Denial", "Context"] {
            assert!(
                check_reserved_kind(&Kind::parse(name).unwrap()).is_err(),
                "{name}"
            );
        }
    }
}
