//! [`Runner`]: builds and runs the kube-runtime controllers of one kind, so that a controller file
//! holds only its `reconcile` function, its RBAC rules and its tests.

use std::hash::Hash;
use std::sync::Arc;

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use futures::{FutureExt as _, StreamExt as _, future, stream};
use kube::runtime::controller::{self, Action, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{WatchStreamExt as _, watcher};
use kube::{Api, Client, Resource};
use serde::Serialize;

use super::context::{Context, Scope};
use super::recovery::{Recovery, is_unreachable};
use super::share::{self, Share};
use super::watches::{self, Change, WatchesBackOff, watch_backoff};
use super::{ControllerFuture, Shared, log_result, owned_changes, sharded, spec_changes};
use crate::cache::{Cache, Cacheable, Caches, strip_for_cache};
use crate::manager::backoff::Backoff;
use crate::manager::namespaces::join_controllers;
use crate::metrics::{ControllerMetrics, WorkQueueMetrics};

/// One watch of a kind other than the reconciled one, for the controller of one namespace.
struct Watch<K: Resource> {
    /// Completes once the watch has listed its objects: the reconciled kind's watch waits for it.
    synced: BoxFuture<'static, ()>,
    /// The objects of `K` its events trigger (none for a kind only cached).
    triggers: BoxStream<'static, ObjectRef<K>>,
}

/// Starts a watch for the controller of one namespace (`None`: every namespace); `true` for the
/// first of them.
type AddWatch<K> = Box<dyn Fn(&Client, Option<&str>, bool) -> Watch<K> + Send>;

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
///   [`WatchNamespaces`](crate::manager::namespaces::WatchNamespaces)), each with its own
///   watches, sharing one [`Context`], one set of caches, one set of metrics and one retry
///   backoff; a cluster-scoped kind gets one controller;
/// - a [`Cache`] of every kind it watches (the reconciled kind, the owned, watched and cached
///   kinds), which `reconcile` reads through [`Context::cache`] and [`Context::get`] instead of
///   sending requests, with the indexes declared by [`Runner::index`]; the reconciled kind's
///   watch starts once the others have listed their objects, so that the first
///   reconciliations find them in the caches (controller-runtime waits for its caches too);
/// - `--max-concurrent-reconciles` workers (or the controller's own number, see
///   [`Runner::with_max_concurrent_reconciles`]), never two on the same object;
/// - controller-runtime's reconcile and workqueue metrics, under the controller's name;
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
///   that write yet, so that it does not do again what it has just done; the same for the
///   objects it applies with [`Context::apply_owned`];
/// - caches without `managedFields` and the `kubectl apply` annotation ([`strip_for_cache`]);
/// - Events ([`Context::publish`]) sent beside the workers, never in a reconcile (see
///   [`Recorder`](super::events::Recorder));
/// - on shutdown, reconciles in flight finish before the process exits, and the Events still
///   queued are sent.
pub struct Runner<'a, K: Cacheable> {
    name: &'static str,
    shared: &'a Shared,
    watcher_config: watcher::Config,
    reconcile_on: Change<K>,
    watches: Vec<AddWatch<K>>,
    caches: Caches,
    max_concurrent_reconciles: Option<u16>,
    /// With `--sharding`: this member's share, to which the mapped watches are limited.
    share: Option<Share<K>>,
}

impl<'a, K> Runner<'a, K>
where
    K: Cacheable,
    K::Scope: Scope,
{
    /// A runner for the controller `name` of kind `K`; `name` shows in logs, metrics, `/readyz`
    /// and Events, and is the field manager of the controller's server-side applies.
    pub fn new(name: &'static str, shared: &'a Shared) -> Self {
        let caches = Caches::default();
        let primary = caches.register::<K>();
        primary.mark_watched();
        let share =
            (shared.sharding.as_ref()).map(|sharding| Share::new(primary, sharding.member()));
        Self {
            name,
            shared,
            watcher_config: watcher::Config::default(),
            reconcile_on: Arc::new(spec_changes::<K>),
            watches: Vec::new(),
            caches,
            max_concurrent_reconciles: None,
            share,
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
    /// reference ([`Context::apply_owned`] does) and they are also garbage-collected with it.
    ///
    /// The children are cached: `reconcile` reads them with [`Context::get`] (or
    /// [`Context::apply_owned`] does), [`Context::cache`] lists them. `config` narrows the watch,
    /// and so the cache, to the children that matter, e.g.
    /// `watcher::Config::default().labels("app.kubernetes.io/managed-by=my-controller")`.
    pub fn owns<Child>(self, config: watcher::Config) -> Self
    where
        Child: Cacheable + Serialize,
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
        self,
        config: watcher::Config,
        change: impl Fn(&Child) -> Option<u64> + Send + Sync + 'static,
    ) -> Self
    where
        Child: Cacheable,
        Child::Scope: Scope,
    {
        let change: Change<Child> = Arc::new(change);
        // With `--sharding`, the children of this member's objects only: they carry its label.
        let config = match &self.shared.sharding {
            Some(sharding) => sharding.restrict(config),
            None => config,
        };
        self.watch(
            config,
            move || watches::owned(Arc::clone(&change)),
            owners::<Child, K>,
            false,
        )
    }

    /// Reconciles the objects of `K` that `mapper` names whenever an `Other` changes (a new
    /// version, or its deletion), for relations that are not owner references: controller-runtime's
    /// `Watches(&Other{}, handler.EnqueueRequestsFromMapFunc(mapper))`. The `Other` objects are
    /// cached too.
    ///
    /// The usual mapper looks the changed object up in an index of `K` ([`Runner::index`],
    /// [`Cache::indexed`] on the cache of [`Runner::cache`]): the custom resources that name a
    /// Secret, for a Secret that changed.
    pub fn watches<Other, I>(
        self,
        config: watcher::Config,
        mapper: impl Fn(Other) -> I + Send + Sync + 'static,
    ) -> Self
    where
        Other: Cacheable,
        Other::Scope: Scope,
        I: IntoIterator<Item = ObjectRef<K>>,
    {
        self.watches_on(config, watches::new_version::<Other>, mapper)
    }

    /// [`Runner::watches`], reconciling the objects that `mapper` names only when `changed`
    /// says that an `Other` changed in a way that matters to them, and whenever one is deleted:
    /// controller-runtime's `Watches` with a predicate (`builder.WithPredicates`). `changed` gets
    /// the version the cache held (`None`: an object new to the controller, whether just created
    /// or first seen after a relist) and the new version. For pods whose owner reports why they
    /// wait: `|before: Option<&Pod>, pod: &Pod| before.and_then(waiting) != waiting(pod)`, so
    /// that their other status updates reconcile nothing.
    pub fn watches_on<Other, I>(
        self,
        config: watcher::Config,
        changed: impl Fn(Option<&Other>, &Other) -> bool + Send + Sync + 'static,
        mapper: impl Fn(Other) -> I + Send + Sync + 'static,
    ) -> Self
    where
        Other: Cacheable,
        Other::Scope: Scope,
        I: IntoIterator<Item = ObjectRef<K>>,
    {
        let changed: watches::Changed<Other> = Arc::new(changed);
        let mapper = Arc::new(mapper);
        let map = move |object: Other| mapper(object).into_iter().collect();
        // With `--sharding`, only the objects that map to this member's share are cached.
        self.watch(
            config,
            move || watches::watched(Arc::clone(&changed)),
            map,
            true,
        )
    }

    /// Caches the objects of `Other` that `config` selects, in the watched namespaces, for
    /// `reconcile` to read ([`Context::get`], [`Context::cache`]) without a request: a kind it
    /// reads but whose changes need not reconcile anything (those of [`Runner::owns`] and
    /// [`Runner::watches`] are cached already). For the metadata alone (names, labels,
    /// annotations, owner references: a fraction of the memory), cache
    /// `kube::core::PartialObjectMeta<Other>`, which the API server sends as such.
    pub fn caches<Other>(self, config: watcher::Config) -> Self
    where
        Other: Cacheable,
        Other::Scope: Scope,
    {
        let never = |_: &watcher::Event<Other>, _: Option<&Other>, _| false;
        self.watch(config, move || never, |_: Other| Vec::new(), false)
    }

    /// Declares the index `name` of the cached kind `T`: `keys` gives the keys of each object
    /// (e.g. the name of the Secret its spec names), and [`Cache::indexed`] finds the objects that
    /// have a key. controller-runtime's `mgr.GetFieldIndexer().IndexField`. `T` must be cached
    /// (the reconciled kind, or one of [`Runner::owns`], [`Runner::watches`],
    /// [`Runner::caches`]): the controller fails at startup otherwise.
    pub fn index<T: Cacheable>(
        self,
        name: &'static str,
        keys: impl Fn(&T) -> Vec<String> + Send + Sync + 'static,
    ) -> Self {
        self.caches.register::<T>().add_index(name, Arc::new(keys));
        self
    }

    /// The cache of `T` that this controller's watches will fill (empty until the controller
    /// runs), for the mapper of a [`Runner::watches`] to look objects up in. `T` must be cached:
    /// see [`Runner::index`].
    pub fn cache<T: Cacheable>(&self) -> Cache<T> {
        self.caches.register::<T>()
    }

    /// Adds a watch of `T` to the controller of every namespace: its events fill the cache of
    /// `T`, those for which `triggers` says so reconcile the objects `map` gives. With `limited`
    /// and `--sharding`, only the objects that `map` maps to this member's share are cached
    /// (see [`Share`]).
    fn watch<T, D>(
        mut self,
        config: watcher::Config,
        triggers: impl Fn() -> D + Send + 'static,
        map: impl Fn(T) -> Vec<ObjectRef<K>> + Clone + Send + Sync + 'static,
        limited: bool,
    ) -> Self
    where
        T: Cacheable,
        T::Scope: Scope,
        D: FnMut(&watcher::Event<T>, Option<&T>, crate::cache::Phase) -> bool + Send + 'static,
    {
        let cache = self.caches.register::<T>();
        cache.mark_watched();
        let name = self.name;
        let share = self.share.clone().filter(|_| limited);
        let config = if share.is_some() {
            share::paged(config)
        } else {
            config
        };
        self.watches.push(Box::new(move |client, namespace, first| {
            let api = <T::Scope as Scope>::api_in::<T>(client, namespace);
            // A cluster-scoped kind is watched whole by the controller of each namespace;
            // only the first one's watch fills the cache, which must not hold it twice.
            let feed = if first || <T::Scope as Scope>::NAMESPACED {
                cache.feed(api.namespace())
            } else {
                Cache::<T>::new().feed(None)
            };
            let listed = feed.listed();
            let config = config.clone();
            let open = move || {
                watcher(api.clone(), config.clone())
                    .backoff(watch_backoff())
                    .modify(strip_for_cache::<T>)
            };
            let events = match &share {
                Some(share) => share.limit(open, map.clone(), cache.clone()).boxed(),
                None => open().boxed(),
            };
            let map = map.clone();
            let triggers = watches::informer(events, feed, triggers())
                .filter_map(move |result| {
                    future::ready(match result {
                        Ok(object) => Some(stream::iter(map(object))),
                        Err(error) => {
                            warn_watch_failed::<T>(name, &error);
                            None
                        }
                    })
                })
                .flatten();
            Watch {
                synced: listed.boxed(),
                triggers: triggers.boxed(),
            }
        }));
        self
    }
}

/// Logs a failed try of a watch (a missing CRD, missing permissions, the API server away); it is
/// tried again after [`watch_backoff`].
fn warn_watch_failed<T: Resource<DynamicType = ()>>(controller: &str, error: &watcher::Error) {
    let kind = T::kind(&());
    let error = error as &dyn std::error::Error;
    tracing::warn!(controller, %kind, error, "watch failed");
}

/// The owners of kind `K` of `child`, from its owner references.
fn owners<Child, K>(child: Child) -> Vec<ObjectRef<K>>
where
    Child: Resource,
    K: Resource<DynamicType = ()>,
    K::Scope: Scope,
{
    let meta = child.meta();
    // A cluster-scoped owner has no namespace, whatever its child's.
    let namespace = meta
        .namespace
        .as_deref()
        .filter(|_| <K::Scope as Scope>::NAMESPACED);
    let references = meta.owner_references.iter().flatten();
    references
        .filter_map(|owner| ObjectRef::from_owner_ref(namespace, owner, ()))
        .collect()
}

impl<K> Runner<'_, K>
where
    K: Cacheable,
    K::Scope: Scope,
{
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
        let unwatched = self.caches.unwatched();
        if !unwatched.is_empty() {
            let (name, kinds) = (self.name, unwatched.join(", "));
            return Box::pin(async move {
                Err(anyhow::anyhow!(
                    "controller {name} reads {kinds} from its cache, which none of its watches \
                     fills: add `.caches::<Kind>(config)` (or `owns`, `watches`) to its setup"
                ))
            });
        }
        let shared = self.shared.clone();
        let controllers = Controllers::new(self, reconcile, state);
        // Events go out beside the workers, and those still queued at the end before it ends.
        let recorder = controllers.context.recorder.clone();
        let apis = <K::Scope as Scope>::apis::<K>(&shared.watch_namespaces, &shared.client);
        let controllers = apis
            .into_iter()
            .enumerate()
            .map(|(index, api)| controllers.of_namespace(index, api))
            .collect();
        recorder.send_while(join_controllers(controllers, shared.shutdown))
    }
}

/// What the kube-runtime controllers of one [`Runner`], one per watched namespace, share: one
/// [`Context`], one set of caches, metrics and retry backoff.
struct Controllers<K: Cacheable, S, F> {
    name: &'static str,
    shared: Shared,
    watcher_config: watcher::Config,
    reconcile_on: Change<K>,
    watches: Vec<AddWatch<K>>,
    share: Option<Share<K>>,
    /// The cache of the reconciled kind.
    primary: Cache<K>,
    context: Arc<Context<S>>,
    reconciler: Reconciler<K, F>,
    config: controller::Config,
}

impl<K, S, F> Controllers<K, S, F>
where
    K: Cacheable,
    K::Scope: Scope,
    S: Send + Sync + 'static,
{
    fn new(runner: Runner<'_, K>, reconcile: F, state: S) -> Self {
        let Runner {
            name,
            shared,
            watcher_config,
            reconcile_on,
            watches,
            caches,
            max_concurrent_reconciles,
            share,
        } = runner;
        let workers = max_concurrent_reconciles.unwrap_or(shared.max_concurrent_reconciles);
        let primary = caches.register::<K>();
        let mut context = Context::with_caches(shared.client.clone(), name, state, caches);
        context.shard = (shared.sharding.as_ref()).map(|sharding| sharding.member().to_owned());
        // With `--sharding`: this member's objects only, a drain label reconciles (to hand the
        // object over), and the elected replica assigns the objects of `K` to the members.
        let queue = shared.metrics.work_queue(name);
        let (watcher_config, reconcile_on) = match &shared.sharding {
            // Never set without the `sharding` feature (the manager refuses `--sharding`).
            #[cfg(feature = "sharding")]
            Some(sharding) => {
                let config = (watcher_config, reconcile_on);
                sharded::setup::<K>(sharding, name, shared, queue.clone(), config)
            }
            _ => (watcher_config, reconcile_on),
        };
        let reconciler = Reconciler {
            name,
            reconcile,
            sharded: shared.sharding.is_some(),
            metrics: shared.metrics.controller(name, workers),
            queue,
            backoff: Backoff::default(),
            recovery: Recovery::default(),
        };
        Controllers {
            name,
            shared: shared.clone(),
            watcher_config,
            reconcile_on,
            watches,
            share,
            primary,
            context: Arc::new(context),
            reconciler,
            config: controller::Config::default().concurrency(workers),
        }
    }

    /// The controller of the `index`th watched namespace, the one of `api`.
    fn of_namespace<E, Fut>(&self, index: usize, api: Api<K>) -> ControllerFuture
    where
        E: std::error::Error + Send + Sync + 'static,
        F: Fn(Arc<K>, Arc<Context<S>>) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
    {
        let namespace = api.namespace().map(str::to_owned);
        // `/readyz` names each namespace's cache on its own: "<name>/<namespace>".
        let cache_name = match &namespace {
            Some(namespace) => format!("{}/{namespace}", self.name),
            None => self.name.to_owned(),
        };
        let (synced, others): (Vec<_>, Vec<_>) = (self.watches.iter())
            .map(|add| add(&self.shared.client, namespace.as_deref(), index == 0))
            .map(|watch| (watch.synced, watch.triggers))
            .unzip();
        // Kube's `Controller::new`, but with our cache and fewer triggers: objects are cached
        // without what no controller reads, and only changes that `reconcile_on` sees reconcile
        // (by default not the controller's own status writes). The watch starts once the other
        // kinds are listed.
        let feed = self.primary.feed_structs(namespace.as_deref());
        let store = feed
            .reflector_store()
            .expect("kube's store, for its Controller");
        if let Some(sharding) = &self.shared.sharding {
            // The cache holds this member's objects only: `operator_rs_shard_objects`.
            let cached = store.clone();
            let metrics = self.shared.metrics.sharding();
            metrics.count_objects(self.name, sharding.member(), move || cached.len());
        }
        let queue = self.reconciler.queue.clone();
        let reconciled = watches::reconciled(Arc::clone(&self.reconcile_on));
        let triggers =
            watches::informer(self.events(api, synced), feed, reconciled).inspect(move |result| {
                if let Ok(object) = result {
                    queue.added(queue_key(&ObjectRef::from_obj(object)));
                }
            });
        // Failures for want of an API server are retried together as soon as it is back (see
        // `Recovery`): each namespace's controller has its own.
        let reconciler = self.reconciler.with_recovery(Recovery::default());
        let (queue, backoff) = (&reconciler.queue, reconciler.backoff.clone());
        let requeues = reconciler
            .recovery
            .requeues(self.shared.client.clone(), backoff);
        let mut controller = Controller::for_stream(triggers, store.clone())
            .reconcile_on(counted(requeues, queue))
            .trigger_backoff(WatchesBackOff);
        for triggers in others {
            controller = controller.reconcile_on(counted(triggers, queue));
        }
        let controller = controller
            .with_config(self.config.clone())
            .graceful_shutdown_on(self.shared.shutdown.clone().cancelled_owned());
        let main_loop = self.main_loop(controller, reconciler);
        self.shared.run_controller(&cache_name, store, main_loop)
    }

    /// The watch of the reconciled kind through `api`, opened once the other kinds' watches
    /// have `synced`.
    fn events(
        &self,
        api: Api<K>,
        synced: Vec<BoxFuture<'static, ()>>,
    ) -> impl futures::Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send + 'static
    {
        let (config, share) = (self.watcher_config.clone(), self.share.clone());
        future::join_all(synced).into_stream().flat_map(move |_| {
            let share = share.clone();
            watcher(api.clone(), config.clone())
                .backoff(watch_backoff())
                .modify(strip_for_cache::<K>)
                // With `--sharding`: the mapped watches follow the changes of the share.
                .inspect(move |event| {
                    if let (Some(share), Ok(event)) = (&share, event) {
                        share.observe(event);
                    }
                })
        })
    }

    /// `controller` running `reconciler` until shutdown, its errors retried after the object's
    /// backoff.
    fn main_loop<E, Fut>(
        &self,
        controller: Controller<K>,
        reconciler: Reconciler<K, F>,
    ) -> impl Future<Output = ()> + Send + 'static
    where
        E: std::error::Error + Send + Sync + 'static,
        F: Fn(Arc<K>, Arc<Context<S>>) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
    {
        let name = self.name;
        let (on_error, failed) = (reconciler.backoff.clone(), reconciler.recovery.clone());
        let error_policy = move |object: Arc<K>, error: &E, _: Arc<Context<S>>| {
            retry_after_error(name, &on_error, &failed, object.as_ref(), error)
        };
        let forgotten = reconciler.queue.clone();
        let reconcile = move |object, ctx| reconciler.reconcile(object, ctx);
        controller
            .run(reconcile, error_policy, Arc::clone(&self.context))
            .for_each(move |result| {
                if let Err(controller::Error::ObjectNotFound(object)) = &result {
                    forgotten.forgot(queue_key(object));
                }
                log_result(name, result);
                future::ready(())
            })
    }
}

/// The project's `reconcile` as each controller calls it: measured (controller-runtime's
/// reconcile and workqueue metrics), with the object's backoff reset by a success, on the
/// controller's latest write of the object, and with `--sharding` the object handed over instead
/// when it leaves this member.
#[derive(Clone)]
struct Reconciler<K: Cacheable, F> {
    name: &'static str,
    reconcile: F,
    sharded: bool,
    metrics: ControllerMetrics,
    queue: WorkQueueMetrics,
    backoff: Backoff<K>,
    recovery: Recovery<K>,
}

impl<K, F> Reconciler<K, F>
where
    K: Cacheable,
    K::Scope: Scope,
    F: Clone,
{
    fn with_recovery(&self, recovery: Recovery<K>) -> Self {
        Reconciler {
            recovery,
            ..self.clone()
        }
    }

    fn reconcile<S, E, Fut>(
        &self,
        object: Arc<K>,
        ctx: Arc<Context<S>>,
    ) -> impl Future<Output = Result<Action, E>> + Send + 'static + use<K, F, S, E, Fut>
    where
        S: Send + Sync + 'static,
        F: Fn(Arc<K>, Arc<Context<S>>) -> Fut,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
    {
        // The cache may not have the controller's last write of the object yet.
        let latest = ctx.latest(Arc::clone(&object));
        let reference = ObjectRef::from_obj(latest.as_ref());
        let key = queue_key(&reference);
        self.queue.started(key);
        // An object leaving this member is handed over instead of reconciled: in its own
        // reconcile slot, so after any reconcile of it in flight.
        let leaving = self.sharded && sharded::is_leaving(object.as_ref(), latest.as_ref());
        let client = ctx.client.clone();
        let reconciled = (!leaving).then(|| (self.reconcile)(Arc::clone(&latest), ctx));
        let (name, metrics, queue) = (self.name, self.metrics.clone(), self.queue.clone());
        let (backoff, recovery) = (self.backoff.clone(), self.recovery.clone());
        async move {
            let result = match reconciled {
                Some(reconciled) => metrics.measure(reconciled).await,
                None => Ok(sharded::hand_over(&client, name, latest.as_ref()).await),
            };
            let requeued = !matches!(&result, Ok(action) if *action == Action::await_change());
            queue.finished(key, requeued);
            if result.is_ok() {
                backoff.on_success(&reference);
                recovery.reconciled(&reference);
            }
            result
        }
    }
}

/// The key of an object in the workqueue metrics (namespace and name).
fn queue_key<T: kube::runtime::reflector::Lookup + ?Sized>(object: &ObjectRef<T>) -> u64 {
    WorkQueueMetrics::key(object.namespace.as_deref(), &object.name)
}

/// `triggers`, each counted as an add of the workqueue metrics.
fn counted<K>(
    triggers: impl futures::Stream<Item = ObjectRef<K>> + Send + 'static,
    queue: &WorkQueueMetrics,
) -> impl futures::Stream<Item = ObjectRef<K>> + Send + 'static
where
    K: Resource<DynamicType = ()>,
    K::Scope: Scope,
{
    let queue = queue.clone();
    triggers.map(move |mut object| {
        // The reconciled object has no namespace when its kind is cluster-scoped, whatever
        // the mapper gave.
        if !<K::Scope as Scope>::NAMESPACED {
            object.namespace = None;
        }
        queue.added(queue_key(&object));
        object
    })
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

    /// A child's owner references of the reconciled kind name the objects it triggers; those of
    /// other kinds are ignored.
    #[test]
    fn children_name_their_owners_of_the_reconciled_kind() {
        use k8s_openapi::api::apps::v1::Deployment;
        let owner = |kind: &str, name: &str| {
            k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
                api_version: if kind == "ConfigMap" { "v1" } else { "apps/v1" }.to_owned(),
                kind: kind.to_owned(),
                name: name.to_owned(),
                uid: format!("uid-{name}"),
                ..Default::default()
            }
        };
        let mut child = config_map("child");
        child.metadata.owner_references =
            Some(vec![owner("ConfigMap", "a"), owner("Deployment", "d")]);
        let found: Vec<ObjectRef<ConfigMap>> = owners::<ConfigMap, ConfigMap>(child.clone());
        assert_eq!(found, [ObjectRef::new("a").within("default")]);
        let found: Vec<ObjectRef<Deployment>> = owners::<ConfigMap, Deployment>(child);
        assert_eq!(found, [ObjectRef::new("d").within("default")]);
    }

    /// A cache read that nothing fills is a mistake the controller reports at startup.
    #[tokio::test]
    async fn an_index_of_a_kind_not_watched_fails_the_controller() {
        use k8s_openapi::api::core::v1::Secret;
        let client = crate::manager::client::offline();
        let shared = Shared::new(client);
        let controller = Runner::<ConfigMap>::new("test", &shared)
            .index("names", |secret: &Secret| {
                vec![secret.metadata.name.clone().unwrap_or_default()]
            })
            .run(
                |_, _: Arc<Context>| async { Ok::<_, kube::Error>(Action::await_change()) },
                (),
            );
        let error = controller.await.unwrap_err().to_string();
        assert!(
            error.contains("controller test reads Secret from its cache"),
            "{error}"
        );
    }
}
