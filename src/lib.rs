//! operator-rs as a library: the commands' planners and the engine behind them. The binary in
//! `src/main.rs` is a thin shell over this; tests drive the planners directly.

pub mod boilerplate;
pub mod builtin;
pub mod cli;
pub mod commands;
pub mod external;
pub mod names;
/// OLM packaging (the CSV base, bundles, catalogs, `bundle validate`): the operator-rs-olm crate,
/// which the `generate`, `bundle` and `catalog` commands call.
pub use operator_rs_olm as olm;
pub mod openapi;
pub mod plugins;
pub mod project;
pub mod refused_flags;
pub mod runtime_crate;
pub mod runtime_features;
pub mod runtime_source;
pub mod scaffold;
pub mod stored_names;
pub mod vars;
