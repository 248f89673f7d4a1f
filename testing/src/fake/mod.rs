//! A stateful in-memory Kubernetes API server for tests that run whole controllers: a
//! [`kube::Client`] from [`FakeApiServer::client`] lists, watches, creates, applies and deletes
//! objects in it as in a cluster, so that a kube-runtime `Controller` run by the runtime's
//! [`Runner`](operator_rs_runtime::controller::Runner) reconciles against it end to end, with no cluster, no
//! etcd and no kube-apiserver.
//!
//! Where the scripted [`ApiServer`](super::ApiServer) of [`reconcile_with`](super::reconcile_with)
//! checks each request of one reconciliation, this one plays the API server for as long as a
//! test likes, and the test looks at the outcome: the objects, the Events, the number of
//! writes.
//!
//! ```
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::api::{Api, Patch, PatchParams};
//! use operator_rs_testing::fake::{FakeApiServer, Verb};
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), kube::Error> {
//! let fake = FakeApiServer::new();
//! let api = Api::<ConfigMap>::namespaced(fake.client(), "default");
//! let config = json!({ "apiVersion": "v1", "kind": "ConfigMap", "data": { "a": "1" } });
//! let params = PatchParams::apply("tester");
//! api.patch("settings", &params, &Patch::Apply(&config)).await?;
//! // The same apply again changes nothing: no new resourceVersion, no watch event.
//! let version = fake.resource_version();
//! api.patch("settings", &params, &Patch::Apply(&config)).await?;
//! assert_eq!(fake.resource_version(), version);
//!
//! let stored = fake.get::<ConfigMap>(Some("default"), "settings").unwrap();
//! assert_eq!(stored.data.unwrap()["a"], "1");
//! assert_eq!(fake.count(Verb::Patch), 2);
//! # Ok(())
//! # }
//! ```
//!
//! # What it does as the API server does
//!
//! - Objects are stored per group, version, resource, namespace and name, as JSON, with a
//!   `uid`, a `resourceVersion` from one global counter, a `creationTimestamp`, and a
//!   `generation` that counts changes of everything but `metadata` and (for kinds with the
//!   status subresource) `status`. A write that changes nothing stores nothing.
//! - The versions of a kind share one storage, as in etcd: each object is stored once, in the
//!   version it was last written in (the storage version of that time:
//!   [`FakeApiServer::stored_version`]), and served in every version, converted by the kind's
//!   conversion webhook ([`FakeApiServer::register_webhooks`]) or, without one, by changing its
//!   `apiVersion` (the `None` strategy; a CRD whose strategy is `Webhook` fails without it, `500`
//!   as the API server's). A write that changes nothing stores nothing, unless the object is
//!   stored in another version than the storage version: then it is stored again, in the
//!   storage version (what storage version migrations rely on).
//! - CustomResourceDefinitions are objects too (`apiextensions.k8s.io/v1`): writing one serves
//!   its versions; the server keeps its `status.storedVersions` (the storage version of every
//!   spec written is added; only a status write removes versions, and it must keep the storage
//!   version), and refuses a CRD without exactly one storage version or named otherwise than
//!   `<plural>.<group>`.
//! - `get`, `list` (label and field selectors, `limit` and `continue`: tokens that name the last
//!   object of their page, and expire with the watch window below, `410 Gone`), `watch` (below),
//!   `create` (`409 AlreadyExists`, `generateName`), `update` and every patch with a
//!   `resourceVersion` precondition (`409 Conflict`), JSON patch, JSON merge patch, and
//!   server-side apply with field managers, `force` and `409 Conflict`s; `dryRun`.
//! - The `status` subresource: writes to it change only `status`, writes to the object never
//!   change `status`, and a create drops it.
//! - `metadata.managedFields`, per manager, operation and subresource, down to single fields:
//!   maps key by key, lists keyed as the kind's schema says (or, for the built-in kinds, as the
//!   usual ones are: `conditions` by `type`, `containers` by `name`, `ports` by port and
//!   protocol, `finalizers` as a set).
//! - `delete` sets `deletionTimestamp` while finalizers remain, and the object goes when the last
//!   one is removed; no new finalizers can be added meanwhile. Then the garbage collector deletes
//!   the objects whose owner references all point to deleted owners (background propagation, at
//!   once; `Orphan` leaves them).
//! - Watches are JSON lines of `ADDED`, `MODIFIED` and `DELETED` events from a
//!   `resourceVersion`, with objects entering or leaving a selector's selection as `ADDED` and
//!   `DELETED`, streaming lists (`sendInitialEvents`), and `timeoutSeconds`. The fake remembers
//!   the last [`FakeApiServer::DEFAULT_WATCH_WINDOW`] changes; a watch from an older version gets
//!   `410 Gone` (an `ERROR` event, as from the API server), and kube's watcher lists again.
//!   [`FakeApiServer::set_watch_window`] shrinks the window to force that. A write's response
//!   waits until the open watches have read its events, the order kube-apiserver's clients
//!   often see ([`FakeApiServer::deliver_watch_events_first`]).
//!
//! - What a real API server refuses, it refuses: custom resources are checked against their
//!   CRD's schema ([`FakeApiServer::register_crd`]: unknown fields dropped, defaults set,
//!   `422 Invalid` with the API server's messages, CEL rules evaluated with kube-cel, ratcheting
//!   of unchanged fields), built-in kinds against k8s-openapi's types and schemas, names and
//!   labels as the API server checks them; a client of an [`Identity`]
//!   ([`FakeApiServer::client_as`]) only gets what its RBAC rules grant (`403 Forbidden`); the
//!   project's admission webhooks are called in-process
//!   ([`FakeApiServer::register_webhooks`], [`FakeApiServer::install`]).
//! - Webhooks registered by URL, as a manager run with `--webhook-url` registers them
//!   ([`operator_rs_runtime::webhook::local`]): the webhooks of stored MutatingWebhookConfigurations and
//!   ValidatingWebhookConfigurations whose `clientConfig` has a `url`, and the conversion webhook
//!   of a CRD whose `clientConfig` has one, are called over HTTPS, the server's certificate
//!   verified against the `caBundle` and the URL's host, within `timeoutSeconds`; a call that
//!   fails refuses the request under `failurePolicy: Fail` (`500`, `failed calling webhook …`, as
//!   the API server's) and is skipped under `Ignore`. The call blocks the thread of the request
//!   that makes it: serve such webhooks from another thread, as from another process.
//!   Configurations that name a Service are not called (the fake has no network to reach one
//!   through); [`FakeApiServer::register_webhooks`] stands in for them.
//!
//! # What it does not do
//!
//! No authentication, conversion of `managedFields` between versions, admission webhooks called
//! for another version than the request's (`matchPolicy: Equivalent`), the `namespaceSelector`,
//! `objectSelector` and `matchConditions` of webhooks registered by URL, deletion of a CRD's
//! objects with it, a consistent snapshot for the pages of a list (a page shows the objects as
//! they are when it is read), the built-in kinds' defaults and further validation, namespaces as a precondition of their
//! objects, foreground deletion (it is background), scale and other subresources, scheduling,
//! quota, and no controllers but an optional Deployment controller
//! ([`FakeApiServer::simulate_deployments`]). A field manager never conflicts with itself.
//! docs/runtime.md has the full table of what it enforces.

//! # Test hooks
//!
//! - [`FakeApiServer::requests`], [`FakeApiServer::count`], [`FakeApiServer::writes`]: every
//!   request the clients made, by verb, for assertions such as "an idle controller writes
//!   nothing" or the writes per object of a benchmark.
//! - [`FakeApiServer::unavailable_for`]: the API server goes away for a while: open watches end
//!   and new connections are refused, then it comes back with everything it stored.
//! - [`FakeApiServer::simulate_deployments`]: a stand-in for the Deployment controller and the
//!   kubelet that makes every Deployment's pods, running and available at once, so that
//!   conditions that wait for them can turn true and controllers that watch pods see them.
//! - [`FakeApiServer::get`], [`FakeApiServer::list`], [`FakeApiServer::put`]: read and write
//!   objects directly, as requests that are not counted and work while the server is unavailable.
//! - [`FakeApiServer::serve`]: the same server over HTTP, for a manager in another process.
//!
//! # Built here, and what is reused
//!
//! JSON patches are [`json_patch`]'s (with the API server's one difference: a `test` for `null`
//! of a missing path succeeds), merge patches are [`json_patch::merge`], URLs are those of
//! kube's [`kube::Resource`] trait, and timestamps are k8s-openapi's. Written here, because no
//! crate does it: server-side apply (a small structured-merge-diff, in `fields.rs`), the parser
//! of label and field selectors (kube builds selectors but parses none), and the decoding of query
//! strings (the crates for it are not dependencies of the runtime).

mod admission;
mod api_types;
mod built_in;
mod cel;
mod cel_check;
mod crd_defaults;
mod crd_validation;
mod decode;
mod errors;
mod fields;
mod formats;
mod http;
mod https;
mod kinds;
mod metadata;
mod names;
mod patches;
mod query;
mod rbac;
mod schema;
mod selector;
mod store;
mod strategy;
mod typed;
mod url_webhooks;
mod watch_lines;

#[cfg(test)]
mod tests;

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use ::http::StatusCode;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::{Client, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::time::Instant;

pub use kinds::Kind;
#[cfg(feature = "envtest")]
pub(crate) use rbac::denial_of_request;
pub use rbac::{Identity, leader_election_rules};

use admission::User;
use fields::Scope;
use rbac::Attributes;
use store::{Caller, Edit, Filter, Store, Write};

use operator_rs_runtime::manifests::Manifests;
use operator_rs_runtime::webhook::Webhook;

/// The field manager of the writes of [`FakeApiServer::put`].
pub const PUT_MANAGER: &str = "fake-api-server";

/// A stateful in-memory Kubernetes API server; see [the module](self).
///
/// Cloning gives another handle to the same server.
#[derive(Clone)]
pub struct FakeApiServer {
    inner: Inner,
}

/// The server's state, shared by its handles and its clients.
#[derive(Clone)]
struct Inner(Arc<Mutex<State>>);

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A test that panicked while holding the lock has failed already; its state is still
        // worth showing to other handles.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

struct State {
    store: Store,
    requests: Vec<RecordedRequest>,
    denials: Vec<Denial>,
    unavailable_until: Option<Instant>,
    /// See [`FakeApiServer::deliver_watch_events_first`].
    watch_events_first: bool,
}

impl State {
    fn is_unavailable(&self) -> bool {
        self.unavailable_until
            .is_some_and(|until| Instant::now() < until)
    }
}

/// The verb of a request, as Kubernetes RBAC names it (a server-side apply is a `Patch`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verb {
    /// `GET` of one object.
    Get,
    /// `GET` of a collection.
    List,
    /// `GET` of a collection with `watch=true`.
    Watch,
    /// `POST`.
    Create,
    /// `PUT`.
    Update,
    /// `PATCH`: JSON, merge, strategic merge and apply patches.
    Patch,
    /// `DELETE` of one object.
    Delete,
    /// `DELETE` of a collection.
    DeleteCollection,
}

impl Verb {
    /// Whether requests of this verb write: create, update, patch, delete.
    pub fn is_write(self) -> bool {
        !matches!(self, Verb::Get | Verb::List | Verb::Watch)
    }

    /// The verb as RBAC rules name it: `get`, `deletecollection` …
    pub fn as_rbac(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
            Verb::DeleteCollection => "deletecollection",
        }
    }
}

/// A request that RBAC refused: the client's [`Identity`] has no rule that grants it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Denial {
    /// The user the request came from.
    pub user: String,
    /// The API server's message, as in the `403 Forbidden` answer.
    pub message: String,
    /// The smallest rule that would grant the request, as a controller's `rbac_rules()` writes
    /// it: `rule(&["apps"], &["deployments"], &["patch"])`.
    pub missing_rule: String,
}

impl Denial {
    fn new(identity: &Identity, attributes: &Attributes) -> Self {
        Self {
            user: identity.user().to_owned(),
            message: attributes.forbidden_message(identity.user()),
            missing_rule: attributes.missing_rule(),
        }
    }

    /// Tells the test's output which rule is missing (shown when the test fails).
    fn report(&self) {
        eprintln!(
            "fake API server: 403 Forbidden: {}\n  no RBAC rule of {} grants it; the rule it lacks: {}",
            self.message, self.user, self.missing_rule
        );
    }
}

/// One request that reached the fake API server (requests refused while it is unavailable do
/// not).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedRequest {
    /// What the request did.
    pub verb: Verb,
    /// The URL as sent: path and query.
    pub url: String,
    /// The resource in the URL (`deployments`), or `""` when the URL names none the fake serves.
    pub resource: String,
    /// The subresource (`status`), if any.
    pub subresource: Option<String>,
    /// The namespace in the URL, if any.
    pub namespace: Option<String>,
    /// The object's name, for requests about one object.
    pub name: Option<String>,
    /// The status code of the answer.
    pub status: StatusCode,
}

impl Default for FakeApiServer {
    fn default() -> Self {
        Self::new()
    }
}

impl FakeApiServer {
    /// How many changes the server remembers for watches that resume from an older
    /// `resourceVersion`, unless [`FakeApiServer::set_watch_window`] says otherwise.
    pub const DEFAULT_WATCH_WINDOW: usize = 1000;

    /// An empty API server that serves the built-in kinds an operator touches: apps/v1
    /// Deployments, StatefulSets, DaemonSets and ReplicaSets, events.k8s.io/v1 and core Events,
    /// core v1 ConfigMaps, Secrets, Pods, Services, ServiceAccounts, PersistentVolumeClaims and
    /// Namespaces, coordination.k8s.io/v1 Leases, and the admissionregistration.k8s.io/v1
    /// webhook configurations and apiextensions.k8s.io/v1 CustomResourceDefinitions whose
    /// `caBundle` the webhooks' self-signed certificates set (stored as objects: storing a CRD
    /// serves no kind). Register custom resources with [`FakeApiServer::register`] or
    /// [`FakeApiServer::register_crd`].
    pub fn new() -> Self {
        let mut store = Store::new(Self::DEFAULT_WATCH_WINDOW);
        for (kind, check) in kinds::built_in() {
            store.register_built_in(kind, check);
        }
        // The namespaces of every cluster.
        for namespace in ["default", "kube-system", "kube-public", "kube-node-lease"] {
            store.ensure_namespace(namespace);
        }
        let state = State {
            store,
            requests: Vec::new(),
            denials: Vec::new(),
            unavailable_until: None,
            watch_events_first: true,
        };
        Self {
            inner: Inner(Arc::new(Mutex::new(state))),
        }
    }

    /// A client of this server, with `default` as its default namespace, as a cluster
    /// administrator ([`Identity::admin`]: no RBAC check). Call it within a Tokio runtime
    /// (kube's client spawns a task); every client shares the server's state.
    pub fn client(&self) -> Client {
        self.client_as(Identity::admin())
    }

    /// A client of this server whose requests come from `identity` and are checked against its
    /// RBAC rules: a request they do not grant is answered `403 Forbidden` as the API server
    /// answers it, printed with the rule that is missing, and listed in
    /// [`FakeApiServer::denials`]. `Identity::controller(env!("CARGO_PKG_NAME"), &CONTROLLER)`
    /// runs a controller as the manager does in a cluster.
    pub fn client_as(&self, identity: Identity) -> Client {
        let inner = self.inner.clone();
        let identity = Arc::new(identity);
        let service = tower::service_fn(move |request| {
            let inner = inner.clone();
            let identity = identity.clone();
            async move { http::serve(inner, &identity, request).await }
        });
        Client::new(service, "default")
    }

    /// Every request that RBAC refused so far, in order.
    pub fn denials(&self) -> Vec<Denial> {
        self.inner.lock().denials.clone()
    }

    /// Serves this API server over plain HTTP on `listener` until the future is dropped, for
    /// clients in other processes: a manager binary run against it with a kubeconfig whose
    /// `server` is `http://<address>`, as `hack/bench-reconcile` does. While the server is
    /// unavailable, requests get `503 Service Unavailable` instead of a refused connection.
    pub async fn serve(&self, listener: tokio::net::TcpListener) -> std::io::Result<()> {
        let inner = self.inner.clone();
        let app = axum::Router::new().fallback(move |request: axum::extract::Request| {
            http::serve_remote(inner.clone(), request)
        });
        axum::serve(listener, app).await
    }

    /// Serves the kind of the Rust type `K` (with the status subresource: [`Kind::of`]).
    pub fn register<K>(&self) -> &Self
    where
        K: Resource<DynamicType = ()>,
        K::Scope: 'static,
    {
        self.register_kind(Kind::of::<K>())
    }

    /// Serves `kind`, replacing a kind registered before at the same group, version and plural.
    /// With a [`Kind::schema`], its objects are checked against it as
    /// [`FakeApiServer::register_crd`] says.
    ///
    /// # Panics
    ///
    /// If a CEL rule of the schema does not compile (the API server refuses such a CRD).
    pub fn register_kind(&self, kind: Kind) -> &Self {
        let name = format!("{}.{}", kind.plural, kind.group);
        if let Err(error) = self.inner.lock().store.register(kind) {
            panic!("the API server would refuse the CRD {name}: {error}");
        }
        self
    }

    /// Serves the versions of a custom resource as the API server does once `crd` is installed:
    /// with its scope, its status subresource, and its schema, enforced on every write as the
    /// API server enforces it: unknown fields dropped (or refused with
    /// `fieldValidation=Strict`), `default`s set (also on objects stored before), then the
    /// object validated against the schema (`422 Invalid` with the API server's messages, e.g.
    /// `spec.size: Invalid value: 10: spec.size in body should be less than or equal to 3`) and
    /// its CEL rules (`x-kubernetes-validations`, with `oldSelf` on updates). Fields an update
    /// leaves unchanged are not validated again (ratcheting, as Kubernetes 1.33). The schema's
    /// list types also guide server-side apply. For a type with `#[derive(CustomResource)]`:
    /// `register_crd(&Widget::crd())`; for another project's kind, its CRD file read with
    /// [`from_yaml`](super::from_yaml).
    ///
    /// # Panics
    ///
    /// If a CEL rule of the CRD does not compile (the API server refuses such a CRD).
    ///
    /// A kind with several versions needs the CRD with all of them, as `make manifests` writes
    /// it (`manifests::merge_versions`, or [`FakeApiServer::install`]): registering the CRD of
    /// one version replaces the CRD, as `kubectl apply` of it would.
    ///
    /// The CRD itself is stored as `kubectl apply` stores it (created, or its spec replaced), so
    /// that clients can read it and write its status; registering it again with another storage
    /// version is how a test moves the storage version, after which `status.storedVersions`
    /// holds both (see [the module](self) on versions).
    pub fn register_crd(&self, crd: &CustomResourceDefinition) -> &Self {
        let name = crd.metadata.name.clone().unwrap_or_default();
        let mut value = serde_json::to_value(crd).expect("a CRD serializes to JSON");
        if let Some(metadata) = value["metadata"].as_object_mut() {
            metadata.remove("resourceVersion");
        }
        let mut state = self.inner.lock();
        let store = &mut state.store;
        let resource = store::crd_resource();
        let caller = admin_caller(Scope::Main);
        let stored = if let Ok(live) = store.get(&resource, None, &name) {
            // As `kubectl apply` replaces it: at the version it has.
            value["metadata"]["resourceVersion"] = live["metadata"]["resourceVersion"].clone();
            let write = Write {
                caller,
                edit: Edit::Replace(value),
            };
            store.write(&resource, None, &name, write).map(|_| ())
        } else {
            store.create(&resource, None, value, &caller).map(|_| ())
        };
        if let Err(error) = stored {
            panic!(
                "the API server would refuse the CRD {name}: {}",
                error.message
            );
        }
        self
    }

    /// Calls the admission webhooks among `webhooks` (a project's `webhook::webhooks()`) for
    /// the kinds and operations they are registered for, in-process, as the API server calls
    /// them: the defaulting (mutating) webhooks before the schema's validation, the validating
    /// ones after it. A denial refuses the request as the API server does: `admission webhook
    /// "<name>" denied the request: <reason>`, with the webhook's status code (403). The
    /// conversion webhooks convert their kinds between versions (see [the module](self)).
    pub fn register_webhooks(&self, webhooks: Vec<Webhook>) -> &Self {
        self.inner.lock().store.register_webhooks(webhooks);
        self
    }

    /// Installs what `make install` and `make deploy` install from a project's
    /// [`Manifests`] (its `operator_rs_runtime::manifests()`): every CRD ([`FakeApiServer::register_crd`])
    /// and every admission webhook ([`FakeApiServer::register_webhooks`]). The RBAC rules are
    /// those of the clients: see [`FakeApiServer::client_as`].
    ///
    /// # Panics
    ///
    /// If `make manifests` would refuse the CRDs: the versions of a kind (one CRD each, as
    /// `Kind::crd()` returns them) are merged into one CRD as it merges them
    /// ([`merge_versions`](operator_rs_runtime::manifests::merge_versions)), with exactly one storage version.
    pub fn install(&self, manifests: Manifests) -> &Self {
        let crds = operator_rs_runtime::manifests::merge_versions(manifests.crds)
            .unwrap_or_else(|error| panic!("make manifests would refuse the CRDs: {error}"));
        for crd in &crds {
            self.register_crd(crd);
        }
        self.register_webhooks(manifests.webhooks)
    }

    /// Remembers only the last `changes` changes for watches that resume from an older
    /// `resourceVersion`: a watch from before them gets `410 Gone`. `0` makes every watch that
    /// does not start at the newest version expire.
    pub fn set_watch_window(&self, changes: usize) -> &Self {
        self.inner.lock().store.set_window(changes);
        self
    }

    /// Whether a write's response waits until every open watch has read the events the write
    /// sent it (on by default), for at most 2 ms. kube-apiserver often delivers a write's watch
    /// event before its response: a controller that depends on the other order fails on a
    /// cluster, and this order shows it offline. Off, the response of an in-process client
    /// usually comes first.
    pub fn deliver_watch_events_first(&self, enabled: bool) -> &Self {
        self.inner.lock().watch_events_first = enabled;
        self
    }

    /// Turns on (or off) a stand-in for the Deployment controller and the kubelet: after every
    /// write of a Deployment, the server makes its pods (`spec.replicas` of them, default 1, from
    /// its pod template, owned by the Deployment, running and ready; those of an older template
    /// or beyond the replicas are deleted), and sets its `status` (`observedGeneration`,
    /// `replicas`, `updatedReplicas`, `readyReplicas`, `availableReplicas`) to `spec.replicas`,
    /// as a separate write to the status subresource by `kube-controller-manager`. Watches see
    /// these writes; they are not counted among the requests.
    pub fn simulate_deployments(&self, enabled: bool) -> &Self {
        self.inner.lock().store.simulate_deployments = enabled;
        self
    }

    /// Makes the server unavailable for `duration` from now: open watches end, and every request
    /// fails as a connection that cannot be made, until the server comes back with everything
    /// it stored. Uses Tokio's clock, so paused-time tests can advance it.
    pub fn unavailable_for(&self, duration: Duration) {
        let mut state = self.inner.lock();
        state.unavailable_until = Some(Instant::now() + duration);
        state.store.close_watches();
    }

    /// Whether the server answers requests (see [`FakeApiServer::unavailable_for`]).
    pub fn is_available(&self) -> bool {
        !self.inner.lock().is_unavailable()
    }

    /// Every request that reached the server, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.inner.lock().requests.clone()
    }

    /// How many requests of `verb` reached the server.
    pub fn count(&self, verb: Verb) -> usize {
        let state = self.inner.lock();
        state.requests.iter().filter(|r| r.verb == verb).count()
    }

    /// How many requests that write (create, update, patch, delete) reached the server.
    pub fn writes(&self) -> usize {
        let state = self.inner.lock();
        state.requests.iter().filter(|r| r.verb.is_write()).count()
    }

    /// Forgets the requests made so far, e.g. after a set-up that should not count.
    pub fn clear_requests(&self) {
        self.inner.lock().requests.clear();
    }

    /// The resource version of the last change: it moves with every change of any object, and
    /// only then.
    pub fn resource_version(&self) -> u64 {
        self.inner.lock().store.revision()
    }

    /// The object `name` of kind `K` as stored (`namespace` is `None` for a cluster-scoped kind),
    /// or `None`. Not a request: nothing is counted.
    ///
    /// Panics if the stored object is not a valid `K`.
    pub fn get<K>(&self, namespace: Option<&str>, name: &str) -> Option<K>
    where
        K: Resource<DynamicType = ()> + DeserializeOwned,
        K::Scope: 'static,
    {
        let resource = Kind::of::<K>().resource();
        let object = self
            .inner
            .lock()
            .store
            .get(&resource, namespace, name)
            .ok()?;
        Some(typed(object))
    }

    /// Creates the object of `yaml` (a sample of `config/samples/`), of kind `K`, in `namespace`
    /// (`None` for a cluster-scoped kind), as `kubectl create` does: a request through every
    /// check of the API server (the CRD's schema and CEL rules, the webhooks installed), as the
    /// cluster's admin. Returns the object as stored, or the API server's refusal. The YAML is
    /// read untyped, as kubectl reads it, so that a sample that does not fit `K` reaches the
    /// API server's checks.
    ///
    /// Panics if `yaml` is not a YAML object.
    pub async fn create_yaml<K>(
        &self,
        namespace: Option<&str>,
        yaml: &str,
    ) -> Result<kube::api::DynamicObject, kube::Error>
    where
        K: Resource<DynamicType = ()>,
    {
        let resource = kube::core::ApiResource::erase::<K>(&());
        let api = match namespace {
            Some(namespace) => kube::Api::namespaced_with(self.client(), namespace, &resource),
            None => kube::Api::all_with(self.client(), &resource),
        };
        let object: kube::api::DynamicObject =
            super::from_yaml(yaml).unwrap_or_else(|error| panic!("not a YAML object: {error}"));
        api.create(&kube::api::PostParams::default(), &object).await
    }

    /// The version the object `name` of `K`'s kind is stored in, e.g. `example.com/v1`
    /// (`namespace` is `None` for a cluster-scoped kind), or `None` if there is no such object:
    /// what etcd holds, which no client sees (they get the version they ask for). Not a
    /// request: nothing is counted.
    pub fn stored_version<K>(&self, namespace: Option<&str>, name: &str) -> Option<String>
    where
        K: Resource<DynamicType = ()>,
        K::Scope: 'static,
    {
        let resource = Kind::of::<K>().resource();
        self.inner
            .lock()
            .store
            .stored_api_version(&resource, namespace, name)
    }

    /// Every stored object of kind `K`, in all namespaces, sorted by namespace and name. Not a
    /// request: nothing is counted.
    ///
    /// Panics if a stored object is not a valid `K`.
    pub fn list<K>(&self) -> Vec<K>
    where
        K: Resource<DynamicType = ()> + DeserializeOwned,
        K::Scope: 'static,
    {
        let resource = Kind::of::<K>().resource();
        let list = self
            .inner
            .lock()
            .store
            .list(&resource, None, &Filter::default(), None, None);
        match list {
            Ok(mut list) => match list["items"].take() {
                Value::Array(items) => items.into_iter().map(typed).collect(),
                _ => Vec::new(),
            },
            Err(_) => Vec::new(),
        }
    }

    /// Stores `object` as another client would, creating or replacing it (in the `default`
    /// namespace if it names none), `status` included and with no `resourceVersion`
    /// precondition, as the field manager [`PUT_MANAGER`] of an administrator; watches see the
    /// change. Not a request: nothing is counted, and it works while the server is unavailable.
    /// The object is checked and completed as any other write (schema, defaults, webhooks).
    ///
    /// Panics if `K` is not served, or the object cannot be stored (no name, or invalid).
    pub fn put<K>(&self, object: &K) -> K
    where
        K: Resource<DynamicType = ()> + Serialize + DeserializeOwned,
        K::Scope: 'static,
    {
        let kind = Kind::of::<K>();
        let resource = kind.resource();
        let mut value = serde_json::to_value(object).expect("the object serializes to JSON");
        if let Some(metadata) = value["metadata"].as_object_mut() {
            metadata.remove("resourceVersion");
        }
        let namespace = kind.namespaced.then(|| {
            value["metadata"]["namespace"]
                .as_str()
                .unwrap_or("default")
                .to_owned()
        });
        let name = value["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let mut state = self.inner.lock();
        let store = &mut state.store;
        let caller = admin_caller(Scope::Whole);
        // Unlike a client's create, a put needs no namespace: it makes it.
        if let Some(namespace) = &namespace {
            store.ensure_namespace(namespace);
        }
        let stored = if let Ok(live) = store.get(&resource, namespace.as_deref(), &name) {
            value["metadata"]["resourceVersion"] = live["metadata"]["resourceVersion"].clone();
            let write = Write {
                caller,
                edit: Edit::Replace(value),
            };
            store
                .write(&resource, namespace.as_deref(), &name, write)
                .map(|(_, object)| object)
        } else {
            store.create(&resource, namespace.as_deref(), value, &caller)
        };
        match stored {
            Ok(object) => typed(object),
            Err(error) => panic!("cannot put {} {name}: {}", kind.kind, error.message),
        }
    }
}

/// The fake's own writes: an administrator's, by the field manager [`PUT_MANAGER`].
fn admin_caller(scope: Scope) -> Caller {
    let admin = Identity::admin();
    Caller {
        scope,
        manager: PUT_MANAGER.to_owned(),
        dry_run: false,
        validation: query::FieldValidation::Ignore,
        duplicates: Vec::new(),
        user: User {
            name: admin.user().to_owned(),
            groups: admin.groups().to_vec(),
        },
    }
}

/// A stored object as a `K`.
fn typed<K: DeserializeOwned>(object: Value) -> K {
    match serde_json::from_value(object) {
        Ok(object) => object,
        Err(error) => panic!("a stored object does not deserialize: {error}"),
    }
}
