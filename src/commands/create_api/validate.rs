//! `create api`, step 1: the request checked against the project. Nothing is written; the
//! result is everything the later steps need to know of the kind.

use std::path::Path;

use anyhow::{Result, bail};

use super::Request;
use super::reserved::check_reserved_kind;
use crate::builtin::BuiltinKind;
use crate::commands::controllers::{self, Slot};
use crate::commands::{find_builtin, load_project, parse_foreign_kind, read_boilerplate};
use crate::external::{ExternalKind, KindRef};
use crate::names::{Group, InvalidInput, Kind, Version, parse_plural};
use crate::plugins::{self, Gvk};
use crate::project::{Project, Resource};
use crate::vars::Target;

/// The request, checked: the kind, what it is to the project, and where its controller goes.
pub struct Checked {
    pub project: Project,
    pub group: Group,
    pub version: Version,
    pub kind: Kind,
    /// The domain of the kind's group: the project's, or `--external-api-domain`.
    pub domain: String,
    pub builtin: Option<BuiltinKind>,
    pub external: Option<ExternalKind>,
    /// The kind's entry in PROJECT's resources, if it has one.
    pub existing: Option<usize>,
    pub plural: String,
    /// Where the requested controller goes, and its name.
    pub slot: Slot,
    /// The controller is the kind's first: for a kind of the project's own, the one that writes
    /// its status; the others only read it.
    pub primary: bool,
    /// The license header of the project's Rust files.
    pub boilerplate: String,
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

    /// The kind as PROJECT records it: a built-in kind under its short group (`core`, `apps`).
    pub fn gvk(&self) -> Gvk<'_> {
        Gvk {
            group: self
                .builtin
                .map_or(self.group.as_str(), |b| b.short_group()),
            version: self.version.as_str(),
            kind: self.kind.as_str(),
        }
    }
}

pub fn check(request: &Request, dir: &Path) -> Result<Checked> {
    let project = load_project(dir)?;
    // Another project's kind keeps the name its CRD gives it.
    let kind = match &request.external {
        Some(_) => parse_foreign_kind(&request.kind)?,
        None => Kind::parse(&request.kind)?,
    };
    let version = Version::parse(&request.version)?;
    if !request.resource && !request.controller {
        bail!("nothing to create: --resource=false and --controller=false");
    }
    // An external kind's group is `<group>.<--external-api-domain>`, the project's own
    // `<group>.<domain>`.
    let domain = match request.external.as_ref().and_then(|e| e.domain.clone()) {
        Some(domain) => domain,
        None => project.domain.clone(),
    };
    let group = match &request.external {
        Some(_) => Group::parse_foreign(&request.group, &domain)?,
        None => Group::parse(&request.group, &domain)?,
    };
    let builtin = if request.resource || request.external.is_some() {
        None
    } else {
        find_builtin(&group, &version, &kind)?
    };
    let external = match &request.external {
        Some(ext) => Some(ExternalKind::load(
            dir,
            &project,
            &KindRef {
                path: &ext.path,
                group: group.as_str(),
                domain: &domain,
                version: version.as_str(),
                kind: &kind,
            },
        )?),
        None => None,
    };
    if builtin.is_none() {
        check_reserved_kind(&kind)?;
        if project.multigroup {
            group.check_module()?;
        }
    }
    let mut checked = Checked {
        project,
        group,
        version,
        kind,
        domain,
        builtin,
        external,
        existing: None,
        plural: String::new(),
        slot: Slot::default(),
        primary: true,
        boilerplate: String::new(),
    };
    check_groups(&checked, request)?;
    checked.existing = checked
        .project
        .resources
        .iter()
        .position(|r| is_the_kind(r, &checked));
    check_entry(&checked, request)?;
    checked.plural = plural(&checked, request)?;
    if matches!(checked.target(), Target::Own) {
        check_plural_is_consistent(&checked)?;
        check_group_module(&checked)?;
        check_names_in_group(&checked, request.plural.is_some())?;
    }
    check_controller(&mut checked, request)?;
    checked.boilerplate = read_boilerplate(dir)?;
    Ok(checked)
}

/// What the kind's entry in PROJECT allows: a kind is created once (`--force` renders it again),
/// a controller needs the kind, a kind a plugin wrote stays that plugin's.
fn check_entry(checked: &Checked, request: &Request) -> Result<()> {
    let (group, version, kind) = (&checked.group, &checked.version, &checked.kind);
    let project = &checked.project;
    let entry = checked.entry();
    let own = matches!(checked.target(), Target::Own);
    // A named controller is added next to a plugin's controller, which stays.
    let only_a_named_controller = !request.resource && request.controller_name.is_some();
    if entry.is_some() && !only_a_named_controller {
        refuse_plugin_kind_without_it(checked, request)?;
    }
    if own
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
    if request.resource && entry.is_some_and(|e| e.api.is_some()) && !request.force {
        bail!(
            "API resource already exists: {}/{}, Kind {} (rerun with --force to re-render its files)",
            qualified(group, &project.domain),
            version.as_str(),
            kind.as_str()
        );
    }
    if !request.resource && own && entry.is_none_or(|e| e.api.is_none()) {
        bail!(
            "no API found for {}/{}, Kind {}: run `operator-rs create api` with --resource first, \
             or pass --external-api-path for a kind of another project",
            qualified(group, &project.domain),
            version.as_str(),
            kind.as_str()
        );
    }
    Ok(())
}

/// A kind that a plugin wrote keeps the plugin's files, its config in PROJECT and what else it
/// added: rendering the command's own templates over it would leave those behind (the
/// deploy-image plugin's e2e test, for one, would no longer compile: it reads `spec.size`).
fn refuse_plugin_kind_without_it(checked: &Checked, request: &Request) -> Result<()> {
    for recorded in plugins::recorded_api(&checked.project, checked.gvk()) {
        if request.parts.iter().any(|p| p.key() == recorded.key()) {
            continue;
        }
        let plugin = plugins::find(recorded.key()).expect("a recorded part is a plugin's");
        bail!(
            "{} {}/{} was created by the {} plugin ({}): run create api again with its flags, or \
             delete the kind's entry under plugins in PROJECT first to make it a plain kind",
            checked.kind.as_str(),
            checked.group.as_str(),
            checked.version.as_str(),
            plugin.short_key(),
            plugin.usage()
        );
    }
    Ok(())
}

/// The kind's plural: a built-in or external kind's own, else `--plural`, else as recorded,
/// else the kind's regular plural.
fn plural(checked: &Checked, request: &Request) -> Result<String> {
    Ok(
        match (&request.plural, &checked.builtin, &checked.external) {
            (_, Some(b), _) => b.plural.to_string(),
            (_, _, Some(e)) => e.crd.plural.clone(),
            (Some(p), _, _) => parse_plural(p)?,
            (None, _, _) => checked
                .entry()
                .and_then(|e| e.plural.clone())
                .unwrap_or_else(|| checked.kind.default_plural()),
        },
    )
}

/// The requested controller: a kind has one unnamed controller, further ones by name; its file
/// and name must be free, and its name short enough.
fn check_controller(checked: &mut Checked, request: &Request) -> Result<()> {
    let (group, version, kind) = (&checked.group, &checked.version, &checked.kind);
    let project = &checked.project;
    let names_before = checked
        .entry()
        .map(Resource::controller_names)
        .unwrap_or_default();
    check_controller_is_new(checked, request, &names_before)?;
    let gvk = checked.gvk();
    let slot = controllers::slot(
        project.multigroup,
        gvk.group,
        kind.as_str(),
        request.controller_name.as_deref(),
    );
    // The name PROJECT records for the requested controller: the given one, or the kind's
    // lower-cased name for its unnamed controller.
    let record_name = request
        .controller_name
        .clone()
        .unwrap_or_else(|| kind.lower());
    let primary =
        names_before.is_empty() || names_before.first().map(String::as_str) == Some(&*record_name);
    if request.controller {
        let (flag, value) = match &request.controller_name {
            Some(name) => ("--controller-name", name.as_str()),
            None => ("--kind", kind.as_str()),
        };
        controllers::check_free(project, &slot, flag, value, |other, r| {
            other == &slot
                && r.kind == kind.as_str()
                && r.group == gvk.group
                && r.version == version.as_str()
                && same_domain(r, &checked.domain)
        })?;
        check_controller_name_length(&slot, group)?;
        for part in &request.parts {
            part.check(project, gvk)?;
        }
    }
    checked.slot = slot;
    checked.primary = primary;
    Ok(())
}

/// Refuses a second unnamed controller of the kind (in this version or another) and a name the
/// kind's controllers already have, unless `--force` renders the existing one again.
fn check_controller_is_new(
    checked: &Checked,
    request: &Request,
    names_before: &[String],
) -> Result<()> {
    let (group, version, kind) = (&checked.group, &checked.version, &checked.kind);
    let project = &checked.project;
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
                && same_domain(r, &checked.domain)
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
    Ok(())
}

/// Whether `r` is of the group with `domain`: external kinds of two groups may share `--group`
/// (monitoring.coreos.com and monitoring.rhobs).
fn same_domain(r: &Resource, domain: &str) -> bool {
    !r.external || r.domain == domain
}

pub fn qualified(group: &Group, domain: &str) -> String {
    format!("{}.{domain}", group.as_str())
}

/// Whether `r` is the entry of the requested kind.
fn is_the_kind(r: &Resource, checked: &Checked) -> bool {
    let (group, version, kind) = (&checked.group, &checked.version, &checked.kind);
    let same_gvk = r.kind == kind.as_str() && r.version == version.as_str();
    match checked.target() {
        Target::Own => {
            same_gvk
                && !r.core
                && !r.external
                && r.group == group.as_str()
                && (r.domain.is_empty() || r.domain == checked.domain)
        }
        Target::Builtin(b) => same_gvk && r.core && r.group == b.short_group(),
        Target::External(_) => {
            same_gvk && r.external && r.group == group.as_str() && r.domain == checked.domain
        }
    }
}

/// kubebuilder's single-group rule: without `multigroup`, every API the project defines
/// (`--resource=true`) shares one group; controllers alone may watch kinds of any group.
fn check_groups(checked: &Checked, request: &Request) -> Result<()> {
    let project = &checked.project;
    if project.multigroup || !request.resource {
        return Ok(());
    }
    if let Some(other) = project
        .resources
        .iter()
        .find(|r| !r.core && r.api.is_some() && r.group != checked.group.as_str())
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

/// All versions of one kind share one CRD, so they must share one plural.
fn check_plural_is_consistent(checked: &Checked) -> Result<()> {
    let (group, kind, plural) = (&checked.group, &checked.kind, &checked.plural);
    for r in &checked.project.resources {
        if r.group == group.as_str() && r.kind == kind.as_str() && r.api.is_some() && !r.core {
            let theirs = r.plural.clone().unwrap_or_else(|| kind.default_plural());
            if &theirs != plural {
                return Err(InvalidInput::new(
                    "--plural",
                    plural,
                    format!(
                        "version {} of {} already uses the plural {theirs:?}; all versions of a kind share one",
                        r.version,
                        kind.as_str()
                    ),
                )
                .into());
            }
        }
    }
    Ok(())
}

/// `foo-bar` and `foo.bar` would both become the Rust module `foo_bar`.
fn check_group_module(checked: &Checked) -> Result<()> {
    let (project, group) = (&checked.project, &checked.group);
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

/// Within one API group Kubernetes requires distinct names for the kinds' plurals, singulars
/// and list kinds, and the Rust types `<Kind>`, `<Kind>Spec` and `<Kind>Status` share a module
/// per version: a new kind must not clash with the group's other kinds in any of them.
fn check_names_in_group(checked: &Checked, plural_given: bool) -> Result<(), InvalidInput> {
    let (project, group, kind, plural) = (
        &checked.project,
        &checked.group,
        &checked.kind,
        &checked.plural,
    );
    let singular = kind.lower();
    let qualified_group = qualified(group, &project.domain);
    let plural_flag = if plural_given { "--plural" } else { "--kind" };
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
        } else if &other_plural == plural || &other_singular == plural {
            (
                plural_flag,
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
        } else if let Some(rule) = suffix_clash(kind.as_str(), &other.kind, &qualified_group) {
            ("--kind", rule)
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
            plural_flag,
            kind_or_plural(plural_flag, kind, plural),
            format!(
                "the CustomResourceDefinition's name {crd_name:?} would be longer than 253 characters"
            ),
        ));
    }
    Ok(())
}

/// `CaptainList`, `CaptainSpec` and `CaptainStatus` are the types of the kind `Captain`: no other
/// kind of its group may have those names, nor may `Captain` be added next to one.
fn suffix_clash(kind: &str, other: &str, qualified_group: &str) -> Option<String> {
    ["List", "Spec", "Status"].into_iter().find_map(|suffix| {
        let (longer, shorter) = if other == format!("{kind}{suffix}") {
            (other, kind)
        } else if kind == format!("{other}{suffix}") {
            (kind, other)
        } else {
            return None;
        };
        Some(format!(
            "{longer} would name both a kind and the {suffix} type of the kind {shorter} in \
             {qualified_group}; choose another kind"
        ))
    })
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
