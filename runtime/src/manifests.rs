//! The Kubernetes manifests that are derived from a project's code: its CRDs, the manager's RBAC
//! role built from the rules its controllers declare, and the configurations that register its
//! webhooks with the API server.
//!
//! A project describes them with one [`Manifests`] value (its `manifests()` in `src/lib.rs`), and
//! everything else is done here:
//!
//! - `make manifests` runs the project's `src/bin/manifests.rs`, which is
//!   `fn main() -> ExitCode { my_operator::manifests().main() }`: [`Manifests::main`] writes the
//!   files that changed under `config/` and deletes CRD files whose kinds are gone;
//! - the project's `tests/manifests.rs` calls [`Manifests::check`], so that `cargo test` fails
//!   when `config/` is out of date with the code.
//!
//! So nobody edits these YAML files by hand. Rendering is a pure function from Rust values to
//! file contents ([`Manifests::render`]): the CRDs in [`CRD_DIR`], the role in [`ROLE_PATH`], and
//! the webhook configurations in [`WEBHOOK_MANIFESTS_PATH`] once the project has webhooks.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::rbac::v1::{ClusterRole, PolicyRule, Role};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::ObjectMeta;
use kube::core::crd::{MergeError, merge_crds};
use serde::Serialize;

use crate::webhook::{ServerError, Webhook};

mod crd_defaults;
mod rbac;
mod structural;

pub use rbac::normalize_rules;
pub use structural::structural_problems;

/// The folder the CRDs are written to, one file per kind: `<group>_<plural>.yaml`.
pub const CRD_DIR: &str = "config/crd/bases";

/// The file the manager's RBAC role is written to.
pub const ROLE_PATH: &str = "config/rbac/role.yaml";

/// The file the webhook configurations are written to (once the project has webhooks).
pub const WEBHOOK_MANIFESTS_PATH: &str = "config/webhook/manifests.yaml";

/// The name of the manager's Role or ClusterRole (see [`RoleScope`]);
/// `config/rbac/role_binding.yaml` binds it to the manager's service account.
pub const ROLE_NAME: &str = "manager-role";

/// The file of the ClusterRole that a namespaced project's manager needs for its controllers of
/// cluster-scoped kinds ([`Manifests::cluster_rbac_rules`]); written only when they have rules.
pub const CLUSTER_ROLE_PATH: &str = "config/rbac/cluster_role.yaml";

/// The name of that ClusterRole; `config/rbac/cluster_role_binding.yaml` binds it.
pub const CLUSTER_ROLE_NAME: &str = "manager-cluster-role";

/// Where the manager's permissions apply, which decides the kind of its role.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RoleScope {
    /// A ClusterRole: the manager watches the whole cluster (kubebuilder's default).
    #[default]
    Cluster,
    /// A Role in the manager's namespace, for projects created with `--namespaced`, whose
    /// manager watches only the namespaces in `WATCH_NAMESPACE`. Its rules cannot grant
    /// `nonResourceURLs`, which only a ClusterRole can.
    Namespace,
}

/// Everything `make manifests` derives from a project's code.
///
/// A project builds it in one place (`manifests()` in its `src/lib.rs`) from the same lists the
/// manager uses, so the manifests and the running operator always agree:
///
/// ```
/// use operator_rs_runtime::k8s_openapi::api::rbac::v1::PolicyRule;
/// use operator_rs_runtime::kube::{CustomResource, CustomResourceExt as _};
/// use operator_rs_runtime::manifests::{Manifests, RoleScope};
/// use schemars::JsonSchema;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
/// #[kube(group = "example.com", version = "v1", kind = "Ship", namespaced)]
/// pub struct ShipSpec {
///     pub crew: u32,
/// }
///
/// /// What `make manifests` writes (in a project: `api::crds()`, the controllers' rules and
/// /// `webhook::webhooks()`).
/// pub fn manifests() -> Manifests {
///     Manifests {
///         crds: vec![Ship::crd()],
///         rbac_rules: vec![PolicyRule {
///             api_groups: Some(vec!["example.com".to_owned()]),
///             resources: Some(vec!["ships".to_owned()]),
///             verbs: vec!["get".to_owned(), "list".to_owned(), "watch".to_owned()],
///             ..PolicyRule::default()
///         }],
///         cluster_rbac_rules: Vec::new(),
///         webhooks: Vec::new(),
///         role_scope: RoleScope::Cluster,
///     }
/// }
///
/// let files = manifests().render().unwrap();
/// let paths: Vec<&str> = files.iter().map(|file| file.path.as_str()).collect();
/// assert_eq!(paths, ["config/crd/bases/example.com_ships.yaml", "config/rbac/role.yaml"]);
/// ```
#[derive(Debug, Default)]
pub struct Manifests {
    /// Every CustomResourceDefinition of the project, one entry per kind and version, as
    /// `Kind::crd()` returns them; the versions of a kind are merged with [`merge_versions`].
    pub crds: Vec<CustomResourceDefinition>,
    /// The RBAC rules of all controllers, cleaned up with [`normalize_rules`] into the manager's
    /// role.
    pub rbac_rules: Vec<PolicyRule>,
    /// The RBAC rules that need a ClusterRole whatever the project's scope: those of the
    /// controllers of cluster-scoped kinds ([`crate::controller::RbacScope::Cluster`]). In a
    /// ClusterRole project they join the other rules; in a namespaced one they make
    /// [`CLUSTER_ROLE_NAME`], in [`CLUSTER_ROLE_PATH`].
    pub cluster_rbac_rules: Vec<PolicyRule>,
    /// The webhooks the manager serves, the same list it is given. Their admission webhooks are
    /// registered in [`WEBHOOK_MANIFESTS_PATH`] (see [`crate::webhook::webhook_manifests`]);
    /// without webhooks, that file is not written.
    pub webhooks: Vec<Webhook>,
    /// Whether the role is a ClusterRole or a Role.
    pub role_scope: RoleScope,
}

impl Manifests {
    /// Renders every generated manifest: the CRDs (one file per kind, sorted, see
    /// [`render_crds`]), then the role ([`render_role`]), then, when there are webhooks, the
    /// webhook configurations ([`render_webhooks`]).
    ///
    /// Fails, with a message that says what to fix, when the versions of a kind do not merge
    /// into one CRD, when a CRD's schema is not structural (see [`structural_problems`]), when
    /// an RBAC rule is invalid, or when two webhooks want the same path.
    pub fn render(&self) -> Result<Vec<Manifest>, Error> {
        let mut manifests = render_crds(self.crds.clone())?;
        match self.role_scope {
            RoleScope::Cluster => {
                let mut rules = self.rbac_rules.clone();
                rules.extend(self.cluster_rbac_rules.iter().cloned());
                manifests.push(render_role(rules, RoleScope::Cluster)?);
            }
            RoleScope::Namespace => {
                manifests.push(render_role(self.rbac_rules.clone(), RoleScope::Namespace)?);
                if !self.cluster_rbac_rules.is_empty() {
                    manifests.push(render_cluster_role(self.cluster_rbac_rules.clone())?);
                }
            }
        }
        if !self.webhooks.is_empty() {
            crate::webhook::check_routes(&self.webhooks).map_err(Error::Webhooks)?;
            let webhooks = crate::webhook::webhook_manifests(&self.webhooks);
            manifests.push(render_webhooks(webhooks.mutating, webhooks.validating)?);
        }
        Ok(manifests)
    }

    /// Writes the manifests under the project folder `root` (what `make manifests` does), and
    /// returns what it did, one line per file: `wrote <path>` or `deleted <path>`.
    ///
    /// Files whose contents are already right are left alone (with their modification time), and
    /// `.yaml` files in [`CRD_DIR`] that no kind of the code renders any more are deleted.
    pub fn write_to(&self, root: &Path) -> anyhow::Result<Vec<String>> {
        let manifests = self.render()?;
        let mut done = Vec::new();
        for manifest in &manifests {
            let path = root.join(&manifest.path);
            if fs::read_to_string(&path).ok().as_deref() == Some(manifest.contents.as_str()) {
                continue; // Unchanged: leave the file (and its modification time) alone.
            }
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent)
                    .with_context(|| format!("cannot create {}", parent.display()))?;
            }
            fs::write(&path, &manifest.contents)
                .with_context(|| format!("cannot write {}", path.display()))?;
            done.push(format!("wrote {}", manifest.path));
        }
        for (stale, relative) in stale_crd_files(root, &manifests)? {
            fs::remove_file(&stale)
                .with_context(|| format!("cannot delete {}", stale.display()))?;
            done.push(format!("deleted {relative}"));
        }
        Ok(done)
    }

    /// Checks that the files under the project folder `root` are up to date with the code: every
    /// rendered manifest equals the file on disk, and no `.yaml` file in [`CRD_DIR`] is stale.
    ///
    /// The error lists every file that is wrong and says to run `make manifests`. A project's
    /// `tests/manifests.rs` is:
    ///
    /// ```no_run
    /// # fn main() {}
    /// # fn manifests() -> operator_rs_runtime::manifests::Manifests { Default::default() }
    /// #[test]
    /// fn manifests_are_up_to_date() {
    ///     let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    ///     if let Err(error) = manifests().check(root) {
    ///         panic!("{error}");
    ///     }
    /// }
    /// ```
    pub fn check(&self, root: &Path) -> Result<(), String> {
        let manifests = self
            .render()
            .map_err(|error| format!("cannot render the manifests: {error}"))?;
        let mut problems = Vec::new();
        for manifest in &manifests {
            match fs::read_to_string(root.join(&manifest.path)) {
                Ok(on_disk) if on_disk == manifest.contents => {}
                Ok(_) => problems.push(format!(
                    "{} is out of date with the code: run `make manifests`",
                    manifest.path
                )),
                Err(_) => problems.push(format!(
                    "{} is missing: run `make manifests`",
                    manifest.path
                )),
            }
        }
        let stale = stale_crd_files(root, &manifests).map_err(|error| format!("{error:#}"))?;
        for (_, relative) in stale {
            problems.push(format!(
                "{relative} belongs to no API in the code: run `make manifests` to delete it"
            ));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\n"))
        }
    }

    /// The whole `manifests` binary of a project (`src/bin/manifests.rs`, run by
    /// `make manifests`):
    ///
    /// ```no_run
    /// # mod my_operator { pub fn manifests() -> operator_rs_runtime::manifests::Manifests { Default::default() } }
    /// fn main() -> std::process::ExitCode {
    ///     my_operator::manifests().main()
    /// }
    /// ```
    ///
    /// Finds the project folder from `CARGO_MANIFEST_DIR`, which `cargo run` sets (so it works
    /// from any folder of the project), else uses the current folder; then
    /// [writes](Self::write_to) the manifests and prints what it did. On failure it prints the
    /// error and its causes to stderr and returns [`ExitCode::FAILURE`].
    pub fn main(self) -> ExitCode {
        let written = project_root().and_then(|root| self.write_to(&root));
        match written {
            Ok(done) => {
                for line in done {
                    println!("{line}");
                }
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("error: {error:#}");
                ExitCode::FAILURE
            }
        }
    }
}

/// The project folder: `CARGO_MANIFEST_DIR` (set by `cargo run`), else the current folder.
fn project_root() -> anyhow::Result<PathBuf> {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .map_or_else(std::env::current_dir, Ok)
        .context("cannot determine the project folder")
}

/// The `.yaml` files in [`CRD_DIR`] under `root` that are not among `manifests`, with their
/// paths relative to `root`.
fn stale_crd_files(root: &Path, manifests: &[Manifest]) -> anyhow::Result<Vec<(PathBuf, String)>> {
    let current: BTreeSet<&str> = manifests.iter().map(|m| m.path.as_str()).collect();
    let mut stale = Vec::new();
    for file in yaml_files(&root.join(CRD_DIR))? {
        let relative = format!(
            "{CRD_DIR}/{}",
            file.file_name().unwrap_or_default().display()
        );
        if !current.contains(relative.as_str()) {
            stale.push((file, relative));
        }
    }
    Ok(stale)
}

/// The `.yaml` files directly in `dir`, sorted; none if `dir` does not exist (a project without
/// APIs).
fn yaml_files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(error).with_context(|| format!("cannot read {}", dir.display())),
    };
    let mut files = Vec::new();
    for entry in entries {
        let path = entry
            .with_context(|| format!("cannot read {}", dir.display()))?
            .path();
        if path.is_file()
            && path
                .extension()
                .is_some_and(|extension| extension == "yaml")
        {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// One generated file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// Where the file goes, relative to the project root, with `/` separators.
    pub path: String,
    /// The complete file contents.
    pub contents: String,
}

/// Why the manifests cannot be generated from the code. Each message says what to fix.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No version of a kind keeps `storage` true.
    #[error(
        "CRD {crd}: no version is the storage version; remove `#[kube(storage = false)]` from exactly one version"
    )]
    NoStorageVersion {
        /// The CRD name, `<plural>.<group>`.
        crd: String,
    },
    /// Several versions of a kind keep `storage` true.
    #[error(
        "CRD {crd}: versions {versions:?} are all storage versions; add `#[kube(storage = false)]` to all but one"
    )]
    SeveralStorageVersions {
        /// The CRD name, `<plural>.<group>`.
        crd: String,
        /// The versions that claim to be the storage version.
        versions: Vec<String>,
    },
    /// The same version of a kind is listed twice in the project's CRDs.
    #[error(
        "CRD {crd}: version {version} is listed twice in the CRDs of the project (src/api/mod.rs crds())"
    )]
    DuplicateVersion {
        /// The CRD name, `<plural>.<group>`.
        crd: String,
        /// The repeated version.
        version: String,
    },
    /// The versions of a kind disagree on their group, kind or scope.
    #[error("CRD {crd}: cannot merge its versions into one CRD: {source}")]
    Merge {
        /// The CRD name, `<plural>.<group>`.
        crd: String,
        /// What kube's merge found wrong.
        source: MergeError,
    },
    /// The schema of a CRD is not structural, so the API server would refuse the CRD.
    #[error(
        "CRD {crd}: the schema is not structural, so the API server would refuse it:\n  {}\n\
         Give every field a type (a plain Rust type, or #[schemars(schema_with = ...)]); see \
         https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#specifying-a-structural-schema",
        .problems.join("\n  ")
    )]
    NotStructural {
        /// The CRD name, `<plural>.<group>`.
        crd: String,
        /// What is wrong, one entry per field: kind, version, field path and problem (see
        /// [`structural_problems`]).
        problems: Vec<String>,
    },
    /// An RBAC rule that the role cannot contain.
    #[error("RBAC rule {rule}: {reason}")]
    InvalidRule {
        /// The offending rule, as declared in the code.
        rule: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// Two webhooks want the same path, or a webhook's path is invalid.
    #[error(transparent)]
    Webhooks(ServerError),
    /// A manifest could not be serialized to YAML.
    #[error("cannot write {path} as YAML: {source}")]
    Yaml {
        /// The manifest being written.
        path: String,
        /// The serializer's error.
        source: serde_saphyr::SerializeError,
    },
}

/// Renders one file per kind into [`CRD_DIR`], sorted by path, after merging the versions of each
/// kind with [`merge_versions`]. Refuses CRDs whose schemas are not structural (see
/// [`structural_problems`]).
pub fn render_crds(crds: Vec<CustomResourceDefinition>) -> Result<Vec<Manifest>, Error> {
    merge_versions(crds)?
        .into_iter()
        .map(|mut crd| {
            crd_defaults::complete(&mut crd);
            let problems = structural_problems(&crd);
            if !problems.is_empty() {
                let name = crd.metadata.name.unwrap_or_default();
                return Err(Error::NotStructural {
                    crd: name,
                    problems,
                });
            }
            let path = format!(
                "{CRD_DIR}/{}_{}.yaml",
                crd.spec.group, crd.spec.names.plural
            );
            let header = "# Edit the Rust types in src/api/ instead, then run `make manifests`.\n";
            to_yaml(path, header, &crd)
        })
        .collect()
}

/// Merges CRDs that share a name (one per version of a kind, as `Kind::crd()` returns them) into a
/// single CRD per kind, sorted by name.
///
/// Exactly one version of each kind must be the storage version, that is, keep the derive's
/// default `storage = true`; the versions keep the order in which they are listed.
pub fn merge_versions(
    crds: Vec<CustomResourceDefinition>,
) -> Result<Vec<CustomResourceDefinition>, Error> {
    let mut by_name: BTreeMap<String, Vec<CustomResourceDefinition>> = BTreeMap::new();
    for crd in crds {
        let name = crd.metadata.name.clone().unwrap_or_default();
        by_name.entry(name).or_default().push(crd);
    }
    by_name
        .into_iter()
        .map(|(name, versions)| merge_kind(name, versions))
        .collect()
}

/// Merges the versions of one kind; see [`merge_versions`].
fn merge_kind(
    crd: String,
    crds: Vec<CustomResourceDefinition>,
) -> Result<CustomResourceDefinition, Error> {
    let versions: Vec<(String, bool)> = crds
        .iter()
        .flat_map(|crd| &crd.spec.versions)
        .map(|version| (version.name.clone(), version.storage))
        .collect();
    let mut seen = BTreeSet::new();
    if let Some((version, _)) = versions.iter().find(|(name, _)| !seen.insert(name)) {
        return Err(Error::DuplicateVersion {
            crd,
            version: version.clone(),
        });
    }
    let storage: Vec<String> = versions
        .iter()
        .filter(|(_, storage)| *storage)
        .map(|(name, _)| name.clone())
        .collect();
    let storage = match storage.as_slice() {
        [] => return Err(Error::NoStorageVersion { crd }),
        [storage] => storage.clone(),
        _ => {
            return Err(Error::SeveralStorageVersions {
                crd,
                versions: storage,
            });
        }
    };

    let mut merged = match merge_crds(crds, &storage) {
        Ok(merged) => merged,
        Err(source) => return Err(Error::Merge { crd, source }),
    };
    // `merge_crds` puts the storage version first; keep the order of the project's list instead.
    merged
        .spec
        .versions
        .sort_by_key(|version| versions.iter().position(|(name, _)| *name == version.name));
    Ok(merged)
}

/// Renders the manager's role from the rules the controllers declare, after
/// [`normalize_rules`]: a ClusterRole, or a Role for a project created with `--namespaced` (see
/// [`RoleScope`]).
pub fn render_role(rules: Vec<PolicyRule>, scope: RoleScope) -> Result<Manifest, Error> {
    let metadata = ObjectMeta {
        name: Some(ROLE_NAME.to_owned()),
        ..ObjectMeta::default()
    };
    let rules = Some(normalize_rules(rules, scope)?);
    let header = "# Edit the `rbac_rules()` of the controllers in src/controller/ instead, then run `make manifests`.\n";
    let path = ROLE_PATH.to_owned();
    match scope {
        RoleScope::Cluster => {
            let role = ClusterRole {
                metadata,
                rules,
                aggregation_rule: None,
            };
            to_yaml(path, header, &role)
        }
        RoleScope::Namespace => to_yaml(path, header, &Role { metadata, rules }),
    }
}

/// Renders [`CLUSTER_ROLE_PATH`]: the ClusterRole of a namespaced project's controllers of
/// cluster-scoped kinds, with exactly their rules.
pub fn render_cluster_role(rules: Vec<PolicyRule>) -> Result<Manifest, Error> {
    let role = ClusterRole {
        metadata: ObjectMeta {
            name: Some(CLUSTER_ROLE_NAME.to_owned()),
            ..ObjectMeta::default()
        },
        rules: Some(normalize_rules(rules, RoleScope::Cluster)?),
        aggregation_rule: None,
    };
    let header = "# Edit the `rbac_rules()` of the controllers of cluster-scoped kinds in src/controller/ instead, then run `make manifests`.\n";
    to_yaml(CLUSTER_ROLE_PATH.to_owned(), header, &role)
}

/// Renders [`WEBHOOK_MANIFESTS_PATH`]: the configurations that register the admission webhooks
/// with the API server, each in its own YAML document. The file is written even when both are
/// `None` (a project with conversion webhooks only), because `config/webhook` lists it.
pub fn render_webhooks(
    mutating: Option<MutatingWebhookConfiguration>,
    validating: Option<ValidatingWebhookConfiguration>,
) -> Result<Manifest, Error> {
    let path = WEBHOOK_MANIFESTS_PATH.to_owned();
    let mut contents = String::from(
        "# Code generated by `make manifests` (cargo run --bin manifests). DO NOT EDIT.\n\
         # Edit the webhooks' REGISTRATION in src/webhook/ instead, then run `make manifests`.\n",
    );
    let documents = [
        mutating.map(|m| serde_saphyr::to_string(&m)),
        validating.map(|v| serde_saphyr::to_string(&v)),
    ];
    for yaml in documents.into_iter().flatten() {
        match yaml {
            Ok(yaml) => {
                contents.push_str("---\n");
                contents.push_str(&yaml);
            }
            Err(source) => return Err(Error::Yaml { path, source }),
        }
    }
    Ok(Manifest { path, contents })
}

/// Serializes `value` to YAML below the comment that marks the file as generated.
fn to_yaml(path: String, header: &str, value: &impl Serialize) -> Result<Manifest, Error> {
    match serde_saphyr::to_string(value) {
        Ok(yaml) => Ok(Manifest {
            contents: format!(
                "# Code generated by `make manifests` (cargo run --bin manifests). DO NOT EDIT.\n{header}---\n{yaml}"
            ),
            path,
        }),
        Err(source) => Err(Error::Yaml { path, source }),
    }
}

#[cfg(test)]
mod tests {
    use crate::webhook::test_fixtures::AllowAll;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::CustomResourceExt as _;
    use kube::core::admission::Operation;

    use super::*;
    use crate::webhook::{Converter, FailurePolicy, Registration};

    /// Two versions of a test-only kind, laid out like `operator-rs create api` lays out versions.
    mod v1 {
        use kube::CustomResource;
        use schemars::JsonSchema;
        use serde::{Deserialize, Serialize};

        #[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
        #[kube(group = "test.example.com", version = "v1", kind = "Ship", namespaced)]
        pub struct ShipSpec {
            pub name: String,
        }
    }

    mod v2 {
        use kube::CustomResource;
        use schemars::JsonSchema;
        use serde::{Deserialize, Serialize};

        #[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
        #[kube(group = "test.example.com", version = "v2", kind = "Ship", namespaced)]
        #[kube(storage = false)]
        pub struct ShipSpec {
            pub name: String,
            pub crew: u32,
        }
    }

    /// A rule like `controller::rule` writes them.
    pub(super) fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> PolicyRule {
        let strings = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        PolicyRule {
            api_groups: Some(strings(groups)),
            resources: Some(strings(resources)),
            verbs: strings(verbs),
            ..PolicyRule::default()
        }
    }

    #[test]
    fn merges_versions_of_a_kind_into_one_crd() {
        let crds = merge_versions(vec![v1::Ship::crd(), v2::Ship::crd()]).unwrap();
        assert_eq!(crds.len(), 1);
        let versions: Vec<(&str, bool)> = crds[0]
            .spec
            .versions
            .iter()
            .map(|version| (version.name.as_str(), version.storage))
            .collect();
        assert_eq!(versions, [("v1", true), ("v2", false)]);

        let manifests = render_crds(vec![v2::Ship::crd(), v1::Ship::crd()]).unwrap();
        assert_eq!(manifests.len(), 1);
        assert_eq!(
            manifests[0].path,
            "config/crd/bases/test.example.com_ships.yaml"
        );
        assert!(manifests[0].contents.contains("DO NOT EDIT"));
        assert!(
            manifests[0]
                .contents
                .contains("kind: CustomResourceDefinition")
        );
    }

    #[test]
    fn requires_exactly_one_storage_version() {
        let several = merge_versions(vec![v1::Ship::crd(), v1::Ship::crd()]);
        assert!(matches!(several, Err(Error::DuplicateVersion { .. })));
        let message = several.unwrap_err().to_string();
        assert_eq!(
            message,
            "CRD ships.test.example.com: version v1 is listed twice in the CRDs of the project \
             (src/api/mod.rs crds())"
        );

        let mut also_storage = v2::Ship::crd();
        also_storage.spec.versions[0].storage = true;
        let several = merge_versions(vec![v1::Ship::crd(), also_storage]);
        assert!(matches!(several, Err(Error::SeveralStorageVersions { .. })));

        let none = merge_versions(vec![v2::Ship::crd()]);
        assert!(matches!(none, Err(Error::NoStorageVersion { .. })));
    }

    #[test]
    fn refuses_crds_that_are_not_structural() {
        let mut crd = serde_json::to_value(v1::Ship::crd()).unwrap();
        let spec = "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties";
        crd.pointer_mut(spec).unwrap()["anything"] = serde_json::json!({});
        let crd = serde_json::from_value(crd).unwrap();
        let error = render_crds(vec![crd]).unwrap_err();
        assert!(matches!(error, Error::NotStructural { .. }), "{error}");
        let message = error.to_string();
        assert!(
            message.contains("CRD ships.test.example.com: the schema is not structural"),
            "{message}"
        );
        assert!(
            message.contains("Ship v1: spec.anything: no type"),
            "{message}"
        );
    }

    #[test]
    fn renders_webhook_configurations_one_document_each() {
        let empty = render_webhooks(None, None).unwrap();
        assert_eq!(empty.path, WEBHOOK_MANIFESTS_PATH);
        assert!(!empty.contents.contains("---"), "{}", empty.contents);

        let named = |name: &str| ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        };
        let both = render_webhooks(
            Some(MutatingWebhookConfiguration {
                metadata: named("mutating-webhook-configuration"),
                webhooks: None,
            }),
            Some(ValidatingWebhookConfiguration {
                metadata: named("validating-webhook-configuration"),
                webhooks: None,
            }),
        )
        .unwrap();
        let contents = &both.contents;
        assert_eq!(contents.matches("---\n").count(), 2);
        assert!(contents.contains("kind: MutatingWebhookConfiguration\n"));
        assert!(contents.contains("kind: ValidatingWebhookConfiguration\n"));
    }

    #[test]
    fn renders_an_empty_role() {
        for (scope, kind) in [
            (RoleScope::Cluster, "kind: ClusterRole\n"),
            (RoleScope::Namespace, "kind: Role\n"),
        ] {
            let role = render_role(Vec::new(), scope).unwrap();
            assert_eq!(role.path, ROLE_PATH);
            assert!(role.contents.contains(kind), "{}", role.contents);
            assert!(role.contents.contains("name: manager-role\n"));
            assert!(role.contents.contains("rules: []\n"));
        }
        assert_eq!(RoleScope::default(), RoleScope::Cluster);
    }

    /// A namespaced project's controllers of cluster-scoped kinds get a ClusterRole of their
    /// own, with exactly their rules; in a cluster-wide project they join the one role.
    #[test]
    fn cluster_rules_get_a_cluster_role_in_namespaced_projects() {
        let manifests = |role_scope| Manifests {
            rbac_rules: vec![rule(&["test.example.com"], &["ships"], &["get"])],
            cluster_rbac_rules: vec![rule(&["test.example.com"], &["fleets"], &["list"])],
            role_scope,
            ..Manifests::default()
        };
        let files = manifests(RoleScope::Namespace).render().unwrap();
        assert_eq!(paths(&files), [ROLE_PATH, CLUSTER_ROLE_PATH]);
        assert!(
            files[0].contents.contains("kind: Role\n") && !files[0].contents.contains("fleets")
        );
        let cluster = &files[1].contents;
        assert!(
            cluster.contains("kind: ClusterRole\n")
                && cluster.contains("name: manager-cluster-role\n")
        );
        assert!(
            cluster.contains("- fleets\n") && !cluster.contains("ships"),
            "{cluster}"
        );

        let files = manifests(RoleScope::Cluster).render().unwrap();
        assert_eq!(paths(&files), [ROLE_PATH]);
        assert!(
            files[0].contents.contains("- fleets\n") && files[0].contents.contains("- ships\n")
        );
    }

    #[test]
    fn renders_the_rules_into_the_role() {
        let rules = vec![rule(&["test.example.com"], &["ships"], &["get"])];
        for scope in [RoleScope::Cluster, RoleScope::Namespace] {
            let role = render_role(rules.clone(), scope).unwrap();
            assert!(role.contents.contains("- ships\n"), "{}", role.contents);
        }
    }

    fn validating(name: &'static str, path: &'static str) -> Webhook {
        let registration = Registration {
            name,
            path,
            operations: &[Operation::Create],
            failure_policy: FailurePolicy::Fail,
        };
        Webhook::validating(registration, AllowAll)
    }

    fn project(webhooks: Vec<Webhook>) -> Manifests {
        Manifests {
            crds: vec![v1::Ship::crd(), v2::Ship::crd()],
            rbac_rules: vec![rule(&["test.example.com"], &["ships"], &["get"])],
            cluster_rbac_rules: Vec::new(),
            webhooks,
            role_scope: RoleScope::Namespace,
        }
    }

    fn paths(manifests: &[Manifest]) -> Vec<&str> {
        manifests.iter().map(|m| m.path.as_str()).collect()
    }

    #[test]
    fn renders_crds_role_and_webhooks_only_with_webhooks() {
        let without = project(Vec::new()).render().unwrap();
        assert_eq!(
            paths(&without),
            [
                "config/crd/bases/test.example.com_ships.yaml",
                "config/rbac/role.yaml"
            ]
        );
        assert!(without[1].contents.contains("kind: Role\n"));

        let with = project(vec![validating("va.kb.io", "/validate-a")])
            .render()
            .unwrap();
        assert_eq!(paths(&with)[2], WEBHOOK_MANIFESTS_PATH);
        assert!(with[2].contents.contains("path: /validate-a\n"));

        // A project with only conversion webhooks still has the (empty) file config/webhook
        // lists.
        let conversion = Webhook::conversion(Converter::new::<ConfigMap>(vec![]));
        let with = project(vec![conversion]).render().unwrap();
        assert_eq!(paths(&with)[2], WEBHOOK_MANIFESTS_PATH);
        assert!(!with[2].contents.contains("---"));

        assert_eq!(Manifests::default().render().unwrap().len(), 1);
    }

    #[test]
    fn refuses_webhooks_that_cannot_be_served_together() {
        let twice = project(vec![
            validating("va.kb.io", "/validate"),
            validating("vb.kb.io", "/validate"),
        ]);
        let error = twice.render().unwrap_err();
        assert!(matches!(error, Error::Webhooks(_)), "{error}");
        assert!(error.to_string().contains("/validate"), "{error}");
    }

    /// A fresh folder, deleted at the end of the test.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(name: &str) -> Self {
            let dir = std::env::temp_dir().join(format!(
                "operator-rs-runtime-manifests-{name}-{}",
                std::process::id()
            ));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).unwrap();
            TempDir(dir)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn writes_changed_files_and_deletes_stale_crds() {
        let root = TempDir::new("write");
        let root = root.0.as_path();
        let manifests = project(vec![validating("va.kb.io", "/validate-a")]);

        let error = manifests.check(root).unwrap_err();
        assert!(error.contains("config/rbac/role.yaml is missing: run `make manifests`"));
        assert_eq!(error.lines().count(), 3, "{error}");

        let done = manifests.write_to(root).unwrap();
        assert_eq!(
            done,
            [
                "wrote config/crd/bases/test.example.com_ships.yaml",
                "wrote config/rbac/role.yaml",
                "wrote config/webhook/manifests.yaml",
            ]
        );
        assert_eq!(manifests.check(root), Ok(()));
        assert!(manifests.write_to(root).unwrap().is_empty());

        // A changed file is rewritten; a CRD of a kind that is gone is deleted; other files stay.
        fs::write(root.join(ROLE_PATH), "edited by hand").unwrap();
        let stale = root.join(CRD_DIR).join("test.example.com_boats.yaml");
        fs::write(&stale, "kind: CustomResourceDefinition").unwrap();
        let notes = root.join(CRD_DIR).join("notes.txt");
        fs::write(&notes, "keep me").unwrap();
        let error = manifests.check(root).unwrap_err();
        assert_eq!(
            error,
            "config/rbac/role.yaml is out of date with the code: run `make manifests`\n\
             config/crd/bases/test.example.com_boats.yaml belongs to no API in the code: run \
             `make manifests` to delete it"
        );
        let done = manifests.write_to(root).unwrap();
        assert_eq!(
            done,
            [
                "wrote config/rbac/role.yaml",
                "deleted config/crd/bases/test.example.com_boats.yaml",
            ]
        );
        assert!(!stale.exists());
        assert!(notes.exists());
        assert_eq!(manifests.check(root), Ok(()));
    }

    #[test]
    fn check_reports_what_cannot_be_rendered() {
        let root = TempDir::new("invalid");
        let mut manifests = project(Vec::new());
        manifests
            .rbac_rules
            .push(rule(&["*"], &["ships"], &["get"]));
        let error = manifests.check(&root.0).unwrap_err();
        assert!(
            error.starts_with("cannot render the manifests: RBAC rule"),
            "{error}"
        );
        assert!(manifests.write_to(&root.0).is_err());
    }
}
