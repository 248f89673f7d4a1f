//! Paths into objects as structured-merge-diff names them (a field, the item of a keyed list,
//! the element of a set), sets of them, and their two printed forms: `metadata.managedFields`'
//! `FieldsV1` and the `.spec.size` of apply conflicts.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

/// One step of a path into an object: a map key, the item of a keyed list (its key fields as
/// canonical JSON, `{"type":"Available"}`), or the element of a set (as canonical JSON).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(in super::super) enum Step {
    Field(String),
    Key(String),
    Value(String),
}

/// A path from the root of an object.
pub(in super::super) type Path = Vec<Step>;

/// A set of paths: the fields a manager owns, or what a comparison found.
pub(in super::super) type FieldSet = BTreeSet<Path>;

/// The key fields of a keyed list's item, as canonical JSON (fields sorted), or `None` when
/// it lacks one.
pub(in super::super) fn item_key(item: &Value, keys: &[String]) -> Option<String> {
    let mut sorted: Vec<&String> = keys.iter().collect();
    sorted.sort();
    let fields: Vec<String> = sorted
        .into_iter()
        .map(|key| Some(format!("{}:{}", Value::from(key.as_str()), item.get(key)?)))
        .collect::<Option<_>>()?;
    Some(format!("{{{}}}", fields.join(",")))
}

/// Whether `item` is the list item that `step` names.
pub(in super::super) fn is_item(item: &Value, step: &Step) -> bool {
    match step {
        Step::Field(_) => false,
        Step::Key(key) => serde_json::from_str::<Map<String, Value>>(key).is_ok_and(|key| {
            key.iter()
                .all(|(field, value)| item.get(field) == Some(value))
        }),
        Step::Value(value) => serde_json::from_str::<Value>(value).is_ok_and(|v| *item == v),
    }
}

fn child<'a>(value: &'a Value, step: &Step) -> Option<&'a Value> {
    match step {
        Step::Field(key) => value.as_object()?.get(key),
        _ => value.as_array()?.iter().find(|item| is_item(item, step)),
    }
}

/// The value at `path` in `object`, if there is one.
pub(in super::super) fn get<'a>(object: &'a Value, path: &[Step]) -> Option<&'a Value> {
    path.iter().try_fold(object, child)
}

/// Removes the field at `path`, and the maps and lists that this leaves empty (below the top
/// level: `spec` and `status` stay).
pub(in super::super) fn remove(object: &mut Value, path: &[Step]) {
    fn remove_in(value: &mut Value, path: &[Step], depth: usize) -> bool {
        let Some((step, rest)) = path.split_first() else {
            return false;
        };
        if rest.is_empty() {
            return match (value, step) {
                (Value::Object(map), Step::Field(key)) => map.remove(key).is_some(),
                (Value::Array(items), step) => {
                    let before = items.len();
                    items.retain(|item| !is_item(item, step));
                    items.len() != before
                }
                _ => false,
            };
        }
        let removed = match (&mut *value, step) {
            (Value::Object(map), Step::Field(key)) => match map.get_mut(key) {
                Some(child) => remove_in(child, rest, depth + 1),
                None => false,
            },
            (Value::Array(items), step) => match items.iter_mut().find(|i| is_item(i, step)) {
                Some(child) => remove_in(child, rest, depth + 1),
                None => false,
            },
            _ => false,
        };
        if removed && depth >= 1 {
            let empty = |v: &Value| match v {
                Value::Object(map) => map.is_empty(),
                Value::Array(items) => items.is_empty(),
                _ => false,
            };
            if let (Value::Object(map), Step::Field(key)) = (value, step)
                && map.get(key).is_some_and(empty)
            {
                map.remove(key);
            }
        }
        removed
    }
    remove_in(object, path, 0);
}

/// A path as the API server shows it in conflicts: `.spec.replicas`,
/// `.status.conditions[type="Available"]`, `.metadata.finalizers[="x"]`.
pub(in super::super) fn display(path: &[Step]) -> String {
    path.iter()
        .map(|step| match step {
            Step::Field(key) => format!(".{key}"),
            Step::Key(key) => {
                let key: Map<String, Value> = serde_json::from_str(key).unwrap_or_default();
                let fields: Vec<String> = key.iter().map(|(k, v)| format!("{k}={v}")).collect();
                format!("[{}]", fields.join(","))
            }
            Step::Value(value) => format!("[={value}]"),
        })
        .collect()
}

/// A field set in the `FieldsV1` format of `managedFields`: a path that is in the set and has
/// paths below it in the set too is marked `"."`.
pub(in super::super) fn fields_v1(fields: &FieldSet) -> Value {
    let mut root = Map::new();
    for path in fields {
        let mut node = &mut root;
        for step in path {
            let name = match step {
                Step::Field(key) => format!("f:{key}"),
                Step::Key(key) => format!("k:{key}"),
                Step::Value(value) => format!("v:{value}"),
            };
            let child = node.entry(name).or_insert_with(|| json!({}));
            node = child.as_object_mut().expect("only objects are inserted");
        }
    }
    for path in fields {
        let has_children = fields
            .range(path.clone()..)
            .nth(1)
            .is_some_and(|next| next.starts_with(path));
        if has_children {
            let mut node = &mut root;
            for step in path {
                let name = match step {
                    Step::Field(key) => format!("f:{key}"),
                    Step::Key(key) => format!("k:{key}"),
                    Step::Value(value) => format!("v:{value}"),
                };
                node = node
                    .get_mut(&name)
                    .and_then(Value::as_object_mut)
                    .expect("inserted above");
            }
            node.insert(".".to_owned(), json!({}));
        }
    }
    Value::Object(root)
}

/// Reads `FieldsV1` back into a set.
#[cfg(test)]
fn from_fields_v1(fields: &Value) -> FieldSet {
    fn walk(node: &Value, path: &mut Path, set: &mut FieldSet) {
        let Some(children) = node.as_object() else {
            return;
        };
        let mut has_children = false;
        for (name, child) in children {
            let step = if let Some(key) = name.strip_prefix("f:") {
                Step::Field(key.to_owned())
            } else if let Some(key) = name.strip_prefix("k:") {
                Step::Key(key.to_owned())
            } else if let Some(value) = name.strip_prefix("v:") {
                Step::Value(value.to_owned())
            } else {
                continue;
            };
            has_children = true;
            path.push(step);
            walk(child, path, set);
            path.pop();
        }
        if !path.is_empty() && (!has_children || children.contains_key(".")) {
            set.insert(path.clone());
        }
    }
    let mut set = FieldSet::new();
    walk(fields, &mut Vec::new(), &mut set);
    set
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(steps: &[&str]) -> Path {
        steps.iter().map(|s| Step::Field((*s).to_owned())).collect()
    }

    #[test]
    fn fields_v1_marks_owned_parents() {
        let set: FieldSet = [
            path(&["spec"]),
            path(&["spec", "size"]),
            path(&["metadata", "labels", "a"]),
        ]
        .into_iter()
        .collect();
        let rendered = fields_v1(&set);
        assert_eq!(
            rendered,
            json!({ "f:spec": { ".": {}, "f:size": {} }, "f:metadata": { "f:labels": { "f:a": {} } } })
        );
        assert_eq!(from_fields_v1(&rendered), set);
        assert_eq!(
            display(&[
                Step::Field("status".into()),
                Step::Key(r#"{"type":"B"}"#.into())
            ]),
            r#".status[type="B"]"#
        );
    }
}
