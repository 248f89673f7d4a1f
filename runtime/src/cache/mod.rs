//! The caches a controller reads from, like controller-runtime's informer cache: the objects its
//! watches bring, kept up to date by their events, so that `reconcile` and the mappers of
//! watches read them without a request to the API server.
//!
//! The [`Runner`](crate::controller::Runner) of a controller fills one [`Cache`] per kind it
//! watches: the kind it reconciles, the kinds it owns
//! ([`owns`](crate::controller::Runner::owns)), the kinds it maps to its objects
//! ([`watches`](crate::controller::Runner::watches)), and the kinds it only reads
//! ([`caches`](crate::controller::Runner::caches); `PartialObjectMeta<K>` for their metadata
//! alone). `reconcile` reads them through its context
//! ([`Context::cache`](crate::controller::Context::cache), [`Context::get`](crate::controller::Context::get)),
//! `setup` through [`Runner::cache`](crate::controller::Runner::cache), e.g. to look up an index
//! in the mapper of a watch.
//!
//! ```no_run
//! # use std::sync::Arc;
//! # use k8s_openapi::api::apps::v1::Deployment;
//! # use kube::runtime::controller::Action;
//! # use operator_rs_runtime::controller::Context;
//! async fn reconcile(deployment: Arc<Deployment>, ctx: Arc<Context>) -> Result<Action, kube::Error> {
//!     // Every Deployment of the namespace whose labels have app=web, from the cache.
//!     let selector = [("app", "web")].into_iter().collect();
//!     let deployments = ctx.cache::<Deployment>().expect("cached: the controller's own kind");
//!     for other in deployments.list_selected(deployment.metadata.namespace.as_deref(), &selector) {
//!         tracing::info!(name = other.metadata.name, "a sibling");
//!     }
//!     Ok(Action::await_change())
//! }
//! ```
//!
//! What a cache holds is what its watch selects (its `watcher::Config`: a label selector keeps it
//! small), in the namespaces of `WATCH_NAMESPACE`, without `managedFields` and the `kubectl apply`
//! annotation ([`strip_for_cache`]): no controller reads them, and they are often bigger than the
//! rest of the object. Reads are read-your-writes: an object the controller wrote
//! ([`Context::wrote`](crate::controller::Context::wrote) and the writes of the `Context` that
//! call it) is returned as written until the watch brings that version.
//!
//! An index ([`Runner::index`](crate::controller::Runner::index), controller-runtime's
//! `IndexField`) gives each object of a kind a list of keys, and [`Cache::indexed`] finds the
//! objects by key without going through them all: the custom resources that name a Secret, for a
//! watch of Secrets to reconcile.

mod compact;
mod index;
mod written;

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use futures::FutureExt as _;
use kube::Resource;
use kube::core::{Selector, SelectorExt as _};
use kube::runtime::reflector::{self, ObjectRef, Store, store::Writer};

use compact::Compact;
use kube::runtime::watcher;
use serde::Serialize;
use serde::de::DeserializeOwned;

use index::{Index, KeyFn};
pub(crate) use written::Written;

/// The annotation in which `kubectl apply` keeps the object it last applied: a second copy of the
/// object that no controller reads.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// What the caches keep of an object: everything but `managedFields` and the `kubectl apply`
/// annotation ([`LAST_APPLIED`]), which no controller reads and which often take more room than
/// the object itself.
pub fn strip_for_cache<K: Resource>(object: &mut K) {
    let meta = object.meta_mut();
    meta.managed_fields = None;
    if let Some(annotations) = meta.annotations.as_mut() {
        annotations.remove(LAST_APPLIED);
    }
}

/// What a cache can hold: a typed Kubernetes object (k8s-openapi's kinds, a project's custom
/// resources, `PartialObjectMeta<K>` for the metadata of a `K` alone). Implemented for every such
/// type; you never implement it yourself.
pub trait Cacheable:
    Resource<DynamicType = ()> + Clone + DeserializeOwned + Serialize + Debug + Send + Sync + 'static
{
}

impl<K> Cacheable for K where
    K: Resource<DynamicType = ()>
        + Clone
        + DeserializeOwned
        + Serialize
        + Debug
        + Send
        + Sync
        + 'static
{
}

/// The objects of kind `K` that a controller's watches hold, in every namespace it watches.
///
/// Cloning gives another handle to the same cache. Reads return what the watches have brought so
/// far: nothing before the cache has synced ([`Cache::is_synced`]; [`Context::get`](crate::controller::Context::get)
/// reads from the API server until then). `namespace` arguments are `None` for every namespace
/// (and for cluster-scoped kinds).
///
/// The reconciled kind is kept as structs (kube's `Controller` reads them); the other kinds are
/// kept compact, as JSON that a read decodes (a Deployment: 0.6 KB of memory instead of 7.9 KB,
/// tens of microseconds per read), so a lookup by name or index is cheap but a list or a
/// selection decodes every object of the namespace: for a lookup on every reconciliation among
/// many objects, declare an index.
pub struct Cache<K: Cacheable> {
    inner: Arc<Inner<K>>,
}

impl<K: Cacheable> Clone for Cache<K> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
        }
    }
}

struct Inner<K: Cacheable> {
    /// One store per watch of the kind: per watched namespace, or one for all of them.
    parts: RwLock<Vec<Part<K>>>,
    /// The indexes declared for the kind: each part keeps its own of each.
    indexes: Mutex<Vec<(&'static str, KeyFn<K>)>>,
    /// The controller's writes of objects of the kind that the watches have not brought yet.
    written: Written<K>,
    /// Whether a watch fills the cache (a cache nothing fills would stay empty).
    watched: AtomicBool,
}

/// The objects of one watch: its store, and its indexes.
struct Part<K: Cacheable> {
    /// The namespace it watches; `None`: every namespace.
    namespace: Option<String>,
    store: Storage<K>,
    indexes: Vec<Arc<Index<K>>>,
}

/// Where the objects of one watch are kept: kube's reflector store for the reconciled kind,
/// which kube's `Controller` reads, and a [`Compact`] one for the others, at a fraction of the
/// memory.
#[derive(Clone)]
enum Storage<K: Cacheable> {
    Structs(Store<K>),
    Compact(Arc<Compact<K>>),
}

impl<K: Cacheable> Storage<K> {
    fn is_listed(&self) -> bool {
        match self {
            Storage::Structs(store) => {
                let ready = store.wait_until_ready().now_or_never();
                ready.is_some_and(|ready| ready.is_ok())
            }
            Storage::Compact(store) => store.is_listed(),
        }
    }

    fn get(&self, namespace: Option<&str>, name: &str) -> Option<Arc<K>> {
        match self {
            Storage::Structs(store) => {
                let reference = ObjectRef::<K>::new(name);
                let reference = match namespace {
                    Some(namespace) => reference.within(namespace),
                    None => reference,
                };
                store.get(&reference)
            }
            Storage::Compact(store) => store.get(namespace, name),
        }
    }

    fn select(&self, matches: impl Fn(&K) -> bool) -> Vec<Arc<K>> {
        match self {
            Storage::Structs(store) => store.state_filter(matches),
            Storage::Compact(store) => store.select(matches),
        }
    }
}

impl<K: Cacheable> Part<K> {
    /// Whether the part may hold objects of `namespace` (`None`: of any namespace).
    fn covers(&self, namespace: Option<&str>) -> bool {
        match (&self.namespace, namespace) {
            (Some(mine), Some(namespace)) => mine == namespace,
            _ => true,
        }
    }
}

/// Whether `object` is in `namespace` (`None`: any namespace).
fn in_namespace<K: Resource>(object: &K, namespace: Option<&str>) -> bool {
    namespace.is_none_or(|namespace| object.meta().namespace.as_deref() == Some(namespace))
}

impl<K: Cacheable> Cache<K> {
    /// An empty cache, which no watch fills yet; the [`Runner`](crate::controller::Runner) makes
    /// them.
    pub(crate) fn new() -> Self {
        Self {
            inner: Arc::new(Inner {
                parts: RwLock::default(),
                indexes: Mutex::default(),
                written: Written::default(),
                watched: AtomicBool::new(false),
            }),
        }
    }

    fn parts(&self) -> std::sync::RwLockReadGuard<'_, Vec<Part<K>>> {
        self.inner
            .parts
            .read()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether every watch of the kind has listed its objects once: from then on the cache says
    /// what exists (an object it does not have does not exist, or is not selected by the watch).
    pub fn is_synced(&self) -> bool {
        let parts = self.parts();
        !parts.is_empty() && parts.iter().all(|part| part.store.is_listed())
    }

    /// How many of the controller's writes of this kind the cache has not seen yet (see
    /// [`Written`]): some while writes are on their way through the watch, none once it has
    /// caught up. A number that stays above zero is a leak.
    #[doc(hidden)] // Public for operator-rs-testing's tests/runtime, not part of the API.
    pub fn unseen_writes(&self) -> usize {
        self.inner.written.len()
    }

    /// The object `name` in `namespace`, or `None` if the cache does not have it.
    pub fn get(&self, namespace: Option<&str>, name: &str) -> Option<Arc<K>> {
        match self.watched(namespace, name) {
            Some(cached) => Some(self.inner.written.latest(cached)),
            // Written by the controller a moment ago, and not in the cache yet.
            None => self
                .inner
                .written
                .pending(namespace)
                .into_iter()
                .find(|written| written.meta().name.as_deref() == Some(name)),
        }
    }

    /// The object `name` in `namespace` as the watches brought it, without the controller's
    /// writes.
    fn watched(&self, namespace: Option<&str>, name: &str) -> Option<Arc<K>> {
        self.parts()
            .iter()
            .filter(|part| part.covers(namespace))
            .find_map(|part| part.store.get(namespace, name))
    }

    /// The objects in `namespace` (`None`: in every namespace).
    pub fn list(&self, namespace: Option<&str>) -> Vec<Arc<K>> {
        self.select(namespace, |_| true)
    }

    /// The objects in `namespace` whose labels `selector` selects, e.g. `[("app",
    /// "web")].into_iter().collect()` or a `LabelSelector` (`Selector::try_from`); see
    /// [`kube::core::Selector`].
    pub fn list_selected(&self, namespace: Option<&str>, selector: &Selector) -> Vec<Arc<K>> {
        let labels = |object: &K| {
            selector.matches(object.meta().labels.as_ref().unwrap_or(&Default::default()))
        };
        self.select(namespace, labels)
    }

    /// The objects that `owner` owns: those with an owner reference to its uid, in its
    /// namespace. A scan of the namespace: for a lookup on every reconciliation over many
    /// objects, an index by owner is faster ([`Cache::indexed`]).
    pub fn owned_by<O: Resource>(&self, owner: &O) -> Vec<Arc<K>> {
        let Some(uid) = owner.meta().uid.as_deref() else {
            return Vec::new();
        };
        let owned = |object: &K| {
            let references = object.meta().owner_references.iter().flatten();
            references.into_iter().any(|reference| reference.uid == uid)
        };
        self.select(owner.meta().namespace.as_deref(), owned)
    }

    /// The objects in `namespace` to which the index `index` gives the key `key`, as the key
    /// function given to [`Runner::index`](crate::controller::Runner::index) computes them.
    ///
    /// # Panics
    ///
    /// When no index of that name was declared for the kind: a mistake in the controller's code,
    /// which shows on the first lookup.
    pub fn indexed(&self, namespace: Option<&str>, index: &str, key: &str) -> Vec<Arc<K>> {
        let keys = self.index_keys(index).unwrap_or_else(|| {
            panic!(
                "no index {index:?} of {} declared: call Runner::index in setup",
                K::kind(&())
            )
        });
        let mut found = Vec::new();
        for part in self.parts().iter().filter(|part| part.covers(namespace)) {
            let Some(index) = part.indexes.iter().find(|i| i.name == index) else {
                continue;
            };
            let objects = index.get(key).into_iter();
            let objects =
                objects.filter_map(|place| part.store.get(place.namespace(), place.name()));
            found.extend(objects.filter(|object| in_namespace(object.as_ref(), namespace)));
        }
        let has_key = |object: &K| keys(object).iter().any(|k| k == key);
        self.with_writes(found, namespace, has_key)
    }

    /// The key function of the index `name`, if one was declared.
    fn index_keys(&self, name: &str) -> Option<KeyFn<K>> {
        let indexes = self
            .inner
            .indexes
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let found = indexes.iter().find(|(index, _)| *index == name);
        found.map(|(_, keys)| Arc::clone(keys))
    }

    /// The objects in `namespace` that `matches`, with the controller's writes.
    fn select(&self, namespace: Option<&str>, matches: impl Fn(&K) -> bool) -> Vec<Arc<K>> {
        let mut found = Vec::new();
        for part in self.parts().iter().filter(|part| part.covers(namespace)) {
            let matching = |object: &K| in_namespace(object, namespace) && matches(object);
            found.extend(part.store.select(matching));
        }
        self.with_writes(found, namespace, matches)
    }

    /// `found` (objects of `namespace`, from the stores), with the controller's writes that the
    /// stores do not have yet in place of what they have (or added, if they match).
    fn with_writes(
        &self,
        mut found: Vec<Arc<K>>,
        namespace: Option<&str>,
        matches: impl Fn(&K) -> bool,
    ) -> Vec<Arc<K>> {
        for written in self.inner.written.pending(namespace) {
            let uid = written.meta().uid.as_deref();
            match found
                .iter()
                .position(|object| object.meta().uid.as_deref() == uid)
            {
                Some(at)
                    if written::version(written.as_ref())
                        > written::version(found[at].as_ref()) =>
                {
                    if matches(&written) {
                        found[at] = written;
                    } else {
                        found.remove(at);
                    }
                }
                Some(_) => {}
                None if matches(&written) => found.push(written),
                None => {}
            }
        }
        found
    }

    /// Remembers `object`, as the API server returned it after a write of the controller, until
    /// the watch brings that version (see [`Written`]).
    pub(crate) fn wrote(&self, object: &K) {
        let meta = object.meta();
        let name = meta.name.as_deref().unwrap_or_default();
        let watched = || self.watched(meta.namespace.as_deref(), name);
        self.inner.written.record(object, watched);
    }

    /// `cached`, or the controller's own newer write of it.
    pub(crate) fn latest(&self, cached: Arc<K>) -> Arc<K> {
        self.inner.written.latest(cached)
    }

    /// Declares an index; the watches started afterwards keep it.
    pub(crate) fn add_index(&self, name: &'static str, keys: KeyFn<K>) {
        let mut indexes = self
            .inner
            .indexes
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        indexes.retain(|(index, _)| *index != name);
        indexes.push((name, keys));
    }

    /// Notes that a watch fills the cache.
    pub(crate) fn mark_watched(&self) {
        self.inner.watched.store(true, Ordering::Relaxed);
    }

    /// A new part of the cache for one watch of `namespace` (`None`: every namespace), in kube's
    /// reflector store (for the reconciled kind, which kube's `Controller` reads), and what
    /// applies the watch's events to it.
    pub(crate) fn feed_structs(&self, namespace: Option<&str>) -> Feed<K> {
        let (store, writer) = reflector::store::<K>();
        self.add_part(namespace, Storage::Structs(store), Writes::Structs(writer))
    }

    /// A new part of the cache for one watch of `namespace`, kept [`Compact`], and what applies
    /// the watch's events to it.
    #[doc(hidden)] // Public for operator-rs-testing's tests/runtime, not part of the API.
    pub fn feed(&self, namespace: Option<&str>) -> Feed<K> {
        let store = Compact::new();
        let writes = Writes::Compact(Arc::clone(&store));
        self.add_part(namespace, Storage::Compact(store), writes)
    }

    fn add_part(&self, namespace: Option<&str>, store: Storage<K>, writes: Writes<K>) -> Feed<K> {
        let definitions = self
            .inner
            .indexes
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let indexes: Vec<_> = definitions
            .iter()
            .map(|(name, keys)| Arc::new(Index::new(name, Arc::clone(keys))))
            .collect();
        drop(definitions);
        let mut parts = self
            .inner
            .parts
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        parts.push(Part {
            namespace: namespace.map(str::to_owned),
            store: store.clone(),
            indexes: indexes.clone(),
        });
        Feed {
            namespace: namespace.map(str::to_owned),
            writes,
            store,
            indexes,
            written: self.inner.written.clone(),
            phase: Phase::FirstList,
        }
    }
}

/// Where a watch stands: listing for the first time, listing again (after a `410 Gone` or an
/// outage), or watching changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    FirstList,
    Relist,
    Watching,
}

/// Applies the events of one watch to its part of a cache: its store, its indexes, and the
/// controller's writes that it brings.
#[doc(hidden)] // Public for operator-rs-testing's tests/runtime, not part of the API.
pub struct Feed<K: Cacheable> {
    namespace: Option<String>,
    writes: Writes<K>,
    store: Storage<K>,
    indexes: Vec<Arc<Index<K>>>,
    written: Written<K>,
    phase: Phase,
}

/// What writes a part's store.
enum Writes<K: Cacheable> {
    Structs(Writer<K>),
    Compact(Arc<Compact<K>>),
}

impl<K: Cacheable> Feed<K> {
    /// The part's store when it is kube's (what kube's `Controller` reads the reconciled objects
    /// from).
    pub(crate) fn reflector_store(&self) -> Option<Store<K>> {
        match &self.store {
            Storage::Structs(store) => Some(store.clone()),
            Storage::Compact(_) => None,
        }
    }

    /// Completes once the watch has listed its objects.
    pub(crate) fn listed(&self) -> impl Future<Output = ()> + Send + 'static {
        let store = self.store.clone();
        async move {
            match store {
                // An error means the store was dropped: the controller is stopping.
                Storage::Structs(store) => drop(store.wait_until_ready().await),
                Storage::Compact(store) => store.listed().await,
            }
        }
    }

    /// The version of `object` that the part holds now: before the event that brings `object`
    /// is applied, the previous one. While the watch relists, the one from before the relist.
    pub(crate) fn cached(&self, object: &K) -> Option<Arc<K>> {
        let meta = object.meta();
        let name = meta.name.as_deref().unwrap_or_default();
        self.store.get(meta.namespace.as_deref(), name)
    }

    /// Where the watch stands, as of the last event applied.
    pub(crate) fn phase(&self) -> Phase {
        self.phase
    }

    /// Applies one event of the watch.
    #[doc(hidden)] // Public for operator-rs-testing's tests/runtime, not part of the API.
    pub fn apply(&mut self, event: &watcher::Event<K>) {
        match &mut self.writes {
            Writes::Structs(writer) => writer.apply_watcher_event(event),
            Writes::Compact(store) => store.apply(event),
        }
        for index in &self.indexes {
            index.apply(event);
        }
        self.written.observe(event, self.namespace.as_deref());
        self.phase = match (event, self.phase) {
            (watcher::Event::Init, Phase::FirstList) => Phase::FirstList,
            (watcher::Event::Init, _) => Phase::Relist,
            (watcher::Event::InitDone, _) => Phase::Watching,
            (_, phase) => phase,
        };
    }
}

/// The caches of one controller, by kind.
#[doc(hidden)] // Public for operator-rs-testing's tests/runtime, not part of the API.
#[derive(Clone, Default)]
pub struct Caches {
    kinds: Arc<RwLock<HashMap<TypeId, Arc<dyn Registered>>>>,
}

/// A cache of some kind, as the registry holds it.
trait Registered: Send + Sync {
    fn as_any(&self) -> &dyn Any;
    fn is_watched(&self) -> bool;
    fn kind(&self) -> String;
}

impl<K: Cacheable> Registered for Cache<K> {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn is_watched(&self) -> bool {
        self.inner.watched.load(Ordering::Relaxed)
    }

    fn kind(&self) -> String {
        let kind = K::kind(&()).into_owned();
        if K::metadata_api() {
            format!("{kind} (metadata)")
        } else {
            kind
        }
    }
}

impl Caches {
    /// The cache of `K`, if the controller has one.
    pub(crate) fn get<K: Cacheable>(&self) -> Option<Cache<K>> {
        let kinds = self.kinds.read().unwrap_or_else(PoisonError::into_inner);
        let cache = kinds.get(&TypeId::of::<K>())?;
        cache.as_any().downcast_ref::<Cache<K>>().cloned()
    }

    /// The cache of `K`, new if the controller has none yet.
    #[doc(hidden)] // Public for operator-rs-testing's tests/runtime, not part of the API.
    pub fn register<K: Cacheable>(&self) -> Cache<K> {
        if let Some(cache) = self.get::<K>() {
            return cache;
        }
        let mut kinds = self.kinds.write().unwrap_or_else(PoisonError::into_inner);
        let cache = kinds
            .entry(TypeId::of::<K>())
            .or_insert_with(|| Arc::new(Cache::<K>::new()));
        let cache = cache.as_any().downcast_ref::<Cache<K>>();
        cache
            .cloned()
            .expect("the cache registered for a type is of that type")
    }

    /// The kinds that something reads from a cache that no watch fills.
    pub(crate) fn unwatched(&self) -> Vec<String> {
        let kinds = self.kinds.read().unwrap_or_else(PoisonError::into_inner);
        let unwatched = kinds.values().filter(|cache| !cache.is_watched());
        let mut names: Vec<String> = unwatched.map(|cache| cache.kind()).collect();
        names.sort();
        names
    }
}

/// The reads of a cache, on events applied by hand.
#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
    use kube::ResourceExt as _;
    use kube::api::ObjectMeta;

    use super::*;

    /// A ConfigMap of `namespace` with a uid, a version, labels and the data `secret: <secret>`.
    fn config_map(namespace: &str, name: &str, version: u64, secret: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                namespace: Some(namespace.to_owned()),
                uid: Some(format!("uid-{namespace}-{name}")),
                resource_version: Some(version.to_string()),
                labels: Some(BTreeMap::from([("app".to_owned(), name.to_owned())])),
                ..ObjectMeta::default()
            },
            data: Some(BTreeMap::from([("secret".to_owned(), secret.to_owned())])),
            ..ConfigMap::default()
        }
    }

    /// The Secret named in a ConfigMap's data: the key of the index `secret`.
    fn secret_of(map: &ConfigMap) -> Vec<String> {
        let data = map.data.as_ref();
        data.and_then(|data| data.get("secret"))
            .cloned()
            .into_iter()
            .collect()
    }

    fn names(objects: &[Arc<ConfigMap>]) -> Vec<String> {
        let mut names: Vec<String> = objects.iter().map(|o| o.name_any()).collect();
        names.sort();
        names
    }

    /// A cache of ConfigMaps with the index `secret`, filled by one watch of every namespace with
    /// `a` and `b` of namespace `one`, and `c` of namespace `two`.
    fn filled() -> Cache<ConfigMap> {
        let cache = Cache::<ConfigMap>::new();
        cache.add_index("secret", Arc::new(secret_of));
        let mut feed = cache.feed(None);
        for event in [
            watcher::Event::Init,
            watcher::Event::InitApply(config_map("one", "a", 1, "s1")),
            watcher::Event::InitApply(config_map("one", "b", 2, "s2")),
            watcher::Event::InitApply(config_map("two", "c", 3, "s1")),
            watcher::Event::InitDone,
        ] {
            feed.apply(&event);
        }
        cache
    }

    #[test]
    fn objects_are_read_by_name_namespace_labels_owner_and_index() {
        let cache = filled();
        assert!(cache.is_synced());
        assert_eq!(cache.get(Some("one"), "a").unwrap().name_any(), "a");
        assert!(cache.get(Some("two"), "a").is_none());
        assert_eq!(names(&cache.list(Some("one"))), ["a", "b"]);
        assert_eq!(names(&cache.list(None)), ["a", "b", "c"]);
        let selector = [("app", "b")].into_iter().collect();
        assert_eq!(names(&cache.list_selected(Some("one"), &selector)), ["b"]);
        assert_eq!(names(&cache.indexed(Some("one"), "secret", "s1")), ["a"]);
        assert_eq!(names(&cache.indexed(None, "secret", "s1")), ["a", "c"]);

        let owner = config_map("one", "a", 1, "");
        let mut owned = config_map("one", "owned", 4, "");
        owned.metadata.owner_references = Some(vec![OwnerReference {
            uid: owner.uid().unwrap(),
            ..OwnerReference::default()
        }]);
        let mut feed = cache.feed(Some("one"));
        for event in [
            watcher::Event::Init,
            watcher::Event::InitApply(owned),
            watcher::Event::InitDone,
        ] {
            feed.apply(&event);
        }
        assert_eq!(names(&cache.owned_by(&owner)), ["owned"]);
    }

    /// What the controller wrote and the watch has not brought yet is read as written: by name, in
    /// lists, and in the index under its new keys only.
    #[test]
    fn reads_see_the_controllers_own_writes() {
        let cache = filled();
        cache.wrote(&config_map("one", "a", 10, "s3"));
        cache.wrote(&config_map("one", "new", 11, "s1"));
        assert_eq!(
            cache
                .get(Some("one"), "a")
                .unwrap()
                .resource_version()
                .unwrap(),
            "10"
        );
        assert_eq!(
            cache
                .get(Some("one"), "new")
                .unwrap()
                .resource_version()
                .unwrap(),
            "11"
        );
        assert_eq!(names(&cache.list(Some("one"))), ["a", "b", "new"]);
        assert_eq!(names(&cache.indexed(Some("one"), "secret", "s1")), ["new"]);
        assert_eq!(names(&cache.indexed(Some("one"), "secret", "s3")), ["a"]);
        assert!(cache.get(Some("two"), "new").is_none());
    }

    #[test]
    fn a_write_the_watch_brought_first_is_not_kept() {
        // On a real API server the watch event of a write often comes before its response:
        // what the write returns is then no newer than the cache, and nothing would drop it.
        for structs in [false, true] {
            let cache = Cache::<ConfigMap>::new();
            let mut feed = if structs {
                cache.feed_structs(None)
            } else {
                cache.feed(None)
            };
            feed.apply(&watcher::Event::Init);
            feed.apply(&watcher::Event::InitDone);
            feed.apply(&watcher::Event::Apply(config_map("one", "a", 10, "s1")));
            cache.wrote(&config_map("one", "a", 10, "s1"));
            assert_eq!(cache.inner.written.len(), 0, "structs: {structs}");
            // The Deployment controller's status write came first too.
            feed.apply(&watcher::Event::Apply(config_map("one", "a", 12, "s1")));
            cache.wrote(&config_map("one", "a", 11, "s1"));
            assert_eq!(cache.inner.written.len(), 0, "structs: {structs}");
            // A write still on its way through the watch is kept until it arrives.
            cache.wrote(&config_map("one", "a", 13, "s2"));
            assert_eq!(cache.inner.written.len(), 1, "structs: {structs}");
            feed.apply(&watcher::Event::Apply(config_map("one", "a", 13, "s2")));
            assert_eq!(cache.inner.written.len(), 0, "structs: {structs}");
        }
    }

    #[test]
    #[should_panic(expected = "no index \"missing\" of ConfigMap declared")]
    fn an_undeclared_index_is_a_mistake() {
        filled().indexed(None, "missing", "key");
    }
}
