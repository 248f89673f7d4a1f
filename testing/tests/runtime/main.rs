//! The runtime against the test harnesses: its controllers, caches, sharding, storage
//! migrations, webhooks and client run against the fake API server (or the mocked one), through
//! the runtime's public API, as a project's tests run them.
//!
//! They live here, as integration tests of operator-rs-testing, rather than as unit tests of
//! operator-rs-runtime: the harness links the runtime, so a unit test of the runtime that linked
//! the harness would hold two copies of the runtime's types. The runtime's own unit tests need no
//! API server.
//!
//! The tests of what is behind a feature of the runtime (self-signed and `--webhook-url`
//! certificates, storage migration, sharding) run with this crate's feature of the same name.

mod absent_spec;
mod admission;
mod cache;
#[cfg(feature = "webhooks")]
mod certificates;
mod client;
mod context;
mod controller;
mod events;
mod finalizer;
#[cfg(feature = "webhooks")]
mod local_webhooks;
#[cfg(feature = "migration")]
mod migration;
mod owned;
#[cfg(feature = "sharding")]
mod sharding;
#[cfg(feature = "webhooks")]
mod url_webhooks;
mod versions;
#[path = "../../src/fake/tests/widget.rs"]
mod widget;

pub(crate) use widget::{Widget, WidgetSpec, WidgetStatus, config_map, widget};

use kube::api::ObjectMeta;

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
