//! `operator-rs generate bundle`: an OLM bundle from the project's manifests, with
//! operator-sdk's flags and their rules (`--manifests`, `--metadata`, `--output-dir`,
//! `--stdout`, `--overwrite`, the input folders); the YAML work is [`crate::olm::bundle`]'s, the
//! input's [`super::bundle_input`]'s.

use std::path::Path;

use anyhow::{Result, bail};
use serde_yaml::Value;

use super::bundle_input::{self, Input};
use crate::cli::GenerateBundleArgs;
use crate::olm::bundle::{self, BUNDLE_DIR, DOCKERFILE, File};
use crate::olm::metadata::Channels;
use crate::olm::yaml;
use crate::project::{self, Project};
use crate::scaffold::Plan;

/// The parts of the bundle one run writes, and where.
struct Parts {
    manifests: bool,
    metadata: bool,
    /// The bundle's folder, relative to the project.
    dir: String,
}

impl Parts {
    /// operator-sdk's rules: both parts unless one is named; `--stdout` prints the manifests
    /// (the metadata, if asked for, still goes to the folder), and takes no `--output-dir`.
    fn of(args: &GenerateBundleArgs, project_dir: &Path) -> Result<Self> {
        let (manifests, metadata) = match (args.manifests, args.metadata) {
            (None, None) => (true, true),
            (manifests, metadata) => (manifests.unwrap_or(false), metadata.unwrap_or(false)),
        };
        if args.stdout && args.output_dir.is_some() {
            bail!("--output-dir cannot be set if writing to stdout");
        }
        let dir = match &args.output_dir {
            Some(dir) => bundle_input::inside(project_dir, dir, "--output-dir")?,
            None => BUNDLE_DIR.to_string(),
        };
        Ok(Self {
            manifests,
            metadata,
            dir,
        })
    }
}

pub fn run(args: &GenerateBundleArgs, dir: &Path) -> Result<()> {
    let project = project_or_package(args, dir)?;
    let parts = Parts::of(args, dir)?;
    let options = options(args, &project, &parts.dir)?;
    let quiet = args.quiet || args.stdout;
    let mut plan = Plan::new(dir, false);
    let mut scorecard = dir
        .join(&parts.dir)
        .join("tests/scorecard/config.yaml")
        .is_file();
    if parts.manifests {
        let input = Input::of(args, dir)?;
        let mut objects = input.objects(dir)?;
        if !objects.iter().any(is_csv) {
            objects.push(base_csv(args, dir, &project, &objects, &options)?);
        }
        let generated = bundle::generate(&objects, &options)?;
        scorecard = generated
            .manifests
            .iter()
            .any(|f| f.path.ends_with("/scorecard/config.yaml"));
        if args.stdout {
            print!("{}", as_documents(&generated.manifests));
        } else {
            plan_manifests(&mut plan, &parts.dir, generated.manifests)?;
        }
    }
    if parts.metadata {
        let kept = !args.overwrite && metadata_exists(args, dir, &parts.dir);
        if !kept {
            for file in bundle::metadata(&options.channels, &options.builder, &parts.dir, scorecard)
            {
                plan.write(&file.path, file.contents)?;
            }
        } else if !quiet {
            println!("kept the bundle's metadata as it is (--overwrite=false)");
        }
    }
    super::super::finish(&plan, args.common.dry_run)?;
    if !quiet && !args.common.dry_run {
        let name = match &options.version {
            Some(version) => format!("{}.v{version}", options.channels.package),
            None => options.channels.package.clone(),
        };
        println!(
            "wrote the bundle of {name} to {}/ and {DOCKERFILE}; check it with: operator-rs bundle validate ./{}",
            parts.dir, parts.dir
        );
    }
    Ok(())
}

/// The project, or outside one (no PROJECT) a bare one named `--package`, as operator-sdk makes
/// bundles of manifests that no project of its own wrote.
fn project_or_package(args: &GenerateBundleArgs, dir: &Path) -> Result<Project> {
    if dir.join(project::FILE).exists() {
        return crate::commands::load_project(dir);
    }
    match &args.package {
        Some(package) => Ok(Project {
            project_name: package.clone(),
            ..Project::default()
        }),
        None => bail!(
            "{} does not exist here: run generate bundle in an operator-rs project, or give the \
             bundle's --package",
            project::FILE
        ),
    }
}

pub fn options(args: &GenerateBundleArgs, project: &Project, dir: &str) -> Result<bundle::Options> {
    let version = args
        .version
        .as_deref()
        .map(|version| {
            semver::Version::parse(version).map_err(|err| {
                anyhow::anyhow!(
                    "--version {version:?} is not a semantic version X.Y.Z (without a leading v): {err}"
                )
            })
        })
        .transpose()?;
    let package = args.package.as_deref().unwrap_or(&project.project_name);
    let channels: Vec<String> = args.channels.iter().map(|c| c.trim().to_string()).collect();
    Ok(bundle::Options {
        version,
        channels: Channels::new(package, channels, args.default_channel.clone())?,
        dir: dir.to_string(),
        replaces: args.replaces.clone(),
        skip_range: args.skip_range.clone(),
        extra_service_accounts: args
            .extra_service_accounts
            .iter()
            .map(|a| a.trim().to_string())
            .filter(|a| !a.is_empty())
            .collect(),
        use_image_digests: args.use_image_digests,
        builder: super::builder(),
    })
}

fn is_csv(object: &Value) -> bool {
    object["kind"].as_str() == Some("ClusterServiceVersion")
}

/// The CSV base when the input has none (manifests from a folder): the one in --kustomize-dir,
/// else a new one, as `generate kustomize manifests` would write it for these CRDs.
fn base_csv(
    args: &GenerateBundleArgs,
    dir: &Path,
    project: &Project,
    objects: &[Value],
    options: &bundle::Options,
) -> Result<Value> {
    let package = &options.channels.package;
    let path = args
        .kustomize_dir
        .join("bases")
        .join(format!("{package}.clusterserviceversion.yaml"));
    let full = dir.join(&path);
    if full.is_file() {
        let text = std::fs::read_to_string(&full)?;
        let mut found = yaml::objects(&text, &path.display().to_string())?;
        if let Some(base) = found.drain(..).find(is_csv) {
            return Ok(base);
        }
        bail!("{} holds no ClusterServiceVersion", path.display());
    }
    let crds: Vec<Value> = objects
        .iter()
        .filter(|o| o["kind"].as_str() == Some("CustomResourceDefinition"))
        .cloned()
        .collect();
    let named = Project {
        project_name: package.clone(),
        ..project.clone()
    };
    let base = crate::olm::base::update(
        &super::olm_project(&named),
        None,
        &crds,
        &Default::default(),
    )?;
    Ok(serde_yaml::from_str(&base.to_yaml())?)
}

/// The manifests written, and the files of an earlier bundle in the same parts that this one has
/// not removed.
fn plan_manifests(plan: &mut Plan, bundle_dir: &str, files: Vec<File>) -> Result<()> {
    for stale in existing_files(plan.root(), bundle_dir, &["manifests", "tests/scorecard"])? {
        if !files.iter().any(|f| f.path == stale) {
            plan.delete(&stale)?;
        }
    }
    for file in files {
        plan.write(&file.path, file.contents)?;
    }
    Ok(())
}

/// The files right under `parts` of the bundle folder.
fn existing_files(root: &Path, bundle_dir: &str, parts: &[&str]) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for part in parts {
        let Ok(entries) = std::fs::read_dir(root.join(bundle_dir).join(part)) else {
            continue;
        };
        for entry in entries {
            let entry = entry?;
            if entry.file_type()?.is_file() {
                out.push(format!(
                    "{bundle_dir}/{part}/{}",
                    entry.file_name().to_string_lossy()
                ));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Whether the bundle has metadata already: in --input-dir when given (operator-sdk looks
/// there), else in the output folder.
fn metadata_exists(args: &GenerateBundleArgs, dir: &Path, bundle_dir: &str) -> bool {
    let root = match &args.input_dir {
        Some(input) => dir.join(input),
        None => dir.join(bundle_dir),
    };
    root.join("metadata/annotations.yaml").is_file()
}

/// `--stdout`: the manifests as YAML documents, the CSV first.
fn as_documents(files: &[File]) -> String {
    files
        .iter()
        .filter(|f| !f.path.ends_with("/scorecard/config.yaml"))
        .map(|f| format!("---\n{}", f.contents))
        .collect()
}
