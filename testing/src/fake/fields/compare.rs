//! The three walks of structured-merge-diff that field ownership needs: the comparison of an
//! object before and after a write (which fields were added, modified, removed), the fields an
//! applied configuration names, and the merge of an applied configuration into an object.

use serde_json::{Map, Value};

use super::node::Node;
use super::paths::{FieldSet, Path, Step, is_item, item_key};
use crate::fake::kinds::ListType;

/// What a write changed: as structured-merge-diff's `Comparison`.
#[derive(Debug, Default)]
pub(in super::super) struct Comparison {
    pub(in super::super) added: FieldSet,
    pub(in super::super) modified: FieldSet,
    pub(in super::super) removed: FieldSet,
}

impl Comparison {
    /// Drops every path under one of `roots` (the fields a write of a subresource cannot
    /// change).
    pub(in super::super) fn exclude(&mut self, roots: &[Path]) {
        for set in [&mut self.added, &mut self.modified, &mut self.removed] {
            set.retain(|path| !roots.iter().any(|root| path.starts_with(root)));
        }
    }

    pub(in super::super) fn is_same(&self) -> bool {
        self.added.is_empty() && self.modified.is_empty() && self.removed.is_empty()
    }
}

/// The items of a list as structured-merge-diff tells them apart: by their key fields, by
/// their value (a set), or none (an atomic list, a leaf).
fn items<'v>(list: &ListType, items: &'v [Value]) -> Option<Vec<(Step, &'v Value)>> {
    match list {
        ListType::Map(keys) if !keys.is_empty() => items
            .iter()
            .map(|item| Some((Step::Key(item_key(item, keys)?), item)))
            .collect(),
        ListType::Set if items.iter().all(|i| !i.is_object() && !i.is_array()) => Some(
            items
                .iter()
                .map(|item| (Step::Value(item.to_string()), item))
                .collect(),
        ),
        _ => None,
    }
}

fn is_empty(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => true,
        Some(Value::Object(map)) => map.is_empty(),
        Some(Value::Array(items)) => items.is_empty(),
        Some(_) => false,
    }
}

/// Compares `old` with `new` at `node` (`path`), as structured-merge-diff does: a leaf (a
/// scalar, an atomic list or map, or a map or list empty on both sides) is added, removed or
/// modified; a map or list is added or removed itself when it appears or goes, and its children
/// are compared.
pub(in super::super) fn compare(
    node: &Node,
    old: Option<&Value>,
    new: Option<&Value>,
    path: &mut Path,
    out: &mut Comparison,
) {
    let is_map = |v: Option<&Value>| matches!(v, Some(Value::Object(_)));
    let is_list = |v: Option<&Value>| matches!(v, Some(Value::Array(_)));
    let container = (is_map(old) || is_map(new)) && !node.atomic
        || (is_list(old) || is_list(new)) && node.list != ListType::Atomic;
    let leaf = !container || (is_empty(old) && is_empty(new));
    if leaf {
        match (old, new) {
            (None, Some(_)) => {
                out.added.insert(path.clone());
            }
            (Some(_), None) => {
                out.removed.insert(path.clone());
            }
            (Some(a), Some(b)) if a != b => {
                out.modified.insert(path.clone());
            }
            _ => {}
        }
        return;
    }
    if is_map(old) || is_map(new) {
        compare_maps(node, old, new, path, out);
    } else {
        compare_lists(node, old, new, path, out);
    }
    if old.is_none() {
        out.added.insert(path.clone());
    } else if new.is_none() {
        out.removed.insert(path.clone());
    }
}

fn compare_maps(
    node: &Node,
    old: Option<&Value>,
    new: Option<&Value>,
    path: &mut Path,
    out: &mut Comparison,
) {
    let empty = Map::new();
    let old = old.and_then(Value::as_object).unwrap_or(&empty);
    let new = new.and_then(Value::as_object).unwrap_or(&empty);
    let mut keys: Vec<&String> = old.keys().chain(new.keys()).collect();
    keys.sort();
    keys.dedup();
    for key in keys {
        path.push(Step::Field(key.clone()));
        compare(
            &node.child(Some(key)),
            old.get(key),
            new.get(key),
            path,
            out,
        );
        path.pop();
    }
}

fn compare_lists(
    node: &Node,
    old: Option<&Value>,
    new: Option<&Value>,
    path: &mut Path,
    out: &mut Comparison,
) {
    let empty = Vec::new();
    let old = old.and_then(Value::as_array).unwrap_or(&empty);
    let new = new.and_then(Value::as_array).unwrap_or(&empty);
    let (Some(old_items), Some(new_items)) = (items(&node.list, old), items(&node.list, new))
    else {
        // Items that cannot be told apart: the list is compared as a leaf.
        if old != new {
            out.modified.insert(path.clone());
        }
        return;
    };
    let item_node = node.child(None);
    let mut steps: Vec<&Step> = old_items.iter().chain(&new_items).map(|(s, _)| s).collect();
    steps.sort();
    steps.dedup();
    for step in steps {
        let (a, b) = (find(&old_items, step), find(&new_items, step));
        path.push(step.clone());
        compare(&item_node, a, b, path, out);
        path.pop();
    }
}

/// The item of `items` that `step` names.
fn find<'v>(items: &[(Step, &'v Value)], step: &Step) -> Option<&'v Value> {
    items.iter().find(|(s, _)| s == step).map(|(_, v)| *v)
}

/// The fields that an applied configuration names, as structured-merge-diff's `ToFieldSet`:
/// every scalar, atomic list or map, empty map, list item and map entry that is not a declared
/// field of its object.
pub(in super::super) fn to_field_set(
    node: &Node,
    value: &Value,
    path: &mut Path,
    set: &mut FieldSet,
) {
    match value {
        Value::Object(map) if node.atomic => {
            let _ = map;
            set.insert(path.clone());
        }
        Value::Object(map) => {
            for (key, child) in map {
                path.push(Step::Field(key.clone()));
                to_field_set(&node.child(Some(key)), child, path, set);
                let empty_map = matches!(child, Value::Object(m) if m.is_empty());
                if child.is_null() || empty_map || !node.declares(key) {
                    set.insert(path.clone());
                }
                path.pop();
            }
        }
        Value::Array(list) => match items(&node.list, list) {
            Some(items) => {
                let item_node = node.child(None);
                for (step, item) in items {
                    path.push(step);
                    to_field_set(&item_node, item, path, set);
                    set.insert(path.clone());
                    path.pop();
                }
            }
            None => {
                set.insert(path.clone());
            }
        },
        _ => {
            set.insert(path.clone());
        }
    }
}

/// Merges the applied configuration `applied` into `live`: maps key by key, keyed lists item by
/// item, sets element by element; everything else (atomic lists and maps, scalars) replaced.
pub(in super::super) fn merge(node: &Node, live: &mut Value, applied: &Value) {
    if let (Value::Object(live), Value::Object(applied), false) = (&mut *live, applied, node.atomic)
    {
        for (key, value) in applied {
            match live.get_mut(key) {
                Some(existing) => merge(&node.child(Some(key)), existing, value),
                None => {
                    live.insert(key.clone(), value.clone());
                }
            }
        }
        return;
    }
    if let (Value::Array(live_items), Value::Array(items)) = (&mut *live, applied) {
        let all: Vec<Value> = live_items.iter().chain(items).cloned().collect();
        if let Some(keyed) = self::items(&node.list, &all) {
            let item_node = node.child(None);
            let steps: Vec<Step> = keyed.into_iter().map(|(step, _)| step).collect();
            for (item, step) in items.iter().zip(&steps[live_items.len()..]) {
                match live_items.iter_mut().find(|i| is_item(i, step)) {
                    Some(existing) => merge(&item_node, existing, item),
                    None => live_items.push(item.clone()),
                }
            }
            return;
        }
    }
    *live = applied.clone();
}
