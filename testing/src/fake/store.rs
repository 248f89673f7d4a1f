//! The objects of the fake API server and the rules of writing them: resource versions,
//! generations, the status subresource, preconditions, admission (schemas, defaults, CEL rules,
//! webhooks), finalizers, garbage collection, and the history that watches replay. The
//! storage of the versions of a resource and their conversions are in `store/versions.rs`, what
//! the API server does with CustomResourceDefinitions in `store/crds.rs`.

mod crds;
mod namespaces;
mod pods;
mod versions;
mod writes;

pub(super) use crds::crd_resource;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

use axum::body::Bytes;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use serde_json::{Map, Value, json};

use super::admission::{Request, User, Webhooks};
use super::errors::{ApiError, FieldError};
use super::fields::{Managers, Scope};
use super::kinds::{Kind, ResourceKey};
use super::metadata;
use super::names::NameRule;
use super::query::FieldValidation;
use super::schema::Schema;
use super::selector::Selector;
use super::typed;
use super::url_webhooks::UrlWebhook;
use super::watch_lines::{LineReceiver, LineSender, Unread, watch_lines};
use operator_rs_runtime::webhook::{Converter, Webhook};

/// The field manager of the simulated Deployment controller's status writes.
pub(super) const DEPLOYMENT_CONTROLLER: &str = "kube-controller-manager";

/// Where an object is stored within its resource: its namespace (`""` when cluster-scoped) and
/// its name.
type ObjectKey = (String, String);

fn object_key(namespace: Option<&str>, name: &str) -> ObjectKey {
    (namespace.unwrap_or_default().to_owned(), name.to_owned())
}

/// An object as stored, and who owns its fields.
struct Stored {
    /// The object in the version it was written in, its `apiVersion`: the storage version of
    /// the time of the write.
    value: Value,
    managers: Managers,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ChangeKind {
    Added,
    Modified,
    Deleted,
}

/// One change of one object, at one resource version: what watches are sent.
struct Change {
    revision: u64,
    /// The storage of the object ([`ResourceKey::storage`]): watches of every version see it.
    resource: ResourceKey,
    namespace: String,
    kind: ChangeKind,
    object: Value,
    /// The object before a modification, to tell watches with a selector that it left or
    /// entered their selection.
    previous: Option<Value>,
}

/// The selectors of a list or a watch.
#[derive(Clone, Debug, Default)]
pub(super) struct Filter {
    pub(super) labels: Selector,
    pub(super) fields: Selector,
}

impl Filter {
    fn matches(&self, object: &Value) -> bool {
        self.labels.matches_labels(object) && self.fields.matches_fields(object)
    }
}

/// Where a watch starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Since {
    /// `resourceVersion` unset or `0`: the objects as they are now (as `ADDED`), then changes.
    Now,
    /// `sendInitialEvents=true`: the same, then a `BOOKMARK` that marks the end of the
    /// initial events (streaming lists).
    InitialEvents,
    /// The changes after this resource version, or `410 Gone` when they are forgotten.
    Revision(u64),
}

/// An open watch.
struct Watcher {
    resource: ResourceKey,
    namespace: Option<String>,
    filter: Filter,
    lines: LineSender,
}

impl Watcher {
    /// The type of the event this watch gets for `change`, if it sees it: an object that enters
    /// or leaves the watch's selection is `ADDED` or `DELETED` for it.
    fn event_type(&self, change: &Change) -> Option<&'static str> {
        if change.resource != self.resource.storage()
            || self
                .namespace
                .as_ref()
                .is_some_and(|namespace| *namespace != change.namespace)
        {
            return None;
        }
        let now = self.filter.matches(&change.object);
        let before = change
            .previous
            .as_ref()
            .is_some_and(|previous| self.filter.matches(previous));
        let type_ = match (change.kind, before, now) {
            (ChangeKind::Added, _, true) | (ChangeKind::Modified, false, true) => "ADDED",
            (ChangeKind::Modified, true, true) => "MODIFIED",
            (ChangeKind::Deleted, _, true) | (ChangeKind::Modified, true, false) => "DELETED",
            _ => return None,
        };
        Some(type_)
    }
}

/// A line of a watch stream.
fn event_line(type_: &str, object: &Value) -> Bytes {
    let mut line = serde_json::to_vec(&json!({ "type": type_, "object": object }))
        .expect("JSON values serialize");
    line.push(b'\n');
    Bytes::from(line)
}

pub(super) use super::patches::Edit;

/// Who writes, and how: what every write and create carries besides the object.
#[derive(Clone, Debug)]
pub(super) struct Caller {
    /// What the write may change: the object, its status, or (the fake's own writes) both.
    pub(super) scope: Scope,
    /// The field manager.
    pub(super) manager: String,
    /// `dryRun`: everything is checked, nothing is stored.
    pub(super) dry_run: bool,
    /// `fieldValidation`: whether unknown and duplicate fields are an error.
    pub(super) validation: FieldValidation,
    /// The fields the request's body gave twice (`spec.size`), found when it was read.
    pub(super) duplicates: Vec<String>,
    /// The user, as admission webhooks see it.
    pub(super) user: User,
}

/// A write of an object by a caller.
pub(super) struct Write {
    pub(super) caller: Caller,
    pub(super) edit: Edit,
}

/// What a kind's objects are checked against when they are written.
pub(super) struct Enforcement {
    /// The schema of a custom resource: pruning, defaults, validation and CEL rules.
    schema: Option<Arc<Schema>>,
    /// The Rust type of a built-in kind.
    typed: Option<typed::Check>,
    /// Which names its objects may have.
    names: NameRule,
}

/// Every object of the fake API server, and its watches.
pub(super) struct Store {
    kinds: BTreeMap<ResourceKey, Arc<Kind>>,
    enforcement: BTreeMap<ResourceKey, Arc<Enforcement>>,
    webhooks: Webhooks,
    /// The conversion webhooks, by the group and kind they convert.
    converters: Vec<Converter>,
    /// The storage version of the resources that no stored CRD describes (built-in kinds and
    /// [`Store::register`]ed ones): the version registered first.
    storage_versions: BTreeMap<ResourceKey, String>,
    /// By storage ([`ResourceKey::storage`]), then namespace and name.
    objects: BTreeMap<ResourceKey, BTreeMap<ObjectKey, Stored>>,
    /// The resource version of the last change: one counter for all objects, like etcd's.
    revision: u64,
    /// A counter for UIDs and generated names.
    serial: u64,
    history: VecDeque<Change>,
    /// How many changes `history` keeps.
    window: usize,
    /// The resource version of the newest change no longer in `history`.
    compacted: u64,
    watchers: Vec<Watcher>,
    pub(super) simulate_deployments: bool,
}

impl Store {
    pub(super) fn new(window: usize) -> Self {
        let mut store = Self {
            kinds: BTreeMap::new(),
            enforcement: BTreeMap::new(),
            webhooks: Webhooks::default(),
            converters: Vec::new(),
            storage_versions: BTreeMap::new(),
            objects: BTreeMap::new(),
            revision: 1,
            serial: 0,
            history: VecDeque::new(),
            window,
            compacted: 0,
            watchers: Vec::new(),
            simulate_deployments: false,
        };
        store.serve_crds();
        store
    }

    /// Serves a built-in kind, checked against its Rust type with `check`.
    pub(super) fn register_built_in(&mut self, kind: Kind, check: typed::Check) {
        let enforcement = Enforcement {
            schema: None,
            typed: Some(check),
            names: NameRule::of(&kind.group, &kind.kind),
        };
        let resource = kind.resource();
        self.enforcement
            .insert(resource.clone(), Arc::new(enforcement));
        self.storage_versions
            .entry(resource.storage())
            .or_insert_with(|| kind.version.clone());
        self.kinds.insert(resource, Arc::new(kind));
    }

    /// Serves `kind`, checked against its schema if it has one; an error names a CEL rule of
    /// the schema that does not compile.
    pub(super) fn register(&mut self, kind: Kind) -> Result<(), String> {
        let schema = kind
            .schema
            .clone()
            .map(Schema::new)
            .transpose()?
            .map(Arc::new);
        let resource = kind.resource();
        // The API server sets the defaults of the schema when it reads objects too: stored
        // objects get those of a schema registered after they were written.
        let api_version = kind.api_version();
        if let (Some(schema), Some(objects)) = (&schema, self.objects.get_mut(&resource.storage()))
        {
            for stored in objects.values_mut() {
                if stored.value["apiVersion"] == api_version.as_str() {
                    schema.default(&mut stored.value);
                }
            }
        }
        let enforcement = Enforcement {
            schema,
            typed: None,
            names: NameRule::of(&kind.group, &kind.kind),
        };
        self.enforcement
            .insert(resource.clone(), Arc::new(enforcement));
        self.storage_versions
            .entry(resource.storage())
            .or_insert_with(|| kind.version.clone());
        self.kinds.insert(resource, Arc::new(kind));
        Ok(())
    }

    /// Calls the admission webhooks of `webhooks` for the kinds they are registered for, and
    /// converts the kinds of its conversion webhooks with them (replacing the converter of the
    /// same group and kind registered before).
    pub(super) fn register_webhooks(&mut self, webhooks: Vec<Webhook>) {
        let mut admission = Vec::new();
        for webhook in webhooks {
            match webhook {
                Webhook::Conversion(converter) => {
                    self.converters.retain(|known| {
                        (known.group(), known.kind()) != (converter.group(), converter.kind())
                    });
                    self.converters.push(converter);
                }
                webhook => admission.push(webhook),
            }
        }
        self.webhooks.register(admission);
    }

    /// The kind served at `resource`, or the API server's answer for resources it does not
    /// serve.
    pub(super) fn kind(&self, resource: &ResourceKey) -> Result<Arc<Kind>, ApiError> {
        self.kinds
            .get(resource)
            .cloned()
            .ok_or_else(ApiError::no_resource)
    }

    pub(super) fn revision(&self) -> u64 {
        self.revision
    }

    pub(super) fn set_window(&mut self, window: usize) {
        self.window = window;
        self.trim_history();
    }

    /// What the open watches were sent and have not read yet.
    pub(super) fn unread(&self) -> Vec<Unread> {
        let watchers = self.watchers.iter();
        watchers
            .filter_map(|watcher| watcher.lines.unread())
            .collect()
    }

    /// Ends every open watch, as when the API server goes away.
    pub(super) fn close_watches(&mut self) {
        self.watchers.clear();
    }

    /// The object `key` of `resource` (of any of its versions), as stored.
    fn stored(&self, resource: &ResourceKey, key: &ObjectKey) -> Option<&Stored> {
        self.objects.get(&resource.storage())?.get(key)
    }

    fn objects_in<'a>(
        &'a self,
        resource: &ResourceKey,
        namespace: Option<&'a str>,
    ) -> impl Iterator<Item = (&'a ObjectKey, &'a Value)> + 'a {
        self.objects
            .get(&resource.storage())
            .into_iter()
            .flatten()
            .filter(move |((ns, _), _)| namespace.is_none_or(|namespace| ns == namespace))
            .map(|(key, stored)| (key, &stored.value))
    }

    pub(super) fn get(
        &self,
        resource: &ResourceKey,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Value, ApiError> {
        let kind = self.kind(resource)?;
        let stored = self
            .stored(resource, &object_key(namespace, name))
            .ok_or_else(|| ApiError::not_found(&kind, name))?;
        self.convert(resource, &stored.value)
    }

    /// The `apiVersion` the object is stored in, whatever version `resource` names.
    pub(super) fn stored_api_version(
        &self,
        resource: &ResourceKey,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<String> {
        let stored = self.stored(resource, &object_key(namespace, name))?;
        stored.value["apiVersion"].as_str().map(str::to_owned)
    }

    /// The objects of `resource` (in `namespace`, or all) that `filter` selects, in pages of
    /// `limit` with continue tokens; the list's resource version is the one of the first page.
    ///
    /// A continue token names the last object of its page (as the API server's names the last
    /// key read), so that objects deleted between pages do not shift the next one; it expires
    /// with the changes the fake remembers (as the API server's with etcd's compaction): `410
    /// Gone`, after which a client lists again from the start.
    pub(super) fn list(
        &self,
        resource: &ResourceKey,
        namespace: Option<&str>,
        filter: &Filter,
        limit: Option<usize>,
        continue_token: Option<&str>,
    ) -> Result<Value, ApiError> {
        let kind = self.kind(resource)?;
        let (revision, after) = match continue_token {
            Some(token) => {
                let (revision, after) = parse_continue(token).ok_or_else(|| {
                    ApiError::bad_request(format!("invalid continue token {token:?}"))
                })?;
                if revision < self.compacted {
                    return Err(ApiError::continue_expired());
                }
                (revision, Some(after))
            }
            None => (self.revision, None),
        };
        let selected: Vec<(&ObjectKey, &Value)> = self
            .objects_in(resource, namespace)
            .filter(|(key, _)| after.as_ref().is_none_or(|after| *key > after))
            .filter(|(_, object)| filter.matches(object))
            .collect();
        let limit = limit.filter(|limit| *limit > 0).unwrap_or(usize::MAX);
        let page = &selected[..limit.min(selected.len())];
        let mut metadata = json!({ "resourceVersion": revision.to_string() });
        if let (true, Some(((namespace, name), _))) = (page.len() < selected.len(), page.last()) {
            metadata["continue"] = json!(format!("{revision}/{namespace}/{name}"));
            metadata["remainingItemCount"] = json!(selected.len() - page.len());
        }
        // The items of a built-in kind's list are Go structs without their type.
        let typed = kind.built_in_type().is_some();
        let items = page
            .iter()
            .map(|(_, object)| {
                let mut item = self.convert(resource, object)?;
                if let (true, Some(fields)) = (typed, item.as_object_mut()) {
                    fields.remove("apiVersion");
                    fields.remove("kind");
                }
                Ok(item)
            })
            .collect::<Result<Vec<Value>, ApiError>>()?;
        Ok(json!({
            "apiVersion": kind.api_version(),
            "kind": format!("{}List", kind.kind),
            "metadata": metadata,
            "items": items,
        }))
    }

    /// Opens a watch: the receiver gets the lines of the watch stream until the watch is closed.
    pub(super) fn watch(
        &mut self,
        resource: &ResourceKey,
        namespace: Option<&str>,
        filter: Filter,
        since: Since,
    ) -> Result<LineReceiver, ApiError> {
        let kind = self.kind(resource)?;
        let (lines, receiver) = watch_lines();
        let mut watcher = Watcher {
            resource: resource.clone(),
            namespace: namespace.map(str::to_owned),
            filter,
            lines,
        };
        // The receiver is still here (it is returned below): every line is sent.
        match since {
            Since::Now | Since::InitialEvents => {
                for (_, object) in self.objects_in(resource, namespace) {
                    if watcher.filter.matches(object) {
                        watcher
                            .lines
                            .send(self.event_line(resource, "ADDED", object));
                    }
                }
                if since == Since::InitialEvents {
                    let bookmark = json!({
                        "apiVersion": kind.api_version(),
                        "kind": kind.kind,
                        "metadata": {
                            "resourceVersion": self.revision.to_string(),
                            "annotations": { "k8s.io/initial-events-end": "true" },
                        },
                    });
                    watcher.lines.send(event_line("BOOKMARK", &bookmark));
                }
            }
            Since::Revision(revision) if revision < self.compacted => {
                // The stream ends after the error: the client lists again.
                let expired = ApiError::expired(revision, self.compacted + 1);
                watcher.lines.send(event_line("ERROR", &expired.status()));
                return Ok(receiver);
            }
            Since::Revision(revision) => {
                for change in self.history.iter().filter(|c| c.revision > revision) {
                    if let Some(type_) = watcher.event_type(change) {
                        watcher
                            .lines
                            .send(self.event_line(resource, type_, &change.object));
                    }
                }
            }
        }
        self.watchers.push(watcher);
        Ok(receiver)
    }

    /// Sets what the API server sets on a new object, and stores it in the storage version;
    /// returns it in the version of `kind`.
    fn insert_new(
        &mut self,
        kind: &Kind,
        key: ObjectKey,
        mut object: Value,
        managers: Managers,
        dry_run: bool,
    ) -> Result<Value, ApiError> {
        self.serial += 1;
        let metadata = object_field(&mut object, "metadata");
        for field in [
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "resourceVersion",
            "managedFields",
        ] {
            metadata.remove(field);
        }
        metadata.insert(
            "uid".into(),
            json!(format!("00000000-0000-4000-8000-{:012x}", self.serial)),
        );
        metadata.insert("creationTimestamp".into(), now());
        if dry_run {
            writes::render_managers(&mut object, &managers);
            return Ok(object);
        }
        let object = self.to_storage(kind, object)?;
        let name = key.1.clone();
        let stored = self.commit(kind, key, object, managers, None);
        self.served_crd(kind, &stored);
        let answer = self.convert(&kind.resource(), &stored)?;
        if kind.resource() == crd_resource() {
            self.establish_crd(&name);
        }
        Ok(answer)
    }

    /// Stores `object` (in the storage version: [`Store::to_storage`]) at a new resource version
    /// and tells the watches; an object being deleted that has no finalizers left is removed
    /// instead. Returns the object as stored.
    fn commit(
        &mut self,
        kind: &Kind,
        key: ObjectKey,
        mut object: Value,
        managers: Managers,
        previous: Option<Value>,
    ) -> Value {
        self.revision += 1;
        let metadata = object_field(&mut object, "metadata");
        metadata.insert("resourceVersion".into(), json!(self.revision.to_string()));
        if managers.is_empty() {
            metadata.remove("managedFields");
        } else {
            metadata.insert("managedFields".into(), managers.render());
        }
        let resource = kind.resource().storage();
        let held = !finalizers(&object).is_empty()
            || (namespaces::is_namespace(kind)
                && object["spec"]["finalizers"]
                    .as_array()
                    .is_some_and(|f| !f.is_empty()));
        if object["metadata"]["deletionTimestamp"].is_string() && !held {
            self.objects
                .entry(resource.clone())
                .or_default()
                .remove(&key);
            self.record(Change {
                revision: self.revision,
                resource,
                namespace: key.0.clone(),
                kind: ChangeKind::Deleted,
                object: object.clone(),
                previous: None,
            });
            if let Some(uid) = object["metadata"]["uid"].as_str() {
                self.collect_garbage(uid);
            }
            if !key.0.is_empty() {
                self.release_namespace(&key.0);
            }
            return object;
        }
        self.objects.entry(resource.clone()).or_default().insert(
            key.clone(),
            Stored {
                value: object.clone(),
                managers,
            },
        );
        self.record(Change {
            revision: self.revision,
            resource,
            namespace: key.0.clone(),
            kind: if previous.is_some() {
                ChangeKind::Modified
            } else {
                ChangeKind::Added
            },
            object: object.clone(),
            previous,
        });
        self.simulate_deployment(kind, &key);
        object
    }

    /// Removes an object for good.
    fn remove(&mut self, kind: &Kind, key: &ObjectKey, orphan: bool) {
        let resource = kind.resource().storage();
        let Some(stored) = self.objects.get_mut(&resource).and_then(|o| o.remove(key)) else {
            return;
        };
        self.revision += 1;
        let mut object = stored.value;
        object["metadata"]["resourceVersion"] = json!(self.revision.to_string());
        self.record(Change {
            revision: self.revision,
            resource,
            namespace: key.0.clone(),
            kind: ChangeKind::Deleted,
            object: object.clone(),
            previous: None,
        });
        if let (false, Some(uid)) = (orphan, object["metadata"]["uid"].as_str()) {
            self.collect_garbage(uid);
        }
        if !key.0.is_empty() {
            self.release_namespace(&key.0);
        }
    }

    /// The garbage collector, in the background propagation mode, run at once: deletes the
    /// objects that the deleted owner `uid` owned and that have no other owner left.
    fn collect_garbage(&mut self, uid: &str) {
        let uids: BTreeSet<&str> = self
            .objects
            .values()
            .flat_map(|objects| objects.values())
            .filter_map(|stored| stored.value["metadata"]["uid"].as_str())
            .collect();
        let mut dependents = Vec::new();
        for (resource, objects) in &self.objects {
            for (key, stored) in objects {
                let owners: Vec<&str> = stored.value["metadata"]["ownerReferences"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|owner| owner["uid"].as_str())
                    .collect();
                if owners.contains(&uid) && !owners.iter().any(|owner| uids.contains(owner)) {
                    dependents.push((resource.clone(), key.clone()));
                }
            }
        }
        for (storage, (namespace, name)) in dependents {
            let Some(resource) = self.served(&storage) else {
                continue;
            };
            let namespace = (!namespace.is_empty()).then_some(namespace.as_str());
            // Gone already (a dependent of an earlier dependent) is fine.
            let _ = self.delete(&resource, namespace, &name, &json!({}), false, None);
        }
    }

    /// Sends `change` to the watches that see it, each in its version, and keeps it for
    /// watches to come.
    fn record(&mut self, change: Change) {
        let mut watchers = std::mem::take(&mut self.watchers);
        watchers.retain_mut(|watcher| match watcher.event_type(&change) {
            Some(type_) => {
                let line = self.event_line(&watcher.resource, type_, &change.object);
                watcher.lines.send(line)
            }
            None => !watcher.lines.is_closed(),
        });
        self.watchers = watchers;
        self.history.push_back(change);
        self.trim_history();
    }

    /// The line of a watch of `resource` for an event about `object` (as stored): the object
    /// converted to the watch's version, or the error of the conversion.
    fn event_line(&self, resource: &ResourceKey, type_: &str, object: &Value) -> Bytes {
        match self.convert(resource, object) {
            Ok(object) => event_line(type_, &object),
            Err(error) => event_line("ERROR", &error.status()),
        }
    }

    fn trim_history(&mut self) {
        while self.history.len() > self.window {
            if let Some(forgotten) = self.history.pop_front() {
                self.compacted = forgotten.revision;
            }
        }
    }

    /// The stand-in for the Deployment controller and the kubelet: every pod a Deployment asks
    /// for is made (see [`Store::simulate_pods`]) and available at once.
    fn simulate_deployment(&mut self, kind: &Kind, key: &ObjectKey) {
        if !self.simulate_deployments
            || (kind.group.as_str(), kind.plural.as_str()) != ("apps", "deployments")
        {
            return;
        }
        let resource = kind.resource();
        let Some(stored) = self.stored(&resource, key) else {
            return;
        };
        let deployment = &stored.value;
        if deployment["metadata"]["deletionTimestamp"].is_string() {
            return;
        }
        let deployment = deployment.clone();
        self.simulate_pods(key, &deployment);
        let replicas = deployment["spec"]["replicas"].as_i64().unwrap_or(1);
        let status = json!({
            "observedGeneration": deployment["metadata"]["generation"],
            "replicas": replicas,
            "updatedReplicas": replicas,
            "readyReplicas": replicas,
            "availableReplicas": replicas,
        });
        let current = &deployment["status"];
        if status
            .as_object()
            .into_iter()
            .flatten()
            .all(|(field, value)| current[field] == *value)
        {
            return;
        }
        let write = Write {
            caller: Caller {
                scope: Scope::Status,
                manager: DEPLOYMENT_CONTROLLER.to_owned(),
                dry_run: false,
                validation: FieldValidation::Ignore,
                duplicates: Vec::new(),
                user: User {
                    name: "system:serviceaccount:kube-system:deployment-controller".to_owned(),
                    groups: vec!["system:serviceaccounts".to_owned()],
                },
            },
            edit: Edit::Merge(json!({ "status": status })),
        };
        let (namespace, name) = key;
        let namespace = (!namespace.is_empty()).then_some(namespace.as_str());
        // Cannot fail: the Deployment is there and the patch is valid.
        let _ = self.write(&resource, namespace, name, write);
    }
}

impl Store {
    /// What the API server does with an object between decoding a write and storing it: drop
    /// unknown fields and set defaults, call the mutating webhooks (then prune and default
    /// again), `prepare` it as the kind's strategy does, validate (the metadata; the schema and
    /// CEL rules, or the built-in kind's type and rules), call the validating webhooks. Writes
    /// to the status subresource call no webhook. Returns the object to store.
    fn admit(
        &self,
        kind: &Kind,
        caller: &Caller,
        request: &Request,
        mut object: Value,
        old: Option<&Value>,
        prepare: &mut dyn FnMut(&mut Value),
    ) -> Result<Value, ApiError> {
        let Some(enforcement) = self.enforcement.get(&kind.resource()).cloned() else {
            prepare(&mut object);
            return Ok(object);
        };
        let calls_webhooks = caller.scope != Scope::Status;
        complete(kind, &enforcement, &mut object, caller)?;
        if calls_webhooks {
            let remote = self.url_webhooks::<MutatingWebhookConfiguration>();
            if self
                .webhooks
                .mutate(kind, request, &mut object, old, &remote)?
            {
                let lenient = Caller {
                    validation: FieldValidation::Ignore,
                    duplicates: Vec::new(),
                    ..caller.clone()
                };
                complete(kind, &enforcement, &mut object, &lenient)?;
            }
        }
        // The kind's strategy prepares the object between the mutating webhooks and the
        // validation.
        prepare(&mut object);
        let errors = validate(kind, &enforcement, &object, old, caller.scope)?;
        if !errors.is_empty() {
            return Err(ApiError::invalid_fields(kind, request.name, &errors));
        }
        if calls_webhooks {
            let remote = self.url_webhooks::<ValidatingWebhookConfiguration>();
            self.webhooks
                .validate(kind, request, Some(&object), old, &remote)?;
        }
        Ok(object)
    }

    /// Completes `object` as the API server decodes a write's body: unknown fields dropped (or
    /// refused), defaults set.
    fn decode(&self, kind: &Kind, caller: &Caller, object: &mut Value) -> Result<(), ApiError> {
        match self.enforcement.get(&kind.resource()) {
            Some(enforcement) => complete(kind, enforcement, object, caller),
            None => Ok(()),
        }
    }

    /// Completes a patched object as the API server decodes it; under `fieldValidation=Strict`,
    /// fields the kind does not know refuse the patch as the API server words it: `422`, the
    /// patched object and the strict decoding error.
    fn decode_patched(
        &self,
        kind: &Kind,
        caller: &Caller,
        object: &mut Value,
    ) -> Result<(), ApiError> {
        let Some(enforcement) = self.enforcement.get(&kind.resource()) else {
            return Ok(());
        };
        let patched = object.to_string();
        let unknown = complete_leniently(kind, enforcement, object);
        if caller.validation != FieldValidation::Strict || unknown.is_empty() {
            return Ok(());
        }
        let error = FieldError::new(
            super::errors::ErrorType::Invalid,
            "patch",
            Some(Value::String(patched)),
            strict_error(&[], &unknown),
        );
        Err(ApiError::invalid_field(&super::errors::NoKind, "", error))
    }

    /// The webhooks registered by URL in the stored configurations of kind `C` (mutating or
    /// validating), ordered by configuration name as the API server orders them.
    fn url_webhooks<C>(&self) -> Vec<UrlWebhook>
    where
        C: kube::Resource<DynamicType = ()>,
        C::Scope: 'static,
    {
        let resource = Kind::of::<C>().resource();
        UrlWebhook::of_configurations(self.objects_in(&resource, None).map(|(_, object)| object))
    }
}

/// Completes an object as the API server decodes it: the fields its kind does not know
/// dropped (an error with `fieldValidation=Strict`, as are fields given twice), then its
/// defaults set; a built-in kind's object gets the empty fields Go writes.
fn complete(
    kind: &Kind,
    enforcement: &Enforcement,
    object: &mut Value,
    caller: &Caller,
) -> Result<(), ApiError> {
    let unknown = complete_leniently(kind, enforcement, object);
    if caller.validation == FieldValidation::Strict
        && (!unknown.is_empty() || !caller.duplicates.is_empty())
    {
        return Err(ApiError::bad_request(format!(
            "{} in version \"{}\" cannot be handled as a {}: {}",
            kind.kind,
            kind.version,
            kind.kind,
            strict_error(&caller.duplicates, &unknown)
        )));
    }
    Ok(())
}

/// `strict decoding error: duplicate field "spec.size", unknown field "spec.colour"`.
pub(super) fn strict_error(duplicates: &[String], unknown: &[String]) -> String {
    let errors: Vec<String> = duplicates
        .iter()
        .map(|field| format!("duplicate field \"{field}\""))
        .chain(
            unknown
                .iter()
                .map(|field| format!("unknown field \"{field}\"")),
        )
        .collect();
    format!("strict decoding error: {}", errors.join(", "))
}

/// [`complete`] without the strictness: returns the unknown fields it dropped.
fn complete_leniently(kind: &Kind, enforcement: &Enforcement, object: &mut Value) -> Vec<String> {
    let mut unknown = Vec::new();
    if let Some(metadata) = object.get_mut("metadata") {
        let meta = super::api_types::Ty::parse(OBJECT_META);
        super::api_types::prune_unknown(meta, metadata, "metadata", &mut unknown);
    }
    let built_in = kind.built_in_type();
    match (&enforcement.schema, built_in) {
        (Some(schema), _) => unknown.extend(schema.prune(object)),
        (None, Some(ty)) => super::api_types::prune_unknown(ty, object, "", &mut unknown),
        (None, None) => {}
    }
    if let Some(schema) = &enforcement.schema {
        schema.default(object);
    }
    match built_in {
        Some(ty) => {
            super::built_in::defaults::apply(ty, object);
            super::api_types::as_go_writes(ty, object);
        }
        // Every kind's metadata is Go's ObjectMeta.
        None => {
            if let Some(metadata) = object.get_mut("metadata") {
                let meta = super::api_types::Ty::parse(OBJECT_META);
                super::api_types::as_go_writes(meta, metadata);
            }
        }
    }
    unknown
}

/// The type of every object's `metadata`.
const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// The field errors of `object` (`old` before an update): its metadata's, then its schema's
/// (and CEL rules') or its built-in kind's; or the API server's refusal of a body that does not
/// decode as its type.
fn validate(
    kind: &Kind,
    enforcement: &Enforcement,
    object: &Value,
    old: Option<&Value>,
    scope: Scope,
) -> Result<Vec<FieldError>, ApiError> {
    let undecodable = super::built_in::validation::decode_error(kind, object);
    if let Some(message) = undecodable.or_else(|| {
        let check = enforcement.typed?;
        check(&typed::decoded(object)).err()
    }) {
        return Err(ApiError::bad_request(format!(
            "{} in version \"{}\" cannot be handled as a {}: {message}",
            kind.kind, kind.version, kind.kind
        )));
    }
    let mut errors = match old {
        None => metadata::validate_create(object, enforcement.names, kind.namespaced),
        // The API server checks the metadata of an update twice: as every kind's (the common
        // fields), then as the kind's strategy.
        Some(old) => {
            let update = metadata::validate_update(object, old);
            let mut errors =
                metadata::validate_create(object, NameRule::PathSegment, kind.namespaced);
            errors.extend(update.iter().cloned());
            errors.extend(update);
            errors
        }
    };
    if let Some(schema) = &enforcement.schema {
        errors.extend(schema.validate(object, old));
    }
    // A write to a built-in kind's status is checked by its status strategy (metadata only,
    // here). A null member is the field's zero value, as the API server decodes a built-in kind
    // into its Go type.
    if kind.built_in_type().is_some() && scope != Scope::Status {
        let raw = if kind.resource() == crd_resource() {
            typed::CRD_RAW_JSON
        } else {
            &[]
        };
        let old = old.map(|old| typed::decoded_but(old, raw));
        let object = typed::decoded_but(object, raw);
        errors.extend(super::built_in::validation::validate(
            kind,
            &object,
            old.as_deref(),
        ));
    }
    Ok(errors)
}

/// The resource version and the last object (namespace and name) of a continue token.
fn parse_continue(token: &str) -> Option<(u64, ObjectKey)> {
    let mut parts = token.splitn(3, '/');
    let revision = parts.next()?.parse().ok()?;
    let namespace = parts.next()?.to_owned();
    let name = parts.next()?.to_owned();
    Some((revision, (namespace, name)))
}

/// Now, as the API server writes timestamps.
fn now() -> Value {
    serde_json::to_value(Time(Timestamp::now())).expect("times serialize")
}

/// The object `value[field]`, made one if it is not.
fn object_field<'a>(value: &'a mut Value, field: &str) -> &'a mut Map<String, Value> {
    if !value.is_object() {
        *value = json!({});
    }
    let child = value
        .as_object_mut()
        .expect("just made an object")
        .entry(field)
        .or_insert_with(|| json!({}));
    if !child.is_object() {
        *child = json!({});
    }
    child.as_object_mut().expect("just made an object")
}

fn finalizers(object: &Value) -> Vec<&str> {
    object["metadata"]["finalizers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}
