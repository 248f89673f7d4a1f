//! [`Context`]: what a `reconcile` function gets besides the object.

use std::sync::Arc;

use kube::api::{Patch, PatchParams};
use kube::core::{ClusterResourceScope, NamespaceResourceScope};
use kube::{Api, Client, Resource};
use serde_json::{Value, json};

use super::events::{Event, EventType, Recorder, Reporter};
use crate::cache::{Cache, Cacheable, Caches};
use crate::manager::namespaces::WatchNamespaces;

/// What a `reconcile` function gets besides the object: the client, the caches of the
/// controller's watches, an Event recorder, and the controller's own `state` (built once in
/// `setup`, e.g. an image name read from the environment).
///
/// Tests build one with [`Context::new`] around the mocked client of `testing::reconcile_with`
/// (cargo feature `testing`): it has no caches, so its reads go to the API server.
pub struct Context<S = ()> {
    /// Client for the Kubernetes API server: from the kubeconfig when run locally, from the pod's
    /// service account (with the permissions of `config/rbac/`) in the cluster.
    pub client: Client,
    /// Publishes Events (`kubectl describe`, `kubectl events`) as this controller, off the
    /// workers' path. Kept for the controller's lifetime because it remembers recent Events: a
    /// repeated Event becomes a count on the first one instead of a new object. The runtime's
    /// [`Recorder`], which queues Events for a sender of their own and remembers at most 4,096
    /// of them, rather than kube's, which sends each in the reconcile and remembers every Event
    /// of the last 6 minutes.
    pub recorder: Recorder,
    /// The controller's name: its logs' `controller` field, its Events' `reportingController`,
    /// and the field manager of its server-side applies.
    pub name: &'static str,
    /// The controller's own state.
    pub state: S,
    /// The caches of the controller's watches, by kind (none in a context from [`Context::new`]).
    caches: Caches,
    /// The member this controller reconciles for with `--sharding`: what
    /// [`Context::apply_owned`] labels the owned objects with, so that they follow their owner.
    #[doc(hidden)] // Public for operator-rs-testing's tests/runtime, not part of the API.
    pub shard: Option<String>,
}

impl<S> Context<S> {
    /// A context for the controller `name` talking to the API server through `client`.
    ///
    /// It has no caches: [`Context::get`] and [`Context::apply_owned`] read from the API server,
    /// and it remembers none of the controller's writes (see [`Context::wrote`]). The
    /// [`Runner`](super::Runner) builds the context of a running controller, which has both.
    pub fn new(client: Client, name: &'static str, state: S) -> Self {
        Self::with_caches(client, name, state, Caches::default())
    }

    #[doc(hidden)] // Public for operator-rs-testing's tests/runtime, not part of the API.
    pub fn with_caches(client: Client, name: &'static str, state: S, caches: Caches) -> Self {
        let reporter = Reporter {
            controller: name.to_owned(),
            instance: None,
        };
        Self {
            recorder: Recorder::new(client.clone(), reporter),
            client,
            name,
            state,
            caches,
            shard: None,
        }
    }

    /// The cache of `K` that the controller's watches fill: the kind it reconciles, the kinds it
    /// owns, watches or caches ([`Runner::owns`](super::Runner::owns),
    /// [`Runner::watches`](super::Runner::watches), [`Runner::caches`](super::Runner::caches)).
    /// `None` for another kind, and in a context from [`Context::new`].
    pub fn cache<K: Cacheable>(&self) -> Option<Cache<K>> {
        self.caches.get::<K>()
    }

    /// The object `name` of kind `K` in `namespace` (`None` for a cluster-scoped kind), from the
    /// cache of `K` once it has synced (no request), and otherwise from the API server: for a
    /// kind the controller does not cache, in a context from [`Context::new`], and while the
    /// cache is still listing at startup. controller-runtime's `client.Get`.
    ///
    /// The cache is read-your-writes: an object this controller wrote
    /// ([`Context::apply_owned`], [`Context::apply_status`], [`Context::wrote`]) is returned as
    /// the write returned it until the watch brings that version. `None`: the object does not
    /// exist, or (from a cache) the controller's watch of `K` does not select it (its label
    /// selector, `WATCH_NAMESPACE`).
    pub async fn get<K>(
        &self,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<Arc<K>>, kube::Error>
    where
        K: Cacheable,
        K::Scope: Scope,
    {
        if let Some(cache) = self.cache::<K>()
            && cache.is_synced()
        {
            return Ok(cache.get(namespace, name));
        }
        let api = <K::Scope as Scope>::api_in::<K>(&self.client, namespace);
        Ok(api.get_opt(name).await?.map(Arc::new))
    }

    /// Takes note of `object` as the API server returned it after a write of this controller,
    /// so that the cache of its kind returns it, instead of the older version it has, until its
    /// watch has brought that write: read-your-writes. Without it, a reconciliation that starts
    /// before the watch event of the write arrives (another trigger of the same object, like a
    /// status change of the Deployment it owns) would act on what the controller has just
    /// changed, and write it again (a finalizer patch that the API server refuses, a status that
    /// is already there), or take the object it has just created for missing.
    ///
    /// [`Context::apply_status`], [`Context::apply_owned`] and
    /// [`finalizer`](super::finalizer::finalizer) call it; call it yourself after writing an
    /// object through an `Api` of your own. It keeps objects of the kinds the controller caches
    /// only, and only until the cache has caught up with them (by `resourceVersion`), so it holds
    /// the few writes on their way through the watch, not a second cache. It does nothing in a
    /// context built with [`Context::new`].
    pub fn wrote<K: Cacheable>(&self, object: &K) {
        if let Some(cache) = self.cache::<K>() {
            cache.wrote(object);
        }
    }

    /// The object `reconcile` gets: `cached`, or this controller's own newer write of it.
    #[doc(hidden)] // Public for operator-rs-testing's tests/runtime, not part of the API.
    pub fn latest<K: Cacheable>(&self, cached: Arc<K>) -> Arc<K> {
        match self.cache::<K>() {
            Some(cache) => cache.latest(cached),
            None => cached,
        }
    }

    /// Writes `status` (a JSON object with the status fields this controller owns, e.g.
    /// `json!({ "conditions": conditions })`) to the status subresource of `object`, by server-side
    /// apply as this controller's field manager, and returns the object as stored.
    ///
    /// The patch holds only the fields the controller sets, so it never overwrites fields that
    /// others own, and it is forced: a controller owns its fields even when someone else has set
    /// them (the Kubernetes API conventions ask controllers to force). Fields the controller
    /// applied before but leaves out now are removed, so apply every field you own every time.
    ///
    /// Nothing is sent when the status of `object` already has every field of `status` with
    /// the same value ([`is_applied`](super::is_applied)): `object` itself is returned. So a
    /// reconcile that finds nothing changed writes nothing, and a write never triggers another
    /// reconciliation for nothing. (Like [`Context::apply_owned`], it cannot see a field applied
    /// before and left out now, which the apply would remove.)
    ///
    /// The object returned is remembered until the cache has it ([`Context::wrote`]): a
    /// reconciliation that starts before then sees the status written, and does not write it
    /// again.
    pub async fn apply_status<K>(&self, object: &K, status: Value) -> Result<K, kube::Error>
    where
        K: Cacheable,
        K::Scope: Scope,
    {
        let current = serde_json::to_value(object).map(|mut object| object["status"].take());
        if current.is_ok_and(|current| super::is_applied(&current, &status)) {
            return Ok(object.clone());
        }
        let api =
            <K::Scope as Scope>::api_in::<K>(&self.client, object.meta().namespace.as_deref());
        let patch = json!({
            "apiVersion": K::api_version(&()),
            "kind": K::kind(&()),
            "status": status,
        });
        let name = object.meta().name.as_deref().unwrap_or_default();
        let params = PatchParams::apply(self.name).force();
        let stored = api
            .patch_status(name, &params, &Patch::Apply(&patch))
            .await?;
        self.wrote(&stored);
        Ok(stored)
    }

    /// Publishes an Event about `object` as this controller: `kubectl describe` and `kubectl
    /// events` show it. `reason` is a short UpperCamelCase word (`Created`, `Scaled`), `action`
    /// what the controller did or failed to do (`Reconcile`), `note` a sentence for humans.
    ///
    /// In a controller run by the [`Runner`](super::Runner) this does not wait for the API
    /// server: the Event is queued and sent by the controller's recorder beside the workers, and
    /// a repeat of a recent Event becomes a count on it (see [`Recorder`]). Like
    /// controller-runtime's recorder, it never fails a reconcile: a failure to publish is logged.
    /// In a context from [`Context::new`] (tests), the Event is sent before this returns.
    pub async fn publish<K>(
        &self,
        object: &K,
        type_: EventType,
        reason: &str,
        action: &str,
        note: impl Into<String>,
    ) where
        K: Resource<DynamicType = ()>,
    {
        let event = Event {
            type_,
            reason: reason.to_owned(),
            note: Some(note.into()),
            action: action.to_owned(),
            secondary: None,
        };
        self.recorder.publish(&event, &object.object_ref(&())).await;
    }
}

/// The name of `object` as `kubectl` shows it: `namespace/name` for a namespaced object, `name`
/// for a cluster-scoped one. For log lines and error messages.
pub fn qualified_name<K: Resource>(object: &K) -> String {
    let meta = object.meta();
    let name = meta.name.as_deref().unwrap_or_default();
    match meta.namespace.as_deref() {
        Some(namespace) => format!("{namespace}/{name}"),
        None => name.to_owned(),
    }
}

/// How the watches of a kind are spread over namespaces, by the kind's scope: namespaced kinds
/// follow `WATCH_NAMESPACE`, cluster-scoped kinds are always watched as a whole.
///
/// Implemented for kube's two scope types; you never implement it yourself.
pub trait Scope: Sized {
    /// Whether objects of the scope live in namespaces.
    const NAMESPACED: bool;

    /// One `Api` per watch of the kind `K`.
    fn apis<K>(namespaces: &WatchNamespaces, client: &Client) -> Vec<Api<K>>
    where
        K: Resource<Scope = Self>,
        K::DynamicType: Default;

    /// The `Api` of `K` in `namespace` (`None`: every namespace).
    fn api_in<K>(client: &Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<Scope = Self>,
        K::DynamicType: Default;
}

impl Scope for NamespaceResourceScope {
    const NAMESPACED: bool = true;

    fn apis<K>(namespaces: &WatchNamespaces, client: &Client) -> Vec<Api<K>>
    where
        K: Resource<Scope = Self>,
        K::DynamicType: Default,
    {
        namespaces.apis(client)
    }

    fn api_in<K>(client: &Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<Scope = Self>,
        K::DynamicType: Default,
    {
        match namespace {
            Some(namespace) => Api::namespaced(client.clone(), namespace),
            None => Api::all(client.clone()),
        }
    }
}

impl Scope for ClusterResourceScope {
    const NAMESPACED: bool = false;

    fn apis<K>(_: &WatchNamespaces, client: &Client) -> Vec<Api<K>>
    where
        K: Resource<Scope = Self>,
        K::DynamicType: Default,
    {
        vec![Api::all(client.clone())]
    }

    fn api_in<K>(client: &Client, _: Option<&str>) -> Api<K>
    where
        K: Resource<Scope = Self>,
        K::DynamicType: Default,
    {
        Api::all(client.clone())
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;

    use super::*;

    fn config_map(name: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                namespace: Some("default".to_owned()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
    }

    #[test]
    fn qualified_names_are_as_kubectl_shows_them() {
        assert_eq!(qualified_name(&config_map("a")), "default/a");
        let namespace = k8s_openapi::api::core::v1::Namespace {
            metadata: ObjectMeta {
                name: Some("ops".to_owned()),
                ..ObjectMeta::default()
            },
            ..Default::default()
        };
        assert_eq!(qualified_name(&namespace), "ops");
    }

    #[tokio::test]
    async fn namespaced_kinds_follow_watch_namespace() {
        let client = crate::manager::client::offline();
        let only = WatchNamespaces::Only(vec!["a".into(), "b".into()]);
        let apis = <NamespaceResourceScope as Scope>::apis::<ConfigMap>(&only, &client);
        let namespaces: Vec<_> = apis.iter().map(|api| api.namespace()).collect();
        assert_eq!(namespaces, [Some("a"), Some("b")]);

        use k8s_openapi::api::core::v1::Namespace;
        let apis = <ClusterResourceScope as Scope>::apis::<Namespace>(&only, &client);
        assert_eq!(apis.len(), 1);
        assert_eq!(apis[0].namespace(), None);
    }
}
