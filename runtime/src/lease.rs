//! What leader election ([`crate::manager::leader`]) and the sharding ring ([`crate::sharding`])
//! share about Leases held by others: a Lease's record as this replica observed it, and whether
//! its holder has let it expire.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::LeaseSpec;
use tokio::time::Instant;

/// A Lease record as this replica last saw it, and when it first saw it (on the local, monotonic
/// clock): leader election judges the leader's Lease by it, and the sharding ring its members'.
#[derive(Clone, Debug)]
pub(crate) struct Observed {
    pub(crate) spec: LeaseSpec,
    pub(crate) at: Instant,
}

impl Observed {
    /// Whether the holder has let the record expire: it has not changed for its own
    /// `leaseDurationSeconds` (`default` when it has none) since it was first seen here. Measured
    /// on this replica's clock from when it saw the record, never against the `renewTime` the
    /// holder wrote, so that clock skew between nodes does not matter (client-go's rule).
    pub(crate) fn expired(&self, default: Duration, now: Instant) -> bool {
        self.expires_at(default) <= now
    }

    /// When the record expires if it does not change: see [`Observed::expired`].
    pub(crate) fn expires_at(&self, default: Duration) -> Instant {
        let seconds = self
            .spec
            .lease_duration_seconds
            .and_then(|seconds| u64::try_from(seconds).ok())
            .unwrap_or(default.as_secs());
        self.at + Duration::from_secs(seconds)
    }

    /// The holder, `None` when the Lease is released (no holder or an empty one).
    pub(crate) fn holder(&self) -> Option<&str> {
        self.spec
            .holder_identity
            .as_deref()
            .filter(|holder| !holder.is_empty())
    }
}
