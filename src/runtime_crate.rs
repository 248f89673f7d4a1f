//! The crates a vendored project holds (`init --runtime=vendored`): the runtime (`runtime/` of
//! this repository), which every generated manager links, and its test harnesses (`testing/`),
//! which the project's tests link.
//!
//! They are not on crates.io yet, so the binary embeds their sources and `init` writes them into
//! the project as [`DIR`] and [`TESTING_DIR`]: path dependencies that name their version too, so
//! that moving to crates.io is a change of the project's `[workspace.dependencies]`. operator-rs
//! owns those folders and replaces them wholesale; see docs/runtime.md.
//!
//! The files are embedded through `embedded-runtime/` and `embedded-testing/`, links to each file
//! and folder of `runtime/` and `testing/`: cargo leaves those folders (other packages) out of
//! operator-rs's package, and the links bring the crates into it, their manifests stored as
//! `Cargo.toml.in` ([`crate::stored_names`]). Their tests (`testing/tests/`) stay here.

use include_dir::{Dir, DirEntry, include_dir};

use crate::stored_names::written_path;

/// A crate operator-rs writes into a vendored project.
pub struct VendoredCrate {
    /// Its package name.
    pub name: &'static str,
    /// Its folder in a project.
    pub dir: &'static str,
    /// Its folder in this repository.
    pub repository_dir: &'static str,
    files: &'static Dir<'static>,
}

static RUNTIME: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/embedded-runtime");
static TESTING: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/embedded-testing");

/// Where the runtime crate goes in a generated project.
pub const DIR: &str = "operator-rs-runtime";
/// Where the test harnesses go in a generated project.
pub const TESTING_DIR: &str = "operator-rs-testing";

/// The crates of a vendored project, the runtime first.
pub static CRATES: [VendoredCrate; 2] = [
    VendoredCrate {
        name: "operator-rs-runtime",
        dir: DIR,
        repository_dir: "runtime",
        files: &RUNTIME,
    },
    VendoredCrate {
        name: "operator-rs-testing",
        dir: TESTING_DIR,
        repository_dir: "testing",
        files: &TESTING,
    },
];

/// Whether `path` (relative to a project's root, `/`-separated) is in the folder of a vendored
/// crate.
pub fn owns(path: &str) -> bool {
    CRATES.iter().any(|krate| {
        path.strip_prefix(krate.dir)
            .is_some_and(|rest| rest.starts_with('/'))
    })
}

/// Every file of the vendored crates: its path in a generated project and its contents, sorted.
pub fn files() -> Vec<(String, &'static str)> {
    let mut files = Vec::new();
    for krate in &CRATES {
        collect(krate.dir, krate.files, &mut files);
    }
    files.sort_unstable();
    files
}

fn collect(prefix: &str, dir: &'static Dir<'static>, out: &mut Vec<(String, &'static str)>) {
    for entry in dir.entries() {
        match entry {
            DirEntry::Dir(sub) => collect(prefix, sub, out),
            DirEntry::File(file) => {
                if let (Some(path), Some(text)) = (file.path().to_str(), file.contents_utf8()) {
                    out.push((format!("{prefix}/{}", written_path(path)), text));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// What a crate's folder in this repository brings into a project, with each file's path
    /// there, sorted, as read from the disk: everything but its tests (`tests/`).
    fn on_disk(krate: &VendoredCrate) -> Vec<(String, String)> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(krate.repository_dir);
        let mut files: Vec<(String, String)> = walkdir::WalkDir::new(&root)
            .into_iter()
            .map(Result::unwrap)
            .filter(|entry| entry.file_type().is_file())
            .map(|entry| {
                let relative = entry.path().strip_prefix(&root).unwrap();
                let path = relative.to_str().unwrap().replace('\\', "/");
                let text = std::fs::read_to_string(entry.path()).unwrap();
                (format!("{}/{path}", krate.dir), text)
            })
            .filter(|(path, _)| !path.starts_with(&format!("{}/tests/", krate.dir)))
            .collect();
        files.sort_unstable();
        files
    }

    /// The links of `embedded-runtime/` and `embedded-testing/` bring every file of `runtime/`
    /// and `testing/` but their tests, unchanged: a file added at the top of either folder
    /// without its link fails here.
    #[test]
    fn the_crates_are_embedded_whole() {
        let mut on_disk: Vec<(String, String)> = CRATES.iter().flat_map(on_disk).collect();
        on_disk.sort_unstable();
        assert!(
            on_disk.len() > 20,
            "the crates have {} files",
            on_disk.len()
        );
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
            "an embedded file differs from its crate"
        );
    }

    #[test]
    fn the_manifests_get_their_name_back() {
        let paths: Vec<String> = files().into_iter().map(|(path, _)| path).collect();
        for krate in &CRATES {
            let manifest = format!("{}/Cargo.toml", krate.dir);
            assert!(paths.contains(&manifest), "{paths:?}");
        }
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

    #[test]
    fn each_folder_is_owned() {
        assert!(owns("operator-rs-runtime/src/lib.rs"));
        assert!(owns("operator-rs-testing/Cargo.toml"));
        assert!(!owns("operator-rs-testing"));
        assert!(!owns("operator-rs-runtime-fork/src/lib.rs"));
        assert!(!owns("src/lib.rs"));
    }
}
