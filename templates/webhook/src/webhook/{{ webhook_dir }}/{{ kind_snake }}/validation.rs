{{ rust_header }}//! The validating webhook of {{ kind }}: accepts or refuses the creation, update and deletion of
//! {{ kind }}s, after the defaulting webhooks ran and the API server checked the schema.
//!
//! Prefer the schema for the rules it can express (required fields, ranges, patterns, and CEL
//! rules with `#[x_kube(validation = ...)]`, immutable fields included): the API server checks
//! those without calling the operator. This webhook is for what the schema cannot express.
{%- if core %}
//!
//! This webhook sees every {{ kind }} of the cluster{% if kind == "Pod" %}, the operator's own Pods included: while the
//! operator is down, `failurePolicy: Fail` blocks the creation of every Pod, its own too{% endif %}. See
//! <https://book.kubebuilder.io/reference/webhook-bootstrap-problem> before deploying it.
{%- endif %}

{% if core %}use {{ rust_type }};
{% endif %}use operator_rs_runtime::webhook::{
    AdmissionRequest, Denial, FailurePolicy, Operation, Registration, Validator, Warnings, Webhook,
};
{%- if not core %}

use {{ rust_type }};
{%- endif %}

/// How the API server calls this webhook: `make manifests` writes it to
/// `config/webhook/manifests.yaml`. Add `Operation::Delete` to have deletions checked by
/// [`{{ kind }}Validator::validate_delete`].
pub const REGISTRATION: Registration = Registration {
    name: "v{{ kind_lower }}-{{ version }}.kb.io",
    path: "{{ validation_path }}",
    operations: &[Operation::Create, Operation::Update],
    failure_policy: FailurePolicy::Fail,
};

/// The validating webhook of {{ kind }}.
pub fn webhook() -> Webhook {
    Webhook::validating(REGISTRATION, {{ kind }}Validator)
}

/// Accepts or refuses {{ kind }}s. Give it fields for what it needs, e.g. values from the flags.
#[derive(Clone, Debug, Default)]
pub struct {{ kind }}Validator;

impl Validator<{{ kind }}> for {{ kind }}Validator {
    fn validate_create(
        &self,
        {{ kind_snake }}: &{{ kind }},
        _request: &AdmissionRequest<{{ kind }}>,
    ) -> Result<Warnings, Denial> {
        // TODO(user): fill in your validation logic for creations. Return
        // `Err(Denial::new("spec.field: why"))` to refuse, warnings to allow with a message.
{%- if foreign %}
        tracing::debug!(name = ?{{ kind_snake }}.metadata.name, "validating a creation");
        Ok(Warnings::new())
{%- elif spec.size %}
        let mut warnings = Warnings::new();
        if {{ kind_snake }}.spec.size == 0 {
            warnings.push("spec.size is 0: no pods will run".to_owned());
        }
        check_size({{ kind_snake }})?;
        Ok(warnings)
{%- else %}
        let mut warnings = Warnings::new();
        if {{ kind_snake }}.spec.foo.is_none() {
            warnings.push("spec.foo is not set".to_owned());
        }
        Ok(warnings)
{%- endif %}
    }

    fn validate_update(
        &self,
        {% if foreign %}_old{% else %}old{% endif %}: &{{ kind }},
        new: &{{ kind }},
        _request: &AdmissionRequest<{{ kind }}>,
    ) -> Result<Warnings, Denial> {
        // TODO(user): fill in your validation logic for updates.
{%- if foreign %}
        tracing::debug!(name = ?new.metadata.name, "validating an update");
{%- elif spec.size %}
        tracing::debug!(name = ?old.metadata.name, from = old.spec.size, to = new.spec.size, "validating an update");
        check_size(new)?;
{%- else %}
        // An example: `spec.foo` cannot change once set.
        if old.spec.foo.is_some() && new.spec.foo != old.spec.foo {
            return Err(Denial::new("spec.foo: cannot be changed once set"));
        }
{%- endif %}
        Ok(Warnings::new())
    }

    fn validate_delete(
        &self,
        {{ kind_snake }}: &{{ kind }},
        _request: &AdmissionRequest<{{ kind }}>,
    ) -> Result<Warnings, Denial> {
        // TODO(user): fill in your validation logic for deletions, and add `Operation::Delete`
        // to REGISTRATION: until then the API server does not ask.
        tracing::debug!(name = ?{{ kind_snake }}.metadata.name, "validating a deletion");
        Ok(Warnings::new())
    }
}

{%- if spec.size %}

/// The most pods a {{ kind }} may ask for. An example of a rule in code: the schema could say
/// `maximum` as well, but a webhook can make the limit depend on the namespace, a flag, a quota …
pub const MAX_SIZE: i32 = 100;

/// Refuses sizes above [`MAX_SIZE`].
fn check_size({{ kind_snake }}: &{{ kind }}) -> Result<(), Denial> {
    if {{ kind_snake }}.spec.size > MAX_SIZE {
        return Err(Denial::new(format!("spec.size: must be at most {MAX_SIZE}")));
    }
    Ok(())
}
{%- endif %}

#[cfg(test)]
mod tests {
{%- if core and not external %}
    use kube::api::ObjectMeta;
{%- endif %}
    use operator_rs_testing::webhook::{UID, admit, review};
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
{%- elif spec.size %}
        {{ kind }}::new("sample", Default::default())
{%- else %}
        let mut object = {{ kind }}::new("sample", Default::default());
        object.spec.foo = Some("bar".to_owned());
        object
{%- endif %}
    }
{%- if foreign %}

    // TODO(user): once the validator refuses something, test it: `response.allowed` is false
    // and `response.result.message` holds the reason.
    #[test]
    fn allows_objects() {
        let object = sample();
        for request in [
            review(Operation::Create, Some(&object), None),
            review(Operation::Update, Some(&object), Some(&object)),
            review(Operation::Delete, None, Some(&object)),
        ] {
            let response = admit(&webhook(), &request);
            assert!(response.allowed, "{:?}", response.result);
            assert_eq!(response.uid, UID);
            assert_eq!(response.warnings, None);
        }
    }
{%- else %}

    #[test]
    fn allows_valid_objects() {
        let object = sample();
        for request in [
            review(Operation::Create, Some(&object), None),
            review(Operation::Update, Some(&object), Some(&object)),
            review(Operation::Delete, None, Some(&object)),
        ] {
            let response = admit(&webhook(), &request);
            assert!(response.allowed, "{:?}", response.result);
            assert_eq!(response.uid, UID);
            assert_eq!(response.warnings, None);
        }
    }

{%- if spec.size %}

    #[test]
    fn warns_when_size_is_zero() {
        let mut object = sample();
        object.spec.size = 0;
        let request = review(Operation::Create, Some(&object), None);
        let response = admit(&webhook(), &request);
        assert!(response.allowed, "{:?}", response.result);
        let warnings = response.warnings.unwrap_or_default();
        assert_eq!(warnings, ["spec.size is 0: no pods will run"]);
    }

    #[test]
    fn refuses_sizes_above_the_maximum() {
        let old = sample();
        let mut new = old.clone();
        new.spec.size = MAX_SIZE + 1;
        let request = review(Operation::Update, Some(&new), Some(&old));
        let response = admit(&webhook(), &request);
        assert!(!response.allowed);
        assert_eq!(response.uid, UID);
        let reason = response.result.message;
        assert_eq!(reason, format!("spec.size: must be at most {MAX_SIZE}"));
    }
{%- else %}

    #[test]
    fn warns_when_foo_is_not_set() {
        let mut object = sample();
        object.spec.foo = None;
        let request = review(Operation::Create, Some(&object), None);
        let response = admit(&webhook(), &request);
        assert!(response.allowed, "{:?}", response.result);
        let warnings = response.warnings.unwrap_or_default();
        assert_eq!(warnings, ["spec.foo is not set"]);
    }

    #[test]
    fn refuses_to_change_foo() {
        let old = sample();
        let mut new = old.clone();
        new.spec.foo = Some("changed".to_owned());
        let request = review(Operation::Update, Some(&new), Some(&old));
        let response = admit(&webhook(), &request);
        assert!(!response.allowed);
        assert_eq!(response.uid, UID);
        let reason = response.result.message;
        assert_eq!(reason, "spec.foo: cannot be changed once set");
    }
{%- endif %}
{%- endif %}

{%- if not core and not foreign %}

    /// The API server calls the webhook: through the runtime's fake API server, with the
    /// project's CRDs and webhooks installed as `make deploy` installs them, an update the
    /// validator refuses is refused (403, the webhook's reason), and one it allows is stored.
    #[tokio::test]
    async fn the_api_server_calls_the_webhook() {
        use kube::Api;
        use kube::api::{Patch, PatchParams};

        let fake = operator_rs_testing::fake::FakeApiServer::new();
        fake.install(crate::manifests());
{%- if api_namespaced %}
        let api = Api::<{{ kind }}>::namespaced(fake.client(), "default");
{%- else %}
        let api = Api::<{{ kind }}>::all(fake.client());
{%- endif %}
        api.create(&kube::api::PostParams::default(), &sample()).await.unwrap();
{%- if spec.size %}
        let allowed = json!({ "spec": { "size": 3 } });
        let refused = json!({ "spec": { "size": MAX_SIZE + 1 } });
        let reason = format!("spec.size: must be at most {MAX_SIZE}");
{%- else %}
        let allowed = json!({ "metadata": { "labels": { "team": "a" } } });
        let refused = json!({ "spec": { "foo": "changed" } });
        let reason = "spec.foo: cannot be changed once set".to_owned();
{%- endif %}
        let params = PatchParams::default();
        api.patch("sample", &params, &Patch::Merge(&allowed))
            .await
            .expect("the webhook allows this update");
        let error = api.patch("sample", &params, &Patch::Merge(&refused)).await;
        let Err(kube::Error::Api(status)) = error else {
            panic!("the webhook refuses this update: {error:?}");
        };
        assert_eq!(status.code, 403);
        let denied = format!("admission webhook \"{}\" denied the request", REGISTRATION.name);
        assert_eq!(status.message, format!("{denied}: {reason}"));
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
