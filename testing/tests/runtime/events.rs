//! The controllers' Event recorder (`controller::events`) against the fake and the mocked API
//! servers: Events sent in `publish` without a sender, beside the work with one. (What it
//! remembers and queues: the runtime's unit tests of `events::recent`.)

use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, ObjectReference};
use k8s_openapi::api::events::v1::Event as K8sEvent;
use kube::Resource as _;
use kube::api::{Api, ObjectMeta};
use operator_rs_runtime::controller::events::*;
use operator_rs_testing::fake::{FakeApiServer, Verb};
use operator_rs_testing::{Method, StatusCode, mock_client};

fn reporter() -> Reporter {
    Reporter {
        controller: "tester".to_owned(),
        instance: None,
    }
}

fn regarding(name: &str) -> ObjectReference {
    let object = ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some("default".to_owned()),
            uid: Some(format!("uid-{name}")),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    };
    object.object_ref(&())
}

fn event(note: &str) -> Event {
    Event {
        type_: EventType::Normal,
        reason: "Tested".to_owned(),
        note: Some(note.to_owned()),
        action: "Test".to_owned(),
        secondary: None,
    }
}

const EVENTS_URL: &str = "/apis/events.k8s.io/v1/namespaces/default/events?";

/// Without a sender, each Event is sent before `publish` returns; repeats patch the series of
/// the first.
#[tokio::test]
async fn repeats_become_a_series_of_the_first_event() {
    let fake = FakeApiServer::new();
    let recorder = Recorder::new(fake.client(), reporter());
    let a = regarding("a");
    recorder.publish(&event("one"), &a).await;
    recorder.publish(&event("one"), &a).await;
    recorder.publish(&event("one"), &a).await;
    recorder.publish(&event("two"), &a).await;
    recorder.publish(&event("one"), &regarding("b")).await;
    assert_eq!((fake.count(Verb::Create), fake.count(Verb::Patch)), (3, 2));

    let events = fake.list::<K8sEvent>();
    assert_eq!(events.len(), 3);
    let first = events
        .iter()
        .find(|e| e.note.as_deref() == Some("one") && e.regarding == Some(a.clone()))
        .unwrap();
    assert_eq!(first.series.as_ref().map(|s| s.count), Some(3));
    assert_eq!(first.reporting_controller.as_deref(), Some("tester"));
    assert_eq!(first.reporting_instance.as_deref(), Some("tester"));
    assert_eq!(first.type_.as_deref(), Some("Normal"));
    assert_eq!(first.metadata.namespace.as_deref(), Some("default"));
    assert!(first.metadata.name.as_deref().unwrap().starts_with("a."));
}

/// An Event deleted from the API server (they live an hour there) is created again by its next
/// repeat, with the count so far.
#[tokio::test]
async fn a_series_whose_event_is_gone_is_created_again() {
    let fake = FakeApiServer::new();
    let recorder = Recorder::new(fake.client(), reporter());
    let a = regarding("a");
    recorder.publish(&event("one"), &a).await;
    let name = fake.list::<K8sEvent>()[0].metadata.name.clone().unwrap();
    Api::<K8sEvent>::namespaced(fake.client(), "default")
        .delete(&name, &Default::default())
        .await
        .unwrap();
    recorder.publish(&event("one"), &a).await;
    let events = fake.list::<K8sEvent>();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].metadata.name.as_deref(), Some(name.as_str()));
    assert_eq!(events[0].series.as_ref().map(|s| s.count), Some(2));
}

/// With a sender, `publish` returns at once, even while the API server takes its time; the
/// repeats that come while a write waits ride on the next write, one request for all of them.
#[tokio::test]
async fn publishing_does_not_wait_and_repeats_ride_on_one_write() {
    let (client, mut api_server) = mock_client();
    let recorder = Recorder::new(client, reporter());
    let shutdown = tokio_util::sync::CancellationToken::new();
    let work = shutdown.clone().cancelled_owned();
    let controller = tokio::spawn(recorder.send_while(Box::pin(async move {
        work.await;
        Ok(())
    })));
    let a = regarding("a");
    recorder.publish(&event("one"), &a).await;
    let create = api_server.expect(Method::POST, EVENTS_URL).await;
    // The API server has not answered: these only count.
    for _ in 0..9 {
        tokio::time::timeout(Duration::from_secs(1), recorder.publish(&event("one"), &a))
            .await
            .expect("publish does not wait for the API server");
    }
    let body = create.body.clone();
    assert_eq!(body["note"], "one");
    create.respond(StatusCode::CREATED, &body);
    let name = body["metadata"]["name"].as_str().unwrap();
    let patch = api_server
        .expect(
            Method::PATCH,
            &format!("/apis/events.k8s.io/v1/namespaces/default/events/{name}?"),
        )
        .await;
    assert_eq!(patch.body["series"]["count"], 10);
    let mut patched = body.clone();
    patched["series"] = patch.body["series"].clone();
    patch.ok(&patched);
    shutdown.cancel();
    controller.await.unwrap().unwrap();
    drop(recorder);
    api_server.expect_no_more_requests().await;
}

/// On shutdown the Events still queued are sent before the controller's future ends.
#[tokio::test]
async fn queued_events_are_flushed_on_shutdown() {
    let fake = FakeApiServer::new();
    let recorder = Recorder::new(fake.client(), reporter());
    let published = recorder.clone();
    let work = async move {
        for name in ["a", "b", "c"] {
            published.publish(&event("done"), &regarding(name)).await;
        }
        Ok(())
    };
    recorder.send_while(Box::pin(work)).await.unwrap();
    assert_eq!(fake.list::<K8sEvent>().len(), 3);
}

/// A refused Event (RBAC, validation) is logged; nothing is retried, and the controller goes on.
#[tokio::test]
async fn refused_events_are_not_retried() {
    let (client, mut api_server) = mock_client();
    let recorder = Recorder::new(client, reporter());
    let published = recorder.clone();
    let work = async move {
        published.publish(&event("one"), &regarding("a")).await;
        Ok(())
    };
    let controller = tokio::spawn(recorder.send_while(Box::pin(work)));
    let create = api_server.expect(Method::POST, EVENTS_URL).await;
    create.respond_error(StatusCode::FORBIDDEN, "Forbidden");
    controller.await.unwrap().unwrap();
    drop(recorder);
    api_server.expect_no_more_requests().await;
}

/// While the API server cannot be reached, the sender tries again, waiting longer each time;
/// the Event goes once it answers.
#[tokio::test(start_paused = true)]
async fn unreachable_writes_are_tried_again() {
    let (client, mut api_server) = mock_client();
    let recorder = Recorder::new(client, reporter());
    let shutdown = tokio_util::sync::CancellationToken::new();
    let work = shutdown.clone().cancelled_owned();
    let controller = tokio::spawn(recorder.send_while(Box::pin(async move {
        work.await;
        Ok(())
    })));
    recorder.publish(&event("one"), &regarding("a")).await;
    for _ in 0..3 {
        let create = api_server.expect(Method::POST, EVENTS_URL).await;
        create.respond_error(StatusCode::SERVICE_UNAVAILABLE, "ServiceUnavailable");
    }
    let create = api_server.expect(Method::POST, EVENTS_URL).await;
    let body = create.body.clone();
    create.respond(StatusCode::CREATED, &body);
    shutdown.cancel();
    controller.await.unwrap().unwrap();
    drop(recorder);
    api_server.expect_no_more_requests().await;
}

/// An API server that never answers holds up the shutdown for FLUSH_TIMEOUT at most.
#[tokio::test(start_paused = true)]
async fn the_flush_gives_up_after_its_timeout() {
    let (client, mut api_server) = mock_client();
    let recorder = Recorder::new(client, reporter());
    let published = recorder.clone();
    let work = async move {
        published.publish(&event("one"), &regarding("a")).await;
        Ok(())
    };
    let controller = tokio::spawn(recorder.send_while(Box::pin(work)));
    // Never answered.
    let _create = api_server.expect(Method::POST, EVENTS_URL).await;
    let started = tokio::time::Instant::now();
    controller.await.unwrap().unwrap();
    assert!(
        started.elapsed() <= FLUSH_TIMEOUT,
        "{:?}",
        started.elapsed()
    );
}
