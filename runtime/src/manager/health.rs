//! Health probes for the kubelet: `/healthz` (liveness) and `/readyz` (readiness).
//!
//! `config/manager/manager.yaml` points the pod's probes at these paths on the
//! `--health-probe-bind-address` port (`:8081`).

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::Router;
use axum::extract::State as AxumState;
use axum::http::StatusCode;
use axum::routing::get;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// Whether the operator is ready to do its work, as `/readyz` reports it.
///
/// Every controller registers itself with [`Readiness::register`] during setup and marks the
/// returned [`ReadyGate`] once its cache is synced; [`crate::controller::Shared::run_controller`]
/// does both for kube-runtime controllers. The operator is ready when the manager has
/// started (all controllers are set up) and every registered controller is synced; with no
/// controllers it is ready as soon as it has started. Cloning gives another handle to the same state.
#[derive(Clone, Debug, Default)]
pub struct Readiness {
    state: Arc<Mutex<State>>,
}

#[derive(Debug, Default)]
struct State {
    /// Set by the manager once every controller has been set up, so a controller that has not
    /// registered yet cannot be mistaken for one that does not exist.
    started: bool,
    /// Every registered controller by registration order, with whether it has synced.
    controllers: Vec<(String, bool)>,
    /// Set while this replica waits for leadership: its controllers do not run, so their caches
    /// cannot sync, yet the replica is healthy and ready to take over (controller-runtime also
    /// reports non-leaders as ready, so that rolling updates can proceed).
    standby: bool,
}

/// Why the operator is not ready (yet); the body of a failing `/readyz` response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotReady {
    /// The manager is still setting up its controllers.
    Starting,
    /// These controllers (by the name they registered with) have not synced their caches yet.
    Syncing(Vec<String>),
}

impl fmt::Display for NotReady {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotReady::Starting => write!(f, "manager is starting"),
            NotReady::Syncing(names) => write!(f, "caches not synced yet: {}", names.join(", ")),
        }
    }
}

impl Readiness {
    /// Registers a controller that is not ready until the returned gate is marked synced.
    ///
    /// `name` identifies the controller in `/readyz` answers, e.g. the lowercase kind it reconciles.
    pub fn register(&self, name: impl Into<String>) -> ReadyGate {
        let mut state = self.lock();
        state.controllers.push((name.into(), false));
        ReadyGate {
            state: Arc::clone(&self.state),
            index: state.controllers.len() - 1,
        }
    }

    /// Records that the manager has set up every controller. Called by the manager only.
    pub fn mark_started(&self) {
        self.lock().started = true;
    }

    /// Marks this replica as a leader election standby (`true`): ready without synced caches, since
    /// its controllers wait for leadership. The manager sets it back to `false` once it leads, and
    /// from then on readiness waits for the caches again.
    pub fn set_standby(&self, standby: bool) {
        self.lock().standby = standby;
    }

    /// `Ok(())` when the operator is ready, otherwise the reason it is not.
    pub fn check(&self) -> Result<(), NotReady> {
        let state = self.lock();
        if !state.started {
            return Err(NotReady::Starting);
        }
        if state.standby {
            return Ok(());
        }
        let syncing: Vec<String> = state
            .controllers
            .iter()
            .filter(|(_, synced)| !synced)
            .map(|(name, _)| name.clone())
            .collect();
        if syncing.is_empty() {
            Ok(())
        } else {
            Err(NotReady::Syncing(syncing))
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }
}

/// Locks the readiness state. A panic while holding the lock cannot leave the state half-updated
/// (every update is a single assignment), so a poisoned lock is still safe to use.
fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One controller's entry in [`Readiness`], returned by [`Readiness::register`].
#[derive(Debug)]
#[must_use = "the controller stays not ready until the gate is marked synced"]
pub struct ReadyGate {
    state: Arc<Mutex<State>>,
    index: usize,
}

impl ReadyGate {
    /// Marks the controller as synced: it no longer holds back readiness.
    pub fn mark_synced(self) {
        if let Some((_, synced)) = lock(&self.state).controllers.get_mut(self.index) {
            *synced = true;
        }
    }
}

/// The probe endpoints: `/healthz` answers 200 while the process serves HTTP at all; `/readyz`
/// answers 200 once `readiness` says so and 503 (with the reason in the body) before.
pub fn router(readiness: Readiness) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .with_state(readiness)
}

async fn healthz() -> &'static str {
    "ok"
}

async fn readyz(AxumState(readiness): AxumState<Readiness>) -> (StatusCode, String) {
    match readiness.check() {
        Ok(()) => (StatusCode::OK, "ok".to_owned()),
        Err(not_ready) => (StatusCode::SERVICE_UNAVAILABLE, not_ready.to_string()),
    }
}

/// Binds the probe address. Done before anything else starts so that a port conflict is reported
/// immediately instead of after the controllers are running.
pub async fn bind(address: SocketAddr) -> io::Result<TcpListener> {
    TcpListener::bind(address).await
}

/// Serves the probe endpoints on `listener` until `shutdown` is cancelled.
pub async fn serve(
    listener: TcpListener,
    readiness: Readiness,
    shutdown: CancellationToken,
) -> io::Result<()> {
    axum::serve(listener, router(readiness))
        .with_graceful_shutdown(shutdown.cancelled_owned())
        .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::http::Request;
    use tower::ServiceExt as _;

    async fn get_status(readiness: &Readiness, path: &str) -> StatusCode {
        let request = Request::get(path).body(Body::empty()).unwrap();
        router(readiness.clone())
            .oneshot(request)
            .await
            .unwrap()
            .status()
    }

    #[test]
    fn without_controllers_ready_once_started() {
        let readiness = Readiness::default();
        assert_eq!(readiness.check(), Err(NotReady::Starting));
        readiness.mark_started();
        assert_eq!(readiness.check(), Ok(()));
    }

    #[test]
    fn ready_once_every_controller_synced() {
        let readiness = Readiness::default();
        let first = readiness.register("first");
        let second = readiness.register("second");
        readiness.mark_started();
        assert_eq!(
            readiness.check(),
            Err(NotReady::Syncing(vec!["first".into(), "second".into()]))
        );
        second.mark_synced();
        assert_eq!(
            readiness.check(),
            Err(NotReady::Syncing(vec!["first".into()]))
        );
        first.mark_synced();
        assert_eq!(readiness.check(), Ok(()));
    }

    #[test]
    fn standby_is_ready_without_synced_caches() {
        let readiness = Readiness::default();
        let _gate = readiness.register("captain");
        readiness.set_standby(true);
        assert_eq!(readiness.check(), Err(NotReady::Starting));
        readiness.mark_started();
        assert_eq!(readiness.check(), Ok(()));
        readiness.set_standby(false);
        assert_eq!(
            readiness.check(),
            Err(NotReady::Syncing(vec!["captain".into()]))
        );
    }

    #[tokio::test]
    async fn probes_answer_over_http() {
        let readiness = Readiness::default();
        assert_eq!(get_status(&readiness, "/healthz").await, StatusCode::OK);
        assert_eq!(
            get_status(&readiness, "/readyz").await,
            StatusCode::SERVICE_UNAVAILABLE
        );
        readiness.mark_started();
        assert_eq!(get_status(&readiness, "/readyz").await, StatusCode::OK);
    }
}
