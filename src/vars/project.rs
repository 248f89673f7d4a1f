//! The variables of the project as a whole.

use serde::Serialize;

use crate::boilerplate;
use crate::project::Project;

/// The project as a whole, from PROJECT and the license header.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ProjectVars {
    /// `projectName`: the package's name, and the prefix of every object in `config/`.
    pub project_name: String,
    /// The package's library name: `project_name` with `_` for `-`.
    pub crate_name: String,
    pub domain: String,
    /// The manager watches its own namespace only (`--namespaced`).
    pub namespaced: bool,
    /// The multigroup layout: `src/api/<group>/<version>/`.
    pub multigroup: bool,
    /// The manager spreads each controller's objects over its replicas (`--sharding`).
    pub sharding: bool,
    /// The license header as `//` comment lines (empty for `--license none`), as
    /// `hack/boilerplate.rs.txt` holds it: later commands read it back from there, so a user's
    /// edits carry over.
    pub boilerplate: String,
    /// The header as it goes on top of a Rust file: kubebuilder's `YEAR` replaced by the current
    /// year, followed by a blank line; or nothing.
    pub rust_header: String,
    /// The manager's Lease name (see [`leader_election_id`]).
    pub leader_election_id: String,
    /// The operator-rs that writes the files.
    pub operator_rs_version: &'static str,
}

impl ProjectVars {
    pub fn new(project: &Project, boilerplate: &str) -> Self {
        let rust_header = if boilerplate.trim().is_empty() {
            String::new()
        } else {
            let year = boilerplate::current_year();
            format!("{}\n", boilerplate::with_year(boilerplate, year))
        };
        Self {
            project_name: project.project_name.clone(),
            crate_name: project.project_name.replace('-', "_"),
            domain: project.domain.clone(),
            namespaced: project.namespaced,
            multigroup: project.multigroup,
            sharding: project.sharding,
            boilerplate: boilerplate.to_string(),
            rust_header,
            leader_election_id: leader_election_id(project),
            operator_rs_version: env!("CARGO_PKG_VERSION"),
        }
    }
}

/// kubebuilder's default leader election ID: `<FNV-1a of the repo, else the name>.<domain>`.
pub fn leader_election_id(project: &Project) -> String {
    let seed = if project.repo.is_empty() {
        &project.project_name
    } else {
        &project.repo
    };
    format!("{:08x}.{}", boilerplate::fnv1a32(seed), project.domain)
}

/// `init`'s variables: the project, and the license's details for README.md.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct InitVars {
    #[serde(flatten)]
    pub project: ProjectVars,
    /// `--owner`, as given (empty when not).
    pub owner: String,
    /// The year of the license header.
    pub year: String,
    /// `--license`: `apache2`, `copyright`, `none`, or `file` for `--license-file`.
    pub license: String,
}

/// A group's module file (`src/api/<group>/mod.rs` and the like, in the multigroup layout).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GroupVars {
    #[serde(flatten)]
    pub project: ProjectVars,
    /// The group's Rust module: `sea_creatures` for `sea-creatures`.
    pub group_module: String,
    /// The API group as Kubernetes spells it (`""` for core), for its doc comment.
    pub qualified_group: String,
}
