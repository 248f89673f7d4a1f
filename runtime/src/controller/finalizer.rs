//! [`finalizer`]: kube-runtime's finalizer helper, minus the reconciliation it costs.
//!
//! kube's `kube::runtime::finalizer::finalizer` adds a missing finalizer and returns, counting on
//! the watch event of that write to reconcile the object again: two reconciliations for every
//! new object, and a controller that must reconcile on changes of its own finalizers. This one
//! goes on with [`Event::Apply`] on the object as the API server returned it after adding the
//! finalizer, so a new object is reconciled once, and the [`Runner`](super::Runner) need not
//! react to finalizer changes at all. Everything else (the JSON patches with their `test`
//! operations, the clean-up before the finalizer is removed, the error type) is kube's.

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
/// An object that has the finalizer already is not written: no request.
pub async fn finalizer<K, F, Fut, E>(
    api: &Api<K>,
    name: &str,
    object: Arc<K>,
    reconcile: F,
) -> Result<Action, Error<E>>
where
    K: Resource + Clone + DeserializeOwned + Serialize + Debug,
    F: FnOnce(Event<K>) -> Fut,
    Fut: Future<Output = Result<Action, E>>,
    E: StdError + 'static,
{
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
                &object_name,
                &PatchParams::default(),
                &Patch::<K>::Json(json_patch::Patch(patch)),
            )
            .await
            .map_err(Error::RemoveFinalizer)?;
            Ok(action)
        }
        (None, false) => {
            // `test` the finalizers as read: Kubernetes does not deduplicate them, so a
            // concurrent change must fail the patch (and the reconciliation is retried).
            let current = object.finalizers();
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
                    &object_name,
                    &PatchParams::default(),
                    &Patch::<K>::Json(json_patch::Patch(patch)),
                )
                .await;
            let stored = match patched {
                Ok(stored) => stored,
                // The `test` failed: the cache that `object` comes from is behind the API server,
                // typically because this controller added the finalizer a moment ago and the
                // watch event has not come yet. Go on with the object as stored if it has the
                // finalizer, instead of failing and retrying until the cache catches up.
                Err(error) if is_conflict(&error) => match api.get(&object_name).await {
                    Ok(stored)
                        if stored.finalizers().iter().any(|f| f == name)
                            && stored.meta().deletion_timestamp.is_none() =>
                    {
                        stored
                    }
                    _ => return Err(Error::AddFinalizer(error)),
                },
                Err(error) => return Err(Error::AddFinalizer(error)),
            };
            reconcile(Event::Apply(Arc::new(stored)))
                .await
                .map_err(Error::ApplyFailed)
        }
        (None, true) => Ok(Action::await_change()),
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

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;

    use super::*;
    use crate::testing::fake::{FakeApiServer, Verb};

    const NAME: &str = "example.com/finalizer";

    fn config_map(finalizers: &[&str]) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some("a".to_owned()),
                namespace: Some("default".to_owned()),
                // As the API server stores it: no empty list.
                finalizers: (!finalizers.is_empty())
                    .then(|| finalizers.iter().map(|f| (*f).to_owned()).collect()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
    }

    /// Runs `finalizer` for `object` against `fake`; returns what the reconciliation got: the
    /// event and the finalizers of its object.
    async fn run(fake: &FakeApiServer, object: ConfigMap) -> (&'static str, Vec<String>) {
        let api = Api::<ConfigMap>::namespaced(fake.client(), "default");
        let seen = Mutex::new(None);
        finalizer(&api, NAME, Arc::new(object), |event| async {
            let (event, object) = match event {
                Event::Apply(object) => ("apply", object),
                Event::Cleanup(object) => ("cleanup", object),
            };
            *seen.lock().unwrap() = Some((event, object.finalizers().to_vec()));
            Ok::<_, std::io::Error>(Action::await_change())
        })
        .await
        .unwrap();
        seen.into_inner().unwrap().expect("the reconciliation ran")
    }

    #[tokio::test]
    async fn a_new_object_gets_the_finalizer_and_is_applied_in_the_same_call() {
        let fake = FakeApiServer::new();
        let stored = fake.put(&config_map(&[]));
        assert_eq!(run(&fake, stored).await, ("apply", vec![NAME.to_owned()]));
        let stored = fake.get::<ConfigMap>(Some("default"), "a").unwrap();
        assert_eq!(stored.finalizers(), [NAME]);
        assert_eq!(fake.writes(), 1);
    }

    #[tokio::test]
    async fn an_object_with_the_finalizer_is_not_written() {
        let fake = FakeApiServer::new();
        let stored = fake.put(&config_map(&[NAME]));
        assert_eq!(run(&fake, stored).await, ("apply", vec![NAME.to_owned()]));
        assert_eq!(fake.requests(), []);
    }

    /// The object from the cache lacks the finalizer that the API server already has: the
    /// patch's `test` fails, and the reconciliation goes on with the object as stored.
    #[tokio::test]
    async fn a_stale_object_is_read_again_rather_than_failed() {
        let fake = FakeApiServer::new();
        let stale = fake.put(&config_map(&["other"]));
        fake.put(&config_map(&["other", NAME]));
        let seen = run(&fake, stale).await;
        assert_eq!(seen, ("apply", vec!["other".to_owned(), NAME.to_owned()]));
        assert_eq!((fake.count(Verb::Patch), fake.count(Verb::Get)), (1, 1));
        let stored = fake.get::<ConfigMap>(Some("default"), "a").unwrap();
        assert_eq!(stored.finalizers(), ["other", NAME], "not added twice");
    }
}
