{{ rust_header }}//! The conversion webhook of {{ kind }}: the API server calls it to convert {{ kind }}s between
//! their versions, e.g. to serve a {{ kind }} stored as `{{ version }}` to a client that asks for
//! another version.
//!
//! `{{ version }}` is the hub: every other version (a spoke) converts to and from it, with the
//! `From` implementations in `conversion_<spoke>.rs`, and the webhook chains them (spoke → hub
//! → spoke). The hub is also the storage version, the one the API server stores {{ kind }}s in.

use operator_rs_runtime::webhook::{Converter, Spoke, Webhook};

use {{ rust_type }};

/// The conversion webhook of {{ kind }}, with every spoke version.
pub fn webhook() -> Webhook {
    let spokes = vec![
        // +operator-rs:scaffold:conversion-spokes
    ];
    Webhook::conversion(Converter::new::<{{ kind }}>(spokes))
}
