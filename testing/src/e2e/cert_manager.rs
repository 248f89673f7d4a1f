//! cert-manager for the e2e tests of a project with webhooks: the API server reaches webhooks
//! over TLS, and the project's `config/certmanager` has cert-manager issue the serving
//! certificate and inject its CA into the webhook configurations and the CRDs' conversion
//! webhooks. Like kubebuilder's suite, the setup installs a pinned cert-manager unless it is
//! there already or `CERT_MANAGER_INSTALL_SKIP=true`, and waits for the CA injection.

use std::path::Path;

use anyhow::{Context as _, ensure};
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::{Api, Client};

use super::commands::{CommandLine, Config};
use super::{POD_TIMEOUT, Project, eventually};

/// The cert-manager release the setup installs (kubebuilder pins one too).
pub const CERT_MANAGER_VERSION: &str = "v1.21.1";

/// Whether `project` relies on cert-manager: `operator-rs create webhook` writes
/// `config/certmanager/`.
pub fn needed_by(project: &Project) -> bool {
    Path::new(project.root).join("config/certmanager").is_dir()
}

/// Whether `project` has webhooks (`operator-rs create webhook` writes `config/webhook/`): then
/// the setup waits until every `caBundle` is set, by cert-manager or by the manager itself
/// (`--webhook-certs=self-signed`).
pub fn has_webhooks(project: &Project) -> bool {
    Path::new(project.root).join("config/webhook").is_dir()
}

/// Whether cert-manager's CRDs are in the cluster already (then the setup leaves it alone, as
/// kubebuilder's `IsCertManagerCRDsInstalled`).
pub async fn installed(client: &Client) -> anyhow::Result<bool> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    Ok(crds
        .get_opt("certificates.cert-manager.io")
        .await?
        .is_some())
}

/// What installs cert-manager [`CERT_MANAGER_VERSION`] and waits until its webhook answers
/// (before that, creating a Certificate fails).
pub fn install_commands(config: &Config) -> Vec<CommandLine> {
    let manifest = format!(
        "https://github.com/cert-manager/cert-manager/releases/download/{CERT_MANAGER_VERSION}/cert-manager.yaml"
    );
    let timeout = format!("--timeout={}s", POD_TIMEOUT.as_secs());
    vec![
        CommandLine::new(&config.kubectl, ["apply", "-f", &manifest]),
        CommandLine::new(
            &config.kubectl,
            [
                "wait",
                "deployment.apps/cert-manager-webhook",
                "--for=condition=Available",
                "--namespace=cert-manager",
                &timeout,
            ],
        ),
    ]
}

/// Waits until a CA bundle (from cert-manager's CA injector, or from the manager itself in
/// self-signed mode) is in every webhook of the project's webhook configurations and in the
/// conversion webhook of every CRD whose webhook is the project's; returns what it checked, for
/// the log.
pub async fn wait_for_ca_injection(
    client: &Client,
    project: &Project,
) -> anyhow::Result<Vec<String>> {
    let prefix = format!("{}-", project.name);
    let namespace = project.manager_namespace();
    eventually("the CA is in every caBundle", POD_TIMEOUT, async || {
        let mut checked = Vec::new();
        let mutating: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
        for config in mutating.list(&Default::default()).await?.items {
            let name = config.metadata.name.clone().unwrap_or_default();
            if name.starts_with(&prefix) {
                for webhook in config.webhooks.unwrap_or_default() {
                    ensure_bundle(&name, webhook.client_config.ca_bundle.as_ref())?;
                }
                checked.push(format!("MutatingWebhookConfiguration {name}"));
            }
        }
        let validating: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
        for config in validating.list(&Default::default()).await?.items {
            let name = config.metadata.name.clone().unwrap_or_default();
            if name.starts_with(&prefix) {
                for webhook in config.webhooks.unwrap_or_default() {
                    ensure_bundle(&name, webhook.client_config.ca_bundle.as_ref())?;
                }
                checked.push(format!("ValidatingWebhookConfiguration {name}"));
            }
        }
        let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
        for crd in crds.list(&Default::default()).await?.items {
            let name = crd.metadata.name.clone().unwrap_or_default();
            let Some(client_config) = crd
                .spec
                .conversion
                .and_then(|c| c.webhook)
                .and_then(|w| w.client_config)
            else {
                continue;
            };
            let ours = client_config
                .service
                .as_ref()
                .is_some_and(|service| service.namespace == namespace);
            if ours {
                ensure_bundle(&name, client_config.ca_bundle.as_ref())?;
                checked.push(format!("the conversion webhook of CRD {name}"));
            }
        }
        Ok(checked)
    })
    .await
}

fn ensure_bundle(name: &str, bundle: Option<&k8s_openapi::ByteString>) -> anyhow::Result<()> {
    let bundle = bundle.with_context(|| format!("{name} has no CA bundle yet"))?;
    ensure!(!bundle.0.is_empty(), "{name} has an empty CA bundle");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn installs_the_pinned_release_and_waits_for_its_webhook() {
        let project = Project {
            name: "demo",
            namespaced: false,
            root: ".",
        };
        let config = Config::from_vars(&project, |_| None);
        let commands: Vec<String> = install_commands(&config)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            commands,
            [
                format!("kubectl apply -f https://github.com/cert-manager/cert-manager/releases/download/{CERT_MANAGER_VERSION}/cert-manager.yaml"),
                "kubectl wait deployment.apps/cert-manager-webhook --for=condition=Available --namespace=cert-manager --timeout=300s".to_string(),
            ]
        );
        assert!(!needed_by(&project));
    }
}
