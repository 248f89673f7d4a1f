//! `Context` against the mocked API server: what each call sends, and what it makes of the
//! answers.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::ObjectMeta;
use kube::runtime::events::EventType;
use operator_rs_runtime::controller::Context;
use operator_rs_testing::{Method, StatusCode, reconcile_with};
use serde_json::json;

fn config_map(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some("default".to_owned()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

#[tokio::test]
async fn status_is_applied_as_the_controller() {
    let (result, ()) = reconcile_with(
        |client| async move {
            let ctx = Context::new(client, "tester", ());
            ctx.apply_status(&config_map("a"), json!({"phase": "Done"}))
                .await
        },
        |mut api_server| async move {
            let url =
                "/api/v1/namespaces/default/configmaps/a/status?&force=true&fieldManager=tester";
            let call = api_server.expect(Method::PATCH, url).await;
            assert_eq!(call.body["apiVersion"], "v1");
            assert_eq!(call.body["kind"], "ConfigMap");
            assert_eq!(call.body["status"], json!({"phase": "Done"}));
            call.ok(&config_map("a"));
            api_server.expect_no_more_requests().await;
        },
    )
    .await;
    assert_eq!(result.unwrap().metadata.name.as_deref(), Some("a"));
}

/// A status that the object has already is not sent again; another one is.
#[tokio::test]
async fn a_status_already_there_is_not_applied_again() {
    use k8s_openapi::api::apps::v1::Deployment;
    let deployment: Deployment = serde_json::from_value(json!({
        "metadata": { "name": "d", "namespace": "default" },
        "status": { "availableReplicas": 2, "replicas": 2 },
    }))
    .unwrap();
    let answer = deployment.clone();
    let (results, ()) = reconcile_with(
        |client| async move {
            let ctx = Context::new(client, "tester", ());
            let same = ctx.apply_status(&deployment, json!({ "availableReplicas": 2 }));
            let same = same.await.is_ok();
            let other = ctx.apply_status(&deployment, json!({ "availableReplicas": 3 }));
            (same, other.await.is_ok())
        },
        |mut api_server| async move {
            let url = "/apis/apps/v1/namespaces/default/deployments/d/status?&force=true&fieldManager=tester";
            let call = api_server.expect(Method::PATCH, url).await;
            assert_eq!(call.body["status"], json!({ "availableReplicas": 3 }));
            call.ok(&answer);
            api_server.expect_no_more_requests().await;
        },
    )
    .await;
    assert_eq!(results, (true, true));
}

/// Without a cache of the kind (a context from `Context::new`), `get` asks the API server.
#[tokio::test]
async fn without_a_cache_objects_are_read_from_the_api_server() {
    let (found, ()) = reconcile_with(
        |client| async move {
            let ctx = Context::new(client, "tester", ());
            assert!(ctx.cache::<ConfigMap>().is_none());
            ctx.get::<ConfigMap>(Some("default"), "a").await
        },
        |mut api_server| async move {
            let url = "/api/v1/namespaces/default/configmaps/a";
            api_server
                .expect(Method::GET, url)
                .await
                .ok(&config_map("a"));
            api_server.expect_no_more_requests().await;
        },
    )
    .await;
    assert_eq!(found.unwrap().unwrap().metadata.name.as_deref(), Some("a"));
}

#[tokio::test]
async fn failed_events_are_logged_not_returned() {
    let ((), ()) = reconcile_with(
        |client| async move {
            let ctx = Context::new(client, "tester", ());
            let object = config_map("a");
            ctx.publish(&object, EventType::Normal, "Tested", "Test", "a note")
                .await;
        },
        |mut api_server| async move {
            let url = "/apis/events.k8s.io/v1/namespaces/default/events?";
            let call = api_server.expect(Method::POST, url).await;
            assert_eq!(call.body["reason"], "Tested");
            assert_eq!(call.body["note"], "a note");
            assert_eq!(call.body["reportingController"], "tester");
            call.respond_error(StatusCode::FORBIDDEN, "Forbidden");
            api_server.expect_no_more_requests().await;
        },
    )
    .await;
}
