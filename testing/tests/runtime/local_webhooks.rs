//! The webhooks of `make run` (`--webhook-url`): registered with the API server while the
//! manager serves them, removed when it stops.

use k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use operator_rs_runtime::manager::Flags;
use operator_rs_runtime::manager::local_webhooks::start;
use operator_rs_runtime::manager::runnables::Task;
use operator_rs_runtime::metrics::Metrics;
use operator_rs_runtime::webhook::{
    AdmissionRequest, Denial, FailurePolicy, Operation, Registration, Validator, Warnings, Webhook,
};
use operator_rs_testing::fake::FakeApiServer;
use tokio_util::sync::CancellationToken;

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
    let shutdown = CancellationToken::new();
    let tasks = start(
        &url,
        &flags,
        &fake.client(),
        webhooks(),
        &Metrics::new(),
        &shutdown,
    )
    .await
    .unwrap();
    let names: Vec<&str> = tasks.iter().map(|task| task.name.as_str()).collect();
    assert_eq!(names, ["webhook server", "webhook registrations"]);
    let [server, registrations] = <[Task; 2]>::try_from(tasks).ok().unwrap();
    let removal = tokio::spawn(registrations.run);
    // On a thread of its own, as the manager is another process than the API server (the
    // fake blocks the thread of a request while it calls a webhook).
    let serving = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(server.run)
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
    removal.await.unwrap().unwrap();
    assert!(
        fake.get::<ValidatingWebhookConfiguration>(None, configuration)
            .is_none()
    );
    // The server stops once the registration is gone.
    serving.join().unwrap().unwrap();
}
