//! Running searches for requests: admission, deadlines, tree reuse, streaming snapshots,
//! cancellation and shutdown.
//!
//! Each search runs on its own OS threads (the MCTS crate's), watched by one supervisor thread
//! that takes snapshots every report interval and hands them to the async side through a
//! channel. Nothing here blocks the tokio runtime: the async side only awaits channels.
//!
//! Each search's tree is paid for by a grant of the tree-memory budget ([`crate::memory`]),
//! taken by the supervisor thread before the search starts (evicting kept trees for room) and
//! held until the tree is freed or parked.
//!
//! After answering a BestMove that asked to ponder, the supervisor thread stays on as the game's
//! ponder ([`crate::ponder`]) with the search's tree and grant, once the search's own threads
//! are given back.

mod deadline;
mod ponder;
mod search;

pub use deadline::{DeadlinePlan, MAX_MARGIN, MIN_MARGIN, MIN_SEARCH, deadline_margin};
pub(crate) use search::final_reason;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use emergo_engine::{EmergoState, Knowledge};
use emergo_mcts::{Search, SearchParams, Snapshot};
use emergo_proto::v1 as pb;
use emergo_rules::Move;
use tokio::sync::Notify;

use crate::admission::{Admission, Grant};
use crate::config::ServerConfig;
use crate::error::ServiceError;
use crate::games::{BudgetedSearch, GameStore};
use crate::memory::{TreeGrant, TreeMemory};
use crate::ponder::Ponders;
use crate::stop::{Registration, SearchRegistry, StopCause, StopControl};

/// Stream item type of Analyze.
pub type UpdateResult = Result<pb::AnalysisUpdate, ServiceError>;

/// The shared engine: configuration, admission, kept games and the running searches.
pub struct Engine {
    /// Server configuration.
    pub config: ServerConfig,
    /// Thread budget and queue.
    pub admission: Admission,
    /// Kept trees for reuse.
    pub games: GameStore,
    /// The tree-memory budget, shared by running searches and kept trees.
    pub memory: Arc<TreeMemory>,
    /// The stop switches of live searches by search id (StopSearch).
    pub searches: Arc<SearchRegistry>,
    /// The games' ponders ([`crate::ponder`]).
    pub ponders: Arc<Ponders>,
    /// The Emergo knowledge of `config.mcts`, shared by every search.
    knowledge: Option<Arc<Knowledge>>,
    active: Mutex<HashMap<u64, Arc<StopControl>>>,
    next_id: AtomicU64,
    completed: AtomicU64,
    shutting_down: AtomicBool,
    /// Notified whenever a search ends, for [`Engine::drained`].
    search_ended: Notify,
}

/// A summary: the thread budget and the kept games.
impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not the whole configuration: it holds the auth token.
        f.debug_struct("Engine")
            .field("threads", &self.config.threads)
            .field("games", &self.games)
            .finish_non_exhaustive()
    }
}

/// Unregisters a search and returns its threads when the supervisor ends, however it ends
/// ([`Engine::running`]).
pub(crate) struct Running {
    engine: Arc<Engine>,
    id: u64,
    _grant: Grant,
    /// Dropped after the grant: the id stays stoppable until the search has ended. `None` for
    /// the searches of a game review, whose id is registered once for the whole review.
    _registration: Option<Registration>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.engine.lock_active().remove(&self.id);
        crate::metrics::running_searches(self.engine.running_searches());
        self.engine.search_ended.notify_waiters();
    }
}

impl Engine {
    /// An engine for `config`.
    pub fn new(config: ServerConfig) -> Engine {
        Engine {
            admission: Admission::new(
                config.thread_budget(),
                config.max_queue,
                config.max_queue_wait(),
            ),
            games: GameStore::new(config.kept_games, config.kept_nodes),
            memory: Arc::new(TreeMemory::new(
                usize::try_from(config.tree_memory_budget()).unwrap_or(usize::MAX),
                config.thread_budget(),
            )),
            searches: Arc::default(),
            ponders: Arc::default(),
            knowledge: config.mcts.shared_knowledge(),
            config,
            active: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            completed: AtomicU64::new(0),
            shutting_down: AtomicBool::new(false),
            search_ended: Notify::new(),
        }
    }

    fn lock_active(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<StopControl>>> {
        self.active.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Searches running now.
    pub fn running_searches(&self) -> usize {
        self.lock_active().len()
    }

    /// Searches completed since start.
    pub fn completed(&self) -> u64 {
        self.completed.load(Ordering::Relaxed)
    }

    /// True once shutdown began.
    pub fn is_shutting_down(&self) -> bool {
        self.shutting_down.load(Ordering::SeqCst)
    }

    /// Begins shutdown: refuses new work and stops every running search (their final updates
    /// say "shutdown").
    pub fn shutdown(&self) {
        self.shutting_down.store(true, Ordering::SeqCst);
        self.ponders.stop_all(StopCause::Shutdown);
        self.admission.close();
        for ctl in self.lock_active().values() {
            ctl.stop(StopCause::Shutdown);
        }
    }

    /// Waits until no search runs and no game ponders (bounded by `timeout`). Woken by each
    /// search's and each ponder's end (mini-redis style: signalled, not polled).
    pub async fn drained(&self, timeout: Duration) {
        let idle = async {
            loop {
                // Registered before the state is read: an end after this line wakes it.
                let search_ended = self.search_ended.notified();
                let ponder_ended = self.ponders.ended();
                let mut search_ended = std::pin::pin!(search_ended);
                let mut ponder_ended = std::pin::pin!(ponder_ended);
                search_ended.as_mut().enable();
                ponder_ended.as_mut().enable();
                if self.running_searches() == 0 && self.ponders.is_empty() {
                    return;
                }
                tokio::select! {
                    () = search_ended => {}
                    () = ponder_ended => {}
                }
            }
        };
        let _ = tokio::time::timeout(timeout, idle).await;
    }

    /// Counts a search that holds `grant` as running (ServerInfo, metrics, and the shutdown,
    /// which stops `ctl`) until the returned guard is dropped, which also returns the threads
    /// and then drops `registration`.
    pub(crate) fn running(
        self: &Arc<Self>,
        ctl: Arc<StopControl>,
        grant: Grant,
        registration: Option<Registration>,
    ) -> Running {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.lock_active().insert(id, ctl.clone());
        crate::metrics::running_searches(self.running_searches());
        // Checked after the insertion: a shutdown that began before it stops this search here,
        // one that begins after it finds it in the map.
        if self.is_shutting_down() {
            ctl.stop(StopCause::Shutdown);
        }
        Running {
            engine: self.clone(),
            id,
            _grant: grant,
            _registration: registration,
        }
    }

    /// The parameters every search starts from: the server's node cap and search configuration
    /// (`--mcts`); the caller sets threads, seed, limits and principal variations.
    pub(crate) fn base_params(&self) -> SearchParams {
        let mut params = SearchParams {
            max_nodes: self.config.max_nodes,
            ..SearchParams::default()
        };
        self.config.mcts.apply(&mut params);
        params
    }

    /// The search state of a game's current position, with the server's knowledge.
    pub(crate) fn state_of(&self, game: &emergo_rules::Game) -> EmergoState {
        EmergoState::from_game(game).with_knowledge(self.knowledge.clone())
    }

    /// Counts a finished search (ServerInfo's searches_completed, metrics).
    pub(crate) fn finished(&self, snapshot: &Snapshot<Move>) {
        self.completed.fetch_add(1, Ordering::Relaxed);
        crate::metrics::search_finished(
            snapshot.playouts,
            snapshot.playouts_per_second,
            snapshot.reclaims,
            snapshot.nodes_reclaimed,
        );
    }

    /// A search with an empty tree, with `grant` grown to the share of a search on `threads`
    /// threads (evicting the least recently used kept trees for room) and the tree limited to it.
    pub(crate) fn fresh_search(
        &self,
        state: EmergoState,
        mut params: SearchParams,
        threads: usize,
        grant: &mut TreeGrant,
    ) -> Search<EmergoState> {
        params.max_tree_bytes = self.grow_grant(grant, self.memory.share(threads));
        Search::new(state, params)
    }

    /// Grows a search's `grant` to `share`: from free memory first; then, if ponders hold what
    /// is missing, from theirs (a ponder's memory is as preemptible as its threads: they are
    /// stopped, and their trees parked and so evictable); then by evicting the least recently
    /// used kept trees. Returns the bytes granted: the share, unless a ponder did not stop in
    /// time. Blocking (it may wait for ponders): call it from a supervisor thread. Why:
    /// docs/DECISIONS.md, "A ponder's memory is as preemptible as its threads".
    fn grow_grant(&self, grant: &mut TreeGrant, share: usize) -> usize {
        if grant.grow_to(share, || false) >= share {
            return share;
        }
        if !self.ponders.is_empty() {
            self.ponders.stop_all(StopCause::Preempted);
            if !self.ponders.wait_all(crate::ponder::HANDOVER_WAIT) {
                tracing::warn!("a ponder did not give its memory back in time");
            }
        }
        grant.grow_to(share, || self.games.evict_oldest().map(drop).is_some())
    }

    /// `tree` advanced by `moves` (keeping the subtree below them), its grant grown to the
    /// share of a search on `threads` threads and the tree limited to it, set up with `params`;
    /// and the visits kept.
    pub(crate) fn continue_search(
        &self,
        tree: BudgetedSearch,
        moves: &[Move],
        mut params: SearchParams,
        threads: usize,
    ) -> (BudgetedSearch, u64) {
        let share = self.memory.share(threads);
        let BudgetedSearch {
            mut search,
            mut grant,
        } = tree;
        self.grow_grant(&mut grant, share);
        // The grant covers what the tree holds. A tree larger than this search's share (its
        // last search had more threads) is cut down to it by `set_params`; the limit is set
        // before `advance`, whose copy must stay within it too.
        let limit = share.min(grant.bytes());
        params.max_tree_bytes = limit;
        search.set_params(params);
        let reused = search.advance(moves);
        grant.shrink_to(limit.max(search.memory_bytes()));
        (BudgetedSearch { search, grant }, reused)
    }
}

/// A seed for a search whose request left it to the server.
pub(crate) fn fresh_seed() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    nanos ^ COUNTER.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed)
}
