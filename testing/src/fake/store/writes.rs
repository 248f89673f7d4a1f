//! The writes of the fake API server, in the API server's order of checks: a create (the
//! request's namespace must exist, a name is generated, the kind's strategy prepares the object,
//! admission and validation, then the storage's own checks: no `resourceVersion`, no object of
//! that name), an update or a patch (the object must exist, or an apply or an update of a kind
//! that allows it creates it; the preconditions of `uid` and `resourceVersion`; the strategy;
//! admission and validation; nothing stored when nothing changed), and a delete (preconditions,
//! finalizers, garbage collection).

use http::StatusCode;
use serde_json::{Value, json};

use kube::core::admission::Operation;

use super::super::admission::Request;
use super::super::errors::{ApiError, ErrorType, FieldError, KindNames, go_quote};
use super::super::fields::{Managers, Scope, Writer};
use super::super::kinds::{Kind, ResourceKey};
use super::super::query::FieldValidation;
use super::super::strategy::Strategy;
use super::{Caller, Edit, ObjectKey, Store, Write, finalizers, now, object_field, object_key};

/// The characters of generated names' suffixes, as the API server's (no vowels, no look-alikes).
const NAME_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

impl Store {
    /// Creates an object in `namespace` (for a namespaced kind) for `caller`. Its scope is
    /// [`Scope::Main`] for clients (a status subresource's `status` is dropped) and
    /// [`Scope::Whole`] for the fake's own writes.
    pub(in super::super) fn create(
        &mut self,
        resource: &ResourceKey,
        namespace: Option<&str>,
        mut object: Value,
        caller: &Caller,
    ) -> Result<Value, ApiError> {
        let kind = self.kind(resource)?;
        check_type(&kind, &mut object)?;
        let namespace = self.request_namespace(&kind, namespace, &mut object)?;
        let name = self.generate_name(&mut object);
        let strategy = Strategy::of(&kind);
        // Decoded (defaults set), then seen by the field managers, before admission and the
        // strategy change it.
        self.decode(&kind, caller, &mut object)?;
        let mut managers = Managers::default();
        let reset = strategy.reset(&kind, caller.scope);
        let writer = Writer {
            kind: &kind,
            scope: caller.scope,
            manager: &caller.manager,
            reset: &reset,
        };
        managers.record_update(&writer, &self.empty_object(&kind), &object);
        let request = Request {
            operation: Operation::Create,
            user: &caller.user,
            name: &name,
            namespace: namespace.as_deref(),
            dry_run: caller.dry_run,
        };
        let scope = caller.scope;
        let mut prepare = |object: &mut Value| prepare_create(&kind, &strategy, scope, object);
        let mut object = self.admit(&kind, caller, &request, object, None, &mut prepare)?;
        self.prepare_crd(&kind, caller.scope, &mut object, None)?;
        if object["metadata"]["resourceVersion"]
            .as_str()
            .is_some_and(|version| !version.is_empty())
        {
            return Err(ApiError::unclassified(
                "resourceVersion should not be set on objects to be created",
            ));
        }
        let key = object_key(namespace.as_deref(), &name);
        if self.stored(resource, &key).is_some() {
            return Err(ApiError::already_exists(&kind, &name));
        }
        self.insert_new(&kind, key, object, managers, caller.dry_run)
    }

    /// The namespace of a new object: the request's, which the object may repeat but not
    /// contradict, and which must exist and not be terminating (the API server's
    /// `NamespaceLifecycle` admission). Cluster-scoped objects have none.
    fn request_namespace(
        &self,
        kind: &Kind,
        namespace: Option<&str>,
        object: &mut Value,
    ) -> Result<Option<String>, ApiError> {
        let metadata = object_field(object, "metadata");
        if !kind.namespaced {
            metadata.remove("namespace");
            return Ok(None);
        }
        let namespace = namespace.unwrap_or("default");
        match metadata.get("namespace").and_then(Value::as_str) {
            Some(given) if !given.is_empty() && given != namespace => {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
            _ => {
                metadata.insert("namespace".into(), json!(namespace));
            }
        }
        match self.stored(
            &super::namespaces::namespaces(),
            &object_key(None, namespace),
        ) {
            None => Err(ApiError::namespace_not_found(namespace)),
            Some(stored) if stored.value["metadata"]["deletionTimestamp"].is_string() => {
                Err(ApiError::terminating_namespace(kind, namespace))
            }
            Some(_) => Ok(Some(namespace.to_owned())),
        }
    }

    /// Creates the namespace `namespace` if there is none, as the API server's own write (the
    /// namespaces every cluster has, and those of the fake's `put`).
    pub(in super::super) fn ensure_namespace(&mut self, namespace: &str) {
        let resource = super::namespaces::namespaces();
        if self
            .stored(&resource, &object_key(None, namespace))
            .is_some()
        {
            return;
        }
        let caller = Caller {
            scope: Scope::Whole,
            manager: "kube-apiserver".to_owned(),
            dry_run: false,
            validation: FieldValidation::Ignore,
            duplicates: Vec::new(),
            user: super::super::admission::User {
                name: "system:apiserver".to_owned(),
                groups: vec!["system:masters".to_owned()],
            },
        };
        let namespace =
            json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": namespace } });
        // Cannot fail but for a name no namespace may have: then there is none.
        let _ = self.create(&resource, None, namespace, &caller);
    }

    /// The object's name, generated from its `generateName` if it has none: the prefix and
    /// five characters of the API server's alphabet.
    fn generate_name(&mut self, object: &mut Value) -> String {
        let metadata = object_field(object, "metadata");
        if let Some(name) = metadata.get("name").and_then(Value::as_str)
            && !name.is_empty()
        {
            return name.to_owned();
        }
        let Some(prefix) = metadata.get("generateName").and_then(Value::as_str) else {
            return String::new();
        };
        if prefix.is_empty() {
            return String::new();
        }
        self.serial += 1;
        // A mix of the serial (splitmix64), so that names look as random as the API server's.
        let mut bits = self.serial.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        bits = (bits ^ (bits >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        bits ^= bits >> 31;
        let suffix: String = (0..5)
            .map(|index| {
                let digit = (bits >> (index * 8)) as usize % NAME_ALPHABET.len();
                char::from(NAME_ALPHABET[digit])
            })
            .collect();
        let name = format!("{prefix}{suffix}");
        metadata.insert("name".into(), json!(name));
        name
    }

    /// A kind's empty object, as the API server's `New()` makes it: what a create is compared
    /// with to tell the fields it set.
    fn empty_object(&self, kind: &Kind) -> Value {
        let mut object = json!({ "apiVersion": kind.api_version(), "kind": kind.kind });
        if let Some(ty) = kind.built_in_type() {
            super::super::api_types::as_go_writes(ty, &mut object);
        }
        object
    }

    /// Changes the object `name` as `write` says, and returns the answer's status (`201
    /// Created` when an apply, or an update of a kind that allows it, created it) and the
    /// object as stored. A write that changes nothing stores nothing: the resource version
    /// stays, and watches see nothing.
    pub(in super::super) fn write(
        &mut self,
        resource: &ResourceKey,
        namespace: Option<&str>,
        name: &str,
        write: Write,
    ) -> Result<(StatusCode, Value), ApiError> {
        let kind = self.kind(resource)?;
        let key = object_key(namespace, name);
        let Some(stored) = self.stored(resource, &key) else {
            return self.write_absent(&kind, key, write);
        };
        let stored_live = stored.value.clone();
        let managers = stored.managers.clone();
        let live = self.convert(resource, &stored_live)?;
        let Write { caller, edit } = write;
        let strategy = Strategy::of(&kind);
        let reset = strategy.reset(&kind, caller.scope);
        let writer = Writer {
            kind: &kind,
            scope: caller.scope,
            manager: &caller.manager,
            reset: &reset,
        };
        let edited = self.edited(&writer, &caller, &strategy, &live, managers.clone(), edit)?;
        let Edited {
            object,
            managers: changed_managers,
        } = edited;
        let update = Update {
            kind: &kind,
            strategy: &strategy,
            caller: &caller,
            key,
            live: &live,
            stored_live,
            before: &managers,
        };
        self.update(update, object, changed_managers)
    }

    /// A write to an object that does not exist: an apply creates it (unless it names a
    /// `uid`), so does an update of a kind whose strategy allows it; others find nothing.
    fn write_absent(
        &mut self,
        kind: &Kind,
        key: ObjectKey,
        write: Write,
    ) -> Result<(StatusCode, Value), ApiError> {
        let Write { caller, edit } = write;
        let (namespace, name) = &key;
        let namespace = kind.namespaced.then_some(namespace.as_str());
        match edit {
            Edit::Apply { config, .. } if has_uid(&config) => Err(ApiError::conflict(
                kind,
                name,
                &format!(
                    "uid mismatch: the provided object specified uid {}, and no existing object was found",
                    config["metadata"]["uid"].as_str().unwrap_or_default()
                ),
            )),
            Edit::Apply { config, force } if caller.scope == Scope::Main => {
                let object = self.create_by_apply(kind, &key, &caller, &config, force)?;
                Ok((StatusCode::CREATED, object))
            }
            Edit::Replace(object)
                if Strategy::of(kind).create_on_update && caller.scope == Scope::Main =>
            {
                check_name(kind, name, namespace, &object)?;
                let object = self.create(&kind.resource(), namespace, object, &caller)?;
                Ok((StatusCode::CREATED, object))
            }
            Edit::Replace(object) if has_uid(&object) => {
                Err(storage_uid_conflict(kind, &key, &object, &Value::Null))
            }
            _ => Err(ApiError::not_found(kind, name)),
        }
    }

    /// A server-side apply to an object that does not exist yet creates it.
    fn create_by_apply(
        &mut self,
        kind: &Kind,
        key: &ObjectKey,
        caller: &Caller,
        config: &Value,
        force: bool,
    ) -> Result<Value, ApiError> {
        let (namespace, name) = key;
        check_config(kind, config)?;
        let mut empty = self.empty_object(kind);
        empty["metadata"] = json!({ "name": name });
        if kind.namespaced {
            empty["metadata"]["namespace"] = json!(namespace);
        }
        let strategy = Strategy::of(kind);
        let reset = strategy.reset(kind, Scope::Main);
        let writer = Writer {
            kind,
            scope: Scope::Main,
            manager: &caller.manager,
            reset: &reset,
        };
        let mut managers = Managers::default();
        let object = managers
            .apply(&writer, &empty, config, force)
            .map_err(|conflicts| ApiError::apply_conflicts(&conflicts))?;
        check_name(
            kind,
            name,
            kind.namespaced.then_some(namespace.as_str()),
            &object,
        )?;
        let namespace = kind.namespaced.then_some(namespace.as_str());
        let request = Request {
            operation: Operation::Create,
            user: &caller.user,
            name,
            namespace,
            dry_run: caller.dry_run,
        };
        let mut prepare = |object: &mut Value| prepare_create(kind, &strategy, Scope::Main, object);
        let mut object = self.admit(kind, caller, &request, object, None, &mut prepare)?;
        self.prepare_crd(kind, Scope::Main, &mut object, None)?;
        self.insert_new(kind, key.clone(), object, managers, caller.dry_run)
    }
}

/// The object an edit makes of the live one, and the managers after it.
struct Edited {
    object: Value,
    managers: Managers,
}

/// An update of a stored object, once edited.
struct Update<'a> {
    kind: &'a Kind,
    strategy: &'a Strategy,
    caller: &'a Caller,
    key: ObjectKey,
    live: &'a Value,
    /// The live object as stored (in the storage version).
    stored_live: Value,
    before: &'a Managers,
}

impl Store {
    /// Applies `edit` to `live`: the whole object of a `PUT` (checked against the URL and the
    /// preconditions it carries), a patch, or an apply (merged by the field managers).
    fn edited(
        &self,
        writer: &Writer,
        caller: &Caller,
        strategy: &Strategy,
        live: &Value,
        mut managers: Managers,
        edit: Edit,
    ) -> Result<Edited, ApiError> {
        let kind = writer.kind;
        let name = live["metadata"]["name"].as_str().unwrap_or_default();
        let namespace = live["metadata"]["namespace"].as_str();
        let is_patch = matches!(edit, Edit::Merge(_) | Edit::Json(_) | Edit::Strategic(_));
        let object = match edit {
            Edit::Replace(mut object) => {
                check_type(kind, &mut object)?;
                fill_namespace(kind, namespace, &mut object)?;
                check_name(kind, name, namespace, &object)?;
                let key = object_key(namespace, name);
                if has_uid(&object) && object["metadata"]["uid"] != live["metadata"]["uid"] {
                    return Err(storage_uid_conflict(kind, &key, &object, live));
                }
                check_update_version(kind, strategy, name, &object, live)?;
                object
            }
            Edit::Apply { config, force } => {
                check_config(kind, &config)?;
                let object = managers
                    .apply(writer, live, &config, force)
                    .map_err(|conflicts| ApiError::apply_conflicts(&conflicts))?;
                check_name(kind, name, namespace, &object)?;
                check_update_version(kind, strategy, name, &object, live)?;
                return Ok(Edited { object, managers });
            }
            patch => {
                let object = super::super::patches::apply(kind, live, patch)?;
                check_name(kind, name, namespace, &object)?;
                check_update_version(kind, strategy, name, &object, live)?;
                object
            }
        };
        // The body is decoded (defaults set) before the field managers see it.
        let mut object = object;
        if is_patch {
            self.decode_patched(kind, caller, &mut object)?;
        } else {
            self.decode(kind, caller, &mut object)?;
        }
        managers.record_update(writer, live, &object);
        Ok(Edited { object, managers })
    }

    /// The rest of an update: the strategy, admission and validation, the generation; then
    /// the object is stored, unless nothing changed.
    fn update(
        &mut self,
        update: Update,
        object: Value,
        managers: Managers,
    ) -> Result<(StatusCode, Value), ApiError> {
        let Update {
            kind,
            strategy,
            caller,
            key,
            live,
            stored_live,
            before,
        } = update;
        let (namespace, name) = (&key.0, key.1.as_str());
        let request = Request {
            operation: Operation::Update,
            user: &caller.user,
            name,
            namespace: kind.namespaced.then_some(namespace.as_str()),
            dry_run: caller.dry_run,
        };
        let scope = caller.scope;
        let mut prepare = |object: &mut Value| {
            *object = strategy.scoped(kind, scope, live, std::mem::take(object));
            keep_system_metadata(live, object);
            // Writes to the status keep the generation.
            if scope != Scope::Status
                && let Some(generation) = strategy.generation(live, object)
            {
                object["metadata"]["generation"] = json!(generation);
            }
        };
        let mut object = self.admit(kind, caller, &request, object, Some(live), &mut prepare)?;
        self.prepare_crd(kind, caller.scope, &mut object, Some(live))?;
        let resource = kind.resource();
        if without_managed_fields(&object) == without_managed_fields(live)
            && managers.same_as(before)
            && self.in_storage_version(&resource, &stored_live)
        {
            return Ok((StatusCode::OK, live.clone()));
        }
        if caller.dry_run {
            let mut object = object;
            render_managers(&mut object, &managers);
            return Ok((StatusCode::OK, object));
        }
        if object["metadata"]["deletionTimestamp"].is_string() && finalizers(&object).is_empty() {
            // The last finalizer is gone: the object goes (the API server deletes it instead
            // of storing it).
            let object = self.to_storage(kind, object)?;
            let stored = self.commit(kind, key, object, managers, Some(stored_live));
            return Ok((StatusCode::OK, self.convert(&resource, &stored)?));
        }
        let object = self.to_storage(kind, object)?;
        let stored = self.commit(kind, key, object, managers, Some(stored_live));
        self.served_crd(kind, &stored);
        Ok((StatusCode::OK, self.convert(&resource, &stored)?))
    }
}

/// What the kind's strategy does to a new object: its status (of a status subresource)
/// cleared, its generation started.
fn prepare_create(kind: &Kind, strategy: &Strategy, scope: Scope, object: &mut Value) {
    if kind.status_subresource
        && scope == Scope::Main
        && let Some(fields) = object.as_object_mut()
    {
        fields.remove("status");
        // A built-in kind's status starts empty (Go writes `{}`), or as its strategy says.
        if let Some(ty) = kind.built_in_type() {
            super::super::built_in::defaults::prepare_create(kind, object);
            super::super::api_types::as_go_writes(ty, object);
        }
    }
    if strategy.has_generation() {
        object["metadata"]["generation"] = json!(1);
    }
}

/// The `managedFields` of an object about to be returned without being stored (a dry run).
pub(super) fn render_managers(object: &mut Value, managers: &Managers) {
    let metadata = object_field(object, "metadata");
    if managers.is_empty() {
        metadata.remove("managedFields");
    } else {
        metadata.insert("managedFields".into(), managers.render());
    }
}

/// A body must be an object of the URL's kind; `apiVersion` and `kind` are filled in if missing.
pub(super) fn check_type(kind: &Kind, object: &mut Value) -> Result<(), ApiError> {
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
            Some(_) => {}
        }
    }
    Ok(())
}

/// The namespace of an updated object: the request's (filled in), not another.
fn fill_namespace(
    kind: &Kind,
    namespace: Option<&str>,
    object: &mut Value,
) -> Result<(), ApiError> {
    let metadata = object_field(object, "metadata");
    match (
        kind.namespaced,
        metadata.get("namespace").and_then(Value::as_str),
    ) {
        (false, _) => {
            metadata.remove("namespace");
        }
        (true, Some(given)) if !given.is_empty() && Some(given) != namespace => {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        (true, _) => {
            metadata.insert("namespace".into(), json!(namespace.unwrap_or_default()));
        }
    }
    Ok(())
}

/// The object of an update or a patch must keep its name (and namespace).
fn check_name(
    _kind: &Kind,
    name: &str,
    namespace: Option<&str>,
    object: &Value,
) -> Result<(), ApiError> {
    let given = object["metadata"]["name"].as_str().unwrap_or_default();
    if given != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({given}) does not match the name on the URL ({name})"
        )));
    }
    let given = object["metadata"]["namespace"].as_str().unwrap_or_default();
    if let Some(namespace) = namespace
        && !given.is_empty()
        && given != namespace
    {
        return Err(ApiError::bad_request(format!(
            "the namespace of the object ({given}) does not match the namespace on the request ({namespace})"
        )));
    }
    Ok(())
}

/// An applied configuration must be of the URL's version and kind, and carry no managed
/// fields.
fn check_config(kind: &Kind, config: &Value) -> Result<(), ApiError> {
    if !config.is_object() {
        return Err(ApiError::bad_request(
            "error decoding YAML: the applied configuration is not an object",
        ));
    }
    let api_version = config["apiVersion"].as_str().unwrap_or_default();
    let given_kind = config["kind"].as_str().unwrap_or_default();
    if (api_version, given_kind) != (kind.api_version().as_str(), kind.kind.as_str()) {
        let (group, version) = match api_version.split_once('/') {
            Some((group, version)) => (group, version),
            None => ("", api_version),
        };
        return Err(ApiError::bad_request(format!(
            "invalid object type: {group}/{version}, Kind={given_kind}"
        )));
    }
    if !config["metadata"]["managedFields"].is_null() {
        return Err(ApiError::bad_request("metadata.managedFields must be nil"));
    }
    Ok(())
}

/// The `resourceVersion` an update carries: if any, it must be the live one (`409`); without
/// one, a kind whose strategy requires it refuses the update (`422`). A version that is no
/// number is an error of the storage (`500`).
fn check_update_version(
    kind: &Kind,
    strategy: &Strategy,
    name: &str,
    object: &Value,
    live: &Value,
) -> Result<(), ApiError> {
    let given = object["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default();
    let given = match given {
        "" => 0,
        text => text.parse::<u64>().map_err(|_| {
            ApiError::unclassified(format!(
                "strconv.ParseUint: parsing {}: invalid syntax",
                go_quote(text)
            ))
        })?,
    };
    if given == 0 {
        if strategy.unconditional_update {
            return Ok(());
        }
        let error = FieldError::go(
            ErrorType::Invalid,
            "metadata.resourceVersion",
            "0x0",
            "must be specified for an update",
        );
        return Err(ApiError::invalid_field(&ResourceNames(kind), name, error));
    }
    if Some(given.to_string().as_str()) != live["metadata"]["resourceVersion"].as_str() {
        return Err(ApiError::conflict(
            kind,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        ));
    }
    Ok(())
}

/// A kind named by its resource, as the API server names it when it refuses an update without
/// `resourceVersion` (`memcacheds.cache.example.com "a" is invalid`).
struct ResourceNames<'a>(&'a Kind);

impl KindNames for ResourceNames<'_> {
    fn group_kind(&self) -> String {
        self.0.qualified_plural()
    }
    fn qualified_plural(&self) -> String {
        self.0.qualified_plural()
    }
    fn group(&self) -> &str {
        &self.0.group
    }
    // The API server names a resource's errors by its plural (`details.kind` is `memcacheds`).
    #[allow(clippy::misnamed_getters)]
    fn kind(&self) -> &str {
        &self.0.plural
    }
    fn plural(&self) -> &str {
        &self.0.plural
    }
}

pub(super) fn has_uid(object: &Value) -> bool {
    object["metadata"]["uid"]
        .as_str()
        .is_some_and(|uid| !uid.is_empty())
}

/// A `PUT` whose object names another `uid` than the stored one, as the storage refuses it.
fn storage_uid_conflict(kind: &Kind, key: &ObjectKey, object: &Value, live: &Value) -> ApiError {
    let (namespace, name) = key;
    let storage_key = storage_key(kind, namespace, name);
    let why = format!(
        "StorageError: invalid object, Code: 4, Key: {storage_key}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: {}, UID in object meta: {}",
        object["metadata"]["uid"].as_str().unwrap_or_default(),
        live["metadata"]["uid"].as_str().unwrap_or_default()
    );
    ApiError::conflict(kind, name, &why)
}

/// Where etcd keeps an object: `/registry/<resource>/…` for built-in kinds (with the API
/// server's few exceptions), `/registry/<group>/<resource>/…` for the others.
fn storage_key(kind: &Kind, namespace: &str, name: &str) -> String {
    let resource = match (kind.group.as_str(), kind.plural.as_str()) {
        ("", "services") => "services/specs".to_owned(),
        ("apiextensions.k8s.io", plural) => format!("apiextensions.k8s.io/{plural}"),
        (_, plural) if kind.built_in_type().is_some() => plural.to_owned(),
        (group, plural) => format!("{group}/{plural}"),
    };
    if namespace.is_empty() {
        format!("/registry/{resource}/{name}")
    } else {
        format!("/registry/{resource}/{namespace}/{name}")
    }
}

/// Puts back the metadata that only the API server sets.
fn keep_system_metadata(live: &Value, object: &mut Value) {
    for field in ["apiVersion", "kind"] {
        object[field] = live[field].clone();
    }
    let metadata = object_field(object, "metadata");
    // A uid stays as given (the validation of the update refuses another one).
    if metadata
        .get("uid")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        metadata.insert("uid".to_owned(), live["metadata"]["uid"].clone());
    }
    for field in [
        "creationTimestamp",
        "deletionTimestamp",
        "generation",
        "resourceVersion",
    ] {
        match live["metadata"].get(field) {
            Some(value) => metadata.insert(field.to_owned(), value.clone()),
            None => metadata.remove(field),
        };
    }
    if metadata
        .get("deletionGracePeriodSeconds")
        .is_none_or(Value::is_null)
        && let Some(seconds) = live["metadata"].get("deletionGracePeriodSeconds")
    {
        metadata.insert("deletionGracePeriodSeconds".to_owned(), seconds.clone());
    }
    metadata.remove("managedFields");
}

fn without_managed_fields(object: &Value) -> Value {
    let mut object = object.clone();
    if let Some(metadata) = object["metadata"].as_object_mut() {
        metadata.remove("managedFields");
    }
    object
}

impl Store {
    /// Deletes an object: at once without finalizers (then its dependents too, unless
    /// orphaned), or by setting its `deletionTimestamp` until its finalizers are gone. A client's
    /// delete (with its `user`; the garbage collector has none here) goes through the validating
    /// webhooks registered for deletes.
    pub(in super::super) fn delete(
        &mut self,
        resource: &ResourceKey,
        namespace: Option<&str>,
        name: &str,
        options: &Value,
        dry_run: bool,
        user: Option<&super::super::admission::User>,
    ) -> Result<Value, ApiError> {
        let kind = self.kind(resource)?;
        let key = object_key(namespace, name);
        let Some(stored) = self.stored(resource, &key) else {
            return Err(ApiError::not_found(&kind, name));
        };
        let stored_live = stored.value.clone();
        let managers = stored.managers.clone();
        let live = self.convert(resource, &stored_live)?;
        check_delete_preconditions(&kind, name, options, &live)?;
        if let Some(user) = user {
            let request = Request {
                operation: Operation::Delete,
                user,
                name,
                namespace,
                dry_run,
            };
            let remote = self.url_webhooks::<k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration>();
            self.webhooks
                .validate(&kind, &request, None, Some(&live), &remote)?;
        }
        if super::namespaces::is_namespace(&kind) {
            return self.delete_namespace(&kind, key, live, stored_live, managers, dry_run);
        }
        if !finalizers(&live).is_empty() {
            return self.delete_gracefully(&kind, key, live, stored_live, managers, dry_run);
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

    /// A delete of an object with finalizers: its `deletionTimestamp` is set (and its
    /// generation moves, as the API server's graceful deletion does), once.
    fn delete_gracefully(
        &mut self,
        kind: &Kind,
        key: ObjectKey,
        live: Value,
        stored_live: Value,
        managers: Managers,
        dry_run: bool,
    ) -> Result<Value, ApiError> {
        if live["metadata"]["deletionTimestamp"].is_string() {
            return Ok(live);
        }
        let mut object = live;
        object["metadata"]["deletionTimestamp"] = now();
        object["metadata"]["deletionGracePeriodSeconds"] = json!(0);
        if let Some(generation) = object["metadata"]["generation"].as_i64()
            && generation > 0
        {
            object["metadata"]["generation"] = json!(generation + 1);
        }
        if dry_run {
            return Ok(object);
        }
        let object = self.to_storage(kind, object)?;
        let stored = self.commit(kind, key, object, managers, Some(stored_live));
        self.convert(&kind.resource(), &stored)
    }
}

/// The preconditions of a delete (`uid`, `resourceVersion`) must hold, or `409` worded as the
/// API server words it.
fn check_delete_preconditions(
    kind: &Kind,
    name: &str,
    options: &Value,
    live: &Value,
) -> Result<(), ApiError> {
    let preconditions = &options["preconditions"];
    if let Some(uid) = preconditions["uid"].as_str() {
        let record = live["metadata"]["uid"].as_str().unwrap_or_default();
        if uid != record {
            let why = format!(
                "the UID in the precondition ({uid}) does not match the UID in record ({record}). The object might have been deleted and then recreated"
            );
            return Err(ApiError::kind_conflict(kind, name, &why));
        }
    }
    if let Some(version) = preconditions["resourceVersion"].as_str() {
        let record = live["metadata"]["resourceVersion"]
            .as_str()
            .unwrap_or_default();
        if version != record {
            let why = format!(
                "the ResourceVersion in the precondition ({version}) does not match the ResourceVersion in record ({record}). The object might have been modified"
            );
            return Err(ApiError::kind_conflict(kind, name, &why));
        }
    }
    Ok(())
}
