//! The self-signed webhook certificates (`webhook::certs`) against the fake API server, as the
//! manager's service account with exactly the rules of [`rbac_rules`]: create, reuse after a
//! restart, rotation of the serving certificate and of the CA, replicas racing to write, the
//! `caBundle`s, and TLS handshakes with a real rustls client across rotations.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::core::admission::{AdmissionRequest, Operation};
use operator_rs_runtime::webhook::certs::*;
use operator_rs_runtime::webhook::{
    Defaulter, Denial, FailurePolicy, Registration, Webhook, WebhookServer,
};
use operator_rs_testing::fake::{FakeApiServer, Identity, Verb};
use operator_rs_testing::webhook::review;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::ServerCertVerifier as _;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const HOUR: Duration = Duration::from_secs(60 * 60);
const NAMESPACE: &str = "system";
const SECRET: &str = "webhook-server-self-signed-cert";
const SERVICE: &str = "webhook-service";
const MUTATING: &str = "mutating-webhook-configuration";
const VALIDATING: &str = "validating-webhook-configuration";
const CRD: &str = "widgets.example.com";

/// A clock that moves only when told.
#[derive(Clone, Debug)]
struct ManualClock(Arc<Mutex<SystemTime>>);

/// The TLS client of the tests checks certificates at the clock's time.
impl rustls::time_provider::TimeProvider for ManualClock {
    fn current_time(&self) -> Option<rustls::pki_types::UnixTime> {
        let since = self.now().duration_since(std::time::UNIX_EPOCH).ok()?;
        Some(rustls::pki_types::UnixTime::since_unix_epoch(since))
    }
}

impl ManualClock {
    fn new() -> Self {
        Self(Arc::new(Mutex::new(SystemTime::now())))
    }

    fn advance(&self, by: Duration) {
        *self.0.lock().unwrap() += by;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> SystemTime {
        *self.0.lock().unwrap()
    }
}

/// Short lives, so that the steps of a rotation are a few hours apart: a CA of 100 hours,
/// replaced 40 hours before it expires; serving certificates of 30 hours, renewed 10 hours
/// before.
fn settings() -> Settings {
    let mut settings = Settings::new(NAMESPACE, SECRET, SERVICE);
    settings.targets = Targets {
        mutating: vec![MUTATING.to_owned()],
        validating: vec![VALIDATING.to_owned()],
        crds: vec![CRD.to_owned()],
    };
    settings.ca_validity = 100 * HOUR;
    settings.ca_rotation_window = 40 * HOUR;
    settings.cert_validity = 30 * HOUR;
    settings.cert_rotation_window = 10 * HOUR;
    settings
}

/// The manager's service account with exactly the rules of [`rbac_rules`].
fn identity(settings: &Settings) -> Identity {
    let rbac = rbac_rules(settings);
    Identity::service_account(NAMESPACE, "controller-manager")
        .with_namespace_rules(&rbac.namespace, rbac.namespaced)
        .with_cluster_rules(rbac.cluster)
}

/// A replica of the manager: its own client of `fake`, on `clock`.
fn replica(fake: &FakeApiServer, clock: &ManualClock) -> SelfSignedCertificates {
    let client = fake.client_as(identity(&settings()));
    SelfSignedCertificates::new(client, settings())
        .unwrap()
        .with_clock(Arc::new(clock.clone()))
}

/// A fake API server with the project's webhook configurations (two webhooks each) and its CRD
/// with a webhook conversion, all without a `caBundle`, as `make deploy` applies them.
fn cluster() -> FakeApiServer {
    let fake = FakeApiServer::new();
    install_targets(&fake);
    fake
}

fn webhook(name: &str, path: &str) -> serde_json::Value {
    json!({
        "name": name,
        "admissionReviewVersions": ["v1"],
        "sideEffects": "None",
        "clientConfig": {"service": {"name": SERVICE, "namespace": NAMESPACE, "path": path}},
    })
}

fn install_targets(fake: &FakeApiServer) {
    let mutating: MutatingWebhookConfiguration = serde_json::from_value(json!({
        "metadata": {"name": MUTATING},
        "webhooks": [webhook("ma.kb.io", "/mutate-a"), webhook("mb.kb.io", "/mutate-b")],
    }))
    .unwrap();
    fake.put(&mutating);
    let validating: ValidatingWebhookConfiguration = serde_json::from_value(json!({
        "metadata": {"name": VALIDATING},
        "webhooks": [webhook("va.kb.io", "/validate-a"), webhook("vb.kb.io", "/validate-b")],
    }))
    .unwrap();
    fake.put(&validating);
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "metadata": {"name": CRD},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Widget", "plural": "widgets"},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object"}},
            }],
            "conversion": {
                "strategy": "Webhook",
                "webhook": {
                    "conversionReviewVersions": ["v1"],
                    "clientConfig": {"service": {"name": SERVICE, "namespace": NAMESPACE, "path": "/convert"}},
                },
            },
        },
    }))
    .unwrap();
    fake.put(&crd);
}

fn stored_secret(fake: &FakeApiServer) -> Secret {
    fake.get::<Secret>(Some(NAMESPACE), SECRET)
        .expect("the Secret exists")
}

fn stored(fake: &FakeApiServer) -> Material {
    material_of(&stored_secret(fake))
}

/// Every `caBundle` of the targets, as text (`None` where there is none).
fn bundles(fake: &FakeApiServer) -> Vec<Option<String>> {
    let text = |bytes: Option<&k8s_openapi::ByteString>| {
        bytes.map(|bytes| String::from_utf8(bytes.0.clone()).unwrap())
    };
    let mutating = fake
        .get::<MutatingWebhookConfiguration>(None, MUTATING)
        .unwrap();
    let validating = fake
        .get::<ValidatingWebhookConfiguration>(None, VALIDATING)
        .unwrap();
    let crd = fake.get::<CustomResourceDefinition>(None, CRD).unwrap();
    let conversion = crd.spec.conversion.unwrap().webhook.unwrap();
    let mut bundles: Vec<_> = mutating
        .webhooks
        .unwrap()
        .iter()
        .map(|w| text(w.client_config.ca_bundle.as_ref()))
        .collect();
    bundles.extend(
        validating
            .webhooks
            .unwrap()
            .iter()
            .map(|w| text(w.client_config.ca_bundle.as_ref())),
    );
    bundles.push(text(conversion.client_config.unwrap().ca_bundle.as_ref()));
    bundles
}

/// The certificates of a PEM bundle, in order.
fn certificates(pem: &str) -> Vec<CertificateDer<'static>> {
    CertificateDer::pem_slice_iter(pem.as_bytes())
        .map(Result::unwrap)
        .collect()
}

/// The crypto provider the manager's TLS uses (rustls with ring).
fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Whether a client that trusts exactly `roots` accepts `serving` for every one of `dns_names`
/// at time `at`, as the API server's TLS client checks a webhook's certificate.
fn accepted(
    serving: &CertificateDer<'_>,
    roots: &[CertificateDer<'static>],
    dns_names: &[String],
    at: SystemTime,
) -> bool {
    let mut store = RootCertStore::empty();
    for root in roots {
        store.add(root.clone()).unwrap();
    }
    let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(store), provider())
        .build()
        .unwrap();
    let since_epoch = at.duration_since(std::time::UNIX_EPOCH).unwrap();
    let now = UnixTime::since_unix_epoch(since_epoch);
    dns_names.iter().all(|name| {
        let name = ServerName::try_from(name.clone()).unwrap();
        verifier
            .verify_server_cert(serving, &[], &name, &[], now)
            .is_ok()
    })
}

/// Whether a client that trusts `bundle` accepts `material`'s serving certificate at `at`.
fn accepted_by(bundle: &str, material: &Material, at: SystemTime) -> bool {
    let leaf = &certificates(&material.cert)[0];
    accepted(leaf, &certificates(bundle), &settings().dns_names(), at)
}

/// A serving certificate for `dns_names` and its key (PEM), signed by the CA `ca` with its key
/// `ca_key` (PEM), valid until `not_after`: what another replica would write.
fn serving_signed_by(
    ca: &CertificateDer<'_>,
    ca_key: &str,
    dns_names: &[String],
    not_after: SystemTime,
) -> (String, String) {
    let issuer =
        rcgen::Issuer::from_ca_cert_der(ca, rcgen::KeyPair::from_pem(ca_key).unwrap()).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(dns_names.to_vec()).unwrap();
    params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
    let seconds = not_after.duration_since(std::time::UNIX_EPOCH).unwrap();
    params.not_after = time::OffsetDateTime::from_unix_timestamp(seconds.as_secs() as i64).unwrap();
    let cert = params.signed_by(&key, &issuer).unwrap();
    (cert.pem(), key.serialize_pem())
}

#[tokio::test]
async fn creates_the_certificates_then_reuses_them_after_a_restart() {
    let fake = cluster();
    let clock = ManualClock::new();
    let first = replica(&fake, &clock);
    let pass = first.reconcile().await.unwrap();
    assert!(pass.wrote);
    assert!(pass.reloaded);
    assert_eq!(pass.injected.len(), 3, "{:?}", pass.injected);

    let secret = stored_secret(&fake);
    assert_eq!(secret.type_.as_deref(), Some("kubernetes.io/tls"));
    let keys: Vec<&String> = secret.data.as_ref().unwrap().keys().collect();
    assert_eq!(keys, ["ca.crt", "ca.key", "tls.crt", "tls.key"]);
    let material = material_of(&secret);
    assert_eq!(first.resolver().current_pem(), Some(material.cert.clone()));
    assert!(accepted_by(&material.ca_bundle, &material, clock.now()));
    assert_eq!(bundles(&fake), vec![Some(material.ca_bundle.clone()); 5]);
    // Nothing is due for 20 hours: the next pass is the resync.
    assert_eq!(
        pass.next_pass,
        clock.now() + Settings::DEFAULT_RESYNC_INTERVAL
    );

    // A restart (a new replica) an hour later finds them good: nothing is written.
    clock.advance(HOUR);
    let version = fake.resource_version();
    let restarted = replica(&fake, &clock);
    let pass = restarted.reconcile().await.unwrap();
    assert!(!pass.wrote);
    assert!(pass.injected.is_empty());
    assert_eq!(fake.resource_version(), version, "nothing changed");
    assert_eq!(restarted.resolver().current_pem(), Some(material.cert));
    assert!(fake.denials().is_empty(), "{:?}", fake.denials());
}

#[tokio::test]
async fn renews_the_serving_certificate_in_its_rotation_window() {
    let fake = cluster();
    let clock = ManualClock::new();
    let certs = replica(&fake, &clock);
    certs.reconcile().await.unwrap();
    let before = stored(&fake);

    clock.advance(21 * HOUR);
    let pass = certs.reconcile().await.unwrap();
    assert!(pass.wrote && pass.reloaded);
    let after = stored(&fake);
    assert_ne!(after.cert, before.cert);
    assert_eq!(
        (&after.ca_bundle, &after.ca_key),
        (&before.ca_bundle, &before.ca_key)
    );
    assert_eq!(certs.resolver().current_pem(), Some(after.cert.clone()));
    // The caBundles need no change: the same CA signed it.
    assert!(pass.injected.is_empty());
    assert!(accepted_by(
        &before.ca_bundle,
        &after,
        clock.now() + 19 * HOUR
    ));
}

/// A CA rotation step by step, checking at each one that the certificate served is accepted
/// by the bundle in every `caBundle`, and that the bundle of the step before accepts it too
/// (what a replica that has not reloaded yet, or an API server that has not seen the new
/// configuration yet, would use).
#[tokio::test]
async fn rotates_the_ca_keeping_the_old_one_trusted_until_the_new_one_is_everywhere() {
    let fake = cluster();
    let clock = ManualClock::new();
    let certs = replica(&fake, &clock);
    certs.reconcile().await.unwrap();
    let mut previous = stored(&fake);
    let check = |previous: &Material, fake: &FakeApiServer, now| {
        let current = stored(fake);
        for bundle in bundles(fake) {
            let bundle = bundle.expect("every target has a caBundle");
            assert_eq!(bundle, current.ca_bundle);
            assert!(accepted_by(&bundle, &current, now), "the new certificate");
            assert!(
                accepted_by(&bundle, previous, now),
                "the certificate served before"
            );
        }
        assert!(
            accepted_by(&previous.ca_bundle, &current, now),
            "by the bundle before"
        );
        current
    };

    // Hour 60: the CA (100 hours) enters its 40-hour window. Serving certificates were renewed
    // at hours 20 and 40 (the last one lives until hour 70).
    for _ in 0..3 {
        clock.advance(20 * HOUR + Duration::from_secs(1));
        certs.reconcile().await.unwrap();
        previous = check(&previous, &fake, clock.now());
    }
    assert_eq!(
        stored(&fake).ca_certificates().len(),
        2,
        "a new CA joined the bundle"
    );
    let old_ca = previous.ca_certificates()[1].clone();
    let leaf = &certificates(&previous.cert)[0];
    let names = settings().dns_names();
    assert!(
        accepted(leaf, std::slice::from_ref(&old_ca), &names, clock.now()),
        "still the old CA's"
    );

    // Within the trust delay nothing changes; after it, the new CA signs.
    clock.advance(Duration::from_secs(5));
    let pass = certs.reconcile().await.unwrap();
    assert!(!pass.wrote);
    clock.advance(Duration::from_secs(5));
    let pass = certs.reconcile().await.unwrap();
    assert!(pass.wrote && pass.reloaded);
    let switched = check(&previous, &fake, clock.now());
    let new_ca = switched.ca_certificates()[0].clone();
    let leaf = &certificates(&switched.cert)[0];
    assert!(accepted(
        leaf,
        std::slice::from_ref(&new_ca),
        &names,
        clock.now()
    ));

    // Hour 81: the serving certificate is renewed, by the new CA; hour 101: the old CA
    // expired and left every caBundle.
    clock.advance(21 * HOUR);
    certs.reconcile().await.unwrap();
    let renewed = check(&switched, &fake, clock.now());
    assert_ne!(renewed.cert, switched.cert);
    clock.advance(20 * HOUR);
    certs.reconcile().await.unwrap();
    let pruned = check(&renewed, &fake, clock.now());
    assert_eq!(pruned.ca_certificates(), [new_ca]);
    assert!(!pruned.ca_certificates().contains(&old_ca));
    assert!(fake.denials().is_empty(), "{:?}", fake.denials());
}

/// While a new CA waits to be trusted, the serving certificate of the old one is already in
/// its rotation window: the next pass is due when the trust delay is over, not at once. (It
/// was due at once, and `run` made 521 passes in 10 s on a real API server, each reading the
/// Secret and the three targets.)
#[tokio::test]
async fn a_new_ca_waiting_for_trust_does_not_make_passes_back_to_back() {
    let fake = cluster();
    let clock = ManualClock::new();
    let certs = replica(&fake, &clock);
    // Hour 60: the CA enters its rotation window, and the serving certificate of hour 40
    // (renewed 10 hours before it expires at hour 70) is in its own.
    let mut pass = certs.reconcile().await.unwrap();
    for _ in 0..3 {
        clock.advance(20 * HOUR + Duration::from_secs(1));
        pass = certs.reconcile().await.unwrap();
    }
    assert_eq!(stored(&fake).ca_certificates().len(), 2, "a new CA waits");
    assert_eq!(pass.next_pass, clock.now() + Settings::DEFAULT_TRUST_DELAY);
    clock.advance(Duration::from_secs(4));
    let pass = certs.reconcile().await.unwrap();
    assert!(!pass.wrote);
    assert_eq!(
        pass.next_pass,
        clock.now() + Settings::DEFAULT_TRUST_DELAY - Duration::from_secs(4),
        "the trust delay counts from when every caBundle carried the CA"
    );

    // `run` on the clock of that moment, for a second and a half of real time: its first
    // pass, and one for the watches' initial lists, then nothing until the trust comes.
    fake.clear_requests();
    let shutdown = CancellationToken::new();
    let running = tokio::spawn(certs.run(shutdown.clone()));
    tokio::time::sleep(Duration::from_millis(1500)).await;
    shutdown.cancel();
    running.await.unwrap();
    let secret_reads = fake
        .requests()
        .iter()
        .filter(|r| r.verb == Verb::Get && r.resource == "secrets")
        .count();
    assert!(
        (1..=3).contains(&secret_reads),
        "{secret_reads} passes in 1.5 s: {:#?}",
        fake.requests()
    );
}

/// Replicas that start together all find no Secret and all create one: the API server keeps the
/// first, the others re-read it and serve it.
async fn replicas_converge(replicas: usize) {
    let fake = cluster();
    let clock = ManualClock::new();
    let all: Vec<SelfSignedCertificates> = (0..replicas).map(|_| replica(&fake, &clock)).collect();
    let passes = futures::future::join_all(all.iter().map(SelfSignedCertificates::reconcile)).await;
    let writers = passes
        .iter()
        .filter(|pass| pass.as_ref().unwrap().wrote)
        .count();
    assert_eq!(writers, 1, "exactly one create wins");
    assert_eq!(fake.count(Verb::Create), replicas, "every replica tried");
    let winner = stored(&fake);
    for certs in &all {
        assert_eq!(certs.resolver().current_pem(), Some(winner.cert.clone()));
    }
    assert_eq!(bundles(&fake), vec![Some(winner.ca_bundle.clone()); 5]);

    // The same race for the renewal: one replace wins, the others get a conflict and adopt it.
    clock.advance(21 * HOUR);
    fake.clear_requests();
    let passes = futures::future::join_all(all.iter().map(SelfSignedCertificates::reconcile)).await;
    let writers = passes
        .iter()
        .filter(|pass| pass.as_ref().unwrap().wrote)
        .count();
    assert_eq!(writers, 1, "exactly one update wins");
    let conflicts = fake
        .requests()
        .iter()
        .filter(|request| request.verb == Verb::Update && request.status == 409)
        .count();
    assert_eq!(conflicts, replicas - 1);
    let renewed = stored(&fake);
    assert_ne!(renewed.cert, winner.cert);
    for certs in &all {
        assert_eq!(certs.resolver().current_pem(), Some(renewed.cert.clone()));
    }
    assert!(fake.denials().is_empty(), "{:?}", fake.denials());
}

#[tokio::test]
async fn two_replicas_converge_on_one_secret() {
    replicas_converge(2).await;
}

#[tokio::test]
async fn three_replicas_converge_on_one_secret() {
    replicas_converge(3).await;
}

/// A configuration applied again without its `caBundle` (`kubectl replace`, a re-created CRD)
/// gets it back at the next pass.
#[tokio::test]
async fn sets_the_ca_bundle_again_where_it_was_cleared() {
    let fake = cluster();
    let clock = ManualClock::new();
    let certs = replica(&fake, &clock);
    certs.reconcile().await.unwrap();
    let bundle = stored(&fake).ca_bundle;

    install_targets(&fake);
    assert_eq!(bundles(&fake), vec![None; 5]);
    let pass = certs.reconcile().await.unwrap();
    assert!(!pass.wrote);
    assert_eq!(pass.injected.len(), 3);
    assert_eq!(bundles(&fake), vec![Some(bundle); 5]);
}

/// Objects that do not exist are skipped, and do not hold back a new CA.
#[tokio::test]
async fn skips_targets_that_do_not_exist() {
    let fake = FakeApiServer::new();
    let clock = ManualClock::new();
    let certs = replica(&fake, &clock);
    let pass = certs.reconcile().await.unwrap();
    assert!(pass.wrote);
    assert!(pass.injected.is_empty());
    assert!(fake.denials().is_empty(), "{:?}", fake.denials());
}

/// Waits until `condition` holds, for at most 10 seconds.
async fn eventually(what: &str, condition: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !condition() {
        assert!(tokio::time::Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// [`SelfSignedCertificates::run`] watches the Secret and the targets: a cleared `caBundle` is
/// set again, and a serving certificate another replica wrote is served, without waiting for
/// a resync.
#[tokio::test]
async fn run_follows_changes_of_the_secret_and_the_targets() {
    let fake = cluster();
    let certs =
        SelfSignedCertificates::new(fake.client_as(identity(&settings())), settings()).unwrap();
    let resolver = certs.resolver();
    let shutdown = CancellationToken::new();
    let running = tokio::spawn(certs.run(shutdown.clone()));
    let served = || resolver.current_pem();
    eventually("the first pass serves a certificate", || served().is_some()).await;
    let bundle = stored(&fake).ca_bundle;
    let everywhere = || bundles(&fake) == vec![Some(bundle.clone()); 5];
    eventually("the caBundles are set", everywhere).await;

    install_targets(&fake);
    eventually("the cleared caBundles are set again", everywhere).await;

    // Another replica wrote a new serving certificate of the same CA: served at once.
    let mut secret = stored_secret(&fake);
    let material = material_of(&secret);
    let ca = &material.ca_certificates()[0];
    let now = SystemTime::now();
    let names = settings().dns_names();
    let (other_cert, other_key) = serving_signed_by(ca, &material.ca_key, &names, now + 30 * HOUR);
    let data = secret.data.get_or_insert_default();
    data.insert(
        CERT_KEY.to_owned(),
        k8s_openapi::ByteString(other_cert.clone().into_bytes()),
    );
    data.insert(
        KEY_KEY.to_owned(),
        k8s_openapi::ByteString(other_key.into_bytes()),
    );
    fake.put(&secret);
    eventually("the other replica's certificate is served", || {
        served() == Some(other_cert.clone())
    })
    .await;

    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(5), running)
        .await
        .unwrap()
        .unwrap();
    assert!(fake.denials().is_empty(), "{:?}", fake.denials());
}

/// The rules are what [`rbac_rules`] says, and a service account without them is refused.
#[tokio::test]
async fn the_rbac_rules_are_needed() {
    let fake = cluster();
    let rbac = rbac_rules(&settings());
    let secret_rules = |verbs: &[&str]| {
        rbac.namespaced.iter().any(|rule| {
            verbs
                .iter()
                .all(|verb| rule.verbs.contains(&(*verb).to_owned()))
                && rule.resource_names == Some(vec![SECRET.to_owned()])
        })
    };
    assert!(secret_rules(&["get", "list", "watch", "update"]));
    assert_eq!(rbac.cluster.len(), 3);
    for rule in &rbac.cluster {
        assert_eq!(rule.verbs, ["get", "list", "watch", "patch"]);
        assert_eq!(rule.resource_names.as_ref().map(Vec::len), Some(1));
    }

    // Without the ClusterRole, the caBundles cannot be set: the pass fails, and says where.
    let namespaced_only = Identity::service_account(NAMESPACE, "controller-manager")
        .with_namespace_rules(NAMESPACE, rbac.namespaced);
    let certs = SelfSignedCertificates::new(fake.client_as(namespaced_only), settings()).unwrap();
    let error = certs.reconcile().await.unwrap_err();
    assert!(
        error
            .to_string()
            .contains("MutatingWebhookConfiguration/mutating-webhook-configuration"),
        "{error}"
    );
    assert!(!fake.denials().is_empty());
}

#[test]
fn settings_that_do_not_fit_are_refused() {
    let mut bad = settings();
    bad.cert_rotation_window = bad.cert_validity;
    let error = bad.validate().unwrap_err().to_string();
    assert!(error.contains("--webhook-cert-rotation-window"), "{error}");
    let mut bad = settings();
    bad.ca_rotation_window = bad.cert_rotation_window;
    assert!(
        bad.validate().is_err(),
        "a CA window no longer than the serving one"
    );
    let mut bad = settings();
    bad.ca_validity = Duration::from_secs(u64::MAX / 2);
    let error = bad.validate().unwrap_err().to_string();
    assert!(error.contains("--webhook-ca-validity"), "{error}");
    let mut bad = settings();
    bad.secret_name.clear();
    assert!(
        bad.validate()
            .unwrap_err()
            .to_string()
            .contains("--webhook-cert-secret")
    );
    assert!(settings().validate().is_ok());
    assert_eq!(
        settings().dns_names(),
        [
            "webhook-service.system.svc",
            "webhook-service.system.svc.cluster.local"
        ]
    );
}

/// Labels every ConfigMap `defaulted: "true"`.
struct LabelDefaulter;

impl Defaulter<ConfigMap> for LabelDefaulter {
    fn apply_defaults(
        &self,
        config_map: &mut ConfigMap,
        _request: &AdmissionRequest<ConfigMap>,
    ) -> Result<(), Denial> {
        let labels = config_map.metadata.labels.get_or_insert_default();
        labels.insert("defaulted".to_owned(), "true".to_owned());
        Ok(())
    }
}

const PATH: &str = "/mutate--v1-configmap";

fn webhooks() -> Vec<Webhook> {
    let registration = Registration {
        name: "mconfigmap-v1.kb.io",
        path: PATH,
        operations: &[Operation::Create],
        failure_policy: FailurePolicy::Fail,
    };
    vec![Webhook::defaulting(registration, LabelDefaulter)]
}

/// A TLS connection to the webhook server, verified as the API server verifies it: against a
/// CA bundle, for the Service's name.
struct Connection(StreamOwned<ClientConnection, TcpStream>);

impl Connection {
    /// Connects and completes the handshake, checking the certificate at `clock`'s time.
    fn open(address: SocketAddr, bundle: &str, clock: &ManualClock) -> std::io::Result<Self> {
        let mut roots = RootCertStore::empty();
        for ca in certificates(bundle) {
            roots.add(ca).unwrap();
        }
        let config = ClientConfig::builder_with_details(provider(), Arc::new(clock.clone()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        let name = ServerName::try_from(settings().dns_names()[0].clone()).unwrap();
        let connection = ClientConnection::new(Arc::new(config), name).unwrap();
        let socket = TcpStream::connect(address)?;
        socket.set_read_timeout(Some(Duration::from_secs(5)))?;
        let mut stream = StreamOwned::new(connection, socket);
        stream.conn.complete_io(&mut stream.sock)?;
        Ok(Self(stream))
    }

    /// The certificate the server presented.
    fn served(&self) -> CertificateDer<'static> {
        self.0.conn.peer_certificates().unwrap()[0]
            .clone()
            .into_owned()
    }

    /// Sends an AdmissionReview on this connection (kept alive) and returns the status code.
    fn admit(&mut self) -> u16 {
        let config_map = ConfigMap {
            metadata: kube::api::ObjectMeta {
                name: Some("settings".to_owned()),
                namespace: Some("default".to_owned()),
                ..Default::default()
            },
            ..ConfigMap::default()
        };
        let body = review(Operation::Create, Some(&config_map), None).to_string();
        let request = format!(
            "POST {PATH} HTTP/1.1\r\nHost: webhook\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        self.0.write_all(request.as_bytes()).unwrap();
        let mut reader = BufReader::new(&mut self.0);
        let mut status = String::new();
        reader.read_line(&mut status).unwrap();
        let mut length = 0;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if line == "\r\n" {
                break;
            }
            if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = value.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        status.split(' ').nth(1).unwrap().parse().unwrap()
    }
}

/// In a blocking thread: the client is std I/O, the server runs on the test's runtime.
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(work).await.unwrap()
}

/// The webhook server with the self-signed certificates: clients that trust the `caBundle` of
/// each moment complete handshakes and admissions before, during and after a rotation of the
/// serving certificate and of the CA, and a connection opened before a rotation goes on
/// working after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serves_tls_across_rotations() {
    let fake = cluster();
    let clock = ManualClock::new();
    let certs = replica(&fake, &clock);
    certs.reconcile().await.unwrap();
    let metrics = operator_rs_runtime::metrics::Metrics::new();
    let shutdown = CancellationToken::new();
    let address = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
    let server = WebhookServer::bind_with_resolver(address, false, webhooks(), certs.resolver())
        .unwrap()
        .with_metrics(&metrics.webhooks());
    let address = server.local_addr();
    let serving = tokio::spawn(server.serve(shutdown.clone()));

    let bundle = || bundles(&fake)[0].clone().unwrap();
    let first_bundle = bundle();
    let mut kept = blocking({
        let (first_bundle, clock) = (first_bundle.clone(), clock.clone());
        move || {
            let mut connection = Connection::open(address, &first_bundle, &clock).unwrap();
            assert_eq!(connection.admit(), 200);
            connection
        }
    })
    .await;
    let first_cert = kept.served();
    assert_eq!(certificates(&stored(&fake).cert)[0], first_cert);

    // The serving certificate is renewed, and the CA replaced, over 62 hours; after every pass
    // a new connection that trusts the caBundle of that moment gets the new certificate.
    let mut served = vec![first_cert.clone()];
    for step in [
        21 * HOUR,
        20 * HOUR,
        20 * HOUR + Duration::from_secs(1),
        Duration::from_secs(11),
    ] {
        clock.advance(step);
        certs.reconcile().await.unwrap();
        let current = certificates(&stored(&fake).cert)[0].clone();
        let (bundle_now, clock) = (bundle(), clock.clone());
        let got = blocking(move || {
            let mut connection = Connection::open(address, &bundle_now, &clock).unwrap();
            assert_eq!(connection.admit(), 200);
            connection.served()
        })
        .await;
        assert_eq!(got, current);
        if served.last() != Some(&current) {
            served.push(current);
        }
    }
    assert_eq!(
        stored(&fake).ca_certificates().len(),
        2,
        "the CA was replaced"
    );
    assert!(served.len() >= 3, "renewed, then signed by the new CA");

    // The connection opened first still answers, with the certificate it started with.
    let kept = blocking(move || {
        assert_eq!(kept.admit(), 200);
        kept
    })
    .await;
    assert_eq!(kept.served(), first_cert);

    // A client that trusts only the first bundle no longer accepts the newest certificate once
    // the new CA signs it: which is why the caBundles carry both CAs until the old one expires.
    let refused = blocking(move || Connection::open(address, &first_bundle, &clock).err()).await;
    assert!(
        refused.is_some(),
        "the old CA did not sign the newest certificate"
    );

    shutdown.cancel();
    let stopped = tokio::time::timeout(Duration::from_secs(15), serving).await;
    assert!(matches!(stopped, Ok(Ok(Ok(())))), "{stopped:?}");
}
