//! The manager's client (`manager::client`) against the fake API server served over HTTP.

use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::Config;
use operator_rs_runtime::manager::client::from_config;
use operator_rs_runtime::metrics::Metrics;
use operator_rs_testing::fake::FakeApiServer;

/// While the API server answers `503`, a request fails at once, for the manager's own
/// backoffs and recovery to act on, instead of waiting through kube's retries.
#[tokio::test]
async fn an_unavailable_api_server_fails_requests_at_once() {
    let fake = FakeApiServer::new();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = fake.clone();
    tokio::spawn(async move { server.serve(listener).await });
    let config = Config::new(url.parse().unwrap());
    let client = from_config(config, 0.0, 0, &Metrics::new()).unwrap();
    let api = kube::Api::<ConfigMap>::namespaced(client, "default");
    api.list(&Default::default()).await.unwrap();

    fake.unavailable_for(Duration::from_secs(600));
    // kube's retries would take minutes.
    let params = kube::api::ListParams::default();
    let listed = tokio::time::timeout(Duration::from_secs(2), api.list(&params));
    let error = listed.await.expect("an answer within 2 s").unwrap_err();
    assert!(
        matches!(&error, kube::Error::Api(status) if status.code == 503),
        "{error:?}"
    );
}

/// Every request is counted by code, method and host as its answer comes; a request that got
/// no answer as `<error>`.
#[tokio::test]
async fn requests_are_counted_by_code_method_and_host() {
    let fake = FakeApiServer::new();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let host = listener.local_addr().unwrap().to_string();
    let server = fake.clone();
    tokio::spawn(async move { server.serve(listener).await });
    let metrics = Metrics::new();
    let config = Config::new(format!("http://{host}").parse().unwrap());
    let client = from_config(config, 0.0, 0, &metrics).unwrap();
    let api = kube::Api::<ConfigMap>::namespaced(client, "default");
    api.list(&Default::default()).await.unwrap();
    api.get_opt("missing").await.unwrap();
    api.get_opt("missing").await.unwrap();
    fake.unavailable_for(Duration::from_secs(600));
    api.get_opt("missing").await.unwrap_err();

    let text = metrics.encode().unwrap();
    let count = |code: &str, method: &str| {
        // Built with concat, as doubled braces would clash with the project templates' syntax.
        let labels = format!(r#"code="{code}",method="{method}",host="{host}""#);
        let series = String::from("rest_client_requests_total{") + &labels + "} ";
        let line = text
            .lines()
            .find_map(|line| line.strip_prefix(series.as_str()));
        line.and_then(|value| value.parse::<f64>().ok())
    };
    assert_eq!(count("200", "GET"), Some(1.0), "{text}");
    assert_eq!(count("404", "GET"), Some(2.0), "{text}");
    assert!(
        count("503", "GET").or(count("<error>", "GET")).is_some(),
        "{text}"
    );
}
