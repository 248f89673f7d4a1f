//! [`Index`]: the objects of one watch by the keys a function gives them, like the indexers of
//! client-go's informers that controller-runtime's `IndexField` adds.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, PoisonError, RwLock};

use kube::Resource;
use kube::runtime::reflector::{Lookup, ObjectRef};
use kube::runtime::watcher;

/// The keys an index gives an object, e.g. the names of the Secrets its spec refers to.
pub(crate) type KeyFn<K> = Arc<dyn Fn(&K) -> Vec<String> + Send + Sync>;

/// One index of the objects of one watch, kept up to date with its events, as the watch's store
/// is: a relist builds a new index, which replaces the old one when the list is complete.
pub(crate) struct Index<K: Lookup>
where
    K::DynamicType: Eq + Hash,
{
    pub(crate) name: &'static str,
    keys: KeyFn<K>,
    state: RwLock<State<K>>,
}

struct State<K: Lookup>
where
    K::DynamicType: Eq + Hash,
{
    current: Entries<K>,
    /// While the watch relists: the index of what it has listed so far.
    relisted: Option<Entries<K>>,
}

/// The objects by key, and the keys of each object (to find what to remove when it changes).
///
/// The objects of a key are a `Vec`, not a set: most keys name one object or a few (the pods of
/// one custom resource), and a set allocates a table of room for four or more for each key (in
/// heaptrack, an index of 4,000 pods by their Memcached peaked at 2.7–2.9 MiB this way, at
/// 3.0–3.2 MiB with a set per key).
struct Entries<K: Lookup>
where
    K::DynamicType: Eq + Hash,
{
    by_key: HashMap<String, Vec<ObjectRef<K>>>,
    keys_of: HashMap<ObjectRef<K>, Box<[String]>>,
}

impl<K: Lookup> Default for Entries<K>
where
    K::DynamicType: Eq + Hash,
{
    fn default() -> Self {
        Self {
            by_key: HashMap::new(),
            keys_of: HashMap::new(),
        }
    }
}

impl<K> Entries<K>
where
    K: Resource<DynamicType = ()>,
{
    fn insert(&mut self, object: &K, mut keys: Vec<String>) {
        let reference = reference(object);
        self.remove(&reference);
        // An object that gives a key twice is found once by it.
        keys.sort_unstable();
        keys.dedup();
        if keys.is_empty() {
            return;
        }
        for key in &keys {
            let objects = self.by_key.entry(key.clone()).or_default();
            objects.push(reference.clone());
        }
        self.keys_of.insert(reference, keys.into_boxed_slice());
    }

    fn remove(&mut self, reference: &ObjectRef<K>) {
        for key in self.keys_of.remove(reference).unwrap_or_default() {
            if let Some(objects) = self.by_key.get_mut(&key) {
                objects.retain(|object| object != reference);
                if objects.is_empty() {
                    self.by_key.remove(&key);
                }
            }
        }
    }
}

/// A reference to `object` by namespace and name only, without the uid and `resourceVersion` of
/// `ObjectRef::from_obj`: an index holds two per object, and needs no more to find it in the store.
pub(crate) fn reference<K>(object: &K) -> ObjectRef<K>
where
    K: Resource<DynamicType = ()>,
{
    let meta = object.meta();
    let reference = ObjectRef::new(meta.name.as_deref().unwrap_or_default());
    match meta.namespace.as_deref() {
        Some(namespace) => reference.within(namespace),
        None => reference,
    }
}

impl<K> Index<K>
where
    K: Resource<DynamicType = ()>,
{
    pub(crate) fn new(name: &'static str, keys: KeyFn<K>) -> Self {
        Self {
            name,
            keys,
            state: RwLock::new(State {
                current: Entries::default(),
                relisted: None,
            }),
        }
    }

    /// The keys the index gives `object`.
    pub(crate) fn keys(&self, object: &K) -> Vec<String> {
        (self.keys)(object)
    }

    /// The objects that have `key`, as references into the watch's store.
    pub(crate) fn get(&self, key: &str) -> Vec<ObjectRef<K>> {
        let state = self.state.read().unwrap_or_else(PoisonError::into_inner);
        let objects = state.current.by_key.get(key);
        objects.into_iter().flatten().cloned().collect()
    }

    /// Applies an event of the watch, as its store does.
    pub(crate) fn apply(&self, event: &watcher::Event<K>) {
        let mut state = self.state.write().unwrap_or_else(PoisonError::into_inner);
        match event {
            watcher::Event::Init => state.relisted = Some(Entries::default()),
            watcher::Event::InitApply(object) => {
                let keys = self.keys(object);
                state.relisted.get_or_insert_default().insert(object, keys);
            }
            watcher::Event::InitDone => {
                state.current = state.relisted.take().unwrap_or_default();
            }
            watcher::Event::Apply(object) => {
                let keys = self.keys(object);
                state.current.insert(object, keys);
            }
            watcher::Event::Delete(object) => state.current.remove(&reference(object)),
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;

    use super::*;

    /// A ConfigMap whose `secrets` value names Secrets, comma-separated.
    fn config_map(name: &str, secrets: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                namespace: Some("default".to_owned()),
                ..ObjectMeta::default()
            },
            data: Some([("secrets".to_owned(), secrets.to_owned())].into()),
            ..ConfigMap::default()
        }
    }

    fn index() -> Index<ConfigMap> {
        Index::new(
            "secrets",
            Arc::new(|map: &ConfigMap| {
                let secrets = map.data.as_ref().map(|data| data["secrets"].clone());
                let names = secrets.unwrap_or_default();
                names
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect()
            }),
        )
    }

    fn names(index: &Index<ConfigMap>, key: &str) -> Vec<String> {
        let mut names: Vec<String> = index.get(key).into_iter().map(|r| r.name).collect();
        names.sort();
        names
    }

    #[test]
    fn objects_are_found_by_each_of_their_keys_as_they_change() {
        use watcher::Event::{Apply, Delete, Init, InitApply, InitDone};
        let index = index();
        for event in [
            Init,
            InitApply(config_map("a", "s1,s2")),
            InitApply(config_map("b", "s2")),
            InitDone,
        ] {
            index.apply(&event);
        }
        assert_eq!(names(&index, "s1"), ["a"]);
        assert_eq!(names(&index, "s2"), ["a", "b"]);

        index.apply(&Apply(config_map("a", "s3")));
        assert_eq!(names(&index, "s1"), Vec::<String>::new());
        assert_eq!(names(&index, "s2"), ["b"]);
        assert_eq!(names(&index, "s3"), ["a"]);

        index.apply(&Delete(config_map("b", "s2")));
        assert_eq!(names(&index, "s2"), Vec::<String>::new());
    }

    #[test]
    fn an_object_that_gives_a_key_twice_is_found_once_and_goes_whole() {
        use watcher::Event::{Apply, Delete};
        let index = index();
        index.apply(&Apply(config_map("a", "s1,s1")));
        index.apply(&Apply(config_map("b", "s1")));
        assert_eq!(names(&index, "s1"), ["a", "b"]);
        index.apply(&Apply(config_map("a", "s1,s1,s2")));
        assert_eq!(names(&index, "s1"), ["a", "b"]);
        index.apply(&Delete(config_map("a", "s1")));
        assert_eq!(names(&index, "s1"), ["b"]);
        assert_eq!(names(&index, "s2"), Vec::<String>::new());
    }

    /// A relist replaces the index when it is complete; until then lookups see the old one.
    #[test]
    fn a_relist_replaces_the_index_once_complete() {
        use watcher::Event::{Init, InitApply, InitDone};
        let index = index();
        for event in [Init, InitApply(config_map("a", "s1")), InitDone] {
            index.apply(&event);
        }
        index.apply(&Init);
        index.apply(&InitApply(config_map("b", "s1")));
        assert_eq!(names(&index, "s1"), ["a"]);
        index.apply(&InitDone);
        assert_eq!(names(&index, "s1"), ["b"]);
    }
}
