//! What the search threads share: [`Core`] (root position, parameters, tree, control block, stop
//! flag) and the few operations on it that are not one iteration (expanding the root, retiring a
//! worker, reclaiming the tree).

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::control::Control;
use crate::expand::{MoveKnowledge, expand};
use crate::game::{Game, Player};
use crate::node::Expansion;
use crate::params::SearchParams;
use crate::reclaim::{Reclaimer, SharedTree};
use crate::solver::Bounds;
use crate::tree::TreeLimits;

/// Everything the search threads share: borrowed by scoped threads in
/// [`Search::run`](crate::Search::run), behind an `Arc` after
/// [`Search::start`](crate::Search::start).
#[derive(Debug)]
pub(crate) struct Core<G: Game> {
    /// The root position.
    pub(crate) root: G,
    /// The player whose point of view the root node's statistics and solver bounds are stored
    /// in (the player who made the move leading to the root, or the opponent of the side to move
    /// for a fresh tree).
    pub(crate) root_mover: Player,
    /// Parameters of the current / last run.
    pub(crate) params: SearchParams,
    /// The tree; node 0 is the root. Swapped for a smaller copy when reclaimed.
    pub(crate) tree: SharedTree,
    /// Pauses the threads for a reclaim.
    pub(crate) reclaimer: Reclaimer,
    /// Control block of the current / last run.
    pub(crate) ctl: Control,
    /// The stop flag checked before every playout.
    pub(crate) stop_flag: Arc<AtomicBool>,
}

impl<G: Game> Core<G> {
    /// Expands the root without a playout if it is still a leaf, so that results list the root
    /// moves even when no playout ran (single move, stopped before the first playout).
    pub(crate) fn ensure_root_expanded(&self) {
        let tree = self.tree.load();
        let root = tree.root();
        if root.expansion() == Expansion::Empty && root.try_begin_expand() {
            let mut moves = Vec::new();
            self.root.legal_moves(&mut moves);
            let mut knowledge = MoveKnowledge::new(self.params.uses_knowledge());
            expand(
                &tree,
                root,
                &moves,
                self.root_mover,
                &self.root,
                &mut knowledge,
            );
        }
    }

    /// A root with a single legal move is answered without a search; if that move ends the
    /// game, its node is created and proven (and with it the root), so that the answer says
    /// "forced, and it wins" rather than showing an unsearched move at an even value.
    pub(crate) fn settle_single_move(&self) {
        self.ensure_root_expanded();
        let tree = self.tree.load();
        let root = tree.root();
        let Expansion::Expanded { first, count: 1 } = root.expansion() else {
            return;
        };
        let mut moves = Vec::new();
        self.root.legal_moves(&mut moves);
        let [mv] = moves[..] else {
            return;
        };
        let mut after = self.root.clone();
        let to_move = self.root.to_move();
        after.play(mv);
        let Some(outcome) = after.outcome() else {
            return;
        };
        let mut cas_failures = 0;
        if let Ok(child) = tree.child_of(first, |_| {}, &mut cas_failures) {
            let node = tree.node(child);
            node.merge_bounds(Bounds::terminal(outcome, to_move));
            // The root's bounds from its only child's, as the solver combines them.
            if let Some(bounds) = Bounds::combine([node.bounds()]) {
                root.merge_bounds(bounds.for_player(to_move, self.root_mover));
            }
        }
    }

    /// Called by each worker thread as it exits; the last one finalises the run.
    pub(crate) fn retire_worker(&self) {
        self.ctl.retire_worker(|| self.ensure_root_expanded());
    }

    /// Replaces the full tree by a copy of its most visited part (every thread is parked).
    pub(crate) fn reclaim(&self) {
        let started = std::time::Instant::now();
        let old = self.tree.load();
        let (fresh, dropped) = old.compact(old.root_index(), old.limits(), old.reclaim_budget());
        self.tree.replace(fresh);
        self.ctl.add_reclaim(dropped, started.elapsed());
        // `old` is freed when the last parked thread picks up the new tree.
    }
}

/// The tree limits `params` ask for.
pub(crate) fn tree_limits(params: &SearchParams) -> TreeLimits {
    TreeLimits {
        max_nodes: params.node_cap(),
        max_bytes: params.max_tree_bytes,
    }
}
