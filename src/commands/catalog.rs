//! `operator-rs generate catalog`: bundles added to the file-based catalog
//! `catalog/<package>/index.yaml`, validated, and `catalog.Dockerfile` written when missing.
//! Planned like every other command (all or nothing, `--dry-run`); the catalog work is in
//! [`crate::olm::catalog`].

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use crate::cli::GenerateCatalogArgs;
use crate::olm::catalog::{self, Catalog};
use crate::scaffold::table::DirTable;
use crate::scaffold::{Owner, Plan};

/// The Dockerfile of the catalog image: `templates/catalog/`.
pub(crate) static FILES: DirTable<CatalogVars> = DirTable::new("catalog");

/// The variables of [`FILES`].
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct CatalogVars {
    /// The image with opm, which serves the catalog.
    pub opm_image: String,
    /// The catalog folder, relative to the project.
    pub catalog_dir: String,
}

/// opm's image, of the release the Makefile's `OPM_VERSION` downloads.
pub const OPM_IMAGE: &str = "quay.io/operator-framework/opm:v1.55.0";

/// The file of a package's catalog in the catalog folder.
pub const INDEX: &str = "index.yaml";

pub fn run(args: &GenerateCatalogArgs, dir: &Path) -> Result<()> {
    let bundles: Vec<PathBuf> = if args.bundles.is_empty() {
        vec![PathBuf::from("bundle")]
    } else {
        args.bundles.clone()
    };
    if args.images.len() != bundles.len() {
        bail!(
            "--image: give one image per bundle ({} bundle(s), {} image(s)): the image OLM pulls each bundle from",
            bundles.len(),
            args.images.len()
        );
    }
    let output = relative("--output", &args.output)?;
    let plan = plan(dir, &bundles, &args.images, &output)?;
    super::finish(&plan.plan, args.common.dry_run)?;
    if !args.quiet {
        for line in &plan.summary {
            println!("{line}");
        }
    }
    Ok(())
}

/// A planned catalog and what to say about it.
pub struct Planned {
    pub plan: Plan,
    pub summary: Vec<String>,
}

/// The catalog with `bundles` added (`images[i]` is the image of `bundles[i]`), written to
/// `output/<package>/index.yaml`, and the Dockerfile when there is none.
pub fn plan(dir: &Path, bundles: &[PathBuf], images: &[String], output: &str) -> Result<Planned> {
    let mut plan = Plan::new(dir, false);
    let mut catalogs: Vec<(String, Catalog)> = Vec::new();
    for (bundle, image) in bundles.iter().zip(images) {
        let rendered = catalog::render_bundle(&dir.join(bundle), image)?;
        let path = format!("{output}/{}/{INDEX}", rendered.package);
        let index = match catalogs.iter().position(|(p, _)| *p == path) {
            Some(index) => index,
            None => {
                let existing = match plan.read(&path)? {
                    Some(text) => Catalog::parse(&text, &path)?,
                    None => Catalog::default(),
                };
                catalogs.push((path.clone(), existing));
                catalogs.len() - 1
            }
        };
        let current = std::mem::take(&mut catalogs[index].1);
        catalogs[index].1 = current.with_bundle(rendered)?;
    }
    let mut summary = Vec::new();
    for (path, catalog) in &catalogs {
        let problems = catalog::validate(catalog);
        if !problems.is_empty() {
            bail!(
                "the catalog {path} would not be valid: {}",
                problems.join("; ")
            );
        }
        plan.write(path, catalog.to_yaml())?;
        for channel in &catalog.channels {
            let edges = catalog::edges(catalog, &channel.name);
            let graph = if edges.is_empty() {
                channel
                    .entries
                    .iter()
                    .map(|e| e.name.clone())
                    .collect::<Vec<_>>()
                    .join(", ")
            } else {
                edges
                    .iter()
                    .map(|(from, to)| format!("{from} -> {to}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            summary.push(format!("{path}: channel {}: {graph}", channel.name));
        }
    }
    let vars = CatalogVars {
        opm_image: OPM_IMAGE.to_string(),
        catalog_dir: output.to_string(),
    };
    for file in FILES.render(&vars)? {
        plan.create(&file.path, file.contents, Owner::Shared)?;
    }
    Ok(Planned { plan, summary })
}

/// A folder inside the project, as a relative path without `..`.
fn relative(flag: &str, path: &Path) -> Result<String> {
    let text = path.to_string_lossy().trim_end_matches('/').to_string();
    let text = text.strip_prefix("./").unwrap_or(&text).to_string();
    if text.is_empty()
        || path.is_absolute()
        || path
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        bail!(
            "{flag} {}: a folder inside the project (relative, without ..)",
            path.display()
        );
    }
    Ok(text)
}
