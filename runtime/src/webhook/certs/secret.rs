//! The Secret that holds the certificates, and how replicas that race to write it agree.
//!
//! Every replica reads the Secret, [`plan`]s, and writes only when the plan changes something:
//! a create when there is no Secret, else a replace that carries the `resourceVersion` it read.
//! When two replicas write at once, the API server takes the first write and refuses the other
//! (`409 AlreadyExists` for a create, `409 Conflict` for a replace); the loser reads the
//! winner's Secret and plans again, which keeps it, since the winner's certificates are as good
//! as its own. So exactly one version is stored, and every replica serves it. No leader is
//! needed: replicas that are not the leader serve webhooks too, and must not wait for one.

use std::collections::BTreeMap;
use std::time::SystemTime;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client};
use rustls::pki_types::CertificateDer;

use super::CertsError;
use super::plan::{Material, Plan, Policy, plan};

/// The key of the CA bundle in the Secret (cert-manager's name for it).
pub const CA_BUNDLE_KEY: &str = "ca.crt";
/// The key of the CA's private key in the Secret.
pub const CA_KEY_KEY: &str = "ca.key";
/// The key of the serving certificate (a `kubernetes.io/tls` Secret's).
pub const CERT_KEY: &str = "tls.crt";
/// The key of the serving certificate's private key (a `kubernetes.io/tls` Secret's).
pub const KEY_KEY: &str = "tls.key";

/// How often a replica re-reads and plans again when its writes keep losing races, before the
/// pass fails (and is retried later).
const ATTEMPTS: usize = 5;

/// The certificates of `secret` (empty strings for keys it lacks).
pub fn material_of(secret: &Secret) -> Material {
    let data = secret.data.as_ref();
    let text = |key: &str| {
        data.and_then(|data| data.get(key))
            .map(|bytes| String::from_utf8_lossy(&bytes.0).into_owned())
            .unwrap_or_default()
    };
    Material {
        ca_bundle: text(CA_BUNDLE_KEY),
        ca_key: text(CA_KEY_KEY),
        cert: text(CERT_KEY),
        key: text(KEY_KEY),
    }
}

/// `material` as the data of the Secret.
fn data_of(material: &Material) -> BTreeMap<String, ByteString> {
    [
        (CA_BUNDLE_KEY, &material.ca_bundle),
        (CA_KEY_KEY, &material.ca_key),
        (CERT_KEY, &material.cert),
        (KEY_KEY, &material.key),
    ]
    .into_iter()
    .map(|(key, value)| (key.to_owned(), ByteString(value.clone().into_bytes())))
    .collect()
}

/// What a pass over the Secret found or wrote.
#[derive(Debug)]
pub(super) struct Stored {
    /// The plan for what is stored now.
    pub(super) plan: Plan,
    /// Whether this replica wrote the Secret.
    pub(super) wrote: bool,
}

/// Reads the Secret `name`, and writes it when [`plan`] changes something, re-reading and
/// planning again when another replica wrote first (see [the module](self)).
pub(super) async fn reconcile(
    client: &Client,
    namespace: &str,
    name: &str,
    policy: &Policy,
    now: SystemTime,
    trusted: Option<&CertificateDer<'_>>,
) -> Result<Stored, CertsError> {
    let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let failed = |source| CertsError::Secret {
        namespace: namespace.to_owned(),
        name: name.to_owned(),
        source,
    };
    for _ in 0..ATTEMPTS {
        let current = api.get_opt(name).await.map_err(failed)?;
        let stored = current.as_ref().map(material_of).unwrap_or_default();
        let plan = plan(&stored, policy, now, trusted)?;
        if plan.changes.is_empty() {
            return Ok(Stored { plan, wrote: false });
        }
        let written = match current {
            None => {
                let secret = Secret {
                    metadata: ObjectMeta {
                        name: Some(name.to_owned()),
                        namespace: Some(namespace.to_owned()),
                        labels: Some(BTreeMap::from([(
                            "app.kubernetes.io/managed-by".to_owned(),
                            "operator-rs-runtime".to_owned(),
                        )])),
                        ..ObjectMeta::default()
                    },
                    type_: Some("kubernetes.io/tls".to_owned()),
                    data: Some(data_of(&plan.material)),
                    ..Secret::default()
                };
                api.create(&PostParams::default(), &secret).await
            }
            Some(mut secret) => {
                // The resourceVersion read stays in the metadata: the precondition of the write.
                let data = secret.data.get_or_insert_default();
                data.extend(data_of(&plan.material));
                api.replace(name, &PostParams::default(), &secret).await
            }
        };
        match written {
            Ok(_) => return Ok(Stored { plan, wrote: true }),
            Err(kube::Error::Api(status)) if status.is_already_exists() || status.is_conflict() => {
                tracing::debug!(
                    secret = name,
                    "another replica wrote the webhook certificates first; reading theirs"
                );
            }
            Err(error) => return Err(failed(error)),
        }
    }
    Err(CertsError::Contended {
        namespace: namespace.to_owned(),
        name: name.to_owned(),
        attempts: ATTEMPTS,
    })
}
