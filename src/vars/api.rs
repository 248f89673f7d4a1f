//! `create api`'s variables: a kind, its types and its controller.

use serde::Serialize;

use super::{KindVars, ProjectVars};

/// Everything `create api` renders for one kind: its types, sample, RBAC helper roles and
/// controller, and the lines that register them.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ApiVars {
    #[serde(flatten)]
    pub project: ProjectVars,
    #[serde(flatten)]
    pub kind: KindVars,
    #[serde(flatten)]
    pub types: TypesVars,
    #[serde(flatten)]
    pub controller: ControllerVars,
    /// A built-in Kubernetes kind (`apps/v1 Deployment`): its type is k8s-openapi's.
    pub core: bool,
    /// A kind of another project: its types are generated under `src/external/`.
    pub external: bool,
    /// The kind's objects live in namespaces.
    pub api_namespaced: bool,
    /// The kind's Rust type, by its full path: `crate::api::v1::Captain`,
    /// `k8s_openapi::api::apps::v1::Deployment`.
    pub rust_type: String,
    /// The module of a built-in or external kind's type (`k8s_openapi::api::apps::v1`); empty for
    /// the project's own kinds, whose module is `api_module`.
    pub rust_module: String,
}

/// Where the project's own kind's types live.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TypesVars {
    /// The folder under `src/api/`: `v1`, or `crew/v1` in the multigroup layout.
    pub api_dir: String,
    /// The module under `crate::api`: `v1`, `crew::v1`.
    pub api_rel_module: String,
    /// The module `src/api/mod.rs` declares: `v1`, `crew`.
    pub api_top_module: String,
    /// The full path: `crate::api::crew::v1`.
    pub api_module: String,
    /// This version is the storage version of the kind's CRD.
    pub storage: bool,
    /// The stem of the RBAC helper roles' files: `captain`, `crew_captain` (multigroup).
    pub rbac_prefix: String,
    /// The stem of their names: `captain`, `crew-captain`.
    pub role_prefix: String,
}

/// Where the kind's controller lives and what it is called (see `commands::controllers::Slot`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ControllerVars {
    /// The file under `src/controller/`, without `.rs`: `captain`, `crew/captain_backup`.
    pub controller_path: String,
    /// The file's module: `captain_backup`.
    pub controller_module: String,
    /// The module under `crate::controller`: `captain`, `crew::captain`.
    pub controller_rel_module: String,
    /// The module `src/controller/mod.rs` declares: `captain`, `crew`.
    pub controller_top_module: String,
    /// Its name in metrics, logs, Events and as field manager: `captain`, `crew-captain`.
    pub controller_name: String,
}
