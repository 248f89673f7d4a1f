//! How the manager runs the storage migrations of [`crate::migration`] (here, so that the
//! migration module needs nothing of the manager's): on the leader, once at startup, retrying those that fail
//! ([`StorageMigrations`]); or once and then exiting, for a Job ([`run_once`]).

use std::time::Duration;

use anyhow::{Context as _, anyhow};
use kube::Client;
use tokio_util::sync::CancellationToken;

use super::{Flags, Runnable, RunnableFuture, Shared, client, shutdown};
use crate::metrics::Metrics;
use crate::migration::{Options, Outcome, StorageMigration};

/// The delay before the first retry of a failed migration; it doubles up to [`RETRY_MAX`].
const RETRY_MIN: Duration = Duration::from_secs(5);
/// The longest delay between two attempts of a migration.
const RETRY_MAX: Duration = Duration::from_secs(300);

/// The storage migrations of a manager, run on the leader like its controllers (so never by two
/// replicas at once): each kind once at startup. A migration that fails (the CRD not installed
/// yet, the API server unavailable, a permission missing) is logged, counted as `Failed`, and
/// retried after a delay that grows from 5 seconds to 5 minutes; it never stops the
/// controllers. Once all are done, it waits for shutdown.
#[derive(Clone, Debug)]
pub struct StorageMigrations {
    migrations: Vec<StorageMigration>,
    options: Options,
}

impl StorageMigrations {
    /// `migrations`, written at the pace of `options`.
    pub fn new(migrations: Vec<StorageMigration>, options: Options) -> Self {
        Self {
            migrations,
            options,
        }
    }
}

/// The migrations' pace from the flags (`--storage-migration-qps`).
fn options(flags: &Flags) -> Options {
    Options {
        writes_per_second: flags.storage_migration_qps,
        ..Options::default()
    }
}

/// The runnable that migrates `migrations` on the leader at startup, unless there are none or
/// `--migrate-storage-versions=false`.
pub fn at_startup(flags: &Flags, migrations: Vec<StorageMigration>) -> Option<StorageMigrations> {
    (flags.migrate_storage_versions && !migrations.is_empty())
        .then(|| StorageMigrations::new(migrations, options(flags)))
}

/// `--migrate-storage-versions-and-exit`: runs the storage migrations once, without leader
/// election (a Job runs alone, and a leader migrating at the same time is harmless: both write
/// the same objects unchanged), and stops on SIGINT or SIGTERM.
pub async fn migrate_and_exit(
    flags: &Flags,
    migrations: &[StorageMigration],
) -> anyhow::Result<()> {
    let shutdown = CancellationToken::new();
    shutdown::cancel_on_signal(shutdown.clone()).context("cannot install signal handlers")?;
    let metrics = Metrics::new();
    let client = client::build(flags.kube_api_qps, flags.kube_api_burst, &metrics).await?;
    let options = options(flags);
    tokio::select! {
        () = shutdown.cancelled() => Err(anyhow!("interrupted before the storage version migrations were done")),
        result = run_once(&client, migrations, &options, &metrics) => result,
    }
}

impl Runnable for StorageMigrations {
    fn name(&self) -> &str {
        "storage version migration"
    }

    fn start(&self, shared: &Shared) -> RunnableFuture {
        let Self {
            migrations,
            options,
        } = self.clone();
        let (client, metrics) = (shared.client.clone(), shared.metrics.clone());
        let shutdown = shared.shutdown.clone();
        Box::pin(async move {
            let migrate = async {
                let mut pending = migrations;
                let mut delay = RETRY_MIN;
                loop {
                    let mut failed = Vec::new();
                    for migration in pending {
                        if let Err(error) = migration.run(&client, &options, &metrics).await {
                            tracing::error!(crd = %migration.crd_name(), retry_in = ?delay, "{error}");
                            failed.push(migration);
                        }
                    }
                    if failed.is_empty() {
                        return;
                    }
                    pending = failed;
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(RETRY_MAX);
                }
            };
            // Stopped midway by shutdown: the next leader makes the pass again.
            tokio::select! {
                () = shutdown.cancelled() => return Ok(()),
                () = migrate => {}
            }
            shutdown.cancelled().await;
            Ok(())
        })
    }
}

/// Runs every migration of `migrations` once, in order (`--migrate-storage-versions-and-exit`):
/// an error names every kind whose migration failed, after all were tried.
pub async fn run_once(
    client: &Client,
    migrations: &[StorageMigration],
    options: &Options,
    metrics: &Metrics,
) -> anyhow::Result<()> {
    if migrations.is_empty() {
        return Err(anyhow!(
            "there is nothing to migrate: this manager registers no kind for storage version migration (Manager::storage_migrations)"
        ));
    }
    let mut failures = Vec::new();
    for migration in migrations {
        let crd = migration.crd_name();
        match migration.run(client, options, metrics).await {
            Ok(Outcome::UpToDate { storage_version }) => {
                tracing::info!(%crd, %storage_version, "already stored in the storage version alone");
            }
            Ok(Outcome::Migrated { .. }) => {}
            Err(error) => {
                tracing::error!(%crd, "{error}");
                failures.push(crd);
            }
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(anyhow!(
            "the storage version migration of {} failed (see the errors above)",
            failures.join(", ")
        ))
    }
}
