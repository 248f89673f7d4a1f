//! OLM packaging, operator-sdk's half: the CSV base (`generate kustomize manifests`), the
//! bundle (`generate bundle`) and its validation (`bundle validate`).
//!
//! All of it works on YAML the project already has — the CRDs `make manifests` rendered and
//! kustomize's output of `config/manifests` — so it is a library of its own, which the CLI calls,
//! not part of the runtime crate that every operator binary compiles (see docs/olm.md, "Design").

pub mod base;
pub mod bundle;
pub mod catalog;
pub mod csv;
pub mod descriptors;
pub mod gosemver;
pub mod image_ref;
pub mod images;
pub mod k8s_names;
pub mod kyaml;
pub mod metadata;
pub mod typed;
pub mod validate;
pub mod yaml;
