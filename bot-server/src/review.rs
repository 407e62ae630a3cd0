//! Whole-game review (`AnalyzeGame`): every analysed turn's position searched with the
//! engine's usual machinery, the played move valued and classified, the turns streamed in order,
//! then a per-player summary. Transport-neutral: the gRPC handler and (through it) the HTTP
//! gateway only convert and stream.
//!
//! - [`plan`]: the request checked into a [`ReviewJob`]: the turns, and the positions to search
//!   (each once: the position after turn `t` is the one before turn `t + 1`; forced positions,
//!   with one legal move, are not searched).
//! - [`classify`]: the arithmetic (loss, class, accuracy, totals), pure.
//! - here: running the searches and streaming the results.
//!
//! **Searching.** Up to `options.threads` workers take runs of [`CHUNK`] consecutive positions
//! to search; for each position a worker asks admission for one thread at the review's priority
//! (BATCH by default), so waiting interactive requests get ahead between positions, and runs a
//! one-thread search on a blocking thread. Within a run the tree goes on from one position to the
//! next (the subtree under the moves played in between is kept, `Engine::continue_search`):
//! measured on three games at 2,000 playouts per position against 30,000-playout references
//! (unforced positions), that cut the mean error of the positions' values by 10–20% (0.028 →
//! 0.024, 0.036 → 0.033, 0.024 → 0.019) for 0–10% more time (deeper trees make playouts dearer),
//! more than 10% more playouts of a fresh search would buy. Runs are
//! fixed by position, not by worker, so a review with a seed and a playout budget gives the same
//! results whatever the thread count or the timing.
//!
//! **Ending.** Turns go out in order as soon as they and every earlier one are ready. The summary
//! always comes last: after the last turn, or as soon as the review is stopped (StopSearch with
//! its search id: STOPPED), the server shuts down (SHUTDOWN) or the client's deadline or the
//! server's cap on a review (`--max-review-ms`, nine tenths of which are split over the
//! positions, [`plan`]) is near (DEADLINE); turns whose searches were cut short are left out. A
//! client that goes away stops the searches at once (their threads go back as soon as they
//! notice, within milliseconds).
//! Running out of threads (a full queue, or `--max-queue-wait-ms` spent waiting) ends the stream
//! with that error after the turns sent so far.

pub mod classify;
pub mod plan;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use emergo_engine::EmergoState;
use emergo_mcts::SearchParams;
use emergo_proto::v1 as pb;
use emergo_rules::{ByPlayer, Move, Player};
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use tokio::sync::mpsc;

use crate::admission::AdmissionError;
use crate::convert;
use crate::error::ServiceError;
use crate::games::BudgetedSearch;
use crate::runner::{DeadlinePlan, Engine, Running, final_reason, fresh_seed};
use crate::stop::{CancelOnDrop, SearchId, StopCause, StopControl};
pub use plan::ReviewJob;
use plan::{After, TurnPlan};

/// Positions a worker searches in a row, each continuing the previous one's tree.
pub const CHUNK: usize = 8;

/// Stream item type of AnalyzeGame.
pub type ReviewResult = Result<pb::GameReviewUpdate, ServiceError>;

/// The search of one position.
struct Searched {
    /// Its slot in [`ReviewJob::searches`].
    slot: usize,
    /// The final update.
    update: pb::AnalysisUpdate,
    /// Why it stopped.
    reason: pb::StopReason,
}

/// A search stopped from outside (StopSearch, a cancellation, the shutdown) or cut by the
/// deadline, rather than ended by its own limits: its results do not go into the review.
fn cut_short(reason: pb::StopReason) -> bool {
    matches!(
        reason,
        pb::StopReason::Stopped
            | pb::StopReason::Cancelled
            | pb::StopReason::Shutdown
            | pb::StopReason::Deadline
    )
}

/// Where a position's search starts from.
enum Start {
    /// An empty tree.
    Fresh(EmergoState),
    /// The previous position's tree, advanced by the moves played since (boxed: a search is
    /// large, and moved between threads).
    Continue(Box<BudgetedSearch>, Vec<Move>),
}

/// A tree carried from one position to the next. Freed off the async runtime if the review ends
/// while holding it (freeing a large tree takes milliseconds).
struct Carried {
    tree: Option<BudgetedSearch>,
    /// The position its root stands for.
    index: usize,
}

impl Drop for Carried {
    fn drop(&mut self) {
        if let Some(tree) = self.tree.take() {
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => drop(runtime.spawn_blocking(move || drop(tree))),
                Err(_) => drop(tree),
            }
        }
    }
}

/// Everything the workers of one review share.
struct Shared<'a> {
    engine: &'a Arc<Engine>,
    job: &'a ReviewJob,
    ctl: &'a Arc<StopControl>,
    plan: Option<DeadlinePlan>,
    /// The next run of positions to hand out.
    next_chunk: AtomicUsize,
}

/// Runs a review, sending its turns on `tx` as they are ready, and returns its summary (which
/// the caller sends last). `deadline` is the client's gRPC deadline.
pub async fn run(
    engine: Arc<Engine>,
    job: ReviewJob,
    deadline: Option<Instant>,
    tx: mpsc::Sender<ReviewResult>,
) -> Result<pb::GameReviewSummary, ServiceError> {
    if engine.is_shutting_down() {
        return Err(ServiceError::ShuttingDown);
    }
    let ctl = Arc::new(StopControl::new());
    let registration = engine.searches.register(
        job.search_id.clone().unwrap_or_else(SearchId::random),
        ctl.clone(),
    )?;
    let search_id = registration.id().to_string();
    tracing::debug!(search_id, "registered for StopSearch");
    // The server's cap on the review (--max-review-ms) ends it as a client's deadline would,
    // whichever comes first; it is long enough (at least a second) to plan.
    // A cap too far away to be an instant (an operator's huge --max-review-ms) is no cap.
    let cap = job.arrived.checked_add(job.max_review);
    let capped = cap.is_some_and(|c| deadline.is_none_or(|d| c < d));
    let end = match (deadline, cap) {
        (Some(d), Some(c)) => Some(d.min(c)),
        (d, c) => d.or(c),
    };
    let plan = end
        .map(|end| DeadlinePlan::new(end, Instant::now()))
        .transpose()?;
    // The searches stop if this future is dropped (the task ended by the runtime).
    let mut guard = CancelOnDrop {
        ctl: ctl.clone(),
        armed: true,
    };

    let shared = Shared {
        engine: &engine,
        job: &job,
        ctl: &ctl,
        plan,
        next_chunk: AtomicUsize::new(0),
    };
    let (results_tx, mut results) = mpsc::unbounded_channel();
    let chunks = job.searches.len().div_ceil(CHUNK);
    let mut workers: FuturesUnordered<_> = (0..job.threads.min(chunks))
        .map(|_| worker(&shared, results_tx.clone()))
        .collect();
    drop(results_tx);

    let mut stream = Stream {
        job: &job,
        searched: std::iter::repeat_with(|| None)
            .take(job.searches.len())
            .collect(),
        sent: 0,
        totals: Default::default(),
        playouts: 0,
        search_id: &search_id,
    };
    let answer_by = plan.map(|p| p.answer_by);
    let mut ended: Option<pb::StopReason> = None;
    let mut failure: Option<ServiceError> = None;
    // Turns that need no search (forced moves into the game's end) may be ready at once.
    if stream.send_ready(&tx).await.is_err() {
        ended = Some(pb::StopReason::Cancelled);
    }
    while ended.is_none()
        && stream.sent < job.turns.len()
        && !(workers.is_empty() && results.is_empty())
    {
        tokio::select! {
            biased;
            () = tx.closed() => ended = Some(pb::StopReason::Cancelled),
            () = ctl.stopped() => ended = Some(stop_reason(ctl.cause())),
            () = sleep_until(answer_by) => ended = Some(pb::StopReason::Deadline),
            Some(done) = results.recv() => {
                stream.playouts += done.update.stats.as_ref().map_or(0, |s| s.playouts);
                if cut_short(done.reason) {
                    ended = Some(done.reason);
                } else {
                    let slot = done.slot;
                    if let Some(entry) = stream.searched.get_mut(slot) {
                        *entry = Some(done);
                    }
                    if stream.send_ready(&tx).await.is_err() {
                        ended = Some(pb::StopReason::Cancelled);
                    }
                }
            }
            Some(result) = workers.next() => match result {
                Ok(()) => {}
                Err(ServiceError::Busy(AdmissionError::Closed) | ServiceError::ShuttingDown) => {
                    ended = Some(pb::StopReason::Shutdown);
                }
                Err(
                    ServiceError::Busy(AdmissionError::OutOfTime { .. })
                    | ServiceError::DeadlineTooShort { .. },
                ) => ended = Some(pb::StopReason::Deadline),
                Err(e) => {
                    ended = Some(pb::StopReason::Cancelled);
                    failure = Some(e);
                }
            },
        }
    }
    // Whatever still runs stops now (nothing does after the last turn); waiting workers leave
    // the admission queue as they are dropped, searching ones give their threads back as soon
    // as their search notices.
    if let Some(reason) = ended {
        ctl.stop(match reason {
            pb::StopReason::Shutdown => StopCause::Shutdown,
            pb::StopReason::Stopped => StopCause::Stopped,
            _ => StopCause::Cancelled,
        });
    }
    drop(workers);
    guard.armed = false;

    let stop_reason = ended.unwrap_or(if job.max_playouts.is_some() {
        pb::StopReason::Playouts
    } else {
        pb::StopReason::Time
    });
    if capped && ended == Some(pb::StopReason::Deadline) {
        tracing::warn!(
            max_review_ms = job.max_review.as_millis(),
            turns = stream.sent,
            "a review reached the server's cap on its time (--max-review-ms) and ended early \
             with the turns done"
        );
    }
    crate::metrics::review_finished(stream.sent as u64);
    tracing::info!(
        turns = stream.sent,
        playouts = stream.playouts,
        stop_reason = stop_reason.as_str_name(),
        "review"
    );
    if let Some(e) = failure {
        return Err(e);
    }
    let totals = &stream.totals;
    Ok(pb::GameReviewSummary {
        white: Some(totals[Player::White].review("w")),
        black: Some(totals[Player::Black].review("b")),
        turns_analysed: u32::try_from(stream.sent).unwrap_or(u32::MAX),
        playouts: stream.playouts,
        elapsed_ms: u64::try_from(job.arrived.elapsed().as_millis()).unwrap_or(u64::MAX),
        // The rules' result; a record that ended off the board (resigned) gives its own.
        status: Some(match (job.game.outcome(), &job.recorded_end) {
            (None, Some(recorded)) => recorded.clone(),
            (outcome, _) => convert::status(outcome),
        }),
        stop_reason: stop_reason as i32,
        search_id,
    })
}

/// Resolves at `at`, never without one.
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

/// The review's end for a stop from outside.
fn stop_reason(cause: StopCause) -> pb::StopReason {
    match cause {
        StopCause::Stopped => pb::StopReason::Stopped,
        StopCause::Shutdown => pb::StopReason::Shutdown,
        _ => pb::StopReason::Cancelled,
    }
}

/// One worker: takes runs of positions until none is left or the review stops, searching each
/// position on one thread granted for it alone.
async fn worker(
    s: &Shared<'_>,
    results: mpsc::UnboundedSender<Searched>,
) -> Result<(), ServiceError> {
    let job = s.job;
    loop {
        let chunk = s.next_chunk.fetch_add(1, Ordering::Relaxed);
        let first = chunk.saturating_mul(CHUNK);
        if first >= job.searches.len() {
            return Ok(());
        }
        let end = (first + CHUNK).min(job.searches.len());
        let mut carried: Option<Carried> = None;
        for slot in first..end {
            let Some((index, state)) = job.searches.get(slot) else {
                return Ok(());
            };
            if s.ctl.is_stopped() {
                return Ok(());
            }
            let wait = s.plan.map_or(Duration::MAX, |p| {
                p.latest_start.saturating_duration_since(Instant::now())
            });
            let grant = tokio::select! {
                grant = s.engine.admission.acquire(1, job.priority, wait) => grant?,
                () = s.ctl.stopped() => return Ok(()),
            };
            crate::metrics::queue_length(s.engine.admission.queued());
            let running = s.engine.running(s.ctl.clone(), grant, None);
            let start = match carried.as_mut().and_then(|c| {
                let moves = job.line.get(c.index..*index)?.to_vec();
                Some((c.tree.take()?, moves))
            }) {
                Some((tree, moves)) => Start::Continue(Box::new(tree), moves),
                None => Start::Fresh(state.clone()),
            };
            let seed = match job.seed_of(*index) {
                0 => fresh_seed(),
                seed => seed,
            };
            let params = SearchParams {
                threads: 1,
                seed,
                max_time: job.max_time,
                max_playouts: job.max_playouts,
                pv_len: job.pv_len,
                multi_pv: job.multi_pv,
                ..s.engine.base_params()
            };
            let fen = job
                .positions
                .get(*index)
                .map(ToString::to_string)
                .unwrap_or_default();
            let keep = slot + 1 < end;
            let engine = s.engine.clone();
            let ctl = s.ctl.clone();
            let plan = s.plan;
            let (update, reason, tree) = tokio::task::spawn_blocking(move || {
                search_position(&engine, running, start, params, &ctl, plan, &fen, keep)
            })
            .await
            .map_err(|e| ServiceError::Internal(format!("a review search failed: {e}")))?;
            carried = Some(Carried {
                tree,
                index: *index,
            });
            if results
                .send(Searched {
                    slot,
                    update,
                    reason,
                })
                .is_err()
            {
                return Ok(());
            }
        }
    }
}

/// Searches one position on the calling (blocking) thread with the thread `running` holds;
/// returns the final update, its stop reason, and the tree when `keep` asks for it and the
/// search was not cut short.
#[allow(clippy::too_many_arguments)]
fn search_position(
    engine: &Engine,
    running: Running,
    start: Start,
    params: SearchParams,
    ctl: &StopControl,
    plan: Option<DeadlinePlan>,
    fen: &str,
    keep: bool,
) -> (pb::AnalysisUpdate, pb::StopReason, Option<BudgetedSearch>) {
    // Declared first, so dropped last: the thread goes back once the tree is freed or handed on.
    let _running = running;
    let mut tree = match start {
        Start::Fresh(state) => {
            let mut grant = engine.memory.grant();
            let search = engine.fresh_search(state, params, 1, &mut grant);
            BudgetedSearch { search, grant }
        }
        Start::Continue(tree, moves) => engine.continue_search(*tree, &moves, params, 1).0,
    };
    tree.search.set_stop_flag(ctl.flag());
    // The deadline clips the budget only now, so that setting the tree up is paid from the
    // search's time, as in [`Engine::search`].
    let mut deadline_limited = false;
    if let Some(plan) = plan {
        let left = plan.search_end.saturating_duration_since(Instant::now());
        let mut params = tree.search.params().clone();
        if params.max_time.is_none_or(|t| t > left) {
            params.max_time = Some(left);
            deadline_limited = true;
            tree.search.set_params(params);
        }
    }
    let snapshot = tree.search.run();
    engine.finished(&snapshot);
    let reason = final_reason(snapshot.stop_reason, ctl.cause(), deadline_limited);
    let update = convert::update(&snapshot, fen, 1, true, Some(reason));
    let tree = if keep && !cut_short(reason) {
        // Held between searches: it pays only for what it holds.
        let held = tree.search.memory_bytes();
        tree.grant.shrink_to(held);
        Some(tree)
    } else {
        None
    };
    (update, reason, tree)
}

/// The turns sent so far and the results they are built from.
struct Stream<'a> {
    job: &'a ReviewJob,
    /// Completed searches by slot.
    searched: Vec<Option<Searched>>,
    /// Turns sent (an index into [`ReviewJob::turns`]).
    sent: usize,
    /// White's and Black's totals.
    totals: ByPlayer<classify::Totals>,
    /// Playouts of every search so far.
    playouts: u64,
    search_id: &'a str,
}

impl Stream<'_> {
    /// The final update of the search of position `index`, if it completed.
    fn update(&self, index: usize) -> Option<&pb::AnalysisUpdate> {
        let slot = self.job.slot_of(index)?;
        self.searched.get(slot)?.as_ref().map(|s| &s.update)
    }

    /// Sends every turn that is ready, in order; an error when the client is gone.
    async fn send_ready(&mut self, tx: &mpsc::Sender<ReviewResult>) -> Result<(), ()> {
        while let Some(plan) = self.job.turns.get(self.sent) {
            let Some(mut turn) = self.turn(plan) else {
                return Ok(());
            };
            if let Some(analysis) = turn.analysis.as_mut() {
                analysis.search_id = self.search_id.to_owned();
            }
            let player = if turn.player == "b" {
                Player::Black
            } else {
                Player::White
            };
            self.totals[player].add(turn.class(), turn.loss);
            let update = pb::GameReviewUpdate {
                update: Some(pb::game_review_update::Update::Turn(turn)),
            };
            tx.send(Ok(update)).await.map_err(drop)?;
            self.sent += 1;
        }
        Ok(())
    }

    /// The review of a turn, once the searches it needs are done.
    fn turn(&self, plan: &TurnPlan) -> Option<pb::TurnReview> {
        let job = self.job;
        let before = job.positions.get(plan.before())?;
        let played = *job.line.get(plan.before())?;
        // The position after the move, for its side to move.
        let (value, proof) = match plan.after {
            After::Search { index, plies } => {
                let u = self.update(index)?;
                let proof = pb::ProofStatus::try_from(u.root_proof).unwrap_or_default();
                classify::flip_plies(u.root_value, proof, plies)
            }
            After::Over {
                outcome,
                to_move,
                plies,
            } => {
                let end = match outcome.result.winner() {
                    None => (0.5, pb::ProofStatus::Draw),
                    Some(w) if w == to_move => (1.0, pb::ProofStatus::Win),
                    Some(_) => (0.0, pb::ProofStatus::Loss),
                };
                classify::flip_plies(end.0, end.1, plies)
            }
        };
        // ... and for the mover.
        let (mut played_value, mut played_proof) = classify::flip(value, proof);
        let mut review = pb::TurnReview {
            turn: plan.turn,
            player: before.side_to_move().fen_char().to_string(),
            fen: before.to_string(),
            played_move: played.to_string(),
            ..Default::default()
        };
        if plan.forced {
            review.played_value = played_value;
            review.played_proof = played_proof as i32;
            review.best_move = review.played_move.clone();
            review.best_value = played_value;
            review.best_pv = vec![review.played_move.clone()];
            review.proof = played_proof as i32;
            review.set_class(pb::MoveClass::Forced);
            return Some(review);
        }
        let analysis = self.update(plan.before())?.clone();
        let info = |mv: &str| analysis.moves.iter().find(|m| m.r#move == mv);
        let played_info = info(&review.played_move);
        // The search of this position may have proven the move where the next one did not.
        if let Some(m) = played_info.filter(|_| played_proof == pb::ProofStatus::Unproven) {
            let p = pb::ProofStatus::try_from(m.proof).unwrap_or_default();
            if p != pb::ProofStatus::Unproven {
                played_proof = p;
                played_value = match p {
                    pb::ProofStatus::Win => 1.0,
                    pb::ProofStatus::Loss => 0.0,
                    _ => 0.5,
                };
            }
        }
        let best = info(&analysis.best_move);
        let best_value = best.map_or(analysis.root_value, |m| m.value);
        let is_best = analysis.best_move == review.played_move;
        let proof = pb::ProofStatus::try_from(analysis.root_proof).unwrap_or_default();
        let loss = classify::loss(best_value, played_value, is_best);
        review.played_value = played_value;
        review.played_visits = played_info.map_or(0, |m| m.visits);
        review.played_proof = played_proof as i32;
        review.best_move = analysis.best_move.clone();
        review.best_value = best_value;
        review.best_pv = best.map(|m| m.pv.clone()).unwrap_or_default();
        review.loss = loss;
        review.set_class(classify::classify(loss, is_best, proof, played_proof));
        review.proof = analysis.root_proof;
        review.proof_plies = analysis.root_proof_plies;
        review.analysis = Some(analysis);
        Some(review)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ServerConfig;

    const INITIAL: &str = "9/9/9/9/9/9/9/9/9 w 0 12,12";
    /// Black to move with one legal move, the capture g1xe3xc5.
    const FORCED: &str = "9/9/2a@1a@4/9/4a@4/3D@5/9/5A@3/6b@2 b 30 0,0";

    fn job(fen: &str, moves: &[&str]) -> ReviewJob {
        let r = pb::AnalyzeGameRequest {
            game: Some(pb::Position {
                fen: fen.into(),
                moves: moves.iter().map(|m| m.to_string()).collect(),
            }),
            per_turn: Some(pb::Limits {
                max_playouts: Some(100),
                ..Default::default()
            }),
            ..Default::default()
        };
        ReviewJob::from_request(&r, &ServerConfig::default(), EmergoState::from_game).unwrap()
    }

    fn info(mv: &str, value: f32, visits: u64, proof: pb::ProofStatus) -> pb::MoveInfo {
        pb::MoveInfo {
            r#move: mv.into(),
            visits,
            value,
            proof: proof as i32,
            pv: vec![mv.into()],
            ..Default::default()
        }
    }

    fn update(
        root_value: f32,
        root_proof: pb::ProofStatus,
        moves: Vec<pb::MoveInfo>,
    ) -> pb::AnalysisUpdate {
        pb::AnalysisUpdate {
            r#final: true,
            best_move: moves.first().map(|m| m.r#move.clone()).unwrap_or_default(),
            moves,
            root_value,
            root_proof: root_proof as i32,
            ..Default::default()
        }
    }

    fn stream<'a>(job: &'a ReviewJob, updates: Vec<(usize, pb::AnalysisUpdate)>) -> Stream<'a> {
        let mut searched: Vec<Option<Searched>> = std::iter::repeat_with(|| None)
            .take(job.searches.len())
            .collect();
        for (index, update) in updates {
            let slot = job.slot_of(index).unwrap();
            searched[slot] = Some(Searched {
                slot,
                update,
                reason: pb::StopReason::Playouts,
            });
        }
        Stream {
            job,
            searched,
            sent: 0,
            totals: Default::default(),
            playouts: 0,
            search_id: "s",
        }
    }

    #[test]
    fn the_played_move_is_valued_by_the_next_search() {
        use pb::ProofStatus::Unproven as U;
        let job = job(INITIAL, &["a1", "i9"]);
        let s = stream(
            &job,
            vec![
                (
                    0,
                    update(0.8, U, vec![info("c3", 0.8, 90, U), info("a1", 0.7, 10, U)]),
                ),
                // Black to move after a1: 0.45 for Black is 0.55 for White.
                (1, update(0.45, U, vec![info("i9", 0.45, 80, U)])),
                (2, update(0.5, U, vec![info("c3", 0.5, 80, U)])),
            ],
        );
        let t1 = s.turn(&job.turns[0]).unwrap();
        assert_eq!((t1.player.as_str(), t1.played_move.as_str()), ("w", "a1"));
        assert_eq!((t1.best_move.as_str(), t1.best_value), ("c3", 0.8));
        assert!((t1.played_value - 0.55).abs() < 1e-6);
        assert!((t1.loss - 0.25).abs() < 1e-6);
        assert_eq!(t1.class(), pb::MoveClass::Blunder);
        assert_eq!(t1.played_visits, 10);
        assert_eq!(t1.best_pv, ["c3"]);
        assert_eq!(t1.fen, INITIAL);
        assert!(t1.analysis.is_some());
        // The engine's own move: no loss, whatever the next search says.
        let t2 = s.turn(&job.turns[1]).unwrap();
        assert_eq!(
            (t2.player.as_str(), t2.loss, t2.class()),
            ("b", 0.0, pb::MoveClass::Best)
        );
        assert!((t2.played_value - 0.5).abs() < 1e-6);
        // Not ready without the search after the move.
        let partial = stream(&job, vec![(0, update(0.5, U, vec![info("a1", 0.5, 1, U)]))]);
        assert!(partial.turn(&job.turns[0]).is_none());
    }

    #[test]
    fn a_proven_win_thrown_away_is_a_blunder() {
        use pb::ProofStatus::{Loss, Unproven as U, Win};
        let job = job(INITIAL, &["a1"]);
        // White had a proven win (not a1) and after a1 Black has a proven win.
        let s = stream(
            &job,
            vec![
                (
                    0,
                    update(
                        1.0,
                        Win,
                        vec![info("c3", 1.0, 90, Win), info("a1", 0.9, 10, U)],
                    ),
                ),
                (1, update(1.0, Win, vec![info("i9", 1.0, 80, Win)])),
            ],
        );
        let t = s.turn(&job.turns[0]).unwrap();
        assert_eq!(t.proof(), Win);
        assert_eq!(t.played_proof(), Loss);
        assert_eq!(
            (t.played_value, t.loss, t.class()),
            (0.0, 1.0, pb::MoveClass::Blunder)
        );
    }

    #[test]
    fn forced_turns_are_valued_through_the_forced_moves() {
        let job = job(FORCED, &["g1xe3xc5"]);
        let t = job.turns[0];
        assert!(t.forced);
        let review = match t.after {
            After::Search { index, plies } => {
                // The side to move at the searched position scores 0.3.
                let s = stream(
                    &job,
                    vec![(index, update(0.3, pb::ProofStatus::Unproven, vec![]))],
                );
                let review = s.turn(&t).unwrap();
                // Seen by the mover of turn 1, `plies + 1` moves earlier.
                let expected = if plies % 2 == 0 { 0.7 } else { 0.3 };
                assert!((review.played_value - expected).abs() < 1e-6, "{plies}");
                review
            }
            After::Over { .. } => stream(&job, vec![]).turn(&t).unwrap(),
        };
        assert_eq!(review.class(), pb::MoveClass::Forced);
        assert_eq!((review.loss, review.played_visits), (0.0, 0));
        assert_eq!(review.best_move, "g1xe3xc5");
        assert!(review.analysis.is_none());
        assert_eq!(review.player, "b");
    }
}
