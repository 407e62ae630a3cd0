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

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use emergo_mcts::{Search, SearchParams, Snapshot, StopReason as MctsStop};
use emergo_proto::v1 as pb;
use emergo_rules::Move;
use tokio::sync::{mpsc, oneshot};
use tonic::Status;

use crate::admission::{Admission, Grant};
use crate::budget::SearchBudget;
use crate::config::ServerConfig;
use crate::convert;
use crate::engine::{EmergoState, Knowledge};
use crate::error::ServiceError;
use crate::games::{BudgetedSearch, GameStore, KeptGame, Pondered};
use crate::memory::{TreeGrant, TreeMemory};
use crate::ponder::{PonderJob, Ponders};
use crate::request::SearchJob;
use crate::stop::{Registration, SearchId, SearchRegistry};

/// Stream item type of Analyze.
pub type UpdateResult = Result<pb::AnalysisUpdate, Status>;

/// Why a search was stopped from outside.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum StopCause {
    /// Not stopped from outside.
    None = 0,
    /// The client cancelled or disconnected.
    Cancelled = 1,
    /// The server is shutting down.
    Shutdown = 2,
    /// A StopSearch call ended it early; its call still gets the final update.
    Stopped = 3,
    /// The time manager ended it: a game clock's budget was used, or the best move settled
    /// ([`crate::budget`]).
    Budget = 4,
    /// A ponder whose threads a waiting request needs ([`crate::ponder`]).
    Preempted = 5,
    /// A ponder whose game's next request arrived.
    Superseded = 6,
}

/// The stop switch of one running search (or of a game review's searches, [`crate::review`]).
#[derive(Debug)]
pub struct StopControl {
    flag: Arc<AtomicBool>,
    cause: AtomicU8,
    /// Wakes the tasks waiting in [`StopControl::stopped`].
    notify: tokio::sync::Notify,
}

impl StopControl {
    /// A switch that is not raised (the same as `default()`).
    pub fn new() -> StopControl {
        StopControl {
            flag: Arc::new(AtomicBool::new(false)),
            cause: AtomicU8::new(StopCause::None as u8),
            notify: tokio::sync::Notify::new(),
        }
    }

    /// Stops the search, remembering the first cause given. True if this call was the first.
    pub fn stop(&self, cause: StopCause) -> bool {
        let first = self
            .cause
            .compare_exchange(
                StopCause::None as u8,
                cause as u8,
                Ordering::SeqCst,
                Ordering::SeqCst,
            )
            .is_ok();
        self.flag.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
        first
    }

    /// Resolves once the switch is raised (at once if it already is): for async code that
    /// waits on something else meanwhile, such as threads for the next search.
    pub async fn stopped(&self) {
        let notified = self.notify.notified();
        let mut notified = std::pin::pin!(notified);
        // Registered before the flag is read: a `stop` after this line wakes it.
        notified.as_mut().enable();
        if !self.is_stopped() {
            notified.await;
        }
    }

    /// True once stopped, whatever the cause.
    pub fn is_stopped(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }

    /// The flag the search threads read, for [`Search::set_stop_flag`].
    pub fn flag(&self) -> Arc<AtomicBool> {
        self.flag.clone()
    }

    /// The first cause given, `None` while not stopped.
    pub fn cause(&self) -> StopCause {
        match self.cause.load(Ordering::SeqCst) {
            1 => StopCause::Cancelled,
            2 => StopCause::Shutdown,
            3 => StopCause::Stopped,
            4 => StopCause::Budget,
            5 => StopCause::Preempted,
            6 => StopCause::Superseded,
            _ => StopCause::None,
        }
    }
}

impl Default for StopControl {
    fn default() -> StopControl {
        StopControl::new()
    }
}

/// Stops the search when the request's future is dropped before it finished (the client went
/// away: tonic drops the handler of a cancelled call).
pub(crate) struct CancelOnDrop {
    pub(crate) ctl: Arc<StopControl>,
    pub(crate) armed: bool,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if self.armed {
            self.ctl.stop(StopCause::Cancelled);
        }
    }
}

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

    /// Waits until no search runs and no game ponders (bounded by `timeout`).
    pub async fn drained(&self, timeout: Duration) {
        let end = Instant::now() + timeout;
        while (self.running_searches() > 0 || !self.ponders.is_empty()) && Instant::now() < end {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
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
        let evict = || self.games.evict_oldest().map(drop).is_some();
        params.max_tree_bytes = grant.grow_to(self.memory.share(threads), evict);
        Search::new(state, params)
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
        let evict = || self.games.evict_oldest().map(drop).is_some();
        let BudgetedSearch {
            mut search,
            mut grant,
        } = tree;
        grant.grow_to(share, evict);
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

    /// Runs one search. With `updates`, a snapshot is sent every report interval while it runs
    /// (the final update is returned, not sent). `deadline` is the client's gRPC deadline.
    pub async fn search(
        self: &Arc<Self>,
        job: SearchJob,
        deadline: Option<Instant>,
        updates: Option<mpsc::Sender<UpdateResult>>,
    ) -> Result<pb::AnalysisUpdate, ServiceError> {
        if self.is_shutting_down() {
            return Err(ServiceError::ShuttingDown);
        }
        // The game's ponder, if any, ends now; its tree is handed over below, before reuse.
        if let Some(id) = &job.game_id {
            self.ponders.stop(id, StopCause::Superseded);
        }
        let fen_now = job.position.game.position().to_string();
        let state = EmergoState::from_game(&job.position.game)
            .with_root_moves(&job.root_moves)
            .with_knowledge(self.knowledge.clone());
        if let Some(outcome) = state.rules_outcome() {
            return Ok(convert::game_over(fen_now, outcome));
        }

        // Registered before waiting for threads, so that a client can stop its own queued
        // request by the id it chose ([`crate::stop`]).
        let ctl = Arc::new(StopControl::new());
        let registration = self.searches.register(
            job.search_id.clone().unwrap_or_else(SearchId::random),
            ctl.clone(),
        )?;
        let search_id = registration.id().to_string();
        tracing::debug!(search_id, "registered for StopSearch");

        // With a deadline, plan when the search must end and the answer leave; a deadline too
        // short for that is answered now, in time for the client to hear it.
        let plan = deadline
            .map(|d| DeadlinePlan::new(d, Instant::now()))
            .transpose()?;
        // Admission: wait for threads, but only as long as a search could still start.
        let wait_bound = plan.map_or(Duration::MAX, |p| {
            p.latest_start.saturating_duration_since(Instant::now())
        });
        let grant = self
            .admission
            .acquire(job.threads, job.priority, wait_bound)
            .await?;
        let threads = grant.threads;
        crate::metrics::queue_length(self.admission.queued());

        let mut params = SearchParams {
            threads: grant.threads,
            seed: if job.seed == 0 {
                fresh_seed()
            } else {
                job.seed
            },
            max_time: job.max_time,
            max_playouts: job.max_playouts,
            pv_len: job.pv_len,
            multi_pv: job.multi_pv,
            ..self.base_params()
        };
        params.smart_pruning &= !job.exhaustive;
        let running = self.running(ctl.clone(), grant, Some(registration));
        let id = running.id;

        let (done_tx, done_rx) = oneshot::channel();
        let interval = job.report_interval;
        let thread_updates = updates.clone();
        let thread_ctl = ctl.clone();
        let thread_search_id = search_id.clone();
        let engine = self.clone();
        let fen = fen_now.clone();
        // The supervisor does all the heavy lifting off the runtime: it sets the tree up, watches
        // the search, builds the final update, and parks (or drops: big trees take milliseconds
        // to free) the tree.
        let span = tracing::Span::current();
        let mut budget = SearchBudget::new(&job);
        std::thread::Builder::new()
            .name(format!("search-{id}"))
            .spawn(move || {
                let _span = span.entered();
                // Unregisters the search and returns its threads when dropped.
                let search_guard = running;
                // The tree's bytes of the budget. Declared before the tree, so dropped after it
                // (locals drop in reverse order), also when a search thread panics: the bytes go
                // back only once the tree is freed.
                let mut grant = engine.memory.grant();
                // A ponder of this game was stopped when the request arrived: its tree is
                // parked as soon as its threads have stopped.
                if let Some(id) = &job.game_id {
                    if !engine.ponders.wait_for(id, crate::ponder::HANDOVER_WAIT) {
                        tracing::warn!("the game's ponder did not hand its tree over in time");
                    }
                }
                // Advancing a kept tree copies it, a mismatched one must be freed, and making
                // room may free kept trees: all take time, so they happen here rather than on
                // the runtime.
                let (mut search, pondered) =
                    engine.reuse_or_new(&job, state, params, threads, &mut grant);
                search.set_stop_flag(thread_ctl.flag.clone());
                // The deadline clips the budget only now, so that the set-up above is paid from
                // the search's time rather than from the margin kept for answering.
                let mut deadline_limited = false;
                if let Some(plan) = plan {
                    let budget = plan.search_end.saturating_duration_since(Instant::now());
                    let mut params = search.params().clone();
                    if params.max_time.is_none_or(|t| t > budget) {
                        params.max_time = Some(budget);
                        deadline_limited = true;
                        search.set_params(params);
                    }
                }
                // A game clock's hard limit counts from the request's arrival: what is left of
                // it is set last, after the set-up above took its time (issue 13 item 6).
                let mut params = search.params().clone();
                budget.limit(&mut params);
                if params.max_time != search.params().max_time {
                    search.set_params(params);
                }
                let handle = search.start();
                let mut done_tx = Some(done_tx);
                // The best move the client was told, once told.
                let mut answered: Option<Move> = None;
                // Clocked searches are looked at more often than reports go out.
                let mut next_report = Instant::now() + interval;
                loop {
                    let now = Instant::now();
                    let report = thread_updates.as_ref().map(|_| next_report);
                    let wake = match (report, plan) {
                        (Some(r), Some(p)) => Some(r.min(p.answer_by)),
                        (r, p) => r.or(p.map(|p| p.answer_by)),
                    };
                    let wake = [wake, budget.next_look(now)].into_iter().flatten().min();
                    let wait = wake.map_or(Duration::from_secs(3600), |w| {
                        w.saturating_duration_since(now)
                    });
                    if handle.wait_timeout(wait) {
                        break;
                    }
                    if plan.is_some_and(|p| Instant::now() >= p.answer_by) {
                        // The threads are past their time but have not all noticed yet (on a
                        // busy machine a search thread can wait several milliseconds for a
                        // core): answer from what the tree holds now rather than wait for them
                        // and miss the deadline. They stop at their next check.
                        let cause = thread_ctl.cause();
                        let stop = match cause {
                            StopCause::None | StopCause::Budget => MctsStop::Time,
                            StopCause::Cancelled
                            | StopCause::Shutdown
                            | StopCause::Stopped
                            | StopCause::Preempted
                            | StopCause::Superseded => MctsStop::Stopped,
                        };
                        thread_ctl.flag.store(true, Ordering::SeqCst);
                        let snapshot = handle.snapshot();
                        let reason = final_reason(Some(stop), cause, deadline_limited);
                        let mut update =
                            convert::update(&snapshot, &fen, threads, true, Some(reason));
                        budget.finish(&mut update, Some(stop), deadline_limited);
                        set_pondered(&mut update, pondered);
                        if let Some(tx) = done_tx.take() {
                            answered = snapshot.best_move;
                            let _ = tx.send(update);
                        }
                        tracing::debug!("answered before every search thread had stopped");
                        break;
                    }
                    if budget.clocked() && budget.look(&handle.snapshot()) {
                        thread_ctl.stop(StopCause::Budget);
                    }
                    if let Some(tx) = thread_updates
                        .as_ref()
                        .filter(|_| Instant::now() >= next_report)
                    {
                        next_report = Instant::now() + interval;
                        let mut update =
                            convert::update(&handle.snapshot(), &fen, threads, false, None);
                        update.search_id.clone_from(&thread_search_id);
                        if let Err(mpsc::error::TrySendError::Closed(_)) = tx.try_send(Ok(update)) {
                            thread_ctl.stop(StopCause::Cancelled);
                        }
                    }
                }
                let (search, snapshot) = handle.wait();
                engine.finished(&snapshot);
                let reason =
                    final_reason(snapshot.stop_reason, thread_ctl.cause(), deadline_limited);
                let mut update = convert::update(&snapshot, &fen, threads, true, Some(reason));
                budget.finish(&mut update, snapshot.stop_reason, deadline_limited);
                set_pondered(&mut update, pondered);
                if done_tx.is_some() {
                    answered = snapshot.best_move;
                }
                // A ponder goes on from the answer: its slot is taken before answering, so that
                // the game's next request waits for the pondered tree instead of missing it.
                let wants_ponder = job.ponder
                    && engine.config.max_ponder_ms > 0
                    && engine.config.kept_games > 0
                    && !engine.is_shutting_down()
                    && matches!(
                        thread_ctl.cause(),
                        StopCause::None | StopCause::Budget | StopCause::Stopped
                    );
                let ponder = match (&job.game_id, answered) {
                    (Some(id), Some(best)) if wants_ponder && job.root_moves.is_empty() => {
                        engine.ponders.begin(id).map(|slot| (slot, best))
                    }
                    _ => None,
                };
                // Otherwise park the tree before answering, so that the game's next request
                // finds it; drop whatever that evicts (or the tree itself) after answering.
                let tree = BudgetedSearch { search, grant };
                let (garbage, ponder) = match (ponder, job.game_id, job.root_moves.is_empty()) {
                    (Some((slot, best)), _, _) => (Vec::new(), Some((slot, best, tree))),
                    (None, Some(id), true) => {
                        let kept = KeptGame {
                            fen: job.position.fen.clone(),
                            moves: job.position.moves.clone(),
                            tree,
                            pondered: Pondered::default(),
                        };
                        (engine.games.put(id, kept), None)
                    }
                    _ => (vec![tree], None),
                };
                if let Some(tx) = done_tx {
                    let _ = tx.send(update);
                }
                drop(garbage);
                if let Some((slot, best, tree)) = ponder {
                    // The search's threads and id go first: the ponder takes only idle threads.
                    drop(search_guard);
                    let job = PonderJob {
                        slot,
                        fen: job.position.fen,
                        moves: job.position.moves,
                        best,
                        threads,
                    };
                    crate::ponder::run(&engine, job, tree);
                }
            })
            .map_err(|e| ServiceError::Internal(format!("cannot start a search thread: {e}")))?;

        let mut guard = CancelOnDrop {
            ctl: ctl.clone(),
            armed: true,
        };
        let mut done_rx = done_rx;
        let finished = match &updates {
            Some(tx) => tokio::select! {
                r = &mut done_rx => r,
                _ = tx.closed() => {
                    ctl.stop(StopCause::Cancelled);
                    done_rx.await
                }
            },
            None => done_rx.await,
        };
        guard.armed = false;
        let mut update =
            finished.map_err(|_| ServiceError::Internal("the search thread failed".to_owned()))?;
        update.search_id = search_id;
        Ok(update)
    }

    /// The kept tree of the job's game advanced to its position, or a fresh search, with
    /// `grant` grown to the search's share of the tree-memory budget (evicting the least
    /// recently used kept trees for room) and the tree limited to it; and the reused visits
    /// that a ponder added ([`crate::games::Pondered`]).
    fn reuse_or_new(
        &self,
        job: &SearchJob,
        state: EmergoState,
        params: SearchParams,
        threads: usize,
        grant: &mut TreeGrant,
    ) -> (Search<EmergoState>, u64) {
        if let (Some(id), true) = (&job.game_id, job.root_moves.is_empty()) {
            if let Some(kept) = self.games.take(id) {
                if let Some(extra) = kept.continuation(&job.position.fen, &job.position.moves) {
                    let KeptGame { tree, pondered, .. } = kept;
                    let (tree, reused) = self.continue_search(tree, extra, params, threads);
                    let BudgetedSearch {
                        search,
                        grant: kept_grant,
                    } = tree;
                    // The (empty) grant is replaced by the one that pays for the kept tree.
                    *grant = kept_grant;
                    return (search, pondered.visits_after(extra, reused));
                }
                // A different line of play: the kept tree is of no use (freed here, before
                // this search takes its share).
                drop(kept);
            }
        }
        (self.fresh_search(state, params, threads, grant), 0)
    }
}

/// Least time a search gets: a deadline that leaves less (after the margin) is answered with
/// DEADLINE_EXCEEDED at once.
pub const MIN_SEARCH: Duration = Duration::from_millis(2);
/// Smallest and largest margin kept back from a client's deadline.
pub const MIN_MARGIN: Duration = Duration::from_millis(10);
/// See [`MIN_MARGIN`].
pub const MAX_MARGIN: Duration = Duration::from_millis(250);

/// The part of a client's deadline (`remaining` when the request arrives) kept back for what
/// follows the search: its threads noticing the time, the answer being built, encoded and sent,
/// and the request's own transit (the client's clock started before the server saw the
/// request). A quarter of the time, at least [`MIN_MARGIN`], at most [`MAX_MARGIN`].
///
/// Measured (issue 12 item 8: 100 BestMove calls per deadline, 2 cores, a busy loop and other
/// builds running, load average 6–7): with a tenth, at least 5 ms, and the budget counted from
/// the request's arrival, 40–65% of the calls with 20 and 50 ms deadlines and 10–20% with
/// 100 ms missed them. The time lost went to setting up the tree (up to 8 ms, now paid from the
/// search's budget) and to search threads waiting for a core before they noticed their time
/// was up (up to 10 ms; the supervisor no longer waits for them past
/// [`DeadlinePlan::answer_by`]). With both and this margin, 0–7%, and none at load 5 without
/// the busy loop (`deadline_miss_rate` in `tests/tests/server_contract.rs`).
pub fn deadline_margin(remaining: Duration) -> Duration {
    (remaining / 4).clamp(MIN_MARGIN, MAX_MARGIN)
}

/// When a search under a client deadline must end, and when its answer must leave at the
/// latest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeadlinePlan {
    /// The search's time ends here: the deadline less the whole margin.
    pub search_end: Instant,
    /// The supervisor answers by here even if search threads are still finishing: the deadline
    /// less half the margin (the other half is for sending the answer).
    pub answer_by: Instant,
    /// Past this, waiting for threads is pointless: no search of [`MIN_SEARCH`] would fit.
    pub latest_start: Instant,
}

impl DeadlinePlan {
    /// The plan for a request with `deadline` arriving at `now`, or DEADLINE_EXCEEDED if the
    /// deadline leaves no time to search.
    pub fn new(deadline: Instant, now: Instant) -> Result<DeadlinePlan, ServiceError> {
        let remaining = deadline.saturating_duration_since(now);
        let margin = deadline_margin(remaining);
        let too_short = ServiceError::DeadlineTooShort {
            remaining_ms: u64::try_from(remaining.as_millis()).unwrap_or(u64::MAX),
        };
        if remaining < margin + MIN_SEARCH {
            return Err(too_short);
        }
        // `remaining >= margin`, so none of these subtractions can fail; `ok_or` keeps a
        // client-controlled value away from a panic all the same.
        let search_end = deadline.checked_sub(margin).ok_or(too_short.clone())?;
        let answer_by = deadline.checked_sub(margin / 2).ok_or(too_short.clone())?;
        let latest_start = search_end.checked_sub(MIN_SEARCH).ok_or(too_short)?;
        Ok(DeadlinePlan {
            search_end,
            answer_by,
            latest_start,
        })
    }
}

/// The final update's stop reason: the search's own, with the causes only the server knows
/// filled in (a stop from outside is a cancellation or the shutdown; time clipped by the
/// deadline is the deadline).
pub(crate) fn final_reason(
    stop: Option<MctsStop>,
    cause: StopCause,
    deadline_limited: bool,
) -> pb::StopReason {
    match stop {
        Some(MctsStop::Time) if deadline_limited => pb::StopReason::Deadline,
        Some(MctsStop::Stopped) => match cause {
            StopCause::Shutdown => pb::StopReason::Shutdown,
            StopCause::Stopped => pb::StopReason::Stopped,
            StopCause::Budget => pb::StopReason::Time,
            _ => pb::StopReason::Cancelled,
        },
        other => convert::stop_reason(other),
    }
}

/// Sets `stats.pondered_visits` of an update.
fn set_pondered(update: &mut pb::AnalysisUpdate, pondered: u64) {
    if let Some(stats) = update.stats.as_mut() {
        stats.pondered_visits = pondered;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn margins_grow_with_the_deadline_within_bounds() {
        assert_eq!(deadline_margin(Duration::from_millis(20)), MIN_MARGIN);
        assert_eq!(
            deadline_margin(Duration::from_millis(100)),
            Duration::from_millis(25)
        );
        assert_eq!(deadline_margin(Duration::from_secs(60)), MAX_MARGIN);
    }

    #[test]
    fn deadline_plans() {
        let now = Instant::now();
        let plan = DeadlinePlan::new(now + Duration::from_millis(100), now).unwrap();
        assert_eq!(plan.search_end, now + Duration::from_millis(75));
        assert_eq!(plan.answer_by, now + Duration::from_micros(87_500));
        assert_eq!(plan.latest_start, now + Duration::from_millis(73));
        // 20 ms: 10 ms of search, the answer out by 15 ms.
        let plan = DeadlinePlan::new(now + Duration::from_millis(20), now).unwrap();
        assert_eq!(plan.search_end, now + Duration::from_millis(10));
        assert_eq!(plan.answer_by, now + Duration::from_millis(15));
        // Too short, or already past: DEADLINE_EXCEEDED.
        for ms in [0, 1, 11] {
            let e = DeadlinePlan::new(now + Duration::from_millis(ms), now).unwrap_err();
            assert_eq!(e.code(), tonic::Code::DeadlineExceeded, "{ms} ms");
        }
        let past = DeadlinePlan::new(now, now + Duration::from_secs(1)).unwrap_err();
        assert_eq!(past, ServiceError::DeadlineTooShort { remaining_ms: 0 });
        assert!(DeadlinePlan::new(now + Duration::from_millis(12), now).is_ok());
    }

    #[test]
    fn final_reasons() {
        use pb::StopReason as R;
        assert_eq!(
            final_reason(Some(MctsStop::Time), StopCause::None, true),
            R::Deadline
        );
        assert_eq!(
            final_reason(Some(MctsStop::Time), StopCause::None, false),
            R::Time
        );
        assert_eq!(
            final_reason(Some(MctsStop::Stopped), StopCause::Shutdown, false),
            R::Shutdown
        );
        assert_eq!(
            final_reason(Some(MctsStop::Stopped), StopCause::Cancelled, true),
            R::Cancelled
        );
        assert_eq!(
            final_reason(Some(MctsStop::Stopped), StopCause::Stopped, true),
            R::Stopped
        );
        assert_eq!(
            final_reason(Some(MctsStop::Stopped), StopCause::Budget, false),
            R::Time
        );
        assert_eq!(
            final_reason(Some(MctsStop::NodeCap), StopCause::None, true),
            R::NodeCap
        );
    }
}
