//! Running searches for requests: admission, deadlines, tree reuse, streaming snapshots,
//! cancellation and shutdown.
//!
//! Each search runs on its own OS threads (the MCTS crate's), watched by one supervisor thread
//! that takes snapshots every report interval and hands them to the async side through a
//! channel. Nothing here blocks the tokio runtime: the async side only awaits channels.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use emergo_mcts::{Search, SearchParams, StopReason as MctsStop};
use emergo_proto::v1 as pb;
use tokio::sync::{mpsc, oneshot};
use tonic::Status;

use crate::admission::{Admission, Grant};
use crate::config::ServerConfig;
use crate::convert;
use crate::engine::{EmergoState, Knowledge};
use crate::error::ServiceError;
use crate::games::{GameStore, KeptGame};
use crate::request::SearchJob;

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
}

/// The stop switch of one running search.
#[derive(Debug)]
pub struct StopControl {
    flag: Arc<AtomicBool>,
    cause: AtomicU8,
}

impl StopControl {
    fn new() -> StopControl {
        StopControl {
            flag: Arc::new(AtomicBool::new(false)),
            cause: AtomicU8::new(StopCause::None as u8),
        }
    }

    /// Stops the search, remembering the first cause given.
    pub fn stop(&self, cause: StopCause) {
        let _ = self.cause.compare_exchange(
            StopCause::None as u8,
            cause as u8,
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
        self.flag.store(true, Ordering::SeqCst);
    }

    fn cause(&self) -> StopCause {
        match self.cause.load(Ordering::SeqCst) {
            1 => StopCause::Cancelled,
            2 => StopCause::Shutdown,
            _ => StopCause::None,
        }
    }
}

/// Stops the search when the request's future is dropped before it finished (the client went
/// away: tonic drops the handler of a cancelled call).
struct CancelOnDrop {
    ctl: Arc<StopControl>,
    armed: bool,
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
    /// The Emergo knowledge of `config.mcts`, shared by every search.
    knowledge: Option<Arc<Knowledge>>,
    active: Mutex<HashMap<u64, Arc<StopControl>>>,
    next_id: AtomicU64,
    completed: AtomicU64,
    shutting_down: AtomicBool,
}

/// Unregisters a search and returns its threads when the supervisor ends, however it ends.
struct Running {
    engine: Arc<Engine>,
    id: u64,
    _grant: Grant,
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
        self.admission.close();
        for ctl in self.lock_active().values() {
            ctl.stop(StopCause::Shutdown);
        }
    }

    /// Waits until no search runs (bounded by `timeout`).
    pub async fn drained(&self, timeout: Duration) {
        let end = Instant::now() + timeout;
        while self.running_searches() > 0 && Instant::now() < end {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
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
        let fen_now = job.position.game.position().to_string();
        let state = EmergoState::from_game(&job.position.game)
            .with_root_moves(&job.root_moves)
            .with_knowledge(self.knowledge.clone());
        if let Some(outcome) = state.rules_outcome() {
            return Ok(convert::game_over(fen_now, outcome));
        }

        // Admission: wait for threads, but never past the client's deadline.
        let wait_bound = deadline.map_or(Duration::MAX, |d| {
            d.saturating_duration_since(Instant::now())
        });
        let grant = self.admission.acquire(job.threads, wait_bound).await?;
        let threads = grant.threads;
        crate::metrics::queue_length(self.admission.queued());

        // The deadline clips the budget, keeping a margin to send the answer.
        let mut max_time = job.max_time;
        let mut deadline_limited = false;
        if let Some(deadline) = deadline {
            let remaining = deadline.saturating_duration_since(Instant::now());
            let margin =
                (remaining / 10).clamp(Duration::from_millis(5), Duration::from_millis(200));
            let budget = remaining.saturating_sub(margin);
            if budget < Duration::from_millis(2) {
                return Err(ServiceError::DeadlineTooShort {
                    remaining_ms: remaining.as_millis() as u64,
                });
            }
            if max_time.is_none_or(|t| t > budget) {
                max_time = Some(budget);
                deadline_limited = true;
            }
        }

        let mut params = SearchParams {
            threads: grant.threads,
            seed: if job.seed == 0 {
                fresh_seed()
            } else {
                job.seed
            },
            max_time,
            max_playouts: job.max_playouts,
            max_nodes: self.config.max_nodes,
            pv_len: job.pv_len,
            multi_pv: job.multi_pv,
            ..SearchParams::default()
        };
        self.config.mcts.apply(&mut params);
        params.smart_pruning &= !job.exhaustive;
        let ctl = Arc::new(StopControl::new());
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.lock_active().insert(id, ctl.clone());
        crate::metrics::running_searches(self.running_searches());
        if self.is_shutting_down() {
            ctl.stop(StopCause::Shutdown);
        }
        let running = Running {
            engine: self.clone(),
            id,
            _grant: grant,
        };

        let (done_tx, done_rx) = oneshot::channel();
        let interval = job.report_interval;
        let thread_updates = updates.clone();
        let thread_ctl = ctl.clone();
        let engine = self.clone();
        let fen = fen_now.clone();
        // The supervisor does all the heavy lifting off the runtime: it waits for the search,
        // builds the final update, and parks (or drops: big trees take milliseconds to free) the
        // tree.
        std::thread::Builder::new()
            .name(format!("search-{id}"))
            .spawn(move || {
                let _running = running;
                // Advancing a kept tree copies it, and a mismatched one must be freed: both
                // take time, so they happen here rather than on the runtime.
                let mut search = engine.reuse_or_new(&job, state, params);
                search.set_stop_flag(thread_ctl.flag.clone());
                let handle = search.start();
                loop {
                    let wait = if thread_updates.is_some() {
                        interval
                    } else {
                        Duration::from_secs(3600)
                    };
                    if handle.wait_timeout(wait) {
                        break;
                    }
                    if let Some(tx) = &thread_updates {
                        let update =
                            convert::update(&handle.snapshot(), &fen, threads, false, None);
                        if let Err(mpsc::error::TrySendError::Closed(_)) = tx.try_send(Ok(update)) {
                            thread_ctl.stop(StopCause::Cancelled);
                        }
                    }
                }
                let (search, snapshot) = handle.wait();
                let reason = match snapshot.stop_reason {
                    Some(MctsStop::Time) if deadline_limited => pb::StopReason::Deadline,
                    Some(MctsStop::Stopped) => match thread_ctl.cause() {
                        StopCause::Shutdown => pb::StopReason::Shutdown,
                        _ => pb::StopReason::Cancelled,
                    },
                    other => convert::stop_reason(other),
                };
                let update = convert::update(&snapshot, &fen, threads, true, Some(reason));
                engine.completed.fetch_add(1, Ordering::Relaxed);
                crate::metrics::search_finished(snapshot.playouts, snapshot.playouts_per_second);
                // Park the tree before answering, so that the game's next request finds it; drop
                // whatever that evicts (or the tree itself) after answering.
                let garbage = match (job.game_id, job.root_moves.is_empty()) {
                    (Some(id), true) => engine.games.put(
                        id,
                        KeptGame {
                            fen: job.position.fen,
                            moves: job.position.moves,
                            search,
                        },
                    ),
                    _ => vec![search],
                };
                let _ = done_tx.send(update);
                drop(garbage);
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
        finished.map_err(|_| ServiceError::Internal("the search thread failed".to_owned()))
    }

    /// The kept tree of the job's game advanced to its position, or a fresh search.
    fn reuse_or_new(
        &self,
        job: &SearchJob,
        state: EmergoState,
        params: SearchParams,
    ) -> Search<EmergoState> {
        if let (Some(id), true) = (&job.game_id, job.root_moves.is_empty()) {
            if let Some(kept) = self.games.take(id) {
                if let Some(extra) = kept.continuation(&job.position.fen, &job.position.moves) {
                    let mut search = kept.search;
                    search.advance(extra);
                    search.set_params(params);
                    return search;
                }
                // A different line of play: the kept tree is of no use.
            }
        }
        Search::new(state, params)
    }
}

fn fresh_seed() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    nanos ^ COUNTER.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed)
}
