//! Formatting of rendered Rust files with rustfmt, as kubebuilder runs goimports on its Go output.
//!
//! Templates are written rustfmt-clean for ordinary names, but a long kind or group name can move
//! a line past rustfmt's width and change its layout, and generated projects must pass
//! `cargo fmt --check` as written. All the files of a command go through one rustfmt process
//! (starting rustfmt costs far more than formatting a file): they are written to a temporary
//! directory, formatted there in place, and read back.
//!
//! When `rustfmt` is not installed the texts are returned as they are (they are valid Rust either
//! way); a text rustfmt cannot parse is returned as it is too, so the user sees the compiler's
//! message rather than ours, and the other texts are formatted all the same.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

/// Each text formatted like `cargo fmt` formats an edition-2024 crate in `project`: with the
/// `rustfmt.toml` that `cargo fmt` would find there, if any. The result has one text per input,
/// in order.
pub fn format_all(project: &Path, texts: Vec<String>) -> Vec<String> {
    if texts.is_empty() {
        return texts;
    }
    match TempDir::new() {
        Some(dir) => try_format_all(&dir.0, project, &texts).unwrap_or(texts),
        None => texts,
    }
}

fn try_format_all(dir: &Path, project: &Path, texts: &[String]) -> Option<Vec<String>> {
    // Flat, numbered names: a text's name cannot matter, as no module is resolved (below).
    let files: Vec<PathBuf> = (0..texts.len())
        .map(|i| dir.join(format!("{i}.rs")))
        .collect();
    for (file, text) in files.iter().zip(texts) {
        std::fs::write(file, text).ok()?;
    }
    // rustfmt formats the files of the out-of-line modules a file declares (`mod x;`) too, and
    // gives up on a file whose modules it cannot find: those of a generated file are elsewhere or
    // not written yet. Stable rustfmt honors `skip_children` on the command line (not in
    // rustfmt.toml); should one refuse it, it runs again without (files declaring modules then
    // stay as they are).
    let skip_children = ["--config", "skip_children=true"];
    let stderr = run_rustfmt(&skip_children, project, &files)?;
    if stderr.contains("skip_children") {
        run_rustfmt(&[], project, &files)?;
    }
    files
        .iter()
        .map(|file| std::fs::read_to_string(file).ok())
        .collect()
}

/// Runs rustfmt on `files` (formatting them in place) with `args`; returns its stderr. A non-zero
/// exit means that some text did not parse (it is left as it was); the others are formatted all
/// the same. None: rustfmt could not be started.
fn run_rustfmt(args: &[&str], project: &Path, files: &[PathBuf]) -> Option<String> {
    let mut rustfmt = Command::new("rustfmt");
    rustfmt.args(["--edition", "2024", "--quiet"]).args(args);
    // rustfmt would look for a configuration next to the temporary files; `cargo fmt` uses the
    // project's.
    if let Some(config) = config_file(project) {
        rustfmt.arg("--config-path").arg(config);
    }
    let output = rustfmt
        .args(files)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&output.stderr).into_owned())
}

/// The `rustfmt.toml` (or `.rustfmt.toml`) rustfmt finds for files in `dir`: in it or above it.
fn config_file(dir: &Path) -> Option<PathBuf> {
    let dir = std::path::absolute(dir).ok()?;
    dir.ancestors()
        .flat_map(|d| [d.join("rustfmt.toml"), d.join(".rustfmt.toml")])
        .find(|f| f.is_file())
}

/// A fresh directory under the system's temporary directory, removed with everything in it when
/// dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Option<Self> {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let base = std::env::temp_dir();
        for _ in 0..100 {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let dir = base.join(format!("operator-rs-fmt-{}-{n}", std::process::id()));
            match std::fs::create_dir(&dir) {
                Ok(()) => return Some(Self(dir)),
                Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(_) => return None,
            }
        }
        None
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MESSY: &str = "fn main( ) {let x=1;}\n";
    const CLEAN: &str = "fn main() {\n    let x = 1;\n}\n";

    fn rustfmt_installed() -> bool {
        Command::new("rustfmt")
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    fn format(texts: &[&str]) -> Vec<String> {
        let project = tempfile::tempdir().unwrap();
        format_all(
            project.path(),
            texts.iter().map(|t| t.to_string()).collect(),
        )
    }

    #[test]
    fn formats_every_text_or_leaves_them_as_they_are() {
        let texts = [
            MESSY,
            "fn main( {",
            "mod captain;\npub mod admiral;\nfn f( ) {let x=1;}\n",
            "",
        ];
        let out = format(&texts);
        assert_eq!(out.len(), texts.len());
        // A text rustfmt cannot parse is left as it is, and does not keep the others from being
        // formatted.
        assert_eq!(out[1], "fn main( {");
        if rustfmt_installed() {
            assert_eq!(out[3], "\n");
            assert_eq!(out[0], CLEAN);
            // Modules declared but not written (yet) do not keep a file from being formatted.
            assert_eq!(
                out[2],
                "pub mod admiral;\nmod captain;\nfn f() {\n    let x = 1;\n}\n"
            );
        } else {
            assert_eq!(out, texts);
        }
    }

    #[test]
    fn nothing_to_format() {
        assert!(format(&[]).is_empty());
    }

    #[test]
    fn the_projects_rustfmt_toml_applies() {
        if !rustfmt_installed() {
            return;
        }
        let project = tempfile::tempdir().unwrap();
        std::fs::write(project.path().join("rustfmt.toml"), "hard_tabs = true\n").unwrap();
        let sub = project.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        let out = format_all(&sub, vec![MESSY.to_string()]);
        assert_eq!(out, ["fn main() {\n\tlet x = 1;\n}\n"]);
    }

    #[test]
    fn the_temporary_directory_is_removed() {
        let dir = TempDir::new().unwrap();
        let path = dir.0.clone();
        std::fs::write(path.join("a.rs"), "").unwrap();
        assert!(path.is_dir());
        drop(dir);
        assert!(!path.exists());
    }
}
