//! The run's shared control block: why a search stopped ([`StopReason`]), the per-run state its
//! threads share ([`Control`]: stop, playout tickets, worker count, run statistics) and the
//! [`Contention`] counters. Std only: knows nothing of the tree or the game.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// Why a search stopped.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum StopReason {
    /// [`SearchParams::max_time`](crate::SearchParams::max_time) elapsed.
    Time,
    /// [`SearchParams::max_playouts`](crate::SearchParams::max_playouts) playouts were run.
    Playouts,
    /// The solver proved the root's value.
    Solved,
    /// The tree is full and [`SearchParams::stop_at_node_cap`](crate::SearchParams::stop_at_node_cap)
    /// is set.
    NodeCap,
    /// The root has exactly one legal move; it is answered without searching.
    SingleMove,
    /// The stop flag was raised (or the [`SearchHandle`](crate::SearchHandle) was dropped).
    Stopped,
    /// Smart pruning: no other root move could overtake the best one any more.
    SmartPruning,
    /// The root position is over; there is no move.
    Terminal,
}

impl StopReason {
    const ALL: [StopReason; 8] = [
        StopReason::Time,
        StopReason::Playouts,
        StopReason::Solved,
        StopReason::NodeCap,
        StopReason::SingleMove,
        StopReason::Stopped,
        StopReason::SmartPruning,
        StopReason::Terminal,
    ];

    /// Encoding for the atomic: 0 = none, else 1 + position in `ALL`.
    fn code(self) -> u8 {
        StopReason::ALL
            .iter()
            .position(|&r| r == self)
            .map_or(0, |i| i as u8 + 1)
    }

    fn from_code(code: u8) -> Option<StopReason> {
        StopReason::ALL
            .get(usize::from(code).checked_sub(1)?)
            .copied()
    }
}

/// How often search threads got in each other's way (all threads of one search together).
/// With one thread every counter stays 0; growing counters per playout as threads are added
/// predict how far the search scales.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Contention {
    /// Compare-exchanges lost to another thread (expansions and node creations raced for).
    pub cas_failures: u64,
    /// Times a thread waited for another to finish expanding a node or creating a child.
    pub expansion_waits: u64,
    /// Descents into a child another thread was already exploring (virtual loss in effect).
    pub virtual_loss_collisions: u64,
}

/// State of one run of the search shared by its threads (and a [`SearchHandle`]). Created fresh
/// for every run; the search keeps the last one so that its results stay readable.
///
/// [`SearchHandle`]: crate::SearchHandle
#[derive(Debug)]
pub(crate) struct Control {
    /// When the run started.
    start: Instant,
    /// Root visits when the run started; playouts of this run = root visits - this.
    reused_visits: u64,
    /// Playout tickets handed out (only with a playout limit): a thread runs a playout only if
    /// its `fetch_add` returned a number below the limit, so exactly `max_playouts` run however
    /// many threads compete.
    tickets: AtomicU64,
    /// First stop reason recorded (0 = none); compare-exchange so the first one sticks.
    reason: AtomicU8,
    /// Set once a stop reason is recorded; every thread checks it (relaxed) each iteration.
    done: AtomicBool,
    /// Raised when the handle is dropped: stop without touching the user's stop flag.
    abort: AtomicBool,
    /// Raised when a search thread panics (in game code): the others then stop waiting for an
    /// expansion the panicking thread will never finish.
    poisoned: AtomicBool,
    /// Worker threads still running; the last one to leave finalises the run under this lock,
    /// then notifies `finished`.
    running: Mutex<usize>,
    /// Signalled when `running` drops to 0.
    finished: Condvar,
    /// Run duration in nanoseconds, recorded by the last thread to leave (`u64::MAX` meanwhile).
    elapsed_nanos: AtomicU64,
    /// Sum and count of playout start depths, flushed in batches by the threads.
    depth_sum: AtomicU64,
    depth_count: AtomicU64,
    /// Deepest playout start, flushed in batches.
    max_depth: AtomicU32,
    /// Contention counters ([`Contention`]'s fields in order), flushed in batches.
    contention: [AtomicU64; 3],
    /// Reclaims done and nodes they dropped.
    reclaims: AtomicU32,
    nodes_reclaimed: AtomicU64,
    reclaim_nanos: AtomicU64,
    /// Whether the tree was full at some point of the run (before a reclaim, say).
    tree_full: AtomicBool,
    /// Nodes whose knowledge was refined ([`SearchParams::refine_visits`]), flushed in batches.
    ///
    /// [`SearchParams::refine_visits`]: crate::SearchParams::refine_visits
    refinements: AtomicU64,
}

impl Control {
    /// A run that starts now with `workers` threads (0: a run answered without threads).
    pub(crate) fn new(reused_visits: u64, workers: usize) -> Self {
        Control {
            start: Instant::now(),
            reused_visits,
            tickets: AtomicU64::new(0),
            reason: AtomicU8::new(0),
            done: AtomicBool::new(false),
            abort: AtomicBool::new(false),
            poisoned: AtomicBool::new(false),
            running: Mutex::new(workers),
            finished: Condvar::new(),
            elapsed_nanos: AtomicU64::new(if workers == 0 { 0 } else { u64::MAX }),
            depth_sum: AtomicU64::new(0),
            depth_count: AtomicU64::new(0),
            max_depth: AtomicU32::new(0),
            contention: Default::default(),
            reclaims: AtomicU32::new(0),
            nodes_reclaimed: AtomicU64::new(0),
            reclaim_nanos: AtomicU64::new(0),
            tree_full: AtomicBool::new(false),
            refinements: AtomicU64::new(0),
        }
    }

    /// Adds a thread's contention counters.
    pub(crate) fn add_contention(&self, c: Contention) {
        let values = [c.cas_failures, c.expansion_waits, c.virtual_loss_collisions];
        for (total, value) in self.contention.iter().zip(values) {
            if value > 0 {
                total.fetch_add(value, Ordering::Relaxed);
            }
        }
    }

    /// The contention counters of this run.
    pub(crate) fn contention(&self) -> Contention {
        let [cas_failures, expansion_waits, virtual_loss_collisions] = self
            .contention
            .each_ref()
            .map(|c| c.load(Ordering::Relaxed));
        Contention {
            cas_failures,
            expansion_waits,
            virtual_loss_collisions,
        }
    }

    /// Records a reclaim that dropped `nodes` nodes and took `time`.
    pub(crate) fn add_reclaim(&self, nodes: u64, time: Duration) {
        self.reclaims.fetch_add(1, Ordering::Relaxed);
        self.nodes_reclaimed.fetch_add(nodes, Ordering::Relaxed);
        let nanos = u64::try_from(time.as_nanos()).unwrap_or(u64::MAX);
        self.reclaim_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    /// Reclaims in this run, the nodes they dropped and the time they took.
    pub(crate) fn reclaimed(&self) -> (u32, u64, Duration) {
        (
            self.reclaims.load(Ordering::Relaxed),
            self.nodes_reclaimed.load(Ordering::Relaxed),
            Duration::from_nanos(self.reclaim_nanos.load(Ordering::Relaxed)),
        )
    }

    /// Records that the tree was full.
    pub(crate) fn note_tree_full(&self) {
        if !self.tree_full.load(Ordering::Relaxed) {
            self.tree_full.store(true, Ordering::Relaxed);
        }
    }

    /// Whether the tree was full at some point of this run.
    pub(crate) fn tree_was_full(&self) -> bool {
        self.tree_full.load(Ordering::Relaxed)
    }

    /// Records `reason` unless another one was recorded first, and tells all threads to stop.
    pub(crate) fn finish(&self, reason: StopReason) {
        let _ = self
            .reason
            .compare_exchange(0, reason.code(), Ordering::SeqCst, Ordering::SeqCst);
        self.done.store(true, Ordering::SeqCst);
    }

    /// Whether the threads have been told to stop.
    pub(crate) fn is_done(&self) -> bool {
        self.done.load(Ordering::Relaxed)
    }

    /// The recorded stop reason.
    pub(crate) fn reason(&self) -> Option<StopReason> {
        StopReason::from_code(self.reason.load(Ordering::SeqCst))
    }

    /// Asks the threads to stop with [`StopReason::Stopped`] (handle dropped).
    pub(crate) fn abort(&self) {
        self.abort.store(true, Ordering::SeqCst);
    }

    /// Whether [`abort`](Control::abort) was called.
    pub(crate) fn is_aborted(&self) -> bool {
        self.abort.load(Ordering::Relaxed)
    }

    /// Records that a search thread is panicking, and stops the others.
    pub(crate) fn poison(&self) {
        self.poisoned.store(true, Ordering::SeqCst);
        self.finish(StopReason::Stopped);
    }

    /// Whether a search thread panicked.
    pub(crate) fn is_poisoned(&self) -> bool {
        self.poisoned.load(Ordering::Relaxed)
    }

    /// Takes a playout ticket; false once `max` have been handed out.
    pub(crate) fn take_ticket(&self, max: u64) -> bool {
        self.tickets.fetch_add(1, Ordering::Relaxed) < max
    }

    pub(crate) fn reused_visits(&self) -> u64 {
        self.reused_visits
    }

    /// When the run started.
    pub(crate) fn started(&self) -> Instant {
        self.start
    }

    /// Time since the start, or the run's duration once it finished.
    pub(crate) fn elapsed(&self) -> Duration {
        match self.elapsed_nanos.load(Ordering::Acquire) {
            u64::MAX => self.start.elapsed(),
            nanos => Duration::from_nanos(nanos),
        }
    }

    fn lock_running(&self) -> MutexGuard<'_, usize> {
        // A panicking worker cannot leave the count inconsistent (it is one integer).
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Worker threads still running.
    pub(crate) fn running(&self) -> usize {
        *self.lock_running()
    }

    /// Called once by each worker as it exits (also when it could not be spawned). The last one
    /// runs `finalize` before anyone can observe the run as finished, then records the duration.
    pub(crate) fn retire_worker(&self, finalize: impl FnOnce()) {
        let mut running = self.lock_running();
        if *running == 1 {
            finalize();
            if self.reason().is_none() {
                // Every thread failed to start.
                self.finish(StopReason::Stopped);
            }
            let nanos = u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX - 1);
            self.elapsed_nanos.store(nanos, Ordering::Release);
        }
        *running = running.saturating_sub(1);
        if *running == 0 {
            self.finished.notify_all();
        }
    }

    /// Blocks until no worker runs or `timeout` passed; true if finished.
    pub(crate) fn wait_finished(&self, timeout: Duration) -> bool {
        let running = self.lock_running();
        let (running, _) = self
            .finished
            .wait_timeout_while(running, timeout, |r| *r > 0)
            .unwrap_or_else(PoisonError::into_inner);
        *running == 0
    }

    /// Adds a batch of per-thread depth statistics.
    pub(crate) fn add_depths(&self, sum: u64, count: u64, max: u32) {
        if count > 0 {
            self.depth_sum.fetch_add(sum, Ordering::Relaxed);
            self.depth_count.fetch_add(count, Ordering::Relaxed);
            self.max_depth.fetch_max(max, Ordering::Relaxed);
        }
    }

    pub(crate) fn add_refinements(&self, n: u64) {
        if n > 0 {
            self.refinements.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// Knowledge refinements done in this run.
    pub(crate) fn refinements(&self) -> u64 {
        self.refinements.load(Ordering::Relaxed)
    }

    pub(crate) fn max_depth(&self) -> u32 {
        self.max_depth.load(Ordering::Relaxed)
    }

    pub(crate) fn mean_depth(&self) -> f64 {
        let count = self.depth_count.load(Ordering::Relaxed);
        if count == 0 {
            0.0
        } else {
            self.depth_sum.load(Ordering::Relaxed) as f64 / count as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_reason_codes_round_trip() {
        for reason in StopReason::ALL {
            assert_eq!(StopReason::from_code(reason.code()), Some(reason));
        }
        assert_eq!(StopReason::from_code(0), None);
        assert_eq!(StopReason::from_code(9), None);
    }

    #[test]
    fn first_reason_sticks() {
        let ctl = Control::new(0, 1);
        assert_eq!(ctl.reason(), None);
        ctl.finish(StopReason::Time);
        ctl.finish(StopReason::Stopped);
        assert!(ctl.is_done());
        assert_eq!(ctl.reason(), Some(StopReason::Time));
        assert!(!ctl.wait_finished(Duration::from_millis(1)));
        ctl.retire_worker(|| {});
        assert!(ctl.wait_finished(Duration::from_millis(1)));
        assert_eq!(ctl.running(), 0);
    }

    #[test]
    fn tickets_are_exact() {
        let ctl = Control::new(0, 1);
        assert_eq!((0..10).filter(|_| ctl.take_ticket(7)).count(), 7);
    }
}
