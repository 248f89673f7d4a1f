{{ rust_header }}//! API group `{{ qualified_group }}` (another project's): one module per version.

// +operator-rs:scaffold:version-modules
