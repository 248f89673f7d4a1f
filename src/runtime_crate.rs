//! The runtime crate (`runtime/` of this repository) that every generated project depends on.
//!
//! It is not on crates.io yet, so the binary embeds its source and `init` writes it into the
//! project as [`DIR`]: a path dependency that names its version too, so that moving to crates.io
//! is a one-line change. operator-rs owns that folder and replaces it wholesale; see
//! docs/runtime.md.

use include_dir::{Dir, DirEntry, include_dir};

static RUNTIME: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/runtime");

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
                    out.push((format!("{DIR}/{path}"), text));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crate_is_embedded_whole() {
        let files = files();
        let paths: Vec<&str> = files.iter().map(|(path, _)| path.as_str()).collect();
        for expected in [
            "operator-rs-runtime/Cargo.toml",
            "operator-rs-runtime/src/lib.rs",
            "operator-rs-runtime/src/manager/mod.rs",
        ] {
            assert!(
                paths.contains(&expected),
                "{expected} missing from {paths:?}"
            );
        }
        // Nothing but sources and the manifest: no build output, no editor files.
        assert!(
            paths.iter().all(|path| path.ends_with(".rs")
                || path.ends_with(".toml")
                || path.ends_with(".md")),
            "{paths:?}"
        );
    }
}
