//! One test body, two API servers: [`TestCluster`] is either the [fake](super::fake) API server
//! or envtest's real kube-apiserver (the module `envtest`, with the `envtest` feature),
//! so that a controller's test runs against both and what passes offline is what a cluster
//! does.
//!
//! ```no_run
//! use kube::Api;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use operator_rs_testing::cluster::TestCluster;
//!
//! /// The test body, for either server.
//! async fn stores_a_config_map(cluster: TestCluster) {
//!     let api = Api::<ConfigMap>::namespaced(cluster.client(), cluster.namespace());
//!     // ...
//! }
//!
//! #[tokio::test]
//! async fn stores_a_config_map_on_the_fake() {
//!     stores_a_config_map(TestCluster::fake()).await;
//! }
//!
//! #[tokio::test]
//! #[ignore = "envtest: needs KUBEBUILDER_ASSETS (make test)"]
//! async fn envtest_stores_a_config_map() {
//!     stores_a_config_map(TestCluster::envtest().await).await;
//! }
//! ```
//!
//! What differs, and why: the fake calls the project's admission webhooks in-process, where
//! envtest's API server calls none (they would need a server it can reach, as in a cluster);
//! envtest has no controller manager, so Deployments get no pods and nothing is garbage
//! collected (the fake's stand-ins are [`FakeApiServer::simulate_deployments`]); and each test
//! on envtest has a namespace of its own, since the tests of a binary share its API server.

#[cfg(feature = "envtest")]
use std::sync::{Arc, Mutex, PoisonError};

use kube::{Client, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::fake::{Denial, FakeApiServer, Identity, Kind};
use operator_rs_runtime::manager::Shared;
use operator_rs_runtime::manager::namespaces::WatchNamespaces;
use operator_rs_runtime::manifests::Manifests;

/// The API server of a test: see [the module](self).
pub struct TestCluster {
    backend: Backend,
    namespace: String,
}

enum Backend {
    Fake(FakeApiServer),
    #[cfg(feature = "envtest")]
    Envtest {
        envtest: &'static super::envtest::Envtest,
        denials: Arc<Mutex<Vec<Denial>>>,
    },
}

impl TestCluster {
    /// A new fake API server, whose tests use the namespace `default`.
    pub fn fake() -> Self {
        Self::from_fake(FakeApiServer::new())
    }

    /// `server`, set up by the test, as a test cluster.
    pub fn from_fake(server: FakeApiServer) -> Self {
        Self {
            backend: Backend::Fake(server),
            namespace: "default".to_owned(),
        }
    }

    /// envtest's kube-apiserver, shared by the tests of this binary
    /// ([`Envtest::shared`](super::envtest::Envtest::shared)), and a namespace of this test's
    /// own, created.
    ///
    /// # Panics
    ///
    /// When envtest cannot start (no `KUBEBUILDER_ASSETS`, say): the message says why.
    #[cfg(feature = "envtest")]
    pub async fn envtest() -> Self {
        let envtest = super::envtest::Envtest::shared();
        let namespace = envtest.create_namespace("test").await;
        Self {
            backend: Backend::Envtest {
                envtest,
                denials: Arc::default(),
            },
            namespace,
        }
    }

    /// The namespace the test's objects go to.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// Whether this is envtest's kube-apiserver.
    pub fn is_envtest(&self) -> bool {
        !matches!(self.backend, Backend::Fake(_))
    }

    /// The fake API server, for what only it can tell (its requests, its stand-ins), or `None`
    /// on envtest.
    pub fn fake_server(&self) -> Option<&FakeApiServer> {
        match &self.backend {
            Backend::Fake(server) => Some(server),
            #[cfg(feature = "envtest")]
            Backend::Envtest { .. } => None,
        }
    }

    /// A client as a cluster administrator, with [`TestCluster::namespace`] as its default
    /// namespace.
    pub fn client(&self) -> Client {
        match &self.backend {
            Backend::Fake(server) => server.client(),
            #[cfg(feature = "envtest")]
            Backend::Envtest { envtest, .. } => {
                let mut config = envtest.config().clone();
                config.default_namespace = self.namespace.clone();
                Client::try_from(config).expect("envtest's configuration is valid")
            }
        }
    }

    /// What the manager hands its controllers ([`Shared::new`]) around [`TestCluster::client`],
    /// for tests that run a controller's `setup`: on envtest, watching the test's namespace only,
    /// since other tests' objects share the API server. Cancel its `shutdown` at the end.
    pub fn shared(&self) -> Shared {
        let mut shared = Shared::new(self.client());
        if self.is_envtest() {
            shared.watch_namespaces = WatchNamespaces::Only(vec![self.namespace.clone()]);
        }
        shared
    }

    /// A client whose requests come from `identity` and are allowed only what its RBAC rules
    /// grant: on the fake, checked by the fake; on envtest, by kube-apiserver's RBAC
    /// authorizer, with the rules as ClusterRoles and Roles bound to the identity, which the
    /// client impersonates. Refused requests are listed in [`TestCluster::denials`].
    pub async fn client_as(&self, identity: Identity) -> Client {
        match &self.backend {
            Backend::Fake(server) => server.client_as(identity),
            #[cfg(feature = "envtest")]
            Backend::Envtest { envtest, denials } => {
                // RBAC grants add up over every binding of a user, and the tests of a binary
                // share the API server: each test's identity is a user of its own.
                let user = format!("{}@{}", identity.user(), self.namespace);
                envtest_rbac::bind(&self.client(), &identity, &user).await;
                let mut config = envtest.config().clone();
                config.default_namespace = self.namespace.clone();
                config.auth_info.impersonate = Some(user);
                config.auth_info.impersonate_groups = Some(identity.groups().to_vec());
                envtest_rbac::client_recording_denials(config, identity.user(), denials.clone())
            }
        }
    }

    /// The requests of [`TestCluster::client_as`] clients that RBAC refused, in order.
    pub fn denials(&self) -> Vec<Denial> {
        match &self.backend {
            Backend::Fake(server) => server.denials(),
            #[cfg(feature = "envtest")]
            Backend::Envtest { denials, .. } => denials
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
        }
    }

    /// Installs what `make install` installs: the project's CRDs (and on the fake, its admission
    /// webhooks: see [the module](self)), waiting on envtest until they are served.
    ///
    /// # Panics
    ///
    /// If `make manifests` would refuse the CRDs, or the API server refuses one.
    pub async fn install(&self, manifests: Manifests) {
        match &self.backend {
            Backend::Fake(server) => {
                server.install(manifests);
            }
            #[cfg(feature = "envtest")]
            Backend::Envtest { envtest, .. } => {
                let crds = operator_rs_runtime::manifests::merge_versions(manifests.crds)
                    .unwrap_or_else(|error| {
                        panic!("make manifests would refuse the CRDs: {error}")
                    });
                envtest
                    .install_crd_objects(&crds)
                    .await
                    .unwrap_or_else(|error| panic!("{:#}", anyhow::Error::from(error)));
            }
        }
    }
}

/// What the typed writes and reads of [`TestCluster`] need of a kind.
pub trait TestObject:
    Resource<DynamicType = ()> + Clone + Serialize + DeserializeOwned + std::fmt::Debug
{
}

impl<K> TestObject for K
where
    K: Resource<DynamicType = ()> + Clone + Serialize + DeserializeOwned + std::fmt::Debug,
    K::Scope: 'static,
{
}

impl TestCluster {
    /// Stores `object` as a test's setup does: created, or replaced if it exists, with its
    /// `status` (written to the status subresource on envtest), in [`TestCluster::namespace`]
    /// when the kind is namespaced and the object names no namespace. Returns it as stored.
    ///
    /// # Panics
    ///
    /// If the API server refuses it.
    pub async fn put<K>(&self, object: &K) -> K
    where
        K: TestObject,
        K::Scope: 'static,
    {
        let mut object = object.clone();
        if Kind::of::<K>().namespaced && object.meta().namespace.is_none() {
            object.meta_mut().namespace = Some(self.namespace.clone());
        }
        match &self.backend {
            Backend::Fake(server) => server.put(&object),
            #[cfg(feature = "envtest")]
            Backend::Envtest { .. } => envtest_objects::put(&self.client(), object).await,
        }
    }

    /// Creates the object of `yaml` (a sample of `config/samples/`), of kind `K`, in
    /// [`TestCluster::namespace`] (unless `K` is cluster-scoped), as `kubectl create` does: a
    /// request through every check of the API server, as the cluster's admin. Returns the object
    /// as stored, or the API server's refusal. The YAML is read untyped, as kubectl reads it, so
    /// that a sample that does not fit `K` reaches the API server's checks.
    ///
    /// # Panics
    ///
    /// If `yaml` is not a YAML object.
    pub async fn create_yaml<K>(&self, yaml: &str) -> Result<kube::api::DynamicObject, kube::Error>
    where
        K: TestObject,
        K::Scope: 'static,
    {
        let resource = kube::core::ApiResource::erase::<K>(&());
        let api = if Kind::of::<K>().namespaced {
            kube::Api::namespaced_with(self.client(), &self.namespace, &resource)
        } else {
            kube::Api::all_with(self.client(), &resource)
        };
        let object: kube::api::DynamicObject =
            super::from_yaml(yaml).unwrap_or_else(|error| panic!("not a YAML object: {error}"));
        api.create(&kube::api::PostParams::default(), &object).await
    }

    /// The object `name` of kind `K` in [`TestCluster::namespace`] (or cluster-scoped), or
    /// `None`.
    pub async fn get<K>(&self, name: &str) -> Option<K>
    where
        K: TestObject,
        K::Scope: 'static,
    {
        let namespace = Kind::of::<K>()
            .namespaced
            .then_some(self.namespace.as_str());
        match &self.backend {
            Backend::Fake(server) => server.get(namespace, name),
            #[cfg(feature = "envtest")]
            Backend::Envtest { .. } => {
                let api = envtest_objects::api::<K>(&self.client(), namespace);
                let found = api.get_opt(name).await;
                let found = found.unwrap_or_else(|error| panic!("cannot read {name}: {error}"));
                found.map(|object| envtest_objects::typed(object))
            }
        }
    }

    /// Turns on a stand-in for the Deployment controller and the kubelet until the returned
    /// guard is dropped: the Deployments of the test's namespace report `spec.replicas` pods
    /// available. On the fake, [`FakeApiServer::simulate_deployments`] (which makes the pods
    /// too); on envtest, a task that writes their status (no pods: there are no nodes).
    #[must_use = "the stand-in stops when the guard is dropped"]
    pub fn simulate_deployments(&self) -> StandIn {
        match &self.backend {
            Backend::Fake(server) => {
                server.simulate_deployments(true);
                StandIn(None)
            }
            #[cfg(feature = "envtest")]
            Backend::Envtest { .. } => {
                let task = envtest_objects::simulate_deployments(self.client(), &self.namespace);
                StandIn(Some(task))
            }
        }
    }
}

/// Keeps a stand-in of [`TestCluster::simulate_deployments`] running.
#[derive(Debug)]
pub struct StandIn(Option<tokio::task::JoinHandle<()>>);

impl Drop for StandIn {
    fn drop(&mut self) {
        if let Some(task) = &self.0 {
            task.abort();
        }
    }
}

/// Objects on envtest, through the dynamic API (the typed one needs to know a kind's scope).
#[cfg(feature = "envtest")]
mod envtest_objects {
    use futures::StreamExt as _;
    use k8s_openapi::api::apps::v1::Deployment;
    use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams, PostParams};
    use kube::runtime::{WatchStreamExt as _, watcher};
    use kube::{Client, Resource as _, ResourceExt as _};
    use serde_json::json;

    use super::TestObject;

    pub(super) fn api<K: TestObject>(
        client: &Client,
        namespace: Option<&str>,
    ) -> Api<DynamicObject> {
        let resource = ApiResource::erase::<K>(&());
        match namespace {
            Some(namespace) => Api::namespaced_with(client.clone(), namespace, &resource),
            None => Api::all_with(client.clone(), &resource),
        }
    }

    pub(super) fn typed<K: TestObject>(object: DynamicObject) -> K {
        let value = serde_json::to_value(object).expect("an object serializes");
        serde_json::from_value(value).expect("the API server's object is a valid K")
    }

    pub(super) async fn put<K: TestObject>(client: &Client, object: K) -> K {
        let name = object.name_any();
        let api = api::<K>(client, object.meta().namespace.as_deref());
        let mut value = serde_json::to_value(&object).expect("an object serializes");
        value["metadata"]
            .as_object_mut()
            .map(|metadata| metadata.remove("resourceVersion"));
        let status = value
            .get("status")
            .filter(|status| !status.is_null())
            .cloned();
        let mut dynamic: DynamicObject =
            serde_json::from_value(value).expect("an object is a DynamicObject");
        fn failed<T>(name: &str, error: kube::Error) -> T {
            panic!("cannot store {name} on envtest: {error}")
        }
        let params = PostParams::default();
        let stored = match api
            .get_opt(&name)
            .await
            .unwrap_or_else(|e| failed(&name, e))
        {
            Some(existing) => {
                dynamic.metadata.resource_version = existing.metadata.resource_version;
                api.replace(&name, &params, &dynamic).await
            }
            None => api.create(&params, &dynamic).await,
        };
        let mut stored = stored.unwrap_or_else(|e| failed(&name, e));
        if let Some(status) = status {
            let patch = Patch::Merge(json!({ "status": status }));
            match api
                .patch_status(&name, &PatchParams::default(), &patch)
                .await
            {
                Ok(written) => stored = written,
                // A kind without the status subresource stored it with the object.
                Err(kube::Error::Api(error)) if error.code == 404 => {}
                Err(error) => failed(&name, error),
            }
        }
        typed(stored)
    }

    /// Writes the status of every Deployment of `namespace` as the Deployment controller does
    /// once its pods are available, whenever its spec changes.
    pub(super) fn simulate_deployments(
        client: Client,
        namespace: &str,
    ) -> tokio::task::JoinHandle<()> {
        let api = Api::<Deployment>::namespaced(client, namespace);
        tokio::spawn(async move {
            let mut deployments = std::pin::pin!(
                watcher(api.clone(), watcher::Config::default())
                    .default_backoff()
                    .applied_objects()
            );
            while let Some(deployment) = deployments.next().await {
                let Ok(deployment) = deployment else { continue };
                let replicas = deployment
                    .spec
                    .as_ref()
                    .and_then(|spec| spec.replicas)
                    .unwrap_or(1);
                let generation = deployment.meta().generation;
                let status = deployment.status.as_ref();
                if status.and_then(|s| s.observed_generation) == generation
                    && status.and_then(|s| s.available_replicas).unwrap_or(0) == replicas
                {
                    continue;
                }
                let status = json!({ "status": {
                    "observedGeneration": generation,
                    "replicas": replicas,
                    "updatedReplicas": replicas,
                    "readyReplicas": replicas,
                    "availableReplicas": replicas,
                    "conditions": [{
                        "type": "Available", "status": "True",
                        "reason": "MinimumReplicasAvailable",
                        "message": "Deployment has minimum availability.",
                    }],
                } });
                let name = deployment.name_any();
                let patch = Patch::Merge(status);
                if let Err(error) = api
                    .patch_status(&name, &PatchParams::default(), &patch)
                    .await
                {
                    tracing::warn!(%error, name, "the Deployment stand-in cannot write a status");
                }
            }
        })
    }
}

/// The RBAC of an [`Identity`] on envtest.
#[cfg(feature = "envtest")]
mod envtest_rbac {
    use std::sync::{Arc, Mutex, PoisonError};

    use k8s_openapi::api::core::v1::Namespace;
    use k8s_openapi::api::rbac::v1::{
        ClusterRole, ClusterRoleBinding, Role, RoleBinding, RoleRef, Subject,
    };
    use kube::api::{Api, ObjectMeta, Patch, PatchParams};
    use kube::{Client, Config};

    use super::super::fake::{Denial, Identity, denial_of_request};

    const MANAGER: &str = "operator-rs-envtest";

    fn meta(name: &str, namespace: Option<&str>) -> ObjectMeta {
        ObjectMeta {
            name: Some(name.to_owned()),
            namespace: namespace.map(str::to_owned),
            ..ObjectMeta::default()
        }
    }

    /// A name for the roles of `user`: its characters that a name may hold, and a number, since
    /// one user may be bound several times.
    fn role_name(user: &str) -> String {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name: String = user
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                    c.to_ascii_lowercase()
                } else {
                    '-'
                }
            })
            .collect();
        format!("envtest-{}-{n}", name.trim_matches('-'))
    }

    async fn apply<K>(api: Api<K>, object: &K)
    where
        K: kube::Resource
            + Clone
            + serde::Serialize
            + serde::de::DeserializeOwned
            + std::fmt::Debug,
    {
        let name = object.meta().name.clone().unwrap_or_default();
        let params = PatchParams::apply(MANAGER).force();
        api.patch(&name, &params, &Patch::Apply(object))
            .await
            .unwrap_or_else(|error| panic!("cannot apply the role {name} on envtest: {error}"));
    }

    /// Writes the identity's rules as a ClusterRole and Roles bound to `user`.
    pub(super) async fn bind(admin: &Client, identity: &Identity, user: &str) {
        let name = role_name(user);
        let subject = Subject {
            kind: "User".to_owned(),
            name: user.to_owned(),
            api_group: Some("rbac.authorization.k8s.io".to_owned()),
            namespace: None,
        };
        for (namespace, rules) in identity.roles() {
            let role_ref = |kind: &str| RoleRef {
                api_group: "rbac.authorization.k8s.io".to_owned(),
                kind: kind.to_owned(),
                name: name.clone(),
            };
            match namespace.as_deref() {
                None => {
                    let role = ClusterRole {
                        metadata: meta(&name, None),
                        rules: Some(rules),
                        ..ClusterRole::default()
                    };
                    apply(Api::all(admin.clone()), &role).await;
                    let binding = ClusterRoleBinding {
                        metadata: meta(&name, None),
                        role_ref: role_ref("ClusterRole"),
                        subjects: Some(vec![subject.clone()]),
                    };
                    apply(Api::all(admin.clone()), &binding).await;
                }
                Some(namespace) => {
                    let object = Namespace {
                        metadata: meta(namespace, None),
                        ..Namespace::default()
                    };
                    apply(Api::all(admin.clone()), &object).await;
                    let role = Role {
                        metadata: meta(&name, Some(namespace)),
                        rules: Some(rules),
                    };
                    apply(Api::namespaced(admin.clone(), namespace), &role).await;
                    let binding = RoleBinding {
                        metadata: meta(&name, Some(namespace)),
                        role_ref: role_ref("Role"),
                        subjects: Some(vec![subject.clone()]),
                    };
                    apply(Api::namespaced(admin.clone(), namespace), &binding).await;
                }
            }
        }
    }

    /// A client of `config` that records its `403 Forbidden` answers as denials of `user`.
    pub(super) fn client_recording_denials(
        config: Config,
        user: &str,
        denials: Arc<Mutex<Vec<Denial>>>,
    ) -> Client {
        let user = user.to_owned();
        let builder = kube::client::ClientBuilder::try_from(config)
            .expect("envtest's configuration is valid");
        let layer = tower::layer::layer_fn(move |service| Recorder {
            service,
            user: user.clone(),
            denials: denials.clone(),
        });
        builder.with_layer(&layer).build()
    }

    #[derive(Clone)]
    struct Recorder<S> {
        service: S,
        user: String,
        denials: Arc<Mutex<Vec<Denial>>>,
    }

    impl<S, B, R> tower::Service<http::Request<B>> for Recorder<S>
    where
        S: tower::Service<http::Request<B>, Response = http::Response<R>>,
        S::Future: Send + 'static,
        S::Error: Send + 'static,
    {
        type Response = S::Response;
        type Error = S::Error;
        type Future = futures::future::BoxFuture<'static, Result<Self::Response, Self::Error>>;

        fn poll_ready(
            &mut self,
            cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Result<(), Self::Error>> {
            self.service.poll_ready(cx)
        }

        fn call(&mut self, request: http::Request<B>) -> Self::Future {
            let denial = denial_of_request(&self.user, request.method(), request.uri());
            let future = self.service.call(request);
            let denials = self.denials.clone();
            Box::pin(async move {
                let response = future.await?;
                if response.status() == http::StatusCode::FORBIDDEN {
                    denials
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(denial);
                }
                Ok(response)
            })
        }
    }
}
