//! The optional validators, selected with `--select-optional <label selector>` as in
//! operator-sdk: each has a `name` label, and those of operator-framework's recommended set a
//! `suite=operatorframework` label. operator-rs adds two: `operator-rs` (checks operator-rs makes
//! beyond operator-framework's defaults) and `olmv1` (whether OLM v1 can install the bundle).

mod community;
mod deprecated_apis;
mod good_practices;
mod hub;
mod multiarch;
mod olmv1;
mod operator_rs;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Result, bail};

use super::format::Format;
use super::load::Bundle;
use super::selector::Selector;
use super::{Options, Report};

/// What a suite reads: the bundle's folder, what the default run read, `--optional-values`.
pub struct Context<'a> {
    pub dir: &'a Path,
    pub bundle: &'a Bundle,
    pub format: &'a Format,
    pub values: &'a BTreeMap<String, String>,
}

pub struct Suite {
    pub name: &'static str,
    /// Besides `name=<name>`.
    pub labels: &'static [(&'static str, &'static str)],
    pub description: &'static str,
    pub run: fn(&Context, &mut Report),
}

const FRAMEWORK: &[(&str, &str)] = &[("suite", "operatorframework")];

/// Every optional suite, in the order they run.
pub const SUITES: &[Suite] = &[
    Suite {
        name: "operatorhubv2",
        labels: FRAMEWORK,
        description: "OperatorHub.io metadata: provider, maintainers, links, version, icon, minKubeVersion, removed Kubernetes APIs",
        run: hub::operatorhub_v2,
    },
    Suite {
        name: "capabilities",
        labels: FRAMEWORK,
        description: "the `capabilities` annotation is one of OLM's five levels (operator-framework's StandardCapabilitiesValidator; alias standardcapabilities)",
        run: hub::capabilities,
    },
    Suite {
        name: "categories",
        labels: FRAMEWORK,
        description: "the `categories` annotation holds OperatorHub.io's categories, or those of $OPERATOR_BUNDLE_CATEGORIES (StandardCategoriesValidator; alias standardcategories)",
        run: hub::categories,
    },
    Suite {
        name: "operatorhub",
        labels: &[],
        description: "deprecated OperatorHub.io metadata validation (operatorhubv2, capabilities and categories together)",
        run: hub::operatorhub,
    },
    Suite {
        name: "community",
        labels: &[],
        description: "(alpha) community-operators: bundles using APIs removed in Kubernetes 1.22 declare the OpenShift versions they support (--optional-values index-path=bundle.Dockerfile)",
        run: community::check,
    },
    Suite {
        name: "alpha-deprecated-apis",
        labels: FRAMEWORK,
        description: "(alpha) manifests using APIs removed in Kubernetes 1.22, 1.25 and 1.26: errors from minKubeVersion or --optional-values k8s-version=<version> on, warnings below",
        run: deprecated_apis::check,
    },
    Suite {
        name: "good-practices",
        labels: FRAMEWORK,
        description: "operator-framework's good practices: resource requests, CRD descriptions, channel names, no RBAC to create CRDs, <operator>.v<semver> names",
        run: good_practices::check,
    },
    Suite {
        name: "multiarch",
        labels: &[],
        description: "(alpha) the CSV's operatorframework.io/arch and /os labels against the node affinity of its deployments (images are not inspected offline)",
        run: multiarch::check,
    },
    Suite {
        name: "operator-rs",
        labels: &[],
        description: "operator-rs's checks beyond operator-framework's defaults: names and channels as catalogs need them, <package>.v<version> names and replaces, olm.skipRange, CRD versions, webhook definitions, the fields catalogs show",
        run: operator_rs::check,
    },
    Suite {
        name: "olmv1",
        labels: &[],
        description: "whether OLM v1 (operator-controller) can install the bundle as a ClusterExtension, and why not (also --olmv1)",
        run: olmv1::check,
    },
];

/// Names operator-framework's API gives the same validators.
const ALIASES: &[(&str, &str)] = &[
    ("standardcapabilities", "capabilities"),
    ("standardcategories", "categories"),
    ("operatorhub/v2", "operatorhubv2"),
];

impl Suite {
    fn labels(&self) -> BTreeMap<&'static str, &'static str> {
        let mut labels: BTreeMap<_, _> = self.labels.iter().copied().collect();
        labels.insert("name", self.name);
        labels
    }
}

/// The suites `options` select; a selector that matches none is refused, as in operator-sdk.
pub fn selected(options: &Options) -> Result<Vec<&'static Suite>> {
    let mut out: Vec<&Suite> = Vec::new();
    if let Some(text) = options
        .select_optional
        .as_deref()
        .filter(|t| !t.trim().is_empty())
    {
        let selector = Selector::parse(text)?.with_aliases("name", ALIASES);
        out.extend(SUITES.iter().filter(|s| selector.matches(&s.labels())));
        if out.is_empty() {
            bail!("--select-optional {text:?} matches no optional validator (see --list-optional)");
        }
    }
    if options.olmv1 && !out.iter().any(|s| s.name == "olmv1") {
        out.extend(SUITES.iter().filter(|s| s.name == "olmv1"));
    }
    Ok(out)
}

/// `--list-optional`: name, labels, description.
pub fn list() -> String {
    let mut out = String::from("NAME                   LABELS                     DESCRIPTION\n");
    for suite in SUITES {
        let labels: Vec<String> = suite
            .labels()
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let _ = writeln!(
            out,
            "{:<22} {:<26} {}",
            suite.name,
            labels.join(","),
            suite.description
        );
    }
    out
}
