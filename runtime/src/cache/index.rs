//! [`Index`]: the objects of one watch by the keys a function gives them, like the indexers of
//! client-go's informers that controller-runtime's `IndexField` adds.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};

use kube::Resource;
use kube::runtime::watcher;

/// The keys an index gives an object, e.g. the names of the Secrets its spec refers to.
pub(crate) type KeyFn<K> = Arc<dyn Fn(&K) -> Vec<String> + Send + Sync>;

/// One index of the objects of one watch, kept up to date with its events, as the watch's store
/// is: a relist builds a new index, which replaces the old one when the list is complete.
pub(crate) struct Index<K> {
    pub(crate) name: &'static str,
    keys: KeyFn<K>,
    state: RwLock<State>,
}

struct State {
    current: Entries,
    /// While the watch relists: the index of what it has listed so far.
    relisted: Option<Entries>,
}

/// Where an object is in the watch's store: `namespace/name`, or `name` for a cluster-scoped
/// one (neither may contain a `/`). One allocation, shared by every entry of the object: an
/// index holds one for each object its watch brings. Measured with a counting allocator, an
/// index of 10,000 pods by their Memcached takes 2.5 MB so, and took 7.8 MB with two kube
/// `ObjectRef`s (four strings each) per pod and a key's text kept twice.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) struct Place(Arc<str>);

impl Place {
    fn of<K: Resource>(object: &K) -> Self {
        Self(super::compact::key_of(object).into())
    }

    pub(crate) fn namespace(&self) -> Option<&str> {
        self.0.split_once('/').map(|(namespace, _)| namespace)
    }

    pub(crate) fn name(&self) -> &str {
        self.0.split_once('/').map_or(&self.0, |(_, name)| name)
    }
}

/// The objects by key, and the keys of each object (to find what to remove when it changes);
/// a key's text is kept once, shared by both maps.
///
/// The objects of a key are a `Vec`, not a set: most keys name one object or a few (the pods of
/// one custom resource), and a set allocates a table of room for four or more for each key (in
/// heaptrack, an index of 4,000 pods by their Memcached peaked at 2.7–2.9 MiB this way, at
/// 3.0–3.2 MiB with a set per key).
#[derive(Default)]
struct Entries {
    by_key: HashMap<Arc<str>, Vec<Place>>,
    keys_of: HashMap<Place, Box<[Arc<str>]>>,
}

impl Entries {
    fn insert(&mut self, place: Place, mut keys: Vec<String>) {
        self.remove(&place);
        // An object that gives a key twice is found once by it.
        keys.sort_unstable();
        keys.dedup();
        if keys.is_empty() {
            return;
        }
        let keys: Box<[Arc<str>]> = keys
            .into_iter()
            .map(|key| {
                let shared = self.by_key.get_key_value(key.as_str());
                let key = shared.map_or_else(|| Arc::from(key), |(key, _)| Arc::clone(key));
                // Room for one: a first push would make room for four.
                let objects = self.by_key.entry(Arc::clone(&key));
                let objects = objects.or_insert_with(|| Vec::with_capacity(1));
                objects.push(place.clone());
                key
            })
            .collect();
        self.keys_of.insert(place, keys);
    }

    fn remove(&mut self, place: &Place) {
        for key in self.keys_of.remove(place).unwrap_or_default() {
            if let Some(objects) = self.by_key.get_mut(&key) {
                objects.retain(|object| object != place);
                if objects.is_empty() {
                    self.by_key.remove(&key);
                }
            }
        }
    }
}

impl<K: Resource> Index<K> {
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

    /// The objects that have `key`, as places in the watch's store.
    pub(crate) fn get(&self, key: &str) -> Vec<Place> {
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
                let relisted = state.relisted.get_or_insert_default();
                relisted.insert(Place::of(object), keys);
            }
            watcher::Event::InitDone => {
                state.current = state.relisted.take().unwrap_or_default();
            }
            watcher::Event::Apply(object) => {
                let keys = self.keys(object);
                state.current.insert(Place::of(object), keys);
            }
            watcher::Event::Delete(object) => state.current.remove(&Place::of(object)),
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
        let places = index.get(key).into_iter();
        let mut names: Vec<String> = places.map(|place| place.name().to_owned()).collect();
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
