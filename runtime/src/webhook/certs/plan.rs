//! What to do with the certificates in the Secret at a given time: keep them, or write which new
//! ones and why. A pure function of what is stored, the policy, the time and which CA is known
//! to be trusted everywhere, so that every step of the lifecycle is tested without a clock.
//!
//! The rules, in order:
//!
//! 1. The CA bundle keeps only CA certificates that have not expired: a CA that expired can no
//!    longer vouch for anything, so removing it can fail no call.
//! 2. The first CA of the bundle signs, with the key stored next to it. A new CA is made, and put
//!    first, when there is none, when the key is not its key, or when it enters its rotation
//!    window; the previous CAs stay in the bundle until they expire, so that a serving
//!    certificate they signed is still trusted wherever the new bundle arrives.
//! 3. A new serving certificate, signed by the first CA, is made when the stored one is not
//!    usable now (missing, not its key, not for the Service's names, signed by no CA of the
//!    bundle, expired), when it enters its rotation window and the first CA signed it already,
//!    or when an older CA signed it and the first CA is now trusted everywhere (the caller has
//!    seen it in every caBundle for a while). Until then a serving certificate of the previous
//!    CA is kept, even in its rotation window: switching to a CA that the API server does not
//!    trust yet is the one step that could fail an admission call.
//!
//! A serving certificate never outlives the CA that signed it.

use std::time::{Duration, SystemTime};

use rustls::pki_types::CertificateDer;

use super::pki::{self, Pair, PkiError};

/// The Secret's certificates, PEM, by the keys they are stored under.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Material {
    /// `ca.crt`: the CAs the API server must trust, the one that signs now first.
    pub ca_bundle: String,
    /// `ca.key`: the private key of the first CA of the bundle.
    pub ca_key: String,
    /// `tls.crt`: the serving certificate.
    pub cert: String,
    /// `tls.key`: its private key.
    pub key: String,
}

impl std::fmt::Debug for Material {
    /// The certificates only: keys never go into logs or test output.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Material")
            .field("ca_bundle", &self.ca_bundle)
            .field("cert", &self.cert)
            .finish_non_exhaustive()
    }
}

impl Material {
    /// The CA certificates of the bundle, in order.
    pub fn ca_certificates(&self) -> Vec<CertificateDer<'static>> {
        pki::certificates(&self.ca_bundle)
    }
}

/// How long certificates live, and for which names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Policy {
    /// The name in the CAs' common name: the webhook Service's.
    pub(super) service: String,
    /// The names the serving certificate is for.
    pub(super) dns_names: Vec<String>,
    pub(super) ca_validity: Duration,
    pub(super) ca_rotation_window: Duration,
    pub(super) cert_validity: Duration,
    pub(super) cert_rotation_window: Duration,
}

/// What changed, for the logs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Change {
    /// Expired CAs, or certificates that are no CA's, left the bundle.
    DroppedCas,
    /// A new CA signs from now on.
    NewCa(&'static str),
    /// A new serving certificate.
    NewServingCert(&'static str),
}

/// The outcome of [`plan`].
#[derive(Debug)]
pub(super) struct Plan {
    /// What to store and serve.
    pub(super) material: Material,
    /// What differs from what is stored; empty when nothing needs writing.
    pub(super) changes: Vec<Change>,
    /// When the certificates have to be looked at again at the latest: a certificate enters
    /// its rotation window, or a CA of the bundle expires.
    pub(super) next_check: SystemTime,
    /// The serving certificate is due for renewal (or signed by an older CA) but waits until
    /// the first CA of the bundle is trusted everywhere.
    pub(super) waiting_for_trust: bool,
}

/// One CA of the bundle: its PEM text (kept as read), its certificate and its expiry.
type BundleCa = (String, CertificateDer<'static>, SystemTime);

/// Decides what to store at `now`: see the rules of [the module](self). `trusted` is the CA
/// the caller has seen in every caBundle for long enough, if any.
pub(super) fn plan(
    stored: &Material,
    policy: &Policy,
    now: SystemTime,
    trusted: Option<&CertificateDer<'_>>,
) -> Result<Plan, PkiError> {
    let mut changes = Vec::new();
    let mut bundle = unexpired_cas(stored, now, &mut changes);
    let ca_key = signing_ca(&mut bundle, &stored.ca_key, policy, now, &mut changes)?;
    let (serving, waiting_for_trust) =
        serving(stored, &bundle, &ca_key, policy, now, trusted, &mut changes)?;
    let next_check = next_check(&bundle, &serving, waiting_for_trust, policy, now);
    let material = if changes.is_empty() {
        stored.clone()
    } else {
        Material {
            ca_bundle: bundle.into_iter().map(|(pem, _, _)| pem).collect(),
            ca_key,
            cert: serving.cert,
            key: serving.key,
        }
    };
    Ok(Plan {
        material,
        changes,
        next_check,
        waiting_for_trust,
    })
}

/// Rule 1: only CAs that have not expired.
fn unexpired_cas(stored: &Material, now: SystemTime, changes: &mut Vec<Change>) -> Vec<BundleCa> {
    let stored_cas = pki::pem_certificates(&stored.ca_bundle);
    let bundle: Vec<BundleCa> = stored_cas
        .iter()
        .filter(|(_, der)| pki::is_ca(der))
        .filter_map(|(pem, der)| Some((pem.clone(), der.clone(), pki::not_after(der)?)))
        .filter(|(_, _, not_after)| *not_after > now)
        .collect();
    if bundle.len() != stored_cas.len() {
        changes.push(Change::DroppedCas);
    }
    bundle
}

/// Rule 2: the first CA of `bundle` signs, unless it has to be replaced: then a new CA goes
/// first. Returns the signing CA's key.
fn signing_ca(
    bundle: &mut Vec<BundleCa>,
    stored_key: &str,
    policy: &Policy,
    now: SystemTime,
    changes: &mut Vec<Change>,
) -> Result<String, PkiError> {
    let replace_ca = match bundle.first() {
        None => Some("there is no CA"),
        Some((_, der, _)) if !pki::key_matches(der, stored_key) => {
            Some("the CA key is not the CA's")
        }
        Some((_, _, not_after)) if in_window(*not_after, policy.ca_rotation_window, now) => {
            Some("the CA enters its rotation window")
        }
        Some(_) => None,
    };
    let Some(reason) = replace_ca else {
        return Ok(stored_key.to_owned());
    };
    let ca = pki::new_ca(&policy.service, now, policy.ca_validity)?;
    let der = pki::certificates(&ca.cert).remove(0);
    let not_after = now + policy.ca_validity;
    bundle.insert(0, (ca.cert, der, not_after));
    changes.push(Change::NewCa(reason));
    Ok(ca.key)
}

/// Rule 3: the serving certificate, kept or signed anew by the first CA of `bundle` (whose key
/// is `ca_key`), and whether its renewal waits for that CA to be trusted.
fn serving(
    stored: &Material,
    bundle: &[BundleCa],
    ca_key: &str,
    policy: &Policy,
    now: SystemTime,
    trusted: Option<&CertificateDer<'_>>,
    changes: &mut Vec<Change>,
) -> Result<(Pair, bool), PkiError> {
    let (_, signer, signer_not_after) = &bundle[0];
    let roots: Vec<CertificateDer<'static>> =
        bundle.iter().map(|(_, der, _)| der.clone()).collect();
    let stored_pair = Pair {
        cert: stored.cert.clone(),
        key: stored.key.clone(),
    };
    let leaf = pki::certificates(&stored.cert).into_iter().next();
    let names = &policy.dns_names;
    let usable = |roots: &[CertificateDer<'static>], at| {
        leaf.as_ref()
            .is_some_and(|leaf| pki::accepted(leaf, roots, names, at))
    };
    let usable_now = pki::certified_key(&stored_pair).is_some() && usable(&roots, now);
    let by_signer = usable(std::slice::from_ref(signer), now);
    let expiring = !usable(&roots, now + policy.cert_rotation_window);
    let signer_trusted = trusted.is_some_and(|trusted| trusted == signer);
    let renew = if !usable_now {
        Some("the serving certificate is missing or not usable")
    } else if expiring && by_signer {
        Some("the serving certificate enters its rotation window")
    } else if !by_signer && signer_trusted {
        Some("the new CA is trusted everywhere")
    } else {
        None
    };
    let waiting_for_trust = renew.is_none() && !by_signer;
    let serving = match renew {
        Some(reason) => {
            changes.push(Change::NewServingCert(reason));
            let not_after = (now + policy.cert_validity).min(*signer_not_after);
            pki::new_serving(signer, ca_key, names, now, not_after)?
        }
        None => stored_pair,
    };
    Ok((serving, waiting_for_trust))
}

/// When the certificates have to be looked at again at the latest (not before `now`): a CA of
/// `bundle` expires, the signing CA enters its rotation window, or `serving` is due.
fn next_check(
    bundle: &[BundleCa],
    serving: &Pair,
    waiting_for_trust: bool,
    policy: &Policy,
    now: SystemTime,
) -> SystemTime {
    let signer_not_after = bundle[0].2;
    let serving_not_after = pki::certificates(&serving.cert)
        .first()
        .and_then(pki::not_after)
        .unwrap_or(now);
    // A serving certificate is due at the start of its rotation window, unless its renewal waits
    // for the new CA to be trusted: then time alone changes nothing before it expires (the caller
    // knows when the trust comes). Its window start is already past then, and counting it would
    // make every pass due at once, back to back, until the trust delay is over.
    let serving_due = if waiting_for_trust {
        serving_not_after
    } else {
        serving_not_after
            .checked_sub(policy.cert_rotation_window)
            .unwrap_or(now)
    };
    bundle
        .iter()
        .map(|(_, _, not_after)| *not_after)
        .chain([
            signer_not_after
                .checked_sub(policy.ca_rotation_window)
                .unwrap_or(now),
            serving_due,
        ])
        .min()
        .unwrap_or(now)
        .max(now)
}

/// Whether a certificate that expires at `not_after` is within `window` of it at `now`.
fn in_window(not_after: SystemTime, window: Duration, now: SystemTime) -> bool {
    not_after
        .checked_sub(window)
        .is_none_or(|start| now >= start)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: Duration = Duration::from_secs(60 * 60);
    const DAY: Duration = Duration::from_secs(24 * 60 * 60);

    fn policy() -> Policy {
        Policy {
            service: "webhook-service".to_owned(),
            dns_names: vec![
                "webhook-service.system.svc".to_owned(),
                "webhook-service.system.svc.cluster.local".to_owned(),
            ],
            ca_validity: 365 * DAY,
            ca_rotation_window: 60 * DAY,
            cert_validity: 90 * DAY,
            cert_rotation_window: 30 * DAY,
        }
    }

    fn accepted(material: &Material, at: SystemTime) -> bool {
        let leaf = &pki::certificates(&material.cert)[0];
        pki::accepted(leaf, &material.ca_certificates(), &policy().dns_names, at)
    }

    #[test]
    fn creates_then_keeps() {
        let start = SystemTime::now();
        let created = plan(&Material::default(), &policy(), start, None).unwrap();
        assert_eq!(
            created.changes,
            [
                Change::NewCa("there is no CA"),
                Change::NewServingCert("the serving certificate is missing or not usable"),
            ]
        );
        assert!(accepted(&created.material, start));
        assert_eq!(created.material.ca_certificates().len(), 1);
        // Checked again when the serving certificate enters its window (60 days from now).
        let due = start + 60 * DAY;
        assert!(
            created.next_check <= due
                && due.duration_since(created.next_check).unwrap() < Duration::from_secs(2)
        );

        let later = start + 59 * DAY;
        let kept = plan(&created.material, &policy(), later, None).unwrap();
        assert!(kept.changes.is_empty(), "{:?}", kept.changes);
        assert_eq!(kept.material, created.material);
    }

    #[test]
    fn renews_the_serving_certificate_in_its_window_with_the_same_ca() {
        let start = SystemTime::now();
        let created = plan(&Material::default(), &policy(), start, None)
            .unwrap()
            .material;
        let in_window = start + 61 * DAY;
        let renewed = plan(&created, &policy(), in_window, None).unwrap();
        assert_eq!(
            renewed.changes,
            [Change::NewServingCert(
                "the serving certificate enters its rotation window"
            )]
        );
        assert_eq!(renewed.material.ca_bundle, created.ca_bundle);
        assert_eq!(renewed.material.ca_key, created.ca_key);
        assert_ne!(renewed.material.cert, created.cert);
        assert!(accepted(&renewed.material, in_window + 80 * DAY));
    }

    /// The certificates as they are on day 300 of a CA made on day 0, renewed every 30 days
    /// with the CA trusted: the serving certificate of day 300 expires with the CA, on day 365.
    fn day_300(start: SystemTime) -> Material {
        let mut material = plan(&Material::default(), &policy(), start, None)
            .unwrap()
            .material;
        let ca = material.ca_certificates().remove(0);
        let mut now = start;
        while now < start + 300 * DAY {
            now += 30 * DAY;
            material = plan(&material, &policy(), now, Some(&ca)).unwrap().material;
        }
        material
    }

    /// The CA rotation in three steps: a new CA joins the bundle while the old one's serving
    /// certificate is kept; once the new CA is trusted it signs the serving certificate; the old
    /// CA leaves the bundle when it expires. Every step's serving certificate is accepted by the
    /// bundle of the step before and of the step after.
    #[test]
    fn rotates_the_ca_with_an_overlap() {
        let start = SystemTime::now();
        let material = day_300(start);
        let old_ca = material.ca_certificates().remove(0);

        // Day 306: the CA enters its 60-day window; the serving certificate is not due.
        let mut now = start + 306 * DAY;
        let rotated = plan(&material, &policy(), now, Some(&old_ca)).unwrap();
        assert_eq!(
            rotated.changes,
            [Change::NewCa("the CA enters its rotation window")]
        );
        assert!(rotated.waiting_for_trust);
        let bundle = rotated.material.ca_certificates();
        assert_eq!(bundle.len(), 2);
        assert_eq!(bundle[1], old_ca);
        assert_eq!(rotated.material.cert, material.cert, "kept until trusted");
        assert!(accepted(&rotated.material, now));

        // Not trusted yet: nothing to write.
        let waiting = plan(&rotated.material, &policy(), now + HOUR, Some(&old_ca)).unwrap();
        assert!(waiting.changes.is_empty());
        assert!(waiting.waiting_for_trust);

        // Trusted: the new CA signs a new serving certificate.
        let new_ca = bundle[0].clone();
        now += 2 * HOUR;
        let switched = plan(&rotated.material, &policy(), now, Some(&new_ca)).unwrap();
        assert_eq!(
            switched.changes,
            [Change::NewServingCert("the new CA is trusted everywhere")]
        );
        assert!(!switched.waiting_for_trust);
        assert_eq!(switched.material.ca_bundle, rotated.material.ca_bundle);
        let leaf = &pki::certificates(&switched.material.cert)[0];
        let names = &policy().dns_names;
        assert!(pki::accepted(
            leaf,
            std::slice::from_ref(&new_ca),
            names,
            now
        ));
        // The bundle a caBundle may still hold (both CAs) accepts it, and the new bundle still
        // accepts the old serving certificate, which replicas serve until they reload.
        assert!(pki::accepted(leaf, &bundle, names, now));
        assert!(accepted(&rotated.material, now));

        // Day 366: the old CA expired and leaves the bundle.
        now = start + 366 * DAY;
        let pruned = plan(&switched.material, &policy(), now, Some(&new_ca)).unwrap();
        assert_eq!(pruned.changes, [Change::DroppedCas]);
        assert_eq!(pruned.material.ca_certificates(), [new_ca]);
        assert_eq!(pruned.material.cert, switched.material.cert);
        assert!(accepted(&pruned.material, now));
    }

    /// While the new CA is not trusted, the old CA's serving certificate is kept through its
    /// rotation window; when it expires, the new CA signs: nothing else can be served.
    #[test]
    fn an_untrusted_new_ca_signs_once_the_old_certificate_expires() {
        let start = SystemTime::now();
        let rotated = plan(&day_300(start), &policy(), start + 306 * DAY, None)
            .unwrap()
            .material;
        let in_window = plan(&rotated, &policy(), start + 340 * DAY, None).unwrap();
        assert!(in_window.changes.is_empty(), "{:?}", in_window.changes);
        assert!(in_window.waiting_for_trust);

        let expired = pki::not_after(&pki::certificates(&rotated.cert)[0]).unwrap();
        let after = expired + Duration::from_secs(1);
        let forced = plan(&rotated, &policy(), after, None).unwrap();
        let renewed = Change::NewServingCert("the serving certificate is missing or not usable");
        assert_eq!(
            forced.changes.last(),
            Some(&renewed),
            "{:?}",
            forced.changes
        );
        let new_ca = rotated.ca_certificates().remove(0);
        let leaf = &pki::certificates(&forced.material.cert)[0];
        assert!(pki::accepted(leaf, &[new_ca], &policy().dns_names, after));
    }

    #[test]
    fn replaces_what_is_broken() {
        let start = SystemTime::now();
        let good = plan(&Material::default(), &policy(), start, None)
            .unwrap()
            .material;

        let wrong_ca_key = Material {
            ca_key: good.key.clone(),
            ..good.clone()
        };
        let fixed = plan(&wrong_ca_key, &policy(), start, None).unwrap();
        assert_eq!(fixed.changes, [Change::NewCa("the CA key is not the CA's")]);
        // The old CA stays trusted (it is valid); the serving certificate is still good.
        assert_eq!(fixed.material.ca_certificates().len(), 2);
        assert_eq!(fixed.material.cert, good.cert);

        let other_names = Policy {
            dns_names: vec!["renamed.system.svc".to_owned()],
            ..policy()
        };
        let renamed = plan(&good, &other_names, start, None).unwrap();
        assert_eq!(
            renamed.changes,
            [Change::NewServingCert(
                "the serving certificate is missing or not usable"
            )]
        );

        let garbage = Material {
            ca_bundle: "garbage".to_owned(),
            ..good
        };
        let replaced = plan(&garbage, &policy(), start, None).unwrap();
        assert_eq!(replaced.changes.len(), 2, "{:?}", replaced.changes);
        assert!(accepted(&replaced.material, start));
    }
}
