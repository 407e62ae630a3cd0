//! One search for one request, from admission to the final update: the async part checks,
//! registers and waits for threads; a supervisor thread sets the tree up, watches the search
//! (reports, clocks, the deadline), builds the final update and parks the tree or ponders on.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use emergo_engine::EmergoState;
use emergo_mcts::{Search, SearchHandle, SearchParams, StopReason as MctsStop};
use emergo_proto::v1 as pb;
use emergo_rules::Move;
use tokio::sync::{mpsc, oneshot};

use super::deadline::DeadlinePlan;
use super::{Engine, Running, UpdateResult, fresh_seed};
use crate::budget::SearchBudget;
use crate::convert;
use crate::error::ServiceError;
use crate::games::{BudgetedSearch, KeptGame, Pondered};
use crate::memory::TreeGrant;
use crate::ponder::{PonderJob, PonderSlot};
use crate::request::SearchJob;
use crate::stop::{CancelOnDrop, SearchId, StopCause, StopControl};

impl Engine {
    /// Runs one search. With `updates`, a snapshot is sent every report interval while it runs
    /// (the final update is returned, not sent). `deadline` is the client's, whatever the
    /// transport that carried it.
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
        let fen = job.position.game.position().to_string();
        let state = EmergoState::from_game(&job.position.game)
            .with_root_moves(&job.root_moves)
            .with_knowledge(self.knowledge.clone());
        if let Some(outcome) = state.rules_outcome() {
            return Ok(convert::game_over(fen, outcome));
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
            threads,
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
        let name = format!("search-{}", running.id);

        let (done_tx, done_rx) = oneshot::channel();
        let supervisor = Supervisor {
            engine: self.clone(),
            budget: SearchBudget::new(&job),
            job,
            threads,
            plan,
            ctl: ctl.clone(),
            updates: updates.clone(),
            search_id: search_id.clone(),
            fen,
            done_tx: Some(done_tx),
            deadline_limited: false,
            pondered: 0,
            handover: None,
        };
        // The supervisor does all the heavy lifting off the runtime: it sets the tree up, watches
        // the search, builds the final update, and parks (or drops: big trees take milliseconds
        // to free) the tree.
        let span = tracing::Span::current();
        std::thread::Builder::new()
            .name(name)
            .spawn(move || {
                let _span = span.entered();
                supervisor.run(running, state, params);
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

/// The supervisor thread of one search: what it was given, and what it learns on the way.
struct Supervisor {
    engine: Arc<Engine>,
    job: SearchJob,
    budget: SearchBudget,
    threads: usize,
    plan: Option<DeadlinePlan>,
    ctl: Arc<StopControl>,
    updates: Option<mpsc::Sender<UpdateResult>>,
    search_id: String,
    /// The searched position's FEN, for the updates.
    fen: String,
    /// The answer's channel, until the answer is sent.
    done_tx: Option<oneshot::Sender<pb::AnalysisUpdate>>,
    /// True when the client's deadline, not its own budget, set the search's time.
    deadline_limited: bool,
    /// Visits of the reused tree that a ponder added.
    pondered: u64,
    /// Taken when the answer leaves before the search's threads have stopped: the game's
    /// place in [`crate::ponder::Ponders`], so that its next request waits for the tree to be
    /// parked (or pondered on) instead of missing it.
    handover: Option<PonderSlot>,
}

impl Supervisor {
    /// Sets up, watches and concludes the search; `running` (the search's threads and id) is
    /// given back before a ponder starts, or when this returns.
    fn run(mut self, running: Running, state: EmergoState, params: SearchParams) {
        // The tree's bytes of the budget. Declared before the tree, so dropped after it (locals
        // drop in reverse order), also when a search thread panics: the bytes go back only
        // once the tree is freed.
        let mut grant = self.engine.memory.grant();
        let search = self.set_up(state, params, &mut grant);
        let handle = search.start();
        let answered_early = self.watch(&handle);
        let (search, snapshot) = handle.wait();
        self.engine.finished(&snapshot);
        let answered = answered_early.or(snapshot.best_move.filter(|_| self.done_tx.is_some()));
        let reason = final_reason(
            snapshot.stop_reason,
            self.ctl.cause(),
            self.deadline_limited,
        );
        let mut update = convert::update(&snapshot, &self.fen, self.threads, true, Some(reason));
        self.budget
            .finish(&mut update, snapshot.stop_reason, self.deadline_limited);
        set_pondered(&mut update, self.pondered);
        self.conclude(update, answered, BudgetedSearch { search, grant }, running);
    }

    /// The search's tree (the game's kept one advanced, or a fresh one), its stop flag and its
    /// time: the budget, clipped by the deadline and the game clock only now, so that the
    /// set-up is paid from the search's time rather than from the margin kept for answering.
    fn set_up(
        &mut self,
        state: EmergoState,
        params: SearchParams,
        grant: &mut TreeGrant,
    ) -> Search<EmergoState> {
        let engine = self.engine.clone();
        // A ponder of this game was stopped when the request arrived: its tree is parked as
        // soon as its threads have stopped.
        // The wait is inside the budget: at most half of what is left of it, after which the
        // search goes on without the tree rather than answer late.
        if let Some(id) = &self.job.game_id {
            if !engine.ponders.wait_for(id, self.handover_wait()) {
                tracing::warn!("the game's tree was not handed over in time");
            }
        }
        // Advancing a kept tree re-roots it in place (cheap whatever its size), but a
        // mismatched one must be freed and making room may free kept trees: these take time,
        // so they happen here rather than on the runtime.
        let (mut search, pondered) =
            engine.reuse_or_new(&self.job, state, params, self.threads, grant);
        self.pondered = pondered;
        search.set_stop_flag(self.ctl.flag());
        if let Some(plan) = self.plan {
            let budget = plan.search_end.saturating_duration_since(Instant::now());
            let mut params = search.params().clone();
            if params.max_time.is_none_or(|t| t > budget) {
                params.max_time = Some(budget);
                self.deadline_limited = true;
                search.set_params(params);
            }
        }
        // The budget (fixed or a clock's hard limit) counts from the request's arrival: what is
        // left of it is set last, after the set-up above took its time.
        let mut params = search.params().clone();
        self.budget.limit(&mut params);
        if params.max_time != search.params().max_time {
            search.set_params(params);
        }
        search
    }

    /// How long the set-up may wait for the game's tree to be parked: half of what is left of
    /// the time budget (the deadline's, the clock's target or the fixed one), at most
    /// [`crate::ponder::HANDOVER_WAIT`].
    fn handover_wait(&self) -> Duration {
        let now = Instant::now();
        let by_deadline = self
            .plan
            .map(|p| p.search_end.saturating_duration_since(now));
        [by_deadline, self.budget.time_left()]
            .into_iter()
            .flatten()
            .map(|left| left / 2)
            .fold(crate::ponder::HANDOVER_WAIT, Duration::min)
    }

    /// Watches the running search until it ends: reports every interval, lets the game clock
    /// stop it, and answers by the deadline's or the budget's `answer_by` even if search
    /// threads are still finishing. Returns the best move if it answered already.
    fn watch(&mut self, handle: &SearchHandle<EmergoState>) -> Option<Move> {
        let interval = self.job.report_interval;
        // Clocked searches are looked at more often than reports go out.
        let mut next_report = Instant::now() + interval;
        // Until the root is expanded there is no move to answer with: past `answer_by`, the
        // supervisor then looks again every millisecond.
        let mut no_move_yet = None;
        loop {
            let now = Instant::now();
            let report = self.updates.as_ref().map(|_| next_report);
            let answer_by = [self.plan.map(|p| p.answer_by), self.budget.answer_by()]
                .into_iter()
                .flatten()
                .min()
                .map(|by| no_move_yet.map_or(by, |t: Instant| t.max(by)));
            let wake = [report, answer_by, self.budget.next_look(now)]
                .into_iter()
                .flatten()
                .min();
            let wait = wake.map_or(Duration::from_secs(3600), |w| {
                w.saturating_duration_since(now)
            });
            if handle.wait_timeout(wait) {
                return None;
            }
            if answer_by.is_some_and(|by| Instant::now() >= by) {
                match self.answer_now(handle) {
                    Some(answered) => return Some(answered),
                    None => no_move_yet = Some(Instant::now() + Duration::from_millis(1)),
                }
            }
            if self.budget.clocked() && self.budget.look(&handle.snapshot()) {
                self.ctl.stop(StopCause::Budget);
            }
            if let Some(tx) = self
                .updates
                .as_ref()
                .filter(|_| Instant::now() >= next_report)
            {
                next_report = Instant::now() + interval;
                let mut update =
                    convert::update(&handle.snapshot(), &self.fen, self.threads, false, None);
                update.search_id.clone_from(&self.search_id);
                if let Err(mpsc::error::TrySendError::Closed(_)) = tx.try_send(Ok(update)) {
                    self.ctl.stop(StopCause::Cancelled);
                }
            }
        }
    }

    /// The deadline's or the budget's `answer_by` came while the threads are past their time
    /// but have not all noticed yet (on a busy machine a search thread can wait several
    /// milliseconds for a core; all wait while one reclaims a full tree): answers from what the
    /// tree holds now rather than wait for them and answer late. They stop at their next
    /// check. Returns the move answered; `None` if the tree has no move yet (the root's
    /// expansion is not finished): nothing was sent, and the search goes on to its first move.
    fn answer_now(&mut self, handle: &SearchHandle<EmergoState>) -> Option<Move> {
        let snapshot = handle.snapshot();
        let best = snapshot.best_move?;
        self.ctl.flag().store(true, Ordering::SeqCst);
        let cause = self.ctl.cause();
        let stop = match cause {
            StopCause::None | StopCause::Budget => MctsStop::Time,
            StopCause::Cancelled
            | StopCause::Shutdown
            | StopCause::Stopped
            | StopCause::Preempted
            | StopCause::Superseded => MctsStop::Stopped,
        };
        let reason = final_reason(Some(stop), cause, self.deadline_limited);
        let mut update = convert::update(&snapshot, &self.fen, self.threads, true, Some(reason));
        self.budget
            .finish(&mut update, Some(stop), self.deadline_limited);
        set_pondered(&mut update, self.pondered);
        tracing::debug!("answered before every search thread had stopped");
        if let (Some(id), true) = (&self.job.game_id, self.job.root_moves.is_empty()) {
            if self.engine.config.kept_games > 0 {
                self.handover = self.engine.ponders.begin(id);
            }
        }
        self.send(update);
        Some(best)
    }

    /// Sends the answer unless it was sent already, and records how late it left.
    fn send(&mut self, update: pb::AnalysisUpdate) {
        if let Some(tx) = self.done_tx.take() {
            if let Some(late) = self.budget.overrun() {
                crate::metrics::answer_overrun(late);
            }
            let _ = tx.send(update);
        }
    }

    /// Sends the answer (unless sent already) and disposes of the tree: handed to the game's
    /// ponder, parked for the game's next request, or freed — after answering, as freeing a
    /// big tree takes milliseconds.
    fn conclude(
        mut self,
        update: pb::AnalysisUpdate,
        answered: Option<Move>,
        tree: BudgetedSearch,
        running: Running,
    ) {
        let engine = self.engine.clone();
        let job = &self.job;
        // A ponder goes on from the answer: its slot is taken before answering, so that the
        // game's next request waits for the pondered tree instead of missing it.
        let wants_ponder = job.ponder
            && engine.config.max_ponder_ms > 0
            && engine.config.kept_games > 0
            && !engine.is_shutting_down()
            && matches!(
                self.ctl.cause(),
                StopCause::None | StopCause::Budget | StopCause::Stopped
            );
        // An early answer's slot: the ponder's, or given up once the tree is parked below.
        let mut handover = self.handover.take();
        let ponder = match (&job.game_id, answered) {
            (Some(id), Some(best)) if wants_ponder && job.root_moves.is_empty() => handover
                .take()
                .or_else(|| engine.ponders.begin(id))
                .map(|slot| (slot, best)),
            _ => None,
        };
        // A crowded kept tree (re-rooted in place, move after move, it keeps the lines not
        // played) is compacted after answering, before it is parked: off the answer path, and
        // the game's next request waits for it in its own budget (the slot).
        if let (None, Some(id), true) = (&ponder, &job.game_id, job.root_moves.is_empty()) {
            if crowded(&tree.search, engine.config.kept_nodes) {
                let slot = handover.take().or_else(|| engine.ponders.begin(id));
                let id = id.clone();
                let mut kept = kept_game(job, tree);
                self.send(update);
                // At most a quarter of the kept-nodes cap: the copy's time stays bounded.
                let cap = u64::try_from(engine.config.kept_nodes / 4).unwrap_or(u64::MAX);
                let freed = kept.tree.search.compact_tree(cap);
                tracing::debug!(freed, "kept tree compacted after answering");
                let garbage = engine.games.put(id, kept);
                drop(slot);
                drop(garbage);
                return;
            }
        }
        // Otherwise park the tree before answering, so that the game's next request finds it;
        // drop whatever that evicts (or the tree itself) after answering.
        let (garbage, ponder) = match (ponder, &job.game_id, job.root_moves.is_empty()) {
            (Some((slot, best)), _, _) => (Vec::new(), Some((slot, best, tree))),
            (None, Some(id), true) => (engine.games.put(id.clone(), kept_game(job, tree)), None),
            _ => (vec![tree], None),
        };
        // The tree is parked: the game's next request, if it came already, may take it now.
        drop(handover);
        self.send(update);
        drop(garbage);
        if let Some((slot, best, tree)) = ponder {
            // The search's threads and id go first: the ponder takes only idle threads.
            drop(running);
            let job = PonderJob {
                slot,
                fen: self.job.position.fen,
                moves: self.job.position.moves,
                best,
                threads: self.threads,
            };
            super::ponder::run(&engine, job, tree);
        }
    }
}

/// The game of `job` with `tree`, to be kept for its next request.
fn kept_game(job: &SearchJob, tree: BudgetedSearch) -> KeptGame {
    KeptGame {
        fen: job.position.fen.clone(),
        moves: job.position.moves.clone(),
        tree,
        pondered: Pondered::default(),
    }
}

/// Whether a tree about to be kept holds so much that it should be compacted first: more than
/// half the nodes the server keeps (`--kept-nodes`), or than half of what its byte limit lets
/// it fill (a reclaim would come soon in the next search, inside its time).
fn crowded(search: &Search<EmergoState>, kept_nodes: usize) -> bool {
    let usable = search.params().max_tree_bytes / 4 * 3;
    search.node_count() > kept_nodes / 2 || search.memory_bytes() > usable / 2
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

#[cfg(test)]
mod tests {
    use super::*;

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
