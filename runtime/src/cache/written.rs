//! [`Written`]: read-your-writes for a cache that lags behind the controller's own writes.
//!
//! A cache learns of a write only when the watch event of that write arrives: a moment after the
//! write returned. A reconciliation that starts in that moment (another trigger of the same
//! object, like a status change of the Deployment it owns) would see the object as it was before
//! the controller's own write, and act on it again: add the finalizer it has just added (a patch
//! the API server refuses, since its `test` of the finalizers fails), write the status it has
//! just written, or take the Deployment it has just created for missing.
//!
//! So the objects that the controller's own writes return (the finalizer patches of
//! [`finalizer`](crate::controller::finalizer::finalizer),
//! [`Context::apply_status`](crate::controller::Context::apply_status),
//! [`Context::apply_owned`](crate::controller::Context::apply_owned),
//! [`Context::wrote`](crate::controller::Context::wrote)) are remembered by the cache of their kind
//! until the cache has caught up with them, and its reads return the newer of the two. An entry
//! goes as soon as the watch delivers the write (or a newer version, or the deletion) or a read
//! finds the cache as new; a relist of the watch drops those of its namespace. So the map holds
//! only the writes that are still on their way through the watch, a handful at any time.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use kube::Resource;
use kube::runtime::watcher;

use super::strip_for_cache;

/// The objects of one kind that a controller wrote and its cache has not seen yet, by uid.
///
/// Cloning gives another handle to the same map.
pub(crate) struct Written<K> {
    objects: Arc<Mutex<HashMap<String, Entry<K>>>>,
}

impl<K> Clone for Written<K> {
    fn clone(&self) -> Self {
        Self {
            objects: Arc::clone(&self.objects),
        }
    }
}

impl<K> Default for Written<K> {
    fn default() -> Self {
        Self {
            objects: Arc::default(),
        }
    }
}

/// An object as the controller wrote it, and its `resourceVersion`.
struct Entry<K> {
    version: u64,
    object: Arc<K>,
}

/// The `resourceVersion` of `object` as a number, if it is one. Kubernetes says to treat them
/// as opaque, but every API server (etcd's revisions) hands out increasing integers; when one
/// is not, the cache is trusted.
pub(crate) fn version<K: Resource>(object: &K) -> Option<u64> {
    object.meta().resource_version.as_deref()?.parse().ok()
}

fn uid<K: Resource>(object: &K) -> Option<&str> {
    object.meta().uid.as_deref()
}

impl<K: Resource + Clone> Written<K> {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Entry<K>>> {
        self.objects.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Remembers `object` as the API server returned it after a write of this controller: only
    /// with a uid and a numeric `resourceVersion`, only if it is newer than what is remembered
    /// of it already, and only if it is newer than what the cache holds (`cached`, looked up
    /// while the map is locked). Stored as the cache would store it ([`strip_for_cache`]).
    ///
    /// The watch event of a write often arrives before the write's own response has been read:
    /// an entry made then would wait for the object's next event, which may never come (a
    /// backlog of 10,000 objects kept 10,000 Deployments here). `cached` is read under the lock
    /// that [`Written::observe`] takes after the store has applied an event, so either it sees
    /// the event's version, or `observe` sees the entry.
    pub(crate) fn record(&self, object: &K, cached: impl FnOnce() -> Option<Arc<K>>) {
        let (Some(uid), Some(version)) = (uid(object), version(object)) else {
            return;
        };
        let mut objects = self.lock();
        if objects
            .get(uid)
            .is_some_and(|entry| entry.version >= version)
        {
            return;
        }
        let seen = cached().and_then(|cached| self::version(cached.as_ref()));
        if seen.is_some_and(|seen| seen >= version) {
            return;
        }
        let mut object = object.clone();
        strip_for_cache(&mut object);
        let object = Arc::new(object);
        objects.insert(uid.to_owned(), Entry { version, object });
    }

    /// `cached`, unless this controller wrote a newer version of it that the cache has not seen
    /// yet. An entry that the cache has caught up with goes.
    pub(crate) fn latest(&self, cached: Arc<K>) -> Arc<K> {
        let Some(uid) = uid(cached.as_ref()) else {
            return cached;
        };
        let mut objects = self.lock();
        let Some(entry) = objects.get(uid) else {
            return cached;
        };
        match version(cached.as_ref()) {
            Some(cached_version) if cached_version < entry.version => Arc::clone(&entry.object),
            _ => {
                objects.remove(uid);
                cached
            }
        }
    }

    /// The writes the cache has not seen yet, in `namespace` (`None`: in every namespace).
    pub(crate) fn pending(&self, namespace: Option<&str>) -> Vec<Arc<K>> {
        let objects = self.lock();
        let entries = objects.values().map(|entry| &entry.object);
        let in_namespace = |object: &&Arc<K>| {
            namespace.is_none_or(|ns| object.meta().namespace.as_deref() == Some(ns))
        };
        entries.filter(in_namespace).cloned().collect()
    }

    /// Takes note of an event of a watch that fills the cache, in `namespace` (`None`: every
    /// namespace), after the cache has applied it: a version at least as new as a remembered
    /// write, or a deletion, makes it go; a relist makes those of its namespace go, since the list
    /// is at least as new as every write before it.
    pub(crate) fn observe(&self, event: &watcher::Event<K>, namespace: Option<&str>) {
        match event {
            watcher::Event::Init => {
                let mut objects = self.lock();
                objects.retain(|_, entry| {
                    namespace.is_some_and(|ns| entry.object.meta().namespace.as_deref() != Some(ns))
                });
            }
            watcher::Event::InitDone => {}
            watcher::Event::InitApply(object) | watcher::Event::Apply(object) => {
                let Some(uid) = uid(object) else { return };
                let mut objects = self.lock();
                let caught_up = objects.get(uid).is_some_and(|entry| {
                    version(object).is_none_or(|version| version >= entry.version)
                });
                if caught_up {
                    objects.remove(uid);
                }
            }
            watcher::Event::Delete(object) => {
                if let Some(uid) = uid(object) {
                    self.lock().remove(uid);
                }
            }
        }
    }

    /// How many writes the cache has not seen yet.
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;
    use kube::api::ResourceExt as _;

    use super::*;

    fn config_map(uid: &str, version: &str, data: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(format!("name-{uid}")),
                namespace: Some("default".to_owned()),
                uid: Some(uid.to_owned()),
                resource_version: Some(version.to_owned()),
                managed_fields: Some(vec![Default::default()]),
                ..ObjectMeta::default()
            },
            data: Some([("key".to_owned(), data.to_owned())].into()),
            ..ConfigMap::default()
        }
    }

    fn data(object: &ConfigMap) -> &str {
        &object.data.as_ref().unwrap()["key"]
    }

    #[test]
    fn a_stale_cache_gives_way_to_the_controllers_own_write() {
        let written = Written::default();
        written.record(&config_map("a", "12", "written"), || None);
        let latest = written.latest(Arc::new(config_map("a", "11", "cached")));
        assert_eq!(data(&latest), "written");
        assert!(
            latest.managed_fields().is_empty(),
            "stored as the cache would"
        );
        assert_eq!(written.len(), 1, "kept until the cache has caught up");
        // Another object is not concerned.
        let other = written.latest(Arc::new(config_map("b", "5", "cached")));
        assert_eq!(data(&other), "cached");
    }

    #[test]
    fn a_cache_that_caught_up_wins_and_the_entry_goes() {
        let written = Written::default();
        written.record(&config_map("a", "12", "written"), || None);
        let latest = written.latest(Arc::new(config_map("a", "12", "cached")));
        assert_eq!(data(&latest), "cached");
        assert_eq!(written.len(), 0);

        written.record(&config_map("a", "12", "written"), || None);
        let latest = written.latest(Arc::new(config_map("a", "13", "newer")));
        assert_eq!(data(&latest), "newer");
        assert_eq!(written.len(), 0);
    }

    #[test]
    fn a_write_whose_watch_event_came_first_is_not_remembered() {
        // The watch brought version 12 (and the Deployment controller's 13) before the
        // response of the write that made 12 was read: nothing would ever drop an entry.
        let written = Written::default();
        let cached = Arc::new(config_map("a", "13", "cached"));
        written.record(&config_map("a", "12", "written"), || {
            Some(Arc::clone(&cached))
        });
        assert_eq!(written.len(), 0);
        let same = Arc::new(config_map("a", "12", "cached"));
        written.record(&config_map("a", "12", "written"), || Some(same));
        assert_eq!(written.len(), 0);
        // A cache still behind the write keeps it, as before.
        let behind = Arc::new(config_map("a", "11", "cached"));
        written.record(&config_map("a", "12", "written"), || Some(behind));
        assert_eq!(written.len(), 1);
    }

    #[test]
    fn versions_that_are_not_numbers_trust_the_cache() {
        let written = Written::default();
        written.record(&config_map("a", "opaque", "written"), || None);
        assert_eq!(written.len(), 0);
        written.record(&config_map("a", "12", "written"), || None);
        let latest = written.latest(Arc::new(config_map("a", "opaque", "cached")));
        assert_eq!(data(&latest), "cached");
        assert_eq!(written.len(), 0);
    }

    #[test]
    fn only_newer_writes_are_remembered() {
        let written = Written::default();
        written.record(&config_map("a", "12", "first"), || None);
        written.record(&config_map("a", "11", "older"), || None);
        let latest = written.latest(Arc::new(config_map("a", "10", "cached")));
        assert_eq!(data(&latest), "first");
        assert_eq!(written.pending(Some("default")).len(), 1);
        assert_eq!(written.pending(Some("other")).len(), 0);
    }

    #[test]
    fn watch_events_drop_what_the_cache_has_seen() {
        let written = Written::default();
        written.record(&config_map("a", "12", "written"), || None);
        written.record(&config_map("b", "20", "written"), || None);
        written.record(&config_map("c", "30", "written"), || None);
        let mut elsewhere = config_map("d", "40", "written");
        elsewhere.metadata.namespace = Some("other".to_owned());
        written.record(&elsewhere, || None);

        written.observe(&watcher::Event::Apply(config_map("a", "11", "")), None);
        assert_eq!(written.len(), 4, "an older event");
        written.observe(&watcher::Event::Apply(config_map("a", "12", "")), None);
        assert_eq!(written.len(), 3);
        written.observe(&watcher::Event::Delete(config_map("b", "19", "")), None);
        assert_eq!(written.len(), 2);
        written.observe(&watcher::Event::<ConfigMap>::Init, Some("default"));
        assert_eq!(
            written.len(),
            1,
            "a relist is newer than every write of its namespace"
        );
        written.observe(&watcher::Event::<ConfigMap>::Init, None);
        assert_eq!(written.len(), 0);
    }
}
