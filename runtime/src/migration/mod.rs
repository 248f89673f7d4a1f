//! Storage version migration: once a kind's storage version moves (say its conversion hub `v2`
//! becomes the storage version where `v1` was), the objects written before stay stored as `v1`
//! until they are written again, and the CRD's `status.storedVersions` keeps `v1`, so that `v1`
//! can never be removed from the CRD. A [`StorageMigration`] writes every object of its kind
//! again, unchanged, which stores it in the storage version, then sets `status.storedVersions`
//! to the storage version alone: what the Kubernetes docs describe as the manual procedure
//! ("Upgrade existing objects to a new stored version"), and what kube-storage-version-migrator
//! and Kubernetes' own alpha controller do for a whole cluster.
//!
//! A project registers the kinds to migrate with the manager, which migrates them on the leader
//! once at startup (see `pass.rs` for how objects are written and why a pass stopped midway is
//! simply made again):
//!
//! ```no_run
//! # use operator_rs_runtime::kube::CustomResource;
//! # use serde::{Deserialize, Serialize};
//! # use schemars::JsonSchema;
//! # #[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
//! # #[kube(group = "crew.example.com", version = "v2", kind = "Captain", namespaced)]
//! # struct CaptainSpec {}
//! use operator_rs_runtime::manager::{Flags, Manager};
//! use operator_rs_runtime::migration::StorageMigration;
//!
//! # async fn run() -> std::process::ExitCode {
//! let flags = Flags::parse_with("6e1ac2c5.example.com");
//! Manager::new(flags)
//!     // The kinds whose storage version may move: those with a conversion hub.
//!     .storage_migrations([StorageMigration::of::<Captain>()])
//!     .run()
//!     .await
//! # }
//! # fn main() {}
//! ```
//!
//! The manager's flags: `--migrate-storage-versions=false` turns the migrations off,
//! `--storage-migration-qps` paces their writes (10 a second by default), and
//! `--migrate-storage-versions-and-exit` runs them once and exits instead of running the
//! operator, for a Job. Progress is logged (target `operator_rs_runtime::migration`) and
//! measured ([`crate::metrics::StorageMigrationMetrics`]); a migration that fails is retried
//! with a growing delay, without stopping the controllers. [`StorageMigration::rbac_rules`] are
//! the permissions it needs.

// The migrations themselves, with the `migration` feature; what a project declares (its
// `StorageMigration`s and their RBAC rules, for `make manifests`) is always here.
#[cfg(feature = "migration")]
mod pace;
#[cfg(feature = "migration")]
mod pass;

#[cfg(feature = "migration")]
pub use pass::FIELD_MANAGER;

use k8s_openapi::api::rbac::v1::PolicyRule;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Resource;

/// The migration of one kind's objects to its storage version; see [the module](self).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StorageMigration {
    group: String,
    plural: String,
}

impl StorageMigration {
    /// The migration of the kind of `K` (any of its versions: the storage version is read from
    /// the CRD when the migration runs).
    pub fn of<K: Resource<DynamicType = ()>>() -> Self {
        Self {
            group: K::group(&()).into_owned(),
            plural: K::plural(&()).into_owned(),
        }
    }

    /// The migration of a kind named by its group and plural, e.g. of a kind this crate has no
    /// Rust type of.
    pub fn named(group: &str, plural: &str) -> Self {
        Self {
            group: group.to_owned(),
            plural: plural.to_owned(),
        }
    }

    /// The name of the kind's CRD: `<plural>.<group>`.
    pub fn crd_name(&self) -> String {
        format!("{}.{}", self.plural, self.group)
    }

    /// The permissions the migration needs, for a ClusterRole (the CRD is cluster-scoped, and
    /// the objects of every namespace are written; in a project created with `--namespaced`,
    /// `manager-cluster-role`): `get` of the CRD and `update` of its status, by name, and `list`
    /// and `patch` of the kind's objects.
    pub fn rbac_rules(&self) -> Vec<PolicyRule> {
        let rule =
            |group: &str, resource: &str, names: Option<Vec<String>>, verbs: &[&str]| PolicyRule {
                api_groups: Some(vec![group.to_owned()]),
                resources: Some(vec![resource.to_owned()]),
                resource_names: names,
                verbs: verbs.iter().map(|verb| (*verb).to_owned()).collect(),
                ..PolicyRule::default()
            };
        let crds = CustomResourceDefinition::group(&());
        let crd = || Some(vec![self.crd_name()]);
        vec![
            rule(&crds, "customresourcedefinitions", crd(), &["get"]),
            rule(
                &crds,
                "customresourcedefinitions/status",
                crd(),
                &["update"],
            ),
            rule(&self.group, &self.plural, None, &["list", "patch"]),
        ]
    }

    /// Migrates the kind's objects to its storage version, if `status.storedVersions` names
    /// other versions, with `client`, recording progress into `metrics`' storage migration
    /// families. Returns once `status.storedVersions` is the storage version alone.
    #[cfg(feature = "migration")]
    pub async fn run(
        &self,
        client: &kube::Client,
        options: &Options,
        metrics: &crate::metrics::Metrics,
    ) -> Result<Outcome, MigrationError> {
        let crd = self.crd_name();
        let metrics = metrics.storage_migrations().resource(&crd);
        let outcome = pass::migrate(client, &crd, options, &metrics).await;
        match &outcome {
            Ok(Outcome::Migrated { .. }) => metrics.finished(true),
            Ok(Outcome::UpToDate { .. }) => {}
            Err(_) => metrics.finished(false),
        }
        outcome
    }
}

/// `rbac_rules` of every migration of `migrations`, for `make manifests`.
pub fn rbac_rules(migrations: &[StorageMigration]) -> Vec<PolicyRule> {
    migrations
        .iter()
        .flat_map(StorageMigration::rbac_rules)
        .collect()
}

/// How migrations write.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// At most so many writes a second (`--storage-migration-qps`); `0` does not pace.
    pub writes_per_second: f64,
    /// How many objects each page of the list holds (kube-storage-version-migrator's 500).
    pub page_size: u32,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            writes_per_second: DEFAULT_WRITES_PER_SECOND,
            page_size: 500,
        }
    }
}

/// The default pace: the storage migration KEP's bound for a migration's load on the API server.
pub const DEFAULT_WRITES_PER_SECOND: f64 = 10.0;

/// How a migration ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing to do: `status.storedVersions` was the storage version alone.
    UpToDate {
        /// The CRD's storage version.
        storage_version: String,
    },
    /// Every object was written again, and `status.storedVersions` is now the storage version
    /// alone.
    Migrated {
        /// The CRD's storage version.
        storage_version: String,
        /// The versions removed from `status.storedVersions`.
        from: Vec<String>,
        /// How many objects were written (not those deleted or changed meanwhile).
        written: u64,
    },
}

/// Why a migration failed.
#[derive(Debug, thiserror::Error)]
pub enum MigrationError {
    /// The kind's CRD is not installed.
    #[error("the CustomResourceDefinition {0} is not installed")]
    CrdNotFound(String),
    /// The CRD has no storage version (the API server refuses such CRDs).
    #[error("the CustomResourceDefinition {0} has no storage version")]
    NoStorageVersion(String),
    /// A request failed.
    #[error("storage version migration of {crd}: cannot {action}: {source}")]
    Api {
        /// The CRD.
        crd: String,
        /// What the request was for.
        action: &'static str,
        /// The error.
        #[source]
        source: kube::Error,
    },
}

#[cfg(feature = "migration")]
impl MigrationError {
    fn api(crd: &str, action: &'static str, source: kube::Error) -> Self {
        Self::Api {
            crd: crd.to_owned(),
            action,
            source,
        }
    }
}
