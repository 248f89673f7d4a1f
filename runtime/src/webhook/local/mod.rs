//! Webhooks served by a manager that runs outside the cluster (`make run`), at a URL the API
//! server can reach: `--webhook-url=https://<host>:<port>`.
//!
//! The deployed webhook configurations point at the webhook Service in the cluster, which a
//! manager on a laptop is not behind. With `--webhook-url`, the manager instead:
//!
//! 1. makes a CA and a serving certificate for the URL's host, in memory
//!    ([`EphemeralCertificates`]): an IP address gets an IP address SAN, a name a DNS SAN;
//! 2. serves the webhooks with it on `--webhook-port`, as always;
//! 3. registers copies of the project's MutatingWebhookConfiguration and
//!    ValidatingWebhookConfiguration, built from the same [`webhook_manifests`] as `make
//!    manifests` writes, under names of their own ([`Names`]), each webhook's `clientConfig` a
//!    `url` (`<webhook-url><path>`) with the CA as its `caBundle`;
//! 4. points the conversion webhook of each CRD the project converts at `<webhook-url>/convert`,
//!    keeping what the CRD had before in an annotation ([`CONVERSION_BEFORE`]);
//! 5. on exit, deletes the configurations and writes back each CRD's conversion
//!    ([`Registration::remove`]).
//!
//! The names are the same on every run of a project, so a run after one that could not clean
//! up (killed, or a second Ctrl-C) replaces its configurations and restores its CRDs on exit.
//!
//! The API server must be able to open a TCP connection to the URL's host and port: from a
//! kind or minikube cluster, the host's address on the Docker or VM network; from a remote
//! cluster, a tunnel. Nothing here can check that; a webhook the API server cannot reach fails
//! its calls as its `failurePolicy` says.
//!
//! [`webhook_manifests`]: crate::webhook::webhook_manifests

mod configurations;
mod crd_conversion;
mod registration;

use std::sync::Arc;

use k8s_openapi::ByteString;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::WebhookClientConfig;

pub use super::url::{InvalidWebhookUrl, WebhookUrl};
pub use configurations::{MANAGED_BY, MANAGED_BY_LABEL, Names, configurations};
pub use crd_conversion::CONVERSION_BEFORE;
pub use registration::Registration;

use super::certs::{CertsError, EphemeralCertificates, ServingCertResolver};
use super::conversion::CONVERT_PATH;
use super::{Webhook, WebhookManifests};

/// The field manager of the temporary configurations and of the CRDs' conversion patches, as
/// `kubectl get --show-managed-fields` shows it.
pub const FIELD_MANAGER: &str = "operator-rs-webhook-url";

/// What a manager run with `--webhook-url` serves and registers.
#[derive(Debug)]
pub struct LocalWebhooks {
    url: WebhookUrl,
    certificates: EphemeralCertificates,
    names: Names,
    configurations: WebhookManifests,
    /// The CRDs (`<plural>.<group>`) of the kinds with a converter.
    conversion_crds: Vec<String>,
}

impl LocalWebhooks {
    /// Makes the certificates for `url`'s host and the configurations of `webhooks` (a
    /// project's `webhook::webhooks()`), named after `project_id` (the leader election ID,
    /// unique per project).
    pub fn new(
        url: WebhookUrl,
        project_id: &str,
        webhooks: &[Webhook],
    ) -> Result<Self, LocalError> {
        let certificates = EphemeralCertificates::for_host(url.host())?;
        let names = Names::new(project_id);
        let configurations = configurations(webhooks, &url, certificates.ca_bundle(), &names);
        let conversion_crds = webhooks
            .iter()
            .filter_map(|webhook| match webhook {
                Webhook::Conversion(converter) => Some(converter.crd_name()),
                Webhook::Admission(_) => None,
            })
            .collect();
        Ok(Self {
            url,
            certificates,
            names,
            configurations,
            conversion_crds,
        })
    }

    /// The URL the API server calls.
    pub fn url(&self) -> &WebhookUrl {
        &self.url
    }

    /// The serving certificate, for the webhook server.
    pub fn resolver(&self) -> Arc<ServingCertResolver> {
        self.certificates.resolver()
    }

    /// The CA the registrations trust (PEM).
    pub fn ca_bundle(&self) -> &str {
        self.certificates.ca_bundle()
    }

    /// The temporary configurations, as registered.
    pub fn configurations(&self) -> &WebhookManifests {
        &self.configurations
    }

    /// The names of the temporary configurations.
    pub fn names(&self) -> &Names {
        &self.names
    }

    /// The CRDs whose conversion webhook is pointed at the manager.
    pub fn conversion_crds(&self) -> &[String] {
        &self.conversion_crds
    }

    /// The CRDs' conversion webhook: `<url>/convert`, trusting the CA.
    fn conversion_client_config(&self) -> WebhookClientConfig {
        WebhookClientConfig {
            url: Some(self.url.join(CONVERT_PATH)),
            ca_bundle: Some(ByteString(self.ca_bundle().as_bytes().to_vec())),
            service: None,
        }
    }
}

/// What can go wrong with the webhooks of a manager run outside the cluster.
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    /// The certificates cannot be made.
    #[error("cannot make the webhook certificates for --webhook-url")]
    Certificates(#[from] CertsError),
    /// The API server refused or failed a request.
    #[error("cannot {action} {object}")]
    Api {
        /// What was asked: `apply`, `delete`, `read`, `write`.
        action: &'static str,
        /// The object, as `kind/name`.
        object: String,
        /// What the API server said.
        source: kube::Error,
    },
    /// The record of a CRD's conversion from before is not one.
    #[error("the annotation {CONVERSION_BEFORE} of the CRD {crd} does not hold a conversion")]
    Record {
        /// The CRD.
        crd: String,
        /// Why it does not parse.
        source: serde_json::Error,
    },
    /// Others wrote the CRD between every read and write.
    #[error("the CRD {crd} changed under every one of {attempts} attempts to write it")]
    Contended {
        /// The CRD.
        crd: String,
        /// How many times it was read and written.
        attempts: usize,
    },
}
