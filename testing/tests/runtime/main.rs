//! The runtime against the test harnesses: its controllers, caches, sharding, storage
//! migrations, webhooks and client run against the fake API server (or the mocked one), through
//! the runtime's public API, as a project's tests run them.
//!
//! They live here, as integration tests of operator-rs-testing, rather than as unit tests of
//! operator-rs-runtime: the harness links the runtime, so a unit test of the runtime that linked
//! the harness would hold two copies of the runtime's types. The runtime's own unit tests need no
//! API server.

mod absent_spec;
mod admission;
mod cache;
mod certificates;
mod client;
mod context;
mod controller;
mod events;
mod finalizer;
mod local_webhooks;
mod migration;
mod owned;
mod sharding;
mod url_webhooks;
mod versions;

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

/// A Namespace `name`, for tests that write to another namespace than `default` through a
/// client (the API server refuses creates in a namespace that does not exist).
pub(crate) fn namespace(name: &str) -> k8s_openapi::api::core::v1::Namespace {
    k8s_openapi::api::core::v1::Namespace {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        ..Default::default()
    }
}

/// The `reason` and `code` of a kube API error.
pub(crate) fn api_error<T: std::fmt::Debug>(result: Result<T, kube::Error>) -> (String, u16) {
    match result {
        Err(kube::Error::Api(status)) => (status.reason.clone(), status.code),
        other => panic!("expected an API error, got {other:?}"),
    }
}
