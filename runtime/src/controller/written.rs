//! [`Written`]: read-your-writes for a controller whose cache lags behind its own writes.
//!
//! A controller reconciles the object of its cache, and the cache learns of a write only when
//! the watch event of that write arrives: a moment after the write returned. A reconciliation
//! that starts in that moment (another trigger of the same object, like a status change of the
//! Deployment it owns) sees the object as it was before the controller's own write, and acts on
//! it again: it adds the finalizer it has just added (a patch the API server refuses, since its
//! `test` of the finalizers fails) or writes the status it has just written.
//!
//! So the objects that the controller's own writes return (the finalizer patches of
//! [`finalizer`](super::finalizer::finalizer), [`Context::apply_status`](super::Context::apply_status),
//! [`Context::wrote`](super::Context::wrote)) are remembered until the cache has caught up with
//! them, and the [`Runner`](super::Runner) hands `reconcile` the newer of the two. An entry goes
//! as soon as the watch delivers the write (or a newer version, or the deletion) or a
//! reconciliation finds the cache as new; a relist of the watch drops them all. So the map holds
//! only the writes that are still on their way through the watch, a handful at any time.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use kube::Resource;
use kube::runtime::watcher;

use super::strip_for_cache;

/// The objects of one kind that a controller wrote and its cache has not seen yet, by uid.
///
/// Cloning gives another handle to the same map. A registry built with [`Written::disabled`]
/// remembers nothing.
#[derive(Clone, Default)]
pub(crate) struct Written {
    /// The kind that is remembered; `None`: nothing is.
    kind: Option<TypeId>,
    objects: Arc<Mutex<HashMap<String, Entry>>>,
}

/// An object as the controller wrote it: its `resourceVersion`, and the object (an `Arc<K>`).
struct Entry {
    version: u64,
    object: Arc<dyn Any + Send + Sync>,
}

/// The `resourceVersion` of `object` as a number, if it is one. Kubernetes says to treat them
/// as opaque, but every API server (etcd's revisions) hands out increasing integers; when one
/// is not, the cache is trusted.
fn version<K: Resource>(object: &K) -> Option<u64> {
    object.meta().resource_version.as_deref()?.parse().ok()
}

fn uid<K: Resource>(object: &K) -> Option<&str> {
    object.meta().uid.as_deref()
}

impl Written {
    /// A registry that remembers nothing: the [`Context`](super::Context) of a test, or of a
    /// controller that is not run by a [`Runner`](super::Runner).
    pub(crate) fn disabled() -> Self {
        Self::default()
    }

    /// A registry of the objects of kind `K`: the kind that the [`Runner`](super::Runner)
    /// watches, whose watch events drop the entries.
    pub(crate) fn of<K: 'static>() -> Self {
        Self {
            kind: Some(TypeId::of::<K>()),
            objects: Arc::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Entry>> {
        self.objects.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Remembers `object` as the API server returned it after a write of this controller. Only
    /// objects of the registry's kind with a uid and a numeric `resourceVersion`, and only if it
    /// is newer than what is remembered of it already.
    pub(crate) fn record<K>(&self, object: &K)
    where
        K: Resource + Clone + Send + Sync + 'static,
    {
        if self.kind != Some(TypeId::of::<K>()) {
            return;
        }
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
        let mut object = object.clone();
        strip_for_cache(&mut object);
        let object = Arc::new(object);
        objects.insert(uid.to_owned(), Entry { version, object });
    }

    /// The object a reconciliation should get: `cached`, unless this controller wrote a newer
    /// version of it that the cache has not seen yet. An entry that the cache has caught up
    /// with goes.
    pub(crate) fn latest<K>(&self, cached: Arc<K>) -> Arc<K>
    where
        K: Resource + Send + Sync + 'static,
    {
        let Some(uid) = uid(cached.as_ref()) else {
            return cached;
        };
        let mut objects = self.lock();
        let Some(entry) = objects.get(uid) else {
            return cached;
        };
        match version(cached.as_ref()) {
            Some(cached_version) if cached_version < entry.version => {
                match Arc::clone(&entry.object).downcast::<K>() {
                    Ok(written) => written,
                    Err(_) => cached,
                }
            }
            _ => {
                objects.remove(uid);
                cached
            }
        }
    }

    /// Takes note of an event of the watch that fills the cache (after the cache has applied
    /// it): a version at least as new as a remembered write, or a deletion, makes it go; a
    /// relist makes them all go, since the list is at least as new as every write before it.
    pub(crate) fn observe<K>(&self, event: &watcher::Event<K>)
    where
        K: Resource,
    {
        if self.kind.is_none() {
            return;
        }
        match event {
            watcher::Event::Init => self.lock().clear(),
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
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{ConfigMap, Secret};
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
        let written = Written::of::<ConfigMap>();
        written.record(&config_map("a", "12", "written"));
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
        let written = Written::of::<ConfigMap>();
        written.record(&config_map("a", "12", "written"));
        let latest = written.latest(Arc::new(config_map("a", "12", "cached")));
        assert_eq!(data(&latest), "cached");
        assert_eq!(written.len(), 0);

        written.record(&config_map("a", "12", "written"));
        let latest = written.latest(Arc::new(config_map("a", "13", "newer")));
        assert_eq!(data(&latest), "newer");
        assert_eq!(written.len(), 0);
    }

    #[test]
    fn versions_that_are_not_numbers_trust_the_cache() {
        let written = Written::of::<ConfigMap>();
        written.record(&config_map("a", "opaque", "written"));
        assert_eq!(written.len(), 0);
        written.record(&config_map("a", "12", "written"));
        let latest = written.latest(Arc::new(config_map("a", "opaque", "cached")));
        assert_eq!(data(&latest), "cached");
        assert_eq!(written.len(), 0);
    }

    #[test]
    fn only_newer_writes_of_the_kind_are_remembered() {
        let written = Written::of::<ConfigMap>();
        written.record(&config_map("a", "12", "first"));
        written.record(&config_map("a", "11", "older"));
        let latest = written.latest(Arc::new(config_map("a", "10", "cached")));
        assert_eq!(data(&latest), "first");

        let secret = Secret {
            metadata: config_map("s", "12", "").metadata,
            ..Secret::default()
        };
        written.record(&secret);
        assert_eq!(written.len(), 1, "not the kind of the controller");

        let disabled = Written::disabled();
        disabled.record(&config_map("a", "12", "written"));
        let latest = disabled.latest(Arc::new(config_map("a", "11", "cached")));
        assert_eq!(data(&latest), "cached");
    }

    #[test]
    fn watch_events_drop_what_the_cache_has_seen() {
        let written = Written::of::<ConfigMap>();
        written.record(&config_map("a", "12", "written"));
        written.record(&config_map("b", "20", "written"));
        written.record(&config_map("c", "30", "written"));

        written.observe(&watcher::Event::Apply(config_map("a", "11", "")));
        assert_eq!(written.len(), 3, "an older event");
        written.observe(&watcher::Event::Apply(config_map("a", "12", "")));
        assert_eq!(written.len(), 2);
        written.observe(&watcher::Event::Delete(config_map("b", "19", "")));
        assert_eq!(written.len(), 1);
        written.observe(&watcher::Event::<ConfigMap>::Init);
        assert_eq!(written.len(), 0, "a relist is newer than every write");
    }
}
