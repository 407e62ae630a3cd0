//! Backup: the path an iteration walked from the root ([`Step`]) and the updates made along it,
//! leaf to root: solver bounds (MCTS-Solver), implicit minimax values, and the playout's value.
//!
//! They run once per iteration, called from the generic [`Worker`](crate::iteration::Worker)
//! that is instantiated in the caller's crate; `#[inline]` keeps them inlinable there like the
//! worker's own code.

use crate::game::Player;
use crate::node::{Child, Expansion, Writers, to_fixed};
use crate::solver::Bounds;
use crate::tree::Tree;

/// One step of the path from the root to the playout's start.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Step {
    /// The node.
    pub(crate) node: u32,
    /// Its mover (the statistics' point of view); for the root, `Core::root_mover`.
    pub(crate) mover: Player,
}

/// Converts a value for `player` into a value for [`Player::One`].
pub(crate) fn value_for_one(value: f32, player: Player) -> f32 {
    match player {
        Player::One => value,
        Player::Two => 1.0 - value,
    }
}

/// MCTS-Solver: the iteration ended on a proven node; walk up the path recomputing each
/// ancestor's bounds from its children until one does not tighten. Also run when the proven
/// node was proven earlier, which catches up on an update a race made another thread miss.
#[inline]
pub(crate) fn propagate_bounds(tree: &Tree, path: &[Step]) {
    for k in (0..path.len() - 1).rev() {
        let step = path[k];
        // The player to move at path[k] is the mover of path[k + 1].
        let to_move = path[k + 1].mover;
        let node = tree.node(step.node);
        let Expansion::Expanded { first, count } = node.expansion() else {
            return;
        };
        // A child without a node is unvisited: nothing known.
        let children = (first..first + count).map(|e| {
            tree.edge(e)
                .child()
                .map_or(Bounds::UNKNOWN, |c| tree.node(c).bounds_seq_cst())
        });
        let Some(bounds) = Bounds::combine(children) else {
            return;
        };
        if !node.merge_bounds(bounds.for_player(to_move, step.mover)) {
            return;
        }
    }
}

/// Implicit minimax backup: recomputes each expanded node's minimax value on the path,
/// leaf to root, as the best of its children's (from the node's mover's point of view),
/// with proven children counting at their proven value. Stops early where nothing changed.
#[inline]
pub(crate) fn backup_minimax(tree: &Tree, path: &[Step]) {
    // Each step with the next one on the path, leaf side first. The path's last node has no
    // successor: it was just expanded (which set its value), or it is a leaf or proven.
    for pair in path.windows(2).rev() {
        let (step, child_mover) = (pair[0], pair[1].mover);
        let node = tree.node(step.node);
        let Expansion::Expanded { first, count } = node.expansion() else {
            continue;
        };
        // Visited children by their proof or minimax value, the others by their static value.
        let best = (first..first + count)
            .filter_map(|e| {
                let edge = tree.edge(e).read();
                match edge.child {
                    Child::Node(c) => {
                        let child = tree.node(c);
                        child
                            .bounds()
                            .proven()
                            .map(|p| p.value())
                            .or_else(|| child.minimax())
                    }
                    Child::Absent | Child::Creating => edge.value,
                }
            })
            .reduce(f32::max);
        let Some(best) = best else {
            continue;
        };
        let value = if child_mover == step.mover {
            best
        } else {
            1.0 - best
        };
        let old = node.minimax();
        node.set_minimax(value);
        if old.is_some_and(|o| (o - value).abs() < 1e-5) {
            break;
        }
    }
}

/// Value backup: `value` (the playout's result or the proven value, for [`Player::One`]) goes up
/// the path, leaf to root, removing each node's virtual loss; `writers` says whether other
/// threads update the same nodes.
#[inline]
pub(crate) fn backup_value(tree: &Tree, path: &[Step], value: f32, writers: Writers) {
    // Leaf to root, each node's result clamped into its solver bounds, and the clamped value
    // passed on up: what is proven overrides what the playout said.
    let mut value = value;
    for step in path.iter().rev() {
        let node = tree.node(step.node);
        let for_mover = node.bounds().clamp(value_for_one(value, step.mover));
        node.leave_as(to_fixed(for_mover), writers);
        value = value_for_one(for_mover, step.mover);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_conversion() {
        assert_eq!(value_for_one(0.25, Player::Two), 0.75);
        assert_eq!(value_for_one(0.25, Player::One), 0.25);
    }
}
