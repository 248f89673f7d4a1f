//! `create webhook`, step 3: the tables of templates and insertions, rendered into the plan.
//!
//! Each kind gets a module `src/webhook/[<group>/]<version>/<kind>/` with one file per webhook
//! type (and per conversion spoke), so adding a second type or another spoke to a kind renders
//! one more file and inserts single lines at markers: the files the user already edited are
//! never rendered again, not even with `--force`.

use anyhow::Result;

use super::validate::Checked;
use super::{Request, resolve, storage};
use crate::commands::{cluster_rbac, external_types, layout};
use crate::scaffold::Plan;
use crate::scaffold::table::{
    Table, insert, insert_multigroup, insert_sorted, shared_file, user_file,
};
use crate::vars::{SpokeVars, WebhookVars};

/// The kind's webhook module and the Kubernetes config of the webhook server: written by the
/// first webhook that needs them, then kept; and the lines that register the kind's webhooks.
/// (Where the server's certificate comes from is [`crate::commands::webhook_certs`]'s.)
/// Nothing once per project: the webhook machinery is the runtime crate's
/// (`operator_rs_runtime::webhook`), and `init` writes `src/webhook/mod.rs`, the list of the
/// project's webhooks that the manager serves and `make manifests` registers.
static SHARED: Table<WebhookVars> = Table::new(
    &[
        shared_file("webhook/src/webhook/{{ webhook_dir }}/{{ kind_snake }}/mod.rs"),
        shared_file("webhook/config/webhook/kustomization.yaml"),
        shared_file("webhook/config/webhook/service.yaml"),
        shared_file("webhook/config/network-policy/allow-webhook-traffic.yaml"),
    ],
    &[
        insert(
            "src/webhook/mod.rs",
            "webhook-modules",
            "pub mod {{ webhook_top_module }};",
        ),
        insert_multigroup(
            "src/webhook/{{ group_module }}/mod.rs",
            "webhook-version-modules",
            "pub mod {{ version }};",
        ),
        insert(
            "src/webhook/{{ webhook_dir }}/mod.rs",
            "webhook-kind-modules",
            "pub mod {{ kind_snake }};",
        ),
        insert_sorted(
            "src/webhook/mod.rs",
            "webhooks",
            "{{ webhook_rel_module }}::{{ kind_snake }}::webhooks(),",
        ),
        insert(
            "config/network-policy/kustomization.yaml",
            "network-policies",
            "- allow-webhook-traffic.yaml",
        ),
    ],
);

/// The kind's module, where each webhook adds itself.
const KIND_MOD: &str = "src/webhook/{{ webhook_dir }}/{{ kind_snake }}/mod.rs";

static DEFAULTING: Table<WebhookVars> = Table::new(
    &[user_file(
        "webhook/src/webhook/{{ webhook_dir }}/{{ kind_snake }}/defaulting.rs",
    )],
    &[
        insert(KIND_MOD, "webhook-type-modules", "pub mod defaulting;"),
        insert_sorted(KIND_MOD, "webhook-registrations", "defaulting::webhook(),"),
    ],
);

static VALIDATION: Table<WebhookVars> = Table::new(
    &[user_file(
        "webhook/src/webhook/{{ webhook_dir }}/{{ kind_snake }}/validation.rs",
    )],
    &[
        insert(KIND_MOD, "webhook-type-modules", "pub mod validation;"),
        insert_sorted(KIND_MOD, "webhook-registrations", "validation::webhook(),"),
    ],
);

/// The conversion webhook of the hub. The CRD patch is shared by every version of the kind (one
/// CRD), hence kept if present.
static CONVERSION: Table<WebhookVars> = Table::new(
    &[
        user_file("webhook/src/webhook/{{ webhook_dir }}/{{ kind_snake }}/conversion.rs"),
        shared_file("webhook/config/crd/patches/webhook_in_{{ crd_patch_name }}.yaml"),
    ],
    &[
        insert(KIND_MOD, "webhook-type-modules", "pub mod conversion;"),
        insert_sorted(KIND_MOD, "webhook-registrations", "conversion::webhook(),"),
        insert_sorted(
            "config/crd/kustomization.yaml",
            "crdkustomizewebhookpatch",
            "- path: patches/webhook_in_{{ crd_patch_name }}.yaml",
        ),
        // With a hub, the storage version moves to it: the manager rewrites the objects stored
        // in the older versions (see `storage_migrations` there).
        insert_sorted(
            "src/webhook/mod.rs",
            "storage-migrations",
            "StorageMigration::of::<{{ rust_type }}>(),",
        ),
    ],
);

/// The conversions between the hub and one spoke version, once per `--spoke`.
static SPOKE: Table<SpokeVars> = Table::new(
    &[user_file(
        "webhook/src/webhook/{{ webhook_dir }}/{{ kind_snake }}/conversion_{{ spoke }}.rs",
    )],
    &[
        insert(
            KIND_MOD,
            "webhook-type-modules",
            "pub mod conversion_{{ spoke }};",
        ),
        insert(
            "src/webhook/{{ webhook_dir }}/{{ kind_snake }}/conversion.rs",
            "conversion-spokes",
            "Spoke::new::<{{ spoke_api_module }}::{{ kind }}>(),",
        ),
    ],
);

/// Plans the files of this run: first what `--force` compares the user's files with, then the
/// kind's module and config, each webhook asked for, and the conversion's spokes. Returns what
/// could not be done and must be done by hand.
pub fn render(
    plan: &mut Plan,
    checked: &Checked,
    request: &Request,
    vars: &WebhookVars,
    spokes: &[String],
) -> Result<Vec<String>> {
    let multigroup = checked.project.multigroup;
    record_written(plan, checked)?;
    if let Some(external) = resolve::external_types(checked, vars) {
        // A kind of another project that the project has no types for yet.
        external_types::render(plan, &external)?;
    }
    layout::WEBHOOK_GROUP.render(plan, &resolve::group(vars), multigroup)?;
    layout::WEBHOOK_VERSION.render(plan, &resolve::version(vars), multigroup)?;
    SHARED.render(plan, vars, multigroup)?;
    if request.defaulting {
        DEFAULTING.render(plan, vars, multigroup)?;
    }
    if request.validation {
        VALIDATION.render(plan, vars, multigroup)?;
    }
    let mut warnings = Vec::new();
    if request.conversion {
        CONVERSION.render_files(plan, vars, multigroup)?;
        plan.uncomment("config/crd/kustomization.yaml", "patches:")?;
        plan.uncomment(
            "config/crd/kustomization.yaml",
            "configurations:\n- kustomizeconfig.yaml",
        )?;
        CONVERSION.render_inserts(plan, vars, multigroup)?;
        for spoke in spokes {
            SPOKE.render(plan, &resolve::spoke(vars, checked, spoke), multigroup)?;
        }
        if checked.project.namespaced {
            // The storage migration of the kind reads its CRD: a rule of the ClusterRole.
            cluster_rbac::add(plan, &vars.project)?;
        }
        let (project, group, kind) = (&checked.project, &checked.group, &checked.kind);
        if let Some(warning) =
            storage::make_hub_the_storage_version(plan, project, group, &checked.version, kind)?
        {
            warnings.push(warning);
        }
    }
    Ok(warnings)
}

/// Tells the plan what operator-rs wrote for the kind's webhooks before, from what PROJECT
/// recorded: `--force` renders a file again only if it is still that, and never an edited one
/// (see `Plan::written`).
fn record_written(plan: &mut Plan, checked: &Checked) -> Result<()> {
    let recorded = &checked.recorded;
    let multigroup = checked.project.multigroup;
    let before = resolve::vars(
        checked,
        recorded.defaulting_path.as_deref(),
        recorded.validation_path.as_deref(),
    );
    if recorded.defaulting {
        DEFAULTING.record_written(plan, &before, multigroup)?;
    }
    if recorded.validation {
        VALIDATION.record_written(plan, &before, multigroup)?;
    }
    if recorded.conversion {
        CONVERSION.record_written(plan, &before, multigroup)?;
        for spoke in &recorded.spoke {
            SPOKE.record_written(plan, &resolve::spoke(&before, checked, spoke), multigroup)?;
        }
    }
    Ok(())
}

#[cfg(test)]
pub(crate) fn tables() -> Vec<&'static dyn crate::scaffold::table::Checked> {
    vec![&SHARED, &DEFAULTING, &VALIDATION, &CONVERSION, &SPOKE]
}
