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
pub(super) async fn start(
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

#[cfg(test)]
mod tests {
    use k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{Api, PostParams};

    use super::*;
    use crate::testing::fake::FakeApiServer;
    use crate::webhook::{
        AdmissionRequest, Denial, FailurePolicy, Operation, Registration, Validator, Warnings,
    };

    /// Refuses every ConfigMap.
    struct DenyAll;

    impl Validator<ConfigMap> for DenyAll {
        fn validate_create(
            &self,
            _: &ConfigMap,
            _: &AdmissionRequest<ConfigMap>,
        ) -> Result<Warnings, Denial> {
            Err(Denial::new("no ConfigMaps today"))
        }

        fn validate_update(
            &self,
            _: &ConfigMap,
            _: &ConfigMap,
            _: &AdmissionRequest<ConfigMap>,
        ) -> Result<Warnings, Denial> {
            Err(Denial::new("no ConfigMaps today"))
        }

        fn validate_delete(
            &self,
            _: &ConfigMap,
            _: &AdmissionRequest<ConfigMap>,
        ) -> Result<Warnings, Denial> {
            Ok(Warnings::new())
        }
    }

    fn webhooks() -> Vec<Webhook> {
        let registration = Registration {
            name: "vconfigmap-v1.kb.io",
            path: "/validate--v1-configmap",
            operations: &[Operation::Create],
            failure_policy: FailurePolicy::Fail,
        };
        vec![Webhook::validating(registration, DenyAll)]
    }

    /// The manager registers at startup, serves while registered, and on shutdown removes the
    /// registration before its webhook server stops.
    #[tokio::test]
    async fn registered_while_serving_and_removed_on_shutdown() {
        let fake = FakeApiServer::new();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let flags = Flags::try_parse_with(
            "87a7d51f.example.com",
            [
                "manager".to_owned(),
                format!("--webhook-url=https://127.0.0.1:{port}"),
                format!("--webhook-port={port}"),
            ],
        )
        .unwrap();
        let url = flags.webhook_url.clone().unwrap();
        let (shutdown, mut tasks) = (CancellationToken::new(), JoinSet::new());
        let server = start(
            &url,
            &flags,
            &fake.client(),
            webhooks(),
            &Metrics::new(),
            &shutdown,
            &mut tasks,
        )
        .await
        .unwrap()
        .expect("there are webhooks to serve");
        // On a thread of its own, as the manager is another process than the API server (the
        // fake blocks the thread of a request while it calls a webhook).
        let serving = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(server)
        });

        let configuration = "make-run-validating.87a7d51f.example.com";
        assert!(
            fake.get::<ValidatingWebhookConfiguration>(None, configuration)
                .is_some()
        );
        let config_maps = Api::<ConfigMap>::namespaced(fake.client(), "default");
        let config_map = ConfigMap {
            metadata: kube::api::ObjectMeta {
                name: Some("settings".to_owned()),
                ..Default::default()
            },
            ..ConfigMap::default()
        };
        let denied = config_maps
            .create(&PostParams::default(), &config_map)
            .await;
        match denied {
            Err(kube::Error::Api(status)) => {
                assert_eq!(status.code, 403);
                assert!(status.message.contains("no ConfigMaps today"), "{status:?}");
            }
            other => panic!("expected a denial, got {other:?}"),
        }
        assert!(!serving.is_finished());

        shutdown.cancel();
        let (task, removed) = tasks.join_next().await.unwrap().unwrap();
        assert_eq!(task, "webhook registrations");
        removed.unwrap();
        assert!(
            fake.get::<ValidatingWebhookConfiguration>(None, configuration)
                .is_none()
        );
        // The server stops once the registration is gone.
        serving.join().unwrap().unwrap();
    }
}
