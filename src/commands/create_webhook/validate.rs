//! `create webhook`, step 1: the flags and the request checked against the project. Nothing is
//! written; the result is everything the later steps need to know of the kind.

use std::path::Path;

use anyhow::{Result, bail};

use super::Request;
use crate::builtin::{self, BuiltinKind};
use crate::commands::{find_builtin, load_project, read_boilerplate};
use crate::external::{ExternalKind, ExternalRequest, KindRef};
use crate::names::{Group, InvalidInput, Kind, Version, parse_plural};
use crate::plugins::{self, Gvk};
use crate::project::{Project, Resource, WebhookCerts, Webhooks};
use crate::vars::{SpecVars, Target};

/// Names that a multigroup group module in `src/webhook/` would collide with: `src/webhook/mod.rs`
/// imports from the runtime crate, and a module of the same name would shadow the crate there.
const RESERVED_MODULES: &[&str] = &["operator_rs_runtime"];

/// The request, checked: the kind, what it is to the project, and its webhooks' paths.
pub struct Checked {
    pub project: Project,
    pub group: Group,
    pub version: Version,
    pub kind: Kind,
    pub builtin: Option<BuiltinKind>,
    pub external: Option<ExternalKind>,
    /// The external kind's flags, given or as PROJECT recorded them.
    pub external_request: Option<ExternalRequest>,
    /// The kind's entry in PROJECT's resources, if it has one.
    pub existing: Option<usize>,
    pub plural: String,
    /// The spokes of this run, checked.
    pub spokes: Vec<String>,
    /// The webhooks PROJECT records for the kind.
    pub recorded: Webhooks,
    /// The paths this run gives the webhooks: given, or as recorded (None: kubebuilder's).
    pub defaulting_path: Option<String>,
    pub validation_path: Option<String>,
    /// What the kind's spec holds, for the webhooks' examples.
    pub spec: SpecVars,
    /// The license header of the project's Rust files.
    pub boilerplate: String,
    /// Where the webhooks' certificates come from, for this webhook and the project's others.
    pub certs: WebhookCerts,
}

impl Checked {
    pub fn target(&self) -> Target<'_> {
        match (&self.builtin, &self.external) {
            (Some(b), _) => Target::Builtin(*b),
            (None, Some(e)) => Target::External(e),
            (None, None) => Target::Own,
        }
    }

    pub fn entry(&self) -> Option<&Resource> {
        self.existing.map(|i| &self.project.resources[i])
    }

    /// The domain of the kind's group: `--external-api-domain`, else the project's.
    pub fn domain(&self) -> String {
        self.external_request
            .as_ref()
            .and_then(|e| e.domain.clone())
            .unwrap_or_else(|| self.project.domain.clone())
    }

    /// The API group as Kubernetes spells it.
    pub fn qualified_group(&self) -> String {
        self.target().qualified_group(&self.group, &self.domain())
    }

    /// kubebuilder's path of a webhook (`prefix` `mutate` or `validate`) when none is given.
    pub fn default_path(&self, prefix: &str) -> String {
        default_webhook_path(
            prefix,
            &self.qualified_group(),
            self.version.as_str(),
            self.kind.as_str(),
        )
    }
}

pub fn check(request: &Request, dir: &Path) -> Result<Checked> {
    check_flags(request)?;
    let project = load_project(dir)?;
    let external_request = external_request(&project, request)?;
    // Another project's kind keeps the name its CRD gives it.
    let kind = match &external_request {
        Some(_) => Kind::parse_foreign(&request.kind)?,
        None => Kind::parse(&request.kind)?,
    };
    let version = Version::parse(&request.version)?;
    let domain = external_request
        .as_ref()
        .and_then(|e| e.domain.clone())
        .unwrap_or_else(|| project.domain.clone());
    let group = match &external_request {
        Some(_) => Group::parse_foreign(&request.group, &domain)?,
        None => Group::parse(&request.group, &domain)?,
    };
    let spokes = parse_spokes(&request.spokes, &version)?;
    let defaulting_path = parse_path("--defaulting-path", request.defaulting_path.as_deref())?;
    let validation_path = parse_path("--validation-path", request.validation_path.as_deref())?;
    let boilerplate = read_boilerplate(dir)?;
    let certs = certs_mode(&project, request.certs)?;
    let mut checked = Checked {
        project,
        group,
        version,
        kind,
        builtin: None,
        external: None,
        external_request,
        existing: None,
        plural: String::new(),
        spokes,
        recorded: Webhooks::default(),
        defaulting_path,
        validation_path,
        spec: SpecVars::default(),
        boilerplate,
        certs,
    };
    find_target(&mut checked, dir)?;
    check_kind(&mut checked, request)?;
    check_webhooks(&mut checked, request)?;
    Ok(checked)
}

/// The project's certificate mode after this run: `--webhook-certs` for the first webhook, else
/// the one its webhooks have (switching all of them is `edit`'s). Without the flag, a project's
/// first webhook gets self-signed certificates, the mode that needs nothing in the cluster.
fn certs_mode(project: &Project, given: Option<WebhookCerts>) -> Result<WebhookCerts> {
    if !project.has_webhooks() {
        return Ok(given
            .or(project.webhook_certs)
            .unwrap_or(WebhookCerts::SelfSigned));
    }
    let current = project.certs_mode();
    match given {
        Some(mode) if mode != current => bail!(
            "--webhook-certs={mode}: the project's webhooks get their certificates from \
             {current}; switch all of them with `operator-rs edit --webhook-certs={mode}`, or \
             leave the flag out"
        ),
        _ => Ok(current),
    }
}

/// An external kind: from the flags, or as PROJECT recorded it.
fn external_request(project: &Project, request: &Request) -> Result<Option<ExternalRequest>> {
    if let Some(given) = &request.external {
        return Ok(Some(given.clone()));
    }
    let recorded: Vec<_> = project
        .resources
        .iter()
        .filter(|r| {
            r.external
                && r.group == request.group
                && r.version == request.version
                && r.kind == request.kind
        })
        .collect();
    if let [first, second, ..] = recorded.as_slice() {
        // Two groups share `--group` (monitoring.coreos.com and monitoring.rhobs): which?
        bail!(
            "{}/{}, Kind {} is an external kind of two groups of this project, {}.{} and {}.{}; \
             pass --external-api-path and --external-api-domain of the one to hook",
            request.group,
            request.version,
            request.kind,
            first.group,
            first.domain,
            second.group,
            second.domain
        );
    }
    Ok(recorded.first().map(|r| ExternalRequest {
        path: r.path.clone(),
        domain: Some(r.domain.clone()),
        module: (!r.module.is_empty()).then(|| r.module.clone()),
    }))
}

/// The kind: an external kind's (from its CRD), else the project's own API, else a built-in
/// kind; none of these: nothing to hook.
fn find_target(checked: &mut Checked, dir: &Path) -> Result<()> {
    let (group, version, kind) = (&checked.group, &checked.version, &checked.kind);
    let project = &checked.project;
    let domain = checked.domain();
    if let Some(ext) = &checked.external_request {
        let loaded = ExternalKind::load(
            dir,
            project,
            &KindRef {
                path: &ext.path,
                group: group.as_str(),
                domain: &domain,
                version: version.as_str(),
                kind,
            },
        )?;
        checked.existing = project.resources.iter().position(|r| {
            r.external
                && r.group == group.as_str()
                && r.domain == domain
                && r.version == version.as_str()
                && r.kind == kind.as_str()
        });
        checked.external = Some(loaded);
        return Ok(());
    }
    if let Some(i) = project
        .resources
        .iter()
        .position(|r| is_own(r, project, group, version, kind))
    {
        checked.existing = Some(i);
        return Ok(());
    }
    let builtin = builtin::is_builtin_group(group.as_str())
        .then(|| find_builtin(group, version, kind))
        .transpose()?
        .flatten();
    let Some(b) = builtin else {
        bail!(
            "no API found for {}.{}/{}, Kind {}: run 'create api' first, or pass \
             --external-api-path for a kind of another project",
            group.as_str(),
            project.domain,
            version.as_str(),
            kind.as_str()
        );
    };
    checked.existing = project.resources.iter().position(|r| {
        r.core
            && r.group == b.short_group()
            && r.version == version.as_str()
            && r.kind == kind.as_str()
    });
    checked.builtin = Some(b);
    Ok(())
}

/// What the kind allows: conversions only between the project's own versions, its plural, its
/// spec, its group's module.
fn check_kind(checked: &mut Checked, request: &Request) -> Result<()> {
    let (group, version, kind) = (&checked.group, &checked.version, &checked.kind);
    let own = matches!(checked.target(), Target::Own);
    if request.conversion && !own {
        return Err(InvalidInput::new(
            "--conversion",
            "true",
            format!(
                "conversion webhooks convert between the versions of the project's own kinds; {}/{} {} is {}",
                group.as_str(),
                version.as_str(),
                kind.as_str(),
                if checked.external.is_some() { "another project's kind" } else { "a built-in kind" }
            ),
        )
        .into());
    }
    let plural = match (&checked.builtin, &checked.external) {
        (Some(b), _) => b.plural.to_string(),
        (None, Some(e)) => e.crd.plural.clone(),
        (None, None) => checked
            .entry()
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
    checked.plural = plural;
    checked.spec = spec_of(checked, version.as_str());
    if own {
        for spoke in &checked.spokes {
            let theirs = spec_of(checked, spoke);
            if theirs != checked.spec {
                return Err(InvalidInput::new(
                    "--spoke",
                    spoke,
                    format!(
                        "its spec was scaffolded differently from the hub {} ({theirs:?} vs {:?}), so \
                         operator-rs cannot write a conversion between them; add the conversion webhook \
                         for spokes of the hub's shape, or write this one by hand",
                        version.as_str(),
                        checked.spec
                    ),
                )
                .into());
            }
        }
        if checked.project.multigroup {
            check_group_module(group)?;
        }
    }
    Ok(())
}

/// The fields of the spec of a version of the kind: as the plugin that wrote its types left
/// them, else `create api`'s example field; a foreign kind's are not the project's to know.
fn spec_of(checked: &Checked, version: &str) -> SpecVars {
    if !matches!(checked.target(), Target::Own) {
        return SpecVars::default();
    }
    let gvk = Gvk {
        group: checked.group.as_str(),
        version,
        kind: checked.kind.as_str(),
    };
    plugins::spec_of(&checked.project, gvk).unwrap_or(SpecVars {
        foo: true,
        ..SpecVars::default()
    })
}

/// Each webhook once (`--force` renders them again), the conversion's hub and spokes, and paths
/// of their own.
fn check_webhooks(checked: &mut Checked, request: &Request) -> Result<()> {
    let recorded = checked
        .entry()
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
    if checked.defaulting_path.is_none() {
        checked.defaulting_path = recorded.defaulting_path.clone();
    }
    if checked.validation_path.is_none() {
        checked.validation_path = recorded.validation_path.clone();
    }
    checked.recorded = recorded;
    check_same_kind_of_another_group(checked)?;
    if request.conversion {
        check_conversion(checked)?;
    }
    let defaulting =
        (checked.defaulting_path.clone()).unwrap_or_else(|| checked.default_path("mutate"));
    let validation =
        (checked.validation_path.clone()).unwrap_or_else(|| checked.default_path("validate"));
    check_paths(request, &defaulting, &validation)?;
    check_paths_unused(checked, request, &defaulting, &validation)
}

/// Webhooks live in a folder named after the kind and version (and `--group` in multigroup
/// projects): the same kind of two external groups that share `--group` (monitoring.coreos.com
/// and monitoring.rhobs) would write one folder, so only one of them can have webhooks.
fn check_same_kind_of_another_group(checked: &Checked) -> Result<()> {
    if checked.external.is_none() {
        return Ok(());
    }
    let domain = checked.domain();
    let other = checked.project.resources.iter().find(|r| {
        r.external
            && r.group == checked.group.as_str()
            && r.version == checked.version.as_str()
            && r.kind == checked.kind.as_str()
            && r.domain != domain
            && r.webhooks.is_some()
    });
    if let Some(other) = other {
        bail!(
            "{} {}.{}/{} has webhooks already, in the files that those of {} {}.{domain}/{} would              take; only one of the two groups can have webhooks for {} {}",
            other.kind,
            other.group,
            other.domain,
            other.version,
            checked.kind.as_str(),
            checked.group.as_str(),
            checked.version.as_str(),
            checked.kind.as_str(),
            checked.version.as_str()
        );
    }
    Ok(())
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

/// A webhook path, if given: served by the manager and written into the webhook configurations.
fn parse_path(flag: &'static str, value: Option<&str>) -> Result<Option<String>> {
    let Some(value) = value else {
        return Ok(None);
    };
    crate::names::check_webhook_path(flag, value)?;
    Ok(Some(value.to_string()))
}

/// The two paths of this kind differ from each other and from the conversion endpoint.
fn check_paths(request: &Request, defaulting: &str, validation: &str) -> Result<()> {
    for (used, flag, path) in [
        (request.defaulting, "--defaulting-path", defaulting),
        (request.validation, "--validation-path", validation),
    ] {
        if used && path == "/convert" {
            return Err(InvalidInput::new(flag, path, "is the conversion webhook's path").into());
        }
    }
    if request.defaulting && request.validation && defaulting == validation {
        return Err(InvalidInput::new(
            "--validation-path",
            validation,
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
    checked: &Checked,
    request: &Request,
    defaulting: &str,
    validation: &str,
) -> Result<()> {
    let project = &checked.project;
    // The kind as PROJECT records it: a built-in kind under its short group (`core`, `apps`).
    let this = (
        checked
            .builtin
            .map_or(checked.group.as_str(), |b| b.short_group()),
        checked.version.as_str(),
        checked.kind.as_str(),
    );
    let wanted = [
        (request.defaulting, "--defaulting-path", defaulting),
        (request.validation, "--validation-path", validation),
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
                (webhooks.defaulting_path.clone()).unwrap_or_else(|| default("mutate")),
            ),
            (
                webhooks.validation,
                (webhooks.validation_path.clone()).unwrap_or_else(|| default("validate")),
            ),
        ];
        for (used, flag, path) in wanted {
            if used && taken.iter().any(|(on, other)| *on && other == path) {
                return Err(InvalidInput::new(
                    flag,
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
fn check_conversion(checked: &Checked) -> Result<()> {
    let (group, hub, kind) = (&checked.group, &checked.version, &checked.kind);
    let project = &checked.project;
    for spoke in &checked.spokes {
        let exists = project.resources.iter().any(|r| {
            !r.core
                && r.api.is_some()
                && r.group == group.as_str()
                && r.kind == kind.as_str()
                && &r.version == spoke
        });
        if !exists {
            bail!(
                "invalid spoke version {spoke:?}: no API found for {}.{}/{spoke}, Kind {} (each spoke must be an existing version of the kind; run 'create api' first)",
                group.as_str(),
                project.domain,
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
