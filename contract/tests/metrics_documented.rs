//! Every metric family docs/manager.md's table lists is one the manager's registry serves, and
//! every family it serves is listed: once the code that records each family has run (a
//! controller's reconciliations, the client's requests, leader election, sharding, the webhook
//! server, a storage version migration).
//! The Grafana dashboards of operator-rs's plugin are checked against the same table
//! (tests/grafana_dashboards.rs at the repository's root), so their queries hit what is served.

use operator_rs_contract::{documented_series, manager_md};

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use operator_rs_runtime::controller::{Context, Runner};
use operator_rs_runtime::k8s_openapi::api::core::v1::ConfigMap;
use operator_rs_runtime::kube::Config;
use operator_rs_runtime::kube::api::ObjectMeta;
use operator_rs_runtime::kube::runtime::controller::Action;
use operator_rs_runtime::manager::{Shared, client};
use operator_rs_runtime::metrics::Metrics;
use operator_rs_runtime::webhook::server::{instrument, router};
use operator_rs_runtime::webhook::{
    AdmissionRequest, Defaulter, Denial, FailurePolicy, Operation, Registration, Webhook,
};
use operator_rs_testing::fake::FakeApiServer;

/// The names of the series the runtime's registry serves once a controller reconciled, the
/// manager's client sent requests, leader election ran and the webhook server started.
async fn served_series() -> BTreeSet<String> {
    let fake = FakeApiServer::new();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = fake.clone();
    tokio::spawn(async move { server.serve(listener).await });
    let metrics = Metrics::new();
    let client = client::from_config(Config::new(url.parse().unwrap()), 0.0, 0, &metrics).unwrap();
    let shared = Shared {
        metrics: metrics.clone(),
        ..Shared::new(client)
    };
    fake.put(&ConfigMap {
        metadata: ObjectMeta {
            name: Some("settings".to_owned()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    });
    let reconcile = |_: Arc<ConfigMap>, _: Arc<Context>| async {
        Ok::<_, operator_rs_runtime::kube::Error>(Action::await_change())
    };
    let controller = tokio::spawn(Runner::<ConfigMap>::new("test", &shared).run(reconcile, ()));
    let reconciled = r#"controller_runtime_reconcile_total{controller="test",result="success"} 1"#;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !metrics.encode().unwrap().contains(reconciled) {
        assert!(tokio::time::Instant::now() < deadline, "no reconciliation");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    shared.shutdown.cancel();
    controller.await.unwrap().unwrap();
    metrics
        .leader_election("6e1ac2c5.example.com")
        .set_leading(true);
    // With --sharding, the elected replica records the ring's members, each member its objects.
    let sharding = metrics.sharding();
    sharding.set_members("6e1ac2c5.example.com", 2);
    sharding.count_objects("test", "manager-a", || 1);
    sharding.moved("test");
    // The webhook server's metrics start with their series at 0, by path.
    let registration = Registration {
        name: "mconfigmap-v1.kb.io",
        path: "/mutate--v1-configmap",
        operations: &[Operation::Create],
        failure_policy: FailurePolicy::Fail,
    };
    let webhooks = vec![Webhook::defaulting(registration, NoDefaults)];
    let _served = instrument(
        router(webhooks).unwrap(),
        &[registration.path],
        &metrics.webhooks(),
    );

    // A storage version migration's families, as a pass over one kind records them.
    let migration = metrics
        .storage_migrations()
        .resource("memcacheds.cache.example.com");
    migration.set_remaining(1);
    migration.migrated();
    migration.finished(true);

    let text = metrics.encode().unwrap();
    let samples = text.lines().filter(|line| !line.starts_with('#'));
    let names = samples.map(|line| line.split(['{', ' ']).next().unwrap_or_default().to_owned());
    names.collect()
}

/// A defaulting webhook that sets nothing.
struct NoDefaults;

impl Defaulter<ConfigMap> for NoDefaults {
    fn apply_defaults(
        &self,
        _: &mut ConfigMap,
        _: &AdmissionRequest<ConfigMap>,
    ) -> Result<(), Denial> {
        Ok(())
    }
}

#[tokio::test]
async fn the_registry_serves_exactly_the_documented_families() {
    let served = served_series().await;
    let documented = documented_series(&manager_md());
    let undocumented: Vec<_> = served.difference(&documented).collect();
    let unserved: Vec<_> = documented.difference(&served).collect();
    assert!(
        undocumented.is_empty() && unserved.is_empty(),
        "served but not in docs/manager.md's table: {undocumented:?}; \
         in the table but not served: {unserved:?}"
    );
}
