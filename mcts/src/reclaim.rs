//! Replacing a full tree while the search runs: the shared tree slot the threads load from, and
//! the rendezvous that pauses every thread while one of them reclaims.
//!
//! Reclaiming copies the useful part of the tree into a fresh one ([`Tree::compact`]), which is
//! only sound while nobody changes the old tree. Rather than make every iteration pay for a
//! lock, the threads meet between iterations: a thread that finds the tree full raises the
//! request; each thread, before its next iteration, parks; the last one to park (all running
//! threads parked) does the copy, swaps the tree in and wakes the others, who pick the new tree
//! up by its epoch. A thread that stops instead of parking leaves the running count, so the
//! rendezvous never waits for it; when the search is over, parked threads leave without
//! reclaiming.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError, RwLock};
use std::time::Duration;

use crate::tree::Tree;

/// The current tree, shared by the search threads and snapshot readers.
#[derive(Debug)]
pub(crate) struct SharedTree {
    current: RwLock<Arc<Tree>>,
    /// Bumped on every swap (release, after the swap): a thread whose copy is older loads the
    /// new tree.
    epoch: AtomicU64,
}

impl SharedTree {
    pub(crate) fn new(tree: Tree) -> Self {
        SharedTree {
            current: RwLock::new(Arc::new(tree)),
            epoch: AtomicU64::new(0),
        }
    }

    /// The current tree (a reference count, taken once per thread and per swap, not per
    /// iteration).
    pub(crate) fn load(&self) -> Arc<Tree> {
        Arc::clone(&self.current.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// The epoch of the current tree.
    pub(crate) fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    /// Installs `tree` as the current one.
    pub(crate) fn replace(&self, tree: Tree) {
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(tree);
        self.epoch.fetch_add(1, Ordering::Release);
    }

    /// Installs `tree` without a search running (exclusive access).
    pub(crate) fn set(&mut self, tree: Tree) {
        *self
            .current
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner) = Arc::new(tree);
        *self.epoch.get_mut() += 1;
    }

    /// The tree for changing in place, if no thread or snapshot holds it (none does between
    /// searches).
    pub(crate) fn get_mut(&mut self) -> Option<&mut Tree> {
        Arc::get_mut(
            self.current
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }
}

/// The rendezvous (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct Reclaimer {
    requested: AtomicBool,
    /// Threads parked right now.
    parked: Mutex<usize>,
    resumed: Condvar,
}

/// How often parked threads look again at the running count (a thread that stopped does not
/// wake them).
const RECHECK: Duration = Duration::from_millis(1);

impl Reclaimer {
    /// Asks the threads to meet and reclaim.
    pub(crate) fn request(&self) {
        self.requested.store(true, Ordering::SeqCst);
    }

    /// Whether a reclaim is wanted (checked by every thread before each iteration).
    pub(crate) fn is_requested(&self) -> bool {
        self.requested.load(Ordering::Relaxed)
    }

    /// Forgets a request (a new run starts).
    pub(crate) fn clear(&self) {
        self.requested.store(false, Ordering::SeqCst);
    }

    /// Parks this thread until the reclaim is done. The last of the `running()` threads to park
    /// runs `reclaim`; if `finished()` turns true meanwhile, everybody leaves without it.
    pub(crate) fn park(
        &self,
        running: impl Fn() -> usize,
        finished: impl Fn() -> bool,
        reclaim: impl FnOnce(),
    ) {
        let mut parked = self.parked.lock().unwrap_or_else(PoisonError::into_inner);
        *parked += 1;
        let mut reclaim = Some(reclaim);
        while self.requested.load(Ordering::SeqCst) && !finished() {
            if *parked >= running() {
                if let Some(reclaim) = reclaim.take() {
                    reclaim();
                }
                self.requested.store(false, Ordering::SeqCst);
                self.resumed.notify_all();
                break;
            }
            parked = self
                .resumed
                .wait_timeout(parked, RECHECK)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        *parked -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn the_last_thread_to_park_reclaims_once() {
        let reclaimer = Reclaimer::default();
        let done = AtomicUsize::new(0);
        reclaimer.request();
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    reclaimer.park(
                        || 4,
                        || false,
                        || {
                            done.fetch_add(1, Ordering::SeqCst);
                        },
                    )
                });
            }
        });
        assert_eq!(done.load(Ordering::SeqCst), 1);
        assert!(!reclaimer.is_requested());
        assert_eq!(
            *reclaimer
                .parked
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
            0
        );
    }

    #[test]
    fn parked_threads_leave_when_the_search_ends() {
        let reclaimer = Reclaimer::default();
        reclaimer.request();
        let ended = AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| reclaimer.park(|| 2, || ended.load(Ordering::SeqCst), || panic!("no")));
            std::thread::sleep(Duration::from_millis(5));
            ended.store(true, Ordering::SeqCst);
        });
        assert!(reclaimer.is_requested());
    }

    #[test]
    fn shared_tree_swaps_and_counts_epochs() {
        use crate::tree::TreeLimits;
        let limits = TreeLimits {
            max_nodes: 10,
            max_bytes: 1 << 20,
        };
        let mut shared = SharedTree::new(Tree::new(limits));
        let held = shared.load();
        assert_eq!(shared.epoch(), 0);
        shared.replace(Tree::new(limits));
        assert_eq!(shared.epoch(), 1);
        assert!(!Arc::ptr_eq(&held, &shared.load()));
        drop(held);
        assert!(shared.get_mut().is_some());
    }
}
