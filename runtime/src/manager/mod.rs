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
//! The manager knows controllers only as [`Runnable`]s and hands each [`Shared`] (like
//! controller-runtime's manager, which runs `Runnable`s and imports no controller package).
//! Building blocks that controllers use through [`crate::controller::Runner`]:
//! [`backoff::Backoff`] (per-object retry delays), [`namespaces::WatchNamespaces`]
//! (`WATCH_NAMESPACE`), [`health::Readiness`], and the metrics registry ([`crate::metrics`]).

pub mod backoff;
pub mod client;
pub mod flags;
pub mod health;
pub mod leader;
#[doc(hidden)] // Public for operator-rs-testing's tests/runtime, not part of the API.
pub mod local_webhooks;
pub mod logging;
pub mod namespaces;
mod shared;
pub mod shutdown;
pub mod storage_migrations;

/// The metrics registry and server, at their own path since the webhooks record metrics too:
/// this is [`crate::metrics`], kept here for code written against runtime 0.2.
pub use crate::metrics;

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, anyhow};
use futures::FutureExt;
use futures::future::BoxFuture;
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::metrics::Metrics;
use crate::metrics::server::{CertFiles, Options as MetricsOptions};
use crate::migration::{self, StorageMigration};
use crate::sharding::{self, Sharding};
use crate::webhook::certs::{SelfSignedCertificates, Settings as CertSettings, Targets};
use crate::webhook::{ServerError, Webhook, WebhookServerConfig};
pub use flags::{Flags, WebhookCerts};
use health::Readiness;
use leader::{LeaderElectionConfig, LeaderElectionError, LeaderElector};
use namespaces::WatchNamespaces;
pub use shared::{Runnable, RunnableFuture, Shared};
use storage_migrations::StorageMigrations;

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
}

impl Manager {
    /// A manager configured by `flags`, with no controllers and no webhooks yet.
    pub fn new(flags: Flags) -> Self {
        Self {
            flags,
            controllers: Vec::new(),
            webhooks: Vec::new(),
            storage_migrations: Vec::new(),
        }
    }

    /// The controllers to run (a project's `controller::controllers()`, a list of
    /// `ControllerSetup`s): on the leader only when `--leader-elect` is set.
    pub fn controllers<R: Runnable>(mut self, controllers: impl IntoIterator<Item = R>) -> Self {
        let controllers = controllers.into_iter();
        let boxed = controllers.map(|controller| Box::new(controller) as Box<dyn Runnable>);
        self.controllers.extend(boxed);
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
    /// than [`GRACEFUL_SHUTDOWN_TIMEOUT`].
    pub async fn try_run(self) -> anyhow::Result<()> {
        let Self {
            flags,
            mut controllers,
            webhooks,
            storage_migrations,
        } = self;
        let options = migration::Options {
            writes_per_second: flags.storage_migration_qps,
            ..migration::Options::default()
        };
        if flags.migrate_storage_versions_and_exit {
            return migrate_and_exit(&flags, &storage_migrations, &options).await;
        }
        if flags.migrate_storage_versions && !storage_migrations.is_empty() {
            let migrations = StorageMigrations::new(storage_migrations, options);
            controllers.push(Box::new(migrations));
        }
        run(flags, controllers, webhooks).await
    }
}

/// `--migrate-storage-versions-and-exit`: runs the storage migrations once, without leader
/// election (a Job runs alone, and a leader migrating at the same time is harmless: both write
/// the same objects unchanged), and stops on SIGINT or SIGTERM.
async fn migrate_and_exit(
    flags: &Flags,
    migrations: &[StorageMigration],
    options: &migration::Options,
) -> anyhow::Result<()> {
    let shutdown = CancellationToken::new();
    shutdown::cancel_on_signal(shutdown.clone()).context("cannot install signal handlers")?;
    let metrics = Metrics::new();
    let client = client::build(flags.kube_api_qps, flags.kube_api_burst, &metrics).await?;
    tokio::select! {
        () = shutdown.cancelled() => Err(anyhow!("interrupted before the storage version migrations were done")),
        result = storage_migrations::run_once(&client, migrations, options, &metrics) => result,
    }
}

async fn run(
    flags: Flags,
    controllers: Vec<Box<dyn Runnable>>,
    webhooks: Vec<Webhook>,
) -> anyhow::Result<()> {
    // Everything stops when this token is cancelled: on a signal, or when any task fails.
    let shutdown = CancellationToken::new();
    shutdown::cancel_on_signal(shutdown.clone()).context("cannot install signal handlers")?;

    // Configuration mistakes fail before anything connects or listens.
    let watch_namespaces = WatchNamespaces::from_env()?;
    let identity = leader::identity();
    let leader_election = flags
        .leader_elect
        .then(|| leader_election_config(&flags, &identity))
        .transpose()?;
    if flags.webhook_url.is_some() && flags.webhook_certs == WebhookCerts::SelfSigned {
        return Err(anyhow!(
            "--webhook-url serves the webhooks with certificates of its own: it cannot be combined with --webhook-certs=self-signed"
        ));
    }
    let sharding = match (flags.sharding, &leader_election) {
        (false, _) => None,
        (true, None) => {
            return Err(anyhow!(
                "--sharding needs --leader-elect: the elected replica assigns the objects to the \
                 members of the ring"
            ));
        }
        (true, Some(config)) => Some(Sharding::new(
            &config.lease_name,
            sharding::member_name(&identity),
        )?),
    };
    let metrics_options = metrics_options(&flags);
    let tls = if flags.metrics_bind_address.socket_addr().is_some() {
        metrics::server::tls_config(&metrics_options)
            .context("cannot set up TLS for the metrics server")?
    } else {
        None
    };

    let metrics = Metrics::new();
    let client = client::build(flags.kube_api_qps, flags.kube_api_burst, &metrics).await?;

    let readiness = Readiness::default();
    let mut tasks: JoinSet<TaskResult> = JoinSet::new();

    if let Some(address) = flags.health_probe_bind_address.socket_addr() {
        let listener = health::bind(address)
            .await
            .with_context(|| format!("cannot bind the health probe address {address}"))?;
        tracing::info!(%address, "serving health probes on /healthz and /readyz");
        let (readiness, shutdown) = (readiness.clone(), shutdown.clone());
        tasks.spawn(async move {
            let result = health::serve(listener, readiness, shutdown).await;
            (
                "health probe server".to_owned(),
                result.map_err(anyhow::Error::from),
            )
        });
    }

    if let Some(address) = flags.metrics_bind_address.socket_addr() {
        let listener = metrics::server::bind(address)
            .await
            .with_context(|| format!("cannot bind the metrics address {address}"))?;
        let authorizer = metrics_options
            .secure
            .then(|| metrics::Authorizer::new(client.clone()));
        let router = metrics::server::router(metrics.clone(), authorizer);
        let scheme = if tls.is_some() { "https" } else { "http" };
        tracing::info!(%address, scheme, authorized = metrics_options.secure, "serving metrics on /metrics");
        let shutdown = shutdown.clone();
        tasks.spawn(async move {
            let result =
                metrics::server::serve(listener, router, metrics_options, tls, shutdown).await;
            (
                "metrics server".to_owned(),
                result.map_err(anyhow::Error::from),
            )
        });
    }

    // The webhook server runs on every replica, leader or not.
    let server = match (&flags.webhook_url, flags.webhook_certs) {
        (Some(url), _) => {
            local_webhooks::start(
                url, &flags, &client, webhooks, &metrics, &shutdown, &mut tasks,
            )
            .await?
        }
        (None, WebhookCerts::Files) => {
            let webhook_config = webhook_config(&flags);
            let started =
                crate::webhook::start(&webhook_config, webhooks, &metrics, shutdown.clone());
            started
                .context("cannot start the webhook server")?
                .map(FutureExt::boxed)
        }
        (None, WebhookCerts::SelfSigned) => {
            start_self_signed(&flags, &client, webhooks, &metrics, &shutdown, &mut tasks).await?
        }
    };
    if let Some(server) = server {
        tasks.spawn(async move {
            let result = server.await.map_err(anyhow::Error::from);
            ("webhook server".to_owned(), result)
        });
    }

    let shared = Shared {
        client: client.clone(),
        readiness: readiness.clone(),
        shutdown: shutdown.clone(),
        metrics: metrics.clone(),
        watch_namespaces: watch_namespaces.clone(),
        max_concurrent_reconciles: flags.max_concurrent_reconciles,
        sharding: sharding.clone(),
    };
    tracing::info!(
        count = controllers.len(),
        namespaces = %watch_namespaces,
        max_concurrent_reconciles = flags.max_concurrent_reconciles,
        "setting up controllers"
    );

    // Cancelled once this replica leads: at once without leader election.
    let elected = CancellationToken::new();
    // Cancelled once this replica may run the controllers: when it leads, or with `--sharding`
    // once it is a member of the ring.
    let may_run = match &sharding {
        Some(_) => CancellationToken::new(),
        None => elected.clone(),
    };
    // Every controller task holds a sender; the receiver sees the channel close once all of them
    // have ended, which is when the leader (and a member) may release its Lease.
    let (running, mut all_stopped) = mpsc::channel::<()>(1);
    let controllers_stopped = CancellationToken::new();
    tokio::spawn({
        let controllers_stopped = controllers_stopped.clone();
        async move {
            all_stopped.recv().await;
            controllers_stopped.cancel();
        }
    });
    let sharding_gates = Gates {
        elected: elected.clone(),
        joined: may_run.clone(),
        controllers_stopped: controllers_stopped.clone(),
        shutdown: shutdown.clone(),
    };
    let sharding_config = sharding.as_ref().zip(leader_election.clone());
    match leader_election {
        Some(config) => {
            // Standbys are ready: they only wait for leadership (as in controller-runtime). With
            // `--sharding` every replica runs its controllers, and readiness is theirs.
            readiness.set_standby(sharding.is_none());
            // `leader_election_master_status`: 0 until elected, and again once the Lease is
            // released or lost.
            let leading = metrics.leader_election(&config.lease_name);
            let elector = LeaderElector::new(client.clone(), config).with_events(client.clone());
            let sharded = sharding.is_some();
            let on_elected = {
                let (elected, readiness, leading) =
                    (elected.clone(), readiness.clone(), leading.clone());
                move || {
                    if sharded {
                        tracing::info!("became the leader, assigning objects to members");
                    } else {
                        tracing::info!("became the leader, starting controllers");
                    }
                    readiness.set_standby(false);
                    leading.set_leading(true);
                    elected.cancel();
                }
            };
            let stopped = controllers_stopped.clone().cancelled_owned();
            let shutdown = shutdown.clone();
            tasks.spawn(async move {
                let result = leader::run(elector, shutdown, on_elected, stopped).await;
                leading.set_leading(false);
                (
                    "leader election".to_owned(),
                    result.map_err(anyhow::Error::from),
                )
            });
        }
        None => elected.cancel(),
    }

    for runnable in controllers {
        let name = format!("controller {}", runnable.name());
        let controller = runnable.start(&shared);
        let (may_run, shutdown, running) = (may_run.clone(), shutdown.clone(), running.clone());
        tasks.spawn(async move {
            let _running = running;
            // The controller future is lazy: nothing watches or reconciles before it is polled.
            let result = tokio::select! {
                () = shutdown.cancelled() => Ok(()),
                () = may_run.cancelled() => controller.await,
            };
            (name, result)
        });
    }
    // After the controllers' setup, which registers what the elected replica assigns.
    if let Some((sharding, config)) = sharding_config {
        for task in sharding_tasks(sharding, &config, &client, &metrics, sharding_gates) {
            tasks.spawn(task);
        }
    }
    drop(running);
    // Every controller has registered with `readiness` during setup; from now on `/readyz` only
    // waits for their caches.
    readiness.mark_started();

    supervise(tasks, &shutdown).await
}

/// The tokens that order the tasks of sharding with the controllers.
#[doc(hidden)] // Public for operator-rs-testing's tests/runtime, not part of the API.
pub struct Gates {
    /// Cancelled when this replica leads: it then assigns the objects to the members.
    pub elected: CancellationToken,
    /// Cancelled here once this replica is a member of the ring: its controllers start then.
    pub joined: CancellationToken,
    /// Cancelled once every controller has stopped: the member may leave the ring then.
    pub controllers_stopped: CancellationToken,
    pub shutdown: CancellationToken,
}

/// What a replica runs with `--sharding` besides its controllers: its membership of the ring (a
/// Lease of its own, held like the leader's, released once its controllers have stopped), its
/// view of the ring's members from their Leases, and, once it leads, the assignment of every
/// sharded controller's objects to the members.
#[doc(hidden)] // Public for operator-rs-testing's tests/runtime, not part of the API.
pub fn sharding_tasks(
    sharding: &Sharding,
    config: &LeaderElectionConfig,
    client: &kube::Client,
    metrics: &Metrics,
    gates: Gates,
) -> Vec<futures::future::BoxFuture<'static, TaskResult>> {
    use futures::FutureExt as _;
    let member_config = LeaderElectionConfig {
        lease_name: sharding.member_lease_name(),
        ..config.clone()
    };
    let member = LeaderElector::member(client.clone(), member_config, sharding.lease_labels());
    let on_joined = {
        let joined = gates.joined.clone();
        move || {
            tracing::info!("joined the sharding ring, starting controllers");
            joined.cancel();
        }
    };
    let stopped = gates.controllers_stopped.cancelled_owned();
    let membership =
        leader::run(member, gates.shutdown.clone(), on_joined, stopped).map(|result| {
            let result = result.map_err(anyhow::Error::from);
            ("sharding ring membership".to_owned(), result)
        });
    let timing = sharding::RingTiming {
        namespace: config.namespace.clone(),
        lease_duration: config.lease_duration,
        retry_period: config.retry_period,
    };
    let assign = sharding.assign(
        client.clone(),
        timing,
        metrics.sharding(),
        gates.elected,
        gates.shutdown,
    );
    let assignment = assign.map(|()| ("sharding assignment".to_owned(), Ok(())));
    vec![membership.boxed(), assignment.boxed()]
}

/// The leader election settings from the flags, with the Lease in the pod's namespace unless
/// `--leader-election-namespace` says otherwise, and `identity` as this replica's.
fn leader_election_config(
    flags: &Flags,
    identity: &str,
) -> Result<LeaderElectionConfig, LeaderElectionError> {
    let namespace = match &flags.leader_election_namespace {
        Some(namespace) => namespace.clone(),
        None => leader::pod_namespace()?,
    };
    let config = LeaderElectionConfig {
        lease_duration: flags.leader_election_lease_duration,
        renew_deadline: flags.leader_election_renew_deadline,
        retry_period: flags.leader_election_retry_period,
        ..LeaderElectionConfig::new(&flags.leader_election_id, namespace, identity)
    };
    config.validate()?;
    Ok(config)
}

/// The webhook server of the self-signed mode (`--webhook-certs=self-signed`), when there are
/// webhooks to serve: makes or reads the certificates first (so the first handshake has one,
/// and a missing RBAC rule fails the startup with its message), keeps them in a task of their
/// own, and serves with them.
async fn start_self_signed(
    flags: &Flags,
    client: &kube::Client,
    webhooks: Vec<Webhook>,
    metrics: &Metrics,
    shutdown: &CancellationToken,
    tasks: &mut JoinSet<TaskResult>,
) -> anyhow::Result<Option<BoxFuture<'static, Result<(), ServerError>>>> {
    if !crate::webhook::will_serve(&webhooks) {
        return Ok(None);
    }
    let settings = self_signed_settings(flags)?;
    let certificates = SelfSignedCertificates::new(client.clone(), settings)?;
    certificates
        .reconcile()
        .await
        .context("cannot set up the self-signed webhook certificates")?;
    let resolver = certificates.resolver();
    let stop = shutdown.clone();
    tasks.spawn(async move {
        certificates.run(stop).await;
        ("webhook certificates".to_owned(), Ok(()))
    });
    let address = std::net::SocketAddr::from(([0, 0, 0, 0], flags.webhook_port));
    let server = crate::webhook::start_with_resolver(
        address,
        flags.enable_http2,
        resolver,
        webhooks,
        metrics,
        shutdown.clone(),
    )
    .context("cannot start the webhook server")?;
    Ok(Some(server.boxed()))
}

/// The settings of the self-signed webhook certificates from the flags, with the pod's
/// namespace for the Secret and the Service unless flags name theirs.
fn self_signed_settings(flags: &Flags) -> anyhow::Result<CertSettings> {
    let namespace = |given: &Option<String>, flag: &str| match given {
        Some(namespace) => Ok(namespace.clone()),
        None => leader::pod_namespace().with_context(|| {
            format!("the self-signed webhook certificates need {flag} out of a cluster")
        }),
    };
    let secret_namespace = namespace(
        &flags.webhook_cert_secret_namespace,
        "--webhook-cert-secret-namespace",
    )?;
    let mut settings = CertSettings::new(
        &secret_namespace,
        &flags.webhook_cert_secret,
        &flags.webhook_service_name,
    );
    settings.service_namespace = namespace(
        &flags.webhook_service_namespace,
        "--webhook-service-namespace",
    )?;
    settings.targets = Targets {
        mutating: flags.webhook_mutating_configuration.clone(),
        validating: flags.webhook_validating_configuration.clone(),
        crds: flags.webhook_conversion_crd.clone(),
    };
    settings.ca_validity = flags.webhook_ca_validity;
    settings.ca_rotation_window = flags.webhook_ca_rotation_window;
    settings.cert_validity = flags.webhook_cert_validity;
    settings.cert_rotation_window = flags.webhook_cert_rotation_window;
    Ok(settings)
}

/// The webhook server settings from the flags.
fn webhook_config(flags: &Flags) -> WebhookServerConfig {
    WebhookServerConfig {
        address: std::net::SocketAddr::from(([0, 0, 0, 0], flags.webhook_port)),
        cert_dir: flags
            .webhook_cert_path
            .clone()
            .unwrap_or_else(crate::webhook::server::default_cert_dir),
        cert_name: flags.webhook_cert_name.clone(),
        key_name: flags.webhook_cert_key.clone(),
        enable_http2: flags.enable_http2,
    }
}

/// The metrics server settings from the flags.
fn metrics_options(flags: &Flags) -> MetricsOptions {
    MetricsOptions {
        secure: flags.metrics_secure,
        enable_http2: flags.enable_http2,
        cert_files: flags
            .metrics_cert_path
            .as_deref()
            .map(|dir| CertFiles::new(dir, &flags.metrics_cert_name, &flags.metrics_cert_key)),
    }
}

/// What each task of the manager returns: its name for messages, and how it ended.
#[doc(hidden)] // Public for operator-rs-testing's tests/runtime, not part of the API.
pub type TaskResult = (String, anyhow::Result<()>);

/// Waits for all tasks to finish after shutdown, which starts on a signal or as soon as a task
/// fails or stops on its own (tasks are meant to run until shutdown). Returns the first failure.
async fn supervise(
    mut tasks: JoinSet<TaskResult>,
    shutdown: &CancellationToken,
) -> anyhow::Result<()> {
    // Once shutdown starts, the remaining tasks get a deadline.
    let deadline = shutdown_deadline(shutdown);
    tokio::pin!(deadline);
    let mut first_error = None;
    loop {
        let next = tokio::select! {
            next = tasks.join_next() => next,
            () = &mut deadline => {
                tasks.abort_all();
                return Err(first_error.unwrap_or_else(|| {
                    anyhow!("graceful shutdown took longer than {GRACEFUL_SHUTDOWN_TIMEOUT:?}")
                }));
            }
        };
        let Some(joined) = next else {
            if shutdown.is_cancelled() {
                break;
            }
            // Nothing to run (no controllers, probes disabled): idle until asked to stop.
            shutdown.cancelled().await;
            continue;
        };
        let (task, result) = match joined {
            Ok(finished) => finished,
            // The task panicked (the panic message is already logged) or was aborted.
            Err(join_error) => ("a task".to_owned(), Err(anyhow!(join_error))),
        };
        if let Err(error) = &result
            && error
                .downcast_ref::<LeaderElectionError>()
                .is_some_and(LeaderElectionError::is_lost)
        {
            // Another replica may be reconciling already: stop at once, like controller-runtime
            // (which skips the graceful shutdown when leadership is lost), and exit with an error so
            // that Kubernetes restarts this pod as a standby.
            tracing::error!("{error:#}; stopping at once");
            shutdown.cancel();
            tasks.abort_all();
            return result.map_err(|error| error.context(format!("{task} failed")));
        }
        let failure = match result {
            Err(error) => Some(error.context(format!("{task} failed"))),
            Ok(()) if !shutdown.is_cancelled() => Some(anyhow!("{task} stopped unexpectedly")),
            Ok(()) => None,
        };
        if let Some(error) = failure {
            tracing::error!("{error:#}; shutting down");
            shutdown.cancel();
            first_error.get_or_insert(error);
        }
    }

    match first_error {
        Some(error) => Err(error),
        None => {
            tracing::info!("shutdown complete");
            Ok(())
        }
    }
}

/// Completes [`GRACEFUL_SHUTDOWN_TIMEOUT`] after shutdown has started.
async fn shutdown_deadline(shutdown: &CancellationToken) {
    shutdown.cancelled().await;
    tokio::time::sleep(GRACEFUL_SHUTDOWN_TIMEOUT).await;
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// The self-signed mode's flags become its settings, as given.
    #[test]
    fn self_signed_settings_come_from_the_flags() {
        let flags = Flags::try_parse_with(
            "lease",
            [
                "manager",
                "--webhook-certs=self-signed",
                "--webhook-cert-secret=p-webhook-server-self-signed-cert",
                "--webhook-cert-secret-namespace=p-system",
                "--webhook-service-name=p-webhook-service",
                "--webhook-service-namespace=p-system",
                "--webhook-mutating-configuration=p-mutating-webhook-configuration",
                "--webhook-validating-configuration=p-validating-webhook-configuration",
                "--webhook-conversion-crd=widgets.example.com",
                "--webhook-ca-validity=20m",
                "--webhook-ca-rotation-window=8m",
                "--webhook-cert-validity=5m",
                "--webhook-cert-rotation-window=2m",
            ],
        )
        .unwrap();
        let settings = self_signed_settings(&flags).unwrap();
        assert_eq!(
            settings.dns_names(),
            [
                "p-webhook-service.p-system.svc",
                "p-webhook-service.p-system.svc.cluster.local"
            ]
        );
        assert_eq!(
            (
                settings.secret_namespace.as_str(),
                settings.secret_name.as_str()
            ),
            ("p-system", "p-webhook-server-self-signed-cert")
        );
        assert_eq!(
            settings.targets,
            Targets {
                mutating: vec!["p-mutating-webhook-configuration".to_owned()],
                validating: vec!["p-validating-webhook-configuration".to_owned()],
                crds: vec!["widgets.example.com".to_owned()],
            }
        );
        assert_eq!(settings.ca_validity, Duration::from_secs(20 * 60));
        assert_eq!(settings.ca_rotation_window, Duration::from_secs(8 * 60));
        assert_eq!(settings.cert_validity, Duration::from_secs(5 * 60));
        assert_eq!(settings.cert_rotation_window, Duration::from_secs(2 * 60));
        assert!(settings.validate().is_ok());
    }
}
