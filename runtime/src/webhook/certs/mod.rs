//! Certificates the manager makes and rotates itself, for clusters without cert-manager: the
//! `--webhook-certs=self-signed` mode of the webhook server.
//!
//! Every replica of the manager runs [`SelfSignedCertificates`]. A pass ([`SelfSignedCertificates::reconcile`]) reads
//! the Secret `--webhook-cert-secret` and:
//!
//! 1. creates a CA and a serving certificate for the webhook Service
//!    (`<service>.<namespace>.svc` and `<service>.<namespace>.svc.cluster.local`) when the
//!    Secret has none, keeps them while they are good, renews the serving certificate when it
//!    enters its rotation window, and replaces the CA before it expires, keeping the old CA in
//!    the bundle until it has expired (the rules are in `plan.rs`);
//! 2. writes the Secret only when that changes something, with optimistic concurrency, so that
//!    of replicas racing to write it exactly one wins and all serve the winner's certificates
//!    (the protocol is in `secret.rs`);
//! 3. serves the Secret's serving certificate from the next TLS handshake on
//!    ([`ServingCertResolver`]: no restart, no request in flight dropped);
//! 4. sets the Secret's CA bundle as the `caBundle` of the project's webhook configurations and
//!    CRD conversion webhooks (`inject.rs`).
//!
//! A new CA signs serving certificates only once every `caBundle` has carried it for
//! [`Settings::trust_delay`]: until then the old CA's serving certificate is kept. So no
//! admission or conversion call fails across a rotation: the API server always trusts the
//! certificate every replica serves.
//!
//! [`SelfSignedCertificates::run`] makes a pass at once, whenever the Secret or one of those
//! objects changes (a watch on each, by name: a configuration re-applied without its
//! `caBundle` gets it back within a second, and an idle manager re-reads nothing), when a
//! certificate enters its rotation window, and every [`Settings::resync_interval`] in case a
//! watch missed something.
//!
//! # The Secret
//!
//! One `kubernetes.io/tls` Secret holds `tls.crt` and `tls.key` (the serving certificate and
//! key), `ca.crt` (the CA bundle: the signing CA first, then older ones until they expire) and
//! `ca.key` (the signing CA's key). The CA key lives in the same Secret on purpose: the CA is
//! trusted by nothing but this operator's own `caBundle`s, so whoever can read the Secret can
//! already impersonate the webhooks with `tls.key`, and the CA key lets them do nothing more.
//! One Secret is one object to write atomically (a CA and the certificate it signs never
//! disagree), to grant, and to watch. (Gatekeeper's cert-controller keeps the same four keys in
//! one Secret.)
//!
//! # RBAC
//!
//! [`rbac_rules`] gives the rules the manager needs for exactly these objects, by name.

mod certificates;
mod ephemeral;
mod inject;
mod pki;
mod plan;
mod rbac;
mod resolver;
mod secret;

use std::time::{Duration, SystemTime};

pub use certificates::{Pass, SelfSignedCertificates};
pub use ephemeral::{EPHEMERAL_VALIDITY, EphemeralCertificates};
pub use inject::{FIELD_MANAGER, InjectError, Targets};
pub use pki::PkiError;
pub use plan::Material;
pub use rbac::{CertsRbac, rbac_rules};
pub use resolver::{InvalidServingCert, ServingCertResolver};
pub use secret::{CA_BUNDLE_KEY, CA_KEY_KEY, CERT_KEY, KEY_KEY, material_of};

/// The default of `--webhook-cert-secret`: [`super::SELF_SIGNED_SECRET_NAME`].
pub const DEFAULT_SECRET_NAME: &str = super::SELF_SIGNED_SECRET_NAME;

/// What the manager needs to know for its own certificates: where to keep them, who they are
/// for, where the CA goes, and how long they live. `--webhook-*` flags set each (see
/// `manager::flags`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// The Secret that holds the certificates (`--webhook-cert-secret`).
    pub secret_name: String,
    /// Its namespace: the manager's (`--webhook-cert-secret-namespace`).
    pub secret_namespace: String,
    /// The Service in front of the webhook server (`--webhook-service-name`).
    pub service_name: String,
    /// Its namespace (`--webhook-service-namespace`).
    pub service_namespace: String,
    /// Where the CA bundle goes.
    pub targets: Targets,
    /// How long a CA is valid (`--webhook-ca-validity`).
    pub ca_validity: Duration,
    /// How long before a CA expires the next one is made (`--webhook-ca-rotation-window`).
    pub ca_rotation_window: Duration,
    /// How long a serving certificate is valid (`--webhook-cert-validity`); never longer than
    /// its CA.
    pub cert_validity: Duration,
    /// How long before a serving certificate expires it is renewed
    /// (`--webhook-cert-rotation-window`).
    pub cert_rotation_window: Duration,
    /// How long every `caBundle` must have carried a new CA before it signs the serving
    /// certificate: the time the API server takes to see a changed webhook configuration or CRD
    /// (its informers, well under a second), with a margin.
    pub trust_delay: Duration,
    /// How often a pass runs when nothing changes, in case a watch missed an event.
    pub resync_interval: Duration,
}

impl Settings {
    /// The default validity of a CA: ten years, as Gatekeeper's cert-controller.
    pub const DEFAULT_CA_VALIDITY: Duration = Duration::from_secs(10 * 365 * 24 * 60 * 60);
    /// The default CA rotation window: a year.
    pub const DEFAULT_CA_ROTATION_WINDOW: Duration = Duration::from_secs(365 * 24 * 60 * 60);
    /// The default validity of a serving certificate: 90 days, as cert-manager's.
    pub const DEFAULT_CERT_VALIDITY: Duration = Duration::from_secs(90 * 24 * 60 * 60);
    /// The default serving certificate rotation window: 30 days, as cert-manager's (a third).
    pub const DEFAULT_CERT_ROTATION_WINDOW: Duration = Duration::from_secs(30 * 24 * 60 * 60);
    /// The default [`Settings::trust_delay`].
    pub const DEFAULT_TRUST_DELAY: Duration = Duration::from_secs(10);
    /// The default [`Settings::resync_interval`].
    pub const DEFAULT_RESYNC_INTERVAL: Duration = Duration::from_secs(5 * 60);

    /// Settings with the defaults above, for the Secret `secret_name` and the Service
    /// `service_name`, both in `namespace`, and no targets yet.
    pub fn new(namespace: &str, secret_name: &str, service_name: &str) -> Self {
        Self {
            secret_name: secret_name.to_owned(),
            secret_namespace: namespace.to_owned(),
            service_name: service_name.to_owned(),
            service_namespace: namespace.to_owned(),
            targets: Targets::default(),
            ca_validity: Self::DEFAULT_CA_VALIDITY,
            ca_rotation_window: Self::DEFAULT_CA_ROTATION_WINDOW,
            cert_validity: Self::DEFAULT_CERT_VALIDITY,
            cert_rotation_window: Self::DEFAULT_CERT_ROTATION_WINDOW,
            trust_delay: Self::DEFAULT_TRUST_DELAY,
            resync_interval: Self::DEFAULT_RESYNC_INTERVAL,
        }
    }

    /// The names the serving certificate is for: the Service's, as the API server calls it.
    pub fn dns_names(&self) -> Vec<String> {
        let host = format!("{}.{}.svc", self.service_name, self.service_namespace);
        vec![host.clone(), format!("{host}.cluster.local")]
    }

    /// Checks the settings make sense together: names given, each rotation window shorter than
    /// its validity, and the CA's window longer than the serving certificate's (a new CA must be
    /// trusted before the serving certificate it will sign is due).
    pub fn validate(&self) -> Result<(), CertsError> {
        let invalid = |reason: String| Err(CertsError::Settings(reason));
        for (flag, value) in [
            ("--webhook-cert-secret", &self.secret_name),
            ("--webhook-cert-secret-namespace", &self.secret_namespace),
            ("--webhook-service-name", &self.service_name),
            ("--webhook-service-namespace", &self.service_namespace),
        ] {
            if value.is_empty() {
                return invalid(format!("{flag} must not be empty"));
            }
        }
        let windows = [
            (
                "--webhook-ca-rotation-window",
                self.ca_rotation_window,
                "--webhook-ca-validity",
                self.ca_validity,
            ),
            (
                "--webhook-cert-rotation-window",
                self.cert_rotation_window,
                "--webhook-cert-validity",
                self.cert_validity,
            ),
            (
                "--webhook-cert-rotation-window",
                self.cert_rotation_window,
                "--webhook-ca-rotation-window",
                self.ca_rotation_window,
            ),
        ];
        // X.509 dates end in 9999; far below that, a typo such as a missing unit is more likely.
        const LONGEST: Duration = Duration::from_secs(100 * 365 * 24 * 60 * 60);
        for (flag, validity) in [
            ("--webhook-ca-validity", self.ca_validity),
            ("--webhook-cert-validity", self.cert_validity),
        ] {
            if validity > LONGEST {
                return invalid(format!("{flag} ({validity:?}) must be at most 100 years"));
            }
        }
        for (shorter, short, longer, long) in windows {
            if short.is_zero() || short >= long {
                return invalid(format!(
                    "{shorter} ({short:?}) must be more than 0 and less than {longer} ({long:?})"
                ));
            }
        }
        Ok(())
    }

    fn policy(&self) -> plan::Policy {
        plan::Policy {
            service: self.service_name.clone(),
            dns_names: self.dns_names(),
            ca_validity: self.ca_validity,
            ca_rotation_window: self.ca_rotation_window,
            cert_validity: self.cert_validity,
            cert_rotation_window: self.cert_rotation_window,
        }
    }
}

/// What can go wrong with the self-signed certificates.
#[derive(Debug, thiserror::Error)]
pub enum CertsError {
    /// The settings (flags) do not fit together.
    #[error("invalid webhook certificate settings: {0}")]
    Settings(String),
    /// The Secret cannot be read or written.
    #[error("cannot read or write the webhook certificate Secret {namespace}/{name}")]
    Secret {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// What the API server said.
        source: kube::Error,
    },
    /// Other writers won every race for the Secret.
    #[error(
        "the webhook certificate Secret {namespace}/{name} changed under every one of {attempts} attempts to write it"
    )]
    Contended {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// How many times it was read and written.
        attempts: usize,
    },
    /// Certificates cannot be made.
    #[error(transparent)]
    Pki(#[from] PkiError),
    /// The Secret's serving certificate cannot be served.
    #[error("the webhook certificate Secret holds a serving certificate that cannot be served")]
    Serve(#[from] InvalidServingCert),
    /// The CA bundle cannot be put into an object.
    #[error("cannot set the caBundle of {object}")]
    Inject {
        /// The object, as `kind/name`.
        object: String,
        /// Why.
        source: Box<InjectError>,
    },
}

/// Tells the time: [`SystemClock`] in the manager, a clock of their own in tests, so that a
/// rotation months away is a test of milliseconds.
pub trait Clock: Send + Sync + 'static {
    /// The current time.
    fn now(&self) -> SystemTime;
}

/// The system's clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }
}
