//! Conversion webhooks: the machinery that converts custom resources between the versions of a
//! kind, served at `/convert` (the CRDs point there: see `config/crd/patches/webhook_in_*.yaml`).
//!
//! The API server stores every object of a kind in one version (the storage version) and asks
//! this webhook to convert whenever someone reads or writes another version. Like kubebuilder,
//! each kind has a *hub* version (its storage version) and *spokes*: every spoke converts to and
//! from the hub with Rust's `From` (or `TryFrom`, for conversions that can fail), and a
//! [`Converter`] chains them, spoke → hub → spoke, so that N versions need 2·(N-1)
//! conversions instead of N·(N-1).
//!
//! Conversions must not lose information: an object read in one version and written back must
//! come out unchanged. Fields that only one version has can be kept in an annotation.

use std::fmt;
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};

use kube::core::Resource;
use kube::core::Status;
use kube::core::conversion::{ConversionRequest, ConversionResponse, ConversionReview};
use serde::de::{Deserialize as _, DeserializeOwned};
use serde::ser::Serialize;
use serde_json::Value;

use super::admission::panic_message;

/// The path of the conversion webhook; all kinds share it, and objects are told apart by their
/// `apiVersion` and `kind`.
pub const CONVERT_PATH: &str = "/convert";

/// Converts one version of a kind to and from the hub version `Hub`.
///
/// `Spoke::new::<v2::Captain>()` needs `Hub: TryFrom<v2::Captain>` and
/// `v2::Captain: TryFrom<Hub>`, which every pair of `From` implementations provides.
pub struct Spoke<Hub> {
    api_version: String,
    to_hub: fn(Value) -> Result<Value, String>,
    from_hub: fn(Value) -> Result<Value, String>,
    hub: PhantomData<fn() -> Hub>,
}

impl<Hub> Spoke<Hub>
where
    Hub: Resource<DynamicType = ()> + Serialize + DeserializeOwned,
{
    /// The spoke version `S`, converted with its `TryFrom` (or `From`) implementations.
    pub fn new<S>() -> Self
    where
        S: Resource<DynamicType = ()> + Serialize + DeserializeOwned + TryFrom<Hub>,
        <S as TryFrom<Hub>>::Error: fmt::Display,
        Hub: TryFrom<S>,
        <Hub as TryFrom<S>>::Error: fmt::Display,
    {
        Spoke {
            api_version: S::api_version(&()).into_owned(),
            to_hub: convert::<S, Hub>,
            from_hub: convert::<Hub, S>,
            hub: PhantomData,
        }
    }
}

/// Decodes an object as `From`, converts it into `To` and encodes it again.
fn convert<From, To>(object: Value) -> Result<Value, String>
where
    From: DeserializeOwned,
    To: TryFrom<From> + Serialize,
    <To as TryFrom<From>>::Error: fmt::Display,
{
    let object = From::deserialize(object).map_err(|error| format!("cannot decode: {error}"))?;
    let converted = To::try_from(object).map_err(|error| error.to_string())?;
    serde_json::to_value(converted).map_err(|error| format!("cannot encode: {error}"))
}

/// A spoke without its hub type, as the [`Converter`] keeps it.
struct ErasedSpoke {
    api_version: String,
    to_hub: fn(Value) -> Result<Value, String>,
    from_hub: fn(Value) -> Result<Value, String>,
}

/// Converts the objects of one kind between its hub version and its spokes.
pub struct Converter {
    group: String,
    kind: String,
    plural: String,
    hub: String,
    spokes: Vec<ErasedSpoke>,
}

impl fmt::Debug for Converter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let spokes: Vec<&str> = self.spokes.iter().map(|s| s.api_version.as_str()).collect();
        f.debug_struct("Converter")
            .field("kind", &self.kind)
            .field("hub", &self.hub)
            .field("spokes", &spokes)
            .finish()
    }
}

impl Converter {
    /// A converter for the kind of `Hub`, with `Hub` as the hub version.
    pub fn new<Hub: Resource<DynamicType = ()>>(spokes: Vec<Spoke<Hub>>) -> Self {
        Converter {
            group: Hub::group(&()).into_owned(),
            kind: Hub::kind(&()).into_owned(),
            plural: Hub::plural(&()).into_owned(),
            hub: Hub::api_version(&()).into_owned(),
            spokes: spokes
                .into_iter()
                .map(|spoke| ErasedSpoke {
                    api_version: spoke.api_version,
                    to_hub: spoke.to_hub,
                    from_hub: spoke.from_hub,
                })
                .collect(),
        }
    }

    /// The API group of the kind.
    pub fn group(&self) -> &str {
        &self.group
    }

    /// The kind this converter converts.
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// The name of the kind's CRD, `<plural>.<group>`: where its conversion webhook is
    /// registered.
    pub fn crd_name(&self) -> String {
        format!("{}.{}", self.plural, self.group)
    }

    /// The `apiVersion`s this converter handles: the hub's first.
    pub fn api_versions(&self) -> Vec<&str> {
        let spokes = self.spokes.iter().map(|spoke| spoke.api_version.as_str());
        std::iter::once(self.hub.as_str()).chain(spokes).collect()
    }

    fn handles(&self, api_version: &str, kind: &str) -> bool {
        kind == self.kind && self.api_versions().contains(&api_version)
    }

    fn spoke(&self, api_version: &str) -> Result<&ErasedSpoke, String> {
        self.spokes
            .iter()
            .find(|spoke| spoke.api_version == api_version)
            .ok_or_else(|| format!("no conversion between {} and {api_version}", self.hub))
    }

    /// Converts one object to `desired_api_version`, through the hub.
    pub fn convert(&self, object: Value, desired_api_version: &str) -> Result<Value, String> {
        let current = object["apiVersion"].as_str().unwrap_or_default().to_owned();
        if current == desired_api_version {
            return Ok(object);
        }
        let metadata = object.get("metadata").cloned();
        let hub = if current == self.hub {
            object
        } else {
            (self.spoke(&current)?.to_hub)(object)?
        };
        let mut converted = if desired_api_version == self.hub {
            hub
        } else {
            (self.spoke(desired_api_version)?.from_hub)(hub)?
        };
        // The API server refuses conversions that change the metadata, except labels and
        // annotations; keep it byte for byte, so that fields the Rust type does not know survive.
        if let (Some(mut metadata), Some(object)) = (metadata, converted.as_object_mut()) {
            for key in ["labels", "annotations"] {
                match object.get("metadata").and_then(|m| m.get(key)) {
                    Some(value) => metadata[key] = value.clone(),
                    None => {
                        if let Some(metadata) = metadata.as_object_mut() {
                            metadata.remove(key);
                        }
                    }
                }
            }
            object.insert("metadata".to_owned(), metadata);
        }
        Ok(converted)
    }
}

/// Answers a `ConversionReview` (the JSON the API server posted) with `converters`. Never panics:
/// reviews that cannot be decoded or converted get a failed response that says why.
pub fn review(converters: &[Converter], review: &Value) -> ConversionReview {
    let request = ConversionReview::deserialize(review)
        .map_err(|error| format!("cannot decode the ConversionReview: {error}"))
        .and_then(|review| {
            ConversionRequest::from_review(review).map_err(|error| error.to_string())
        });
    let mut request = match request {
        Ok(request) => request,
        Err(message) => {
            tracing::warn!(%message, "invalid ConversionReview");
            let mut response =
                ConversionResponse::invalid(Status::failure(&message, "BadRequest").with_code(400));
            response.uid = review
                .pointer("/request/uid")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            return response.into_review();
        }
    };
    let objects = std::mem::take(&mut request.objects);
    let desired = request.desired_api_version.clone();
    // The conversions are plain functions without shared state: answering after a panic is safe.
    let converted = catch_unwind(AssertUnwindSafe(|| {
        objects
            .into_iter()
            .map(|object| convert_one(converters, object, &desired))
            .collect::<Result<Vec<_>, _>>()
    }))
    .unwrap_or_else(|panic| {
        Err(format!(
            "the conversion panicked: {}",
            panic_message(panic.as_ref())
        ))
    });
    let response = ConversionResponse::for_request(request);
    match converted {
        Ok(objects) => response.success(objects),
        Err(message) => {
            tracing::warn!(%message, desired_api_version = %desired, "conversion failed");
            response.failure(Status::failure(&message, "InternalError").with_code(500))
        }
    }
    .into_review()
}

/// Finds the converter for `object`'s kind and converts it.
fn convert_one(converters: &[Converter], object: Value, desired: &str) -> Result<Value, String> {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let kind = object["kind"].as_str().unwrap_or_default();
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let describe = format!("{kind} {name:?} ({api_version})");
    let converter = converters
        .iter()
        .find(|converter| converter.handles(api_version, kind))
        .ok_or_else(|| format!("{describe}: this webhook does not convert {kind} {api_version}"))?;
    if !converter.handles(desired, kind) {
        return Err(format!("{describe}: cannot convert to {desired}"));
    }
    converter
        .convert(object, desired)
        .map_err(|error| format!("{describe}: cannot convert to {desired}: {error}"))
}

#[cfg(test)]
mod tests {
    use kube::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};
    use serde_json::json;

    use super::*;

    /// Two versions of a test-only kind: v1 (the hub) has `size`, v2 splits it into `width` and
    /// `height`; v2 → v1 fails when they differ, to test failures.
    mod v1 {
        use super::*;

        #[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
        #[kube(
            group = "test.example.com",
            version = "v1",
            kind = "Parcel",
            namespaced
        )]
        pub struct ParcelSpec {
            pub size: u32,
        }
    }

    mod v2 {
        use super::*;

        #[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
        #[kube(
            group = "test.example.com",
            version = "v2",
            kind = "Parcel",
            namespaced
        )]
        pub struct ParcelSpec {
            pub width: u32,
            pub height: u32,
        }
    }

    impl From<v1::Parcel> for v2::Parcel {
        fn from(hub: v1::Parcel) -> Self {
            let spec = v2::ParcelSpec {
                width: hub.spec.size,
                height: hub.spec.size,
            };
            v2::Parcel {
                metadata: hub.metadata,
                spec,
            }
        }
    }

    impl TryFrom<v2::Parcel> for v1::Parcel {
        type Error = String;

        fn try_from(spoke: v2::Parcel) -> Result<Self, Self::Error> {
            if spoke.spec.width != spoke.spec.height {
                return Err("only square parcels convert to v1".to_owned());
            }
            let spec = v1::ParcelSpec {
                size: spoke.spec.width,
            };
            Ok(v1::Parcel {
                metadata: spoke.metadata,
                spec,
            })
        }
    }

    fn converters() -> Vec<Converter> {
        vec![Converter::new::<v1::Parcel>(vec![
            Spoke::new::<v2::Parcel>(),
        ])]
    }

    fn conversion_review(desired: &str, objects: Value) -> Value {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "ConversionReview",
            "request": {"uid": "42", "desiredAPIVersion": desired, "objects": objects}
        })
    }

    fn v1_parcel(name: &str, size: u32) -> Value {
        json!({
            "apiVersion": "test.example.com/v1",
            "kind": "Parcel",
            "metadata": {
                "name": name,
                "namespace": "default",
                "uid": "6d4a2f1e",
                "labels": {"app": "boxes"},
                "futureMetadataField": true,
            },
            "spec": {"size": size},
        })
    }

    #[test]
    fn knows_its_versions() {
        let converters = converters();
        assert_eq!(converters[0].group(), "test.example.com");
        assert_eq!(converters[0].kind(), "Parcel");
        assert_eq!(
            converters[0].api_versions(),
            ["test.example.com/v1", "test.example.com/v2"]
        );
    }

    #[test]
    fn converts_hub_to_spoke_and_back_keeping_the_metadata() {
        let original = v1_parcel("a", 3);
        let review = review(
            &converters(),
            &conversion_review("test.example.com/v2", json!([original])),
        );
        assert_eq!(review.types.api_version, "apiextensions.k8s.io/v1");
        let response = review.response.unwrap();
        assert_eq!(response.uid, "42");
        assert!(response.result.is_success(), "{:?}", response.result);
        let spoke = &response.converted_objects[0];
        assert_eq!(spoke["apiVersion"], "test.example.com/v2");
        assert_eq!(spoke["spec"], json!({"width": 3, "height": 3}));
        assert_eq!(spoke["metadata"], original["metadata"]);

        let back = super::review(
            &converters(),
            &conversion_review("test.example.com/v1", json!([spoke])),
        );
        assert_eq!(back.response.unwrap().converted_objects, [original]);
    }

    #[test]
    fn objects_already_in_the_desired_version_are_untouched() {
        let object = v1_parcel("a", 3);
        let review = review(
            &converters(),
            &conversion_review("test.example.com/v1", json!([object])),
        );
        assert_eq!(review.response.unwrap().converted_objects, [object]);
    }

    #[test]
    fn failed_conversions_fail_the_whole_review() {
        let square = json!({"apiVersion": "test.example.com/v2", "kind": "Parcel",
            "metadata": {"name": "square"}, "spec": {"width": 2, "height": 2}});
        let oblong = json!({"apiVersion": "test.example.com/v2", "kind": "Parcel",
            "metadata": {"name": "oblong"}, "spec": {"width": 2, "height": 1}});
        let review = review(
            &converters(),
            &conversion_review("test.example.com/v1", json!([square, oblong])),
        );
        let response = review.response.unwrap();
        assert_eq!(response.uid, "42");
        assert!(response.result.is_failure());
        assert!(
            response.result.message.contains("only square parcels"),
            "{}",
            response.result.message
        );
        assert!(response.converted_objects.is_empty());
    }

    #[test]
    fn unknown_kinds_and_versions_fail() {
        let other_kind = json!({"apiVersion": "test.example.com/v1", "kind": "Letter",
            "metadata": {"name": "c"}, "spec": {}});
        let undecodable = json!({"apiVersion": "test.example.com/v2", "kind": "Parcel",
            "metadata": {"name": "b"}, "spec": {"width": "wide"}});
        for (desired, object) in [
            ("test.example.com/v2", other_kind),
            ("test.example.com/v3", v1_parcel("a", 1)),
            ("test.example.com/v1", undecodable),
        ] {
            let review = review(&converters(), &conversion_review(desired, json!([object])));
            let response = review.response.unwrap();
            assert!(response.result.is_failure(), "{desired} {object}");
            assert_eq!(response.uid, "42");
        }
    }

    #[test]
    fn malformed_reviews_are_answered_with_their_uid() {
        for (review, uid) in [
            (json!({"request": {"uid": "7", "objects": "none"}}), "7"),
            (
                json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview"}),
                "",
            ),
            (json!([1, 2]), ""),
        ] {
            let answer = super::review(&converters(), &review);
            let response = answer.response.unwrap();
            assert!(response.result.is_failure(), "{review}");
            assert_eq!(response.uid, uid);
        }
    }
}
