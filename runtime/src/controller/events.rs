//! [`Recorder`]: kube-runtime's Event recorder, with a bounded memory.
//!
//! kube's `kube::runtime::events::Recorder` remembers every Event it published for 6 minutes,
//! whole (the Event and its key, about 3.5 KB each in a hash table), so that a repeat becomes a
//! count on the first one. A controller that publishes one Event per object while it works
//! through a backlog of 10,000 objects keeps 10,000 of them: 35 MB of the deploy-image
//! controller's heap at its peak in `hack/bench-reconcile 10000`, more than its caches. This one
//! publishes the same Events (same fields, same names, the same series on a repeat), but keeps
//! only what a repeat needs (the Event's name and namespace, the count and the time, keyed by a
//! 64-bit hash) for at most [`CACHE_SIZE`] Events, like client-go's recorder, which keeps the
//! last 4,096 in an LRU cache.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::Event as K8sEvent;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::Client;
use kube::api::{Api, Patch, PatchParams, PostParams};
pub use kube::runtime::events::{Event, EventType, Reporter};
use serde_json::json;

/// How many Events a [`Recorder`] remembers for their repeats (client-go's
/// `maxLruCacheEntries`): when it is full, the one repeated least recently is forgotten.
pub const CACHE_SIZE: usize = 4096;

/// How long a [`Recorder`] remembers an Event that does not repeat (kube's recorder's): a repeat
/// after that publishes a new Event.
pub const CACHE_TTL: SignedDuration = SignedDuration::from_mins(6);

/// Publishes Events as one controller, a repeat of an Event becoming a count on the first one
/// (its `series`) rather than a new object. Cloning gives another handle to the same memory of
/// recent Events.
#[derive(Clone)]
pub struct Recorder {
    client: Client,
    reporter: Reporter,
    recent: Arc<Mutex<HashMap<u64, Published>>>,
}

/// What a repeat of an Event needs: where the Event is, how often it happened, and when last.
struct Published {
    name: String,
    namespace: String,
    count: i32,
    last: Timestamp,
}

impl Recorder {
    /// A recorder that reports as `reporter` (`reportingController`, `reportingInstance`).
    pub fn new(client: Client, reporter: Reporter) -> Self {
        Self {
            client,
            reporter,
            recent: Arc::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<u64, Published>> {
        self.recent.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Publishes `event` about the object `regarding` (in its namespace, or in `default` for a
    /// cluster-scoped object), as kube's recorder does: a new Event, or, when the same event
    /// (type, reason, action, note, object and related object) was published less than
    /// [`CACHE_TTL`] ago, a patch of that Event's `series` (its count and last time).
    pub async fn publish(
        &self,
        event: &Event,
        regarding: &ObjectReference,
    ) -> Result<(), kube::Error> {
        let now = Timestamp::now();
        let key = self.key(event, regarding);
        let repeat = self.lock().get(&key).and_then(|published| {
            (published.last + CACHE_TTL > now).then(|| {
                (
                    published.name.clone(),
                    published.namespace.clone(),
                    published.count + 1,
                )
            })
        });
        if let Some((name, namespace, count)) = repeat {
            let events = Api::<K8sEvent>::namespaced(self.client.clone(), &namespace);
            let series =
                json!({ "series": { "count": count, "lastObservedTime": MicroTime(now) } });
            match events
                .patch(&name, &PatchParams::default(), &Patch::Merge(&series))
                .await
            {
                Ok(_) => {
                    self.remember(key, name, namespace, count, now);
                    return Ok(());
                }
                // The Event is gone (the API server keeps Events for an hour): a new one.
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(error) => return Err(error),
            }
        }
        let created = self.event(event, regarding, now);
        let (name, namespace) = (
            created.metadata.name.clone().unwrap_or_default(),
            created.metadata.namespace.clone().unwrap_or_default(),
        );
        Api::<K8sEvent>::namespaced(self.client.clone(), &namespace)
            .create(&PostParams::default(), &created)
            .await?;
        self.remember(key, name, namespace, 1, now);
        Ok(())
    }

    /// Remembers a published Event; when [`CACHE_SIZE`] are remembered already, those older than
    /// [`CACHE_TTL`] go, and if none did, the one repeated least recently.
    fn remember(&self, key: u64, name: String, namespace: String, count: i32, now: Timestamp) {
        let mut recent = self.lock();
        if recent.len() >= CACHE_SIZE && !recent.contains_key(&key) {
            recent.retain(|_, published| published.last + CACHE_TTL > now);
            if recent.len() >= CACHE_SIZE
                && let Some(oldest) = recent
                    .iter()
                    .min_by_key(|(_, published)| published.last)
                    .map(|(key, _)| *key)
            {
                recent.remove(&oldest);
            }
        }
        let published = Published {
            name,
            namespace,
            count,
            last: now,
        };
        recent.insert(key, published);
    }

    /// What makes two Events the same event: everything but the time (and the
    /// `resourceVersion` of the objects, which changes with every write).
    fn key(&self, event: &Event, regarding: &ObjectReference) -> u64 {
        fn reference(object: &ObjectReference, hasher: &mut DefaultHasher) {
            (&object.api_version, &object.kind, &object.namespace).hash(hasher);
            (&object.name, &object.uid, &object.field_path).hash(hasher);
        }
        let mut hasher = DefaultHasher::new();
        (event.type_, &event.reason, &event.action, &event.note).hash(&mut hasher);
        (&self.reporter.controller, &self.reporter.instance).hash(&mut hasher);
        reference(regarding, &mut hasher);
        if let Some(related) = &event.secondary {
            reference(related, &mut hasher);
        }
        hasher.finish()
    }

    /// The Event that kube's recorder creates for `event`.
    fn event(&self, event: &Event, regarding: &ObjectReference, now: Timestamp) -> K8sEvent {
        let controller = &self.reporter.controller;
        let name = regarding.name.as_ref().unwrap_or(controller);
        K8sEvent {
            action: Some(event.action.clone()),
            reason: Some(event.reason.clone()),
            event_time: Some(MicroTime(now)),
            regarding: Some(regarding.clone()),
            note: event.note.clone(),
            metadata: ObjectMeta {
                namespace: Some(
                    regarding
                        .namespace
                        .clone()
                        .unwrap_or_else(|| "default".to_owned()),
                ),
                name: Some(format!("{name}.{:x}", now.as_nanosecond())),
                ..ObjectMeta::default()
            },
            reporting_controller: Some(controller.clone()),
            reporting_instance: Some(
                self.reporter
                    .instance
                    .clone()
                    .unwrap_or_else(|| controller.clone()),
            ),
            type_: Some(
                match event.type_ {
                    EventType::Normal => "Normal",
                    EventType::Warning => "Warning",
                }
                .to_owned(),
            ),
            related: event.secondary.clone(),
            ..K8sEvent::default()
        }
    }

    /// How many Events are remembered.
    #[cfg(test)]
    fn remembered(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
mod tests {
    // What the recorder remembers. (Its Events against an API server: operator-rs-testing's
    // tests/runtime/events.rs.)

    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::Resource as _;

    use super::*;

    fn recorder(client: Client) -> Recorder {
        let reporter = Reporter {
            controller: "tester".to_owned(),
            instance: None,
        };
        Recorder::new(client, reporter)
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
    async fn at_most_cache_size_events_are_remembered() {
        let (client, _requests) = crate::manager::client::echo();
        let recorder = recorder(client);
        let now = Timestamp::now();
        let total = CACHE_SIZE as u64 + 10;
        for key in 0..total {
            let (name, namespace) = (format!("e{key}"), "default".to_owned());
            let last = now - SignedDuration::from_millis((total - key) as i64);
            recorder.remember(key, name, namespace, 1, last);
        }
        assert_eq!(recorder.remembered(), CACHE_SIZE);
        // The oldest went.
        let recent = recorder.lock();
        assert!((0..10).all(|key| !recent.contains_key(&key)));
        assert!((10..total).all(|key| recent.contains_key(&key)));
    }

    #[tokio::test]
    async fn expired_events_go_first_and_are_not_repeated() {
        let (client, requests) = crate::manager::client::echo();
        let recorder = recorder(client);
        let a = regarding("a");
        recorder.publish(&event("one"), &a).await.unwrap();
        let key = recorder.key(&event("one"), &a);
        recorder.lock().get_mut(&key).unwrap().last -= CACHE_TTL;
        recorder.publish(&event("one"), &a).await.unwrap();
        assert_eq!(
            *requests.lock().unwrap(),
            [http::Method::POST, http::Method::POST]
        );
        assert_eq!(recorder.remembered(), 1);
    }
}
