//! The controllers' bounded Event recorder (`controller::events`) against the fake API server.

use k8s_openapi::api::core::v1::{ConfigMap, ObjectReference};
use k8s_openapi::api::events::v1::Event as K8sEvent;
use kube::Resource as _;
use kube::api::ObjectMeta;
use operator_rs_runtime::controller::events::*;
use operator_rs_testing::fake::{FakeApiServer, Verb};

fn recorder(fake: &FakeApiServer) -> Recorder {
    let reporter = Reporter {
        controller: "tester".to_owned(),
        instance: None,
    };
    Recorder::new(fake.client(), reporter)
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

#[tokio::test]
async fn repeats_become_a_series_of_the_first_event() {
    let fake = FakeApiServer::new();
    let recorder = recorder(&fake);
    let a = regarding("a");
    recorder.publish(&event("one"), &a).await.unwrap();
    recorder.publish(&event("one"), &a).await.unwrap();
    recorder.publish(&event("one"), &a).await.unwrap();
    recorder.publish(&event("two"), &a).await.unwrap();
    recorder
        .publish(&event("one"), &regarding("b"))
        .await
        .unwrap();
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
