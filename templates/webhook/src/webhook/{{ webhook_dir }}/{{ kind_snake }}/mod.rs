{{ rust_header }}//! The webhooks of {{ kind }} (`{% if qualified_group != "" %}{{ qualified_group }}/{% endif %}{{ version }}`): one module per webhook.
//!
//! `operator-rs create webhook` adds the modules and the entries of [`webhooks`].

// +operator-rs:scaffold:webhook-type-modules

use operator_rs_runtime::webhook::Webhook;

/// The webhooks of {{ kind }}: served by the manager, and registered with the API server by
/// `make manifests`. Remove an entry to stop serving (and registering) that webhook.
pub fn webhooks() -> Vec<Webhook> {
    vec![
        // +operator-rs:scaffold:webhook-registrations
    ]
}
