//! The public search object: [`Search`] owns the root position, the parameters and the tree
//! between searches; it runs a search (blocking), keeps the tree across moves and reports results.
//! Starting one in the background is in the `handle` module.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::control::{Control, StopReason};
use crate::core::{Core, tree_limits};
use crate::game::Game;
use crate::node::Expansion;
use crate::params::SearchParams;
use crate::reclaim::{Reclaimer, SharedTree};
use crate::snapshot::{self, Snapshot};
use crate::threads;
use crate::tree::{EDGE_BYTES, NODE_BYTES, ROOT, Tree};

/// A Monte Carlo tree search over a [`Game`], owning its tree between searches.
///
/// Run it blocking with [`run`](Search::run) or in the background with
/// [`start`](Search::start); keep it between moves and call [`advance`](Search::advance) to
/// reuse the relevant part of the tree.
#[derive(Debug)]
pub struct Search<G: Game> {
    core: Core<G>,
    /// Whether the stop flag was created here (then it is cleared when a search starts) rather
    /// than installed with [`Search::set_stop_flag`] (never cleared by the search).
    own_flag: bool,
}

impl<G: Game> Search<G> {
    /// A search from `root` with an empty tree.
    pub fn new(root: G, params: SearchParams) -> Self {
        let root_mover = root.to_move().other();
        let core = Core {
            tree: SharedTree::new(Tree::new(tree_limits(&params))),
            reclaimer: Reclaimer::default(),
            root,
            root_mover,
            params,
            ctl: Control::new(0, 0),
            stop_flag: Arc::new(AtomicBool::new(false)),
        };
        Search::from_core(core, true)
    }

    /// A search around `core`, as handed back by a finished [`SearchHandle`](crate::SearchHandle).
    pub(crate) fn from_core(core: Core<G>, own_flag: bool) -> Self {
        Search { core, own_flag }
    }

    /// The shared state and whether the stop flag is the search's own, for
    /// [`start`](Search::start).
    pub(crate) fn into_parts(self) -> (Core<G>, bool) {
        (self.core, self.own_flag)
    }

    /// The root position.
    pub fn root_state(&self) -> &G {
        &self.core.root
    }

    /// The parameters.
    pub fn params(&self) -> &SearchParams {
        &self.core.params
    }

    /// Replaces the parameters for the next search. Different tree limits are applied to the
    /// tree in place when it fits them, else the tree is copied under the new limits (keeping
    /// its most visited part, see [`SearchParams::reclaim`]).
    pub fn set_params(&mut self, params: SearchParams) {
        let limits = tree_limits(&params);
        let tree = self.core.tree.load();
        if limits != tree.limits() {
            drop(tree);
            let in_place = self
                .core
                .tree
                .get_mut()
                .is_some_and(|tree| tree.try_set_limits(limits));
            if !in_place {
                let tree = self.core.tree.load();
                let (fresh, _) = tree.compact(tree.root_index(), limits, tree.reuse_budget(limits));
                drop(tree);
                self.core.tree.set(fresh);
            }
        }
        self.core.params = params;
    }

    /// Installs an external stop flag: raising it stops the current or next search with
    /// [`StopReason::Stopped`]. The search never clears it (a server cancelling a request keeps
    /// control); lower it yourself before reusing it.
    pub fn set_stop_flag(&mut self, flag: Arc<AtomicBool>) {
        self.core.stop_flag = flag;
        self.own_flag = false;
    }

    /// The stop flag (raise it from another thread to stop [`run`](Search::run)). Unless one was
    /// installed with [`set_stop_flag`](Search::set_stop_flag), it is cleared when a search
    /// starts, so raise it only while the search runs.
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.core.stop_flag)
    }

    /// Memory per tree node in bytes: 32 (visits + virtual loss, value sum, solver bounds,
    /// expansion state, first edge, minimax value). Nodes exist only for visited moves.
    pub fn bytes_per_node() -> usize {
        NODE_BYTES
    }

    /// Memory per edge (one legal move of an expanded node) in bytes: 8 (the child's node
    /// index, the move's prior and static value; the move itself is not stored but listed
    /// again from the position when needed). See the crate docs for bytes per playout.
    pub fn bytes_per_edge() -> usize {
        EDGE_BYTES
    }

    /// Bytes the tree holds now (chunks of nodes and edges, allocated as the tree grows, and
    /// their directories); never more than 3/4 of [`SearchParams::max_tree_bytes`].
    pub fn memory_bytes(&self) -> usize {
        self.core.tree.load().memory_bytes()
    }

    /// Number of nodes in the tree, root included.
    pub fn node_count(&self) -> usize {
        self.core.tree.load().len()
    }

    /// Calls `f` with the position, the depth (the root's is 0) and the completed visits of
    /// every node in the tree, parents before their children. For diagnostics, such as how
    /// many of a tree's nodes hold a position it also holds elsewhere, reached by another move
    /// order (the tree is not a graph: each such node has statistics of its own). The tree
    /// stores no moves, so each expanded node's moves are listed again and each child's
    /// position played: about one move generation and one state per node. Call it between
    /// searches (during one, nodes may be added while it walks).
    pub fn for_each_node(&self, mut f: impl FnMut(&G, u32, u64)) {
        let tree = self.core.tree.load();
        let mut stack = vec![(self.core.root.clone(), tree.root_index(), 0u32)];
        let mut moves = Vec::new();
        while let Some((state, index, depth)) = stack.pop() {
            let node = tree.node(index);
            f(&state, depth, node.stats().visits);
            if let Expansion::Expanded { first, count } = node.expansion() {
                state.legal_moves(&mut moves);
                for (edge, &mv) in (first..first + count).zip(&moves) {
                    if let Some(child) = tree.edge(edge).child() {
                        let mut next = state.clone();
                        next.play(mv);
                        stack.push((next, child, depth + 1));
                    }
                }
            }
        }
    }

    /// Results of the last search (or of the tree as it is, after [`advance`](Search::advance)).
    pub fn snapshot(&self) -> Snapshot<G::Move> {
        snapshot::build(&self.core)
    }

    /// Throws the tree away (the root position stays).
    pub fn clear_tree(&mut self) {
        self.core
            .tree
            .set(Tree::new(tree_limits(&self.core.params)));
        self.core.root_mover = self.core.root.to_move().other();
        self.core.ctl = Control::new(0, 0);
    }

    /// Searches on `params.threads` threads (this one included) until a limit is reached, and
    /// returns the results. The tree is kept: calling `run` again searches on.
    ///
    /// With no limit set it runs until the stop flag is raised or the root is solved.
    pub fn run(&mut self) -> Snapshot<G::Move> {
        if self.prepare() {
            threads::run_scoped(&self.core);
        }
        self.snapshot()
    }

    /// Sets up a run: fresh control block, cleared own stop flag, and the cases answered without
    /// any thread (terminal root, single legal move, root already solved). Returns whether
    /// threads should run.
    pub(crate) fn prepare(&mut self) -> bool {
        if self.own_flag {
            self.core.stop_flag.store(false, Ordering::SeqCst);
        }
        self.core.reclaimer.clear();
        let core = &mut self.core;
        let tree = core.tree.load();
        let reused = tree.root().stats().visits;
        let solved = tree.root().bounds().is_exact();
        drop(tree);
        let mut moves = Vec::new();
        core.root.legal_moves(&mut moves);
        let immediate = match moves.len() {
            0 => Some(StopReason::Terminal),
            1 => Some(StopReason::SingleMove),
            _ if solved => Some(StopReason::Solved),
            _ => None,
        };
        match immediate {
            Some(reason) => {
                core.ctl = Control::new(reused, 0);
                if reason == StopReason::SingleMove {
                    core.settle_single_move();
                } else {
                    core.ensure_root_expanded();
                }
                core.ctl.finish(reason);
                false
            }
            None => {
                core.ctl = Control::new(reused, core.params.thread_count());
                true
            }
        }
    }

    /// Plays `moves` on the root position and keeps the subtree under them with its statistics.
    /// Returns the visits kept (the new root's), or 0 if a move was not expanded in the tree:
    /// then the tree starts afresh from the resulting position. The moves must be legal.
    /// Results of the last search are reset.
    ///
    /// The subtree is kept in place: its node becomes the root and the rest of the tree stays
    /// allocated but unreachable until the tree is compacted (by the reclaim of a full tree,
    /// or [`compact_tree`](Search::compact_tree)). So advancing costs a few move generations
    /// whatever the tree's size, and [`memory_bytes`](Search::memory_bytes) does not change.
    /// (If a snapshot from another thread still holds the tree, the subtree is copied instead.)
    pub fn advance(&mut self, moves: &[G::Move]) -> u64 {
        let core = &mut self.core;
        let tree = core.tree.load();
        let root = tree.root_index();
        let mut node = Some(root);
        let mut mover = core.root_mover;
        let mut legal = Vec::new();
        for &mv in moves {
            node = node.and_then(|index| find_child(&tree, index, &core.root, mv, &mut legal));
            mover = core.root.to_move();
            core.root.play(mv);
        }
        core.root.rerooted();
        let limits = tree_limits(&core.params);
        let target = node.filter(|&index| {
            index == root || matches!(tree.node(index).expansion(), Expansion::Expanded { .. })
        });
        let reused = match target {
            Some(index) if index == root => tree.root().stats().visits,
            Some(index) => {
                core.root_mover = mover;
                drop(tree);
                if let Some(tree) = core.tree.get_mut() {
                    tree.set_root(index);
                } else {
                    let tree = core.tree.load();
                    let (fresh, _) = tree.compact(index, limits, tree.reuse_budget(limits));
                    drop(tree);
                    core.tree.set(fresh);
                }
                core.tree.load().root().stats().visits
            }
            // Not in the tree, or a leaf: nothing worth keeping.
            None => {
                drop(tree);
                core.root_mover = core.root.to_move().other();
                core.tree.set(Tree::new(limits));
                0
            }
        };
        core.ctl = Control::new(reused, 0);
        reused
    }

    /// Nodes the tree holds that are no longer reachable from its root (left by
    /// [`advance`](Search::advance)); walks the tree. Call it between searches.
    pub fn unreachable_nodes(&self) -> u64 {
        self.core.tree.load().unreachable_nodes()
    }

    /// Copies the root's subtree into a fresh tree under the same limits and frees the old
    /// one, so that the nodes [`advance`](Search::advance) left unreachable stop taking
    /// memory; keeps at most about `max_nodes` nodes (the most visited part, as a reclaim
    /// does). Takes time in proportion to what it keeps: call it off the path of an answer.
    /// Returns the nodes freed. Call it between searches.
    pub fn compact_tree(&mut self, max_nodes: u64) -> u64 {
        let tree = self.core.tree.load();
        if tree.root_index() == ROOT && tree.len() as u64 <= max_nodes {
            return 0;
        }
        let before = tree.len() as u64;
        let limits = tree.limits();
        let mut budget = tree.reuse_budget(limits);
        budget.nodes = budget.nodes.min(max_nodes.max(1));
        let (fresh, _) = tree.compact(tree.root_index(), limits, budget);
        drop(tree);
        let after = fresh.len() as u64;
        self.core.tree.set(fresh);
        before.saturating_sub(after)
    }
}

/// The child node of `index` (whose position is `state`) reached by `mv`, if `index` is
/// expanded and that child was visited.
fn find_child<G: Game>(
    tree: &Tree,
    index: u32,
    state: &G,
    mv: G::Move,
    legal: &mut Vec<G::Move>,
) -> Option<u32> {
    match tree.node(index).expansion() {
        Expansion::Expanded { first, count } => {
            state.legal_moves(legal);
            let offset = legal.iter().position(|&m| m == mv)?;
            let offset = u32::try_from(offset).ok().filter(|&o| o < count)?;
            tree.edge(first + offset).child()
        }
        Expansion::Empty | Expansion::Expanding => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toy::{Nim, TicTacToe};

    #[test]
    fn for_each_node_visits_every_node_once_with_its_position_and_visits() {
        let params = SearchParams {
            max_playouts: Some(3_000),
            seed: 5,
            ..SearchParams::default()
        };
        let mut search = Search::new(TicTacToe::new(), params);
        let result = search.run();
        let (mut nodes, mut root_visits, mut depth_one_visits) = (0, 0, 0);
        let mut positions = std::collections::HashSet::new();
        let mut transposed = 0;
        search.for_each_node(|state, depth, visits| {
            nodes += 1;
            match depth {
                0 => root_visits = visits,
                1 => depth_one_visits += visits,
                _ => {}
            }
            if !positions.insert(format!("{state:?}")) {
                transposed += 1;
            }
        });
        assert_eq!(nodes, search.node_count());
        assert_eq!(root_visits, result.playouts);
        // The root's visits less the expansion threshold's are its children's.
        assert_eq!(depth_one_visits, root_visits - 1);
        // Tic-tac-toe reaches most positions by several move orders.
        assert!(transposed > nodes / 4, "{transposed} of {nodes}");
    }

    /// Walks the whole tree and checks the invariants a finished search guarantees (with no node
    /// cap hit): no thread left in flight, every reserved node reachable, children blocks inside
    /// the arena, and every expanded node having exactly `expand_threshold` more visits than its
    /// children together, or at least that many for proven nodes (they absorb visits). Returns
    /// the number of nodes.
    fn check_tree<G: Game>(search: &Search<G>) -> usize {
        let tree = search.core.tree.load();
        let threshold = u64::from(search.core.params.expand_threshold.max(1));
        let root = tree.root_index();
        let mut stack = vec![root];
        let mut reached = 0;
        while let Some(index) = stack.pop() {
            reached += 1;
            let node = tree.node(index);
            let stats = node.stats();
            assert_eq!(stats.in_flight, 0, "virtual loss left on node {index}");
            match node.expansion() {
                Expansion::Expanded { first, count } if count > 0 => {
                    let children: Vec<u32> = (first..first + count)
                        .filter_map(|e| tree.edge(e).child())
                        .collect();
                    let visits: u64 = children.iter().map(|&c| tree.node(c).stats().visits).sum();
                    if index == root || !node.bounds().is_exact() {
                        assert_eq!(stats.visits, visits + threshold, "node {index}");
                    } else {
                        assert!(stats.visits >= visits + threshold, "node {index}");
                    }
                    for &c in &children {
                        assert!(tree.node(c).stats().visits > 0, "unvisited node {c}");
                    }
                    stack.extend(children);
                }
                Expansion::Expanding => panic!("node {index} left half-expanded"),
                _ => {}
            }
        }
        // Only an in-place re-root leaves nodes out of reach, and it says how many.
        assert_eq!(
            reached as u64 + tree.unreachable_nodes(),
            tree.len() as u64,
            "nodes out of reach"
        );
        if root == ROOT {
            assert_eq!(reached, tree.len(), "unreachable nodes");
        }
        reached
    }

    #[test]
    fn four_threads_exact_playouts_and_consistent_tree() {
        for threshold in [1, 3] {
            let params = SearchParams {
                threads: 4,
                max_playouts: Some(6_000),
                smart_pruning: false,
                expand_threshold: threshold,
                seed: 3,
                ..SearchParams::default()
            };
            let mut search = Search::new(Nim::new(60, 3), params);
            let snap = search.run();
            assert_eq!(snap.stop_reason, Some(StopReason::Playouts));
            assert_eq!(snap.playouts, 6_000);
            assert_eq!(snap.root_visits, 6_000);
            let children: u64 = snap.moves.iter().map(|m| m.visits).sum();
            assert_eq!(snap.root_visits, children + u64::from(threshold));
            assert_eq!(check_tree(&search), snap.nodes);

            // Searching on keeps the invariants and counts only new playouts.
            let snap = search.run();
            assert_eq!(snap.playouts, 6_000);
            assert_eq!(snap.reused_visits, 6_000);
            assert_eq!(snap.root_visits, 12_000);
            check_tree(&search);
        }
    }

    #[test]
    fn tree_stays_consistent_when_solved_with_threads() {
        let params = SearchParams {
            threads: 4,
            max_playouts: Some(200_000),
            seed: 11,
            ..SearchParams::default()
        };
        let mut search = Search::new(TicTacToe::from_cells("X../.O./...").unwrap(), params);
        let snap = search.run();
        assert_eq!(snap.stop_reason, Some(StopReason::Solved));
        assert_eq!(snap.root_proven, Some(crate::Proven::Draw));
        check_tree(&search);
    }

    #[test]
    fn reused_tree_keeps_invariants() {
        let params = SearchParams {
            max_playouts: Some(3_000),
            smart_pruning: false,
            ..SearchParams::default()
        };
        let mut search = Search::new(Nim::new(50, 3), params);
        let first = search.run();
        let best = first.best_move.unwrap();
        let kept = search.advance(&[best]);
        assert_eq!(kept, first.moves[0].visits);
        assert_eq!(search.root_state().pile, 50 - best);
        check_tree(&search);
        let again = search.run();
        assert_eq!(again.reused_visits, kept);
        assert_eq!(again.root_visits, kept + 3_000);
        check_tree(&search);
    }

    /// Advancing re-roots in place: the same bytes, the old root's other subtrees out of reach
    /// until a compaction frees them, and a search on the compacted tree as on the kept one.
    #[test]
    fn advancing_keeps_the_subtree_in_place_until_compacted() {
        let params = SearchParams {
            max_playouts: Some(4_000),
            smart_pruning: false,
            seed: 9,
            ..SearchParams::default()
        };
        let mut search = Search::new(Nim::new(50, 3), params);
        let first = search.run();
        let (bytes, nodes) = (search.memory_bytes(), search.node_count());
        let best = first.best_move.unwrap();
        // Two plies: our move and the reply the tree liked best.
        let reply = first.moves[0].pv[1];
        let kept = search.advance(&[best, reply]);
        assert!(kept > 0);
        assert_eq!(search.memory_bytes(), bytes);
        assert_eq!(search.node_count(), nodes);
        let unreachable = search.unreachable_nodes();
        assert!(unreachable > 0 && (unreachable as usize) < nodes);
        check_tree(&search);
        let snap = search.snapshot();
        assert_eq!(snap.root_visits, kept);

        let freed = search.compact_tree(u64::MAX);
        assert_eq!(freed, unreachable);
        assert_eq!(search.unreachable_nodes(), 0);
        assert_eq!(search.node_count(), nodes - unreachable as usize);
        assert_eq!(search.snapshot().root_visits, kept);
        assert_eq!(search.compact_tree(u64::MAX), 0);
        let again = search.run();
        assert_eq!(again.reused_visits, kept);
        check_tree(&search);

        // A cap keeps the most visited part only.
        let held = search.node_count() as u64;
        let freed = search.compact_tree(held / 2);
        assert!(freed >= held / 2, "{freed} of {held}");
        assert_eq!(search.snapshot().root_visits, again.root_visits);
    }

    /// A tree re-rooted in place and then filled is reclaimed from its root: the search goes
    /// on with exact counts and nothing out of reach afterwards.
    #[test]
    fn a_tree_rerooted_in_place_reclaims_from_its_root() {
        let params = SearchParams {
            max_playouts: Some(3_000),
            smart_pruning: false,
            seed: 4,
            ..SearchParams::default()
        };
        let mut search = Search::new(Nim::new(60, 3), params.clone());
        let first = search.run();
        let kept = search.advance(&[first.best_move.unwrap()]);
        let nodes = search.node_count();
        // The node cap leaves room for a few hundred nodes more than the tree holds.
        search.set_params(SearchParams {
            max_nodes: nodes + 300,
            max_playouts: Some(6_000),
            ..params
        });
        let snap = search.run();
        assert!(snap.reclaims > 0, "{snap:?}");
        assert_eq!(snap.playouts, 6_000);
        assert_eq!(snap.root_visits, kept + 6_000);
        // A reclaim keeps some nodes' statistics without their children (see
        // `Tree::compact`), so only what it must leave is checked: nothing out of reach.
        assert_eq!(search.unreachable_nodes(), 0);
        assert!(search.node_count() <= nodes + 300);
    }

    #[test]
    fn shrinking_the_node_cap_truncates_the_tree() {
        let params = SearchParams {
            max_playouts: Some(2_000),
            smart_pruning: false,
            ..SearchParams::default()
        };
        let mut search = Search::new(Nim::new(50, 3), params.clone());
        search.run();
        assert!(search.node_count() > 100);
        search.set_params(SearchParams {
            max_nodes: 100,
            ..params
        });
        assert!(search.node_count() <= 100);
        let snap = search.run();
        assert!(snap.nodes <= 100);
        assert!(snap.node_cap_reached);
        assert_eq!(snap.playouts, 2_000);
    }
}
