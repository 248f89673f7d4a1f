//! The objects a controller makes for its custom resources (a Deployment, a Service, a Pod …):
//! server-side applied as the controller, and owned by the custom resource they serve.
//!
//! [`Context::apply_owned`] is controller-runtime's `controllerutil.SetControllerReference`
//! followed by a server-side apply with the controller's field manager, in one call.

use std::fmt::Debug;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::Resource;
use kube::api::{Patch, PatchParams};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::runner::{Context, Scope};

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

impl<S> Context<S> {
    /// Server-side applies `object` as this controller, owned by `owner`, and returns it as
    /// stored.
    ///
    /// `object` gets the controller owner reference of [`owner_reference`] (in place of any it
    /// had) and, when it names no namespace and its kind is namespaced, the owner's namespace.
    /// The apply creates a missing object and sets exactly the fields `object` holds, forced: the
    /// controller takes back what someone changed by hand (`kubectl scale`), and leaves alone
    /// the fields it does not set, whoever owns them, such as the `clusterIP` and `nodePort` the
    /// API server allocates to a Service. Fields this controller applied before and leaves out
    /// now are removed, so build the whole object every time. An apply that changes nothing
    /// writes nothing on the API server, and no watch sees it.
    pub async fn apply_owned<O, K>(&self, owner: &O, mut object: K) -> Result<K, kube::Error>
    where
        O: Resource<DynamicType = ()>,
        K: Resource<DynamicType = ()> + Clone + Serialize + DeserializeOwned + Debug,
        K::Scope: Scope,
    {
        let meta = object.meta_mut();
        meta.owner_references = owner_reference(owner).map(|reference| vec![reference]);
        if meta.namespace.is_none() {
            meta.namespace = owner.meta().namespace.clone();
        }
        let namespace = meta.namespace.clone();
        let name = meta.name.clone().unwrap_or_default();
        let api = <K::Scope as Scope>::api_in::<K>(&self.client, namespace.as_deref());
        let params = PatchParams::apply(self.name).force();
        api.patch(&name, &params, &Patch::Apply(&object)).await
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
        let spec = applied.spec.unwrap();
        assert_eq!(spec.cluster_ip.as_deref(), Some("10.96.0.10"));
        assert_eq!(spec.ports.unwrap()[0].node_port, Some(30080));
    }
}
