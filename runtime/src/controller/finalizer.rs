//! [`finalizer`]: kube-runtime's finalizer helper, minus the reconciliation it costs.
//!
//! kube's `kube::runtime::finalizer::finalizer` adds a missing finalizer and returns, counting on
//! the watch event of that write to reconcile the object again: two reconciliations for every
//! new object, and a controller that must reconcile on changes of its own finalizers. This one
//! goes on with [`Event::Apply`] on the object as the API server returned it after adding the
//! finalizer, so a new object is reconciled once, and the [`Runner`](super::Runner) need not
//! react to finalizer changes at all. It takes the controller's [`Context`] rather than an
//! `Api`, so that the objects its patches return are remembered until the cache has them
//! ([`Context::wrote`]): a reconciliation of the same object that starts before the watch event
//! of the finalizer patch sees the finalizer, and does not send the patch again. Everything else
//! (the JSON patches with their `test` operations, the clean-up before the finalizer is removed,
//! the error type) is kube's.

use std::error::Error as StdError;
use std::fmt::Debug;
use std::sync::Arc;

use json_patch::{AddOperation, PatchOperation, RemoveOperation, TestOperation, jsonptr};
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::Action;
pub use kube::runtime::finalizer::{Error, Event};
use kube::{Resource, ResourceExt as _};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{Context, Scope};

/// Runs `reconcile` for `object` behind the finalizer `name`, like kube's
/// `kube::runtime::finalizer::finalizer`:
///
/// - a live object with the finalizer: [`Event::Apply`];
/// - a live object without it: the finalizer is added (a JSON patch that fails if someone else
///   changed the finalizers meanwhile), then [`Event::Apply`] on the object as stored, in the
///   same reconciliation;
/// - an object being deleted that still has it: [`Event::Cleanup`], then the finalizer is removed
///   if the clean-up succeeded, so that Kubernetes can delete the object;
/// - an object being deleted without it: nothing to do.
///
/// An object that has the finalizer already is not written: no request. The patches go through
/// `ctx.client`, and the objects they return are remembered as the controller's own writes
/// ([`Context::wrote`]).
pub async fn finalizer<K, S, F, Fut, E>(
    ctx: &Context<S>,
    name: &str,
    object: Arc<K>,
    reconcile: F,
) -> Result<Action, Error<E>>
where
    K: Resource<DynamicType = ()>
        + Clone
        + DeserializeOwned
        + Serialize
        + Debug
        + Send
        + Sync
        + 'static,
    K::Scope: Scope,
    F: FnOnce(Event<K>) -> Fut,
    Fut: Future<Output = Result<Action, E>>,
    E: StdError + 'static,
{
    let api = <K::Scope as Scope>::api_in::<K>(&ctx.client, object.meta().namespace.as_deref());
    let index = object.finalizers().iter().position(|f| f == name);
    let deleting = object.meta().deletion_timestamp.is_some();
    let object_name = object.meta().name.clone().ok_or(Error::UnnamedObject)?;
    match (index, deleting) {
        (Some(_), false) => reconcile(Event::Apply(object))
            .await
            .map_err(Error::ApplyFailed),
        (Some(index), true) => {
            // The finalizer stays until the clean-up has succeeded.
            let action = reconcile(Event::Cleanup(object))
                .await
                .map_err(Error::CleanupFailed)?;
            let stored = remove(&api, &object_name, name, index).await?;
            ctx.wrote(&stored);
            Ok(action)
        }
        (None, false) => {
            let stored = add(&api, &object_name, name, object.finalizers()).await?;
            ctx.wrote(&stored);
            reconcile(Event::Apply(Arc::new(stored)))
                .await
                .map_err(Error::ApplyFailed)
        }
        (None, true) => Ok(Action::await_change()),
    }
}

/// Removes the finalizer `name`, at `index` of the finalizers of the object `object_name`;
/// returns the object as stored.
async fn remove<K, E>(
    api: &Api<K>,
    object_name: &str,
    name: &str,
    index: usize,
) -> Result<K, Error<E>>
where
    K: Resource + Clone + DeserializeOwned + Serialize + Debug,
    E: StdError + 'static,
{
    // `test` first: the index must still hold this finalizer, not someone else's.
    let path = pointer(&format!("/metadata/finalizers/{index}"))?;
    let patch = vec![
        PatchOperation::Test(TestOperation {
            path: path.clone(),
            value: name.into(),
        }),
        PatchOperation::Remove(RemoveOperation { path }),
    ];
    api.patch::<K>(
        object_name,
        &PatchParams::default(),
        &Patch::<K>::Json(json_patch::Patch(patch)),
    )
    .await
    .map_err(Error::RemoveFinalizer)
}

/// Adds the finalizer `name` to the object `object_name`, whose finalizers were `current` as
/// read; returns the object as stored.
async fn add<K, E>(
    api: &Api<K>,
    object_name: &str,
    name: &str,
    current: &[String],
) -> Result<K, Error<E>>
where
    K: Resource + Clone + DeserializeOwned + Serialize + Debug,
    E: StdError + 'static,
{
    // `test` the finalizers as read: Kubernetes does not deduplicate them, so a concurrent
    // change must fail the patch (and the reconciliation is retried).
    let patch = if current.is_empty() {
        vec![
            PatchOperation::Test(TestOperation {
                path: pointer("/metadata/finalizers")?,
                value: Value::Null,
            }),
            PatchOperation::Add(AddOperation {
                path: pointer("/metadata/finalizers")?,
                value: vec![name].into(),
            }),
        ]
    } else {
        vec![
            PatchOperation::Test(TestOperation {
                path: pointer("/metadata/finalizers")?,
                value: current.into(),
            }),
            PatchOperation::Add(AddOperation {
                path: pointer("/metadata/finalizers/-")?,
                value: name.into(),
            }),
        ]
    };
    let patched = api
        .patch::<K>(
            object_name,
            &PatchParams::default(),
            &Patch::<K>::Json(json_patch::Patch(patch)),
        )
        .await;
    match patched {
        Ok(stored) => Ok(stored),
        // The `test` failed: the cache that the object comes from is behind the API server in
        // a way that `Context::wrote` could not make up for (someone else added the finalizer:
        // another replica of the manager before a change of leader). Go on with the object as
        // stored if it has the finalizer, instead of failing and retrying until the cache
        // catches up.
        Err(error) if is_conflict(&error) => match api.get(object_name).await {
            Ok(stored)
                if stored.finalizers().iter().any(|f| f == name)
                    && stored.meta().deletion_timestamp.is_none() =>
            {
                Ok(stored)
            }
            _ => Err(Error::AddFinalizer(error)),
        },
        Err(error) => Err(Error::AddFinalizer(error)),
    }
}

/// A JSON patch whose `test` failed (`422`), or a conflict (`409`).
fn is_conflict(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status) if status.code == 422 || status.code == 409)
}

fn pointer<E>(path: &str) -> Result<jsonptr::PointerBuf, Error<E>>
where
    E: StdError + 'static,
{
    jsonptr::PointerBuf::parse(path).map_err(|_| Error::InvalidFinalizer)
}
