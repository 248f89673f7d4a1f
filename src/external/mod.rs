//! Kinds the project does not own (`create api --external-api-path <CRD file> --resource=false`):
//! another project's custom resources, such as cert-manager's Certificate. kubebuilder imports
//! their Go types; a Rust project gets types generated from the kind's CustomResourceDefinition,
//! as kopium would write them, under `src/external/<group>/<version>/<kind>.rs`. Their CRD is
//! never written to `config/crd`: the other project installs it.

mod crd;
mod render;
mod types;

use std::path::Path;

use anyhow::Result;

pub use crd::ExternalCrd;

/// An external kind, read and checked, with its generated code.
#[derive(Debug, Clone)]
pub struct ExternalKind {
    pub crd: ExternalCrd,
    /// The `use` lines of the types file.
    pub imports: String,
    /// The types: `<Kind>Spec` (with `#[derive(CustomResource)]`), `<Kind>Status`, nested types.
    pub items: String,
    /// The kind with every field set, as JSON in a Rust raw string literal, for the round-trip
    /// test.
    pub example: String,
}

impl ExternalKind {
    /// Reads the CRD of `qualified_group`/`version`/`kind` from `given` (the flag's value,
    /// relative to the project folder `dir`) and generates the kind's Rust types.
    pub fn load(
        dir: &Path,
        given: &str,
        qualified_group: &str,
        version: &str,
        kind: &str,
    ) -> Result<Self> {
        let path = crd::resolve_path(dir, given)?;
        let crd = crd::load(&path, given, qualified_group, version, kind)?;
        let types = types::analyze(&crd.schema, kind)?;
        let attributes = render::KindAttributes {
            group: &crd.group,
            version: &crd.version,
            kind: &crd.kind,
            plural: &crd.plural,
            namespaced: crd.namespaced,
        };
        Ok(Self {
            imports: render::imports(&types),
            items: render::items(&types, &attributes),
            example: render::example(&crd.schema, &attributes),
            crd,
        })
    }
}
