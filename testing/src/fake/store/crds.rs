//! CustomResourceDefinitions as objects of the fake API server, with what the API server's
//! apiextensions strategy does with them: a CRD written (created, or its spec updated) serves its
//! versions at once; it must have exactly one storage version and be named
//! `<plural>.<group>`; its `status.storedVersions` starts as the storage version, gains every
//! later storage version, and loses versions only by a write to the status subresource, which
//! must keep the storage version and name only versions of the spec (as
//! `kubectl` and storage version migrations do).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Resource as _;
use serde_json::{Value, json};

use super::super::errors::{ApiError, ErrorType, FieldError, go_quote};
use super::super::fields::Scope;
use super::super::kinds::{Kind, ResourceKey};
use super::super::names::NameRule;
use super::super::query::FieldValidation;
use super::super::typed;
use super::{Enforcement, Store};

/// Where CustomResourceDefinitions are served: `apiextensions.k8s.io/v1`.
pub(in super::super) fn crd_resource() -> ResourceKey {
    ResourceKey {
        group: CustomResourceDefinition::group(&()).into_owned(),
        version: CustomResourceDefinition::version(&()).into_owned(),
        plural: CustomResourceDefinition::plural(&()).into_owned(),
    }
}

/// The name of the version of `crd` marked as its storage version.
pub(super) fn storage_version(crd: &Value) -> Option<&str> {
    versions(crd)
        .find(|version| version["storage"] == true)
        .and_then(|version| version["name"].as_str())
}

fn versions(crd: &Value) -> impl Iterator<Item = &Value> {
    crd["spec"]["versions"].as_array().into_iter().flatten()
}

fn stored_versions(crd: &Value) -> Vec<&str> {
    crd["status"]["storedVersions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

impl Store {
    /// Serves CustomResourceDefinitions, checked against k8s-openapi's type. (Not against its
    /// schema: the JSON schema of a CRD's schema is recursive, which the fake's schemas are not.)
    pub(in super::super) fn serve_crds(&mut self) {
        let kind = Kind::of::<CustomResourceDefinition>();
        let enforcement = Enforcement {
            schema: None,
            typed: Some(typed::check::<CustomResourceDefinition>),
            names: NameRule::of(&kind.group, &kind.kind),
        };
        let resource = kind.resource();
        self.enforcement
            .insert(resource.clone(), std::sync::Arc::new(enforcement));
        self.storage_versions
            .insert(resource.storage(), kind.version.clone());
        self.kinds.insert(resource, std::sync::Arc::new(kind));
    }

    /// The stored CRD of the resource `storage` ([`ResourceKey::storage`]), if any.
    pub(super) fn crd_of(&self, storage: &ResourceKey) -> Option<&Value> {
        let name = format!("{}.{}", storage.plural, storage.group);
        let crds = self.objects.get(&crd_resource().storage())?;
        crds.get(&(String::new(), name)).map(|stored| &stored.value)
    }

    /// What the API server does with a CRD (`object`, of `kind`) before storing it, written by
    /// `scope` over `live`: checks its name, its storage version and its schemas (their CEL
    /// rules compile), and keeps `status.storedVersions` as described in [the module](self).
    /// Objects of other kinds pass unchanged.
    pub(super) fn prepare_crd(
        &self,
        kind: &Kind,
        scope: Scope,
        object: &mut Value,
        live: Option<&Value>,
    ) -> Result<(), ApiError> {
        if kind.resource() != crd_resource() {
            return Ok(());
        }
        let name = object["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let invalid = |field: &str, value: String, detail: String| {
            let error = FieldError::go(ErrorType::Invalid, field, value, detail);
            ApiError::invalid_field(kind, &name, error)
        };
        // The spec was validated (`crd_validation.rs`): one storage version, the name.
        let storage = storage_version(object).unwrap_or_default().to_owned();
        if scope != Scope::Status {
            super::super::crd_defaults::as_stored(object);
            if live.is_none() {
                // A new CRD: its status is the server's, whatever the request said, and the
                // API server's controllers accept its names a moment later (`establish`).
                object["status"] = json!({
                    "acceptedNames": { "kind": "", "plural": "" },
                    "conditions": null,
                    "storedVersions": [],
                });
            }
            // The storage version of every spec written is stored from now on.
            if !stored_versions(object).contains(&storage.as_str()) {
                let status = super::object_field(object, "status");
                let stored = status.entry("storedVersions").or_insert_with(|| json!([]));
                if !stored.is_array() {
                    *stored = json!([]);
                }
                if let Some(stored) = stored.as_array_mut() {
                    stored.push(json!(storage));
                }
            }
        }
        let stored = stored_versions(object);
        if scope == Scope::Status && stored.is_empty() {
            return Err(invalid(
                "status.storedVersions",
                "[]string{}".to_owned(),
                "must have at least one stored version".to_owned(),
            ));
        }
        let names: Vec<&str> = versions(object)
            .filter_map(|v| v["name"].as_str())
            .collect();
        if let Some((index, version)) = stored
            .iter()
            .enumerate()
            .find(|(_, version)| !names.contains(version))
        {
            return Err(invalid(
                &format!("status.storedVersions[{index}]"),
                go_quote(version),
                "must appear in spec.versions".to_owned(),
            ));
        }
        if !stored.contains(&storage.as_str()) {
            let quoted: Vec<String> = stored.iter().map(|v| go_quote(v)).collect();
            return Err(invalid(
                "status.storedVersions",
                format!("[]string{{{}}}", quoted.join(", ")),
                format!("must have the storage version {storage}"),
            ));
        }
        Ok(())
    }

    /// What the API server's controllers do with a CRD just created: accept its names and
    /// establish it, in a write to its status of their own.
    pub(super) fn establish_crd(&mut self, name: &str) {
        let resource = crd_resource();
        let Ok(crd) = self.get(&resource, None, name) else {
            return;
        };
        let now = super::now();
        let status = json!({ "status": {
            "acceptedNames": crd["spec"]["names"],
            "conditions": [
                { "type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
                  "message": "no conflicts found", "lastTransitionTime": now },
                { "type": "Established", "status": "True", "reason": "InitialNamesAccepted",
                  "message": "the initial names have been accepted", "lastTransitionTime": now },
            ],
        } });
        let write = super::Write {
            caller: super::Caller {
                scope: Scope::Status,
                manager: "kube-apiserver".to_owned(),
                dry_run: false,
                validation: FieldValidation::Ignore,
                duplicates: Vec::new(),
                user: super::super::admission::User {
                    name: "system:apiserver".to_owned(),
                    groups: vec!["system:masters".to_owned()],
                },
            },
            edit: super::Edit::Merge(status),
        };
        // Cannot fail: the CRD is there and its status valid.
        let _ = self.write(&resource, None, name, write);
    }

    /// Serves the versions of a CRD just stored (`stored`, of `kind`), as the API server does
    /// once it is established, and no longer serves the versions it dropped.
    pub(super) fn served_crd(&mut self, kind: &Kind, stored: &Value) {
        if kind.resource() != crd_resource() || stored["metadata"]["deletionTimestamp"].is_string()
        {
            return;
        }
        let Ok(crd) = serde_json::from_value::<CustomResourceDefinition>(stored.clone()) else {
            return;
        };
        let served = Kind::from_crd(&crd);
        let group = &crd.spec.group;
        let plural = &crd.spec.names.plural;
        self.kinds.retain(|key, _| {
            (&key.group, &key.plural) != (group, plural)
                || served.iter().any(|kind| kind.version == key.version)
        });
        for kind in served {
            // Cannot fail: `prepare_crd` compiled the schemas.
            let _ = self.register(kind);
        }
    }
}
