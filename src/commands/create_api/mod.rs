//! `operator-rs create api`: a custom resource type and/or a controller for a group/version/kind.
//!
//! One step per module, in the order they run: [`request`] (the flags, the questions, the
//! plugins that take part) → [`validate`] (the request against PROJECT; nothing written) →
//! [`resolve`] (the typed template variables) → [`render`] (the tables of templates and
//! insertions) → [`record`] (PROJECT). The plugins' parts run at each step (see
//! `crate::plugins`).

mod record;
mod render;
mod request;
mod reserved;
mod resolve;
mod validate;

use std::path::Path;

use anyhow::Result;

pub use request::Request;

use crate::cli::CreateApiArgs;
use crate::project;
use crate::scaffold::Plan;

pub fn run(args: &CreateApiArgs, dir: &Path) -> Result<()> {
    let request = Request::from_args(args)?;
    let plan = plan(&request, dir)?;
    super::finish(&plan, args.common.dry_run)?;
    for note in plan.notes() {
        println!("{note}");
    }
    if args.ssa {
        println!(
            "note: --ssa: nothing to generate in Rust: kube-rs applies typed objects server-side \
             (Patch::Apply), as the deploy-image controllers do"
        );
    }
    for key in &request.layout_keys {
        println!("note: --plugins {key}: kubebuilder's standard layout, which is this project's");
    }
    if args.common.dry_run {
        return Ok(());
    }
    if args.make && args.manifests && request.resource {
        super::run_make_manifests(dir);
    }
    if !request.parts.is_empty() && request.controller {
        // A plugin wrote a complete controller: the next step is running it.
        println!(
            "Next: install the CRD and run the manager against the cluster of your kubeconfig:"
        );
        println!("$ make install run");
        println!("then, in another terminal, create a {}:", request.kind);
        println!("$ kubectl apply -k config/samples/");
    } else {
        println!("Next: implement your new API and generate the manifests (e.g. CRDs, RBAC) with:");
        println!("$ make manifests");
    }
    Ok(())
}

/// Everything `create api` would write, without writing it.
pub fn plan(request: &Request, dir: &Path) -> Result<Plan> {
    let checked = validate::check(request, dir)?;
    let vars = resolve::vars(&checked, request, dir)?;
    let recorded = resolve::recorded(&checked, request, &vars);
    let mut plan = Plan::new(dir, request.force);
    render::render(&mut plan, &checked, request, &vars, recorded.as_ref())?;
    let mut project = record::record(&checked, request);
    let external = &request.external_plugins;
    super::plugin_chain::run(external, "create api", &mut plan, &mut project)?;
    plan.write(project::FILE, project.render_now())?;
    crate::runtime_features::keep_in_step(&mut plan, Some(&checked.project), &project)?;
    Ok(plan)
}

#[cfg(test)]
pub(crate) fn tables() -> Vec<&'static dyn crate::scaffold::table::Checked> {
    render::tables()
}
