// Copyright 2026 The operator-rs authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//! The controller-manager runs in the cluster and serves its metrics: the `Manager` specs of
//! kubebuilder's e2e suite.

use anyhow::{Context as _, bail, ensure};
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::ListParams;
use operator_rs_testing::e2e::commands::same_image;
use operator_rs_testing::e2e::security::restricted_violations;
use operator_rs_testing::e2e::{
    self, MANAGER_SELECTOR, TIMEOUT, eventually, metrics, pod_is_ready, step,
};

use crate::PROJECT;

#[test]
#[ignore = "needs a cluster: run with `make test-e2e`"]
fn controller_manager_pod_runs() -> anyhow::Result<()> {
    e2e::run(&PROJECT, async |cluster| {
        step("validating that the controller-manager pod is running as expected");
        let pods: Api<Pod> = Api::namespaced(cluster.client.clone(), cluster.manager_namespace());
        let selector = ListParams::default().labels(MANAGER_SELECTOR);
        let pod = eventually("one controller-manager pod is ready", TIMEOUT, async || {
            let pods = pods.list(&selector).await?.items;
            // Pods of an earlier rollout may still be shutting down.
            let live: Vec<&Pod> = pods
                .iter()
                .filter(|pod| pod.metadata.deletion_timestamp.is_none())
                .collect();
            let [pod] = live.as_slice() else {
                bail!("expected 1 controller-manager pod, found {}", live.len());
            };
            let phase = pod
                .status
                .as_ref()
                .and_then(|status| status.phase.as_deref());
            ensure!(phase == Some("Running"), "the pod is {phase:?}");
            ensure!(pod_is_ready(pod), "the pod is not ready");
            Ok((*pod).clone())
        })
        .await?;

        let spec = pod.spec.as_ref().context("the pod has no spec")?;
        let manager = spec
            .containers
            .iter()
            .find(|container| container.name == "manager")
            .context("the pod has no container named manager")?;
        let image = manager.image.as_deref().unwrap_or_default();
        ensure!(
            same_image(image, &cluster.config.image),
            "the manager runs {image}, not the image that the tests built, {}",
            cluster.config.image
        );
        assert_eq!(
            restricted_violations(spec),
            Vec::<String>::new(),
            "the manager's pod follows the restricted Pod Security Standard"
        );
        Ok(())
    })
}

#[test]
#[ignore = "needs a cluster: run with `make test-e2e`"]
fn metrics_endpoint_serves_controller_runtime_metrics() -> anyhow::Result<()> {
    e2e::run(&PROJECT, async |cluster| {
        let text = metrics::scrape(cluster).await?;
        let families = metrics::families(&text);
        // controller-runtime's families (counters without their `_total`, as `# TYPE` names
        // them), which its dashboards and alerts query.
        for (name, kind) in [
            ("controller_runtime_reconcile", "counter"),
            ("controller_runtime_reconcile_errors", "counter"),
            ("controller_runtime_reconcile_time_seconds", "histogram"),
            ("controller_runtime_max_concurrent_reconciles", "gauge"),
            ("controller_runtime_active_workers", "gauge"),
            ("workqueue_adds", "counter"),
            ("workqueue_retries", "counter"),
            ("workqueue_depth", "gauge"),
            ("workqueue_queue_duration_seconds", "histogram"),
            ("workqueue_work_duration_seconds", "histogram"),
            ("workqueue_unfinished_work_seconds", "gauge"),
            ("workqueue_longest_running_processor_seconds", "gauge"),
            ("rest_client_requests", "counter"),
            ("leader_election_master_status", "gauge"),
            ("controller_runtime_webhook_requests", "counter"),
            ("controller_runtime_webhook_requests_in_flight", "gauge"),
            ("controller_runtime_webhook_latency_seconds", "histogram"),
        ] {
            ensure!(
                families.get(name) == Some(&kind),
                "no {kind} {name} in the metrics:\n{text}"
            );
        }
        ensure!(
            text.ends_with("# EOF\n"),
            "the metrics are cut short:\n{text}"
        );
        Ok(())
    })
}
