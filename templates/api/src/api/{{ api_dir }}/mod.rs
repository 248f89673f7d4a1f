{{ rust_header }}//! API version `{{ qualified_group }}/{{ version }}`: one module per kind, each with its `<Kind>`,
//! `<Kind>Spec` and `<Kind>Status` types re-exported here, so that for instance
//! `{{ api_module }}::{{ kind }}` names a kind of this version.
//!
//! `operator-rs create api` adds the lines below for every new kind of this version.

// +operator-rs:scaffold:kind-modules
