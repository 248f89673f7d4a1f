//! The variables of an external kind's generated types.

use serde::Serialize;

use super::ProjectVars;
use crate::external::ExternalKind;
use crate::names::{Group, Kind, Version};

/// A kind of another project: its Rust types generated from its CRD, under
/// `src/external/<group>/<version>/`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ExternalVars {
    #[serde(flatten)]
    pub project: ProjectVars,
    /// The group's Rust module under `crate::external`.
    pub group_module: String,
    /// The API group as the CRD has it: `cert-manager.io`.
    pub qualified_group: String,
    pub version: String,
    /// The kind's Rust type (the kind, or the name derived from it, see `Kind::parse_foreign`).
    pub kind: String,
    pub kind_snake: String,
    /// The module of the types: `crate::external::cert_manager::v1`.
    pub rust_module: String,
    /// The CRD file the types were generated from (as `--external-api-path` gave it).
    pub external_path: String,
    /// The types file's `use` lines.
    pub external_imports: String,
    /// The types: `<Kind>Spec` with its `CustomResource` derive, `<Kind>Status`, nested types.
    pub external_items: String,
    /// An object of the kind with every field set, as JSON, for the round-trip test.
    pub external_example: String,
    /// The CRD does not require a spec: the types read an object without one (the generated
    /// test checks it).
    pub external_spec_may_be_absent: bool,
}

impl ExternalVars {
    pub fn new(
        project: ProjectVars,
        (_, version, kind): (&Group, &Version, &Kind),
        external: &ExternalKind,
        path: &str,
    ) -> Self {
        let group_module = external.module.clone();
        Self {
            project,
            rust_module: format!("crate::external::{group_module}::{}", version.as_str()),
            group_module,
            qualified_group: external.crd.group.clone(),
            version: version.as_str().to_string(),
            kind: kind.type_name().to_string(),
            kind_snake: kind.snake(),
            external_path: path.to_string(),
            external_imports: external.imports.clone(),
            external_items: external.items.clone(),
            external_example: external.example.clone(),
            external_spec_may_be_absent: external.spec_may_be_absent,
        }
    }
}
