//! Specs that a custom resource may lack.
//!
//! `#[derive(CustomResource)]` gives the kind a `spec: FooSpec` field, which serde requires. A CRD
//! that does not list `spec` under `required` lets the API server store objects with no spec, or
//! with `spec: null` where the schema makes it nullable; such an object fails to decode, and one
//! object that fails to decode fails the watcher's whole list: the controllers of the kind stall.
//! Go reads such an object as the spec's zero value.
//! [`spec_or_default!`](crate::spec_or_default) does the same for a Rust spec type: a missing or
//! null spec reads as its [`Default`]; a spec that is there reads, and every spec writes, as the
//! type's derives say.
//!
//! A spec type that derives its schema should derive schemars' `JsonSchema`, not kube's
//! `KubeSchema`: `KubeSchema` copies the type's serde attributes, `remote` among them, onto a
//! struct of its own, whose fields rustc then reports as never read (kube-derive 5.0).
//!
//! ```
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
//! // The derives become `FooSpec::deserialize` and `FooSpec::serialize`, which the macro's
//! // impls of the traits call.
//! #[serde(remote = "Self")]
//! pub struct FooSpec {
//!     pub replicas: i32,
//! }
//!
//! operator_rs_runtime::spec_or_default!(FooSpec);
//!
//! #[derive(Debug, Deserialize)]
//! struct Foo {
//!     spec: FooSpec,
//! }
//!
//! let missing: Foo = serde_json::from_str("{}").unwrap();
//! let null: Foo = serde_json::from_str(r#"{"spec": null}"#).unwrap();
//! let set: Foo = serde_json::from_str(r#"{"spec": {"replicas": 3}}"#).unwrap();
//! assert_eq!(missing.spec, FooSpec::default());
//! assert_eq!(null.spec, FooSpec::default());
//! assert_eq!(set.spec.replicas, 3);
//! ```

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde::{Deserialize, Deserializer};

/// What the impls of [`spec_or_default!`](crate::spec_or_default) need from serde, so that the
/// macro works in a crate that names serde otherwise (or not at all).
#[doc(hidden)]
pub use serde as __serde;

/// The derived `Deserialize` of a type with `#[serde(remote = "Self")]`, which
/// [`spec_or_default!`](crate::spec_or_default) implements for it.
pub trait DerivedDeserialize<'de>: Sized {
    /// Reads the type as its derive does.
    fn derived<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error>;
}

/// A value that is there, read by the type's own derive (and not by [`or_default`] again, which
/// would go round for ever).
struct Present<T>(T);

impl<'de, T: DerivedDeserialize<'de>> Deserialize<'de> for Present<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::derived(deserializer).map(Present)
    }
}

/// Reads a `T`, or `T::default()` where the value is `null` or missing.
///
/// Both reach the type as an option that is `None`: serde's derive reads a struct's missing field
/// through a deserializer whose `deserialize_option` visits none (and fails for anything else),
/// and `null` is `None` in JSON and YAML alike.
pub fn or_default<'de, T, D>(deserializer: D) -> Result<T, D::Error>
where
    T: DerivedDeserialize<'de> + Default,
    D: Deserializer<'de>,
{
    Ok(Option::<Present<T>>::deserialize(deserializer)?
        .map_or_else(T::default, |present| present.0))
}

/// Implements `Deserialize` and `Serialize` for a spec type that derives them with
/// `#[serde(remote = "Self")]` (and derives or implements `Default`): a missing or null spec
/// reads as the default; anything else reads and writes as derived. See the
/// [module](crate::spec).
#[macro_export]
macro_rules! spec_or_default {
    ($spec:ty) => {
        impl<'de> $crate::spec::DerivedDeserialize<'de> for $spec {
            fn derived<D: $crate::spec::__serde::Deserializer<'de>>(
                deserializer: D,
            ) -> ::core::result::Result<Self, D::Error> {
                // The inherent function `#[serde(remote = "Self")]` derives.
                <$spec>::deserialize(deserializer)
            }
        }

        impl<'de> $crate::spec::__serde::Deserialize<'de> for $spec {
            fn deserialize<D: $crate::spec::__serde::Deserializer<'de>>(
                deserializer: D,
            ) -> ::core::result::Result<Self, D::Error> {
                $crate::spec::or_default(deserializer)
            }
        }

        impl $crate::spec::__serde::Serialize for $spec {
            fn serialize<S: $crate::spec::__serde::Serializer>(
                &self,
                serializer: S,
            ) -> ::core::result::Result<S::Ok, S::Error> {
                // The inherent function `#[serde(remote = "Self")]` derives.
                <$spec>::serialize(self, serializer)
            }
        }
    };
}

/// `crd` with `spec` no longer required by any of its versions: for a kind whose spec type is
/// [`spec_or_default!`](crate::spec_or_default), where objects without a spec are valid (a kind
/// migrated from Go, whose CRD did not require one: objects the Go operator stored keep passing
/// validation on every write, status writes included, and `kubectl apply` of an object without a
/// spec is still accepted).
///
/// ```
/// use kube::CustomResourceExt as _;
/// # #[derive(kube::CustomResource, schemars::JsonSchema, Clone, Debug, Default,
/// #     serde::Deserialize, serde::Serialize)]
/// # #[kube(group = "example.com", version = "v1", kind = "Foo")]
/// # #[serde(remote = "Self")]
/// # pub struct FooSpec {}
/// # operator_rs_runtime::spec_or_default!(FooSpec);
/// let crd = operator_rs_runtime::spec::not_required(Foo::crd());
/// let schema = crd.spec.versions[0].schema.as_ref().unwrap();
/// assert_eq!(schema.open_api_v3_schema.as_ref().unwrap().required, None);
/// ```
pub fn not_required(mut crd: CustomResourceDefinition) -> CustomResourceDefinition {
    let roots = crd.spec.versions.iter_mut().filter_map(|version| {
        version
            .schema
            .as_mut()
            .and_then(|schema| schema.open_api_v3_schema.as_mut())
    });
    for root in roots {
        if let Some(required) = &mut root.required {
            required.retain(|field| field != "spec");
            if required.is_empty() {
                root.required = None;
            }
        }
    }
    crd
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};
    use serde_json::json;

    /// A spec with a required field, which `{}` would not read: the default is the type's, not
    /// what an empty object gives.
    #[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
    #[serde(remote = "Self", rename_all = "camelCase")]
    struct ThingSpec {
        secret_name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replicas: Option<i32>,
    }

    crate::spec_or_default!(ThingSpec);

    #[derive(Debug, PartialEq, Deserialize, Serialize)]
    struct Thing {
        metadata: serde_json::Value,
        spec: ThingSpec,
    }

    fn read(value: serde_json::Value) -> Result<Thing, serde_json::Error> {
        serde_json::from_value(value)
    }

    #[test]
    fn a_missing_spec_reads_as_the_default() {
        let thing = read(json!({"metadata": {"name": "a"}})).unwrap();
        assert_eq!(thing.spec, ThingSpec::default());
        assert_eq!(thing.metadata, json!({"name": "a"}));
    }

    #[test]
    fn a_null_spec_reads_as_the_default() {
        let thing = read(json!({"metadata": {}, "spec": null})).unwrap();
        assert_eq!(thing.spec, ThingSpec::default());
        // YAML's null too (`spec:` with nothing after it, or only a comment).
        let yaml: Thing = serde_saphyr::from_str("metadata: {}\nspec: # nothing yet\n").unwrap();
        assert_eq!(yaml.spec, ThingSpec::default());
    }

    #[test]
    fn a_present_spec_reads_as_derived() {
        let thing = read(json!({"metadata": {}, "spec": {"secretName": "s", "replicas": 2}}));
        let spec = thing.unwrap().spec;
        assert_eq!(spec.secret_name, "s");
        assert_eq!(spec.replicas, Some(2));
        // What the derive refuses is still refused: the macro only fills in an absent spec.
        let err = read(json!({"metadata": {}, "spec": {"replicas": 2}})).unwrap_err();
        assert!(
            err.to_string().contains("missing field `secretName`"),
            "{err}"
        );
        let err = read(json!({"metadata": {}, "spec": "text"})).unwrap_err();
        assert!(err.to_string().contains("invalid type: string"), "{err}");
    }

    #[test]
    fn specs_round_trip() {
        let set = json!({"metadata": {}, "spec": {"secretName": "s", "replicas": 2}});
        assert_eq!(
            serde_json::to_value(read(set.clone()).unwrap()).unwrap(),
            set
        );
        // An absent spec is written back as the default, as Go writes its zero value.
        let absent = read(json!({"metadata": {}})).unwrap();
        assert_eq!(
            serde_json::to_value(absent).unwrap(),
            json!({"metadata": {}, "spec": {"secretName": ""}})
        );
    }
}
