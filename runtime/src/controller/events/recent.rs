//! [`Recent`]: what a [`Recorder`](super::Recorder) remembers of the Events it published, and the
//! writes that wait for its sender, without a request of its own.
//!
//! An Event published again while it is remembered is a repeat: its count grows, and one write
//! carries the count so far. While a write of an Event waits in the queue, its repeats only count:
//! a burst of repeats costs one request, not one each (client-go's broadcaster patches a series at
//! most every 30 minutes; this one as soon as the sender gets to it, so the count on the server
//! is never far behind). The queue holds at most [`QUEUE_SIZE`] writes: a new Event that finds it
//! full is dropped, as client-go drops Events when its queue of 1,000 is full.

use std::collections::{HashMap, VecDeque};

use k8s_openapi::api::events::v1::{Event as K8sEvent, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

/// How many Events a [`Recorder`](super::Recorder) remembers for their repeats (client-go's
/// `maxLruCacheEntries`): when it is full, those repeated least recently are forgotten first.
pub const CACHE_SIZE: usize = 4096;

/// How long a [`Recorder`](super::Recorder) remembers an Event that does not repeat (client-go's
/// and kube's): a repeat after that publishes a new Event.
pub const CACHE_TTL: SignedDuration = SignedDuration::from_mins(6);

/// How many Event writes wait for the sender at most (client-go's `maxQueuedEvents`): a new Event
/// published while as many wait is dropped, and the reconcile that published it goes on.
pub const QUEUE_SIZE: usize = 1000;

/// How often a write that failed for want of an API server is tried before it is given up
/// (client-go's `maxTriesPerEvent`).
pub const MAX_TRIES: u32 = 12;

/// What is remembered of one Event (keyed by a hash of what makes two Events the same): about
/// 100 bytes while no write of it waits.
struct Entry {
    /// The Event's name (in the namespace of the object it is about).
    name: String,
    /// How often it happened, and how often the API server was told.
    count: i32,
    written: i32,
    /// When it last happened.
    last: Timestamp,
    /// The whole Event, while a write of it waits or runs: what is created when it was never
    /// created, or when it is gone from the API server (Events live an hour there). `None`
    /// otherwise: a remembered Event costs its names and counts only.
    event: Option<Box<K8sEvent>>,
    /// Whether its key waits in the queue.
    queued: bool,
    /// The failed tries of its pending write.
    tries: u32,
}

/// One request for the sender: create the Event, or patch its series.
#[derive(Debug)]
pub struct Write {
    pub key: u64,
    /// The Event as it should be on the server (with its `series` when it happened more than
    /// once).
    pub event: Box<K8sEvent>,
    /// Whether the Event must be created (it never was); else its series is patched.
    pub create: bool,
}

/// How a write ended, for [`Recent::written`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The API server has it.
    Done,
    /// The API server could not be reached: try again later, unless tried [`MAX_TRIES`] times.
    Unreachable,
    /// The API server refused it (forbidden, invalid): not tried again.
    Refused,
}

/// The Events a recorder remembers, and the queue of writes for its sender.
#[derive(Default)]
pub struct Recent {
    entries: HashMap<u64, Entry>,
    queue: VecDeque<u64>,
    /// Events dropped because the queue was full, since the start.
    dropped: u64,
}

impl Recent {
    /// Takes note that the Event `key` happened at `now`; `build` makes the whole Event (named
    /// as given) when a write of it must be queued. Returns `false` when it was dropped: new, and
    /// the queue is full.
    pub fn observe(
        &mut self,
        key: u64,
        now: Timestamp,
        build: impl FnOnce(Option<&str>) -> K8sEvent,
    ) -> bool {
        let queue_full = self.queue.len() >= QUEUE_SIZE;
        if let Some(entry) = self.entries.get_mut(&key)
            && entry.last + CACHE_TTL > now
        {
            entry.count += 1;
            entry.last = now;
            if !entry.queued && !queue_full {
                if entry.event.is_none() {
                    entry.event = Some(Box::new(build(Some(&entry.name))));
                }
                entry.queued = true;
                self.queue.push_back(key);
            }
            // With a full queue the count waits for the next write of the Event.
            return true;
        }
        if queue_full {
            self.dropped += 1;
            return false;
        }
        let event = build(None);
        self.make_room(now);
        let queued = self.entries.get(&key).is_some_and(|entry| entry.queued);
        let entry = Entry {
            name: event.metadata.name.clone().unwrap_or_default(),
            count: 1,
            written: 0,
            last: now,
            event: Some(Box::new(event)),
            queued: true,
            tries: 0,
        };
        self.entries.insert(key, entry);
        if !queued {
            self.queue.push_back(key);
        }
        true
    }

    /// The next write for the sender, if one waits.
    pub fn next_write(&mut self) -> Option<Write> {
        while let Some(key) = self.queue.pop_front() {
            let Some(entry) = self.entries.get_mut(&key) else {
                continue;
            };
            entry.queued = false;
            let Some(mut event) = entry.event.take() else {
                continue;
            };
            event.series = (entry.count > 1).then_some(EventSeries {
                count: entry.count,
                last_observed_time: MicroTime(entry.last),
            });
            return Some(Write {
                key,
                event,
                create: entry.written == 0,
            });
        }
        None
    }

    /// Takes note of how `write` ended. A write that could not reach the API server is queued
    /// again (at the back) unless it was tried [`MAX_TRIES`] times: returns whether it was.
    pub fn written(&mut self, write: Write, outcome: Outcome) -> bool {
        let Some(entry) = self.entries.get_mut(&write.key) else {
            return false;
        };
        match outcome {
            Outcome::Done => {
                entry.written = write.event.series.as_ref().map_or(1, |series| series.count);
                entry.tries = 0;
                false
            }
            Outcome::Unreachable => {
                entry.tries += 1;
                if entry.tries >= MAX_TRIES {
                    entry.tries = 0;
                    return false;
                }
                // A repeat may have queued a newer Event meanwhile: it goes instead.
                entry.event.get_or_insert(write.event);
                if !entry.queued {
                    entry.queued = true;
                    self.queue.push_back(write.key);
                }
                true
            }
            Outcome::Refused => {
                if write.create && !entry.queued {
                    // Never stored: a repeat creates it anew.
                    self.entries.remove(&write.key);
                }
                false
            }
        }
    }

    /// How many writes wait.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// How many Events were dropped because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// How many Events are remembered.
    #[cfg(test)]
    pub fn remembered(&self) -> usize {
        self.entries.len()
    }

    /// Keeps the memory under [`CACHE_SIZE`] Events before one is added: those older than
    /// [`CACHE_TTL`] go, and if that is not enough, the eighth repeated least recently (so that
    /// the scan is not made again for each new Event). Events whose writes wait stay.
    fn make_room(&mut self, now: Timestamp) {
        if self.entries.len() < CACHE_SIZE {
            return;
        }
        self.entries
            .retain(|_, entry| entry.queued || entry.last + CACHE_TTL > now);
        if self.entries.len() < CACHE_SIZE {
            return;
        }
        let mut idle: Vec<(Timestamp, u64)> = self
            .entries
            .iter()
            .filter(|(_, entry)| !entry.queued)
            .map(|(key, entry)| (entry.last, *key))
            .collect();
        let forget = (CACHE_SIZE / 8).min(idle.len());
        if forget == 0 {
            return;
        }
        idle.select_nth_unstable(forget - 1);
        for (_, key) in &idle[..forget] {
            self.entries.remove(key);
        }
    }

    #[cfg(test)]
    pub(super) fn age(&mut self, key: u64, by: SignedDuration) {
        if let Some(entry) = self.entries.get_mut(&key) {
            entry.last -= by;
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;

    fn event(name: Option<&str>, fallback: &str) -> K8sEvent {
        K8sEvent {
            metadata: ObjectMeta {
                name: Some(name.unwrap_or(fallback).to_owned()),
                namespace: Some("default".to_owned()),
                ..ObjectMeta::default()
            },
            ..K8sEvent::default()
        }
    }

    fn observe(recent: &mut Recent, key: u64) -> bool {
        recent.observe(key, Timestamp::now(), |name| {
            event(name, &format!("e{key}"))
        })
    }

    #[test]
    fn a_new_event_is_created_with_its_name() {
        let mut recent = Recent::default();
        assert!(observe(&mut recent, 1));
        let write = recent.next_write().unwrap();
        assert!(write.create);
        assert_eq!(write.event.metadata.name.as_deref(), Some("e1"));
        assert_eq!(write.event.series, None);
        assert!(recent.next_write().is_none());
    }

    /// Repeats while a write waits ride on it; once it is done, the next repeat patches the
    /// series of the same Event.
    #[test]
    fn repeats_count_on_the_pending_write() {
        let mut recent = Recent::default();
        for _ in 0..3 {
            observe(&mut recent, 1);
        }
        assert_eq!(recent.queued(), 1);
        let write = recent.next_write().unwrap();
        assert!(write.create);
        assert_eq!(write.event.series.as_ref().map(|s| s.count), Some(3));
        assert!(!recent.written(write, Outcome::Done));

        observe(&mut recent, 1);
        let write = recent.next_write().unwrap();
        assert!(!write.create);
        assert_eq!(write.event.metadata.name.as_deref(), Some("e1"));
        assert_eq!(write.event.series.as_ref().map(|s| s.count), Some(4));
    }

    /// A new Event that finds the queue full is dropped; a repeat of a remembered one still
    /// counts, and its next write carries it.
    #[test]
    fn a_full_queue_drops_new_events() {
        let mut recent = Recent::default();
        observe(&mut recent, 0);
        let first = recent.next_write().unwrap();
        recent.written(first, Outcome::Done);
        for key in 1..=QUEUE_SIZE as u64 {
            assert!(observe(&mut recent, key));
        }
        assert!(!observe(&mut recent, 5000));
        assert_eq!(recent.dropped(), 1);
        assert!(observe(&mut recent, 0));
        assert_eq!(recent.queued(), QUEUE_SIZE);
        for _ in 0..QUEUE_SIZE {
            let write = recent.next_write().unwrap();
            recent.written(write, Outcome::Done);
        }
        observe(&mut recent, 0);
        let write = recent.next_write().unwrap();
        assert_eq!(write.event.series.as_ref().map(|s| s.count), Some(3));
    }

    #[test]
    fn unreachable_writes_are_retried_up_to_max_tries() {
        let mut recent = Recent::default();
        observe(&mut recent, 1);
        for _ in 1..MAX_TRIES {
            let write = recent.next_write().unwrap();
            assert!(write.create);
            assert!(recent.written(write, Outcome::Unreachable));
        }
        let write = recent.next_write().unwrap();
        assert!(!recent.written(write, Outcome::Unreachable));
        assert!(recent.next_write().is_none());
    }

    /// A refused creation is forgotten, so that the next occurrence creates the Event again.
    #[test]
    fn a_refused_event_is_created_again() {
        let mut recent = Recent::default();
        observe(&mut recent, 1);
        let write = recent.next_write().unwrap();
        recent.written(write, Outcome::Refused);
        observe(&mut recent, 1);
        let write = recent.next_write().unwrap();
        assert!(write.create);
        assert_eq!(write.event.series, None);
    }

    #[test]
    fn expired_events_start_again() {
        let mut recent = Recent::default();
        observe(&mut recent, 1);
        let write = recent.next_write().unwrap();
        recent.written(write, Outcome::Done);
        recent.age(1, CACHE_TTL);
        observe(&mut recent, 1);
        let write = recent.next_write().unwrap();
        assert!(write.create);
        assert_eq!(write.event.series, None);
        assert_eq!(recent.remembered(), 1);
    }

    /// At most CACHE_SIZE Events are remembered; the least recent go first, never one whose
    /// write waits.
    #[test]
    fn at_most_cache_size_events_are_remembered() {
        let mut recent = Recent::default();
        let now = Timestamp::now();
        let total = CACHE_SIZE as u64 + 10;
        for key in 0..total {
            let at = now - SignedDuration::from_millis((total - key) as i64);
            recent.observe(key, at, |name| event(name, &format!("e{key}")));
            if key + 1 < total {
                let write = recent.next_write().unwrap();
                recent.written(write, Outcome::Done);
            }
        }
        assert!(recent.remembered() <= CACHE_SIZE);
        assert!(recent.entries.contains_key(&(total - 1)));
        assert!(!recent.entries.contains_key(&0));
        assert_eq!(recent.queued(), 1);
    }
}
