//! What the API server's registry strategy of each kind decides on writes (its
//! `PrepareForCreate`, `PrepareForUpdate`, `GetResetFields`, `AllowUnconditionalUpdate`,
//! `AllowCreateOnUpdate`): which kinds count `metadata.generation` and of what, what a write to
//! the object or to its status subresource may change, and whether an update may leave out the
//! `resourceVersion` or create the object.

use serde_json::{Map, Value};

use super::fields::{Path, Scope, Step};
use super::kinds::Kind;

/// What `metadata.generation` counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Generation {
    /// Nothing: the kind has no generation (ConfigMaps, Secrets, Pods, Services …).
    None,
    /// Every change but of `metadata` (custom resources; their status, if a subresource, is
    /// kept by writes to the object).
    AllButMetadata,
    /// Changes of `spec` (StatefulSets, DaemonSets, ReplicaSets, CRDs).
    Spec,
    /// Changes of `spec` and of the annotations (Deployments, whose annotations are copied to
    /// their ReplicaSets).
    SpecAndAnnotations,
    /// Changes of `webhooks` (webhook configurations).
    Webhooks,
}

/// What a write to the status subresource takes from the object as it was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StatusKeeps {
    /// Everything but `status` (custom resources, CRDs).
    AllButStatus,
    /// These paths (`spec`, and for some kinds some metadata).
    Paths(&'static [&'static [&'static str]]),
}

/// The strategy of a kind.
#[derive(Clone, Copy, Debug)]
pub(super) struct Strategy {
    /// `AllowUnconditionalUpdate`: an update without `resourceVersion` is not refused.
    pub(super) unconditional_update: bool,
    /// `AllowCreateOnUpdate`: an update of an object that does not exist creates it.
    pub(super) create_on_update: bool,
    generation: Generation,
    status_keeps: StatusKeeps,
    /// What a write to the status does not own (`GetResetFields` of the status strategy).
    status_reset: &'static [&'static [&'static str]],
}

const SPEC: &[&[&str]] = &[&["spec"]];

/// The strategies of the built-in kinds, by group and resource.
fn built_in(group: &str, plural: &str) -> Option<Strategy> {
    let strategy = |unconditional_update, create_on_update, generation| Strategy {
        unconditional_update,
        create_on_update,
        generation,
        status_keeps: StatusKeeps::Paths(SPEC),
        status_reset: SPEC,
    };
    Some(match (group, plural) {
        ("apps", "deployments") => Strategy {
            status_keeps: StatusKeeps::Paths(&[&["spec"], &["metadata", "labels"]]),
            status_reset: &[&["spec"], &["metadata", "labels"]],
            ..strategy(true, false, Generation::SpecAndAnnotations)
        },
        ("apps", "statefulsets" | "daemonsets" | "replicasets") => {
            strategy(true, false, Generation::Spec)
        }
        ("", "pods") => Strategy {
            status_keeps: StatusKeeps::Paths(&[
                &["spec"],
                &["metadata", "ownerReferences"],
                &["metadata", "deletionTimestamp"],
            ]),
            status_reset: &[
                &["spec"],
                &["metadata", "deletionTimestamp"],
                &["metadata", "ownerReferences"],
            ],
            ..strategy(true, false, Generation::None)
        },
        ("", "services" | "events") | ("events.k8s.io", "events") => {
            strategy(true, true, Generation::None)
        }
        ("coordination.k8s.io", "leases") => strategy(false, true, Generation::None),
        ("", _) => strategy(true, false, Generation::None),
        ("admissionregistration.k8s.io", _) => strategy(false, false, Generation::Webhooks),
        ("apiextensions.k8s.io", "customresourcedefinitions") => Strategy {
            status_keeps: StatusKeeps::AllButStatus,
            status_reset: &[&["metadata"], &["spec"]],
            ..strategy(false, false, Generation::Spec)
        },
        _ => return None,
    })
}

impl Strategy {
    /// The strategy of `kind`: a built-in kind's, or a custom resource's.
    pub(super) fn of(kind: &Kind) -> Strategy {
        if kind.built_in_type().is_some()
            && let Some(strategy) = built_in(&kind.group, &kind.plural)
        {
            return strategy;
        }
        Strategy {
            unconditional_update: false,
            create_on_update: false,
            generation: Generation::AllButMetadata,
            status_keeps: StatusKeeps::AllButStatus,
            status_reset: SPEC,
        }
    }

    /// Whether the kind's objects have a `metadata.generation`.
    pub(super) fn has_generation(&self) -> bool {
        self.generation != Generation::None
    }

    /// The generation of `new`, written over `old`: one more when what it counts changed.
    pub(super) fn generation(&self, old: &Value, new: &Value) -> Option<i64> {
        let current = old["metadata"]["generation"].as_i64().unwrap_or(0);
        let changed = match self.generation {
            Generation::None => return None,
            Generation::AllButMetadata => without(old, "metadata") != without(new, "metadata"),
            Generation::Spec => old["spec"] != new["spec"],
            Generation::SpecAndAnnotations => {
                old["spec"] != new["spec"]
                    || old["metadata"]["annotations"] != new["metadata"]["annotations"]
            }
            Generation::Webhooks => old["webhooks"] != new["webhooks"],
        };
        Some(if changed { current + 1 } else { current })
    }

    /// What a write of `scope` to `kind` stores, from the object it sent and the live one:
    /// with a status subresource, writes to the object keep the live status, and writes to the
    /// status keep what the kind's status strategy keeps.
    pub(super) fn scoped(&self, kind: &Kind, scope: Scope, live: &Value, object: Value) -> Value {
        if !kind.status_subresource {
            return object;
        }
        match (scope, self.status_keeps) {
            (Scope::Whole, _) => object,
            (Scope::Main, _) => with_field_of(object, live, "status"),
            (Scope::Status, StatusKeeps::AllButStatus) => {
                with_field_of(live.clone(), &object, "status")
            }
            (Scope::Status, StatusKeeps::Paths(paths)) => {
                let mut object = object;
                for path in paths {
                    copy_path(live, &mut object, path);
                }
                object
            }
        }
    }

    /// The paths a write of `scope` does not own in `managedFields`.
    pub(super) fn reset(&self, kind: &Kind, scope: Scope) -> Vec<Path> {
        let paths: &[&[&str]] = match scope {
            _ if !kind.status_subresource => &[],
            Scope::Whole => &[],
            Scope::Main => &[&["status"]],
            Scope::Status => self.status_reset,
        };
        paths
            .iter()
            .map(|path| path.iter().map(|s| Step::Field((*s).to_owned())).collect())
            .collect()
    }
}

fn without(object: &Value, field: &str) -> Map<String, Value> {
    let mut fields = object.as_object().cloned().unwrap_or_default();
    fields.remove(field);
    fields
}

/// `target` with `source`'s top-level `field` (or without it, if `source` has none).
fn with_field_of(mut target: Value, source: &Value, field: &str) -> Value {
    if let Some(fields) = target.as_object_mut() {
        match source.get(field) {
            Some(value) => fields.insert(field.to_owned(), value.clone()),
            None => fields.remove(field),
        };
    }
    target
}

/// Sets `path` of `target` to its value in `source` (or removes it).
fn copy_path(source: &Value, target: &mut Value, path: &[&str]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut node = target;
    for parent in parents {
        if !node[*parent].is_object() {
            node[*parent] = Value::Object(Map::new());
        }
        node = &mut node[*parent];
    }
    let value = path.iter().try_fold(source, |value, key| value.get(*key));
    if let Some(fields) = node.as_object_mut() {
        match value {
            Some(value) => fields.insert((*last).to_owned(), value.clone()),
            None => fields.remove(*last),
        };
    }
}
