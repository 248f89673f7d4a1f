//! The elected replica's side: keeps the [`SHARD_LABEL`] of a sharded controller's objects in
//! line with the ring. It drains the objects whose member the ring no longer gives them to at
//! once, and assigns at its periodic check the objects without a member that no member claimed
//! ([`super::claim`]: the members label those the ring gives them as soon as they see them).
//!
//! An object is assigned only once the members have had their chance: it was without a member
//! at the previous check too, and no claim at all landed in between. The members claim a cold
//! backlog or a dead member's share at the pace the API server takes their writes, and an
//! assignment raced them: on kube-apiserver, 2,667 of the elected replica's 3,000 label writes
//! at a cold start of 3 replicas were refused as conflicts with the members' claims (wasted
//! requests; the replica's memory, measured with and without the race, was the same). So the
//! assignment is what it is meant to be, the fallback for a member that does not claim (its
//! watch failing, a view of the ring that differs for a while): it waits until the claims stop,
//! or [`CHECKS_BEFORE_ASSIGNING`] checks at most (other objects' claims may never stop while
//! one member does not claim).
//!
//! It watches the objects' metadata only (the API server sends no spec nor status), and keeps
//! only the objects the ring wants a write for: those without a member, and those whose member
//! is not the one the ring gives them to (drained, or assigned again once their member left).
//! An object where the ring puts it is let go as soon as it is seen, so in the steady state the
//! elected replica keeps next to nothing, where it kept every object before (its shard label,
//! whether it is draining, its `resourceVersion`, under its ring key: 190 bytes an object in
//! heaptrack, which put the elected replica above the memory of the others; 3,000 objects, 3
//! replicas). A new ring may want elsewhere an object it let go, so each change of the ring lists
//! the objects again (paged, their metadata only), and the drains it asks for are sent once the
//! list is complete.
//! Every label write carries the `resourceVersion` it was decided on, so a decision on a stale
//! version fails (and is made again on the new one) rather than undoing a member's
//! acknowledgement.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use futures::{StreamExt as _, stream};
use kube::Api;
use kube::api::{Patch, PatchParams};
use kube::core::PartialObjectMeta;
use kube::runtime::{WatchStreamExt as _, watcher};
use serde_json::json;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::drain::FIELD_MANAGER;
use super::{DRAIN_LABEL, Ring, SHARD_LABEL};
use crate::cache::Cacheable;
use crate::metrics::ShardMetrics;

/// The `Api` of the sharded kind in a namespace (`None`: a cluster-scoped kind), which the
/// label writes go through: the Runner's, which knows the kind's scope.
pub(crate) type ApiIn<K> = Arc<dyn Fn(Option<&str>) -> Api<K> + Send + Sync>;

/// How many label writes the elected replica, and each member's claims, send at once when many
/// objects need one (a cold backlog, a member that joined or left). Few: kube's client speaks
/// HTTP/1.1, so each write in flight holds a connection of its own (with its TLS state and
/// buffers), which the client's pool then keeps idle. With 16, a sharded replica's memory above
/// its floor was 0.8 MiB higher than with 4 (`hack/bench-sharding 3000 3` on the fake API server:
/// 7.7 MiB against 6.9), for no gain in time: 4 writes at once label hundreds of objects a second,
/// and the backlog waits on its reconciles. Not one: on the fake, one write at a time took another
/// 0.2–0.4 MiB off a member (13–15 sockets at most against 15–18), but on kube-apiserver not off
/// the elected replica, the largest (8.9 MiB above its floor either way with 3,000 objects,
/// `hack/bench-sharding 3000 3 --cluster --kill-leader --after-convergence`).
pub(super) const CONCURRENT_WRITES: usize = 4;

/// The largest page in which the metadata watches of sharding (the elected replica's, the
/// members' claims) list. A list brings every object of the kind (at a cold start, every one is
/// without a member too), and each comes with its managed fields, a kilobyte or more decoded, of
/// which the watches keep a hundred bytes or nothing; kube's default page is 500. (On
/// kube-apiserver, 3,000 objects and 3 replicas, the elected replica's peak went from 10.4 MiB
/// above its floor to 10.0 with pages of 100: within the noise of one run.)
pub(super) const METADATA_PAGE_SIZE: u32 = 100;

/// After how many periodic checks an object without a member is assigned even while claims of
/// other objects keep landing (16 s at the default retry period of 2 s, about a Lease's
/// duration).
pub(super) const CHECKS_BEFORE_ASSIGNING: u8 = 8;

/// What the elected replica hands the assigner of each sharded controller.
pub(crate) struct Assignment {
    /// The members whose Lease is valid; `None` until their Leases are listed.
    pub(crate) ring: watch::Receiver<Option<Ring>>,
    pub(crate) metrics: ShardMetrics,
    /// How often every object is checked (a write that failed is retried then).
    pub(crate) retry_period: Duration,
    pub(crate) shutdown: CancellationToken,
}

/// A label write that puts an object in line with the ring.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Move {
    /// Label the object for `to`, removing any drain label: the object has no member, or its
    /// member has left the ring (`from`), so nobody works on it.
    Assign { to: String, from: Option<String> },
    /// Ask the object's member, whose Lease is valid, to let it go.
    Drain,
}

/// What the elected replica knows of one object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Tracked {
    /// Its shard label: one of a few member names, shared ([`Names`]).
    pub(crate) shard: Option<Arc<str>>,
    pub(crate) draining: bool,
    pub(crate) resource_version: Box<str>,
    /// Whether a label write was sent for this version: none is sent again until a newer
    /// version comes (each event brings a new `Tracked`) or the write failed. Kept here rather
    /// than in a map of its own, which held a key and a version for every object ever written.
    pub(crate) sent: bool,
    /// At how many periodic checks this version was to be assigned: a member that could claim
    /// it has had as many check periods to do so.
    pub(crate) unclaimed_checks: u8,
}

impl Tracked {
    pub(super) fn of<K>(object: &PartialObjectMeta<K>, names: &mut Names) -> Self {
        let labels = object.metadata.labels.as_ref();
        let label = |key: &str| labels.and_then(|labels| labels.get(key));
        let version = object.metadata.resource_version.as_deref();
        Tracked {
            shard: label(SHARD_LABEL).map(|member| names.intern(member)),
            draining: label(DRAIN_LABEL).is_some(),
            resource_version: version.unwrap_or_default().into(),
            sent: false,
            unclaimed_checks: 0,
        }
    }
}

/// The member names the tracked objects' shard labels hold, each once: thousands of objects
/// share a handful of names.
#[derive(Default)]
pub(super) struct Names(HashSet<Arc<str>>);

impl Names {
    fn intern(&mut self, name: &str) -> Arc<str> {
        if let Some(shared) = self.0.get(name) {
            return Arc::clone(shared);
        }
        let shared: Arc<str> = name.into();
        self.0.insert(Arc::clone(&shared));
        shared
    }

    /// Forgets the names no object holds any more (members that left long ago).
    fn forget_unused(&mut self) {
        self.0.retain(|name| Arc::strong_count(name) > 1);
    }
}

/// The write that puts the object `key` (`namespace/name`) in line with `ring`, if any.
///
/// - No member, or a member that left the ring (its Lease released or expired, so it stopped
///   reconciling): assign it to its member by the ring.
/// - Its member by the ring already: nothing, even while a drain is pending (the member
///   acknowledges it, and the object comes back to it).
/// - Another member whose Lease is valid: drain it, then nothing until the member acknowledges;
///   nothing at all while that member is silent ([`Ring::silence`]): it could not acknowledge,
///   and it keeps what it has until it renews its Lease again or the Lease expires.
/// - An empty ring (or every member silent): nothing; the objects keep their labels until a
///   member joins.
///
/// A silent member gets no object, so one without a member goes to whom the ring would give it
/// if the silent member left.
pub(crate) fn decide(key: &str, tracked: &Tracked, ring: &Ring) -> Option<Move> {
    let desired = ring.member_for(key)?;
    match tracked.shard.as_deref() {
        Some(current) if current == desired => None,
        Some(current) if ring.is_silent(current) => None,
        Some(current) if ring.contains(current) => (!tracked.draining).then_some(Move::Drain),
        current => Some(Move::Assign {
            to: desired.to_owned(),
            from: current.map(str::to_owned),
        }),
    }
}

/// An object by its ring key: `namespace/name`, with an empty namespace for a cluster-scoped
/// kind (`/name`). One string: the namespace and the name in two took 24 bytes more an object.
pub(super) type Key = String;

/// The namespace (`None` for a cluster-scoped kind) and name of the object `key`: neither holds
/// a '/'.
fn namespace_and_name(key: &str) -> (Option<&str>, &str) {
    let (namespace, name) = key.split_once('/').unwrap_or(("", key));
    ((!namespace.is_empty()).then_some(namespace), name)
}

/// The ring key of `object`.
pub(super) fn key_of<K>(object: &PartialObjectMeta<K>) -> Key {
    let meta = &object.metadata;
    let namespace = meta.namespace.as_deref().unwrap_or_default();
    format!("{namespace}/{}", meta.name.as_deref().unwrap_or_default())
}

/// The objects of one watch of the kind (one per watched namespace, or one for all) that the
/// ring wants a write for.
#[derive(Default)]
struct Part {
    objects: BTreeMap<Key, Tracked>,
    /// The objects of a (re)list in progress, which replace `objects` when it is done.
    listing: Option<BTreeMap<Key, Tracked>>,
    synced: bool,
    /// Whether an object was labelled for a member (by a claim, or an assignment) since the
    /// last periodic check: the members are claiming, and the assignment waits.
    claims_landed: bool,
}

/// Keeps the shard labels of the objects `apis` hold in line with the ring until shutdown.
/// `PartialObjectMeta` makes the watches metadata-only.
pub(crate) async fn run<K>(
    controller: &'static str,
    apis: Vec<Api<PartialObjectMeta<K>>>,
    api_in: ApiIn<K>,
    assignment: Assignment,
) where
    K: Cacheable,
{
    let Assignment {
        mut ring,
        metrics,
        retry_period,
        shutdown,
    } = assignment;
    let mut parts: Vec<Part> = apis.iter().map(|_| Part::default()).collect();
    let mut names = Names::default();
    let mut tick = tokio::time::interval(retry_period);
    // A check that took longer than the period is not followed by the ticks it missed, at once:
    // the watch's events come first.
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let members = tokio::select! {
            () = shutdown.cancelled() => return,
            members = ring.wait_for(Option::is_some) => match members {
                Ok(members) => members.clone(),
                Err(_) => return,
            },
        };
        let Some(members) = members else { continue };
        // Lists every object again (see the module's comment), with watches made anew.
        let mut events = watch_all(&apis);
        loop {
            let (changed, periodic) = tokio::select! {
                () = shutdown.cancelled() => return,
                _ = tick.tick() => (Changed::Nothing, true),
                // Again with the new ring.
                result = ring.changed() => match result {
                    Ok(()) => break,
                    Err(_) => return,
                },
                event = events.next() => match event {
                    None => return,
                    Some((index, Ok(event))) => {
                        (apply(&mut parts[index], event, &mut names, &members), false)
                    }
                    Some((_, Err(error))) => {
                        let error = &error as &dyn std::error::Error;
                        tracing::warn!(controller, error, "cannot watch the objects to shard");
                        continue;
                    }
                },
            };
            if !parts.iter().all(|part| part.synced) {
                continue;
            }
            let pending = match (periodic, changed) {
                (true, _) => {
                    names.forget_unused();
                    periodic_check(&mut parts, &members)
                }
                (false, Changed::Object(key)) => drains(&parts, Some(&key), &members),
                (false, Changed::Listed) => drains(&parts, None, &members),
                (false, Changed::Nothing) => continue,
            };
            for (key, _, _) in &pending {
                mark_sent(&mut parts, key, true);
            }
            send(controller, &api_in, pending, &mut parts, &metrics).await;
        }
    }
}

/// The events of the metadata watches of a sharded kind, each with the index of its watch.
type Events<K> = stream::SelectAll<
    stream::BoxStream<'static, (usize, watcher::Result<watcher::Event<PartialObjectMeta<K>>>)>,
>;

/// The metadata watches of `apis`.
fn watch_all<K: Cacheable>(apis: &[Api<PartialObjectMeta<K>>]) -> Events<K> {
    let watches = apis.iter().enumerate().map(|(index, api)| {
        let config = watcher::Config::default().page_size(METADATA_PAGE_SIZE);
        watcher(api.clone(), config)
            .default_backoff()
            .map(move |event| (index, event))
            .boxed()
    });
    stream::select_all(watches)
}

/// The label writes of the periodic check: every drain due, and the assignments of the objects
/// that were without a member at the previous check too, unless claims landed since and they
/// have waited fewer than [`CHECKS_BEFORE_ASSIGNING`] checks (see the module's comment). Notes
/// the objects left without a member for the next check.
fn periodic_check(parts: &mut [Part], members: &Ring) -> Vec<(Key, Tracked, Move)> {
    let claims_landed = parts.iter().any(|part| part.claims_landed);
    let mut pending = Vec::new();
    for part in parts.iter_mut() {
        part.claims_landed = false;
        // Objects that need nothing any more under this ring (a write sent for the version they
        // were tracked at is waiting for its event).
        part.objects
            .retain(|key, tracked| tracked.sent || decide(key, tracked, members).is_some());
        for (key, tracked) in &mut part.objects {
            let Some((key, decided_on, change)) = decision(key, tracked, members) else {
                continue;
            };
            let waited = tracked.unclaimed_checks;
            let claimed_meanwhile = claims_landed && waited < CHECKS_BEFORE_ASSIGNING;
            if change == Move::Drain || (waited > 0 && !claimed_meanwhile) {
                pending.push((key, decided_on, change));
            } else {
                tracked.unclaimed_checks = waited.saturating_add(1);
            }
        }
    }
    pending
}

/// The drains that bring the objects in line with the ring of `members`: of the object
/// `changed` only, or of every object (a list complete, after a change of the ring). Objects
/// without a member in the ring are their members' to claim (`super::claim`): they are assigned
/// only at the periodic check, those that no member claimed.
fn drains(parts: &[Part], changed: Option<&Key>, members: &Ring) -> Vec<(Key, Tracked, Move)> {
    let due = |(key, tracked): (&Key, &Tracked)| {
        decision(key, tracked, members).filter(|(_, _, change)| *change == Move::Drain)
    };
    match changed {
        // One object changed: only it.
        Some(key) => parts
            .iter()
            .find_map(|part| part.objects.get_key_value(key))
            .and_then(due)
            .into_iter()
            .collect(),
        None => parts
            .iter()
            .flat_map(|part| &part.objects)
            .filter_map(due)
            .collect(),
    }
}

/// Sends the label writes of `pending`, a few at once, and notes each result as it comes (not
/// collected: a cold backlog writes every object).
async fn send<K: Cacheable>(
    controller: &'static str,
    api_in: &ApiIn<K>,
    pending: Vec<(Key, Tracked, Move)>,
    parts: &mut [Part],
    metrics: &ShardMetrics,
) {
    stream::iter(pending)
        .map(|(key, tracked, change)| {
            let api_in = Arc::clone(api_in);
            async move {
                let done = write(&api_in, controller, &key, &tracked, &change).await;
                (key, change, done)
            }
        })
        .buffer_unordered(CONCURRENT_WRITES)
        .for_each(|(key, change, done)| {
            match (done, change) {
                // Tried again on the next check.
                (Written::Failed, _) => mark_sent(parts, &key, false),
                // Decided again when the watch brings the change (see `Written::Stale`).
                (Written::Stale, _) => {}
                (Written::Done, Move::Drain | Move::Assign { from: Some(_), .. }) => {
                    metrics.moved(controller)
                }
                (Written::Done, Move::Assign { from: None, .. }) => {}
            }
            std::future::ready(())
        })
        .await;
}

/// Notes whether a label write was sent for the current version of the object `key`.
fn mark_sent(parts: &mut [Part], key: &Key, sent: bool) {
    if let Some(tracked) = parts.iter_mut().find_map(|part| part.objects.get_mut(key)) {
        tracked.sent = sent;
    }
}

/// [`decide`] for the object `key`, unless a write was sent for its current version already.
fn decision(key: &Key, tracked: &Tracked, ring: &Ring) -> Option<(Key, Tracked, Move)> {
    if tracked.sent {
        return None;
    }
    let change = decide(key, tracked, ring)?;
    Some((key.clone(), tracked.clone(), change))
}

/// What a watch event changed, for the decisions it calls for.
#[derive(Debug, PartialEq, Eq)]
enum Changed {
    /// The object of this key: its drain, if the ring asks for one.
    Object(Key),
    /// A (re)list is complete: every tracked object's.
    Listed,
    Nothing,
}

/// Takes a watch event into `part`, keeping the object only when `ring` wants a write for it
/// (see the module's comment).
fn apply<K>(
    part: &mut Part,
    event: watcher::Event<PartialObjectMeta<K>>,
    names: &mut Names,
    ring: &Ring,
) -> Changed {
    let wanted = |key: &Key, tracked: Tracked| decide(key, &tracked, ring).map(|_| tracked);
    match event {
        watcher::Event::Apply(object) => {
            let key = key_of(&object);
            let tracked = Tracked::of(&object, names);
            let labelled = tracked.shard.clone();
            let before = match wanted(&key, tracked) {
                Some(tracked) => part.objects.insert(key.clone(), tracked),
                None => part.objects.remove(&key),
            };
            if labelled.is_some() && before.is_some_and(|before| before.shard != labelled) {
                part.claims_landed = true;
            }
            Changed::Object(key)
        }
        watcher::Event::Delete(object) => {
            part.objects.remove(&key_of(&object));
            Changed::Nothing
        }
        watcher::Event::Init => {
            part.listing = Some(BTreeMap::new());
            Changed::Nothing
        }
        watcher::Event::InitApply(object) => {
            let key = key_of(&object);
            let wanted = wanted(&key, Tracked::of(&object, names));
            if let (Some(listing), Some(tracked)) = (part.listing.as_mut(), wanted) {
                listing.insert(key, tracked);
            }
            Changed::Nothing
        }
        watcher::Event::InitDone => {
            if let Some(listed) = part.listing.take() {
                part.objects = listed;
            }
            part.synced = true;
            Changed::Listed
        }
    }
}

/// What came of a label write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Written {
    Done,
    /// The object changed since the decision (`409 Conflict` on its `resourceVersion`) or is
    /// gone (`404`): its watch brings what changed, and the object is decided again on that.
    /// Sending the write again would only conflict again: on a busy API server, a periodic
    /// check that sent every such write again held the watch's events back (they wait while
    /// the writes are sent), which made more of them stale, until the elected replica sent
    /// nothing but conflicts (770,000 of them in 30 minutes, 3,000 objects on kube-apiserver).
    Stale,
    /// Another failure (a timeout, the API server away): sent again, by the elected replica at
    /// its next check, by a member's claim after a short wait (`claim::write_claim`).
    Failed,
}

/// Sends the label write of `change` for the object `key`.
pub(super) async fn write<K>(
    api_in: &ApiIn<K>,
    controller: &str,
    key: &Key,
    tracked: &Tracked,
    change: &Move,
) -> Written
where
    K: Cacheable,
{
    let (namespace, name) = namespace_and_name(key);
    let api = api_in(namespace);
    let labels = match change {
        Move::Assign { to, .. } => json!({ SHARD_LABEL: to, DRAIN_LABEL: null }),
        Move::Drain => json!({ DRAIN_LABEL: "true" }),
    };
    let patch = json!({
        "metadata": { "resourceVersion": tracked.resource_version, "labels": labels }
    });
    let params = PatchParams {
        field_manager: Some(FIELD_MANAGER.to_owned()),
        ..PatchParams::default()
    };
    match api
        .patch_metadata(name, &params, &Patch::Merge(patch))
        .await
    {
        Ok(_) => {
            tracing::debug!(controller, object = %name, ?change, "sharded");
            Written::Done
        }
        // By the HTTP code: kube's `is_conflict` also wants the API server's reason.
        Err(kube::Error::Api(status)) if matches!(status.code, 404 | 409) => {
            tracing::debug!(controller, object = %name, ?change, "changed since: {status}");
            Written::Stale
        }
        Err(error) => {
            tracing::debug!(controller, object = %name, ?change, "cannot shard yet: {error}");
            Written::Failed
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A write refused because the object changed since the decision is not sent again at the
    /// next check (the watch brings the change, and a new decision); one that failed otherwise
    /// is.
    #[tokio::test]
    async fn a_conflicting_write_waits_for_the_watch_a_failed_one_is_sent_again() {
        use k8s_openapi::api::core::v1::ConfigMap;

        for (status, sent_again) in [(409, false), (404, false), (500, true)] {
            let (client, mut server) = crate::manager::client::scripted();
            let api_in: ApiIn<ConfigMap> =
                Arc::new(move |namespace| Api::namespaced(client.clone(), namespace.unwrap()));
            let key = "default/object".to_owned();
            let mut tracked = tracked(None, false);
            tracked.sent = true;
            let mut parts = vec![Part::default()];
            parts[0].objects.insert(key.clone(), tracked.clone());
            let to_b = Move::Assign {
                to: "b".to_owned(),
                from: None,
            };
            let answer = tokio::spawn(async move {
                let (request, answer) = server.next_request().await.unwrap();
                assert_eq!(request.method(), http::Method::PATCH);
                answer.send_failure(status);
            });
            let pending = vec![(key.clone(), tracked, to_b)];
            let metrics = crate::metrics::Metrics::new().sharding();
            send("test", &api_in, pending, &mut parts, &metrics).await;
            answer.await.unwrap();
            let sent = parts[0].objects[&key].sent;
            assert_eq!(!sent, sent_again, "after a {status}");
        }
    }

    /// The elected replica leaves the objects without a member to the members' claims: it
    /// assigns one only when it was unclaimed at the previous check too and no claim landed
    /// since, or after `CHECKS_BEFORE_ASSIGNING` checks whatever landed. Drains wait for
    /// nothing.
    #[test]
    fn the_periodic_check_assigns_only_what_the_members_leave_unclaimed() {
        let ring = Ring::new(["a", "b"]);
        let key = key_of_b(&ring);
        let mut parts = vec![Part::default()];
        parts[0].objects.insert(key.clone(), tracked(None, false));
        assert!(
            periodic_check(&mut parts, &ring).is_empty(),
            "a first check"
        );
        parts[0].claims_landed = true;
        assert!(
            periodic_check(&mut parts, &ring).is_empty(),
            "other claims landed"
        );
        let pending = periodic_check(&mut parts, &ring);
        let keys: Vec<&Key> = pending.iter().map(|(key, _, _)| key).collect();
        assert_eq!(keys, [&key], "no claim since the previous check");

        // Claims of other objects at every check hold it back for so many checks only.
        parts[0].objects.insert(key.clone(), tracked(None, false));
        let mut checks = 0;
        while periodic_check(&mut parts, &ring).is_empty() {
            parts[0].claims_landed = true;
            checks += 1;
            assert!(checks <= CHECKS_BEFORE_ASSIGNING, "never assigned");
        }
        assert_eq!(checks, CHECKS_BEFORE_ASSIGNING);

        // A drain at the first check.
        parts[0]
            .objects
            .insert(key.clone(), tracked(Some("a"), false));
        parts[0].claims_landed = true;
        let pending = periodic_check(&mut parts, &ring);
        assert_eq!(pending[0].2, Move::Drain);
    }

    /// The metadata of the object `name` in `default` at `version`, labelled for `shard`.
    fn labelled(
        name: &str,
        version: &str,
        shard: Option<&str>,
    ) -> PartialObjectMeta<k8s_openapi::api::core::v1::ConfigMap> {
        let mut object = PartialObjectMeta::default();
        object.metadata.namespace = Some("default".to_owned());
        object.metadata.name = Some(name.to_owned());
        object.metadata.resource_version = Some(version.to_owned());
        let labels = shard.map(|shard| [(SHARD_LABEL.to_owned(), shard.to_owned())].into());
        object.metadata.labels = labels;
        object
    }

    /// A claim is an event that gives an object a member it did not have; the creation of an
    /// object, or an event that leaves its label as it was, is none.
    #[test]
    fn an_event_that_labels_an_object_is_a_claim_that_landed() {
        let ring = Ring::new(["a", "b"]);
        let key = key_of_b(&ring);
        let name = key.strip_prefix("default/").unwrap();
        let mut part = Part::default();
        let mut names = Names::default();
        let mut landed = |version, shard| {
            let event = watcher::Event::Apply(labelled(name, version, shard));
            assert_eq!(
                apply(&mut part, event, &mut names, &ring),
                Changed::Object(key.clone())
            );
            std::mem::take(&mut part.claims_landed)
        };
        assert!(!landed("1", Some("a")), "created with its label");
        assert!(!landed("2", Some("a")), "its label as it was");
        assert!(!landed("3", None), "a drain acknowledged");
        assert!(landed("4", Some("b")), "claimed");
    }

    /// The elected replica keeps only the objects the ring wants a write for, from the watch's
    /// events and from its lists: one where the ring puts it is let go.
    #[test]
    fn only_the_objects_the_ring_wants_a_write_for_are_kept() {
        let ring = Ring::new(["a", "b"]);
        let key = key_of_b(&ring);
        let name = key.strip_prefix("default/").unwrap();
        let mut part = Part::default();
        let mut names = Names::default();
        let mut kept = |shard| {
            let event = watcher::Event::Apply(labelled(name, "1", shard));
            apply(&mut part, event, &mut names, &ring);
            part.objects.contains_key(&key)
        };
        assert!(kept(None), "without a member");
        assert!(kept(Some("a")), "another member's, to drain");
        assert!(kept(Some("gone")), "a departed member's");
        assert!(!kept(Some("b")), "where the ring puts it");

        let events = [
            watcher::Event::Init,
            watcher::Event::InitApply(labelled(name, "2", Some("b"))),
            watcher::Event::InitApply(labelled("new", "3", None)),
            watcher::Event::InitDone,
        ];
        let changes: Vec<Changed> = (events.into_iter())
            .map(|event| apply(&mut part, event, &mut names, &ring))
            .collect();
        assert_eq!(changes.last(), Some(&Changed::Listed));
        assert!(part.synced);
        let kept: Vec<&Key> = part.objects.keys().collect();
        assert_eq!(kept, ["default/new"]);
    }

    /// The periodic check lets go of what a ring wants nothing for any more, unless a write
    /// for its version is still to be heard of.
    #[test]
    fn the_periodic_check_lets_go_of_what_needs_nothing() {
        let ring = Ring::new(["a", "b"]);
        let key = key_of_b(&ring);
        let mut parts = vec![Part::default()];
        let mut sent = tracked(Some("a"), true);
        sent.sent = true;
        parts[0]
            .objects
            .insert(key.clone(), tracked(Some("a"), true));
        parts[0].objects.insert("default/sent".to_owned(), sent);
        assert!(periodic_check(&mut parts, &ring).is_empty());
        let kept: Vec<&Key> = parts[0].objects.keys().collect();
        assert_eq!(kept, ["default/sent"], "draining: nothing to write");
    }

    fn tracked(shard: Option<&str>, draining: bool) -> Tracked {
        Tracked {
            shard: shard.map(Arc::from),
            draining,
            resource_version: "1".into(),
            sent: false,
            unclaimed_checks: 0,
        }
    }

    /// A key that the ring of `a` and `b` gives to `b`.
    fn key_of_b(ring: &Ring) -> String {
        (0..)
            .map(|i| format!("default/object-{i}"))
            .find(|key| ring.member_for(key) == Some("b"))
            .unwrap()
    }

    #[test]
    fn new_objects_are_assigned() {
        let ring = Ring::new(["a", "b"]);
        let key = key_of_b(&ring);
        let to_b = Move::Assign {
            to: "b".to_owned(),
            from: None,
        };
        assert_eq!(
            decide(&key, &tracked(None, false), &ring),
            Some(to_b.clone())
        );
        // A drain label left over from a member that acknowledged halfway goes too.
        assert_eq!(decide(&key, &tracked(None, true), &ring), Some(to_b));
    }

    #[test]
    fn objects_of_their_member_stay() {
        let ring = Ring::new(["a", "b"]);
        let key = key_of_b(&ring);
        assert_eq!(decide(&key, &tracked(Some("b"), false), &ring), None);
        assert_eq!(decide(&key, &tracked(Some("b"), true), &ring), None);
    }

    #[test]
    fn objects_of_another_valid_member_are_drained_first() {
        let ring = Ring::new(["a", "b"]);
        let key = key_of_b(&ring);
        assert_eq!(
            decide(&key, &tracked(Some("a"), false), &ring),
            Some(Move::Drain)
        );
        // Until the member acknowledges: no second drain, and no assignment.
        assert_eq!(decide(&key, &tracked(Some("a"), true), &ring), None);
    }

    /// A silent member's objects stay with it; a new object that the ring would give it goes
    /// to another member.
    #[test]
    fn a_silent_member_keeps_its_objects_and_gets_no_new_one() {
        let ring = Ring::new(["a", "b"]);
        let key = key_of_b(&ring);
        let silent_b = ring.silence(["b"]);
        assert_eq!(decide(&key, &tracked(Some("b"), false), &silent_b), None);
        assert_eq!(decide(&key, &tracked(Some("b"), true), &silent_b), None);
        let to_a = Move::Assign {
            to: "a".to_owned(),
            from: None,
        };
        assert_eq!(decide(&key, &tracked(None, false), &silent_b), Some(to_a));
        // Given to `a` while `b` was silent: stays with `a` while `b` is, drained when it speaks.
        assert_eq!(decide(&key, &tracked(Some("a"), false), &silent_b), None);
        assert_eq!(
            decide(&key, &tracked(Some("a"), false), &Ring::new(["a", "b"])),
            Some(Move::Drain)
        );
    }

    #[test]
    fn objects_of_a_departed_member_move_at_once() {
        let ring = Ring::new(["a", "b"]);
        let key = key_of_b(&ring);
        let expected = Move::Assign {
            to: "b".to_owned(),
            from: Some("gone".to_owned()),
        };
        assert_eq!(
            decide(&key, &tracked(Some("gone"), false), &ring),
            Some(expected.clone())
        );
        assert_eq!(
            decide(&key, &tracked(Some("gone"), true), &ring),
            Some(expected)
        );
    }

    #[test]
    fn a_key_gives_back_the_namespace_and_name_it_was_made_of() {
        let object = |namespace: Option<&str>| {
            let mut object = PartialObjectMeta::<k8s_openapi::api::core::v1::Pod>::default();
            object.metadata.namespace = namespace.map(str::to_owned);
            object.metadata.name = Some("web-0".to_owned());
            object
        };
        // The keys the ring has always been given: a cluster-scoped object's starts with '/'.
        assert_eq!(key_of(&object(Some("default"))), "default/web-0");
        assert_eq!(key_of(&object(None)), "/web-0");
        assert_eq!(
            namespace_and_name("default/web-0"),
            (Some("default"), "web-0")
        );
        assert_eq!(namespace_and_name("/web-0"), (None, "web-0"));
    }

    #[test]
    fn member_names_are_held_once_and_forgotten_when_unused() {
        let mut names = Names::default();
        let first = names.intern("manager-0-abc");
        let second = names.intern("manager-0-abc");
        assert!(Arc::ptr_eq(&first, &second));
        names.forget_unused();
        assert_eq!(names.0.len(), 1, "still held by the objects");
        drop((first, second));
        names.forget_unused();
        assert!(names.0.is_empty());
    }

    #[test]
    fn an_empty_ring_changes_nothing() {
        let ring = Ring::new(Vec::<String>::new());
        assert_eq!(decide("default/x", &tracked(None, false), &ring), None);
        assert_eq!(decide("default/x", &tracked(Some("a"), false), &ring), None);
    }
}
