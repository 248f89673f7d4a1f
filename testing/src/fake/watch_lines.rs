//! The lines of a watch stream, counted on both ends: how many the store sent and how many the
//! client has read. With the count, a write's response can wait for its watch events.
//!
//! On kube-apiserver the watch event of a write is often read by the client before the write's
//! own response: etcd notifies the watch cache as soon as the write commits, while the response
//! still goes through the rest of the request's handling. An in-process fake that answered at
//! once would always show the other order, and code that is right only in that order (a cache
//! that remembers a write until "the" event that follows it) would pass every offline test and
//! fail on a cluster. So by default the fake answers a write only after every open watch has
//! read what was sent to it ([`FakeApiServer::deliver_watch_events_first`]).
//!
//! [`FakeApiServer::deliver_watch_events_first`]: super::FakeApiServer::deliver_watch_events_first

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// The store's end of one watch.
pub(super) struct LineSender {
    sender: UnboundedSender<Bytes>,
    sent: usize,
    read: Arc<AtomicUsize>,
}

/// The client's end of one watch: the body of the watch response reads from it. Its count of
/// lines read becomes `usize::MAX` when it is dropped: a client that has gone reads everything.
pub(super) struct LineReceiver {
    receiver: UnboundedReceiver<Bytes>,
    read: Arc<AtomicUsize>,
}

/// What one watch has been sent and not read yet, to wait for.
pub(super) struct Unread {
    sent: usize,
    read: Arc<AtomicUsize>,
}

/// A new watch's two ends.
pub(super) fn watch_lines() -> (LineSender, LineReceiver) {
    let (sender, receiver) = unbounded_channel();
    let read = Arc::new(AtomicUsize::new(0));
    let sender = LineSender {
        sender,
        sent: 0,
        read: Arc::clone(&read),
    };
    (sender, LineReceiver { receiver, read })
}

impl LineSender {
    /// Sends one line; false once the client has gone.
    pub(super) fn send(&mut self, line: Bytes) -> bool {
        self.sent += 1;
        self.sender.send(line).is_ok()
    }

    pub(super) fn is_closed(&self) -> bool {
        self.sender.is_closed()
    }

    /// What was sent and not read yet, if anything.
    pub(super) fn unread(&self) -> Option<Unread> {
        let unread = Unread {
            sent: self.sent,
            read: Arc::clone(&self.read),
        };
        (!unread.is_read()).then_some(unread)
    }
}

impl LineReceiver {
    /// The next line; `None` once the store has ended the watch.
    pub(super) async fn recv(&mut self) -> Option<Bytes> {
        let line = self.receiver.recv().await?;
        self.read.fetch_add(1, Ordering::Release);
        Some(line)
    }
}

impl Drop for LineReceiver {
    fn drop(&mut self) {
        self.read.store(usize::MAX, Ordering::Release);
    }
}

impl Unread {
    /// Whether the client has read every line sent so far, or is gone.
    fn is_read(&self) -> bool {
        self.read.load(Ordering::Acquire) >= self.sent
    }
}

/// How long a write's response waits for its watch events at most. Some watches are not read
/// at once: a test may hold one it reads later, kube's `Controller` reads its triggers only
/// while it has a free worker (a write of a busy controller would wait for itself), a client on
/// another thread may not be scheduled. Then the response goes first, as on a real API server
/// at times.
const PATIENCE: Duration = Duration::from_millis(2);

/// Lets the clients' tasks read `unread` before the caller goes on (see the module's comment),
/// for at most [`PATIENCE`]. The watch's reader runs in the client's task: yielding lets the
/// runtime poll it, and kube's watcher decodes and hands on a line in the poll that reads it.
pub(super) async fn until_read(unread: Vec<Unread>) {
    let start = Instant::now();
    while !unread.iter().all(Unread::is_read) && start.elapsed() < PATIENCE {
        tokio::task::yield_now().await;
    }
}
