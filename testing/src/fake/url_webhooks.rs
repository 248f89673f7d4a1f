//! The admission webhooks of the MutatingWebhookConfigurations and
//! ValidatingWebhookConfigurations stored in the fake whose `clientConfig` has a `url`: called
//! over HTTPS as the API server calls them ([`super::https`]), for the requests their `rules`
//! match, with their `failurePolicy` deciding what a failed call does.
//!
//! Webhooks whose `clientConfig` names a Service are not called: the fake has no cluster network
//! to reach a Service through. The project's webhooks stand in for those, in-process
//! ([`super::FakeApiServer::register_webhooks`]).
//!
//! Not evaluated: `namespaceSelector`, `objectSelector`, `matchConditions`, `matchPolicy:
//! Equivalent` (only the request's own version matches), `reinvocationPolicy`, and rules for
//! subresources (but `*/*`).

use std::time::Duration;

use kube::core::admission::{AdmissionResponse, Operation};
use serde_json::Value;

use super::errors::ApiError;
use super::https::{DEFAULT_TIMEOUT, Endpoint};
use super::kinds::Kind;

/// One webhook of a stored configuration, called at its URL.
#[derive(Debug)]
pub(super) struct UrlWebhook {
    pub(super) name: String,
    endpoint: Endpoint,
    rules: Vec<Value>,
    /// `failurePolicy: Ignore`: a call that fails lets the request through. (`Fail`, the
    /// default of `admissionregistration.k8s.io/v1`, refuses it.)
    ignore_failures: bool,
}

impl UrlWebhook {
    /// The webhooks with a `url` of `configurations` (stored configurations of one kind,
    /// ordered by name as the API server orders them), in their order.
    pub(super) fn of_configurations<'a>(
        configurations: impl Iterator<Item = &'a Value>,
    ) -> Vec<UrlWebhook> {
        let webhooks = configurations
            .flat_map(|configuration| configuration["webhooks"].as_array().into_iter().flatten());
        webhooks
            .filter_map(|webhook| {
                let timeout = webhook["timeoutSeconds"]
                    .as_u64()
                    .map_or(DEFAULT_TIMEOUT, Duration::from_secs);
                Some(UrlWebhook {
                    name: webhook["name"].as_str().unwrap_or_default().to_owned(),
                    endpoint: Endpoint::of(&webhook["clientConfig"], timeout)?,
                    rules: webhook["rules"].as_array().cloned().unwrap_or_default(),
                    ignore_failures: webhook["failurePolicy"] == "Ignore",
                })
            })
            .collect()
    }

    /// Whether a rule of the webhook matches `operation` on objects of `kind`.
    pub(super) fn matches(&self, kind: &Kind, operation: &Operation) -> bool {
        // The API server never sends its own webhook configurations to webhooks: a webhook
        // could otherwise lock everyone out of removing it.
        if kind.group == "admissionregistration.k8s.io" {
            return false;
        }
        let operation = match operation {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
            Operation::Connect => "CONNECT",
        };
        let scope = if kind.namespaced {
            "Namespaced"
        } else {
            "Cluster"
        };
        self.rules.iter().any(|rule| {
            let has = |field: &str, wanted: &[&str]| {
                rule[field]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|value| value.as_str().is_some_and(|value| wanted.contains(&value)))
            };
            has("apiGroups", &["*", &kind.group])
                && has("apiVersions", &["*", &kind.version])
                && has("resources", &["*", "*/*", &kind.plural])
                && has("operations", &["*", operation])
                && rule["scope"]
                    .as_str()
                    .is_none_or(|wanted| wanted == "*" || wanted == scope)
        })
    }

    /// Posts `review` (an `AdmissionReview`) and returns the webhook's response; `None` when the
    /// call failed and the failure policy ignores failures. A call that fails under `Fail`
    /// refuses the request with the API server's `500`.
    pub(super) fn call(&self, review: &Value) -> Result<Option<AdmissionResponse>, ApiError> {
        match self.try_call(review) {
            Ok(response) => Ok(Some(response)),
            Err(why) if self.ignore_failures => {
                eprintln!(
                    "fake API server: failed calling webhook \"{}\", ignored (failurePolicy: Ignore): {why}",
                    self.name
                );
                Ok(None)
            }
            Err(why) => Err(ApiError::internal(format!(
                "Internal error occurred: failed calling webhook \"{}\": {why}",
                self.name
            ))),
        }
    }

    fn try_call(&self, review: &Value) -> Result<AdmissionResponse, String> {
        let answer = self
            .endpoint
            .post(review)
            .map_err(|why| format!("failed to call webhook: {why}"))?;
        let response = answer
            .get("response")
            .filter(|response| !response.is_null())
            .ok_or("webhook response was absent")?;
        let response: AdmissionResponse = serde_json::from_value(response.clone())
            .map_err(|error| format!("received invalid webhook response: {error}"))?;
        let expected = review["request"]["uid"].as_str().unwrap_or_default();
        if response.uid != expected {
            return Err(format!(
                "expected response.uid=\"{expected}\", got \"{}\"",
                response.uid
            ));
        }
        Ok(response)
    }
}
