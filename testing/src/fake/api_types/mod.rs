//! The types of the built-in kinds as the API server knows them (the table of `api_types.rs`,
//! generated from Kubernetes' OpenAPI schemas and Go types), and a walk of an object along them:
//! which type a field has, how a list merges, which fields Go writes even when empty.

#[rustfmt::skip]
mod table;

use serde_json::Value;

use table::API_TYPES;

/// One type of the table (an OpenAPI definition: `io.k8s.api.core.v1.Container`).
pub(super) struct ApiType {
    pub(super) name: &'static str,
    /// `x-kubernetes-map-type: atomic`: replaced as a whole by merges and applies
    /// (`LabelSelector`).
    pub(super) atomic: bool,
    /// Sorted by name.
    pub(super) fields: &'static [ApiField],
}

/// One field of a type.
pub(super) struct ApiField {
    pub(super) name: &'static str,
    /// The field's type: a type of the table, `[]<type>`, `map[]<type>`, or a scalar (`string`,
    /// `integer`, `boolean`, `number`, `object`).
    pub(super) ty: &'static str,
    /// How a list merges (server-side apply, managed fields).
    pub(super) list: ListType,
    /// How a strategic merge patch merges the field.
    pub(super) patch: Patch,
    /// `x-kubernetes-map-type: atomic` on the field.
    pub(super) atomic: bool,
    /// What Go writes for the field when it is empty, if it writes it at all.
    pub(super) zero: Option<Zero>,
    /// Whether Go leaves the field out when it is empty (`omitempty` on a list, a map, a
    /// string, a number or a boolean).
    pub(super) omit_empty: bool,
}

/// How server-side apply merges a list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum ListType {
    /// Replaced as a whole, owned as one field.
    Atomic,
    /// A map keyed by these fields of its items (`x-kubernetes-list-type: map`, or the strategic
    /// merge key of a list without a list type).
    Map(&'static [&'static str]),
    /// A set of scalars.
    Set,
}

/// How a strategic merge patch treats a field (`x-kubernetes-patch-strategy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Patch {
    /// `merge`: a list merged item by item (by `key`, or as a set of scalars without one).
    pub(super) merge: bool,
    /// `x-kubernetes-patch-merge-key`, or `""`.
    pub(super) key: &'static str,
    /// `retainKeys`: the fields of the object the patch does not name are cleared.
    pub(super) retain_keys: bool,
}

/// What Go's encoding/json writes for a field whose value is empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Zero {
    Null,
    /// A struct: `{}`, with its own fields that Go writes.
    Object,
    Str(&'static str),
    Int,
    Bool,
}

/// The type of the table named `name`.
pub(super) fn api_type(name: &str) -> Option<&'static ApiType> {
    API_TYPES
        .binary_search_by(|api_type| api_type.name.cmp(name))
        .ok()
        .map(|index| &API_TYPES[index])
}

impl ApiType {
    pub(super) fn field(&self, name: &str) -> Option<&'static ApiField> {
        self.fields
            .binary_search_by(|field| field.name.cmp(name))
            .ok()
            .map(|index| &self.fields[index])
    }
}

/// A field's type, read from its expression.
#[derive(Clone, Copy)]
pub(super) enum Ty {
    /// A type of the table.
    Named(&'static ApiType),
    /// A list of items of the inner expression.
    List(&'static str),
    /// A map of values of the inner expression.
    Map(&'static str),
    /// A scalar, or an object of unknown fields.
    Scalar,
}

impl std::fmt::Debug for Ty {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ty::Named(api_type) => write!(f, "{}", api_type.name),
            Ty::List(items) => write!(f, "[]{items}"),
            Ty::Map(values) => write!(f, "map[]{values}"),
            Ty::Scalar => write!(f, "scalar"),
        }
    }
}

impl PartialEq for Ty {
    fn eq(&self, other: &Ty) -> bool {
        format!("{self:?}") == format!("{other:?}")
    }
}

impl Ty {
    pub(super) fn parse(expression: &'static str) -> Ty {
        if let Some(items) = expression.strip_prefix("[]") {
            Ty::List(items)
        } else if let Some(values) = expression.strip_prefix("map[]") {
            Ty::Map(values)
        } else {
            api_type(expression).map_or(Ty::Scalar, Ty::Named)
        }
    }

    /// The type of a child of a value of this type: a field of an object, a value of a map,
    /// an item of a list (`key` is `None`).
    pub(super) fn child(self, key: Option<&str>) -> Ty {
        match (self, key) {
            (Ty::Named(api_type), Some(key)) => api_type
                .field(key)
                .map_or(Ty::Scalar, |field| Ty::parse(field.ty)),
            (Ty::Map(values), Some(_)) => Ty::parse(values),
            (Ty::List(items), None) => Ty::parse(items),
            _ => Ty::Scalar,
        }
    }

    /// Whether `key` is a declared field of this type (not an entry of a map).
    pub(super) fn declares(self, key: &str) -> bool {
        matches!(self, Ty::Named(api_type) if api_type.field(key).is_some())
    }
}

/// Writes `value` (of type `ty`) as Go's encoding/json writes the API server's objects: the
/// empty fields Go writes added (`"creationTimestamp": null` in a pod template's metadata,
/// `"resources": {}` in a container, `"status": {}`), those it leaves out when empty removed
/// (`"labels": {}`, `"data": {}`, `"x-kubernetes-validations": []`).
pub(super) fn as_go_writes(ty: Ty, value: &mut Value) {
    match (ty, value) {
        (Ty::Named(api_type), Value::Object(fields)) => {
            fields.retain(|key, value| {
                let omitted = api_type
                    .field(key)
                    .is_some_and(|field| field.omit_empty && is_go_empty(value));
                !omitted
            });
            for field in api_type.fields {
                if let (Some(zero), false) = (field.zero, fields.contains_key(field.name)) {
                    fields.insert(field.name.to_owned(), zero_value(zero));
                }
            }
            for (key, child) in fields.iter_mut() {
                as_go_writes(ty.child(Some(key)), child);
            }
        }
        (Ty::Map(_), Value::Object(fields)) => {
            for (key, child) in fields.iter_mut() {
                as_go_writes(ty.child(Some(key)), child);
            }
        }
        (Ty::List(_), Value::Array(items)) => {
            for item in items {
                as_go_writes(ty.child(None), item);
            }
        }
        _ => {}
    }
}

/// Whether Go's `omitempty` takes `value` for empty.
fn is_go_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(flag) => !flag,
        Value::Number(number) => number.as_f64() == Some(0.0),
        Value::String(text) => text.is_empty(),
        Value::Array(items) => items.is_empty(),
        Value::Object(fields) => fields.is_empty(),
    }
}

fn zero_value(zero: Zero) -> Value {
    match zero {
        Zero::Null => Value::Null,
        Zero::Object => Value::Object(serde_json::Map::new()),
        Zero::Str(text) => Value::String(text.to_owned()),
        Zero::Int => Value::from(0),
        Zero::Bool => Value::Bool(false),
    }
}

/// Removes the fields of `value` (of type `ty`, at `path`) that its type does not declare, as
/// Go's decoder drops them, and returns their paths (`spec.colour`). Types without declared
/// fields (free-form JSON, raw extensions) keep everything.
pub(super) fn prune_unknown(ty: Ty, value: &mut Value, path: &str, pruned: &mut Vec<String>) {
    let child_path = |key: &str| {
        if path.is_empty() {
            key.to_owned()
        } else {
            format!("{path}.{key}")
        }
    };
    match (ty, value) {
        (Ty::Named(api_type), Value::Object(fields)) if !api_type.fields.is_empty() => {
            fields.retain(|key, _| {
                let known = api_type.field(key).is_some();
                if !known {
                    pruned.push(child_path(key));
                }
                known
            });
            for (key, child) in fields.iter_mut() {
                prune_unknown(ty.child(Some(key)), child, &child_path(key), pruned);
            }
        }
        (Ty::Map(_), Value::Object(fields)) => {
            for (key, child) in fields.iter_mut() {
                prune_unknown(ty.child(Some(key)), child, &child_path(key), pruned);
            }
        }
        (Ty::List(_), Value::Array(items)) => {
            for (index, item) in items.iter_mut().enumerate() {
                prune_unknown(ty.child(None), item, &format!("{path}[{index}]"), pruned);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_table_is_sorted_and_walks_a_deployment() {
        assert!(API_TYPES.windows(2).all(|pair| pair[0].name < pair[1].name));
        assert!(
            API_TYPES
                .iter()
                .all(|t| t.fields.windows(2).all(|pair| pair[0].name < pair[1].name))
        );
        let deployment = Ty::parse("io.k8s.api.apps.v1.Deployment");
        let containers = deployment
            .child(Some("spec"))
            .child(Some("template"))
            .child(Some("spec"))
            .child(Some("containers"));
        assert!(matches!(
            containers,
            Ty::List("io.k8s.api.core.v1.Container")
        ));
        let mut object = json!({
            "spec": { "template": { "metadata": { "labels": { "a": "b" } }, "spec": {
                "containers": [{ "name": "c", "image": "i" }],
            } } },
        });
        as_go_writes(deployment, &mut object);
        assert_eq!(object["status"], json!({}));
        assert_eq!(
            object["spec"]["template"]["metadata"]["creationTimestamp"],
            Value::Null
        );
        assert_eq!(
            object["spec"]["template"]["spec"]["containers"][0]["resources"],
            json!({})
        );
        assert_eq!(object["spec"]["selector"], Value::Null);
    }
}
