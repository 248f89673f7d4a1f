//! `create webhook`'s variables: a kind's webhooks and conversions.

use serde::Serialize;

use super::{KindVars, ProjectVars};

/// Everything `create webhook` renders for one kind: its webhook module, the defaulting,
/// validating and conversion webhooks, and the config that serves them.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct WebhookVars {
    #[serde(flatten)]
    pub project: ProjectVars,
    #[serde(flatten)]
    pub kind: KindVars,
    /// The folder under `src/webhook/`: `v1`, or `crew/v1` in the multigroup layout.
    pub webhook_dir: String,
    /// The module under `crate::webhook`: `v1`, `crew::v1`.
    pub webhook_rel_module: String,
    /// The module `src/webhook/mod.rs` declares: `v1`, `crew`.
    pub webhook_top_module: String,
    /// The stem of the CRD's conversion patch: `firstmates`, `crew_firstmates` (multigroup).
    pub crd_patch_name: String,
    /// A built-in Kubernetes kind.
    pub core: bool,
    /// A kind of another project (its types under `src/external/`).
    pub external: bool,
    /// Not the project's own kind: built-in or external. Its spec is not the project's to know.
    pub foreign: bool,
    /// The module that defines the kind's type.
    pub api_module: String,
    /// The kind's Rust type, by its full path.
    pub rust_type: String,
    /// The kind's objects live in namespaces.
    pub api_namespaced: bool,
    /// Where the API server calls the defaulting webhook: `/mutate-crew-example-com-v1-captain`.
    pub defaulting_path: String,
    /// Where it calls the validating webhook: `/validate-…`.
    pub validation_path: String,
    /// What the kind's spec holds, for the webhooks' examples.
    pub spec: SpecVars,
}

/// The fields of a kind's spec that the webhooks' examples use, as the command (or plugin) that
/// wrote the kind's types left them. All false for a foreign kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SpecVars {
    /// `spec.foo`, the example field of `create api`'s types.
    pub foo: bool,
    /// `spec.size`, the number of pods of a deploy-image kind.
    pub size: bool,
    /// `spec.containerPort`, a deploy-image kind's port, when it was given one.
    pub container_port: bool,
}

/// A conversion between the hub and one spoke version.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SpokeVars {
    #[serde(flatten)]
    pub webhook: WebhookVars,
    /// The spoke version: `v2`.
    pub spoke: String,
    /// The module of its types: `crate::api::v2`.
    pub spoke_api_module: String,
}

/// A version's module of the webhooks (`src/webhook/[<group>/]<version>/mod.rs`), which `edit
/// --multigroup` writes too.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct WebhookVersionVars {
    #[serde(flatten)]
    pub project: ProjectVars,
    /// The API group as Kubernetes spells it, for the module's doc comment.
    pub qualified_group: String,
    pub version: String,
    /// The folder under `src/webhook/`.
    pub webhook_dir: String,
}

/// The files of the project's webhook certificates (`config/webhook-certs/`,
/// `config/default/manager_webhook_patch.yaml`), rendered from PROJECT as a whole: every webhook
/// of the project is in them.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct WebhookCertsVars {
    #[serde(flatten)]
    pub project: ProjectVars,
    /// The manager makes the certificates itself (`--webhook-certs=self-signed`); else
    /// cert-manager issues them.
    pub self_signed: bool,
    /// The Secret the manager keeps them in, as config/default names objects.
    pub secret_name: String,
    /// The MutatingWebhookConfiguration of config/webhook, as config/default names it, if a kind
    /// has a defaulting webhook.
    pub mutating_configuration: Option<String>,
    /// The same for the ValidatingWebhookConfiguration and validating webhooks.
    pub validating_configuration: Option<String>,
    /// The CRDs with a conversion webhook: `<plural>.<group>`, sorted.
    pub conversion_crds: Vec<String>,
}
