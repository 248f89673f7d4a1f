//! A stand-in for the kubelet, for control planes without nodes (an API server and a controller
//! manager alone, as `hack/test-cluster` runs against): it watches pods and reports them as a
//! kubelet whose containers all start at once would, so that the ReplicaSet and Deployment
//! controllers count them available, and controllers that wait for their pods see them run.
//!
//! - A pod that restarts its containers (`restartPolicy: Always`, a Deployment's) becomes
//!   `Running`, every container running and ready, and the pod `Ready`.
//! - A pod that runs to completion (`Never`, `OnFailure`) becomes `Running`, then, after
//!   [`Kubelet::runs_for`], `Succeeded`: every container terminated with exit code 0.
//!
//! Nothing runs: no image is pulled, no command executed, no IP given. A pod is never bound to a
//! node either (`spec.nodeName` stays empty), which is what lets the API server delete it at once
//! when its ReplicaSet scales down, with no kubelet to confirm. Only `pods/status` is written
//! (with a JSON merge patch), so the client needs `patch` of `pods/status` besides `list` and
//! `watch` of `pods`.
//!
//! ```no_run
//! use k8s_openapi::api::core::v1::Pod;
//! use kube::{Api, Client};
//! use operator_rs_testing::kubelet::Kubelet;
//!
//! # async fn run(client: Client) {
//! // The pods of one namespace become ready until the task is dropped or aborted.
//! let kubelet = tokio::spawn(Kubelet::new(Api::<Pod>::namespaced(client, "test")).run());
//! // … create a Deployment, wait for it to be available …
//! kubelet.abort();
//! # }
//! ```

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::TryStreamExt as _;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Patch, PatchParams};
use kube::runtime::{WatchStreamExt as _, watcher};
use kube::{Api, ResourceExt as _};
use serde_json::{Value, json};

/// How long a pod that runs to completion runs, unless told otherwise.
pub const DEFAULT_RUN_TIME: Duration = Duration::from_secs(1);

/// What the stand-in does with a pod it sees, from the pod alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Nothing: it is ready, finished, or being deleted.
    None,
    /// Start it: `Running`, containers running (and, for a pod that restarts them, ready).
    Start,
    /// It runs to completion and runs now: finish it after the run time.
    Finish,
}

/// The stand-in for the kubelet of the pods of one [`Api`] (a namespace, or all of them).
pub struct Kubelet {
    api: Api<Pod>,
    run_for: Duration,
    /// The pods (by uid) whose end is scheduled, so that each ends once.
    finishing: Arc<Mutex<HashSet<String>>>,
}

impl Kubelet {
    /// The stand-in for the pods that `api` lists.
    pub fn new(api: Api<Pod>) -> Self {
        Kubelet {
            api,
            run_for: DEFAULT_RUN_TIME,
            finishing: Arc::default(),
        }
    }

    /// How long a pod that runs to completion runs before it succeeds.
    #[must_use]
    pub fn runs_for(mut self, run_for: Duration) -> Self {
        self.run_for = run_for;
        self
    }

    /// Watches the pods and reports them running (and finished) for ever: run it in a task and
    /// abort it, or drop the future. A write that fails (the pod is gone, the API server away) is
    /// logged; the watch brings the pod again if it is still there.
    pub async fn run(self) {
        let pods = watcher(self.api.clone(), watcher::Config::default())
            .default_backoff()
            .applied_objects();
        let mut pods = std::pin::pin!(pods);
        loop {
            match pods.try_next().await {
                Ok(Some(pod)) => self.handle(&pod).await,
                Ok(None) => return,
                Err(error) => tracing::debug!(%error, "kubelet stand-in: the pod watch failed"),
            }
        }
    }

    /// Takes the next step of `pod`.
    async fn handle(&self, pod: &Pod) {
        match step(pod) {
            Step::None => {}
            Step::Start => write(&self.api, &pod.name_any(), started(pod, &now())).await,
            Step::Finish => self.finish_later(pod),
        }
    }

    /// Reports `pod` succeeded after the run time, once.
    fn finish_later(&self, pod: &Pod) {
        let uid = pod.uid().unwrap_or_default();
        let mut finishing = self
            .finishing
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if !finishing.insert(uid) {
            return;
        }
        let (api, run_for, pod) = (self.api.clone(), self.run_for, pod.clone());
        tokio::spawn(async move {
            tokio::time::sleep(run_for).await;
            write(&api, &pod.name_any(), succeeded(&pod, &now())).await;
        });
    }
}

/// Patches the status of the pod `name` with `status`.
async fn write(api: &Api<Pod>, name: &str, status: Value) {
    let patch = Patch::Merge(json!({ "status": status }));
    if let Err(error) = api
        .patch_status(name, &PatchParams::default(), &patch)
        .await
    {
        tracing::warn!(%error, pod = name, "kubelet stand-in: could not write the pod's status");
    }
}

/// What the stand-in does next with `pod`.
pub fn step(pod: &Pod) -> Step {
    if pod.metadata.deletion_timestamp.is_some() {
        return Step::None;
    }
    let status = pod.status.as_ref();
    let phase = status.and_then(|status| status.phase.as_deref());
    let completes = pod
        .spec
        .as_ref()
        .and_then(|spec| spec.restart_policy.as_deref())
        .is_some_and(|policy| policy != "Always");
    match phase {
        Some("Succeeded" | "Failed") => Step::None,
        Some("Running") if completes => Step::Finish,
        Some("Running") if is_ready(pod) => Step::None,
        _ => Step::Start,
    }
}

/// Whether `pod` has the condition `Ready` true.
fn is_ready(pod: &Pod) -> bool {
    let conditions = pod.status.as_ref().and_then(|s| s.conditions.as_ref());
    conditions.is_some_and(|conditions| {
        conditions
            .iter()
            .any(|c| c.type_ == "Ready" && c.status == "True")
    })
}

/// The container names and images of `pod`.
fn containers(pod: &Pod) -> Vec<(String, String)> {
    let spec = pod.spec.as_ref();
    let containers = spec
        .map(|spec| spec.containers.as_slice())
        .unwrap_or_default();
    containers
        .iter()
        .map(|c| (c.name.clone(), c.image.clone().unwrap_or_default()))
        .collect()
}

/// The status of `pod` running since `now`, every container running and ready.
fn started(pod: &Pod, now: &str) -> Value {
    let statuses: Vec<Value> = containers(pod)
        .into_iter()
        .map(|(name, image)| {
            json!({
                "name": name, "image": image, "imageID": "", "ready": true, "started": true,
                "restartCount": 0, "containerID": format!("stand-in://{name}"),
                "state": { "running": { "startedAt": now } },
            })
        })
        .collect();
    json!({
        "phase": "Running",
        "startTime": now,
        "conditions": conditions(true, now, None),
        "containerStatuses": statuses,
    })
}

/// The status of `pod` finished at `now`, every container with exit code 0 (started when the pod
/// did).
fn succeeded(pod: &Pod, now: &str) -> Value {
    let status = pod.status.as_ref();
    let start = status.and_then(|status| status.start_time.as_ref());
    let started = start.map_or_else(
        || now.to_owned(),
        |time| time.0.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
    );
    let statuses: Vec<Value> = containers(pod)
        .into_iter()
        .map(|(name, image)| {
            json!({
                "name": name, "image": image, "imageID": "", "ready": false, "started": false,
                "restartCount": 0, "containerID": format!("stand-in://{name}"),
                "state": { "terminated": {
                    "exitCode": 0, "reason": "Completed", "startedAt": started, "finishedAt": now,
                } },
            })
        })
        .collect();
    json!({
        "phase": "Succeeded",
        "conditions": conditions(false, now, Some("PodCompleted")),
        "containerStatuses": statuses,
    })
}

/// Now, as Kubernetes writes times (RFC 3339, in seconds).
fn now() -> String {
    Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// The pod conditions a kubelet writes: scheduled and initialized, and ready or not.
fn conditions(ready: bool, now: &str, reason: Option<&str>) -> Value {
    let condition = |type_: &str, status: bool| {
        let mut condition = json!({
            "type": type_,
            "status": if status { "True" } else { "False" },
            "lastTransitionTime": now,
            "lastProbeTime": null,
        });
        if let (false, Some(reason)) = (status, reason) {
            condition["reason"] = json!(reason);
        }
        condition
    };
    json!([
        condition("PodScheduled", true),
        condition("Initialized", true),
        condition("ContainersReady", ready),
        condition("Ready", ready),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake::FakeApiServer;
    use crate::{TIMEOUT, wait_until};

    fn pod(name: &str, restart_policy: &str) -> Pod {
        serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": { "name": name, "namespace": "default" },
            "spec": {
                "restartPolicy": restart_policy,
                "containers": [{ "name": "main", "image": "busybox:1.36.1" }],
            },
        }))
        .unwrap()
    }

    fn stored(fake: &FakeApiServer, name: &str) -> Pod {
        fake.get::<Pod>(Some("default"), name).unwrap()
    }

    fn phase(fake: &FakeApiServer, name: &str) -> Option<String> {
        stored(fake, name).status.and_then(|status| status.phase)
    }

    #[test]
    fn each_pod_takes_the_step_of_its_state() {
        let mut serving = pod("web", "Always");
        assert_eq!(step(&serving), Step::Start);
        serving.status = serde_json::from_value(started(&serving, "2026-01-01T00:00:00Z")).ok();
        assert_eq!(step(&serving), Step::None);

        let mut job = pod("job", "Never");
        assert_eq!(step(&job), Step::Start);
        job.status = serde_json::from_value(started(&job, "2026-01-01T00:00:00Z")).ok();
        assert_eq!(step(&job), Step::Finish);
        job.status = serde_json::from_value(succeeded(&job, "2026-01-01T00:00:01Z")).ok();
        assert_eq!(step(&job), Step::None);

        let mut deleted = pod("gone", "Always");
        deleted.metadata.deletion_timestamp = serving.status.unwrap().start_time;
        assert_eq!(step(&deleted), Step::None);
    }

    #[tokio::test]
    async fn pods_become_ready_and_pods_that_complete_succeed() {
        let fake = FakeApiServer::new();
        fake.put(&pod("web", "Always"));
        fake.put(&pod("job", "OnFailure"));
        let api = Api::<Pod>::namespaced(fake.client(), "default");
        let kubelet = tokio::spawn(Kubelet::new(api).runs_for(Duration::from_millis(50)).run());

        wait_until("the serving pod is ready", TIMEOUT, || {
            is_ready(&stored(&fake, "web"))
        })
        .await;
        let web = stored(&fake, "web").status.unwrap();
        assert_eq!(web.phase.as_deref(), Some("Running"));
        let container = &web.container_statuses.unwrap()[0];
        assert!(container.ready && container.state.as_ref().unwrap().running.is_some());

        wait_until("the pod that completes succeeds", TIMEOUT, || {
            phase(&fake, "job").as_deref() == Some("Succeeded")
        })
        .await;
        let job = stored(&fake, "job").status.unwrap();
        let state = job.container_statuses.unwrap()[0].state.clone().unwrap();
        assert_eq!(state.terminated.unwrap().exit_code, 0);
        assert!(!is_ready(&stored(&fake, "job")));
        kubelet.abort();
    }
}
