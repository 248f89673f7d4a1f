//! Leader election on a `coordination.k8s.io/v1` Lease, with the semantics of client-go's
//! `leaderelection` package (which controller-runtime uses), so that Go and Rust replicas of the same
//! operator would even agree on who leads:
//!
//! - a replica acquires the Lease when it does not exist, has no holder, or its holder has not
//!   renewed it for `leaseDurationSeconds`, measured on the local clock from when this replica first
//!   saw the current record (so clock skew between nodes does not matter);
//! - the leader renews the Lease every retry period; if it cannot renew it within the renew deadline,
//!   or sees another holder, it has lost the Lease and must stop reconciling at once;
//! - on a clean shutdown the leader releases the Lease (clears the holder and shortens the duration
//!   to 1 s, like controller-runtime's `LeaderElectionReleaseOnCancel`), so a standby takes over
//!   within one retry period instead of waiting for the Lease to expire.
//!
//! Every write is a `replace` carrying the `resourceVersion` that was read, so two replicas that
//! race for the Lease cannot both win: the API server rejects the second write with a conflict.
//!
//! # Why not a crate
//!
//! kube-lease-manager (0.13.1, on kube 5; re-read from its source for the sharding ring, whose
//! members hold Leases too) is the well-kept crate for Lease locks, and this module would use it
//! if it had the behaviour that kubebuilder users rely on. It does not, today:
//!
//! - its timing is a lease duration and a grace period in whole seconds, renewed `grace` before
//!   expiry; controller-runtime's flags are three durations, lease duration, renew deadline and
//!   retry period (`--leader-election-retry-period=500ms` is valid), and the leader gives up when
//!   it cannot renew within the renew deadline, which bounds how long two replicas can both believe
//!   they lead;
//! - it measures expiry against the `renewTime` written by the holder, so clock skew between nodes
//!   shifts failover; client-go (and this module) measure it on the local clock from when the
//!   current record was first seen;
//! - it writes the Lease with patches (server-side apply, strategic merge) that carry no
//!   `resourceVersion` precondition, where client-go and this module replace the Lease with the
//!   version they read, so that of two replicas racing for it exactly one wins;
//! - it records no `LeaderElection` Event, which `kubectl events` shows for client-go managers;
//! - it creates its Leases without labels, where the members of a sharding ring must be found by
//!   one label-selected watch of their Leases.
//!
//! Release on shutdown is the one behaviour both have.
//!
//! The members of a sharding ring ([`crate::sharding`]) hold a Lease each with this same state
//! machine ([`LeaderElector::member`], [`Role::Member`]): each is the only candidate for its own
//! Lease, so it acquires it at once, and then renews it, loses it and releases it exactly as a
//! leader does; the leader judges whether a member's Lease expired by the same rule (`crate::lease`), as standbys
//! judge the leader's.
//!
//! The manager ([`super::Manager`]) wires this up with [`run`]; the building blocks are public so
//! that the state machine can be tested against a mocked API server.

use std::collections::BTreeMap;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher as _, Hasher as _};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;
use kube::api::PostParams;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::{Api, Client, Resource as _};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::lease::Observed;

/// How long a Lease is valid after its last renewal: controller-runtime's default (15 s).
pub const DEFAULT_LEASE_DURATION: Duration = Duration::from_secs(15);

/// How long the leader keeps trying to renew before it gives up leadership: controller-runtime's
/// default (10 s). Must be shorter than the lease duration, so that the leader stops before another
/// replica can take over.
pub const DEFAULT_RENEW_DEADLINE: Duration = Duration::from_secs(10);

/// How often replicas try to acquire, and the leader renews, the Lease: controller-runtime's
/// default (2 s).
pub const DEFAULT_RETRY_PERIOD: Duration = Duration::from_secs(2);

/// Where Kubernetes mounts the namespace of the pod's service account.
pub const SERVICE_ACCOUNT_NAMESPACE_FILE: &str =
    "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

/// The environment variable that may hold the pod's namespace (from the downward API), checked
/// before [`SERVICE_ACCOUNT_NAMESPACE_FILE`].
pub const POD_NAMESPACE_ENV: &str = "POD_NAMESPACE";

/// client-go waits between `retry_period` and 2.2 × `retry_period` between acquire attempts, so
/// that standby replicas do not hit the API server in lockstep.
const JITTER_FACTOR: f64 = 1.2;

/// What can go wrong with leader election.
#[derive(Debug, thiserror::Error)]
pub enum LeaderElectionError {
    /// Out of a cluster there is no pod namespace to put the Lease in.
    #[error(
        "cannot find the namespace for the leader election Lease: not running in a cluster \
         ({SERVICE_ACCOUNT_NAMESPACE_FILE} does not exist and {POD_NAMESPACE_ENV} is not set); \
         pass --leader-election-namespace"
    )]
    NoNamespace,
    /// The durations do not allow a safe hand-over.
    #[error("invalid leader election timing: {0}")]
    InvalidTiming(String),
    /// This replica was the leader (or a member of the sharding ring) and is no longer: it must
    /// stop reconciling now.
    #[error("lost {role} of Lease {lease}: {reason}")]
    Lost {
        /// `leadership`, or `membership` for a member's Lease of the sharding ring.
        role: &'static str,
        /// `namespace/name` of the Lease.
        lease: String,
        /// Why, e.g. which replica holds the Lease now.
        reason: String,
    },
}

impl LeaderElectionError {
    /// Whether this is [`LeaderElectionError::Lost`]: the manager then stops the controllers at once
    /// instead of letting them finish, because another replica may already be reconciling.
    pub fn is_lost(&self) -> bool {
        matches!(self, LeaderElectionError::Lost { .. })
    }
}

/// Everything that identifies and times one replica's participation in leader election.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaderElectionConfig {
    /// The name of the Lease (`--leader-election-id`).
    pub lease_name: String,
    /// The namespace of the Lease (`--leader-election-namespace`, default: the pod's namespace).
    pub namespace: String,
    /// This replica's identity, written to `spec.holderIdentity`; see [`identity`].
    pub identity: String,
    /// How long non-leaders wait after the last renewal before taking over.
    pub lease_duration: Duration,
    /// How long the leader retries renewing before it gives up.
    pub renew_deadline: Duration,
    /// How often to try acquiring or renewing.
    pub retry_period: Duration,
}

impl LeaderElectionConfig {
    /// A configuration with controller-runtime's default timing.
    pub fn new(
        lease_name: impl Into<String>,
        namespace: impl Into<String>,
        identity: impl Into<String>,
    ) -> Self {
        LeaderElectionConfig {
            lease_name: lease_name.into(),
            namespace: namespace.into(),
            identity: identity.into(),
            lease_duration: DEFAULT_LEASE_DURATION,
            renew_deadline: DEFAULT_RENEW_DEADLINE,
            retry_period: DEFAULT_RETRY_PERIOD,
        }
    }

    /// Checks the timing rules of client-go: lease duration > renew deadline > 1.2 × retry period,
    /// all positive, and a lease duration of whole seconds (the Lease stores seconds).
    pub fn validate(&self) -> Result<(), LeaderElectionError> {
        let invalid = |message: String| Err(LeaderElectionError::InvalidTiming(message));
        if self.retry_period.is_zero() {
            return invalid("the retry period must be positive".to_owned());
        }
        if self.lease_duration <= self.renew_deadline {
            return invalid(format!(
                "the lease duration ({:?}) must be longer than the renew deadline ({:?})",
                self.lease_duration, self.renew_deadline
            ));
        }
        if self.renew_deadline.as_secs_f64() <= JITTER_FACTOR * self.retry_period.as_secs_f64() {
            return invalid(format!(
                "the renew deadline ({:?}) must be longer than {JITTER_FACTOR} × the retry period ({:?})",
                self.renew_deadline, self.retry_period
            ));
        }
        if self.lease_duration.subsec_nanos() != 0 || self.lease_duration_seconds().is_none() {
            return invalid(format!(
                "the lease duration ({:?}) must be a whole number of seconds",
                self.lease_duration
            ));
        }
        if self.identity.is_empty() {
            return invalid("the identity must not be empty".to_owned());
        }
        Ok(())
    }

    fn lease_duration_seconds(&self) -> Option<i32> {
        i32::try_from(self.lease_duration.as_secs()).ok()
    }

    /// `namespace/name`, for messages.
    fn lease(&self) -> String {
        format!("{}/{}", self.namespace, self.lease_name)
    }
}

/// The namespace to keep the Lease in when `--leader-election-namespace` is not given: the pod's
/// own namespace, from [`POD_NAMESPACE_ENV`] or else the service account's namespace file.
pub fn pod_namespace() -> Result<String, LeaderElectionError> {
    let from_env = std::env::var(POD_NAMESPACE_ENV).ok();
    let from_file = || std::fs::read_to_string(SERVICE_ACCOUNT_NAMESPACE_FILE).ok();
    from_env
        .or_else(from_file)
        .map(|namespace| namespace.trim().to_owned())
        .filter(|namespace| !namespace.is_empty())
        .ok_or(LeaderElectionError::NoNamespace)
}

/// This replica's identity: the pod name (the `HOSTNAME` of a pod) plus `_` and a random suffix,
/// like client-go's, so that two processes on one host, or a restarted container, never mistake
/// each other's Lease for their own.
pub fn identity() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .filter(|host| !host.is_empty())
        .unwrap_or_else(|| "manager".to_owned());
    format!("{host}_{:016x}", random_u64())
}

/// 64 random bits from the standard library's OS-seeded hasher keys, mixed with the time and the
/// process id; enough for identities and jitter without a dependency on `rand`.
fn random_u64() -> u64 {
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    hasher.write_i128(Timestamp::now().as_nanosecond());
    hasher.finish()
}

/// `period` stretched by a random factor between 1 and 1 + [`JITTER_FACTOR`].
fn jittered(period: Duration) -> Duration {
    // 53 random bits make a uniformly distributed f64 in [0, 1).
    let fraction = (random_u64() >> 11) as f64 / (1u64 << 53) as f64;
    period.mul_f64(1.0 + JITTER_FACTOR * fraction)
}

/// What a replica holds a Lease for: the messages, the Events, and what a deleted Lease means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Leader election: one Lease that every replica competes for.
    Leader,
    /// Membership of the sharding ring: a Lease of the replica's own, which no other replica
    /// takes; once held, its deletion means the replica has left the ring (see
    /// [`crate::sharding`]), so it is not created again.
    Member,
}

impl Role {
    fn lease(self) -> &'static str {
        match self {
            Role::Leader => "leader election Lease",
            Role::Member => "member Lease of the sharding ring",
        }
    }

    fn lost(self) -> &'static str {
        match self {
            Role::Leader => "leadership",
            Role::Member => "membership",
        }
    }
}

/// One replica's view of the Lease, and the operations of client-go's leader elector on it.
pub struct LeaderElector {
    api: Api<Lease>,
    config: LeaderElectionConfig,
    role: Role,
    labels: BTreeMap<String, String>,
    observed: Option<Observed>,
    recorder: Option<Recorder>,
}

impl LeaderElector {
    /// An elector for the Lease `config.lease_name` in `config.namespace`.
    pub fn new(client: Client, config: LeaderElectionConfig) -> Self {
        LeaderElector {
            api: Api::namespaced(client, &config.namespace),
            config,
            role: Role::Leader,
            labels: BTreeMap::new(),
            observed: None,
            recorder: None,
        }
    }

    /// The same state machine for a Lease of this replica's own in the sharding ring: created
    /// with `labels` (by which the ring's members are found), renewed like the leader's, released
    /// on shutdown, and lost, never created again, once deleted (see [`Role::Member`]).
    pub fn member(
        client: Client,
        config: LeaderElectionConfig,
        labels: BTreeMap<String, String>,
    ) -> Self {
        LeaderElector {
            role: Role::Member,
            labels,
            ..Self::new(client, config)
        }
    }

    /// Also records Kubernetes Events on the Lease when this replica becomes or stops being the
    /// leader (as controller-runtime does), so `kubectl describe lease` shows the hand-overs.
    pub fn with_events(mut self, client: Client) -> Self {
        let reporter = Reporter {
            controller: self.config.lease_name.clone(),
            instance: Some(self.config.identity.clone()),
        };
        self.recorder = Some(Recorder::new(client, reporter));
        self
    }

    /// The configuration this elector runs with.
    pub fn config(&self) -> &LeaderElectionConfig {
        &self.config
    }

    /// Whether the last Lease record this replica saw names it as the holder.
    pub fn is_leader(&self) -> bool {
        self.observed_holder() == Some(self.config.identity.as_str())
    }

    /// The holder of the last Lease record this replica saw, if any.
    pub fn observed_holder(&self) -> Option<&str> {
        self.observed.as_ref().and_then(Observed::holder)
    }

    /// One round of client-go's `tryAcquireOrRenew`: creates the Lease if it is missing, renews it
    /// if this replica holds it, takes it over if it expired or was released, and otherwise leaves
    /// it alone. Returns whether this replica holds the Lease afterwards. A conflict (another
    /// replica wrote the Lease at the same time) is not an error: it returns `false`.
    pub async fn try_acquire_or_renew(&mut self) -> Result<bool, kube::Error> {
        let now = MicroTime(Timestamp::now());
        let lease = match self.api.get(&self.config.lease_name).await {
            Ok(lease) => lease,
            // A member whose Lease was deleted has been removed from the ring: its objects may
            // be another member's already, so it must not come back (`renew_until` sees it lost).
            Err(kube::Error::Api(status))
                if status.is_not_found()
                    && self.role == Role::Member
                    && self.observed.is_some() =>
            {
                self.observed = None;
                return Ok(false);
            }
            Err(kube::Error::Api(status)) if status.is_not_found() => {
                return self.create(now).await;
            }
            Err(error) => return Err(error),
        };
        let old = lease.spec.clone().unwrap_or_default();
        let changed = self
            .observed
            .as_ref()
            .is_none_or(|observed| observed.spec != old);
        if changed {
            self.observed = Some(Observed {
                spec: old.clone(),
                at: Instant::now(),
            });
        }

        let holder = old.holder_identity.as_deref().unwrap_or_default();
        let mine = holder == self.config.identity;
        if !holder.is_empty() && !mine && !self.observed_expired() {
            return Ok(false);
        }

        let spec = LeaseSpec {
            holder_identity: Some(self.config.identity.clone()),
            lease_duration_seconds: self.config.lease_duration_seconds(),
            acquire_time: if mine {
                old.acquire_time.clone()
            } else {
                Some(now.clone())
            },
            renew_time: Some(now),
            lease_transitions: if mine {
                old.lease_transitions
            } else {
                Some(old.lease_transitions.unwrap_or(0).saturating_add(1))
            },
            ..old
        };
        let became_leader = !mine;
        let updated = Lease {
            metadata: lease.metadata,
            spec: Some(spec),
        };
        match self
            .api
            .replace(&self.config.lease_name, &PostParams::default(), &updated)
            .await
        {
            Ok(written) => {
                self.observe_written(written);
                if became_leader {
                    tracing::info!(lease = %self.config.lease(), previous = holder, "acquired the {}", self.role.lease());
                }
                Ok(true)
            }
            Err(kube::Error::Api(status)) if status.is_conflict() => Ok(false),
            Err(error) => Err(error),
        }
    }

    /// Creates the Lease with this replica as its holder; `false` if another replica created it
    /// first.
    async fn create(&mut self, now: MicroTime) -> Result<bool, kube::Error> {
        let lease = Lease {
            metadata: ObjectMeta {
                name: Some(self.config.lease_name.clone()),
                namespace: Some(self.config.namespace.clone()),
                labels: (!self.labels.is_empty()).then(|| self.labels.clone()),
                ..ObjectMeta::default()
            },
            spec: Some(LeaseSpec {
                holder_identity: Some(self.config.identity.clone()),
                lease_duration_seconds: self.config.lease_duration_seconds(),
                acquire_time: Some(now.clone()),
                renew_time: Some(now),
                lease_transitions: Some(0),
                ..LeaseSpec::default()
            }),
        };
        match self.api.create(&PostParams::default(), &lease).await {
            Ok(created) => {
                self.observe_written(created);
                tracing::info!(lease = %self.config.lease(), "created the {}", self.role.lease());
                Ok(true)
            }
            Err(kube::Error::Api(status)) if status.is_already_exists() || status.is_conflict() => {
                Ok(false)
            }
            Err(error) => Err(error),
        }
    }

    fn observe_written(&mut self, lease: Lease) {
        self.observed = Some(Observed {
            spec: lease.spec.unwrap_or_default(),
            at: Instant::now(),
        });
    }

    /// Whether the observed record is older than its own lease duration.
    fn observed_expired(&self) -> bool {
        self.observed
            .as_ref()
            .is_none_or(|observed| observed.expired(self.config.lease_duration, Instant::now()))
    }

    /// Retries [`Self::try_acquire_or_renew`] every (jittered) retry period until this replica holds
    /// the Lease. Errors are logged and retried: a standby waits for the API server to come back.
    pub async fn acquire(&mut self) {
        tracing::info!(
            lease = %self.config.lease(),
            identity = %self.config.identity,
            "waiting for the {}", self.role.lease()
        );
        let mut reported_holder = None;
        loop {
            match tokio::time::timeout(self.config.renew_deadline, self.try_acquire_or_renew())
                .await
            {
                Ok(Ok(true)) => break,
                Ok(Ok(false)) => {
                    let holder = self.observed_holder().map(str::to_owned);
                    if holder != reported_holder {
                        tracing::info!(lease = %self.config.lease(), holder = holder.as_deref().unwrap_or(""), "the Lease is held by another replica");
                        reported_holder = holder;
                    }
                }
                Ok(Err(error)) => {
                    tracing::warn!(lease = %self.config.lease(), "cannot acquire the Lease: {error}")
                }
                Err(_) => {
                    tracing::warn!(lease = %self.config.lease(), "cannot acquire the Lease: request timed out")
                }
            }
            tokio::time::sleep_until(self.next_attempt()).await;
        }
        self.record_event("became leader");
    }

    /// When [`Self::acquire`] tries again: after a jittered retry period as client-go does, or
    /// as soon as the record it saw expires if that is sooner, so that a crashed leader's Lease
    /// is taken over when it expires rather than up to 2.2 retry periods later. Standbys that
    /// wake together race for it, and the `resourceVersion` of the write lets one win.
    fn next_attempt(&self) -> Instant {
        let now = Instant::now();
        let retry = now + jittered(self.config.retry_period);
        let expiry = self
            .observed
            .as_ref()
            .filter(|observed| observed.holder().is_some())
            .map(|observed| observed.expires_at(self.config.lease_duration))
            .filter(|expiry| *expiry > now);
        expiry.map_or(retry, |expiry| retry.min(expiry))
    }

    /// Renews the Lease every retry period until `stop` completes (then returns `Ok(())` and the
    /// caller should [`Self::release`] it), or until leadership is lost: no successful renewal
    /// within the renew deadline, or another replica holds the Lease.
    pub async fn renew_until(
        &mut self,
        stop: impl Future<Output = ()>,
    ) -> Result<(), LeaderElectionError> {
        let mut stop = std::pin::pin!(stop);
        loop {
            tokio::select! {
                () = &mut stop => return Ok(()),
                () = tokio::time::sleep(self.config.retry_period) => {}
            }
            // Like client-go: each renewal round may retry until the renew deadline.
            let deadline = Instant::now() + self.config.renew_deadline;
            loop {
                let reason =
                    match tokio::time::timeout_at(deadline, self.try_acquire_or_renew()).await {
                        Ok(Ok(true)) => break,
                        Ok(Ok(false)) => match self.observed_holder() {
                            Some(holder) if holder != self.config.identity => {
                                let reason = format!("the Lease is now held by {holder}");
                                return Err(self.lost(reason));
                            }
                            None if self.role == Role::Member && self.observed.is_none() => {
                                return Err(self.lost("the Lease was deleted".to_owned()));
                            }
                            _ => "conflicting write".to_owned(),
                        },
                        Ok(Err(error)) => error.to_string(),
                        Err(_) => "request timed out".to_owned(),
                    };
                if Instant::now() >= deadline {
                    let reason = format!(
                        "could not renew within the renew deadline of {:?} (last error: {reason})",
                        self.config.renew_deadline
                    );
                    return Err(self.lost(reason));
                }
                tracing::warn!(lease = %self.config.lease(), "cannot renew the Lease, retrying: {reason}");
                tokio::select! {
                    () = &mut stop => return Ok(()),
                    () = tokio::time::sleep_until(deadline.min(Instant::now() + self.config.retry_period)) => {}
                }
            }
        }
    }

    fn lost(&mut self, reason: String) -> LeaderElectionError {
        self.record_event("stopped leading");
        LeaderElectionError::Lost {
            role: self.role.lost(),
            lease: self.config.lease(),
            reason,
        }
    }

    /// Gives the Lease up if this replica holds it, like client-go's `release`: clears the holder and
    /// sets a 1 s duration, keeping the transition count. Returns whether it released anything.
    pub async fn release(&mut self) -> Result<bool, kube::Error> {
        let lease = self.api.get(&self.config.lease_name).await?;
        let old = lease.spec.clone().unwrap_or_default();
        if old.holder_identity.as_deref() != Some(self.config.identity.as_str()) {
            return Ok(false);
        }
        let now = MicroTime(Timestamp::now());
        let released = Lease {
            metadata: lease.metadata,
            spec: Some(LeaseSpec {
                holder_identity: Some(String::new()),
                lease_duration_seconds: Some(1),
                acquire_time: Some(now.clone()),
                renew_time: Some(now),
                ..old
            }),
        };
        let written = self
            .api
            .replace(&self.config.lease_name, &PostParams::default(), &released)
            .await?;
        self.observe_written(written);
        tracing::info!(lease = %self.config.lease(), "released the {}", self.role.lease());
        Ok(true)
    }

    /// Publishes an Event about this replica on the Lease, without waiting for it: Events are
    /// informational and must never hold up the election.
    fn record_event(&self, message: &str) {
        let Some(recorder) = self.recorder.clone() else {
            return;
        };
        let lease = Lease {
            metadata: ObjectMeta {
                name: Some(self.config.lease_name.clone()),
                namespace: Some(self.config.namespace.clone()),
                ..ObjectMeta::default()
            },
            spec: None,
        };
        let reference = lease.object_ref(&());
        let event = Event {
            type_: EventType::Normal,
            reason: "LeaderElection".to_owned(),
            note: Some(format!("{} {message}", self.config.identity)),
            action: "LeaderElection".to_owned(),
            secondary: None,
        };
        tokio::spawn(async move {
            if let Err(error) = recorder.publish(&event, &reference).await {
                tracing::debug!("cannot record the leader election event: {error}");
            }
        });
    }
}

/// Leader election for the manager, from start to end:
///
/// 1. waits until this replica holds the Lease, or returns `Ok(())` if `shutdown` comes first;
/// 2. calls `on_elected` (the manager starts the controllers then);
/// 3. renews the Lease until `shutdown` is cancelled *and* `stopped` has completed (the controllers
///    have finished their last reconciles), so no other replica starts while they still run;
/// 4. releases the Lease and returns `Ok(())`.
///
/// Returns [`LeaderElectionError::Lost`] as soon as leadership is lost; the caller must then stop
/// reconciling immediately and exit with an error, so that Kubernetes restarts the pod as a standby.
pub async fn run(
    mut elector: LeaderElector,
    shutdown: CancellationToken,
    on_elected: impl FnOnce(),
    stopped: impl Future<Output = ()>,
) -> Result<(), LeaderElectionError> {
    tokio::select! {
        () = shutdown.cancelled() => return Ok(()),
        () = elector.acquire() => {}
    }
    on_elected();
    elector
        .renew_until(async {
            shutdown.cancelled().await;
            stopped.await;
        })
        .await?;
    match tokio::time::timeout(elector.config.renew_deadline, elector.release()).await {
        Ok(Ok(_)) => {}
        // The Lease then simply expires after its duration; not worth failing the shutdown for.
        Ok(Err(error)) => tracing::warn!("cannot release the leader election Lease: {error}"),
        Err(_) => tracing::warn!("cannot release the leader election Lease: request timed out"),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use axum::http::{Method, Response, StatusCode};
    use kube::client::Body;
    use serde_json::{Value, json};

    use super::*;
    use crate::manager::client::{Script, scripted};

    const LEASES: &str = "/apis/coordination.k8s.io/v1/namespaces/ops/leases";
    const LEASE: &str = "/apis/coordination.k8s.io/v1/namespaces/ops/leases/my-lock";

    type ApiServer = Script;

    fn elector(identity: &str) -> (LeaderElector, ApiServer) {
        let (client, server) = scripted();
        let config = LeaderElectionConfig {
            renew_deadline: Duration::from_millis(300),
            retry_period: Duration::from_millis(50),
            ..LeaderElectionConfig::new("my-lock", "ops", identity)
        };
        (LeaderElector::new(client, config), server)
    }

    /// An answer of the mocked API server.
    type Reply = (StatusCode, Value);

    /// Waits for the next request, checks its method and path, sends `reply`, and returns the
    /// request body as JSON (`Null` when empty).
    async fn answer(server: &mut ApiServer, method: Method, path: &str, reply: Reply) -> Value {
        let (request, respond) = server.next_request().await.expect("a request");
        assert_eq!(request.method(), method);
        assert_eq!(request.uri().path(), path);
        let bytes = request.into_body().collect_bytes().await.unwrap();
        let sent = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        let (status, body) = reply;
        respond.send_json(status.as_u16(), &body);
        sent
    }

    async fn get(server: &mut ApiServer, reply: Reply) {
        answer(server, Method::GET, LEASE, reply).await;
    }

    async fn put(server: &mut ApiServer, reply: Reply) -> Value {
        answer(server, Method::PUT, LEASE, reply).await
    }

    async fn post(server: &mut ApiServer, reply: Reply) -> Value {
        answer(server, Method::POST, LEASES, reply).await
    }

    fn ok(lease: Value) -> Reply {
        (StatusCode::OK, lease)
    }

    fn failure(code: u16, reason: &str) -> Reply {
        let status = json!({
            "kind": "Status", "apiVersion": "v1", "status": "Failure",
            "reason": reason, "code": code, "message": reason
        });
        (StatusCode::from_u16(code).unwrap(), status)
    }

    fn lease(holder: &str, resource_version: &str, transitions: i32) -> Value {
        json!({
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "my-lock", "namespace": "ops", "resourceVersion": resource_version},
            "spec": {
                "holderIdentity": holder,
                "leaseDurationSeconds": 15,
                "acquireTime": "2026-01-01T00:00:00.000000Z",
                "renewTime": "2026-01-01T00:00:00.000000Z",
                "leaseTransitions": transitions
            }
        })
    }

    #[tokio::test]
    async fn acquires_a_missing_lease_by_creating_it() {
        let (mut elector, mut server) = elector("me");
        let api = tokio::spawn(async move {
            get(&mut server, failure(404, "NotFound")).await;
            let created = post(&mut server, (StatusCode::CREATED, lease("me", "1", 0))).await;
            assert_eq!(created["metadata"]["name"], "my-lock");
            assert_eq!(created["spec"]["holderIdentity"], "me");
            assert_eq!(created["spec"]["leaseDurationSeconds"], 15);
            assert_eq!(created["spec"]["leaseTransitions"], 0);
        });
        assert!(elector.try_acquire_or_renew().await.unwrap());
        assert!(elector.is_leader());
        api.await.unwrap();
    }

    #[tokio::test]
    async fn takes_a_released_lease_and_counts_the_transition() {
        let (mut elector, mut server) = elector("me");
        let api = tokio::spawn(async move {
            get(&mut server, ok(lease("", "7", 3))).await;
            let replaced = put(&mut server, ok(lease("me", "8", 4))).await;
            // Optimistic concurrency: the write carries the resourceVersion that was read.
            assert_eq!(replaced["metadata"]["resourceVersion"], "7");
            assert_eq!(replaced["spec"]["holderIdentity"], "me");
            assert_eq!(replaced["spec"]["leaseTransitions"], 4);
        });
        assert!(elector.try_acquire_or_renew().await.unwrap());
        api.await.unwrap();
    }

    #[tokio::test]
    async fn leaves_a_valid_lease_of_another_replica_alone() {
        let (mut elector, mut server) = elector("me");
        let api = tokio::spawn(async move {
            get(&mut server, ok(lease("other", "7", 0))).await;
            server
        });
        assert!(!elector.try_acquire_or_renew().await.unwrap());
        assert!(!elector.is_leader());
        assert_eq!(elector.observed_holder(), Some("other"));
        // No write followed the read.
        let mut server = api.await.unwrap();
        drop(elector);
        assert!(server.next_request().await.is_none());
    }

    #[tokio::test]
    async fn takes_over_once_the_other_replica_stopped_renewing() {
        let (mut elector, mut server) = elector("me");
        let api = tokio::spawn(async move {
            get(&mut server, ok(lease("other", "7", 2))).await;
            get(&mut server, ok(lease("other", "7", 2))).await;
            let replaced = put(&mut server, ok(lease("me", "8", 3))).await;
            assert_eq!(replaced["spec"]["holderIdentity"], "me");
            assert_eq!(replaced["spec"]["leaseTransitions"], 3);
            assert_ne!(
                replaced["spec"]["acquireTime"],
                "2026-01-01T00:00:00.000000Z"
            );
        });
        assert!(!elector.try_acquire_or_renew().await.unwrap());
        // The same record, first seen 16 s ago (by the local clock), has expired.
        if let Some(observed) = elector.observed.as_mut() {
            observed.at = Instant::now() - Duration::from_secs(16);
        }
        assert!(elector.try_acquire_or_renew().await.unwrap());
        assert!(elector.is_leader());
        api.await.unwrap();
    }

    #[tokio::test]
    async fn renews_its_own_lease_keeping_acquire_time_and_transitions() {
        let (mut elector, mut server) = elector("me");
        let api = tokio::spawn(async move {
            get(&mut server, ok(lease("me", "7", 5))).await;
            let renewed = put(&mut server, ok(lease("me", "8", 5))).await;
            assert_eq!(
                renewed["spec"]["acquireTime"],
                "2026-01-01T00:00:00.000000Z"
            );
            assert_ne!(renewed["spec"]["renewTime"], "2026-01-01T00:00:00.000000Z");
            assert_eq!(renewed["spec"]["leaseTransitions"], 5);
        });
        assert!(elector.try_acquire_or_renew().await.unwrap());
        api.await.unwrap();
    }

    #[tokio::test]
    async fn a_conflicting_write_means_not_acquired() {
        let (mut elector, mut server) = elector("me");
        let api = tokio::spawn(async move {
            get(&mut server, ok(lease("", "7", 0))).await;
            put(&mut server, failure(409, "Conflict")).await;
        });
        assert!(!elector.try_acquire_or_renew().await.unwrap());
        api.await.unwrap();
    }

    #[tokio::test]
    async fn releases_the_lease_on_shutdown() {
        let (elector, mut server) = elector("me");
        let shutdown = CancellationToken::new();
        let elected = CancellationToken::new();
        let api = {
            let (shutdown, elected) = (shutdown.clone(), elected.clone());
            tokio::spawn(async move {
                get(&mut server, failure(404, "NotFound")).await;
                post(&mut server, (StatusCode::CREATED, lease("me", "1", 0))).await;
                elected.cancelled().await;
                // One renewal while the controllers run.
                get(&mut server, ok(lease("me", "1", 0))).await;
                put(&mut server, ok(lease("me", "2", 0))).await;
                shutdown.cancel();
                get(&mut server, ok(lease("me", "2", 0))).await;
                let released = put(&mut server, ok(lease("", "3", 0))).await;
                assert_eq!(released["spec"]["holderIdentity"], "");
                assert_eq!(released["spec"]["leaseDurationSeconds"], 1);
                assert_eq!(released["spec"]["leaseTransitions"], 0);
                assert_eq!(released["metadata"]["resourceVersion"], "2");
            })
        };
        let on_elected = {
            let elected = elected.clone();
            move || elected.cancel()
        };
        let result = tokio::time::timeout(
            Duration::from_secs(10),
            run(elector, shutdown, on_elected, async {}),
        )
        .await
        .unwrap();
        result.unwrap();
        api.await.unwrap();
    }

    #[tokio::test]
    async fn shutdown_before_election_stops_without_touching_the_lease() {
        let (elector, mut server) = elector("me");
        let shutdown = CancellationToken::new();
        let api = {
            let shutdown = shutdown.clone();
            tokio::spawn(async move {
                get(&mut server, ok(lease("other", "7", 0))).await;
                shutdown.cancel();
                server
            })
        };
        let elected = std::sync::atomic::AtomicBool::new(false);
        run(
            elector,
            shutdown,
            || elected.store(true, std::sync::atomic::Ordering::SeqCst),
            async {},
        )
        .await
        .unwrap();
        assert!(!elected.load(std::sync::atomic::Ordering::SeqCst));
        let mut server = api.await.unwrap();
        assert!(server.next_request().await.is_none());
    }

    #[tokio::test]
    async fn another_holder_means_leadership_is_lost() {
        let (mut elector, mut server) = elector("me");
        let api = tokio::spawn(async move {
            get(&mut server, ok(lease("me", "1", 0))).await;
            put(&mut server, ok(lease("me", "2", 0))).await;
            // Someone forcibly took the Lease.
            get(&mut server, ok(lease("usurper", "3", 1))).await;
        });
        assert!(elector.try_acquire_or_renew().await.unwrap());
        let error = elector
            .renew_until(std::future::pending())
            .await
            .unwrap_err();
        assert!(error.is_lost(), "{error}");
        assert!(error.to_string().contains("usurper"), "{error}");
        api.await.unwrap();
    }

    /// A member of the sharding ring creates its Lease with the ring's labels, and once the
    /// elected replica has deleted it (the member was counted out), it has left the ring: it
    /// does not create it again.
    #[tokio::test]
    async fn a_deleted_member_lease_means_membership_is_lost() {
        let (member, mut server) = elector("me");
        let labels = BTreeMap::from([("ring".to_owned(), "my-lock".to_owned())]);
        let mut member = LeaderElector::member(member.api.into_client(), member.config, labels);
        let api = tokio::spawn(async move {
            get(&mut server, failure(404, "NotFound")).await;
            let created = post(&mut server, (StatusCode::CREATED, lease("me", "1", 0))).await;
            assert_eq!(created["metadata"]["labels"]["ring"], "my-lock");
            get(&mut server, failure(404, "NotFound")).await;
            server
        });
        assert!(member.try_acquire_or_renew().await.unwrap());
        let error = member
            .renew_until(std::future::pending())
            .await
            .unwrap_err();
        assert!(error.is_lost(), "{error}");
        assert!(
            error
                .to_string()
                .starts_with("lost membership of Lease ops/my-lock: the Lease was deleted"),
            "{error}"
        );
        // No second create.
        let mut server = api.await.unwrap();
        drop(member);
        assert!(server.next_request().await.is_none());
    }

    #[tokio::test]
    async fn failing_renewals_lose_leadership_after_the_renew_deadline() {
        let (mut elector, mut server) = elector("me");
        let api = tokio::spawn(async move {
            get(&mut server, ok(lease("me", "1", 0))).await;
            put(&mut server, ok(lease("me", "2", 0))).await;
            // From now on the API server fails every request.
            while let Some((_, respond)) = server.next_request().await {
                let (status, body) = failure(500, "InternalError");
                let body = Body::from(serde_json::to_vec(&body).unwrap());
                respond.send_response(Response::builder().status(status).body(body).unwrap());
            }
        });
        assert!(elector.try_acquire_or_renew().await.unwrap());
        let started = std::time::Instant::now();
        let error = tokio::time::timeout(
            Duration::from_secs(5),
            elector.renew_until(std::future::pending()),
        )
        .await
        .unwrap()
        .unwrap_err();
        assert!(error.is_lost(), "{error}");
        // Retry period (50 ms) + renew deadline (300 ms), give or take scheduling.
        assert!(started.elapsed() >= Duration::from_millis(300));
        drop(elector);
        api.await.unwrap();
    }

    #[test]
    fn validates_timing_like_client_go() {
        let config = LeaderElectionConfig::new("lock", "ns", "me");
        config.validate().unwrap();
        let invalid = [
            LeaderElectionConfig {
                lease_duration: Duration::from_secs(10),
                ..config.clone()
            },
            LeaderElectionConfig {
                retry_period: Duration::from_secs(9),
                ..config.clone()
            },
            LeaderElectionConfig {
                retry_period: Duration::ZERO,
                ..config.clone()
            },
            LeaderElectionConfig {
                lease_duration: Duration::from_millis(15_500),
                ..config.clone()
            },
            LeaderElectionConfig {
                identity: String::new(),
                ..config.clone()
            },
        ];
        for config in invalid {
            assert!(config.validate().is_err(), "{config:?} should be rejected");
        }
    }

    #[test]
    fn identities_are_unique_per_process_start() {
        let (a, b) = (identity(), identity());
        assert_ne!(a, b);
        let (host, suffix) = a.rsplit_once('_').unwrap();
        assert!(!host.is_empty());
        assert_eq!(suffix.len(), 16);
    }

    #[tokio::test]
    async fn a_standby_tries_again_when_the_lease_it_saw_expires_if_that_is_sooner() {
        let (mut elector, _server) = elector("me");
        let retry = elector.config.retry_period;
        let wait = |elector: &LeaderElector| elector.next_attempt() - Instant::now();
        // Nothing seen yet: the (jittered) retry period.
        assert!(wait(&elector) > retry / 2 && wait(&elector) <= retry.mul_f64(2.2));
        // Another holder's 15 s record, first seen here 15 s minus `left` ago.
        let spec: LeaseSpec =
            serde_json::from_value(lease("other", "7", 2)["spec"].clone()).unwrap();
        let seen = |left: Duration| Observed {
            spec: spec.clone(),
            at: Instant::now() + left - Duration::from_secs(15),
        };
        // It expires in 10 ms: try then, not a retry period later.
        elector.observed = Some(seen(Duration::from_millis(10)));
        assert!(wait(&elector) <= Duration::from_millis(10));
        // It expired already (another standby won the race for it): the retry period again,
        // not a busy loop.
        elector.observed = Some(seen(Duration::ZERO));
        assert!(wait(&elector) > retry / 2);
        // A released Lease (no holder) is taken on the next retry.
        let mut released = seen(Duration::from_millis(10));
        released.spec.holder_identity = None;
        elector.observed = Some(released);
        assert!(wait(&elector) > retry / 2);
    }

    #[test]
    fn jitter_stays_within_client_go_bounds() {
        for _ in 0..100 {
            let delay = jittered(Duration::from_secs(2));
            assert!(delay >= Duration::from_secs(2) && delay < Duration::from_millis(4400));
        }
    }
}
