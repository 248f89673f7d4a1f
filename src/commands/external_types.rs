//! An external kind's Rust types, `src/external/<group>/<version>/<kind>.rs`, and the module tree
//! above them: written by `create api` and `create webhook` for a kind of another project, from
//! its CRD (see [`crate::external`]). The types only: the CRD is the other project's to install.

use anyhow::Result;

use crate::scaffold::Plan;
use crate::scaffold::table::{Table, insert, shared_file, user_file};
use crate::vars::ExternalVars;

/// The generated types (the user's once written, like any kind's types).
static TYPES: Table<ExternalVars> = Table::new(
    &[user_file(
        "external/src/external/{{ group_module }}/{{ version }}/{{ kind_snake }}.rs",
    )],
    &[],
);

/// The module tree of the external kinds, `src/external/<group>/<version>/`.
static MODULES: Table<ExternalVars> = Table::new(
    &[
        shared_file("external/src/external/mod.rs"),
        shared_file("external/src/external/{{ group_module }}/mod.rs"),
        shared_file("external/src/external/{{ group_module }}/{{ version }}/mod.rs"),
    ],
    &[
        insert("src/lib.rs", "modules", "pub mod external;"),
        insert(
            "src/external/mod.rs",
            "group-modules",
            "pub mod {{ group_module }};",
        ),
        insert(
            "src/external/{{ group_module }}/mod.rs",
            "version-modules",
            "pub mod {{ version }};",
        ),
        insert(
            "src/external/{{ group_module }}/{{ version }}/mod.rs",
            "kind-modules",
            "pub mod {{ kind_snake }};\npub use {{ kind_snake }}::{{ kind }};",
        ),
    ],
);

/// Plans the types and the module tree (the same in both layouts).
pub fn render(plan: &mut Plan, vars: &ExternalVars) -> Result<()> {
    TYPES.render_files(plan, vars, false)?;
    MODULES.render(plan, vars, false)
}

/// Tells the plan what operator-rs wrote for the types with `vars` (see `Plan::written`).
pub fn record_written(plan: &mut Plan, vars: &ExternalVars) -> Result<()> {
    TYPES.record_written(plan, vars, false)
}

#[cfg(test)]
pub(crate) fn tables() -> Vec<&'static dyn crate::scaffold::table::Checked> {
    vec![&TYPES, &MODULES]
}
