//! Admission control: a server-wide budget of search threads, handed to waiting requests by
//! priority, first come first served within a priority, with a bounded queue per priority and a
//! bounded wait.
//!
//! The order is strict and total: interactive before normal before batch, and within a level by
//! arrival. A waiting request that needs more threads than are free blocks everything behind it
//! (in its level and in the lower ones) until enough are free, so a request for four threads is
//! never overtaken forever by a stream of one-thread requests, and an interactive request is
//! never made to wait by a batch request that happens to be smaller. Running searches are never
//! preempted: a new interactive request waits at most for the next free slot.
//!
//! **Starvation.** Under a constant load of higher-priority requests a batch request may never
//! reach the head of the order; it then waits its longest wait (`--max-queue-wait-ms`) and is
//! refused with `RESOURCE_EXHAUSTED`, which is what a batch client should retry on. Waiting
//! requests do not age into a higher priority: a tournament move must not wait behind a batch
//! analysis, however long that one has waited.
//!
//! Each level has its own queue of at most `--max-queue` requests, so a flood of batch requests
//! fills only the batch queue: an interactive request is never refused because others wait.
//!
//! **Preemptible grants** (pondering) sit below every priority: they take only
//! threads that are free while nobody waits ([`Admission::try_acquire_preemptible`]), never
//! queue, and are told to stop (their `preempt` callback) the moment any request would have to
//! wait; the threads come back when their holder drops the grant, and go to the waiters in the
//! usual order. So a ponder never holds threads a request is waiting for longer than it takes
//! its search threads to notice the stop.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::oneshot;

/// Why a request was not admitted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AdmissionError {
    /// The waiting room of the request's priority is full.
    #[error(
        "server is busy: {queued} requests already waiting for search threads (limit {limit}); retry later"
    )]
    QueueFull {
        /// Requests waiting at that priority.
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

/// The scheduling priority of a search request (`SearchOptions.priority`), highest first: the
/// derived order is the admission order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Priority {
    /// Someone waits for the answer (a game under a clock).
    Interactive,
    /// The default.
    #[default]
    Normal,
    /// Bulk analysis: runs when nothing else waits.
    Batch,
}

impl Priority {
    /// Every priority, highest first.
    pub const ALL: [Priority; 3] = [Priority::Interactive, Priority::Normal, Priority::Batch];

    fn index(self) -> usize {
        self as usize
    }
}

/// A request waiting for threads.
#[derive(Debug)]
struct Waiter {
    /// Identifies the waiter, so that one that leaves can take itself out of the queue.
    ticket: u64,
    threads: usize,
    /// Where its grant goes. Dropping it (at shutdown) tells the waiter the server closed.
    tx: oneshot::Sender<Grant>,
}

/// Stops the holder of a preemptible grant; called (without any admission lock held) when a
/// request has to wait for threads. It must not block: raise a flag, and let the holder drop
/// its grant once its threads have stopped.
pub type Preempt = Arc<dyn Fn() + Send + Sync>;

/// A preemptible grant outstanding.
struct Preemptible {
    ticket: u64,
    threads: usize,
    preempt: Preempt,
}

impl std::fmt::Debug for Preemptible {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Preemptible")
            .field("ticket", &self.ticket)
            .field("threads", &self.threads)
            .finish_non_exhaustive()
    }
}

/// The mutable state, behind one mutex: free threads, the waiting requests per level, and the
/// preemptible grants outstanding.
#[derive(Debug, Default)]
struct Queue {
    free: usize,
    closed: bool,
    next_ticket: u64,
    levels: [VecDeque<Waiter>; 3],
    preemptible: Vec<Preemptible>,
}

#[derive(Debug)]
struct Shared {
    budget: usize,
    max_queue: usize,
    max_wait: Duration,
    queue: Mutex<Queue>,
    refused: AtomicU64,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        // The queue is consistent between statements, so a panic elsewhere leaves it usable.
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Hands free threads to waiters in admission order until the next one does not fit.
    /// Returns the grants whose waiter left in the meantime: they must be dropped (which
    /// returns their threads) after the lock is released.
    fn dispatch(self: &Arc<Self>, q: &mut Queue) -> Vec<Grant> {
        let mut orphans = Vec::new();
        for level in 0..q.levels.len() {
            while let Some(head) = q.levels[level].front() {
                if !head.tx.is_closed() && head.threads > q.free {
                    // Nobody overtakes the head of the order.
                    return orphans;
                }
                let Some(waiter) = q.levels[level].pop_front() else {
                    break;
                };
                if waiter.tx.is_closed() {
                    continue;
                }
                q.free -= waiter.threads;
                let grant = Grant {
                    shared: self.clone(),
                    threads: waiter.threads,
                    preemptible: None,
                };
                if let Err(grant) = waiter.tx.send(grant) {
                    orphans.push(grant);
                }
            }
        }
        orphans
    }

    fn release(self: &Arc<Self>, threads: usize, preemptible: Option<u64>) {
        let orphans = {
            let mut q = self.lock();
            q.free += threads;
            if let Some(ticket) = preemptible {
                q.preemptible.retain(|p| p.ticket != ticket);
            }
            self.dispatch(&mut q)
        };
        drop(orphans);
    }
}

/// The callbacks of every preemptible grant, to call once the lock is released.
fn preempt_all(q: &Queue) -> Vec<Preempt> {
    q.preemptible.iter().map(|p| p.preempt.clone()).collect()
}

/// Search threads in use, waiting requests, and refusals.
#[derive(Debug)]
pub struct Admission {
    shared: Arc<Shared>,
}

/// Threads granted to one search; returned (and handed to the next waiters) when dropped.
#[derive(Debug)]
pub struct Grant {
    shared: Arc<Shared>,
    /// Number of threads granted.
    pub threads: usize,
    /// The ticket of a preemptible grant.
    preemptible: Option<u64>,
}

impl Drop for Grant {
    fn drop(&mut self) {
        self.shared.release(self.threads, self.preemptible);
    }
}

/// Takes a waiter out of the queue when its wait ends for any reason (granted, timed out, or
/// its request dropped by a client that went away), and lets the waiters behind it go if it
/// was the one blocking them.
struct LeaveQueue<'a> {
    shared: &'a Arc<Shared>,
    level: usize,
    ticket: u64,
}

impl Drop for LeaveQueue<'_> {
    fn drop(&mut self) {
        let orphans = {
            let mut q = self.shared.lock();
            let level = &mut q.levels[self.level];
            match level.iter().position(|w| w.ticket == self.ticket) {
                Some(i) => {
                    level.remove(i);
                    self.shared.dispatch(&mut q)
                }
                None => Vec::new(),
            }
        };
        drop(orphans);
    }
}

impl Admission {
    /// A budget of `budget` threads, at most `max_queue` waiting requests per priority, each
    /// waiting at most `max_wait`.
    pub fn new(budget: usize, max_queue: usize, max_wait: Duration) -> Admission {
        Admission {
            shared: Arc::new(Shared {
                budget,
                max_queue,
                max_wait,
                queue: Mutex::new(Queue {
                    free: budget,
                    ..Queue::default()
                }),
                refused: AtomicU64::new(0),
            }),
        }
    }

    /// Waits (in priority order, bounded) for `threads` threads, clamped to 1..=budget.
    /// `max_wait` is the caller's bound (its deadline); the server's own bound applies too, and
    /// the error says which one ran out. Dropping the future leaves the queue.
    pub async fn acquire(
        &self,
        threads: usize,
        priority: Priority,
        max_wait: Duration,
    ) -> Result<Grant, AdmissionError> {
        let shared = &self.shared;
        let n = threads.clamp(1, shared.budget.max(1));
        let level = priority.index();
        let (mut rx, ticket, preempt) = {
            let mut q = shared.lock();
            if q.closed {
                return Err(AdmissionError::Closed);
            }
            // Fast path: free threads and nobody of this priority or higher waiting (waiters
            // of lower priority come after this request anyway).
            let ahead = q.levels[..=level].iter().any(|l| !l.is_empty());
            if !ahead && q.free >= n {
                q.free -= n;
                return Ok(Grant {
                    shared: shared.clone(),
                    threads: n,
                    preemptible: None,
                });
            }
            let queued = q.levels[level].len();
            if queued >= shared.max_queue {
                shared.refused.fetch_add(1, Ordering::Relaxed);
                return Err(AdmissionError::QueueFull {
                    queued,
                    limit: shared.max_queue,
                });
            }
            let ticket = q.next_ticket;
            q.next_ticket += 1;
            let (tx, rx) = oneshot::channel();
            q.levels[level].push_back(Waiter {
                ticket,
                threads: n,
                tx,
            });
            // This request waits: every ponder gives its threads back (stopping them all is
            // simpler than choosing, and none may start again while anyone waits).
            (rx, ticket, preempt_all(&q))
        };
        for stop in preempt {
            stop();
        }
        let leave = LeaveQueue {
            shared,
            level,
            ticket,
        };
        let wait = max_wait.min(shared.max_wait);
        let waited_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX);
        match tokio::time::timeout(wait, &mut rx).await {
            Ok(Ok(grant)) => Ok(grant),
            Ok(Err(_)) => Err(AdmissionError::Closed),
            Err(_) => {
                // Out of the queue first: after that nobody can grant to this waiter, so a
                // grant that raced with the timer is either here now or never.
                drop(leave);
                if let Ok(grant) = rx.try_recv() {
                    return Ok(grant);
                }
                if max_wait < shared.max_wait {
                    Err(AdmissionError::OutOfTime { waited_ms })
                } else {
                    shared.refused.fetch_add(1, Ordering::Relaxed);
                    Err(AdmissionError::WaitedTooLong { waited_ms })
                }
            }
        }
    }

    /// Takes up to `threads` threads (at least 1, at most the budget) for a search that gives
    /// them back on demand (a ponder): only threads that are free now, only while no request
    /// waits, and never queued. `None` when none can be had. The grant's holder is told to
    /// stop through `preempt` as soon as a request has to wait, and must then drop the grant.
    pub fn try_acquire_preemptible(&self, threads: usize, preempt: Preempt) -> Option<Grant> {
        let shared = &self.shared;
        let mut q = shared.lock();
        if q.closed || q.free == 0 || q.levels.iter().any(|l| !l.is_empty()) {
            return None;
        }
        let n = threads.clamp(1, shared.budget.max(1)).min(q.free);
        q.free -= n;
        let ticket = q.next_ticket;
        q.next_ticket += 1;
        q.preemptible.push(Preemptible {
            ticket,
            threads: n,
            preempt,
        });
        Some(Grant {
            shared: shared.clone(),
            threads: n,
            preemptible: Some(ticket),
        })
    }

    /// Preemptible grants outstanding (running ponders).
    pub fn preemptible(&self) -> usize {
        self.shared.lock().preemptible.len()
    }

    /// Stops admitting: waiting and future requests get [`AdmissionError::Closed`].
    pub fn close(&self) {
        let (waiters, preempt): (Vec<Waiter>, _) = {
            let mut q = self.shared.lock();
            q.closed = true;
            let preempt = preempt_all(&q);
            (
                q.levels.iter_mut().flat_map(|l| l.drain(..)).collect(),
                preempt,
            )
        };
        // Dropping their senders wakes them with "closed".
        drop(waiters);
        for stop in preempt {
            stop();
        }
    }

    /// Threads in use now.
    pub fn threads_in_use(&self) -> usize {
        self.shared.budget.saturating_sub(self.shared.lock().free)
    }

    /// Requests waiting now, all priorities.
    pub fn queued(&self) -> usize {
        self.shared.lock().levels.iter().map(VecDeque::len).sum()
    }

    /// Requests of `priority` waiting now.
    pub fn queued_at(&self, priority: Priority) -> usize {
        self.shared.lock().levels[priority.index()].len()
    }

    /// Requests refused since start.
    pub fn refused(&self) -> u64 {
        self.shared.refused.load(Ordering::Relaxed)
    }

    /// The thread budget.
    pub fn budget(&self) -> usize {
        self.shared.budget
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LONG: Duration = Duration::from_secs(5);

    /// Waits until `n` requests wait in total.
    async fn until_queued(a: &Admission, n: usize) {
        while a.queued() != n {
            tokio::task::yield_now().await;
        }
    }

    /// Queues a request of `priority` for `threads` threads; its result, once granted, says
    /// `label` and drops the grant after `hold` (so that the next one goes).
    fn waiter(
        a: &Arc<Admission>,
        threads: usize,
        priority: Priority,
        label: &'static str,
        order: &Arc<Mutex<Vec<&'static str>>>,
    ) -> tokio::task::JoinHandle<Result<(), AdmissionError>> {
        let (a, order) = (a.clone(), order.clone());
        tokio::spawn(async move {
            let g = a.acquire(threads, priority, LONG).await?;
            order.lock().unwrap().push(label);
            tokio::task::yield_now().await;
            drop(g);
            Ok(())
        })
    }

    #[tokio::test]
    async fn grants_queues_and_refuses() {
        let a = Arc::new(Admission::new(2, 1, LONG));
        let g1 = a.acquire(2, Priority::Normal, LONG).await.unwrap();
        assert_eq!(a.threads_in_use(), 2);
        // One waiter fits in the queue…
        let a2 = a.clone();
        let waiter = tokio::spawn(async move { a2.acquire(1, Priority::Normal, LONG).await });
        until_queued(&a, 1).await;
        // …a second is refused at once.
        let err = a.acquire(1, Priority::Normal, LONG).await.unwrap_err();
        assert!(matches!(err, AdmissionError::QueueFull { .. }), "{err}");
        drop(g1);
        let g2 = waiter.await.unwrap().unwrap();
        assert_eq!(g2.threads, 1);
        assert_eq!(a.refused(), 1);
        drop(g2);
        assert_eq!(a.threads_in_use(), 0);
    }

    #[tokio::test]
    async fn bounded_wait() {
        let a = Admission::new(1, 4, Duration::from_millis(20));
        let _g = a.acquire(1, Priority::Normal, LONG).await.unwrap();
        let err = a.acquire(1, Priority::Normal, LONG).await.unwrap_err();
        assert_eq!(err, AdmissionError::WaitedTooLong { waited_ms: 20 });
        assert_eq!(a.queued(), 0);
        assert_eq!(a.refused(), 1);
    }

    /// A caller whose deadline ends the wait ran out of time; the server did not refuse it.
    #[tokio::test]
    async fn callers_deadline_ends_the_wait() {
        let a = Admission::new(1, 4, Duration::from_secs(10));
        let _g = a.acquire(1, Priority::Normal, LONG).await.unwrap();
        let err = a
            .acquire(1, Priority::Normal, Duration::from_millis(15))
            .await
            .unwrap_err();
        assert_eq!(err, AdmissionError::OutOfTime { waited_ms: 15 });
        assert_eq!(a.refused(), 0);
        // No time at all: the same answer at once.
        let err = a
            .acquire(1, Priority::Normal, Duration::ZERO)
            .await
            .unwrap_err();
        assert_eq!(err, AdmissionError::OutOfTime { waited_ms: 0 });
        assert_eq!(a.queued(), 0);
    }

    /// Waiting requests go highest priority first, first come first served within a priority,
    /// whatever order they arrived in.
    #[tokio::test]
    async fn higher_priorities_first_fifo_within_a_level() {
        let a = Arc::new(Admission::new(1, 8, LONG));
        let order = Arc::new(Mutex::new(Vec::new()));
        let g = a.acquire(1, Priority::Normal, LONG).await.unwrap();
        let mut tasks = Vec::new();
        for (i, (p, label)) in [
            (Priority::Batch, "batch1"),
            (Priority::Normal, "normal1"),
            (Priority::Batch, "batch2"),
            (Priority::Interactive, "inter1"),
            (Priority::Normal, "normal2"),
            (Priority::Interactive, "inter2"),
        ]
        .into_iter()
        .enumerate()
        {
            tasks.push(waiter(&a, 1, p, label, &order));
            until_queued(&a, i + 1).await;
        }
        assert_eq!(a.queued_at(Priority::Interactive), 2);
        assert_eq!(a.queued_at(Priority::Normal), 2);
        assert_eq!(a.queued_at(Priority::Batch), 2);
        drop(g);
        for t in tasks {
            t.await.unwrap().unwrap();
        }
        assert_eq!(
            *order.lock().unwrap(),
            ["inter1", "inter2", "normal1", "normal2", "batch1", "batch2"]
        );
        assert_eq!(a.threads_in_use(), 0);
    }

    /// The queue limit holds per priority. A full batch queue refuses batch requests only; an
    /// interactive one still queues, and goes first.
    #[tokio::test]
    async fn queue_limits_per_priority() {
        let a = Arc::new(Admission::new(1, 2, LONG));
        let order = Arc::new(Mutex::new(Vec::new()));
        let g = a.acquire(1, Priority::Batch, LONG).await.unwrap();
        let b1 = waiter(&a, 1, Priority::Batch, "batch1", &order);
        until_queued(&a, 1).await;
        let b2 = waiter(&a, 1, Priority::Batch, "batch2", &order);
        until_queued(&a, 2).await;
        let err = a.acquire(1, Priority::Batch, LONG).await.unwrap_err();
        assert_eq!(
            err,
            AdmissionError::QueueFull {
                queued: 2,
                limit: 2
            }
        );
        let i1 = waiter(&a, 1, Priority::Interactive, "inter", &order);
        until_queued(&a, 3).await;
        let n1 = waiter(&a, 1, Priority::Normal, "normal", &order);
        until_queued(&a, 4).await;
        assert_eq!(a.refused(), 1);
        drop(g);
        for t in [b1, b2, i1, n1] {
            t.await.unwrap().unwrap();
        }
        assert_eq!(
            *order.lock().unwrap(),
            ["inter", "normal", "batch1", "batch2"]
        );
    }

    /// A waiter that needs more threads than are free blocks those behind it, lower
    /// priorities included (no overtaking by smaller requests); when it leaves (cancelled
    /// while queued), the ones behind it go at once.
    #[tokio::test]
    async fn head_of_line_and_cancellation_while_queued() {
        let a = Arc::new(Admission::new(2, 8, LONG));
        let order = Arc::new(Mutex::new(Vec::new()));
        let g = a.acquire(1, Priority::Normal, LONG).await.unwrap();
        // Needs both threads: waits although one is free.
        let a2 = a.clone();
        let big = tokio::spawn(async move { a2.acquire(2, Priority::Normal, LONG).await });
        until_queued(&a, 1).await;
        let small = waiter(&a, 1, Priority::Batch, "batch", &order);
        until_queued(&a, 2).await;
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert!(
            order.lock().unwrap().is_empty(),
            "the batch request overtook"
        );
        assert_eq!(a.threads_in_use(), 1);
        // The big request's client goes away: its place is freed and the batch one runs on
        // the free thread.
        big.abort();
        small.await.unwrap().unwrap();
        assert_eq!(*order.lock().unwrap(), ["batch"]);
        assert_eq!(a.queued(), 0);
        drop(g);
        assert_eq!(a.threads_in_use(), 0);
        // A new interactive request, nobody waiting: granted at once.
        let g = a.acquire(2, Priority::Interactive, LONG).await.unwrap();
        assert_eq!(g.threads, 2);
    }

    /// A preemptible grant for the test: its callback raises `flag`.
    fn ponder(
        a: &Admission,
        threads: usize,
    ) -> (Option<Grant>, Arc<std::sync::atomic::AtomicBool>) {
        let flag = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let f = flag.clone();
        let grant = a.try_acquire_preemptible(
            threads,
            Arc::new(move || f.store(true, std::sync::atomic::Ordering::SeqCst)),
        );
        (grant, flag)
    }

    /// A ponder takes only idle threads (as many as are free, up to what it asks), never
    /// queues, and never takes threads a waiting request needs.
    #[tokio::test]
    async fn ponders_take_only_idle_threads_and_never_queue() {
        let a = Arc::new(Admission::new(4, 8, LONG));
        let g = a.acquire(3, Priority::Normal, LONG).await.unwrap();
        let (p, _) = ponder(&a, 2);
        let p = p.unwrap();
        assert_eq!((p.threads, a.threads_in_use(), a.preemptible()), (1, 4, 1));
        // Nothing free: no ponder (and nothing queued).
        assert!(ponder(&a, 1).0.is_none());
        assert_eq!(a.queued(), 0);
        drop(p);
        assert_eq!((a.threads_in_use(), a.preemptible()), (3, 0));
        // A request waits for two threads while one is free: the free thread is not a ponder's,
        // since a ponder would delay the waiter.
        let a2 = a.clone();
        let big = tokio::spawn(async move { a2.acquire(2, Priority::Batch, LONG).await });
        until_queued(&a, 1).await;
        assert!(ponder(&a, 1).0.is_none());
        drop(g);
        let big = big.await.unwrap().unwrap();
        assert_eq!(big.threads, 2);
        // Nobody waits any more: the two idle threads can ponder.
        let (p, _) = ponder(&a, 4);
        assert_eq!(p.unwrap().threads, 2);
        drop(big);
        assert_eq!(a.threads_in_use(), 0);
    }

    /// A request that would have to wait preempts the ponders (their callback runs at once),
    /// and gets their threads when they let go; a request that fits in the free threads leaves
    /// them alone.
    #[tokio::test]
    async fn a_waiting_request_preempts_ponders() {
        let a = Arc::new(Admission::new(3, 8, LONG));
        let (p1, stop1) = ponder(&a, 2);
        let p1 = p1.unwrap();
        // One thread is still free: a one-thread request takes it without preempting.
        let g = a.acquire(1, Priority::Batch, LONG).await.unwrap();
        assert!(!stop1.load(std::sync::atomic::Ordering::SeqCst));
        drop(g);
        let (p2, stop2) = ponder(&a, 1);
        let p2 = p2.unwrap();
        assert_eq!((a.threads_in_use(), a.preemptible()), (3, 2));
        // Every thread is a ponder's: a two-thread request waits and stops both ponders.
        let a2 = a.clone();
        let waiter = tokio::spawn(async move { a2.acquire(2, Priority::Batch, LONG).await });
        until_queued(&a, 1).await;
        assert!(stop1.load(std::sync::atomic::Ordering::SeqCst));
        assert!(stop2.load(std::sync::atomic::Ordering::SeqCst));
        // Their holders let go (here: one after the other); the waiter gets its threads.
        drop(p2);
        drop(p1);
        let g = waiter.await.unwrap().unwrap();
        assert_eq!((g.threads, a.preemptible(), a.queued()), (2, 0, 0));
        drop(g);
        // Shutdown preempts too.
        let (p, stop) = ponder(&a, 3);
        a.close();
        assert!(stop.load(std::sync::atomic::Ordering::SeqCst));
        drop(p);
        assert_eq!(a.threads_in_use(), 0);
        assert!(ponder(&a, 1).0.is_none());
    }

    /// Shutdown wakes every waiter with `Closed` and refuses new requests.
    #[tokio::test]
    async fn close_wakes_waiters() {
        let a = Arc::new(Admission::new(1, 4, LONG));
        let _g = a.acquire(1, Priority::Normal, LONG).await.unwrap();
        let a2 = a.clone();
        let w = tokio::spawn(async move { a2.acquire(1, Priority::Batch, LONG).await });
        until_queued(&a, 1).await;
        a.close();
        assert_eq!(w.await.unwrap().unwrap_err(), AdmissionError::Closed);
        let err = a.acquire(1, Priority::Interactive, LONG).await.unwrap_err();
        assert_eq!(err, AdmissionError::Closed);
    }
}
