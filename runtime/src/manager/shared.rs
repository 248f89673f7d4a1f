//! What the manager runs and what it hands what it runs: [`Runnable`] and [`Shared`].
//!
//! The manager knows controllers only as [`Runnable`]s, like controller-runtime's manager, which
//! runs `Runnable`s and imports no controller package: `crate::controller` implements it for its
//! `ControllerSetup`, and builds on what [`Shared`] holds.

use futures::future::BoxFuture;
use kube::Client;
use tokio_util::sync::CancellationToken;

use super::health::Readiness;
use super::namespaces::WatchNamespaces;
use crate::metrics::Metrics;
use crate::sharding::Sharding;

/// What a [`Runnable`] returns: its main loop, which the manager runs until shutdown.
///
/// The future should run until [`Shared::shutdown`] is cancelled and then return `Ok(())`. If it
/// returns earlier, or returns an error, the manager shuts the whole process down and exits with a
/// failure, so that Kubernetes restarts it instead of leaving a pod that silently reconciles nothing.
pub type RunnableFuture = BoxFuture<'static, anyhow::Result<()>>;

/// Something of the project's that the manager runs: a controller, the storage migrations, or a
/// runnable of its own ([`Manager::runnable`](super::Manager::runnable)). controller-runtime's
/// `Runnable`, with its `LeaderElectionRunnable`.
///
/// `crate::controller::ControllerSetup` implements it; a project lists its controllers in
/// `controller::controllers()` and hands them to `Manager::controllers`.
///
/// What must be ready before the replica reports ready (a cache that must sync) registers with
/// [`Shared::readiness`] in [`Runnable::start`]; the rest does not hold readiness up.
pub trait Runnable: Send + 'static {
    /// Its name, in the manager's logs and errors.
    fn name(&self) -> &str;

    /// Whether it runs on the leader only (all replicas lead without `--leader-elect`), as
    /// controllers do: by default yes. A runnable that says no starts on every replica at once.
    /// (With `--sharding`, the manager runs its controllers on every member of the ring.)
    fn needs_leader_election(&self) -> bool {
        true
    }

    /// Builds its main loop. The manager calls it once at startup, before leader election, and
    /// polls the returned future once it may run (once this replica leads, for a runnable that
    /// needs leader election): nothing may watch or write before then.
    fn start(&self, shared: &Shared) -> RunnableFuture;
}

/// What the manager shares with every controller.
///
/// Each controller's `setup` function receives it, and usually hands it to a
/// [`Runner`](crate::controller::Runner). Clone the fields you need into your controller; they are
/// all cheap handles to shared state.
#[derive(Clone)]
pub struct Shared {
    /// Client for the Kubernetes API server, from your kubeconfig when run locally, or from the pod's
    /// service account in the cluster (which only has the permissions in `config/rbac/`).
    pub client: Client,
    /// Tracks which controllers have synced their caches; `/readyz` answers 200 only once all have.
    /// `Shared::run_controller` registers controllers here.
    pub readiness: Readiness,
    /// Cancelled when the manager shuts down (on SIGINT or SIGTERM, or after a fatal error). Pass
    /// `shutdown.clone().cancelled_owned()` to [`kube::runtime::Controller::graceful_shutdown_on`] so
    /// that reconciliations in flight can finish before the process exits.
    pub shutdown: CancellationToken,
    /// The metrics registry that `/metrics` serves: `metrics.controller(name, workers)` gives a
    /// controller its reconcile metrics (controller-runtime's names); `metrics.register(..)` adds
    /// metrics of your own (controller-runtime's `metrics.Registry.MustRegister`).
    pub metrics: Metrics,
    /// The namespaces to watch (`WATCH_NAMESPACE`): `watch_namespaces.apis::<K>(&client)` gives one
    /// `Api` per watch for a namespaced kind.
    pub watch_namespaces: WatchNamespaces,
    /// `--max-concurrent-reconciles`: how many objects a controller may reconcile at once (never
    /// the same object twice). Pass it to `controller::Config::concurrency`.
    pub max_concurrent_reconciles: u16,
    /// This replica's place in the sharding ring with `--sharding` (`None` without): a
    /// [`Runner`](crate::controller::Runner) then watches, caches and reconciles only the
    /// objects labelled for this member (see [`crate::sharding`]).
    pub sharding: Option<Sharding>,
}

impl Shared {
    /// What the manager would hand its controllers with its default flags, around `client`: every
    /// namespace, one worker per controller, a registry of its own, and a shutdown token that
    /// nothing cancels but you. For tests that run a controller's `setup` against
    /// `testing::fake::FakeApiServer::client` (feature `testing`): cancel `shutdown` at the end,
    /// and the controller's future returns.
    pub fn new(client: Client) -> Self {
        Shared {
            client,
            readiness: Readiness::default(),
            shutdown: CancellationToken::new(),
            metrics: Metrics::new(),
            watch_namespaces: WatchNamespaces::All,
            max_concurrent_reconciles: 1,
            sharding: None,
        }
    }
}
