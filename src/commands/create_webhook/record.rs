//! `create webhook`, step 4: the kind's webhooks, recorded in PROJECT.

use super::Request;
use super::validate::Checked;
use crate::project::{Project, Resource};

/// The project with the kind's webhooks recorded (and the kind's entry, for a built-in or
/// external kind that has none yet).
pub fn record(checked: &Checked, request: &Request, spokes: &[String]) -> Project {
    let mut project = checked.project.clone();
    let entry = match checked.existing {
        Some(i) => &mut project.resources[i],
        None => {
            let entry = new_entry(checked);
            project.resources.push(entry);
            project.resources.last_mut().expect("just pushed")
        }
    };
    let mut webhooks = entry.webhooks.clone().unwrap_or_default();
    webhooks.webhook_version = "v1".into();
    if request.defaulting {
        webhooks.defaulting = true;
        webhooks.defaulting_path = checked.defaulting_path.clone();
    }
    if request.validation {
        webhooks.validation = true;
        webhooks.validation_path = checked.validation_path.clone();
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
    project.webhook_certs = Some(checked.certs);
    project
}

/// The entry of a kind that PROJECT does not list yet: a built-in or external kind.
fn new_entry(checked: &Checked) -> Resource {
    let mut entry = Resource {
        kind: checked.kind.as_str().to_string(),
        version: checked.version.as_str().to_string(),
        ..Resource::default()
    };
    match (&checked.builtin, &checked.external_request) {
        (Some(b), _) => {
            entry.core = true;
            entry.group = b.short_group().to_string();
            entry.domain = b.domain().to_string();
            entry.path = b.rust_module().to_string();
        }
        (None, Some(e)) => {
            entry.external = true;
            entry.group = checked.group.as_str().to_string();
            entry.domain = checked.domain();
            entry.path = e.path.clone();
            entry.module = e.module.clone().unwrap_or_default();
        }
        (None, None) => {
            entry.group = checked.group.as_str().to_string();
            entry.domain = checked.project.domain.clone();
            let plural = &checked.plural;
            entry.plural = (*plural != checked.kind.default_plural()).then(|| plural.clone());
        }
    }
    entry
}
