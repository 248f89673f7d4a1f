//! [`SelfSignedCertificates`]: the passes over the Secret and the `caBundle`s, and the loop that
//! runs them when something changes.

use std::pin::pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use futures::stream::{self, BoxStream};
use futures::{FutureExt as _, StreamExt as _};
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::runtime::{WatchStreamExt as _, watcher};
use kube::{Api, Client, Resource};
use rustls::pki_types::CertificateDer;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

use super::resolver::ServingCertResolver;
use super::{CertsError, Clock, Settings, SystemClock, inject, plan, secret};

/// How long a pass waits after a failure before it tries again.
const RETRY_AFTER: Duration = Duration::from_secs(5);

/// The shortest time between the starts of two passes of [`SelfSignedCertificates::run`]:
/// whatever the certificates' dates or the watches say, a replica reads the Secret and its
/// targets at most twice a second.
const MIN_PASS_INTERVAL: Duration = Duration::from_millis(500);

/// The manager's own webhook certificates: see [the module](super).
pub struct SelfSignedCertificates {
    client: Client,
    settings: Settings,
    policy: plan::Policy,
    clock: Arc<dyn Clock>,
    resolver: Arc<ServingCertResolver>,
    /// The first CA of the bundle, and since when every `caBundle` has carried it.
    trusted_since: Mutex<Option<(CertificateDer<'static>, SystemTime)>>,
}

impl std::fmt::Debug for SelfSignedCertificates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SelfSignedCertificates")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// What one pass did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pass {
    /// This replica wrote the Secret.
    pub wrote: bool,
    /// The webhook server serves a certificate it did not serve before.
    pub reloaded: bool,
    /// The objects whose `caBundle` this pass set, as `kind/name`.
    pub injected: Vec<String>,
    /// When the next pass is due at the latest.
    pub next_pass: SystemTime,
}

impl SelfSignedCertificates {
    /// The certificates of `settings`, kept with `client` (the manager's), on the system clock.
    pub fn new(client: Client, settings: Settings) -> Result<Self, CertsError> {
        settings.validate()?;
        Ok(Self {
            client,
            policy: settings.policy(),
            settings,
            clock: Arc::new(SystemClock),
            resolver: Arc::new(ServingCertResolver::new()),
            trusted_since: Mutex::new(None),
        })
    }

    /// The same, on `clock`.
    #[must_use]
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// What the webhook server serves: the serving certificate of the last pass.
    pub fn resolver(&self) -> Arc<ServingCertResolver> {
        self.resolver.clone()
    }

    /// The settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// One pass (see [the module](super)): read the Secret, write it if the certificates must
    /// change, serve its serving certificate, and set its CA bundle in every target. Fails when
    /// one of those steps does; the certificate served stays the last good one.
    pub async fn reconcile(&self) -> Result<Pass, CertsError> {
        let now = self.clock.now();
        let trusted = self.trusted(now);
        let settings = &self.settings;
        let stored = secret::reconcile(
            &self.client,
            &settings.secret_namespace,
            &settings.secret_name,
            &self.policy,
            now,
            trusted.as_ref(),
        )
        .await?;
        let plan = stored.plan;
        for change in &plan.changes {
            tracing::info!(
                secret = %settings.secret_name,
                written = stored.wrote,
                "webhook certificates: {}",
                describe(*change)
            );
        }
        let material = &plan.material;
        let reloaded = self.resolver.set(&material.cert, &material.key)?;
        if reloaded {
            tracing::info!("serving the webhook certificate of the Secret");
        }
        let injected = inject::inject(&self.client, &settings.targets, &material.ca_bundle).await;
        let signer = material.ca_certificates().into_iter().next();
        let injected = match injected {
            Ok(injected) => {
                self.carried_everywhere(signer, now);
                injected
            }
            Err(error) => {
                self.carried_everywhere(None, now);
                return Err(error);
            }
        };
        for object in &injected.missing {
            tracing::debug!(%object, "no such object: no caBundle to set");
        }
        if !injected.patched.is_empty() {
            tracing::info!(objects = ?injected.patched, "set the webhook CA bundle");
        }
        let mut next_pass = plan.next_check.min(now + settings.resync_interval);
        if plan.waiting_for_trust {
            let trusted_at = self.trusted_at().unwrap_or(now + settings.trust_delay);
            tracing::info!(
                "a new webhook CA waits until every caBundle has carried it for {:?}",
                settings.trust_delay
            );
            next_pass = next_pass.min(trusted_at.max(now));
        }
        Ok(Pass {
            wrote: stored.wrote,
            reloaded,
            injected: injected.patched,
            next_pass,
        })
    }

    /// The first CA of the bundle if every `caBundle` has carried it for the trust delay.
    fn trusted(&self, now: SystemTime) -> Option<CertificateDer<'static>> {
        let since = self
            .trusted_since
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let (ca, since) = since.as_ref()?;
        let waited = now.duration_since(*since).unwrap_or_default();
        (waited >= self.settings.trust_delay).then(|| ca.clone())
    }

    /// When the CA that every `caBundle` carries will have been there for the trust delay.
    fn trusted_at(&self) -> Option<SystemTime> {
        let since = self
            .trusted_since
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let (_, since) = since.as_ref()?;
        Some(*since + self.settings.trust_delay)
    }

    /// Records that every `caBundle` carries `ca` at `now` (or, with `None`, that this is not
    /// known), keeping the earlier time when it is the same CA as before.
    fn carried_everywhere(&self, ca: Option<CertificateDer<'static>>, now: SystemTime) {
        let mut since = self
            .trusted_since
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        *since = match (since.take(), ca) {
            (Some((previous, at)), Some(ca)) if previous == ca => Some((previous, at)),
            (_, Some(ca)) => Some((ca, now)),
            (_, None) => None,
        };
    }

    /// Keeps the certificates until `shutdown`: a pass at once, then whenever the Secret or a
    /// target changes, when the last pass says, and every resync interval (see [the
    /// module](super)). A failed pass is logged and retried after a few seconds; the webhook
    /// server goes on serving the last good certificate meanwhile.
    pub async fn run(self, shutdown: CancellationToken) {
        let mut changes = pin!(self.changes());
        let mut next_pass = self.clock.now();
        let mut last_start: Option<tokio::time::Instant> = None;
        loop {
            let wait = next_pass
                .duration_since(self.clock.now())
                .unwrap_or_default();
            tokio::select! {
                () = shutdown.cancelled() => return,
                () = tokio::time::sleep(wait) => {}
                Some(change) = changes.next() => {
                    if let Err(error) = change {
                        tracing::debug!(%error, "a watch of the webhook certificates' objects failed");
                    }
                    // One pass for a burst of changes (the watches' initial lists, own writes).
                    while let Some(Some(_)) = changes.next().now_or_never() {}
                }
            }
            if let Some(last_start) = last_start {
                tokio::select! {
                    () = shutdown.cancelled() => return,
                    () = tokio::time::sleep_until(last_start + MIN_PASS_INTERVAL) => {}
                }
            }
            last_start = Some(tokio::time::Instant::now());
            next_pass = match self.reconcile().await {
                Ok(pass) => pass.next_pass,
                Err(error) => {
                    let error = anyhow::Error::from(error);
                    tracing::error!("webhook certificates: {error:#}; retrying in {RETRY_AFTER:?}");
                    self.clock.now() + RETRY_AFTER
                }
            };
        }
    }

    /// A change of the Secret or of a target, from a watch of each by name.
    fn changes(&self) -> BoxStream<'static, Result<(), watcher::Error>> {
        let settings = &self.settings;
        let secret: Api<Secret> = Api::namespaced(self.client.clone(), &settings.secret_namespace);
        let mut watches = vec![watch(secret, &settings.secret_name)];
        let all = || self.client.clone();
        for name in &settings.targets.mutating {
            let api = Api::<MutatingWebhookConfiguration>::all(all());
            watches.push(watch(api, name));
        }
        for name in &settings.targets.validating {
            let api = Api::<ValidatingWebhookConfiguration>::all(all());
            watches.push(watch(api, name));
        }
        for name in &settings.targets.crds {
            watches.push(watch(Api::<CustomResourceDefinition>::all(all()), name));
        }
        stream::select_all(watches).boxed()
    }
}

/// The changes of the object `name`: a watch whose field selector names it, which RBAC grants
/// with a rule for that name only.
fn watch<K>(api: Api<K>, name: &str) -> BoxStream<'static, Result<(), watcher::Error>>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug + Send + 'static,
    K::DynamicType: Default,
{
    let config = watcher::Config::default().fields(&format!("metadata.name={name}"));
    watcher(api, config)
        .default_backoff()
        .map(|event| event.map(|_| ()))
        .boxed()
}

fn describe(change: plan::Change) -> String {
    match change {
        plan::Change::DroppedCas => {
            "removed expired or unusable certificates from the CA bundle".to_owned()
        }
        plan::Change::NewCa(why) => format!("made a new CA: {why}"),
        plan::Change::NewServingCert(why) => format!("made a new serving certificate: {why}"),
    }
}
