//! The pace of a migration's writes: at most so many per second, evenly spaced, so that a
//! migration of many objects never crowds out the API server's other clients (the goal of the
//! storage migration KEP: well under 10 writes per second by default).

use std::time::Duration;

use tokio::time::Instant;

/// Spaces writes `1 / rate` seconds apart (Tokio's clock: tests pause and advance it).
#[derive(Debug)]
pub(super) struct Pace {
    interval: Duration,
    next: Option<Instant>,
}

impl Pace {
    /// At most `writes_per_second` writes a second; `0` (or less) does not pace.
    pub(super) fn new(writes_per_second: f64) -> Self {
        let interval = if writes_per_second > 0.0 {
            Duration::try_from_secs_f64(1.0 / writes_per_second).unwrap_or(Duration::MAX)
        } else {
            Duration::ZERO
        };
        Self {
            interval,
            next: None,
        }
    }

    /// Waits until the next write may go.
    pub(super) async fn wait(&mut self) {
        let now = Instant::now();
        if let Some(next) = self.next
            && next > now
        {
            tokio::time::sleep_until(next).await;
        }
        let start = self.next.map_or(now, |next| next.max(now));
        self.next = start.checked_add(self.interval);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn spaces_writes_evenly() {
        let mut pace = Pace::new(4.0);
        let start = Instant::now();
        for _ in 0..9 {
            pace.wait().await;
        }
        // The first write goes at once, the other eight a quarter of a second apart.
        assert_eq!(start.elapsed(), Duration::from_secs(2));
    }

    #[tokio::test(start_paused = true)]
    async fn zero_does_not_pace() {
        let mut pace = Pace::new(0.0);
        let start = Instant::now();
        for _ in 0..100 {
            pace.wait().await;
        }
        assert_eq!(start.elapsed(), Duration::ZERO);
    }
}
