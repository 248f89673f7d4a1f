//! [`Runner`]: builds and runs the kube-runtime controllers of one kind, so that a controller file
//! holds only its `reconcile` function, its RBAC rules and its tests.

use std::collections::HashMap;
use std::fmt::Debug;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;

use futures::{Stream, StreamExt as _, future};
use kube::api::{Patch, PatchParams};
use kube::core::{ClusterResourceScope, NamespaceResourceScope};
use kube::runtime::controller::{self, Action, Controller};
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::utils::{Backoff as StreamBackoff, ResetTimerBackoff};
use kube::runtime::watcher::ExponentialBackoff;
use kube::runtime::{PredicateConfig, WatchStreamExt as _, watcher};
use kube::{Api, Client, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::events::{Event, EventType, Recorder, Reporter};
use super::recovery::{Recovery, is_unreachable};
use super::written::Written;
use super::{ControllerFuture, Shared, log_result};
use crate::manager::backoff::Backoff;
use crate::manager::namespaces::{WatchNamespaces, join_controllers};

/// What a `reconcile` function gets besides the object: the client, an Event recorder, and the
/// controller's own `state` (built once in `setup`, e.g. an image name read from the environment).
///
/// Tests build one with [`Context::new`] around the mocked client of `testing::reconcile_with`
/// (cargo feature `testing`).
pub struct Context<S = ()> {
    /// Client for the Kubernetes API server: from the kubeconfig when run locally, from the pod's
    /// service account (with the permissions of `config/rbac/`) in the cluster.
    pub client: Client,
    /// Publishes Events (`kubectl describe`, `kubectl events`) as this controller. Kept for the
    /// controller's lifetime because it remembers recent Events: a repeated Event becomes a count
    /// on the first one instead of a new object. The runtime's [`Recorder`], which remembers at
    /// most 4,096 of them, rather than kube's, which remembers every Event of the last 6 minutes.
    pub recorder: Recorder,
    /// The controller's name: its logs' `controller` field, its Events' `reportingController`,
    /// and the field manager of its server-side applies.
    pub name: &'static str,
    /// The controller's own state.
    pub state: S,
    /// The objects of the reconciled kind that this controller wrote and its cache has not seen
    /// yet (read-your-writes, see [`Context::wrote`]).
    written: Written,
}

impl<S> Context<S> {
    /// A context for the controller `name` talking to the API server through `client`.
    ///
    /// It remembers none of the controller's writes (see [`Context::wrote`]): the [`Runner`]
    /// builds the context of a running controller, which does.
    pub fn new(client: Client, name: &'static str, state: S) -> Self {
        Self::with_written(client, name, state, Written::disabled())
    }

    pub(crate) fn with_written(
        client: Client,
        name: &'static str,
        state: S,
        written: Written,
    ) -> Self {
        let reporter = Reporter {
            controller: name.to_owned(),
            instance: None,
        };
        Self {
            recorder: Recorder::new(client.clone(), reporter),
            client,
            name,
            state,
            written,
        }
    }

    /// Takes note of `object` as the API server returned it after a write of this controller
    /// (a patch or an update of the reconciled object itself), so that a reconciliation that
    /// starts before the watch has brought that write to the cache gets this version instead of
    /// the older one in the cache: read-your-writes. Without it, that reconciliation would act
    /// on what the controller has just changed, and write it again (a finalizer patch that the
    /// API server refuses, a status that is already there).
    ///
    /// [`Context::apply_status`] and [`finalizer`](super::finalizer::finalizer) call it; call it
    /// yourself after writing the reconciled object through an `Api` of your own. It keeps only
    /// objects of the kind the [`Runner`] reconciles, and only until the cache has caught up
    /// with them (by `resourceVersion`), so it holds the few writes on their way through the
    /// watch, not a second cache. It does nothing in a context built with [`Context::new`].
    pub fn wrote<K>(&self, object: &K)
    where
        K: Resource + Clone + Send + Sync + 'static,
    {
        self.written.record(object);
    }

    /// The object `reconcile` gets: `cached`, or this controller's own newer write of it.
    pub(crate) fn latest<K>(&self, cached: Arc<K>) -> Arc<K>
    where
        K: Resource + Send + Sync + 'static,
    {
        self.written.latest(cached)
    }

    /// Writes `status` (a JSON object with the status fields this controller owns, e.g.
    /// `json!({ "conditions": conditions })`) to the status subresource of `object`, by server-side
    /// apply as this controller's field manager, and returns the object as stored.
    ///
    /// The patch holds only the fields the controller sets, so it never overwrites fields that
    /// others own, and it is forced: a controller owns its fields even when someone else has set
    /// them (the Kubernetes API conventions ask controllers to force). Fields the controller
    /// applied before but leaves out now are removed, so apply every field you own every time.
    ///
    /// The object returned is remembered until the cache has it ([`Context::wrote`]): a
    /// reconciliation that starts before then sees the status written, and does not write it
    /// again.
    pub async fn apply_status<K>(&self, object: &K, status: Value) -> Result<K, kube::Error>
    where
        K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
        K::Scope: Scope,
    {
        let api =
            <K::Scope as Scope>::api_in::<K>(&self.client, object.meta().namespace.as_deref());
        let patch = json!({
            "apiVersion": K::api_version(&()),
            "kind": K::kind(&()),
            "status": status,
        });
        let name = object.meta().name.as_deref().unwrap_or_default();
        let params = PatchParams::apply(self.name).force();
        let stored = api
            .patch_status(name, &params, &Patch::Apply(&patch))
            .await?;
        self.wrote(&stored);
        Ok(stored)
    }

    /// Publishes an Event about `object` as this controller: `kubectl describe` and `kubectl
    /// events` show it. `reason` is a short UpperCamelCase word (`Created`, `Scaled`), `action`
    /// what the controller did or failed to do (`Reconcile`), `note` a sentence for humans.
    ///
    /// Like controller-runtime's recorder, a failure to publish is logged, not returned: an Event
    /// is worth less than the reconcile that reports it.
    pub async fn publish<K>(
        &self,
        object: &K,
        type_: EventType,
        reason: &str,
        action: &str,
        note: impl Into<String>,
    ) where
        K: Resource<DynamicType = ()>,
    {
        let event = Event {
            type_,
            reason: reason.to_owned(),
            note: Some(note.into()),
            action: action.to_owned(),
            secondary: None,
        };
        if let Err(error) = self.recorder.publish(&event, &object.object_ref(&())).await {
            let error = &error as &dyn std::error::Error;
            tracing::warn!(
                controller = self.name,
                error,
                reason,
                "cannot publish an Event"
            );
        }
    }
}

/// The name of `object` as `kubectl` shows it: `namespace/name` for a namespaced object, `name`
/// for a cluster-scoped one. For log lines and error messages.
pub fn qualified_name<K: Resource>(object: &K) -> String {
    let meta = object.meta();
    let name = meta.name.as_deref().unwrap_or_default();
    match meta.namespace.as_deref() {
        Some(namespace) => format!("{namespace}/{name}"),
        None => name.to_owned(),
    }
}

/// How the watches of a kind are spread over namespaces, by the kind's scope: namespaced kinds
/// follow `WATCH_NAMESPACE`, cluster-scoped kinds are always watched as a whole.
///
/// Implemented for kube's two scope types; you never implement it yourself.
pub trait Scope: Sized {
    /// One `Api` per watch of the kind `K`.
    fn apis<K>(namespaces: &WatchNamespaces, client: &Client) -> Vec<Api<K>>
    where
        K: Resource<Scope = Self>,
        K::DynamicType: Default;

    /// The `Api` of `K` in `namespace` (`None`: every namespace).
    fn api_in<K>(client: &Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<Scope = Self>,
        K::DynamicType: Default;
}

impl Scope for NamespaceResourceScope {
    fn apis<K>(namespaces: &WatchNamespaces, client: &Client) -> Vec<Api<K>>
    where
        K: Resource<Scope = Self>,
        K::DynamicType: Default,
    {
        namespaces.apis(client)
    }

    fn api_in<K>(client: &Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<Scope = Self>,
        K::DynamicType: Default,
    {
        match namespace {
            Some(namespace) => Api::namespaced(client.clone(), namespace),
            None => Api::all(client.clone()),
        }
    }
}

impl Scope for ClusterResourceScope {
    fn apis<K>(_: &WatchNamespaces, client: &Client) -> Vec<Api<K>>
    where
        K: Resource<Scope = Self>,
        K::DynamicType: Default,
    {
        vec![Api::all(client.clone())]
    }

    fn api_in<K>(client: &Client, _: Option<&str>) -> Api<K>
    where
        K: Resource<Scope = Self>,
        K::DynamicType: Default,
    {
        Api::all(client.clone())
    }
}

/// The annotation in which `kubectl apply` keeps the object it last applied: a second copy of the
/// object that no controller reads.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Decides which changes of an object trigger a reconciliation: a hash of what matters, or `None`
/// for "always". An object whose hash did not change since the last one seen triggers nothing.
type Change<K> = Arc<dyn Fn(&K) -> Option<u64> + Send + Sync>;

/// A hash of `value`, for the change predicates of [`Runner::reconcile_on`] and [`Runner::owns_on`].
pub fn hash_of<T: Hash + ?Sized>(value: &T) -> u64 {
    let mut hasher = DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}

/// The [`Runner`]'s default for the reconciled kind: what a controller must act on, and nothing
/// it causes itself. A hash of the `generation` (the API server bumps it on every change of the
/// spec, never on status or metadata) and whether a `deletionTimestamp` is set (deletion starts
/// the clean-up). The controller's own writes (status, its finalizer: see
/// [`finalizer`](super::finalizer::finalizer)), label or annotation edits and relists of the
/// watch reconcile nothing; the periodic requeue of `reconcile` catches what someone else
/// changed there (a finalizer removed by hand), as controller-runtime's
/// `GenerationChangedPredicate` leaves it to the resync.
///
/// Kinds without a `generation` (ConfigMaps, Secrets …) get `None`: every change reconciles.
pub fn spec_changes<K: Resource>(object: &K) -> Option<u64> {
    let meta = object.meta();
    let generation = meta.generation?;
    Some(hash_of(&(generation, meta.deletion_timestamp.is_some())))
}

/// The [`Runner`]'s default for owned kinds ([`Runner::owns`]): a hash of the `generation` (the
/// spec the owner applies), the labels (which the owner applies too) and the whole `status`
/// (what the owner may read). Changes of other metadata (managed fields, annotations, the
/// resource version alone) reconcile nothing. A deleted child always reconciles its owner, a new
/// one never (it is almost always the owner's own creation).
///
/// Kinds without a `generation` get `None`: every change reconciles, creations included.
pub fn owned_changes<K: Resource + Serialize>(object: &K) -> Option<u64> {
    let meta = object.meta();
    let generation = meta.generation?;
    let status = serde_json::to_value(object)
        .ok()
        .and_then(|value| value.get("status").map(Value::to_string));
    Some(hash_of(&(generation, &meta.labels, status)))
}

/// What the caches keep of an object: everything but `managedFields` and the `kubectl apply`
/// annotation ([`LAST_APPLIED`]), which no controller reads and which often take more room than
/// the object itself.
pub fn strip_for_cache<K: Resource>(object: &mut K) {
    let meta = object.meta_mut();
    meta.managed_fields = None;
    if let Some(annotations) = meta.annotations.as_mut() {
        annotations.remove(LAST_APPLIED);
    }
}

/// The objects of a watch whose `change` hash differs from the one last seen of the same object
/// (by uid), and every deleted object: the triggers of an owned kind.
///
/// The first sight of a child triggers nothing: at startup every owner is reconciled anyway,
/// and later a new child is almost always the controller's own creation, whose watch event
/// would cost a reconciliation that finds nothing to do. A relist of the watch (after a `410
/// Gone` or an outage) compares with the hashes seen before it, so a child changed while the
/// watch was down still reconciles its owner; a child first seen in a relist does too, since it
/// may have changed since its creation while the watch was away (after an outage, the children
/// created as the backlog resumed, and already available by the time the watch is back, are what
/// their owners wait for). Objects deleted while the watch was down are forgotten: their owners'
/// periodic requeue finds them missing.
fn changed_objects<K>(
    events: impl Stream<Item = watcher::Result<watcher::Event<K>>> + Send + 'static,
    change: impl Fn(&K) -> Option<u64> + Send + 'static,
) -> impl Stream<Item = watcher::Result<K>> + Send + 'static
where
    K: Resource + Send + 'static,
{
    // The hash last seen of each object, by uid; while the watch relists, also those of the
    // objects listed so far, which replace them when the list is complete.
    let mut seen: HashMap<String, u64> = HashMap::new();
    let mut relisted: Option<HashMap<String, u64>> = None;
    // Whether a list has completed: every list after the first is a relist.
    let mut first_list_done = false;
    events.filter_map(move |event| {
        let uid = |object: &K| object.meta().uid.clone().unwrap_or_default();
        let triggered = match event {
            Err(error) => Some(Err(error)),
            Ok(watcher::Event::Init) => {
                relisted = Some(HashMap::new());
                None
            }
            Ok(watcher::Event::InitDone) => {
                if let Some(listed) = relisted.take() {
                    seen = listed;
                }
                first_list_done = true;
                None
            }
            Ok(watcher::Event::InitApply(object) | watcher::Event::Apply(object)) => {
                match change(&object) {
                    None => Some(Ok(object)),
                    Some(hash) => {
                        let uid = uid(&object);
                        let changed = match seen.get(&uid) {
                            Some(&last) => last != hash,
                            None => first_list_done && relisted.is_some(),
                        };
                        if let Some(listed) = relisted.as_mut() {
                            listed.insert(uid.clone(), hash);
                        }
                        seen.insert(uid, hash);
                        changed.then_some(Ok(object))
                    }
                }
            }
            Ok(watcher::Event::Delete(object)) => {
                seen.remove(&uid(&object));
                Some(Ok(object))
            }
        };
        future::ready(triggered)
    })
}

/// The longest base wait between two tries of a watch that fails (kube's and client-go's: 30 s),
/// to which the jitter adds up to as much again: a try against an API server that is away costs
/// a refused connection, and after an outage the watches bring what finishes the backlog (the
/// rest of the first list of a controller that started during the outage, the changes of owned
/// objects).
pub const WATCH_MAX_DELAY: Duration = Duration::from_secs(2);

/// The backoff of every watch of the [`Runner`]: kube's default (client-go's reflector's: 800 ms
/// doubling, with jitter, starting over after 2 minutes without errors), but at most
/// [`WATCH_MAX_DELAY`] and its jitter between tries, so that after an outage the watches resume
/// within 4 s of the API server's return rather than 60. (Measured with `hack/bench-reconcile
/// 1000 --outage 30`: with 5 s, the watches took 8 to 10 s to resume.)
fn watch_backoff() -> ResetTimerBackoff<ExponentialBackoff> {
    let exponential = backon::ExponentialBuilder::default()
        .with_min_delay(Duration::from_millis(800))
        .with_max_delay(WATCH_MAX_DELAY)
        .with_factor(2.0)
        .with_jitter()
        .without_max_times();
    ResetTimerBackoff::new(exponential.into(), Duration::from_secs(120))
}

/// The `trigger_backoff` of every controller: none, since each watch backs off on its own
/// ([`watch_backoff`]). Kube's default pauses all the triggers of a controller, up to 30 s, after
/// an error of any of them: after an outage, the watches that are back and the requeues of
/// [`Recovery`] would wait for it.
struct WatchesBackOff;

impl Iterator for WatchesBackOff {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        Some(Duration::ZERO)
    }
}

impl StreamBackoff for WatchesBackOff {
    fn reset(&mut self) {}
}

/// Adds a watch to the controller of one namespace (`None`: every namespace).
type AddWatch<K> = Box<dyn Fn(Controller<K>, &Client, Option<&str>) -> Controller<K> + Send>;

/// Builds the controllers of one kind `K` and runs them for the manager.
///
/// ```no_run
/// # use std::sync::Arc;
/// # use k8s_openapi::api::apps::v1::Deployment;
/// # use k8s_openapi::api::core::v1::ConfigMap;
/// # use kube::runtime::controller::Action;
/// # use kube::runtime::watcher;
/// use operator_rs_runtime::controller::{Context, ControllerFuture, Runner, Shared};
///
/// fn setup(shared: &Shared) -> ControllerFuture {
///     Runner::<Deployment>::new("deployment", shared)
///         .owns::<ConfigMap>(watcher::Config::default())
///         .run(reconcile, ())
/// }
///
/// async fn reconcile(deployment: Arc<Deployment>, ctx: Arc<Context>) -> Result<Action, kube::Error> {
///     Ok(Action::await_change())
/// }
/// ```
///
/// What it does for every controller, so that yours does not have to:
///
/// - one kube-runtime [`Controller`] per watched namespace (`WATCH_NAMESPACE`, see
///   [`WatchNamespaces`]), each with its own cache, sharing one [`Context`], one set of metrics
///   and one retry backoff; a cluster-scoped kind gets one controller;
/// - `--max-concurrent-reconciles` workers (or the controller's own number, see
///   [`Runner::with_max_concurrent_reconciles`]), never two on the same object;
/// - controller-runtime's reconcile metrics, under the controller's name;
/// - after a failed reconcile: a warning with the error and its causes, and a retry after a
///   per-object delay that doubles from 5 ms up to 1000 s and is reset by a success
///   (controller-runtime's default rate limiter); see [`Backoff`]. Failures for want of an API
///   server are retried at once, with a fresh backoff, when it is back (see
///   [`Recovery`](super::recovery::Recovery)), not after the delays the outage built up;
/// - `/readyz` reports not ready until every cache has synced;
/// - reconciliations only on changes that matter: for `K`, a new spec (`generation`) or the
///   start of the deletion ([`spec_changes`], or [`Runner::reconcile_on`]), never the
///   controller's own status or finalizer writes; for owned kinds, a change of their spec,
///   labels or status (not their creation) or a deletion ([`owned_changes`], or
///   [`Runner::owns_on`]). Every write to an object
///   or a child comes back as a watch event: unfiltered, each costs a reconciliation that finds
///   nothing to do. The spec's generation still catches drift (a child scaled by hand) at once;
///   periodic requeues catch the rest;
/// - read-your-writes: `reconcile` gets the object as the controller's own last write of it
///   returned ([`Context::apply_status`], the finalizer patches of
///   [`finalizer`](super::finalizer::finalizer), [`Context::wrote`]) while the cache has not seen
///   that write yet, so that it does not do again what it has just done;
/// - caches without `managedFields` and the `kubectl apply` annotation ([`strip_for_cache`]);
/// - on shutdown, reconciles in flight finish before the process exits.
pub struct Runner<'a, K>
where
    K: Resource + Clone + Debug + 'static,
    K::DynamicType: Eq + Hash + Clone,
{
    name: &'static str,
    shared: &'a Shared,
    watcher_config: watcher::Config,
    reconcile_on: Change<K>,
    watches: Vec<AddWatch<K>>,
    max_concurrent_reconciles: Option<u16>,
}

impl<'a, K> Runner<'a, K>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Default + Eq + Hash + Clone + Debug + Unpin + Send + Sync,
    K::Scope: Scope,
{
    /// A runner for the controller `name` of kind `K`; `name` shows in logs, metrics, `/readyz`
    /// and Events, and is the field manager of the controller's server-side applies.
    pub fn new(name: &'static str, shared: &'a Shared) -> Self {
        Self {
            name,
            shared,
            watcher_config: watcher::Config::default(),
            reconcile_on: Arc::new(spec_changes::<K>),
            watches: Vec::new(),
            max_concurrent_reconciles: None,
        }
    }

    /// This controller's own number of concurrent reconciles (controller-runtime's
    /// `controller.Options.MaxConcurrentReconciles`) instead of the manager's
    /// `--max-concurrent-reconciles`: for instance 1 for a controller whose objects must be
    /// handled one at a time, next to others that run many. 0 is taken as 1.
    pub fn with_max_concurrent_reconciles(mut self, workers: u16) -> Self {
        self.max_concurrent_reconciles = Some(workers.max(1));
        self
    }

    /// Watches `K` with `config` (e.g. a label selector) instead of every object of the kind.
    pub fn with_watcher_config(mut self, config: watcher::Config) -> Self {
        self.watcher_config = config;
        self
    }

    /// Reconciles an object of `K` only on the changes for which `change` returns a new hash (or
    /// `None`: on every change), instead of [`spec_changes`] (the spec, the
    /// deletion). For instance `|object: &K| Some(hash_of(&(object.meta().generation,
    /// object.labels())))` also reconciles on label changes. The first sight of every object
    /// reconciles it, whatever `change` says.
    pub fn reconcile_on(
        mut self,
        change: impl Fn(&K) -> Option<u64> + Send + Sync + 'static,
    ) -> Self {
        self.reconcile_on = Arc::new(change);
        self
    }

    /// Reconciles the owner of a `Child` whenever the child changes in a way that
    /// [`owned_changes`] sees (its spec, its labels or its status) or is deleted: the object in
    /// the child's controller owner reference. Give the objects `reconcile` creates such a
    /// reference (`object.controller_owner_ref(&())`) and they are also garbage-collected with it.
    ///
    /// `config` narrows the watch to the children that matter, e.g.
    /// `watcher::Config::default().labels("app.kubernetes.io/managed-by=my-controller")`.
    pub fn owns<Child>(self, config: watcher::Config) -> Self
    where
        Child: Resource<DynamicType = ()>
            + Clone
            + DeserializeOwned
            + Serialize
            + Debug
            + Send
            + Sync
            + 'static,
        Child::Scope: Scope,
    {
        self.owns_on(config, owned_changes::<Child>)
    }

    /// [`Runner::owns`], reconciling the owner only when `change` returns a new hash for a child
    /// (or `None`: on every change), and whenever a child is deleted. Hash what `reconcile`
    /// reads of the child, and what it applies: the `generation` stands for the whole spec, so
    /// a child edited by hand (`kubectl scale`) is still put back at once. For a Deployment
    /// whose owner reads only its available replicas:
    /// `|d: &Deployment| Some(hash_of(&(d.metadata.generation, d.labels(),
    /// d.status.as_ref().map(|s| s.available_replicas))))`.
    pub fn owns_on<Child>(
        mut self,
        config: watcher::Config,
        change: impl Fn(&Child) -> Option<u64> + Clone + Send + Sync + 'static,
    ) -> Self
    where
        Child:
            Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
        Child::Scope: Scope,
    {
        self.watches
            .push(Box::new(move |controller, client, namespace| {
                let api = <Child::Scope as Scope>::api_in::<Child>(client, namespace);
                let events = watcher(api, config.clone())
                    .backoff(watch_backoff())
                    .modify(strip_for_cache::<Child>);
                controller.owns_stream(changed_objects(events, change.clone()))
            }));
        self
    }

    /// Reconciles the objects that `mapper` names whenever an `Other` changes, for relations that
    /// are not owner references (e.g. the custom resources that name a Secret).
    pub fn watches<Other, I>(
        mut self,
        config: watcher::Config,
        mapper: impl Fn(Other) -> I + Clone + Send + Sync + 'static,
    ) -> Self
    where
        Other:
            Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
        Other::Scope: Scope,
        I: IntoIterator<Item = ObjectRef<K>> + 'static,
        I::IntoIter: Send,
    {
        self.watches
            .push(Box::new(move |controller, client, namespace| {
                let api = <Other::Scope as Scope>::api_in::<Other>(client, namespace);
                controller.watches(api, config.clone(), mapper.clone())
            }));
        self
    }

    /// Runs `reconcile` for every object of `K` until shutdown, with `state` in its [`Context`].
    ///
    /// `reconcile` must be idempotent: it gets no diff, only the object as it is now, and is
    /// called again whenever the object or one of its watched children changes, and when the
    /// [`Action`] it returned asks for it.
    pub fn run<S, E, F, Fut>(self, reconcile: F, state: S) -> ControllerFuture
    where
        S: Send + Sync + 'static,
        E: std::error::Error + Send + Sync + 'static,
        F: Fn(Arc<K>, Arc<Context<S>>) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
    {
        let Self {
            name,
            shared,
            watcher_config,
            reconcile_on,
            watches,
            max_concurrent_reconciles,
        } = self;
        let workers = max_concurrent_reconciles.unwrap_or(shared.max_concurrent_reconciles);
        let written = Written::of::<K>();
        let context = Arc::new(Context::with_written(
            shared.client.clone(),
            name,
            state,
            written.clone(),
        ));
        let metrics = shared.metrics.controller(name, workers);
        let backoff = Backoff::<K>::default();
        let config = controller::Config::default().concurrency(workers);

        let controllers = <K::Scope as Scope>::apis::<K>(&shared.watch_namespaces, &shared.client)
            .into_iter()
            .map(|api| {
                let namespace = api.namespace().map(str::to_owned);
                // `/readyz` names each namespace's cache on its own: "<name>/<namespace>".
                let cache_name = match &namespace {
                    Some(namespace) => format!("{name}/{namespace}"),
                    None => name.to_owned(),
                };
                // Kube's `Controller::new`, but with a leaner cache and fewer triggers: objects
                // are cached without what no controller reads, and only changes that
                // `reconcile_on` sees reconcile (by default not the controller's own status
                // writes).
                let (reader, writer) = reflector::store();
                let change = Arc::clone(&reconcile_on);
                // Failures for want of an API server are retried together as soon as it is
                // back (see `Recovery`).
                let recovery = Recovery::<K>::default();
                // Once the cache has a write of the controller's own, it need not be
                // remembered any longer (see `Context::wrote`).
                let written = written.clone();
                let triggers = watcher(api, watcher_config.clone())
                    .backoff(watch_backoff())
                    .modify(strip_for_cache::<K>)
                    .reflect(writer)
                    .inspect(move |event| {
                        if let Ok(event) = event {
                            written.observe(event);
                        }
                    })
                    .applied_objects()
                    .predicate_filter(move |object: &K| change(object), PredicateConfig::default());
                let mut controller = Controller::for_stream(triggers, reader)
                    .reconcile_on(recovery.requeues(shared.client.clone(), backoff.clone()))
                    .trigger_backoff(WatchesBackOff);
                for add_watch in &watches {
                    controller = add_watch(controller, &shared.client, namespace.as_deref());
                }
                let controller = controller
                    .with_config(config.clone())
                    .graceful_shutdown_on(shared.shutdown.clone().cancelled_owned());
                let store = controller.store();

                let (reconcile, metrics, on_success, succeeded) = (
                    reconcile.clone(),
                    metrics.clone(),
                    backoff.clone(),
                    recovery.clone(),
                );
                let measured = move |object: Arc<K>, ctx: Arc<Context<S>>| {
                    let (metrics, backoff, recovery) =
                        (metrics.clone(), on_success.clone(), succeeded.clone());
                    // The cache may not have the controller's last write of the object yet.
                    let object = ctx.latest(object);
                    let reconciled = reconcile(Arc::clone(&object), ctx);
                    async move {
                        let result = metrics.measure(reconciled).await;
                        if result.is_ok() {
                            let object = ObjectRef::from_obj(object.as_ref());
                            backoff.on_success(&object);
                            recovery.reconciled(&object);
                        }
                        result
                    }
                };
                let (on_error, failed) = (backoff.clone(), recovery.clone());
                let error_policy = move |object: Arc<K>, error: &E, _: Arc<Context<S>>| {
                    retry_after_error(name, &on_error, &failed, object.as_ref(), error)
                };
                let main_loop = controller
                    .run(measured, error_policy, Arc::clone(&context))
                    .for_each(move |result| async move { log_result(name, result) });
                shared.run_controller(&cache_name, store, main_loop)
            })
            .collect();
        join_controllers(controllers, shared.shutdown.clone())
    }
}

/// The error policy of every controller: logs the error with its causes, and retries the object
/// after its backoff delay, or as soon as the API server is back when it could not be reached
/// (see [`Recovery`]).
fn retry_after_error<K, E>(
    name: &str,
    backoff: &Backoff<K>,
    recovery: &Recovery<K>,
    object: &K,
    error: &E,
) -> Action
where
    K: Resource,
    K::DynamicType: Default + Eq + Hash + Clone,
    E: std::error::Error + 'static,
{
    let object = ObjectRef::from_obj(object);
    let delay = backoff.on_error(&object);
    if is_unreachable(error) {
        recovery.unreachable(object.clone());
    }
    tracing::warn!(
        controller = name,
        %object,
        error = error as &dyn std::error::Error,
        "reconciliation failed; retrying in {delay:?}"
    );
    Action::requeue(delay)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;

    use super::*;

    fn config_map(name: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                namespace: Some("default".to_owned()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
    }

    #[test]
    fn failures_back_off_per_object_until_a_success() {
        let (backoff, recovery) = (Backoff::<ConfigMap>::default(), Recovery::default());
        let error = std::io::Error::other("boom");
        let (a, b) = (config_map("a"), config_map("b"));
        let delay =
            |object: &ConfigMap| retry_after_error("test", &backoff, &recovery, object, &error);
        assert_eq!(delay(&a), Action::requeue(Duration::from_millis(5)));
        assert_eq!(delay(&a), Action::requeue(Duration::from_millis(10)));
        assert_eq!(delay(&b), Action::requeue(Duration::from_millis(5)));
        backoff.on_success(&ObjectRef::from_obj(&a));
        assert_eq!(delay(&a), Action::requeue(Duration::from_millis(5)));
    }

    /// What `changed_objects` lets through of a watch's events: the names of the objects.
    fn triggered(events: Vec<watcher::Event<ConfigMap>>) -> Vec<String> {
        let hash = |map: &ConfigMap| Some(hash_of(&map.data));
        let events = futures::stream::iter(events.into_iter().map(Ok));
        let triggers = changed_objects(events, hash).map(|object| object.unwrap());
        futures::executor::block_on(triggers.collect::<Vec<_>>())
            .into_iter()
            .map(|map| map.metadata.name.unwrap_or_default())
            .collect()
    }

    /// A config map with a uid (the key of `changed_objects`) and one value.
    fn with_value(name: &str, value: &str) -> ConfigMap {
        let mut map = config_map(name);
        map.metadata.uid = Some(format!("uid-{name}"));
        map.data = Some([("key".to_owned(), value.to_owned())].into());
        map
    }

    #[test]
    fn children_trigger_on_changes_and_deletions_not_on_first_sight() {
        use watcher::Event::{Apply, Delete, Init, InitApply, InitDone};
        let events = vec![
            Init,
            InitApply(with_value("listed", "1")),
            InitDone,
            // Created by the controller: no trigger; changed then: a trigger.
            Apply(with_value("new", "1")),
            Apply(with_value("new", "2")),
            // The same again (a relabel the hash ignores, a resync): no trigger.
            Apply(with_value("new", "2")),
            Delete(with_value("listed", "1")),
        ];
        assert_eq!(triggered(events), ["new", "listed"]);
    }

    /// After an outage the watch relists: a child changed while it was away triggers, and so
    /// does one it never saw (created and changed meanwhile); one unchanged does not.
    #[test]
    fn a_relist_triggers_what_changed_while_the_watch_was_away() {
        use watcher::Event::{Init, InitApply, InitDone};
        let events = vec![
            Init,
            InitApply(with_value("unchanged", "1")),
            InitApply(with_value("changed", "1")),
            InitDone,
            Init,
            InitApply(with_value("unchanged", "1")),
            InitApply(with_value("changed", "2")),
            InitApply(with_value("unseen", "1")),
            InitDone,
        ];
        assert_eq!(triggered(events), ["changed", "unseen"]);
    }

    #[test]
    fn qualified_names_are_as_kubectl_shows_them() {
        assert_eq!(qualified_name(&config_map("a")), "default/a");
        let namespace = k8s_openapi::api::core::v1::Namespace {
            metadata: ObjectMeta {
                name: Some("ops".to_owned()),
                ..ObjectMeta::default()
            },
            ..Default::default()
        };
        assert_eq!(qualified_name(&namespace), "ops");
    }

    #[tokio::test]
    async fn status_is_applied_as_the_controller() {
        use crate::testing::{Method, reconcile_with};
        let (result, ()) = reconcile_with(
            |client| async move {
                let ctx = Context::new(client, "tester", ());
                ctx.apply_status(&config_map("a"), json!({"phase": "Done"}))
                    .await
            },
            |mut api_server| async move {
                let url = "/api/v1/namespaces/default/configmaps/a/status?&force=true&fieldManager=tester";
                let call = api_server.expect(Method::PATCH, url).await;
                assert_eq!(call.body["apiVersion"], "v1");
                assert_eq!(call.body["kind"], "ConfigMap");
                assert_eq!(call.body["status"], json!({"phase": "Done"}));
                call.ok(&config_map("a"));
                api_server.expect_no_more_requests().await;
            },
        )
        .await;
        assert_eq!(result.unwrap().metadata.name.as_deref(), Some("a"));
    }

    #[tokio::test]
    async fn failed_events_are_logged_not_returned() {
        use crate::testing::{Method, StatusCode, reconcile_with};
        let ((), ()) = reconcile_with(
            |client| async move {
                let ctx = Context::new(client, "tester", ());
                let object = config_map("a");
                ctx.publish(&object, EventType::Normal, "Tested", "Test", "a note")
                    .await;
            },
            |mut api_server| async move {
                let url = "/apis/events.k8s.io/v1/namespaces/default/events?";
                let call = api_server.expect(Method::POST, url).await;
                assert_eq!(call.body["reason"], "Tested");
                assert_eq!(call.body["note"], "a note");
                assert_eq!(call.body["reportingController"], "tester");
                call.respond_error(StatusCode::FORBIDDEN, "Forbidden");
                api_server.expect_no_more_requests().await;
            },
        )
        .await;
    }

    #[tokio::test]
    async fn namespaced_kinds_follow_watch_namespace() {
        let (client, _server) = crate::testing::mock_client();
        let only = WatchNamespaces::Only(vec!["a".into(), "b".into()]);
        let apis = <NamespaceResourceScope as Scope>::apis::<ConfigMap>(&only, &client);
        let namespaces: Vec<_> = apis.iter().map(|api| api.namespace()).collect();
        assert_eq!(namespaces, [Some("a"), Some("b")]);

        use k8s_openapi::api::core::v1::Namespace;
        let apis = <ClusterResourceScope as Scope>::apis::<Namespace>(&only, &client);
        assert_eq!(apis.len(), 1);
        assert_eq!(apis[0].namespace(), None);
    }
}
