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

//! The At controller: runs the command of every At at its schedule, in a busybox Pod the At
//! owns, and reports in the At's status where it is: PENDING, RUNNING, then DONE or FAILED.
//!
//! `reconcile` gets no diff, only the At as it is now, and works out its phase from the At, its
//! Pod and the time ([`plan`]): before the schedule it asks the runner to come back at the
//! schedule (`Action::requeue`); at the schedule it creates the Pod; then the Pod's changes
//! (it is watched) reconcile the At again until the Pod has finished. Deleting an At deletes
//! its Pod: the Pod's owner reference tells Kubernetes' garbage collector to.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{
    Capabilities, Container, Pod, PodSecurityContext, PodSpec, SeccompProfile, SecurityContext,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::jiff::Timestamp;
use kube::runtime::controller::Action;
use kube::runtime::events::EventType;
use kube::runtime::watcher;
use kube::{Api, Resource as _, ResourceExt as _};
use operator_rs_runtime::controller::{
    Context, ControllerFuture, ControllerSetup, PolicyRule, RbacScope, Runner, Shared, rule,
};
use serde_json::json;

use crate::api::v1alpha1::At;
use crate::api::v1alpha1::at::Phase;

/// The controller's name in logs and metrics, the `reportingController` of its Events, and its
/// field manager name for server-side apply (the owner of the fields it writes, see `kubectl get
/// --show-managed-fields`).
const CONTROLLER_NAME: &str = "at-controller";

/// The image of the Pods that run the commands.
pub const IMAGE: &str = "busybox:1.36.1";

/// The `app.kubernetes.io/managed-by` label of the Pods of this controller: it also selects the
/// Pods it watches.
const MANAGED_BY: &str = "at-operator";

/// This controller, as listed in `controllers()` of `src/controller/mod.rs`.
pub const CONTROLLER: ControllerSetup = ControllerSetup {
    name: CONTROLLER_NAME,
    rbac_rules,
    rbac_scope: RbacScope::Project,
    setup,
};

/// Sets up the controller; the manager calls it once at startup.
///
/// The runner watches Ats in the namespaces of `WATCH_NAMESPACE` (all by default), and the Pods
/// of this controller, and calls `reconcile` for each At, with metrics, retries and graceful
/// shutdown.
fn setup(shared: &Shared) -> ControllerFuture {
    // Only the Pods of this controller: far fewer watch events than every Pod of the cluster.
    let managed = format!("app.kubernetes.io/managed-by={MANAGED_BY}");
    Runner::<At>::new(CONTROLLER_NAME, shared)
        // A change of a Pod (it starts, it finishes) reconciles the At that owns it.
        .owns::<Pod>(watcher::Config::default().labels(&managed))
        // The controller's state is its clock: the system's here, a fixed time in the tests.
        .run(reconcile, Timestamp::now as Clock)
}

/// Where `reconcile` reads the time.
pub type Clock = fn() -> Timestamp;

/// The API permissions of this controller, right next to the code that needs them: `make
/// manifests` writes the rules of all controllers to `config/rbac/role.yaml`.
pub fn rbac_rules() -> Vec<PolicyRule> {
    // The group and plural of At, from its `#[kube(...)]` attribute (`&()`: a typed resource
    // needs no runtime type information).
    let group = At::group(&());
    let plural = At::plural(&());
    vec![
        // Watching Ats.
        rule(&[&group], &[&plural], &["get", "list", "watch"]),
        // Writing the status subresource: the phase.
        rule(
            &[&group],
            &[&format!("{plural}/status")],
            &["get", "update", "patch"],
        ),
        // Setting `blockOwnerDeletion` in the owner references of the Pods.
        rule(&[&group], &[&format!("{plural}/finalizers")], &["update"]),
        // Publishing Events (the recorder patches an Event when it repeats).
        rule(&["events.k8s.io"], &["events"], &["create", "patch"]),
        // The Pods that run the commands: watched, read and created.
        rule(
            &[""],
            &["pods"],
            &["get", "list", "watch", "create", "patch"],
        ),
    ]
}

/// Why a reconciliation failed. Every variant names the object, because the runner logs the
/// error and the log line should say which object it is about.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot read Pod {namespace}/{name}")]
    GetPod {
        namespace: String,
        name: String,
        #[source]
        source: kube::Error,
    },
    #[error("cannot create Pod {namespace}/{name}")]
    CreatePod {
        namespace: String,
        name: String,
        #[source]
        source: kube::Error,
    },
    #[error("cannot update the status of At {namespace}/{name}")]
    UpdateStatus {
        namespace: String,
        name: String,
        #[source]
        source: kube::Error,
    },
}

/// The longest the controller waits for a schedule in one go: an At due in a year is looked at
/// again every day until then. (kube's queue of requeues cannot hold a time more than about two
/// years ahead, and a schedule is whatever the user wrote.)
pub const LONGEST_WAIT: Duration = Duration::from_secs(24 * 60 * 60);

/// What an At needs now, from its schedule, its Pod and the time.
#[derive(Debug, PartialEq, Eq)]
pub enum Plan {
    /// Nothing yet: come back in this long, at the schedule (or after [`LONGEST_WAIT`]).
    Wait(Duration),
    /// The schedule has come and there is no Pod: create it.
    Start,
    /// The Pod exists (or existed and finished): report this phase, and wait for the Pod to
    /// change.
    Report(Phase),
}

/// The one decision of the controller.
///
/// An At whose Pod finished stays DONE or FAILED even when the Pod is deleted later: the command
/// runs once. (Once the Pod is gone, the status is the only record that it ran.)
pub fn plan(at: &At, pod: Option<&Pod>, now: Timestamp) -> Plan {
    let finished = |phase| matches!(phase, Some(Phase::Done | Phase::Failed));
    let reported = at.status.as_ref().and_then(|status| status.phase);
    match pod {
        Some(pod) => Plan::Report(pod_phase(pod)),
        None if finished(reported) => Plan::Report(reported.unwrap_or(Phase::Done)),
        None => {
            let wait = at.spec.schedule.0.duration_since(now);
            if wait.is_positive() {
                Plan::Wait(wait.unsigned_abs().min(LONGEST_WAIT))
            } else {
                Plan::Start
            }
        }
    }
}

/// The phase of an At whose Pod is `pod`: the Pod's phase, as far as the At is concerned.
fn pod_phase(pod: &Pod) -> Phase {
    let phase = pod
        .status
        .as_ref()
        .and_then(|status| status.phase.as_deref());
    match phase {
        Some("Succeeded") => Phase::Done,
        Some("Failed") => Phase::Failed,
        // Pending (pulling the image), Running, or no status yet.
        _ => Phase::Running,
    }
}

/// Brings one At forward: waits for its schedule, starts its Pod, follows the Pod to the end.
async fn reconcile(at: Arc<At>, ctx: Arc<Context<Clock>>) -> Result<Action, Error> {
    if at.meta().deletion_timestamp.is_some() {
        // Kubernetes deletes the Pod with it: the At owns it.
        return Ok(Action::await_change());
    }
    // Always set: Ats are namespaced.
    let namespace = at.namespace().unwrap_or_default();
    let name = at.name_any();
    tracing::info!(controller = CONTROLLER_NAME, namespace, name, "reconciling");

    let pods = Api::<Pod>::namespaced(ctx.client.clone(), &namespace);
    let pod_name = pod_name(&at);
    let pod = pods
        .get_opt(&pod_name)
        .await
        .map_err(|source| Error::GetPod {
            namespace: namespace.clone(),
            name: pod_name.clone(),
            source,
        })?;

    let now = (ctx.state)();
    let (phase, action) = match plan(&at, pod.as_ref(), now) {
        // The runner reconciles the At again when the delay is over (or sooner, if it changes).
        Plan::Wait(delay) => {
            tracing::info!(namespace, name, "waiting {delay:?} for the schedule");
            (Phase::Pending, Action::requeue(delay))
        }
        Plan::Start => {
            // Created by server-side apply as this controller, owned by the At: the Pod's
            // changes reconcile the At, and deleting the At deletes the Pod.
            ctx.apply_owned(at.as_ref(), pod_for(&at))
                .await
                .map_err(|source| Error::CreatePod {
                    namespace: namespace.clone(),
                    name: pod_name.clone(),
                    source,
                })?;
            tracing::info!(namespace, name, pod = pod_name, "started the command");
            (Phase::Running, Action::await_change())
        }
        // The Pod's next change reconciles the At; a finished At has nothing left to do.
        Plan::Report(phase) => (phase, Action::await_change()),
    };

    let reported = at.status.as_ref().and_then(|status| status.phase);
    if reported != Some(phase) {
        ctx.apply_status(at.as_ref(), json!({ "phase": phase }))
            .await
            .map_err(|source| Error::UpdateStatus {
                namespace: namespace.clone(),
                name: name.clone(),
                source,
            })?;
        tracing::info!(namespace, name, ?phase, "phase changed");
        let (type_, reason, note) = match phase {
            Phase::Pending => (
                EventType::Normal,
                "Scheduled",
                format!("Waiting until {}", at.spec.schedule.0),
            ),
            Phase::Running => (
                EventType::Normal,
                "Started",
                format!("Started Pod {pod_name}"),
            ),
            Phase::Done => (
                EventType::Normal,
                "Finished",
                format!("Pod {pod_name} succeeded"),
            ),
            Phase::Failed => (
                EventType::Warning,
                "Failed",
                format!("Pod {pod_name} failed"),
            ),
        };
        ctx.publish(at.as_ref(), type_, reason, "Reconcile", note)
            .await;
    }
    Ok(action)
}

/// The name of the Pod of `at`, as in the operator-sdk tutorial.
fn pod_name(at: &At) -> String {
    format!("{}-pod", at.name_any())
}

/// The Pod that runs the command of `at` once: `sh -c <command>` in busybox, never restarted.
/// `apply_owned` puts it in the At's namespace and makes the At its owner.
pub fn pod_for(at: &At) -> Pod {
    let labels = BTreeMap::from([
        ("app.kubernetes.io/name".to_owned(), "at".to_owned()),
        ("app.kubernetes.io/instance".to_owned(), at.name_any()),
        (
            "app.kubernetes.io/managed-by".to_owned(),
            MANAGED_BY.to_owned(),
        ),
    ]);
    Pod {
        metadata: ObjectMeta {
            name: Some(pod_name(at)),
            labels: Some(labels),
            ..ObjectMeta::default()
        },
        spec: Some(PodSpec {
            // Never: a command that fails leaves the Pod Failed, and the At FAILED, instead of
            // running again.
            restart_policy: Some("Never".to_owned()),
            // The "restricted" Pod Security Standard, as user `nobody`: the Pods run in
            // namespaces that enforce it. https://kubernetes.io/docs/concepts/security/pod-security-standards/#restricted
            security_context: Some(PodSecurityContext {
                run_as_non_root: Some(true),
                run_as_user: Some(65534),
                seccomp_profile: Some(SeccompProfile {
                    type_: "RuntimeDefault".to_owned(),
                    ..SeccompProfile::default()
                }),
                ..PodSecurityContext::default()
            }),
            containers: vec![Container {
                name: "command".to_owned(),
                image: Some(IMAGE.to_owned()),
                command: Some(vec![
                    "sh".to_owned(),
                    "-c".to_owned(),
                    at.spec.command.clone(),
                ]),
                security_context: Some(SecurityContext {
                    allow_privilege_escalation: Some(false),
                    capabilities: Some(Capabilities {
                        drop: Some(vec!["ALL".to_owned()]),
                        ..Capabilities::default()
                    }),
                    ..SecurityContext::default()
                }),
                ..Container::default()
            }],
            ..PodSpec::default()
        }),
        ..Pod::default()
    }
}

/// The controller against the runtime's fake API server: a stateful, in-memory API server, in
/// which each test creates an At, plays the kubelet for its Pod, and looks at what the controller
/// did, as `kubectl` would.
#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::PodStatus;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use k8s_openapi::jiff::SignedDuration;
    use kube::CustomResourceExt as _;
    use kube::api::{DeleteParams, PostParams};
    use operator_rs_testing::fake::FakeApiServer;

    use super::*;
    use crate::api::v1alpha1::{AtSpec, AtStatus};

    const NAME: &str = "at-sample";
    const POD: &str = "at-sample-pod";

    /// The schedule of the At of the tests, and clocks that read an hour before it and the
    /// schedule itself.
    const SCHEDULE: &str = "2026-11-24T12:00:00Z";
    fn schedule() -> Timestamp {
        SCHEDULE.parse().unwrap()
    }
    fn an_hour_before() -> Timestamp {
        schedule() - SignedDuration::from_hours(1)
    }

    fn at(schedule: Timestamp) -> At {
        let spec = AtSpec {
            schedule: Time(schedule),
            command: "echo hello".to_owned(),
        };
        let mut at = At::new(NAME, spec);
        at.metadata.namespace = Some("default".to_owned());
        at
    }

    /// A fake API server with the At CRD installed and an At due at [`SCHEDULE`] created.
    async fn cluster() -> (FakeApiServer, Api<At>) {
        let fake = FakeApiServer::new();
        fake.register_crd(&At::crd());
        let api = Api::<At>::namespaced(fake.client(), "default");
        api.create(&PostParams::default(), &at(schedule()))
            .await
            .unwrap();
        (fake, api)
    }

    /// What the runner does on a change or a requeue: reconcile the At as stored now, at the
    /// time `clock` reads.
    async fn reconcile_sample(fake: &FakeApiServer, api: &Api<At>, clock: Clock) -> Action {
        let at = api.get(NAME).await.unwrap();
        let ctx = Context::new(fake.client(), CONTROLLER_NAME, clock);
        reconcile(Arc::new(at), Arc::new(ctx)).await.unwrap()
    }

    async fn phase(api: &Api<At>) -> Option<Phase> {
        api.get_status(NAME)
            .await
            .unwrap()
            .status
            .and_then(|status| status.phase)
    }

    /// The kubelet's part: the Pod's containers ran, and ended in `phase`.
    fn finish_pod(fake: &FakeApiServer, phase: &str) {
        let mut pod = fake.get::<Pod>(Some("default"), POD).unwrap();
        pod.status = Some(PodStatus {
            phase: Some(phase.to_owned()),
            ..PodStatus::default()
        });
        fake.put(&pod);
    }

    #[test]
    fn an_at_waits_exactly_until_its_schedule() {
        let at = at(schedule());
        let wait = |before: i64| plan(&at, None, schedule() - SignedDuration::from_secs(before));
        assert_eq!(wait(90), Plan::Wait(Duration::from_secs(90)));
        assert_eq!(wait(1), Plan::Wait(Duration::from_secs(1)));
        assert_eq!(wait(0), Plan::Start);
        assert_eq!(wait(-60), Plan::Start);
        // A schedule years ahead is looked at again daily.
        let years = 10 * 365 * 24 * 3600;
        assert_eq!(wait(years), Plan::Wait(LONGEST_WAIT));
    }

    #[test]
    fn a_finished_at_never_runs_again() {
        let mut done = at(schedule());
        done.status = Some(AtStatus {
            phase: Some(Phase::Done),
        });
        assert_eq!(plan(&done, None, schedule()), Plan::Report(Phase::Done));
    }

    #[tokio::test]
    async fn before_its_schedule_an_at_is_pending_and_requeued_for_it() {
        let (fake, api) = cluster().await;
        let action = reconcile_sample(&fake, &api, an_hour_before).await;
        assert_eq!(action, Action::requeue(Duration::from_secs(60 * 60)));
        assert_eq!(phase(&api).await, Some(Phase::Pending));
        assert!(fake.get::<Pod>(Some("default"), POD).is_none());
    }

    #[tokio::test]
    async fn at_its_schedule_an_owned_busybox_pod_runs_the_command() {
        let (fake, api) = cluster().await;
        reconcile_sample(&fake, &api, an_hour_before).await;
        let action = reconcile_sample(&fake, &api, schedule).await;
        assert_eq!(action, Action::await_change());
        assert_eq!(phase(&api).await, Some(Phase::Running));

        let pod = fake.get::<Pod>(Some("default"), POD).unwrap();
        let owner = &pod.metadata.owner_references.unwrap()[0];
        assert_eq!((owner.kind.as_str(), owner.name.as_str()), ("At", NAME));
        assert_eq!(
            (owner.controller, owner.block_owner_deletion),
            (Some(true), Some(true))
        );
        let spec = pod.spec.unwrap();
        assert_eq!(spec.restart_policy.as_deref(), Some("Never"));
        let container = &spec.containers[0];
        assert_eq!(container.image.as_deref(), Some(IMAGE));
        assert_eq!(
            container.command,
            Some(vec!["sh".into(), "-c".into(), "echo hello".into()])
        );

        // Deleting the At deletes its Pod (the garbage collector follows the owner reference).
        api.delete(NAME, &DeleteParams::default()).await.unwrap();
        assert!(fake.get::<Pod>(Some("default"), POD).is_none());
    }

    #[tokio::test]
    async fn an_at_is_done_when_its_pod_succeeds_and_stays_done() {
        let (fake, api) = cluster().await;
        reconcile_sample(&fake, &api, schedule).await;
        finish_pod(&fake, "Succeeded");
        reconcile_sample(&fake, &api, schedule).await;
        assert_eq!(phase(&api).await, Some(Phase::Done));

        // The Pod deleted by hand: the command does not run again.
        let pods = Api::<Pod>::namespaced(fake.client(), "default");
        pods.delete(POD, &DeleteParams::default()).await.unwrap();
        reconcile_sample(&fake, &api, schedule).await;
        assert_eq!(phase(&api).await, Some(Phase::Done));
        assert!(fake.get::<Pod>(Some("default"), POD).is_none());
    }

    #[tokio::test]
    async fn an_at_fails_when_its_pod_fails() {
        let (fake, api) = cluster().await;
        reconcile_sample(&fake, &api, schedule).await;
        finish_pod(&fake, "Failed");
        reconcile_sample(&fake, &api, schedule).await;
        assert_eq!(phase(&api).await, Some(Phase::Failed));
    }
}
