//! `bundle validate`: operator-framework's validation of a bundle directory, offline.
//!
//! The default run is what `operator-sdk bundle validate` runs without `--select-optional`,
//! validator by validator, with the same verdicts (errors where they error, warnings where
//! they warn):
//!
//! | module | operator-framework |
//! |---|---|
//! | [`format`](mod@format) | operator-registry's `ValidateBundleFormat`: folders, `metadata/annotations.yaml`, `metadata/dependencies.yaml` |
//! | [`load`] | operator-framework/api's `GetBundleFromDir`: every file of `manifests/` decoded (a CSV, its CRDs, other objects) |
//! | `objects` | operator-sdk's content check: the kinds a registry+v1 bundle may hold, each object's metadata |
//! | `bundle` | api's `BundleValidator`: owned CRDs, service accounts, size, name, related images |
//! | `csv` | api's `ClusterServiceVersionValidator` |
//! | `crd` | api's `CustomResourceDefinitionValidator` (apiextensions' static validation, schemas and status left out as there) |
//!
//! Where the Go tools stop at the first type mismatch of a file, this reads the file field by
//! field ([`super::typed`]) and reports each mismatch, so that all other checks still run. The
//! optional suites (`--select-optional`) are in [`suites`], with operator-rs's own checks
//! (`name=operator-rs`) and OLM v1's requirements (`name=olmv1`, `--olmv1`).

mod bundle;
mod crd;
mod csv;
mod fields;
pub mod format;
mod links;
pub mod load;
mod objects;
pub mod selector;
pub mod suites;

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use anyhow::{Result, bail};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
}

/// One finding, about one file (and field, when there is one).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Problem {
    pub severity: Severity,
    /// The validator that found it: `format`, `load`, `objects`, `bundle`, `csv`, `crd` (the
    /// default run), or an optional suite's name.
    pub check: &'static str,
    /// The file, relative to the bundle (`manifests/x.yaml`), and the field when there is one
    /// (`manifests/x.yaml: spec.version`).
    pub location: String,
    pub message: String,
}

impl Problem {
    /// Found by one of operator-framework's default validators.
    pub fn is_default(&self) -> bool {
        DEFAULT_CHECKS.contains(&self.check)
    }
}

/// The validators of the default run.
pub const DEFAULT_CHECKS: [&str; 6] = ["format", "load", "objects", "bundle", "csv", "crd"];

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.severity {
            Severity::Error => "ERROR",
            Severity::Warning => "WARNING",
        };
        write!(f, "{level}: ")?;
        if !self.is_default() {
            write!(f, "[{}] ", self.check)?;
        }
        write!(f, "{}: {}", self.location, self.message)
    }
}

/// The problems found so far, by one validator.
pub struct Report<'a> {
    check: &'static str,
    problems: &'a mut Vec<Problem>,
}

impl<'a> Report<'a> {
    pub fn new(check: &'static str, problems: &'a mut Vec<Problem>) -> Self {
        Self { check, problems }
    }

    pub fn error(&mut self, location: impl Into<String>, message: impl Into<String>) {
        self.add(Severity::Error, location.into(), message.into());
    }

    pub fn warn(&mut self, location: impl Into<String>, message: impl Into<String>) {
        self.add(Severity::Warning, location.into(), message.into());
    }

    pub fn add(&mut self, severity: Severity, location: String, message: String) {
        self.problems.push(Problem {
            severity,
            check: self.check,
            location,
            message,
        });
    }
}

/// What to run besides the default validators.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// A label selector over the optional suites (`suite=operatorframework`, `name=community`).
    pub select_optional: Option<String>,
    /// `--optional-values`: `k8s-version=1.30`, `index-path=bundle.Dockerfile`, …
    pub optional_values: BTreeMap<String, String>,
    /// Also run the `olmv1` suite.
    pub olmv1: bool,
}

/// Every problem of the bundle in `dir`: the default validators, then the selected suites;
/// errors first.
pub fn validate(dir: &Path, options: &Options) -> Result<Vec<Problem>> {
    if !dir.is_dir() {
        bail!("{} is not a directory", dir.display());
    }
    let suites = suites::selected(options)?;
    let (bundle, format, mut problems) = read(dir);
    let context = suites::Context {
        dir,
        bundle: &bundle,
        format: &format,
        values: &options.optional_values,
    };
    for suite in suites {
        (suite.run)(&context, &mut Report::new(suite.name, &mut problems));
    }
    problems.sort();
    problems.dedup();
    Ok(problems)
}

/// The bundle in `dir` as the default validators read it, and their problems.
pub fn read(dir: &Path) -> (load::Bundle, format::Format, Vec<Problem>) {
    let mut problems = Vec::new();
    links::check(dir, &mut Report::new("links", &mut problems));
    let format = format::check(dir, &mut Report::new("format", &mut problems));
    let bundle = load::load(
        dir,
        format.annotations.as_ref(),
        &mut Report::new("load", &mut problems),
    );
    objects::check(&bundle, &mut Report::new("objects", &mut problems));
    if let Some(csv) = &bundle.csv {
        bundle::check(&bundle, csv, &mut Report::new("bundle", &mut problems));
        csv::check(csv, &mut Report::new("csv", &mut problems));
    }
    for crd in &bundle.crds {
        crd::check(crd, &mut Report::new("crd", &mut problems));
    }
    (bundle, format, problems)
}

/// For `generate bundle --replaces`: a CSV name of the same package, `<package>.v<X.Y.Z>`.
/// (operator-framework accepts any DNS name in `spec.replaces`; operator-rs writes the form
/// OLM's catalogs and `make catalog` expect.)
pub fn check_csv_name(flag: &str, name: &str, package: &str) -> Result<()> {
    let Some((named, version)) = name.split_once(".v") else {
        bail!("{flag}: {name:?} must have the format <package>.v<X.Y.Z>");
    };
    if super::gosemver::Version::parse(version).is_err() {
        bail!(
            "{flag}: {name:?} holds no semantic version after the package name (<package>.v<X.Y.Z>)"
        );
    }
    if let Some(err) = super::k8s_names::dns1123_subdomain(name).first() {
        bail!("{flag}: {name:?} is not a valid name: {err}");
    }
    if named != package {
        bail!(
            "{flag} {name}: a bundle of package {package} replaces an earlier one of the same package ({package}.v<X.Y.Z>)"
        );
    }
    Ok(())
}
