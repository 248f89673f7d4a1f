//! A project tree read into memory: every file by its path relative to the root, with `/`
//! separators, as plans name files.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context as _, Result, bail};

/// Folders that are not the project's files: build output, version control.
const SKIPPED: [&str; 2] = ["target", ".git"];

/// Every file under `root` (but [`SKIPPED`] folders at the top and operator-rs's own lock and
/// journal), with its text.
pub fn read(root: &Path) -> Result<BTreeMap<String, String>> {
    let mut files = BTreeMap::new();
    let walk = walkdir::WalkDir::new(root)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() != 1 || !SKIPPED.iter().any(|s| e.file_name() == *s));
    for entry in walk {
        let entry = entry.with_context(|| format!("reading {}", root.display()))?;
        if !entry.file_type().is_file() {
            continue;
        }
        let relative = entry.path().strip_prefix(root).expect("under the root");
        let Some(path) = relative.to_str().map(|p| p.replace('\\', "/")) else {
            bail!("{} has a file name that is not UTF-8", relative.display());
        };
        // The lock and journal of a command at work (`.operator-rs.lock`, …).
        if !path.contains('/') && path.starts_with(".operator-rs.") {
            continue;
        }
        let text = std::fs::read(entry.path())
            .with_context(|| format!("reading {}", entry.path().display()))?;
        match String::from_utf8(text) {
            Ok(text) => {
                files.insert(path, text);
            }
            Err(_) => bail!("{path} is not a text file; operator-rs projects hold only text"),
        }
    }
    Ok(files)
}
