//! `--webhook-url`: the webhook server of a manager that runs outside the cluster, and the
//! lifetime of its temporary registrations ([`crate::webhook::local`]), as runnables.

use anyhow::Context as _;
use futures::FutureExt as _;
use tokio_util::sync::CancellationToken;

use super::Flags;
use super::runnables::{Group, Task};
use crate::metrics::Metrics;
use crate::webhook::Webhook;
use crate::webhook::local::{LocalWebhooks, WebhookUrl};

/// Listens on `--webhook-port` with a certificate for `url`'s host, then registers the
/// temporary configurations and conversion webhooks. Returns the webhook server and the removal
/// of the registrations, which runs when shutdown starts (after a signal, or a task's failure):
/// the webhook server stops only once it is done, since until then the API server may still call
/// the webhooks. No runnable without webhooks to serve.
///
/// Listening comes first so that a port in use fails before anything is registered; nothing
/// after the registration can fail the startup, so its removal always gets to run (unless a
/// second signal ends the process at once: the next run replaces what is left).
pub async fn start(
    url: &WebhookUrl,
    flags: &Flags,
    client: &kube::Client,
    webhooks: Vec<Webhook>,
    metrics: &Metrics,
    shutdown: &CancellationToken,
) -> anyhow::Result<Vec<Task>> {
    if !crate::webhook::will_serve(&webhooks) {
        return Ok(Vec::new());
    }
    let local = LocalWebhooks::new(url.clone(), &flags.leader_election_id, &webhooks)?;
    let server_stop = CancellationToken::new();
    let address = std::net::SocketAddr::from(([0, 0, 0, 0], flags.webhook_port));
    let server = crate::webhook::start_with_resolver(
        address,
        flags.enable_http2,
        local.resolver(),
        webhooks,
        metrics,
        server_stop.clone(),
    )
    .context("cannot start the webhook server")?;
    let registration = local
        .register(client)
        .await
        .context("cannot register the webhooks at --webhook-url")?;
    tracing::info!(
        url = %local.url(),
        port = flags.webhook_port,
        "serving the webhooks at --webhook-url; their temporary registrations are removed on exit"
    );
    let shutdown = shutdown.clone();
    let removal = async move {
        shutdown.cancelled().await;
        let removed = registration
            .remove()
            .await
            .context("cannot remove the temporary webhook registrations");
        server_stop.cancel();
        removed
    };
    let server = server.map(|result| result.map_err(anyhow::Error::from));
    Ok(vec![
        Task::new("webhook server", Group::Webhooks, server.boxed()),
        Task::new("webhook registrations", Group::Webhooks, removal.boxed()),
    ])
}
