//! The watches of a [`Runner`](super::Runner): each event updates the watch's part of the cache
//! and may trigger reconciliations, according to what changed since the version the cache held.
//!
//! Comparing with the cache rather than remembering what each watch saw keeps nothing per object
//! besides the cache itself: the same check as kube's `predicate_filter` (a hash of what matters,
//! before and after), with the previous version read from the store just before the event
//! replaces it.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;

use futures::{Stream, StreamExt as _, future};
use kube::Resource;
use kube::runtime::utils::{Backoff as StreamBackoff, ResetTimerBackoff};
use kube::runtime::watcher::{self, ExponentialBackoff};
use serde::Serialize;
use serde_json::Value;

use crate::cache::{Cacheable, Feed, Phase};

/// Decides which changes of an object trigger a reconciliation: a hash of what matters, or `None`
/// for "always". An object whose hash did not change since the version the cache holds triggers
/// nothing.
pub(crate) type Change<K> = Arc<dyn Fn(&K) -> Option<u64> + Send + Sync>;

/// A hash of `value`, for the change predicates of [`Runner::reconcile_on`](super::Runner::reconcile_on)
/// and [`Runner::owns_on`](super::Runner::owns_on).
pub fn hash_of<T: Hash + ?Sized>(value: &T) -> u64 {
    let mut hasher = DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}

/// The [`Runner`](super::Runner)'s default for the reconciled kind: what a controller must act
/// on, and nothing it causes itself. A hash of the `generation` (the API server bumps it on every
/// change of the spec, never on status or metadata) and whether a `deletionTimestamp` is set
/// (deletion starts the clean-up). The controller's own writes (status, its finalizer: see
/// [`finalizer`](super::finalizer::finalizer)), label or annotation edits and relists of the
/// watch reconcile nothing; the periodic requeue of `reconcile` catches what someone else
/// changed there (a finalizer removed by hand), as controller-runtime's
/// `GenerationChangedPredicate` leaves it to the resync.
///
/// Kinds without a `generation` (ConfigMaps, Secrets …) get `None`: every change reconciles.
pub fn spec_changes<K: Resource>(object: &K) -> Option<u64> {
    let meta = object.meta();
    let generation = meta.generation?;
    Some(hash_of(&(generation, meta.deletion_timestamp.is_some())))
}

/// The [`Runner`](super::Runner)'s default for owned kinds ([`Runner::owns`](super::Runner::owns)):
/// a hash of the `generation` (the spec the owner applies), the labels (which the owner applies
/// too) and the whole `status` (what the owner may read). Changes of other metadata (managed
/// fields, annotations, the resource version alone) reconcile nothing. A deleted child always
/// reconciles its owner, a new one never (it is almost always the owner's own creation).
///
/// Kinds without a `generation` get `None`: every change reconciles, creations included.
pub fn owned_changes<K: Resource + Serialize>(object: &K) -> Option<u64> {
    let meta = object.meta();
    let generation = meta.generation?;
    let status = serde_json::to_value(object)
        .ok()
        .and_then(|value| value.get("status").map(Value::to_string));
    Some(hash_of(&(generation, &meta.labels, status)))
}

/// Whether `change` sees a difference between `cached` and `object` (`None` from `change`:
/// always).
fn changed<K>(change: &Change<K>, object: &K, cached: &K) -> bool {
    match change(object) {
        None => true,
        Some(hash) => change(cached) != Some(hash),
    }
}

/// The triggers of the reconciled kind: an object first seen (every object when the controller
/// starts), or changed as `change` sees it. Not its deletion: there is nothing left to reconcile
/// (its finalizer's clean-up starts when the deletion is requested, a change of the object).
pub(crate) fn reconciled<K>(
    change: Change<K>,
) -> impl FnMut(&watcher::Event<K>, Option<&K>, Phase) -> bool {
    move |event, cached, _| match event {
        watcher::Event::InitApply(object) | watcher::Event::Apply(object) => {
            cached.is_none_or(|cached| changed(&change, object, cached))
        }
        _ => false,
    }
}

/// The triggers of an owned kind: a child that changed as `change` sees it, and every deleted
/// child.
///
/// The first sight of a child triggers nothing: at startup every owner is reconciled anyway,
/// and later a new child is almost always the controller's own creation, whose watch event
/// would cost a reconciliation that finds nothing to do. A relist of the watch (after a `410
/// Gone` or an outage) compares with the versions cached before it, so a child changed while the
/// watch was down still reconciles its owner; a child first seen in a relist does too, since it
/// may have changed since its creation while the watch was away (after an outage, the children
/// created as the backlog resumed, and already available by the time the watch is back, are what
/// their owners wait for). Objects deleted while the watch was down are forgotten: their owners'
/// periodic requeue finds them missing.
pub(crate) fn owned<K>(
    change: Change<K>,
) -> impl FnMut(&watcher::Event<K>, Option<&K>, Phase) -> bool {
    move |event, cached, phase| match event {
        watcher::Event::InitApply(object) | watcher::Event::Apply(object) => match cached {
            Some(cached) => changed(&change, object, cached),
            None => change(object).is_none() || phase == Phase::Relist,
        },
        watcher::Event::Delete(_) => true,
        _ => false,
    }
}

/// Decides whether a new version of a watched object reconciles what it maps to, given the
/// version the cache held before it (`None`: an object new to the cache) and the new one.
pub(crate) type Changed<K> = Arc<dyn Fn(Option<&K>, &K) -> bool + Send + Sync>;

/// The default of [`Runner::watches`](super::Runner::watches): every new version of an object (a
/// new `resourceVersion`: a relist brings the same versions again), and every object new to the
/// cache.
pub(crate) fn new_version<K: Resource>(before: Option<&K>, object: &K) -> bool {
    before.is_none_or(|before| before.meta().resource_version != object.meta().resource_version)
}

/// The triggers of a watched kind ([`Runner::watches`](super::Runner::watches),
/// [`Runner::watches_on`](super::Runner::watches_on)): the objects that `changed` says changed
/// (given the version the cache held and the new one), and every deletion. Not the first list:
/// it completes before the reconciled kind's watch starts, whose first list reconciles every
/// object anyway.
pub(crate) fn watched<K>(
    changed: Changed<K>,
) -> impl FnMut(&watcher::Event<K>, Option<&K>, Phase) -> bool {
    move |event, cached, phase| match event {
        watcher::Event::InitApply(object) | watcher::Event::Apply(object) => {
            phase != Phase::FirstList && changed(cached, object)
        }
        watcher::Event::Delete(_) => true,
        _ => false,
    }
}

/// Applies the events of a watch to its part of a cache (`feed`), and yields the objects whose
/// event `triggers` (given the event, the version the cache held before it, and where the watch
/// stands), and the watch's errors.
pub(crate) fn informer<K: Cacheable>(
    events: impl Stream<Item = watcher::Result<watcher::Event<K>>> + Send + 'static,
    mut feed: Feed<K>,
    mut triggers: impl FnMut(&watcher::Event<K>, Option<&K>, Phase) -> bool + Send + 'static,
) -> impl Stream<Item = watcher::Result<K>> + Send + 'static {
    events.filter_map(move |event| {
        let item = match event {
            Err(error) => Some(Err(error)),
            Ok(event) => {
                let cached = match &event {
                    watcher::Event::InitApply(object)
                    | watcher::Event::Apply(object)
                    | watcher::Event::Delete(object) => feed.cached(object),
                    watcher::Event::Init | watcher::Event::InitDone => None,
                };
                let triggered = triggers(&event, cached.as_deref(), feed.phase());
                feed.apply(&event);
                match event {
                    watcher::Event::InitApply(object)
                    | watcher::Event::Apply(object)
                    | watcher::Event::Delete(object)
                        if triggered =>
                    {
                        Some(Ok(object))
                    }
                    _ => None,
                }
            }
        };
        future::ready(item)
    })
}

/// The longest base wait between two tries of a watch that fails (kube's and client-go's: 30 s),
/// to which the jitter adds up to as much again: a try against an API server that is away costs
/// a refused connection, and after an outage the watches bring what finishes the backlog (the
/// rest of the first list of a controller that started during the outage, the changes of owned
/// objects).
pub const WATCH_MAX_DELAY: Duration = Duration::from_secs(2);

/// The backoff of every watch of the [`Runner`](super::Runner): kube's default (client-go's
/// reflector's: 800 ms doubling, with jitter, starting over after 2 minutes without errors), but
/// at most [`WATCH_MAX_DELAY`] and its jitter between tries, so that after an outage the watches
/// resume within 4 s of the API server's return rather than 60. (Measured with
/// `hack/bench-reconcile 1000 --outage 30`: with 5 s, the watches took 8 to 10 s to resume.)
pub(crate) fn watch_backoff() -> ResetTimerBackoff<ExponentialBackoff> {
    let exponential = backon::ExponentialBuilder::default()
        .with_min_delay(Duration::from_millis(800))
        .with_max_delay(WATCH_MAX_DELAY)
        .with_factor(2.0)
        .with_jitter()
        .without_max_times();
    ResetTimerBackoff::new(exponential.into(), Duration::from_secs(120))
}

/// The `trigger_backoff` of every controller: none, since each watch backs off on its own
/// ([`watch_backoff`]). Kube's default pauses all the triggers of a controller, up to 30 s, after
/// an error of any of them: after an outage, the watches that are back and the requeues of
/// [`Recovery`](super::recovery::Recovery) would wait for it.
pub(crate) struct WatchesBackOff;

impl Iterator for WatchesBackOff {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        Some(Duration::ZERO)
    }
}

impl StreamBackoff for WatchesBackOff {
    fn reset(&mut self) {}
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;

    use super::*;
    use crate::cache::Cache;

    /// A config map with a uid and one value, which is also its version.
    fn config_map(name: &str, value: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                namespace: Some("default".to_owned()),
                uid: Some(format!("uid-{name}")),
                resource_version: Some(value.to_owned()),
                ..ObjectMeta::default()
            },
            data: Some([("key".to_owned(), value.to_owned())].into()),
            ..ConfigMap::default()
        }
    }

    /// The names of the objects that `triggers` lets through of a watch's events.
    fn triggered(
        events: Vec<watcher::Event<ConfigMap>>,
        triggers: impl FnMut(&watcher::Event<ConfigMap>, Option<&ConfigMap>, Phase) -> bool
        + Send
        + 'static,
    ) -> Vec<String> {
        let feed = Cache::<ConfigMap>::new().feed(None);
        let events = futures::stream::iter(events.into_iter().map(Ok));
        let objects = informer(events, feed, triggers).map(|object| object.unwrap());
        futures::executor::block_on(objects.collect::<Vec<_>>())
            .into_iter()
            .map(|map| map.metadata.name.unwrap_or_default())
            .collect()
    }

    fn data_changes() -> Change<ConfigMap> {
        Arc::new(|map: &ConfigMap| Some(hash_of(&map.data)))
    }

    #[test]
    fn children_trigger_on_changes_and_deletions_not_on_first_sight() {
        use watcher::Event::{Apply, Delete, Init, InitApply, InitDone};
        let events = vec![
            Init,
            InitApply(config_map("listed", "1")),
            InitDone,
            // Created by the controller: no trigger; changed then: a trigger.
            Apply(config_map("new", "1")),
            Apply(config_map("new", "2")),
            // The same again (a relabel the hash ignores, a resync): no trigger.
            Apply(config_map("new", "2")),
            Delete(config_map("listed", "1")),
        ];
        assert_eq!(triggered(events, owned(data_changes())), ["new", "listed"]);
    }

    /// After an outage the watch relists: a child changed while it was away triggers, and so
    /// does one it never saw (created and changed meanwhile); one unchanged does not.
    #[test]
    fn a_relist_triggers_what_changed_while_the_watch_was_away() {
        use watcher::Event::{Init, InitApply, InitDone};
        let events = vec![
            Init,
            InitApply(config_map("unchanged", "1")),
            InitApply(config_map("changed", "1")),
            InitDone,
            Init,
            InitApply(config_map("unchanged", "1")),
            InitApply(config_map("changed", "2")),
            InitApply(config_map("unseen", "1")),
            InitDone,
        ];
        assert_eq!(
            triggered(events.clone(), owned(data_changes())),
            ["changed", "unseen"]
        );
        // The same for a watched kind, by resourceVersion.
        assert_eq!(
            triggered(events, watched(Arc::new(new_version))),
            ["changed", "unseen"]
        );
    }

    /// The reconciled kind: every object at startup, then only what `change` sees change; a
    /// relist brings only what changed meanwhile.
    #[test]
    fn reconciled_objects_trigger_on_first_sight_and_changes() {
        use watcher::Event::{Apply, Delete, Init, InitApply, InitDone};
        let events = vec![
            Init,
            InitApply(config_map("a", "1")),
            InitApply(config_map("b", "1")),
            InitDone,
            Apply(config_map("a", "1")),
            Apply(config_map("a", "2")),
            Apply(config_map("c", "1")),
            Delete(config_map("b", "1")),
            Init,
            InitApply(config_map("a", "2")),
            InitApply(config_map("c", "3")),
            InitDone,
        ];
        let expected = ["a", "b", "a", "c", "c"];
        assert_eq!(triggered(events, reconciled(data_changes())), expected);
    }

    /// A watched kind's first list triggers nothing (the reconciled kind is not listed yet); its
    /// changes and deletions do, and so does a relist of the same version's neighbours only.
    #[test]
    fn watched_objects_trigger_on_new_versions_and_deletions() {
        use watcher::Event::{Apply, Delete, Init, InitApply, InitDone};
        let events = vec![
            Init,
            InitApply(config_map("s", "1")),
            InitDone,
            Apply(config_map("s", "1")),
            Apply(config_map("s", "22")),
            Apply(config_map("t", "1")),
            Delete(config_map("s", "22")),
        ];
        assert_eq!(
            triggered(events, watched(Arc::new(new_version))),
            ["s", "t", "s"]
        );
    }

    /// A watched kind with a predicate of its own: only the changes it sees trigger (here a
    /// `key` that comes, changes or goes; an object new to the cache without one does not), and
    /// every deletion does.
    #[test]
    fn watched_objects_with_a_predicate_trigger_on_what_it_sees() {
        use watcher::Event::{Apply, Delete, Init, InitApply, InitDone};
        let key = |map: Option<&ConfigMap>| {
            let data = map.and_then(|map| map.data.as_ref());
            data.and_then(|data| data.get("key")).cloned()
        };
        let changed: Changed<ConfigMap> =
            Arc::new(move |before, map| key(before) != key(Some(map)));
        let mut same_key = config_map("s", "1");
        same_key.metadata.resource_version = Some("2".to_owned());
        let mut without_key = config_map("new", "1");
        without_key.data = None;
        let events = vec![
            Init,
            InitApply(config_map("s", "1")),
            InitDone,
            // A new version, the same key: nothing.
            Apply(same_key),
            Apply(config_map("s", "3")),
            Apply(without_key),
            Apply(config_map("new", "4")),
            Delete(config_map("new", "4")),
        ];
        assert_eq!(triggered(events, watched(changed)), ["s", "new", "new"]);
    }
}
