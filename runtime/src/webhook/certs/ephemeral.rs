//! Certificates that live in the manager's memory only, for a manager run outside the cluster
//! (`--webhook-url`, [`crate::webhook::local`]): a CA and a serving certificate for the host the
//! API server calls, made at startup and forgotten at exit. Nothing is stored: the temporary
//! webhook configurations that trust this CA are removed when the manager exits, and the next
//! run makes a new CA and registers that one.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use super::CertsError;
use super::pki;
use super::resolver::ServingCertResolver;

/// How long the in-memory certificates are valid: longer than any `make run` session lasts, so
/// that they need no renewal, and short enough that a CA copied out of a configuration left by a
/// killed manager soon trusts nothing.
pub const EPHEMERAL_VALIDITY: Duration = Duration::from_secs(7 * 24 * 60 * 60);

/// A CA and the serving certificate it signs for one host, in memory.
#[derive(Debug)]
pub struct EphemeralCertificates {
    ca_bundle: String,
    resolver: Arc<ServingCertResolver>,
}

impl EphemeralCertificates {
    /// A new CA and a serving certificate for `host`, valid from now for
    /// [`EPHEMERAL_VALIDITY`]. `host` is an IP address (the certificate gets an IP address
    /// SAN, which is what the API server checks when it calls an IP) or a DNS name.
    pub fn for_host(host: &str) -> Result<Self, CertsError> {
        let now = SystemTime::now();
        let ca = pki::new_ca(host, now, EPHEMERAL_VALIDITY)?;
        // rcgen writes the CA it made as one PEM certificate, which parses.
        let ca_der = pki::certificates(&ca.cert).remove(0);
        let serving = pki::new_serving(
            &ca_der,
            &ca.key,
            &[host.to_owned()],
            now,
            now + EPHEMERAL_VALIDITY,
        )?;
        let resolver = ServingCertResolver::new();
        resolver.set(&serving.cert, &serving.key)?;
        Ok(Self {
            ca_bundle: ca.cert,
            resolver: Arc::new(resolver),
        })
    }

    /// The CA (PEM) that the `caBundle`s must carry.
    pub fn ca_bundle(&self) -> &str {
        &self.ca_bundle
    }

    /// The serving certificate, for the webhook server's handshakes.
    pub fn resolver(&self) -> Arc<ServingCertResolver> {
        self.resolver.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client that trusts the bundle accepts the served certificate for the host, and for no
    /// other; an IP host gets an IP address SAN.
    #[test]
    fn the_serving_certificate_is_for_the_host_and_signed_by_the_bundle() {
        for host in ["192.168.1.10", "my-laptop.example.com"] {
            let certs = EphemeralCertificates::for_host(host).unwrap();
            let served = certs.resolver.current_pem().unwrap();
            let leaf = &pki::certificates(&served)[0];
            let roots = pki::certificates(certs.ca_bundle());
            let now = SystemTime::now();
            assert!(
                pki::accepted(leaf, &roots, &[host.to_owned()], now),
                "{host}"
            );
            assert!(!pki::accepted(leaf, &roots, &["10.0.0.1".to_owned()], now));
            let later = now + EPHEMERAL_VALIDITY + Duration::from_secs(60);
            assert!(!pki::accepted(leaf, &roots, &[host.to_owned()], later));
        }
    }
}
