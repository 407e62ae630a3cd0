//! Background searches: [`Search::start`] and the [`SearchHandle`] that controls the running
//! search (live snapshots, stop, wait, tree handed back).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::core::Core;
use crate::game::Game;
use crate::search::Search;
use crate::snapshot::{self, Snapshot};
use crate::threads;

// `start` lives here rather than in `search.rs` so that the search imports nothing from its
// handle: `handle` depends on `search`, never the other way round.
impl<G: Game> Search<G> {
    /// Starts the search on `params.threads` background threads and returns at once.
    pub fn start(mut self) -> SearchHandle<G> {
        let run = self.prepare();
        let (core, own_flag) = self.into_parts();
        let core = Arc::new(core);
        let threads = if run {
            threads::spawn(&core)
        } else {
            Vec::new()
        };
        SearchHandle::new(core, own_flag, threads)
    }
}

/// A search running on background threads.
///
/// Read progress with [`snapshot`](SearchHandle::snapshot), stop it with
/// [`stop`](SearchHandle::stop) (or by raising [`stop_flag`](SearchHandle::stop_flag) from
/// anywhere), and get the [`Search`] back, tree included, with [`wait`](SearchHandle::wait).
/// Dropping the handle stops the threads and joins them (the tree is then lost).
///
/// ```
/// use std::time::Duration;
/// use emergo_mcts::toy::TicTacToe;
/// use emergo_mcts::{Search, SearchParams, StopReason};
///
/// let params = SearchParams { threads: 2, ..SearchParams::default() };
/// let handle = Search::new(TicTacToe::new(), params).start();
/// std::thread::sleep(Duration::from_millis(20));
/// let live = handle.snapshot(); // progress so far; the search goes on
/// assert!(live.best_move.is_some());
/// handle.stop();
/// let (mut search, result) = handle.wait();
/// // Solved (tic-tac-toe is small) or stopped, whichever came first.
/// assert!(matches!(result.stop_reason, Some(StopReason::Stopped | StopReason::Solved)));
/// // Keep the tree for the next move.
/// search.advance(&[result.best_move.unwrap()]);
/// ```
#[derive(Debug)]
pub struct SearchHandle<G: Game> {
    core: Arc<Core<G>>,
    own_flag: bool,
    /// Empty once joined.
    threads: Vec<JoinHandle<()>>,
}

impl<G: Game> SearchHandle<G> {
    fn new(core: Arc<Core<G>>, own_flag: bool, threads: Vec<JoinHandle<()>>) -> Self {
        SearchHandle {
            core,
            own_flag,
            threads,
        }
    }

    /// The current results, without stopping the search. Statistics are read node by node while
    /// threads update them, so counts may be a few playouts apart from each other; `stop_reason`
    /// is `None` until every thread has finished.
    pub fn snapshot(&self) -> Snapshot<G::Move> {
        snapshot::build(&self.core)
    }

    /// Asks the search to stop (raises the stop flag) and returns at once; the threads finish
    /// their current playout. The reported reason is [`StopReason::Stopped`] unless another limit
    /// was reached first.
    ///
    /// [`StopReason::Stopped`]: crate::StopReason::Stopped
    pub fn stop(&self) {
        self.core.stop_flag.store(true, Ordering::SeqCst);
    }

    /// The stop flag, for code that should be able to stop this search without the handle.
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.core.stop_flag)
    }

    /// Whether every search thread has finished.
    pub fn is_finished(&self) -> bool {
        self.core.ctl.running() == 0
    }

    /// Blocks until the search has finished or `timeout` has passed; returns whether it finished.
    pub fn wait_timeout(&self, timeout: Duration) -> bool {
        self.core.ctl.wait_finished(timeout)
    }

    /// Waits for the search to finish (it does not stop it: call [`stop`](SearchHandle::stop)
    /// first for that) and returns the search, for tree reuse, with the final results.
    ///
    /// # Panics
    ///
    /// Re-raises the panic of a search thread (i.e. of the game code it ran).
    pub fn wait(mut self) -> (Search<G>, Snapshot<G::Move>) {
        let mut panic = None;
        for thread in std::mem::take(&mut self.threads) {
            if let Err(payload) = thread.join() {
                panic.get_or_insert(payload);
            }
        }
        if let Some(payload) = panic {
            std::panic::resume_unwind(payload);
        }
        let snapshot = snapshot::build(&self.core);
        let core = Arc::clone(&self.core);
        let own_flag = self.own_flag;
        drop(self);
        let search = match Arc::try_unwrap(core) {
            Ok(core) => Search::from_core(core, own_flag),
            // Unreachable: the joined threads dropped their references before ending. Should it
            // ever happen, hand back a fresh search rather than fail.
            Err(shared) => {
                let mut search = Search::new(shared.root.clone(), shared.params.clone());
                if !own_flag {
                    search.set_stop_flag(Arc::clone(&shared.stop_flag));
                }
                search
            }
        };
        (search, snapshot)
    }
}

impl<G: Game> Drop for SearchHandle<G> {
    /// Stops the threads (without touching the stop flag, which may belong to someone else) and
    /// joins them.
    fn drop(&mut self) {
        if self.threads.is_empty() {
            return;
        }
        self.core.ctl.abort();
        for thread in std::mem::take(&mut self.threads) {
            // A thread's panic is not re-raised from a destructor.
            let _ = thread.join();
        }
    }
}
