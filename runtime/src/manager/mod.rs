//! The manager: the process that runs the controllers, like controller-runtime's manager in Go.
//!
//! A project's `src/main.rs` parses the [`Flags`] and hands its controllers and webhooks to a
//! [`Manager`]:
//!
//! ```no_run
//! use std::process::ExitCode;
//!
//! use operator_rs_runtime::controller::ControllerSetup;
//! use operator_rs_runtime::manager::{Flags, Manager};
//!
//! #[tokio::main(flavor = "current_thread")]
//! async fn main() -> ExitCode {
//!     let flags = Flags::parse_with("6e1ac2c5.example.com");
//!     Manager::new(flags)
//!         .controllers(Vec::<ControllerSetup>::new()) // my_operator::controller::controllers()
//!         .webhooks(Vec::new()) // my_operator::webhook::webhooks()
//!         .run()
//!         .await
//! }
//! ```
//!
//! [`Manager::run`] sets up logging, connects to Kubernetes, serves the health probes, the metrics
//! and the webhooks, waits for leadership when `--leader-elect` is set, runs every controller
//! until SIGINT or SIGTERM, then shuts everything down gracefully and releases the leader Lease.
//!
//! Like controller-runtime's manager, it starts a list of runnables ([`runnables`]), each in its
//! group: the servers ([`servers`]), the webhook server and its certificates ([`webhooks`]),
//! leader election ([`election`]), and the project's controllers and storage migrations, on the
//! leader; with `--sharding`, the ring ([`ring`]) wraps the controllers, which then run on every
//! member. The manager knows the project's code only as [`Runnable`]s and hands each [`Shared`]
//! (controller-runtime's manager imports no controller package either).
//! Building blocks that controllers use through [`crate::controller::Runner`]:
//! [`backoff::Backoff`] (per-object retry delays), [`namespaces::WatchNamespaces`]
//! (`WATCH_NAMESPACE`), [`health::Readiness`], and the metrics registry ([`crate::metrics`]).

pub mod backoff;
pub mod client;
pub mod election;
mod features;
pub mod flags;
pub mod health;
pub mod leader;
#[cfg(feature = "webhooks")]
#[doc(hidden)] // Public for operator-rs-testing's tests/runtime, not part of the API.
pub mod local_webhooks;
pub mod logging;
pub mod namespaces;
#[cfg(feature = "sharding")]
pub mod ring;
pub mod runnables;
pub mod servers;
pub mod settings;
mod shared;
pub mod shutdown;
#[cfg(feature = "migration")]
pub mod storage_migrations;
pub mod webhooks;

/// The metrics registry and server, at their own path since the webhooks record metrics too:
/// this is [`crate::metrics`], kept here for code written against runtime 0.2.
pub use crate::metrics;

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use tokio_util::sync::CancellationToken;

use crate::metrics::Metrics;
use crate::migration::StorageMigration;
use crate::webhook::Webhook;
pub use flags::{Flags, WebhookCerts};
use runnables::{Gates, Runnables, Task};
use settings::Settings;
pub use shared::{Runnable, RunnableFuture, Shared};

/// How long the controllers and servers get to finish their work after shutdown starts, like
/// controller-runtime's default `GracefulShutdownTimeout`. Kubernetes kills the pod anyway after its
/// `terminationGracePeriodSeconds` (see `config/manager/manager.yaml`).
pub const GRACEFUL_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(30);

/// The operator's process: what it runs, and [`Manager::run`] to run it.
pub struct Manager {
    flags: Flags,
    controllers: Vec<Box<dyn Runnable>>,
    webhooks: Vec<Webhook>,
    storage_migrations: Vec<StorageMigration>,
    runnables: Vec<Box<dyn Runnable>>,
}

impl Manager {
    /// A manager configured by `flags`, with no controllers and no webhooks yet.
    pub fn new(flags: Flags) -> Self {
        Self {
            flags,
            controllers: Vec::new(),
            webhooks: Vec::new(),
            storage_migrations: Vec::new(),
            runnables: Vec::new(),
        }
    }

    /// The controllers to run (a project's `controller::controllers()`, a list of
    /// `ControllerSetup`s): on the leader only when `--leader-elect` is set, on every member of
    /// the ring with `--sharding`.
    pub fn controllers<R: Runnable>(mut self, controllers: impl IntoIterator<Item = R>) -> Self {
        let controllers = controllers.into_iter();
        let boxed = controllers.map(|controller| Box::new(controller) as Box<dyn Runnable>);
        self.controllers.extend(boxed);
        self
    }

    /// Another runnable of the project's own (controller-runtime's `Manager.Add`): on the leader
    /// only, unless its [`Runnable::needs_leader_election`] says otherwise.
    pub fn runnable(mut self, runnable: impl Runnable) -> Self {
        self.runnables.push(Box::new(runnable));
        self
    }

    /// The webhooks to serve over HTTPS, on every replica (leader or not). With none, no webhook
    /// server starts; `ENABLE_WEBHOOKS=false` turns it off too. Under `make run`, the API server
    /// can only call them with `--webhook-url` ([`crate::webhook::local`]).
    pub fn webhooks(mut self, webhooks: Vec<Webhook>) -> Self {
        self.webhooks = webhooks;
        self
    }

    /// The kinds to migrate to their storage version ([`crate::migration`]): on the leader once
    /// at startup (unless `--migrate-storage-versions=false`), or alone with
    /// `--migrate-storage-versions-and-exit`.
    pub fn storage_migrations(
        mut self,
        migrations: impl IntoIterator<Item = StorageMigration>,
    ) -> Self {
        self.storage_migrations.extend(migrations);
        self
    }

    /// Sets up logging from the flags, runs the operator until it is asked to stop (see
    /// [`Manager::try_run`]), and returns the process's exit code: success after a graceful
    /// shutdown, failure (with the error logged) otherwise.
    pub async fn run(self) -> ExitCode {
        if let Err(error) = logging::init(self.flags.log_format, self.flags.log_level.as_deref()) {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
        match self.try_run().await {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                // `{:#}` prints the whole chain of causes on one line.
                tracing::error!("{error:#}");
                ExitCode::FAILURE
            }
        }
    }

    /// Runs the operator until it is asked to stop; logging must be set up already.
    ///
    /// Returns `Ok(())` after a graceful shutdown on SIGINT or SIGTERM. Returns an error when
    /// startup fails (invalid `WATCH_NAMESPACE` or certificates, no usable kubeconfig, a port
    /// taken, no namespace for the leader Lease out of a cluster), when a controller or server
    /// fails or stops on its own, when leadership is lost (then without waiting for reconciles in
    /// flight, since another replica may already be reconciling), or when shutdown takes longer
    /// than [`GRACEFUL_SHUTDOWN_TIMEOUT`], or when the flags ask for what this build of the
    /// runtime left out (a feature that is off: `--sharding`, `--webhook-certs=self-signed`…).
    pub async fn try_run(mut self) -> anyhow::Result<()> {
        let migrations = std::mem::take(&mut self.storage_migrations);
        let registered = features::Registered {
            storage_migrations: !migrations.is_empty(),
            webhooks: crate::webhook::will_serve(&self.webhooks),
        };
        features::check(&self.flags, &registered)?;
        #[cfg(feature = "migration")]
        {
            if self.flags.migrate_storage_versions_and_exit {
                return storage_migrations::migrate_and_exit(&self.flags, &migrations).await;
            }
            if let Some(runnable) = storage_migrations::at_startup(&self.flags, migrations) {
                self.runnables.push(Box::new(runnable));
            }
        }
        // Everything stops when this token is cancelled: on a signal, or when a runnable fails.
        let shutdown = CancellationToken::new();
        shutdown::cancel_on_signal(shutdown.clone()).context("cannot install signal handlers")?;
        // Configuration mistakes fail before anything connects or listens.
        let settings = Settings::from_flags(&self.flags)?;
        let metrics = Metrics::new();
        let client =
            client::build(self.flags.kube_api_qps, self.flags.kube_api_burst, &metrics).await?;
        let shared = Shared {
            client,
            readiness: health::Readiness::default(),
            shutdown: shutdown.clone(),
            metrics,
            watch_namespaces: settings.watch_namespaces.clone(),
            max_concurrent_reconciles: self.flags.max_concurrent_reconciles,
            sharding: settings.sharding.clone(),
        };
        self.run_with(settings, shared).await
    }

    /// Starts every runnable with `shared`, and supervises them until shutdown.
    async fn run_with(self, settings: Settings, shared: Shared) -> anyhow::Result<()> {
        let gates = Gates::new(shared.shutdown.clone());
        let mut runnables = Runnables::new(gates.clone());
        // The servers and the webhooks first: what fails to bind or to set up fails the startup.
        runnables.extend(servers::tasks(&self.flags, &settings, &shared).await?);
        runnables.extend(webhooks::tasks(&self.flags, &shared, self.webhooks).await?);
        #[cfg(feature = "sharding")]
        let ring = match (&settings.sharding, &settings.leader_election) {
            (Some(sharding), Some(config)) => Some(ring::Membership::new(
                sharding.clone(),
                config.clone(),
                shared.shutdown.clone(),
            )),
            _ => None,
        };
        match settings.leader_election {
            Some(config) => runnables.add(election::task(config, &shared, &gates)),
            None => gates.leading.cancel(),
        }
        tracing::info!(
            count = self.controllers.len(),
            namespaces = %shared.watch_namespaces,
            max_concurrent_reconciles = shared.max_concurrent_reconciles,
            "setting up controllers"
        );
        for controller in &self.controllers {
            let task = Task::of_project(controller.as_ref(), &shared);
            #[cfg(feature = "sharding")]
            let task = match &ring {
                Some(ring) => ring.decorate(task),
                None => task,
            };
            runnables.add(task);
        }
        for runnable in &self.runnables {
            runnables.add(Task::of_project(runnable.as_ref(), &shared));
        }
        // After the controllers' setup, which registers what the elected replica assigns.
        #[cfg(feature = "sharding")]
        if let Some(ring) = &ring {
            runnables.extend(ring.tasks(&shared, &gates));
        }
        // Every controller has registered with `readiness` during setup; from now on `/readyz`
        // only waits for their caches.
        shared.readiness.mark_started();
        runnables.run().await
    }
}
