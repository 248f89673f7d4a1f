//! A project tree read into memory: every file by its path relative to the root, with `/`
//! separators, as plans name files; and what is not the project's: its build output.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context as _, Result, bail};

/// What the project's own Makefile and cargo write (`make build`, `make build-installer`, `make
/// docker-buildx`, `cargo build`): never the project's files, whatever its .gitignore says (or
/// when it has none).
const BUILD_OUTPUT: [&str; 4] = ["target", "bin", "dist/install.yaml", "Dockerfile.cross"];

/// Every file of the project under `root`: not its version control (`.git`), not what its
/// .gitignore files ignore (as git would, in a repository or not), not its build output
/// ([`BUILD_OUTPUT`]), not operator-rs's own lock and journal; with its text.
pub fn read(root: &Path) -> Result<BTreeMap<String, String>> {
    let mut files = BTreeMap::new();
    for path in project_files(root)? {
        let full = root.join(&path);
        let text = std::fs::read(&full).with_context(|| format!("reading {}", full.display()))?;
        match String::from_utf8(text) {
            Ok(text) => {
                files.insert(path, text);
            }
            Err(_) => bail!(
                "{path} is not a text file; operator-rs projects hold only text (add it to the \
                 project's .gitignore if it is a build output)"
            ),
        }
    }
    Ok(files)
}

/// The paths of the project's files under `root` (see [`read`]), sorted.
pub fn project_files(root: &Path) -> Result<Vec<String>> {
    let mut paths = Vec::new();
    let walk = ignore::WalkBuilder::new(root)
        .hidden(false)
        .parents(false)
        .ignore(false)
        .git_global(false)
        .require_git(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(|e| e.depth() != 1 || e.file_name() != ".git")
        .build();
    for entry in walk {
        let entry = entry.with_context(|| format!("reading {}", root.display()))?;
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let relative = entry.path().strip_prefix(root).expect("under the root");
        let Some(path) = relative.to_str().map(|p| p.replace('\\', "/")) else {
            bail!("{} has a file name that is not UTF-8", relative.display());
        };
        // The lock and journal of a command at work (`.operator-rs.lock`, …).
        if is_build_output(&path) || (!path.contains('/') && path.starts_with(".operator-rs.")) {
            continue;
        }
        paths.push(path);
    }
    Ok(paths)
}

/// Whether `path` is under, or is, one of [`BUILD_OUTPUT`].
pub fn is_build_output(path: &str) -> bool {
    BUILD_OUTPUT
        .iter()
        .any(|out| path == *out || path.strip_prefix(out).is_some_and(|r| r.starts_with('/')))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, path: &str, contents: &[u8]) {
        let full = root.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, contents).unwrap();
    }

    /// What `make build` and cargo leave, and what .gitignore names, is not the project's; the
    /// rest is, hidden files included.
    #[test]
    fn build_output_and_ignored_files_are_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "PROJECT", b"version: \"3\"\n");
        write(root, "src/main.rs", b"fn main() {}\n");
        write(root, ".github/workflows/test.yml", b"on: push\n");
        write(root, ".gitignore", b"/scratch/\n*.log\n");
        write(root, "bin/manager", &[0x7f, b'E', b'L', b'F', 0, 0xff]);
        write(root, "target/debug/manager", &[0xff, 0]);
        write(root, "dist/install.yaml", b"kind: List\n");
        write(root, "scratch/notes.txt", b"mine\n");
        write(root, "run.log", b"log\n");
        write(root, ".git/HEAD", b"ref: refs/heads/main\n");
        write(root, ".operator-rs.lock", b"");
        let files = read(root).unwrap();
        assert_eq!(
            files.keys().collect::<Vec<_>>(),
            [
                ".github/workflows/test.yml",
                ".gitignore",
                "PROJECT",
                "src/main.rs"
            ]
        );
    }

    /// Without a .gitignore the Makefile's outputs are still left out; a binary file that is the
    /// project's is refused with what to do.
    #[test]
    fn binary_project_files_are_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "bin/manager", &[0xff, 0]);
        write(
            dir.path(),
            "config/logo.png",
            &[0x89, b'P', b'N', b'G', 0xff],
        );
        let err = read(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("config/logo.png") && err.contains(".gitignore"),
            "{err}"
        );
        assert!(is_build_output("bin/manager") && is_build_output("target"));
        assert!(!is_build_output("binder.rs") && !is_build_output("dist/chart/Chart.yaml"));
    }
}
