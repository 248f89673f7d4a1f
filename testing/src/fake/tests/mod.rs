//! Tests of the fake API server through kube's client, the way controllers use it.

mod apply;
#[cfg(feature = "envtest")]
mod conformance;
mod objects;
mod verdicts;
mod watch;
mod widget;

pub(crate) use widget::{Widget, config_map, widget};

/// The `reason` and `code` of a kube API error.
pub(super) fn api_error<T: std::fmt::Debug>(result: Result<T, kube::Error>) -> (String, u16) {
    match result {
        Err(kube::Error::Api(status)) => (status.reason.clone(), status.code),
        other => panic!("expected an API error, got {other:?}"),
    }
}
