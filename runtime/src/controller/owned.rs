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
use super::holds;
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
    /// already has every field `object` holds ([`is_applied`](super::is_applied): no request, no
    /// new version, no watch event).
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
        // The object as JSON once, compared with what is there and sent as the apply's body: the
        // manager then links one serializer of the kind (into JSON values) instead of two (the
        // second writing bytes: about 0.1 MB of code for a Deployment).
        let desired = serde_json::to_value(&object).map_err(kube::Error::SerdeError)?;
        let after = match &before {
            Some(current) if holds(current, &desired) => current.clone(),
            _ => {
                let params = PatchParams::apply(self.name).force();
                let applied = api.patch(&name, &params, &Patch::Apply(&desired)).await?;
                self.wrote(&applied);
                applied
            }
        };
        Ok(Applied { before, after })
    }
}
