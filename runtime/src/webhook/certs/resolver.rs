//! The serving certificate as the webhook server's TLS handshakes get it: a rustls
//! [`ResolvesServerCert`] whose certificate is swapped when the Secret changes. A handshake takes
//! the certificate current at its start; connections already open keep theirs, so a swap drops
//! no request in flight and needs no restart.

use std::sync::{Arc, PoisonError, RwLock};

use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

use super::pki::{self, Pair};

/// The serving certificate of the webhook server in the self-signed mode, swapped when the
/// Secret changes: a handshake takes the certificate current at its start, and connections
/// already open keep theirs, so a swap drops no request in flight. Until a first certificate is
/// [`set`](Self::set), handshakes fail.
#[derive(Debug, Default)]
pub struct ServingCertResolver {
    current: RwLock<Option<Served>>,
}

#[derive(Debug)]
struct Served {
    /// The certificate's PEM, to tell whether a new one differs.
    cert_pem: String,
    key: Arc<CertifiedKey>,
}

impl ServingCertResolver {
    /// A resolver without a certificate yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Serves `cert` with `key` (PEM) from the next handshake on. Returns whether the
    /// certificate changed; a pair that does not parse or whose key is not the certificate's is
    /// refused (`Err`), and the current one stays.
    pub fn set(&self, cert: &str, key: &str) -> Result<bool, InvalidServingCert> {
        let mut current = self.current.write().unwrap_or_else(PoisonError::into_inner);
        if current
            .as_ref()
            .is_some_and(|served| served.cert_pem == cert)
        {
            return Ok(false);
        }
        let pair = Pair {
            cert: cert.to_owned(),
            key: key.to_owned(),
        };
        let certified = pki::certified_key(&pair).ok_or(InvalidServingCert)?;
        *current = Some(Served {
            cert_pem: pair.cert,
            key: Arc::new(certified),
        });
        Ok(true)
    }

    /// The certificate served now (PEM), if any.
    pub fn current_pem(&self) -> Option<String> {
        let current = self.current.read().unwrap_or_else(PoisonError::into_inner);
        current.as_ref().map(|served| served.cert_pem.clone())
    }
}

/// A serving certificate and key that rustls cannot serve.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the serving certificate or key does not parse, or the key is not the certificate's")]
pub struct InvalidServingCert;

impl ResolvesServerCert for ServingCertResolver {
    fn resolve(&self, _client_hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let current = self.current.read().unwrap_or_else(PoisonError::into_inner);
        current.as_ref().map(|served| served.key.clone())
    }
}
