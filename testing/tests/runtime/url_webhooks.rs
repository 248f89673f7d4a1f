//! Webhooks registered by URL: the fake calls them over HTTPS, trusting the `caBundle`, as the
//! API server does, with their failure policy; and the temporary registrations of a manager run
//! with `--webhook-url` (`webhook::local`), served from another thread as from another process.

use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceConversion, CustomResourceDefinition, ServiceReference, WebhookClientConfig,
    WebhookConversion,
};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::core::admission::AdmissionRequest;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::versions::{conversion, crd, v2};
use crate::*;
use operator_rs_runtime::webhook::certs::{EphemeralCertificates, ServingCertResolver};
use operator_rs_runtime::webhook::local::{
    CONVERSION_BEFORE, LocalWebhooks, Names, WebhookUrl, configurations,
};
use operator_rs_runtime::webhook::{
    Defaulter, Denial, FailurePolicy, Operation, Registration, Validator, Warnings, Webhook,
    WebhookServer,
};
use operator_rs_testing::fake::{FakeApiServer, Verb};

const PROJECT_ID: &str = "87a7d51f.example.com";

/// Sets `size` to 1 when it is 0.
struct SizeDefaulter;

impl Defaulter<Widget> for SizeDefaulter {
    fn apply_defaults(
        &self,
        widget: &mut Widget,
        _: &AdmissionRequest<Widget>,
    ) -> Result<(), Denial> {
        if widget.spec.size == 0 {
            widget.spec.size = 1;
        }
        Ok(())
    }
}

/// Refuses a `size` above 3.
struct SizeValidator;

impl SizeValidator {
    fn check(widget: &Widget) -> Result<Warnings, Denial> {
        if widget.spec.size > 3 {
            return Err(Denial::new("spec.size: must be at most 3"));
        }
        Ok(Warnings::new())
    }
}

impl Validator<Widget> for SizeValidator {
    fn validate_create(
        &self,
        widget: &Widget,
        _: &AdmissionRequest<Widget>,
    ) -> Result<Warnings, Denial> {
        Self::check(widget)
    }

    fn validate_update(
        &self,
        _: &Widget,
        widget: &Widget,
        _: &AdmissionRequest<Widget>,
    ) -> Result<Warnings, Denial> {
        Self::check(widget)
    }

    fn validate_delete(
        &self,
        _: &Widget,
        _: &AdmissionRequest<Widget>,
    ) -> Result<Warnings, Denial> {
        Ok(Warnings::new())
    }
}

fn registration(name: &'static str, path: &'static str, policy: FailurePolicy) -> Registration {
    Registration {
        name,
        path,
        operations: &[Operation::Create, Operation::Update],
        failure_policy: policy,
    }
}

/// A project's webhooks for Widget: defaulting, validation and conversion.
fn webhooks_with(policy: FailurePolicy) -> Vec<Webhook> {
    vec![
        Webhook::defaulting(
            registration("mwidget-v1.kb.io", "/mutate-example-com-v1-widget", policy),
            SizeDefaulter,
        ),
        Webhook::validating(
            registration(
                "vwidget-v1.kb.io",
                "/validate-example-com-v1-widget",
                policy,
            ),
            SizeValidator,
        ),
        conversion(),
    ]
}

fn webhooks() -> Vec<Webhook> {
    webhooks_with(FailurePolicy::Fail)
}

/// A port nobody listens on now, for a server bound right after (the URL must name its port
/// before the server exists, as `--webhook-url` names `--webhook-port` before it is bound).
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Serves `webhooks` on `port` with `resolver` on a thread and runtime of their own, as a
/// manager in another process would: the fake blocks the thread of the request that calls a
/// webhook until it answers. Serves until the token is cancelled.
fn serve_elsewhere(
    port: u16,
    resolver: Arc<ServingCertResolver>,
    webhooks: Vec<Webhook>,
) -> CancellationToken {
    let address = SocketAddr::from(([127, 0, 0, 1], port));
    let server = WebhookServer::bind_with_resolver(address, false, webhooks, resolver).unwrap();
    let stop = CancellationToken::new();
    let token = stop.clone();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(server.serve(token))
    });
    stop
}

fn url(port: u16) -> WebhookUrl {
    format!("https://127.0.0.1:{port}").parse().unwrap()
}

/// The message of an API error.
fn message<T: std::fmt::Debug>(result: Result<T, kube::Error>) -> (u16, String) {
    match result {
        Err(kube::Error::Api(status)) => (status.code, status.message.clone()),
        other => panic!("expected an API error, got {other:?}"),
    }
}

/// Stores the configurations of `webhooks` at the URL of `port`, trusting `ca_bundle`.
fn put_configurations(fake: &FakeApiServer, webhooks: &[Webhook], port: u16, ca_bundle: &str) {
    let manifests = configurations(webhooks, &url(port), ca_bundle, &Names::new(PROJECT_ID));
    fake.put(&manifests.mutating.unwrap());
    fake.put(&manifests.validating.unwrap());
}

#[tokio::test]
async fn admission_webhooks_at_a_url_are_called_over_tls_trusting_the_ca_bundle() {
    let fake = FakeApiServer::new();
    fake.register_crd(&crd("v1"));
    let port = free_port();
    let certificates = EphemeralCertificates::for_host("127.0.0.1").unwrap();
    let stop = serve_elsewhere(port, certificates.resolver(), webhooks());
    put_configurations(&fake, &webhooks(), port, certificates.ca_bundle());
    let widgets = Api::<Widget>::namespaced(fake.client(), "default");

    // Defaulted by the mutating webhook, over HTTPS.
    let created = widgets
        .create(&PostParams::default(), &widget("a", 0))
        .await
        .unwrap();
    assert_eq!(created.spec.size, 1);
    // Refused by the validating one, in the API server's words.
    let patch = json!({ "spec": { "size": 5 } });
    let denied = widgets
        .patch("a", &PatchParams::default(), &Patch::Merge(&patch))
        .await;
    assert_eq!(
        message(denied),
        (
            403,
            "admission webhook \"vwidget-v1.kb.io\" denied the request: spec.size: must be at most 3"
                .to_owned()
        )
    );
    assert_eq!(
        fake.get::<Widget>(Some("default"), "a").unwrap().spec.size,
        1
    );
    stop.cancel();
}

#[tokio::test]
async fn a_webhook_the_ca_bundle_does_not_vouch_for_fails_as_its_failure_policy_says() {
    let fake = FakeApiServer::new();
    fake.register_crd(&crd("v1"));
    let port = free_port();
    let served = EphemeralCertificates::for_host("127.0.0.1").unwrap();
    let stop = serve_elsewhere(port, served.resolver(), webhooks());
    // The configurations trust another CA.
    let other = EphemeralCertificates::for_host("127.0.0.1").unwrap();
    put_configurations(&fake, &webhooks(), port, other.ca_bundle());
    let widgets = Api::<Widget>::namespaced(fake.client(), "default");

    let (code, text) = message(
        widgets
            .create(&PostParams::default(), &widget("a", 0))
            .await,
    );
    assert_eq!(code, 500);
    assert!(
        text.starts_with(&format!(
            "Internal error occurred: failed calling webhook \"mwidget-v1.kb.io\": failed to call webhook: Post \"https://127.0.0.1:{port}/mutate-example-com-v1-widget?timeout=10s\": tls: failed to verify certificate"
        )),
        "{text}"
    );
    assert!(fake.get::<Widget>(Some("default"), "a").is_none());

    // `Ignore`: the request goes through, neither defaulted nor validated.
    put_configurations(
        &fake,
        &webhooks_with(FailurePolicy::Ignore),
        port,
        other.ca_bundle(),
    );
    let created = widgets
        .create(&PostParams::default(), &widget("a", 7))
        .await
        .unwrap();
    assert_eq!(created.spec.size, 7);
    stop.cancel();
}

/// The CRD's conversion webhook at `url`, trusting `ca_bundle`.
fn converting_at(storage: &str, url: &str, ca_bundle: &str) -> CustomResourceDefinition {
    let mut crd = crd(storage);
    crd.spec.conversion = Some(CustomResourceConversion {
        strategy: "Webhook".to_owned(),
        webhook: Some(WebhookConversion {
            client_config: Some(WebhookClientConfig {
                url: Some(url.to_owned()),
                ca_bundle: Some(k8s_openapi::ByteString(ca_bundle.as_bytes().to_vec())),
                service: None,
            }),
            conversion_review_versions: vec!["v1".to_owned()],
        }),
    });
    crd
}

#[tokio::test]
async fn a_conversion_webhook_at_a_url_converts_over_tls() {
    let fake = FakeApiServer::new();
    let port = free_port();
    let certificates = EphemeralCertificates::for_host("127.0.0.1").unwrap();
    let stop = serve_elsewhere(port, certificates.resolver(), vec![conversion()]);
    let convert = format!("https://127.0.0.1:{port}/convert");
    // No converter registered in-process: only the URL can convert.
    fake.register_crd(&converting_at("v1", &convert, certificates.ca_bundle()));
    let v1 = Api::<Widget>::namespaced(fake.client(), "default");
    let v2 = Api::<v2::Widget>::namespaced(fake.client(), "default");

    v1.create(&PostParams::default(), &widget("a", 3))
        .await
        .unwrap();
    assert_eq!(v2.get("a").await.unwrap().spec.replicas, 3);
    let patch = json!({ "spec": { "replicas": 2 } });
    v2.patch("a", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    assert_eq!(v1.get("a").await.unwrap().spec.size, 2);

    // A CA bundle that does not vouch for the server: every conversion fails, as the API
    // server's.
    let other = EphemeralCertificates::for_host("127.0.0.1").unwrap();
    fake.register_crd(&converting_at("v1", &convert, other.ca_bundle()));
    let (code, text) = message(v2.get("a").await);
    assert_eq!(code, 500);
    assert!(
        text.starts_with("conversion webhook for example.com/v1, Kind=Widget failed: Post \""),
        "{text}"
    );
    assert!(text.contains("tls: failed to verify certificate"), "{text}");
    stop.cancel();
}

/// The Widget CRD as `make install` installs it: converted by the webhook behind the Service.
fn installed_crd() -> CustomResourceDefinition {
    let mut crd = crd("v1");
    crd.spec.conversion = Some(CustomResourceConversion {
        strategy: "Webhook".to_owned(),
        webhook: Some(WebhookConversion {
            client_config: Some(WebhookClientConfig {
                service: Some(ServiceReference {
                    name: "webhook-service".to_owned(),
                    namespace: "system".to_owned(),
                    path: Some("/convert".to_owned()),
                    port: None,
                }),
                ..WebhookClientConfig::default()
            }),
            conversion_review_versions: vec!["v1".to_owned()],
        }),
    });
    crd
}

fn stored_crd(fake: &FakeApiServer) -> CustomResourceDefinition {
    fake.get::<CustomResourceDefinition>(None, "widgets.example.com")
        .unwrap()
}

/// `make run` with `--webhook-url`: the registrations call the manager at the URL with its CA,
/// the three webhooks answer through the fake, and after removal nothing is left and the CRD
/// converts as before.
#[tokio::test]
async fn a_manager_outside_the_cluster_registers_serves_and_removes_its_webhooks() {
    let fake = FakeApiServer::new();
    fake.register_crd(&installed_crd());
    let installed = stored_crd(&fake).spec.conversion;
    let port = free_port();
    let local = LocalWebhooks::new(url(port), PROJECT_ID, &webhooks()).unwrap();
    let stop = serve_elsewhere(port, local.resolver(), webhooks());
    let registration = local.register(&fake.client()).await.unwrap();

    let names = local.names();
    let mutating = fake
        .get::<MutatingWebhookConfiguration>(None, &names.mutating)
        .unwrap();
    let validating = fake
        .get::<ValidatingWebhookConfiguration>(None, &names.validating)
        .unwrap();
    let ca = k8s_openapi::ByteString(local.ca_bundle().as_bytes().to_vec());
    let mutating = &mutating.webhooks.unwrap()[0].client_config;
    assert_eq!(
        mutating.url.as_deref(),
        Some(&*format!(
            "https://127.0.0.1:{port}/mutate-example-com-v1-widget"
        ))
    );
    assert_eq!(mutating.ca_bundle.as_ref(), Some(&ca));
    assert_eq!(mutating.service, None);
    let validating = &validating.webhooks.unwrap()[0].client_config;
    assert_eq!(validating.ca_bundle.as_ref(), Some(&ca));
    let crd = stored_crd(&fake);
    let client_config = crd
        .spec
        .conversion
        .as_ref()
        .unwrap()
        .webhook
        .as_ref()
        .unwrap();
    let client_config = client_config.client_config.as_ref().unwrap();
    assert_eq!(
        client_config.url.as_deref(),
        Some(&*format!("https://127.0.0.1:{port}/convert"))
    );
    assert_eq!(client_config.ca_bundle.as_ref(), Some(&ca));
    assert_eq!(client_config.service, None);

    // The three webhooks answer over TLS.
    let v1 = Api::<Widget>::namespaced(fake.client(), "default");
    let v2 = Api::<v2::Widget>::namespaced(fake.client(), "default");
    let created = v1
        .create(&PostParams::default(), &widget("a", 0))
        .await
        .unwrap();
    assert_eq!(created.spec.size, 1, "defaulted");
    let patch = json!({ "spec": { "size": 5 } });
    let (code, text) = message(
        v1.patch("a", &PatchParams::default(), &Patch::Merge(&patch))
            .await,
    );
    assert_eq!(code, 403);
    assert!(text.contains("spec.size: must be at most 3"), "{text}");
    let patch = json!({ "spec": { "replicas": 2 } });
    let converted = v2
        .patch("a", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    assert_eq!(converted.spec.replicas, 2);
    assert_eq!(v1.get("a").await.unwrap().spec.size, 2, "round-tripped");

    registration.remove().await.unwrap();
    stop.cancel();
    assert!(fake.list::<MutatingWebhookConfiguration>().is_empty());
    assert!(fake.list::<ValidatingWebhookConfiguration>().is_empty());
    let crd = stored_crd(&fake);
    assert_eq!(crd.spec.conversion, installed);
    let annotations = crd.metadata.annotations.unwrap_or_default();
    assert!(
        !annotations.contains_key(CONVERSION_BEFORE),
        "{annotations:?}"
    );
}

/// A run killed before it could remove its registrations leaves them pointing at a dead URL;
/// the next run replaces them, and on exit restores the CRD as it was before the first run.
#[tokio::test]
async fn a_run_after_a_killed_one_replaces_what_it_left() {
    let fake = FakeApiServer::new();
    fake.register_crd(&installed_crd());
    let installed = stored_crd(&fake).spec.conversion;
    // The killed run: registered, never served, never removed.
    let killed = LocalWebhooks::new(url(free_port()), PROJECT_ID, &webhooks()).unwrap();
    drop(killed.register(&fake.client()).await.unwrap());
    // Of another project: not this project's to touch.
    let other = LocalWebhooks::new(url(free_port()), "0badc0de.example.org", &webhooks()).unwrap();
    let other_names = other.names().clone();
    fake.put(&other.configurations().validating.clone().unwrap());

    let port = free_port();
    let local = LocalWebhooks::new(url(port), PROJECT_ID, &webhooks()).unwrap();
    assert_eq!(local.names(), killed.names(), "the same names on every run");
    let stop = serve_elsewhere(port, local.resolver(), webhooks());
    let registration = local.register(&fake.client()).await.unwrap();

    // Only this run's webhooks are called: the killed run's URL would fail every request.
    let v1 = Api::<Widget>::namespaced(fake.client(), "default");
    let created = v1.create(&PostParams::default(), &widget("a", 0)).await;
    // The other project's validating configuration is still there, and its URL dead: it fails
    // the request (failurePolicy: Fail), so it goes before the assertion on this run's.
    let (code, text) = message(created);
    assert_eq!(code, 500);
    assert!(text.contains("\"vwidget-v1.kb.io\""), "{text}");
    let other_url = other.url().to_string();
    assert!(text.contains(&other_url), "{text}");
    fake.put(&ValidatingWebhookConfiguration {
        metadata: kube::api::ObjectMeta {
            name: Some(other_names.validating.clone()),
            ..Default::default()
        },
        webhooks: None,
    });
    let created = v1
        .create(&PostParams::default(), &widget("a", 0))
        .await
        .unwrap();
    assert_eq!(created.spec.size, 1);
    let v2 = Api::<v2::Widget>::namespaced(fake.client(), "default");
    assert_eq!(v2.get("a").await.unwrap().spec.replicas, 1);

    registration.remove().await.unwrap();
    stop.cancel();
    let left: Vec<_> = fake
        .list::<ValidatingWebhookConfiguration>()
        .into_iter()
        .filter_map(|configuration| configuration.metadata.name)
        .collect();
    assert_eq!(left, [other_names.validating]);
    assert!(fake.list::<MutatingWebhookConfiguration>().is_empty());
    assert_eq!(stored_crd(&fake).spec.conversion, installed);
}

/// A registration that fails halfway (here, a user who may not patch CRDs) removes what it
/// registered before the error reaches the manager, which then exits.
#[tokio::test]
async fn a_registration_that_fails_removes_what_it_registered() {
    use operator_rs_runtime::controller::rule;
    use operator_rs_testing::fake::Identity;

    let fake = FakeApiServer::new();
    fake.register_crd(&installed_crd());
    let installed = stored_crd(&fake);
    let configurations = [
        "mutatingwebhookconfigurations",
        "validatingwebhookconfigurations",
    ];
    let user = Identity::service_account("default", "developer").with_cluster_rules(vec![
        rule(
            &["admissionregistration.k8s.io"],
            &configurations,
            &["patch", "delete"],
        ),
        rule(
            &["apiextensions.k8s.io"],
            &["customresourcedefinitions"],
            &["get"],
        ),
    ]);
    let local = LocalWebhooks::new(url(free_port()), PROJECT_ID, &webhooks()).unwrap();

    let error = local.register(&fake.client_as(user)).await.err().unwrap();
    assert_eq!(
        error.to_string(),
        "cannot patch CustomResourceDefinition/widgets.example.com"
    );
    // Both configurations were applied, then deleted.
    let done = |verb: Verb| {
        let requests = fake.requests().into_iter();
        let done = requests.filter(|r| r.verb == verb && r.status.is_success());
        done.filter(|r| configurations.contains(&r.resource.as_str()))
            .count()
    };
    assert_eq!((done(Verb::Patch), done(Verb::Delete)), (2, 2));
    assert!(fake.list::<MutatingWebhookConfiguration>().is_empty());
    assert!(fake.list::<ValidatingWebhookConfiguration>().is_empty());
    assert_eq!(
        stored_crd(&fake).metadata.resource_version,
        installed.metadata.resource_version
    );
    assert_eq!(fake.denials().len(), 1, "only the CRD's patch was refused");
}
