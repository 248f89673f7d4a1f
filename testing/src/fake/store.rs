//! The objects of the fake API server and the rules of writing them: resource versions,
//! generations, the status subresource, preconditions, admission (schemas, defaults, CEL rules,
//! webhooks), finalizers, garbage collection, and the history that watches replay. The
//! storage of the versions of a resource and their conversions are in `store/versions.rs`, what
//! the API server does with CustomResourceDefinitions in `store/crds.rs`.

mod crds;
mod pods;
mod versions;

pub(super) use crds::crd_resource;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

use axum::body::Bytes;
use http::StatusCode;
use json_patch::PatchOperation;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use serde_json::{Map, Value, json};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use kube::core::admission::Operation;

use super::admission::{Request, User, Webhooks};
use super::errors::{ApiError, FieldError};
use super::fields::{Managers, Scope};
use super::kinds::{Kind, ResourceKey};
use super::metadata::{self, NameRule};
use super::schema::Schema;
use super::selector::Selector;
use super::typed;
use super::url_webhooks::UrlWebhook;
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
    sender: UnboundedSender<Bytes>,
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

/// A change to an existing object (or, for an apply, maybe a new one).
pub(super) enum Edit {
    /// `PUT`: the whole object.
    Replace(Value),
    /// A JSON merge patch (RFC 7386); strategic merge patches are taken as merge patches.
    Merge(Value),
    /// A JSON patch (RFC 6902).
    Json(json_patch::Patch),
    /// A server-side apply.
    Apply { config: Value, force: bool },
}

/// Who writes, and how: what every write and create carries besides the object.
#[derive(Clone, Debug)]
pub(super) struct Caller {
    /// What the write may change: the object, its status, or (the fake's own writes) both.
    pub(super) scope: Scope,
    /// The field manager.
    pub(super) manager: String,
    /// `dryRun`: everything is checked, nothing is stored.
    pub(super) dry_run: bool,
    /// `fieldValidation=Strict`: unknown fields are an error instead of being dropped.
    pub(super) strict: bool,
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
    /// The schema of a built-in kind's Rust type (validation only), made when first needed.
    built_in_schema: Option<fn() -> Arc<Schema>>,
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

    /// Serves a built-in kind, checked against its Rust type with `check` and `schema`.
    pub(super) fn register_built_in(
        &mut self,
        kind: Kind,
        check: typed::Check,
        schema: fn() -> Arc<Schema>,
    ) {
        let enforcement = Enforcement {
            schema: None,
            built_in_schema: Some(schema),
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
            built_in_schema: None,
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
        let items = page
            .iter()
            .map(|(_, object)| self.convert(resource, object))
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
    ) -> Result<UnboundedReceiver<Bytes>, ApiError> {
        let kind = self.kind(resource)?;
        let (sender, receiver) = unbounded_channel();
        let watcher = Watcher {
            resource: resource.clone(),
            namespace: namespace.map(str::to_owned),
            filter,
            sender,
        };
        let send = |line| {
            // The receiver is still here: it is returned below.
            let _ = watcher.sender.send(line);
        };
        match since {
            Since::Now | Since::InitialEvents => {
                for (_, object) in self.objects_in(resource, namespace) {
                    if watcher.filter.matches(object) {
                        send(self.event_line(resource, "ADDED", object));
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
                    send(event_line("BOOKMARK", &bookmark));
                }
            }
            Since::Revision(revision) if revision < self.compacted => {
                // The stream ends after the error: the client lists again.
                let expired = ApiError::expired(revision, self.compacted + 1);
                send(event_line("ERROR", &expired.status()));
                return Ok(receiver);
            }
            Since::Revision(revision) => {
                for change in self.history.iter().filter(|c| c.revision > revision) {
                    if let Some(type_) = watcher.event_type(change) {
                        send(self.event_line(resource, type_, &change.object));
                    }
                }
            }
        }
        self.watchers.push(watcher);
        Ok(receiver)
    }

    /// Creates an object in `namespace` (for a namespaced kind) for `caller`. Its scope is
    /// [`Scope::Main`] for clients (a status subresource's `status` is dropped) and
    /// [`Scope::Whole`] for the fake's own writes.
    pub(super) fn create(
        &mut self,
        resource: &ResourceKey,
        namespace: Option<&str>,
        mut object: Value,
        caller: &Caller,
    ) -> Result<Value, ApiError> {
        let (scope, manager, dry_run) = (caller.scope, caller.manager.as_str(), caller.dry_run);
        let kind = self.kind(resource)?;
        check_type(&kind, &mut object)?;
        let metadata = object_field(&mut object, "metadata");
        match (
            kind.namespaced,
            metadata.get("namespace").and_then(Value::as_str),
        ) {
            (true, Some(given)) if Some(given) != namespace => {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
            (true, _) => {
                metadata.insert("namespace".into(), json!(namespace.unwrap_or("default")));
            }
            (false, _) => {
                metadata.remove("namespace");
            }
        }
        let name = match metadata.get("name").and_then(Value::as_str) {
            Some(name) if !name.is_empty() => name.to_owned(),
            _ => match metadata.get("generateName").and_then(Value::as_str) {
                Some(prefix) if !prefix.is_empty() => {
                    self.serial += 1;
                    format!("{prefix}{:05x}", self.serial & 0xfffff)
                }
                _ => {
                    return Err(ApiError::invalid(
                        &kind,
                        "",
                        "metadata.name: Required value: name or generateName is required",
                    ));
                }
            },
        };
        metadata.insert("name".into(), json!(name));
        let namespace = kind.namespaced.then(|| namespace.unwrap_or("default"));
        let key = object_key(namespace, &name);
        if self.stored(resource, &key).is_some() {
            return Err(ApiError::already_exists(&kind, &name));
        }
        if kind.status_subresource
            && scope == Scope::Main
            && let Some(fields) = object.as_object_mut()
        {
            fields.remove("status");
        }
        let request = Request {
            operation: Operation::Create,
            user: &caller.user,
            name: &name,
            namespace,
            dry_run,
        };
        let mut object = self.admit(&kind, caller, &request, object, None)?;
        self.prepare_crd(&kind, scope, &mut object, None)?;
        let mut managers = Managers::default();
        managers.record_update(&kind, scope, manager, None, &object);
        self.insert_new(&kind, key, object, managers, dry_run)
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
        metadata.insert("generation".into(), json!(1));
        if dry_run {
            return Ok(object);
        }
        let object = self.to_storage(kind, object)?;
        let stored = self.commit(kind, key, object, managers, None);
        self.served_crd(kind, &stored);
        self.convert(&kind.resource(), &stored)
    }

    /// Changes the object `name` as `write` says, and returns the answer's status (`201
    /// Created` when an apply created it) and the object as stored. A write that changes nothing stores nothing: the
    /// resource version stays, and watches see nothing.
    pub(super) fn write(
        &mut self,
        resource: &ResourceKey,
        namespace: Option<&str>,
        name: &str,
        write: Write,
    ) -> Result<(StatusCode, Value), ApiError> {
        let kind = self.kind(resource)?;
        let key = object_key(namespace, name);
        let Write { caller, edit } = write;
        let (scope, manager, dry_run) = (caller.scope, caller.manager.clone(), caller.dry_run);
        let Some(stored) = self.stored(resource, &key) else {
            return match edit {
                // An apply that names a `uid` is about that object: it does not create another.
                Edit::Apply { config, .. } if has_uid(&config) => {
                    Err(uid_conflict(&kind, name, &config, &Value::Null))
                }
                Edit::Apply { config, force } if scope == Scope::Main => {
                    let object = self.create_by_apply(&kind, key, &caller, &config, force)?;
                    Ok((StatusCode::CREATED, object))
                }
                _ => Err(ApiError::not_found(&kind, name)),
            };
        };
        let stored_live = stored.value.clone();
        let live = self.convert(resource, &stored_live)?;
        let before = stored.managers.clone();
        let mut managers = before.clone();
        let object = edited(&kind, name, (scope, &manager), &mut managers, &live, edit)?;

        let request = Request {
            operation: Operation::Update,
            user: &caller.user,
            name,
            namespace,
            dry_run,
        };
        let mut object = self.admit(&kind, &caller, &request, object, Some(&live))?;
        self.prepare_crd(&kind, scope, &mut object, Some(&live))?;
        check_no_new_finalizers(&kind, name, &live, &object)?;
        if desired_state(&kind, &object) != desired_state(&kind, &live) {
            let generation = live["metadata"]["generation"].as_i64().unwrap_or(0);
            object["metadata"]["generation"] = json!(generation + 1);
        }
        // As the API server compares the object it would store with the one stored, byte for
        // byte in the storage version: a write that changes nothing is not stored, but the same
        // object is when it is stored in another version than the storage version (this is what
        // storage version migrations rely on).
        if without_managed_fields(&object) == without_managed_fields(&live)
            && managers.same_as(&before)
            && self.in_storage_version(resource, &stored_live)
        {
            return Ok((StatusCode::OK, live));
        }
        if dry_run {
            return Ok((StatusCode::OK, object));
        }
        let object = self.to_storage(&kind, object)?;
        let stored = self.commit(&kind, key, object, managers, Some(stored_live));
        self.served_crd(&kind, &stored);
        Ok((StatusCode::OK, self.convert(resource, &stored)?))
    }

    /// A server-side apply to an object that does not exist yet creates it.
    fn create_by_apply(
        &mut self,
        kind: &Kind,
        key: ObjectKey,
        caller: &Caller,
        config: &Value,
        force: bool,
    ) -> Result<Value, ApiError> {
        let (manager, dry_run) = (caller.manager.as_str(), caller.dry_run);
        let (namespace, name) = &key;
        check_config(kind, name, config)?;
        let mut skeleton = json!({
            "apiVersion": kind.api_version(),
            "kind": kind.kind,
            "metadata": { "name": name },
        });
        if kind.namespaced {
            skeleton["metadata"]["namespace"] = json!(namespace);
        }
        let mut managers = Managers::default();
        let object = managers
            .apply(kind, Scope::Main, manager, &skeleton, config, force)
            .expect("nobody else owns fields of a new object");
        let request = Request {
            operation: Operation::Create,
            user: &caller.user,
            name,
            namespace: kind.namespaced.then_some(namespace.as_str()),
            dry_run,
        };
        let mut object = self.admit(kind, caller, &request, object, None)?;
        self.prepare_crd(kind, Scope::Main, &mut object, None)?;
        self.insert_new(kind, key, object, managers, dry_run)
    }

    /// Deletes an object: at once without finalizers (then its dependents too, unless
    /// orphaned), or by setting its `deletionTimestamp` until its finalizers are gone. A client's
    /// delete (with its `user`; the garbage collector has none here) goes through the validating
    /// webhooks registered for deletes.
    pub(super) fn delete(
        &mut self,
        resource: &ResourceKey,
        namespace: Option<&str>,
        name: &str,
        options: &Value,
        dry_run: bool,
        user: Option<&User>,
    ) -> Result<Value, ApiError> {
        let kind = self.kind(resource)?;
        let key = object_key(namespace, name);
        let Some(stored) = self.stored(resource, &key) else {
            return Err(ApiError::not_found(&kind, name));
        };
        let stored_live = stored.value.clone();
        let managers = stored.managers.clone();
        let live = self.convert(resource, &stored_live)?;
        for (precondition, field) in [("uid", "uid"), ("resourceVersion", "resourceVersion")] {
            if let Some(expected) = options["preconditions"][precondition].as_str()
                && live["metadata"][field].as_str() != Some(expected)
            {
                let why = format!(
                    "Precondition failed: {precondition} in precondition: {expected}, {precondition} in object meta: {}",
                    live["metadata"][field].as_str().unwrap_or_default()
                );
                return Err(ApiError::conflict(&kind, name, &why));
            }
        }
        if let Some(user) = user {
            let request = Request {
                operation: Operation::Delete,
                user,
                name,
                namespace,
                dry_run,
            };
            let remote = self.url_webhooks::<ValidatingWebhookConfiguration>();
            self.webhooks
                .validate(&kind, &request, None, Some(&live), &remote)?;
        }
        if !finalizers(&live).is_empty() {
            if live["metadata"]["deletionTimestamp"].is_string() {
                return Ok(live);
            }
            let mut object = live.clone();
            object["metadata"]["deletionTimestamp"] = now();
            object["metadata"]["deletionGracePeriodSeconds"] = json!(0);
            if dry_run {
                return Ok(object);
            }
            let object = self.to_storage(&kind, object)?;
            let stored = self.commit(&kind, key, object, managers, Some(stored_live));
            return self.convert(resource, &stored);
        }
        let orphan =
            options["propagationPolicy"] == "Orphan" || options["orphanDependents"] == true;
        if !dry_run {
            self.remove(&kind, &key, orphan);
        }
        Ok(json!({
            "apiVersion": "v1",
            "kind": "Status",
            "metadata": {},
            "status": "Success",
            "details": {
                "name": name,
                "group": kind.group,
                "kind": kind.plural,
                "uid": live["metadata"]["uid"],
            },
        }))
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
            metadata.insert("managedFields".into(), managers.render(&kind.api_version()));
        }
        let resource = kind.resource().storage();
        if object["metadata"]["deletionTimestamp"].is_string() && finalizers(&object).is_empty() {
            self.objects
                .entry(resource.clone())
                .or_default()
                .remove(&key);
            self.record(Change {
                revision: self.revision,
                resource,
                namespace: key.0,
                kind: ChangeKind::Deleted,
                object: object.clone(),
                previous: None,
            });
            if let Some(uid) = object["metadata"]["uid"].as_str() {
                self.collect_garbage(uid);
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
        watchers.retain(|watcher| match watcher.event_type(&change) {
            Some(type_) => {
                let line = self.event_line(&watcher.resource, type_, &change.object);
                watcher.sender.send(line).is_ok()
            }
            None => !watcher.sender.is_closed(),
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
                strict: false,
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
    /// unknown fields and set defaults (custom resources), call the mutating webhooks (then
    /// prune and default again), validate (schema and CEL rules, or the built-in kind's type,
    /// and the metadata), call the validating webhooks. Writes to the status subresource call
    /// no webhook. Returns the object to store.
    fn admit(
        &self,
        kind: &Kind,
        caller: &Caller,
        request: &Request,
        mut object: Value,
        old: Option<&Value>,
    ) -> Result<Value, ApiError> {
        let Some(enforcement) = self.enforcement.get(&kind.resource()).cloned() else {
            return Ok(object);
        };
        let calls_webhooks = caller.scope != Scope::Status;
        self.complete(kind, &enforcement, &mut object, caller.strict)?;
        if calls_webhooks {
            let remote = self.url_webhooks::<MutatingWebhookConfiguration>();
            if self
                .webhooks
                .mutate(kind, request, &mut object, old, &remote)?
            {
                self.complete(kind, &enforcement, &mut object, false)?;
            }
        }
        let errors = validate(kind, &enforcement, &object, old)?;
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

    /// Prunes and defaults a custom resource as the API server decodes it; with `strict`
    /// (`fieldValidation=Strict`), an unknown field is an error instead.
    fn complete(
        &self,
        kind: &Kind,
        enforcement: &Enforcement,
        object: &mut Value,
        strict: bool,
    ) -> Result<(), ApiError> {
        let Some(schema) = &enforcement.schema else {
            return Ok(());
        };
        let pruned = schema.prune(object);
        if strict && !pruned.is_empty() {
            let unknown: Vec<String> = pruned
                .iter()
                .map(|field| format!("unknown field \"{field}\""))
                .collect();
            return Err(ApiError::bad_request(format!(
                "{} in version \"{}\" cannot be handled as a {}: strict decoding error: {}",
                kind.kind,
                kind.version,
                kind.kind,
                unknown.join(", ")
            )));
        }
        schema.default(object);
        Ok(())
    }
}

/// The field errors of `object` (`old` before an update): its schema's or its type's, and its
/// metadata's; or the API server's refusal of a body that does not decode.
fn validate(
    kind: &Kind,
    enforcement: &Enforcement,
    object: &Value,
    old: Option<&Value>,
) -> Result<Vec<FieldError>, ApiError> {
    let mut errors = metadata::validate(object, enforcement.names);
    if let Some(check) = enforcement.typed
        && let Err(message) = check(object)
    {
        return Err(ApiError::bad_request(format!(
            "{} in version \"{}\" cannot be handled as a {}: {message}",
            kind.kind, kind.version, kind.kind
        )));
    }
    if let Some(schema) = &enforcement.schema {
        errors.extend(schema.validate(object, old));
    }
    if let Some(schema) = enforcement.built_in_schema {
        errors.extend(schema().validate(object, old));
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

/// A body must be an object of the URL's kind; `apiVersion` and `kind` are filled in if missing.
fn check_type(kind: &Kind, object: &mut Value) -> Result<(), ApiError> {
    let Some(fields) = object.as_object_mut() else {
        return Err(ApiError::bad_request("the body is not a JSON object"));
    };
    for (field, expected) in [
        ("apiVersion", kind.api_version()),
        ("kind", kind.kind.clone()),
    ] {
        match fields.get(field).and_then(Value::as_str) {
            None | Some("") => {
                fields.insert(field.to_owned(), json!(expected));
            }
            Some(given) if given != expected => {
                return Err(ApiError::bad_request(format!(
                    "{field} {given:?} does not match the URL's {expected:?}"
                )));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// An applied configuration must name its type, and may name only its own object.
fn check_config(kind: &Kind, name: &str, config: &Value) -> Result<(), ApiError> {
    if !config.is_object() {
        return Err(ApiError::bad_request(
            "the applied configuration is not an object",
        ));
    }
    for (field, expected) in [
        ("apiVersion", kind.api_version()),
        ("kind", kind.kind.clone()),
    ] {
        if config[field].as_str() != Some(expected.as_str()) {
            return Err(ApiError::bad_request(format!(
                "{field} must be {expected:?} in an applied configuration"
            )));
        }
    }
    match config["metadata"]["name"].as_str() {
        Some(given) if !given.is_empty() && given != name => Err(ApiError::bad_request(format!(
            "the name of the object ({given}) does not match the name on the URL ({name})"
        ))),
        _ => Ok(()),
    }
}

/// A write that names a `resourceVersion` requires the object to be at that version.
fn check_resource_version(
    kind: &Kind,
    name: &str,
    object: &Value,
    live: &Value,
) -> Result<(), ApiError> {
    match object["metadata"]["resourceVersion"].as_str() {
        Some(version)
            if !version.is_empty()
                && Some(version) != live["metadata"]["resourceVersion"].as_str() =>
        {
            Err(ApiError::conflict(
                kind,
                name,
                "the object has been modified; please apply your changes to the latest version and try again",
            ))
        }
        _ => Ok(()),
    }
}

fn has_uid(object: &Value) -> bool {
    object["metadata"]["uid"]
        .as_str()
        .is_some_and(|uid| !uid.is_empty())
}

/// A write that names a `uid` requires the object to have it (the API server's precondition).
fn check_uid(kind: &Kind, name: &str, object: &Value, live: &Value) -> Result<(), ApiError> {
    if has_uid(object) && object["metadata"]["uid"] != live["metadata"]["uid"] {
        return Err(uid_conflict(kind, name, object, live));
    }
    Ok(())
}

fn uid_conflict(kind: &Kind, name: &str, object: &Value, live: &Value) -> ApiError {
    let why = format!(
        "Precondition failed: UID in precondition: {}, UID in object meta: {}",
        object["metadata"]["uid"].as_str().unwrap_or_default(),
        live["metadata"]["uid"].as_str().unwrap_or_default()
    );
    ApiError::conflict(kind, name, &why)
}

/// What a write of `scope` may change: with a status subresource, writes to the object keep
/// the live status, and writes to the status keep everything else.
fn scoped(kind: &Kind, scope: Scope, live: &Value, object: Value) -> Value {
    let with_status_of = |mut target: Value, source: &Value| {
        if let Some(fields) = target.as_object_mut() {
            match source.get("status") {
                Some(status) => fields.insert("status".to_owned(), status.clone()),
                None => fields.remove("status"),
            };
        }
        target
    };
    match scope {
        _ if !kind.status_subresource => object,
        Scope::Whole => object,
        Scope::Main => with_status_of(object, live),
        Scope::Status => with_status_of(live.clone(), &object),
    }
}

/// Puts back the metadata that only the API server sets, and refuses a new name or namespace.
fn keep_system_metadata(live: &Value, object: &mut Value) -> Result<(), ApiError> {
    for field in ["apiVersion", "kind"] {
        object[field] = live[field].clone();
    }
    let metadata = object_field(object, "metadata");
    for field in ["name", "namespace"] {
        if let Some(given) = metadata.get(field).and_then(Value::as_str)
            && !given.is_empty()
            && Some(given) != live["metadata"][field].as_str()
        {
            return Err(ApiError::bad_request(format!(
                "metadata.{field} cannot change"
            )));
        }
    }
    for field in [
        "name",
        "namespace",
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
        "resourceVersion",
    ] {
        match live["metadata"].get(field) {
            Some(value) => metadata.insert(field.to_owned(), value.clone()),
            None => metadata.remove(field),
        };
    }
    metadata.remove("managedFields");
    Ok(())
}

/// What `metadata.generation` counts changes of: everything but `metadata`, and but `status`
/// with a status subresource.
fn desired_state(kind: &Kind, object: &Value) -> Value {
    let mut state = object.clone();
    if let Some(fields) = state.as_object_mut() {
        fields.remove("metadata");
        if kind.status_subresource {
            fields.remove("status");
        }
    }
    state
}

fn without_managed_fields(object: &Value) -> Value {
    let mut object = object.clone();
    if let Some(metadata) = object["metadata"].as_object_mut() {
        metadata.remove("managedFields");
    }
    object
}

/// Applies a JSON patch as the API server does, which differs from RFC 6902 (and the
/// `json-patch` crate) in one place that kube's finalizer helper relies on: a `test` for `null`
/// succeeds when the path does not exist.
fn json_patch(live: &Value, patch: &json_patch::Patch) -> Result<Value, String> {
    let mut object = live.clone();
    for operation in &patch.0 {
        if let PatchOperation::Test(test) = operation
            && test.value.is_null()
            && object.pointer(test.path.as_str()).is_none()
        {
            continue;
        }
        json_patch::patch(&mut object, std::slice::from_ref(operation))
            .map_err(|error| error.to_string())?;
    }
    Ok(object)
}

/// The object `live` (of `kind`, named `name`) becomes by `edit`, written by `manager` on the
/// `scope` (the object or its status), with `managers` recording its fields.
fn edited(
    kind: &Kind,
    name: &str,
    (scope, manager): (Scope, &str),
    managers: &mut Managers,
    live: &Value,
    edit: Edit,
) -> Result<Value, ApiError> {
    if let Edit::Apply { config, force } = edit {
        check_config(kind, name, &config)?;
        check_resource_version(kind, name, &config, live)?;
        check_uid(kind, name, &config, live)?;
        let mut object = managers
            .apply(kind, scope, manager, live, &config, force)
            .map_err(|conflicts| {
                let fields: Vec<String> = conflicts
                    .iter()
                    .map(|c| format!("conflict with \"{}\": {}", c.manager, c.field))
                    .collect();
                let why = format!(
                    "Apply failed with {} conflict{}: {}",
                    conflicts.len(),
                    if conflicts.len() == 1 { "" } else { "s" },
                    fields.join(", ")
                );
                ApiError::conflict(kind, name, &why)
            })?;
        keep_system_metadata(live, &mut object)?;
        return Ok(object);
    }
    let object = match edit {
        Edit::Replace(mut object) => {
            check_type(kind, &mut object)?;
            object
        }
        Edit::Merge(patch) => {
            let mut object = live.clone();
            json_patch::merge(&mut object, &patch);
            object
        }
        Edit::Json(patch) => {
            json_patch(live, &patch).map_err(|error| ApiError::invalid(kind, name, &error))?
        }
        Edit::Apply { .. } => unreachable!("handled above"),
    };
    check_resource_version(kind, name, &object, live)?;
    check_uid(kind, name, &object, live)?;
    let mut object = scoped(kind, scope, live, object);
    keep_system_metadata(live, &mut object)?;
    managers.record_update(kind, scope, manager, Some(live), &object);
    Ok(object)
}

/// An object being deleted (`live`) gets no new finalizer.
fn check_no_new_finalizers(
    kind: &Kind,
    name: &str,
    live: &Value,
    object: &Value,
) -> Result<(), ApiError> {
    if !live["metadata"]["deletionTimestamp"].is_string() {
        return Ok(());
    }
    let old = finalizers(live);
    if finalizers(object).iter().any(|f| !old.contains(f)) {
        return Err(ApiError::invalid(
            kind,
            name,
            "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted",
        ));
    }
    Ok(())
}
