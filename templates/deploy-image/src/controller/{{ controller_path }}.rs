{{ rust_header }}//! The {{ kind }} controller: runs `{{ image }}` for every {{ kind }}
//! (`{{ qualified_group }}/{{ version }}`) in a Deployment of `spec.size` pods, and reports in the
//! {{ kind }}'s status whether those pods are available, and if not, why.
//!
//! The runner built in `runner` watches {{ plural }}, the Deployments they own and the pods of
//! those Deployments, which it keeps in caches that `reconcile` reads instead of asking the API
//! server, and calls `reconcile` for a {{ kind }} when its spec changes, when it is deleted, when
//! its Deployment changes in a way that `reconcile` cares about, and when what keeps one of its
//! pods from running changes (not for the controller's own writes: those would only find
//! nothing to do). `reconcile` gets no diff,
//! only the object as it is now: it computes the Deployment the {{ kind }} asks for and applies it
//! (server-side apply), which creates it if it is missing, scales it back if someone scaled it by
//! hand and changes nothing when nothing differs. The same object is never reconciled twice at
//! the same time.
//!
//! Each {{ kind }} carries the finalizer `{{ finalizer }}`: when a {{ kind }} is deleted,
//! Kubernetes waits until `cleanup` has run and the controller has removed the finalizer. The
//! Deployment needs no clean-up of its own: its owner reference makes Kubernetes' garbage
//! collector delete it along with the {{ kind }}.
//!
//! This is what kubebuilder's deploy-image plugin writes for Go, in kube-rs.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    Capabilities, Container, {% if has_container_port %}ContainerPort, {% endif %}Pod, PodSecurityContext, PodSpec, PodTemplateSpec,
    SeccompProfile, SecurityContext,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector, ObjectMeta};
use kube::runtime::controller::Action;
use kube::runtime::events::EventType;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Resource as _, ResourceExt as _};
use operator_rs_runtime::controller::finalizer::{self, finalizer};
use operator_rs_runtime::controller::{
    Context, ControllerFuture, ControllerSetup, PolicyRule, RbacScope, Runner, Shared, condition,
    conditions_to_apply, hash_of, rule,
};
use serde_json::json;

use {{ api_module }}::{{ kind }};

/// The controller's name in logs and metrics, the `reportingController` of its Events, and its
/// field manager name for server-side apply (the owner of the fields it writes, see `kubectl get
/// --show-managed-fields`).
const CONTROLLER_NAME: &str = "{{ controller_name }}";

/// The finalizer that makes Kubernetes wait for `cleanup` before it deletes a {{ kind }}.
pub const FINALIZER: &str = "{{ finalizer }}";

/// The environment variable with the image to run: config/manager/manager.yaml sets it, so the
/// image can change with a new manager Deployment (or a kustomize patch) instead of a new build.
pub const IMAGE_ENV: &str = "{{ image_env }}";

/// The image when `{{ image_env }}` is not set, as with `make run` on your machine: the one given
/// to `operator-rs create api --image`.
pub const DEFAULT_IMAGE: &str = "{{ image }}";

/// The `app.kubernetes.io/managed-by` label of the Deployments this controller manages and of
/// their pods; it also selects the Deployments and pods it watches.
const MANAGED_BY: &str = "{{ kind }}Controller";

/// The label of a Deployment and its pods that names the {{ kind }} they run for. It is also the
/// name of the index of the controller's cache of pods by that label.
const INSTANCE: &str = "app.kubernetes.io/instance";

/// How long `reconcile` waits before it looks at an unchanged {{ kind }} again. Changes of the
/// {{ kind }}'s spec and of its Deployment trigger a reconciliation right away; this catches
/// anything else.
const RESYNC_PERIOD: Duration = Duration::from_secs(5 * 60);

/// Condition types that the controller sets in the status, with their reasons.
const AVAILABLE: &str = "Available";
const DEGRADED: &str = "Degraded";
const REPLICAS_AVAILABLE: &str = "ReplicasAvailable";
const REPLICAS_UNAVAILABLE: &str = "ReplicasUnavailable";
const FINALIZING: &str = "Finalizing";
const RECONCILED: &str = "Reconciled";
const DEPLOYMENT_FAILED: &str = "DeploymentFailed";

/// This controller, as listed in `controllers()` of `src/controller/mod.rs`.
pub const CONTROLLER: ControllerSetup = ControllerSetup {
    name: CONTROLLER_NAME,
    rbac_rules,
    rbac_scope: RbacScope::Project,
    setup,
};

/// Sets up the controller; the manager calls it once at startup. The image to run is the
/// controller's state: every reconciliation gets it as `ctx.state`.
fn setup(shared: &Shared) -> ControllerFuture {
    let image = std::env::var(IMAGE_ENV).unwrap_or_else(|_| {
        tracing::info!("{IMAGE_ENV} is not set; {{ plural }} run {DEFAULT_IMAGE}");
        DEFAULT_IMAGE.to_owned()
    });
    runner(shared).run(reconcile, image)
}

/// What the controller watches and caches: {{ plural }} in the namespaces of `WATCH_NAMESPACE`
/// (all by default), and the Deployments and pods of this controller in the same namespaces. The
/// runner calls `reconcile` for each {{ kind }}, with metrics, retries and graceful shutdown.
fn runner(shared: &Shared) -> Runner<'_, {{ kind }}> {
    // Only the Deployments and pods of this controller: fewer watch events, and smaller caches,
    // than all those of the cluster.
    let managed = watcher::Config::default().labels(&format!("app.kubernetes.io/managed-by={MANAGED_BY}"));
    Runner::<{{ kind }}>::new(CONTROLLER_NAME, shared)
        // A change of a Deployment reconciles the {{ kind }} in its controller owner reference,
        // but only a change of what `reconcile` reads or applies: its spec (the generation), its
        // labels and its available replicas. A Deployment scaled, edited or deleted by hand is
        // put back right away; its creation (this controller's own doing) and the Deployment
        // controller's other status updates reconcile nothing.
        .owns_on::<Deployment>(managed.clone(), |deployment| {
            let available = deployment.status.as_ref().and_then(|s| s.available_replicas);
            Some(hash_of(&(
                deployment.metadata.generation,
                &deployment.metadata.labels,
                available,
            )))
        })
        // The cached pods by the {{ kind }} they run for (controller-runtime's `IndexField`),
        // for `reconcile` to find its own without a request.
        .index(INSTANCE, |pod: &Pod| pod.labels().get(INSTANCE).cloned().into_iter().collect())
        // A pod is not owned by the {{ kind }} (its ReplicaSet is), so it maps to its {{ kind }}
        // by its instance label: controller-runtime's `Watches` with `EnqueueRequestsFromMapFunc`.
        // Only when what keeps it from running changes, or it goes: its other status updates
        // would reconcile the {{ kind }} for nothing.
        .watches_on(
            managed,
            |before: Option<&Pod>, pod: &Pod| before.and_then(problem) != problem(pod),
            |pod: Pod| instance_of(&pod),
        )
}

/// The {{ kind }} that `pod` runs for: the one its instance label names, in its namespace.
fn instance_of(pod: &Pod) -> Option<ObjectRef<{{ kind }}>> {
    let instance = pod.labels().get(INSTANCE)?;
    Some(ObjectRef::new(instance).within(&pod.namespace()?))
}

/// The API permissions of this controller, right next to the code that needs them: `make
/// manifests` writes the rules of all controllers to `config/rbac/role.yaml`.
pub fn rbac_rules() -> Vec<PolicyRule> {
    // The group and plural of {{ kind }}, from its `#[kube(...)]` attribute (`&()`: a typed
    // resource needs no runtime type information).
    let group = {{ kind }}::group(&());
    let plural = {{ kind }}::plural(&());
    vec![
        // Watching {{ plural }}, and adding and removing the finalizer (a patch of the object).
        rule(
            &[&group],
            &[&plural],
            &[
                "get", "list", "watch", "create", "update", "patch", "delete",
            ],
        ),
        // Writing the status subresource.
        rule(
            &[&group],
            &[&format!("{plural}/status")],
            &["get", "update", "patch"],
        ),
        // Setting `blockOwnerDeletion` in the owner reference of the Deployment.
        rule(&[&group], &[&format!("{plural}/finalizers")], &["update"]),
        // Publishing Events (the recorder patches an Event when it repeats).
        rule(&["events.k8s.io"], &["events"], &["create", "patch"]),
        // The Deployments that run {{ kind_lower }}: watched, created and scaled.
        rule(
            &["apps"],
            &["deployments"],
            &[
                "get", "list", "watch", "create", "update", "patch", "delete",
            ],
        ),
        // Watching the pods of those Deployments, to tell why they are not available.
        rule(&[""], &["pods"], &["get", "list", "watch"]),
    ]
}

/// Why a reconciliation failed. Every variant names the object, because the runner logs the
/// error and the log line should say which object it is about.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot apply Deployment {namespace}/{name}")]
    ApplyDeployment {
        namespace: String,
        name: String,
        #[source]
        source: kube::Error,
    },
    #[error("cannot update the status of {{ kind }} {namespace}/{name}")]
    UpdateStatus {
        namespace: String,
        name: String,
        #[source]
        source: kube::Error,
    },
    #[error("cannot add or remove the finalizer of {{ kind }} {namespace}/{name}")]
    Finalizer {
        namespace: String,
        name: String,
        #[source]
        source: Box<finalizer::Error<Error>>,
    },
}

/// Reconciles one {{ kind }}. The runtime's `finalizer` helper (kube-runtime's, without the extra
/// reconciliation) decides what to do with it: add the finalizer to a new one and `apply` it,
/// `apply` a live one, or `cleanup` one that is being deleted and then remove the finalizer so
/// that Kubernetes can delete it.
async fn reconcile(object: Arc<{{ kind }}>, ctx: Arc<Context<String>>) -> Result<Action, Error> {
    // Always set: {{ plural }} are namespaced.
    let namespace = object.namespace().unwrap_or_default();
    let name = object.name_any();
    tracing::info!(controller = CONTROLLER_NAME, namespace, name, "reconciling");
    // The finalizer's patches go through `ctx`, which remembers the object they return until the
    // cache has it: a reconciliation that comes sooner does not add the finalizer again.
    let ctx = ctx.as_ref();
    finalizer(ctx, FINALIZER, object, |event| async move {
        match event {
            finalizer::Event::Apply(object) => apply(&object, ctx).await,
            finalizer::Event::Cleanup(object) => cleanup(&object, ctx).await,
        }
    })
    .await
    .map_err(|error| match error {
        // Errors of `apply` and `cleanup` already say what failed.
        finalizer::Error::ApplyFailed(error) | finalizer::Error::CleanupFailed(error) => error,
        error => Error::Finalizer {
            namespace,
            name,
            source: Box::new(error),
        },
    })
}

/// Brings the {{ kind }}'s Deployment in line with its spec and reports how available it is.
async fn apply(object: &{{ kind }}, ctx: &Context<String>) -> Result<Action, Error> {
    let namespace = object.namespace().unwrap_or_default();
    let name = object.name_any();

    // Server-side apply of the whole Deployment this {{ kind }} asks for, owned by it: it
    // creates a missing Deployment, and `force` takes back fields that someone else changed
    // (`kubectl scale` sets `replicas`), so drift is corrected. `apply_owned` reads the
    // Deployment first, from the controller's cache of the Deployments it owns (no request),
    // and writes nothing when it already has every field of the desired one: no request, no
    // new version. What it found tells users what changed. The image is the controller's
    // state, read in `setup`.
    let desired = deployment(object, &ctx.state);
    let applied = match ctx.apply_owned(object, desired).await {
        Ok(applied) => applied,
        Err(source) => {
            let error = Error::ApplyDeployment {
                namespace: namespace.clone(),
                name: name.clone(),
                source,
            };
            // Tell the user in the status, then fail so that the controller retries.
            let degraded = condition(
                DEGRADED,
                true,
                DEPLOYMENT_FAILED,
                format!("{error}: {}", error_source(&error)),
                object.meta().generation,
            );
            update_status(object, ctx, vec![degraded]).await?;
            return Err(error);
        }
    };

    let size = object.spec.size;
    match &applied.before {
        None => {
            tracing::info!(namespace, name, size, "created Deployment");
            ctx.publish(
                object,
                EventType::Normal,
                "Created",
                "Reconcile",
                format!("Created Deployment {name} with {size} replicas"),
            )
            .await;
            // No pods yet: the status below says so at once ("0 of N available"), and the
            // Deployment's watch reconciles this {{ kind }} again when they become available.
            // Nothing to wait or retry for here: on a busy cluster the pods can take minutes.
        }
        Some(before) => {
            let before = before.spec.as_ref().and_then(|spec| spec.replicas).unwrap_or(1);
            if before != size {
                tracing::info!(namespace, name, before, size, "scaled Deployment");
                ctx.publish(
                    object,
                    EventType::Normal,
                    "Scaled",
                    "Reconcile",
                    format!("Scaled Deployment {name} from {before} to {size} replicas"),
                )
                .await;
            }
        }
    }

    // Available once the Deployment has `size` available pods. Its status changes reconcile the
    // {{ kind }} again (it is watched), so this flips to True as soon as the pods are ready.
    let available = applied
        .after
        .status
        .and_then(|status| status.available_replicas)
        .unwrap_or(0);
    let mut message = format!("Deployment {name} has {available} of {size} replicas available");
    let (status, reason) = if available >= size {
        (true, REPLICAS_AVAILABLE)
    } else {
        // What the Deployment's status does not tell: why its pods do not run.
        if let Some(why) = why_unavailable(object, ctx) {
            message = format!("{message}; {why}");
        }
        (false, REPLICAS_UNAVAILABLE)
    };
    let conditions = vec![
        condition(AVAILABLE, status, reason, message, object.meta().generation),
        condition(
            DEGRADED,
            false,
            RECONCILED,
            format!("Deployment {name} matches the spec"),
            object.meta().generation,
        ),
    ];
    update_status(object, ctx, conditions).await?;
    Ok(Action::requeue(RESYNC_PERIOD))
}

/// Runs before Kubernetes deletes a {{ kind }}; the finalizer is removed once it succeeds.
async fn cleanup(object: &{{ kind }}, ctx: &Context<String>) -> Result<Action, Error> {
    let namespace = object.namespace().unwrap_or_default();
    let name = object.name_any();
    tracing::info!(namespace, name, "running the finalizer");
    let finalizing = condition(
        AVAILABLE,
        false,
        FINALIZING,
        format!("Performing finalizer operations for {{ kind }} {name}"),
        object.meta().generation,
    );
    update_status(object, ctx, vec![finalizing]).await?;

    // TODO(user): clean up what Kubernetes does not delete on its own: state outside the
    // cluster (a backup, a DNS record, a cloud resource …), or objects without an owner
    // reference to the {{ kind }}. Return an error to keep the finalizer and retry. The
    // Deployment needs nothing here: the garbage collector deletes it with its owner.

    ctx.publish(
        object,
        EventType::Warning,
        "Deleting",
        "Reconcile",
        format!("{{ kind }} {name} is being deleted from the namespace {namespace}"),
    )
    .await;
    Ok(Action::await_change())
}

/// The Deployment that runs `image` for a {{ kind }}, named like it. `apply_owned` puts it in the
/// {{ kind }}'s namespace and gives it a controller owner reference to the {{ kind }}: `kubectl
/// get` shows the {{ kind }} as the owner, changes of the Deployment reconcile the {{ kind }}, and
/// deleting the {{ kind }} deletes the Deployment.
pub fn deployment(object: &{{ kind }}, image: &str) -> Deployment {
    let name = object.name_any();
    // Selects the pods of this {{ kind }} only: a Deployment's selector cannot change, so it holds
    // no label that might (like the version).
    let selector = BTreeMap::from([
        ("app.kubernetes.io/name".to_owned(), "{{ kind_lower }}".to_owned()),
        (INSTANCE.to_owned(), name.clone()),
    ]);
    let mut labels = selector.clone();
    labels.insert("app.kubernetes.io/managed-by".to_owned(), MANAGED_BY.to_owned());
    if let Some(version) = image_tag(image) {
        labels.insert("app.kubernetes.io/version".to_owned(), version.to_owned());
    }
    Deployment {
        metadata: ObjectMeta {
            name: Some(name),
            labels: Some(labels.clone()),
            ..ObjectMeta::default()
        },
        spec: Some(DeploymentSpec {
            replicas: Some(object.spec.size),
            selector: LabelSelector {
                match_labels: Some(selector),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    // The "restricted" Pod Security Standard: the pods run in namespaces that
                    // enforce it. https://kubernetes.io/docs/concepts/security/pod-security-standards/#restricted
                    security_context: Some(PodSecurityContext {
                        run_as_non_root: Some(true),
                        seccomp_profile: Some(SeccompProfile {
                            type_: "RuntimeDefault".to_owned(),
                            ..SeccompProfile::default()
                        }),
                        ..PodSecurityContext::default()
                    }),
                    containers: vec![Container {
                        name: "{{ kind_lower }}".to_owned(),
                        image: Some(image.to_owned()),
                        image_pull_policy: Some("IfNotPresent".to_owned()),
{%- if container_command | length > 0 %}
                        command: Some(
                            [{% for arg in container_command %}{{ arg }}{% if not loop.last %}, {% endif %}{% endfor %}]
                                .map(str::to_owned)
                                .to_vec(),
                        ),
{%- endif %}
{%- if has_container_port %}
                        ports: Some(vec![ContainerPort {
                            container_port: object.spec.container_port,
                            name: Some("{{ port_name }}".to_owned()),
                            protocol: Some("TCP".to_owned()),
                            ..ContainerPort::default()
                        }]),
{%- endif %}
                        security_context: Some(SecurityContext {
                            run_as_non_root: Some(true),
{%- if has_run_as_user %}
                            run_as_user: Some({{ run_as_user }}),
{%- endif %}
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
            },
            ..DeploymentSpec::default()
        }),
        ..Deployment::default()
    }
}

/// The tag of an image reference, if it has one that is a valid label value
/// (`memcached:1.6` → `1.6`; `localhost:5000/memcached` and digests have none).
fn image_tag(image: &str) -> Option<&str> {
    let name = image.split('@').next().unwrap_or(image);
    let last = name.rsplit('/').next().unwrap_or(name);
    let (_, tag) = last.split_once(':')?;
    // Label values: at most 63 characters, alphanumeric at both ends.
    let valid = !tag.is_empty()
        && tag.len() <= 63
        && tag.starts_with(|c: char| c.is_ascii_alphanumeric())
        && tag.ends_with(|c: char| c.is_ascii_alphanumeric());
    valid.then_some(tag)
}

/// Why the pods of `object` are not available, if one of them says: `pod <name>: <problem>` of the
/// first such pod by name. From the controller's cache of pods, through its index by
/// {{ kind }}: no request. A context without caches (`Context::new`, in tests) has no pods.
fn why_unavailable(object: &{{ kind }}, ctx: &Context<String>) -> Option<String> {
    let pods = ctx.cache::<Pod>()?;
    let mut pods = pods.indexed(object.namespace().as_deref(), INSTANCE, &object.name_any());
    pods.sort_by_key(|pod| pod.name_any());
    pods.iter()
        .find_map(|pod| Some(format!("pod {}: {}", pod.name_any(), problem(pod)?)))
}

/// What keeps `pod` from running, if anything: the reason its first waiting container gives
/// (`ImagePullBackOff`, `CrashLoopBackOff`, `CreateContainerConfigError` …). Not
/// `ContainerCreating` or `PodInitializing`: every pod waits for them as it starts, and naming
/// them would write the status twice more for every new pod.
fn problem(pod: &Pod) -> Option<&str> {
    let status = pod.status.as_ref()?;
    let (init, main) = (&status.init_container_statuses, &status.container_statuses);
    let containers = init.iter().chain(main).flatten();
    let waiting = containers.filter_map(|container| container.state.as_ref()?.waiting.as_ref());
    let mut reasons = waiting.filter_map(|waiting| waiting.reason.as_deref());
    reasons.find(|reason| !matches!(*reason, "ContainerCreating" | "PodInitializing"))
}

/// Writes `conditions` to the status subresource, unless the status says it all already.
async fn update_status(
    object: &{{ kind }},
    ctx: &Context<String>,
    mut conditions: Vec<Condition>,
) -> Result<(), Error> {
    let status = object.status.clone().unwrap_or_default();
    // Server-side apply deletes what this controller applied before and leaves out now: its
    // other conditions go along, as they are.
    for type_ in [AVAILABLE, DEGRADED] {
        if !conditions.iter().any(|c| c.type_ == type_)
            && let Some(existing) = status.conditions.iter().find(|c| c.type_ == type_)
        {
            conditions.push(existing.clone());
        }
    }
    let Some(conditions) = conditions_to_apply(&status.conditions, conditions) else {
        return Ok(());
    };
    // Server-side apply of the status as this controller, forced: conditions of other types, set
    // by others, stay (the list is merged by type).
    ctx.apply_status(object, json!({ "conditions": conditions }))
        .await
        .map_err(|source| Error::UpdateStatus {
            namespace: object.namespace().unwrap_or_default(),
            name: object.name_any(),
            source,
        })?;
    Ok(())
}

/// The cause of an error, for messages that must stand on their own (like a condition's).
fn error_source(error: &Error) -> String {
    std::error::Error::source(error).map_or_else(String::new, ToString::to_string)
}

/// `reconcile` against an API server that refuses what a real one refuses: objects that do not
/// fit the CRD (the one `make manifests` writes, with its defaults and CEL rules) and requests
/// that the controller's own `rbac_rules()` do not grant. Each test body runs against the
/// runtime's fake API server (which also calls the project's webhooks: no cluster needed, and a
/// controller that would fail on one fails here first), and against a real kube-apiserver
/// started by envtest (kubebuilder's envtest: `make test` runs those where its binaries are).
#[cfg(test)]
mod against_the_api_server {
    // Types named by their modules: a kind of the project may have any of their names.
    use operator_rs_testing::{self as testing, cluster, fake};

    use super::*;

    /// The sample that `kubectl apply -k config/samples` creates.
    const SAMPLE: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/config/samples/{{ group }}_{{ version }}_{{ kind_lower }}.yaml"
    ));
    const NAME: &str = "{{ kind_lower }}-sample";
    const WAIT: Duration = Duration::from_secs(10);

    /// What `make install` installs (the CRDs of `crate::manifests()`, and on the fake its
    /// webhooks), and `sample` created as `kubectl apply` would, or the API server's refusal.
    async fn create(cluster: &cluster::TestCluster, sample: &str) -> Result<kube::api::DynamicObject, kube::Error> {
        cluster.install(crate::manifests()).await;
        cluster.create_yaml::<{{ kind }}>(sample).await
    }

    /// `reconcile` of the sample as stored now, by a client with `identity`'s permissions.
    async fn reconcile_sample(cluster: &cluster::TestCluster, identity: fake::Identity) -> Result<Action, Error> {
        let object = cluster.get::<{{ kind }}>(NAME).await.unwrap();
        let ctx = Context::new(cluster.client_as(identity).await, CONTROLLER_NAME, DEFAULT_IMAGE.to_owned());
        reconcile(Arc::new(object), Arc::new(ctx)).await
    }

    /// What the manager runs with in a cluster: the controller's own `rbac_rules()` (and the
    /// manager's leader election Role), nothing more.
    fn controller_identity() -> fake::Identity {
        fake::Identity::controller(env!("CARGO_PKG_NAME"), &CONTROLLER)
    }

    /// The sample is accepted, and reconciled with the controller's own permissions: a
    /// Deployment of `spec.size` pods, then, once they are available, a status the CRD accepts.
    async fn the_sample_is_reconciled_with_the_controllers_permissions(cluster: cluster::TestCluster) {
        // A stand-in for the Deployment controller, which makes the pods of every Deployment
        // available.
        let _deployments = cluster.simulate_deployments();
        create(&cluster, SAMPLE).await.expect("the API server accepts the sample of config/samples");
        // The first reconciliation adds the finalizer, creates the Deployment and reports its
        // pods unavailable; the next one (they are available) reports them available.
        reconcile_sample(&cluster, controller_identity()).await.unwrap();
        let size = cluster.get::<{{ kind }}>(NAME).await.unwrap().spec.size;
        testing::eventually("the Deployment's pods are available", WAIT, || async {
            let deployment = cluster.get::<Deployment>(NAME).await;
            let status = deployment.and_then(|deployment| deployment.status);
            status.and_then(|status| status.available_replicas) == Some(size)
        })
        .await;
        reconcile_sample(&cluster, controller_identity()).await.unwrap();
        let deployment = cluster.get::<Deployment>(NAME).await.unwrap();
        assert_eq!(deployment.spec.unwrap().replicas, Some(size));
        let stored = cluster.get::<{{ kind }}>(NAME).await.unwrap();
        let conditions = stored.status.unwrap().conditions;
        let available = conditions.iter().find(|c| c.type_ == AVAILABLE).unwrap();
        assert_eq!(available.status, "True");
    }

    /// A negative size is refused (the `minimum` of the CRD), with the API server's message.
    async fn an_invalid_sample_is_refused(cluster: cluster::TestCluster) {
        let negative = SAMPLE.replace("size: 1", "size: -1");
        let Err(kube::Error::Api(status)) = create(&cluster, &negative).await else {
            panic!("a negative size is refused");
        };
        assert_eq!(status.code, 422);
        assert!(
            status.message.contains(
                "spec.size: Invalid value: -1: spec.size in body should be greater than or equal to 0"
            ),
            "{}",
            status.message
        );
    }

    /// A controller whose rules forget the Deployments is refused (403), and the denial names
    /// the missing rule.
    async fn a_missing_rbac_rule_is_forbidden(cluster: cluster::TestCluster) {
        create(&cluster, SAMPLE).await.unwrap();
        let without_deployments: Vec<PolicyRule> = rbac_rules()
            .into_iter()
            .filter(|rule| rule.resources != Some(vec!["deployments".to_owned()]))
            .collect();
        let identity = fake::Identity::service_account("{{ project_name }}-system", "controller-manager")
            .with_cluster_rules(without_deployments);
        let error = reconcile_sample(&cluster, identity).await.unwrap_err();
        assert!(matches!(error, Error::ApplyDeployment { .. }), "{error:?}");
        let denials = cluster.denials();
        assert_eq!(denials[0].missing_rule, r#"rule(&["apps"], &["deployments"], &["get"])"#);
    }

    /// The whole controller as the manager runs it (`setup`: its watches, caches and retries): a
    /// new {{ kind }} converges, and a Deployment scaled by hand is put back. On the fake, which
    /// counts the requests: `reconcile` read the Deployment from the controller's cache every
    /// time, never with a request of its own.
    async fn the_controller_converges_reading_deployments_from_its_cache(cluster: cluster::TestCluster) {
        cluster.install(crate::manifests()).await;
        let _deployments = cluster.simulate_deployments();
        let mut object: {{ kind }} = testing::from_yaml(SAMPLE).unwrap();
        object.spec.size = 2;
        cluster.put(&object).await;
        let shared = cluster.shared();
        let controller = tokio::spawn(setup(&shared));

        let converged = |replicas: i32| {
            let cluster = &cluster;
            move || async move {
                let stored = cluster.get::<{{ kind }}>(NAME).await;
                let conditions = stored.and_then(|stored| stored.status).unwrap_or_default().conditions;
                let available = conditions.iter().any(|c| c.type_ == AVAILABLE && c.status == "True");
                let deployment = cluster.get::<Deployment>(NAME).await;
                available && deployment.and_then(|d| d.spec).and_then(|spec| spec.replicas) == Some(replicas)
            }
        };
        testing::eventually("the {{ kind }} is available", WAIT, converged(2)).await;

        // `kubectl scale deployment {{ kind_lower }}-sample --replicas=5`: put back to the
        // {{ kind }}'s size.
        let mut scaled = cluster.get::<Deployment>(NAME).await.unwrap();
        scaled.spec.as_mut().unwrap().replicas = Some(5);
        cluster.put(&scaled).await;
        testing::eventually("the Deployment is scaled back", WAIT, converged(2)).await;

        if let Some(fake) = cluster.fake_server() {
            // Lists and watches only: every read came from the caches.
            assert_eq!(fake.count(testing::fake::Verb::Get), 0, "{:#?}", fake.requests());
        }
        shared.shutdown.cancel();
        controller.await.unwrap().unwrap();
    }

    // Each test on the fake API server, and on envtest's kube-apiserver.

    #[tokio::test]
    async fn the_controller_converges_reading_deployments_from_its_cache_on_the_fake() {
        the_controller_converges_reading_deployments_from_its_cache(cluster::TestCluster::fake()).await;
    }

    #[tokio::test]
    #[ignore = "envtest: needs envtest's binaries (make test, or KUBEBUILDER_ASSETS)"]
    async fn the_controller_converges_reading_deployments_from_its_cache_on_envtest() {
        the_controller_converges_reading_deployments_from_its_cache(cluster::TestCluster::envtest().await).await;
    }

    #[tokio::test]
    async fn the_sample_is_reconciled_with_the_controllers_permissions_on_the_fake() {
        the_sample_is_reconciled_with_the_controllers_permissions(cluster::TestCluster::fake()).await;
    }

    #[tokio::test]
    #[ignore = "envtest: needs envtest's binaries (make test, or KUBEBUILDER_ASSETS)"]
    async fn the_sample_is_reconciled_with_the_controllers_permissions_on_envtest() {
        the_sample_is_reconciled_with_the_controllers_permissions(cluster::TestCluster::envtest().await).await;
    }

    #[tokio::test]
    async fn an_invalid_sample_is_refused_on_the_fake() {
        an_invalid_sample_is_refused(cluster::TestCluster::fake()).await;
    }

    #[tokio::test]
    #[ignore = "envtest: needs envtest's binaries (make test, or KUBEBUILDER_ASSETS)"]
    async fn an_invalid_sample_is_refused_on_envtest() {
        an_invalid_sample_is_refused(cluster::TestCluster::envtest().await).await;
    }

    #[tokio::test]
    async fn a_missing_rbac_rule_is_forbidden_on_the_fake() {
        a_missing_rbac_rule_is_forbidden(cluster::TestCluster::fake()).await;
    }

    #[tokio::test]
    #[ignore = "envtest: needs envtest's binaries (make test, or KUBEBUILDER_ASSETS)"]
    async fn a_missing_rbac_rule_is_forbidden_on_envtest() {
        a_missing_rbac_rule_is_forbidden(cluster::TestCluster::envtest().await).await;
    }
}

/// `reconcile` against a mocked API server: each test says which requests it expects, checks
/// them, and answers them. A request that is not expected fails the test, and so does an expected
/// request that never comes.
#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::DeploymentStatus;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use k8s_openapi::jiff::Timestamp;
    use kube::{Client, CustomResourceExt as _};
    use operator_rs_runtime::controller::owner_reference;
    use operator_rs_testing::{
        ApiServer, Method, StatusCode, fake, reconcile_with, wait_until,
    };
    use serde_json::Value;

    use super::*;
    use {{ api_module }}::{{ kind }}Spec;

    const IMAGE: &str = "{{ image }}";

    const OBJECT_URL: &str = "/apis/{{ qualified_group }}/{{ version }}/namespaces/default/{{ plural }}/test";
    const DEPLOYMENT_URL: &str = "/apis/apps/v1/namespaces/default/deployments/test";
    const EVENTS_URL: &str = "/apis/events.k8s.io/v1/namespaces/default/events?";

    /// The {{ kind }} to reconcile, as the controller sees it after `kubectl apply`, with the
    /// finalizer in place unless `finalized` is false.
    fn {{ kind_snake }}(size: i32, finalized: bool) -> {{ kind }} {
        let mut object = {{ kind }}::new(
            "test",
            {{ kind }}Spec {
                size,
{%- if has_container_port %}
                ..{{ kind }}Spec::default()
{%- endif %}
            },
        );
        object.metadata.namespace = Some("default".to_owned());
        object.metadata.uid = Some("0b1c2d3e".to_owned());
        object.metadata.generation = Some(1);
        if finalized {
            object.metadata.finalizers = Some(vec![FINALIZER.to_owned()]);
        }
        object
    }

    /// A Deployment as the API server returns it, as `apply_owned` applied it: in the
    /// {{ kind }}'s namespace and owned by it.
    fn existing_deployment(replicas: i32, available: i32) -> Deployment {
        let owner = {{ kind_snake }}(replicas, true);
        let mut deployment = deployment(&owner, IMAGE);
        deployment.metadata.namespace = owner.namespace();
        deployment.metadata.owner_references = owner_reference(&owner).map(|owner| vec![owner]);
        deployment.status = Some(DeploymentStatus {
            available_replicas: Some(available),
            ..DeploymentStatus::default()
        });
        deployment
    }

    /// `reconcile(object)`, with the context the runner would give it.
    async fn run(object: {{ kind }}, client: Client) -> Result<Action, Error> {
        let ctx = Context::new(client, CONTROLLER_NAME, IMAGE.to_owned());
        reconcile(Arc::new(object), Arc::new(ctx)).await
    }

    /// Expects the server-side apply of the Deployment, checks it asks for `replicas` pods, and
    /// answers with `answer`.
    async fn expect_apply(api_server: &mut ApiServer, replicas: i32, answer: &Deployment) {
        let url = format!("{DEPLOYMENT_URL}?&force=true&fieldManager={CONTROLLER_NAME}");
        let apply = api_server.expect(Method::PATCH, &url).await;
        assert_eq!(apply.body["spec"]["replicas"], replicas);
        assert_eq!(
            apply.body["spec"]["template"]["spec"]["containers"][0]["image"],
            IMAGE
        );
        // Owned by the {{ kind }}: a controller owner reference, which blocks its deletion
        // until the garbage collector has deleted the Deployment.
        let owner = &apply.body["metadata"]["ownerReferences"][0];
        assert_eq!(owner["kind"], "{{ kind }}");
        assert_eq!(owner["uid"], "0b1c2d3e");
        assert_eq!(owner["controller"], true);
        assert_eq!(owner["blockOwnerDeletion"], true);
        apply.ok(answer);
    }

    /// Expects an Event with `reason`, and returns its note.
    async fn expect_event(api_server: &mut ApiServer, reason: &str) -> String {
        let event = api_server.expect(Method::POST, EVENTS_URL).await;
        assert_eq!(event.body["reason"], reason);
        assert_eq!(event.body["regarding"]["name"], "test");
        let body = event.body.clone();
        event.respond(StatusCode::CREATED, &body);
        body["note"].as_str().unwrap_or_default().to_owned()
    }

    /// Expects a status update and returns the conditions it applies, by type.
    async fn expect_status(api_server: &mut ApiServer) -> BTreeMap<String, Value> {
        let url = format!("{OBJECT_URL}/status?&force=true&fieldManager={CONTROLLER_NAME}");
        let apply = api_server.expect(Method::PATCH, &url).await;
        assert_eq!(apply.body["apiVersion"], "{{ qualified_group }}/{{ version }}");
        assert_eq!(apply.body["kind"], "{{ kind }}");
        let status = apply.body["status"].clone();
        let mut updated = {{ kind_snake }}(1, true);
        updated.status = serde_json::from_value(status.clone()).unwrap();
        apply.ok(&updated);
        let conditions = status["conditions"].as_array().unwrap();
        conditions
            .iter()
            .map(|c| (c["type"].as_str().unwrap().to_owned(), c.clone()))
            .collect()
    }

    /// A new {{ kind }} first gets the finalizer, then its Deployment, then a status that says
    /// its pods are not available yet, in one reconciliation: three writes, and no retry (the
    /// Deployment's watch tells when the pods are available).
    #[tokio::test]
    async fn a_new_{{ kind_snake }}_gets_the_finalizer_then_its_deployment() {
        let (result, conditions) = reconcile_with(
            |client| run({{ kind_snake }}(1, false), client),
            |mut api_server| async move {
                let patch = api_server.expect(Method::PATCH, &format!("{OBJECT_URL}?")).await;
                assert_eq!(
                    patch.body,
                    json!([
                        { "op": "test", "path": "/metadata/finalizers", "value": null },
                        { "op": "add", "path": "/metadata/finalizers", "value": [FINALIZER] },
                    ])
                );
                patch.ok(&{{ kind_snake }}(1, true));
                let get = api_server.expect(Method::GET, DEPLOYMENT_URL).await;
                get.respond_error(StatusCode::NOT_FOUND, "NotFound");
                expect_apply(&mut api_server, 1, &existing_deployment(1, 0)).await;
                expect_event(&mut api_server, "Created").await;
                let conditions = expect_status(&mut api_server).await;
                api_server.expect_no_more_requests().await;
                conditions
            },
        )
        .await;
        assert_eq!(result.unwrap(), Action::requeue(RESYNC_PERIOD));
        assert_eq!(conditions[AVAILABLE]["status"], "False");
        assert_eq!(
            conditions[AVAILABLE]["message"],
            "Deployment test has 0 of 1 replicas available"
        );
    }

    /// With the finalizer in place, a missing Deployment is created (or recreated, if someone
    /// deleted it), and the status reports its pods unavailable.
    #[tokio::test]
    async fn a_missing_deployment_is_created() {
        let (result, note) = reconcile_with(
            |client| run({{ kind_snake }}(1, true), client),
            |mut api_server| async move {
                let get = api_server.expect(Method::GET, DEPLOYMENT_URL).await;
                get.respond_error(StatusCode::NOT_FOUND, "NotFound");
                expect_apply(&mut api_server, 1, &existing_deployment(1, 0)).await;
                let note = expect_event(&mut api_server, "Created").await;
                let conditions = expect_status(&mut api_server).await;
                assert_eq!(conditions[AVAILABLE]["reason"], REPLICAS_UNAVAILABLE);
                api_server.expect_no_more_requests().await;
                note
            },
        )
        .await;
        assert_eq!(result.unwrap(), Action::requeue(RESYNC_PERIOD));
        assert_eq!(note, "Created Deployment test with 1 replicas");
    }

    /// Pods that are not available (yet) are reported unavailable.
    #[tokio::test]
    async fn unavailable_pods_are_reported() {
        let (result, conditions) = reconcile_with(
            |client| run({{ kind_snake }}(1, true), client),
            |mut api_server| async move {
                let get = api_server.expect(Method::GET, DEPLOYMENT_URL).await;
                get.ok(&existing_deployment(1, 0));
                let conditions = expect_status(&mut api_server).await;
                api_server.expect_no_more_requests().await;
                conditions
            },
        )
        .await;
        assert_eq!(result.unwrap(), Action::requeue(RESYNC_PERIOD));
        assert_eq!(conditions[AVAILABLE]["status"], "False");
        assert_eq!(conditions[AVAILABLE]["reason"], REPLICAS_UNAVAILABLE);
        assert_eq!(
            conditions[AVAILABLE]["message"],
            "Deployment test has 0 of 1 replicas available"
        );
        assert_eq!(conditions[DEGRADED]["status"], "False");
        assert_eq!(conditions[DEGRADED]["reason"], RECONCILED);
        assert_eq!(conditions[DEGRADED]["observedGeneration"], 1);
    }

    /// A new size scales the Deployment; the same happens to a Deployment scaled by hand.
    #[tokio::test]
    async fn a_size_change_scales_the_deployment() {
        let (result, note) = reconcile_with(
            |client| run({{ kind_snake }}(3, true), client),
            |mut api_server| async move {
                let get = api_server.expect(Method::GET, DEPLOYMENT_URL).await;
                get.ok(&existing_deployment(1, 1));
                expect_apply(&mut api_server, 3, &existing_deployment(3, 1)).await;
                let note = expect_event(&mut api_server, "Scaled").await;
                let conditions = expect_status(&mut api_server).await;
                assert_eq!(conditions[AVAILABLE]["status"], "False");
                api_server.expect_no_more_requests().await;
                note
            },
        )
        .await;
        assert_eq!(result.unwrap(), Action::requeue(RESYNC_PERIOD));
        assert_eq!(note, "Scaled Deployment test from 1 to 3 replicas");
    }

    /// Once all pods are available, Available turns True; the next reconciliation, of the
    /// {{ kind }} with that status, writes nothing at all.
    #[tokio::test]
    async fn available_when_all_replicas_are() {
        let (result, status) = reconcile_with(
            |client| run({{ kind_snake }}(2, true), client),
            |mut api_server| async move {
                let get = api_server.expect(Method::GET, DEPLOYMENT_URL).await;
                // Already as desired: not applied again.
                get.ok(&existing_deployment(2, 2));
                let conditions = expect_status(&mut api_server).await;
                assert_eq!(conditions[AVAILABLE]["status"], "True");
                assert_eq!(conditions[AVAILABLE]["reason"], REPLICAS_AVAILABLE);
                api_server.expect_no_more_requests().await;
                json!({ "conditions": conditions.into_values().collect::<Vec<_>>() })
            },
        )
        .await;
        assert_eq!(result.unwrap(), Action::requeue(RESYNC_PERIOD));

        // Again, with the status that the first reconciliation applied.
        let mut object = {{ kind_snake }}(2, true);
        object.status = serde_json::from_value(status).unwrap();
        let (result, ()) = reconcile_with(
            |client| run(object, client),
            |mut api_server| async move {
                let get = api_server.expect(Method::GET, DEPLOYMENT_URL).await;
                get.ok(&existing_deployment(2, 2));
                api_server.expect_no_more_requests().await;
            },
        )
        .await;
        assert_eq!(result.unwrap(), Action::requeue(RESYNC_PERIOD));
    }

    /// Deleting a {{ kind }} runs the clean-up, then removes the finalizer; the Deployment is
    /// left to the garbage collector.
    #[tokio::test]
    async fn deletion_runs_cleanup_and_removes_the_finalizer() {
        let mut object = {{ kind_snake }}(1, true);
        object.metadata.deletion_timestamp = Some(Time(Timestamp::now()));
        let (result, ()) = reconcile_with(
            |client| run(object, client),
            |mut api_server| async move {
                let conditions = expect_status(&mut api_server).await;
                assert_eq!(conditions[AVAILABLE]["status"], "False");
                assert_eq!(conditions[AVAILABLE]["reason"], FINALIZING);
                let note = expect_event(&mut api_server, "Deleting").await;
                assert_eq!(note, "{{ kind }} test is being deleted from the namespace default");
                let patch = api_server.expect(Method::PATCH, &format!("{OBJECT_URL}?")).await;
                assert_eq!(
                    patch.body,
                    json!([
                        { "op": "test", "path": "/metadata/finalizers/0", "value": FINALIZER },
                        { "op": "remove", "path": "/metadata/finalizers/0" },
                    ])
                );
                patch.ok(&{{ kind_snake }}(1, false));
                api_server.expect_no_more_requests().await;
            },
        )
        .await;
        assert_eq!(result.unwrap(), Action::await_change());
    }

    /// A Deployment that cannot be applied marks the {{ kind }} Degraded and fails the
    /// reconciliation (the runner logs the error and retries the {{ kind }} with a growing delay).
    #[tokio::test]
    async fn a_failed_apply_is_degraded() {
        let (result, conditions) = reconcile_with(
            |client| run({{ kind_snake }}(1, true), client),
            |mut api_server| async move {
                let get = api_server.expect(Method::GET, DEPLOYMENT_URL).await;
                get.respond_error(StatusCode::NOT_FOUND, "NotFound");
                let url = format!("{DEPLOYMENT_URL}?&force=true&fieldManager={CONTROLLER_NAME}");
                let apply = api_server.expect(Method::PATCH, &url).await;
                apply.respond_error(StatusCode::FORBIDDEN, "Forbidden");
                let conditions = expect_status(&mut api_server).await;
                api_server.expect_no_more_requests().await;
                conditions
            },
        )
        .await;
        let error = result.unwrap_err();
        assert!(matches!(error, Error::ApplyDeployment { .. }), "{error:?}");
        assert_eq!(error.to_string(), "cannot apply Deployment default/test");
        assert_eq!(conditions[DEGRADED]["status"], "True");
        assert_eq!(conditions[DEGRADED]["reason"], DEPLOYMENT_FAILED);
    }

    /// How long the whole controller may take to converge.
    const WAIT: Duration = Duration::from_secs(10);

    /// A pod of the {{ kind }} `instance`, as the kubelet reports it: its container waits for
    /// `waiting` (`None`: it runs).
    fn pod(instance: &str, name: &str, waiting: Option<&str>) -> Pod {
        let state = match waiting {
            Some(reason) => json!({ "waiting": { "reason": reason } }),
            None => json!({ "running": {} }),
        };
        serde_json::from_value(json!({
            "metadata": {
                "name": name,
                "namespace": "default",
                "labels": {
                    "app.kubernetes.io/managed-by": MANAGED_BY,
                    "app.kubernetes.io/instance": instance,
                },
            },
            "spec": { "containers": [{ "name": "{{ kind_lower }}", "image": IMAGE }] },
            "status": {
                "containerStatuses": [{
                    "name": "{{ kind_lower }}",
                    "image": IMAGE,
                    "imageID": "",
                    "ready": false,
                    "restartCount": 0,
                    "state": state,
                }],
            },
        }))
        .unwrap()
    }

    /// The controller caches the pods of its Deployments, and no others (its watch selects them
    /// by label); its index finds those of one {{ kind }}, not another's.
    #[tokio::test]
    async fn the_pods_of_a_{{ kind_snake }}_are_found_by_its_index() {
        let server = fake::FakeApiServer::new();
        server.register_crd(&{{ kind }}::crd());
        for (instance, name) in [("test", "test-abc12"), ("test", "test-def34"), ("other", "other-abc12")] {
            server.put(&pod(instance, name, None));
        }
        let mut unlabelled = pod("test", "unlabelled", None);
        unlabelled.metadata.labels = None;
        server.put(&unlabelled);
        let shared = Shared::new(server.client());
        let runner = runner(&shared);
        let pods = runner.cache::<Pod>();
        let controller = tokio::spawn(runner.run(reconcile, IMAGE.to_owned()));
        wait_until("the pods are cached", WAIT, || pods.is_synced()).await;

        let names = |instance: &str| {
            let found = pods.indexed(Some("default"), INSTANCE, instance);
            let mut names: Vec<String> = found.iter().map(|pod| pod.name_any()).collect();
            names.sort();
            names
        };
        assert_eq!(names("test"), ["test-abc12", "test-def34"]);
        assert_eq!(names("other"), ["other-abc12"]);
        assert!(pods.get(Some("default"), "unlabelled").is_none());
        shared.shutdown.cancel();
        controller.await.unwrap().unwrap();
    }

    /// The mapped watch reconciles the {{ kind }} that a pod's instance label names, in its
    /// namespace; a pod without the label, none.
    #[test]
    fn a_pod_maps_to_the_{{ kind_snake }}_it_runs_for() {
        let reference = |name| Some(ObjectRef::new(name).within("default"));
        assert_eq!(instance_of(&pod("test", "test-abc12", None)), reference("test"));
        assert_eq!(instance_of(&pod("other", "other-abc12", None)), reference("other"));
        let mut unlabelled = pod("test", "test-abc12", None);
        unlabelled.metadata.labels = None;
        assert_eq!(instance_of(&unlabelled), None);
    }

    /// A pod that cannot run reconciles its {{ kind }} at once (its Deployment does not change,
    /// and the next resync is minutes away), and the Available condition names the pod and why.
    /// Not a pod of another {{ kind }} (first by name here), nor a pod that is being created.
    #[tokio::test]
    async fn a_pod_that_cannot_run_is_named_in_the_status() {
        let server = fake::FakeApiServer::new();
        // No stand-in for the Deployment controller: the pods never become available.
        server.register_crd(&{{ kind }}::crd());
        let mut object = {{ kind_snake }}(1, true);
        object.metadata.uid = None;
        let object = server.put(&object);
        let mut existing = deployment(&object, IMAGE);
        existing.metadata.namespace = object.namespace();
        existing.metadata.owner_references = owner_reference(&object).map(|owner| vec![owner]);
        server.put(&existing);
        server.put(&pod("test", "test-abc12", Some("ContainerCreating")));
        server.put(&pod("other", "other-abc12", Some("CrashLoopBackOff")));
        let shared = Shared::new(server.client());
        let controller = tokio::spawn(setup(&shared));

        let message = || {
            let status = server.get::<{{ kind }}>(Some("default"), "test")?.status?;
            let available = status.conditions.into_iter().find(|c| c.type_ == AVAILABLE)?;
            Some(available.message)
        };
        let unavailable = "Deployment test has 0 of 1 replicas available";
        wait_until("the {{ kind }} is unavailable", WAIT, || {
            message().as_deref() == Some(unavailable)
        })
        .await;

        // The kubelet cannot pull the image.
        server.put(&pod("test", "test-abc12", Some("ImagePullBackOff")));
        let named = format!("{unavailable}; pod test-abc12: ImagePullBackOff");
        wait_until("the pod is named", WAIT, || message() == Some(named.clone())).await;
        shared.shutdown.cancel();
        controller.await.unwrap().unwrap();
    }

    /// The Deployment runs the image with the flags given to `operator-rs create api`, as the
    /// restricted Pod Security Standard requires.
    #[test]
    fn the_deployment() {
        let deployment = serde_json::to_value(deployment(&{{ kind_snake }}(2, true), IMAGE)).unwrap();
        let metadata = &deployment["metadata"];
        assert_eq!(metadata["name"], "test");
        assert_eq!(metadata["labels"]["app.kubernetes.io/managed-by"], MANAGED_BY);

        let spec = &deployment["spec"];
        assert_eq!(spec["replicas"], 2);
        let selector = &spec["selector"]["matchLabels"];
        assert_eq!(
            *selector,
            json!({ "app.kubernetes.io/instance": "test", "app.kubernetes.io/name": "{{ kind_lower }}" })
        );
        let pod = &spec["template"];
        for (key, value) in selector.as_object().unwrap() {
            assert_eq!(&pod["metadata"]["labels"][key], value, "pod label {key}");
        }
        assert_eq!(pod["spec"]["securityContext"]["runAsNonRoot"], true);
        assert_eq!(
            pod["spec"]["securityContext"]["seccompProfile"]["type"],
            "RuntimeDefault"
        );
        let container = &pod["spec"]["containers"][0];
        assert_eq!(container["image"], IMAGE);
{%- if container_command | length > 0 %}
        assert_eq!(
            container["command"],
            json!([{% for arg in container_command %}{{ arg }}{% if not loop.last %}, {% endif %}{% endfor %}])
        );
{%- endif %}
{%- if has_container_port %}
        assert_eq!(container["ports"][0]["containerPort"], {{ container_port }});
{%- endif %}
        let security = &container["securityContext"];
        assert_eq!(security["runAsNonRoot"], true);
{%- if has_run_as_user %}
        assert_eq!(security["runAsUser"], {{ run_as_user }});
{%- endif %}
        assert_eq!(security["allowPrivilegeEscalation"], false);
        assert_eq!(security["capabilities"]["drop"], json!(["ALL"]));
    }

    #[test]
    fn image_tags() {
        assert_eq!(image_tag("memcached:1.6.26-alpine3.19"), Some("1.6.26-alpine3.19"));
        assert_eq!(image_tag("registry:5000/team/memcached:v2"), Some("v2"));
        assert_eq!(image_tag("registry:5000/team/memcached"), None);
        assert_eq!(image_tag("memcached"), None);
        assert_eq!(image_tag("memcached:1.6@sha256:abcd"), Some("1.6"));
        assert_eq!(image_tag("memcached:_x"), None);
    }
}
