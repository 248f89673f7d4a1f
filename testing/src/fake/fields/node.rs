//! Where a value sits in its kind's types, as structured-merge-diff sees it: a node of a custom
//! resource's schema, a type of a built-in kind (and `metadata`, `ObjectMeta`, of every kind), or
//! a value of no known type (`deduced`). A node tells how a list there merges, whether a map
//! there is atomic, and whether a key is one of its declared fields or an entry of a map.

use serde_json::Value;

use super::super::api_types::{ListType as BuiltInList, Ty};
use super::super::kinds::{Kind, ListType};

/// The type of `ObjectMeta`, which CRD schemas leave out.
const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

#[derive(Clone, Copy, Debug)]
enum Type<'a> {
    /// A custom resource's root, or an embedded resource: `metadata` is `ObjectMeta`.
    SchemaRoot(&'a Value),
    /// A node of a CRD's schema.
    Schema(&'a Value),
    /// A built-in type.
    BuiltIn(Ty),
    /// No type is known: maps are granular, lists atomic (structured-merge-diff's deduced type).
    Deduced,
}

/// A position in a kind's types.
#[derive(Clone, Debug)]
pub(in super::super) struct Node<'a> {
    ty: Type<'a>,
    /// How a list here merges.
    pub(in super::super) list: ListType,
    /// Whether a map or struct here is replaced as a whole.
    pub(in super::super) atomic: bool,
}

impl<'a> Node<'a> {
    /// The root of the objects of `kind`.
    pub(in super::super) fn root(kind: &'a Kind) -> Node<'a> {
        let ty = match (kind.built_in_type(), &kind.schema) {
            (Some(ty), _) => Type::BuiltIn(ty),
            (None, Some(schema)) => Type::SchemaRoot(schema),
            (None, None) => Type::Deduced,
        };
        Node {
            ty,
            list: ListType::Atomic,
            atomic: false,
        }
    }

    /// The node of a child: a field or map entry (`Some(key)`), or a list item (`None`).
    pub(in super::super) fn child(&self, key: Option<&str>) -> Node<'a> {
        match (self.ty, key) {
            (Type::BuiltIn(ty), _) => {
                let (list, atomic) = match (ty, key) {
                    (Ty::Named(api_type), Some(key)) => api_type
                        .field(key)
                        .map_or((ListType::Atomic, false), |field| {
                            (list_type(&field.list), field.atomic)
                        }),
                    _ => (ListType::Atomic, false),
                };
                let child = ty.child(key);
                let atomic = atomic || matches!(child, Ty::Named(api_type) if api_type.atomic);
                Node {
                    ty: Type::BuiltIn(child),
                    list,
                    atomic,
                }
            }
            (Type::SchemaRoot(_), Some("metadata")) => Node::built_in(OBJECT_META),
            (Type::Schema(schema), Some("metadata")) if is_embedded(schema) => {
                Node::built_in(OBJECT_META)
            }
            (Type::SchemaRoot(schema) | Type::Schema(schema), key) => {
                let child = match key {
                    Some(key) => schema["properties"]
                        .get(key)
                        .or_else(|| schema.get("additionalProperties").filter(|v| v.is_object())),
                    None => schema.get("items"),
                };
                child.map_or_else(Node::deduced, Node::schema)
            }
            (Type::Deduced, _) => Node::deduced(),
        }
    }

    fn built_in(name: &'static str) -> Node<'a> {
        Node {
            ty: Type::BuiltIn(Ty::parse(name)),
            list: ListType::Atomic,
            atomic: false,
        }
    }

    fn deduced() -> Node<'a> {
        Node {
            ty: Type::Deduced,
            list: ListType::Atomic,
            atomic: false,
        }
    }

    fn schema(schema: &'a Value) -> Node<'a> {
        let list = match schema["x-kubernetes-list-type"].as_str() {
            Some("map") => ListType::Map(
                schema["x-kubernetes-list-map-keys"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|key| key.as_str().map(str::to_owned))
                    .collect(),
            ),
            Some("set") => ListType::Set,
            _ => ListType::Atomic,
        };
        let ty = if is_embedded(schema) {
            Type::SchemaRoot(schema)
        } else {
            Type::Schema(schema)
        };
        Node {
            ty,
            list,
            atomic: schema["x-kubernetes-map-type"] == "atomic",
        }
    }

    /// Whether `key` is a declared field of an object here (not an entry of a map).
    pub(in super::super) fn declares(&self, key: &str) -> bool {
        match self.ty {
            Type::SchemaRoot(schema) => {
                matches!(key, "apiVersion" | "kind" | "metadata")
                    || schema["properties"].get(key).is_some()
            }
            Type::Schema(schema) => schema["properties"].get(key).is_some(),
            Type::BuiltIn(ty) => ty.declares(key),
            Type::Deduced => false,
        }
    }
}

fn is_embedded(schema: &Value) -> bool {
    schema["x-kubernetes-embedded-resource"] == true
}

fn list_type(list: &BuiltInList) -> ListType {
    match list {
        BuiltInList::Atomic => ListType::Atomic,
        BuiltInList::Set => ListType::Set,
        BuiltInList::Map(keys) => ListType::Map(keys.iter().map(|k| (*k).to_owned()).collect()),
    }
}
