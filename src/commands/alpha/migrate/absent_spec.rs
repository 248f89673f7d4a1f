//! Kinds whose Go CRD does not require a spec (kubebuilder's types declare `Spec FooSpec
//! json:"spec,omitempty"`, so controller-gen leaves `spec` out of `required`): the migrated kind
//! keeps it so. Its spec type reads a missing or null spec as the default, as Go reads the zero
//! value (`operator_rs_runtime::spec_or_default!`), and `crds()` in src/api/mod.rs takes `spec`
//! out of the CRD's required fields (`operator_rs_runtime::spec::not_required`): objects the Go
//! operator stored without a spec still decode, and still pass validation on every write.

/// Between the spec's `#[kube(...)]` and its `#[serde(rename_all)]`.
const SPEC_ATTRIBUTE: &str = "\
// The Go project's CRD does not require a spec, and neither does this one (see `crds()` in
// src/api/mod.rs): an object without one, or with `spec: null`, reads as the default spec, as Go
// reads its zero value, instead of failing to decode, which would stall every watch of the kind.
// `remote = \"Self\"` keeps the serde derives as plain functions, which `spec_or_default!` below
// wraps in the `Deserialize` and `Serialize` impls.
#[serde(remote = \"Self\")]
";

/// The spec's schema derive, as the template writes it and as a spec read through
/// `spec_or_default!` needs it: `KubeSchema` copies the serde attributes onto a struct of its own
/// (kube-derive 5), whose `remote = "Self"` derive is never called, so rustc would warn that
/// its fields are never read.
const KUBE_SCHEMA: (&str, &str) = (
    "// `KubeSchema`, rather than schemars' `JsonSchema`, generates the schema: it also understands
// `#[x_kube(...)]` attributes, for CEL validation rules and server-side apply merge strategies.
#[derive(CustomResource, KubeSchema, ",
    "// schemars' `JsonSchema` generates the schema. (kube's `KubeSchema`, which also understands
// `#[x_kube(...)]` attributes, for CEL rules and merge strategies, would copy `#[serde(remote)]`
// below onto a struct of its own, whose fields rustc would then report as never read.)
#[derive(CustomResource, schemars::JsonSchema, ",
);

/// The last test of the API file's `mod tests`.
const TEST: &str = "
    /// The Go project's CRD does not require a spec: a {kind} without one, or with `spec: null`,
    /// reads as the default spec; and the CRD that `make manifests` writes requires none either.
    #[test]
    fn an_absent_spec_reads_as_the_default() {
        let default = serde_json::to_value({kind}Spec::default()).unwrap();
        for json in [json!({\"metadata\": {}}), json!({\"metadata\": {}, \"spec\": null})] {
            let object: {kind} = serde_json::from_value(json).unwrap();
            assert_eq!(serde_json::to_value(&object.spec).unwrap(), default);
        }
        let mut required = crate::api::crds()
            .into_iter()
            .filter(|crd| crd.spec.names.kind == \"{kind}\")
            .flat_map(|crd| crd.spec.versions)
            .filter(|version| version.name == \"{version}\")
            .filter_map(|version| version.schema?.open_api_v3_schema?.required)
            .flatten();
        assert!(!required.any(|field| field == \"spec\"));
    }
";

/// The API file `text` of `kind` (of `version`) with its spec type read through
/// `spec_or_default!`, and a test of it; None when the scaffold's spec struct or tests are not
/// where the template puts them.
pub fn spec_type(text: &str, kind: &str, version: &str) -> Option<String> {
    let head = format!("#[serde(rename_all = \"camelCase\")]\npub struct {kind}Spec {{\n");
    let start = text.find(&head)?;
    let end = start + text[start..].find("\n}\n")? + "\n}\n".len();
    // `mod tests` closes the file.
    let tests_end = text.strip_suffix("}\n")?.len();
    if !text.contains("mod tests {") || tests_end < end {
        return None;
    }
    let fill = |template: &str| {
        template
            .replace("{kind}", kind)
            .replace("{version}", version)
    };
    let before = &text[..start];
    if !before.contains(KUBE_SCHEMA.0) {
        return None;
    }
    Some(format!(
        "{}{}{}\noperator_rs_runtime::spec_or_default!({kind}Spec);\n{}{}}}\n",
        before.replacen(KUBE_SCHEMA.0, KUBE_SCHEMA.1, 1),
        SPEC_ATTRIBUTE,
        &text[start..end],
        &text[end..tests_end],
        fill(TEST),
    ))
}

/// src/api/mod.rs's `text` with the `crds()` entry of `kind` in module `module` (`v1` or
/// `ship::v1`, under src/api) wrapped in `spec::not_required`; None without that entry.
pub fn crds_entry(text: &str, module: &str, kind: &str) -> Option<String> {
    let entry = format!("{module}::{kind}::crd(),");
    let at = text.lines().position(|line| line.trim() == entry)?;
    let lines: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, line)| {
            if i != at {
                return line.to_string();
            }
            let indent = &line[..line.len() - line.trim_start().len()];
            format!(
                "{indent}// Objects without a spec stay valid, as in the Go project's CRD.\n\
                 {indent}operator_rs_runtime::spec::not_required({module}::{kind}::crd()),"
            )
        })
        .collect();
    Some(lines.join("\n") + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_type_reads_an_absent_spec_as_its_default() {
        let text = &(format!("{}Clone)]\n", KUBE_SCHEMA.0)
            + "#[kube(kind = \"Ship\")]\n#[serde(rename_all = \"camelCase\")]\n\
                    pub struct ShipSpec {\n    pub size: i32,\n}\n\npub struct ShipStatus {\n}\n\
                    #[cfg(test)]\nmod tests {\n    #[test]\n    fn crd() {}\n}\n");
        let out = spec_type(text, "Ship", "v1").unwrap();
        assert!(
            out.contains("#[serde(remote = \"Self\")]\n#[serde(rename_all"),
            "{out}"
        );
        assert!(
            out.contains("    pub size: i32,\n}\n\noperator_rs_runtime::spec_or_default!(ShipSpec);\n\npub struct ShipStatus"),
            "{out}"
        );
        assert!(
            out.contains("    fn crd() {}\n\n    /// The Go project's CRD"),
            "{out}"
        );
        assert!(out.ends_with("== \"spec\"));\n    }\n}\n"), "{out}");
        assert!(out.contains("version.name == \"v1\""), "{out}");
        syn::parse_file(&out).unwrap();
        assert_eq!(spec_type(text, "Boat", "v1"), None);
    }

    #[test]
    fn the_crds_entry_drops_spec_from_required() {
        let text = "    vec![\n        v1::Ship::crd(),\n        v1::Boat::crd(),\n    ]\n";
        let out = crds_entry(text, "v1", "Ship").unwrap();
        assert_eq!(
            out,
            "    vec![\n        // Objects without a spec stay valid, as in the Go project's CRD.\n        \
             operator_rs_runtime::spec::not_required(v1::Ship::crd()),\n        v1::Boat::crd(),\n    ]\n"
        );
        assert_eq!(crds_entry(text, "v2", "Ship"), None);
    }
}
