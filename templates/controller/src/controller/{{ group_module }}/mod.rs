{{ rust_header }}//! Controllers of the kinds of the {% if qualified_group == "" %}core API group{% else %}API group `{{ qualified_group }}`{% endif %}: one module per kind.
//!
//! `operator-rs create api` adds the lines below for every new controller of this group.

// +operator-rs:scaffold:controller-modules
