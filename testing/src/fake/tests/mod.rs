//! Tests of the fake API server through kube's client, the way controllers use it.

mod apply;
#[cfg(feature = "envtest")]
mod conformance;
mod objects;
mod verdicts;
mod watch;

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::ObjectMeta;
use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

/// A custom resource for the tests: `size` pods of a Deployment, with conditions keyed by type,
/// like the deploy-image plugin's kinds.
#[derive(CustomResource, KubeSchema, Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[kube(
    group = "example.com",
    version = "v1",
    kind = "Widget",
    namespaced,
    status = "WidgetStatus"
)]
pub(super) struct WidgetSpec {
    pub(super) size: i32,
}

/// The status of a [`Widget`].
#[derive(KubeSchema, Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
pub(super) struct WidgetStatus {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["type".into()]))]
    pub(super) conditions: Vec<Condition>,
}

/// A Widget in the `default` namespace.
pub(super) fn widget(name: &str, size: i32) -> Widget {
    let mut widget = Widget::new(name, WidgetSpec { size });
    widget.metadata.namespace = Some("default".to_owned());
    widget
}

/// A ConfigMap in the `default` namespace with `data`.
pub(super) fn config_map(name: &str, data: &[(&str, &str)]) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some("default".to_owned()),
            ..ObjectMeta::default()
        },
        data: Some(
            data.iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect::<BTreeMap<_, _>>(),
        ),
        ..ConfigMap::default()
    }
}

/// The `reason` and `code` of a kube API error.
pub(super) fn api_error<T: std::fmt::Debug>(result: Result<T, kube::Error>) -> (String, u16) {
    match result {
        Err(kube::Error::Api(status)) => (status.reason.clone(), status.code),
        other => panic!("expected an API error, got {other:?}"),
    }
}
