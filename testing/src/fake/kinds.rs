//! The kinds a [`FakeApiServer`](super::FakeApiServer) serves: where their objects live in the API
//! (group, version, plural, scope) and the parts of their schema that change how they are stored.

use std::any::TypeId;

use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use kube::Resource;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::api_types::{Ty, api_type};
use super::typed::{self, Check};

/// A kind that the fake API server serves, registered with
/// [`FakeApiServer::register_kind`](super::FakeApiServer::register_kind).
///
/// [`Kind::of`] takes everything from a Rust type's [`Resource`] implementation;
/// [`Kind::from_crd`] from a CustomResourceDefinition, with its schema.
#[derive(Clone, Debug, PartialEq)]
pub struct Kind {
    /// The API group: `""` for the core group, `apps`, `cache.example.com` …
    pub group: String,
    /// The API version within the group: `v1`, `v1alpha1` …
    pub version: String,
    /// The kind: `Deployment`, `Memcached` …
    pub kind: String,
    /// The resource in URLs: `deployments`, `memcacheds` …
    pub plural: String,
    /// Whether objects of the kind live in namespaces.
    pub namespaced: bool,
    /// Whether the kind has the `status` subresource: then writes to the object ignore its
    /// `status`, writes to `/status` change nothing else, and `metadata.generation` counts
    /// changes of everything but `metadata` and `status`. Without it, status changes count too.
    pub status_subresource: bool,
    /// The kind's OpenAPI v3 schema (a CRD's `openAPIV3Schema`), if known: server-side apply
    /// reads its `x-kubernetes-list-type` and `x-kubernetes-list-map-keys` to merge lists.
    /// Without one, the fake knows the usual lists of the built-in kinds (`conditions` by `type`,
    /// `containers` by `name` …) and treats every other list as atomic.
    pub schema: Option<Value>,
}

impl Kind {
    /// The kind of the Rust type `K`, with the status subresource and no schema.
    pub fn of<K>() -> Self
    where
        K: Resource<DynamicType = ()>,
        K::Scope: 'static,
    {
        Self {
            group: K::group(&()).into_owned(),
            version: K::version(&()).into_owned(),
            kind: K::kind(&()).into_owned(),
            plural: K::plural(&()).into_owned(),
            namespaced: TypeId::of::<K::Scope>() == TypeId::of::<NamespaceResourceScope>(),
            status_subresource: true,
            schema: None,
        }
    }

    /// One kind per served version of `crd`, with its scope, its status subresource and its
    /// schema, as the API server serves it once the CRD is installed.
    pub fn from_crd(crd: &CustomResourceDefinition) -> Vec<Self> {
        let spec = &crd.spec;
        spec.versions
            .iter()
            .filter(|version| version.served)
            .map(|version| Self {
                group: spec.group.clone(),
                version: version.name.clone(),
                kind: spec.names.kind.clone(),
                plural: spec.names.plural.clone(),
                namespaced: spec.scope == "Namespaced",
                status_subresource: version
                    .subresources
                    .as_ref()
                    .is_some_and(|subresources| subresources.status.is_some()),
                schema: version
                    .schema
                    .as_ref()
                    .and_then(|schema| schema.open_api_v3_schema.as_ref())
                    .and_then(|schema| serde_json::to_value(schema).ok()),
            })
            .collect()
    }

    /// `apps/v1`, or `v1` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// Where the kind's objects are stored and watched.
    pub(super) fn resource(&self) -> ResourceKey {
        ResourceKey {
            group: self.group.clone(),
            version: self.version.clone(),
            plural: self.plural.clone(),
        }
    }

    /// `Deployment.apps` (`Pod` for the core group), as the API server names a kind in the
    /// messages of invalid objects.
    pub(super) fn group_kind(&self) -> String {
        if self.group.is_empty() {
            self.kind.clone()
        } else {
            format!("{}.{}", self.kind, self.group)
        }
    }

    /// `deployments.apps`, as the API server names a resource in its messages.
    pub(super) fn qualified_plural(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }
}

/// A built-in kind as the fake serves it: with the check of its Rust type.
pub(super) type BuiltIn = (Kind, Check);

/// The kinds every fake API server serves from the start: those an operator's controllers,
/// leader election and Event recorder touch, and the webhook configurations whose `caBundle` the
/// webhooks' self-signed certificates set. (CRDs are served too, with what the API server does
/// when one is written: `store/crds.rs`.)
pub(super) fn built_in() -> Vec<BuiltIn> {
    use k8s_openapi::api::admissionregistration::v1::{
        MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
    };
    use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
    use k8s_openapi::api::coordination::v1::Lease;
    use k8s_openapi::api::core::v1::{
        ConfigMap, Event as CoreEvent, Namespace, PersistentVolumeClaim, Pod, Secret, Service,
        ServiceAccount,
    };
    use k8s_openapi::api::events::v1::Event;

    fn typed<K>() -> BuiltIn
    where
        K: Resource<DynamicType = ()> + DeserializeOwned + JsonSchema + 'static,
        K::Scope: 'static,
    {
        let mut kind = Kind::of::<K>();
        // The built-in kinds with a status subresource.
        kind.status_subresource = matches!(
            (kind.group.as_str(), kind.plural.as_str()),
            ("apps", _)
                | (
                    "",
                    "pods" | "services" | "persistentvolumeclaims" | "namespaces"
                )
        );
        (kind, typed::check::<K>)
    }

    vec![
        typed::<Deployment>(),
        typed::<StatefulSet>(),
        typed::<DaemonSet>(),
        typed::<ReplicaSet>(),
        typed::<Event>(),
        typed::<CoreEvent>(),
        typed::<ConfigMap>(),
        typed::<Secret>(),
        typed::<Pod>(),
        typed::<Service>(),
        typed::<ServiceAccount>(),
        typed::<PersistentVolumeClaim>(),
        typed::<Namespace>(),
        typed::<Lease>(),
        typed::<MutatingWebhookConfiguration>(),
        typed::<ValidatingWebhookConfiguration>(),
    ]
}

/// The part of a URL that names a collection: `apps`, `v1`, `deployments`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) struct ResourceKey {
    pub(super) group: String,
    pub(super) version: String,
    pub(super) plural: String,
}

impl ResourceKey {
    /// Where the objects of every version of this resource are kept: one storage per group and
    /// resource, as in etcd, whatever version a client reads or writes them in. (The key of a
    /// storage has no version.)
    pub(super) fn storage(&self) -> ResourceKey {
        ResourceKey {
            version: String::new(),
            ..self.clone()
        }
    }
}

/// How server-side apply merges a list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum ListType {
    /// Replaced as a whole, owned as one field.
    Atomic,
    /// A map keyed by these fields of its items (`x-kubernetes-list-type: map`).
    Map(Vec<String>),
    /// A set of scalars (`x-kubernetes-list-type: set`).
    Set,
}

impl Kind {
    /// The built-in type of the kind's objects, if it is a kind the API server has built in
    /// (`io.k8s.api.apps.v1.Deployment`): what the fake knows of its fields, defaults and
    /// lists (`built_in/`).
    pub(super) fn built_in_type(&self) -> Option<Ty> {
        let package = match self.group.as_str() {
            "" => "io.k8s.api.core".to_owned(),
            "apiextensions.k8s.io" => {
                "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions".to_owned()
            }
            group if group.ends_with(".k8s.io") || !group.contains('.') => {
                format!("io.k8s.api.{}", group.trim_end_matches(".k8s.io"))
            }
            _ => return None,
        };
        let name = format!("{package}.{}.{}", self.version, self.kind);
        api_type(&name).map(Ty::Named)
    }
}

impl super::errors::KindNames for Kind {
    fn group_kind(&self) -> String {
        Kind::group_kind(self)
    }
    fn qualified_plural(&self) -> String {
        Kind::qualified_plural(self)
    }
    fn group(&self) -> &str {
        &self.group
    }
    fn kind(&self) -> &str {
        &self.kind
    }
    fn plural(&self) -> &str {
        &self.plural
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::Namespace;

    use super::*;

    #[test]
    fn kinds_of_rust_types() {
        let deployment = Kind::of::<Deployment>();
        assert_eq!(
            (deployment.api_version(), deployment.plural.as_str()),
            ("apps/v1".to_owned(), "deployments")
        );
        assert!(deployment.namespaced);
        assert_eq!(deployment.qualified_plural(), "deployments.apps");
        let namespace = Kind::of::<Namespace>();
        assert!(!namespace.namespaced);
        assert_eq!(namespace.api_version(), "v1");
    }

    #[test]
    fn built_in_kinds_have_their_types() {
        assert!(Kind::of::<Deployment>().built_in_type().is_some());
        assert!(Kind::of::<Namespace>().built_in_type().is_some());
        let mut custom = Kind::of::<Deployment>();
        custom.group = "cache.example.com".to_owned();
        assert!(custom.built_in_type().is_none());
    }
}
