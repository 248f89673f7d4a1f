//! Command-line flags of the manager.
//!
//! The names, defaults and syntax follow kubebuilder's manager, so the kustomize patches and habits
//! from Go operators carry over: booleans accept `--flag`, `--flag=true` and `--flag=false`, and
//! addresses accept `:8081` (all interfaces) and `0` (disabled).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use clap::{ArgAction, CommandFactory as _, FromArgMatches as _, Parser, ValueEnum};
use tracing_subscriber::filter::Targets;

/// The manager's flags, named and parsed like those of a kubebuilder manager.
///
/// Parse them with [`Flags::parse_with`], which takes the project's default Lease name. To add
/// flags of your own, flatten these into your own `clap::Parser` (`#[command(flatten)]`) and set
/// the default of `--leader-election-id` there.
#[derive(Clone, Debug, Parser)]
#[command(name = "manager", about = "Runs the operator's controllers.", long_about = None)]
pub struct Flags {
    /// The address the metrics endpoint (`/metrics`) binds to, e.g. `:8443`, or `0` to disable it.
    #[arg(long, value_name = "ADDRESS", default_value = "0")]
    pub metrics_bind_address: BindAddress,

    /// The address the health probes (`/healthz`, `/readyz`) bind to, or `0` to disable them.
    #[arg(long, value_name = "ADDRESS", default_value = ":8081")]
    pub health_probe_bind_address: BindAddress,

    /// Enable leader election, so that only one replica runs the controllers at a time: the
    /// others wait as standbys (and report ready) until the leader's Lease is released or expires.
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
    #[arg(long, value_name = "NAME")]
    pub leader_election_id: String,

    /// The namespace of the leader election Lease. Defaults to the pod's namespace (from
    /// POD_NAMESPACE or the service account); required with --leader-elect outside a cluster.
    #[arg(long, value_name = "NAMESPACE")]
    pub leader_election_namespace: Option<String>,

    /// How long standbys wait after the leader's last renewal before taking over (whole seconds).
    #[arg(long, value_name = "DURATION", default_value = "15s", value_parser = parse_go_duration)]
    pub leader_election_lease_duration: Duration,

    /// How long the leader retries renewing its Lease before it gives up leadership and exits.
    /// Must be shorter than the lease duration.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_go_duration)]
    pub leader_election_renew_deadline: Duration,

    /// How often to try acquiring or renewing the Lease.
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_go_duration)]
    pub leader_election_retry_period: Duration,

    /// Spread the objects of every controller over the replicas: each replica holds a Lease of
    /// its own, watches and reconciles only the objects labelled for it, and the elected replica
    /// (--leader-elect, which this needs) assigns them by consistent hashing. Off: one replica
    /// reconciles everything, as without this flag. See docs/sharding.md.
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
    pub sharding: bool,

    /// Serve metrics over HTTPS, and only to callers whose bearer token may `get` `/metrics`
    /// (checked with TokenReview and SubjectAccessReview); `--metrics-secure=false` serves plain
    /// HTTP to anyone.
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

    /// Allow HTTP/2 on the metrics and webhook servers; off by default because of the HTTP/2
    /// Stream Cancellation and Rapid Reset CVEs.
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

    /// The directory with the metrics server's certificate and key, e.g. a mounted cert-manager
    /// Secret; the files are re-read when they change. Without it, a self-signed certificate is
    /// generated at startup.
    #[arg(long, value_name = "DIR")]
    pub metrics_cert_path: Option<PathBuf>,

    /// The certificate file in --metrics-cert-path.
    #[arg(long, value_name = "FILE", default_value = "tls.crt")]
    pub metrics_cert_name: String,

    /// The private key file in --metrics-cert-path.
    #[arg(long, value_name = "FILE", default_value = "tls.key")]
    pub metrics_cert_key: String,

    /// The port the webhook server listens on (when the project has webhooks; see
    /// `operator-rs create webhook`).
    #[arg(long, value_name = "PORT", default_value_t = 9443)]
    pub webhook_port: u16,

    /// The directory with the webhook server's certificate and key, e.g. the cert-manager Secret
    /// that config/default mounts; the files are re-read when they change. Defaults to
    /// `<temp dir>/k8s-webhook-server/serving-certs`, like controller-runtime.
    #[arg(long, value_name = "DIR")]
    pub webhook_cert_path: Option<PathBuf>,

    /// The certificate file in --webhook-cert-path.
    #[arg(long, value_name = "FILE", default_value = "tls.crt")]
    pub webhook_cert_name: String,

    /// The private key file in --webhook-cert-path.
    #[arg(long, value_name = "FILE", default_value = "tls.key")]
    pub webhook_cert_key: String,

    /// Where the webhook server's certificate comes from: `files` in --webhook-cert-path, which
    /// cert-manager (or OLM) mounts (`cert-manager` is another name for it); or `self-signed`:
    /// the manager makes a CA and a serving certificate itself, keeps them in the Secret
    /// --webhook-cert-secret, renews them before they expire, and sets the CA as the `caBundle`
    /// of the webhook configurations and CRDs named by the flags below.
    #[arg(long, value_name = "MODE", value_enum, default_value_t = WebhookCerts::Files, env = "WEBHOOK_CERTS")]
    pub webhook_certs: WebhookCerts,

    /// With --webhook-certs=self-signed: the Secret that holds the certificates.
    #[arg(long, value_name = "NAME", default_value = crate::webhook::SELF_SIGNED_SECRET_NAME, env = "WEBHOOK_CERT_SECRET")]
    pub webhook_cert_secret: String,

    /// With --webhook-certs=self-signed: the namespace of that Secret. Defaults to the pod's
    /// namespace (from POD_NAMESPACE or the service account).
    #[arg(long, value_name = "NAMESPACE", env = "WEBHOOK_CERT_SECRET_NAMESPACE")]
    pub webhook_cert_secret_namespace: Option<String>,

    /// With --webhook-certs=self-signed: the Service in front of the webhook server; the
    /// certificate is for `<name>.<namespace>.svc` and `<name>.<namespace>.svc.cluster.local`.
    #[arg(long, value_name = "NAME", default_value = crate::webhook::SERVICE_NAME, env = "WEBHOOK_SERVICE_NAME")]
    pub webhook_service_name: String,

    /// With --webhook-certs=self-signed: the namespace of that Service. Defaults to the pod's
    /// namespace.
    #[arg(long, value_name = "NAMESPACE", env = "WEBHOOK_SERVICE_NAMESPACE")]
    pub webhook_service_namespace: Option<String>,

    /// With --webhook-certs=self-signed: the MutatingWebhookConfigurations whose webhooks get
    /// the CA bundle (repeat the flag, or separate names with commas).
    #[arg(
        long,
        value_name = "NAME",
        value_delimiter = ',',
        env = "WEBHOOK_MUTATING_CONFIGURATIONS"
    )]
    pub webhook_mutating_configuration: Vec<String>,

    /// With --webhook-certs=self-signed: the ValidatingWebhookConfigurations whose webhooks get
    /// the CA bundle.
    #[arg(
        long,
        value_name = "NAME",
        value_delimiter = ',',
        env = "WEBHOOK_VALIDATING_CONFIGURATIONS"
    )]
    pub webhook_validating_configuration: Vec<String>,

    /// With --webhook-certs=self-signed: the CRDs (`<plural>.<group>`) whose conversion webhook
    /// gets the CA bundle.
    #[arg(
        long,
        value_name = "NAME",
        value_delimiter = ',',
        env = "WEBHOOK_CONVERSION_CRDS"
    )]
    pub webhook_conversion_crd: Vec<String>,

    /// With --webhook-certs=self-signed: how long the CA is valid.
    #[arg(long, value_name = "DURATION", default_value = "87600h", value_parser = parse_go_duration, env = "WEBHOOK_CA_VALIDITY")]
    pub webhook_ca_validity: Duration,

    /// With --webhook-certs=self-signed: how long before the CA expires a new one is made (it
    /// signs once every caBundle carries it; the old one stays in the bundles until it expires).
    /// Must be longer than --webhook-cert-rotation-window.
    #[arg(long, value_name = "DURATION", default_value = "8760h", value_parser = parse_go_duration, env = "WEBHOOK_CA_ROTATION_WINDOW")]
    pub webhook_ca_rotation_window: Duration,

    /// With --webhook-certs=self-signed: how long a serving certificate is valid (never longer
    /// than its CA).
    #[arg(long, value_name = "DURATION", default_value = "2160h", value_parser = parse_go_duration, env = "WEBHOOK_CERT_VALIDITY")]
    pub webhook_cert_validity: Duration,

    /// With --webhook-certs=self-signed: how long before a serving certificate expires it is
    /// renewed.
    #[arg(long, value_name = "DURATION", default_value = "720h", value_parser = parse_go_duration, env = "WEBHOOK_CERT_ROTATION_WINDOW")]
    pub webhook_cert_rotation_window: Duration,

    /// For a manager run outside the cluster (`make run`): the `https://<host>:<port>` URL at
    /// which the API server reaches this machine's --webhook-port (the host's address, or a
    /// tunnel's). The manager then makes a certificate for that host in memory, registers
    /// temporary webhook configurations and CRD conversion webhooks that call the URL, and
    /// removes them on exit. Not with --webhook-certs=self-signed.
    #[arg(long, value_name = "URL", env = "WEBHOOK_URL")]
    pub webhook_url: Option<crate::webhook::WebhookUrl>,

    /// How many objects each controller may reconcile at the same time (never the same object
    /// twice at once).
    #[arg(long, value_name = "N", default_value = "1", value_parser = clap::value_parser!(u16).range(1..))]
    pub max_concurrent_reconciles: u16,

    /// The most requests per second the manager sends to the API server, or `0` for no
    /// client-side limit (the default, as with controller-runtime's client: the API server's own
    /// API Priority and Fairness does the throttling, and fairly across clients).
    #[arg(long, value_name = "QPS", default_value = "0", value_parser = parse_qps)]
    pub kube_api_qps: f64,

    /// With `--kube-api-qps`: how many requests may go at once after a quiet spell; `0` means
    /// the QPS rounded up.
    #[arg(long, value_name = "N", default_value = "0")]
    pub kube_api_burst: u32,

    /// Migrate the objects of the kinds registered for it (`Manager::storage_migrations`) to
    /// their CRD's storage version, on the leader at startup, and then trim the CRD's
    /// `status.storedVersions` to it; `false` leaves that to a Job
    /// (`--migrate-storage-versions-and-exit`).
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
    pub migrate_storage_versions: bool,

    /// Run the storage version migrations once and exit, instead of running the operator (for
    /// a Job): the exit status is 0 once every registered kind is stored in its storage version
    /// alone.
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
    pub migrate_storage_versions_and_exit: bool,

    /// The most objects per second a storage version migration writes, or `0` for no limit.
    #[arg(long, value_name = "QPS", default_value = "10", value_parser = parse_qps)]
    pub storage_migration_qps: f64,

    /// The log output format: human-readable `text`, or `json` with one object per line.
    #[arg(long, value_name = "FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    /// Which log messages to print, as a `tracing` filter: a level (`info`, `debug`, ...) or
    /// per-module directives such as `info,my_operator=debug,kube=warn`.
    /// Defaults to the RUST_LOG environment variable, or `info` when that is not set either.
    #[arg(long, value_name = "FILTER", value_parser = parse_log_filter)]
    pub log_level: Option<String>,
}

impl Flags {
    /// Parses the process's arguments, with `leader_election_id` as the default of
    /// `--leader-election-id`: a name unique to the operator (kubebuilder derives it from the
    /// project name and domain), so that two operators never share a Lease. Prints the help or the
    /// error and exits on `--help` and on invalid flags.
    pub fn parse_with(leader_election_id: &'static str) -> Self {
        Self::try_parse_with(leader_election_id, std::env::args_os()).unwrap_or_else(|e| e.exit())
    }

    /// Parses `args` (the first one is the program name) like [`Flags::parse_with`].
    pub fn try_parse_with<I, T>(
        leader_election_id: &'static str,
        args: I,
    ) -> Result<Self, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let command = Self::command().mut_arg("leader_election_id", |arg| {
            arg.default_value(leader_election_id).required(false)
        });
        let mut matches = command.try_get_matches_from(args)?;
        Self::from_arg_matches_mut(&mut matches)
    }
}

/// Where the webhook server's certificate comes from (`--webhook-certs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum WebhookCerts {
    /// PEM files in `--webhook-cert-path`, written by cert-manager (or OLM) into a mounted
    /// Secret, re-read when they change.
    #[value(alias = "cert-manager")]
    Files,
    /// Certificates the manager makes, keeps in a Secret, rotates, and puts into the caBundles
    /// itself (`webhook::certs`).
    SelfSigned,
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

/// Parses a duration the way Go's `time.ParseDuration` does (`15s`, `1m30s`, `500ms`, `1.5h`), so
/// that values written for Go operators keep working. Units: `ns`, `us` (or `µs`), `ms`, `s`, `m`,
/// `h`; a bare `0` is zero. Negative durations are rejected: no flag here has a use for them.
fn parse_go_duration(input: &str) -> Result<Duration, String> {
    let invalid = || format!("invalid duration {input:?} (expected e.g. 15s, 1m30s or 500ms)");
    if input == "0" {
        return Ok(Duration::ZERO);
    }
    let mut rest = input;
    let mut total = Duration::ZERO;
    if rest.is_empty() {
        return Err(invalid());
    }
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(invalid)?;
        let (number, tail) = rest.split_at(number_len);
        let value: f64 = number.parse().map_err(|_| invalid())?;
        let unit_len = tail
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(unit_len);
        let seconds_per_unit = match unit {
            "ns" => 1e-9,
            "us" | "µs" | "μs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return Err(invalid()),
        };
        let part = Duration::try_from_secs_f64(value * seconds_per_unit).map_err(|_| invalid())?;
        total = total.checked_add(part).ok_or_else(invalid)?;
        rest = tail;
    }
    Ok(total)
}

/// Checks a `--log-level` value is a valid `tracing` filter, so mistakes fail at startup with a
/// usage message instead of silently logging nothing.
fn parse_log_filter(input: &str) -> Result<String, String> {
    input
        .parse::<Targets>()
        .map(|_| input.to_owned())
        .map_err(|error| format!("invalid log filter: {error}"))
}

/// A `--kube-api-qps`: a finite number, not negative.
fn parse_qps(value: &str) -> Result<f64, String> {
    match value.parse::<f64>() {
        Ok(qps) if qps.is_finite() && qps >= 0.0 => Ok(qps),
        _ => Err(format!(
            "{value:?} is not a number of requests per second (0: no limit)"
        )),
    }
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
    fn parses_go_style_durations() {
        assert_eq!(parse_go_duration("15s"), Ok(Duration::from_secs(15)));
        assert_eq!(parse_go_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_go_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_go_duration("1.5h"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_go_duration("0"), Ok(Duration::ZERO));
        for bad in ["", "15", "s", "-1s", "1x", "1..5s", "1s2"] {
            assert!(parse_go_duration(bad).is_err(), "{bad} should be rejected");
        }
    }

    #[test]
    fn storage_migration_flags() {
        let parse = |args: &[&str]| {
            let args = std::iter::once("manager").chain(args.iter().copied());
            Flags::try_parse_with("lease", args).unwrap()
        };
        let defaults = parse(&[]);
        assert!(defaults.migrate_storage_versions);
        assert!(!defaults.migrate_storage_versions_and_exit);
        assert_eq!(defaults.storage_migration_qps, 10.0);
        let job = parse(&[
            "--migrate-storage-versions-and-exit",
            "--storage-migration-qps=2.5",
        ]);
        assert!(job.migrate_storage_versions_and_exit);
        assert_eq!(job.storage_migration_qps, 2.5);
        assert!(!parse(&["--migrate-storage-versions=false"]).migrate_storage_versions);
        let args = ["manager", "--storage-migration-qps=-1"];
        assert!(Flags::try_parse_with("lease", args).is_err());
    }

    #[test]
    fn parses_go_style_booleans() {
        assert_eq!(parse_go_bool("true"), Ok(true));
        assert_eq!(parse_go_bool("T"), Ok(true));
        assert_eq!(parse_go_bool("0"), Ok(false));
        assert!(parse_go_bool("yes").is_err());
    }
}

/// The flags as a kubebuilder manager parses them (these were a generated project's own tests).
#[cfg(test)]
mod kubebuilder_compatibility {
    use std::net::SocketAddr;
    use std::path::Path;
    use std::time::Duration;

    use super::*;

    /// The project's default Lease name, as `src/main.rs` passes it.
    const LEASE: &str = "6e1ac2c5.example.com";

    fn parse(args: &[&str]) -> Result<Flags, clap::Error> {
        Flags::try_parse_with(
            LEASE,
            std::iter::once("manager").chain(args.iter().copied()),
        )
    }

    fn address(address: &str) -> BindAddress {
        BindAddress::Enabled(address.parse::<SocketAddr>().unwrap())
    }

    #[test]
    fn defaults_match_kubebuilder() {
        let flags = parse(&[]).unwrap();
        assert_eq!(flags.metrics_bind_address, BindAddress::Disabled);
        assert_eq!(flags.health_probe_bind_address, address("0.0.0.0:8081"));
        assert!(!flags.leader_elect);
        assert_eq!(flags.leader_election_id, LEASE);
        assert!(flags.metrics_secure);
        assert!(!flags.enable_http2);
        assert_eq!(flags.log_format, LogFormat::Text);
        assert_eq!(flags.log_level, None);
        // controller-runtime's leader election timing.
        assert_eq!(flags.leader_election_namespace, None);
        assert_eq!(
            flags.leader_election_lease_duration,
            Duration::from_secs(15)
        );
        assert_eq!(
            flags.leader_election_renew_deadline,
            Duration::from_secs(10)
        );
        assert_eq!(flags.leader_election_retry_period, Duration::from_secs(2));
        // No sharding unless asked for.
        assert!(!flags.sharding);
        assert!(parse(&["--sharding", "--leader-elect"]).unwrap().sharding);
        assert!(!parse(&["--sharding=false"]).unwrap().sharding);
        assert_eq!(flags.metrics_cert_path, None);
        assert_eq!(flags.metrics_cert_name, "tls.crt");
        assert_eq!(flags.metrics_cert_key, "tls.key");
        assert_eq!(flags.max_concurrent_reconciles, 1);
        // No client-side throttling, as controller-runtime's client.
        assert_eq!((flags.kube_api_qps, flags.kube_api_burst), (0.0, 0));
        // The webhook server's, also kubebuilder's.
        assert_eq!(flags.webhook_port, 9443);
        assert_eq!(flags.webhook_cert_path, None);
        assert_eq!(flags.webhook_cert_name, "tls.crt");
        assert_eq!(flags.webhook_cert_key, "tls.key");
        // Certificates from files stay the default: existing projects mount cert-manager's.
        assert_eq!(flags.webhook_certs, WebhookCerts::Files);
    }

    #[test]
    fn webhook_url_for_a_manager_outside_the_cluster() {
        assert_eq!(parse(&[]).unwrap().webhook_url, None);
        let flags = parse(&["--webhook-url=https://192.168.1.10:9443"]).unwrap();
        let url = flags.webhook_url.unwrap();
        assert_eq!(url.host(), "192.168.1.10");
        assert_eq!(url.join("/convert"), "https://192.168.1.10:9443/convert");
        let error = parse(&["--webhook-url=http://192.168.1.10:9443"]).unwrap_err();
        assert!(error.to_string().contains("https only"), "{error}");
    }

    #[cfg(feature = "webhooks")]
    #[test]
    fn self_signed_webhook_certificates() {
        use crate::webhook::certs::Settings;

        let flags = parse(&[
            "--webhook-certs=self-signed",
            "--webhook-cert-secret=memcached-webhook-server-self-signed-cert",
            "--webhook-service-name=memcached-webhook-service",
            "--webhook-mutating-configuration=memcached-mutating-webhook-configuration",
            "--webhook-validating-configuration=memcached-validating-webhook-configuration",
            "--webhook-conversion-crd=memcacheds.cache.example.com,widgets.cache.example.com",
            "--webhook-cert-validity=5m",
            "--webhook-cert-rotation-window=2m",
        ])
        .unwrap();
        assert_eq!(flags.webhook_certs, WebhookCerts::SelfSigned);
        assert_eq!(
            flags.webhook_cert_secret,
            "memcached-webhook-server-self-signed-cert"
        );
        assert_eq!(flags.webhook_service_name, "memcached-webhook-service");
        assert_eq!(flags.webhook_cert_secret_namespace, None);
        assert_eq!(
            flags.webhook_conversion_crd,
            ["memcacheds.cache.example.com", "widgets.cache.example.com"]
        );
        assert_eq!(flags.webhook_cert_validity, Duration::from_secs(300));
        assert_eq!(flags.webhook_cert_rotation_window, Duration::from_secs(120));
        assert!(parse(&["--webhook-certs=cert-manager"]).is_ok());
        assert!(parse(&["--webhook-certs=vault"]).is_err());

        // The flags' defaults are the runtime's.
        let defaults = parse(&[]).unwrap();
        assert_eq!(
            defaults.webhook_cert_secret,
            "webhook-server-self-signed-cert"
        );
        assert_eq!(defaults.webhook_service_name, "webhook-service");
        assert_eq!(defaults.webhook_ca_validity, Settings::DEFAULT_CA_VALIDITY);
        assert_eq!(
            defaults.webhook_ca_rotation_window,
            Settings::DEFAULT_CA_ROTATION_WINDOW
        );
        assert_eq!(
            defaults.webhook_cert_validity,
            Settings::DEFAULT_CERT_VALIDITY
        );
        assert_eq!(
            defaults.webhook_cert_rotation_window,
            Settings::DEFAULT_CERT_ROTATION_WINDOW
        );
    }

    #[test]
    fn accepts_the_args_of_the_webhook_patch() {
        // config/default/manager_webhook_patch.yaml adds these.
        let flags = parse(&[
            "--webhook-cert-path=/tmp/k8s-webhook-server/serving-certs",
            "--webhook-port=9443",
        ])
        .unwrap();
        assert_eq!(
            flags.webhook_cert_path.as_deref(),
            Some(Path::new("/tmp/k8s-webhook-server/serving-certs"))
        );
        assert_eq!(flags.webhook_port, 9443);
    }

    #[test]
    fn leader_election_and_metrics_flags() {
        let flags = parse(&[
            "--leader-elect",
            "--leader-election-namespace=ops",
            "--leader-election-lease-duration=1m",
            "--leader-election-renew-deadline=45s",
            "--leader-election-retry-period=500ms",
            "--metrics-cert-path=/tmp/k8s-metrics-server/metrics-certs",
            "--metrics-cert-name=cert.pem",
            "--metrics-cert-key=key.pem",
            "--max-concurrent-reconciles=4",
        ])
        .unwrap();
        assert!(flags.leader_elect);
        assert_eq!(flags.leader_election_namespace.as_deref(), Some("ops"));
        assert_eq!(
            flags.leader_election_lease_duration,
            Duration::from_secs(60)
        );
        assert_eq!(
            flags.leader_election_renew_deadline,
            Duration::from_secs(45)
        );
        assert_eq!(
            flags.leader_election_retry_period,
            Duration::from_millis(500)
        );
        assert_eq!(
            flags.metrics_cert_path.as_deref(),
            Some(Path::new("/tmp/k8s-metrics-server/metrics-certs"))
        );
        assert_eq!(flags.metrics_cert_name, "cert.pem");
        assert_eq!(flags.metrics_cert_key, "key.pem");
        assert_eq!(flags.max_concurrent_reconciles, 4);
    }

    #[test]
    fn booleans_accept_go_syntax() {
        assert!(parse(&["--leader-elect"]).unwrap().leader_elect);
        assert!(parse(&["--leader-elect=true"]).unwrap().leader_elect);
        assert!(!parse(&["--leader-elect=false"]).unwrap().leader_elect);
        assert!(!parse(&["--metrics-secure=false"]).unwrap().metrics_secure);
        assert!(parse(&["--metrics-secure"]).unwrap().metrics_secure);
        assert!(parse(&["--enable-http2=1"]).unwrap().enable_http2);
    }

    #[test]
    fn addresses_accept_go_syntax() {
        let flags = parse(&[
            "--metrics-bind-address=:8443",
            "--health-probe-bind-address",
            "127.0.0.1:9090",
        ])
        .unwrap();
        assert_eq!(flags.metrics_bind_address, address("0.0.0.0:8443"));
        assert_eq!(flags.health_probe_bind_address, address("127.0.0.1:9090"));
        let flags = parse(&["--health-probe-bind-address=0"]).unwrap();
        assert_eq!(flags.health_probe_bind_address, BindAddress::Disabled);
    }

    #[test]
    fn logging_flags() {
        let flags = parse(&["--log-format=json", "--log-level=info,kube=debug"]).unwrap();
        assert_eq!(flags.log_format, LogFormat::Json);
        assert_eq!(flags.log_level.as_deref(), Some("info,kube=debug"));
    }

    #[test]
    fn rejects_bad_values() {
        for bad in [
            &["--leader-elect=maybe"][..],
            // Like Go, a boolean's value must be attached with `=`.
            &["--leader-elect", "false"],
            &["--metrics-bind-address=8443"],
            &["--health-probe-bind-address=:99999"],
            &["--log-format=xml"],
            &["--log-level=info,=["],
            &["--leader-election-lease-duration=15"],
            &["--leader-election-retry-period=-2s"],
            &["--max-concurrent-reconciles=0"],
            &["--kube-api-qps=-1"],
            &["--kube-api-qps=NaN"],
            &["--kube-api-burst=-1"],
            &["--no-such-flag"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?} should be rejected");
        }
    }
}
