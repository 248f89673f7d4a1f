//! Every sharded replica's view of the ring: the members whose Lease is valid, from one
//! label-selected watch of the members' Leases. Only the elected replica acts on it (it assigns
//! the objects, deletes the Leases of departed members and reports the ring's metrics), but every
//! replica keeps it from its start, so that a replica elected after the leader crashed has been
//! watching the members' Leases all along: had it started watching then, it would have to give
//! each member a full Lease duration before counting it out, and a crashed leader's own share
//! would wait for two Lease durations. A replica elected while its watch of the Leases fails
//! does so anyway: renewals may have gone unseen.
//!
//! A member is in the ring while its Lease has a holder and has changed within its duration, as
//! this replica's clock measures it from when it first saw the Lease's current record (the rule
//! of leader election, `crate::lease`): clock skew between nodes does not matter.
//! Nothing is published before the Leases have been listed, so that a replica never takes the
//! members it has not seen yet for departed, and not before a further `settle` period: the
//! replicas of a Deployment start together, and a ring published as soon as the first member's
//! Lease is listed would give it every object, to drain most of them again a moment later.
//!
//! A member whose Lease has not been renewed for [`SILENT_AFTER_RENEWALS`] retry periods is
//! silent in the ring ([`Ring::silence`]): it keeps its objects until its Lease expires, but the
//! objects without a member that would be its own go to the others at once. A member that
//! crashed is silent a few seconds after its last renewal, where its Lease takes its whole
//! duration to expire: the objects created meanwhile need not wait for that (on kube-apiserver,
//! 3,000 objects and 3 replicas with the elected one killed, the ring changed 13-14 s after the
//! kill, and the new objects of its share were reconciled 23-25 s after it). While the watch of
//! the Leases fails, renewals go unseen and no member is counted silent.
//!
//! Leases of departed members (released on shutdown, or expired after a crash) are deleted, with
//! their `resourceVersion` as a precondition: every restart of a pod makes a member of a new
//! name, and the Leases would pile up otherwise. A member that finds its Lease deleted knows it
//! left the ring ([`Role::Member`](crate::manager::leader::Role::Member)).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use futures::StreamExt as _;
use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;
use kube::api::{DeleteParams, Preconditions};
use kube::runtime::{WatchStreamExt as _, watcher};
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::ring::Layout;
use super::{LAYOUT_LABEL, MEMBER_LABEL, RING_LABEL, Ring, RingTiming};
use crate::lease::Observed;
use crate::metrics::ShardMetrics;

/// After how many retry periods without a renewal a member is silent: a member renews every
/// retry period, so three missed in a row are not a slow API server's doing.
const SILENT_AFTER_RENEWALS: u32 = 3;

/// One member's Lease as seen here.
#[derive(Clone, Debug)]
struct Member {
    name: String,
    /// The newest layout of the ring its replica knows.
    layout: Layout,
    resource_version: Option<String>,
    observed: Observed,
}

impl Member {
    fn alive(&self, default: Duration, now: Instant) -> bool {
        self.observed.holder().is_some() && !self.observed.expired(default, now)
    }
}

/// The members' Leases by Lease name.
type Leases = BTreeMap<String, Member>;

/// Watches the Leases labelled with `ring` in `api`'s namespace and publishes the ring of the
/// members whose Lease is valid on `ring_of_members` whenever it changes, until `shutdown`;
/// once `elected`, also deletes the Leases of departed members and reports the ring's size.
/// `timing` gives a Lease's duration when it names none, and the settle period (its retry period).
pub(super) async fn watch(
    api: Api<Lease>,
    ring: String,
    timing: RingTiming,
    ring_of_members: watch::Sender<Option<Ring>>,
    metrics: ShardMetrics,
    elected: CancellationToken,
    shutdown: CancellationToken,
) {
    let config = watcher::Config::default().labels(&format!("{RING_LABEL}={ring}"));
    let mut events = watcher(api.clone(), config).default_backoff().boxed();
    let mut view = View::new(&timing);
    loop {
        let wake = view.wake(Instant::now());
        let expiry = async {
            match wake {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        let was_elected = elected.is_cancelled();
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = expiry => {}
            // Once: what only the elected replica does starts now.
            () = elected.cancelled(), if !was_elected => {
                trust_on_election(&mut view.leases, view.failing, Instant::now());
            }
            event = events.next() => {
                if !view.apply(event) {
                    return;
                }
            }
        }
        let now = Instant::now();
        let Some(members) = view.ring(now) else {
            continue;
        };
        let leading = elected.is_cancelled();
        if leading {
            metrics.set_members(&ring, members.members().len());
        }
        ring_of_members.send_if_modified(|current| {
            if current.as_ref() == Some(&members) {
                return false;
            }
            let silent: Vec<&str> = members.silent().collect();
            let layout = members.layout().label();
            tracing::info!(members = ?members.members(), ?silent, layout, "the sharding ring changed");
            *current = Some(members);
            true
        });
        if leading {
            for (name, version) in view.departed(now) {
                delete(&api, &name, version).await;
            }
        }
    }
}

/// What a replica knows of the members' Leases from its watch.
struct View {
    leases: Leases,
    /// The Leases of a list in progress (the watch's first, or a relist).
    listing: Option<Leases>,
    /// When the first list of the Leases is done, and then when the ring may be published.
    settled: Option<Instant>,
    /// The Leases the elected replica has deleted, by name and version.
    deleting: BTreeSet<(String, String)>,
    /// Whether the last item of the watch was an error: while it fails, renewals go unseen.
    failing: bool,
    /// A Lease's duration when it names none.
    default_duration: Duration,
    /// How long after the first list the ring is published.
    settle: Duration,
    /// How long a member goes without a renewal before it is silent.
    silent_after: Duration,
}

impl View {
    fn new(timing: &RingTiming) -> Self {
        View {
            leases: Leases::new(),
            listing: None,
            settled: None,
            deleting: BTreeSet::new(),
            failing: false,
            default_duration: timing.lease_duration,
            settle: timing.retry_period,
            silent_after: timing.retry_period * SILENT_AFTER_RENEWALS,
        }
    }

    /// When to look again without an event: the earliest of the next expiry of a live member's
    /// Lease, the next moment a member falls silent, and the end of the settle period.
    fn wake(&self, now: Instant) -> Option<Instant> {
        let alive =
            (self.leases.values()).filter(|member| member.alive(self.default_duration, now));
        let next_expiry = alive
            .flat_map(|member| {
                let expiry = member.observed.expires_at(self.default_duration);
                [expiry, member.observed.at + self.silent_after]
            })
            .filter(|at| *at > now)
            .min();
        match (self.settled, next_expiry) {
            (Some(at), Some(expiry)) if at > now => Some(at.min(expiry)),
            (Some(at), None) if at > now => Some(at),
            _ => next_expiry,
        }
    }

    /// Takes one item of the watch; `false` once the watch has ended.
    fn apply(&mut self, event: Option<Result<watcher::Event<Lease>, watcher::Error>>) -> bool {
        // While the watch fails, renewals go unseen; any event means it works again.
        self.failing = matches!(event, Some(Err(_)));
        match event {
            None => return false,
            Some(Ok(watcher::Event::Apply(lease))) => {
                if let Some((name, member)) = observe(lease, &self.leases) {
                    self.leases.insert(name, member);
                }
            }
            Some(Ok(watcher::Event::Delete(lease))) => {
                if let Some(name) = lease.metadata.name {
                    self.leases.remove(&name);
                }
            }
            Some(Ok(watcher::Event::Init)) => self.listing = Some(Leases::new()),
            Some(Ok(watcher::Event::InitApply(lease))) => {
                let member = observe(lease, &self.leases);
                if let (Some(listing), Some((name, member))) = (self.listing.as_mut(), member) {
                    listing.insert(name, member);
                }
            }
            Some(Ok(watcher::Event::InitDone)) => {
                if let Some(listed) = self.listing.take() {
                    self.leases = listed;
                }
                let settle = self.settle;
                self.settled.get_or_insert_with(|| Instant::now() + settle);
            }
            Some(Err(error)) => {
                let error = &error as &dyn std::error::Error;
                tracing::warn!(error, "cannot watch the Leases of the sharding ring");
            }
        }
        true
    }

    /// The ring of the members alive at `now`, once the view has settled, in the layout they
    /// all know.
    fn ring(&self, now: Instant) -> Option<Ring> {
        if self.settled.is_none_or(|at| now < at) {
            return None;
        }
        let alive =
            (self.leases.values()).filter(|member| member.alive(self.default_duration, now));
        let silent = alive.clone().filter(|member| self.silent(member, now));
        let layout = Layout::common(alive.clone().map(|member| member.layout));
        let ring = Ring::with_layout(alive.map(|member| member.name.clone()), layout);
        Some(ring.silence(silent.map(|member| member.name.as_str())))
    }

    /// Whether `member` has gone [`View::silent_after`] without a renewal seen, the watch
    /// working.
    fn silent(&self, member: &Member, now: Instant) -> bool {
        !self.failing && now.saturating_duration_since(member.observed.at) >= self.silent_after
    }

    /// The Leases of departed members at `now`, by name and version, each version once: the
    /// watch then removes it, or brings a newer version.
    fn departed(&mut self, now: Instant) -> Vec<(String, String)> {
        let leases = &self.leases;
        self.deleting.retain(|(name, _)| leases.contains_key(name));
        let mut departed = Vec::new();
        for (name, member) in leases {
            let version = member.resource_version.clone().unwrap_or_default();
            if !member.alive(self.default_duration, now)
                && self.deleting.insert((name.clone(), version.clone()))
            {
                departed.push((name.clone(), version));
            }
        }
        departed
    }
}

/// What the elected replica may trust of the view it kept as a standby. A watch that is
/// failing at the moment of election may have missed renewals: the members' records then count
/// from now, as for a replica that has just listed them, so that no member whose renewals went
/// unseen is counted out (its objects would move while it still reconciles them).
fn trust_on_election(leases: &mut Leases, failing: bool, now: Instant) {
    if failing {
        for member in leases.values_mut() {
            member.observed.at = now;
        }
    }
}

/// `lease` as a member, by its name: its record first seen now, unless `before` had the same.
fn observe(lease: Lease, before: &Leases) -> Option<(String, Member)> {
    let name = lease.metadata.name.clone()?;
    let labels = lease.metadata.labels.as_ref();
    let Some(member) = labels.and_then(|labels| labels.get(MEMBER_LABEL)).cloned() else {
        tracing::warn!(lease = %name, "a Lease of the sharding ring without the {MEMBER_LABEL} label");
        return None;
    };
    let layout = Layout::of_label(
        labels
            .and_then(|labels| labels.get(LAYOUT_LABEL))
            .map(String::as_str),
    );
    let spec = lease.spec.unwrap_or_default();
    let at = match before.get(&name) {
        Some(known) if known.observed.spec == spec => known.observed.at,
        _ => Instant::now(),
    };
    let member = Member {
        name: member,
        layout,
        resource_version: lease.metadata.resource_version,
        observed: Observed { spec, at },
    };
    Some((name, member))
}

/// Deletes the Lease `name` of a departed member if it is still at `version`.
async fn delete(api: &Api<Lease>, name: &str, version: String) {
    let params = DeleteParams {
        preconditions: Some(Preconditions {
            resource_version: Some(version),
            uid: None,
        }),
        ..DeleteParams::default()
    };
    match api.delete(name, &params).await {
        Ok(_) => tracing::info!(lease = name, "deleted the Lease of a departed member"),
        // Renewed meanwhile (then it is alive again), or gone already.
        Err(kube::Error::Api(status)) if status.is_conflict() || status.is_not_found() => {}
        Err(error) => {
            tracing::warn!(
                lease = name,
                "cannot delete the Lease of a departed member: {error}"
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::coordination::v1::LeaseSpec;

    use super::*;

    fn member(seen_ago: Duration, now: Instant) -> Member {
        Member {
            name: "a".to_owned(),
            layout: Layout::NEWEST,
            resource_version: Some("1".to_owned()),
            observed: Observed {
                spec: LeaseSpec {
                    holder_identity: Some("a".to_owned()),
                    lease_duration_seconds: Some(15),
                    ..LeaseSpec::default()
                },
                at: now - seen_ago,
            },
        }
    }

    /// A view that settled a minute before `now`: a Lease of 15 s renewed every 2 s.
    fn settled_view(now: Instant) -> View {
        let timing = RingTiming {
            namespace: "default".to_owned(),
            lease_duration: Duration::from_secs(15),
            retry_period: Duration::from_secs(2),
        };
        let mut view = View::new(&timing);
        view.settled = Some(now - Duration::from_secs(60));
        view
    }

    /// A member not renewed for three retry periods is silent in the ring, until it is renewed,
    /// and never while the watch fails; the view wakes when it falls silent.
    #[test]
    fn a_member_without_renewals_for_three_retry_periods_is_silent() {
        let now = Instant::now();
        let mut view = settled_view(now);
        let mut quiet = member(Duration::from_secs(5), now);
        quiet.name = "quiet".to_owned();
        view.leases
            .insert("ring-a".to_owned(), member(Duration::ZERO, now));
        view.leases.insert("ring-quiet".to_owned(), quiet);
        let ring = view.ring(now).unwrap();
        assert!(!ring.is_silent("quiet") && !ring.is_silent("a"));
        assert_eq!(view.wake(now), Some(now + Duration::from_secs(1)));
        let later = now + Duration::from_secs(1);
        let ring = view.ring(later).unwrap();
        assert!(ring.contains("quiet") && ring.is_silent("quiet") && !ring.is_silent("a"));
        view.failing = true;
        assert!(!view.ring(later).unwrap().is_silent("quiet"));
    }

    /// A member's Lease says the newest layout its replica knows, a first version's Lease
    /// none; the ring keeps the oldest layout until the last member that knows no newer one
    /// has left.
    #[test]
    fn the_ring_keeps_the_oldest_layout_of_its_members() {
        let now = Instant::now();
        let lease = |member: &str, layout: Option<&str>| {
            let mut labels = BTreeMap::from([(MEMBER_LABEL.to_owned(), member.to_owned())]);
            if let Some(layout) = layout {
                labels.insert(LAYOUT_LABEL.to_owned(), layout.to_owned());
            }
            let mut lease = Lease::default();
            lease.metadata.name = Some(format!("ring-{member}"));
            lease.metadata.labels = Some(labels);
            lease.spec = Some(LeaseSpec {
                holder_identity: Some(member.to_owned()),
                lease_duration_seconds: Some(15),
                ..LeaseSpec::default()
            });
            lease
        };
        let mut view = settled_view(now);
        for lease in [lease("new", Some("rendezvous")), lease("old", None)] {
            let (name, member) = observe(lease, &view.leases).unwrap();
            view.leases.insert(name, member);
        }
        let ring = view.ring(Instant::now()).unwrap();
        assert_eq!(ring.layout(), Layout::VirtualNodes);
        assert_eq!(ring.members(), ["new", "old"]);
        view.leases.remove("ring-old");
        let ring = view.ring(Instant::now()).unwrap();
        assert_eq!(ring, Ring::with_layout(["new"], Layout::Rendezvous));
    }

    #[test]
    fn a_view_whose_watch_fails_at_election_gives_every_member_a_full_lease_duration() {
        let now = Instant::now();
        let default = Duration::from_secs(15);
        let stale = || Leases::from([("ring-a".to_owned(), member(Duration::from_secs(20), now))]);
        // A working watch saw no renewal for 20 s: the member is out.
        let mut leases = stale();
        trust_on_election(&mut leases, false, now);
        assert!(!leases["ring-a"].alive(default, now));
        // A failing watch may have missed its renewals: it is in, for a full duration from now.
        let mut leases = stale();
        trust_on_election(&mut leases, true, now);
        assert!(leases["ring-a"].alive(default, now));
        assert!(!leases["ring-a"].alive(default, now + default));
    }
}
