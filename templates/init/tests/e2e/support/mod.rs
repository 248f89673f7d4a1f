{{ rust_header }}//! What every e2e test needs: the cluster, set up once per run, and helpers to wait for it.
//!
//! A test body goes through [`run`]:
//!
//! ```ignore
//! #[test]
//! #[ignore = "needs a cluster: run with `make test-e2e`"]
//! fn my_check() -> anyhow::Result<()> {
//!     support::run(async |cluster| {
//!         step("what the test does now");
//!         let pods: Api<Pod> = Api::namespaced(cluster.client.clone(), NAMESPACE);
//!         // ...
//!         Ok(())
//!     })
//! }
//! ```
//!
//! The first test that calls [`run`] sets the cluster up, like the `BeforeSuite` and `BeforeAll`
//! of kubebuilder's e2e suite: it builds the manager image and loads it into Kind (or pushes it),
//! installs the CRDs, deploys the manager and waits until it is available. Later tests reuse
//! that cluster; if the setup failed, they fail at once with its error.
//!
//! Rust's test harness has no "after all" hook, so nothing here tears the cluster down:
//! `make test-e2e` does, by deleting the Kind cluster (or, with `KIND_CLUSTER=`, by undeploying
//! the project) once every test passed. When a test fails the cluster is kept so you can look at
//! it; `make cleanup-test-e2e` removes it.

pub mod commands;
pub mod metrics;
pub mod security;

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail, ensure};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::{Api, Client, Resource};
use serde::de::DeserializeOwned;
use tokio::runtime::Runtime;

pub use commands::{Config, kubectl};

/// Where `config/default` deploys the manager (its `namespace:`).
pub const MANAGER_NAMESPACE: &str = "{{ project_name }}-system";

/// Where the tests create custom resources.
{%- if namespaced %}
///
/// The manager only watches its own namespace (`operator-rs init --namespaced`: `WATCH_NAMESPACE`
/// in config/manager/manager.yaml), so that is where they must go.
pub const NAMESPACE: &str = MANAGER_NAMESPACE;
{%- else %}
///
/// A namespace of their own rather than the manager's: the manager watches every namespace, and
/// users' resources live next to their applications, not in the operator's namespace.
/// `make cleanup-test-e2e` deletes it when the tests ran against an existing cluster.
pub const NAMESPACE: &str = "{{ project_name }}-e2e";
{%- endif %}

/// The manager's Deployment (`namePrefix` + `controller-manager`).
pub const MANAGER_DEPLOYMENT: &str = "{{ project_name }}-controller-manager";

/// The label selector of the manager's pods.
pub const MANAGER_SELECTOR: &str = "control-plane=controller-manager";

/// The manager's service account.
pub const SERVICE_ACCOUNT: &str = "{{ project_name }}-controller-manager";

/// The field manager of what the tests apply with server-side apply.
pub const FIELD_MANAGER: &str = "e2e-tests";

/// How long to wait for the cluster to get somewhere (Gomega's default `Eventually` timeout in
/// kubebuilder's suite).
pub const TIMEOUT: Duration = Duration::from_secs(120);

/// How long to wait for pods to run: images may have to be pulled first.
pub const POD_TIMEOUT: Duration = Duration::from_secs(300);

/// How often [`eventually`] checks again.
const POLL_INTERVAL: Duration = Duration::from_secs(1);

/// The cluster the tests run against, set up by the first test.
pub struct Cluster {
    /// A client for the current kubeconfig context (`make test-e2e` points it at the Kind
    /// cluster).
    pub client: Client,
    /// The settings of this run: the image, the Kind cluster, the programs to use.
    pub config: Config,
}

/// The cluster, or why it could not be set up (kept as text: every later test reports it).
static CLUSTER: OnceLock<Result<Cluster, String>> = OnceLock::new();

/// Runs a test against the cluster, setting the cluster up first if no test did yet.
///
/// When the test fails (an error or a panic), the manager's logs, its pod and the events of the
/// test namespaces are printed, like the `AfterEach` of kubebuilder's suite does.
pub fn run(test: impl AsyncFnOnce(&'static Cluster) -> anyhow::Result<()>) -> anyhow::Result<()> {
    let cluster = match CLUSTER.get_or_init(set_up) {
        Ok(cluster) => cluster,
        Err(error) => bail!("the e2e setup failed, so this test could not run: {error}"),
    };
    let _on_panic = DiagnosticsOnPanic;
    let result = runtime().block_on(test(cluster));
    if result.is_err() {
        print_diagnostics();
    }
    result
}

/// Prints the headline of what a test does next, like Ginkgo's `By`.
pub fn step(what: &str) {
    println!("STEP: {what}");
}

/// Checks `check` every second until it succeeds, and returns what it returned, like Gomega's
/// `Eventually`. After `timeout`, fails with `what` and the last error of `check`.
pub async fn eventually<T>(
    what: &str,
    timeout: Duration,
    check: impl AsyncFnMut() -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    eventually_every(POLL_INTERVAL, what, timeout, check).await
}

async fn eventually_every<T>(
    interval: Duration,
    what: &str,
    timeout: Duration,
    mut check: impl AsyncFnMut() -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let start = Instant::now();
    loop {
        match check().await {
            Ok(value) => return Ok(value),
            Err(error) if start.elapsed() >= timeout => {
                return Err(error.context(format!("{what}: not within {timeout:?}")));
            }
            Err(_) => tokio::time::sleep(interval).await,
        }
    }
}

/// Deletes the object `name` if it exists, then waits until it is gone: its finalizers have run.
pub async fn delete_and_wait<K>(api: &Api<K>, name: &str, timeout: Duration) -> anyhow::Result<()>
where
    K: Resource + Clone + Debug + DeserializeOwned,
{
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => {}
        Err(kube::Error::Api(status)) if status.is_not_found() => return Ok(()),
        Err(error) => return Err(error).with_context(|| format!("deleting {name}")),
    }
    eventually(&format!("{name} is deleted"), timeout, async || {
        ensure!(api.get_opt(name).await?.is_none(), "{name} still exists");
        Ok(())
    })
    .await
}

/// Waits until every replica of the Deployment runs its current pod template and is available,
/// as `kubectl rollout status` does, and returns the Deployment.
pub async fn wait_for_rollout(
    client: &Client,
    namespace: &str,
    name: &str,
    timeout: Duration,
) -> anyhow::Result<Deployment> {
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), namespace);
    let what = format!("Deployment {namespace}/{name} is rolled out");
    eventually(&what, timeout, async || {
        let deployment = deployments.get(name).await?;
        rollout_complete(&deployment)?;
        Ok(deployment)
    })
    .await
}

/// `Ok` when the rollout of `deployment` is complete; otherwise what it still waits for. The same
/// rules as `kubectl rollout status`.
pub fn rollout_complete(deployment: &Deployment) -> anyhow::Result<()> {
    let status = deployment.status.clone().unwrap_or_default();
    ensure!(
        status.observed_generation >= deployment.metadata.generation,
        "waiting for the Deployment's new spec to be observed"
    );
    let progressing = status
        .conditions
        .iter()
        .flatten()
        .find(|condition| condition.type_ == "Progressing");
    if let Some(reason) = progressing.and_then(|condition| condition.reason.as_deref()) {
        ensure!(
            reason != "ProgressDeadlineExceeded",
            "the Deployment exceeded its progress deadline"
        );
    }
    let wanted = deployment
        .spec
        .as_ref()
        .and_then(|spec| spec.replicas)
        .unwrap_or(1);
    let updated = status.updated_replicas.unwrap_or(0);
    let available = status.available_replicas.unwrap_or(0);
    let replicas = status.replicas.unwrap_or(0);
    ensure!(
        updated >= wanted,
        "{updated} of {wanted} replicas run the current pod template"
    );
    ensure!(
        replicas <= updated,
        "{} old replicas are still terminating",
        replicas - updated
    );
    ensure!(
        available >= updated,
        "{available} of {updated} updated replicas are available"
    );
    Ok(())
}

/// True when the pod's `Ready` condition is `True`: all its containers pass their readiness
/// probes.
pub fn pod_is_ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|status| status.conditions.as_ref())
        .into_iter()
        .flatten()
        .any(|condition| condition.type_ == "Ready" && condition.status == "True")
}

/// One runtime for the whole run, so that the client made during the setup keeps working in every
/// test (a `#[tokio::test]` runtime, and the client's connections with it, end with its test).
fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .expect("cannot start the tokio runtime")
    })
}

fn set_up() -> Result<Cluster, String> {
    try_set_up().map_err(|error| format!("{error:#}"))
}

fn try_set_up() -> anyhow::Result<Cluster> {
    let config = Config::from_env();
    step(&format!(
        "setting up {}, image {}",
        config.target(),
        config.image
    ));
    for command in config.image_commands() {
        command.run()?;
    }

    let client = runtime()
        .block_on(Client::try_default())
        .context("cannot connect to the cluster of the current kubeconfig context")?;
    step("creating the namespaces, enforcing the restricted Pod Security Standard");
    runtime().block_on(apply_namespaces(&client))?;

    step("installing the CRDs and deploying the controller-manager");
    for command in config.deploy_commands() {
        command.run()?;
    }
    step("waiting for the controller-manager to be available");
    let rollout = wait_for_rollout(&client, MANAGER_NAMESPACE, MANAGER_DEPLOYMENT, POD_TIMEOUT);
    if let Err(error) = runtime().block_on(rollout) {
        print_diagnostics();
        return Err(error);
    }
    Ok(Cluster { client, config })
}

/// Creates the namespaces of the tests, labelled so that the API server refuses pods that break
/// the "restricted" Pod Security Standard, as kubebuilder's e2e suite does. `make deploy` then
/// applies the manager's namespace over it and keeps the label.
async fn apply_namespaces(client: &Client) -> anyhow::Result<()> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let mut names = vec![MANAGER_NAMESPACE, NAMESPACE];
    names.dedup();
    for name in names {
        let namespace = Namespace {
            metadata: ObjectMeta {
                name: Some(name.to_string()),
                labels: Some(BTreeMap::from([(
                    "pod-security.kubernetes.io/enforce".to_string(),
                    "restricted".to_string(),
                )])),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        namespaces
            .patch(
                name,
                &PatchParams::apply(FIELD_MANAGER),
                &Patch::Apply(&namespace),
            )
            .await
            .with_context(|| format!("creating namespace {name}"))?;
    }
    Ok(())
}

/// Prints what helps to understand a failure: the manager's logs and pod, and the events of the
/// test namespaces. Uses kubectl, whose output is made for people.
pub fn print_diagnostics() {
    step("collecting diagnostics");
    let mut namespaces = vec![MANAGER_NAMESPACE, NAMESPACE];
    namespaces.dedup();
    let mut queries = vec![
        vec![
            "logs",
            "--namespace",
            MANAGER_NAMESPACE,
            "--selector",
            MANAGER_SELECTOR,
            "--all-containers",
            "--prefix",
            "--tail=-1",
        ],
        vec![
            "describe",
            "pods",
            "--namespace",
            MANAGER_NAMESPACE,
            "--selector",
            MANAGER_SELECTOR,
        ],
    ];
    for namespace in namespaces {
        queries.push(vec![
            "get",
            "events",
            "--namespace",
            namespace,
            "--sort-by=.lastTimestamp",
        ]);
    }
    for args in queries {
        println!("$ kubectl {}", args.join(" "));
        match kubectl(&args) {
            Ok(output) => println!("{output}"),
            Err(error) => println!("{error:#}"),
        }
    }
}

/// Prints the diagnostics when a test panics (a failed `assert!`) rather than returning an error.
struct DiagnosticsOnPanic;

impl Drop for DiagnosticsOnPanic {
    fn drop(&mut self) {
        if std::thread::panicking() {
            print_diagnostics();
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::{DeploymentCondition, DeploymentSpec, DeploymentStatus};
    use k8s_openapi::api::core::v1::{PodCondition, PodStatus};

    use super::*;

    fn deployment(generation: i64, replicas: i32, status: DeploymentStatus) -> Deployment {
        Deployment {
            metadata: ObjectMeta {
                generation: Some(generation),
                ..ObjectMeta::default()
            },
            spec: Some(DeploymentSpec {
                replicas: Some(replicas),
                ..DeploymentSpec::default()
            }),
            status: Some(status),
        }
    }

    fn status(observed: i64, replicas: i32, updated: i32, available: i32) -> DeploymentStatus {
        DeploymentStatus {
            observed_generation: Some(observed),
            replicas: Some(replicas),
            updated_replicas: Some(updated),
            available_replicas: Some(available),
            ..DeploymentStatus::default()
        }
    }

    #[test]
    fn a_rollout_is_complete_when_every_replica_is_updated_and_available() {
        assert!(rollout_complete(&deployment(2, 3, status(2, 3, 3, 3))).is_ok());
    }

    #[test]
    fn a_rollout_waits_for_the_new_spec_old_replicas_and_availability() {
        let waiting = |deployment: Deployment| {
            rollout_complete(&deployment)
                .expect_err("the rollout is not complete")
                .to_string()
        };
        assert_eq!(
            waiting(deployment(3, 3, status(2, 3, 3, 3))),
            "waiting for the Deployment's new spec to be observed"
        );
        assert_eq!(
            waiting(deployment(2, 3, status(2, 3, 1, 1))),
            "1 of 3 replicas run the current pod template"
        );
        assert_eq!(
            waiting(deployment(2, 3, status(2, 4, 3, 3))),
            "1 old replicas are still terminating"
        );
        assert_eq!(
            waiting(deployment(2, 3, status(2, 3, 3, 2))),
            "2 of 3 updated replicas are available"
        );
        assert_eq!(
            waiting(Deployment::default()),
            "0 of 1 replicas run the current pod template"
        );
    }

    #[test]
    fn a_rollout_past_its_progress_deadline_says_so() {
        let mut stuck = status(2, 3, 1, 1);
        stuck.conditions = Some(vec![DeploymentCondition {
            type_: "Progressing".to_string(),
            status: "False".to_string(),
            reason: Some("ProgressDeadlineExceeded".to_string()),
            ..DeploymentCondition::default()
        }]);
        let error = rollout_complete(&deployment(2, 3, stuck)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the Deployment exceeded its progress deadline"
        );
    }

    #[test]
    fn a_pod_is_ready_when_its_ready_condition_is_true() {
        let pod = |ready: &str| Pod {
            status: Some(PodStatus {
                conditions: Some(vec![
                    PodCondition {
                        type_: "PodScheduled".to_string(),
                        status: "True".to_string(),
                        ..PodCondition::default()
                    },
                    PodCondition {
                        type_: "Ready".to_string(),
                        status: ready.to_string(),
                        ..PodCondition::default()
                    },
                ]),
                ..PodStatus::default()
            }),
            ..Pod::default()
        };
        assert!(pod_is_ready(&pod("True")));
        assert!(!pod_is_ready(&pod("False")));
        assert!(!pod_is_ready(&Pod::default()));
    }

    #[tokio::test]
    async fn eventually_retries_until_the_check_passes() {
        let mut calls = 0;
        let interval = Duration::from_millis(1);
        let value = eventually_every(
            interval,
            "three calls",
            Duration::from_secs(10),
            async || {
                calls += 1;
                ensure!(calls == 3, "call {calls}");
                Ok(calls)
            },
        )
        .await
        .unwrap();
        assert_eq!(value, 3);
    }

    #[tokio::test]
    async fn eventually_reports_what_it_waited_for_and_the_last_error() {
        let error = eventually("never", Duration::ZERO, async || -> anyhow::Result<()> {
            bail!("not yet")
        })
        .await
        .unwrap_err();
        assert_eq!(format!("{error:#}"), "never: not within 0ns: not yet");
    }
}
