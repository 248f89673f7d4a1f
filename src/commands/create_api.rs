//! `operator-rs create api`: a custom resource type and/or a controller for a group/version/kind.
//!
//! What gets written is data: the template tables and insertion tables below. The code around
//! them decides which rows apply (resource or not, controller or not, built-in kind or not,
//! multigroup or not) and keeps PROJECT in step.

use std::io::IsTerminal as _;
use std::path::Path;

use anyhow::{Result, bail};
use tera::Context;

use super::deploy_image::{self, DeployImage};
use super::resource::{
    InsertRow, TemplateRow, apply_inserts, find_builtin, group_file, insert, insert_multigroup,
    kind_file, qualified, read_boilerplate, render_rows, run_make_manifests, shared_file,
};
use crate::builtin::BuiltinKind;
use crate::cli::CreateApiArgs;
use crate::context::project_context;
use crate::names::{Group, InvalidInput, Kind, Version, parse_plural};
use crate::project::{self, Api, Project, Resource};
use crate::scaffold::{Plan, cargo_toml};

/// The files of a custom resource type itself. They are refused if present (unless `--force`).
/// (The deploy-image plugin has its own, in `deploy_image::RESOURCE_FILES`.)
const RESOURCE_FILES: &[TemplateRow] = &[
    kind_file("api/src/api/{{ api_dir }}/{{ kind_snake }}.rs"),
    kind_file("api/config/samples/{{ group }}_{{ version }}_{{ kind_lower }}.yaml"),
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
const CONTROLLER_FILES: &[TemplateRow] = &[kind_file(
    "controller/src/controller/{{ controller_path }}.rs",
)];

/// The group's controller module of a multigroup project, shared by every controller.
const CONTROLLER_SHARED_FILES: &[TemplateRow] = &[group_file(
    "controller/src/controller/{{ group_module }}/mod.rs",
)];

/// Files of a controller for a built-in kind (Deployment, Pod …).
const BUILTIN_CONTROLLER_FILES: &[TemplateRow] = &[kind_file(
    "builtin-controller/src/controller/{{ controller_path }}.rs",
)];

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
        "pub mod {{ kind_snake }};",
    ),
    insert(
        "src/controller/mod.rs",
        "controllers",
        "{{ controller_rel_module }}::setup(self),",
    ),
    insert(
        "src/controller/mod.rs",
        "rbac-rules",
        "{{ controller_rel_module }}::rbac_rules(),",
    ),
];

/// Names the generated types and controllers already use: a kind of the project's own with one of
/// these names would not compile (built-in kinds are imported differently and are fine).
const RESERVED_KINDS: &[&str] = &[
    "Action",
    "Api",
    "Arc",
    "Backoff",
    "Body",
    "Box",
    "Client",
    "Condition",
    "Context",
    "Controller",
    "ControllerFuture",
    "ControllerMetrics",
    "Duration",
    "Error",
    "Event",
    "EventType",
    "Handle",
    "Method",
    "ObjectRef",
    "Option",
    "Patch",
    "PatchParams",
    "PolicyRule",
    "Recorder",
    "Reporter",
    "Request",
    "Response",
    "Result",
    "SendResponse",
    "Serialize",
    "Shared",
    "StatusCode",
    "String",
    "Time",
    "Timestamp",
    "Value",
    "Vec",
];

/// Dev-dependencies the generated controller tests use (a mocked API server).
const CONTROLLER_DEV_DEPENDENCIES: &[(&str, &str)] = &[("tower-test", "0.4"), ("http", "1")];

pub fn run(args: &CreateApiArgs, dir: &Path) -> Result<()> {
    let request = Request::from_args(args)?;
    let plan = plan(&request, dir)?;
    super::finish(&plan, args.common.dry_run)?;
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
}

impl Request {
    /// `--resource` and `--controller` default to true; like kubebuilder, operator-rs asks when
    /// they are not given and a person is at the terminal.
    pub fn from_args(args: &CreateApiArgs) -> Result<Self> {
        if let Some(deploy_image) = DeployImage::from_args(&args.deploy_image)? {
            return Self::for_deploy_image(args, deploy_image);
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
            resource: ask("Create Resource [y/n]", args.resource)?,
            controller: ask("Create Controller [y/n]", args.controller)?,
            force: args.force,
            deploy_image: None,
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
    let group = Group::parse(&request.group, &project.domain)?;
    if !request.resource && !request.controller {
        bail!("nothing to create: --resource=false and --controller=false");
    }

    let builtin = if request.resource {
        None
    } else {
        find_builtin(&group, &version, &kind)?
    };
    if builtin.is_none() && RESERVED_KINDS.contains(&kind.as_str()) {
        return Err(InvalidInput::new(
            "--kind",
            kind.as_str(),
            "is a name the generated Rust code already uses (kube, std or the controller's own types); choose another kind",
        )
        .into());
    }
    let target = match &builtin {
        Some(b) => Target::Builtin(*b),
        None => Target::Own,
    };
    check_groups(&project, &group, &target)?;

    let existing = project
        .resources
        .iter()
        .position(|r| matches(r, &group, &version, &kind, &target, &project.domain));
    let entry = existing.map(|i| project.resources[i].clone());
    if request.resource && entry.as_ref().is_some_and(|e| e.api.is_some()) && !request.force {
        bail!(
            "API resource already exists: {}/{}, Kind {} (rerun with --force to re-render its files)",
            qualified(&group, &project.domain),
            version.as_str(),
            kind.as_str()
        );
    }
    if !request.resource && builtin.is_none() && entry.as_ref().is_none_or(|e| e.api.is_none()) {
        bail!(
            "no API found for {}/{}, Kind {}: run `operator-rs create api` with --resource first",
            qualified(&group, &project.domain),
            version.as_str(),
            kind.as_str()
        );
    }
    if request.controller
        && !request.resource
        && entry.as_ref().is_some_and(|e| e.controller)
        && !request.force
    {
        bail!(
            "resource already has a controller: {}/{}, Kind {} (rerun with --force to re-render it)",
            qualified(&group, &project.domain),
            version.as_str(),
            kind.as_str()
        );
    }
    if request.controller
        && entry.as_ref().is_none_or(|e| !e.controller)
        && let Some(other) = project.resources.iter().find(|r| {
            r.controller
                && r.kind == kind.as_str()
                && r.group == group.as_str()
                && r.version != version.as_str()
        })
    {
        bail!(
            "Kind {} of group {} already has a controller (for version {}); a kind has one controller. \
             Pass --controller=false",
            kind.as_str(),
            group.as_str(),
            other.version
        );
    }

    let plural = match (&request.plural, &builtin) {
        (_, Some(b)) => b.plural.to_string(),
        (Some(p), _) => parse_plural(p)?,
        (None, _) => entry
            .as_ref()
            .and_then(|e| e.plural.clone())
            .unwrap_or_else(|| kind.default_plural()),
    };
    if builtin.is_none() {
        check_plural_is_consistent(&project, &group, &kind, &plural)?;
        check_group_module(&project, &group)?;
    }

    let boilerplate_text = read_boilerplate(dir)?;
    let ctx = context(
        &project,
        &boilerplate_text,
        &group,
        &version,
        &kind,
        &plural,
        request,
        &builtin,
        &entry,
    );

    let deploy_image = request.deploy_image.as_ref();
    let mut plan = Plan::new(dir, request.force);
    let multigroup = project.multigroup;
    if request.resource {
        let files = match deploy_image {
            Some(_) => deploy_image::RESOURCE_FILES,
            None => RESOURCE_FILES,
        };
        render_rows(&mut plan, files, &ctx, multigroup)?;
        render_rows(&mut plan, RESOURCE_SHARED_FILES, &ctx, multigroup)?;
        apply_inserts(&mut plan, RESOURCE_INSERTS, &ctx, multigroup)?;
        plan.uncomment("config/default/kustomization.yaml", "- ../crd")?;
    }
    if request.controller {
        let files = match (deploy_image, &builtin) {
            (Some(_), _) => deploy_image::CONTROLLER_FILES,
            (None, Some(_)) => BUILTIN_CONTROLLER_FILES,
            (None, None) => CONTROLLER_FILES,
        };
        render_rows(&mut plan, files, &ctx, multigroup)?;
        render_rows(&mut plan, CONTROLLER_SHARED_FILES, &ctx, multigroup)?;
        apply_inserts(&mut plan, CONTROLLER_INSERTS, &ctx, multigroup)?;
        ensure_dev_dependencies(&mut plan)?;
    }
    if let Some(deploy_image) = deploy_image {
        if request.controller {
            apply_inserts(&mut plan, deploy_image::INSERTS, &ctx, multigroup)?;
            let variable = DeployImage::image_env(&kind);
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
    );
    plan.write(project::FILE, project.render())?;
    Ok(plan)
}

/// Whether the kind is the project's own (a CRD) or a built-in Kubernetes kind.
enum Target {
    Own,
    Builtin(BuiltinKind),
}

/// kubebuilder's single-group rule: without `multigroup`, every own API shares one group.
fn check_groups(project: &Project, group: &Group, target: &Target) -> Result<()> {
    if project.multigroup || matches!(target, Target::Builtin(_)) {
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
             set `multigroup: true` in PROJECT and move src/api/<version> to src/api/<group>/<version>)",
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
                && r.group == group.as_str()
                && (r.domain.is_empty() || r.domain == domain)
        }
        Target::Builtin(b) => same_gvk && r.core && r.group == b.short_group(),
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
    builtin: &Option<BuiltinKind>,
    entry: &Option<Resource>,
) -> Context {
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

    // Where the controller lives: src/controller/<kind>.rs or src/controller/<group>/<kind>.rs.
    let controller_group = match builtin {
        Some(b) => b.short_group().replace(['.', '-'], "_"),
        None => group_module.clone(),
    };
    let (controller_path, controller_rel_module, controller_top_module) = if multigroup {
        (
            format!("{controller_group}/{kind_snake}"),
            format!("{controller_group}::{kind_snake}"),
            controller_group.clone(),
        )
    } else {
        (kind_snake.clone(), kind_snake.clone(), kind_snake.clone())
    };
    if multigroup && builtin.is_some() {
        ctx.insert("group_module", &controller_group);
    }
    ctx.insert("controller_path", &controller_path);
    ctx.insert("controller_rel_module", &controller_rel_module);
    ctx.insert("controller_top_module", &controller_top_module);
    // The controller's name, in logs, events and the metrics' `controller` label (kubebuilder
    // prefixes the group in multigroup projects, where two groups may share a kind).
    let controller_name = if multigroup {
        format!("{}-{}", group.as_str().replace('.', "-"), kind.lower())
    } else {
        kind.lower()
    };
    ctx.insert("controller_name", &controller_name);

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

    match builtin {
        Some(b) => {
            ctx.insert("qualified_group", b.api_group);
            ctx.insert("api_group", b.api_group);
            ctx.insert("rust_type", b.rust_type);
            ctx.insert("rust_module", b.rust_module());
            ctx.insert("api_namespaced", &b.namespaced);
        }
        None => {
            let qualified_group = qualified(group, &project.domain);
            ctx.insert("qualified_group", &qualified_group);
            ctx.insert("api_group", &qualified_group);
            let namespaced = match entry.as_ref().and_then(|e| e.api.as_ref()) {
                Some(api) if !request.resource => api.namespaced,
                _ => request.namespaced,
            };
            ctx.insert("api_namespaced", &namespaced);
        }
    }
    ctx.insert("core", &builtin.is_some());

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
        deploy_image.insert_context(&mut ctx, kind, &qualified(group, &project.domain));
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

fn ensure_dev_dependencies(plan: &mut Plan) -> Result<()> {
    let Some(mut text) = plan.read("Cargo.toml")? else {
        bail!("Cargo.toml does not exist; create api adds test dependencies to it");
    };
    for (name, version) in CONTROLLER_DEV_DEPENDENCIES {
        text = cargo_toml::ensure_dependency(&text, "dev-dependencies", name, version, &[])?;
    }
    plan.write("Cargo.toml", text)
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
        entry.controller = true;
    }
}
