{{ rust_header }}//! Webhooks for the kinds of {% if multigroup %}`{% if qualified_group != "" %}{{ qualified_group }}/{% endif %}{{ version }}`{% else %}API version `{{ version }}` (of any group){% endif %}: one module per kind.

// +operator-rs:scaffold:webhook-kind-modules
