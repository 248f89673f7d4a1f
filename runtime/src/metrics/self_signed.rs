//! The metrics server's certificate when it is given none: self-signed, made at every start and
//! kept in memory only, as controller-runtime's metrics server makes its own.
//!
//! Every manager serves `/metrics` over HTTPS by default, and most have no certificate authority
//! to link (that is the `webhooks` feature's, with rcgen): this is the one certificate every
//! manager makes, written here in a few lines of DER with yasna (the DER writer rcgen uses) and
//! signed with ring, the crypto provider rustls already links. Prometheus scrapes it without
//! verifying it (`insecureSkipVerify` in `config/prometheus/monitor.yaml`), as kubebuilder's.

use std::net::IpAddr;
use std::time::Duration;

use ring::rand::{SecureRandom as _, SystemRandom};
use ring::signature::{ECDSA_P256_SHA256_ASN1_SIGNING, EcdsaKeyPair, KeyPair as _};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use yasna::models::{ObjectIdentifier, TaggedDerValue};
use yasna::tags::TAG_UTCTIME;
use yasna::{DERWriter, Tag};

/// How long the certificate is valid: a year, like controller-runtime's self-signed certificates
/// (client-go's `GenerateSelfSignedCertKey`); a manager runs with it until it restarts.
const VALIDITY: Duration = Duration::from_secs(365 * 24 * 60 * 60);

/// How far before now the certificate is valid from, for clocks a little behind this one's.
const BACKDATE: Duration = Duration::from_secs(60 * 60);

const ECDSA_WITH_SHA256: &[u64] = &[1, 2, 840, 10045, 4, 3, 2];
const EC_PUBLIC_KEY: &[u64] = &[1, 2, 840, 10045, 2, 1];
const PRIME256V1: &[u64] = &[1, 2, 840, 10045, 3, 1, 7];
const COMMON_NAME: &[u64] = &[2, 5, 4, 3];
const SUBJECT_ALT_NAME: &[u64] = &[2, 5, 29, 17];

/// Why no certificate could be made: ring found no randomness or refused the key it made.
#[derive(Debug, thiserror::Error)]
#[error("cannot make a key for the self-signed certificate: {0}")]
pub struct SelfSignedError(String);

/// A certificate for `names` (host names, or IP addresses) signed by its own new P-256 key, and
/// that key.
pub fn certificate(
    names: &[String],
) -> Result<(CertificateDer<'static>, PrivateKeyDer<'static>), SelfSignedError> {
    let random = SystemRandom::new();
    let failed = |error: &dyn std::fmt::Display| SelfSignedError(error.to_string());
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &random)
        .map_err(|e| failed(&e))?;
    let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, pkcs8.as_ref(), &random)
        .map_err(|e| failed(&e))?;
    let mut serial = [0u8; 16];
    random.fill(&mut serial).map_err(|e| failed(&e))?;
    serial[0] &= 0x7f; // a positive INTEGER
    let now = jiff::Timestamp::now();
    let validity = (now - BACKDATE, now + VALIDITY);
    let tbs = to_be_signed(names, &serial, key.public_key().as_ref(), validity);
    let signature = key.sign(&random, &tbs).map_err(|e| failed(&e))?;
    let certificate = yasna::construct_der(|writer| {
        writer.write_sequence(|certificate| {
            certificate.next().write_der(&tbs);
            algorithm(certificate.next());
            let signature = signature.as_ref();
            certificate
                .next()
                .write_bitvec_bytes(signature, signature.len() * 8);
        });
    });
    let key = PrivatePkcs8KeyDer::from(pkcs8.as_ref().to_vec());
    Ok((CertificateDer::from(certificate), PrivateKeyDer::Pkcs8(key)))
}

/// The TBSCertificate of RFC 5280: a v3 certificate whose issuer and subject are its first name.
fn to_be_signed(
    names: &[String],
    serial: &[u8],
    public_key: &[u8],
    (not_before, not_after): (jiff::Timestamp, jiff::Timestamp),
) -> Vec<u8> {
    let common_name = names.first().map_or("localhost", String::as_str);
    yasna::construct_der(|writer| {
        writer.write_sequence(|tbs| {
            tbs.next()
                .write_tagged(Tag::context(0), |version| version.write_u8(2));
            tbs.next().write_bigint_bytes(serial, true);
            algorithm(tbs.next());
            name(tbs.next(), common_name);
            tbs.next().write_sequence(|validity| {
                utc_time(validity.next(), not_before);
                utc_time(validity.next(), not_after);
            });
            name(tbs.next(), common_name);
            tbs.next().write_sequence(|info| {
                info.next().write_sequence(|algorithm| {
                    algorithm.next().write_oid(&oid(EC_PUBLIC_KEY));
                    algorithm.next().write_oid(&oid(PRIME256V1));
                });
                info.next()
                    .write_bitvec_bytes(public_key, public_key.len() * 8);
            });
            tbs.next().write_tagged(Tag::context(3), |extensions| {
                extensions.write_sequence(|extensions| {
                    extensions.next().write_sequence(|extension| {
                        extension.next().write_oid(&oid(SUBJECT_ALT_NAME));
                        extension.next().write_bytes(&alt_names(names));
                    });
                });
            });
        });
    })
}

/// The subjectAltName extension's value: each name as a dNSName, or an iPAddress when it is one.
fn alt_names(names: &[String]) -> Vec<u8> {
    yasna::construct_der(|writer| {
        writer.write_sequence(|general_names| {
            for name in names {
                match name.parse::<IpAddr>() {
                    Ok(IpAddr::V4(ip)) => general_names
                        .next()
                        .write_tagged_implicit(Tag::context(7), |w| w.write_bytes(&ip.octets())),
                    Ok(IpAddr::V6(ip)) => general_names
                        .next()
                        .write_tagged_implicit(Tag::context(7), |w| w.write_bytes(&ip.octets())),
                    Err(_) => general_names
                        .next()
                        .write_tagged_implicit(Tag::context(2), |w| w.write_ia5_string(name)),
                }
            }
        });
    })
}

/// ecdsa-with-SHA256, without parameters (RFC 5758).
fn algorithm(writer: DERWriter) {
    writer.write_sequence(|algorithm| algorithm.next().write_oid(&oid(ECDSA_WITH_SHA256)));
}

/// A Name of one RDN: the common name `common_name`.
fn name(writer: DERWriter, common_name: &str) {
    writer.write_sequence(|rdns| {
        rdns.next().write_set(|rdn| {
            rdn.next().write_sequence(|attribute| {
                attribute.next().write_oid(&oid(COMMON_NAME));
                attribute.next().write_utf8_string(common_name);
            });
        });
    });
}

/// `time` as an UTCTime (`YYMMDDHHMMSSZ`), which RFC 5280 asks for until 2049.
fn utc_time(writer: DERWriter, time: jiff::Timestamp) {
    let text = time.strftime("%y%m%d%H%M%SZ").to_string();
    writer.write_tagged_der(&TaggedDerValue::from_tag_and_bytes(
        TAG_UTCTIME,
        text.into_bytes(),
    ));
}

fn oid(components: &[u64]) -> ObjectIdentifier {
    ObjectIdentifier::from_slice(components)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use rustls::RootCertStore;
    use rustls::client::WebPkiServerVerifier;
    use rustls::client::danger::ServerCertVerifier as _;
    use rustls::pki_types::{ServerName, UnixTime};

    use super::*;

    fn provider() -> Arc<rustls::crypto::CryptoProvider> {
        Arc::new(rustls::crypto::ring::default_provider())
    }

    /// The certificate verifies as a trust anchor of its own for each of its names (webpki parses
    /// it, checks its signature, validity and subjectAltName), and rustls serves it with its key.
    #[test]
    fn the_certificate_verifies_for_its_names_and_serves_with_its_key() {
        let names = [
            "localhost".to_owned(),
            "manager-7d9f".to_owned(),
            "10.0.0.7".to_owned(),
        ];
        let (certificate, key) = certificate(&names).unwrap();
        let mut roots = RootCertStore::empty();
        roots.add(certificate.clone()).unwrap();
        let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider())
            .build()
            .unwrap();
        for name in ["localhost", "manager-7d9f", "10.0.0.7"] {
            let server = ServerName::try_from(name).unwrap();
            let verified =
                verifier.verify_server_cert(&certificate, &[], &server, &[], UnixTime::now());
            assert!(verified.is_ok(), "{name}: {verified:?}");
        }
        let other = ServerName::try_from("elsewhere").unwrap();
        assert!(
            verifier
                .verify_server_cert(&certificate, &[], &other, &[], UnixTime::now())
                .is_err()
        );
        let config = rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![certificate], key);
        assert!(config.is_ok(), "{config:?}");
    }

    /// Valid from an hour ago (clock skew) for a year, and a fresh key and serial at every call.
    #[test]
    fn valid_for_a_year_with_a_new_key_each_time() {
        let names = ["localhost".to_owned()];
        let (first, _) = certificate(&names).unwrap();
        let (second, _) = certificate(&names).unwrap();
        assert_ne!(first, second);
        let now = UnixTime::now().as_secs();
        let mut roots = RootCertStore::empty();
        roots.add(first.clone()).unwrap();
        let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider())
            .build()
            .unwrap();
        let server = ServerName::try_from("localhost").unwrap();
        let at = |secs: u64| {
            let time = UnixTime::since_unix_epoch(Duration::from_secs(secs));
            verifier
                .verify_server_cert(&first, &[], &server, &[], time)
                .is_ok()
        };
        assert!(at(now - 30 * 60));
        assert!(!at(now - 2 * 60 * 60));
        assert!(at(now + 364 * 24 * 60 * 60));
        assert!(!at(now + 366 * 24 * 60 * 60));
    }
}
