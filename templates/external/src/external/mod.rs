{{ rust_header }}//! Kinds of other projects that this operator's controllers and webhooks work with, such as
//! cert-manager's Certificate: one module per API group, then per version.
//!
//! `operator-rs create api --external-api-path <CRD file> --resource=false` generates each kind's
//! Rust types from its CustomResourceDefinition. The CRDs stay the other projects': `make
//! manifests` writes none of them, and the cluster must have them installed.

// +operator-rs:scaffold:group-modules
