{{ rust_header }}//! The {{ kind }} controller in the cluster. The sample custom resource
//! (`{{ sample_file }}`) gets a Deployment of
//! `{{ image }}` that follows `spec.size`, is put back when someone changes or deletes it,
//! and goes away with the {{ kind }}.
//!
//! Written by `operator-rs create api --image`; extend it as the controller grows.

use anyhow::{Context as _, bail, ensure};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::{Api, ResourceExt as _};
use operator_rs_testing::e2e::security::EffectiveSecurity;
use operator_rs_testing::e2e::{
    self, FIELD_MANAGER, POD_TIMEOUT, TIMEOUT, eventually, metrics, step,
};
use serde_json::json;

use {{ crate_name }}::{{ api_path }}::{{ kind }};

use crate::PROJECT;

/// The sample, as `kubectl apply -k config/samples` would create it.
const SAMPLE: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/{{ sample_file }}"
));

/// The name of the sample, and of the Deployment that the controller makes for it.
const NAME: &str = "{{ sample_name }}";

#[test]
#[ignore = "needs a cluster: run with `make test-e2e`"]
fn sample_is_reconciled() -> anyhow::Result<()> {
    e2e::run(&PROJECT, async |cluster| {
        let api: Api<{{ kind }}> = Api::namespaced(cluster.client.clone(), cluster.namespace());
        let deployments: Api<Deployment> =
            Api::namespaced(cluster.client.clone(), cluster.namespace());

        step("removing a {{ sample_name }} left over from an earlier run");
        e2e::delete_and_wait(&api, NAME, TIMEOUT).await?;
        deployment_is_deleted(&deployments).await?;

        step("applying the sample, {{ sample_file }}");
        let mut sample: {{ kind }} = operator_rs_testing::from_yaml(SAMPLE)
            .context("reading {{ sample_file }}")?;
        sample.metadata.namespace = Some(cluster.namespace().to_string());
        let apply = PatchParams::apply(FIELD_MANAGER);
        api.patch(NAME, &apply, &Patch::Apply(&sample)).await?;

        step("checking the Deployment that the controller creates for it");
        let deployment = eventually("Deployment {{ sample_name }} exists", TIMEOUT, async || {
            deployments.get_opt(NAME).await?.context("not created yet")
        })
        .await?;
        check_deployment(&deployment, &api.get(NAME).await?)?;

        step("setting spec.size to 3: the Deployment gets 3 replicas");
        sample.spec.size = 3;
        api.patch(NAME, &apply, &Patch::Apply(&sample)).await?;
        replicas_become(&deployments, 3).await?;

        step("scaling the Deployment to 1 by hand: the controller scales it back to 3");
        let scale = deployments
            .patch_scale(
                NAME,
                &PatchParams::default(),
                &Patch::Merge(json!({ "spec": { "replicas": 1 } })),
            )
            .await?;
        ensure!(
            scale.spec.and_then(|spec| spec.replicas) == Some(1),
            "the Deployment was not scaled to 1"
        );
        replicas_become(&deployments, 3).await?;

        step("deleting the Deployment: the controller creates it again");
        let old_uid = deployments.get(NAME).await?.metadata.uid;
        deployments.delete(NAME, &DeleteParams::default()).await?;
        let deployment = eventually("Deployment {{ sample_name }} is back", TIMEOUT, async || {
            let deployment = deployments.get_opt(NAME).await?.context("not there")?;
            ensure!(
                deployment.metadata.uid != old_uid,
                "still the deleted Deployment"
            );
            Ok(deployment)
        })
        .await?;
        check_deployment(&deployment, &api.get(NAME).await?)?;

        step("waiting for the {{ kind }} to report Available=True");
        e2e::wait_for_rollout(&cluster.client, cluster.namespace(), NAME, POD_TIMEOUT).await?;
        let available = eventually("the {{ kind }} is Available", TIMEOUT, async || {
            let object = api.get(NAME).await?;
            let conditions = object.status.as_ref().map(|status| &status.conditions);
            let available = conditions
                .into_iter()
                .flatten()
                .find(|condition| condition.type_ == "Available")
                .context("no Available condition yet")?;
            ensure!(
                available.status == "True",
                "Available is {} ({}: {})",
                available.status,
                available.reason,
                available.message
            );
            Ok(object)
        })
        .await?;

        step("checking that the controller's reconciles show in the metrics");
        let text = metrics::scrape(cluster).await?;
        let series = r#"controller_runtime_reconcile_time_seconds_count{controller="{{ controller_name }}"}"#;
        let reconciles = metrics::sample(&text, series)
            .with_context(|| format!("no {series} in the metrics:\n{text}"))?;
        ensure!(reconciles > 0.0, "{series} is {reconciles}");

        step("deleting the {{ kind }}: its finalizer runs, and its Deployment is deleted with it");
        ensure!(
            available
                .finalizers()
                .iter()
                .any(|finalizer| finalizer == "{{ finalizer }}"),
            "the {{ kind }} does not have the finalizer {{ finalizer }}: {:?}",
            available.finalizers()
        );
        e2e::delete_and_wait(&api, NAME, TIMEOUT).await?;
        deployment_is_deleted(&deployments).await?;
        Ok(())
    })
}

/// Checks the Deployment that the controller made for `owner`: owned by it, of its size, running
/// the image with the flags of `create api`, under the restricted Pod Security Standard.
fn check_deployment(deployment: &Deployment, owner: &{{ kind }}) -> anyhow::Result<()> {
    let controller = deployment
        .owner_references()
        .iter()
        .find(|reference| reference.controller == Some(true))
        .context("the Deployment has no controller owner reference")?;
    assert_eq!(
        (controller.kind.as_str(), controller.name.as_str()),
        ("{{ kind }}", NAME),
        "the controller owner of the Deployment"
    );
    assert_eq!(
        Some(controller.uid.as_str()),
        owner.metadata.uid.as_deref(),
        "the Deployment is owned by this very {{ kind }}"
    );

    let spec = deployment
        .spec
        .as_ref()
        .context("the Deployment has no spec")?;
    assert_eq!(spec.replicas, Some(owner.spec.size), "replicas = spec.size");
    let pod = spec
        .template
        .spec
        .as_ref()
        .context("the Deployment has no pod template")?;
    let [container] = pod.containers.as_slice() else {
        bail!("expected one container, found {}", pod.containers.len());
    };
    // The image comes from the manager's environment variable {{ image_env }}
    // (config/manager/manager.yaml).
    assert_eq!(
        container.image.as_deref(),
        Some("{{ image }}"),
        "image"
    );
{%- if container_command | length > 0 %}
    assert_eq!(
        container.command.as_deref().unwrap_or_default(),
        [{% for arg in container_command %}{{ arg }}{% if not loop.last %}, {% endif %}{% endfor %}],
        "command (--image-container-command)"
    );
{%- else %}
    assert_eq!(
        container.command.as_deref().unwrap_or_default(),
        Vec::<String>::new(),
        "command: the image's own"
    );
{%- endif %}
{%- if has_container_port %}
    let ports: Vec<i32> = container
        .ports
        .iter()
        .flatten()
        .map(|port| port.container_port)
        .collect();
    assert_eq!(
        ports,
        [owner.spec.container_port],
        "container ports (spec.containerPort)"
    );
{%- endif %}

    let security = EffectiveSecurity::of(pod, container);
    assert_eq!(
        security.restricted_violations(),
        Vec::<&str>::new(),
        "the restricted Pod Security Standard"
    );
    assert_eq!(security.run_as_non_root, Some(true), "runAsNonRoot");
{%- if has_run_as_user %}
    assert_eq!(
        security.run_as_user,
        Some({{ run_as_user }}),
        "runAsUser (--run-as-user)"
    );
{%- endif %}
    assert_eq!(
        security.allow_privilege_escalation,
        Some(false),
        "allowPrivilegeEscalation"
    );
    assert_eq!(security.capabilities_dropped, ["ALL"], "capabilities.drop");
    assert_eq!(
        security.seccomp_profile.as_deref(),
        Some("RuntimeDefault"),
        "seccompProfile.type"
    );
    Ok(())
}

/// Waits until the controller has set the Deployment's replicas to `replicas`.
async fn replicas_become(deployments: &Api<Deployment>, replicas: i32) -> anyhow::Result<()> {
    let what = format!("Deployment {NAME} has {replicas} replicas");
    eventually(&what, TIMEOUT, async || {
        let deployment = deployments.get(NAME).await?;
        let current = deployment.spec.and_then(|spec| spec.replicas);
        ensure!(current == Some(replicas), "replicas is {current:?}");
        Ok(())
    })
    .await
}

/// Waits until the Deployment is gone: the garbage collector deletes it once its owner is gone.
async fn deployment_is_deleted(deployments: &Api<Deployment>) -> anyhow::Result<()> {
    let what = format!("Deployment {NAME} is garbage-collected");
    eventually(&what, TIMEOUT, async || {
        ensure!(
            deployments.get_opt(NAME).await?.is_none(),
            "the Deployment still exists"
        );
        Ok(())
    })
    .await
}
