//! The CSV base, `config/manifests/bases/<project>.clusterserviceversion.yaml`: what a user
//! says about the operator (names, description, maintainers, install modes) plus the owned
//! CRDs, which `generate kustomize manifests` keeps in step with `config/crd/bases`.
//!
//! Re-running never loses what the user wrote: an existing base is read back, only the fields
//! given as flags are replaced, owned CRDs that the user described keep their words, and
//! fields operator-rs does not know ride along in the typed CSV's `extra` maps.

use anyhow::{Result, bail};
use serde_yaml::Value;

use super::csv::{
    self, ClusterServiceVersion, CrdDescription, Icon, InstallModeType, Maintainer, Provider,
};
use super::descriptors;

/// The Kubernetes version the generated projects are built and validated against (k8s-openapi's
/// `v1_33`); a user who tests on older clusters lowers it in the base.
pub const MIN_KUBE_VERSION: &str = "1.33.0";

/// OLM's capability levels, the `capabilities` annotation's values.
pub const CAPABILITIES: [&str; 5] = [
    "Basic Install",
    "Seamless Upgrades",
    "Full Lifecycle",
    "Deep Insights",
    "Auto Pilot",
];

/// What the CSV base takes from the operator's project.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Project {
    /// The project's name: the CSV's name is `<name>.v<version>`.
    pub name: String,
    /// Whether the manager watches its own namespace only (`WATCH_NAMESPACE`).
    pub namespaced: bool,
    /// Whether the project has conversion webhooks, which OLM serves only with AllNamespaces.
    pub converts: bool,
}

/// What the user gave (flags or answers); `None` keeps the base's value.
#[derive(Debug, Clone, Default)]
pub struct Fields {
    pub display_name: Option<String>,
    pub description: Option<String>,
    pub provider: Option<Provider>,
    pub maintainers: Option<Vec<Maintainer>>,
    pub keywords: Option<Vec<String>>,
    pub icon: Option<Icon>,
    pub capabilities: Option<String>,
    pub install_modes: Option<Vec<InstallModeType>>,
}

/// The base after this run: `existing` (the file's text, if there is one) with `fields`
/// applied and the owned CRDs brought in step with `crds` (config/crd/bases).
pub fn update(
    project: &Project,
    existing: Option<&str>,
    crds: &[Value],
    fields: &Fields,
) -> Result<ClusterServiceVersion> {
    let mut base = match existing {
        Some(text) => ClusterServiceVersion::parse(text)?,
        None => new_base(project, crds),
    };
    if let Some(value) = &fields.display_name {
        base.spec.display_name = value.clone();
    }
    if let Some(value) = &fields.description {
        base.spec.description = value.clone();
    }
    if let Some(value) = &fields.provider {
        base.spec.provider = Some(value.clone());
    }
    if let Some(value) = &fields.maintainers {
        base.spec.maintainers = value.clone();
    }
    if let Some(value) = &fields.keywords {
        base.spec.keywords = value.clone();
    }
    if let Some(value) = &fields.icon {
        base.spec.icon = vec![value.clone()];
    }
    if let Some(value) = &fields.capabilities {
        check_capabilities(value)?;
        base.metadata
            .annotations
            .insert("capabilities".into(), value.clone());
    }
    if let Some(modes) = &fields.install_modes {
        if modes.is_empty() {
            bail!("--install-modes: at least one install mode must be supported");
        }
        base.spec.install_modes = csv::install_modes(modes);
    }
    base.spec.custom_resource_definitions.owned =
        owned(&base.spec.custom_resource_definitions.owned, crds);
    Ok(base)
}

pub fn check_capabilities(value: &str) -> Result<()> {
    if !CAPABILITIES.contains(&value) {
        bail!(
            "--capabilities {value:?} is not an OLM capability level: one of {}",
            CAPABILITIES.map(|c| format!("{c:?}")).join(", ")
        );
    }
    Ok(())
}

/// The default install modes: a cluster-wide manager supports AllNamespaces; a namespaced one
/// (`init --namespaced`, `WATCH_NAMESPACE` from its own namespace) OwnNamespace, unless it has
/// conversion webhooks, which OLM serves only with AllNamespaces.
pub fn default_install_modes(project: &Project) -> Vec<InstallModeType> {
    if project.namespaced && !project.converts {
        vec![InstallModeType::OwnNamespace]
    } else {
        vec![InstallModeType::AllNamespaces]
    }
}

fn new_base(project: &Project, crds: &[Value]) -> ClusterServiceVersion {
    let name = &project.name;
    let display = display_name(name);
    let mut kinds: Vec<String> = crds
        .iter()
        .filter_map(|c| c["spec"]["names"]["kind"].as_str().map(str::to_string))
        .collect();
    kinds.dedup();
    let description = if kinds.is_empty() {
        format!("{display}, a Kubernetes operator.")
    } else {
        format!("{display} manages {} resources.", kinds.join(", "))
    };
    let mut base = ClusterServiceVersion {
        api_version: csv::API_VERSION.into(),
        kind: csv::KIND.into(),
        ..ClusterServiceVersion::default()
    };
    base.metadata.name = format!("{name}.v0.0.0");
    base.metadata
        .annotations
        .insert("alm-examples".into(), "[]".into());
    base.metadata
        .annotations
        .insert("capabilities".into(), CAPABILITIES[0].into());
    base.spec.display_name = display;
    base.spec.description = description;
    base.spec.keywords = vec![name.clone()];
    base.spec.maturity = Some("alpha".into());
    base.spec.min_kube_version = Some(MIN_KUBE_VERSION.into());
    base.spec.install_modes = csv::install_modes(&default_install_modes(project));
    base.spec.version = "0.0.0".into();
    base
}

/// `memcached-operator` → `Memcached Operator`.
pub fn display_name(project_name: &str) -> String {
    project_name
        .split(['-', '_'])
        .filter(|w| !w.is_empty())
        .map(descriptors::words)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The owned CRDs for `crds`: an entry the base has keeps its words; its descriptors follow
/// the schema (new top-level fields added, descriptors of removed fields dropped); versions the
/// base lacks are described from the schema; kinds gone from config/crd/bases are dropped.
fn owned(existing: &[CrdDescription], crds: &[Value]) -> Vec<CrdDescription> {
    let mut out = Vec::new();
    for crd in crds {
        for derived in descriptors::owned(crd) {
            let Some(mut entry) = existing
                .iter()
                .find(|e| e.name == derived.name && e.version == derived.version)
                .cloned()
            else {
                out.push(derived);
                continue;
            };
            entry.kind = derived.kind;
            if entry.display_name.is_empty() {
                entry.display_name = derived.display_name;
            }
            if entry.description.is_empty() {
                entry.description = derived.description;
            }
            follow(&mut entry.spec_descriptors, derived.spec_descriptors);
            follow(&mut entry.status_descriptors, derived.status_descriptors);
            out.push(entry);
        }
    }
    out
}

fn follow(kept: &mut Vec<csv::Descriptor>, derived: Vec<csv::Descriptor>) {
    let top = |path: &str| {
        path.split(['.', '['])
            .next()
            .unwrap_or_default()
            .to_string()
    };
    kept.retain(|k| derived.iter().any(|d| d.path == top(&k.path)));
    for descriptor in derived {
        if !kept.iter().any(|k| top(&k.path) == descriptor.path) {
            kept.push(descriptor);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(namespaced: bool) -> Project {
        Project {
            name: "memcached-operator".into(),
            namespaced,
            converts: false,
        }
    }

    fn crd(fields: &[&str]) -> Value {
        let properties: String = fields
            .iter()
            .map(|f| format!("                {f}:\n                  type: integer\n"))
            .collect();
        serde_yaml::from_str(&format!(
            "metadata:
  name: memcacheds.cache.example.com
spec:
  group: cache.example.com
  names:
    kind: Memcached
  versions:
  - name: v1alpha1
    schema:
      openAPIV3Schema:
        description: A memcached cluster.
        properties:
          spec:
            properties:
{properties}"
        ))
        .unwrap()
    }

    #[test]
    fn a_new_base_describes_the_project() {
        let base = update(&project(false), None, &[crd(&["size"])], &Fields::default()).unwrap();
        assert_eq!(base.metadata.name, "memcached-operator.v0.0.0");
        assert_eq!(base.spec.display_name, "Memcached Operator");
        assert_eq!(
            base.spec.description,
            "Memcached Operator manages Memcached resources."
        );
        let owned = &base.spec.custom_resource_definitions.owned;
        assert_eq!(owned[0].description, "A memcached cluster.");
        assert_eq!(owned[0].spec_descriptors[0].path, "size");
        let supported: Vec<_> = base
            .spec
            .install_modes
            .iter()
            .filter(|m| m.supported)
            .map(|m| m.kind)
            .collect();
        assert_eq!(supported, [InstallModeType::AllNamespaces]);
    }

    #[test]
    fn a_rerun_keeps_what_the_user_wrote_and_follows_the_schema() {
        let first = update(
            &project(true),
            None,
            &[crd(&["size", "old"])],
            &Fields::default(),
        )
        .unwrap();
        let mut edited = first.to_yaml();
        edited = edited.replace(
            "A memcached cluster.",
            "Runs memcached, the hand-written way.",
        );
        edited = edited.replace("displayName: Size", "displayName: Pods");
        edited.push_str("  relatedImages:\n  - image: memcached:1.6\n    name: memcached\n");
        let fields = Fields {
            keywords: Some(vec!["cache".into()]),
            ..Fields::default()
        };
        let again = update(
            &project(true),
            Some(&edited),
            &[crd(&["size", "port"])],
            &fields,
        )
        .unwrap();
        let owned = &again.spec.custom_resource_definitions.owned[0];
        assert_eq!(owned.description, "Runs memcached, the hand-written way.");
        let paths: Vec<_> = owned
            .spec_descriptors
            .iter()
            .map(|d| (d.path.as_str(), d.display_name.as_str()))
            .collect();
        assert_eq!(paths, [("size", "Pods"), ("port", "Port")]);
        assert_eq!(again.spec.keywords, ["cache"]);
        assert!(again.to_yaml().contains("relatedImages"));
        assert_eq!(again.spec.install_modes, first.spec.install_modes);
    }

    #[test]
    fn bad_values_are_refused() {
        let fields = Fields {
            capabilities: Some("Magic".into()),
            ..Fields::default()
        };
        let err = update(&project(false), None, &[], &fields).unwrap_err();
        assert!(
            err.to_string().starts_with("--capabilities \"Magic\""),
            "{err}"
        );
        let err = update(
            &project(false),
            Some("kind: Deployment\napiVersion: apps/v1\n"),
            &[],
            &Fields::default(),
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("not a ClusterServiceVersion"),
            "{err}"
        );
    }
}
