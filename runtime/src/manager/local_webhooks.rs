//! `--webhook-url`: the webhook server of a manager that runs outside the cluster, and the
//! lifetime of its temporary registrations ([`crate::webhook::local`]).

use anyhow::Context as _;
use futures::FutureExt as _;
use futures::future::BoxFuture;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::{Flags, TaskResult};
use crate::metrics::Metrics;
use crate::webhook::local::{LocalWebhooks, WebhookUrl};
use crate::webhook::{ServerError, Webhook};

/// Listens on `--webhook-port` with a certificate for `url`'s host, then registers the
/// temporary configurations and conversion webhooks. Their removal is a task of `tasks` that
/// runs when shutdown starts (after a signal, or a task's failure), and the webhook server
/// stops only once it is done: until then the API server may still call the webhooks.
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
    tasks: &mut JoinSet<TaskResult>,
) -> anyhow::Result<Option<BoxFuture<'static, Result<(), ServerError>>>> {
    if !crate::webhook::will_serve(&webhooks) {
        return Ok(None);
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
    tasks.spawn(async move {
        shutdown.cancelled().await;
        let removed = registration
            .remove()
            .await
            .context("cannot remove the temporary webhook registrations");
        server_stop.cancel();
        ("webhook registrations".to_owned(), removed)
    });
    Ok(Some(server.boxed()))
}
