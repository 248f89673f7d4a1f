//! `--webhook-url`: the address at which the API server calls a manager that runs outside the
//! cluster.

use std::fmt;
use std::str::FromStr;

use http::Uri;

/// An `https://<host>[:<port>]` URL the API server can reach the manager at: the host's address
/// on a network the API server is on, or a tunnel's. Each webhook is registered at this URL
/// followed by its path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookUrl {
    /// `https://<authority>`, without a trailing `/`.
    base: String,
    /// The host the serving certificate is for: an IP address (without IPv6's brackets) or a
    /// DNS name.
    host: String,
}

impl WebhookUrl {
    /// The host the serving certificate must be for.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The URL of the webhook served at `path` (`/validate-…`, `/convert`).
    pub fn join(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

impl fmt::Display for WebhookUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.base)
    }
}

/// Why a `--webhook-url` is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid webhook URL {url:?}: {reason}")]
pub struct InvalidWebhookUrl {
    url: String,
    reason: &'static str,
}

impl FromStr for WebhookUrl {
    type Err = InvalidWebhookUrl;

    /// Accepts what the API server accepts in a `clientConfig.url` and the manager can serve:
    /// `https` (the API server calls webhooks over TLS only), a host, no user, no query or
    /// fragment (refused by the API server), and no path: the manager serves each webhook at
    /// its own path, which is appended.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let invalid = |reason| InvalidWebhookUrl {
            url: text.to_owned(),
            reason,
        };
        if text.contains('#') {
            return Err(invalid("a fragment is not allowed"));
        }
        let uri: Uri = text.parse().map_err(|_| invalid("not a URL"))?;
        if uri.scheme_str() != Some("https") {
            return Err(invalid("the API server calls webhooks over https only"));
        }
        let authority = uri.authority().ok_or_else(|| invalid("no host"))?;
        if authority.as_str().contains('@') {
            return Err(invalid("a user is not allowed"));
        }
        if uri.query().is_some() {
            return Err(invalid("a query is not allowed"));
        }
        if !matches!(uri.path(), "" | "/") {
            return Err(invalid(
                "a path is not allowed: each webhook's own path is appended to the URL",
            ));
        }
        let host = authority.host();
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() {
            return Err(invalid("no host"));
        }
        Ok(Self {
            base: format!("https://{authority}"),
            host: host.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_ports() {
        let url: WebhookUrl = "https://192.168.1.10:9443".parse().unwrap();
        assert_eq!(url.host(), "192.168.1.10");
        assert_eq!(url.join("/convert"), "https://192.168.1.10:9443/convert");
        let url: WebhookUrl = "https://abc.ngrok.app/".parse().unwrap();
        assert_eq!(url.host(), "abc.ngrok.app");
        assert_eq!(url.to_string(), "https://abc.ngrok.app");
        let url: WebhookUrl = "https://[fd00::1]:9443".parse().unwrap();
        assert_eq!(url.host(), "fd00::1");
        assert_eq!(url.join("/m"), "https://[fd00::1]:9443/m");
    }

    #[test]
    fn what_the_api_server_or_the_manager_cannot_use_is_refused() {
        for (url, reason) in [
            ("http://192.168.1.10:9443", "https only"),
            ("192.168.1.10:9443", "https only"),
            ("https://user@host:9443", "user"),
            ("https://host:9443/prefix", "path"),
            ("https://host:9443/?a=b", "query"),
            ("https://host:9443/#x", "fragment"),
            ("not a url", "not a URL"),
        ] {
            let error = url.parse::<WebhookUrl>().unwrap_err();
            assert!(error.to_string().contains(reason), "{url}: {error}");
        }
    }
}
