//! When to stop: the limits checked before every playout (stop flag, time, full tree) and smart
//! pruning.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::control::StopReason;
use crate::core::Core;
use crate::game::Game;
use crate::node::Expansion;
use crate::select::{ChildView, best_first};
use crate::tree::Tree;

/// When a search thread next reads the clock for the time limit.
///
/// # Why
///
/// Reading the clock costs ~19 ns (vDSO, TSC clock source), 0.3% of a ~6.5 µs uniform
/// iteration when read before every one. So a thread reads it about every
/// [`TimeCheck::INTERVAL`] of search instead, judging from its own mean iteration time, and
/// before every iteration once less than twice that interval is left: the limit is still met
/// to within about one iteration, as when the clock was read every time. The stride is capped
/// at [`TimeCheck::MAX_STRIDE`] iterations, so that a run of iterations much slower than the
/// mean so far (a refinement, a cold tree) overshoots by at most that many.
#[derive(Debug)]
pub(crate) struct TimeCheck {
    /// Iterations this thread has started.
    iterations: u64,
    /// The iteration count at which the clock is read next.
    due: u64,
    /// When this thread started searching (for its mean iteration time).
    began: Instant,
}

impl TimeCheck {
    /// The search time between two reads of the clock, at most.
    const INTERVAL: Duration = Duration::from_micros(50);
    /// Iterations between two reads of the clock, at most.
    const MAX_STRIDE: u64 = 16;

    pub(crate) fn new() -> Self {
        TimeCheck {
            iterations: 0,
            due: 0,
            began: Instant::now(),
        }
    }

    /// Whether `max_time` since `started` is over, reading the clock only when due; counts one
    /// iteration.
    fn over(&mut self, started: Instant, max_time: Duration) -> bool {
        self.iterations = self.iterations.saturating_add(1);
        if self.iterations < self.due {
            return false;
        }
        let now = Instant::now();
        let elapsed = now.saturating_duration_since(started);
        if elapsed >= max_time {
            return true;
        }
        let left = max_time - elapsed;
        let mine = now.saturating_duration_since(self.began);
        let per_iteration = mine.as_nanos() / u128::from(self.iterations);
        let window = Self::INTERVAL.min(left / 2).as_nanos();
        // Iterations too fast to time (0 ns each) take the longest stride.
        let stride = window
            .checked_div(per_iteration)
            .unwrap_or(u128::MAX)
            .clamp(1, u128::from(Self::MAX_STRIDE));
        self.due = self.iterations.saturating_add(stride as u64);
        false
    }
}

/// The limits checked before every playout: stop flag / handle dropped, time (read when
/// `clock` says, see [`TimeCheck`]), full tree (when that stops the search). Playout tickets
/// and smart pruning are handled by the caller.
pub(crate) fn limit_reached<G: Game>(
    core: &Core<G>,
    tree: &Tree,
    clock: &mut TimeCheck,
) -> Option<StopReason> {
    if core.stop_flag.load(Ordering::Relaxed) || core.ctl.is_aborted() {
        return Some(StopReason::Stopped);
    }
    if core
        .params
        .max_time
        .is_some_and(|max_time| clock.over(core.ctl.started(), max_time))
    {
        return Some(StopReason::Time);
    }
    if core.params.stop_at_node_cap && tree.cap_reached() {
        return Some(StopReason::NodeCap);
    }
    None
}

/// Smart pruning: true if no other root move can overtake the current best one (first in the
/// best-move order) in visits with the playouts left. Playouts left: exact under a playout
/// limit (threads in flight count as not yet done, which errs on the safe side); under a time
/// limit, the current rate times the remaining time, only trusted after 5% of the time (the rate
/// is noisy at the start); the smaller of the two if both apply. Proven-lost moves cannot become
/// best, so when every other move is proven lost the search stops too. A proven win is left to
/// the solver check.
pub(crate) fn smart_prune<G: Game>(core: &Core<G>, tree: &Tree) -> bool {
    let params = &core.params;
    if !params.smart_pruning {
        return false;
    }
    let root_visits = tree.root().stats().visits;
    let done = root_visits.saturating_sub(core.ctl.reused_visits());
    let by_playouts = params.max_playouts.map(|max| max.saturating_sub(done));
    let by_time = params.max_time.and_then(|max_time| {
        let elapsed = core.ctl.started().elapsed();
        if elapsed < max_time / 20 || done == 0 {
            return None;
        }
        let rate = done as f64 / elapsed.as_secs_f64();
        let left = max_time.saturating_sub(elapsed).as_secs_f64();
        Some((rate * left).ceil() as u64)
    });
    let remaining = match (by_playouts, by_time) {
        (Some(a), Some(b)) => a.min(b),
        (a, b) => match a.or(b) {
            Some(r) => r,
            None => return false,
        },
    };

    let Expansion::Expanded { first, count } = tree.root().expansion() else {
        return false;
    };
    // Three passes over the root's children rather than a collected Vec: this runs every few
    // playouts and should not allocate. The children's statistics may move between passes,
    // which only makes the decision a few playouts more or less eager.
    let view = |edge: u32| ChildView::read(tree, edge);
    let floor = (first..first + count)
        .map(|index| view(index).bounds.pess())
        .max()
        .unwrap_or(0);
    let mut best = first;
    let mut best_view = view(first);
    for index in first + 1..first + count {
        let candidate = view(index);
        if best_first(&candidate, &best_view, floor) == std::cmp::Ordering::Less {
            best = index;
            best_view = candidate;
        }
    }
    if best_view.bounds.is_win() {
        return false;
    }
    // The strongest challenger: the most visited other move that is not proven lost.
    let second = (first..first + count)
        .filter(|&index| index != best)
        .map(view)
        .filter(|challenger| !challenger.bounds.is_loss())
        .map(|challenger| challenger.visits)
        .max();
    match second {
        None => count > 1,
        Some(second) => second.saturating_add(remaining) < best_view.visits,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_already_past_is_seen_at_the_first_check() {
        let mut clock = TimeCheck::new();
        assert!(clock.over(Instant::now(), Duration::ZERO));
    }

    #[test]
    fn far_from_the_limit_the_clock_is_read_every_few_iterations() {
        let mut clock = TimeCheck::new();
        let started = Instant::now();
        for _ in 0..1000 {
            assert!(!clock.over(started, Duration::from_secs(3600)));
            let stride = clock.due - clock.iterations;
            assert!(stride <= TimeCheck::MAX_STRIDE, "stride {stride}");
        }
    }

    #[test]
    fn near_the_limit_the_clock_is_read_before_every_iteration() {
        let mut clock = TimeCheck::new();
        // Iterations of ~1 ms: far more than half of what is left of a 2 ms limit.
        let started = Instant::now();
        let max_time = Duration::from_millis(2);
        loop {
            std::thread::sleep(Duration::from_millis(1));
            if clock.over(started, max_time) {
                break;
            }
            assert_eq!(clock.due, clock.iterations + 1);
        }
        assert!(started.elapsed() >= max_time);
    }
}
