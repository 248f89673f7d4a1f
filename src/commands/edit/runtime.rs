//! `--runtime`: where the project takes operator-rs's crates from ([`crate::runtime_source`]).
//! `vendored` writes the copies and names them in Cargo.toml; `crates-io` deletes the copies and
//! names the crates by version. Nothing else of Cargo.toml changes. Cargo.lock follows when it is
//! still the one `init` wrote (what `alpha generate` replays: `init`, then `edit --runtime`);
//! otherwise it is left to cargo, which resolves the crates from their new place on the next build.

use anyhow::{Result, bail};

use crate::project::RuntimeSource;
use crate::scaffold::{Plan, cargo_lock};
use crate::{runtime_crate, runtime_source};

const MANIFEST: &str = "Cargo.toml";

const LOCK: &str = "Cargo.lock";

/// Moves the project `name` of `plan` to take operator-rs's crates from `to` instead of `from`.
pub(super) fn switch(
    plan: &mut Plan,
    name: &str,
    from: RuntimeSource,
    to: RuntimeSource,
) -> Result<()> {
    switch_lock(plan, name, from, to)?;
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

/// `init`'s lock for `to` in place of `init`'s lock for `from`: cargo locks all the dependencies
/// of vendored crates (workspace members) but only the used ones of crates.io's. A lock that the
/// project's own dependencies changed is not touched.
fn switch_lock(plan: &mut Plan, name: &str, from: RuntimeSource, to: RuntimeSource) -> Result<()> {
    let Some(current) = plan.read(LOCK)? else {
        return Ok(());
    };
    if current == cargo_lock::for_source(from, name)? {
        plan.write(LOCK, cargo_lock::for_source(to, name)?)?;
    }
    Ok(())
}
