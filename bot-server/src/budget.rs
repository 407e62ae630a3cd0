//! A search's time budget on the server: a fixed `max_time_ms` or a game clock's budget
//! ([`crate::timeman`]), both counted from the request's arrival; the supervisor's looks at the
//! running search; when the answer must leave at the latest; and the budget figures of the
//! final statistics.
//!
//! Everything between the request's arrival and the answer is inside the budget: waiting for
//! threads, finding and advancing the kept tree, growing the memory grant (a referee counts
//! from the moment it sent the request). So the search's own time limit is set last, just
//! before it starts, to what is left of the budget since arrival; the supervisor compares the
//! time since arrival, not the search's elapsed time, with a clock's target; and it answers
//! from the tree as it is once [`SearchBudget::answer_by`] has passed, whatever the search
//! threads are still doing. Why: docs/DECISIONS.md, "Time budgets count from the request's
//! arrival".

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
/// How long past the end of its time a search may take to stop before the supervisor answers
/// without it: a thread waiting for a core, or pausing the others to reclaim a full tree, must
/// not make the answer late.
pub const ANSWER_GRACE: Duration = Duration::from_millis(2);

/// The budget of one search, watched by its supervisor.
#[derive(Debug)]
pub struct SearchBudget {
    arrived: Instant,
    clock: Option<(Budget, Watch<Move>)>,
    /// The client's fixed time budget (`max_time_ms` as capped), without a clock.
    fixed: Option<Duration>,
    /// The reason the supervisor stopped the search, if it did.
    stopped: Option<BudgetReason>,
    /// The search's time limit counted from arrival: what it got when it started plus the
    /// time that had passed since arrival.
    search_time: Option<Duration>,
    /// When the answer must leave at the latest: the end of the search's time and
    /// [`ANSWER_GRACE`].
    answer_by: Option<Instant>,
    /// The server's caps cut the client's budget (see `SearchJob::capped`).
    capped: bool,
}

impl SearchBudget {
    /// The budget of `job`.
    pub fn new(job: &SearchJob) -> SearchBudget {
        SearchBudget {
            arrived: job.arrived,
            clock: job.time_budget.map(|b| (b, Watch::new(b))),
            fixed: job.max_time.filter(|_| job.time_budget.is_none()),
            stopped: None,
            search_time: None,
            answer_by: None,
            capped: job.capped,
        }
    }

    /// Whether a clock sets the budget.
    pub fn clocked(&self) -> bool {
        self.clock.is_some()
    }

    /// Clips the search's time limit to what is left, since arrival, of the clock's hard limit
    /// or of the fixed budget (at least [`MIN_SEARCH`]: a move from the tree as it is beats
    /// no move). Call it last before the search starts: the set-up before it is inside the
    /// budget.
    pub fn limit(&mut self, params: &mut SearchParams) {
        let now = Instant::now();
        let since = now.saturating_duration_since(self.arrived);
        let hard = match &self.clock {
            Some((b, _)) => Some(b.hard),
            None => self.fixed,
        };
        if let Some(hard) = hard {
            let left = hard.saturating_sub(since).max(MIN_SEARCH);
            if params.max_time.is_none_or(|t| t > left) {
                params.max_time = Some(left);
            }
        }
        self.search_time = params.max_time.map(|t| t.saturating_add(since));
        self.answer_by = params
            .max_time
            .and_then(|t| now.checked_add(t.saturating_add(ANSWER_GRACE)));
    }

    /// The time from arrival within which the answer was promised, if the search had a time
    /// limit: a clock's hard limit; else the client's fixed budget, or less where a deadline
    /// cut it. A search that waited past its budget for threads got at least [`MIN_SEARCH`]
    /// but its budget stays the client's (`answer_wall_ms` shows the wait).
    pub fn promised(&self) -> Option<Duration> {
        match (&self.clock, self.fixed, self.search_time) {
            (Some((b, _)), _, _) => Some(b.hard),
            (None, Some(fixed), Some(t)) => Some(fixed.min(t)),
            (None, fixed, t) => fixed.or(t),
        }
    }

    /// How late the answer is now against [`SearchBudget::promised`] (zero when on time);
    /// `None` without a time limit.
    pub fn overrun(&self) -> Option<Duration> {
        self.promised()
            .map(|p| self.arrived.elapsed().saturating_sub(p))
    }

    /// What is left of the time budget since arrival: of a clock's target, or of the fixed
    /// budget; `None` without either.
    pub fn time_left(&self) -> Option<Duration> {
        let budget = match &self.clock {
            Some((b, _)) => b.target,
            None => self.fixed?,
        };
        Some(budget.saturating_sub(self.arrived.elapsed()))
    }

    /// When the answer must leave at the latest, for a search with a time limit: the
    /// supervisor then answers from the tree as it is.
    pub fn answer_by(&self) -> Option<Instant> {
        self.answer_by
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
            stats.budget_ms = self.promised().map_or(0, ms);
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
