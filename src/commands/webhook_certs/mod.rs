//! Where the webhooks' certificates come from, as the project's files say it: cert-manager
//! (kubebuilder's `config/certmanager/`, CA injection by `replacements`) or the manager itself
//! (`config/webhook-certs/`, the RBAC of its own certificates, and the flags that name what it
//! writes). Both are rendered from PROJECT as a whole, so `create webhook` (one more webhook) and
//! `edit --webhook-certs` (the other mode) are the same step: bring the project's files from
//! what the PROJECT before asks for to what the PROJECT after asks for ([`update`]).
//!
//! The files are brought over block by block ([`crate::scaffold::rerender`]), so the user's own
//! edits elsewhere in them stay; `config/default/kustomization.yaml`, `init`'s file, is changed
//! only by commenting and uncommenting kubebuilder's blocks ([`kustomize`]).

pub mod kustomize;

use std::collections::BTreeMap;

use anyhow::{Result, bail};

use crate::names::pluralize;
use crate::project::{Project, WebhookCerts};
use crate::scaffold::Plan;
use crate::scaffold::rerender::patch;
use crate::scaffold::table::{Table, shared_file};
use crate::vars::{ProjectVars, WebhookCertsVars};

/// The manager's patch for the webhook server: mounts cert-manager's Secret, or passes the
/// self-signed mode's flags.
static MANAGER_PATCH: Table<WebhookCertsVars> = Table::new(
    &[shared_file(
        "webhook/config/default/manager_webhook_patch.yaml",
    )],
    &[],
);

/// cert-manager's Issuer and Certificates, kubebuilder's `config/certmanager/`.
static CERT_MANAGER: Table<WebhookCertsVars> = Table::new(
    &[
        shared_file("webhook/config/certmanager/issuer.yaml"),
        shared_file("webhook/config/certmanager/certificate-webhook.yaml"),
        shared_file("webhook/config/certmanager/certificate-metrics.yaml"),
        shared_file("webhook/config/certmanager/kustomization.yaml"),
        shared_file("webhook/config/certmanager/kustomizeconfig.yaml"),
    ],
    &[],
);

/// The RBAC of the manager's own certificates, by the names of the objects it writes.
static SELF_SIGNED: Table<WebhookCertsVars> = Table::new(
    &[
        shared_file("webhook/config/webhook-certs/kustomization.yaml"),
        shared_file("webhook/config/webhook-certs/role.yaml"),
        shared_file("webhook/config/webhook-certs/role_binding.yaml"),
        shared_file("webhook/config/webhook-certs/cluster_role.yaml"),
        shared_file("webhook/config/webhook-certs/cluster_role_binding.yaml"),
    ],
    &[],
);

const DEFAULT_KUSTOMIZATION: &str = "config/default/kustomization.yaml";

/// The variables of the certificate files of `project`: its mode, and the names of the objects
/// its manager writes in self-signed mode, as `config/default` (namePrefix `<project>-`) names
/// them.
pub fn vars(project: &Project, header: &str) -> WebhookCertsVars {
    let name = &project.project_name;
    let any = |has: fn(&crate::project::Webhooks) -> bool| {
        project
            .resources
            .iter()
            .any(|r| r.webhooks.as_ref().is_some_and(has))
    };
    WebhookCertsVars {
        project: ProjectVars::new(project, header),
        self_signed: project.certs_mode() == WebhookCerts::SelfSigned,
        secret_name: format!("{name}-webhook-server-self-signed-cert"),
        mutating_configuration: any(|w| w.defaulting)
            .then(|| format!("{name}-mutating-webhook-configuration")),
        validating_configuration: any(|w| w.validation)
            .then(|| format!("{name}-validating-webhook-configuration")),
        conversion_crds: conversion_crds(project),
    }
}

/// The CRDs whose conversion webhook the project serves: `<plural>.<group>.<domain>`, sorted.
fn conversion_crds(project: &Project) -> Vec<String> {
    let mut crds: Vec<String> = project
        .resources
        .iter()
        .filter(|r| r.webhooks.as_ref().is_some_and(|w| w.conversion))
        .map(|r| {
            let plural = r
                .plural
                .clone()
                .unwrap_or_else(|| pluralize(&r.kind.to_lowercase()));
            let domain = if r.domain.is_empty() {
                &project.domain
            } else {
                &r.domain
            };
            format!("{plural}.{}.{domain}", r.group)
        })
        .collect();
    crds.sort();
    crds.dedup();
    crds
}

/// The certificate files `project` asks for: none without webhooks, else the manager's patch and
/// its mode's folder. (path, contents).
fn files(project: &Project, header: &str) -> Result<BTreeMap<String, String>> {
    let mut files = BTreeMap::new();
    if !project.has_webhooks() {
        return Ok(files);
    }
    let vars = vars(project, header);
    let mode = match project.certs_mode() {
        WebhookCerts::SelfSigned => &SELF_SIGNED,
        WebhookCerts::CertManager => &CERT_MANAGER,
    };
    for table in [&MANAGER_PATCH, mode] {
        files.extend(table.texts(&vars, project.multigroup)?);
    }
    Ok(files)
}

/// Brings the project's certificate files and `config/default/kustomization.yaml` from what
/// `before` asks for to what `after` asks for. A file the user edited is changed only where the
/// two renders differ; if that part was edited, the command stops naming the file (`--force`
/// writes the new render). A file `after` no longer needs is removed if it is as operator-rs wrote
/// it, and kept (with a note) otherwise.
pub fn update(
    plan: &mut Plan,
    before: &Project,
    after: &Project,
    header: &str,
    force: bool,
) -> Result<()> {
    let old = files(before, header)?;
    let new = files(after, header)?;
    for (path, contents) in &new {
        let current = plan.read(path)?;
        let text = match (old.get(path), current) {
            // Missing (new, or deleted by the user): written.
            (_, None) => contents.clone(),
            // There already though PROJECT did not ask for it (an earlier mode's file kept):
            // the user's, as a shared file once written.
            (None, Some(_)) => continue,
            (Some(was), Some(current)) => match patch(&current, was, contents) {
                Some(text) => text,
                None if force => contents.clone(),
                None => bail!(
                    "cannot update {path}: the part of it that names the webhooks or their \
                     certificates is not as operator-rs wrote it; change it by hand, or move it \
                     away to have it written afresh (`operator-rs edit --webhook-certs=... \
                     --force` overwrites it)"
                ),
            },
        };
        plan.write(path, text)?;
    }
    for (path, was) in old.iter().filter(|(path, _)| !new.contains_key(*path)) {
        match plan.read(path)? {
            Some(current) if current == *was || force => plan.delete(path)?,
            Some(_) => plan.note(format!(
                "kept {path}: you edited it, and the project no longer uses it"
            )),
            None => {}
        }
    }
    if after.has_webhooks() && Needs::of(before) != Needs::of(after) {
        sync_kustomization(plan, after)?;
    }
    Ok(())
}

/// What of a project decides the blocks of `config/default/kustomization.yaml`: when it is the
/// same before and after, the file is left as it is (the user may have changed blocks by hand).
#[derive(PartialEq)]
struct Needs {
    webhooks: bool,
    mode: WebhookCerts,
    defaulting: bool,
    validation: bool,
    conversion_crds: Vec<String>,
}

impl Needs {
    fn of(project: &Project) -> Self {
        let has = |f: fn(&crate::project::Webhooks) -> bool| {
            project
                .resources
                .iter()
                .any(|r| r.webhooks.as_ref().is_some_and(f))
        };
        Self {
            webhooks: project.has_webhooks(),
            mode: project.certs_mode(),
            defaulting: has(|w| w.defaulting),
            validation: has(|w| w.validation),
            conversion_crds: conversion_crds(project),
        }
    }
}

/// Makes active exactly the blocks of `config/default/kustomization.yaml` that `project`'s
/// webhooks and certificate mode need, and comments out the others: the CA injection of
/// cert-manager's `replacements` for each kind of webhook and each converted CRD (inserted at
/// their markers the first time), or the manager's own certificates.
fn sync_kustomization(plan: &mut Plan, project: &Project) -> Result<()> {
    let needs = Needs::of(project);
    let cert_manager = needs.mode == WebhookCerts::CertManager;
    let crds = &needs.conversion_crds;
    ensure_self_signed_block(plan, !cert_manager)?;
    let mut blocks: Vec<(String, bool)> = Vec::new();
    let mut add = |list: &[&str], active: bool| {
        blocks.extend(list.iter().map(|block| (block.to_string(), active)));
    };
    add(kustomize::WEBHOOK_BLOCKS, true);
    add(kustomize::CERT_MANAGER_BLOCKS, cert_manager);
    if needs.defaulting {
        add(&[kustomize::DEFAULTING_REPLACEMENTS], cert_manager);
    }
    if needs.validation {
        add(&[kustomize::VALIDATION_REPLACEMENTS], cert_manager);
    }
    if !crds.is_empty() {
        add(
            &[
                kustomize::CONVERSION_NAMESPACE_SOURCE,
                kustomize::CONVERSION_NAME_SOURCE,
            ],
            cert_manager,
        );
    }
    for (block, active) in &blocks {
        if *active {
            plan.uncomment(DEFAULT_KUSTOMIZATION, block)?;
        } else {
            plan.comment(DEFAULT_KUSTOMIZATION, block)?;
        }
    }
    for crd in crds {
        for (index, marker) in (0u8..).zip(kustomize::CA_INJECTION_MARKERS) {
            let target = kustomize::ca_injection_target(crd, index);
            let commented: String = target.lines().map(|line| format!("#{line}\n")).collect();
            let text = plan.read(DEFAULT_KUSTOMIZATION)?.unwrap_or_default();
            let present = [target.as_str(), commented.trim_end()]
                .iter()
                .any(|form| text.contains(form));
            if !present {
                let form = if cert_manager {
                    target.clone()
                } else {
                    commented.trim_end().to_string()
                };
                plan.insert(DEFAULT_KUSTOMIZATION, marker, &form)?;
            } else if cert_manager {
                plan.uncomment(DEFAULT_KUSTOMIZATION, &target)?;
            } else {
                plan.comment(DEFAULT_KUSTOMIZATION, &target)?;
            }
        }
    }
    Ok(())
}

/// Activates (or comments out) `- ../webhook-certs`. Projects from before the self-signed mode
/// have no such line: it is added below `- ../certmanager` when it is needed, and its absence is
/// as good as commented out otherwise.
fn ensure_self_signed_block(plan: &mut Plan, active: bool) -> Result<()> {
    let [block] = kustomize::SELF_SIGNED_BLOCKS else {
        unreachable!("one line")
    };
    let text = plan.read(DEFAULT_KUSTOMIZATION)?.unwrap_or_default();
    let present = text
        .lines()
        .any(|line| line.trim_end().trim_start_matches('#') == *block);
    match (present, active) {
        (true, true) => plan.uncomment(DEFAULT_KUSTOMIZATION, block),
        (true, false) => plan.comment(DEFAULT_KUSTOMIZATION, block),
        (false, false) => Ok(()),
        (false, true) => plan.edit(DEFAULT_KUSTOMIZATION, |text| {
            let mut out = String::with_capacity(text.len() + block.len() + 1);
            let mut added = false;
            for line in text.split_inclusive('\n') {
                out.push_str(line);
                if !added && line.trim_end().trim_start_matches('#') == "- ../certmanager" {
                    out.push_str(block);
                    out.push('\n');
                    added = true;
                }
            }
            if !added {
                bail!(
                    "{DEFAULT_KUSTOMIZATION} lists neither `- ../webhook-certs` nor \
                     `- ../certmanager` (commented or not); add `- ../webhook-certs` to its \
                     resources by hand"
                );
            }
            Ok(out)
        }),
    }
}

#[cfg(test)]
pub(crate) fn tables() -> Vec<&'static dyn crate::scaffold::table::Checked> {
    vec![&MANAGER_PATCH, &CERT_MANAGER, &SELF_SIGNED]
}
