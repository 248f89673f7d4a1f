//! [`Compact`]: the objects of one watch, each kept as a few hundred bytes of JSON rather than a
//! struct, for the kinds a controller owns, watches or caches.
//!
//! A k8s-openapi struct is large: a small Deployment takes 7.9 KB of memory as a `Deployment`
//! (every field an `Option`, every label map a `BTreeMap`), 1.5 KB as JSON. And the objects of
//! one watch look alike (a controller's Deployments share their pod template, labels and owner
//! kind), so each is kept as the patch that turns the first object the watch brought into it:
//! what differs (names, uids, versions, the instance label, the owner reference). The patch is a
//! JSON merge patch (RFC 7386) that also goes into lists: where both objects have a list of the
//! same length, it holds a patch of each item rather than the whole new list (a merge patch
//! replaces lists whole). A pod's containers, volumes and conditions are such lists, alike but
//! for a name or a time: on kube-apiserver a pod of the deploy-image controller took 2,075 bytes
//! as a merge patch (its generated service account volume's name alone put two lists in it),
//! and takes 891 so. A read applies the patch to a copy of that first object and decodes the
//! result (tens of microseconds); the watch's events encode. A merge patch cannot say "this
//! member is `null`" (a `null` removes the member), so an object with a `null` member (a custom
//! resource's free-form field, say) is kept whole instead, as is one with a member named
//! [`ITEMS`], which marks a list's patch. kube's reflector store, which holds structs, keeps the
//! reconciled kind, which kube's `Controller` reads from.

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

/// The member of a patch that holds the patches of a list's items, by position: a name that
/// no Kubernetes kind's field has (an object with a member of that name is kept whole).
const ITEMS: &str = "[]";

/// The patch that turns `from` into `to`: for two objects, the members of `to` that differ
/// (patched recursively), and `null` for the members `to` lacks, as in a JSON merge patch; for
/// two lists of the same length, `{ITEMS: [the patch of each item]}`; anything else whole.
fn diff(from: &Value, to: &Value) -> Value {
    match (from, to) {
        (Value::Object(from), Value::Object(to)) => {
            let mut patch = Map::new();
            for (name, value) in to {
                match from.get(name) {
                    Some(old) if old == value => {}
                    Some(old) => {
                        patch.insert(name.clone(), diff(old, value));
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
        (Value::Array(from), Value::Array(to)) if from.len() == to.len() => {
            let items = from.iter().zip(to).map(|(from, to)| diff(from, to));
            Value::Object(Map::from_iter([(ITEMS.to_owned(), items.collect())]))
        }
        _ => to.clone(),
    }
}

/// Applies a patch that [`diff`] made from `target`: the inverse of `diff`, so
/// `patch(from, diff(from, to))` gives `to` when neither has a `null` member or one named
/// [`ITEMS`].
fn patch(target: &mut Value, patch: &Value) {
    let Value::Object(members) = patch else {
        *target = patch.clone();
        return;
    };
    if let (Some(Value::Array(items)), Value::Array(targets)) = (members.get(ITEMS), &mut *target)
        && members.len() == 1
        && items.len() == targets.len()
    {
        for (target, item) in targets.iter_mut().zip(items) {
            self::patch(target, item);
        }
        return;
    }
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(target) = target else {
        return;
    };
    for (name, value) in members {
        match target.get_mut(name) {
            _ if value.is_null() => {
                target.remove(name);
            }
            Some(member) => self::patch(member, value),
            None => {
                target.insert(name.clone(), value.clone());
            }
        }
    }
}

/// Whether `value` can be kept as a patch: it has no `null` member in an object (which a
/// patch cannot carry) and no member named [`ITEMS`], at any depth.
fn patchable(value: &Value) -> bool {
    match value {
        Value::Object(members) => members
            .iter()
            .all(|(name, member)| !member.is_null() && name != ITEMS && patchable(member)),
        Value::Array(items) => items.iter().all(patchable),
        _ => true,
    }
}

/// The first byte of an encoded object: what follows is a patch from the reference.
const PATCH: u8 = b'p';
/// The first byte of an encoded object: what follows is the whole object.
const WHOLE: u8 = b'w';

/// The objects of one watch, as patches from the first one (or whole), by key.
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
        let (form, encoded) = if patchable(&value) {
            let reference = self.reference.get_or_insert_with(|| value.clone());
            (PATCH, diff(reference, &value))
        } else {
            (WHOLE, value)
        };
        let mut bytes = vec![form];
        if serde_json::to_writer(&mut bytes, &encoded).is_ok() {
            self.by_key.insert(key_of(object), bytes.into_boxed_slice());
        }
    }

    fn decode<K: Cacheable>(&self, bytes: &[u8]) -> Option<K> {
        match bytes.split_first()? {
            (&WHOLE, whole) => decode_text(whole),
            (_, encoded) => {
                let mut value = self.reference.clone()?;
                patch(&mut value, &serde_json::from_slice(encoded).ok()?);
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
    use k8s_openapi::api::core::v1::Pod;
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

    /// A `Knob` of the namespace `default`.
    fn knob(name: &str, setting: Value) -> Knob {
        let mut knob = Knob::new(name, KnobSpec { setting, size: 1 });
        knob.metadata.namespace = Some("default".to_owned());
        knob
    }

    /// A `null` member, which a merge patch would drop, comes back: such an object is kept whole.
    #[test]
    fn null_members_come_back() {
        let store = Compact::<Knob>::new();
        let (first, with_null) = (knob("a", json!("on")), knob("b", Value::Null));
        store.apply(&watcher::Event::Apply(first.clone()));
        store.apply(&watcher::Event::Apply(with_null.clone()));
        assert_eq!(*store.get(Some("default"), "b").unwrap(), with_null);
        assert_eq!(*store.get(Some("default"), "a").unwrap(), first);
    }

    /// An object with a member named like the marker of a list's patch comes back: it is kept
    /// whole, and never becomes the reference.
    #[test]
    fn a_member_named_like_the_marker_of_items_comes_back() {
        let store = Compact::<Knob>::new();
        let marked = knob("a", json!({ ITEMS: [1, 2], "list": [{ ITEMS: 3 }] }));
        let plain = knob("b", json!({ "list": [1, 2] }));
        store.apply(&watcher::Event::Apply(marked.clone()));
        store.apply(&watcher::Event::Apply(plain.clone()));
        assert_eq!(*store.get(Some("default"), "a").unwrap(), marked);
        assert_eq!(*store.get(Some("default"), "b").unwrap(), plain);
        assert_eq!(store.read().by_key["default/a"][0], WHOLE);
    }

    /// A pod of a Deployment as kube-apiserver serves it: the name of its service account
    /// volume, its owner and its times differ from another's, each inside a list.
    fn pod(name: &str, volume: &str, started: &str) -> Pod {
        let conditions = ["PodScheduled", "Initialized", "ContainersReady", "Ready"]
            .map(|kind| json!({ "type": kind, "status": "True", "lastTransitionTime": started }));
        serde_json::from_value(json!({
            "metadata": {
                "name": name, "namespace": "default", "uid": format!("uid-{name}"),
                "generateName": "web-7d9f8b6c4-", "resourceVersion": "4242",
                "labels": { "app": "web", "pod-template-hash": "7d9f8b6c4" },
                "ownerReferences": [{
                    "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": format!("rs-{name}"),
                    "uid": format!("owner-{name}"), "controller": true, "blockOwnerDeletion": true,
                }],
            },
            "spec": {
                "containers": [{
                    "name": "web", "image": "nginx:1.27.3", "command": ["nginx", "-g", "daemon off;"],
                    "ports": [{ "containerPort": 80, "name": "http", "protocol": "TCP" }],
                    "volumeMounts": [{
                        "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                        "name": volume, "readOnly": true,
                    }],
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent",
                }],
                "volumes": [{
                    "name": volume,
                    "projected": { "defaultMode": 420, "sources": [
                        { "serviceAccountToken": { "expirationSeconds": 3607, "path": "token" } },
                        { "configMap": { "name": "kube-root-ca.crt",
                            "items": [{ "key": "ca.crt", "path": "ca.crt" }] } },
                    ] },
                }],
                "restartPolicy": "Always", "dnsPolicy": "ClusterFirst",
                "tolerations": [
                    { "effect": "NoExecute", "key": "node.kubernetes.io/not-ready",
                      "operator": "Exists", "tolerationSeconds": 300 },
                ],
            },
            "status": {
                "phase": "Running", "startTime": started,
                "conditions": conditions,
                "containerStatuses": [{
                    "name": "web", "image": "nginx:1.27.3", "imageID": "", "ready": true,
                    "restartCount": 0, "started": true,
                    "state": { "running": { "startedAt": started } },
                }],
            },
        }))
        .unwrap()
    }

    /// What differs inside a list (a volume's name, a condition's time) is all that is kept of
    /// it, not the whole list.
    #[test]
    fn objects_alike_but_for_items_of_their_lists_take_little_room() {
        let store = Compact::<Pod>::new();
        let first = pod("web-1", "kube-api-access-wxtz7", "2026-12-05T04:26:53Z");
        let other = pod("web-2", "kube-api-access-q45gc", "2026-12-05T04:27:11Z");
        store.apply(&watcher::Event::Apply(first.clone()));
        store.apply(&watcher::Event::Apply(other.clone()));
        assert_eq!(*store.get(Some("default"), "web-2").unwrap(), other);
        assert_eq!(*store.get(Some("default"), "web-1").unwrap(), first);
        let full = serde_json::to_vec(&other).unwrap().len();
        let kept = store.read().by_key["default/web-2"].len();
        let text = String::from_utf8_lossy(&store.read().by_key["default/web-2"]).into_owned();
        assert!(kept * 2 < full, "{kept} bytes kept of {full}: {text}");
        assert!(
            !text.contains("nginx"),
            "the containers' items are patched: {text}"
        );
    }

    /// A small generator of JSON values (xorshift: the same values in every run), for the
    /// property below.
    struct Values(u64);

    impl Values {
        fn next(&mut self, below: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % below
        }

        /// A value up to `depth` levels deep, from a small alphabet of names and scalars, so
        /// that two values often share members and items.
        fn value(&mut self, depth: u32) -> Value {
            match self.next(if depth == 0 { 4 } else { 6 }) {
                0 => json!(self.next(3)),
                1 => json!(["a", "b", "c"][self.next(3) as usize]),
                2 => json!(self.next(2) == 0),
                3 => Value::Null,
                4 => (0..self.next(4)).map(|_| self.value(depth - 1)).collect(),
                _ => {
                    let members = (0..self.next(4)).map(|_| {
                        let name = ["x", "y", "z", "w"][self.next(4) as usize].to_owned();
                        (name, self.value(depth - 1))
                    });
                    Value::Object(members.collect())
                }
            }
        }

        /// `value` with a few of its parts replaced by new values.
        fn edit(&mut self, value: &Value, depth: u32) -> Value {
            if self.next(5) == 0 {
                return self.value(depth);
            }
            match value {
                Value::Array(items) => items
                    .iter()
                    .map(|item| self.edit(item, depth - 1))
                    .collect(),
                Value::Object(members) => {
                    let mut edited = Map::new();
                    for (name, member) in members {
                        if self.next(6) != 0 {
                            edited.insert(name.clone(), self.edit(member, depth - 1));
                        }
                    }
                    if self.next(4) == 0 {
                        edited.insert("v".to_owned(), self.value(depth - 1));
                    }
                    Value::Object(edited)
                }
                scalar => scalar.clone(),
            }
        }
    }

    /// The patch of `to` from `from`, applied to `from`, gives `to`: for values and edits of
    /// them of every shape (lists of the same length and not, members added and removed, a
    /// scalar becoming a list or an object and back), whenever both can be kept as patches.
    #[test]
    fn a_patch_applied_to_its_reference_gives_the_object() {
        let mut values = Values(0x9e37_79b9_7f4a_7c15);
        let mut checked = 0;
        for _ in 0..20_000 {
            let from = values.value(4);
            let to = if values.next(4) == 0 {
                values.value(4)
            } else {
                values.edit(&from, 4)
            };
            if !(patchable(&from) && patchable(&to)) {
                continue;
            }
            let mut patched = from.clone();
            patch(&mut patched, &diff(&from, &to));
            assert_eq!(patched, to, "from {from}");
            checked += 1;
        }
        assert!(checked > 5_000, "only {checked} pairs could be patched");
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
