//! The template variables, typed: what each template is rendered with.
//!
//! Each command resolves its request into these structs in one pure step, then renders its
//! tables of templates from them (see [`crate::scaffold::table`]). A struct that includes another
//! flattens it, so templates name the fields directly: `{{ kind }}`, `{{ project_name }}`. Every
//! name a template uses is a field of the struct its table is rendered with; a test checks it.
//!
//! - [`ProjectVars`]: the project as a whole (every struct includes it); [`InitVars`] adds the
//!   license's owner and year for `init`.
//! - [`KindVars`]: a kind's names, as every kind's templates use them.
//! - [`ApiVars`]: `create api`'s kind, its types and its controller; [`WebhookVars`] and
//!   [`SpokeVars`]: `create webhook`'s.
//! - [`GroupVars`], [`WebhookVersionVars`], [`ExternalVars`]: module files shared by commands
//!   (a group's or a version's `mod.rs`, an external kind's types).
//!
//! Plugins have variables of their own, beside the command's (see `crate::plugins`).

mod api;
mod external;
mod kind;
mod project;
mod webhook;

pub use api::{ApiVars, ControllerVars, TypesVars};
pub use external::ExternalVars;
pub use kind::{KindVars, Target, recorded_group_module, recorded_kind_module};
pub use project::{GroupVars, InitVars, ProjectVars, leader_election_id};
pub use webhook::{SpecVars, SpokeVars, WebhookCertsVars, WebhookVars, WebhookVersionVars};
