//! The webhook server as runnables of every replica, leader or not, in its three modes:
//! certificates from files (cert-manager's, `--webhook-cert-path`), the manager's own
//! (`--webhook-certs=self-signed`: the certificate manager runs beside the server), or a
//! certificate for `--webhook-url` under `make run` ([`super::local_webhooks`]).

#[cfg(feature = "webhooks")]
use anyhow::Context as _;
#[cfg(feature = "webhooks")]
use futures::FutureExt as _;

use super::Shared;
use super::flags::Flags;
use super::runnables::Task;
#[cfg(feature = "webhooks")]
use super::{flags::WebhookCerts, runnables::Group, settings};
use crate::webhook::Webhook;

/// The runnables that serve `webhooks` as the flags say: none without webhooks to serve (or with
/// `ENABLE_WEBHOOKS=false`). A manager built without the `webhooks` feature has no webhook
/// server: it serves none (and refuses to start with webhooks to serve, see `super::features`),
/// so that a project without webhooks links none of the server's code.
#[cfg(not(feature = "webhooks"))]
#[allow(clippy::unused_async)] // The same signature with and without the feature.
pub async fn tasks(_: &Flags, _: &Shared, _: Vec<Webhook>) -> anyhow::Result<Vec<Task>> {
    Ok(Vec::new())
}

/// The runnables that serve `webhooks` as the flags say: none without webhooks to serve (or with
/// `ENABLE_WEBHOOKS=false`).
#[cfg(feature = "webhooks")]
pub async fn tasks(
    flags: &Flags,
    shared: &Shared,
    webhooks: Vec<Webhook>,
) -> anyhow::Result<Vec<Task>> {
    match (&flags.webhook_url, flags.webhook_certs) {
        (Some(url), _) => {
            let (client, metrics, shutdown) = (&shared.client, &shared.metrics, &shared.shutdown);
            super::local_webhooks::start(url, flags, client, webhooks, metrics, shutdown).await
        }
        (None, WebhookCerts::SelfSigned) => self_signed(flags, shared, webhooks).await,
        _ => {
            let config = settings::webhook_config(flags);
            let (metrics, shutdown) = (&shared.metrics, shared.shutdown.clone());
            let started = crate::webhook::start(&config, webhooks, metrics, shutdown);
            let server = started.context("cannot start the webhook server")?;
            Ok(server.into_iter().map(server_task).collect())
        }
    }
}

/// The webhook server of the self-signed mode, when there are webhooks to serve, and its
/// certificate manager: makes or reads the certificates first (so the first handshake has one,
/// and a missing RBAC rule fails the startup with its message), then keeps them while the server
/// serves with them.
#[cfg(feature = "webhooks")]
async fn self_signed(
    flags: &Flags,
    shared: &Shared,
    webhooks: Vec<Webhook>,
) -> anyhow::Result<Vec<Task>> {
    if !crate::webhook::will_serve(&webhooks) {
        return Ok(Vec::new());
    }
    let settings = settings::self_signed_settings(flags)?;
    let certificates =
        crate::webhook::certs::SelfSignedCertificates::new(shared.client.clone(), settings)?;
    certificates
        .reconcile()
        .await
        .context("cannot set up the self-signed webhook certificates")?;
    let resolver = certificates.resolver();
    let manager = certificates
        .run(shared.shutdown.clone())
        .map(|()| Ok(()))
        .boxed();
    let address = std::net::SocketAddr::from(([0, 0, 0, 0], flags.webhook_port));
    let server = crate::webhook::start_with_resolver(
        address,
        flags.enable_http2,
        resolver,
        webhooks,
        &shared.metrics,
        shared.shutdown.clone(),
    )
    .context("cannot start the webhook server")?;
    Ok(vec![
        Task::new("webhook certificates", Group::Webhooks, manager),
        server_task(server),
    ])
}

/// The webhook server's runnable.
#[cfg(feature = "webhooks")]
fn server_task(
    server: impl Future<Output = Result<(), crate::webhook::ServerError>> + Send + 'static,
) -> Task {
    let run = server.map(|result| result.map_err(anyhow::Error::from));
    Task::new("webhook server", Group::Webhooks, run.boxed())
}
