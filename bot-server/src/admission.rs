//! Admission control: a server-wide budget of search threads, handed out first come, first
//! served, with a bounded queue and a bounded wait.
//!
//! tokio's [`Semaphore`] is fair (FIFO, also for `acquire_many`), so a request for four threads
//! is not overtaken forever by a stream of one-thread requests. The queue bound is counted here.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Why a request was not admitted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AdmissionError {
    /// The waiting room is full.
    #[error(
        "server is busy: {queued} requests already waiting for search threads (limit {limit}); retry later"
    )]
    QueueFull {
        /// Requests waiting.
        queued: usize,
        /// The limit.
        limit: usize,
    },
    /// Waited the server's longest wait (`--max-queue-wait-ms`).
    #[error("server is busy: no search threads became free within {waited_ms} ms; retry later")]
    WaitedTooLong {
        /// How long it waited.
        waited_ms: u64,
    },
    /// Waited as long as the caller could (its deadline), which was shorter than the server's
    /// longest wait: the client ran out of time rather than the server out of patience, so this
    /// is not counted as a refusal.
    #[error(
        "no search threads became free in the {waited_ms} ms the deadline left to wait; retry \
         with a later deadline"
    )]
    OutOfTime {
        /// How long it waited.
        waited_ms: u64,
    },
    /// The server is shutting down.
    #[error("server is shutting down")]
    Closed,
}

/// Search threads in use, waiting requests, and refusals.
#[derive(Debug)]
pub struct Admission {
    threads: Arc<Semaphore>,
    budget: usize,
    max_queue: usize,
    max_wait: Duration,
    queued: AtomicUsize,
    refused: AtomicU64,
}

/// Threads granted to one search; returned when dropped.
#[derive(Debug)]
pub struct Grant {
    _permit: OwnedSemaphorePermit,
    /// Number of threads granted.
    pub threads: usize,
}

struct QueueSlot<'a>(&'a AtomicUsize);

impl Drop for QueueSlot<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Admission {
    /// A budget of `budget` threads, at most `max_queue` waiting requests, each waiting at most
    /// `max_wait`.
    pub fn new(budget: usize, max_queue: usize, max_wait: Duration) -> Admission {
        Admission {
            threads: Arc::new(Semaphore::new(budget)),
            budget,
            max_queue,
            max_wait,
            queued: AtomicUsize::new(0),
            refused: AtomicU64::new(0),
        }
    }

    /// Waits (fairly, bounded) for `threads` threads. `threads` must be 1..=budget. `max_wait`
    /// is the caller's bound (its deadline); the server's own bound applies too, and the error
    /// says which one ran out.
    pub async fn acquire(
        &self,
        threads: usize,
        max_wait: Duration,
    ) -> Result<Grant, AdmissionError> {
        let n = u32::try_from(threads.clamp(1, self.budget)).unwrap_or(1);
        // Fast path: free threads and nobody waiting.
        if self.queued.load(Ordering::SeqCst) == 0 {
            if let Ok(permit) = self.threads.clone().try_acquire_many_owned(n) {
                return Ok(Grant {
                    _permit: permit,
                    threads: n as usize,
                });
            }
        }
        let queued = self.queued.fetch_add(1, Ordering::SeqCst);
        let _slot = QueueSlot(&self.queued);
        if queued >= self.max_queue {
            self.refused.fetch_add(1, Ordering::Relaxed);
            return Err(AdmissionError::QueueFull {
                queued,
                limit: self.max_queue,
            });
        }
        let wait = max_wait.min(self.max_wait);
        let waited_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX);
        match tokio::time::timeout(wait, self.threads.clone().acquire_many_owned(n)).await {
            Ok(Ok(permit)) => Ok(Grant {
                _permit: permit,
                threads: n as usize,
            }),
            Ok(Err(_)) => Err(AdmissionError::Closed),
            Err(_) if max_wait < self.max_wait => Err(AdmissionError::OutOfTime { waited_ms }),
            Err(_) => {
                self.refused.fetch_add(1, Ordering::Relaxed);
                Err(AdmissionError::WaitedTooLong { waited_ms })
            }
        }
    }

    /// Stops admitting: waiting and future requests get [`AdmissionError::Closed`].
    pub fn close(&self) {
        self.threads.close();
    }

    /// Threads in use now.
    pub fn threads_in_use(&self) -> usize {
        self.budget.saturating_sub(self.threads.available_permits())
    }

    /// Requests waiting now.
    pub fn queued(&self) -> usize {
        self.queued.load(Ordering::SeqCst)
    }

    /// Requests refused since start.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// The thread budget.
    pub fn budget(&self) -> usize {
        self.budget
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn grants_queues_and_refuses() {
        let a = Arc::new(Admission::new(2, 1, Duration::from_secs(5)));
        let g1 = a.acquire(2, Duration::from_secs(5)).await.unwrap();
        assert_eq!(a.threads_in_use(), 2);
        // One waiter fits in the queue…
        let a2 = a.clone();
        let waiter = tokio::spawn(async move { a2.acquire(1, Duration::from_secs(5)).await });
        while a.queued() == 0 {
            tokio::task::yield_now().await;
        }
        // …a second is refused at once.
        let err = a.acquire(1, Duration::from_secs(5)).await.unwrap_err();
        assert!(matches!(err, AdmissionError::QueueFull { .. }), "{err}");
        drop(g1);
        let g2 = waiter.await.unwrap().unwrap();
        assert_eq!(g2.threads, 1);
        assert_eq!(a.refused(), 1);
    }

    #[tokio::test]
    async fn bounded_wait() {
        let a = Admission::new(1, 4, Duration::from_millis(20));
        let _g = a.acquire(1, Duration::from_secs(5)).await.unwrap();
        let err = a.acquire(1, Duration::from_secs(5)).await.unwrap_err();
        assert_eq!(err, AdmissionError::WaitedTooLong { waited_ms: 20 });
        assert_eq!(a.queued(), 0);
        assert_eq!(a.refused(), 1);
    }

    /// Issue 12 item 8: a caller whose deadline ends the wait ran out of time; the server did
    /// not refuse it.
    #[tokio::test]
    async fn callers_deadline_ends_the_wait() {
        let a = Admission::new(1, 4, Duration::from_secs(10));
        let _g = a.acquire(1, Duration::from_secs(5)).await.unwrap();
        let err = a.acquire(1, Duration::from_millis(15)).await.unwrap_err();
        assert_eq!(err, AdmissionError::OutOfTime { waited_ms: 15 });
        assert_eq!(a.refused(), 0);
        // No time at all: the same answer at once.
        let err = a.acquire(1, Duration::ZERO).await.unwrap_err();
        assert_eq!(err, AdmissionError::OutOfTime { waited_ms: 0 });
        assert_eq!(a.queued(), 0);
    }
}
