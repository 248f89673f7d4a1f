//! Registers the temporary webhook configurations and conversion webhooks with the API server,
//! and removes them again.

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::{Api, Client, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::configurations::Names;
use super::{FIELD_MANAGER, LocalError, LocalWebhooks, crd_conversion};

/// What a manager run with `--webhook-url` registered: [`Registration::remove`] it on exit.
#[must_use = "what was registered stays in the cluster until it is removed"]
pub struct Registration {
    client: Client,
    names: Names,
    /// The CRDs whose conversion was pointed at the manager.
    crds: Vec<String>,
}

impl LocalWebhooks {
    /// Registers the webhooks with the API server of `client`: applies the temporary
    /// configurations (replacing those of an earlier run that could not remove them, and
    /// deleting a kind of configuration the project no longer has webhooks for), and points the
    /// conversion webhook of each CRD with a converter at the manager. A CRD that does not exist
    /// is skipped with a warning (`make install` has not run). When a step fails, what was
    /// registered is removed again before the error is returned.
    pub async fn register(&self, client: &Client) -> Result<Registration, LocalError> {
        let mut registration = Registration {
            client: client.clone(),
            names: self.names.clone(),
            crds: Vec::new(),
        };
        match self.register_into(&mut registration).await {
            Ok(()) => Ok(registration),
            Err(error) => {
                if let Err(cleanup) = registration.remove().await {
                    tracing::error!(error = %cleanup, "cannot remove the temporary webhook registrations");
                }
                Err(error)
            }
        }
    }

    async fn register_into(&self, registration: &mut Registration) -> Result<(), LocalError> {
        let client = &registration.client;
        let manifests = &self.configurations;
        apply_or_delete(client, &self.names.mutating, manifests.mutating.as_ref()).await?;
        apply_or_delete(
            client,
            &self.names.validating,
            manifests.validating.as_ref(),
        )
        .await?;
        let client_config = self.conversion_client_config();
        for crd in &self.conversion_crds {
            // Recorded first: a CRD written before a failure must be restored.
            registration.crds.push(crd.clone());
            if crd_conversion::take_over(client, crd, &client_config).await? {
                tracing::info!(crd, url = ?client_config.url, "conversion webhook registered");
            } else {
                tracing::warn!(
                    crd,
                    "no such CRD, so its conversion webhook is not registered: run make install"
                );
            }
        }
        Ok(())
    }
}

impl Registration {
    /// Deletes the temporary configurations and gives each CRD back its conversion from before.
    /// Goes on after a failure, and returns the first one.
    pub async fn remove(self) -> Result<(), LocalError> {
        let mut first_error = None;
        let deletions = [
            delete::<MutatingWebhookConfiguration>(&self.client, &self.names.mutating).await,
            delete::<ValidatingWebhookConfiguration>(&self.client, &self.names.validating).await,
        ];
        for result in deletions {
            if let Err(error) = result {
                first_error.get_or_insert(error);
            }
        }
        for crd in &self.crds {
            if let Err(error) = crd_conversion::restore(&self.client, crd).await {
                first_error.get_or_insert(error);
            }
        }
        match first_error {
            Some(error) => Err(error),
            None => {
                tracing::info!("temporary webhook registrations removed");
                Ok(())
            }
        }
    }
}

/// Applies `configuration` under `name`, forcing ownership (an earlier run's configuration is
/// this run's to replace); without one, deletes what an earlier run left under that name.
async fn apply_or_delete<C>(
    client: &Client,
    name: &str,
    configuration: Option<&C>,
) -> Result<(), LocalError>
where
    C: Resource<DynamicType = ()> + Clone + DeserializeOwned + Serialize + std::fmt::Debug,
{
    let Some(configuration) = configuration else {
        return delete::<C>(client, name).await;
    };
    let api = Api::<C>::all(client.clone());
    let params = PatchParams::apply(FIELD_MANAGER).force();
    api.patch(name, &params, &Patch::Apply(configuration))
        .await
        .map_err(|source| LocalError::Api {
            action: "apply",
            object: format!("{}/{name}", C::kind(&())),
            source,
        })?;
    tracing::info!(kind = %C::kind(&()), name, "temporary webhook configuration registered");
    Ok(())
}

/// Deletes the configuration `name`, if there is one.
async fn delete<C>(client: &Client, name: &str) -> Result<(), LocalError>
where
    C: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug,
{
    let api = Api::<C>::all(client.clone());
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.is_not_found() => Ok(()),
        Err(source) => Err(LocalError::Api {
            action: "delete",
            object: format!("{}/{name}", C::kind(&())),
            source,
        }),
    }
}
