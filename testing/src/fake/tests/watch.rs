//! Watches: events from a resource version through selectors, `410 Gone` for forgotten versions,
//! kube's watcher listing again after one and after an outage, streaming lists and timeouts.

use std::time::Duration;

use futures::{StreamExt as _, TryStreamExt as _};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, ResourceExt, WatchEvent,
    WatchParams,
};
use kube::runtime::{WatchStreamExt as _, reflector, watcher};
use serde_json::json;

use super::*;
use crate::fake::{FakeApiServer, Verb};
use crate::wait_until;

/// The next event of a watch stream, as its type and the object's name (or the error's code).
async fn next_event<S>(stream: &mut S) -> Option<(String, String)>
where
    S: futures::Stream<Item = Result<WatchEvent<ConfigMap>, kube::Error>> + Unpin,
{
    let event = tokio::time::timeout(Duration::from_secs(5), stream.next())
        .await
        .expect("an event within 5 s")?;
    Some(match event.unwrap() {
        WatchEvent::Added(object) => ("ADDED".into(), object.name_any()),
        WatchEvent::Modified(object) => ("MODIFIED".into(), object.name_any()),
        WatchEvent::Deleted(object) => ("DELETED".into(), object.name_any()),
        WatchEvent::Bookmark(bookmark) => ("BOOKMARK".into(), bookmark.metadata.resource_version),
        WatchEvent::Error(status) => ("ERROR".into(), status.code.to_string()),
    })
}

#[tokio::test]
async fn watches_stream_the_changes_their_selector_sees() {
    let fake = FakeApiServer::new();
    let api = Api::<ConfigMap>::namespaced(fake.client(), "default");
    let post = PostParams::default();
    api.create(&post, &config_map("before", &[])).await.unwrap();
    let version = api
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    let params = WatchParams::default().labels("app=web");
    let mut stream = api.watch(&params, &version).await.unwrap().boxed();

    let mut web = config_map("b", &[]);
    web.metadata.labels = Some([("app".to_owned(), "web".to_owned())].into());
    api.create(&post, &web).await.unwrap();
    api.create(&post, &config_map("c", &[])).await.unwrap();
    let merge = |patch| Patch::Merge(patch);
    let patch = PatchParams::default();
    api.patch(
        "c",
        &patch,
        &merge(json!({ "metadata": { "labels": { "app": "web" } } })),
    )
    .await
    .unwrap();
    api.patch("b", &patch, &merge(json!({ "data": { "x": "y" } })))
        .await
        .unwrap();
    api.patch(
        "b",
        &patch,
        &merge(json!({ "metadata": { "labels": { "app": "db" } } })),
    )
    .await
    .unwrap();
    api.delete("c", &DeleteParams::default()).await.unwrap();

    let mut events = Vec::new();
    for _ in 0..5 {
        events.push(next_event(&mut stream).await.unwrap());
    }
    let expected = [
        ("ADDED", "b"),
        ("ADDED", "c"),
        ("MODIFIED", "b"),
        ("DELETED", "b"),
        ("DELETED", "c"),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(t, n)| ((*t).to_owned(), (*n).to_owned()))
        .collect();
    assert_eq!(events, expected);
    assert_eq!(fake.count(Verb::Watch), 1);
}

#[tokio::test]
async fn a_watch_from_a_forgotten_version_is_gone() {
    let fake = FakeApiServer::new();
    fake.set_watch_window(2);
    let api = Api::<ConfigMap>::namespaced(fake.client(), "default");
    let mut versions = Vec::new();
    for name in ["a", "b", "c", "d"] {
        let created = api
            .create(&PostParams::default(), &config_map(name, &[]))
            .await
            .unwrap();
        versions.push(created.resource_version().unwrap());
    }

    let mut gone = api
        .watch(&WatchParams::default(), &versions[0])
        .await
        .unwrap()
        .boxed();
    assert_eq!(
        next_event(&mut gone).await,
        Some(("ERROR".to_owned(), "410".to_owned()))
    );
    assert_eq!(
        next_event(&mut gone).await,
        None,
        "the stream ends after the error"
    );

    let mut replayed = api
        .watch(&WatchParams::default(), &versions[1])
        .await
        .unwrap()
        .boxed();
    assert_eq!(
        next_event(&mut replayed).await,
        Some(("ADDED".to_owned(), "c".to_owned()))
    );
    assert_eq!(
        next_event(&mut replayed).await,
        Some(("ADDED".to_owned(), "d".to_owned()))
    );
}

#[tokio::test]
async fn watchers_list_again_after_an_outage_and_a_410() {
    let fake = FakeApiServer::new();
    let api = Api::<ConfigMap>::namespaced(fake.client(), "default");
    fake.put(&config_map("before", &[]));
    let (reader, writer) = reflector::store();
    let watching = watcher(api, watcher::Config::default())
        .default_backoff()
        .reflect(writer)
        .for_each(|_| async {});
    let watching = tokio::spawn(watching);
    wait_until("the watcher watches", Duration::from_secs(5), || {
        reader.state().len() == 1 && fake.count(Verb::Watch) == 1
    })
    .await;
    assert_eq!(fake.count(Verb::List), 1);

    // While the API server is away, more changes happen than it remembers.
    fake.set_watch_window(1);
    fake.unavailable_for(Duration::from_millis(300));
    assert!(!fake.is_available());
    for name in ["x", "y", "z"] {
        fake.put(&config_map(name, &[]));
    }
    wait_until("the watcher lists again", Duration::from_secs(20), || {
        reader.state().len() == 4
    })
    .await;
    assert_eq!(fake.count(Verb::List), 2);
    assert!(fake.is_available());
    watching.abort();
}

#[tokio::test]
async fn streaming_lists_and_watch_timeouts() {
    let fake = FakeApiServer::new();
    let api = Api::<ConfigMap>::namespaced(fake.client(), "default");
    fake.put(&config_map("a", &[]));
    let events: Vec<_> = watcher(api.clone(), watcher::Config::default().streaming_lists())
        .take(3)
        .try_collect()
        .await
        .unwrap();
    assert!(
        matches!(
            events.as_slice(),
            [
                watcher::Event::Init,
                watcher::Event::InitApply(_),
                watcher::Event::InitDone
            ]
        ),
        "{events:?}"
    );
    assert_eq!(fake.count(Verb::List), 0);

    // A watch from "0" starts with the objects there are, and ends after its timeout.
    let mut stream = api
        .watch(&WatchParams::default().timeout(1), "0")
        .await
        .unwrap()
        .boxed();
    assert_eq!(
        next_event(&mut stream).await,
        Some(("ADDED".to_owned(), "a".to_owned()))
    );
    assert_eq!(next_event(&mut stream).await, None);
}

#[tokio::test]
async fn an_unavailable_server_refuses_connections_then_comes_back() {
    let fake = FakeApiServer::new();
    let api = Api::<ConfigMap>::namespaced(fake.client(), "default");
    fake.unavailable_for(Duration::from_millis(200));
    match api.get_opt("a").await {
        Err(kube::Error::Api(status)) => panic!("an API answer while unavailable: {status:?}"),
        Err(_) => {}
        Ok(found) => panic!("an answer while unavailable: {found:?}"),
    }
    assert!(fake.requests().is_empty(), "refused requests never arrive");
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert_eq!(api.get_opt("a").await.unwrap(), None);
    assert_eq!(fake.count(Verb::Get), 1);
}
