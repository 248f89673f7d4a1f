//! `operator-rs create webhook`: defaulting, validating and conversion webhooks for a kind, the
//! project's own, a built-in one or another project's.
//!
//! One step per module, in the order they run: [`validate`] (the flags and the request against
//! PROJECT; nothing written) → [`resolve`] (the typed template variables) → [`render`] (the
//! tables of templates and insertions; [`storage`] moves the storage version to the hub) →
//! [`record`] (PROJECT), and the files of the webhooks' certificates brought in line with it
//! ([`crate::commands::webhook_certs`]).
//!
//! The machinery (the traits, the HTTPS server, the webhook configurations) is the runtime
//! crate's, `operator_rs_runtime::webhook`, and `init` already wires the project's
//! `webhook::webhooks()` into the manager and into `make manifests`: a webhook adds its kind to
//! that list and nothing once per project, neither code nor dependencies.

mod record;
mod render;
mod resolve;
mod storage;
mod validate;

use std::path::Path;

use anyhow::Result;

use crate::cli::CreateWebhookArgs;
use crate::commands::webhook_certs;
use crate::external::ExternalRequest;
use crate::names::InvalidInput;
use crate::plugins::{self, external::Found};
use crate::project::{self, WebhookCerts};
use crate::scaffold::Plan;

/// kubebuilder's warning for webhooks on built-in kinds, printed to stderr.
const BOOTSTRAP_WARNING: &str = "\
warning: this webhook intercepts a built-in kind, whose objects the cluster (and the operator
itself: its own Pods, its Deployment) creates all the time. With `failurePolicy: Fail`, while the
operator is not running (not yet installed, restarting, scaled down), the API server admits none
of these objects, which can keep the operator from ever starting: the webhook bootstrap problem.
Before deploying, exclude the operator's own namespace (namespaceSelector or objectSelector in the
webhook configuration) or use `failurePolicy: Ignore`. See
https://book.kubebuilder.io/reference/webhook-bootstrap-problem";

pub fn run(args: &CreateWebhookArgs, dir: &Path) -> Result<()> {
    let request = Request::from_args(args)?;
    let planned = plan(&request, dir)?;
    super::finish(&planned.plan, args.common.dry_run)?;
    for warning in &planned.warnings {
        eprintln!("warning: {warning}");
    }
    if args.common.dry_run {
        return Ok(());
    }
    if planned.builtin {
        eprintln!("{BOOTSTRAP_WARNING}");
    }
    if args.make {
        super::run_make_manifests(dir);
    }
    if request.conversion {
        println!(
            "Implement the conversions between the hub and each spoke version in {}/conversion_<spoke>.rs.",
            planned.kind_dir
        );
    }
    println!("Next: implement your new Webhook and generate the manifests with:");
    println!("$ make manifests");
    match planned.certs {
        WebhookCerts::SelfSigned => println!(
            "The manager makes and renews the webhooks' certificates itself (--webhook-certs=self-signed): \
             `make deploy` needs nothing else in the cluster."
        ),
        WebhookCerts::CertManager => println!(
            "cert-manager issues the webhooks' certificates (--webhook-certs=cert-manager): install it in the \
             cluster before `make deploy`, or switch with `operator-rs edit --webhook-certs=self-signed`."
        ),
    }
    println!(
        "To run the manager on your machine, where the API server cannot call the webhooks: \
         ENABLE_WEBHOOKS=false make run"
    );
    Ok(())
}

/// `create webhook` after flag parsing: what to scaffold.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub plural: Option<String>,
    pub defaulting: bool,
    pub validation: bool,
    pub conversion: bool,
    pub spokes: Vec<String>,
    pub defaulting_path: Option<String>,
    pub validation_path: Option<String>,
    pub force: bool,
    /// `--webhook-certs`: where the webhooks' certificates come from.
    pub certs: Option<WebhookCerts>,
    /// `--external-api-*`: a kind of another project, whose types are generated if the project
    /// has none yet.
    pub external: Option<ExternalRequest>,
    /// The external plugins `--plugins` names, run after the command's own files.
    pub external_plugins: Vec<Found>,
}

impl Request {
    pub fn from_args(args: &CreateWebhookArgs) -> Result<Self> {
        let selection = plugins::select(&args.plugins, "create webhook")?;
        if let Some(plugin) = selection.plugins.first() {
            return Err(InvalidInput::new(
                "--plugins",
                plugin.short_key(),
                format!(
                    "the plugin has no part in create webhook; {}",
                    plugin.usage()
                ),
            )
            .into());
        }
        Ok(Self {
            group: args.group.clone(),
            version: args.version.clone(),
            kind: args.kind.clone(),
            plural: args.plural.clone(),
            defaulting: args.defaulting,
            validation: args.programmatic_validation,
            conversion: args.conversion,
            spokes: args.spoke.clone(),
            defaulting_path: args.defaulting_path.clone(),
            validation_path: args.validation_path.clone(),
            force: args.force,
            certs: args.webhook_certs,
            external: ExternalRequest::from_flags(
                args.external.external_api_path.as_deref(),
                args.external.external_api_domain.as_deref(),
                args.external.external_api_module.as_deref(),
                None,
            )?,
            external_plugins: selection.external,
        })
    }
}

/// The result of planning: the files, plus what to tell the user.
#[derive(Debug)]
pub struct Planned {
    pub plan: Plan,
    /// Steps that could not be done and must be done by hand.
    pub warnings: Vec<String>,
    /// The kind is a built-in one (bootstrap-problem warning).
    pub builtin: bool,
    /// `src/webhook/…/<kind>`, for messages.
    pub kind_dir: String,
    /// Where the project's webhooks get their certificates, for messages.
    pub certs: WebhookCerts,
}

/// Everything `create webhook` would write, without writing it.
pub fn plan(request: &Request, dir: &Path) -> Result<Planned> {
    let checked = validate::check(request, dir)?;
    let vars = resolve::vars(
        &checked,
        checked.defaulting_path.as_deref(),
        checked.validation_path.as_deref(),
    );
    // With --force every recorded spoke is there again: its file if it is missing, its lines if
    // they are (a spoke's file, like conversion.rs, is the user's once written).
    let mut spokes: Vec<String> = if request.conversion && request.force {
        checked.recorded.spoke.clone()
    } else {
        Vec::new()
    };
    for spoke in &checked.spokes {
        if !spokes.contains(spoke) {
            spokes.push(spoke.clone());
        }
    }
    let mut plan = Plan::new(dir, request.force);
    let warnings = render::render(&mut plan, &checked, request, &vars, &spokes)?;
    let mut project = record::record(&checked, request, &spokes);
    webhook_certs::update(
        &mut plan,
        &checked.project,
        &project,
        &checked.boilerplate,
        false,
    )?;
    let external = &request.external_plugins;
    super::plugin_chain::run(external, "create webhook", &mut plan, &mut project)?;
    plan.write(project::FILE, project.render_now())?;
    crate::runtime_features::keep_in_step(&mut plan, Some(&checked.project), &project)?;
    Ok(Planned {
        plan,
        warnings,
        builtin: checked.builtin.is_some(),
        kind_dir: format!("src/webhook/{}/{}", vars.webhook_dir, checked.kind.snake()),
        certs: checked.certs,
    })
}

#[cfg(test)]
pub(crate) fn tables() -> Vec<&'static dyn crate::scaffold::table::Checked> {
    render::tables()
}
