//! `create api`, step 4: what was created, recorded in PROJECT.

use super::Request;
use super::validate::Checked;
use crate::project::{Api, NamedController, Project, Resource};

/// The project with the kind's entry added or updated, and the plugins' records.
pub fn record(checked: &Checked, request: &Request) -> Project {
    let mut project = checked.project.clone();
    let gvk = checked.gvk();
    for part in &request.parts {
        part.record(&mut project, gvk);
    }
    let entry = match checked.existing {
        Some(i) => &mut project.resources[i],
        None => {
            project.resources.push(Resource::default());
            project.resources.last_mut().expect("just pushed")
        }
    };
    entry.kind = checked.kind.as_str().to_string();
    entry.version = checked.version.as_str().to_string();
    match (&checked.builtin, &request.external) {
        (Some(b), _) => {
            entry.core = true;
            entry.group = b.short_group().to_string();
            entry.domain = b.domain().to_string();
            entry.path = b.rust_module().to_string();
        }
        (None, Some(external)) => {
            entry.external = true;
            entry.group = checked.group.as_str().to_string();
            entry.domain = checked.domain.clone();
            entry.path = external.path.clone();
            entry.module = external.module.clone().unwrap_or_default();
        }
        (None, None) => {
            let group = &checked.group;
            entry.group = group.as_str().to_string();
            entry.domain = checked.project.domain.clone();
            entry.path = if checked.project.multigroup {
                format!(
                    "crate::api::{}::{}",
                    group.module(),
                    checked.version.as_str()
                )
            } else {
                format!("crate::api::{}", checked.version.as_str())
            };
            let regular = checked.plural == checked.kind.default_plural();
            entry.plural = (!regular).then(|| checked.plural.clone());
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
    project
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
        entry.controllers.push(NamedController {
            name: default,
            ..Default::default()
        });
    }
    if entry.controllers.iter().all(|c| c.name != name) {
        entry.controllers.push(NamedController {
            name: name.to_string(),
            ..Default::default()
        });
    }
}
