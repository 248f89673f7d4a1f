{{ rust_header }}//! Webhooks for the kinds of {% if qualified_group == "" %}the core API group{% else %}the API group `{{ qualified_group }}`{% endif %}: one module per version.

// +operator-rs:scaffold:webhook-version-modules
