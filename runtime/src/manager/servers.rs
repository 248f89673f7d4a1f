//! The manager's HTTP servers as runnables: the health probes and the metrics server, each bound
//! at startup (a port in use fails the startup) and served until shutdown.

use anyhow::Context as _;
use futures::FutureExt as _;

use super::health;
use super::runnables::{Group, Task};
use super::settings::Settings;
use super::{Flags, Shared};
use crate::metrics;

/// The servers that the flags turn on: `/healthz` and `/readyz` on
/// `--health-probe-bind-address`, `/metrics` on `--metrics-bind-address` (`0` turns either off).
pub async fn tasks(
    flags: &Flags,
    settings: &Settings,
    shared: &Shared,
) -> anyhow::Result<Vec<Task>> {
    let mut tasks = Vec::new();
    if let Some(address) = flags.health_probe_bind_address.socket_addr() {
        let listener = health::bind(address)
            .await
            .with_context(|| format!("cannot bind the health probe address {address}"))?;
        tracing::info!(%address, "serving health probes on /healthz and /readyz");
        let serve = health::serve(listener, shared.readiness.clone(), shared.shutdown.clone());
        let run = serve.map(|result| result.map_err(anyhow::Error::from));
        tasks.push(Task::new(
            "health probe server",
            Group::Servers,
            run.boxed(),
        ));
    }
    if let Some(address) = flags.metrics_bind_address.socket_addr() {
        let listener = metrics::server::bind(address)
            .await
            .with_context(|| format!("cannot bind the metrics address {address}"))?;
        let options = settings.metrics.clone();
        let authorizer = options
            .secure
            .then(|| metrics::Authorizer::new(shared.client.clone()));
        let router = metrics::server::router(shared.metrics.clone(), authorizer);
        let tls = settings.metrics_tls.clone();
        let scheme = if tls.is_some() { "https" } else { "http" };
        tracing::info!(%address, scheme, authorized = options.secure, "serving metrics on /metrics");
        let serve = metrics::server::serve(listener, router, options, tls, shared.shutdown.clone());
        let run = serve.map(|result| result.map_err(anyhow::Error::from));
        tasks.push(Task::new("metrics server", Group::Servers, run.boxed()));
    }
    Ok(tasks)
}
