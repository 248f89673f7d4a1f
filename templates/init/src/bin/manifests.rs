{{ rust_header }}//! The `manifests` binary, run by `make manifests`: writes the CRDs and the RBAC role that
//! [`{{ crate_name }}::manifests::render`] derives from the code into `config/`, and deletes CRD
//! files whose kinds no longer exist in the code.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use {{ crate_name }}::manifests::{self, CRD_DIR};

fn main() -> anyhow::Result<()> {
    // `cargo run` sets CARGO_MANIFEST_DIR, so this works from any folder of the project.
    let root = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .map_or_else(std::env::current_dir, Ok)
        .context("cannot determine the project folder")?;

    let manifests = manifests::render()?;
    for manifest in &manifests {
        let path = root.join(&manifest.path);
        if fs::read_to_string(&path).ok().as_deref() == Some(manifest.contents.as_str()) {
            continue; // Unchanged: leave the file (and its modification time) alone.
        }
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        fs::write(&path, &manifest.contents)
            .with_context(|| format!("cannot write {}", path.display()))?;
        println!("wrote {}", manifest.path);
    }

    let current: BTreeSet<&str> = manifests.iter().map(|m| m.path.as_str()).collect();
    for stale in yaml_files(&root.join(CRD_DIR))? {
        let relative = format!(
            "{CRD_DIR}/{}",
            stale.file_name().unwrap_or_default().display()
        );
        if !current.contains(relative.as_str()) {
            fs::remove_file(&stale)
                .with_context(|| format!("cannot delete {}", stale.display()))?;
            println!("deleted {relative}");
        }
    }
    Ok(())
}

/// The `.yaml` files directly in `dir`; none if `dir` does not exist (a project without APIs).
fn yaml_files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(error).with_context(|| format!("cannot read {}", dir.display())),
    };
    let mut files = Vec::new();
    for entry in entries {
        let path = entry
            .with_context(|| format!("cannot read {}", dir.display()))?
            .path();
        if path.is_file()
            && path
                .extension()
                .is_some_and(|extension| extension == "yaml")
        {
            files.push(path);
        }
    }
    Ok(files)
}
