//! The custom resource and objects the fake's own tests and the runtime's tests against it
//! (testing/tests/runtime, which includes this file by path) share.

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
pub(crate) struct WidgetSpec {
    pub(crate) size: i32,
}

/// The status of a [`Widget`].
#[derive(KubeSchema, Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
pub(crate) struct WidgetStatus {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["type".into()]))]
    pub(crate) conditions: Vec<Condition>,
}

/// A Widget in the `default` namespace.
pub(crate) fn widget(name: &str, size: i32) -> Widget {
    let mut widget = Widget::new(name, WidgetSpec { size });
    widget.metadata.namespace = Some("default".to_owned());
    widget
}

/// A ConfigMap in the `default` namespace with `data`.
pub(crate) fn config_map(name: &str, data: &[(&str, &str)]) -> ConfigMap {
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
