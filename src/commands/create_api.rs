//! `operator-rs create api`: a custom resource type and/or a controller for a group/version/kind.
//!
//! What gets written is data: the template tables and insertion tables below. The code around
//! them decides which rows apply (resource or not, controller or not, built-in kind or not,
//! multigroup or not) and keeps PROJECT in step.

use std::io::IsTerminal as _;
use std::path::Path;

use anyhow::{Result, bail};
use tera::Context;

use super::cluster_rbac;
use super::controllers::{self, Slot};
use super::deploy_image::{self, DeployImage};
use super::resource::{
    InsertRow, TemplateRow, apply_inserts, find_builtin, group_file, insert, insert_multigroup,
    qualified, read_boilerplate, record_written, render_rows, run_make_manifests, shared_file,
    user_file,
};
use crate::builtin::BuiltinKind;
use crate::cli::CreateApiArgs;
use crate::context::project_context;
use crate::external::ExternalKind;
use crate::names::{Group, InvalidInput, Kind, Version, parse_controller_name, parse_plural};
use crate::project::{self, Api, Project, Resource};
use crate::scaffold::Plan;

/// The files of a custom resource type itself: the user's once written (`--force` renders them
/// again only while they are as operator-rs wrote them). (The deploy-image plugin has its own,
/// in `deploy_image::RESOURCE_FILES`.)
const RESOURCE_FILES: &[TemplateRow] = &[
    user_file("api/src/api/{{ api_dir }}/{{ kind_snake }}.rs"),
    user_file("api/config/samples/{{ group }}_{{ version }}_{{ kind_lower }}.yaml"),
];

/// Files shared by the kinds: written by the first kind (or version of a kind) that needs them
/// and then kept. The RBAC helper roles cover every version of a kind, so a second version keeps them.
const RESOURCE_SHARED_FILES: &[TemplateRow] = &[
    shared_file("api/src/api/{{ api_dir }}/mod.rs"),
    group_file("api/src/api/{{ group_module }}/mod.rs"),
    shared_file("api/config/samples/kustomization.yaml"),
    shared_file("api/config/crd/kustomization.yaml"),
    shared_file("api/config/crd/kustomizeconfig.yaml"),
    shared_file("api/config/rbac/{{ rbac_prefix }}_admin_role.yaml"),
    shared_file("api/config/rbac/{{ rbac_prefix }}_editor_role.yaml"),
    shared_file("api/config/rbac/{{ rbac_prefix }}_viewer_role.yaml"),
];

/// Files of a controller for one of the project's own kinds.
const CONTROLLER_FILES: &[TemplateRow] = &[user_file(
    "controller/src/controller/{{ controller_path }}.rs",
)];

/// The group's controller module of a multigroup project, shared by every controller.
const CONTROLLER_SHARED_FILES: &[TemplateRow] = &[group_file(
    "controller/src/controller/{{ group_module }}/mod.rs",
)];

/// Files of a controller that reads a kind whose status is not its own to write: a built-in
/// kind (Deployment, Pod …), an external kind, or a kind that has a controller already
/// (`--controller-name`).
const BUILTIN_CONTROLLER_FILES: &[TemplateRow] = &[user_file(
    "builtin-controller/src/controller/{{ controller_path }}.rs",
)];

/// The generated types of an external kind (the user's once written, like any kind's types).
const EXTERNAL_FILES: &[TemplateRow] = &[user_file(
    "external/src/external/{{ group_module }}/{{ version }}/{{ kind_snake }}.rs",
)];

/// The module tree of the external kinds, `src/external/<group>/<version>/`.
const EXTERNAL_SHARED_FILES: &[TemplateRow] = &[
    shared_file("external/src/external/mod.rs"),
    shared_file("external/src/external/{{ group_module }}/mod.rs"),
    shared_file("external/src/external/{{ group_module }}/{{ version }}/mod.rs"),
];

const EXTERNAL_INSERTS: &[InsertRow] = &[
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
];

const RESOURCE_INSERTS: &[InsertRow] = &[
    insert(
        "src/api/mod.rs",
        "api-modules",
        "pub mod {{ api_top_module }};",
    ),
    insert_multigroup(
        "src/api/{{ group_module }}/mod.rs",
        "version-modules",
        "pub mod {{ version }};",
    ),
    insert(
        "src/api/{{ api_dir }}/mod.rs",
        "kind-modules",
        "pub mod {{ kind_snake }};\npub use {{ kind_snake }}::{ {{- kind }}, {{ kind }}Spec, {{ kind }}Status};",
    ),
    insert(
        "src/api/mod.rs",
        "crds",
        "{{ api_rel_module }}::{{ kind }}::crd(),",
    ),
    insert(
        "config/crd/kustomization.yaml",
        "crdkustomizeresource",
        "- bases/{{ qualified_group }}_{{ plural }}.yaml",
    ),
    insert(
        "config/samples/kustomization.yaml",
        "manifestskustomizesamples",
        "- {{ group }}_{{ version }}_{{ kind_lower }}.yaml",
    ),
    insert(
        "config/rbac/kustomization.yaml",
        "rbac-roles",
        "- {{ rbac_prefix }}_admin_role.yaml\n- {{ rbac_prefix }}_editor_role.yaml\n- {{ rbac_prefix }}_viewer_role.yaml",
    ),
];

const CONTROLLER_INSERTS: &[InsertRow] = &[
    insert(
        "src/controller/mod.rs",
        "controller-modules",
        "pub mod {{ controller_top_module }};",
    ),
    insert_multigroup(
        "src/controller/{{ group_module }}/mod.rs",
        "controller-modules",
        "pub mod {{ controller_module }};",
    ),
    insert(
        "src/controller/mod.rs",
        "controllers",
        "{{ controller_rel_module }}::CONTROLLER,",
    ),
];

/// Type names a kind of the project's own cannot have: every name that the Rust templates
/// import or declare (a kind of the same name, imported next to it, would not compile; a test
/// scans the templates so that this list keeps up with them), and the names of Rust's prelude
/// (a kind of that name would shadow it). Built-in kinds are imported differently and are fine.
const RESERVED_KINDS: &[&str] = &[
    // Imported or declared by the templates.
    "Action",
    "AdmissionRequest",
    "Api",
    "ApiServer",
    "Arc",
    "BTreeMap",
    "Capabilities",
    "Client",
    "Condition",
    "Container",
    "ContainerPort",
    "Context",
    "ControllerFuture",
    "ControllerSetup",
    "Converter",
    "CustomResource",
    "CustomResourceDefinition",
    "CustomResourceExt",
    "Defaulter",
    "DeleteParams",
    "Denial",
    "Deployment",
    "DeploymentSpec",
    "DeploymentStatus",
    "Deserialize",
    "Duration",
    "EffectiveSecurity",
    "Error",
    "Event",
    "EventType",
    "ExitCode",
    "FailurePolicy",
    "Flags",
    "JsonSchema",
    "KubeSchema",
    "LabelSelector",
    "ListParams",
    "Manager",
    "Manifests",
    "Method",
    "ObjectMeta",
    "Operation",
    "OwnerReference",
    "Patch",
    "PatchParams",
    "Pod",
    "PodSecurityContext",
    "PodSpec",
    "PodTemplateSpec",
    "PolicyRule",
    "RbacScope",
    "Registration",
    "RoleScope",
    "Runner",
    "SeccompProfile",
    "SecurityContext",
    "Serialize",
    "Shared",
    "Spoke",
    "StatusCode",
    "Time",
    "Timestamp",
    "Validator",
    "Value",
    "Warnings",
    "Webhook",
    // Rust's prelude (edition 2024), with the derive macros.
    "AsMut",
    "AsRef",
    "AsyncFn",
    "AsyncFnMut",
    "AsyncFnOnce",
    "Box",
    "Clone",
    "Copy",
    "Debug",
    "Default",
    "DoubleEndedIterator",
    "Drop",
    "Eq",
    "Err",
    "ExactSizeIterator",
    "Extend",
    "Fn",
    "FnMut",
    "FnOnce",
    "From",
    "FromIterator",
    "Future",
    "Hash",
    "Into",
    "IntoFuture",
    "IntoIterator",
    "Iterator",
    "None",
    "Ok",
    "Option",
    "Ord",
    "PartialEq",
    "PartialOrd",
    "Result",
    "Send",
    "Sized",
    "Some",
    "String",
    "Sync",
    "ToOwned",
    "ToString",
    "TryFrom",
    "TryInto",
    "Unpin",
    "Vec",
];

/// Refuses a kind of the project's own whose Rust type, or the `<Kind>Spec` and `<Kind>Status`
/// types generated with it, would clash with a name of [`RESERVED_KINDS`].
fn check_reserved_kind(kind: &Kind) -> Result<(), InvalidInput> {
    let clash = [
        kind.as_str().to_string(),
        format!("{}Spec", kind.as_str()),
        format!("{}Status", kind.as_str()),
    ]
    .into_iter()
    .find(|name| RESERVED_KINDS.contains(&name.as_str()));
    match clash {
        None => Ok(()),
        Some(name) if name == kind.as_str() => Err(InvalidInput::new(
            "--kind",
            kind.as_str(),
            "is a name the generated Rust code already uses (imported from kube, k8s-openapi, serde, \
             the runtime crate, or Rust's prelude); choose another kind",
        )),
        Some(name) => Err(InvalidInput::new(
            "--kind",
            kind.as_str(),
            format!(
                "its generated type {name} is a name the generated Rust code already uses; choose another kind"
            ),
        )),
    }
}

/// Within one API group Kubernetes requires distinct names for the kinds' plurals, singulars
/// and list kinds, and the Rust types `<Kind>`, `<Kind>Spec` and `<Kind>Status` share a module
/// per version: a new kind must not clash with the group's other kinds in any of them.
fn check_names_in_group(
    project: &Project,
    group: &Group,
    kind: &Kind,
    plural: &str,
    plural_given: bool,
) -> Result<(), InvalidInput> {
    let singular = kind.lower();
    let qualified_group = qualified(group, &project.domain);
    let others = project.resources.iter().filter(|r| {
        !r.core && r.api.is_some() && r.group == group.as_str() && r.kind != kind.as_str()
    });
    for other in others {
        let other_singular = other.kind.to_lowercase();
        let other_plural = other
            .plural
            .clone()
            .unwrap_or_else(|| crate::names::pluralize(&other_singular));
        let (flag, rule) = if other_singular == singular {
            (
                "--kind",
                format!(
                    "differs only in case from the kind {} of {qualified_group}; Kubernetes and file \
                     names do not tell them apart",
                    other.kind
                ),
            )
        } else if other_plural == plural || other_singular == plural {
            (
                if plural_given { "--plural" } else { "--kind" },
                format!(
                    "its plural {plural:?} is already a name of the kind {} of {qualified_group}; pass \
                     --plural to choose another",
                    other.kind
                ),
            )
        } else if other_plural == singular {
            (
                "--kind",
                format!(
                    "{singular:?} is already the plural of the kind {} of {qualified_group}",
                    other.kind
                ),
            )
        } else if let Some((suffix, longer, shorter)) =
            ["List", "Spec", "Status"].into_iter().find_map(|suffix| {
                if other.kind == format!("{}{suffix}", kind.as_str()) {
                    Some((suffix, other.kind.as_str(), kind.as_str()))
                } else if kind.as_str() == format!("{}{suffix}", other.kind) {
                    Some((suffix, kind.as_str(), other.kind.as_str()))
                } else {
                    None
                }
            })
        {
            (
                "--kind",
                format!(
                    "{longer} would name both a kind and the {suffix} type of the kind {shorter} in \
                     {qualified_group}; choose another kind"
                ),
            )
        } else {
            continue;
        };
        return Err(InvalidInput::new(
            flag,
            kind_or_plural(flag, kind, plural),
            rule,
        ));
    }
    let crd_name = format!("{plural}.{qualified_group}");
    if crd_name.len() > 253 {
        return Err(InvalidInput::new(
            if plural_given { "--plural" } else { "--kind" },
            kind_or_plural(
                if plural_given { "--plural" } else { "--kind" },
                kind,
                plural,
            ),
            format!(
                "the CustomResourceDefinition's name {crd_name:?} would be longer than 253 characters"
            ),
        ));
    }
    Ok(())
}

fn kind_or_plural<'a>(flag: &str, kind: &'a Kind, plural: &'a str) -> &'a str {
    if flag == "--plural" {
        plural
    } else {
        kind.as_str()
    }
}

/// The controller's name is its field manager and the reporter of its Events, which Kubernetes
/// limits to 128 characters (see [`controllers::slot`]).
fn check_controller_name_length(slot: &Slot, group: &Group) -> Result<(), InvalidInput> {
    if slot.name.len() <= 128 {
        return Ok(());
    }
    Err(InvalidInput::new(
        "--group",
        group.as_str(),
        format!(
            "is too long: the controller's name, <group>-<kind> ({} characters), is its field \
             manager and Event reporter, which Kubernetes limits to 128 characters",
            slot.name.len()
        ),
    ))
}

/// A kind that the deploy-image plugin scaffolded keeps its plugin's files, image variable and e2e
/// test: rendering the plain templates over it would leave those behind, and the e2e test would no
/// longer compile (it reads `spec.size`).
fn refuse_plain_over_deploy_image(
    project: &Project,
    group: &Group,
    version: &Version,
    kind: &Kind,
) -> Result<()> {
    for record in deploy_image::records(project) {
        let field = |name: &str| record.get(name).and_then(serde_yaml::Value::as_str);
        if (field("group"), field("version"), field("kind"))
            == (
                Some(group.as_str()),
                Some(version.as_str()),
                Some(kind.as_str()),
            )
        {
            bail!(
                "{} {}/{} was created with --image (the deploy-image plugin): run create api again \
                 with --image and its other flags, or delete the kind's entry under plugins in \
                 PROJECT first to make it a plain kind",
                kind.as_str(),
                group.as_str(),
                version.as_str()
            );
        }
    }
    Ok(())
}

/// The deploy-image plugin's e2e test module (`tests/e2e/<module>.rs`) of each kind is its own.
fn check_e2e_module(project: &Project, group: &Group, kind: &Kind) -> Result<(), InvalidInput> {
    let module = |group: &str, kind: &str| {
        let kind_snake = heck::ToSnakeCase::to_snake_case(kind);
        if project.multigroup {
            format!("{}_{kind_snake}", group.replace(['.', '-'], "_"))
        } else {
            kind_snake
        }
    };
    let mine = module(group.as_str(), kind.as_str());
    for record in deploy_image::records(project) {
        let field = |name: &str| record.get(name).and_then(serde_yaml::Value::as_str);
        let (Some(g), Some(k)) = (field("group"), field("kind")) else {
            continue;
        };
        if (g, k) != (group.as_str(), kind.as_str()) && module(g, k) == mine {
            return Err(InvalidInput::new(
                "--kind",
                kind.as_str(),
                format!(
                    "its e2e tests would be tests/e2e/{mine}.rs, which already tests {k} of group {g}; \
                     choose another kind"
                ),
            ));
        }
    }
    Ok(())
}

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
    for plugin in &args.deploy_image.plugins {
        if super::plugins::classify(plugin, "create api") == Ok(super::plugins::Plugin::Layout) {
            println!(
                "note: --plugins {}: kubebuilder's standard layout, which is this project's",
                plugin.trim()
            );
        }
    }
    if args.common.dry_run {
        return Ok(());
    }
    if args.make && request.resource {
        run_make_manifests(dir);
    }
    if request.deploy_image.is_some() && request.controller {
        // The controller is complete: the next step is running it.
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

/// `create api` after flag parsing and prompting: what to scaffold.
#[derive(Debug, Clone)]
pub struct Request {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub plural: Option<String>,
    pub namespaced: bool,
    pub resource: bool,
    pub controller: bool,
    pub force: bool,
    /// The deploy-image plugin's options, when it runs.
    pub deploy_image: Option<DeployImage>,
    /// `--controller-name`: another controller for a kind that has one.
    pub controller_name: Option<String>,
    /// `--external-api-*`: a kind of another project.
    pub external: Option<ExternalRequest>,
}

/// `--external-api-path`, `--external-api-domain` and `--external-api-module`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalRequest {
    /// The CRD file, as given (relative to the project folder, or absolute).
    pub path: String,
    /// The domain of the kind's group (the project's when not given).
    pub domain: Option<String>,
    /// kubebuilder's Go module, only recorded.
    pub module: Option<String>,
}

impl ExternalRequest {
    /// kubebuilder's rules for the three flags: the path is required with the others, and an
    /// external kind is never a resource of the project.
    pub(crate) fn from_args(
        args: &crate::cli::ExternalApiArgs,
        resource: Option<bool>,
    ) -> Result<Option<Self>> {
        let Some(path) = &args.external_api_path else {
            if args.external_api_module.is_some() || args.external_api_domain.is_some() {
                bail!(
                    "'--external-api-module' and '--external-api-domain' require '--external-api-path' \
                     to be specified"
                );
            }
            return Ok(None);
        };
        if resource == Some(true) {
            bail!(
                "cannot use '--external-api-path', '--external-api-domain', or '--external-api-module' \
                 when creating an API in the project with '--resource=true'. Use '--resource=false' \
                 when referencing an external API"
            );
        }
        if let Some(domain) = &args.external_api_domain
            && !crate::names::is_dns1123_subdomain(domain)
        {
            return Err(InvalidInput::new(
                "--external-api-domain",
                domain,
                "must be a DNS-1123 subdomain (cert-manager.io's is io: --group cert-manager)",
            )
            .into());
        }
        if let Some(module) = &args.external_api_module {
            crate::names::check_line_text(module)
                .map_err(|rule| InvalidInput::new("--external-api-module", module, rule))?;
        }
        Ok(Some(Self {
            path: path.clone(),
            domain: args.external_api_domain.clone(),
            module: args.external_api_module.clone(),
        }))
    }
}

impl Request {
    /// `--resource` and `--controller` default to true; like kubebuilder, operator-rs asks when
    /// they are not given and a person is at the terminal.
    pub fn from_args(args: &CreateApiArgs) -> Result<Self> {
        let external = ExternalRequest::from_args(&args.external, args.resource)?;
        let controller_name = match &args.controller_name {
            Some(name) if args.controller == Some(false) => {
                return Err(InvalidInput::new(
                    "--controller-name",
                    name,
                    "names a controller to create, not with --controller=false",
                )
                .into());
            }
            Some(name) => Some(parse_controller_name(name)?),
            None => None,
        };
        if let Some(deploy_image) = DeployImage::from_args(&args.deploy_image)? {
            if external.is_some() {
                bail!(
                    "--image (the deploy-image plugin) creates a kind of the project's own, not with --external-api-path"
                );
            }
            return Ok(Self {
                controller_name,
                ..Self::for_deploy_image(args, deploy_image)?
            });
        }
        let ask = |question: &str, given: Option<bool>| -> Result<bool> {
            match given {
                Some(value) => Ok(value),
                None if std::io::stdin().is_terminal() => prompt_yes_no(question),
                None => Ok(true),
            }
        };
        Ok(Self {
            group: args.group.clone(),
            version: args.version.clone(),
            kind: args.kind.clone(),
            plural: args.plural.clone(),
            namespaced: args.namespaced,
            // An external kind is never the project's resource: no need to ask.
            resource: match external {
                Some(_) => false,
                None => ask("Create Resource [y/n]", args.resource)?,
            },
            controller: ask("Create Controller [y/n]", args.controller)?,
            force: args.force,
            deploy_image: None,
            controller_name,
            external,
        })
    }

    /// The deploy-image plugin always writes a namespaced kind (its pods run in the custom
    /// resource's namespace) and, unless `--controller=false` (for a second version of a kind:
    /// a kind has one controller), its controller. Flags that say otherwise are refused.
    fn for_deploy_image(args: &CreateApiArgs, deploy_image: DeployImage) -> Result<Self> {
        if args.resource == Some(false) {
            return Err(InvalidInput::new(
                "--resource",
                "false",
                "the deploy-image plugin (--image) always creates the kind",
            )
            .into());
        }
        if !args.namespaced {
            return Err(InvalidInput::new(
                "--namespaced",
                "false",
                "the deploy-image plugin (--image) needs a namespaced kind: its Deployment lives in the custom resource's namespace",
            )
            .into());
        }
        Ok(Self {
            group: args.group.clone(),
            version: args.version.clone(),
            kind: args.kind.clone(),
            plural: args.plural.clone(),
            namespaced: true,
            resource: true,
            controller: args.controller.unwrap_or(true),
            force: args.force,
            deploy_image: Some(deploy_image),
            controller_name: None,
            external: None,
        })
    }
}

fn prompt_yes_no(question: &str) -> Result<bool> {
    use std::io::Write as _;
    loop {
        println!("{question}");
        std::io::stdout().flush()?;
        let mut answer = String::new();
        if std::io::stdin().read_line(&mut answer)? == 0 {
            return Ok(true);
        }
        match answer.trim().to_lowercase().as_str() {
            "y" | "yes" => return Ok(true),
            "n" | "no" => return Ok(false),
            _ => println!("Please answer y or n."),
        }
    }
}

/// Everything `create api` would write, without writing it.
pub fn plan(request: &Request, dir: &Path) -> Result<Plan> {
    let mut project = Project::load(dir)?;
    let kind = Kind::parse(&request.kind)?;
    let version = Version::parse(&request.version)?;
    if !request.resource && !request.controller {
        bail!("nothing to create: --resource=false and --controller=false");
    }
    // An external kind's group is `<group>.<--external-api-domain>`, the project's own
    // `<group>.<domain>`.
    let domain = match &request.external {
        Some(ExternalRequest {
            domain: Some(domain),
            ..
        }) => domain.clone(),
        _ => project.domain.clone(),
    };
    let group = Group::parse(&request.group, &domain)?;

    let builtin = if request.resource || request.external.is_some() {
        None
    } else {
        find_builtin(&group, &version, &kind)?
    };
    let external = match &request.external {
        Some(ext) => {
            // Its types live in `src/external/<group>/`, a module in every layout.
            group.check_module()?;
            let qualified_group = format!("{}.{domain}", group.as_str());
            Some(ExternalKind::load(
                dir,
                &ext.path,
                &qualified_group,
                version.as_str(),
                kind.as_str(),
            )?)
        }
        None => None,
    };
    if builtin.is_none() {
        check_reserved_kind(&kind)?;
        if project.multigroup {
            group.check_module()?;
        }
    }
    let target = match (&builtin, &external) {
        (Some(b), _) => Target::Builtin(*b),
        (None, Some(_)) => Target::External,
        (None, None) => Target::Own,
    };
    check_groups(&project, &group, request)?;

    let existing = project
        .resources
        .iter()
        .position(|r| matches(r, &group, &version, &kind, &target, &domain));
    let entry = existing.map(|i| project.resources[i].clone());
    // A named controller is added next to the deploy-image controller, which stays.
    let only_a_named_controller = !request.resource && request.controller_name.is_some();
    if entry.is_some() && request.deploy_image.is_none() && !only_a_named_controller {
        refuse_plain_over_deploy_image(&project, &group, &version, &kind)?;
    }
    if matches!(target, Target::Own)
        && let Some(other) = project
            .resources
            .iter()
            .find(|r| r.external && r.group == group.as_str() && r.kind == kind.as_str())
    {
        bail!(
            "{}/{}, Kind {} is an external kind of this project (from {}); pass --external-api-path \
             and --external-api-domain as when it was added",
            other.group,
            other.version,
            other.kind,
            crate::names::shown(&other.path)
        );
    }
    if request.resource && entry.as_ref().is_some_and(|e| e.api.is_some()) && !request.force {
        bail!(
            "API resource already exists: {}/{}, Kind {} (rerun with --force to re-render its files)",
            qualified(&group, &project.domain),
            version.as_str(),
            kind.as_str()
        );
    }
    if !request.resource
        && matches!(target, Target::Own)
        && entry.as_ref().is_none_or(|e| e.api.is_none())
    {
        bail!(
            "no API found for {}/{}, Kind {}: run `operator-rs create api` with --resource first, \
             or pass --external-api-path for a kind of another project",
            qualified(&group, &project.domain),
            version.as_str(),
            kind.as_str()
        );
    }
    let names_before = entry
        .as_ref()
        .map(Resource::controller_names)
        .unwrap_or_default();
    if request.controller && !request.force {
        match &request.controller_name {
            None if !names_before.is_empty() => bail!(
                "resource already has controllers defined; please specify '--controller-name' to add \
                 another controller, or use '--controller=false' to skip controller scaffolding \
                 ({}/{}, Kind {}; --force renders the existing one again)",
                group.as_str(),
                version.as_str(),
                kind.as_str()
            ),
            Some(name) if names_before.contains(name) => bail!(
                "controller with name {name:?} already exists for resource {}/{}/{}",
                group.as_str(),
                version.as_str(),
                kind.as_str()
            ),
            _ => {}
        }
    }
    if request.controller
        && request.controller_name.is_none()
        && names_before.is_empty()
        && let Some(other) = project.resources.iter().find(|r| {
            r.has_controller()
                && r.kind == kind.as_str()
                && r.group == group.as_str()
                && r.version != version.as_str()
        })
    {
        bail!(
            "Kind {} of group {} already has a controller (for version {}); pass --controller-name \
             for another one, or --controller=false",
            kind.as_str(),
            group.as_str(),
            other.version
        );
    }

    let plural = match (&request.plural, &builtin, &external) {
        (_, Some(b), _) => b.plural.to_string(),
        (_, _, Some(e)) => e.crd.plural.clone(),
        (Some(p), _, _) => parse_plural(p)?,
        (None, _, _) => entry
            .as_ref()
            .and_then(|e| e.plural.clone())
            .unwrap_or_else(|| kind.default_plural()),
    };
    if matches!(target, Target::Own) {
        check_plural_is_consistent(&project, &group, &kind, &plural)?;
        check_group_module(&project, &group)?;
        let plural_given = request.plural.is_some();
        check_names_in_group(&project, &group, &kind, &plural, plural_given)?;
    }
    let record_group = builtin.map_or(group.as_str(), |b| b.short_group());
    let slot = controllers::slot(
        project.multigroup,
        record_group,
        kind.as_str(),
        request.controller_name.as_deref(),
    );
    // The kind's first controller is its main one (for a kind of its own: the one that writes
    // its status); the others only read it.
    let primary = names_before.is_empty()
        || names_before.first().map(String::as_str) == Some(&*slot_record_name(&kind, request));
    if request.controller {
        let (flag, value) = match &request.controller_name {
            Some(name) => ("--controller-name", name.as_str()),
            None => ("--kind", kind.as_str()),
        };
        controllers::check_free(&project, &slot, flag, value, |other, r| {
            other == &slot
                && r.kind == kind.as_str()
                && r.group == record_group
                && r.version == version.as_str()
        })?;
        check_controller_name_length(&slot, &group)?;
        if request.deploy_image.is_some() {
            check_e2e_module(&project, &group, &kind)?;
        }
    }

    let boilerplate_text = read_boilerplate(dir)?;
    let kinds = KindTarget {
        builtin: &builtin,
        external: external.as_ref(),
        slot: &slot,
        primary,
    };
    let mut ctx = context(
        &project,
        &boilerplate_text,
        &group,
        &version,
        &kind,
        &plural,
        request,
        &kinds,
        &entry,
    );
    if matches!(target, Target::Own)
        && let Some(storage) = storage_as_it_is(dir, &project, &group, &version, &kind, &ctx)?
    {
        ctx.insert("storage", &storage);
    }

    let deploy_image = request.deploy_image.as_ref();
    let mut plan = Plan::new(dir, request.force);
    let multigroup = project.multigroup;
    let plain_controller = builtin.is_some() || external.is_some() || !primary;
    // What operator-rs wrote for the kind before, from the options PROJECT recorded: `--force`
    // renders a file again only if it is still that (see `Plan::written`).
    if let Some(entry) = &entry {
        let before = recorded_request(request, entry, &project);
        let before_plural = match (&builtin, &external) {
            (Some(b), _) => b.plural.to_string(),
            (_, Some(e)) => e.crd.plural.clone(),
            _ => (entry.plural.clone()).unwrap_or_else(|| kind.default_plural()),
        };
        let mut before_ctx = context(
            &project,
            &boilerplate_text,
            &group,
            &version,
            &kind,
            &before_plural,
            &before,
            &kinds,
            &Some(entry.clone()),
        );
        if let Some(storage) = ctx.get("storage") {
            before_ctx.insert("storage", storage);
        }
        let before_image = before.deploy_image.as_ref();
        if before.resource {
            let rows = resource_rows(before_image);
            record_written(&mut plan, rows, &before_ctx, multigroup)?;
        }
        if external.is_some() {
            record_written(&mut plan, EXTERNAL_FILES, &before_ctx, multigroup)?;
        }
        if before.controller {
            let rows = controller_rows(before_image, plain_controller);
            record_written(&mut plan, rows, &before_ctx, multigroup)?;
        }
    }
    if request.resource {
        render_rows(&mut plan, resource_rows(deploy_image), &ctx, multigroup)?;
        render_rows(&mut plan, RESOURCE_SHARED_FILES, &ctx, multigroup)?;
        apply_inserts(&mut plan, RESOURCE_INSERTS, &ctx, multigroup)?;
        plan.uncomment("config/default/kustomization.yaml", "- ../crd")?;
    }
    if external.is_some() {
        plan_external_types(&mut plan, &ctx)?;
    }
    if request.controller {
        let files = controller_rows(deploy_image, plain_controller);
        render_rows(&mut plan, files, &ctx, multigroup)?;
        render_rows(&mut plan, CONTROLLER_SHARED_FILES, &ctx, multigroup)?;
        apply_inserts(&mut plan, CONTROLLER_INSERTS, &ctx, multigroup)?;
        let cluster_scoped = ctx.get("api_namespaced").and_then(|v| v.as_bool()) == Some(false);
        if project.namespaced && cluster_scoped {
            cluster_rbac::add(&mut plan, &ctx)?;
            plan.note(cluster_rbac::note(kind.as_str()));
        }
    }
    if let Some(deploy_image) = deploy_image {
        if request.controller {
            apply_inserts(&mut plan, deploy_image::INSERTS, &ctx, multigroup)?;
            let variable = DeployImage::image_env(&project, group.as_str(), &kind);
            deploy_image::add_image_env(&mut plan, &variable, &deploy_image.image)?;
        }
        deploy_image.record(
            &mut project,
            group.as_str(),
            version.as_str(),
            kind.as_str(),
        );
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
        &domain,
    );
    plan.write(project::FILE, project.render())?;
    Ok(plan)
}

/// The template variables of an external kind's types, and of the code that uses them (a
/// controller, webhooks): `rust_type`, `rust_module`, its API group and scope, and the generated
/// code.
pub(crate) fn external_context(
    ctx: &mut Context,
    group: &Group,
    version: &Version,
    kind: &Kind,
    external: &ExternalKind,
    path: &str,
) {
    let module = format!("crate::external::{}::{}", group.module(), version.as_str());
    ctx.insert("qualified_group", &external.crd.group);
    ctx.insert("api_group", &external.crd.group);
    ctx.insert("rust_type", &format!("{module}::{}", kind.as_str()));
    ctx.insert("rust_module", &module);
    ctx.insert("api_namespaced", &external.crd.namespaced);
    ctx.insert("external_path", path);
    ctx.insert("external_imports", &external.imports);
    ctx.insert("external_items", &external.items);
    ctx.insert("external_example", &external.example);
}

/// Plans an external kind's types (`src/external/<group>/<version>/<kind>.rs` and the module tree
/// above it), from a context with [`external_context`]. The types only: the CRD is the other
/// project's to install.
pub(crate) fn plan_external_types(plan: &mut Plan, ctx: &Context) -> Result<()> {
    // The external module tree is the same in both layouts.
    render_rows(plan, EXTERNAL_FILES, ctx, false)?;
    render_rows(plan, EXTERNAL_SHARED_FILES, ctx, false)?;
    apply_inserts(plan, EXTERNAL_INSERTS, ctx, false)
}

/// The name PROJECT records for the requested controller: the given one, or the kind's
/// lower-cased name for its unnamed controller.
fn slot_record_name(kind: &Kind, request: &Request) -> String {
    request
        .controller_name
        .clone()
        .unwrap_or_else(|| kind.lower())
}

/// What the controller is for, beyond group, version and kind.
struct KindTarget<'a> {
    builtin: &'a Option<BuiltinKind>,
    external: Option<&'a ExternalKind>,
    slot: &'a Slot,
    /// The kind's main controller (see [`plan`]).
    primary: bool,
}

/// The templates of a kind's types and sample.
fn resource_rows(deploy_image: Option<&DeployImage>) -> &'static [TemplateRow] {
    match deploy_image {
        Some(_) => deploy_image::RESOURCE_FILES,
        None => RESOURCE_FILES,
    }
}

/// The templates of a kind's controller.
fn controller_rows(deploy_image: Option<&DeployImage>, plain: bool) -> &'static [TemplateRow] {
    match (deploy_image, plain) {
        (Some(_), _) => deploy_image::CONTROLLER_FILES,
        (None, true) => BUILTIN_CONTROLLER_FILES,
        (None, false) => CONTROLLER_FILES,
    }
}

/// The request that wrote the kind's files as they are, from what PROJECT recorded: whether it
/// has types and a controller, its scope, and the deploy-image plugin's options.
fn recorded_request(request: &Request, entry: &Resource, project: &Project) -> Request {
    Request {
        namespaced: entry
            .api
            .as_ref()
            .map_or(request.namespaced, |api| api.namespaced),
        resource: entry.api.is_some(),
        controller: match &request.controller_name {
            Some(name) => entry.controller_names().contains(name),
            None => entry.has_controller(),
        },
        deploy_image: DeployImage::recorded(project, &entry.group, &entry.version, &entry.kind),
        ..request.clone()
    }
}

/// Whether this version of the kind is the storage version, as the project has it: as its types
/// say when they exist (`create webhook --conversion` moves the storage version to the hub, or
/// the user moved it), else whether it is the hub of the kind's conversion webhook. None: the
/// rule of a new version applies (see [`context`]).
fn storage_as_it_is(
    dir: &Path,
    project: &Project,
    group: &Group,
    version: &Version,
    kind: &Kind,
    ctx: &Context,
) -> Result<Option<bool>> {
    let api_dir = ctx
        .get("api_dir")
        .and_then(|v| v.as_str())
        .unwrap_or_default();
    let types = format!("src/api/{api_dir}/{}.rs", kind.snake());
    match std::fs::read_to_string(dir.join(&types)) {
        Ok(text) => return Ok(Some(!declares_not_storage(&text))),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
        Err(err) => return Err(anyhow::Error::new(err).context(format!("reading {types}"))),
    }
    let hub = project.resources.iter().find(|r| {
        !r.core
            && r.group == group.as_str()
            && r.kind == kind.as_str()
            && r.webhooks.as_ref().is_some_and(|w| w.conversion)
    });
    Ok(hub.map(|hub| hub.version == version.as_str()))
}

/// Whether Rust types declare `storage = false` (outside comments).
fn declares_not_storage(text: &str) -> bool {
    text.lines().map(str::trim).any(|line| {
        !line.starts_with("//")
            && line
                .split_whitespace()
                .collect::<String>()
                .contains("storage=false")
    })
}

/// Whether the kind is the project's own (a CRD), a built-in Kubernetes kind, or another
/// project's.
enum Target {
    Own,
    Builtin(BuiltinKind),
    External,
}

/// kubebuilder's single-group rule: without `multigroup`, every API the project defines
/// (`--resource=true`) shares one group; controllers alone may watch kinds of any group.
fn check_groups(project: &Project, group: &Group, request: &Request) -> Result<()> {
    if project.multigroup || !request.resource {
        return Ok(());
    }
    if let Some(other) = project
        .resources
        .iter()
        .find(|r| !r.core && r.api.is_some() && r.group != group.as_str())
    {
        bail!(
            "multiple groups are not allowed by default, to enable multi-group visit \
             https://kubebuilder.io/migration/multi-group.html (this project's group is {:?}; \
             run `operator-rs edit --multigroup` to move its kinds to the multigroup layout)",
            other.group
        );
    }
    Ok(())
}

fn matches(
    r: &Resource,
    group: &Group,
    version: &Version,
    kind: &Kind,
    target: &Target,
    domain: &str,
) -> bool {
    let same_gvk = r.kind == kind.as_str() && r.version == version.as_str();
    match target {
        Target::Own => {
            same_gvk
                && !r.core
                && !r.external
                && r.group == group.as_str()
                && (r.domain.is_empty() || r.domain == domain)
        }
        Target::Builtin(b) => same_gvk && r.core && r.group == b.short_group(),
        Target::External => {
            same_gvk && r.external && r.group == group.as_str() && r.domain == domain
        }
    }
}

/// All versions of one kind share one CRD, so they must share one plural.
fn check_plural_is_consistent(
    project: &Project,
    group: &Group,
    kind: &Kind,
    plural: &str,
) -> Result<()> {
    for r in &project.resources {
        if r.group == group.as_str() && r.kind == kind.as_str() && r.api.is_some() && !r.core {
            let theirs = r.plural.clone().unwrap_or_else(|| kind.default_plural());
            if theirs != plural {
                return Err(InvalidInput::new(
                    "--plural",
                    plural,
                    format!("version {} of {} already uses the plural {theirs:?}; all versions of a kind share one", r.version, kind.as_str()),
                )
                .into());
            }
        }
    }
    Ok(())
}

/// `foo-bar` and `foo.bar` would both become the Rust module `foo_bar`.
fn check_group_module(project: &Project, group: &Group) -> Result<()> {
    if !project.multigroup {
        return Ok(());
    }
    for r in project
        .resources
        .iter()
        .filter(|r| !r.core && r.group != group.as_str())
    {
        if r.group.replace(['.', '-'], "_") == group.module() {
            return Err(InvalidInput::new(
                "--group",
                group.as_str(),
                format!(
                    "its Rust module name {:?} is already used by group {:?}",
                    group.module(),
                    r.group
                ),
            )
            .into());
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn context(
    project: &Project,
    boilerplate_text: &str,
    group: &Group,
    version: &Version,
    kind: &Kind,
    plural: &str,
    request: &Request,
    target: &KindTarget,
    entry: &Option<Resource>,
) -> Context {
    let builtin = target.builtin;
    let mut ctx = project_context(project, boilerplate_text);
    let multigroup = project.multigroup;
    let group_module = group.module();
    let kind_snake = kind.snake();

    ctx.insert("group", group.as_str());
    ctx.insert("group_module", &group_module);
    ctx.insert("version", version.as_str());
    ctx.insert("kind", kind.as_str());
    ctx.insert("kind_lower", &kind.lower());
    ctx.insert("kind_snake", &kind_snake);
    ctx.insert("plural", plural);

    // Where the types live: src/api/v1/ or src/api/<group>/v1/.
    let (api_dir, api_rel_module, api_top_module) = if multigroup {
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
    ctx.insert("api_dir", &api_dir);
    ctx.insert("api_rel_module", &api_rel_module);
    ctx.insert("api_top_module", &api_top_module);
    ctx.insert("api_module", &format!("crate::api::{api_rel_module}"));

    // Where the controller lives: src/controller/<kind>.rs or src/controller/<group>/<kind>.rs
    // (`<name>.rs` for a named controller), and its name in logs, Events and the metrics'
    // `controller` label (see `controllers::slot`).
    let controller_group = match builtin {
        Some(b) => b.short_group().replace(['.', '-'], "_"),
        None => group_module.clone(),
    };
    let slot = target.slot;
    let (controller_rel_module, controller_top_module) = if multigroup {
        (
            format!("{controller_group}::{}", slot.module),
            controller_group.clone(),
        )
    } else {
        (slot.module.clone(), slot.module.clone())
    };
    if multigroup && builtin.is_some() {
        ctx.insert("group_module", &controller_group);
    }
    ctx.insert("controller_path", &slot.path);
    ctx.insert("controller_module", &slot.module);
    ctx.insert("controller_rel_module", &controller_rel_module);
    ctx.insert("controller_top_module", &controller_top_module);
    ctx.insert("controller_name", &slot.name);
    ctx.insert("primary_controller", &target.primary);

    // RBAC helper roles: config/rbac/<kind>_admin_role.yaml, group-prefixed in multigroup.
    let (rbac_prefix, role_prefix) = if multigroup {
        (
            format!("{}_{}", group.as_str(), kind.lower()),
            format!("{}-{}", group.as_str().replace('.', "-"), kind.lower()),
        )
    } else {
        (kind.lower(), kind.lower())
    };
    ctx.insert("rbac_prefix", &rbac_prefix);
    ctx.insert("role_prefix", &role_prefix);

    match (builtin, target.external) {
        (Some(b), _) => {
            ctx.insert("qualified_group", b.api_group);
            ctx.insert("api_group", b.api_group);
            ctx.insert("rust_type", b.rust_type);
            ctx.insert("rust_module", b.rust_module());
            ctx.insert("api_namespaced", &b.namespaced);
        }
        (None, Some(external)) => {
            let path = request.external.as_ref().map_or("", |e| e.path.as_str());
            external_context(&mut ctx, group, version, kind, external, path);
        }
        (None, None) => {
            let qualified_group = qualified(group, &project.domain);
            ctx.insert("qualified_group", &qualified_group);
            ctx.insert("api_group", &qualified_group);
            let namespaced = match entry.as_ref().and_then(|e| e.api.as_ref()) {
                Some(api) if !request.resource => api.namespaced,
                _ => request.namespaced,
            };
            ctx.insert("api_namespaced", &namespaced);
            // Another controller of the project's own kind reads it through its types.
            ctx.insert(
                "rust_type",
                &format!("crate::api::{api_rel_module}::{}", kind.as_str()),
            );
        }
    }
    ctx.insert("core", &builtin.is_some());
    ctx.insert("external", &target.external.is_some());

    // Exactly one version of a kind is the storage version: the first one created. Later
    // versions are written with `storage = false`; moving the storage version is a one-line
    // change in the types (see docs/create-api.md).
    let other_version_exists = project.resources.iter().any(|r| {
        r.api.is_some()
            && !r.core
            && r.group == group.as_str()
            && r.kind == kind.as_str()
            && r.version != version.as_str()
    });
    let storage = match entry.as_ref() {
        Some(e) if e.api.is_some() => {
            !other_version_exists || first_version(project, group, kind) == Some(version.as_str())
        }
        _ => !other_version_exists,
    };
    ctx.insert("storage", &storage);

    // Paths other files use to refer to the kind.
    ctx.insert("api_path", &format!("api::{api_rel_module}"));
    let e2e_module = if multigroup {
        format!("{group_module}_{kind_snake}")
    } else {
        kind_snake.clone()
    };
    ctx.insert("e2e_module", &e2e_module);
    ctx.insert(
        "sample_file",
        &format!(
            "config/samples/{}_{}_{}.yaml",
            group.as_str(),
            version.as_str(),
            kind.lower()
        ),
    );
    ctx.insert("sample_name", &format!("{}-sample", kind.lower()));
    if let Some(deploy_image) = &request.deploy_image {
        let image_env = DeployImage::image_env(project, group.as_str(), kind);
        deploy_image.insert_context(
            &mut ctx,
            kind,
            &qualified(group, &project.domain),
            &image_env,
        );
    }
    ctx
}

/// The version of a kind recorded first in PROJECT.
fn first_version<'a>(project: &'a Project, group: &Group, kind: &Kind) -> Option<&'a str> {
    project
        .resources
        .iter()
        .find(|r| {
            r.api.is_some() && !r.core && r.group == group.as_str() && r.kind == kind.as_str()
        })
        .map(|r| r.version.as_str())
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
    domain: &str,
) {
    let entry = match existing {
        Some(i) => &mut project.resources[i],
        None => {
            project.resources.push(Resource::default());
            project.resources.last_mut().expect("just pushed")
        }
    };
    entry.kind = kind.as_str().to_string();
    entry.version = version.as_str().to_string();
    match builtin {
        Some(b) => {
            entry.core = true;
            entry.group = b.short_group().to_string();
            entry.domain = b.domain().to_string();
            entry.path = b.rust_module().to_string();
        }
        None if request.external.is_some() => {
            let external = request.external.as_ref().expect("checked");
            entry.external = true;
            entry.group = group.as_str().to_string();
            entry.domain = domain.to_string();
            entry.path = external.path.clone();
            entry.module = external.module.clone().unwrap_or_default();
        }
        None => {
            entry.group = group.as_str().to_string();
            entry.domain = project.domain.clone();
            entry.path = if project.multigroup {
                format!("crate::api::{}::{}", group.module(), version.as_str())
            } else {
                format!("crate::api::{}", version.as_str())
            };
            entry.plural = (plural != kind.default_plural()).then(|| plural.to_string());
        }
    }
    if request.resource {
        entry.api = Some(Api {
            crd_version: "v1".into(),
            namespaced: request.namespaced,
            ..entry.api.clone().unwrap_or_default()
        });
    }
    if request.controller {
        record_controller(entry, request.controller_name.as_deref());
    }
}

/// Records a controller of the kind: `controller: true` for its one unnamed controller, as
/// kubebuilder does; once it has a named one, every controller by name under `controllers`
/// (the unnamed one under the kind's lower-cased name).
fn record_controller(entry: &mut Resource, name: Option<&str>) {
    let Some(name) = name else {
        if entry.controllers.is_empty() {
            entry.controller = true;
        }
        return;
    };
    if entry.controller {
        entry.controller = false;
        let default = entry.kind.to_lowercase();
        entry.controllers.push(project::NamedController {
            name: default,
            ..Default::default()
        });
    }
    if entry.controllers.iter().all(|c| c.name != name) {
        entry.controllers.push(project::NamedController {
            name: name.to_string(),
            ..Default::default()
        });
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// The names that a Rust template imports (`use a::{B, C as D}` binds B and D) or declares
    /// (`struct`, `enum`, `trait`, `union`, top-level `type`). Tera tags are dropped, and a name
    /// glued to a `{{ … }}` expression (`{{ kind }}Spec`) is the kind's, not a fixed one.
    fn names_in_template(source: &str) -> BTreeSet<String> {
        // Tera blocks and comments become line breaks; expressions become a `#`.
        let mut text = String::new();
        let mut rest = source;
        while let Some(start) = rest.find(['{']) {
            text.push_str(&rest[..start]);
            let tail = &rest[start..];
            let close = match &tail[..tail.len().min(2)] {
                "{%" => Some(("%}", "\n")),
                "{#" => Some(("#}", "\n")),
                "{{" => Some(("}}", "#")),
                _ => None,
            };
            match close.and_then(|(end, with)| tail.find(end).map(|i| (i + end.len(), with))) {
                Some((len, with)) => {
                    text.push_str(with);
                    rest = &tail[len..];
                }
                None => {
                    text.push('{');
                    rest = &tail[1..];
                }
            }
        }
        text.push_str(rest);
        // Tokens, without comments; `#` marks a template expression.
        let mut tokens: Vec<(String, bool, bool)> = Vec::new(); // (token, templated, line start)
        for line in text.lines() {
            let code = line.split("//").next().unwrap_or_default();
            let mut chars = code.char_indices().peekable();
            let mut first = true;
            let indented = code.starts_with(char::is_whitespace);
            while let Some((i, c)) = chars.next() {
                if c.is_alphanumeric() || c == '_' || c == '#' {
                    let mut end = i + c.len_utf8();
                    while let Some(&(j, d)) = chars.peek() {
                        if d.is_alphanumeric() || d == '_' || d == '#' {
                            end = j + d.len_utf8();
                            chars.next();
                        } else {
                            break;
                        }
                    }
                    let word = &code[i..end];
                    tokens.push((word.to_string(), word.contains('#'), first && !indented));
                } else if c == ':' && chars.peek().is_some_and(|&(_, d)| d == ':') {
                    chars.next();
                    tokens.push(("::".into(), false, false));
                } else if !c.is_whitespace() {
                    tokens.push((c.to_string(), false, first && !indented));
                }
                first = false;
            }
        }
        let mut names = BTreeSet::new();
        let mut i = 0;
        while i < tokens.len() {
            let (word, _, at_line_start) = &tokens[i];
            if word == "use" {
                let end = (i..tokens.len())
                    .find(|&j| tokens[j].0 == ";")
                    .unwrap_or(tokens.len());
                let body = &tokens[i + 1..end];
                for (k, (token, templated, _)) in body.iter().enumerate() {
                    let next = body.get(k + 1).map(|t| t.0.as_str());
                    let previous = k.checked_sub(1).map(|p| body[p].0.as_str());
                    let is_name = !templated
                        && token.starts_with(|c: char| c.is_alphabetic() || c == '_')
                        && token != "as"
                        && token != "self";
                    let bound = match (previous, next) {
                        (Some("as"), _) => true,
                        (_, Some("as")) | (_, Some("::")) => false,
                        _ => true,
                    };
                    if is_name && bound && token != "_" {
                        names.insert(token.clone());
                    }
                }
                i = end;
            } else if ["struct", "enum", "trait", "union"].contains(&word.as_str())
                || (word == "type" && *at_line_start)
                || (word == "type" && i > 0 && tokens[i - 1].0 == "pub" && tokens[i - 1].2)
            {
                if let Some((name, false, _)) = tokens.get(i + 1) {
                    names.insert(name.clone());
                }
                i += 1;
            } else {
                i += 1;
            }
        }
        names
    }

    #[test]
    fn the_scanner_finds_imports_and_declarations() {
        let names = names_in_template(
            "{{ rust_header }}\nuse a::b::{C, D as E, F as _, self};\n{% if x %}use g::H;{% endif %}\n\
             use {{ api_module }}::{{ kind }};\nuse x::{{ kind }}Spec;\n// use z::Z;\n\
             pub struct {{ kind }}Validator;\nenum Error {}\nimpl X { type Output = u8; }\n\
             use m::{\n    N,\n    o::P,\n};\n",
        );
        assert_eq!(
            names.into_iter().collect::<Vec<_>>(),
            ["C", "E", "Error", "H", "N", "P"]
        );
    }

    /// Every PascalCase name the Rust templates bring into a module is reserved, so that no kind
    /// can clash with one: this fails when a template imports a name the list does not have.
    #[test]
    fn reserved_kinds_cover_every_name_the_templates_use() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("templates");
        let mut missing = BTreeSet::new();
        let mut seen = 0;
        for entry in walkdir::WalkDir::new(&root) {
            let entry = entry.unwrap();
            if entry.path().extension().is_none_or(|e| e != "rs") {
                continue;
            }
            seen += 1;
            let source = std::fs::read_to_string(entry.path()).unwrap();
            for name in names_in_template(&source) {
                let pascal = name.starts_with(|c: char| c.is_ascii_uppercase())
                    && name.chars().any(|c| c.is_ascii_lowercase());
                if pascal && !RESERVED_KINDS.contains(&name.as_str()) {
                    missing.insert(format!(
                        "{name} ({})",
                        entry.path().strip_prefix(&root).unwrap().display()
                    ));
                }
            }
        }
        assert!(seen > 10, "found only {seen} Rust templates");
        assert!(
            missing.is_empty(),
            "add these to RESERVED_KINDS: {missing:#?}"
        );
        for name in [
            "Deserialize",
            "CustomResource",
            "Registration",
            "ControllerSetup",
        ] {
            assert!(RESERVED_KINDS.contains(&name), "{name}");
        }
    }

    #[test]
    fn reserved_kinds_and_their_generated_types_are_refused() {
        let kind = Kind::parse("Pod").unwrap();
        assert!(check_reserved_kind(&kind).is_err());
        let kind = Kind::parse("Deployment").unwrap();
        assert!(check_reserved_kind(&kind).is_err());
        // `PodSpec` is imported: a kind Pod would clash through its own PodSpec too.
        assert!(RESERVED_KINDS.contains(&"PodSpec"));
        let kind = Kind::parse("Captain").unwrap();
        assert!(check_reserved_kind(&kind).is_ok());
        // DeploymentSpec is imported, so a kind Deployment clashes through its spec type too;
        // Condition is imported, so ConditionSpec is fine but Condition is not.
        for name in ["Option", "Serialize", "Webhook", "Denial", "Context"] {
            assert!(
                check_reserved_kind(&Kind::parse(name).unwrap()).is_err(),
                "{name}"
            );
        }
    }
}
