//! The operator-rs binaries of `alpha update`: one per release, either the one the user names
//! (`--from-binary`), this one, or one `cargo install` builds from crates.io in a scratch folder.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, Result, bail};

/// The version of this operator-rs.
pub const THIS: &str = env!("CARGO_PKG_VERSION");

/// An operator-rs binary, and the scratch folder it was installed in (removed when dropped).
pub struct Binary {
    pub path: PathBuf,
    _scratch: Option<tempfile::TempDir>,
}

impl Binary {
    /// A binary the user named, checked to be operator-rs `version`.
    pub fn given(path: PathBuf, version: &str) -> Result<Self> {
        check_version(&path, version)?;
        Ok(Self {
            path,
            _scratch: None,
        })
    }

    /// This operator-rs.
    pub fn this() -> Result<Self> {
        Ok(Self {
            path: super::this_binary()?,
            _scratch: None,
        })
    }

    /// operator-rs `version`, built by `cargo install --locked` from crates.io into a scratch
    /// folder; `otherwise` is what to do when that fails (it ends the one-line error).
    pub fn install(version: &str, otherwise: &str) -> Result<Self> {
        let scratch = tempfile::tempdir().context("creating a folder for cargo install")?;
        println!("$ cargo install --locked operator-rs --version {version}");
        let installed = Command::new("cargo")
            .args(["install", "--locked", "--quiet", "operator-rs", "--version"])
            .arg(format!("={version}"))
            .arg("--root")
            .arg(scratch.path())
            .output();
        let failed = match &installed {
            Ok(output) if output.status.success() => None,
            Ok(output) => Some(
                String::from_utf8_lossy(&output.stderr)
                    .lines()
                    .map(str::trim)
                    .find(|line| line.starts_with("error"))
                    .unwrap_or("cargo install failed")
                    .to_string(),
            ),
            Err(err) => Some(format!("cargo: {err}")),
        };
        if let Some(why) = failed {
            bail!(
                "operator-rs {version} could not be installed from crates.io ({why}): {otherwise}"
            );
        }
        let path = scratch.path().join("bin/operator-rs");
        check_version(&path, version)?;
        Ok(Self {
            path,
            _scratch: Some(scratch),
        })
    }
}

/// Checks that `binary` is operator-rs `version` (`operator-rs version` prints it first).
pub fn check_version(binary: &Path, version: &str) -> Result<()> {
    let output = Command::new(binary)
        .arg("version")
        .output()
        .with_context(|| format!("running {} version", binary.display()))?;
    let printed = String::from_utf8_lossy(&output.stdout);
    let found = printed.split_whitespace().nth(1).unwrap_or_default();
    if !output.status.success() || !printed.starts_with("operator-rs ") {
        bail!("{} is not an operator-rs binary", binary.display());
    }
    if found != version {
        bail!(
            "{} is operator-rs {found}, but the project was made by operator-rs {version}: pass \
             that release's binary (or --from-version {found} if PROJECT's cliVersion is wrong)",
            binary.display()
        );
    }
    Ok(())
}
