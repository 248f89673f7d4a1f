//! `operator-rs generate kustomize manifests` and `operator-rs generate bundle`: OLM packaging,
//! planned like every other command (all or nothing, `--dry-run`). The YAML work is in
//! [`crate::olm`]; this module reads the project, asks, and plans the files.

use std::io::{IsTerminal as _, Read as _, Write as _};
use std::path::Path;
use std::process::Command;

use anyhow::{Context as _, Result, bail};
use base64::Engine as _;
use serde_yaml::Value;

use crate::cli::{GenerateBundleArgs, KustomizeManifestsArgs};
use crate::olm::base::{self, Fields};
use crate::olm::bundle::{self, BUNDLE_DIR, DOCKERFILE};
use crate::olm::csv::{Icon, InstallModeType, Maintainer, Provider};
use crate::olm::files::{self, Root};
use crate::olm::metadata::Channels;
use crate::olm::yaml;
use crate::project::Project;
use crate::scaffold::table::DirTable;
use crate::scaffold::{Owner, Plan};
use crate::vars::ProjectVars;

/// The folder of the CSV base and its kustomization.
pub const MANIFESTS_DIR: &str = "config/manifests";
const CRD_DIR: &str = "config/crd/bases";
const SAMPLES_KUSTOMIZATION: &str = "config/samples/kustomization.yaml";

/// The scorecard-test image of operator-sdk's release that the scorecard configuration runs.
const SCORECARD_VERSION: &str = "v1.42.0";

/// The kustomizations of the CSV base and of the scorecard tests: `templates/olm/`.
pub(crate) static OLM_FILES: DirTable<OlmVars> = DirTable::new("olm");

/// The variables of [`OLM_FILES`].
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct OlmVars {
    #[serde(flatten)]
    pub project: ProjectVars,
    /// The project has samples (`config/samples/`), which the CSV's kustomization includes.
    pub samples: bool,
    /// The scorecard-test image's version.
    pub scorecard_version: &'static str,
}

/// Icon files by extension, with the media type OLM wants for them.
const ICON_TYPES: &[(&str, &str)] = &[
    ("png", "image/png"),
    ("svg", "image/svg+xml"),
    ("jpg", "image/jpeg"),
    ("jpeg", "image/jpeg"),
    ("gif", "image/gif"),
];

pub fn base_path(project: &Project) -> String {
    format!(
        "{MANIFESTS_DIR}/bases/{}.clusterserviceversion.yaml",
        project.project_name
    )
}

pub fn kustomize_manifests(args: &KustomizeManifestsArgs, dir: &Path) -> Result<()> {
    let project = crate::commands::load_project(dir)?;
    let mut fields = fields(args)?;
    let base = base_path(&project);
    let exists = dir.join(&base).is_file();
    let ask = args
        .interactive
        .unwrap_or(!exists && std::io::stdin().is_terminal());
    if ask {
        ask_missing(&project, &mut fields)?;
    }
    let plan = plan_kustomize_manifests(&project, dir, &fields)?;
    if !args.quiet && !args.common.dry_run {
        for change in plan.changes() {
            println!("{} {}", verb(change.action), change.path);
        }
    }
    super::finish(&plan, args.common.dry_run)
}

fn verb(action: crate::scaffold::Action) -> &'static str {
    match action {
        crate::scaffold::Action::Create => "created",
        crate::scaffold::Action::Delete => "deleted",
        _ => "updated",
    }
}

/// Everything `generate kustomize manifests` writes: the CSV base (read back and updated when it
/// exists), and the kustomizations of config/manifests and config/scorecard when missing.
pub fn plan_kustomize_manifests(project: &Project, dir: &Path, fields: &Fields) -> Result<Plan> {
    let crds = read_crds(project, dir)?;
    let mut plan = Plan::new(dir, false);
    let path = base_path(project);
    let existing = plan.read(&path)?;
    let csv =
        base::update(project, existing.as_deref(), &crds, fields).with_context(|| path.clone())?;
    plan.write(&path, csv.to_yaml())?;

    let samples = plan.read(SAMPLES_KUSTOMIZATION)?.is_some();
    let vars = OlmVars {
        project: ProjectVars::new(project, ""),
        samples,
        scorecard_version: SCORECARD_VERSION,
    };
    for file in OLM_FILES.render(&vars)? {
        plan.create(&file.path, file.contents, Owner::Shared)?;
    }
    // A kustomization written before the project had samples gets them once it has.
    let kustomization = format!("{MANIFESTS_DIR}/kustomization.yaml");
    if samples {
        plan.edit(&kustomization, |text| {
            Ok(if text.lines().any(|l| l.trim() == "- ../samples") {
                text.to_string()
            } else {
                text.replacen("- ../default\n", "- ../default\n- ../samples\n", 1)
            })
        })?;
    }
    Ok(plan)
}

/// The CRDs `make manifests` rendered, sorted by file name.
fn read_crds(project: &Project, dir: &Path) -> Result<Vec<Value>> {
    let mut paths: Vec<_> = match std::fs::read_dir(dir.join(CRD_DIR)) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .collect(),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(err) => return Err(err).context(format!("reading {CRD_DIR}")),
    };
    paths.sort();
    let has_kinds = project.resources.iter().any(|r| r.api.is_some());
    if paths.is_empty() && has_kinds {
        bail!("{CRD_DIR} holds no CRDs: run `make manifests` first");
    }
    // Only regular files, inside the project: a pipe named *.yaml there must not hang this.
    let root = Root::new(dir, "project");
    let mut crds = Vec::new();
    for path in paths {
        let name = format!(
            "{CRD_DIR}/{}",
            path.file_name().unwrap_or_default().to_string_lossy()
        );
        let text = root
            .read_text(&path)
            .map_err(|err| anyhow::anyhow!("{name}: {err}"))?;
        crds.extend(
            yaml::objects(&text, &name)?
                .into_iter()
                .filter(|o| o["kind"].as_str() == Some("CustomResourceDefinition")),
        );
    }
    Ok(crds)
}

/// The flags, checked: nothing is planned from a bad value.
fn fields(args: &KustomizeManifestsArgs) -> Result<Fields> {
    let provider = match (&args.provider, &args.provider_url) {
        (None, None) => None,
        (name, url) => Some(Provider {
            name: name.clone().unwrap_or_default(),
            url: url.clone().unwrap_or_default(),
        }),
    };
    if let Some(capabilities) = &args.capabilities {
        base::check_capabilities(capabilities)?;
    }
    let install_modes = args
        .install_modes
        .as_ref()
        .map(|modes| {
            modes
                .iter()
                .map(|m| {
                    InstallModeType::parse(m.trim()).with_context(|| {
                        format!(
                            "--install-modes {m:?} is not an install mode: OwnNamespace, SingleNamespace, MultiNamespace or AllNamespaces"
                        )
                    })
                })
                .collect::<Result<Vec<_>>>()
        })
        .transpose()?;
    let maintainers = args
        .maintainers
        .as_ref()
        .map(|list| {
            list.iter()
                .map(|m| maintainer(m))
                .collect::<Result<Vec<_>>>()
        })
        .transpose()?;
    let keywords = args.keywords.as_ref().map(|list| {
        list.iter()
            .map(|k| k.trim().to_string())
            .filter(|k| !k.is_empty())
            .collect()
    });
    let icon = args.icon.as_deref().map(icon).transpose()?;
    for (flag, value) in [
        ("--display-name", &args.display_name),
        ("--description", &args.description),
    ] {
        if value.as_ref().is_some_and(|v| v.trim().is_empty()) {
            bail!("{flag} is empty");
        }
    }
    Ok(Fields {
        display_name: args.display_name.clone(),
        description: args.description.clone(),
        provider,
        maintainers,
        keywords,
        icon,
        capabilities: args.capabilities.clone(),
        install_modes,
    })
}

/// `Jane Doe <jane@example.com>` or `Jane Doe`.
fn maintainer(text: &str) -> Result<Maintainer> {
    let text = text.trim();
    let (name, email) = match text.split_once('<') {
        Some((name, rest)) => {
            let Some(email) = rest.strip_suffix('>') else {
                bail!("--maintainers {text:?}: write a maintainer as \"Name <email>\"");
            };
            (name.trim(), email.trim())
        }
        None => (text, ""),
    };
    if name.is_empty() || (!email.is_empty() && !email.contains('@')) {
        bail!("--maintainers {text:?}: write a maintainer as \"Name <email>\"");
    }
    Ok(Maintainer {
        name: name.to_string(),
        email: email.to_string(),
    })
}

fn icon(path: &Path) -> Result<Icon> {
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    let Some((_, mediatype)) = ICON_TYPES.iter().find(|(e, _)| *e == extension) else {
        bail!(
            "--icon {}: not an image OLM shows (a .png, .svg, .jpg or .gif file)",
            path.display()
        );
    };
    let data =
        files::read_named(path).map_err(|e| anyhow::anyhow!("--icon {}: {e}", path.display()))?;
    Ok(Icon {
        base64data: base64::engine::general_purpose::STANDARD.encode(data),
        mediatype: mediatype.to_string(),
    })
}

/// Asks for the catalog fields no flag gave; an empty answer keeps the default shown.
fn ask_missing(project: &Project, fields: &mut Fields) -> Result<()> {
    let display = base::display_name(&project.project_name);
    if fields.display_name.is_none() {
        fields.display_name = prompt("Display name for the operator", Some(&display))?;
    }
    if fields.description.is_none() {
        fields.description = prompt("Description of the operator", None)?;
    }
    if fields.provider.is_none() {
        fields.provider = prompt("Provider's name for the operator", None)?.map(|name| Provider {
            name,
            url: String::new(),
        });
    }
    if fields.keywords.is_none() {
        fields.keywords = prompt("Comma-separated keywords for the operator", None)?.map(|k| {
            k.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        });
    }
    if fields.maintainers.is_none()
        && let Some(answer) = prompt("Comma-separated maintainers, \"Name <email>\"", None)?
    {
        fields.maintainers = Some(answer.split(',').map(maintainer).collect::<Result<_>>()?);
    }
    Ok(())
}

fn prompt(question: &str, default: Option<&str>) -> Result<Option<String>> {
    match default {
        Some(default) => print!("{question} [{default}]: "),
        None => print!("{question}: "),
    }
    std::io::stdout().flush()?;
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    let answer = answer.trim();
    Ok((!answer.is_empty()).then(|| answer.to_string()))
}

pub fn bundle(args: &GenerateBundleArgs, dir: &Path) -> Result<()> {
    let project = crate::commands::load_project(dir)?;
    let options = bundle_options(args, &project)?;
    let rendered = match args.input.as_deref() {
        Some(path) if path == Path::new("-") => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("reading the rendered manifests from stdin")?;
            (text, "stdin".to_string())
        }
        Some(path) => (
            files::read_named_text(&dir.join(path)).map_err(|err| {
                let pipe = matches!(
                    err,
                    files::Unreadable::Special(files::Special::NamedPipe, _)
                );
                let hint = if pipe {
                    " (give a pipe's output on stdin: --input -)"
                } else {
                    ""
                };
                anyhow::anyhow!("--input {}: {err}{hint}", path.display())
            })?,
            path.display().to_string(),
        ),
        None => (
            render_manifests(dir)?,
            format!("kubectl kustomize {MANIFESTS_DIR}"),
        ),
    };
    let plan = plan_bundle(dir, &rendered.0, &rendered.1, &options)?;
    super::finish(&plan, args.common.dry_run)?;
    if !args.quiet && !args.common.dry_run {
        println!(
            "wrote the bundle of {}.v{} to {BUNDLE_DIR}/ and {DOCKERFILE}; check it with: operator-rs bundle validate ./{BUNDLE_DIR}",
            options.channels.package, options.version
        );
    }
    Ok(())
}

pub fn bundle_options(args: &GenerateBundleArgs, project: &Project) -> Result<bundle::Options> {
    let version = semver::Version::parse(&args.version).map_err(|err| {
        anyhow::anyhow!(
            "--version {:?} is not a semantic version X.Y.Z (without a leading v): {err}",
            args.version
        )
    })?;
    let package = args.package.as_deref().unwrap_or(&project.project_name);
    let channels: Vec<String> = args.channels.iter().map(|c| c.trim().to_string()).collect();
    Ok(bundle::Options {
        version,
        channels: Channels::new(package, channels, args.default_channel.clone())?,
        replaces: args.replaces.clone(),
        skip_range: args.skip_range.clone(),
        extra_service_accounts: args
            .extra_service_accounts
            .iter()
            .map(|a| a.trim().to_string())
            .filter(|a| !a.is_empty())
            .collect(),
        use_image_digests: args.use_image_digests,
    })
}

/// The bundle's files from `rendered` (kustomize's output, named `source` in errors), and the
/// removal of files an earlier bundle had that this one has not.
pub fn plan_bundle(
    dir: &Path,
    rendered: &str,
    source: &str,
    options: &bundle::Options,
) -> Result<Plan> {
    let objects = yaml::objects(rendered, source)?;
    let files = bundle::generate(&objects, options)?;
    let mut plan = Plan::new(dir, false);
    for stale in existing_bundle_files(dir)? {
        if !files.iter().any(|f| f.path == stale) {
            plan.delete(&stale)?;
        }
    }
    for file in files {
        plan.write(&file.path, file.contents)?;
    }
    Ok(plan)
}

/// The files under the parts of bundle/ that `generate bundle` writes.
fn existing_bundle_files(dir: &Path) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for part in ["manifests", "metadata", "tests/scorecard"] {
        let folder = dir.join(BUNDLE_DIR).join(part);
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries {
            let entry = entry?;
            if entry.file_type()?.is_file() {
                out.push(format!(
                    "{BUNDLE_DIR}/{part}/{}",
                    entry.file_name().to_string_lossy()
                ));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// `kubectl kustomize config/manifests` ($KUBECTL for another kubectl), as operator-sdk runs
/// kustomize; its errors are the command's.
fn render_manifests(dir: &Path) -> Result<String> {
    if !dir.join(MANIFESTS_DIR).join("kustomization.yaml").is_file() {
        bail!(
            "{MANIFESTS_DIR}/kustomization.yaml does not exist: run `operator-rs generate kustomize manifests` first"
        );
    }
    let kubectl = std::env::var("KUBECTL").unwrap_or_else(|_| "kubectl".into());
    let output = Command::new(&kubectl)
        .args(["kustomize", MANIFESTS_DIR])
        .current_dir(dir)
        .output()
        .with_context(|| {
            format!("running {kubectl} kustomize {MANIFESTS_DIR} (is kubectl installed?)")
        })?;
    if !output.status.success() {
        bail!(
            "{kubectl} kustomize {MANIFESTS_DIR} failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    String::from_utf8(output.stdout).context("kubectl kustomize wrote something that is not UTF-8")
}
