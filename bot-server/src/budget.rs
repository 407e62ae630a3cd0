//! A search's time budget on the server: a game clock's budget ([`crate::timeman`]) counted
//! from the request's arrival, the supervisor's looks at the running search, and the budget
//! figures of the final statistics.
//!
//! Everything between the request's arrival and the answer is the mover's time under a clock:
//! waiting for threads, finding and advancing the kept tree (issue 13 item 6 measured 11–31 ms
//! of it on loopback with 20,000–100,000 reused visits). So the search's own time limit is set
//! last, just before it starts, to what is left of the hard limit since arrival; and the
//! supervisor compares the time since arrival, not the search's elapsed time, with the target.

use std::time::{Duration, Instant};

use emergo_mcts::{SearchParams, Snapshot, StopReason as MctsStop};
use emergo_proto::v1 as pb;
use emergo_rules::Move;

use crate::request::SearchJob;
use crate::timeman::{Budget, BudgetReason, Look, Verdict, Watch};

/// Shortest pause between two looks at a clocked search; a look is a snapshot of the root.
const MIN_LOOK: Duration = Duration::from_millis(1);
/// Longest pause between two looks.
const MAX_LOOK: Duration = Duration::from_millis(10);
/// Least time a search is given even when its hard limit has passed (the set-up took it all):
/// enough for an answer from the tree's priors.
const MIN_SEARCH: Duration = Duration::from_millis(1);

/// The budget of one search, watched by its supervisor.
#[derive(Debug)]
pub struct SearchBudget {
    arrived: Instant,
    clock: Option<(Budget, Watch<Move>)>,
    /// The reason the supervisor stopped the search, if it did.
    stopped: Option<BudgetReason>,
    /// The search's own time limit when it started.
    search_time: Option<Duration>,
    /// The server's caps cut the client's budget (see `SearchJob::capped`).
    capped: bool,
}

impl SearchBudget {
    /// The budget of `job`.
    pub fn new(job: &SearchJob) -> SearchBudget {
        SearchBudget {
            arrived: job.arrived,
            clock: job.time_budget.map(|b| (b, Watch::new(b))),
            stopped: None,
            search_time: None,
            capped: job.capped,
        }
    }

    /// Whether a clock sets the budget.
    pub fn clocked(&self) -> bool {
        self.clock.is_some()
    }

    /// Clips the search's time limit to what is left of the clock's hard limit since arrival.
    /// Call it last before the search starts: the set-up before it is the mover's time.
    pub fn limit(&mut self, params: &mut SearchParams) {
        if let Some((b, _)) = &self.clock {
            let left = b
                .hard
                .saturating_sub(self.arrived.elapsed())
                .max(MIN_SEARCH);
            if params.max_time.is_none_or(|t| t > left) {
                params.max_time = Some(left);
            }
        }
        self.search_time = params.max_time;
    }

    /// When the supervisor should look next (clocked searches only).
    pub fn next_look(&self, now: Instant) -> Option<Instant> {
        let (b, _) = self.clock.as_ref()?;
        Some(now + (b.target / 20).clamp(MIN_LOOK, MAX_LOOK))
    }

    /// Looks at the running search; true when the time manager says stop now.
    pub fn look(&mut self, s: &Snapshot<Move>) -> bool {
        let Some((_, watch)) = &mut self.clock else {
            return false;
        };
        if self.stopped.is_some() {
            return false;
        }
        let mut visits: Vec<u64> = s.moves.iter().map(|m| m.visits).collect();
        visits.sort_unstable_by(|a, b| b.cmp(a));
        let verdict = watch.look(Look {
            elapsed: self.arrived.elapsed(),
            best: s.best_move,
            best_visits: visits.first().copied().unwrap_or(0),
            second_visits: visits.get(1).copied().unwrap_or(0),
            value: s.root_value,
        });
        match verdict {
            Verdict::Continue => false,
            Verdict::Stop(reason) => {
                self.stopped = Some(reason);
                true
            }
        }
    }

    /// Fills the final update's budget figures and wall time; a search the time manager
    /// stopped early says `BEST_MOVE_SETTLED`, one it stopped at its budget `TIME`.
    pub fn finish(
        &self,
        update: &mut pb::AnalysisUpdate,
        stop: Option<MctsStop>,
        deadline_limited: bool,
    ) {
        let wall = self.arrived.elapsed();
        let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        if let Some(reason) = self.stopped {
            update.stop_reason = match reason {
                BudgetReason::Settled => pb::StopReason::BestMoveSettled,
                _ => pb::StopReason::Time,
            } as i32;
        }
        let Some(stats) = update.stats.as_mut() else {
            return;
        };
        stats.answer_wall_ms = ms(wall);
        let Some((b, watch)) = &self.clock else {
            stats.budget_ms = self.search_time.map_or(0, ms);
            stats.budget_max_ms = stats.budget_ms;
            stats.budget_reason = if deadline_limited || self.capped {
                pb::BudgetReason::Capped
            } else {
                pb::BudgetReason::Fixed
            } as i32;
            return;
        };
        let reason = match (self.stopped, stop) {
            (Some(r), _) => r,
            (None, Some(MctsStop::SingleMove | MctsStop::Solved | MctsStop::Terminal)) => {
                BudgetReason::Forced
            }
            (None, Some(MctsStop::SmartPruning)) => BudgetReason::Settled,
            _ if deadline_limited => BudgetReason::Capped,
            (None, Some(MctsStop::Playouts)) => BudgetReason::Capped,
            _ if watch.extended() => BudgetReason::Extended,
            _ => b.reason,
        };
        // The budget the search ended with: the target, or the time it actually got when the
        // time manager extended or cut it.
        let used = match reason {
            BudgetReason::Extended | BudgetReason::Settled | BudgetReason::Forced => {
                wall.min(b.hard)
            }
            _ => b.target,
        };
        stats.budget_ms = ms(used);
        stats.budget_max_ms = ms(b.hard);
        stats.budget_reason = pb_reason(reason) as i32;
    }
}

/// The contract's name for a budget reason.
pub fn pb_reason(r: BudgetReason) -> pb::BudgetReason {
    match r {
        BudgetReason::Fixed => pb::BudgetReason::Fixed,
        BudgetReason::Share => pb::BudgetReason::Share,
        BudgetReason::Extended => pb::BudgetReason::Extended,
        BudgetReason::Settled => pb::BudgetReason::Settled,
        BudgetReason::Forced => pb::BudgetReason::Forced,
        BudgetReason::Capped => pb::BudgetReason::Capped,
        BudgetReason::LowTime => pb::BudgetReason::LowTime,
    }
}
