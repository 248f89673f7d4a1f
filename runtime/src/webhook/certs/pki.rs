//! The certificates themselves: making a CA and the serving certificate it signs (rcgen, ECDSA
//! P-256 keys), and judging stored ones: when they expire (x509-parser), and whether a TLS client
//! that trusts a CA bundle accepts a serving certificate for the Service's names at a given time
//! (rustls's own WebPKI verifier, so the check is the handshake's check, not a copy of it).

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose,
};
use rustls::RootCertStore;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::ServerCertVerifier as _;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::sign::CertifiedKey;

/// How far back `notBefore` is set: the API server checks it (of the CA too) on its own clock,
/// which may be a little behind the manager's node.
pub(super) const BACKDATE: Duration = Duration::from_secs(60 * 60);

/// Why certificates cannot be made.
#[derive(Debug, thiserror::Error)]
#[error("cannot make the webhook certificates: {0}")]
pub struct PkiError(#[from] rcgen::Error);

/// A certificate and its private key, PEM.
#[derive(Clone, PartialEq, Eq)]
pub(super) struct Pair {
    pub(super) cert: String,
    pub(super) key: String,
}

impl std::fmt::Debug for Pair {
    /// The certificate only: keys never go into logs or test output.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pair")
            .field("cert", &self.cert)
            .finish_non_exhaustive()
    }
}

/// The ring provider, explicitly, as everywhere in the runtime: kube's client uses it.
pub(super) fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn datetime(at: SystemTime) -> time::OffsetDateTime {
    let seconds = unix_seconds(at);
    time::OffsetDateTime::from_unix_timestamp(seconds).unwrap_or(time::OffsetDateTime::UNIX_EPOCH)
}

fn unix_seconds(at: SystemTime) -> i64 {
    match at.duration_since(UNIX_EPOCH) {
        Ok(since) => i64::try_from(since.as_secs()).unwrap_or(i64::MAX),
        Err(_) => 0,
    }
}

/// A new CA named after `service` and the time it was made (`<service>-ca@<unix seconds>`, as
/// client-go names its self-signed CAs), so that two generations of the CA never share a name,
/// valid from `now` (less [`BACKDATE`]) for `validity`. It may sign serving certificates only
/// (path length 0).
pub(super) fn new_ca(service: &str, now: SystemTime, validity: Duration) -> Result<Pair, PkiError> {
    let key = KeyPair::generate()?;
    let mut params = CertificateParams::default();
    let mut name = DistinguishedName::new();
    name.push(
        DnType::CommonName,
        format!("{service}-ca@{}", unix_seconds(now)),
    );
    params.distinguished_name = name;
    params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    params.not_before = datetime(now - BACKDATE);
    params.not_after = datetime(now + validity);
    let cert = params.self_signed(&key)?;
    Ok(Pair {
        cert: cert.pem(),
        key: key.serialize_pem(),
    })
}

/// A new serving certificate for `dns_names` (the first is also its common name), signed by the
/// CA `ca_cert` with its key `ca_key` (PEM), valid from `now` (less [`BACKDATE`]) until
/// `not_after`.
pub(super) fn new_serving(
    ca_cert: &CertificateDer<'_>,
    ca_key: &str,
    dns_names: &[String],
    now: SystemTime,
    not_after: SystemTime,
) -> Result<Pair, PkiError> {
    let ca_key = KeyPair::from_pem(ca_key)?;
    let issuer = Issuer::from_ca_cert_der(ca_cert, ca_key)?;
    let key = KeyPair::generate()?;
    let mut params = CertificateParams::new(dns_names.to_vec())?;
    let mut name = DistinguishedName::new();
    if let Some(first) = dns_names.first() {
        name.push(DnType::CommonName, first.as_str());
    }
    params.distinguished_name = name;
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.use_authority_key_identifier_extension = true;
    params.not_before = datetime(now - BACKDATE);
    params.not_after = datetime(not_after);
    let cert = params.signed_by(&key, &issuer)?;
    Ok(Pair {
        cert: cert.pem(),
        key: key.serialize_pem(),
    })
}

/// The certificates of a PEM bundle, in order; what does not parse is left out.
pub(super) fn certificates(pem: &str) -> Vec<CertificateDer<'static>> {
    CertificateDer::pem_slice_iter(pem.as_bytes())
        .filter_map(Result::ok)
        .collect()
}

/// Each certificate of a PEM bundle with its own PEM text, in order; what does not parse is
/// left out. (Kept as text so that a bundle written again is byte for byte what was read.)
pub(super) fn pem_certificates(pem: &str) -> Vec<(String, CertificateDer<'static>)> {
    const END: &str = "-----END CERTIFICATE-----";
    let mut found = Vec::new();
    let mut rest = pem;
    while let Some(start) = rest.find("-----BEGIN CERTIFICATE-----") {
        let Some(length) = rest[start..].find(END) else {
            break;
        };
        let block = &rest[start..start + length + END.len()];
        if let Ok(der) = CertificateDer::from_pem_slice(block.as_bytes()) {
            found.push((format!("{block}\n"), der));
        }
        rest = &rest[start + length + END.len()..];
    }
    found
}

/// Whether `key` (PEM) is the private key of `cert`.
pub(super) fn key_matches(cert: &CertificateDer<'static>, key: &str) -> bool {
    PrivateKeyDer::from_pem_slice(key.as_bytes())
        .is_ok_and(|key| CertifiedKey::from_der(vec![cert.clone()], key, &provider()).is_ok())
}

/// When a certificate expires (its `notAfter`), or `None` if it does not parse.
pub(super) fn not_after(der: &CertificateDer<'_>) -> Option<SystemTime> {
    let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
    let seconds = u64::try_from(cert.validity().not_after.timestamp()).ok()?;
    Some(UNIX_EPOCH + Duration::from_secs(seconds))
}

/// Whether a certificate is a CA's (basic constraints `cA: true`).
pub(super) fn is_ca(der: &CertificateDer<'_>) -> bool {
    x509_parser::parse_x509_certificate(der).is_ok_and(|(_, cert)| cert.is_ca())
}

/// The certificate and key of `pair` as rustls serves them, if the PEM parses and the key is
/// the certificate's.
pub(super) fn certified_key(pair: &Pair) -> Option<CertifiedKey> {
    let chain = certificates(&pair.cert);
    if chain.is_empty() {
        return None;
    }
    let key = PrivateKeyDer::from_pem_slice(pair.key.as_bytes()).ok()?;
    CertifiedKey::from_der(chain, key, &provider()).ok()
}

/// Whether a client that trusts exactly `roots` accepts `serving` for every one of `dns_names`
/// at time `at`: signed by one of them, for those names, for serving, and valid then.
pub(super) fn accepted(
    serving: &CertificateDer<'_>,
    roots: &[CertificateDer<'static>],
    dns_names: &[String],
    at: SystemTime,
) -> bool {
    let mut store = RootCertStore::empty();
    for root in roots {
        // A root that is not a usable trust anchor trusts nothing.
        let _ = store.add(root.clone());
    }
    if store.is_empty() {
        return false;
    }
    let Ok(verifier) =
        WebPkiServerVerifier::builder_with_provider(Arc::new(store), provider()).build()
    else {
        return false;
    };
    let Ok(since_epoch) = at.duration_since(UNIX_EPOCH) else {
        return false;
    };
    let now = UnixTime::since_unix_epoch(since_epoch);
    dns_names.iter().all(|name| {
        ServerName::try_from(name.clone()).is_ok_and(|name| {
            verifier
                .verify_server_cert(serving, &[], &name, &[], now)
                .is_ok()
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: Duration = Duration::from_secs(24 * 60 * 60);

    fn names() -> Vec<String> {
        vec![
            "webhook-service.system.svc".to_owned(),
            "webhook-service.system.svc.cluster.local".to_owned(),
        ]
    }

    #[test]
    fn a_ca_signs_a_serving_certificate_that_clients_accept() {
        let now = SystemTime::now();
        let ca = new_ca("webhook-service", now, 365 * DAY).unwrap();
        let ca_der = certificates(&ca.cert);
        assert_eq!(ca_der.len(), 1);
        assert!(is_ca(&ca_der[0]));
        assert!(key_matches(&ca_der[0], &ca.key), "the key is the CA's");
        let expires = not_after(&ca_der[0]).unwrap();
        let expected = now + 365 * DAY;
        assert!(
            expires <= expected
                && expected.duration_since(expires).unwrap() < Duration::from_secs(1)
        );

        let serving = new_serving(&ca_der[0], &ca.key, &names(), now, now + 30 * DAY).unwrap();
        let leaf = &certificates(&serving.cert)[0];
        assert!(!is_ca(leaf));
        assert!(certified_key(&serving).is_some());
        assert!(accepted(leaf, &ca_der, &names(), now));
        // Not for other names, not after it expires, not by another CA.
        assert!(!accepted(leaf, &ca_der, &["other.svc".to_owned()], now));
        assert!(!accepted(leaf, &ca_der, &names(), now + 31 * DAY));
        let other = new_ca("webhook-service", now, DAY).unwrap();
        assert!(!accepted(leaf, &certificates(&other.cert), &names(), now));
        // A bundle with both CAs accepts it.
        let both = [certificates(&other.cert), ca_der].concat();
        assert!(accepted(leaf, &both, &names(), now));
    }

    #[test]
    fn bundles_split_into_their_certificates_as_written() {
        let now = SystemTime::now();
        let (a, b) = (
            new_ca("a", now, DAY).unwrap(),
            new_ca("b", now, DAY).unwrap(),
        );
        let bundle = format!("{}{}", a.cert, b.cert);
        let split = pem_certificates(&format!("junk\n{bundle}-----BEGIN CERTIFICATE-----\nbad"));
        let texts: Vec<&str> = split.iter().map(|(text, _)| text.as_str()).collect();
        assert_eq!(texts, [a.cert.as_str(), b.cert.as_str()]);
        assert_eq!(split[1].1, certificates(&b.cert)[0]);
    }

    #[test]
    fn keys_that_do_not_match_are_refused() {
        let now = SystemTime::now();
        let ca = new_ca("svc", now, DAY).unwrap();
        let other = new_ca("svc", now, DAY).unwrap();
        let mixed = Pair {
            cert: ca.cert,
            key: other.key,
        };
        assert!(certified_key(&mixed).is_none());
        assert!(!key_matches(&certificates(&mixed.cert)[0], &mixed.key));
        assert!(format!("{mixed:?}").contains("BEGIN CERTIFICATE"));
        assert!(!format!("{mixed:?}").contains("PRIVATE KEY"));
    }
}
