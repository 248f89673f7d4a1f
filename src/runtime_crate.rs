//! The runtime crate (`runtime/` of this repository) that every generated project depends on.
//!
//! It is not on crates.io yet, so the binary embeds its source and `init` writes it into the
//! project as [`DIR`]: a path dependency that names its version too, so that moving to crates.io
//! is a one-line change. operator-rs owns that folder and replaces it wholesale; see
//! docs/runtime.md.
//!
//! The files are embedded through `embedded-runtime/`, links to each file and folder of
//! `runtime/`: cargo leaves `runtime/` (another package) out of operator-rs's package, and the
//! links bring the runtime into it, its manifest stored as `Cargo.toml.in`
//! ([`crate::stored_names`]).

use include_dir::{Dir, DirEntry, include_dir};

use crate::stored_names::written_path;

static RUNTIME: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/embedded-runtime");

/// Where the runtime crate goes in a generated project.
pub const DIR: &str = "operator-rs-runtime";

/// Whether `path` (relative to a project's root, `/`-separated) is in the runtime crate's folder.
pub fn owns(path: &str) -> bool {
    path.strip_prefix(DIR)
        .is_some_and(|rest| rest.starts_with('/'))
}

/// Every file of the runtime crate: its path in a generated project and its contents, sorted.
pub fn files() -> Vec<(String, &'static str)> {
    let mut files = Vec::new();
    collect(&RUNTIME, &mut files);
    files.sort_unstable();
    files
}

fn collect(dir: &'static Dir<'static>, out: &mut Vec<(String, &'static str)>) {
    for entry in dir.entries() {
        match entry {
            DirEntry::Dir(sub) => collect(sub, out),
            DirEntry::File(file) => {
                if let (Some(path), Some(text)) = (file.path().to_str(), file.contents_utf8()) {
                    out.push((format!("{DIR}/{}", written_path(path)), text));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// Every file of `runtime/` with its path in a project, sorted, as read from the disk.
    fn runtime_on_disk() -> Vec<(String, String)> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("runtime");
        let mut files: Vec<(String, String)> = walkdir::WalkDir::new(&root)
            .into_iter()
            .map(Result::unwrap)
            .filter(|entry| entry.file_type().is_file())
            .map(|entry| {
                let relative = entry.path().strip_prefix(&root).unwrap();
                let path = relative.to_str().unwrap().replace('\\', "/");
                let text = std::fs::read_to_string(entry.path()).unwrap();
                (format!("{DIR}/{path}"), text)
            })
            .collect();
        files.sort_unstable();
        files
    }

    /// The links of `embedded-runtime/` bring every file of `runtime/`, unchanged: a file added
    /// at the top of `runtime/` without its link fails here.
    #[test]
    fn the_crate_is_embedded_whole() {
        let on_disk = runtime_on_disk();
        assert!(on_disk.len() > 10, "runtime/ has {} files", on_disk.len());
        let embedded: Vec<(String, String)> = files()
            .into_iter()
            .map(|(path, text)| (path, text.to_owned()))
            .collect();
        let paths = |files: &[(String, String)]| -> Vec<String> {
            files.iter().map(|(path, _)| path.clone()).collect()
        };
        assert_eq!(paths(&embedded), paths(&on_disk));
        assert!(
            embedded == on_disk,
            "an embedded file differs from runtime/"
        );
    }

    #[test]
    fn the_manifest_gets_its_name_back() {
        let paths: Vec<String> = files().into_iter().map(|(path, _)| path).collect();
        assert!(paths.contains(&format!("{DIR}/Cargo.toml")), "{paths:?}");
        // Nothing but sources, manifests and the README: no build output, no editor files.
        let unexpected: Vec<&String> = paths
            .iter()
            .filter(|path| {
                ![".rs", ".toml", ".md"]
                    .iter()
                    .any(|ext| path.ends_with(ext))
            })
            .collect();
        assert!(unexpected.is_empty(), "{unexpected:?}");
    }
}
