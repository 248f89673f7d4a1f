//! Per-object exponential backoff for failed reconciles, like controller-runtime's default rate
//! limiter: the first retry of an object comes after 5 ms, every further failure doubles the delay
//! up to 1000 s, and a successful reconcile starts over.
//!
//! kube-runtime leaves retries to the controller's `error_policy`; returning
//! `Action::requeue(backoff.on_error(&object))` there, and calling `backoff.on_success(&object)`
//! from `reconcile`, gives a flapping object a growing delay without slowing down the others.

use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use kube::runtime::reflector::{Lookup, ObjectRef};

/// The first delay after a failure: controller-runtime's `DefaultTypedControllerRateLimiter`.
pub const DEFAULT_BASE_DELAY: Duration = Duration::from_millis(5);

/// The longest delay between retries of one object: also controller-runtime's default.
pub const DEFAULT_MAX_DELAY: Duration = Duration::from_secs(1000);

/// Counts the consecutive failed reconciles of each object and turns them into retry delays.
///
/// Create one per controller (it is generic over the kind `K` the controller reconciles) and keep
/// it in the controller's context. Cloning gives another handle to the same counts, so it can be
/// shared by concurrent reconciles.
pub struct Backoff<K: Lookup>
where
    K::DynamicType: Eq + Hash,
{
    base: Duration,
    max: Duration,
    failures: Arc<Mutex<HashMap<ObjectRef<K>, u32>>>,
}

impl<K: Lookup> Backoff<K>
where
    K::DynamicType: Eq + Hash + Clone,
{
    /// A backoff that waits `base` after the first failure and doubles the delay after every further
    /// failure, never waiting longer than `max`.
    pub fn new(base: Duration, max: Duration) -> Self {
        Backoff {
            base,
            max,
            failures: Arc::default(),
        }
    }

    /// Records a failed reconcile of `object` and returns how long to wait before retrying it:
    /// `base * 2^(failures so far)`, at most `max`.
    pub fn on_error(&self, object: &ObjectRef<K>) -> Duration {
        let mut failures = self.lock();
        let count = failures.entry(object.clone()).or_insert(0);
        let exponent = *count;
        *count = count.saturating_add(1);
        self.delay(exponent)
    }

    /// Records a successful reconcile of `object`: its next failure waits `base` again. Also call it
    /// when an object is deleted, so that the counts of deleted objects do not pile up.
    pub fn on_success(&self, object: &ObjectRef<K>) {
        self.lock().remove(object);
    }

    /// How many failures in a row are recorded for `object`.
    pub fn failures(&self, object: &ObjectRef<K>) -> u32 {
        self.lock().get(object).copied().unwrap_or(0)
    }

    /// `base * 2^exponent`, capped at `max` (also when the multiplication would overflow).
    fn delay(&self, exponent: u32) -> Duration {
        2u32.checked_pow(exponent)
            .and_then(|factor| self.base.checked_mul(factor))
            .map_or(self.max, |delay| delay.min(self.max))
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<ObjectRef<K>, u32>> {
        // Every update is a single map operation, so the map is consistent even after a panic in
        // another thread while it held the lock.
        self.failures.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<K: Lookup> Default for Backoff<K>
where
    K::DynamicType: Eq + Hash + Clone,
{
    /// 5 ms doubling up to 1000 s, as in controller-runtime.
    fn default() -> Self {
        Backoff::new(DEFAULT_BASE_DELAY, DEFAULT_MAX_DELAY)
    }
}

impl<K: Lookup> Clone for Backoff<K>
where
    K::DynamicType: Eq + Hash,
{
    fn clone(&self) -> Self {
        Backoff {
            base: self.base,
            max: self.max,
            failures: Arc::clone(&self.failures),
        }
    }
}

impl<K: Lookup> fmt::Debug for Backoff<K>
where
    K::DynamicType: Eq + Hash,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Backoff")
            .field("base", &self.base)
            .field("max", &self.max)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;

    fn object(name: &str) -> ObjectRef<ConfigMap> {
        ObjectRef::new(name).within("default")
    }

    #[test]
    fn doubles_from_5ms_up_to_1000s() {
        let backoff = Backoff::default();
        let a = object("a");
        let delays: Vec<Duration> = (0..4).map(|_| backoff.on_error(&a)).collect();
        assert_eq!(delays, [5, 10, 20, 40].map(Duration::from_millis).to_vec());
        // 5 ms * 2^17 = 655 s, 5 ms * 2^18 = 1310 s > 1000 s.
        for _ in 4..17 {
            backoff.on_error(&a);
        }
        assert_eq!(backoff.on_error(&a), Duration::from_millis(655_360));
        assert_eq!(backoff.on_error(&a), DEFAULT_MAX_DELAY);
        // Far beyond where 2^n overflows, the delay stays at the maximum.
        for _ in 0..100 {
            assert_eq!(backoff.on_error(&a), DEFAULT_MAX_DELAY);
        }
    }

    #[test]
    fn objects_back_off_independently_and_reset_on_success() {
        let backoff = Backoff::new(Duration::from_secs(1), Duration::from_secs(60));
        let (a, b) = (object("a"), object("b"));
        backoff.on_error(&a);
        backoff.on_error(&a);
        assert_eq!(backoff.on_error(&b), Duration::from_secs(1));
        assert_eq!(backoff.on_error(&a), Duration::from_secs(4));
        assert_eq!(backoff.failures(&a), 3);

        backoff.on_success(&a);
        assert_eq!(backoff.failures(&a), 0);
        assert_eq!(backoff.on_error(&a), Duration::from_secs(1));
        assert_eq!(backoff.failures(&b), 1);
    }

    #[test]
    fn clones_share_the_counts_across_threads() {
        let backoff: Backoff<ConfigMap> = Backoff::default();
        let a = object("a");
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (backoff, a) = (backoff.clone(), a.clone());
                std::thread::spawn(move || {
                    for _ in 0..25 {
                        backoff.on_error(&a);
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        assert_eq!(backoff.failures(&a), 100);
    }
}
