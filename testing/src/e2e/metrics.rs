//! Reading the manager's `/metrics` from inside the cluster, as Prometheus would.
//!
//! The endpoint is HTTPS on port 8443 behind the Service [`Project::metrics_service`], and only
//! answers callers whose token may `get` `/metrics`. As in kubebuilder's e2e suite, the manager's
//! service account is bound to the `<project>-metrics-reader` ClusterRole and a curl pod running as
//! that account reads the endpoint with its token.

use std::collections::BTreeMap;

use anyhow::{Context as _, bail, ensure};
use k8s_openapi::api::core::v1::{
    Capabilities, Container, Pod, PodSecurityContext, PodSpec, SeccompProfile, SecurityContext,
};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, RoleRef, Subject};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{ListParams, LogParams, Patch, PatchParams, PostParams};
use kube::{Api, Client, Resource as _, ResourceExt as _};

use super::{
    Cluster, FIELD_MANAGER, POD_TIMEOUT, Project, TIMEOUT, delete_and_wait, eventually, step,
};

/// The image of the pod that reads the metrics.
pub const CURL_IMAGE: &str = "curlimages/curl:8.14.1";

/// Where Kubernetes mounts the token of a pod's service account.
const TOKEN_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount/token";

/// Reads `/metrics` with a token that may, and returns the response body: metrics in the
/// OpenMetrics text format.
///
/// It binds the [metrics reader role](Project::metrics_reader_role) to the manager's service
/// account, waits until the metrics Service has a ready endpoint, and runs a [`curl_pod`] as that
/// account in the manager's namespace.
///
/// ```no_run
/// # use operator_rs_testing::e2e::{self, metrics};
/// # const PROJECT: e2e::Project = e2e::Project { name: "memcached-operator", namespaced: false, root: "." };
/// # fn main() -> anyhow::Result<()> {
/// e2e::run(&PROJECT, async |cluster| {
///     let text = metrics::scrape(cluster).await?;
///     anyhow::ensure!(metrics::families(&text).contains_key("controller_runtime_reconcile"));
///     Ok(())
/// })
/// # }
/// ```
pub async fn scrape(cluster: &Cluster) -> anyhow::Result<String> {
    let client = &cluster.client;
    let project = &cluster.project;
    step("allowing the manager's service account to read the metrics");
    authorize(client, project).await?;
    step("waiting for the metrics Service to have a ready endpoint");
    wait_for_endpoint(client, project).await?;
    step("reading the metrics with curl, from a pod in the cluster");
    let pods: Api<Pod> = Api::namespaced(client.clone(), cluster.manager_namespace());
    let pod = pods
        .create(&PostParams::default(), &curl_pod(project))
        .await
        .context("creating the curl pod")?;
    let name = pod.name_any();
    let phase = eventually("the curl pod has finished", POD_TIMEOUT, async || {
        let pod = pods.get(&name).await?;
        let phase = pod.status.and_then(|status| status.phase);
        match phase.as_deref() {
            Some("Succeeded" | "Failed") => Ok(phase),
            _ => bail!("the curl pod is {}", phase.as_deref().unwrap_or("pending")),
        }
    })
    .await?;
    let output = pods.logs(&name, &LogParams::default()).await?;
    delete_and_wait(&pods, &name, TIMEOUT).await?;
    ensure!(
        phase.as_deref() == Some("Succeeded"),
        "curl could not read {}:\n{output}",
        metrics_url(project)
    );
    Ok(output)
}

/// The metric families that `text` announces (`# TYPE <name> <type>`), by name. Names are as
/// OpenMetrics writes them in `# TYPE` lines: counters without their `_total` suffix.
pub fn families(text: &str) -> BTreeMap<&str, &str> {
    text.lines()
        .filter_map(|line| line.strip_prefix("# TYPE ")?.split_once(' '))
        .collect()
}

/// The value of one series in `text`, written as the endpoint writes it, labels in the same
/// order: `controller_runtime_reconcile_total{controller="x",result="success"}`.
pub fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|line| {
        let rest = line.strip_prefix(series)?.strip_prefix(' ')?;
        rest.split_whitespace().next()?.parse().ok()
    })
}

/// The URL of the manager's metrics endpoint inside the cluster.
///
/// ```
/// # use operator_rs_testing::e2e::{Project, metrics};
/// let project = Project { name: "guestbook", namespaced: false, root: "." };
/// assert_eq!(
///     metrics::metrics_url(&project),
///     "https://guestbook-controller-manager-metrics-service.guestbook-system.svc:8443/metrics"
/// );
/// ```
pub fn metrics_url(project: &Project) -> String {
    format!(
        "https://{}.{}.svc:8443/metrics",
        project.metrics_service(),
        project.manager_namespace()
    )
}

/// Binds the metrics reader ClusterRole to the manager's service account.
///
/// No manifest in `config/` knows this binding, so `make undeploy` would leave it behind. It is
/// owned by the ClusterRole instead: when `make undeploy` deletes the role, Kubernetes' garbage
/// collector deletes the binding too.
async fn authorize(client: &Client, project: &Project) -> anyhow::Result<()> {
    let role_name = project.metrics_reader_role();
    let binding_name = project.metrics_binding();
    let role = Api::<ClusterRole>::all(client.clone())
        .get(&role_name)
        .await
        .with_context(|| format!("reading ClusterRole {role_name}"))?;
    let binding = ClusterRoleBinding {
        metadata: ObjectMeta {
            name: Some(binding_name.clone()),
            owner_references: role.owner_ref(&()).map(|owner| vec![owner]),
            ..ObjectMeta::default()
        },
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".to_string(),
            kind: "ClusterRole".to_string(),
            name: role_name,
        },
        subjects: Some(vec![Subject {
            kind: "ServiceAccount".to_string(),
            name: project.service_account(),
            namespace: Some(project.manager_namespace()),
            ..Subject::default()
        }]),
    };
    Api::<ClusterRoleBinding>::all(client.clone())
        .patch(
            &binding_name,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&binding),
        )
        .await
        .with_context(|| format!("applying ClusterRoleBinding {binding_name}"))?;
    Ok(())
}

/// Waits until the metrics Service sends traffic to a ready manager pod.
async fn wait_for_endpoint(client: &Client, project: &Project) -> anyhow::Result<()> {
    let slices: Api<EndpointSlice> = Api::namespaced(client.clone(), &project.manager_namespace());
    let service_name = project.metrics_service();
    let service = format!("kubernetes.io/service-name={service_name}");
    let what = format!("Service {service_name} has a ready endpoint");
    eventually(&what, TIMEOUT, async || {
        let slices = slices.list(&ListParams::default().labels(&service)).await?;
        let ready = slices
            .items
            .iter()
            .flat_map(|slice| &slice.endpoints)
            .any(|endpoint| {
                let conditions = endpoint.conditions.as_ref();
                conditions.and_then(|conditions| conditions.ready) == Some(true)
            });
        ensure!(ready, "no ready endpoint");
        Ok(())
    })
    .await
}

/// A pod that prints the metrics of `project`'s manager and exits, as the manager's service
/// account. It complies with the restricted Pod Security Standard that the namespace enforces.
pub fn curl_pod(project: &Project) -> Pod {
    // --insecure: the manager serves a self-signed certificate unless cert-manager provides one
    // (the [METRICS-WITH-CERTS] patch of config/default). --retry: the endpoint may be ready a
    // moment before the Service routes to it. No retry on HTTP errors: a 401 or 403 is an answer.
    let script = format!(
        "curl --silent --show-error --fail-with-body --insecure \
         --retry 10 --retry-connrefused --retry-delay 3 \
         --header \"Authorization: Bearer $(cat {TOKEN_PATH})\" {}",
        metrics_url(project)
    );
    Pod {
        metadata: ObjectMeta {
            generate_name: Some("curl-metrics-".to_string()),
            ..ObjectMeta::default()
        },
        spec: Some(PodSpec {
            restart_policy: Some("Never".to_string()),
            service_account_name: Some(project.service_account()),
            security_context: Some(PodSecurityContext {
                run_as_non_root: Some(true),
                // The image's user is a name (curl_user), which the kubelet cannot check against
                // runAsNonRoot: give a numeric one.
                run_as_user: Some(1000),
                seccomp_profile: Some(SeccompProfile {
                    type_: "RuntimeDefault".to_string(),
                    ..SeccompProfile::default()
                }),
                ..PodSecurityContext::default()
            }),
            containers: vec![Container {
                name: "curl".to_string(),
                image: Some(CURL_IMAGE.to_string()),
                command: Some(vec!["/bin/sh".to_string(), "-c".to_string(), script]),
                security_context: Some(SecurityContext {
                    allow_privilege_escalation: Some(false),
                    capabilities: Some(Capabilities {
                        drop: Some(vec!["ALL".to_string()]),
                        ..Capabilities::default()
                    }),
                    read_only_root_filesystem: Some(true),
                    ..SecurityContext::default()
                }),
                ..Container::default()
            }],
            ..PodSpec::default()
        }),
        ..Pod::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::e2e::security::restricted_violations;

    const PROJECT: Project = Project {
        name: "memcached-operator",
        namespaced: false,
        root: "/src/memcached-operator",
    };

    const TEXT: &str = r#"# HELP controller_runtime_reconcile Total number of reconciliations per controller.
# TYPE controller_runtime_reconcile counter
controller_runtime_reconcile_total{controller="ship",result="success"} 4
controller_runtime_reconcile_total{controller="ship",result="error"} 0
# HELP controller_runtime_reconcile_time_seconds Length of time per reconciliation per controller.
# TYPE controller_runtime_reconcile_time_seconds histogram
controller_runtime_reconcile_time_seconds_count{controller="ship"} 4
controller_runtime_reconcile_time_seconds_count{controller="ship_v2"} 7 1700000000
# TYPE process_start_time_seconds gauge
process_start_time_seconds 1.7e9
# EOF
"#;

    #[test]
    fn families_are_read_from_type_lines() {
        let families = families(TEXT);
        assert_eq!(
            families,
            BTreeMap::from([
                ("controller_runtime_reconcile", "counter"),
                ("controller_runtime_reconcile_time_seconds", "histogram"),
                ("process_start_time_seconds", "gauge"),
            ])
        );
    }

    #[test]
    fn samples_match_whole_series() {
        let success = r#"controller_runtime_reconcile_total{controller="ship",result="success"}"#;
        assert_eq!(sample(TEXT, success), Some(4.0));
        let count = r#"controller_runtime_reconcile_time_seconds_count{controller="ship"}"#;
        assert_eq!(sample(TEXT, count), Some(4.0));
        // A value may be followed by a timestamp.
        let v2 = r#"controller_runtime_reconcile_time_seconds_count{controller="ship_v2"}"#;
        assert_eq!(sample(TEXT, v2), Some(7.0));
        assert_eq!(sample(TEXT, "process_start_time_seconds"), Some(1.7e9));
        // A prefix of a series is not the series.
        assert_eq!(sample(TEXT, "process_start_time"), None);
        assert_eq!(sample(TEXT, "controller_runtime_reconcile_total"), None);
    }

    #[test]
    fn the_curl_pod_reads_the_endpoint_with_its_token() {
        let pod = curl_pod(&PROJECT);
        let spec = pod.spec.as_ref().unwrap();
        assert_eq!(
            spec.service_account_name.as_deref(),
            Some("memcached-operator-controller-manager")
        );
        assert_eq!(spec.restart_policy.as_deref(), Some("Never"));
        let script = spec.containers[0].command.as_ref().unwrap().join(" ");
        let url = "https://memcached-operator-controller-manager-metrics-service.memcached-operator-system.svc:8443/metrics";
        assert_eq!(metrics_url(&PROJECT), url);
        assert!(script.contains(url), "{script}");
        assert!(script.contains(TOKEN_PATH), "{script}");
    }

    #[test]
    fn the_curl_pod_may_run_in_a_restricted_namespace() {
        let pod = curl_pod(&PROJECT);
        assert_eq!(
            restricted_violations(pod.spec.as_ref().unwrap()),
            Vec::<String>::new()
        );
    }
}
