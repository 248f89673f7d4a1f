//! What the end-to-end suite of a generated project (`tests/e2e`, `make test-e2e`) shares: the
//! cluster, set up once per run, and helpers to wait for it, run `kubectl`, read the manager's
//! metrics and check pods against the restricted Pod Security Standard.
//!
//! The suite's `tests/e2e/main.rs` describes the project once, as a [`Project`], and every test
//! body goes through [`run`]:
//!
//! ```no_run
//! use k8s_openapi::api::core::v1::Pod;
//! use kube::Api;
//! use kube::api::ListParams;
//! use operator_rs_testing::e2e::{self, step};
//!
//! const PROJECT: e2e::Project = e2e::Project {
//!     name: "memcached-operator",
//!     namespaced: false,
//!     root: env!("CARGO_MANIFEST_DIR"),
//! };
//!
//! // In tests/e2e: #[test] #[ignore = "needs a cluster: run with `make test-e2e`"]
//! fn the_manager_has_a_pod() -> anyhow::Result<()> {
//!     e2e::run(&PROJECT, async |cluster| {
//!         step("listing the manager's pods");
//!         let pods: Api<Pod> = Api::namespaced(cluster.client.clone(), cluster.manager_namespace());
//!         let selector = ListParams::default().labels(e2e::MANAGER_SELECTOR);
//!         anyhow::ensure!(!pods.list(&selector).await?.items.is_empty(), "no manager pod");
//!         Ok(())
//!     })
//! }
//! # fn main() -> anyhow::Result<()> { the_manager_has_a_pod() }
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
//!
//! Nothing here needs a cluster until [`run`] is called, so the helpers are unit-tested with the
//! rest of the crate.

pub mod cert_manager;
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

/// The project under test: what its `config/default` deploys is named after it.
///
/// The generated `tests/e2e/main.rs` declares it once, from the project's PROJECT file, and
/// passes it to [`run`]:
///
/// ```
/// use operator_rs_testing::e2e::Project;
///
/// const PROJECT: Project = Project {
///     name: "memcached-operator",
///     namespaced: false,
///     root: env!("CARGO_MANIFEST_DIR"),
/// };
///
/// assert_eq!(PROJECT.manager_namespace(), "memcached-operator-system");
/// assert_eq!(PROJECT.namespace(), "memcached-operator-e2e");
/// assert_eq!(PROJECT.manager_deployment(), "memcached-operator-controller-manager");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Project {
    /// The project's name (`projectName` in PROJECT): the `namePrefix` of `config/default`, so the
    /// start of the name of everything it deploys, and of its namespace.
    pub name: &'static str,
    /// Whether the manager only watches its own namespace (`operator-rs init --namespaced`:
    /// `WATCH_NAMESPACE` in `config/manager/manager.yaml`).
    pub namespaced: bool,
    /// The project's folder, where `make` runs: `env!("CARGO_MANIFEST_DIR")` in the tests.
    pub root: &'static str,
}

impl Project {
    /// Where `config/default` deploys the manager (its `namespace:`): `<name>-system`.
    pub fn manager_namespace(&self) -> String {
        format!("{}-system", self.name)
    }

    /// Where the tests create custom resources.
    ///
    /// In a namespaced project that is the [manager's namespace](Self::manager_namespace): the
    /// manager only watches its own. Otherwise it is a namespace of their own, `<name>-e2e`: the
    /// manager watches every namespace, and users' resources live next to their applications, not
    /// in the operator's namespace (`make cleanup-test-e2e` deletes it when the tests ran against
    /// an existing cluster).
    ///
    /// ```
    /// # use operator_rs_testing::e2e::Project;
    /// let project = Project { name: "guestbook", namespaced: true, root: "." };
    /// assert_eq!(project.namespace(), "guestbook-system");
    /// ```
    pub fn namespace(&self) -> String {
        if self.namespaced {
            self.manager_namespace()
        } else {
            format!("{}-e2e", self.name)
        }
    }

    /// The manager's Deployment (`namePrefix` + `controller-manager`).
    pub fn manager_deployment(&self) -> String {
        format!("{}-controller-manager", self.name)
    }

    /// The manager's service account (`namePrefix` + `controller-manager`).
    pub fn service_account(&self) -> String {
        format!("{}-controller-manager", self.name)
    }

    /// The Service in front of the manager's metrics endpoint
    /// (`config/default/metrics_service.yaml`).
    pub fn metrics_service(&self) -> String {
        format!("{}-controller-manager-metrics-service", self.name)
    }

    /// The ClusterRole that allows reading `/metrics` (`config/rbac/metrics_reader_role.yaml`).
    pub fn metrics_reader_role(&self) -> String {
        format!("{}-metrics-reader", self.name)
    }

    /// The binding of the [metrics reader role](Self::metrics_reader_role) to the manager's
    /// service account, which the tests make (see [`metrics::scrape`]).
    pub fn metrics_binding(&self) -> String {
        format!("{}-metrics-binding", self.name)
    }

    /// The manager image when `IMG` is not set: `example.com/<name>:v0.0.1`, as the Makefile's
    /// `E2E_IMG`. Not `:latest`: Kubernetes always pulls `:latest` images, and an image that was
    /// loaded into Kind cannot be pulled from anywhere.
    pub fn default_image(&self) -> String {
        format!("example.com/{}:v0.0.1", self.name)
    }

    /// The namespaces of the tests: the manager's, and the [one of the custom
    /// resources](Self::namespace) when it is another.
    fn namespaces(&self) -> Vec<String> {
        let mut names = vec![self.manager_namespace(), self.namespace()];
        names.dedup();
        names
    }
}

/// The label selector of the manager's pods.
pub const MANAGER_SELECTOR: &str = "control-plane=controller-manager";

/// The field manager of what the tests apply with server-side apply.
pub const FIELD_MANAGER: &str = "e2e-tests";

/// How long to wait for the cluster to get somewhere (Gomega's default `Eventually` timeout in
/// kubebuilder's suite).
pub const TIMEOUT: Duration = Duration::from_secs(120);

/// How long to wait for pods to run: images may have to be pulled first.
pub const POD_TIMEOUT: Duration = Duration::from_secs(300);

/// How often [`eventually`] checks again.
const POLL_INTERVAL: Duration = Duration::from_secs(1);

/// The cluster the tests run against, set up by the first test: what [`run`] hands a test.
pub struct Cluster {
    /// A client for the current kubeconfig context (`make test-e2e` points it at the Kind
    /// cluster).
    pub client: Client,
    /// The settings of this run: the image, the Kind cluster, the programs to use.
    pub config: Config,
    /// The project deployed to the cluster.
    pub project: Project,
    manager_namespace: String,
    namespace: String,
}

impl Cluster {
    /// Where the manager runs: [`Project::manager_namespace`].
    pub fn manager_namespace(&self) -> &str {
        &self.manager_namespace
    }

    /// Where the tests create custom resources: [`Project::namespace`]. It enforces the
    /// restricted Pod Security Standard, as the manager's namespace does.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }
}

/// The cluster, or why it could not be set up (kept as text: every later test reports it).
static CLUSTER: OnceLock<Result<Cluster, String>> = OnceLock::new();

/// Runs a test of `project` against the cluster, setting the cluster up first if no test did yet.
///
/// The test is an async closure that gets the [`Cluster`]; every test of the run shares one tokio
/// runtime, so that the cluster's client keeps working from test to test. When the test fails (an
/// error or a panic), the manager's logs, its pod and the events of the test namespaces are
/// printed, like the `AfterEach` of kubebuilder's suite does.
///
/// One test binary tests one project: calling `run` with another project than the first call's
/// is an error.
///
/// ```no_run
/// use operator_rs_testing::e2e;
///
/// const PROJECT: e2e::Project = e2e::Project {
///     name: "memcached-operator",
///     namespaced: false,
///     root: env!("CARGO_MANIFEST_DIR"),
/// };
///
/// # fn main() -> anyhow::Result<()> {
/// e2e::run(&PROJECT, async |cluster| {
///     e2e::step("waiting for the manager");
///     let manager = cluster.project.manager_deployment();
///     e2e::wait_for_rollout(&cluster.client, cluster.manager_namespace(), &manager, e2e::TIMEOUT)
///         .await?;
///     Ok(())
/// })
/// # }
/// ```
pub fn run(
    project: &Project,
    test: impl AsyncFnOnce(&'static Cluster) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let cluster = match CLUSTER.get_or_init(|| set_up(*project)) {
        Ok(cluster) => cluster,
        Err(error) => bail!("the e2e setup failed, so this test could not run: {error}"),
    };
    ensure!(
        cluster.project == *project,
        "this test is of {project:?}, but the cluster was set up for {:?}",
        cluster.project
    );
    let _on_panic = DiagnosticsOnPanic(project);
    let result = runtime().block_on(test(cluster));
    if result.is_err() {
        print_diagnostics(project);
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

fn set_up(project: Project) -> Result<Cluster, String> {
    try_set_up(project).map_err(|error| format!("{error:#}"))
}

fn try_set_up(project: Project) -> anyhow::Result<Cluster> {
    let config = Config::from_env(&project);
    step(&format!(
        "setting up {}, image {}",
        config.target(),
        config.image
    ));
    for command in config.image_commands(&project) {
        command.run()?;
    }

    let client = runtime()
        .block_on(Client::try_default())
        .context("cannot connect to the cluster of the current kubeconfig context")?;
    step("creating the namespaces, enforcing the restricted Pod Security Standard");
    runtime().block_on(apply_namespaces(&client, &project))?;

    let needs_cert_manager = cert_manager::needed_by(&project);
    if needs_cert_manager && config.install_cert_manager {
        if runtime().block_on(cert_manager::installed(&client))? {
            step("cert-manager is installed already");
        } else {
            step(&format!(
                "installing cert-manager {} (the webhooks' certificates; CERT_MANAGER_INSTALL_SKIP=true skips this)",
                cert_manager::CERT_MANAGER_VERSION
            ));
            for command in cert_manager::install_commands(&config) {
                command.run()?;
            }
        }
    }

    step("installing the CRDs and deploying the controller-manager");
    for command in config.deploy_commands(&project) {
        command.run()?;
    }
    step("waiting for the controller-manager to be available");
    let manager_namespace = project.manager_namespace();
    let deployment = project.manager_deployment();
    let rollout = wait_for_rollout(&client, &manager_namespace, &deployment, POD_TIMEOUT);
    if let Err(error) = runtime().block_on(rollout) {
        print_diagnostics(&project);
        return Err(error);
    }
    if cert_manager::has_webhooks(&project) {
        step(if needs_cert_manager {
            "waiting for cert-manager to inject the CA into the webhook configurations and CRDs"
        } else {
            "waiting for the manager to write its CA into the webhook configurations and CRDs"
        });
        let injected = cert_manager::wait_for_ca_injection(&client, &project);
        match runtime().block_on(injected) {
            Ok(checked) => checked
                .iter()
                .for_each(|what| step(&format!("CA injected: {what}"))),
            Err(error) => {
                print_diagnostics(&project);
                return Err(error);
            }
        }
    }
    Ok(Cluster {
        client,
        config,
        project,
        manager_namespace,
        namespace: project.namespace(),
    })
}

/// Creates the namespaces of the tests, labelled so that the API server refuses pods that break
/// the "restricted" Pod Security Standard, as kubebuilder's e2e suite does. `make deploy` then
/// applies the manager's namespace over it and keeps the label.
async fn apply_namespaces(client: &Client, project: &Project) -> anyhow::Result<()> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    for name in project.namespaces() {
        let namespace = Namespace {
            metadata: ObjectMeta {
                name: Some(name.clone()),
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
                &name,
                &PatchParams::apply(FIELD_MANAGER),
                &Patch::Apply(&namespace),
            )
            .await
            .with_context(|| format!("creating namespace {name}"))?;
    }
    Ok(())
}

/// Prints what helps to understand a failure: the manager's logs and pod, and the events of the
/// test namespaces. Uses kubectl, whose output is made for people. [`run`] calls it when a test
/// fails; call it yourself to look at the cluster at some other point.
pub fn print_diagnostics(project: &Project) {
    step("collecting diagnostics");
    for args in diagnostic_queries(project) {
        println!("$ kubectl {}", args.join(" "));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        match kubectl(&args) {
            Ok(output) => println!("{output}"),
            Err(error) => println!("{error:#}"),
        }
    }
}

/// The kubectl arguments of [`print_diagnostics`].
fn diagnostic_queries(project: &Project) -> Vec<Vec<String>> {
    fn query(args: &[&str]) -> Vec<String> {
        args.iter().map(|arg| arg.to_string()).collect()
    }
    let manager_namespace = project.manager_namespace();
    let mut queries = vec![
        query(&[
            "logs",
            "--namespace",
            &manager_namespace,
            "--selector",
            MANAGER_SELECTOR,
            "--all-containers",
            "--prefix",
            "--tail=-1",
        ]),
        query(&[
            "describe",
            "pods",
            "--namespace",
            &manager_namespace,
            "--selector",
            MANAGER_SELECTOR,
        ]),
    ];
    for namespace in project.namespaces() {
        queries.push(query(&[
            "get",
            "events",
            "--namespace",
            &namespace,
            "--sort-by=.lastTimestamp",
        ]));
    }
    queries
}

/// Prints the diagnostics when a test panics (a failed `assert!`) rather than returning an error.
struct DiagnosticsOnPanic<'a>(&'a Project);

impl Drop for DiagnosticsOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            print_diagnostics(self.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::{DeploymentCondition, DeploymentSpec, DeploymentStatus};
    use k8s_openapi::api::core::v1::{PodCondition, PodStatus};

    use super::*;

    const PROJECT: Project = Project {
        name: "memcached-operator",
        namespaced: false,
        root: "/src/memcached-operator",
    };

    #[test]
    fn names_follow_the_name_prefix_of_config_default() {
        assert_eq!(PROJECT.manager_namespace(), "memcached-operator-system");
        assert_eq!(
            PROJECT.manager_deployment(),
            "memcached-operator-controller-manager"
        );
        assert_eq!(
            PROJECT.service_account(),
            "memcached-operator-controller-manager"
        );
        assert_eq!(
            PROJECT.metrics_service(),
            "memcached-operator-controller-manager-metrics-service"
        );
        assert_eq!(
            PROJECT.metrics_reader_role(),
            "memcached-operator-metrics-reader"
        );
        assert_eq!(
            PROJECT.metrics_binding(),
            "memcached-operator-metrics-binding"
        );
        assert_eq!(
            PROJECT.default_image(),
            "example.com/memcached-operator:v0.0.1"
        );
        assert!(!PROJECT.default_image().ends_with(":latest"));
    }

    #[test]
    fn custom_resources_go_to_a_namespace_of_their_own_unless_the_project_is_namespaced() {
        assert_eq!(PROJECT.namespace(), "memcached-operator-e2e");
        assert_eq!(
            PROJECT.namespaces(),
            ["memcached-operator-system", "memcached-operator-e2e"]
        );
        let namespaced = Project {
            namespaced: true,
            ..PROJECT
        };
        assert_eq!(namespaced.namespace(), "memcached-operator-system");
        assert_eq!(namespaced.namespaces(), ["memcached-operator-system"]);
    }

    #[test]
    fn diagnostics_show_the_manager_and_the_events_of_every_test_namespace() {
        let queries: Vec<String> = diagnostic_queries(&PROJECT)
            .iter()
            .map(|args| args.join(" "))
            .collect();
        assert_eq!(
            queries,
            [
                "logs --namespace memcached-operator-system --selector control-plane=controller-manager --all-containers --prefix --tail=-1",
                "describe pods --namespace memcached-operator-system --selector control-plane=controller-manager",
                "get events --namespace memcached-operator-system --sort-by=.lastTimestamp",
                "get events --namespace memcached-operator-e2e --sort-by=.lastTimestamp",
            ]
        );
    }

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
