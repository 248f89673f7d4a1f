//! Field ownership and server-side apply: which field manager owns which fields of an object
//! (`metadata.managedFields`), the merge of an applied configuration into the live object, and
//! the conflicts between managers.
//!
//! Written here because no Rust crate implements Kubernetes' structured-merge-diff. This one
//! follows it: a write other than an apply gives its manager the fields it added or modified
//! (maps and list items that appeared included, which `FieldsV1` marks `"."`), compared with
//! the object before (or, for a create, with the kind's empty object: for built-in kinds the
//! empty structs Go writes); an apply gives its manager exactly the fields its configuration
//! names; a field another manager owns and a write changes is taken from it (a conflict, for an
//! apply that is not forced); fields removed are nobody's. Lists and maps merge as the kind's
//! types say (`node.rs`). The API server's own metadata (`name`, `uid`, `resourceVersion` …) is
//! owned by no one, and a write of a subresource owns only what that subresource changes.
//! Simplification: managers are not converted between versions of a kind.

mod compare;
pub(super) mod node;
mod paths;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use compare::{Comparison, compare, merge, to_field_set};
use node::Node;
pub(super) use paths::{FieldSet, Path, Step};
use paths::{display, fields_v1, get, remove};

use super::errors::go_quote;
use super::kinds::Kind;

/// The paths of `metadata` that the API server owns: nobody's in `managedFields`.
const SERVER_METADATA: [&str; 9] = [
    "name",
    "namespace",
    "creationTimestamp",
    "selfLink",
    "uid",
    "clusterName",
    "generation",
    "managedFields",
    "resourceVersion",
];

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
}

/// Whether a manager's fields come from server-side apply or from other writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
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
    api_version: String,
    time: Value,
    fields: FieldSet,
}

impl Entry {
    fn is(&self, manager: &str, operation: Operation, scope: Scope) -> bool {
        self.manager == manager
            && self.operation == operation
            && self.subresource == scope.subresource()
    }

    /// The manager as the API server names it in conflicts: `"kubectl"`, or for a manager
    /// that did not apply, `"kubectl" using v1` (its identity, without the time).
    fn printed(&self) -> String {
        let mut name = go_quote(&self.manager);
        if let Some(subresource) = self.subresource {
            name.push_str(&format!(" with subresource {}", go_quote(subresource)));
        }
        if self.operation == Operation::Update {
            name.push_str(&format!(" using {}", self.api_version));
        }
        name
    }
}

/// A write: who writes, to what part of the object, in which version.
pub(super) struct Writer<'a> {
    pub(super) kind: &'a Kind,
    pub(super) scope: Scope,
    pub(super) manager: &'a str,
    /// The paths the write cannot change (the status of a write to the object, the spec of a
    /// write to the status): owned by nobody through it.
    pub(super) reset: &'a [Path],
}

/// The field managers of one object.
#[derive(Clone, Debug, Default)]
pub(super) struct Managers(Vec<Entry>);

/// A field that a non-forced apply would take from another manager: the manager as the API
/// server prints it, and the field (`.spec.size`).
pub(super) type Conflict = (String, String);

impl Managers {
    /// Records a write other than an apply that turned `old` (for a create, the kind's empty
    /// object) into `new`.
    pub(super) fn record_update(&mut self, writer: &Writer, old: &Value, new: &Value) {
        let node = Node::root(writer.kind);
        let mut comparison = Comparison::default();
        compare(
            &node,
            Some(old),
            Some(new),
            &mut Vec::new(),
            &mut comparison,
        );
        comparison.exclude(writer.reset);
        let mut taken: FieldSet = comparison
            .added
            .union(&comparison.modified)
            .cloned()
            .collect();
        strip(&mut taken);
        for entry in &mut self.0 {
            entry
                .fields
                .retain(|path| !comparison.removed.contains(path) && !taken.contains(path));
        }
        if !taken.is_empty() {
            let api_version = writer.kind.api_version();
            let entry = self.entry(
                writer.manager,
                Operation::Update,
                writer.scope,
                &api_version,
            );
            entry.fields.extend(taken);
            entry.time = now();
        }
        self.0.retain(|entry| !entry.fields.is_empty());
    }

    /// Server-side applies `config` as the writer's manager to `live` (for a new object, the
    /// kind's empty object with its name) and returns the object after the apply, or the
    /// conflicts that stop a non-forced apply.
    pub(super) fn apply(
        &mut self,
        writer: &Writer,
        live: &Value,
        config: &Value,
        force: bool,
    ) -> Result<Value, Vec<Conflict>> {
        let node = Node::root(writer.kind);
        let mut applied = FieldSet::new();
        to_field_set(&node, config, &mut Vec::new(), &mut applied);
        applied.retain(|path| !writer.reset.iter().any(|root| path.starts_with(root)));
        strip(&mut applied);
        let mut object = live.clone();
        merge(&node, &mut object, &without_reset(config, writer.reset));
        let previous = self
            .0
            .iter()
            .find(|entry| entry.is(writer.manager, Operation::Apply, writer.scope))
            .map(|entry| entry.fields.clone())
            .unwrap_or_default();
        self.prune(writer, &mut object, &previous, &applied);
        let mut comparison = Comparison::default();
        compare(
            &node,
            Some(live),
            Some(&object),
            &mut Vec::new(),
            &mut comparison,
        );
        comparison.exclude(writer.reset);
        let changed: FieldSet = comparison
            .added
            .union(&comparison.modified)
            .cloned()
            .collect();
        let conflicts = self.conflicts(writer, &changed);
        if !conflicts.is_empty() && !force {
            return Err(conflicts);
        }
        for entry in &mut self.0 {
            if !entry.is(writer.manager, Operation::Apply, writer.scope) {
                entry
                    .fields
                    .retain(|path| !changed.contains(path) && !comparison.removed.contains(path));
            }
        }
        let api_version = writer.kind.api_version();
        let entry = self.entry(writer.manager, Operation::Apply, writer.scope, &api_version);
        entry.fields = applied;
        if !comparison.is_same() || entry.time.is_null() {
            entry.time = now();
        }
        self.0.retain(|entry| !entry.fields.is_empty());
        Ok(object)
    }

    /// What the applier applied before but leaves out now goes, unless another manager owns
    /// it (or something below it).
    fn prune(&self, writer: &Writer, object: &mut Value, previous: &FieldSet, applied: &FieldSet) {
        for path in previous.difference(applied) {
            let kept = self.0.iter().any(|entry| {
                !entry.is(writer.manager, Operation::Apply, writer.scope)
                    && entry.fields.iter().any(|owned| owned.starts_with(path))
            }) || applied.iter().any(|owned| owned.starts_with(path));
            if !kept && get(object, path).is_some() {
                remove(object, path);
            }
        }
    }

    /// The fields of other managers that `changed` takes.
    fn conflicts(&self, writer: &Writer, changed: &FieldSet) -> Vec<Conflict> {
        let mut conflicts = Vec::new();
        for entry in &self.0 {
            if entry.is(writer.manager, Operation::Apply, writer.scope) {
                continue;
            }
            for path in entry.fields.intersection(changed) {
                conflicts.push((entry.printed(), display(path)));
            }
        }
        conflicts
    }

    /// Whether both record the same owners of the same fields (times aside).
    pub(super) fn same_as(&self, other: &Managers) -> bool {
        self.0.len() == other.0.len()
            && self.0.iter().zip(&other.0).all(|(a, b)| {
                (&a.manager, a.operation, a.subresource, &a.fields)
                    == (&b.manager, b.operation, b.subresource, &b.fields)
            })
    }

    /// `metadata.managedFields` as the API server writes it: appliers first, then by time,
    /// manager, version and subresource.
    pub(super) fn render(&self) -> Value {
        let mut entries: Vec<&Entry> = self.0.iter().collect();
        entries.sort_by(|a, b| {
            let seconds = |entry: &Entry| entry.time.as_str().unwrap_or_default().to_owned();
            (
                a.operation,
                seconds(a),
                &a.manager,
                &a.api_version,
                a.subresource,
            )
                .cmp(&(
                    b.operation,
                    seconds(b),
                    &b.manager,
                    &b.api_version,
                    b.subresource,
                ))
        });
        let entries = entries.into_iter().map(|entry| {
            let mut rendered = json!({
                "manager": entry.manager,
                "operation": match entry.operation {
                    Operation::Apply => "Apply",
                    Operation::Update => "Update",
                },
                "apiVersion": entry.api_version,
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

    fn entry(
        &mut self,
        manager: &str,
        operation: Operation,
        scope: Scope,
        api_version: &str,
    ) -> &mut Entry {
        let index = match self.0.iter().position(|e| e.is(manager, operation, scope)) {
            Some(index) => index,
            None => {
                self.0.push(Entry {
                    manager: manager.to_owned(),
                    operation,
                    subresource: scope.subresource(),
                    api_version: api_version.to_owned(),
                    time: Value::Null,
                    fields: FieldSet::new(),
                });
                self.0.len() - 1
            }
        };
        let entry = &mut self.0[index];
        entry.api_version = api_version.to_owned();
        entry
    }
}

/// Now, to the second, as managed fields' times are.
fn now() -> Value {
    serde_json::to_value(Time(Timestamp::now())).unwrap_or_default()
}

/// Takes out what nobody owns: `apiVersion`, `kind`, `metadata` itself and the metadata the API
/// server sets (exactly those paths, not what is below them).
fn strip(set: &mut FieldSet) {
    let field = |name: &str| Step::Field(name.to_owned());
    set.remove(&vec![field("apiVersion")]);
    set.remove(&vec![field("kind")]);
    set.remove(&vec![field("metadata")]);
    for name in SERVER_METADATA {
        set.remove(&vec![field("metadata"), field(name)]);
    }
}

/// `config` without the paths of `reset` (the parts a subresource's write does not change).
fn without_reset(config: &Value, reset: &[Path]) -> Value {
    let mut config = config.clone();
    for path in reset {
        remove(&mut config, path);
    }
    config
}

#[cfg(test)]
mod tests;
