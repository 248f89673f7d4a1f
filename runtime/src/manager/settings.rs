//! The manager's settings, read from its [`Flags`] and environment and checked before anything
//! connects or listens: a configuration mistake fails the startup with its message.

use anyhow::{Context as _, anyhow};
use axum_server::tls_rustls::RustlsConfig;

use super::flags::{Flags, WebhookCerts};
use super::leader::{self, LeaderElectionConfig, LeaderElectionError};
use super::namespaces::WatchNamespaces;
use crate::metrics;
use crate::metrics::server::{CertFiles, Options as MetricsOptions};
#[cfg(feature = "sharding")]
use crate::sharding;
use crate::sharding::Sharding;
use crate::webhook::WebhookServerConfig;
#[cfg(feature = "webhooks")]
use crate::webhook::certs::{Settings as CertSettings, Targets};

/// What the flags and the environment say, checked.
pub struct Settings {
    /// `WATCH_NAMESPACE`.
    pub watch_namespaces: WatchNamespaces,
    /// With `--leader-elect`: the Lease and its timing.
    pub leader_election: Option<LeaderElectionConfig>,
    /// With `--sharding`: this replica's place in the ring.
    pub sharding: Option<Sharding>,
    /// The metrics server's options, and its TLS when it serves HTTPS.
    pub metrics: MetricsOptions,
    pub metrics_tls: Option<RustlsConfig>,
}

impl Settings {
    /// The settings of `flags`, or why they cannot run.
    pub fn from_flags(flags: &Flags) -> anyhow::Result<Self> {
        let watch_namespaces = WatchNamespaces::from_env()?;
        let identity = leader::identity();
        let leader_election = flags
            .leader_elect
            .then(|| leader_election_config(flags, &identity))
            .transpose()?;
        if flags.webhook_url.is_some() && flags.webhook_certs == WebhookCerts::SelfSigned {
            return Err(anyhow!(
                "--webhook-url serves the webhooks with certificates of its own: it cannot be combined with --webhook-certs=self-signed"
            ));
        }
        let sharding = match (flags.sharding, &leader_election) {
            (false, _) => None,
            (true, None) => {
                return Err(anyhow!(
                    "--sharding needs --leader-elect: the elected replica assigns the objects to the \
                     members of the ring"
                ));
            }
            #[cfg(feature = "sharding")]
            (true, Some(config)) => Some(Sharding::new(
                &config.lease_name,
                sharding::member_name(&identity),
            )?),
            // Refused before, without the `sharding` feature (super::features).
            #[cfg(not(feature = "sharding"))]
            (true, Some(_)) => None,
        };
        let metrics = metrics_options(flags);
        let metrics_tls = if flags.metrics_bind_address.socket_addr().is_some() {
            metrics::server::tls_config(&metrics)
                .context("cannot set up TLS for the metrics server")?
        } else {
            None
        };
        Ok(Settings {
            watch_namespaces,
            leader_election,
            sharding,
            metrics,
            metrics_tls,
        })
    }
}

/// The leader election settings from the flags, with the Lease in the pod's namespace unless
/// `--leader-election-namespace` says otherwise, and `identity` as this replica's.
fn leader_election_config(
    flags: &Flags,
    identity: &str,
) -> Result<LeaderElectionConfig, LeaderElectionError> {
    let namespace = match &flags.leader_election_namespace {
        Some(namespace) => namespace.clone(),
        None => leader::pod_namespace()?,
    };
    let config = LeaderElectionConfig {
        lease_duration: flags.leader_election_lease_duration,
        renew_deadline: flags.leader_election_renew_deadline,
        retry_period: flags.leader_election_retry_period,
        ..LeaderElectionConfig::new(&flags.leader_election_id, namespace, identity)
    };
    config.validate()?;
    Ok(config)
}

/// The settings of the self-signed webhook certificates from the flags, with the pod's
/// namespace for the Secret and the Service unless flags name theirs.
#[cfg(feature = "webhooks")]
pub fn self_signed_settings(flags: &Flags) -> anyhow::Result<CertSettings> {
    let namespace = |given: &Option<String>, flag: &str| match given {
        Some(namespace) => Ok(namespace.clone()),
        None => leader::pod_namespace().with_context(|| {
            format!("the self-signed webhook certificates need {flag} out of a cluster")
        }),
    };
    let secret_namespace = namespace(
        &flags.webhook_cert_secret_namespace,
        "--webhook-cert-secret-namespace",
    )?;
    let mut settings = CertSettings::new(
        &secret_namespace,
        &flags.webhook_cert_secret,
        &flags.webhook_service_name,
    );
    settings.service_namespace = namespace(
        &flags.webhook_service_namespace,
        "--webhook-service-namespace",
    )?;
    settings.targets = Targets {
        mutating: flags.webhook_mutating_configuration.clone(),
        validating: flags.webhook_validating_configuration.clone(),
        crds: flags.webhook_conversion_crd.clone(),
    };
    settings.ca_validity = flags.webhook_ca_validity;
    settings.ca_rotation_window = flags.webhook_ca_rotation_window;
    settings.cert_validity = flags.webhook_cert_validity;
    settings.cert_rotation_window = flags.webhook_cert_rotation_window;
    Ok(settings)
}

/// The webhook server settings from the flags.
pub fn webhook_config(flags: &Flags) -> WebhookServerConfig {
    WebhookServerConfig {
        address: std::net::SocketAddr::from(([0, 0, 0, 0], flags.webhook_port)),
        cert_dir: flags
            .webhook_cert_path
            .clone()
            .unwrap_or_else(crate::webhook::server::default_cert_dir),
        cert_name: flags.webhook_cert_name.clone(),
        key_name: flags.webhook_cert_key.clone(),
        enable_http2: flags.enable_http2,
    }
}

/// The metrics server settings from the flags.
fn metrics_options(flags: &Flags) -> MetricsOptions {
    MetricsOptions {
        secure: flags.metrics_secure,
        enable_http2: flags.enable_http2,
        cert_files: flags
            .metrics_cert_path
            .as_deref()
            .map(|dir| CertFiles::new(dir, &flags.metrics_cert_name, &flags.metrics_cert_key)),
    }
}

#[cfg(all(test, feature = "webhooks"))]
mod tests {
    use std::time::Duration;

    use super::*;

    /// The self-signed mode's flags become its settings, as given.
    #[test]
    fn self_signed_settings_come_from_the_flags() {
        let flags = Flags::try_parse_with(
            "lease",
            [
                "manager",
                "--webhook-certs=self-signed",
                "--webhook-cert-secret=p-webhook-server-self-signed-cert",
                "--webhook-cert-secret-namespace=p-system",
                "--webhook-service-name=p-webhook-service",
                "--webhook-service-namespace=p-system",
                "--webhook-mutating-configuration=p-mutating-webhook-configuration",
                "--webhook-validating-configuration=p-validating-webhook-configuration",
                "--webhook-conversion-crd=widgets.example.com",
                "--webhook-ca-validity=20m",
                "--webhook-ca-rotation-window=8m",
                "--webhook-cert-validity=5m",
                "--webhook-cert-rotation-window=2m",
            ],
        )
        .unwrap();
        let settings = self_signed_settings(&flags).unwrap();
        assert_eq!(
            settings.dns_names(),
            [
                "p-webhook-service.p-system.svc",
                "p-webhook-service.p-system.svc.cluster.local"
            ]
        );
        assert_eq!(
            (
                settings.secret_namespace.as_str(),
                settings.secret_name.as_str()
            ),
            ("p-system", "p-webhook-server-self-signed-cert")
        );
        assert_eq!(
            settings.targets,
            Targets {
                mutating: vec!["p-mutating-webhook-configuration".to_owned()],
                validating: vec!["p-validating-webhook-configuration".to_owned()],
                crds: vec!["widgets.example.com".to_owned()],
            }
        );
        assert_eq!(settings.ca_validity, Duration::from_secs(20 * 60));
        assert_eq!(settings.ca_rotation_window, Duration::from_secs(8 * 60));
        assert_eq!(settings.cert_validity, Duration::from_secs(5 * 60));
        assert_eq!(settings.cert_rotation_window, Duration::from_secs(2 * 60));
        assert!(settings.validate().is_ok());
    }
}
