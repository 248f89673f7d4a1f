//! The scaffolding engine shared by every command: templates, plans, markers and atomic writes.

mod apply;
pub mod cargo_toml;
pub mod markers;
mod plan;
pub mod rustfmt;
pub mod templates;

pub use apply::apply;
pub use plan::{Action, Change, IfExists, Plan};
