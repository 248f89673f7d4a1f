//! The objects a controller makes for its custom resources (a Deployment, a Service, a Pod …):
//! server-side applied as the controller, and owned by the custom resource they serve.
//!
//! [`Context::apply_owned`] is controller-runtime's `controllerutil.SetControllerReference`
//! followed by a server-side apply with the controller's field manager, skipped when the object
//! is already as desired, in one call.

use std::fmt::Debug;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::Resource;
use kube::api::{Patch, PatchParams};
use serde::Serialize;

use super::context::{Context, Scope};
use super::is_applied;
use crate::cache::Cacheable;

/// The controller owner reference to `owner` that Kubernetes expects on what a controller makes:
/// `controller: true` (one controller per object: `kubectl get` shows it as the owner, and
/// [`Runner::owns`](super::Runner::owns) reconciles it when the object changes) and
/// `blockOwnerDeletion: true` (a foreground deletion of the owner waits for the object; it needs
/// the `update` verb on the owner's `finalizers` subresource, which the scaffolded RBAC rules
/// grant). Deleting the owner deletes the object: Kubernetes' garbage collector follows the
/// reference.
///
/// `None` when `owner` has no name or uid, i.e. it was not read from the API server.
pub fn owner_reference<O>(owner: &O) -> Option<OwnerReference>
where
    O: Resource<DynamicType = ()>,
{
    let reference = owner.controller_owner_ref(&())?;
    Some(OwnerReference {
        block_owner_deletion: Some(true),
        ..reference
    })
}

/// What [`Context::apply_owned`] found and left: the object before and after, so that
/// `reconcile` can tell users what it changed ("Deployment spec.replicas change from 3 to 4").
#[derive(Clone, Debug)]
pub struct Applied<K> {
    /// The object as it was before: `None` when the apply created it.
    pub before: Option<K>,
    /// The object as stored now: the API server's answer to the apply, or `before` itself when
    /// it already had every field of the desired object and nothing was written.
    pub after: K,
}

impl<K> Applied<K> {
    /// Whether the apply created the object.
    pub fn created(&self) -> bool {
        self.before.is_none()
    }
}

impl<S> Context<S> {
    /// Makes `object` exist as this controller wants it, owned by `owner`: reads it (from the
    /// controller's cache of its kind), and server-side applies it as this controller unless it
    /// already has every field `object` holds ([`is_applied`]: no request, no new version, no
    /// watch event).
    ///
    /// `object` gets the controller owner reference of [`owner_reference`] (in place of any it
    /// had) and, when it names no namespace and its kind is namespaced, the owner's namespace.
    /// With `--sharding` it also gets the owner's shard label (this replica's member), which the
    /// watches of owned kinds select on (see [`crate::sharding`]).
    /// The apply creates a missing object and sets exactly the fields `object` holds, forced: the
    /// controller takes back what someone changed by hand (`kubectl scale`), and leaves alone
    /// the fields it does not set, whoever owns them, such as the `clusterIP` and `nodePort` the
    /// API server allocates to a Service. Fields this controller applied before and leaves out
    /// now are removed, so build the whole object every time.
    ///
    /// The object is read as [`Context::get`] reads: from the cache of the kind once it has
    /// synced (a kind the controller [`owns`](super::Runner::owns) is cached), with the
    /// controller's own writes that the watch has not brought yet (the apply's answer is one),
    /// and from the API server otherwise. An object that the controller's watch does not select
    /// (its label selector) reads as missing: the apply then takes it over, labels and all.
    /// With `--sharding`, an object missing from the cache is read from the API server: the
    /// watch selects this member's label, which the children of an object taken over from
    /// another member do not carry yet.
    ///
    /// Like controller-runtime's `controllerutil.CreateOrUpdate` with
    /// `SetControllerReference`, in one call, but with server-side apply instead of an update:
    /// no conflicts with other writers of the object, and no fields of theirs overwritten.
    pub async fn apply_owned<O, K>(
        &self,
        owner: &O,
        mut object: K,
    ) -> Result<Applied<K>, kube::Error>
    where
        O: Resource<DynamicType = ()>,
        K: Cacheable + Serialize,
        K::Scope: Scope,
    {
        let meta = object.meta_mut();
        meta.owner_references = owner_reference(owner).map(|reference| vec![reference]);
        if meta.namespace.is_none() {
            meta.namespace = owner.meta().namespace.clone();
        }
        if let Some(member) = &self.shard {
            let labels = meta.labels.get_or_insert_default();
            labels.insert(crate::sharding::SHARD_LABEL.to_owned(), member.clone());
        }
        let namespace = meta.namespace.clone();
        let name = meta.name.clone().unwrap_or_default();
        let api = <K::Scope as Scope>::api_in::<K>(&self.client, namespace.as_deref());
        let cached = self.get::<K>(namespace.as_deref(), &name).await?;
        let mut before = cached.map(|current| current.as_ref().clone());
        if before.is_none() && self.shard.is_some() {
            // With `--sharding` the cache holds the children of this member's objects only: the
            // child of an object that came from another member (which left, or drained it)
            // still carries that member's label. Read it from the API server, so that the
            // answer does not say "created" of an object that exists (and `reconcile` does not
            // wait for pods that are already running).
            before = api.get_opt(&name).await?;
        }
        let after = match &before {
            Some(current) if is_applied(current, &object) => current.clone(),
            _ => {
                let params = PatchParams::apply(self.name).force();
                let applied = api.patch(&name, &params, &Patch::Apply(&object)).await?;
                self.wrote(&applied);
                applied
            }
        };
        Ok(Applied { before, after })
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{ConfigMap, Service, ServicePort, ServiceSpec};
    use kube::api::{Api, DeleteParams, ObjectMeta, PostParams};

    use super::*;
    use crate::testing::fake::FakeApiServer;

    fn named<K: Resource + Default>(name: &str) -> K {
        let mut object = K::default();
        object.meta_mut().name = Some(name.to_owned());
        object
    }

    /// The owner, as created on the API server (with a uid).
    async fn owner(fake: &FakeApiServer) -> ConfigMap {
        let mut owner = named::<ConfigMap>("owner");
        owner.metadata.namespace = Some("apps".to_owned());
        Api::<ConfigMap>::namespaced(fake.client(), "apps")
            .create(&PostParams::default(), &owner)
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn owned_objects_are_applied_in_the_owners_namespace_and_collected_with_it() {
        let fake = FakeApiServer::new();
        let owner = owner(&fake).await;
        let ctx = Context::new(fake.client(), "tester", ());

        let applied = ctx.apply_owned(&owner, named::<ConfigMap>("child")).await;
        let applied = applied.unwrap();
        assert!(applied.created());
        let applied = applied.after;
        assert_eq!(applied.metadata.namespace.as_deref(), Some("apps"));
        let reference = &applied.metadata.owner_references.unwrap()[0];
        assert_eq!(reference.kind, "ConfigMap");
        assert_eq!(reference.name, "owner");
        assert_eq!(reference.uid, owner.metadata.uid.clone().unwrap());
        assert_eq!(reference.controller, Some(true));
        assert_eq!(reference.block_owner_deletion, Some(true));
        let managers = applied.metadata.managed_fields.unwrap();
        assert_eq!(managers[0].manager.as_deref(), Some("tester"));
        assert_eq!(managers[0].operation.as_deref(), Some("Apply"));

        let api = Api::<ConfigMap>::namespaced(fake.client(), "apps");
        api.delete("owner", &DeleteParams::default()).await.unwrap();
        assert!(fake.get::<ConfigMap>(Some("apps"), "child").is_none());
    }

    /// What the API server allocates (a Service's cluster IP and node port) is not the
    /// controller's: applying the Service again keeps it.
    #[tokio::test]
    async fn fields_the_controller_does_not_set_are_kept() {
        let fake = FakeApiServer::new();
        let owner = owner(&fake).await;
        let ctx = Context::new(fake.client(), "tester", ());
        let service = || Service {
            metadata: ObjectMeta {
                name: Some("web".to_owned()),
                ..ObjectMeta::default()
            },
            spec: Some(ServiceSpec {
                type_: Some("NodePort".to_owned()),
                ports: Some(vec![ServicePort {
                    port: 80,
                    protocol: Some("TCP".to_owned()),
                    ..ServicePort::default()
                }]),
                ..ServiceSpec::default()
            }),
            ..Service::default()
        };
        ctx.apply_owned(&owner, service()).await.unwrap();

        // The API server's allocation, by another field manager (`FakeApiServer::put`).
        let mut allocated = fake.get::<Service>(Some("apps"), "web").unwrap();
        let spec = allocated.spec.as_mut().unwrap();
        spec.cluster_ip = Some("10.96.0.10".to_owned());
        spec.ports.as_mut().unwrap()[0].node_port = Some(30080);
        fake.put(&allocated);

        let applied = ctx.apply_owned(&owner, service()).await.unwrap();
        let spec = applied.after.spec.unwrap();
        assert_eq!(spec.cluster_ip.as_deref(), Some("10.96.0.10"));
        assert_eq!(spec.ports.unwrap()[0].node_port, Some(30080));
    }

    /// An object that already has every field the controller applies is not written again; one
    /// changed by hand is, and `before` shows the change.
    #[tokio::test]
    async fn only_objects_that_differ_are_written() {
        let fake = FakeApiServer::new();
        let owner = owner(&fake).await;
        let ctx = Context::new(fake.client(), "tester", ());
        let child = |value: &str| {
            let mut child = named::<ConfigMap>("child");
            child.data = Some([("key".to_owned(), value.to_owned())].into());
            child
        };
        ctx.apply_owned(&owner, child("a")).await.unwrap();

        fake.clear_requests();
        let again = ctx.apply_owned(&owner, child("a")).await.unwrap();
        assert!(!again.created());
        assert_eq!(fake.writes(), 0, "{:?}", fake.requests());
        assert_eq!(
            again.before.unwrap().metadata.resource_version,
            again.after.metadata.resource_version
        );

        let changed = ctx.apply_owned(&owner, child("b")).await.unwrap();
        assert_eq!(fake.writes(), 1);
        let value = |map: &ConfigMap| map.data.as_ref().unwrap()["key"].clone();
        assert_eq!(value(&changed.before.unwrap()), "a");
        assert_eq!(value(&changed.after), "b");
    }

    /// With `--sharding`, the child of an object taken over from another member is missing from
    /// the cache (whose watch selects this member's label) but not from the cluster: the apply
    /// relabels it, and says that it existed.
    #[tokio::test]
    async fn a_sharded_child_of_another_member_is_taken_over_not_created() {
        use crate::cache::Caches;
        use crate::sharding::SHARD_LABEL;
        use kube::runtime::watcher::Event;

        let fake = FakeApiServer::new();
        let owner = owner(&fake).await;
        for name in ["first", "second"] {
            let mut child = named::<ConfigMap>(name);
            child.metadata.labels = Some([(SHARD_LABEL.to_owned(), "a".to_owned())].into());
            Api::<ConfigMap>::namespaced(fake.client(), "apps")
                .create(&PostParams::default(), &child)
                .await
                .unwrap();
        }
        // The synced cache of member b, which the watch of b's label filled: without them.
        let caches = Caches::default();
        let mut feed = caches.register::<ConfigMap>().feed(Some("apps"));
        feed.apply(&Event::Init);
        feed.apply(&Event::InitDone);
        let mut ctx = Context::with_caches(fake.client(), "tester", (), caches);
        // Not sharded, the cache is the truth: an object its watch does not select is missing.
        let unsharded = ctx.apply_owned(&owner, named::<ConfigMap>("first")).await;
        assert!(unsharded.unwrap().created());

        ctx.shard = Some("b".to_owned());
        let applied = ctx.apply_owned(&owner, named::<ConfigMap>("second")).await;
        let applied = applied.unwrap();
        assert!(!applied.created());
        let label = |map: &ConfigMap| map.metadata.labels.as_ref().unwrap()[SHARD_LABEL].clone();
        assert_eq!(label(&applied.before.unwrap()), "a");
        assert_eq!(label(&applied.after), "b");
    }
}
