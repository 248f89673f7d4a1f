//! Where each controller of a project lives and what it is called. A kind may have several
//! controllers (`--controller-name`, as in kubebuilder); each has its own file under
//! `src/controller/` and its own name, which is its `controller` label in metrics, its name in
//! logs, the reporter of its Events and its field manager: both must be unique in the project.

use crate::names::InvalidInput;
use crate::names::ident::Site;
use crate::project::{Project, Resource};
use crate::vars::{recorded_group_module, recorded_kind_module};

/// One controller: its file and its name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Slot {
    /// The file under `src/controller/`, without `.rs`: `captain`, `crew/captain_backup`.
    pub path: String,
    /// The file's module name: `captain_backup`.
    pub module: String,
    /// The controller's name: `captain`, `crew-captain` (multigroup), or the given name.
    pub name: String,
}

/// The kind a controller reconciles, by the names its slot is made of.
#[derive(Debug, Clone)]
pub struct Reconciled<'a> {
    /// The group as PROJECT records it: `crew`, `apps`, `cert-manager`.
    pub group: &'a str,
    /// The group's Rust module (see [`crate::vars::Target::group_module`]).
    pub group_module: String,
    /// The kind as Kubernetes has it.
    pub kind: &'a str,
    /// The kind's Rust module (see [`crate::names::Kind::snake`]): `first_mate`, `self_kind`.
    pub kind_module: String,
}

impl<'a> Reconciled<'a> {
    /// The kind of a resource PROJECT records.
    pub fn recorded(project: &Project, r: &'a Resource) -> Self {
        Self {
            group: &r.group,
            group_module: recorded_group_module(project, r),
            kind: &r.kind,
            kind_module: recorded_kind_module(r),
        }
    }
}

/// The slot of a controller of `kind`: named `given` (`--controller-name`), or the kind's unnamed
/// controller.
///
/// A named controller whose name is the lower-cased kind is the kind's unnamed one, recorded by
/// name (kubebuilder records `controller: true` as `controllers: [{name: <kind>}]` once the kind
/// has a named controller), so it keeps the kind's file and name.
pub fn slot(multigroup: bool, kind: &Reconciled, given: Option<&str>) -> Slot {
    let kind_lower = kind.kind.to_lowercase();
    let (module, name) = match given {
        Some(name) if name != kind_lower => (Site::Module.stem(name), name.to_string()),
        _ => {
            // kubebuilder prefixes the group in multigroup projects, where two groups may
            // share a kind.
            let name = if multigroup {
                format!("{}-{kind_lower}", kind.group.replace('.', "-"))
            } else {
                kind_lower
            };
            (kind.kind_module.clone(), name)
        }
    };
    let path = if multigroup {
        format!("{}/{module}", kind.group_module)
    } else {
        module.clone()
    };
    Slot { path, module, name }
}

/// Every controller of the project, with the resource it belongs to.
pub fn all(project: &Project) -> Vec<(Slot, &Resource)> {
    let mut slots = Vec::new();
    for r in &project.resources {
        let kind = Reconciled::recorded(project, r);
        if r.controllers.is_empty() && r.controller {
            slots.push((slot(project.multigroup, &kind, None), r));
        }
        for c in &r.controllers {
            slots.push((slot(project.multigroup, &kind, Some(&c.name)), r));
        }
    }
    slots
}

/// Refuses a new controller whose file or name another controller has (`is_this` tells the
/// controller itself, when it is written again with `--force`).
pub fn check_free(
    project: &Project,
    new: &Slot,
    flag: &'static str,
    value: &str,
    is_this: impl Fn(&Slot, &Resource) -> bool,
) -> Result<(), InvalidInput> {
    for (other, r) in all(project) {
        if is_this(&other, r) {
            continue;
        }
        // An external kind's group in full: two may share `--group`.
        let group = match r.external {
            true => format!("{}.{}", r.group, r.domain),
            false => r.group.clone(),
        };
        let what = format!(
            "the controller {} of {} in group {group}",
            other.name, r.kind
        );
        if other.path == new.path {
            return Err(InvalidInput::new(
                flag,
                value,
                format!(
                    "its controller would be src/controller/{}.rs, which is already {what}; {}",
                    new.path,
                    match flag {
                        "--kind" => "pass --controller-name to name this one",
                        _ => "choose another --controller-name",
                    }
                ),
            ));
        }
        if other.name == new.name {
            return Err(InvalidInput::new(
                flag,
                value,
                format!(
                    "the controller name {:?} is already {what}: names must be unique (metrics, \
                     logs, Events, field managers); pass --controller-name",
                    new.name
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind<'a>(group: &'a str, kind: &'a str) -> Reconciled<'a> {
        Reconciled {
            group,
            group_module: Site::Module.stem(group),
            kind,
            kind_module: crate::names::kind_module(kind),
        }
    }

    #[test]
    fn slots() {
        let first_mate = kind("crew", "FirstMate");
        assert_eq!(
            slot(false, &first_mate, None),
            Slot {
                path: "first_mate".into(),
                module: "first_mate".into(),
                name: "firstmate".into()
            }
        );
        assert_eq!(
            slot(false, &first_mate, Some("firstmate")),
            slot(false, &first_mate, None)
        );
        let captain = kind("foo.policy", "Captain");
        let backup = slot(true, &captain, Some("captain-backup"));
        assert_eq!(backup.path, "foo_policy/captain_backup");
        assert_eq!(backup.name, "captain-backup");
        assert_eq!(slot(true, &captain, None).name, "foo-policy-captain");
    }
}
