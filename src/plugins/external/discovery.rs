//! Where external plugins are found, exactly as kubebuilder finds them (its `pkg/cli/options.go`):
//! under `$EXTERNAL_PLUGINS_PATH` if set (it must exist), else `$XDG_CONFIG_HOME/kubebuilder/plugins`,
//! else `~/.config/kubebuilder/plugins` on Linux and `~/Library/Application
//! Support/kubebuilder/plugins` on macOS; a plugin is `<root>/<name>/<version>/<name>` (or a file
//! whose name up to its first dot is `<name>`: `sample.sh`, `sample.py`), executable, and its key
//! is `<name>/<version>`. A plugin written for kubebuilder is found where kubebuilder finds it.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

/// An external plugin found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub name: String,
    /// Its version as kubebuilder writes it: `v1`, `v2-alpha`.
    pub version: String,
    pub path: PathBuf,
}

impl Found {
    /// `<name>/<version>`, what `--plugins` names it by.
    pub fn key(&self) -> String {
        format!("{}/{}", self.name, self.version)
    }
}

/// The folder of the plugins: kubebuilder's, for the host operator-rs runs on.
pub fn root() -> Result<PathBuf> {
    root_from(
        |name| std::env::var_os(name).filter(|v| !v.is_empty()),
        std::env::consts::OS,
    )
}

fn root_from(var: impl Fn(&str) -> Option<std::ffi::OsString>, os: &str) -> Result<PathBuf> {
    if !matches!(os, "linux" | "macos") {
        bail!(
            "external plugins: host not supported: {os} (kubebuilder finds them on Linux and macOS)"
        );
    }
    if let Some(path) = var("EXTERNAL_PLUGINS_PATH") {
        let path = PathBuf::from(path);
        if !path.exists() {
            bail!(
                "EXTERNAL_PLUGINS_PATH: the specified path {} does not exist",
                path.display()
            );
        }
        return Ok(path);
    }
    let relative = Path::new("kubebuilder").join("plugins");
    if let Some(xdg) = var("XDG_CONFIG_HOME") {
        return Ok(PathBuf::from(xdg).join(relative));
    }
    let Some(home) = var("HOME") else {
        bail!("external plugins: HOME is not set, so the plugins folder is unknown");
    };
    let config = if os == "macos" {
        Path::new("Library").join("Application Support")
    } else {
        PathBuf::from(".config")
    };
    Ok(PathBuf::from(home).join(config).join(relative))
}

/// The plugin `key` names (`<name>/<version>`, or `<name>` when it has one version), if the
/// plugins folder has it; an error for a plugin that is there but broken.
pub fn find(key: &str) -> Result<Option<Found>> {
    let (name, version) = match key.split_once('/') {
        Some((name, version)) => (name, Some(version)),
        None => (key, None),
    };
    // Names and versions are folder names: nothing that could leave the plugins folder.
    let plain = |s: &str| !s.is_empty() && s != "." && s != ".." && !s.contains(['/', '\\']);
    if !plain(name) || !version.is_none_or(plain) {
        return Ok(None);
    }
    let root = root()?;
    let folder = root.join(name);
    if !folder.is_dir() {
        return Ok(None);
    }
    let versions: Vec<String> = match version {
        Some(version) => vec![version.to_string()],
        None => {
            let mut all: Vec<String> = std::fs::read_dir(&folder)?
                .filter_map(|e| e.ok())
                .filter(|e| e.path().is_dir())
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .collect();
            all.sort();
            if all.len() > 1 {
                bail!(
                    "--plugins {name}: the external plugin has versions {}; name one (--plugins {name}/{})",
                    all.join(", "),
                    all[0]
                );
            }
            all
        }
    };
    let Some(version) = versions.first() else {
        return Ok(None);
    };
    if !folder.join(version).is_dir() {
        return Ok(None);
    }
    check_version(version)?;
    let path = executable(&folder.join(version), name)?;
    Ok(path.map(|path| Found {
        name: name.to_string(),
        version: version.clone(),
        path,
    }))
}

/// kubebuilder's plugin versions: `v` and a number, optionally `-alpha` or `-beta`.
fn check_version(version: &str) -> Result<()> {
    let rest = version.strip_prefix('v').unwrap_or(version);
    let (number, stage) = rest.split_once('-').unwrap_or((rest, ""));
    if number.is_empty()
        || !number.chars().all(|c| c.is_ascii_digit())
        || !matches!(stage, "" | "alpha" | "beta")
    {
        bail!(
            "external plugin version {version:?} is not a kubebuilder plugin version (v1, v2-alpha, v3-beta)"
        );
    }
    Ok(())
}

/// The file of plugin `name` in its version's folder: named `name`, or `name.<anything>`; it
/// must be executable, as kubebuilder requires.
fn executable(folder: &Path, name: &str) -> Result<Option<PathBuf>> {
    let mut entries: Vec<_> = std::fs::read_dir(folder)?.filter_map(|e| e.ok()).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let file = entry.file_name();
        let Some(file) = file.to_str() else { continue };
        if file != name && file.split('.').next() != Some(name) {
            continue;
        }
        let path = entry.path();
        if !is_executable(&path) {
            bail!(
                "external plugin {file:?} found in {} is not an executable (chmod +x it)",
                folder.display()
            );
        }
        return Ok(Some(path));
    }
    Ok(None)
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn the_root_is_kubebuilders() {
        let tmp = tempfile::tempdir().unwrap();
        let custom = tmp.path().display().to_string();
        assert_eq!(
            root_from(env(&[("HOME", "/home/u")]), "linux").unwrap(),
            Path::new("/home/u/.config/kubebuilder/plugins")
        );
        assert_eq!(
            root_from(env(&[("HOME", "/Users/u")]), "macos").unwrap(),
            Path::new("/Users/u/Library/Application Support/kubebuilder/plugins")
        );
        assert_eq!(
            root_from(
                env(&[("HOME", "/home/u"), ("XDG_CONFIG_HOME", "/xdg")]),
                "macos"
            )
            .unwrap(),
            Path::new("/xdg/kubebuilder/plugins")
        );
        assert_eq!(
            root_from(
                env(&[
                    ("HOME", "/h"),
                    ("XDG_CONFIG_HOME", "/xdg"),
                    ("EXTERNAL_PLUGINS_PATH", &custom)
                ]),
                "linux"
            )
            .unwrap(),
            tmp.path()
        );
        let err = root_from(
            env(&[("EXTERNAL_PLUGINS_PATH", "/no/such/folder")]),
            "linux",
        )
        .unwrap_err();
        assert!(err.to_string().contains("does not exist"), "{err}");
        assert!(root_from(env(&[("HOME", "/h")]), "windows").is_err());
    }

    #[test]
    fn versions_are_kubebuilders() {
        for good in ["v1", "v2-alpha", "v10-beta"] {
            check_version(good).unwrap();
        }
        for bad in ["v", "vx", "v1-gamma", "latest"] {
            assert!(check_version(bad).is_err(), "{bad}");
        }
    }
}
