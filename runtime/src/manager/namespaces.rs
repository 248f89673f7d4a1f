//! Which namespaces the controllers watch, from the `WATCH_NAMESPACE` environment variable (the
//! convention of operator-sdk and OLM):
//!
//! - unset or empty: every namespace (the operator needs a ClusterRole);
//! - `ns1`: only that namespace (`operator-rs init --namespaced` sets it to the pod's own namespace
//!   in `config/manager/manager.yaml`, so a Role is enough);
//! - `ns1,ns2`: only those namespaces, with one watch per namespace.

use std::fmt;
use std::str::FromStr;

use futures::future;
use k8s_openapi::NamespaceResourceScope;
use kube::{Api, Client, Resource};
use tokio_util::sync::CancellationToken;

use super::RunnableFuture;

/// The environment variable that restricts the controllers to some namespaces.
pub const WATCH_NAMESPACE_ENV: &str = "WATCH_NAMESPACE";

/// The namespaces the controllers watch; see the [module documentation](self).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WatchNamespaces {
    /// Every namespace, with one cluster-wide watch per kind.
    All,
    /// Only these namespaces (at least one, without duplicates), with one watch each.
    Only(Vec<String>),
}

/// A `WATCH_NAMESPACE` value that is not a comma-separated list of namespace names.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NamespaceError {
    /// One entry is not a valid namespace name (a DNS-1123 label).
    #[error(
        "{WATCH_NAMESPACE_ENV}={value:?}: {name:?} is not a valid namespace name (lowercase letters, \
         digits and '-', starting and ending with a letter or digit, at most 63 characters)"
    )]
    InvalidName {
        /// The whole variable.
        value: String,
        /// The offending entry.
        name: String,
    },
    /// The variable is not valid Unicode.
    #[error("{WATCH_NAMESPACE_ENV} is not valid UTF-8")]
    NotUnicode,
}

impl WatchNamespaces {
    /// Reads [`WATCH_NAMESPACE_ENV`]; an unset variable means every namespace.
    pub fn from_env() -> Result<Self, NamespaceError> {
        match std::env::var(WATCH_NAMESPACE_ENV) {
            Ok(value) => value.parse(),
            Err(std::env::VarError::NotPresent) => Ok(WatchNamespaces::All),
            Err(std::env::VarError::NotUnicode(_)) => Err(NamespaceError::NotUnicode),
        }
    }

    /// The namespaces to watch, or `None` for every namespace.
    pub fn namespaces(&self) -> Option<&[String]> {
        match self {
            WatchNamespaces::All => None,
            WatchNamespaces::Only(namespaces) => Some(namespaces),
        }
    }

    /// Whether objects in `namespace` are watched: use it to ignore events about other namespaces,
    /// for instance in a mapper of `Controller::watches` over a cluster-scoped kind.
    pub fn contains(&self, namespace: &str) -> bool {
        match self {
            WatchNamespaces::All => true,
            WatchNamespaces::Only(namespaces) => namespaces.iter().any(|ns| ns == namespace),
        }
    }

    /// One [`Api`] per watch for the namespaced kind `K`: `Api::all` for every namespace, otherwise
    /// `Api::namespaced` for each namespace. Build one `Controller` per returned `Api` (see
    /// [`join_controllers`]); [`Api::namespace`] tells which namespace each one covers.
    pub fn apis<K>(&self, client: &Client) -> Vec<Api<K>>
    where
        K: Resource<Scope = NamespaceResourceScope>,
        K::DynamicType: Default,
    {
        match self {
            WatchNamespaces::All => vec![Api::all(client.clone())],
            WatchNamespaces::Only(namespaces) => namespaces
                .iter()
                .map(|namespace| Api::namespaced(client.clone(), namespace))
                .collect(),
        }
    }
}

impl FromStr for WatchNamespaces {
    type Err = NamespaceError;

    /// Parses a `WATCH_NAMESPACE` value. Spaces around names are ignored and so are empty entries
    /// (`"ns1,"`), duplicates are dropped, and a value with no names at all means every namespace.
    fn from_str(value: &str) -> Result<Self, Self::Err> {
        let mut namespaces: Vec<String> = Vec::new();
        for name in value
            .split(',')
            .map(str::trim)
            .filter(|name| !name.is_empty())
        {
            if !is_dns1123_label(name) {
                return Err(NamespaceError::InvalidName {
                    value: value.to_owned(),
                    name: name.to_owned(),
                });
            }
            if !namespaces.iter().any(|known| known == name) {
                namespaces.push(name.to_owned());
            }
        }
        if namespaces.is_empty() {
            Ok(WatchNamespaces::All)
        } else {
            Ok(WatchNamespaces::Only(namespaces))
        }
    }
}

impl fmt::Display for WatchNamespaces {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WatchNamespaces::All => f.write_str("all namespaces"),
            WatchNamespaces::Only(namespaces) => f.write_str(&namespaces.join(",")),
        }
    }
}

/// Namespace names are DNS-1123 labels; checking them early turns a typo in `WATCH_NAMESPACE` into
/// a startup error instead of a watch that fails forever.
fn is_dns1123_label(name: &str) -> bool {
    let bytes = name.as_bytes();
    let alphanumeric = |byte: &u8| byte.is_ascii_lowercase() || byte.is_ascii_digit();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes.iter().all(|byte| alphanumeric(byte) || *byte == b'-')
        && bytes.first().is_some_and(alphanumeric)
        && bytes.last().is_some_and(alphanumeric)
}

/// Runs several controllers (typically one per watched namespace) as one future, so that a
/// controller's `setup` can keep returning a single one.
///
/// If one of them fails or stops early, `shutdown` is cancelled so that the others finish their
/// reconciles gracefully, and the first failure is returned once all have stopped.
pub fn join_controllers(
    controllers: Vec<RunnableFuture>,
    shutdown: CancellationToken,
) -> RunnableFuture {
    Box::pin(async move {
        let mut first_error = None;
        let mut running = controllers;
        // `select_all` needs at least one future, hence the check before each round.
        while !running.is_empty() {
            let (result, _, rest) = future::select_all(running).await;
            running = rest;
            if let Err(error) = result {
                shutdown.cancel();
                first_error.get_or_insert(error);
            } else if !shutdown.is_cancelled() {
                // `Shared::run_controller` reports early stops as errors; this covers other futures.
                shutdown.cancel();
                first_error.get_or_insert(anyhow::anyhow!(
                    "a controller stopped before shutdown was requested"
                ));
            }
        }
        match first_error {
            Some(error) => Err(error),
            None => Ok(()),
        }
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use axum::http::{Request, Response};
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::client::Body;

    use super::*;

    fn parse(value: &str) -> Result<WatchNamespaces, NamespaceError> {
        value.parse()
    }

    fn only(names: &[&str]) -> WatchNamespaces {
        WatchNamespaces::Only(names.iter().map(|name| name.to_string()).collect())
    }

    #[test]
    fn empty_means_all_namespaces() {
        assert_eq!(parse(""), Ok(WatchNamespaces::All));
        assert_eq!(parse(" , "), Ok(WatchNamespaces::All));
    }

    #[test]
    fn parses_one_or_several_namespaces() {
        assert_eq!(parse("ns1"), Ok(only(&["ns1"])));
        assert_eq!(parse("ns1,ns2"), Ok(only(&["ns1", "ns2"])));
        assert_eq!(parse(" ns1 , ns2,ns1, "), Ok(only(&["ns1", "ns2"])));
    }

    #[test]
    fn rejects_invalid_names() {
        for bad in ["Ns1", "ns_1", "-ns", "ns-", "ns1,a.b", &"n".repeat(64)] {
            assert!(
                matches!(parse(bad), Err(NamespaceError::InvalidName { .. })),
                "{bad} should be rejected"
            );
        }
    }

    #[test]
    fn contains_and_display() {
        assert!(WatchNamespaces::All.contains("anything"));
        let two = only(&["a", "b"]);
        assert!(two.contains("b") && !two.contains("c"));
        assert_eq!(two.to_string(), "a,b");
        assert_eq!(WatchNamespaces::All.namespaces(), None);
    }

    fn client() -> Client {
        let service = tower::service_fn(|_: Request<Body>| async {
            Err::<Response<Body>, _>(std::io::Error::other("no API server in unit tests"))
        });
        Client::new(service, "default")
    }

    #[tokio::test]
    async fn one_api_per_watched_namespace() {
        let all = WatchNamespaces::All.apis::<ConfigMap>(&client());
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].namespace(), None);
        assert_eq!(all[0].resource_url(), "/api/v1/configmaps");

        let apis = only(&["ns1", "ns2"]).apis::<ConfigMap>(&client());
        let namespaces: Vec<_> = apis.iter().map(|api| api.namespace()).collect();
        assert_eq!(namespaces, [Some("ns1"), Some("ns2")]);
        assert_eq!(apis[1].resource_url(), "/api/v1/namespaces/ns2/configmaps");
    }

    #[tokio::test]
    async fn joined_controllers_stop_together_and_report_the_first_error() {
        let shutdown = CancellationToken::new();
        let waits_for_shutdown = {
            let shutdown = shutdown.clone();
            Box::pin(async move {
                shutdown.cancelled().await;
                Ok(())
            }) as RunnableFuture
        };
        let fails = Box::pin(async { Err(anyhow::anyhow!("boom")) }) as RunnableFuture;
        let joined = join_controllers(vec![waits_for_shutdown, fails], shutdown.clone());
        let error = tokio::time::timeout(Duration::from_secs(5), joined)
            .await
            .unwrap()
            .unwrap_err();
        assert_eq!(error.to_string(), "boom");
        assert!(shutdown.is_cancelled());
    }

    #[tokio::test]
    async fn joined_controllers_end_fine_on_shutdown() {
        let shutdown = CancellationToken::new();
        let controllers = (0..3)
            .map(|_| {
                let shutdown = shutdown.clone();
                Box::pin(async move {
                    shutdown.cancelled().await;
                    Ok(())
                }) as RunnableFuture
            })
            .collect();
        let joined = tokio::spawn(join_controllers(controllers, shutdown.clone()));
        shutdown.cancel();
        joined.await.unwrap().unwrap();
    }
}
