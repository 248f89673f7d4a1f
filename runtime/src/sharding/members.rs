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

use super::{MEMBER_LABEL, RING_LABEL, Ring, RingTiming};
use crate::lease::Observed;
use crate::metrics::ShardMetrics;

/// One member's Lease as seen here.
#[derive(Clone, Debug)]
struct Member {
    name: String,
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
    let (default_duration, settle) = (timing.lease_duration, timing.retry_period);
    let config = watcher::Config::default().labels(&format!("{RING_LABEL}={ring}"));
    let mut events = watcher(api.clone(), config).default_backoff().boxed();
    let mut leases = Leases::new();
    let mut listing: Option<Leases> = None;
    // When the first list of the Leases is done, and then when the ring may be published.
    let mut settled: Option<Instant> = None;
    let mut deleting = BTreeSet::<(String, String)>::new();
    // Whether the last item of the watch was an error: while it fails, renewals go unseen.
    let mut failing = false;
    loop {
        let now = Instant::now();
        let next_expiry = leases
            .values()
            .filter(|member| member.alive(default_duration, now))
            .map(|member| member.observed.expires_at(default_duration))
            .min();
        // The earlier of the next expiry and the end of the settle period.
        let wake = match (settled, next_expiry) {
            (Some(at), Some(expiry)) if at > now => Some(at.min(expiry)),
            (Some(at), None) if at > now => Some(at),
            _ => next_expiry,
        };
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
                trust_on_election(&mut leases, failing, Instant::now());
            }
            event = events.next() => {
                // While the watch fails, renewals go unseen; any event means it works again.
                failing = matches!(event, Some(Err(_)));
                match event {
                    None => return,
                    Some(Ok(watcher::Event::Apply(lease))) => {
                        if let Some((name, member)) = observe(lease, &leases) {
                            leases.insert(name, member);
                        }
                    }
                    Some(Ok(watcher::Event::Delete(lease))) => {
                        if let Some(name) = lease.metadata.name {
                            leases.remove(&name);
                        }
                    }
                    Some(Ok(watcher::Event::Init)) => listing = Some(Leases::new()),
                    Some(Ok(watcher::Event::InitApply(lease))) => {
                        let member = observe(lease, &leases);
                        if let (Some(listing), Some((name, member))) = (listing.as_mut(), member) {
                            listing.insert(name, member);
                        }
                    }
                    Some(Ok(watcher::Event::InitDone)) => {
                        if let Some(listed) = listing.take() {
                            leases = listed;
                        }
                        settled.get_or_insert_with(|| Instant::now() + settle);
                    }
                    Some(Err(error)) => {
                        let error = &error as &dyn std::error::Error;
                        tracing::warn!(error, "cannot watch the Leases of the sharding ring");
                    }
                }
            }
        }
        let now = Instant::now();
        if settled.is_none_or(|at| now < at) {
            continue;
        }
        let alive = leases
            .values()
            .filter(|member| member.alive(default_duration, now));
        let members = Ring::new(alive.map(|member| member.name.clone()));
        let leading = elected.is_cancelled();
        if leading {
            metrics.set_members(&ring, members.members().len());
        }
        ring_of_members.send_if_modified(|current| {
            if current.as_ref() == Some(&members) {
                return false;
            }
            tracing::info!(members = ?members.members(), "the sharding ring changed");
            *current = Some(members);
            true
        });
        if !leading {
            continue;
        }
        // Once per version of each Lease: the watch then removes it, or brings a newer version.
        deleting.retain(|(name, _)| leases.contains_key(name));
        for (name, member) in &leases {
            let version = member.resource_version.clone().unwrap_or_default();
            if !member.alive(default_duration, now)
                && deleting.insert((name.clone(), version.clone()))
            {
                delete(&api, name, version).await;
            }
        }
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
    let spec = lease.spec.unwrap_or_default();
    let at = match before.get(&name) {
        Some(known) if known.observed.spec == spec => known.observed.at,
        _ => Instant::now(),
    };
    let member = Member {
        name: member,
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
