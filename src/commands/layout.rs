//! The module files of the layout that several commands write: a group's `mod.rs` under
//! `src/api/`, `src/controller/` and `src/webhook/` in the multigroup layout, and a version's
//! `mod.rs` under `src/webhook/`. `create api` and `create webhook` write them for a new group
//! or version, `edit --multigroup` when it moves the kinds into groups.

use crate::scaffold::table::{Table, group_file, shared_file};
use crate::vars::{GroupVars, WebhookVersionVars};

pub static API_GROUP: Table<GroupVars> =
    Table::new(&[group_file("api/src/api/{{ group_module }}/mod.rs")], &[]);

pub static CONTROLLER_GROUP: Table<GroupVars> = Table::new(
    &[group_file(
        "controller/src/controller/{{ group_module }}/mod.rs",
    )],
    &[],
);

pub static WEBHOOK_GROUP: Table<GroupVars> = Table::new(
    &[group_file("webhook/src/webhook/{{ group_module }}/mod.rs")],
    &[],
);

pub static WEBHOOK_VERSION: Table<WebhookVersionVars> = Table::new(
    &[shared_file("webhook/src/webhook/{{ webhook_dir }}/mod.rs")],
    &[],
);

#[cfg(test)]
pub(crate) fn tables() -> Vec<&'static dyn crate::scaffold::table::Checked> {
    vec![
        &API_GROUP,
        &CONTROLLER_GROUP,
        &WEBHOOK_GROUP,
        &WEBHOOK_VERSION,
    ]
}
