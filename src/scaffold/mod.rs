//! The scaffolding engine shared by every command: templates, plans, markers and atomic writes.

mod apply;
pub mod cargo_lock;
mod fault;
mod interrupt;
pub mod journal;
pub mod line_endings;
pub mod lock;
pub mod markers;
pub mod patch;
mod plan;
pub mod rustfmt;
pub mod table;
#[cfg(test)]
pub mod template_variables;
pub mod templates;

pub use apply::apply;
pub use lock::{ProjectLock, lock, refuse_unfinished};
pub use plan::{Action, Change, Owner, Plan};
