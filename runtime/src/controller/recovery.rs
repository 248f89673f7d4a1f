//! [`Recovery`]: what a controller does when the API server comes back after an outage.
//!
//! While the API server is unreachable every reconciliation fails, and the per-object
//! [`Backoff`] doubles each object's delay: after 30 s of outage the objects of a backlog wait
//! 20 s, 40 s … before their next try, long after the API server is back. So the failures that
//! are the API server's absence (no connection, a timeout, `503`) are set apart: while there are
//! any, the API server is probed every [`PROBE_PERIOD`], and once a probe that failed succeeds,
//! those objects get their backoff reset and are reconciled at once. Failures of an object's own
//! (a conflict, an invalid spec) keep their growing delay, and so do failures that were not an
//! outage (the probe answered at once: an aggregated API that is down, a blip).

use std::collections::HashSet;
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures::{Stream, StreamExt as _, stream};
use kube::Client;
use kube::runtime::reflector::{Lookup, ObjectRef};
use tokio::sync::Notify;

use crate::manager::backoff::Backoff;

/// How often the API server is probed (`GET /version`) while objects wait for it.
pub const PROBE_PERIOD: Duration = Duration::from_secs(1);

/// Whether `error` (or one of its causes) says that the API server could not be reached: no
/// connection, a timeout, or `503 Service Unavailable`.
pub fn is_unreachable(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(error);
    while let Some(error) = cause {
        match error.downcast_ref::<kube::Error>() {
            Some(kube::Error::HyperError(_) | kube::Error::Service(_)) => return true,
            Some(kube::Error::Api(status)) if status.code == 503 => return true,
            _ => {}
        }
        cause = error.source();
    }
    false
}

/// The objects of one controller that wait for the API server to come back.
///
/// Cloning gives another handle to the same state.
pub struct Recovery<K: Lookup>
where
    K::DynamicType: Eq + Hash,
{
    inner: Arc<Inner<K>>,
}

struct Inner<K: Lookup>
where
    K::DynamicType: Eq + Hash,
{
    /// At most one entry per object: bounded by the size of the cache.
    waiting: Mutex<HashSet<ObjectRef<K>>>,
    /// Wakes the probe when the first object starts waiting.
    first: Notify,
}

impl<K: Lookup> Recovery<K>
where
    K::DynamicType: Eq + Hash + Clone,
{
    /// Records that reconciling `object` failed because the API server could not be reached.
    pub fn unreachable(&self, object: ObjectRef<K>) {
        self.lock().insert(object);
        self.inner.first.notify_one();
    }

    /// Records that `object` was reconciled: it waits no more.
    pub fn reconciled(&self, object: &ObjectRef<K>) {
        self.lock().remove(object);
    }

    /// How many objects wait for the API server.
    pub fn waiting(&self) -> usize {
        self.lock().len()
    }

    /// The objects to reconcile at once, each time the API server comes back (as `client` sees
    /// it); their failure counts in `backoff` start over. For `Controller::reconcile_on`.
    pub fn requeues(
        &self,
        client: Client,
        backoff: Backoff<K>,
    ) -> impl Stream<Item = ObjectRef<K>> + Send + use<K>
    where
        K: Send + Sync + 'static,
        K::DynamicType: Send + Sync,
    {
        stream::unfold(self.clone(), move |recovery| {
            let (client, backoff) = (client.clone(), backoff.clone());
            async move {
                loop {
                    while recovery.waiting() == 0 {
                        recovery.inner.first.notified().await;
                    }
                    let outage = recovery.outage_ended(&client).await;
                    let due: Vec<ObjectRef<K>> = recovery.lock().drain().collect();
                    if outage && !due.is_empty() {
                        for object in &due {
                            backoff.on_success(object);
                        }
                        tracing::info!(
                            objects = due.len(),
                            "the API server is back; reconciling the objects that waited for it"
                        );
                        return Some((stream::iter(due), recovery));
                    }
                }
            }
        })
        .flatten()
    }

    /// Probes the API server every [`PROBE_PERIOD`] until it answers or nothing waits anymore.
    /// True if it was unreachable first: an outage that is over.
    async fn outage_ended(&self, client: &Client) -> bool {
        let mut down = false;
        loop {
            tokio::time::sleep(PROBE_PERIOD).await;
            if self.waiting() == 0 {
                return false;
            }
            match client.apiserver_version().await {
                Err(error) if is_unreachable(&error) => down = true,
                // Any other answer is the API server's.
                _ => return down,
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashSet<ObjectRef<K>>> {
        // Each update is one set operation: consistent even after a panic elsewhere.
        self.inner
            .waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl<K: Lookup> Default for Recovery<K>
where
    K::DynamicType: Eq + Hash,
{
    fn default() -> Self {
        Self {
            inner: Arc::new(Inner {
                waiting: Mutex::default(),
                first: Notify::new(),
            }),
        }
    }
}

impl<K: Lookup> Clone for Recovery<K>
where
    K::DynamicType: Eq + Hash,
{
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use http::{Request, Response};
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::client::Body;

    use super::*;

    fn object(name: &str) -> ObjectRef<ConfigMap> {
        ObjectRef::new(name).within("default")
    }

    /// A client of an API server that is down while `down` is set, and answers `/version`
    /// with `404` otherwise (any answer will do).
    fn client(down: Arc<AtomicBool>) -> Client {
        let service = tower::service_fn(move |_: Request<Body>| {
            let down = down.load(Ordering::SeqCst);
            async move {
                if down {
                    return Err(std::io::Error::other("connection refused"));
                }
                let response = Response::builder().status(404).body(Body::empty());
                Ok(response.unwrap())
            }
        });
        Client::new(service, "default")
    }

    #[test]
    fn connection_failures_and_503_are_unreachable() {
        let refused = kube::Error::Service(Box::new(std::io::Error::other("refused")));
        assert!(is_unreachable(&refused));
        let status = |code| {
            kube::Error::Api(
                kube::core::Status::failure("no", "Reason")
                    .with_code(code)
                    .boxed(),
            )
        };
        assert!(is_unreachable(&status(503)));
        assert!(!is_unreachable(&status(409)));
        // Found among the causes of an error that wraps it.
        let wrapped = kube::runtime::finalizer::Error::<std::io::Error>::AddFinalizer(refused);
        assert!(is_unreachable(&wrapped));
        assert!(!is_unreachable(&std::io::Error::other("bad spec")));
    }

    #[tokio::test(start_paused = true)]
    async fn the_objects_that_waited_are_requeued_with_a_fresh_backoff_once_it_is_back() {
        let down = Arc::new(AtomicBool::new(true));
        let (recovery, backoff) = (Recovery::default(), Backoff::default());
        let mut requeues = Box::pin(recovery.requeues(client(Arc::clone(&down)), backoff.clone()));
        let (a, b) = (object("a"), object("b"));
        for _ in 0..12 {
            backoff.on_error(&a);
            backoff.on_error(&b);
        }
        recovery.unreachable(a.clone());
        recovery.unreachable(b.clone());
        // `a` makes it on its own: it waits no more.
        recovery.reconciled(&a);

        // Down for 30 s: nothing is requeued.
        let still_down = tokio::time::timeout(Duration::from_secs(30), requeues.next()).await;
        assert!(still_down.is_err(), "{still_down:?}");
        down.store(false, Ordering::SeqCst);
        let due = tokio::time::timeout(PROBE_PERIOD * 2, requeues.next()).await;
        assert_eq!(due.unwrap(), Some(b.clone()));
        assert_eq!(backoff.failures(&b), 0);
        assert_eq!(
            backoff.failures(&a),
            12,
            "not waiting: its backoff is its own"
        );
        assert_eq!(recovery.waiting(), 0);
    }

    /// Failures for which the API server answers the probe at once were no outage: those
    /// objects keep their backoff.
    #[tokio::test(start_paused = true)]
    async fn no_outage_no_requeue() {
        let (recovery, backoff) = (Recovery::default(), Backoff::default());
        let up = client(Arc::new(AtomicBool::new(false)));
        let mut requeues = Box::pin(recovery.requeues(up, backoff.clone()));
        let a = object("a");
        backoff.on_error(&a);
        recovery.unreachable(a.clone());
        let none = tokio::time::timeout(PROBE_PERIOD * 10, requeues.next()).await;
        assert!(none.is_err(), "{none:?}");
        assert_eq!(backoff.failures(&a), 1);
        assert_eq!(recovery.waiting(), 0);
    }
}
