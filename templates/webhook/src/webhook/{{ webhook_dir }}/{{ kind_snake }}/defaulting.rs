{{ rust_header }}//! The defaulting webhook of {{ kind }}: sets default values on {{ kind }}s as they are created
//! and updated, before the API server validates and stores them.
//!
//! Change the object in [`{{ kind }}Defaulter::apply_defaults`]; the webhook answers with a JSON
//! patch of your changes. Defaulting must be idempotent (applying it twice changes nothing
//! more), because the API server may call the webhook again after other webhooks changed the
//! object.
{%- if core %}
//!
//! This webhook sees every {{ kind }} of the cluster{% if kind == "Pod" %}, the operator's own Pods included: while the
//! operator is down, `failurePolicy: Fail` blocks the creation of every Pod, its own too{% endif %}. See
//! <https://book.kubebuilder.io/reference/webhook-bootstrap-problem> before deploying it.
{%- endif %}

{% if core %}use {{ rust_type }};
{% endif %}use operator_rs_runtime::webhook::{
    AdmissionRequest, Defaulter, Denial, FailurePolicy, Operation, Registration, Webhook,
};
{%- if not core %}

use {{ rust_type }};
{%- endif %}
{%- if spec.foo %}

/// The value [`{{ kind }}Defaulter`] gives `spec.foo` when it is not set.
// TODO(user): an example; replace it with your own defaults.
pub const DEFAULT_FOO: &str = "bar";
{%- endif %}

/// How the API server calls this webhook: `make manifests` writes it to
/// `config/webhook/manifests.yaml`.
pub const REGISTRATION: Registration = Registration {
    name: "m{{ kind_lower }}-{{ version }}.kb.io",
    path: "{{ defaulting_path }}",
    operations: &[Operation::Create, Operation::Update],
    failure_policy: FailurePolicy::Fail,
};

/// The defaulting webhook of {{ kind }}.
pub fn webhook() -> Webhook {
    Webhook::defaulting(REGISTRATION, {{ kind }}Defaulter)
}

/// Sets the defaults of {{ kind }}s. Give it fields for what it needs, e.g. values from the flags.
#[derive(Clone, Debug, Default)]
pub struct {{ kind }}Defaulter;

impl Defaulter<{{ kind }}> for {{ kind }}Defaulter {
    fn apply_defaults(
        &self,
        {{ kind_snake }}: &mut {{ kind }},
        _request: &AdmissionRequest<{{ kind }}>,
    ) -> Result<(), Denial> {
        // TODO(user): fill in your defaulting logic. Return `Err(Denial::new("why"))` to refuse
        // the request, though refusing is the validating webhook's job.
{%- if foreign %}
        tracing::debug!(name = ?{{ kind_snake }}.metadata.name, "defaulting");
{%- elif spec.size %}
        // (`spec.size` needs no code: the CRD's schema defaults it to 1.)
        tracing::debug!(name = ?{{ kind_snake }}.metadata.name, size = {{ kind_snake }}.spec.size, "defaulting");
{%- else %}
        if {{ kind_snake }}.spec.foo.is_none() {
            {{ kind_snake }}.spec.foo = Some(DEFAULT_FOO.to_owned());
        }
{%- endif %}
        Ok(())
    }
}

#[cfg(test)]
mod tests {
{%- if core and not external %}
    use kube::api::ObjectMeta;
{%- endif %}
    use operator_rs_testing::webhook::{UID, admit, patched, review};
    use serde_json::json;

    use super::*;

    /// A {{ kind }} as a user might create it.
    fn sample() -> {{ kind }} {
{%- if external %}
        serde_json::from_value({{ api_module }}::{{ kind_snake }}::example()).unwrap()
{%- elif core %}
        {{ kind }} {
            metadata: ObjectMeta {
                name: Some("sample".to_owned()),
{%- if api_namespaced %}
                namespace: Some("default".to_owned()),
{%- endif %}
                ..ObjectMeta::default()
            },
            ..{{ kind }}::default()
        }
{%- else %}
        {{ kind }}::new("sample", Default::default())
{%- endif %}
    }
{%- if not spec.foo %}

    // TODO(user): once `apply_defaults` sets something, test it: check the result with
    // `patched(&object, &response)`, and that defaulting it again changes nothing more.
    #[test]
    fn leaves_objects_unchanged() {
        let object = sample();
        let request = review(Operation::Create, Some(&object), None);
        let response = admit(&webhook(), &request);
        assert!(response.allowed, "{:?}", response.result);
        assert_eq!(response.uid, UID);
        assert_eq!(response.patch, None);
        assert_eq!(patched(&object, &response), object);
    }
{%- else %}

    #[test]
    fn sets_foo_when_it_is_not_set() {
        let object = sample();
        let request = review(Operation::Create, Some(&object), None);
        let response = admit(&webhook(), &request);
        assert!(response.allowed, "{:?}", response.result);
        assert_eq!(response.uid, UID);
        let defaulted = patched(&object, &response);
        assert_eq!(defaulted.spec.foo.as_deref(), Some(DEFAULT_FOO));

        // Defaulting is idempotent: the defaulted object needs no further patch.
        let again = review(Operation::Update, Some(&defaulted), Some(&defaulted));
        let response = admit(&webhook(), &again);
        assert!(response.allowed, "{:?}", response.result);
        assert_eq!(response.patch, None);
    }

    #[test]
    fn keeps_foo_when_it_is_set() {
        let mut object = sample();
        object.spec.foo = Some("mine".to_owned());
        let request = review(Operation::Create, Some(&object), None);
        let response = admit(&webhook(), &request);
        assert!(response.allowed, "{:?}", response.result);
        assert_eq!(response.patch, None);
    }
{%- endif %}

    #[test]
    fn refuses_malformed_requests() {
        let mut request = review(Operation::Create, Some(&sample()), None);
        request["request"]["object"]["metadata"] = json!("not an object");
        let response = admit(&webhook(), &request);
        assert!(!response.allowed);
        assert_eq!(response.uid, UID);
        assert_eq!(response.result.code, 400);
    }
}
