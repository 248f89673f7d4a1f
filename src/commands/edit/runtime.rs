//! `--runtime`: where the project takes operator-rs's crates from ([`crate::runtime_source`]).
//! `vendored` writes the copies and names them in Cargo.toml; `crates-io` deletes the copies and
//! names the crates by version. Nothing else of Cargo.toml changes, and Cargo.lock is left to
//! cargo, which resolves the crates from their new place on the next build.

use anyhow::{Result, bail};

use crate::project::RuntimeSource;
use crate::scaffold::Plan;
use crate::{runtime_crate, runtime_source};

const MANIFEST: &str = "Cargo.toml";

/// Moves the project of `plan` to take operator-rs's crates from `to`.
pub(super) fn switch(plan: &mut Plan, to: RuntimeSource) -> Result<()> {
    let Some(current) = plan.read(MANIFEST)? else {
        bail!("the project has no {MANIFEST}, where operator-rs's crates are named");
    };
    plan.write(
        MANIFEST,
        runtime_source::set_in_manifest(&current, MANIFEST, to)?,
    )?;
    let shipped = match to {
        RuntimeSource::Vendored => runtime_crate::files(),
        RuntimeSource::CratesIo => Vec::new(),
    };
    // The copies' files this operator-rs does not ship (all of them for crates-io) go.
    for krate in &runtime_crate::CRATES {
        let mut stale = Vec::new();
        super::walk(plan.root(), krate.dir, &mut |path| {
            if !shipped.iter().any(|(shipped, _)| shipped == path) {
                stale.push(path.to_owned());
            }
        });
        for path in stale {
            plan.delete(&path)?;
        }
    }
    for (path, contents) in shipped {
        plan.write(&path, contents.to_owned())?;
    }
    Ok(())
}
