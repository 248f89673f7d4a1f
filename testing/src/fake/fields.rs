//! Field ownership and server-side apply: which field manager owns which fields of an object
//! (`metadata.managedFields`), the merge of an applied configuration into the live object, and
//! the conflicts between managers.
//!
//! Written here because no Rust crate implements Kubernetes' structured-merge-diff. This is a
//! small version of it, down to single fields: maps are merged key by key, lists are atomic
//! unless the kind's schema (or, without one, the field's well-known name) makes them a map
//! keyed by some of their items' fields (`conditions` by `type`, `containers` by `name`) or a
//! set of scalars (`finalizers`). Of `metadata`, only `labels`, `annotations`, `finalizers` and
//! `ownerReferences` are owned, as in Kubernetes. Simplifications: a manager never conflicts with
//! itself, whatever the operation; a field is in conflict only when another manager owns that very
//! field (not a parent or a child of it); and the maps and lists that a removal leaves empty are
//! dropped, except at the top level (`spec`, `status`).

use std::collections::BTreeSet;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use serde_json::{Map, Value, json};

use super::kinds::{Kind, ListType};

/// The fields of `metadata` that field managers own.
const OWNED_METADATA: [&str; 4] = ["labels", "annotations", "finalizers", "ownerReferences"];

/// One step of a path into an object: a map key, the item of a keyed list (its key fields as
/// canonical JSON, `{"type":"Available"}`), or the element of a set (as canonical JSON).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Step {
    Field(String),
    Key(String),
    Value(String),
}

/// A path from the root of an object.
pub(super) type Path = Vec<Step>;

/// The fields a manager owns.
pub(super) type FieldSet = BTreeSet<Path>;

/// The part of an object a write covers: the object, its status subresource, or all of it (for
/// the fake's own writes, which have no subresource to go through).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Scope {
    Main,
    Status,
    Whole,
}

impl Scope {
    fn subresource(self) -> Option<&'static str> {
        (self == Scope::Status).then_some("status")
    }

    /// Whether writes of this scope to `kind` cover the top-level field `key`.
    pub(super) fn covers(self, kind: &Kind, key: &str) -> bool {
        match key {
            "apiVersion" | "kind" => false,
            _ if !kind.status_subresource || self == Scope::Whole => true,
            "status" => self == Scope::Status,
            _ => self == Scope::Main,
        }
    }
}

/// Whether a manager's fields come from server-side apply or from other writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Operation {
    Apply,
    Update,
}

/// One entry of `metadata.managedFields`.
#[derive(Clone, Debug)]
struct Entry {
    manager: String,
    operation: Operation,
    subresource: Option<&'static str>,
    time: Value,
    fields: FieldSet,
}

impl Entry {
    fn is(&self, manager: &str, operation: Operation, scope: Scope) -> bool {
        self.manager == manager
            && self.operation == operation
            && self.subresource == scope.subresource()
    }
}

/// The field managers of one object.
#[derive(Clone, Debug, Default)]
pub(super) struct Managers(Vec<Entry>);

/// A field that a non-forced apply would take from another manager.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Conflict {
    pub(super) manager: String,
    pub(super) field: String,
}

impl Managers {
    /// Records a write other than an apply that turned `old` (`None`: a create) into `new`: the
    /// fields it changed are `manager`'s now, and nobody owns a field that is gone.
    pub(super) fn record_update(
        &mut self,
        kind: &Kind,
        scope: Scope,
        manager: &str,
        old: Option<&Value>,
        new: &Value,
    ) {
        let changed: FieldSet = field_set(kind, scope, new)
            .into_iter()
            .filter(|path| old.and_then(|old| get(old, path)) != get(new, path))
            .collect();
        if changed.is_empty() {
            self.forget_missing(new);
            return;
        }
        for entry in &mut self.0 {
            if !entry.is(manager, Operation::Update, scope) {
                entry.fields.retain(|path| !changed.contains(path));
            }
        }
        self.entry(manager, Operation::Update, scope)
            .fields
            .extend(changed);
        self.forget_missing(new);
    }

    /// Server-side applies `config` as `manager` to `live` (a skeleton with only `apiVersion`,
    /// `kind` and `metadata` when the object is new) and returns the object after the apply, or
    /// the conflicts that stop a non-forced apply.
    pub(super) fn apply(
        &mut self,
        kind: &Kind,
        scope: Scope,
        manager: &str,
        live: &Value,
        config: &Value,
        force: bool,
    ) -> Result<Value, Vec<Conflict>> {
        let applied = owned_part(kind, scope, config);
        let applied_fields = field_set(kind, scope, &applied);
        let changed: FieldSet = applied_fields
            .iter()
            .filter(|path| get(live, path) != get(&applied, path))
            .cloned()
            .collect();

        let conflicts: Vec<Conflict> = changed
            .iter()
            .filter(|path| matches!(path.last(), Some(Step::Field(_))))
            .flat_map(|path| {
                self.0
                    .iter()
                    .filter(|entry| entry.manager != manager && entry.fields.contains(path))
                    .map(|entry| Conflict {
                        manager: entry.manager.clone(),
                        field: display(path),
                    })
            })
            .collect();
        if !conflicts.is_empty() && !force {
            return Err(conflicts);
        }

        // The changed fields are the applier's alone now (forced, or nobody else had them).
        for entry in &mut self.0 {
            if !entry.is(manager, Operation::Apply, scope) {
                entry.fields.retain(|path| !changed.contains(path));
            }
        }
        // What the manager applied before but leaves out now goes, unless someone else owns it.
        let previous = self
            .0
            .iter()
            .find(|entry| entry.is(manager, Operation::Apply, scope))
            .map(|entry| entry.fields.clone())
            .unwrap_or_default();
        // In order, so that a list item goes as a whole before its fields are looked at.
        let mut object = live.clone();
        for path in previous.difference(&applied_fields) {
            let kept = self.0.iter().any(|entry| {
                !entry.is(manager, Operation::Apply, scope)
                    && entry.fields.iter().any(|owned| owned.starts_with(path))
            });
            if !kept {
                remove(&mut object, path);
            }
        }
        merge(kind, &mut object, &applied, &mut Vec::new());

        self.entry(manager, Operation::Apply, scope).fields = applied_fields;
        self.forget_missing(&object);
        Ok(object)
    }

    /// Whether both record the same owners of the same fields (times aside).
    pub(super) fn same_as(&self, other: &Managers) -> bool {
        self.0.len() == other.0.len()
            && self.0.iter().zip(&other.0).all(|(a, b)| {
                (&a.manager, a.operation, a.subresource, &a.fields)
                    == (&b.manager, b.operation, b.subresource, &b.fields)
            })
    }

    /// `metadata.managedFields` as the API server writes it.
    pub(super) fn render(&self, api_version: &str) -> Value {
        let entries = self.0.iter().map(|entry| {
            let mut rendered = json!({
                "manager": entry.manager,
                "operation": match entry.operation {
                    Operation::Apply => "Apply",
                    Operation::Update => "Update",
                },
                "apiVersion": api_version,
                "time": entry.time,
                "fieldsType": "FieldsV1",
                "fieldsV1": fields_v1(&entry.fields),
            });
            if let Some(subresource) = entry.subresource {
                rendered["subresource"] = json!(subresource);
            }
            rendered
        });
        Value::Array(entries.collect())
    }

    /// Whether no manager owns anything.
    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn entry(&mut self, manager: &str, operation: Operation, scope: Scope) -> &mut Entry {
        let now = serde_json::to_value(Time(Timestamp::now())).unwrap_or_default();
        let index = match self
            .0
            .iter()
            .position(|entry| entry.is(manager, operation, scope))
        {
            Some(index) => index,
            None => {
                self.0.push(Entry {
                    manager: manager.to_owned(),
                    operation,
                    subresource: scope.subresource(),
                    time: Value::Null,
                    fields: FieldSet::new(),
                });
                self.0.len() - 1
            }
        };
        let entry = &mut self.0[index];
        entry.time = now;
        entry
    }

    /// Nobody owns a field that `object` no longer has; managers without fields go.
    fn forget_missing(&mut self, object: &Value) {
        for entry in &mut self.0 {
            entry.fields.retain(|path| get(object, path).is_some());
        }
        self.0.retain(|entry| !entry.fields.is_empty());
    }
}

/// The part of `object` that writes of `scope` own: no `apiVersion` and `kind`, and only the
/// owned fields of `metadata`.
fn owned_part(kind: &Kind, scope: Scope, object: &Value) -> Value {
    let mut owned = Map::new();
    for (key, value) in object.as_object().into_iter().flatten() {
        if !scope.covers(kind, key) {
            continue;
        }
        if key == "metadata" {
            let metadata: Map<String, Value> = OWNED_METADATA
                .iter()
                .filter_map(|field| Some(((*field).to_owned(), value.get(*field)?.clone())))
                .collect();
            owned.insert(key.clone(), Value::Object(metadata));
        } else {
            owned.insert(key.clone(), value.clone());
        }
    }
    Value::Object(owned)
}

/// The fields of `object` that writes of `scope` own, down to single fields.
pub(super) fn field_set(kind: &Kind, scope: Scope, object: &Value) -> FieldSet {
    let mut fields = FieldSet::new();
    let owned = owned_part(kind, scope, object);
    for (key, value) in owned.as_object().into_iter().flatten() {
        let mut path = vec![Step::Field(key.clone())];
        if key == "metadata" {
            for (field, value) in value.as_object().into_iter().flatten() {
                path.push(Step::Field(field.clone()));
                collect(kind, value, &mut path, &mut fields);
                path.pop();
            }
        } else {
            collect(kind, value, &mut path, &mut fields);
        }
    }
    fields
}

fn collect(kind: &Kind, value: &Value, path: &mut Path, fields: &mut FieldSet) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (key, value) in map {
                path.push(Step::Field(key.clone()));
                collect(kind, value, path, fields);
                path.pop();
            }
        }
        Value::Array(items) if !items.is_empty() => match list_type(kind, path, items) {
            ListType::Map(keys) => {
                for item in items {
                    path.push(Step::Key(item_key(item, &keys).unwrap_or_default()));
                    fields.insert(path.clone());
                    for (key, value) in item.as_object().into_iter().flatten() {
                        path.push(Step::Field(key.clone()));
                        collect(kind, value, path, fields);
                        path.pop();
                    }
                    path.pop();
                }
            }
            ListType::Set => {
                for item in items {
                    path.push(Step::Value(item.to_string()));
                    fields.insert(path.clone());
                    path.pop();
                }
            }
            ListType::Atomic => {
                fields.insert(path.clone());
            }
        },
        _ => {
            fields.insert(path.clone());
        }
    }
}

/// How the list `items` at `path` merges: as its kind says, if its items fit.
fn list_type(kind: &Kind, path: &Path, items: &[Value]) -> ListType {
    let names: Vec<Option<&str>> = path
        .iter()
        .map(|step| match step {
            Step::Field(name) => Some(name.as_str()),
            _ => None,
        })
        .collect();
    match kind.list_type(&names) {
        ListType::Map(keys)
            if !keys.is_empty() && items.iter().all(|i| item_key(i, &keys).is_some()) =>
        {
            ListType::Map(keys)
        }
        ListType::Set if items.iter().all(|i| !i.is_object() && !i.is_array()) => ListType::Set,
        _ => ListType::Atomic,
    }
}

/// The key fields of a keyed list's item, as canonical JSON.
fn item_key(item: &Value, keys: &[String]) -> Option<String> {
    let key: Map<String, Value> = keys
        .iter()
        .map(|key| Some((key.clone(), item.get(key)?.clone())))
        .collect::<Option<_>>()?;
    Some(Value::Object(key).to_string())
}

/// Whether `item` is the list item that `step` names.
fn is_item(item: &Value, step: &Step) -> bool {
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
pub(super) fn get<'a>(object: &'a Value, path: &[Step]) -> Option<&'a Value> {
    path.iter().try_fold(object, child)
}

/// Removes the field at `path`, and the maps and lists that this leaves empty (below the top
/// level: `spec` and `status` stay).
fn remove(object: &mut Value, path: &[Step]) {
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
            match (value, step) {
                (Value::Object(map), Step::Field(key)) if map.get(key).is_some_and(empty) => {
                    map.remove(key);
                }
                _ => {}
            }
        }
        removed
    }
    remove_in(object, path, 0);
}

/// Merges the applied configuration `applied` into `live`: maps key by key, keyed lists item by
/// item, sets element by element; everything else is replaced.
fn merge(kind: &Kind, live: &mut Value, applied: &Value, path: &mut Path) {
    if let (Value::Object(live), Value::Object(applied)) = (&mut *live, applied) {
        for (key, value) in applied {
            path.push(Step::Field(key.clone()));
            match live.get_mut(key) {
                Some(existing) => merge(kind, existing, value, path),
                None => {
                    live.insert(key.clone(), value.clone());
                }
            }
            path.pop();
        }
        return;
    }
    if let (Value::Array(live_items), Value::Array(items)) = (&mut *live, applied) {
        let all: Vec<Value> = live_items.iter().chain(items).cloned().collect();
        match list_type(kind, path, &all) {
            ListType::Map(keys) => {
                for item in items {
                    let key = item_key(item, &keys).unwrap_or_default();
                    let step = Step::Key(key);
                    match live_items.iter_mut().find(|i| is_item(i, &step)) {
                        Some(existing) => {
                            path.push(step);
                            merge(kind, existing, item, path);
                            path.pop();
                        }
                        None => live_items.push(item.clone()),
                    }
                }
                return;
            }
            ListType::Set => {
                for item in items {
                    if !live_items.contains(item) {
                        live_items.push(item.clone());
                    }
                }
                return;
            }
            ListType::Atomic => {}
        }
    }
    *live = applied.clone();
}

/// A path as the API server shows it in conflicts: `.spec.replicas`,
/// `.status.conditions[type="Available"]`.
fn display(path: &[Step]) -> String {
    path.iter()
        .map(|step| match step {
            Step::Field(key) => format!(".{key}"),
            Step::Key(key) => {
                let key: Map<String, Value> = serde_json::from_str(key).unwrap_or_default();
                let fields: Vec<String> = key.iter().map(|(k, v)| format!("{k}={v}")).collect();
                format!("[{}]", fields.join(","))
            }
            Step::Value(value) => format!("[{value}]"),
        })
        .collect()
}

/// A field set in the `FieldsV1` format of `managedFields`.
fn fields_v1(fields: &FieldSet) -> Value {
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
            if !child.is_object() {
                *child = json!({});
            }
            node = child.as_object_mut().expect("just made an object");
        }
        if matches!(path.last(), Some(Step::Key(_))) {
            node.insert(".".to_owned(), json!({}));
        }
    }
    Value::Object(root)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::Deployment;

    use super::*;

    fn kind() -> Kind {
        Kind::of::<Deployment>()
    }

    fn skeleton() -> Value {
        json!({ "apiVersion": "apps/v1", "kind": "Deployment", "metadata": { "name": "d" } })
    }

    #[test]
    fn fields_down_to_single_values() {
        let object = json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": { "name": "d", "labels": { "a": "b" }, "finalizers": ["x"] },
            "spec": { "replicas": 1, "template": { "spec": { "containers": [{ "name": "c", "image": "i" }] } } },
            "status": { "replicas": 1 },
        });
        let fields = fields_v1(&field_set(&kind(), Scope::Main, &object));
        assert_eq!(
            fields,
            json!({
                "f:metadata": { "f:labels": { "f:a": {} }, "f:finalizers": { "v:\"x\"": {} } },
                "f:spec": {
                    "f:replicas": {},
                    "f:template": { "f:spec": { "f:containers": {
                        "k:{\"name\":\"c\"}": { ".": {}, "f:image": {}, "f:name": {} },
                    } } },
                },
            })
        );
        let status = fields_v1(&field_set(&kind(), Scope::Status, &object));
        assert_eq!(status, json!({ "f:status": { "f:replicas": {} } }));
    }

    #[test]
    fn apply_merges_and_removes_what_is_no_longer_applied() {
        let mut managers = Managers::default();
        let config = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": { "name": "d", "labels": { "a": "1", "b": "2" } },
            "spec": { "replicas": 2, "paused": false },
        });
        let object = managers
            .apply(&kind(), Scope::Main, "me", &skeleton(), &config, false)
            .unwrap();
        assert_eq!(object["metadata"]["labels"], json!({ "a": "1", "b": "2" }));
        assert_eq!(object["spec"]["replicas"], 2);

        // Someone else adds a label of their own.
        let mut labelled = object.clone();
        labelled["metadata"]["labels"]["c"] = json!("3");
        managers.record_update(&kind(), Scope::Main, "kubectl", Some(&object), &labelled);

        // Applying without `b` and `paused` removes them, but not the other manager's label.
        let config = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": { "name": "d", "labels": { "a": "1" } },
            "spec": { "replicas": 2 },
        });
        let object = managers
            .apply(&kind(), Scope::Main, "me", &labelled, &config, false)
            .unwrap();
        assert_eq!(object["metadata"]["labels"], json!({ "a": "1", "c": "3" }));
        assert_eq!(object["spec"], json!({ "replicas": 2 }));
    }

    #[test]
    fn conflicts_unless_forced() {
        let mut managers = Managers::default();
        let config =
            json!({ "apiVersion": "apps/v1", "kind": "Deployment", "spec": { "replicas": 2 } });
        let object = managers
            .apply(
                &kind(),
                Scope::Main,
                "controller",
                &skeleton(),
                &config,
                false,
            )
            .unwrap();
        let mut scaled = object.clone();
        scaled["spec"]["replicas"] = json!(5);
        managers.record_update(&kind(), Scope::Main, "kubectl", Some(&object), &scaled);

        // The same value is no conflict: both own it then.
        let same =
            json!({ "apiVersion": "apps/v1", "kind": "Deployment", "spec": { "replicas": 5 } });
        managers
            .clone()
            .apply(&kind(), Scope::Main, "other", &scaled, &same, false)
            .unwrap();

        let conflicts = managers
            .clone()
            .apply(&kind(), Scope::Main, "controller", &scaled, &config, false)
            .unwrap_err();
        assert_eq!(
            conflicts,
            vec![Conflict {
                manager: "kubectl".into(),
                field: ".spec.replicas".into()
            }]
        );
        let object = managers
            .apply(&kind(), Scope::Main, "controller", &scaled, &config, true)
            .unwrap();
        assert_eq!(object["spec"]["replicas"], 2);
        let rendered = managers.render("apps/v1");
        let owners: Vec<&str> = rendered
            .as_array()
            .unwrap()
            .iter()
            .map(|entry| entry["manager"].as_str().unwrap())
            .collect();
        assert_eq!(owners, ["controller"], "kubectl lost its only field");
    }

    #[test]
    fn keyed_lists_merge_by_key() {
        let mut managers = Managers::default();
        let status = |conditions: Value| json!({ "apiVersion": "apps/v1", "kind": "Deployment", "status": { "conditions": conditions } });
        let a = status(json!([{ "type": "A", "status": "True" }]));
        let object = managers
            .apply(&kind(), Scope::Status, "one", &skeleton(), &a, false)
            .unwrap();
        let b = status(json!([{ "type": "B", "status": "False" }]));
        let object = managers
            .apply(&kind(), Scope::Status, "two", &object, &b, false)
            .unwrap();
        assert_eq!(
            object["status"]["conditions"],
            json!([{ "type": "A", "status": "True" }, { "type": "B", "status": "False" }])
        );
        // "one" no longer applies A: it goes; B stays, it is "two"'s.
        let none = json!({ "apiVersion": "apps/v1", "kind": "Deployment", "status": { "conditions": [] } });
        let object = managers
            .apply(&kind(), Scope::Status, "one", &object, &none, false)
            .unwrap();
        assert_eq!(
            object["status"]["conditions"],
            json!([{ "type": "B", "status": "False" }])
        );
        assert_eq!(
            display(&[
                Step::Field("status".into()),
                Step::Key(r#"{"type":"B"}"#.into())
            ]),
            r#".status[type="B"]"#
        );
    }
}
