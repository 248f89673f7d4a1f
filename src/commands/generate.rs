//! `operator-rs generate kustomize manifests` and `operator-rs generate bundle` ([`bundle`]):
//! OLM packaging, planned like every other command (all or nothing, `--dry-run`). The YAML work
//! is in [`crate::olm`]; this module reads the project, asks, and plans the files.

use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};

mod bundle;
mod bundle_input;

pub use bundle::run as bundle;

use anyhow::{Context as _, Result, bail};
use base64::Engine as _;
use serde_yaml::Value;

use crate::cli::KustomizeManifestsArgs;
use crate::olm::base::{self, Fields};
use crate::olm::csv::{Icon, InstallModeType, Maintainer, Provider};
use crate::olm::metadata::Builder;
use crate::olm::yaml;
use crate::project::Project;
use crate::scaffold::table::DirTable;
use crate::scaffold::{Owner, Plan};
use crate::vars::ProjectVars;

/// The folder of the CSV base and its kustomization.
pub const MANIFESTS_DIR: &str = "config/manifests";
const CRD_DIR: &str = "config/crd/bases";
const SAMPLES_KUSTOMIZATION: &str = "config/samples/kustomization.yaml";

/// The scorecard-test image of operator-sdk's release that the scorecard configuration runs:
/// operator-sdk's newest (docs/olm.md names it; a test keeps the two the same).
pub(crate) const SCORECARD_VERSION: &str = "v1.42.3";

/// The kustomizations of the CSV base and of the scorecard tests: `templates/olm/`.
pub(crate) static OLM_FILES: DirTable<OlmVars> = DirTable::new("olm");

/// The variables of [`OLM_FILES`].
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct OlmVars {
    #[serde(flatten)]
    pub project: ProjectVars,
    /// The package: its base is the kustomization's resource.
    pub package: String,
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

/// Where `generate kustomize manifests` reads and writes (operator-sdk's `--package`,
/// `--input-dir`, `--output-dir`, `--apis-dir`), as folders of the project.
#[derive(Debug, Clone)]
pub struct Layout {
    /// The package: the base is `bases/<package>.clusterserviceversion.yaml`, the CSV
    /// `<package>.v<version>`.
    pub package: String,
    /// The folder of the existing base.
    pub input: String,
    /// The folder the base and its kustomization are written to.
    pub output: String,
    /// The folder of the CRDs the owned kinds are described from.
    pub crds: String,
}

impl Layout {
    /// The project's defaults: its name, config/manifests, config/crd/bases.
    pub fn of_project(project: &Project) -> Self {
        Self {
            package: project.project_name.clone(),
            input: MANIFESTS_DIR.into(),
            output: MANIFESTS_DIR.into(),
            crds: CRD_DIR.into(),
        }
    }

    fn of(args: &KustomizeManifestsArgs, project: &Project, dir: &Path) -> Result<Self> {
        let folder = |path: &PathBuf, flag: &str| bundle_input::inside(dir, path, flag);
        let package = args
            .package
            .clone()
            .unwrap_or_else(|| project.project_name.clone());
        crate::olm::metadata::check_name("--package", &package)?;
        let output = folder(&args.output_dir, "--output-dir")?;
        Ok(Self {
            package,
            input: match &args.input_dir {
                Some(input) => folder(input, "--input-dir")?,
                None => output.clone(),
            },
            output,
            crds: folder(&args.apis_dir, "--apis-dir")?,
        })
    }

    fn base(&self, folder: &str) -> String {
        format!("{folder}/bases/{}.clusterserviceversion.yaml", self.package)
    }
}

pub fn kustomize_manifests(args: &KustomizeManifestsArgs, dir: &Path) -> Result<()> {
    let project = crate::commands::load_project(dir)?;
    let layout = Layout::of(args, &project, dir)?;
    let mut fields = fields(args)?;
    let exists = dir.join(layout.base(&layout.input)).is_file();
    let ask = args
        .interactive
        .unwrap_or(!exists && std::io::stdin().is_terminal());
    if ask {
        ask_missing(&layout.package, &mut fields)?;
    }
    let plan = plan_kustomize_manifests(&project, dir, &layout, &fields)?;
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

/// What the CSV base takes from PROJECT: the name, and what decides the default install modes.
pub(crate) fn olm_project(project: &Project) -> base::Project {
    let converts = project
        .resources
        .iter()
        .any(|r| r.webhooks.as_ref().is_some_and(|w| w.conversion));
    base::Project {
        name: project.project_name.clone(),
        namespaced: project.namespaced,
        converts,
    }
}

/// operator-rs as the bundles it builds name it (operator-sdk names itself there).
pub(crate) fn builder() -> Builder {
    Builder {
        name: format!("operator-rs-v{}", env!("CARGO_PKG_VERSION")),
        project_layout: crate::project::LAYOUT.to_owned(),
    }
}

/// Everything `generate kustomize manifests` writes: the CSV base (read back from the input
/// folder and updated when it exists there), and the kustomizations of the output folder and
/// config/scorecard when missing.
pub fn plan_kustomize_manifests(
    project: &Project,
    dir: &Path,
    layout: &Layout,
    fields: &Fields,
) -> Result<Plan> {
    let crds = read_crds(project, dir, &layout.crds)?;
    let mut plan = Plan::new(dir, false);
    let input = layout.base(&layout.input);
    let existing = plan.read(&input)?;
    // The base of another package is that package's: its CSV is named after it.
    let packaged = Project {
        project_name: layout.package.clone(),
        ..project.clone()
    };
    let csv = base::update(&olm_project(&packaged), existing.as_deref(), &crds, fields)
        .with_context(|| input.clone())?;
    plan.write(&layout.base(&layout.output), csv.to_yaml())?;

    let samples = plan.read(SAMPLES_KUSTOMIZATION)?.is_some();
    let vars = OlmVars {
        project: ProjectVars::new(project, ""),
        package: layout.package.clone(),
        samples,
        scorecard_version: SCORECARD_VERSION,
    };
    for file in OLM_FILES.render(&vars)? {
        let path = match file.path.strip_prefix(MANIFESTS_DIR) {
            Some(rest) => format!("{}{rest}", layout.output),
            None => file.path,
        };
        plan.create(&path, file.contents, Owner::Shared)?;
    }
    // A kustomization written before the project had samples gets them once it has.
    let kustomization = format!("{}/kustomization.yaml", layout.output);
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

/// The CRDs of folder `crd_dir` (`make manifests` renders them in config/crd/bases), sorted by
/// file name.
fn read_crds(project: &Project, dir: &Path, crd_dir: &str) -> Result<Vec<Value>> {
    let mut paths: Vec<_> = match std::fs::read_dir(dir.join(crd_dir)) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
            .collect(),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(err) => return Err(err).context(format!("reading {crd_dir}")),
    };
    paths.sort();
    let has_kinds = project.resources.iter().any(|r| r.api.is_some());
    if paths.is_empty() && has_kinds {
        if crd_dir == CRD_DIR {
            bail!("{CRD_DIR} holds no CRDs: run `make manifests` first");
        }
        bail!(
            "--apis-dir {crd_dir} holds no CRDs: operator-rs reads the kinds' descriptions from \
             the CRDs `make manifests` renders from the API types (config/crd/bases), not from \
             the types' source"
        );
    }
    let mut crds = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        let name = format!(
            "{crd_dir}/{}",
            path.file_name().unwrap_or_default().to_string_lossy()
        );
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
    let data = std::fs::read(path).with_context(|| format!("--icon {}", path.display()))?;
    Ok(Icon {
        base64data: base64::engine::general_purpose::STANDARD.encode(data),
        mediatype: mediatype.to_string(),
    })
}

/// Asks for the catalog fields no flag gave; an empty answer keeps the default shown.
fn ask_missing(package: &str, fields: &mut Fields) -> Result<()> {
    let display = base::display_name(package);
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

#[cfg(test)]
mod tests {
    use super::SCORECARD_VERSION;
    use crate::olm::bundle::OLM_WEBHOOK_CERT_DIR;

    /// The folder OLM mounts its certificate in is the one `create webhook` points the manager
    /// at; were they to drift apart, the manager would find no certificate under OLM.
    #[test]
    fn the_manager_reads_the_certificate_where_olm_mounts_it() {
        let patch =
            include_str!("../../templates/webhook/config/default/manager_webhook_patch.yaml");
        assert!(
            patch.contains(&format!("--webhook-cert-path={OLM_WEBHOOK_CERT_DIR}")),
            "{patch}"
        );
    }

    /// docs/olm.md names the image the scorecard configuration runs: the constant's.
    #[test]
    fn the_docs_name_the_scorecard_image() {
        let docs = include_str!("../../docs/olm.md");
        let named: Vec<&str> = docs
            .split("scorecard-test:")
            .skip(1)
            .map(|rest| rest.split('`').next().unwrap_or_default())
            .collect();
        assert_eq!(named, [SCORECARD_VERSION]);
    }
}
