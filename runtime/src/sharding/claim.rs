//! Every member's side of the assignment: it labels for itself the objects that have no member
//! in its view of the ring and that the ring gives to it, as soon as it sees them, without
//! waiting for the elected replica.
//!
//! Objects have no member when they are new, when their member acknowledged a drain, or when
//! their member left the ring (its Lease released, or expired after a crash). Were only the
//! elected replica to assign them, the death of the elected replica would hold them all back: a
//! new one is elected only once its Lease has expired, and then starts by listing every object.
//! So each member watches the objects whose shard label names no member of its ring (a label
//! selector `shard notin (<members>)`, which also selects objects without the label: no object
//! at all in the steady state), made again whenever its view of the ring changes, and claims
//! those that the ring gives to it, with the `resourceVersion` it decided on as a precondition.
//! A new object is reconciled at once whoever leads, and a dead member's share moves as soon as
//! the members see its Lease expire, in parallel over the members.
//!
//! A claim follows the rules of the elected replica's assignment ([`decide`]): an object whose
//! member is in the ring is never claimed (it moves only through a drain), and a member counts
//! another out only once its Lease has expired on its own clock, after which the other has
//! stopped reconciling (its renew deadline is shorter than the Lease's duration). Two replicas
//! whose views differ may decide differently: the precondition lets one write win, and the
//! elected replica drains an object claimed against its view of the ring. The elected replica
//! leaves the objects without a member to their members' claims and assigns those still
//! unclaimed at its periodic check ([`super::assign`]), so a new object is written once. A claim
//! that fails for a reason that may pass (a timeout, the API server busy) is sent again after a
//! short wait ([`write_claim`]): left to that check, its object waited seconds more, and
//! through the whole election when the elected replica was the one that died.
//!
//! What a (re)list of the watch brings is claimed newest first: after a member died, its
//! share comes with the objects created since, and those are the ones nobody has reconciled
//! yet (the dead member's older objects have their children, and their workloads run on);
//! kube-apiserver lists by name, which would put them anywhere in the queue of a take-over.
//!
//! A departed member's objects are claimed at the pace this member reconciles, newest first
//! ([`Pace`], [`newest_first`]), while objects that never had a member are claimed at once.
//! Kube's controller takes the objects due from a hash set once its workers are busy: a whole
//! share claimed at once put the few new objects anywhere among the hundreds of old ones, and
//! the last of them waited for nearly all (on kube-apiserver, 3,000 objects, 3 replicas: the
//! objects created after the elected replica's kill were reconciled 37.6 s after it, 22 s after
//! its Lease expired, while the two survivors worked through 1,100 taken-over objects; 23.2 s
//! paced). The old objects' workloads run on meanwhile; the elected replica assigns what is
//! still unclaimed after its checks ([`super::assign`]), as for any member that does not claim.
//!
//! The list after a member left or fell silent comes from the API server's watch cache
//! (`resourceVersion=0`), not from etcd: a quorum list reads every object of the kind from etcd,
//! page by page, to filter them by their label, while the dead member's share waits and no new
//! object is claimed (on kube-apiserver with 3,300 objects, 6.4 s for the first page at the
//! silence of the elected replica, and 2 s a page after its Lease expired, each survivor
//! listing). Such a list is not paged: kube sends no `resourceVersion=0` with a page size, and
//! the watch cache of kube-apiserver 1.28 answers whole anyway. It holds only the objects
//! without a member (a dead member's share: a third of the objects' metadata with three
//! members). The claims are written with the `resourceVersion` as a precondition, so a cache a
//! moment behind costs a conflict, never a wrong label. Other lists stay paginated quorum
//! reads: at a cold start every object is without a member.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use futures::{StreamExt as _, stream};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::Api;
use kube::core::PartialObjectMeta;
use kube::runtime::{WatchStreamExt as _, watcher};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::assign::{self, ApiIn, Move, Tracked, decide};
use super::{Ring, SHARD_LABEL};
use crate::cache::Cacheable;
use crate::metrics::ShardMetrics;
use crate::metrics::workqueue::WorkQueueMetrics;

/// How many of a departed member's objects a member claims ahead of its reconciles (see
/// [`Pace`]): a few, so that the workers never wait for a claim.
const TAKE_OVER_AHEAD: u64 = 8;

/// The waits before a failed claim is sent again (see [`write_claim`]): short, because a claim
/// holds one of the [`assign::CONCURRENT_WRITES`] writes while it waits, and few, because the
/// elected replica assigns what stays unclaimed.
const CLAIM_RETRY_WAITS: [std::time::Duration; 3] = [
    std::time::Duration::from_millis(250),
    std::time::Duration::from_millis(500),
    std::time::Duration::from_secs(1),
];

/// How often a waiting claim looks at the queue again.
const TAKE_OVER_POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// Lets a departed member's objects be claimed at the pace the controller reconciles (see the
/// module's comment): the next claim waits until no object is due without a worker, and the
/// controller has finished as many reconciles since the take-over began as claims were let
/// through, less [`TAKE_OVER_AHEAD`]. An empty queue, because kube's controller does not take
/// the objects due at random but the first of its set's order: an object behind others there
/// waited as long as claims kept coming (one new object in ten was taken after most of the old
/// ones, in the test of this). The count as well, because a claim shows in the queue only once
/// its watch event has come: the queue alone let dozens through before the first counted.
struct Pace {
    queue: WorkQueueMetrics,
    /// The reconciles finished when the take-over began.
    start: u64,
    /// How many claims were let through.
    released: u64,
}

impl Pace {
    fn new(queue: &WorkQueueMetrics) -> Self {
        let (_, start) = queue.depth_and_finished();
        Pace {
            queue: queue.clone(),
            start,
            released: 0,
        }
    }

    /// Waits for the next claim's turn.
    fn next(&mut self) -> impl Future<Output = ()> + Send + use<> {
        self.released += 1;
        let (queue, start, released) = (self.queue.clone(), self.start, self.released);
        async move {
            loop {
                let (depth, finished) = queue.depth_and_finished();
                if depth == 0 && released <= finished - start + TAKE_OVER_AHEAD {
                    return;
                }
                tokio::time::sleep(TAKE_OVER_POLL).await;
            }
        }
    }
}

/// What every sharded replica hands the claimer of each sharded controller.
pub(crate) struct Claim {
    /// This replica's member name.
    pub(crate) member: String,
    /// The members whose Lease is valid, as this replica sees them; `None` until their Leases
    /// are listed.
    pub(crate) ring: watch::Receiver<Option<Ring>>,
    pub(crate) metrics: ShardMetrics,
    pub(crate) shutdown: CancellationToken,
}

/// Claims for `claim.member` the objects of `apis` without a member that the ring gives to it,
/// until shutdown, a departed member's at the pace of the controller's `queue`.
/// `PartialObjectMeta` makes the watches metadata-only.
pub(crate) async fn run<K>(
    controller: &'static str,
    apis: Vec<Api<PartialObjectMeta<K>>>,
    api_in: ApiIn<K>,
    claim: Claim,
    queue: WorkQueueMetrics,
) where
    K: Cacheable,
{
    let Claim {
        member,
        mut ring,
        metrics,
        shutdown,
    } = claim;
    let mut before: Option<Ring> = None;
    loop {
        // Claims only while this replica is in its own view of the ring: its Lease is valid.
        let members = ring.borrow_and_update().clone();
        let config = members
            .as_ref()
            .map(|members| list_config(before.as_ref(), members));
        before.clone_from(&members);
        let claims = async {
            match members.filter(|members| members.contains(&member)) {
                Some(members) => {
                    let watch = Watch {
                        apis: &apis,
                        config: config.unwrap_or_default(),
                        queue: &queue,
                    };
                    claim_orphans(controller, watch, &api_in, &member, &members, &metrics).await
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = shutdown.cancelled() => return,
            // Again with the new ring's selector.
            changed = ring.changed() => if changed.is_err() { return },
            () = claims => return,
        }
    }
}

/// The watches of the objects to claim: where, how they list, and the queue of the controller
/// whose objects they are.
struct Watch<'a, K> {
    apis: &'a [Api<PartialObjectMeta<K>>],
    config: watcher::Config,
    queue: &'a WorkQueueMetrics,
}

/// How the watch of the objects without a member of `members` lists them, after the ring
/// `before` (see the module's comment): from the watch cache, whole, when the ring gives keys to
/// a member no more, because it fell silent (its new objects) or left (its share, whether it
/// fell silent first, as a crashed member does, or not); else a quorum read, in pages.
fn list_config(before: Option<&Ring>, members: &Ring) -> watcher::Config {
    let config = watcher::Config::default().labels(&orphans(members));
    let quieter = before.is_some_and(|before| {
        let mut members_before = before.members().iter();
        members_before.any(|member| {
            let left = !members.contains(member);
            (before.takes_keys(member) || left) && !members.takes_keys(member)
        })
    });
    if quieter {
        // kube sends `resourceVersion=0` only without a page size.
        watcher::Config {
            page_size: None,
            ..config.any_semantic()
        }
    } else {
        config.page_size(assign::METADATA_PAGE_SIZE)
    }
}

/// Watches the objects that have no member of `members` and claims for `member` those that
/// the ring gives to it, a few writes at once, until dropped (the watches retry, never end).
async fn claim_orphans<K>(
    controller: &'static str,
    watch: Watch<'_, K>,
    api_in: &ApiIn<K>,
    member: &str,
    members: &Ring,
    metrics: &ShardMetrics,
) where
    K: Cacheable,
{
    let Watch {
        apis,
        config,
        queue,
    } = watch;
    let watches = apis.iter().map(|api| {
        watcher(api.clone(), config.clone())
            .default_backoff()
            .scan(Vec::new(), move |listing, event| {
                let claims = match event {
                    Ok(event) => {
                        to_claim(listing, event, |object| claimable(object, member, members))
                    }
                    Err(error) => {
                        let error = &error as &dyn std::error::Error;
                        tracing::warn!(controller, error, "cannot watch the objects to claim");
                        Vec::new()
                    }
                };
                std::future::ready(Some(stream::iter(claims)))
            })
            .flatten()
            .boxed()
    });
    // A departed member's objects wait for their turn (`Pace`); the others go straight to the
    // writes.
    let (to_pace, paced) = futures::channel::mpsc::unbounded();
    let direct = stream::select_all(watches).filter_map(move |(created, claim): Timed<_>| {
        let take_over = matches!(claim.2, Move::Assign { from: Some(_), .. });
        let direct = match take_over {
            true => {
                (to_pace.unbounded_send((created, claim)).err()).map(|error| error.into_inner().1)
            }
            false => Some(claim),
        };
        std::future::ready(direct)
    });
    stream::select(direct, newest_first(paced, Pace::new(queue)))
        .map(|(key, tracked, change)| async move {
            let written = write_claim(api_in, controller, &key, &tracked, &change).await;
            let moved = matches!(change, Move::Assign { from: Some(_), .. });
            if written == assign::Written::Done && moved {
                metrics.moved(controller);
            }
        })
        .buffer_unordered(assign::CONCURRENT_WRITES)
        .for_each(|()| std::future::ready(()))
        .await;
}

/// Sends the label write of a claim, and again after a short wait while it fails for a reason
/// that may pass (a timeout, the API server busy or away: [`assign::Written::Failed`]), at most
/// [`CLAIM_RETRY_WAITS`] times; after that, the elected replica's periodic check assigns the
/// object ([`super::assign`]), seconds later. A write refused because the object changed is not
/// sent again: its watch brings the change, and a new decision.
async fn write_claim<K>(
    api_in: &ApiIn<K>,
    controller: &str,
    key: &assign::Key,
    tracked: &Tracked,
    change: &Move,
) -> assign::Written
where
    K: Cacheable,
{
    let mut waits = CLAIM_RETRY_WAITS.iter();
    loop {
        let written = assign::write(api_in, controller, key, tracked, change).await;
        match (written, waits.next()) {
            (assign::Written::Failed, Some(wait)) => tokio::time::sleep(*wait).await,
            (written, _) => return written,
        }
    }
}

/// A claim with its object's creation time.
type Timed<C> = (Option<Time>, C);

/// The claims that come on `claims`, newest object first whatever order they came in (a claim
/// refused as stale comes again with the watch's next event), each once `pace` lets it through.
fn newest_first<C>(
    claims: futures::channel::mpsc::UnboundedReceiver<Timed<C>>,
    pace: Pace,
) -> impl futures::Stream<Item = C> {
    let waiting = Waiting {
        heap: BinaryHeap::new(),
        count: 0,
    };
    stream::unfold(
        (claims, waiting, pace),
        |(mut claims, mut waiting, mut pace)| async move {
            if waiting.heap.is_empty() {
                let first = claims.next().await?;
                waiting.push(first);
            }
            pace.next().await;
            while let Ok(more) = claims.try_recv() {
                waiting.push(more);
            }
            let newest = waiting.heap.pop()?;
            Some((newest.claim, (claims, waiting, pace)))
        },
    )
}

/// Claims waiting for their turn.
struct Waiting<C> {
    heap: BinaryHeap<Newest<C>>,
    /// How many came: of objects created in the same second, the first come goes first.
    count: u64,
}

impl<C> Waiting<C> {
    fn push(&mut self, (created, claim): Timed<C>) {
        self.count += 1;
        let came = Reverse(self.count);
        self.heap.push(Newest {
            created,
            came,
            claim,
        });
    }
}

/// A claim in [`Waiting`]'s heap, ordered by its object's creation time, then by its coming.
struct Newest<C> {
    created: Option<Time>,
    came: Reverse<u64>,
    claim: C,
}

impl<C> Ord for Newest<C> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (&self.created, self.came).cmp(&(&other.created, other.came))
    }
}

impl<C> PartialOrd for Newest<C> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl<C> PartialEq for Newest<C> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl<C> Eq for Newest<C> {}

/// The claims (`claim` of each object) a watch event brings: that of an `Apply` at once, those
/// of a (re)list once it is complete, newest object first (see the module's comment; the same
/// second keeps the list's order). Until then `listing` keeps the claims with their objects'
/// creation times only: a list at a cold start brings every object, and kept whole, their
/// metadata (with managed fields) raised the elected replica's peak from 10.4 MiB above its
/// floor to 16.8 (3,000 objects, 3 replicas, on kube-apiserver).
fn to_claim<K, C>(
    listing: &mut Vec<Timed<C>>,
    event: watcher::Event<PartialObjectMeta<K>>,
    claim: impl Fn(&PartialObjectMeta<K>) -> Option<C>,
) -> Vec<Timed<C>> {
    match event {
        watcher::Event::Apply(object) => {
            let created = object.metadata.creation_timestamp.clone();
            claim(&object)
                .map(|claim| (created, claim))
                .into_iter()
                .collect()
        }
        watcher::Event::Init => {
            listing.clear();
            Vec::new()
        }
        watcher::Event::InitApply(object) => {
            if let Some(claim) = claim(&object) {
                listing.push((object.metadata.creation_timestamp, claim));
            }
            Vec::new()
        }
        watcher::Event::InitDone => {
            let mut listed = std::mem::take(listing);
            listed.sort_by(|(a, _), (b, _)| b.cmp(a));
            listed
        }
        watcher::Event::Delete(_) => Vec::new(),
    }
}

/// The label selector of the objects whose shard label names no member of `members` (or that
/// have none).
fn orphans(members: &Ring) -> String {
    format!("{SHARD_LABEL} notin ({})", members.members().join(","))
}

/// The claim of `object` for `member`: the write that labels it for `member` when it has no
/// member in `members` and the ring gives it to `member`.
fn claimable<K>(
    object: &PartialObjectMeta<K>,
    member: &str,
    members: &Ring,
) -> Option<(assign::Key, Tracked, Move)> {
    let key = assign::key_of(object);
    let tracked = Tracked::of(object, &mut assign::Names::default());
    match decide(&key, &tracked, members)? {
        change @ Move::Assign { .. } if members.member_for(&key) == Some(member) => {
            Some((key, tracked, change))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;
    use crate::sharding::DRAIN_LABEL;

    fn object(name: &str, labels: &[(&str, &str)]) -> PartialObjectMeta<ConfigMap> {
        let mut object = PartialObjectMeta::<ConfigMap>::default();
        object.metadata.namespace = Some("default".to_owned());
        object.metadata.name = Some(name.to_owned());
        object.metadata.resource_version = Some("7".to_owned());
        let labels = labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()));
        object.metadata.labels = Some(labels.collect());
        object
    }

    /// The name of an object that the ring gives to `member`.
    fn name_for(ring: &Ring, member: &str) -> String {
        (0..)
            .map(|i| format!("object-{i}"))
            .find(|name| ring.member_for(&format!("default/{name}")) == Some(member))
            .unwrap()
    }

    #[test]
    fn a_member_claims_the_objects_without_a_member_that_the_ring_gives_to_it() {
        let ring = Ring::new(["a", "b"]);
        let (mine, theirs) = (name_for(&ring, "a"), name_for(&ring, "b"));
        let (key, tracked, change) = claimable(&object(&mine, &[]), "a", &ring).unwrap();
        assert_eq!(key, format!("default/{mine}"));
        assert_eq!(&*tracked.resource_version, "7", "the precondition");
        let to_a = |from: Option<&str>| Move::Assign {
            to: "a".to_owned(),
            from: from.map(str::to_owned),
        };
        assert_eq!(change, to_a(None));
        // A departed member's, drained or not.
        let departed = [(SHARD_LABEL, "gone"), (DRAIN_LABEL, "true")];
        let (_, _, change) = claimable(&object(&mine, &departed), "a", &ring).unwrap();
        assert_eq!(change, to_a(Some("gone")));
        // Not what the ring gives to another member: that member claims it.
        assert!(claimable(&object(&theirs, &[]), "a", &ring).is_none());
    }

    #[test]
    fn an_object_of_a_member_in_the_ring_is_never_claimed() {
        let ring = Ring::new(["a", "b"]);
        let mine = name_for(&ring, "a");
        // Its member lets it go through a drain, which only the elected replica asks for.
        assert!(claimable(&object(&mine, &[(SHARD_LABEL, "b")]), "a", &ring).is_none());
        assert!(claimable(&object(&mine, &[(SHARD_LABEL, "a")]), "a", &ring).is_none());
    }

    /// A list is claimed once complete, newest first; an object that comes after it at once.
    #[test]
    fn a_list_is_claimed_newest_first() {
        let created = |name: &str, second: i64| {
            let mut object = object(name, &[]);
            let time = jiff::Timestamp::from_second(second).unwrap();
            object.metadata.creation_timestamp = Some(Time(time));
            object
        };
        // The claim of an object here: its name, unless it is "theirs".
        let claim = |object: &PartialObjectMeta<ConfigMap>| {
            object.metadata.name.clone().filter(|name| name != "theirs")
        };
        let mut listing = Vec::new();
        assert!(to_claim(&mut listing, watcher::Event::Init, claim).is_empty());
        for (name, second) in [("a", 10), ("b", 30), ("theirs", 40), ("c", 20), ("d", 30)] {
            let event = watcher::Event::InitApply(created(name, second));
            let claimed = to_claim(&mut listing, event, claim);
            assert!(claimed.is_empty(), "before the list is done");
        }
        assert_eq!(listing.len(), 4, "the claims alone are kept");
        let names = |claims: Vec<Timed<String>>| claims.into_iter().map(|(_, name)| name);
        let claimed = to_claim(&mut listing, watcher::Event::InitDone, claim);
        assert!(names(claimed).eq(["b", "d", "c", "a"]));
        let claimed = to_claim(&mut listing, watcher::Event::Apply(created("e", 1)), claim);
        assert!(names(claimed).eq(["e"]));
    }

    /// Waiting claims go newest object first, whatever order they came in; a few ahead of the
    /// reconciles, then one for each reconcile that ends, and none while objects are due.
    #[tokio::test]
    async fn a_departed_members_objects_are_claimed_newest_first_at_the_pace_of_the_reconciles() {
        let queue = crate::metrics::Metrics::new().work_queue("test");
        let (claims, waiting) = futures::channel::mpsc::unbounded();
        let at = |second| Some(Time(jiff::Timestamp::from_second(second).unwrap()));
        let came = [
            (at(1), "a"),
            (at(3), "b"),
            (at(2), "c"),
            (None, "d"),
            (at(3), "e"),
        ];
        for claim in came {
            claims.unbounded_send(claim).unwrap();
        }
        let mut paced = Box::pin(newest_first(waiting, Pace::new(&queue)));
        // Newest first, the first come of a second first, no time last.
        let mut order = Vec::new();
        for _ in 0..5 {
            order.push(paced.next().await.unwrap());
        }
        assert_eq!(order, ["b", "e", "c", "a", "d"]);
        // Beyond the claims ahead: the next waits for a reconcile to end, and for the queue.
        for i in 0..TAKE_OVER_AHEAD - 5 {
            claims.unbounded_send((at(10), "more")).unwrap();
            assert_eq!(paced.next().await, Some("more"), "{i}");
        }
        claims.unbounded_send((at(10), "late")).unwrap();
        let next = tokio::time::timeout(TAKE_OVER_POLL * 4, paced.next());
        assert!(next.await.is_err(), "let through ahead of the reconciles");
        let key = WorkQueueMetrics::key(Some("default"), "x");
        queue.added(key);
        queue.started(key);
        queue.finished(key, false);
        queue.added(WorkQueueMetrics::key(Some("default"), "due"));
        let next = tokio::time::timeout(TAKE_OVER_POLL * 4, paced.next());
        assert!(next.await.is_err(), "let through while an object is due");
        queue.started(WorkQueueMetrics::key(Some("default"), "due"));
        assert_eq!(paced.next().await, Some("late"));
    }

    /// A claim that failed for a reason that may pass is sent again after a short wait, a few
    /// times at most; one refused because the object changed is not.
    #[tokio::test(start_paused = true)]
    async fn a_failed_claim_is_sent_again_a_few_times_a_stale_one_never() {
        use std::sync::Arc;

        let cases = [
            (&[500, 503, 200][..], assign::Written::Done),
            (&[409][..], assign::Written::Stale),
            (&[500, 500, 500, 500][..], assign::Written::Failed),
        ];
        for (answers, expected) in cases {
            let (client, mut server) = crate::manager::client::scripted();
            let api_in: ApiIn<ConfigMap> =
                Arc::new(move |namespace| Api::namespaced(client.clone(), namespace.unwrap()));
            let tracked = Tracked {
                shard: None,
                draining: false,
                resource_version: "7".into(),
                sent: false,
                unclaimed_checks: 0,
            };
            let change = Move::Assign {
                to: "a".to_owned(),
                from: None,
            };
            let server = tokio::spawn(async move {
                for &status in answers {
                    let (request, answer) = server.next_request().await.unwrap();
                    assert_eq!(request.method(), http::Method::PATCH);
                    match status {
                        200 => answer.send_json(
                            200,
                            &serde_json::json!({
                                "apiVersion": "v1", "kind": "ConfigMap",
                                "metadata": { "name": "object", "namespace": "default" },
                            }),
                        ),
                        _ => answer.send_failure(status),
                    }
                }
                // No request after the last answer.
                assert!(server.next_request().await.is_none());
            });
            let key = "default/object".to_owned();
            let written = write_claim(&api_in, "test", &key, &tracked, &change).await;
            assert_eq!(written, expected, "answered {answers:?}");
            drop(api_in);
            server.await.unwrap();
        }
    }

    #[test]
    fn the_list_after_a_member_left_comes_from_the_watch_cache() {
        use kube::runtime::watcher::ListSemantic;
        let (three, two) = (Ring::new(["a", "b", "c"]), Ring::new(["a", "b"]));
        let from_etcd = |config: &watcher::Config| {
            assert_eq!(config.list_semantic, ListSemantic::MostRecent);
            assert_eq!(config.page_size, Some(assign::METADATA_PAGE_SIZE));
        };
        // kube asks for `resourceVersion=0`, the watch cache, only without a page size.
        let from_cache = |config: &watcher::Config| {
            assert_eq!(config.list_semantic, ListSemantic::Any);
            assert_eq!(config.page_size, None);
        };
        // The first list (a cold start: every object), and after a member joined: from etcd.
        for before in [None, Some(&two)] {
            from_etcd(&list_config(before, &three));
        }
        // "c" left: its share is listed from the cache, at once.
        let config = list_config(Some(&three), &two);
        from_cache(&config);
        assert_eq!(
            config.label_selector.as_deref(),
            Some(orphans(&two).as_str())
        );
        // So when it falls silent (its new objects), and when it leaves after falling silent
        // (a crash: its Lease is not renewed, then expires); not when it speaks again.
        let silent_c = three.clone().silence(["c"]);
        from_cache(&list_config(Some(&three), &silent_c));
        from_cache(&list_config(Some(&silent_c), &two));
        from_etcd(&list_config(Some(&silent_c), &three));
    }

    #[test]
    fn the_watch_selects_the_objects_of_no_member_of_the_ring() {
        let ring = Ring::new(["b", "a"]);
        assert_eq!(orphans(&ring), "sharding.operator-rs.io/shard notin (a,b)");
    }
}
