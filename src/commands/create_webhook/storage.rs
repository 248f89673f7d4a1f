//! The storage version of a kind with a conversion webhook: the hub.

use anyhow::Result;

use crate::names::{Group, Kind, Version};
use crate::project::Project;
use crate::scaffold::{Plan, line_endings};

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
pub fn make_hub_the_storage_version(
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
