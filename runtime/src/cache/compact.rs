//! [`Compact`]: the objects of one watch, each kept as a few hundred bytes of JSON rather than a
//! struct, for the kinds a controller owns, watches or caches.
//!
//! A k8s-openapi struct is large: a small Deployment takes 7.9 KB of memory as a `Deployment`
//! (every field an `Option`, every label map a `BTreeMap`), 1.5 KB as JSON. And the objects of
//! one watch look alike (a controller's Deployments share their pod template, labels and owner
//! kind), so each is kept as the JSON merge patch (RFC 7386) that turns the first object the
//! watch brought into it: about 570 bytes for those Deployments, what differs (names, uids,
//! versions, the instance label, the owner reference). A read applies the patch to a copy of
//! that first object and decodes the result (tens of microseconds); the watch's events encode.
//! A merge patch cannot say "this member is `null`" (a `null` removes the member), so an object
//! with a `null` member (a custom resource's free-form field, say) is kept whole instead.
//! kube's reflector store, which holds structs, keeps the reconciled kind, which kube's
//! `Controller` reads from.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::{Arc, PoisonError, RwLock};

use kube::Resource;
use kube::runtime::watcher;
use serde_json::{Map, Value};
use tokio::sync::watch;

use super::Cacheable;

/// An object's key in a [`Compact`] store (and its place in an [`Index`](super::index::Index)):
/// `namespace/name`, or `name` when it has none.
fn key(namespace: Option<&str>, name: &str) -> String {
    match namespace {
        Some(namespace) => format!("{namespace}/{name}"),
        None => name.to_owned(),
    }
}

pub(super) fn key_of<K: Resource>(object: &K) -> String {
    let meta = object.meta();
    key(
        meta.namespace.as_deref(),
        meta.name.as_deref().unwrap_or_default(),
    )
}

/// The JSON merge patch that turns `from` into `to`: the members of `to` that differ (objects
/// recursively, anything else whole), and `null` for the members `to` lacks.
fn merge_diff(from: &Value, to: &Value) -> Value {
    match (from, to) {
        (Value::Object(from), Value::Object(to)) => {
            let mut patch = Map::new();
            for (name, value) in to {
                match from.get(name) {
                    Some(old) if old == value => {}
                    Some(old) => {
                        patch.insert(name.clone(), merge_diff(old, value));
                    }
                    None => {
                        patch.insert(name.clone(), value.clone());
                    }
                }
            }
            for name in from.keys().filter(|name| !to.contains_key(*name)) {
                patch.insert(name.clone(), Value::Null);
            }
            Value::Object(patch)
        }
        _ => to.clone(),
    }
}

/// Whether `value` has a `null` member in an object, at any depth: what a merge patch cannot
/// carry.
fn has_null_member(value: &Value) -> bool {
    match value {
        Value::Object(members) => members
            .values()
            .any(|member| member.is_null() || has_null_member(member)),
        Value::Array(items) => items.iter().any(has_null_member),
        _ => false,
    }
}

/// The first byte of an encoded object: what follows is a merge patch from the reference.
const PATCH: u8 = b'p';
/// The first byte of an encoded object: what follows is the whole object.
const WHOLE: u8 = b'w';

/// The objects of one watch, as merge patches from the first one (or whole), by key.
struct Objects {
    /// The first object the watch brought (after a relist, the first it listed).
    reference: Option<Value>,
    by_key: HashMap<String, Box<[u8]>>,
}

impl Objects {
    fn new() -> Self {
        Self {
            reference: None,
            by_key: HashMap::new(),
        }
    }

    fn insert<K: Cacheable>(&mut self, object: &K) {
        let Ok(value) = serde_json::to_value(object) else {
            return;
        };
        let (form, encoded) = if has_null_member(&value) {
            (WHOLE, value)
        } else {
            let reference = self.reference.get_or_insert_with(|| value.clone());
            (PATCH, merge_diff(reference, &value))
        };
        let mut bytes = vec![form];
        if serde_json::to_writer(&mut bytes, &encoded).is_ok() {
            self.by_key.insert(key_of(object), bytes.into_boxed_slice());
        }
    }

    fn decode<K: Cacheable>(&self, bytes: &[u8]) -> Option<K> {
        match bytes.split_first()? {
            (&WHOLE, whole) => decode_text(whole),
            (_, patch) => {
                let mut value = self.reference.clone()?;
                let patch: Value = serde_json::from_slice(patch).ok()?;
                json_patch::merge(&mut value, &patch);
                decode_text(&serde_json::to_vec(&value).ok()?)
            }
        }
    }
}

/// Decodes `K` from JSON text the way kube decodes API responses and watch events
/// (`serde_json::from_str`), not with `from_slice` or `from_value`: each of those is a copy of
/// its own of the code that decodes `K`, large for a kind such as a Deployment or a Pod (every
/// type of a pod spec: about 0.5 MB of a release manager), for a few microseconds per read.
fn decode_text<K: Cacheable>(bytes: &[u8]) -> Option<K> {
    serde_json::from_str(std::str::from_utf8(bytes).ok()?).ok()
}

/// The objects of one watch, encoded; see the [module](self). A store of the kind `K`, filled by
/// [`Compact::apply`] as kube's reflector store is by its `Writer`.
pub(crate) struct Compact<K> {
    objects: RwLock<Objects>,
    /// While the watch relists: what it has listed so far, which replaces `objects` once the
    /// list is complete.
    relisted: RwLock<Option<Objects>>,
    /// Whether the watch has listed its objects once.
    listed: watch::Sender<bool>,
    kind: PhantomData<fn() -> K>,
}

impl<K: Cacheable> Compact<K> {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self {
            objects: RwLock::new(Objects::new()),
            relisted: RwLock::new(None),
            listed: watch::channel(false).0,
            kind: PhantomData,
        })
    }

    /// Applies an event of the watch.
    pub(crate) fn apply(&self, event: &watcher::Event<K>) {
        fn write(lock: &RwLock<Objects>) -> std::sync::RwLockWriteGuard<'_, Objects> {
            lock.write().unwrap_or_else(PoisonError::into_inner)
        }
        match event {
            watcher::Event::Init => {
                *self
                    .relisted
                    .write()
                    .unwrap_or_else(PoisonError::into_inner) = Some(Objects::new());
            }
            watcher::Event::InitApply(object) => {
                let mut relisted = self
                    .relisted
                    .write()
                    .unwrap_or_else(PoisonError::into_inner);
                relisted.get_or_insert_with(Objects::new).insert(object);
            }
            watcher::Event::InitDone => {
                let relisted = self
                    .relisted
                    .write()
                    .unwrap_or_else(PoisonError::into_inner)
                    .take();
                *write(&self.objects) = relisted.unwrap_or_else(Objects::new);
                self.listed.send_replace(true);
            }
            watcher::Event::Apply(object) => write(&self.objects).insert(object),
            watcher::Event::Delete(object) => {
                write(&self.objects).by_key.remove(&key_of(object));
            }
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Objects> {
        self.objects.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// The object `name` of `namespace`.
    pub(crate) fn get(&self, namespace: Option<&str>, name: &str) -> Option<Arc<K>> {
        let objects = self.read();
        let bytes = objects.by_key.get(&key(namespace, name))?;
        objects.decode(bytes).map(Arc::new)
    }

    /// The objects that `matches` (each decoded to be tested).
    pub(crate) fn select(&self, matches: impl Fn(&K) -> bool) -> Vec<Arc<K>> {
        let objects = self.read();
        let decoded = objects
            .by_key
            .values()
            .filter_map(|bytes| objects.decode::<K>(bytes));
        decoded
            .filter(|object| matches(object))
            .map(Arc::new)
            .collect()
    }

    /// Whether the watch has listed its objects once.
    pub(crate) fn is_listed(&self) -> bool {
        *self.listed.borrow()
    }

    /// Completes once the watch has listed its objects.
    pub(crate) async fn listed(&self) {
        let mut listed = self.listed.subscribe();
        // An error means the sender is gone: the store is being dropped.
        let _ = listed.wait_for(|listed| *listed).await;
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::Deployment;
    use serde_json::json;

    use super::*;

    /// A Deployment as a controller's watch brings it.
    fn deployment(name: &str, replicas: i32) -> Deployment {
        serde_json::from_value(json!({
            "metadata": {
                "name": name, "namespace": "default", "uid": format!("uid-{name}"),
                "labels": { "app": "web", "instance": name },
                "ownerReferences": [{
                    "apiVersion": "example.com/v1", "kind": "Web", "name": name,
                    "uid": format!("owner-{name}"), "controller": true,
                }],
            },
            "spec": {
                "replicas": replicas,
                "selector": { "matchLabels": { "instance": name } },
                "template": {
                    "metadata": { "labels": { "instance": name } },
                    "spec": {
                        "containers": [{
                            "name": "web", "image": "nginx:1.27.3", "args": ["-v"],
                            "ports": [{ "containerPort": 80, "name": "http", "protocol": "TCP" }],
                            "securityContext": {
                                "runAsNonRoot": true, "allowPrivilegeEscalation": false,
                                "capabilities": { "drop": ["ALL"] },
                            },
                        }],
                        "securityContext": { "seccompProfile": { "type": "RuntimeDefault" } },
                    },
                },
            },
        }))
        .unwrap()
    }

    #[test]
    fn objects_come_back_as_they_were_stored() {
        let store = Compact::<Deployment>::new();
        let (first, second) = (deployment("a", 1), deployment("b", 3));
        let mut third = deployment("c", 2);
        // What the first one has and this one lacks, or holds in a list of another length.
        third.metadata.labels = None;
        third
            .spec
            .as_mut()
            .unwrap()
            .template
            .spec
            .as_mut()
            .unwrap()
            .containers[0]
            .args = None;
        for event in [
            watcher::Event::Init,
            watcher::Event::InitApply(first.clone()),
            watcher::Event::InitApply(second.clone()),
            watcher::Event::InitDone,
            watcher::Event::Apply(third.clone()),
        ] {
            store.apply(&event);
        }
        assert!(store.is_listed());
        for object in [first, second, third] {
            let name = object.metadata.name.clone().unwrap();
            assert_eq!(*store.get(Some("default"), &name).unwrap(), object);
        }
        assert_eq!(
            store
                .select(|d| d.spec.as_ref().unwrap().replicas > Some(1))
                .len(),
            2
        );
        store.apply(&watcher::Event::Delete(deployment("b", 3)));
        assert!(store.get(Some("default"), "b").is_none());
    }

    /// What differs from the first object is all that is kept of the others.
    #[test]
    fn objects_alike_take_little_room() {
        let store = Compact::<Deployment>::new();
        store.apply(&watcher::Event::Apply(deployment("first", 1)));
        store.apply(&watcher::Event::Apply(deployment("other", 1)));
        let objects = store.read();
        let full = serde_json::to_vec(&deployment("other", 1)).unwrap().len();
        let kept = objects.by_key["default/other"].len();
        assert!(kept * 2 < full, "{kept} bytes kept of {full}");
    }

    /// A kind with a free-form field, which may hold `null`.
    #[derive(
        kube::CustomResource,
        Clone,
        Debug,
        serde::Deserialize,
        serde::Serialize,
        schemars::JsonSchema,
        PartialEq,
    )]
    #[kube(
        group = "test.example.com",
        version = "v1",
        kind = "Knob",
        namespaced,
        derive = "PartialEq"
    )]
    struct KnobSpec {
        setting: Value,
        size: u32,
    }

    /// A `null` member, which a merge patch would drop, comes back: such an object is kept whole.
    #[test]
    fn null_members_come_back() {
        let knob = |name: &str, setting: Value| {
            let mut knob = Knob::new(name, KnobSpec { setting, size: 1 });
            knob.metadata.namespace = Some("default".to_owned());
            knob
        };
        let store = Compact::<Knob>::new();
        let (first, with_null) = (knob("a", json!("on")), knob("b", Value::Null));
        store.apply(&watcher::Event::Apply(first.clone()));
        store.apply(&watcher::Event::Apply(with_null.clone()));
        assert_eq!(*store.get(Some("default"), "b").unwrap(), with_null);
        assert_eq!(*store.get(Some("default"), "a").unwrap(), first);
    }

    /// A relist replaces the objects once complete; until then reads see the old ones.
    #[test]
    fn a_relist_replaces_the_objects_once_complete() {
        let store = Compact::<Deployment>::new();
        store.apply(&watcher::Event::Apply(deployment("a", 1)));
        store.apply(&watcher::Event::Init);
        store.apply(&watcher::Event::InitApply(deployment("b", 1)));
        assert!(store.get(Some("default"), "a").is_some());
        assert!(!store.is_listed());
        store.apply(&watcher::Event::InitDone);
        assert!(store.get(Some("default"), "a").is_none());
        assert!(store.get(Some("default"), "b").is_some());
    }
}
