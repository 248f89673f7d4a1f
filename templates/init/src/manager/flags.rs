{{ rust_header }}//! Command-line flags of the manager.
//!
//! The names, defaults and syntax follow kubebuilder's manager, so the kustomize patches and habits
//! from Go operators carry over: booleans accept `--flag`, `--flag=true` and `--flag=false`, and
//! addresses accept `:8081` (all interfaces) and `0` (disabled).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::str::FromStr;

use clap::{ArgAction, Parser, ValueEnum};
use tracing_subscriber::EnvFilter;

/// The default of `--leader-election-id`: unique to this operator, so that it never shares a Lease
/// with another one.
pub const DEFAULT_LEADER_ELECTION_ID: &str = "{{ leader_election_id }}";

/// The manager's flags. Add your own here; they are parsed by `clap`'s derive API.
#[derive(Clone, Debug, Parser)]
#[command(name = "manager", version, about = concat!("Runs the ", env!("CARGO_PKG_NAME"), " controllers."))]
pub struct Flags {
    /// The address the metrics endpoint binds to, e.g. `:8443`, or `0` to disable metrics.
    /// Metrics are not served yet: any other value only logs a warning at startup.
    #[arg(long, value_name = "ADDRESS", default_value = "0")]
    pub metrics_bind_address: BindAddress,

    /// The address the health probes (`/healthz`, `/readyz`) bind to, or `0` to disable them.
    #[arg(long, value_name = "ADDRESS", default_value = ":8081")]
    pub health_probe_bind_address: BindAddress,

    /// Enable leader election, so that only one replica runs the controllers at a time.
    /// Leader election is not implemented yet: when enabled, a warning is logged at startup and
    /// this replica runs the controllers without a lease, so run a single replica.
    #[arg(
        long,
        value_name = "BOOL",
        value_parser = parse_go_bool,
        num_args = 0..=1,
        require_equals = true,
        default_value = "false",
        default_missing_value = "true",
        action = ArgAction::Set
    )]
    pub leader_elect: bool,

    /// The name of the Lease object used for leader election.
    #[arg(long, value_name = "NAME", default_value = DEFAULT_LEADER_ELECTION_ID)]
    pub leader_election_id: String,

    /// Serve metrics over HTTPS with authentication and authorization (`--metrics-secure=false`
    /// for plain HTTP). Takes effect together with metrics serving, which is not implemented yet.
    #[arg(
        long,
        value_name = "BOOL",
        value_parser = parse_go_bool,
        num_args = 0..=1,
        require_equals = true,
        default_value = "true",
        default_missing_value = "true",
        action = ArgAction::Set
    )]
    pub metrics_secure: bool,

    /// Allow HTTP/2 on the metrics server; off by default because of the HTTP/2 Stream Cancellation
    /// and Rapid Reset CVEs. Takes effect together with metrics serving, which is not implemented yet.
    #[arg(
        long,
        value_name = "BOOL",
        value_parser = parse_go_bool,
        num_args = 0..=1,
        require_equals = true,
        default_value = "false",
        default_missing_value = "true",
        action = ArgAction::Set
    )]
    pub enable_http2: bool,

    /// The log output format: human-readable `text`, or `json` with one object per line.
    #[arg(long, value_name = "FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    /// Which log messages to print, as a `tracing` filter: a level (`info`, `debug`, ...) or
    /// per-module directives such as `info,{{ crate_name }}=debug,kube=warn`.
    /// Defaults to the RUST_LOG environment variable, or `info` when that is not set either.
    #[arg(long, value_name = "FILTER", value_parser = parse_log_filter)]
    pub log_level: Option<String>,
}

/// How log lines are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines, for your terminal.
    Text,
    /// One JSON object per line, for log collectors.
    Json,
}

/// An address a server binds to, written the way Go operators write it.
///
/// - `:8081` binds all interfaces on port 8081;
/// - `127.0.0.1:8081`, `localhost:8081` or `[::1]:8081` bind one interface;
/// - `0` (or an empty string) disables the server.
///
/// Host names other than `localhost` are not resolved: use an IP address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindAddress {
    /// The server is turned off.
    Disabled,
    /// The server listens on this socket address.
    Enabled(SocketAddr),
}

impl BindAddress {
    /// The socket address to listen on, or `None` when the server is disabled.
    pub fn socket_addr(self) -> Option<SocketAddr> {
        match self {
            BindAddress::Disabled => None,
            BindAddress::Enabled(address) => Some(address),
        }
    }
}

impl fmt::Display for BindAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BindAddress::Disabled => f.write_str("0"),
            BindAddress::Enabled(address) => address.fmt(f),
        }
    }
}

/// An address flag that is not `HOST:PORT`, `:PORT` or `0`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid address {input:?}: {reason} (expected HOST:PORT, :PORT, or 0 to disable)")]
pub struct AddressError {
    /// The value as given on the command line.
    pub input: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl FromStr for BindAddress {
    type Err = AddressError;

    fn from_str(input: &str) -> Result<Self, Self::Err> {
        let error = |reason| AddressError {
            input: input.to_owned(),
            reason,
        };
        if input.is_empty() || input == "0" {
            return Ok(BindAddress::Disabled);
        }
        // Covers `1.2.3.4:80` and `[::1]:80`.
        if let Ok(address) = input.parse::<SocketAddr>() {
            return Ok(BindAddress::Enabled(address));
        }
        let (host, port) = input
            .rsplit_once(':')
            .ok_or_else(|| error("missing port"))?;
        let port: u16 = port
            .parse()
            .map_err(|_| error("port must be a number from 0 to 65535"))?;
        let ip = match host {
            // Like Go's net.Listen: an empty host means every interface. IPv4's "any" address is
            // used because it also works in pods and on hosts where IPv6 is disabled.
            "" => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            "localhost" => IpAddr::V4(Ipv4Addr::LOCALHOST),
            _ => host
                .parse()
                .map_err(|_| error("host must be an IP address, `localhost`, or empty"))?,
        };
        Ok(BindAddress::Enabled(SocketAddr::new(ip, port)))
    }
}

/// Parses a boolean the way Go's `strconv.ParseBool` does, so values written for Go operators
/// (`--leader-elect=1`, `--metrics-secure=False`) keep working.
fn parse_go_bool(input: &str) -> Result<bool, String> {
    match input {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Ok(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Ok(false),
        _ => Err(format!(
            "invalid boolean {input:?} (expected true or false)"
        )),
    }
}

/// Checks a `--log-level` value is a valid `tracing` filter, so mistakes fail at startup with a
/// usage message instead of silently logging nothing.
fn parse_log_filter(input: &str) -> Result<String, String> {
    EnvFilter::try_new(input)
        .map(|_| input.to_owned())
        .map_err(|error| format!("invalid log filter: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enabled(address: &str) -> BindAddress {
        BindAddress::Enabled(address.parse().unwrap())
    }

    #[test]
    fn parses_go_style_addresses() {
        assert_eq!("0".parse(), Ok(BindAddress::Disabled));
        assert_eq!("".parse(), Ok(BindAddress::Disabled));
        assert_eq!(":8081".parse(), Ok(enabled("0.0.0.0:8081")));
        assert_eq!("127.0.0.1:8080".parse(), Ok(enabled("127.0.0.1:8080")));
        assert_eq!("localhost:8080".parse(), Ok(enabled("127.0.0.1:8080")));
        assert_eq!("[::1]:8443".parse(), Ok(enabled("[::1]:8443")));
    }

    #[test]
    fn rejects_bad_addresses() {
        for bad in ["8081", ":http", ":65536", "example.com:80", "1.2.3.4:"] {
            assert!(
                bad.parse::<BindAddress>().is_err(),
                "{bad} should be rejected"
            );
        }
    }

    #[test]
    fn displays_addresses_as_they_parse() {
        assert_eq!(BindAddress::Disabled.to_string(), "0");
        assert_eq!(enabled("0.0.0.0:8081").to_string(), "0.0.0.0:8081");
    }

    #[test]
    fn parses_go_style_booleans() {
        assert_eq!(parse_go_bool("true"), Ok(true));
        assert_eq!(parse_go_bool("T"), Ok(true));
        assert_eq!(parse_go_bool("0"), Ok(false));
        assert!(parse_go_bool("yes").is_err());
    }
}
