//! Where `generate bundle` reads the manifests from, with operator-sdk's choices: stdin when it
//! is a pipe that gives something (`kustomize build config/manifests | … generate bundle`), a folder of cluster-ready
//! manifests (`--input-dir`, or `--deploy-dir` with `--crds-dir`), and operator-rs's own: a file
//! (`--input FILE`, `--input -` for stdin) or, with none of these, `kubectl kustomize` of the
//! kustomize folder.

use std::io::Read as _;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, Result, bail};
use serde_yaml::Value;

use crate::cli::GenerateBundleArgs;
use crate::olm::yaml;

/// The source of the manifests.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Input {
    Stdin,
    /// What a pipe on stdin gave, when it gave something.
    Piped(String),
    File(PathBuf),
    /// Every document of every file under `deploy`; with `crds`, the CRDs are that folder's.
    Folders {
        deploy: PathBuf,
        crds: Option<PathBuf>,
    },
    /// `kubectl kustomize <folder>`.
    Kustomize(PathBuf),
}

impl Input {
    pub fn of(args: &GenerateBundleArgs, dir: &Path) -> Result<Self> {
        Ok(match (&args.input, &args.input_dir, &args.deploy_dir) {
            (Some(path), _, _) if path == Path::new("-") => Input::Stdin,
            (Some(path), _, _) => Input::File(path.clone()),
            (None, Some(folder), _) => Input::Folders {
                deploy: existing_folder(dir, folder, "--input-dir")?,
                crds: None,
            },
            (None, None, Some(folder)) => Input::Folders {
                deploy: existing_folder(dir, folder, "--deploy-dir")?,
                crds: args
                    .crds_dir
                    .as_deref()
                    .map(|crds| existing_folder(dir, crds, "--crds-dir"))
                    .transpose()?,
            },
            // A pipe that gives nothing (a CI runner's stdin) is no input.
            (None, None, None) => match piped_stdin()? {
                Some(text) => Input::Piped(text),
                None => Input::Kustomize(args.kustomize_dir.clone()),
            },
        })
    }

    /// The objects, in the order read.
    pub fn objects(&self, dir: &Path) -> Result<Vec<Value>> {
        match self {
            Input::Stdin => {
                let mut text = String::new();
                std::io::stdin()
                    .read_to_string(&mut text)
                    .context("reading the manifests from stdin")?;
                yaml::objects(&text, "stdin")
            }
            Input::Piped(text) => yaml::objects(text, "stdin"),
            Input::File(path) => {
                let text = std::fs::read_to_string(dir.join(path))
                    .with_context(|| format!("--input {}", path.display()))?;
                yaml::objects(&text, &path.display().to_string())
            }
            Input::Folders { deploy, crds } => {
                let mut objects = folder_objects(deploy)?;
                if let Some(crds) = crds {
                    // operator-sdk: the CRDs of --crds-dir stand in for --deploy-dir's.
                    objects.retain(|o| !is_crd(o));
                    objects.extend(folder_objects(crds)?.into_iter().filter(is_crd));
                }
                Ok(objects)
            }
            Input::Kustomize(folder) => {
                let text = kustomize(dir, folder)?;
                yaml::objects(&text, &format!("kubectl kustomize {}", folder.display()))
            }
        }
    }
}

fn is_crd(object: &Value) -> bool {
    object["kind"].as_str() == Some("CustomResourceDefinition")
}

/// The documents of every file under `folder` (sorted by path) that are Kubernetes objects:
/// documents without `apiVersion` and `kind` are skipped, as operator-sdk skips them.
fn folder_objects(folder: &Path) -> Result<Vec<Value>> {
    let mut objects = Vec::new();
    for entry in walkdir::WalkDir::new(folder).sort_by_file_name() {
        let entry = entry.with_context(|| format!("reading {}", folder.display()))?;
        if !entry.file_type().is_file() {
            continue;
        }
        let path = entry.path();
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading {} (manifests are YAML text)", path.display()))?;
        objects.extend(
            yaml::objects(&text, &path.display().to_string())?
                .into_iter()
                .filter(|o| o.get("apiVersion").is_some() && o.get("kind").is_some()),
        );
    }
    Ok(objects)
}

fn existing_folder(dir: &Path, folder: &Path, flag: &str) -> Result<PathBuf> {
    let full = dir.join(folder);
    if !full.is_dir() {
        bail!("{flag} {}: no such folder", folder.display());
    }
    Ok(full)
}

/// What stdin gives when it is a pipe (operator-sdk's sign that the manifests come from it),
/// if it gives more than white space.
fn piped_stdin() -> Result<Option<String>> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if !std::fs::metadata("/dev/stdin").is_ok_and(|m| m.file_type().is_fifo()) {
            return Ok(None);
        }
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("reading the manifests from stdin")?;
        Ok((!text.trim().is_empty()).then_some(text))
    }
    #[cfg(not(unix))]
    {
        Ok(None)
    }
}

/// `kubectl kustomize <folder>` ($KUBECTL for another kubectl), as operator-sdk's Makefile runs
/// kustomize; its errors are the command's.
fn kustomize(dir: &Path, folder: &Path) -> Result<String> {
    let shown = folder.display();
    if !dir.join(folder).join("kustomization.yaml").is_file() {
        bail!(
            "{shown}/kustomization.yaml does not exist: run `operator-rs generate kustomize manifests` first"
        );
    }
    let kubectl = std::env::var("KUBECTL").unwrap_or_else(|_| "kubectl".into());
    let output = Command::new(&kubectl)
        .arg("kustomize")
        .arg(folder)
        .current_dir(dir)
        .output()
        .with_context(|| format!("running {kubectl} kustomize {shown} (is kubectl installed?)"))?;
    if !output.status.success() {
        bail!(
            "{kubectl} kustomize {shown} failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    String::from_utf8(output.stdout).context("kubectl kustomize wrote something that is not UTF-8")
}

/// `path` (given to `flag`) as a folder of the project: relative, `/`-separated, no `..`; an
/// absolute path inside the project is made relative. bundle.Dockerfile, built in the project,
/// copies the bundle from there.
pub(super) fn inside(project: &Path, path: &Path, flag: &str) -> Result<String> {
    let relative = if path.is_absolute() {
        let root = project
            .canonicalize()
            .unwrap_or_else(|_| project.to_path_buf());
        let parent = path.parent().and_then(|p| p.canonicalize().ok());
        let full = match (parent, path.file_name()) {
            (Some(parent), Some(name)) => parent.join(name),
            _ => path.to_path_buf(),
        };
        full.strip_prefix(&root).map(Path::to_path_buf).ok()
    } else {
        Some(path.to_path_buf())
    };
    let parts: Option<Vec<String>> = relative.and_then(|p| {
        p.components()
            .filter(|c| *c != Component::CurDir)
            .map(|c| match c {
                Component::Normal(part) => part.to_str().map(str::to_string),
                _ => None,
            })
            .collect()
    });
    match parts {
        Some(parts) if !parts.is_empty() => Ok(parts.join("/")),
        _ => bail!(
            "{flag} {}: the bundle's folder must be inside the project, where bundle.Dockerfile \
             copies it from (use --stdout for the manifests elsewhere)",
            path.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_folders_are_folders_of_the_project() {
        let project = tempfile::tempdir().unwrap();
        let root = project.path();
        assert_eq!(
            inside(root, Path::new("bundle"), "--output-dir").unwrap(),
            "bundle"
        );
        assert_eq!(
            inside(root, Path::new("./out/b/"), "--output-dir").unwrap(),
            "out/b"
        );
        assert_eq!(
            inside(root, &root.join("out/b"), "--output-dir").unwrap(),
            "out/b"
        );
        for outside in ["../x", "/tmp/elsewhere", ".", ""] {
            let err = inside(root, Path::new(outside), "--output-dir").unwrap_err();
            assert!(
                err.to_string().contains("inside the project"),
                "{outside}: {err}"
            );
        }
    }

    #[test]
    fn folders_give_their_objects_and_crds_dir_stands_in_for_the_crds() {
        let tmp = tempfile::tempdir().unwrap();
        let deploy = tmp.path().join("deploy");
        std::fs::create_dir_all(deploy.join("crds")).unwrap();
        std::fs::write(
            deploy.join("a.yaml"),
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\n---\nnot: an object\n",
        )
        .unwrap();
        let crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: ";
        std::fs::write(deploy.join("crds/old.yaml"), format!("{crd}old}}\n")).unwrap();
        let crds = tmp.path().join("crds");
        std::fs::create_dir_all(&crds).unwrap();
        std::fs::write(crds.join("new.yml"), format!("{crd}new}}\n")).unwrap();
        let names = |input: Input| -> Vec<String> {
            input
                .objects(tmp.path())
                .unwrap()
                .iter()
                .map(|o| o["metadata"]["name"].as_str().unwrap().to_string())
                .collect()
        };
        let deploy_only = Input::Folders {
            deploy: deploy.clone(),
            crds: None,
        };
        assert_eq!(names(deploy_only), ["a", "old"]);
        let with_crds = Input::Folders {
            deploy,
            crds: Some(crds),
        };
        assert_eq!(names(with_crds), ["a", "new"]);
    }
}
