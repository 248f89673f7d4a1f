{{ rust_header }}//! API version `{{ qualified_group }}/{{ version }}` (another project's): one module per kind, its
//! type re-exported here, so that `{{ rust_module }}::{{ kind }}` names a kind of this version.

// +operator-rs:scaffold:kind-modules
