{{ rust_header }}//! The manager parses its flags like kubebuilder's manager does.

use std::net::SocketAddr;

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
        &["--no-such-flag"],
    ] {
        assert!(parse(bad).is_err(), "{bad:?} should be rejected");
    }
}
