//! Under `--sharding`: the watches of other kinds mapped to the reconciled objects
//! ([`Runner::watches`](super::Runner::watches), [`Runner::watches_on`](super::Runner::watches_on))
//! cache only the objects that map to an object of this member's share.
//!
//! Such objects cannot be selected by the member's label on the server: they carry no shard label
//! (a pod's labels come from its Deployment's template, and a shard label there would roll the
//! pods on every move). So every member still receives their events, but keeps only those of
//! objects whose mapped object is in its cache of the reconciled kind (its share, which its
//! watch selects by label).
//!
//! The share changes: an object arrives (assigned to this member, or at startup, before the
//! share is listed) whose mapped objects were left out, or leaves (drained to another member)
//! while its mapped objects are cached. Either way the mapped watches list again, once the
//! share has been still for [`RELIST_AFTER`], and the new list keeps exactly the objects of the
//! share: the missing ones are brought, the others dropped. A new object, whose mapped objects
//! come only after it (the pods of the Deployment its reconcile creates), costs no list: a list
//! is needed only for an object whose mapped objects were left out before, which [`Share`]
//! remembers by a hash of its key.

use std::collections::HashSet;
use std::hash::{BuildHasher as _, RandomState};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::{Stream, StreamExt as _, stream};
use kube::ResourceExt as _;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use tokio::sync::watch;

use crate::cache::{Cache, Cacheable};
use crate::sharding::SHARD_LABEL;

/// How long the share must stay unchanged before the mapped watches list again: a cold backlog,
/// or a member that joins or leaves, changes it many times in a row, and one list covers them.
pub(crate) const RELIST_AFTER: Duration = Duration::from_secs(1);

/// The largest page in which a mapped watch lists. A mapped watch receives the objects of every
/// member and keeps its share (a third of them with three members), so most of each page is
/// dropped as soon as it is read; but the whole page is read and decoded first. With kube's
/// default page of 500, the relist after a take-over raised a survivor's peak of anonymous
/// memory from about 9 MiB to 32 (Memcached's pods in `hack/bench-sharding 3000 3 --kill`); with
/// pages of 100, to 17–25, for 4 requests more per 500 objects listed.
pub(crate) const PAGE_SIZE: u32 = 100;

/// `config` with pages of at most [`PAGE_SIZE`] objects, for a mapped watch.
pub(crate) fn paged(mut config: watcher::Config) -> watcher::Config {
    let size = config
        .page_size
        .map_or(PAGE_SIZE, |size| size.min(PAGE_SIZE));
    config.page_size = Some(size);
    config
}

/// This member's share of the reconciled kind `K`, as the mapped watches of one
/// [`Runner`](super::Runner) see it. Cloning gives another handle.
pub(crate) struct Share<K: Cacheable> {
    /// The reconciled objects this member caches: its share.
    primary: Cache<K>,
    /// This member's name, the [`SHARD_LABEL`] of its objects.
    member: String,
    /// The objects of `K` that mapped objects were left out for: if one joins the share, they
    /// must be listed again. Kept as 64-bit hashes of their keys ([`Share::hash`]): this set
    /// holds the objects of every other member, two thirds of them with three members, and an
    /// `ObjectRef` with its strings costs about ten times more. Two keys with one hash (a
    /// chance of about n²/2⁶⁵ for n objects) would at worst skip one list that was needed: the
    /// mapped objects of one object would be missing from the cache until the next list.
    left_out: Arc<Mutex<HashSet<u64>>>,
    /// The keys of the hashes: random per process, so that no one can choose names that collide.
    hasher: RandomState,
    /// Bumped when the mapped watches must list again.
    relist: watch::Sender<u64>,
}

impl<K: Cacheable> Clone for Share<K> {
    fn clone(&self) -> Self {
        Self {
            primary: self.primary.clone(),
            member: self.member.clone(),
            left_out: Arc::clone(&self.left_out),
            hasher: self.hasher.clone(),
            relist: self.relist.clone(),
        }
    }
}

impl<K: Cacheable> Share<K> {
    /// The share of `member`, whose reconciled objects `primary` caches.
    pub(crate) fn new(primary: Cache<K>, member: &str) -> Self {
        Self {
            primary,
            member: member.to_owned(),
            left_out: Arc::default(),
            hasher: RandomState::new(),
            relist: watch::Sender::new(0),
        }
    }

    fn left_out(&self) -> std::sync::MutexGuard<'_, HashSet<u64>> {
        self.left_out.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The hash that [`Share::left_out`] keeps of `object`: of its namespace and name.
    fn hash(&self, object: &ObjectRef<K>) -> u64 {
        self.hasher
            .hash_one((object.namespace.as_deref(), object.name.as_str()))
    }

    fn request_relist(&self) {
        self.relist.send_modify(|count| *count += 1);
    }

    /// Takes note of an event of the reconciled kind's watch, before the cache applies it: an
    /// object that joins the share and had mapped objects left out, one that leaves it (no
    /// longer labelled for this member: drained, not deleted), or the end of a list (the share
    /// may have changed wholesale) make the mapped watches list again.
    pub(crate) fn observe(&self, event: &watcher::Event<K>) {
        match event {
            watcher::Event::Apply(object) | watcher::Event::InitApply(object) => {
                let reference = ObjectRef::from_obj(object);
                let joins = self
                    .primary
                    .get(reference.namespace.as_deref(), &reference.name)
                    .is_none();
                if joins && self.left_out().remove(&self.hash(&reference)) {
                    self.request_relist();
                }
            }
            watcher::Event::Delete(object) => {
                if object.labels().get(SHARD_LABEL) != Some(&self.member) {
                    self.request_relist();
                }
            }
            watcher::Event::InitDone => self.request_relist(),
            watcher::Event::Init => {}
        }
    }

    /// Whether a mapped object whose event maps it to `objects` belongs to the share; if not,
    /// `objects` are remembered as left out.
    fn keeps(&self, objects: Vec<ObjectRef<K>>) -> bool {
        let mine = |object: &ObjectRef<K>| {
            let namespace = object.namespace.as_deref();
            self.primary.get(namespace, &object.name).is_some()
        };
        if objects.iter().any(mine) {
            return true;
        }
        let hashes: Vec<u64> = objects.iter().map(|object| self.hash(object)).collect();
        self.left_out().extend(hashes);
        false
    }

    /// The events of a mapped watch that `start` opens, limited to the share: applies and list
    /// items of objects that map (by `map`) to an object of the share, deletions of objects
    /// `cache` holds, and the list's start and end. The watch is opened again (a new list)
    /// when the share changes as [`Share::observe`] says, [`RELIST_AFTER`] after the last change.
    pub(crate) fn limit<T, S>(
        &self,
        start: impl Fn() -> S + Send + 'static,
        map: impl Fn(T) -> Vec<ObjectRef<K>> + Send + 'static,
        cache: Cache<T>,
    ) -> impl Stream<Item = watcher::Result<watcher::Event<T>>> + Send + 'static
    where
        T: Cacheable,
        S: Stream<Item = watcher::Result<watcher::Event<T>>> + Send + 'static,
    {
        let share = self.clone();
        let mut relist = self.relist.subscribe();
        relist.mark_unchanged();
        let events = relisting(start, relist);
        events.filter(move |event| {
            let keep = match event {
                Ok(watcher::Event::Apply(object) | watcher::Event::InitApply(object)) => {
                    share.keeps(map(object.clone()))
                }
                Ok(watcher::Event::Delete(object)) => {
                    let namespace = object.namespace();
                    cache
                        .get(namespace.as_deref(), &object.name_any())
                        .is_some()
                }
                Ok(watcher::Event::Init | watcher::Event::InitDone) | Err(_) => true,
            };
            std::future::ready(keep)
        })
    }
}

/// The items of the stream `start` opens, opened again (from its start) each time `relist`
/// changes and has then stayed unchanged for [`RELIST_AFTER`].
fn relisting<S>(
    start: impl Fn() -> S + Send + 'static,
    relist: watch::Receiver<u64>,
) -> impl Stream<Item = S::Item> + Send + 'static
where
    S: Stream + Send + 'static,
    S::Item: Send,
{
    let current = Box::pin(start());
    stream::unfold(
        (current, relist, start),
        |(mut current, mut relist, start)| async move {
            loop {
                tokio::select! {
                    item = current.next() => return Some((item?, (current, relist, start))),
                    changed = relist.changed() => {
                        // The runner is gone: the stream ends with it.
                        changed.ok()?;
                        // Until the share has been still for a while.
                        loop {
                            relist.mark_unchanged();
                            let wait = tokio::time::sleep(RELIST_AFTER);
                            tokio::select! {
                                () = wait => break,
                                changed = relist.changed() => changed.ok()?,
                            }
                        }
                        current = Box::pin(start());
                    }
                }
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapped_watches_list_in_pages_of_at_most_a_hundred() {
        assert_eq!(paged(watcher::Config::default()).page_size, Some(PAGE_SIZE));
        let smaller = watcher::Config::default().page_size(20);
        assert_eq!(paged(smaller).page_size, Some(20));
        let unpaged = watcher::Config {
            page_size: None,
            ..watcher::Config::default()
        };
        assert_eq!(paged(unpaged).page_size, Some(PAGE_SIZE));
    }
}
