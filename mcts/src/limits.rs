//! When to stop: the limits checked before every playout (stop flag, time, full tree) and smart
//! pruning.

use std::sync::atomic::Ordering;

use crate::control::StopReason;
use crate::core::Core;
use crate::game::Game;
use crate::node::Expansion;
use crate::select::{ChildView, best_first};
use crate::tree::Tree;

/// The limits checked before every playout: stop flag / handle dropped, time, full tree (when
/// that stops the search). Playout tickets and smart pruning are handled by the caller.
pub(crate) fn limit_reached<G: Game>(core: &Core<G>, tree: &Tree) -> Option<StopReason> {
    if core.stop_flag.load(Ordering::Relaxed) || core.ctl.is_aborted() {
        return Some(StopReason::Stopped);
    }
    if core
        .params
        .max_time
        .is_some_and(|max_time| core.ctl.started().elapsed() >= max_time)
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
