{{ rust_header }}//! The manager parses its flags like kubebuilder's manager does.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use clap::Parser as _;

use {{ crate_name }}::manager::flags::{BindAddress, Flags, LogFormat};

fn parse(args: &[&str]) -> Result<Flags, clap::Error> {
    Flags::try_parse_from(std::iter::once("manager").chain(args.iter().copied()))
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
    assert_eq!(flags.leader_election_id, "{{ leader_election_id }}");
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
    assert_eq!(flags.metrics_cert_path, None);
    assert_eq!(flags.metrics_cert_name, "tls.crt");
    assert_eq!(flags.metrics_cert_key, "tls.key");
    assert_eq!(flags.max_concurrent_reconciles, 1);
    // The webhook server's, also kubebuilder's.
    assert_eq!(flags.webhook_port, 9443);
    assert_eq!(flags.webhook_cert_path, None);
    assert_eq!(flags.webhook_cert_name, "tls.crt");
    assert_eq!(flags.webhook_cert_key, "tls.key");
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
        &["--no-such-flag"],
    ] {
        assert!(parse(bad).is_err(), "{bad:?} should be rejected");
    }
}
