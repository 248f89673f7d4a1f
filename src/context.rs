//! The template variables every command shares, derived from PROJECT and the license header.
//! The full list is documented in docs/templates.md.

use tera::Context;

use crate::boilerplate;
use crate::project::Project;

/// Path of the license header, relative to the project root.
pub const BOILERPLATE_FILE: &str = "hack/boilerplate.rs.txt";

/// Variables describing the project as a whole.
///
/// `boilerplate` is the license header as `//` comment lines (empty for `--license none`); it is
/// read back from `hack/boilerplate.rs.txt` by later commands so a user's edits carry over.
pub fn project_context(project: &Project, boilerplate_text: &str) -> Context {
    let mut ctx = Context::new();
    ctx.insert("project_name", &project.project_name);
    ctx.insert("crate_name", &project.project_name.replace('-', "_"));
    ctx.insert("domain", &project.domain);
    ctx.insert("namespaced", &project.namespaced);
    ctx.insert("multigroup", &project.multigroup);
    ctx.insert("boilerplate", boilerplate_text);
    let rust_header = if boilerplate_text.trim().is_empty() {
        String::new()
    } else {
        format!("{boilerplate_text}\n")
    };
    ctx.insert("rust_header", &rust_header);
    ctx.insert("leader_election_id", &leader_election_id(project));
    ctx.insert("operator_rs_version", env!("CARGO_PKG_VERSION"));
    ctx
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
