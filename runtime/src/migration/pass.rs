//! One migration of one CRD's objects to its storage version: read the CRD; if
//! `status.storedVersions` names other versions than the storage version, write every object of
//! the kind again, unchanged, page by page and at the given pace, which makes the API server
//! store it in the storage version; then set `status.storedVersions` to the storage version.
//!
//! **The write.** A write that changes nothing is enough: the API server (etcd3's
//! `GuaranteedUpdate` in k8s.io/apiserver's `storage/etcd3/store.go`) compares the object it
//! would store, encoded in the *current* storage version, with the bytes stored, and skips the
//! write only when they are equal, which they are not for an object stored in an older version.
//! So an update with the object as read (what the Kubernetes docs' "Upgrade existing objects to
//! a new stored version" and kube-storage-version-migrator's `migrateOneItem` do), an empty merge
//! patch or an empty apply all store it again, and none costs an etcd write for an object
//! already in the storage version. This pass sends what Kubernetes' own storage version migration
//! controller sends (`pkg/controller/storageversionmigrator`, since 1.30): a server-side apply of
//! nothing but the object's `apiVersion`, `kind`, `uid` and `resourceVersion`. The last two are
//! preconditions: a `409 Conflict` means the object was written after it was listed (so after
//! the storage version moved: it is stored in it already) or deleted and made again, and a `404`
//! that it was deleted; either way there is nothing left to do for it, with no read and no retry.
//! Unlike an update, the apply sends no copy of the object that could undo a concurrent change.
//!
//! **Resuming.** A pass records no progress: a pass stopped midway (the process killed,
//! leadership lost) is simply made again from the start. Objects it wrote already are not
//! written again by the API server (the comparison above), so redoing the part done costs one
//! request per object and no storage write. Recording where a pass stopped (a continue token)
//! would save those requests only until etcd compacts the list's revision (5 minutes by default,
//! then the token is `410 Gone`), and would need write access to one more object.
//!
//! **Trimming.** `status.storedVersions` is only set to the storage version if the CRD's
//! `metadata.generation` is still what it was when the pass started (as Kubernetes' own
//! controller requires): if its spec changed meanwhile, for instance the storage version moved
//! again, objects may have been written in another version, and the pass starts again. The
//! status write carries the CRD's `resourceVersion`: a concurrent write makes it conflict, and
//! the check is made again on the CRD as it is then.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{
    Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams, PostParams, ResourceExt as _,
};
use serde_json::json;

use super::pace::Pace;
use super::{MigrationError, Options, Outcome};
use crate::metrics::ResourceMigrationMetrics;

/// The field manager of the migration's writes (which own no field: the apply sends none).
pub const FIELD_MANAGER: &str = "operator-rs-storage-version-migrator";

/// Migrates the objects of the CRD `crd_name` to its storage version if `status.storedVersions`
/// names other versions too, as [the module](self) describes, recording into `metrics`.
pub(super) async fn migrate(
    client: &Client,
    crd_name: &str,
    options: &Options,
    metrics: &ResourceMigrationMetrics,
) -> Result<Outcome, MigrationError> {
    let crds = Api::<CustomResourceDefinition>::all(client.clone());
    let mut pace = Pace::new(options.writes_per_second);
    loop {
        let crd = get_crd(&crds, crd_name).await?;
        let target = Target::of(&crd, crd_name)?;
        let older: Vec<String> = target
            .stored_versions
            .iter()
            .filter(|version| **version != target.storage_version)
            .cloned()
            .collect();
        if older.is_empty() {
            tracing::debug!(crd = crd_name, storage_version = %target.storage_version, "no storage version migration needed");
            return Ok(Outcome::UpToDate {
                storage_version: target.storage_version,
            });
        }
        tracing::info!(
            crd = crd_name,
            from = ?older,
            to = %target.storage_version,
            "storage version migration started: every object is written again in the storage version"
        );
        let written = rewrite_all(client, crd_name, &target, &mut pace, options, metrics).await?;
        if trim(&crds, crd_name, &target).await? {
            tracing::info!(
                crd = crd_name,
                written,
                storage_version = %target.storage_version,
                "storage version migration done: status.storedVersions is the storage version alone"
            );
            return Ok(Outcome::Migrated {
                storage_version: target.storage_version,
                from: older,
                written,
            });
        }
        tracing::info!(
            crd = crd_name,
            "the CRD's spec changed during the storage version migration: migrating again"
        );
    }
}

/// What a pass migrates, as read from the CRD when it starts.
struct Target {
    storage_version: String,
    stored_versions: Vec<String>,
    generation: Option<i64>,
    resource: ApiResource,
    namespaced: bool,
}

impl Target {
    fn of(crd: &CustomResourceDefinition, crd_name: &str) -> Result<Self, MigrationError> {
        let spec = &crd.spec;
        let storage_version = spec
            .versions
            .iter()
            .find(|version| version.storage)
            .map(|version| version.name.clone())
            .ok_or_else(|| MigrationError::NoStorageVersion(crd_name.to_owned()))?;
        let api_version = format!("{}/{storage_version}", spec.group);
        let resource = ApiResource {
            group: spec.group.clone(),
            version: storage_version.clone(),
            api_version,
            kind: spec.names.kind.clone(),
            plural: spec.names.plural.clone(),
        };
        let stored_versions = crd
            .status
            .as_ref()
            .and_then(|status| status.stored_versions.clone())
            .unwrap_or_default();
        Ok(Self {
            storage_version,
            stored_versions,
            generation: crd.metadata.generation,
            resource,
            namespaced: spec.scope == "Namespaced",
        })
    }
}

async fn get_crd(
    crds: &Api<CustomResourceDefinition>,
    crd_name: &str,
) -> Result<CustomResourceDefinition, MigrationError> {
    match crds.get(crd_name).await {
        Ok(crd) => Ok(crd),
        Err(kube::Error::Api(status)) if status.code == 404 => {
            Err(MigrationError::CrdNotFound(crd_name.to_owned()))
        }
        Err(source) => Err(MigrationError::api(crd_name, "read the CRD", source)),
    }
}

/// Writes every object of the kind again, in pages; returns how many it wrote.
async fn rewrite_all(
    client: &Client,
    crd_name: &str,
    target: &Target,
    pace: &mut Pace,
    options: &Options,
    metrics: &ResourceMigrationMetrics,
) -> Result<u64, MigrationError> {
    let all = Api::<DynamicObject>::all_with(client.clone(), &target.resource);
    let mut token: Option<String> = None;
    let mut written = 0;
    loop {
        let mut params = ListParams::default().limit(options.page_size);
        if let Some(token) = &token {
            params = params.continue_token(token);
        }
        let page = match all.list(&params).await {
            Ok(page) => page,
            // The list's revision is compacted (the pass was slower than etcd's compaction):
            // list again. What was written already costs a request each, no storage write.
            Err(kube::Error::Api(status)) if status.code == 410 && token.is_some() => {
                tracing::warn!(
                    crd = crd_name,
                    "the continue token of the list expired (410 Gone): listing again from the start"
                );
                token = None;
                continue;
            }
            Err(source) => return Err(MigrationError::api(crd_name, "list the objects", source)),
        };
        // `remainingItemCount`: how many objects the next pages hold (when the API server says).
        let after_page = page
            .metadata
            .remaining_item_count
            .and_then(|count| u64::try_from(count).ok())
            .unwrap_or(0);
        let mut left = u64::try_from(page.items.len()).unwrap_or(u64::MAX);
        for object in &page.items {
            metrics.set_remaining(left + after_page);
            pace.wait().await;
            if rewrite(client, crd_name, target, object).await? {
                written += 1;
                metrics.migrated();
            }
            left -= 1;
        }
        metrics.set_remaining(after_page);
        tracing::info!(
            crd = crd_name,
            written,
            remaining = after_page,
            "storage version migration progress"
        );
        match page.metadata.continue_ {
            Some(next) if !next.is_empty() => token = Some(next),
            _ => return Ok(written),
        }
    }
}

/// Writes `object` again, unchanged, so that the API server stores it in the storage version
/// (see [the module](self)); whether it was written (not deleted or changed meanwhile).
async fn rewrite(
    client: &Client,
    crd_name: &str,
    target: &Target,
    object: &DynamicObject,
) -> Result<bool, MigrationError> {
    let name = object.name_any();
    let api: Api<DynamicObject> = match object.namespace() {
        Some(namespace) if target.namespaced => {
            Api::namespaced_with(client.clone(), &namespace, &target.resource)
        }
        _ => Api::all_with(client.clone(), &target.resource),
    };
    let config = json!({
        "apiVersion": target.resource.api_version,
        "kind": target.resource.kind,
        "metadata": {
            "name": name,
            "uid": object.uid(),
            "resourceVersion": object.resource_version(),
        },
    });
    let params = PatchParams::apply(FIELD_MANAGER);
    match api.patch(&name, &params, &Patch::Apply(&config)).await {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(status)) if status.code == 404 || status.code == 409 => {
            tracing::debug!(
                crd = crd_name,
                name,
                namespace = object.namespace(),
                reason = %status.reason,
                "not written again: deleted or changed since it was listed"
            );
            Ok(false)
        }
        Err(source) => Err(MigrationError::api(
            crd_name,
            "write an object again",
            source,
        )),
    }
}

/// Sets `status.storedVersions` to the storage version, unless the CRD's spec changed since
/// `target` was read (then `false`: the pass must be made again).
async fn trim(
    crds: &Api<CustomResourceDefinition>,
    crd_name: &str,
    target: &Target,
) -> Result<bool, MigrationError> {
    loop {
        let mut crd = get_crd(crds, crd_name).await?;
        if crd.metadata.generation != target.generation {
            return Ok(false);
        }
        let status = crd.status.get_or_insert_with(Default::default);
        status.stored_versions = Some(vec![target.storage_version.clone()]);
        // `crd` carries the resourceVersion read: a concurrent write makes this conflict.
        match crds
            .replace_status(crd_name, &PostParams::default(), &crd)
            .await
        {
            Ok(_) => return Ok(true),
            Err(kube::Error::Api(status)) if status.code == 409 => continue,
            Err(source) => {
                return Err(MigrationError::api(
                    crd_name,
                    "set status.storedVersions",
                    source,
                ));
            }
        }
    }
}
