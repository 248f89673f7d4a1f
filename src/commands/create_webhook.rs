//! `operator-rs create webhook`: defaulting, validating and conversion webhooks for a kind, the
//! project's own or a built-in one.
//!
//! Like `create api`, what gets written is data: the template tables and insertion tables below.
//! Each kind gets a module `src/webhook/[<group>/]<version>/<kind>/` with one file per webhook
//! type (and per conversion spoke), so adding a second type or another spoke to a kind renders
//! one more file and inserts single lines at markers: the files the user already edited are
//! never rendered again, not even with `--force`.
//!
//! The machinery (the traits, the HTTPS server, the webhook configurations) is the runtime
//! crate's, `operator_rs_runtime::webhook`, and `init` already wires the project's
//! `webhook::webhooks()` into the manager and into `make manifests`: a webhook adds its kind to
//! that list and nothing once per project, neither code nor dependencies.

use std::path::Path;

use anyhow::{Result, bail};
use tera::Context;

use super::create_api::{ExternalRequest, external_context, plan_external_types};
use super::deploy_image::SpecShape;
use super::resource::{
    InsertRow, TemplateRow, apply_inserts, find_builtin, group_file, insert, insert_multigroup,
    insert_sorted, qualified, read_boilerplate, record_written, render_rows, run_make_manifests,
    shared_file, user_file,
};
use crate::builtin::{self, BuiltinKind};
use crate::cli::CreateWebhookArgs;
use crate::context::project_context;
use crate::external::ExternalKind;
use crate::names::{Group, InvalidInput, Kind, Version, parse_plural};
use crate::project::{self, Project, Resource};
use crate::scaffold::{Plan, line_endings};

/// The Kubernetes config of the webhook server and the modules of the group, version and kind:
/// written by the first webhook that needs them, then kept. The webhook machinery itself is the
/// runtime crate's (`operator_rs_runtime::webhook`), and `src/webhook/mod.rs`, the list of the
/// project's webhooks that the manager serves and `make manifests` registers, is written by
/// `init`.
const SHARED_FILES: &[TemplateRow] = &[
    group_file("webhook/src/webhook/{{ group_module }}/mod.rs"),
    shared_file("webhook/src/webhook/{{ webhook_dir }}/mod.rs"),
    shared_file("webhook/src/webhook/{{ webhook_dir }}/{{ kind_snake }}/mod.rs"),
    shared_file("webhook/config/webhook/kustomization.yaml"),
    shared_file("webhook/config/webhook/service.yaml"),
    shared_file("webhook/config/certmanager/issuer.yaml"),
    shared_file("webhook/config/certmanager/certificate-webhook.yaml"),
    shared_file("webhook/config/certmanager/certificate-metrics.yaml"),
    shared_file("webhook/config/certmanager/kustomization.yaml"),
    shared_file("webhook/config/certmanager/kustomizeconfig.yaml"),
    shared_file("webhook/config/default/manager_webhook_patch.yaml"),
    shared_file("webhook/config/network-policy/allow-webhook-traffic.yaml"),
];

/// Insertions for every webhook: the kind's module and its `webhooks()` in the project's list.
/// Nothing once per project: the manager already serves `webhook::webhooks()` and `make
/// manifests` already registers them (a project without webhooks has an empty list).
const SHARED_INSERTS: &[InsertRow] = &[
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
];

const KIND_MOD: &str = "src/webhook/{{ webhook_dir }}/{{ kind_snake }}/mod.rs";

const DEFAULTING_FILES: &[TemplateRow] = &[user_file(
    "webhook/src/webhook/{{ webhook_dir }}/{{ kind_snake }}/defaulting.rs",
)];
const DEFAULTING_INSERTS: &[InsertRow] = &[
    insert(KIND_MOD, "webhook-type-modules", "pub mod defaulting;"),
    insert_sorted(KIND_MOD, "webhook-registrations", "defaulting::webhook(),"),
];

const VALIDATION_FILES: &[TemplateRow] = &[user_file(
    "webhook/src/webhook/{{ webhook_dir }}/{{ kind_snake }}/validation.rs",
)];
const VALIDATION_INSERTS: &[InsertRow] = &[
    insert(KIND_MOD, "webhook-type-modules", "pub mod validation;"),
    insert_sorted(KIND_MOD, "webhook-registrations", "validation::webhook(),"),
];

/// The CRD patch is shared by every version of the kind (one CRD), hence kept if present.
const CONVERSION_FILES: &[TemplateRow] = &[
    user_file("webhook/src/webhook/{{ webhook_dir }}/{{ kind_snake }}/conversion.rs"),
    shared_file("webhook/config/crd/patches/webhook_in_{{ crd_patch_name }}.yaml"),
];
const CONVERSION_INSERTS: &[InsertRow] = &[
    insert(KIND_MOD, "webhook-type-modules", "pub mod conversion;"),
    insert_sorted(KIND_MOD, "webhook-registrations", "conversion::webhook(),"),
    insert_sorted(
        "config/crd/kustomization.yaml",
        "crdkustomizewebhookpatch",
        "- path: patches/webhook_in_{{ crd_patch_name }}.yaml",
    ),
    insert(
        "config/default/kustomization.yaml",
        "crdkustomizecainjectionns",
        CA_INJECTION_TARGET_NAMESPACE,
    ),
    insert(
        "config/default/kustomization.yaml",
        "crdkustomizecainjectionname",
        CA_INJECTION_TARGET_NAME,
    ),
];

/// Rendered once per `--spoke` (with `spoke` and `spoke_api_module` in the context).
const SPOKE_FILES: &[TemplateRow] = &[user_file(
    "webhook/src/webhook/{{ webhook_dir }}/{{ kind_snake }}/conversion_{{ spoke }}.rs",
)];
const SPOKE_INSERTS: &[InsertRow] = &[
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
];

/// The converted CRD as a target of the CA injection (cert-manager's `inject-ca-from`
/// annotation is `<namespace>/<certificate>`: index 0 and 1). Unlike kubebuilder, which inserts
/// these commented out and uncomments them with their header (which only works for the first
/// CRD), operator-rs uncomments the headers once and inserts live targets for every CRD.
const CA_INJECTION_TARGET_NAMESPACE: &str = "     - select:
         kind: CustomResourceDefinition
         name: {{ plural }}.{{ qualified_group }}
       fieldPaths:
         - .metadata.annotations.[cert-manager.io/inject-ca-from]
       options:
         delimiter: '/'
         index: 0
         create: true";
const CA_INJECTION_TARGET_NAME: &str = "     - select:
         kind: CustomResourceDefinition
         name: {{ plural }}.{{ qualified_group }}
       fieldPaths:
         - .metadata.annotations.[cert-manager.io/inject-ca-from]
       options:
         delimiter: '/'
         index: 1
         create: true";

/// Blocks of `config/default/kustomization.yaml` that init ships commented out (kubebuilder's
/// text), uncommented by every webhook.
const DEFAULT_UNCOMMENTS: &[&str] = &[
    "- ../webhook",
    "- ../certmanager",
    "- path: manager_webhook_patch.yaml\n  target:\n    kind: Deployment",
    "replacements:",
    ANY_WEBHOOK_REPLACEMENTS,
];

/// Every webhook: the webhook Service's name and namespace in the serving certificate's DNS names.
const ANY_WEBHOOK_REPLACEMENTS: &str = r#" - source: # Uncomment the following block if you have any webhook
     kind: Service
     version: v1
     name: webhook-service
     fieldPath: .metadata.name # Name of the service
   targets:
     - select:
         kind: Certificate
         group: cert-manager.io
         version: v1
         name: serving-cert
       fieldPaths:
         - .spec.dnsNames.0
         - .spec.dnsNames.1
       options:
         delimiter: '.'
         index: 0
         create: true
 - source:
     kind: Service
     version: v1
     name: webhook-service
     fieldPath: .metadata.namespace # Namespace of the service
   targets:
     - select:
         kind: Certificate
         group: cert-manager.io
         version: v1
         name: serving-cert
       fieldPaths:
         - .spec.dnsNames.0
         - .spec.dnsNames.1
       options:
         delimiter: '.'
         index: 1
         create: true"#;

/// `--defaulting`: the CA injection annotation of the MutatingWebhookConfiguration.
const DEFAULTING_REPLACEMENTS: &str = r#" - source: # Uncomment the following block if you have a DefaultingWebhook (--defaulting )
     kind: Certificate
     group: cert-manager.io
     version: v1
     name: serving-cert
     fieldPath: .metadata.namespace # Namespace of the certificate CR
   targets:
     - select:
         kind: MutatingWebhookConfiguration
       fieldPaths:
         - .metadata.annotations.[cert-manager.io/inject-ca-from]
       options:
         delimiter: '/'
         index: 0
         create: true
 - source:
     kind: Certificate
     group: cert-manager.io
     version: v1
     name: serving-cert
     fieldPath: .metadata.name
   targets:
     - select:
         kind: MutatingWebhookConfiguration
       fieldPaths:
         - .metadata.annotations.[cert-manager.io/inject-ca-from]
       options:
         delimiter: '/'
         index: 1
         create: true"#;

/// `--programmatic-validation`: the CA injection annotation of the ValidatingWebhookConfiguration.
const VALIDATION_REPLACEMENTS: &str = r#" - source: # Uncomment the following block if you have a ValidatingWebhook (--programmatic-validation)
     kind: Certificate
     group: cert-manager.io
     version: v1
     name: serving-cert # This name should match the one in certificate.yaml
     fieldPath: .metadata.namespace # Namespace of the certificate CR
   targets:
     - select:
         kind: ValidatingWebhookConfiguration
       fieldPaths:
         - .metadata.annotations.[cert-manager.io/inject-ca-from]
       options:
         delimiter: '/'
         index: 0
         create: true
 - source:
     kind: Certificate
     group: cert-manager.io
     version: v1
     name: serving-cert
     fieldPath: .metadata.name
   targets:
     - select:
         kind: ValidatingWebhookConfiguration
       fieldPaths:
         - .metadata.annotations.[cert-manager.io/inject-ca-from]
       options:
         delimiter: '/'
         index: 1
         create: true"#;

/// `--conversion`: the source of the CRDs' CA injection (certificate namespace); targets are inserted below it.
const CONVERSION_NAMESPACE_SOURCE: &str = r#" - source: # Uncomment the following block if you have a ConversionWebhook (--conversion)
     kind: Certificate
     group: cert-manager.io
     version: v1
     name: serving-cert
     fieldPath: .metadata.namespace # Namespace of the certificate CR
   targets: # Do not remove or uncomment the following scaffold marker; required to generate code for target CRD."#;

/// `--conversion`: the same for the certificate name.
const CONVERSION_NAME_SOURCE: &str = r#" - source:
     kind: Certificate
     group: cert-manager.io
     version: v1
     name: serving-cert
     fieldPath: .metadata.name
   targets: # Do not remove or uncomment the following scaffold marker; required to generate code for target CRD."#;

/// kubebuilder's warning for webhooks on built-in kinds, printed to stderr.
const BOOTSTRAP_WARNING: &str = "\
warning: this webhook intercepts a built-in kind, whose objects the cluster (and the operator
itself: its own Pods, its Deployment) creates all the time. With `failurePolicy: Fail`, while the
operator is not running (not yet installed, restarting, scaled down), the API server admits none
of these objects, which can keep the operator from ever starting: the webhook bootstrap problem.
Before deploying, exclude the operator's own namespace (namespaceSelector or objectSelector in the
webhook configuration) or use `failurePolicy: Ignore`. See
https://book.kubebuilder.io/reference/webhook-bootstrap-problem";

/// Names that a multigroup group module in `src/webhook/` would collide with: `src/webhook/mod.rs`
/// imports from the runtime crate, and a module of the same name would shadow the crate there.
const RESERVED_MODULES: &[&str] = &["operator_rs_runtime"];

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
        run_make_manifests(dir);
    }
    if request.conversion {
        println!(
            "Implement the conversions between the hub and each spoke version in {}/conversion_<spoke>.rs.",
            planned.kind_dir
        );
    }
    println!("Next: implement your new Webhook and generate the manifests with:");
    println!("$ make manifests");
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
    /// `--external-api-*`: a kind of another project, whose types are generated if the project
    /// has none yet.
    pub external: Option<ExternalRequest>,
}

impl Request {
    pub fn from_args(args: &CreateWebhookArgs) -> Result<Self> {
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
            external: ExternalRequest::from_args(&args.external, None)?,
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
}

/// Whether the kind is the project's own (a CRD in PROJECT) or a built-in Kubernetes kind.
enum Target {
    Own,
    Builtin(BuiltinKind),
    External(Box<ExternalKind>),
}

/// Everything `create webhook` would write, without writing it.
pub fn plan(request: &Request, dir: &Path) -> Result<Planned> {
    check_flags(request)?;
    let mut project = Project::load(dir)?;
    let kind = Kind::parse(&request.kind)?;
    let version = Version::parse(&request.version)?;
    // An external kind: from the flags, or as PROJECT recorded it.
    let recorded_external = project.resources.iter().find(|r| {
        r.external
            && r.group == request.group
            && r.version == request.version
            && r.kind == request.kind
            && request
                .external
                .as_ref()
                .is_none_or(|e| e.domain.as_deref().is_none_or(|d| d == r.domain))
    });
    let external_request = match (&request.external, recorded_external) {
        (Some(given), _) => Some(given.clone()),
        (None, Some(r)) => Some(ExternalRequest {
            path: r.path.clone(),
            domain: Some(r.domain.clone()),
            module: (!r.module.is_empty()).then(|| r.module.clone()),
        }),
        (None, None) => None,
    };
    let domain = external_request
        .as_ref()
        .and_then(|e| e.domain.clone())
        .unwrap_or_else(|| project.domain.clone());
    let group = Group::parse(&request.group, &domain)?;
    let spokes = parse_spokes(&request.spokes, &version)?;
    let defaulting_path = request
        .defaulting_path
        .as_deref()
        .map(|p| parse_path("--defaulting-path", p))
        .transpose()?;
    let validation_path = request
        .validation_path
        .as_deref()
        .map(|p| parse_path("--validation-path", p))
        .transpose()?;

    // The project's own API first, else a built-in kind, else nothing to hook.
    let own = project
        .resources
        .iter()
        .position(|r| is_own(r, &project, &group, &version, &kind));
    let (target, existing) = match (own, &external_request) {
        (_, Some(ext)) => {
            group.check_module()?;
            let qualified_group = format!("{}.{domain}", group.as_str());
            let loaded = ExternalKind::load(
                dir,
                &ext.path,
                &qualified_group,
                version.as_str(),
                kind.as_str(),
            )?;
            let i = project.resources.iter().position(|r| {
                r.external
                    && r.group == group.as_str()
                    && r.domain == domain
                    && r.version == version.as_str()
                    && r.kind == kind.as_str()
            });
            (Target::External(Box::new(loaded)), i)
        }
        (Some(i), None) => (Target::Own, Some(i)),
        (None, None) => match builtin::is_builtin_group(group.as_str())
            .then(|| find_builtin(&group, &version, &kind))
            .transpose()?
            .flatten()
        {
            Some(b) => {
                let i = project.resources.iter().position(|r| {
                    r.core
                        && r.group == b.short_group()
                        && r.version == version.as_str()
                        && r.kind == kind.as_str()
                });
                (Target::Builtin(b), i)
            }
            None => bail!(
                "no API found for {}/{}, Kind {}: run 'create api' first, or pass \
                 --external-api-path for a kind of another project",
                qualified(&group, &project.domain),
                version.as_str(),
                kind.as_str()
            ),
        },
    };
    let builtin = match &target {
        Target::Builtin(b) => Some(*b),
        Target::Own | Target::External(_) => None,
    };
    let external = match &target {
        Target::External(e) => Some(e.as_ref()),
        _ => None,
    };
    let entry = existing.map(|i| project.resources[i].clone());

    if request.conversion && !matches!(target, Target::Own) {
        return Err(InvalidInput::new(
            "--conversion",
            "true",
            format!(
                "conversion webhooks convert between the versions of the project's own kinds; {}/{} {} is {}",
                group.as_str(),
                version.as_str(),
                kind.as_str(),
                if external.is_some() { "another project's kind" } else { "a built-in kind" }
            ),
        )
        .into());
    }

    let plural = match (&builtin, external) {
        (Some(b), _) => b.plural.to_string(),
        (None, Some(e)) => e.crd.plural.clone(),
        (None, None) => entry
            .as_ref()
            .and_then(|e| e.plural.clone())
            .unwrap_or_else(|| kind.default_plural()),
    };
    if let Some(given) = &request.plural {
        let given = parse_plural(given)?;
        if given != plural {
            return Err(InvalidInput::new(
                "--plural",
                &given,
                format!(
                    "{}/{} {} has the plural {plural:?}",
                    group.as_str(),
                    version.as_str(),
                    kind.as_str()
                ),
            )
            .into());
        }
    }

    let recorded = entry
        .as_ref()
        .and_then(|e| e.webhooks.clone())
        .unwrap_or_default();
    for (requested, exists, name) in [
        (request.defaulting, recorded.defaulting, "defaulting"),
        (request.validation, recorded.validation, "validation"),
        (request.conversion, recorded.conversion, "conversion"),
    ] {
        if requested && exists && !request.force {
            bail!(
                "{name} webhook already exists for this resource (rerun with --force to re-render its files)"
            );
        }
    }
    // Re-rendering with --force keeps a custom path unless another one is given.
    let defaulting_path = defaulting_path.or_else(|| recorded.defaulting_path.clone());
    let validation_path = validation_path.or_else(|| recorded.validation_path.clone());
    if request.conversion {
        check_conversion(&project, &group, &version, &kind, &spokes)?;
    }
    let shape = SpecShape::of(&project, group.as_str(), version.as_str(), kind.as_str());
    for spoke in &spokes {
        let theirs = SpecShape::of(&project, group.as_str(), spoke, kind.as_str());
        if theirs != shape {
            return Err(InvalidInput::new(
                "--spoke",
                spoke,
                format!(
                    "its spec was scaffolded differently from the hub {} ({theirs:?} vs {shape:?}), so \
                     operator-rs cannot write a conversion between them; add the conversion webhook \
                     for spokes of the hub's shape, or write this one by hand",
                    version.as_str()
                ),
            )
            .into());
        }
    }
    if project.multigroup && matches!(target, Target::Own) {
        check_group_module(&group)?;
    }

    let boilerplate_text = read_boilerplate(dir)?;
    let mut ctx = context(
        &project,
        &boilerplate_text,
        &group,
        &version,
        &kind,
        &plural,
        &builtin,
    );
    if let (Some(e), Some(ext)) = (external, &external_request) {
        external_context(&mut ctx, &group, &version, &kind, e, &ext.path);
        ctx.insert(
            "api_module",
            &format!("crate::external::{}::{}", group.module(), version.as_str()),
        );
    }
    ctx.insert("foreign", &!matches!(target, Target::Own));
    ctx.insert("external", &external.is_some());
    shape.insert_context(&mut ctx);
    let webhook_dir: String = ctx
        .get("webhook_dir")
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_string();
    let qualified_group: String = ctx
        .get("qualified_group")
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_string();
    let default_path = |prefix: &str| {
        default_webhook_path(prefix, &qualified_group, version.as_str(), kind.as_str())
    };
    ctx.insert(
        "defaulting_path",
        &defaulting_path
            .clone()
            .unwrap_or_else(|| default_path("mutate")),
    );
    ctx.insert(
        "validation_path",
        &validation_path
            .clone()
            .unwrap_or_else(|| default_path("validate")),
    );
    check_paths(request, &ctx)?;
    // The kind as PROJECT records it: a built-in kind under its short group (`core`, `apps`).
    let entry_group = builtin.map_or(group.as_str(), |b| b.short_group());
    check_paths_unused(
        &project,
        request,
        &ctx,
        (entry_group, version.as_str(), kind.as_str()),
    )?;

    let multigroup = project.multigroup;
    let mut plan = Plan::new(dir, request.force);
    let mut warnings = Vec::new();
    // What operator-rs wrote for the kind's webhooks before, from what PROJECT recorded: `--force`
    // renders a file again only if it is still that, and never an edited one (`Plan::written`).
    let mut before = ctx.clone();
    let recorded_path =
        |path: &Option<String>, prefix: &str| path.clone().unwrap_or_else(|| default_path(prefix));
    before.insert(
        "defaulting_path",
        &recorded_path(&recorded.defaulting_path, "mutate"),
    );
    before.insert(
        "validation_path",
        &recorded_path(&recorded.validation_path, "validate"),
    );
    if recorded.defaulting {
        record_written(&mut plan, DEFAULTING_FILES, &before, multigroup)?;
    }
    if recorded.validation {
        record_written(&mut plan, VALIDATION_FILES, &before, multigroup)?;
    }
    if recorded.conversion {
        record_written(&mut plan, CONVERSION_FILES, &before, multigroup)?;
        for spoke in &recorded.spoke {
            let spoke_ctx = spoke_context(&before, multigroup, &group, spoke);
            record_written(&mut plan, SPOKE_FILES, &spoke_ctx, multigroup)?;
        }
    }
    if external.is_some() && entry.is_none() {
        // A kind of another project that the project has no types for yet.
        plan_external_types(&mut plan, &ctx)?;
    }
    render_rows(&mut plan, SHARED_FILES, &ctx, multigroup)?;
    apply_inserts(&mut plan, SHARED_INSERTS, &ctx, multigroup)?;
    for block in DEFAULT_UNCOMMENTS {
        plan.uncomment("config/default/kustomization.yaml", block)?;
    }
    if request.defaulting {
        render_rows(&mut plan, DEFAULTING_FILES, &ctx, multigroup)?;
        apply_inserts(&mut plan, DEFAULTING_INSERTS, &ctx, multigroup)?;
        plan.uncomment("config/default/kustomization.yaml", DEFAULTING_REPLACEMENTS)?;
    }
    if request.validation {
        render_rows(&mut plan, VALIDATION_FILES, &ctx, multigroup)?;
        apply_inserts(&mut plan, VALIDATION_INSERTS, &ctx, multigroup)?;
        plan.uncomment("config/default/kustomization.yaml", VALIDATION_REPLACEMENTS)?;
    }
    // With --force every recorded spoke is there again: its file if it is missing, its lines if
    // they are (a spoke's file, like conversion.rs, is the user's once written: see above).
    let mut all_spokes: Vec<String> = if request.conversion && request.force {
        recorded.spoke.clone()
    } else {
        Vec::new()
    };
    for spoke in &spokes {
        if !all_spokes.contains(spoke) {
            all_spokes.push(spoke.clone());
        }
    }
    if request.conversion {
        render_rows(&mut plan, CONVERSION_FILES, &ctx, multigroup)?;
        plan.uncomment("config/crd/kustomization.yaml", "patches:")?;
        plan.uncomment(
            "config/crd/kustomization.yaml",
            "configurations:\n- kustomizeconfig.yaml",
        )?;
        plan.uncomment(
            "config/default/kustomization.yaml",
            CONVERSION_NAMESPACE_SOURCE,
        )?;
        plan.uncomment("config/default/kustomization.yaml", CONVERSION_NAME_SOURCE)?;
        apply_inserts(&mut plan, CONVERSION_INSERTS, &ctx, multigroup)?;
        for spoke in &all_spokes {
            let spoke_ctx = spoke_context(&ctx, multigroup, &group, spoke);
            render_rows(&mut plan, SPOKE_FILES, &spoke_ctx, multigroup)?;
            apply_inserts(&mut plan, SPOKE_INSERTS, &spoke_ctx, multigroup)?;
        }
        if let Some(warning) =
            make_hub_the_storage_version(&mut plan, &project, &group, &version, &kind)?
        {
            warnings.push(warning);
        }
    }

    update_project(
        &mut project,
        existing,
        request,
        &group,
        &version,
        &kind,
        &plural,
        &builtin,
        external_request.as_ref(),
        &all_spokes,
        (defaulting_path, validation_path),
    );
    plan.write(project::FILE, project.render())?;
    Ok(Planned {
        plan,
        warnings,
        builtin: builtin.is_some(),
        kind_dir: format!("src/webhook/{webhook_dir}/{}", kind.snake()),
    })
}

/// Rules about the flags alone, checked before anything is read.
fn check_flags(request: &Request) -> Result<()> {
    if !request.defaulting && !request.validation && !request.conversion {
        bail!(
            "operator-rs create webhook requires at least one of --defaulting, \
             --programmatic-validation and --conversion to be true"
        );
    }
    if request.defaulting_path.is_some() && !request.defaulting {
        bail!("--defaulting-path can only be used with --defaulting");
    }
    if request.validation_path.is_some() && !request.validation {
        bail!("--validation-path can only be used with --programmatic-validation");
    }
    if !request.spokes.is_empty() && !request.conversion {
        bail!("--spoke can only be used with --conversion");
    }
    Ok(())
}

/// `--spoke` values: versions, each once, none the hub.
fn parse_spokes(values: &[String], hub: &Version) -> Result<Vec<String>> {
    let mut spokes: Vec<String> = Vec::new();
    for value in values {
        let spoke = match Version::parse(value) {
            Ok(v) => v.as_str().to_string(),
            Err(err) => bail!("invalid spoke version {value:?}: {}", err.rule),
        };
        if spoke == hub.as_str() {
            bail!(
                "invalid spoke version {value:?}: it is the hub (--version); a spoke is another version of the kind"
            );
        }
        if spokes.contains(&spoke) {
            bail!("duplicate spoke version: {spoke}");
        }
        spokes.push(spoke);
    }
    Ok(spokes)
}

/// A webhook path: served by the manager and written into the webhook configurations.
fn parse_path(flag: &'static str, value: &str) -> Result<String> {
    crate::names::check_webhook_path(flag, value)?;
    Ok(value.to_string())
}

/// The two paths of this kind differ from each other and from the conversion endpoint.
fn check_paths(request: &Request, ctx: &Context) -> Result<()> {
    let get = |key: &str| {
        ctx.get(key)
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string()
    };
    let (defaulting, validation) = (get("defaulting_path"), get("validation_path"));
    for (used, flag, path) in [
        (request.defaulting, "--defaulting-path", &defaulting),
        (request.validation, "--validation-path", &validation),
    ] {
        if used && path == "/convert" {
            return Err(InvalidInput::new(flag, path, "is the conversion webhook's path").into());
        }
    }
    if request.defaulting && request.validation && defaulting == validation {
        return Err(InvalidInput::new(
            "--validation-path",
            &validation,
            "is also the defaulting webhook's path; each webhook needs a path of its own",
        )
        .into());
    }
    Ok(())
}

/// kubebuilder's path of a webhook (`prefix` `mutate` or `validate`) when none is given:
/// `/mutate-crew-example-com-v1-captain`.
fn default_webhook_path(prefix: &str, api_group: &str, version: &str, kind: &str) -> String {
    format!(
        "/{prefix}-{}-{version}-{}",
        api_group.replace('.', "-"),
        kind.to_lowercase()
    )
}

/// No other kind's webhook is served at the paths of this one: the manager serves each path once,
/// and the API server would call one webhook for both kinds.
fn check_paths_unused(
    project: &Project,
    request: &Request,
    ctx: &Context,
    this: (&str, &str, &str),
) -> Result<()> {
    let get = |key: &str| {
        ctx.get(key)
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string()
    };
    let wanted = [
        (
            request.defaulting,
            "--defaulting-path",
            get("defaulting_path"),
        ),
        (
            request.validation,
            "--validation-path",
            get("validation_path"),
        ),
    ];
    for r in &project.resources {
        if (r.group.as_str(), r.version.as_str(), r.kind.as_str()) == this {
            continue;
        }
        let Some(webhooks) = &r.webhooks else {
            continue;
        };
        let api_group = match (r.core, r.group.as_str()) {
            (true, "core") => String::new(),
            (true, group) if r.domain.is_empty() => group.to_string(),
            (_, group) => {
                let domain = if r.domain.is_empty() {
                    &project.domain
                } else {
                    &r.domain
                };
                format!("{group}.{domain}")
            }
        };
        let default = |prefix: &str| default_webhook_path(prefix, &api_group, &r.version, &r.kind);
        let taken = [
            (
                webhooks.defaulting,
                webhooks
                    .defaulting_path
                    .clone()
                    .unwrap_or_else(|| default("mutate")),
            ),
            (
                webhooks.validation,
                webhooks
                    .validation_path
                    .clone()
                    .unwrap_or_else(|| default("validate")),
            ),
        ];
        for (used, flag, path) in &wanted {
            if *used && taken.iter().any(|(on, other)| *on && other == path) {
                return Err(InvalidInput::new(
                    *flag,
                    path,
                    format!(
                        "is already the path of a webhook of {} {}/{}; each webhook needs a path of its own",
                        r.kind, r.group, r.version
                    ),
                )
                .into());
            }
        }
    }
    Ok(())
}

fn is_own(r: &Resource, project: &Project, group: &Group, version: &Version, kind: &Kind) -> bool {
    !r.core
        && r.api.is_some()
        && r.group == group.as_str()
        && r.version == version.as_str()
        && r.kind == kind.as_str()
        && (r.domain.is_empty() || r.domain == project.domain)
}

/// Spokes are existing versions of the same kind, and a kind has one conversion webhook (one
/// hub): the API server calls one `/convert` for the CRD.
fn check_conversion(
    project: &Project,
    group: &Group,
    hub: &Version,
    kind: &Kind,
    spokes: &[String],
) -> Result<()> {
    for spoke in spokes {
        let exists = project.resources.iter().any(|r| {
            !r.core
                && r.api.is_some()
                && r.group == group.as_str()
                && r.kind == kind.as_str()
                && &r.version == spoke
        });
        if !exists {
            bail!(
                "invalid spoke version {spoke:?}: no API found for {}/{spoke}, Kind {} (each spoke must be an existing version of the kind; run 'create api' first)",
                qualified(group, &project.domain),
                kind.as_str()
            );
        }
    }
    if let Some(other) = project.resources.iter().find(|r| {
        !r.core
            && r.group == group.as_str()
            && r.kind == kind.as_str()
            && r.version != hub.as_str()
            && r.webhooks.as_ref().is_some_and(|w| w.conversion)
    }) {
        bail!(
            "Kind {} of group {} already has a conversion webhook, with hub version {}; a kind has one hub: \
             add spokes to it with `create webhook --version {} --conversion --spoke ... --force`",
            kind.as_str(),
            group.as_str(),
            other.version,
            other.version
        );
    }
    Ok(())
}

/// In multigroup projects, group modules sit in `src/webhook/`, beside its import of the runtime.
fn check_group_module(group: &Group) -> Result<()> {
    let module = group.module();
    if RESERVED_MODULES.contains(&module.as_str()) {
        return Err(InvalidInput::new(
            "--group",
            group.as_str(),
            format!(
                "its Rust module name {module:?} collides with the runtime crate that \
                 src/webhook/mod.rs uses"
            ),
        )
        .into());
    }
    Ok(())
}

/// The context of a spoke's conversions: `ctx` with `spoke` and `spoke_api_module`.
fn spoke_context(ctx: &Context, multigroup: bool, group: &Group, spoke: &str) -> Context {
    let mut spoke_ctx = ctx.clone();
    spoke_ctx.insert("spoke", spoke);
    spoke_ctx.insert("spoke_api_module", &api_module(multigroup, group, spoke));
    spoke_ctx
}

fn api_module(multigroup: bool, group: &Group, version: &str) -> String {
    if multigroup {
        format!("crate::api::{}::{version}", group.module())
    } else {
        format!("crate::api::{version}")
    }
}

fn context(
    project: &Project,
    boilerplate_text: &str,
    group: &Group,
    version: &Version,
    kind: &Kind,
    plural: &str,
    builtin: &Option<BuiltinKind>,
) -> Context {
    let mut ctx = project_context(project, boilerplate_text);
    let multigroup = project.multigroup;
    ctx.insert("group", group.as_str());
    ctx.insert("version", version.as_str());
    ctx.insert("kind", kind.as_str());
    ctx.insert("kind_lower", &kind.lower());
    ctx.insert("kind_snake", &kind.snake());
    ctx.insert("plural", plural);
    ctx.insert("core", &builtin.is_some());

    let group_module = match builtin {
        Some(b) => b.short_group().replace(['.', '-'], "_"),
        None => group.module(),
    };
    ctx.insert("group_module", &group_module);
    let (webhook_dir, webhook_rel_module, webhook_top_module) = if multigroup {
        (
            format!("{group_module}/{}", version.as_str()),
            format!("{group_module}::{}", version.as_str()),
            group_module.clone(),
        )
    } else {
        (
            version.as_str().to_string(),
            version.as_str().to_string(),
            version.as_str().to_string(),
        )
    };
    ctx.insert("webhook_dir", &webhook_dir);
    ctx.insert("webhook_rel_module", &webhook_rel_module);
    ctx.insert("webhook_top_module", &webhook_top_module);

    match builtin {
        Some(b) => {
            ctx.insert("qualified_group", b.api_group);
            ctx.insert("rust_type", b.rust_type);
            ctx.insert("api_module", b.rust_module());
            ctx.insert("api_namespaced", &b.namespaced);
        }
        None => {
            let api_module = api_module(multigroup, group, version.as_str());
            ctx.insert("qualified_group", &qualified(group, &project.domain));
            ctx.insert("rust_type", &format!("{api_module}::{}", kind.as_str()));
            ctx.insert("api_module", &api_module);
            ctx.insert("api_namespaced", &true);
        }
    }
    let crd_patch_name = if multigroup {
        format!("{}_{plural}", group.as_str())
    } else {
        plural.to_string()
    };
    ctx.insert("crd_patch_name", &crd_patch_name);
    ctx
}

/// The attribute lines `create api` writes into every version but the storage one.
fn not_storage_block(kind: &Kind) -> String {
    let kind = kind.as_str();
    format!(
        "    // Another version of {kind} is the storage version: the one version in which the API\n\
         \x20   // server stores every {kind}, whatever version it was written in. To make this one the\n\
         \x20   // storage version, delete this line and add `storage = false` to the other version.\n\
         \x20   storage = false,\n"
    )
}

/// kubebuilder marks the hub `+kubebuilder:storageversion`: here the `storage = false` lines move
/// from the hub's type to the version that was the storage version. If the files do not look as
/// `create api` wrote them, nothing moves and the user is told what to do.
fn make_hub_the_storage_version(
    plan: &mut Plan,
    project: &Project,
    group: &Group,
    hub: &Version,
    kind: &Kind,
) -> Result<Option<String>> {
    let block = not_storage_block(kind);
    let status_line = format!("    status = \"{}Status\",\n", kind.as_str());
    let file_of = |version: &str| {
        format!(
            "src/api/{}/{}.rs",
            if project.multigroup {
                format!("{}/{version}", group.module())
            } else {
                version.to_string()
            },
            kind.snake()
        )
    };
    let hub_file = file_of(hub.as_str());
    let Some(hub_original) = plan.read(&hub_file)? else {
        return Ok(Some(format!(
            "{hub_file} not found: make {} the storage version of {} by hand",
            hub.as_str(),
            kind.as_str()
        )));
    };
    // Files checked out with CRLF line endings compare as LF, and keep their line endings.
    let hub_text = line_endings::to_lf(&hub_original).into_owned();
    let hub_marked = format!("{status_line}{block}");
    if !hub_text.contains(&hub_marked) {
        // Already the storage version (or edited by hand: the user decides).
        return Ok(None);
    }
    let manual = || {
        Some(format!(
            "could not make {} the storage version of {}: move `storage = false` in the \
             #[kube(...)] attributes of src/api/ by hand (the hub should be the storage version)",
            hub.as_str(),
            kind.as_str()
        ))
    };
    let mut storage = Vec::new();
    for r in project.resources.iter().filter(|r| {
        !r.core
            && r.api.is_some()
            && r.group == group.as_str()
            && r.kind == kind.as_str()
            && r.version != hub.as_str()
    }) {
        let file = file_of(&r.version);
        if let Some(original) = plan.read(&file)?
            && let text = line_endings::to_lf(&original).into_owned()
            && text.contains(&status_line)
            && !text.contains(&block)
        {
            storage.push((file, original, text));
        }
    }
    let [(file, original, text)] = storage.as_slice() else {
        return Ok(manual());
    };
    let hub_new = hub_text.replacen(&hub_marked, &status_line, 1);
    plan.write(&hub_file, line_endings::like(&hub_original, &hub_new))?;
    let new = text.replacen(&status_line, &hub_marked, 1);
    plan.write(file, line_endings::like(original, &new))?;
    Ok(None)
}

#[allow(clippy::too_many_arguments)]
fn update_project(
    project: &mut Project,
    existing: Option<usize>,
    request: &Request,
    group: &Group,
    version: &Version,
    kind: &Kind,
    plural: &str,
    builtin: &Option<BuiltinKind>,
    external: Option<&ExternalRequest>,
    spokes: &[String],
    (defaulting_path, validation_path): (Option<String>, Option<String>),
) {
    let entry = match existing {
        Some(i) => &mut project.resources[i],
        None => {
            project.resources.push(Resource::default());
            let entry = project.resources.last_mut().expect("just pushed");
            entry.kind = kind.as_str().to_string();
            entry.version = version.as_str().to_string();
            match (builtin, external) {
                (Some(b), _) => {
                    entry.core = true;
                    entry.group = b.short_group().to_string();
                    entry.domain = b.domain().to_string();
                    entry.path = b.rust_module().to_string();
                }
                (None, Some(e)) => {
                    entry.external = true;
                    entry.group = group.as_str().to_string();
                    entry.domain = e.domain.clone().unwrap_or_else(|| project.domain.clone());
                    entry.path = e.path.clone();
                    entry.module = e.module.clone().unwrap_or_default();
                }
                (None, None) => {
                    entry.group = group.as_str().to_string();
                    entry.domain = project.domain.clone();
                    entry.plural = (plural != kind.default_plural()).then(|| plural.to_string());
                }
            }
            entry
        }
    };
    let mut webhooks = entry.webhooks.clone().unwrap_or_default();
    webhooks.webhook_version = "v1".into();
    if request.defaulting {
        webhooks.defaulting = true;
        webhooks.defaulting_path = defaulting_path;
    }
    if request.validation {
        webhooks.validation = true;
        webhooks.validation_path = validation_path;
    }
    if request.conversion {
        webhooks.conversion = true;
        for spoke in spokes {
            if !webhooks.spoke.contains(spoke) {
                webhooks.spoke.push(spoke.clone());
            }
        }
    }
    entry.webhooks = Some(webhooks);
}
