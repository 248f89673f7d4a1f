//! The admission webhooks the fake API server calls: the project's, in-process, as the API server
//! calls them over HTTPS, and those of stored configurations registered by URL, over HTTPS
//! ([`super::url_webhooks`]). For the kinds and operations of their registrations, the mutating
//! ones first (their JSON patches applied), then, after the schema's validation, the validating
//! ones; a denial refuses the request with the webhook's status, as the API server reports it.

use std::sync::atomic::{AtomicU64, Ordering};

use kube::core::admission::{AdmissionResponse, Operation};
use serde_json::{Value, json};

use super::errors::ApiError;
use super::kinds::Kind;
use super::url_webhooks::UrlWebhook;
use operator_rs_runtime::webhook::{AdmissionWebhook, Mode, Webhook};

/// Who makes a request, as webhooks see it in `userInfo`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct User {
    pub(super) name: String,
    pub(super) groups: Vec<String>,
}

/// A write as the admission webhooks see it.
pub(super) struct Request<'a> {
    pub(super) operation: Operation,
    pub(super) user: &'a User,
    pub(super) name: &'a str,
    pub(super) namespace: Option<&'a str>,
    pub(super) dry_run: bool,
}

/// The admission webhooks the fake calls, in the API server's order: by name (the generated
/// configurations list them sorted).
#[derive(Default)]
pub(super) struct Webhooks {
    mutating: Vec<AdmissionWebhook>,
    validating: Vec<AdmissionWebhook>,
}

impl Webhooks {
    /// Adds the admission webhooks of `webhooks` (the store keeps the conversion webhooks).
    pub(super) fn register(&mut self, webhooks: Vec<Webhook>) {
        for webhook in webhooks {
            if let Webhook::Admission(webhook) = webhook {
                match webhook.mode() {
                    Mode::Mutating => self.mutating.push(webhook),
                    Mode::Validating => self.validating.push(webhook),
                }
            }
        }
        let by_name = |a: &AdmissionWebhook, b: &AdmissionWebhook| {
            a.registration().name.cmp(b.registration().name)
        };
        self.mutating.sort_by(by_name);
        self.validating.sort_by(by_name);
    }

    /// Calls the mutating webhooks for `request` on `object` and applies their patches: the
    /// project's, then those of the stored configurations registered by URL (`remote`); whether
    /// any changed it.
    pub(super) fn mutate(
        &self,
        kind: &Kind,
        request: &Request,
        object: &mut Value,
        old: Option<&Value>,
        remote: &[UrlWebhook],
    ) -> Result<bool, ApiError> {
        let mut changed = false;
        for webhook in self.called(&self.mutating, kind, request) {
            let response = webhook.admit(&review(kind, request, Some(object), old));
            changed |= apply(webhook.registration().name, &response, object)?;
        }
        for webhook in remote_called(remote, kind, request) {
            if let Some(response) = webhook.call(&review(kind, request, Some(object), old))? {
                changed |= apply(&webhook.name, &response, object)?;
            }
        }
        Ok(changed)
    }

    /// Calls the validating webhooks for `request`: the project's, then those registered by URL
    /// (`remote`).
    pub(super) fn validate(
        &self,
        kind: &Kind,
        request: &Request,
        object: Option<&Value>,
        old: Option<&Value>,
        remote: &[UrlWebhook],
    ) -> Result<(), ApiError> {
        for webhook in self.called(&self.validating, kind, request) {
            let response = webhook.admit(&review(kind, request, object, old));
            check(webhook.registration().name, &response)?;
        }
        for webhook in remote_called(remote, kind, request) {
            if let Some(response) = webhook.call(&review(kind, request, object, old))? {
                check(&webhook.name, &response)?;
            }
        }
        Ok(())
    }

    /// The webhooks of `webhooks` registered for `kind` and the request's operation.
    fn called<'a>(
        &self,
        webhooks: &'a [AdmissionWebhook],
        kind: &'a Kind,
        request: &'a Request,
    ) -> impl Iterator<Item = &'a AdmissionWebhook> + 'a {
        webhooks.iter().filter(move |webhook| {
            let target = webhook.target();
            (
                target.group.as_str(),
                target.version.as_str(),
                target.plural.as_str(),
            ) == (
                kind.group.as_str(),
                kind.version.as_str(),
                kind.plural.as_str(),
            ) && webhook
                .registration()
                .operations
                .contains(&request.operation)
        })
    }
}

/// The webhooks among `remote` whose rules match the request.
fn remote_called<'a>(
    remote: &'a [UrlWebhook],
    kind: &'a Kind,
    request: &'a Request,
) -> impl Iterator<Item = &'a UrlWebhook> + 'a {
    remote
        .iter()
        .filter(move |webhook| webhook.matches(kind, &request.operation))
}

/// Applies the JSON patch of a mutating webhook's `response` to `object`, or refuses the
/// request as the webhook did; whether there was a patch.
fn apply(name: &str, response: &AdmissionResponse, object: &mut Value) -> Result<bool, ApiError> {
    check(name, response)?;
    let Some(patch) = &response.patch else {
        return Ok(false);
    };
    let patch: json_patch::Patch = serde_json::from_slice(patch).map_err(|error| {
        ApiError::internal(format!(
            "admission webhook \"{name}\" returned an invalid JSON patch: {error}"
        ))
    })?;
    json_patch::patch(object, &patch).map_err(|error| {
        ApiError::internal(format!(
            "admission webhook \"{name}\" returned a JSON patch that does not apply: {error}"
        ))
    })?;
    Ok(true)
}

/// A refusal as the API server reports it.
fn check(name: &str, response: &AdmissionResponse) -> Result<(), ApiError> {
    if response.allowed {
        Ok(())
    } else {
        Err(ApiError::denied(name, &response.result))
    }
}

/// The `admission.k8s.io/v1` AdmissionReview the API server would send.
fn review(kind: &Kind, request: &Request, object: Option<&Value>, old: Option<&Value>) -> Value {
    static SERIAL: AtomicU64 = AtomicU64::new(0);
    let uid = format!(
        "00000000-0000-4000-a000-{:012x}",
        SERIAL.fetch_add(1, Ordering::Relaxed)
    );
    let gvk = json!({ "group": kind.group, "version": kind.version, "kind": kind.kind });
    let gvr = json!({ "group": kind.group, "version": kind.version, "resource": kind.plural });
    let options = match request.operation {
        Operation::Create => "CreateOptions",
        Operation::Update => "UpdateOptions",
        _ => "DeleteOptions",
    };
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": gvk,
            "resource": gvr,
            "requestKind": gvk,
            "requestResource": gvr,
            "name": request.name,
            "namespace": request.namespace,
            "operation": request.operation,
            "userInfo": { "username": request.user.name, "groups": request.user.groups },
            "object": object,
            "oldObject": old,
            "dryRun": request.dry_run,
            "options": { "apiVersion": "meta.k8s.io/v1", "kind": options },
        },
    })
}
