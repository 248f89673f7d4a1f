//! The temporary webhook configurations of a manager run outside the cluster: copies of those
//! `make manifests` writes ([`webhook_manifests`]), under names of their own, with every
//! webhook's `clientConfig` a URL on the manager instead of the webhook Service.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::WebhookClientConfig;

use super::WebhookUrl;
use crate::webhook::{Webhook, WebhookManifests, webhook_manifests};

/// The label that marks the temporary configurations, with [`MANAGED_BY`] as its value.
pub const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";

/// The value of [`MANAGED_BY_LABEL`]: the runtime's, as on the self-signed mode's Secret.
pub const MANAGED_BY: &str = "operator-rs-runtime";

/// The names of the temporary configurations of the project whose leader election ID is
/// `project_id` (`<hash of the project name>.<domain>`, unique per project): the same on every
/// run, so that a run replaces what an earlier run could not remove; different from the deployed
/// configurations' (`<project>-mutating-webhook-configuration` …), so that neither replaces the
/// other; and different between projects sharing a cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Names {
    /// The MutatingWebhookConfiguration's.
    pub mutating: String,
    /// The ValidatingWebhookConfiguration's.
    pub validating: String,
}

impl Names {
    /// The names for `project_id`.
    pub fn new(project_id: &str) -> Self {
        Self {
            mutating: format!("make-run-mutating.{project_id}"),
            validating: format!("make-run-validating.{project_id}"),
        }
    }
}

/// The configurations of `webhooks` as the manager at `url` registers them: each webhook at
/// `<url><path>`, trusting `ca_bundle` (PEM), under [`Names`], labelled as the runtime's. A kind
/// of configuration the project has no webhook for is `None`, as in `make manifests`.
pub fn configurations(
    webhooks: &[Webhook],
    url: &WebhookUrl,
    ca_bundle: &str,
    names: &Names,
) -> WebhookManifests {
    let mut manifests = webhook_manifests(webhooks);
    let client_config = |deployed: &WebhookClientConfig| {
        let path = deployed
            .service
            .as_ref()
            .and_then(|service| service.path.as_deref())
            .unwrap_or_default();
        WebhookClientConfig {
            url: Some(url.join(path)),
            ca_bundle: Some(ByteString(ca_bundle.as_bytes().to_vec())),
            service: None,
        }
    };
    let labels = Some(BTreeMap::from([(
        MANAGED_BY_LABEL.to_owned(),
        MANAGED_BY.to_owned(),
    )]));
    if let Some(mutating) = &mut manifests.mutating {
        mutating.metadata.name = Some(names.mutating.clone());
        mutating.metadata.labels.clone_from(&labels);
        for webhook in mutating.webhooks.iter_mut().flatten() {
            webhook.client_config = client_config(&webhook.client_config);
        }
    }
    if let Some(validating) = &mut manifests.validating {
        validating.metadata.name = Some(names.validating.clone());
        validating.metadata.labels.clone_from(&labels);
        for webhook in validating.webhooks.iter_mut().flatten() {
            webhook.client_config = client_config(&webhook.client_config);
        }
    }
    manifests
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use serde_json::json;

    use super::*;
    use crate::webhook::test_fixtures::AllowAll;
    use crate::webhook::{Converter, FailurePolicy, Operation, Registration};

    fn registration(name: &'static str, path: &'static str) -> Registration {
        Registration {
            name,
            path,
            operations: &[Operation::Create, Operation::Update],
            failure_policy: FailurePolicy::Fail,
        }
    }

    /// Everything but the names, the labels and the client configurations is `make
    /// manifests`' configuration, webhook for webhook.
    #[test]
    fn copies_of_the_manifests_that_call_the_url() {
        let webhooks = vec![
            Webhook::validating(registration("vb.kb.io", "/validate-b"), AllowAll),
            Webhook::validating(registration("va.kb.io", "/validate-a"), AllowAll),
            Webhook::conversion(Converter::new::<ConfigMap>(vec![])),
        ];
        let url: WebhookUrl = "https://10.0.0.5:9443".parse().unwrap();
        let names = Names::new("87a7d51f.example.com");
        let local = configurations(&webhooks, &url, "PEM", &names);
        assert_eq!(local.mutating, None);
        let local = serde_json::to_value(local.validating.unwrap()).unwrap();
        let deployed = webhook_manifests(&webhooks).validating.unwrap();
        let deployed = serde_json::to_value(deployed).unwrap();
        assert_eq!(
            local["metadata"],
            json!({
                "name": "make-run-validating.87a7d51f.example.com",
                "labels": {"app.kubernetes.io/managed-by": "operator-rs-runtime"},
            })
        );
        let webhooks = local["webhooks"].as_array().unwrap();
        assert_eq!(webhooks.len(), 2);
        for (index, webhook) in webhooks.iter().enumerate() {
            let path = deployed["webhooks"][index]["clientConfig"]["service"]["path"]
                .as_str()
                .unwrap();
            assert_eq!(
                webhook["clientConfig"],
                json!({"url": format!("https://10.0.0.5:9443{path}"), "caBundle": "UEVN"})
            );
            let mut expected = deployed["webhooks"][index].clone();
            expected["clientConfig"] = webhook["clientConfig"].clone();
            assert_eq!(*webhook, expected);
        }
    }
}
