//! Kinds the project does not own (`create api --external-api-path <CRD file> --resource=false`):
//! another project's custom resources, such as cert-manager's Certificate. kubebuilder imports
//! their Go types; a Rust project gets types generated from the kind's CustomResourceDefinition,
//! as kopium would write them (see [`crate::openapi`]), under
//! `src/external/<group module>/<version>/<kind>.rs`. Their CRD is never written to
//! `config/crd`: the other project installs it.

mod crd;
mod module;

use std::path::Path;

use anyhow::{Result, bail};

use crate::names::{InvalidInput, Kind};
use crate::openapi::{KindAttributes, KindTypes, example};
use crate::project::Project;

pub use crd::ExternalCrd;
pub use module::group_module;

/// `--external-api-path`, `--external-api-domain` and `--external-api-module`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalRequest {
    /// The CRD file, as given (relative to the project folder, or absolute).
    pub path: String,
    /// The domain of the kind's group (the project's when not given).
    pub domain: Option<String>,
    /// kubebuilder's Go module, only recorded.
    pub module: Option<String>,
}

impl ExternalRequest {
    /// kubebuilder's rules for the three flags: the path is required with the others, and an
    /// external kind is never a resource of the project.
    pub fn from_flags(
        path: Option<&str>,
        domain: Option<&str>,
        module: Option<&str>,
        resource: Option<bool>,
    ) -> Result<Option<Self>> {
        let Some(path) = path else {
            if module.is_some() || domain.is_some() {
                bail!(
                    "'--external-api-module' and '--external-api-domain' require '--external-api-path' \
                     to be specified"
                );
            }
            return Ok(None);
        };
        if resource == Some(true) {
            bail!(
                "cannot use '--external-api-path', '--external-api-domain', or '--external-api-module' \
                 when creating an API in the project with '--resource=true'. Use '--resource=false' \
                 when referencing an external API"
            );
        }
        if let Some(domain) = domain
            && !crate::names::is_dns1123_subdomain(domain)
        {
            return Err(InvalidInput::new(
                "--external-api-domain",
                domain,
                "must be a DNS-1123 subdomain (cert-manager.io's is io: --group cert-manager)",
            )
            .into());
        }
        if let Some(module) = module {
            crate::names::check_line_text(module)
                .map_err(|rule| InvalidInput::new("--external-api-module", module, rule))?;
        }
        Ok(Some(Self {
            path: path.to_string(),
            domain: domain.map(str::to_string),
            module: module.map(str::to_string),
        }))
    }
}

/// An external kind, read and checked, with its generated code.
#[derive(Debug, Clone)]
pub struct ExternalKind {
    pub crd: ExternalCrd,
    /// The module of its group under `crate::external` (see [`group_module`]).
    pub module: String,
    /// The `use` lines of the types file.
    pub imports: String,
    /// The types: `<Kind>Spec` (with `#[derive(CustomResource)]`), `<Kind>Status`, nested types.
    pub items: String,
    /// The kind with every field set, as JSON in a Rust raw string literal, for the round-trip
    /// test.
    pub example: String,
    /// Its CRD does not require a spec: the types read a missing or null one as the default
    /// ([`KindTypes::spec_may_be_absent`]).
    pub spec_may_be_absent: bool,
}

/// Which kind of which CRD file: the flags of `create api` and `create webhook`, or a record of
/// PROJECT.
pub struct KindRef<'a> {
    /// `--external-api-path`, relative to the project folder.
    pub path: &'a str,
    /// `--group` and `--external-api-domain`: the API group is `<group>.<domain>`.
    pub group: &'a str,
    pub domain: &'a str,
    pub version: &'a str,
    pub kind: &'a Kind,
}

impl ExternalKind {
    /// Reads the CRD of the kind from its file (relative to the project folder `dir`) and
    /// generates the kind's Rust types, in the module [`group_module`] gives its group in
    /// `project`.
    pub fn load(dir: &Path, project: &Project, kind: &KindRef) -> Result<Self> {
        let qualified_group = format!("{}.{}", kind.group, kind.domain);
        let path = crd::resolve_path(dir, kind.path)?;
        let crd = crd::load(
            &path,
            kind.path,
            &qualified_group,
            kind.version,
            kind.kind.as_str(),
        )?;
        let types = KindTypes::analyze(&crd.schema, kind.kind.type_name())?;
        let attributes = KindAttributes {
            group: &crd.group,
            version: &crd.version,
            kind: &crd.kind,
            type_name: kind.kind.type_name(),
            plural: &crd.plural,
            namespaced: crd.namespaced,
        };
        Ok(Self {
            module: group_module(project, kind.group, kind.domain),
            imports: types.imports(),
            items: types.items(&attributes),
            example: example::object(&types, &attributes),
            spec_may_be_absent: types.spec_may_be_absent,
            crd,
        })
    }
}
