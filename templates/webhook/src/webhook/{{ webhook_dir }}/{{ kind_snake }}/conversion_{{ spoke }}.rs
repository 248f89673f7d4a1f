{{ rust_header }}//! Conversions between {{ kind }} `{{ version }}` (the hub) and `{{ spoke }}` (a spoke), which the
//! conversion webhook chains to serve {{ kind }}s in every version.
//!
//! Conversions must not lose information: a {{ kind }} converted to the other version and back
//! must come out unchanged, or data is lost when a client writes it back. For a field that only
//! one version has, keep its value in an annotation while the object is in the other version.
//! `From` cannot fail; implement `TryFrom` instead (with an error that implements `Display`) if
//! some objects cannot be converted, which makes them unreadable in the other version.

// The hub version.
use {{ api_module }};

// The spoke version.
use {{ spoke_api_module }};

impl From<{{ spoke }}::{{ kind }}> for {{ version }}::{{ kind }} {
    fn from(spoke: {{ spoke }}::{{ kind }}) -> Self {
        {{ version }}::{{ kind }} {
            metadata: spoke.metadata,
            spec: spoke.spec.into(),
            status: spoke.status.map(Into::into),
        }
    }
}

impl From<{{ spoke }}::{{ kind }}Spec> for {{ version }}::{{ kind }}Spec {
    fn from(spoke: {{ spoke }}::{{ kind }}Spec) -> Self {
        // TODO(user): convert the fields that differ between the versions.
{%- if spec.size %}
        {{ version }}::{{ kind }}Spec {
            size: spoke.size,
{%- if spec.container_port %}
            container_port: spoke.container_port,
{%- endif %}
        }
{%- else %}
        {{ version }}::{{ kind }}Spec { foo: spoke.foo }
{%- endif %}
    }
}

impl From<{{ spoke }}::{{ kind }}Status> for {{ version }}::{{ kind }}Status {
    fn from(spoke: {{ spoke }}::{{ kind }}Status) -> Self {
        {{ version }}::{{ kind }}Status {
            conditions: spoke.conditions,
        }
    }
}

impl From<{{ version }}::{{ kind }}> for {{ spoke }}::{{ kind }} {
    fn from(hub: {{ version }}::{{ kind }}) -> Self {
        {{ spoke }}::{{ kind }} {
            metadata: hub.metadata,
            spec: hub.spec.into(),
            status: hub.status.map(Into::into),
        }
    }
}

impl From<{{ version }}::{{ kind }}Spec> for {{ spoke }}::{{ kind }}Spec {
    fn from(hub: {{ version }}::{{ kind }}Spec) -> Self {
        // TODO(user): convert the fields that differ between the versions.
{%- if spec.size %}
        {{ spoke }}::{{ kind }}Spec {
            size: hub.size,
{%- if spec.container_port %}
            container_port: hub.container_port,
{%- endif %}
        }
{%- else %}
        {{ spoke }}::{{ kind }}Spec { foo: hub.foo }
{%- endif %}
    }
}

impl From<{{ version }}::{{ kind }}Status> for {{ spoke }}::{{ kind }}Status {
    fn from(hub: {{ version }}::{{ kind }}Status) -> Self {
        {{ spoke }}::{{ kind }}Status {
            conditions: hub.conditions,
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
    use k8s_openapi::jiff::Timestamp;
    use operator_rs_testing::webhook::convert;

    use super::*;

    /// A condition, to fill in the status.
    fn condition() -> Condition {
        Condition {
            type_: "Available".to_owned(),
            status: "True".to_owned(),
            reason: "Reconciled".to_owned(),
            message: "all good".to_owned(),
            last_transition_time: Time(Timestamp::UNIX_EPOCH),
            observed_generation: Some(1),
        }
    }

    // TODO(user): set every field of both versions in `hub()` and `spoke()`, so that the round
    // trips below check that none of them gets lost.

    /// A {{ version }} {{ kind }} with every field set.
    fn hub() -> {{ version }}::{{ kind }} {
        let mut hub = {{ version }}::{{ kind }}::new("sample", Default::default());
        hub.metadata.labels = Some([("app".to_owned(), "sample".to_owned())].into());
{%- if spec.size %}
        hub.spec.size = 3;
{%- else %}
        hub.spec.foo = Some("bar".to_owned());
{%- endif %}
        let mut status = {{ version }}::{{ kind }}Status::default();
        status.conditions.push(condition());
        hub.status = Some(status);
        hub
    }

    /// A {{ spoke }} {{ kind }} with every field set.
    fn spoke() -> {{ spoke }}::{{ kind }} {
        let mut spoke = {{ spoke }}::{{ kind }}::new("sample", Default::default());
        spoke.metadata.annotations = Some([("note".to_owned(), "sample".to_owned())].into());
{%- if spec.size %}
        spoke.spec.size = 3;
{%- else %}
        spoke.spec.foo = Some("bar".to_owned());
{%- endif %}
        let mut status = {{ spoke }}::{{ kind }}Status::default();
        status.conditions.push(condition());
        spoke.status = Some(status);
        spoke
    }

    #[test]
    fn {{ version }}_to_{{ spoke }}_and_back_loses_nothing() {
        let webhook = super::super::conversion::webhook();
        let hub = hub();
        let spoke: {{ spoke }}::{{ kind }} = convert(&webhook, &hub);
        assert_eq!(spoke.spec.{% if spec.size %}size{% else %}foo{% endif %}, hub.spec.{% if spec.size %}size{% else %}foo{% endif %});
        let back: {{ version }}::{{ kind }} = convert(&webhook, &spoke);
        let (back, hub) = (serde_json::to_value(back), serde_json::to_value(hub));
        assert_eq!(back.unwrap(), hub.unwrap());
    }

    #[test]
    fn {{ spoke }}_to_{{ version }}_and_back_loses_nothing() {
        let webhook = super::super::conversion::webhook();
        let spoke = spoke();
        let hub: {{ version }}::{{ kind }} = convert(&webhook, &spoke);
        assert_eq!(hub.spec.{% if spec.size %}size{% else %}foo{% endif %}, spoke.spec.{% if spec.size %}size{% else %}foo{% endif %});
        let back: {{ spoke }}::{{ kind }} = convert(&webhook, &hub);
        let (back, spoke) = (serde_json::to_value(back), serde_json::to_value(spoke));
        assert_eq!(back.unwrap(), spoke.unwrap());
    }
}
