//! The time manager: a game clock turned into this move's time budget, and the decisions to
//! stop early or think longer while the search runs.
//!
//! Pure functions of durations and search figures, with no I/O and no server types, so that
//! the server (`Limits.clock`, [`crate::runner`]) and the arena's in-process engines
//! (`emergo arena --tc`) budget alike.
//!
//! The rule, in order:
//! 1. `usable` = remaining − margin (the margin covers the network and the answer's way back):
//!    no budget ever goes past it, so the clock stays positive.
//! 2. The **share** = usable / horizon + ¾ of the increment, where the horizon is moves-to-go
//!    or, without one, [`DEFAULT_HORIZON`] moves.
//! 3. The **target** is the share, at least [`FLOOR`], at most `usable`; when `usable` is below
//!    the floor the clock is nearly out and the target is the floor, at most half the time left
//!    (reason `LowTime`).
//! 4. The **hard limit** is [`EXTEND_NUM`]/[`EXTEND_DEN`] (2.5×) the target, at most `usable`.
//! 5. A cap (`max_time_ms`, the server's cap) bounds both; one below the share makes the reason
//!    `Capped`.
//!
//! While the search runs ([`Watch`]): past the target it goes on up to the hard limit only while
//! the best move changed recently or the root value dropped (`Extended`); before the target it
//! stops once one move has [`SETTLE_RATIO`] times the visits of any other (`Settled`). A single
//! legal move is answered at once by the search itself (`Forced`).

use std::time::Duration;

/// Moves the remaining time is spread over when the clock gives no moves-to-go. Emergo games
/// between engines last 60–120 turns per side; planning on 25 more spends more early, when
/// the position is open, and the increment carries the long endings.
pub const DEFAULT_HORIZON: u32 = 25;
/// Least budget of a move (a few playouts and a legal answer), unless less than twice this
/// is left on the clock.
pub const FLOOR: Duration = Duration::from_millis(5);
/// The hard limit is the target times `EXTEND_NUM / EXTEND_DEN` (2.5×).
pub const EXTEND_NUM: u32 = 5;
/// See [`EXTEND_NUM`].
pub const EXTEND_DEN: u32 = 2;
/// A best move that changed within the last `target / UNSTABLE_WINDOW_DIV` is unstable.
pub const UNSTABLE_WINDOW_DIV: u32 = 4;
/// A root value this far (expected score) below the best seen since the search settled in
/// (past an eighth of the target) counts as a drop.
pub const VALUE_DROP: f32 = 0.04;
/// The best move is settled when it has this many times the visits of the runner-up ...
pub const SETTLE_RATIO: u64 = 10;
/// ... at least this many visits ...
pub const SETTLE_MIN_VISITS: u64 = 1_000;
/// ... and a third of the target has passed (`target / SETTLE_AFTER_DIV`).
pub const SETTLE_AFTER_DIV: u32 = 3;

/// A game clock: the mover's time left, its increment and the moves to the next control.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    /// Time left on the mover's clock.
    pub remaining: Duration,
    /// Added after each move (Fischer).
    pub increment: Duration,
    /// Moves until the next time control (at least 1), if any.
    pub moves_to_go: Option<u32>,
}

/// Why a budget is what it is (the contract's `BudgetReason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BudgetReason {
    /// No clock: a fixed time per move.
    Fixed,
    /// The clock's share, used up.
    Share,
    /// Past the share: the best move was unstable or the value dropped.
    Extended,
    /// Stopped before the share: the best move was settled.
    Settled,
    /// One legal move, or a solved position: answered at once.
    Forced,
    /// A cap (max_time_ms, the server's cap, the deadline) was below the share.
    Capped,
    /// Less than the floor was left after the margin.
    LowTime,
}

/// This move's budget, counted from the request's arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// The time to think when nothing calls for more or less.
    pub target: Duration,
    /// Never past this (target ≤ hard).
    pub hard: Duration,
    /// Why the target is what it is.
    pub reason: BudgetReason,
}

/// The budget of a move with `clock`, keeping `margin` back, within `cap` if given.
pub fn plan(clock: Clock, margin: Duration, cap: Option<Duration>) -> Budget {
    let usable = clock.remaining.saturating_sub(margin);
    let mut budget = if usable < FLOOR {
        // Nearly out of time: answer from a tiny search, keeping half of what is left for the
        // way back (the margin is already gone).
        let t = FLOOR.min(clock.remaining / 2).max(Duration::from_millis(1));
        Budget {
            target: t,
            hard: t,
            reason: BudgetReason::LowTime,
        }
    } else {
        let horizon = clock.moves_to_go.unwrap_or(DEFAULT_HORIZON).max(1);
        let share = usable / horizon + clock.increment * 3 / 4;
        let target = share.clamp(FLOOR, usable);
        let hard = (target * EXTEND_NUM / EXTEND_DEN).min(usable);
        Budget {
            target,
            hard,
            reason: BudgetReason::Share,
        }
    };
    if let Some(cap) = cap {
        if cap < budget.target {
            budget.target = cap;
            budget.reason = BudgetReason::Capped;
        }
        budget.hard = budget.hard.min(cap);
    }
    budget
}

/// What the search shows at one look.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Look<M> {
    /// Time since the request arrived.
    pub elapsed: Duration,
    /// The move it would play now.
    pub best: Option<M>,
    /// Visits of the most visited root move.
    pub best_visits: u64,
    /// Visits of the runner-up.
    pub second_visits: u64,
    /// Expected score for the mover.
    pub value: f32,
}

/// Whether the search goes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Keep searching.
    Continue,
    /// Stop now, for this reason.
    Stop(BudgetReason),
}

/// Watches a running search against its [`Budget`]: call [`Watch::look`] every few
/// milliseconds.
#[derive(Clone, Debug)]
pub struct Watch<M> {
    budget: Budget,
    best: Option<M>,
    changed_at: Duration,
    peak_value: Option<f32>,
    extended: bool,
}

impl<M: PartialEq + Copy> Watch<M> {
    /// A watch over `budget`.
    pub fn new(budget: Budget) -> Watch<M> {
        Watch {
            budget,
            best: None,
            changed_at: Duration::ZERO,
            peak_value: None,
            extended: false,
        }
    }

    /// Whether the search ran past its target.
    pub fn extended(&self) -> bool {
        self.extended
    }

    /// Takes in one look at the search and says whether it goes on.
    pub fn look(&mut self, l: Look<M>) -> Verdict {
        let b = self.budget;
        if l.best != self.best {
            self.best = l.best;
            self.changed_at = l.elapsed;
        }
        // Early values swing with the first playouts: the peak counts from an eighth on.
        if l.elapsed >= b.target / 8 {
            self.peak_value = Some(self.peak_value.map_or(l.value, |p| p.max(l.value)));
        }
        if l.elapsed >= b.hard {
            return Verdict::Stop(if self.extended {
                BudgetReason::Extended
            } else {
                b.reason
            });
        }
        if l.elapsed >= b.target {
            let recent = l.elapsed.saturating_sub(self.changed_at) < b.target / UNSTABLE_WINDOW_DIV;
            let dropped = self.peak_value.is_some_and(|p| p - l.value >= VALUE_DROP);
            if (recent || dropped) && b.hard > b.target {
                self.extended = true;
                return Verdict::Continue;
            }
            return Verdict::Stop(if self.extended {
                BudgetReason::Extended
            } else {
                b.reason
            });
        }
        let settled = l.best_visits >= SETTLE_MIN_VISITS
            && l.best_visits >= l.second_visits.saturating_mul(SETTLE_RATIO);
        if settled && l.elapsed >= b.target / SETTLE_AFTER_DIV {
            return Verdict::Stop(BudgetReason::Settled);
        }
        Verdict::Continue
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MARGIN: Duration = Duration::from_millis(50);

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn clock(remaining: u64, increment: u64, moves_to_go: Option<u32>) -> Clock {
        Clock {
            remaining: ms(remaining),
            increment: ms(increment),
            moves_to_go,
        }
    }

    /// The table of clock states: (clock, cap, target, hard, reason).
    #[test]
    fn budgets_on_a_table_of_clocks() {
        use BudgetReason::*;
        let table: &[(Clock, Option<u64>, u64, u64, BudgetReason)] = &[
            // 60 s + 0.5 s: 59.95 s / 25 + 375 ms.
            (clock(60_000, 500, None), None, 2_773, 6_932, Share),
            // Sudden death 10 s: a 25th of what is left after the margin.
            (clock(10_000, 0, None), None, 398, 995, Share),
            // 10 s + 0.1 s, the arena's benchmark control.
            (clock(10_000, 100, None), None, 473, 1_182, Share),
            // 50 ms left: all gone to the margin; a floor, at most half the clock.
            (clock(50, 0, None), None, 5, 5, LowTime),
            (clock(50, 1_000, None), None, 5, 5, LowTime),
            // Less than the margin, less than the floor.
            (clock(8, 0, None), None, 4, 4, LowTime),
            (clock(1, 0, None), None, 1, 1, LowTime),
            // Just above margin + floor.
            (clock(56, 0, None), None, 5, 6, Share),
            // Huge increment: never past what is on the clock now.
            (clock(1_000, 60_000, None), None, 950, 950, Share),
            (
                clock(u32::MAX as u64, u32::MAX as u64, None),
                None,
                3_393_024_161,
                4_294_967_245,
                Share,
            ),
            // Moves-to-go 1: everything but the margin, no extension possible.
            (clock(5_000, 0, Some(1)), None, 4_950, 4_950, Share),
            (clock(5_000, 0, Some(10)), None, 495, 1_237, Share),
            // A cap below the share wins and bounds the hard limit too.
            (clock(60_000, 500, None), Some(1_000), 1_000, 1_000, Capped),
            // A cap above the share only bounds the hard limit.
            (clock(60_000, 500, None), Some(4_000), 2_773, 4_000, Share),
        ];
        for &(c, cap, target, hard, reason) in table {
            let b = plan(c, MARGIN, cap.map(ms));
            assert_eq!(
                (b.target.as_millis(), b.hard.as_millis(), b.reason),
                (u128::from(target), u128::from(hard), reason),
                "{c:?} cap {cap:?}"
            );
        }
    }

    /// Relations that hold for any clock: target ≤ hard ≤ remaining − margin (when that is at
    /// least the floor), hard ≤ 2.5 × target, never zero.
    #[test]
    fn budgets_keep_the_clock_positive() {
        for remaining in [1, 2, 10, 49, 50, 51, 55, 60, 100, 1_000, 10_000, 3_600_000] {
            for increment in [0, 10, 100, 5_000, 1_000_000] {
                for mtg in [None, Some(1), Some(2), Some(40)] {
                    let c = clock(remaining, increment, mtg);
                    let b = plan(c, MARGIN, None);
                    assert!(b.target <= b.hard, "{c:?} {b:?}");
                    assert!(b.target >= ms(1), "{c:?} {b:?}");
                    assert!(b.hard < c.remaining || remaining == 1, "{c:?} {b:?}");
                    assert!(b.hard <= b.target * 5 / 2, "{c:?} {b:?}");
                    if c.remaining >= MARGIN + FLOOR {
                        assert!(b.hard <= c.remaining - MARGIN, "{c:?} {b:?}");
                        assert!(b.target >= FLOOR, "{c:?} {b:?}");
                    }
                }
            }
        }
    }

    fn look(elapsed: u64, best: u8, best_visits: u64, second_visits: u64, value: f32) -> Look<u8> {
        Look {
            elapsed: ms(elapsed),
            best: Some(best),
            best_visits,
            second_visits,
            value,
        }
    }

    fn budget() -> Budget {
        Budget {
            target: ms(400),
            hard: ms(1_000),
            reason: BudgetReason::Share,
        }
    }

    #[test]
    fn a_stable_search_stops_at_its_target() {
        let mut w = Watch::new(budget());
        assert_eq!(w.look(look(10, 1, 50, 40, 0.5)), Verdict::Continue);
        assert_eq!(w.look(look(200, 1, 900, 800, 0.5)), Verdict::Continue);
        assert_eq!(
            w.look(look(400, 1, 2_000, 1_500, 0.5)),
            Verdict::Stop(BudgetReason::Share)
        );
        assert!(!w.extended());
    }

    #[test]
    fn an_unstable_best_move_extends_up_to_the_hard_limit() {
        let mut w = Watch::new(budget());
        w.look(look(100, 1, 500, 400, 0.5));
        // The best move changed 20 ms before the target: think on.
        assert_eq!(w.look(look(380, 2, 900, 850, 0.5)), Verdict::Continue);
        assert_eq!(w.look(look(400, 2, 950, 900, 0.5)), Verdict::Continue);
        assert!(w.extended());
        // Stable for a quarter of the target: stop, reporting the extension.
        assert_eq!(
            w.look(look(500, 2, 1_500, 1_000, 0.5)),
            Verdict::Stop(BudgetReason::Extended)
        );
        // Flip-flopping all along: the hard limit ends it.
        let mut w = Watch::new(budget());
        for (i, t) in (400..1_000).step_by(50).enumerate() {
            assert_eq!(
                w.look(look(t, i as u8, 10, 9, 0.5)),
                Verdict::Continue,
                "{t}"
            );
        }
        assert_eq!(
            w.look(look(1_000, 99, 10, 9, 0.5)),
            Verdict::Stop(BudgetReason::Extended)
        );
    }

    #[test]
    fn a_value_drop_extends() {
        let mut w = Watch::new(budget());
        w.look(look(60, 1, 100, 90, 0.60));
        assert_eq!(w.look(look(400, 1, 900, 800, 0.55)), Verdict::Continue);
        assert_eq!(
            w.look(look(700, 1, 2_000, 1_000, 0.59)),
            Verdict::Stop(BudgetReason::Extended)
        );
    }

    #[test]
    fn a_settled_best_move_stops_early_but_not_too_early() {
        let mut w = Watch::new(budget());
        // Settled by visits, but under a third of the target: not yet.
        assert_eq!(w.look(look(100, 1, 5_000, 100, 0.5)), Verdict::Continue);
        assert_eq!(
            w.look(look(140, 1, 6_000, 200, 0.5)),
            Verdict::Stop(BudgetReason::Settled)
        );
        // Too few visits to call it.
        let mut w = Watch::new(budget());
        assert_eq!(w.look(look(200, 1, 500, 10, 0.5)), Verdict::Continue);
    }

    #[test]
    fn a_capped_budget_is_never_extended() {
        let b = plan(clock(60_000, 500, None), MARGIN, Some(ms(300)));
        let mut w = Watch::new(b);
        w.look(look(100, 1, 50, 40, 0.5));
        assert_eq!(
            w.look(look(300, 2, 60, 59, 0.5)),
            Verdict::Stop(BudgetReason::Capped)
        );
    }
}
