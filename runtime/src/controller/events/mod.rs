//! [`Recorder`]: Events published off the worker's path, repeats aggregated, with a bounded memory.
//!
//! A reconcile that publishes an Event does not wait for the API server: the Event goes into a
//! queue of at most [`QUEUE_SIZE`] writes, which a sender task of the controller sends one at a
//! time, and the reconcile goes on. That is client-go's event broadcaster (controller-runtime's
//! recorder): an Event is worth less than the reconcile that reports it, so it never holds one up
//! or fails it, and a backlog of reconciles does not wait for a request per Event. One request at
//! a time: however many workers publish, Events take at most one of the controller's requests
//! in flight. When the queue is full, new Events are dropped (client-go's `DropIfChannelFull`)
//! and a warning says how many.
//!
//! Repeats aggregate as with client-go and kube: an Event published again within [`CACHE_TTL`]
//! (same type, reason, action, note, object and related object) becomes a count on the first one
//! (its `series`) rather than a new object, and repeats that come while a write of it waits add
//! to that write instead of queueing their own. The recorder remembers at most [`CACHE_SIZE`]
//! Events, and of each only what a repeat needs (its name, namespace, counts and time, keyed by a
//! 64-bit hash), like client-go's recorder and its LRU cache of 4,096. kube's own
//! `kube::runtime::events::Recorder` sends each Event in the reconcile that publishes it and
//! remembers every Event of the last 6 minutes whole: 35 MB of the deploy-image controller's heap
//! at its peak over a backlog of 10,000 objects.
//!
//! The [`Runner`](super::Runner) runs the sender with the controller; on shutdown, once the last
//! reconciles have finished, the Events still queued are sent within [`FLUSH_TIMEOUT`]. A
//! recorder without a sender (that of a [`Context::new`](super::Context::new), in tests) sends
//! each Event before [`Recorder::publish`] returns, so that a test sees its requests in order.

mod recent;

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::Event as K8sEvent;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::api::{Api, Patch, PatchParams, PostParams};
pub use kube::runtime::events::{Event, EventType, Reporter};
use serde_json::json;
use tokio::sync::Notify;
use tokio_util::task::AbortOnDropHandle;

pub use self::recent::{CACHE_SIZE, CACHE_TTL, MAX_TRIES, QUEUE_SIZE};
use self::recent::{Outcome, Recent, Write};
use super::recovery::is_unreachable;
use crate::manager::RunnableFuture;

/// How long the Events still queued at shutdown have to be sent, once the controller's last
/// reconciles have finished (within the manager's graceful shutdown timeout of 30 s).
pub const FLUSH_TIMEOUT: Duration = Duration::from_secs(10);

/// The wait after a write that could not reach the API server, doubled after each such failure
/// up to [`RETRY_DELAY_MAX`]: while the API server is away, the sender tries one Event at a time
/// (client-go sleeps 10 s between the tries of an Event).
const RETRY_DELAY: Duration = Duration::from_millis(500);
const RETRY_DELAY_MAX: Duration = Duration::from_secs(10);

/// Publishes Events as one controller (see the module's documentation). Cloning gives another
/// handle to the same memory, queue and sender.
#[derive(Clone)]
pub struct Recorder {
    client: Client,
    reporter: Reporter,
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    recent: Mutex<Recent>,
    /// Wakes the sender when a write is queued, or the recorder closed.
    wake: Notify,
    /// Whether a sender task sends the queue ([`Recorder::send_while`]).
    background: AtomicBool,
    /// Whether the sender is to stop once the queue is empty.
    closed: AtomicBool,
}

impl Recorder {
    /// A recorder that reports as `reporter` (`reportingController`, `reportingInstance`).
    pub fn new(client: Client, reporter: Reporter) -> Self {
        Self {
            client,
            reporter,
            inner: Arc::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Recent> {
        self.inner
            .recent
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Publishes `event` about the object `regarding` (in its namespace, or in `default` for a
    /// cluster-scoped object): a new Event, or, when the same event (type, reason, action, note,
    /// object and related object) was published less than [`CACHE_TTL`] ago, one more in the
    /// `series` of that Event (its count and last time).
    ///
    /// Returns at once when the recorder has a sender (a controller's, run by the
    /// [`Runner`](super::Runner)): the Event is queued, and a failure to send it is logged, never
    /// returned. Without one (a recorder of your own, or that of
    /// [`Context::new`](super::Context::new)), the Event is sent before this returns, once.
    pub async fn publish(&self, event: &Event, regarding: &ObjectReference) {
        self.queue(event, regarding);
        if !self.inner.background.load(Ordering::Acquire) {
            self.send_queued().await;
        }
    }

    /// Queues the write of `event`, or adds it to a queued write of the same event.
    fn queue(&self, event: &Event, regarding: &ObjectReference) {
        let now = Timestamp::now();
        let key = self.key(event, regarding);
        let mut recent = self.lock();
        let queued = recent.observe(key, now, |name| self.event(event, regarding, now, name));
        let dropped = recent.dropped();
        drop(recent);
        if queued {
            self.inner.wake.notify_one();
        } else if dropped.is_power_of_two() {
            // The first drop, then ever more rarely: a log line per drop would flood the logs
            // just when the API server is slowest.
            tracing::warn!(
                controller = self.reporter.controller,
                dropped,
                reason = event.reason,
                "Event dropped: {QUEUE_SIZE} Events wait to be sent already"
            );
        }
    }

    /// Sends the queued writes in this task, each tried once (a recorder without a sender).
    async fn send_queued(&self) {
        loop {
            let Some(write) = self.lock().next_write() else {
                return;
            };
            let outcome = match self.send(&write).await {
                Outcome::Unreachable => Outcome::Refused,
                outcome => outcome,
            };
            self.lock().written(write, outcome);
        }
    }

    /// Runs `work` (the controller) with a sender of this recorder's Events beside it: from now
    /// on [`Recorder::publish`] only queues. When `work` ends (shutdown, once the last reconciles
    /// have finished, or a failure), the Events still queued are sent within [`FLUSH_TIMEOUT`];
    /// those left are logged as lost. The [`Runner`](super::Runner) runs its controllers so; a
    /// controller run otherwise can do the same with its own recorder.
    pub fn send_while(&self, work: RunnableFuture) -> RunnableFuture {
        self.inner.background.store(true, Ordering::Release);
        let recorder = self.clone();
        Box::pin(async move {
            let sender = AbortOnDropHandle::new(tokio::spawn(recorder.clone().run_sender()));
            let result = work.await;
            recorder.inner.closed.store(true, Ordering::Release);
            recorder.inner.wake.notify_one();
            if tokio::time::timeout(FLUSH_TIMEOUT, sender).await.is_err() {
                let left = recorder.lock().queued();
                tracing::warn!(
                    controller = recorder.reporter.controller,
                    left,
                    "Events not sent: the API server did not take them within {FLUSH_TIMEOUT:?} \
                     of shutdown"
                );
            }
            result
        })
    }

    /// The sender: one write at a time, until the recorder is closed and its queue empty.
    async fn run_sender(self) {
        let mut delay = RETRY_DELAY;
        loop {
            // `notify_one` keeps a wake-up that comes before this waits.
            let wake = self.inner.wake.notified();
            let next = self.lock().next_write();
            let Some(write) = next else {
                if self.inner.closed.load(Ordering::Acquire) {
                    return;
                }
                wake.await;
                continue;
            };
            let outcome = self.send(&write).await;
            if self.lock().written(write, outcome) {
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(RETRY_DELAY_MAX);
            } else {
                delay = RETRY_DELAY;
            }
        }
    }

    /// Sends one write: creates the Event, or patches its series (and creates it again if it is
    /// gone: the API server keeps Events for an hour).
    async fn send(&self, write: &Write) -> Outcome {
        let event = &write.event;
        let namespace = event.metadata.namespace.as_deref().unwrap_or("default");
        let events = Api::<K8sEvent>::namespaced(self.client.clone(), namespace);
        let params = PostParams::default();
        let created = || events.create(&params, event);
        let result = match (&event.series, write.create) {
            (Some(series), false) => {
                let name = event.metadata.name.as_deref().unwrap_or_default();
                let patch = json!({ "series": series });
                match events
                    .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                {
                    Err(kube::Error::Api(status)) if status.code == 404 => created().await,
                    patched => patched,
                }
            }
            _ => created().await,
        };
        match result {
            Ok(_) => Outcome::Done,
            Err(error) => {
                let unreachable = is_unreachable(&error);
                let error = &error as &dyn std::error::Error;
                tracing::warn!(
                    controller = self.reporter.controller,
                    error,
                    reason = event.reason,
                    "cannot publish an Event"
                );
                if unreachable {
                    Outcome::Unreachable
                } else {
                    Outcome::Refused
                }
            }
        }
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

    /// The Event that kube's recorder creates for `event`, named `name` or, for a new one,
    /// after the object and the time.
    fn event(
        &self,
        event: &Event,
        regarding: &ObjectReference,
        now: Timestamp,
        name: Option<&str>,
    ) -> K8sEvent {
        let controller = &self.reporter.controller;
        let name = match name {
            Some(name) => name.to_owned(),
            None => {
                let object = regarding.name.as_ref().unwrap_or(controller);
                format!("{object}.{:x}", now.as_nanosecond())
            }
        };
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
                name: Some(name),
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
}
