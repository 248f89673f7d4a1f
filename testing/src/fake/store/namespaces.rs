//! Namespaces as the API server and its namespace controller treat them: a delete marks a
//! namespace `Terminating` (its `kubernetes` finalizer holds it, and the API server answers with
//! it so), no object can be created in it any more (`writes.rs`), and the stand-in for the
//! namespace controller deletes what it holds, then the namespace once it is empty (objects with
//! finalizers keep it until they go).

use serde_json::{Value, json};

use super::super::errors::ApiError;
use super::super::fields::Managers;
use super::super::kinds::{Kind, ResourceKey};
use super::{ObjectKey, Store, now};

/// Whether `kind` is the core group's Namespace.
pub(super) fn is_namespace(kind: &Kind) -> bool {
    (kind.group.as_str(), kind.plural.as_str()) == ("", "namespaces")
}

/// Where Namespaces are.
pub(super) fn namespaces() -> ResourceKey {
    ResourceKey {
        group: String::new(),
        version: "v1".to_owned(),
        plural: "namespaces".to_owned(),
    }
}

impl Store {
    /// A client's delete of a namespace: marked `Terminating` (answered as such), then emptied.
    pub(super) fn delete_namespace(
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
        object["status"] = json!({ "phase": "Terminating" });
        if dry_run {
            return Ok(object);
        }
        let name = key.1.clone();
        let stored = self.commit(kind, key, object, managers, Some(stored_live));
        let answer = self.convert(&kind.resource(), &stored)?;
        self.empty_namespace(&name);
        Ok(answer)
    }

    /// The namespace controller's work: every object in the namespace deleted, then the
    /// namespace, if nothing is left.
    fn empty_namespace(&mut self, namespace: &str) {
        let held: Vec<(ResourceKey, String)> = self
            .objects
            .iter()
            .flat_map(|(storage, objects)| {
                objects
                    .keys()
                    .filter(|(ns, _)| ns == namespace)
                    .map(move |(_, name)| (storage.clone(), name.clone()))
            })
            .collect();
        for (storage, name) in held {
            let Some(resource) = self.served(&storage) else {
                continue;
            };
            // Gone already (the garbage collector's) is fine.
            let _ = self.delete(&resource, Some(namespace), &name, &json!({}), false, None);
        }
        self.release_namespace(namespace);
    }

    /// Removes the namespace `namespace` if it is terminating and holds nothing any more.
    pub(super) fn release_namespace(&mut self, namespace: &str) {
        let namespaces = namespaces();
        let key = (String::new(), namespace.to_owned());
        let terminating = self
            .stored(&namespaces, &key)
            .is_some_and(|stored| stored.value["metadata"]["deletionTimestamp"].is_string());
        let holds_objects = self
            .objects
            .values()
            .any(|objects| objects.keys().any(|(ns, _)| ns == namespace));
        if terminating && !holds_objects {
            let Ok(kind) = self.kind(&namespaces) else {
                return;
            };
            self.remove(&kind, &key, false);
        }
    }
}
