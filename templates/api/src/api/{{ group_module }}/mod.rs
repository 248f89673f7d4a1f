{{ rust_header }}//! API group `{{ qualified_group }}`: one module per version.
//!
//! Several versions of one kind become one CustomResourceDefinition with exactly one storage
//! version: the version whose `#[kube(...)]` attribute does not say `storage = false`.
//! `operator-rs create api` adds the lines below for every new version of this group.

// +operator-rs:scaffold:version-modules
