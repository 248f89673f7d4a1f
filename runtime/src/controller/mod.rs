//! Controllers: what the manager hands every controller, and how a controller is run.
//!
//! A project lists its controllers in `controller::controllers()` (`src/controller/mod.rs`), one
//! [`ControllerSetup`] each. The manager calls every `setup` once at startup and runs the returned
//! [`ControllerFuture`]s until shutdown; `make manifests` collects every `rbac_rules` into
//! `config/rbac/role.yaml`. A `setup` function builds its controller with a [`Runner`], which
//! takes care of namespaces, metrics, retries, readiness and shutdown, so that the controller's
//! file holds only its `reconcile` function, its RBAC rules and its tests.

mod context;
pub mod events;
pub mod finalizer;
mod owned;
pub mod recovery;
mod runner;
mod sharded;
mod share;
mod watches;

pub use context::{Context, Scope, qualified_name};
pub use finalizer::finalizer;
pub use owned::{Applied, owner_reference};
pub use runner::Runner;
pub use watches::{WATCH_MAX_DELAY, hash_of, owned_changes, spec_changes};

/// What the caches keep of an object, now the [`cache`](crate::cache) module's.
pub use crate::cache::{LAST_APPLIED, strip_for_cache};

use std::hash::Hash;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;
use kube::runtime::controller::{self, Action};
use kube::runtime::reflector::{Lookup, ObjectRef, Store};
use kube::runtime::watcher;
use tokio_util::sync::CancellationToken;

/// What the manager hands every controller's `setup`: defined by the manager, which knows
/// controllers only as [`Runnable`]s.
pub use crate::manager::Shared;
use crate::manager::{Runnable, RunnableFuture};

/// The type of the RBAC rules of controllers, re-exported for their `rbac_rules()`.
pub use k8s_openapi::api::rbac::v1::PolicyRule;

/// One controller of a project, as listed in its `controller::controllers()`.
///
/// ```
/// use operator_rs_runtime::controller::{
///     ControllerFuture, ControllerSetup, PolicyRule, RbacScope, Shared,
/// };
///
/// /// The controller of `src/controller/captain.rs`.
/// pub const CONTROLLER: ControllerSetup = ControllerSetup {
///     name: "captain",
///     rbac_rules,
///     rbac_scope: RbacScope::Project,
///     setup,
/// };
/// # fn rbac_rules() -> Vec<PolicyRule> { Vec::new() }
/// # fn setup(shared: &Shared) -> ControllerFuture { Box::pin(async { Ok(()) }) }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct ControllerSetup {
    /// The controller's name, as in its logs, metrics and Events.
    pub name: &'static str,
    /// The API permissions the controller needs; `make manifests` writes the rules of every
    /// controller to `config/rbac/role.yaml`.
    pub rbac_rules: fn() -> Vec<PolicyRule>,
    /// Which role grants `rbac_rules`.
    pub rbac_scope: RbacScope,
    /// Builds the controller (usually with a [`Runner`]); the manager calls it once at startup,
    /// on the leader only, and runs the returned future until shutdown.
    pub setup: fn(&Shared) -> ControllerFuture,
}

/// Which role grants a controller's RBAC rules.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RbacScope {
    /// The manager's role, `manager-role`: a ClusterRole, or in a project created with
    /// `--namespaced` a Role in the manager's namespace.
    #[default]
    Project,
    /// A ClusterRole in every project: the controller of a cluster-scoped kind, which it watches
    /// across the cluster, and whose Events go to the `default` namespace. In a namespaced
    /// project `make manifests` writes these rules to `manager-cluster-role`
    /// (`config/rbac/cluster_role.yaml`), which grants exactly them.
    Cluster,
}

/// The RBAC rules of the `controllers` whose rules `scope` grants, together, for `make
/// manifests`.
///
/// Rules may overlap between controllers; the manifests writer removes duplicates and merges rules
/// the way controller-gen does.
pub fn rbac_rules(controllers: &[ControllerSetup], scope: RbacScope) -> Vec<PolicyRule> {
    controllers
        .iter()
        .filter(|controller| controller.rbac_scope == scope)
        .flat_map(|controller| (controller.rbac_rules)())
        .collect()
}

/// A controller's main loop, as returned by its `setup` function and run by the manager (the
/// manager's [`RunnableFuture`]).
///
/// The future should run until [`Shared::shutdown`] is cancelled and then return `Ok(())`. If it
/// returns earlier, or returns an error, the manager shuts the whole process down and exits with a
/// failure, so that Kubernetes restarts it instead of leaving a pod that silently reconciles nothing.
pub type ControllerFuture = RunnableFuture;

/// The manager runs a project's controllers as what it runs on the leader.
impl Runnable for ControllerSetup {
    fn name(&self) -> &str {
        self.name
    }

    fn start(&self, shared: &Shared) -> RunnableFuture {
        (self.setup)(shared)
    }
}

impl Shared {
    /// Wraps the main loop of a kube-runtime controller for the manager.
    ///
    /// `store` is the controller's cache ([`kube::runtime::Controller::store`]) and `main_loop` the
    /// future that drives [`kube::runtime::Controller::run`] to its end. The returned future:
    ///
    /// - registers the controller with [`Readiness`](crate::manager::health::Readiness) under `name` right away (so call this from
    ///   `setup`, not from inside an `async` block) and marks it synced once `store` is filled;
    /// - stops at once if shutdown starts before the cache ever synced: nothing can be reconciling
    ///   then, and kube-runtime would otherwise keep waiting for that first sync (for instance while
    ///   the API server is unreachable, or the CRD is not installed);
    /// - reports an error if `main_loop` ends before shutdown was requested.
    pub fn run_controller<K>(
        &self,
        name: &str,
        store: Store<K>,
        main_loop: impl Future<Output = ()> + Send + 'static,
    ) -> ControllerFuture
    where
        K: Lookup + Clone + Send + Sync + 'static,
        K::DynamicType: Eq + Hash + Clone + Send + Sync,
    {
        let gate = self.readiness.register(name);
        let shutdown = self.shutdown.clone();
        let name = name.to_owned();
        Box::pin(async move {
            let mut main_loop = std::pin::pin!(main_loop);
            tokio::select! {
                () = &mut main_loop => return stopped(&name, &shutdown),
                () = shutdown.cancelled() => return Ok(()),
                synced = store.wait_until_ready() => {
                    // An error means the cache was dropped, i.e. the main loop ended; awaiting it
                    // below returns at once.
                    if synced.is_ok() {
                        gate.mark_synced();
                    }
                }
            }
            main_loop.await;
            stopped(&name, &shutdown)
        })
    }
}

/// How a controller's main loop ended: fine during shutdown, an error otherwise.
fn stopped(name: &str, shutdown: &CancellationToken) -> anyhow::Result<()> {
    if shutdown.is_cancelled() {
        Ok(())
    } else {
        Err(anyhow::anyhow!(
            "controller {name} stopped before shutdown was requested"
        ))
    }
}

/// Logs what a controller's main loop ([`kube::runtime::Controller::run`]) yields for each
/// reconciliation; the controller's `setup` passes every item of that stream here.
///
/// Failed reconciliations are not logged here, because the controller's `error_policy` logs them
/// (with the object). What remains are successes (at debug level), objects deleted before their
/// turn came, and failures of the controller itself, mostly of its watches: a missing CRD (`make
/// install`) or missing permissions. kube-runtime keeps retrying those with a backoff.
pub fn log_result<K, E>(
    controller: &str,
    result: Result<(ObjectRef<K>, Action), controller::Error<E, watcher::Error>>,
) where
    K: Lookup,
    E: std::error::Error + 'static,
{
    match result {
        Ok((object, action)) => tracing::debug!(controller, %object, ?action, "reconciled"),
        Err(controller::Error::ReconcilerFailed(..)) => {}
        Err(controller::Error::ObjectNotFound(object)) => {
            tracing::debug!(controller, %object, "deleted before it was reconciled");
        }
        Err(error) => {
            let error = &error as &dyn std::error::Error;
            tracing::warn!(controller, error, "controller error");
        }
    }
}

/// Shorthand for a [`PolicyRule`] that grants `verbs` on `resources` in the API groups `api_groups`
/// (`""` is the core group), for the `rbac_rules()` of controllers:
///
/// ```
/// # use operator_rs_runtime::controller::rule;
/// let rule = rule(&[""], &["configmaps"], &["get", "list", "watch"]);
/// ```
pub fn rule(api_groups: &[&str], resources: &[&str], verbs: &[&str]) -> PolicyRule {
    let strings = |values: &[&str]| values.iter().map(|value| value.to_string()).collect();
    PolicyRule {
        api_groups: Some(strings(api_groups)),
        resources: Some(strings(resources)),
        verbs: strings(verbs),
        ..PolicyRule::default()
    }
}

/// A status condition of `type_` as a controller sets it now: `status` true or false, a
/// machine-readable UpperCamelCase `reason`, a `message` for humans, and the `generation` of the
/// object it describes (`object.meta().generation`), so that clients can tell whether the condition
/// reflects the latest spec. Pass it to [`conditions_to_apply`], which keeps the transition time
/// when the status did not change.
pub fn condition(
    type_: &str,
    status: bool,
    reason: &str,
    message: impl Into<String>,
    observed_generation: Option<i64>,
) -> Condition {
    Condition {
        type_: type_.to_owned(),
        status: if status { "True" } else { "False" }.to_owned(),
        reason: reason.to_owned(),
        message: message.into(),
        observed_generation,
        last_transition_time: Time(Timestamp::now()),
    }
}

/// Prepares the status conditions that a controller owns for a server-side apply of
/// `.status.conditions`.
///
/// `desired` holds every condition the controller sets on the object, with
/// `last_transition_time` set to now. Each one keeps the `lastTransitionTime` of the object's
/// current condition of its type when its status did not change: the time says when the status
/// last changed, as the Kubernetes API conventions ask (Go's `meta.SetStatusCondition` does the
/// same). Apply all of them every time, because server-side apply removes the conditions that a
/// field manager applied before but leaves out now.
///
/// Returns `None` when the object already has all of them, so there is nothing to write. That
/// keeps reconciliations idempotent: every write changes the object, and every change of the
/// object triggers another reconciliation.
pub fn conditions_to_apply(
    current: &[Condition],
    desired: Vec<Condition>,
) -> Option<Vec<Condition>> {
    let mut changed = false;
    let mut conditions = Vec::with_capacity(desired.len());
    for mut condition in desired {
        match current.iter().find(|c| c.type_ == condition.type_) {
            Some(existing) if existing.status == condition.status => {
                condition.last_transition_time = existing.last_transition_time.clone();
                changed |= *existing != condition;
            }
            _ => changed = true,
        }
        conditions.push(condition);
    }
    changed.then_some(conditions)
}

/// Whether `current` (an object as read from the API server or a cache) already has every field
/// of `desired` (the object a controller would server-side apply) with the same value: then the
/// apply would change nothing, and a controller can skip the request.
///
/// Maps compare key by key, ignoring keys that `current` has and `desired` does not (fields
/// others own, defaults, status) and `null`s in `desired`; lists compare item by item and must
/// have the same length; everything else must be equal. It errs on the side of applying: a value
/// the API server normalizes (a quantity `1000m` stored as `1`) compares unequal, which costs
/// one apply that changes nothing. It cannot see fields the controller applied before and leaves
/// out now (the apply would remove them): apply at least once after changing what `desired`
/// holds, e.g. when the image or the labels of a new version of the controller differ.
pub fn is_applied(current: &impl serde::Serialize, desired: &impl serde::Serialize) -> bool {
    serde_json::to_value(desired).is_ok_and(|desired| holds(current, &desired))
}

/// [`is_applied`], with `desired` already as JSON.
fn holds(current: &impl serde::Serialize, desired: &serde_json::Value) -> bool {
    serde_json::to_value(current).is_ok_and(|current| contains(&current, desired))
}

/// Whether `current` holds all of `desired`, as [`is_applied`] compares.
fn contains(current: &serde_json::Value, desired: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (current, desired) {
        (_, Value::Null) => true,
        (Value::Object(current), Value::Object(desired)) => desired.iter().all(|(key, value)| {
            value.is_null() || current.get(key).is_some_and(|held| contains(held, value))
        }),
        (Value::Array(current), Value::Array(desired)) => {
            current.len() == desired.len()
                && current
                    .iter()
                    .zip(desired)
                    .all(|(held, value)| contains(held, value))
        }
        _ => current == desired,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use axum::http::{Request, Response};
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::client::Body;
    use kube::runtime::{reflector, watcher};

    use super::*;

    #[test]
    fn applied_objects_hold_every_desired_field() {
        let desired = serde_json::json!({
            "metadata": { "name": "a", "labels": { "app": "x" } },
            "spec": { "replicas": 2, "containers": [{ "name": "c", "image": "i" }], "unset": null },
        });
        let mut current = desired.clone();
        current["metadata"]["labels"]["other"] = "y".into();
        current["metadata"]["resourceVersion"] = "7".into();
        current["spec"]["containers"][0]["imagePullPolicy"] = "Always".into();
        current["status"] = serde_json::json!({ "availableReplicas": 2 });
        assert!(is_applied(&current, &desired));

        let mut scaled = current.clone();
        scaled["spec"]["replicas"] = 1.into();
        assert!(!is_applied(&scaled, &desired));
        let mut relabelled = current.clone();
        relabelled["metadata"]["labels"]["app"] = "z".into();
        assert!(!is_applied(&relabelled, &desired));
        let mut sidecar = current.clone();
        sidecar["spec"]["containers"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({ "name": "s" }));
        assert!(!is_applied(&sidecar, &desired));
    }

    /// A `Shared` whose client fails every request: these tests never reach an API server.
    fn shared() -> Shared {
        let service = tower::service_fn(|_: Request<Body>| async {
            Err::<Response<Body>, _>(std::io::Error::other("no API server in unit tests"))
        });
        Shared::new(kube::Client::new(service, "default"))
    }

    #[tokio::test]
    async fn ready_once_synced_and_stops_on_shutdown() {
        let shared = shared();
        let (store, mut writer) = reflector::store::<ConfigMap>();
        let main_loop = shared.shutdown.clone().cancelled_owned();
        let controller = tokio::spawn(shared.run_controller("test", store, main_loop));
        shared.readiness.mark_started();
        assert!(shared.readiness.check().is_err());

        writer.apply_watcher_event(&watcher::Event::InitDone);
        let synced = async {
            while shared.readiness.check().is_err() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        };
        tokio::time::timeout(Duration::from_secs(5), synced)
            .await
            .unwrap();

        shared.shutdown.cancel();
        controller.await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn shutdown_before_sync_stops_at_once() {
        let shared = shared();
        let (store, _writer) = reflector::store::<ConfigMap>();
        let controller = shared.run_controller("test", store, std::future::pending());
        shared.shutdown.cancel();
        tokio::time::timeout(Duration::from_secs(5), controller)
            .await
            .unwrap()
            .unwrap();
    }

    #[tokio::test]
    async fn main_loop_ending_early_is_an_error() {
        let shared = shared();
        let (store, _writer) = reflector::store::<ConfigMap>();
        let controller = shared.run_controller("test", store, async {});
        assert!(controller.await.is_err());
    }

    fn condition(status: &str, reason: &str, seconds: i64) -> Condition {
        Condition {
            type_: "Available".into(),
            status: status.into(),
            reason: reason.into(),
            message: String::new(),
            observed_generation: Some(1),
            last_transition_time: Time(Timestamp::from_second(seconds).unwrap()),
        }
    }

    #[test]
    fn conditions_are_built_as_of_now() {
        let built = super::condition("Ready", false, "Waiting", "not yet", Some(3));
        assert_eq!(
            (
                built.type_.as_str(),
                built.status.as_str(),
                built.reason.as_str()
            ),
            ("Ready", "False", "Waiting")
        );
        assert_eq!(
            (built.message.as_str(), built.observed_generation),
            ("not yet", Some(3))
        );
        let age = Timestamp::now().duration_since(built.last_transition_time.0);
        assert!(age.as_secs() < 60, "{age:?}");
    }

    #[test]
    fn new_conditions_are_applied() {
        let desired = vec![condition("True", "Reconciled", 2)];
        assert_eq!(conditions_to_apply(&[], desired.clone()), Some(desired));
    }

    #[test]
    fn current_conditions_are_not_applied_again() {
        let current = [condition("True", "Reconciled", 1)];
        let desired = vec![condition("True", "Reconciled", 2)];
        assert_eq!(conditions_to_apply(&current, desired), None);
    }

    #[test]
    fn transition_time_changes_with_the_status_only() {
        let current = [condition("True", "Reconciled", 1)];
        let desired = vec![condition("True", "Upgraded", 2)];
        let applied = conditions_to_apply(&current, desired).unwrap();
        assert_eq!(applied, vec![condition("True", "Upgraded", 1)]);

        let desired = vec![condition("False", "Failed", 2)];
        let applied = conditions_to_apply(&current, desired.clone()).unwrap();
        assert_eq!(applied, desired);
    }
}
