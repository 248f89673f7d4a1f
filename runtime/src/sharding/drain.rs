//! A member's side of a hand-over: it notices the [`DRAIN_LABEL`] the elected replica put on one
//! of its objects, and acknowledges it by removing that label and its [`SHARD_LABEL`].
//!
//! The [`Runner`](crate::controller::Runner) acknowledges in the object's reconcile slot, instead
//! of calling `reconcile`: kube's controller never runs two reconciles of one object at once, so
//! a reconcile of the object in flight has finished by then, and none starts afterwards (the
//! cache holds the drained version, or none once the watch sees the object leave the member's
//! selection). Only after the acknowledgement does the elected replica label the object for its
//! new member.

#[cfg(feature = "sharding")]
use std::hash::{DefaultHasher, Hash as _, Hasher as _};
#[cfg(feature = "sharding")]
use std::sync::Arc;
use std::time::Duration;

use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, Resource};
use serde_json::json;

use super::{DRAIN_LABEL, SHARD_LABEL};
use crate::cache::Cacheable;

/// The field manager of the label writes of sharding.
pub(super) const FIELD_MANAGER: &str = "operator-rs-sharding";

/// The Runner's trigger of the reconciled kind: a hash of what matters (`None`: every change).
#[cfg(feature = "sharding")]
type Change<K> = Arc<dyn Fn(&K) -> Option<u64> + Send + Sync>;

/// How soon a failed acknowledgement is tried again.
const RETRY_ACKNOWLEDGEMENT: Duration = Duration::from_secs(1);

/// Whether `object` is to leave its member.
pub(crate) fn is_draining<K: Resource>(object: &K) -> bool {
    object
        .meta()
        .labels
        .as_ref()
        .is_some_and(|labels| labels.contains_key(DRAIN_LABEL))
}

/// `change` (the reconciled kind's trigger of the Runner) that also triggers when the drain
/// label comes: label changes trigger nothing by default.
#[cfg(feature = "sharding")]
pub(crate) fn reconcile_on<K: Resource + 'static>(change: Change<K>) -> Change<K> {
    Arc::new(move |object: &K| {
        let mut hasher = DefaultHasher::new();
        (change(object)?, is_draining(object)).hash(&mut hasher);
        Some(hasher.finish())
    })
}

/// Hands `object` back to the elected replica through `api` (its kind's, in its namespace):
/// removes its shard and drain labels, provided it is still at the version that asked for the
/// drain. Never fails: the object is tried again shortly after an error (a conflict means a newer
/// version is on its way, which asks again).
pub(crate) async fn acknowledge<K: Cacheable>(api: Api<K>, controller: &str, object: &K) -> Action {
    let meta = object.meta();
    let name = meta.name.clone().unwrap_or_default();
    let patch = json!({
        "metadata": {
            "resourceVersion": meta.resource_version,
            "labels": { SHARD_LABEL: null, DRAIN_LABEL: null },
        }
    });
    let params = PatchParams {
        field_manager: Some(FIELD_MANAGER.to_owned()),
        ..PatchParams::default()
    };
    match api
        .patch_metadata(&name, &params, &Patch::Merge(patch))
        .await
    {
        Ok(_) => {
            tracing::debug!(controller, object = %name, "handed over to another member");
            Action::await_change()
        }
        Err(kube::Error::Api(status)) if status.is_not_found() => Action::await_change(),
        Err(error) => {
            tracing::debug!(controller, object = %name, "cannot hand over yet: {error}");
            Action::requeue(RETRY_ACKNOWLEDGEMENT)
        }
    }
}
