//! The variables that name a kind.

use serde::Serialize;

use crate::builtin::BuiltinKind;
use crate::external::ExternalKind;
use crate::names::ident::Site;
use crate::names::{Group, Kind, Version};
use crate::project::{Project, Resource};

/// What a kind is to the project: its own (a CRD it defines), a built-in Kubernetes kind, or a
/// kind of another project, whose CRD the project was given.
#[derive(Debug, Clone, Copy)]
pub enum Target<'a> {
    Own,
    Builtin(BuiltinKind),
    External(&'a ExternalKind),
}

impl Target<'_> {
    /// The API group as Kubernetes spells it.
    pub fn qualified_group(&self, group: &Group, domain: &str) -> String {
        match self {
            Target::Own => format!("{}.{domain}", group.as_str()),
            Target::Builtin(b) => b.api_group.to_string(),
            Target::External(e) => e.crd.group.clone(),
        }
    }

    /// The Rust module of the group (in the multigroup layout, `src/*/<group module>/`): a
    /// built-in kind's is its short group's (`apps`, `networking`), as PROJECT records it,
    /// whatever spelling `--group` had; an external kind's the module of its whole group under
    /// `crate::external` (see [`crate::external::group_module`]).
    pub fn group_module(&self, group: &Group) -> String {
        match self {
            Target::Builtin(b) => Site::Module.stem(b.short_group()),
            Target::External(e) => e.module.clone(),
            Target::Own => group.module(),
        }
    }
}

/// The Rust module of the group of a kind PROJECT records, as [`Target::group_module`] gave it
/// when the kind was created.
pub fn recorded_group_module(project: &Project, r: &Resource) -> String {
    if r.external {
        crate::external::group_module(project, &r.group, &r.domain)
    } else {
        Site::Module.stem(&r.group)
    }
}

/// The Rust module (and file name) of a kind PROJECT records: see [`Kind::snake`].
pub fn recorded_kind_module(r: &Resource) -> String {
    Kind::recorded(&r.kind, r.external)
        .map(|kind| kind.snake())
        .unwrap_or_else(|_| crate::names::kind_module(&r.kind))
}

/// A kind's names, as the templates of every command use them.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct KindVars {
    /// The group as given (`crew`, `apps`), without the domain.
    pub group: String,
    /// The group's Rust module (see [`Target::group_module`]).
    pub group_module: String,
    /// The API group as Kubernetes spells it: `crew.example.com`, `apps`, `""` for core.
    pub qualified_group: String,
    pub version: String,
    /// The kind's Rust type, PascalCase: `FirstMate` (a foreign kind's derived name: `Postgresql`
    /// for Zalando's `postgresql`).
    pub kind: String,
    /// `firstmate`: the singular of the CRD, and the stem of sample and role file names.
    pub kind_lower: String,
    /// `first_mate`: the Rust module of the kind.
    pub kind_snake: String,
    /// The resource name: `firstmates`.
    pub plural: String,
}

impl KindVars {
    /// `domain`: the domain of the kind's group (the project's, or `--external-api-domain`).
    pub fn new(
        target: Target,
        group: &Group,
        version: &Version,
        kind: &Kind,
        plural: &str,
        domain: &str,
    ) -> Self {
        Self {
            group: group.as_str().to_string(),
            group_module: target.group_module(group),
            qualified_group: target.qualified_group(group, domain),
            version: version.as_str().to_string(),
            kind: kind.type_name().to_string(),
            kind_lower: kind.lower(),
            kind_snake: kind.snake(),
            plural: plural.to_string(),
        }
    }
}
