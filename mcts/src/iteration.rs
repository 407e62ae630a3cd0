//! One iteration of the search (select, expand, playout, backup), run by each thread's
//! [`Worker`] on its own scratch state.
//!
//! # One iteration
//!
//! 1. **Select.** From the root, while the node is expanded, list the legal moves, pick an edge
//!    with UCT ([`Uct::select`]), create the child's node if this is its first visit, register
//!    on it (virtual loss) and play the edge's move on the thread's scratch state. Stop at a
//!    proven node (its value is exact: no playout needed) or at a node with fewer than
//!    `expand_threshold` playouts started before this one.
//! 2. **Expand.** A node reached with at least `expand_threshold` earlier playouts gets its
//!    edges (one contiguous block, one per legal move, with the game's priors and values) and
//!    selection goes on into them. One thread wins the `EMPTY -> EXPANDING` race; the others
//!    wait for it (it only lists moves and fills a block) and then descend too, so they never
//!    double-count the node.
//! 3. **Playout** from the leaf with [`Game::playout`]. A playout of 0 turns from a finished
//!    position marks the leaf as a proven terminal node.
//! 4. **Backup** the result along the path, from each node's mover's point of view, removing the
//!    virtual losses and clamping the result into each node's solver bounds. If the iteration
//!    ended on a proven node, first tighten its ancestors' bounds (MCTS-Solver with score
//!    bounds, see the `solver` module). The updates themselves are in the `backup` module.
//!
//! When the tree is full (node cap or memory), the node that could not grow stays a leaf for
//! this iteration, and with [`SearchParams::reclaim`](crate::SearchParams::reclaim) the threads
//! then meet and reclaim the least visited subtrees (see the `reclaim` module) before going on.
//!
//! Because the decision to expand is taken on the count of playouts *started* (one atomic
//! `fetch_add` on arrival; a load and a store when the search has one thread, see
//! [`Writers`]), every expanded node ends with exactly `expand_threshold` more visits
//! than its children together, however many threads run, except where visits stop at proven
//! nodes or where a full tree or a reclaim cut the children.

use std::time::Instant;

use rand_xoshiro::rand_core::SeedableRng;

use crate::backup::{self, Step, value_for_one};
use crate::control::{Contention, Control};
use crate::core::Core;
use crate::expand::{Expanded, MoveKnowledge, expand, refine};
use crate::game::{Game, Outcome, Player, PlayoutEnd, Rng};
use crate::node::{Child, Expansion, Node, Writers};
use crate::select::Uct;
use crate::sibling_cache::SiblingCache;
use crate::solver::Bounds;
use crate::tree::Tree;

/// The legal moves of the nodes near the root, which every iteration passes, and of the deeper
/// nodes passed often: listing them again each time (the tree stores no moves) would cost more
/// than remembering them. Direct-mapped by node index, filled for the nodes
/// [`SiblingCache::passed_often`] names (measured together with remembering their scans), and
/// emptied when the tree is replaced (node indices then mean other nodes).
struct MoveCache<M> {
    /// The tree epoch the entries belong to.
    epoch: u64,
    /// `(node index, its legal moves)`; `u32::MAX` = empty.
    slots: Vec<(u32, Vec<M>)>,
}

impl<M: Copy> MoveCache<M> {
    /// Slots: the nodes near the root and the deeper ones passed often; ~0.5 MB per thread for
    /// twenty moves each (512 slots, enough for the top levels alone, were 1–4% slower once
    /// deeper nodes were cached too).
    const SLOTS: usize = 2048;

    fn new(epoch: u64) -> Self {
        MoveCache {
            epoch,
            slots: (0..Self::SLOTS).map(|_| (u32::MAX, Vec::new())).collect(),
        }
    }

    /// Forgets everything if the tree was replaced.
    fn sync(&mut self, epoch: u64) {
        if epoch != self.epoch {
            self.epoch = epoch;
            for slot in &mut self.slots {
                slot.0 = u32::MAX;
            }
        }
    }

    /// The legal moves of node `index`, whose position is `state`.
    fn moves<G: Game<Move = M>>(&mut self, index: u32, state: &G) -> &[M] {
        let slot = &mut self.slots[index as usize % Self::SLOTS];
        if slot.0 != index {
            state.legal_moves(&mut slot.1);
            slot.0 = index;
        }
        &slot.1
    }
}

/// A search thread's scratch space, reused across iterations so that an iteration allocates
/// nothing in steady state (only the game itself might).
pub(crate) struct Worker<G: Game> {
    state: G,
    moves: Vec<G::Move>,
    move_cache: MoveCache<G::Move>,
    siblings: SiblingCache,
    knowledge: MoveKnowledge,
    /// The legal moves of a node being refined.
    refine_moves: Vec<G::Move>,
    /// Refinements done since the last flush.
    refinements: u64,
    /// The highest refinement level this thread still asks for: a level the game gave up on
    /// (no answer, typically because it could not be had in time) is not asked again in this
    /// search, nor any above it, so the time is not lost twice.
    refine_ceiling: u32,
    path: Vec<Step>,
    rng: Rng,
    uct: Uct,
    depth_sum: u64,
    depth_count: u64,
    max_depth: u32,
    /// Contention seen since the last flush.
    contention: Contention,
    /// How this thread updates the nodes' counters (alone or among others).
    writers: Writers,
}

impl<G: Game> Worker<G> {
    pub(crate) fn new(core: &Core<G>, thread: usize) -> Self {
        // Distinct, reproducible streams per thread (seed_from_u64 scrambles its input).
        let seed = core
            .params
            .seed
            .wrapping_add((thread as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        Worker {
            state: core.root.clone(),
            moves: Vec::new(),
            move_cache: MoveCache::new(core.tree.epoch()),
            siblings: if core.params.thread_count() > 1 {
                SiblingCache::shared(
                    core.tree.epoch(),
                    core.params.shared_rescan,
                    core.params.rescan_div(),
                )
            } else {
                SiblingCache::new(core.tree.epoch())
            },
            knowledge: MoveKnowledge::new(core.params.uses_knowledge()),
            refine_moves: Vec::new(),
            refinements: 0,
            refine_ceiling: u32::MAX,
            path: Vec::new(),
            rng: Rng::seed_from_u64(seed),
            uct: Uct::new(&core.params),
            depth_sum: 0,
            depth_count: 0,
            max_depth: 0,
            contention: Contention::default(),
            writers: Writers::for_threads(core.params.thread_count()),
        }
    }

    /// Forgets the cached moves and scores if the tree was replaced (`epoch`: the current tree's).
    pub(crate) fn sync(&mut self, epoch: u64) {
        self.move_cache.sync(epoch);
        self.siblings.sync(epoch);
    }

    /// One select / expand / playout / backup iteration on `tree` (the current one: threads
    /// pick up a reclaimed tree between iterations).
    pub(crate) fn iterate(&mut self, core: &Core<G>, tree: &Tree) {
        let threshold = u64::from(core.params.expand_threshold.max(1));
        self.state.clone_from(&core.root);
        self.path.clear();
        let root = tree.root_index();
        let mut index = root;
        let mut mover = core.root_mover;
        let mut started_before = tree.root().arrive_as(self.writers);
        self.path.push(Step { node: root, mover });

        // Whether `self.moves` holds the current node's legal moves.
        let mut moves_listed = false;
        // (value for Player::One, whether the iteration ended on a proven node)
        let (value, proven) = loop {
            let node = tree.node(index);
            // A proven node needs no playout: its value is exact. The root is never cut short
            // this way: every iteration must reach a child for the root's visit count to stay
            // exact (and a solved root ends the search anyway).
            let proof = if index == root {
                None
            } else {
                node.bounds().proven()
            };
            if let Some(proof) = proof {
                break (value_for_one(proof.value(), mover), true);
            }
            if started_before < threshold {
                break self.leaf_playout(core, node, mover);
            }
            match node.expansion() {
                Expansion::Expanded { count: 0, .. } => {
                    let outcome = self.state.outcome().unwrap_or(Outcome::Draw);
                    node.merge_bounds(Bounds::terminal(outcome, mover));
                    break (outcome.value_for(Player::One), true);
                }
                Expansion::Expanded { first, count } => {
                    if !moves_listed && self.knowledge.wanted() {
                        if let Some(level) = core
                            .params
                            .refine_level(started_before)
                            .map(|level| level.min(self.refine_ceiling))
                            .filter(|&level| level > 0 && node.claim_refinement(level))
                        {
                            self.refine(core, tree, index, first, count, level);
                        }
                    }
                    let to_move = self.state.to_move();
                    let floor =
                        (index != root).then(|| node.bounds().for_player(mover, to_move).pess());
                    let pick = if self.siblings.remembers(self.path.len(), started_before) {
                        self.uct.select_remembered(
                            tree,
                            index,
                            node,
                            first,
                            count,
                            floor,
                            &mut self.siblings,
                        )
                    } else {
                        self.uct.select(tree, node, first, count, floor)
                    };
                    self.contention.virtual_loss_collisions += u64::from(pick.busy);
                    // Edges are in legal-move order: the move is listed again, not stored
                    // (unless this thread just listed them to expand the node).
                    let offset = (pick.edge - first) as usize;
                    let mv = if std::mem::take(&mut moves_listed) {
                        self.moves.get(offset).copied()
                    } else if SiblingCache::passed_often(self.path.len(), started_before) {
                        self.move_cache
                            .moves(index, &self.state)
                            .get(offset)
                            .copied()
                    } else {
                        self.state.legal_moves(&mut self.moves);
                        self.moves.get(offset).copied()
                    };
                    let child_index = match (mv, self.child_of(core, tree, pick.edge)) {
                        (Some(mv), Some(child)) => {
                            self.state.play(mv);
                            child
                        }
                        // The tree is full (or the game listed fewer moves than before, a bug
                        // in its move generation): this node stays the leaf.
                        _ => break self.leaf_playout(core, node, mover),
                    };
                    started_before = tree.node(child_index).arrive_as(self.writers);
                    mover = to_move;
                    index = child_index;
                    self.path.push(Step { node: index, mover });
                }
                Expansion::Empty => {
                    if tree.cap_reached() {
                        self.tree_full(core);
                        break self.leaf_playout(core, node, mover);
                    }
                    if node.try_begin_expand() {
                        self.state.legal_moves(&mut self.moves);
                        moves_listed = true;
                        let expanded = expand(
                            tree,
                            node,
                            &self.moves,
                            mover,
                            &self.state,
                            &mut self.knowledge,
                        );
                        match expanded {
                            // Loop again: the node is expanded now, select a child.
                            Expanded::Children => {}
                            Expanded::Terminal(outcome) => {
                                break (outcome.value_for(Player::One), true);
                            }
                            Expanded::Full => {
                                self.tree_full(core);
                                break self.leaf_playout(core, node, mover);
                            }
                        }
                    } else {
                        // Lost the race: loop and read the state again.
                        self.contention.cas_failures += 1;
                    }
                }
                // Another thread is filling in the children; it takes microseconds, unless it
                // panicked in the game's code, which must not leave this thread spinning forever.
                Expansion::Expanding if core.ctl.is_poisoned() => {
                    break self.leaf_playout(core, node, mover);
                }
                Expansion::Expanding => {
                    self.contention.expansion_waits += 1;
                    std::thread::yield_now();
                }
            }
        };

        let depth = u32::try_from(self.path.len() - 1).unwrap_or(u32::MAX);
        self.depth_sum += u64::from(depth);
        self.depth_count += 1;
        self.max_depth = self.max_depth.max(depth);

        if proven {
            backup::propagate_bounds(tree, &self.path);
        }
        if core.params.minimax_weight > 0.0 {
            backup::backup_minimax(tree, &self.path);
        }
        backup::backup_value(tree, &self.path, value, self.writers);
    }

    /// The child node along `edge`, created on its first visit (its minimax value starts as the
    /// edge's static value); `None` when the tree is full.
    fn child_of(&mut self, core: &Core<G>, tree: &Tree, edge: u32) -> Option<u32> {
        loop {
            let init = |node: &Node| {
                if let Some(value) = tree.edge(edge).read().value {
                    node.set_minimax(value);
                }
            };
            match tree.child_of(edge, init, &mut self.contention.cas_failures) {
                Ok(child) => return Some(child),
                Err(Child::Absent) => {
                    self.tree_full(core);
                    return None;
                }
                // Another thread is allocating it: microseconds, unless it panicked.
                Err(_) if core.ctl.is_poisoned() => return None,
                Err(_) => {
                    self.contention.expansion_waits += 1;
                    std::thread::yield_now();
                }
            }
        }
    }

    /// Refines the knowledge of node `index` (expanded, edges `first..first + count`, its
    /// position the scratch state) at `level` ([`SearchParams::refine_visits`]). Under a time
    /// limit the game is given half the time left, or the budget's
    /// [`SearchParams::refine_time_share`] if less: a refinement it must give up on then costs
    /// at most that, and (see `refine_ceiling`) only once. This thread's memory of the node's
    /// children is dropped: their priors and values changed without a visit that would show it.
    ///
    /// [`SearchParams::refine_visits`]: crate::SearchParams::refine_visits
    fn refine(
        &mut self,
        core: &Core<G>,
        tree: &Tree,
        index: u32,
        first: u32,
        count: u32,
        level: u32,
    ) {
        let deadline = core.params.max_time.and_then(|max_time| {
            let now = Instant::now();
            let end = core.ctl.started().checked_add(max_time)?;
            let half_left = end.saturating_duration_since(now) / 2;
            let share = max_time.mul_f32(core.params.refine_time_share.clamp(0.0, 1.0));
            now.checked_add(half_left.min(share))
        });
        self.state.legal_moves(&mut self.refine_moves);
        let refined = refine(
            tree,
            first,
            count,
            &self.refine_moves,
            &self.state,
            level,
            deadline,
            &mut self.knowledge,
        );
        if refined {
            self.siblings.forget(index);
            self.refinements += 1;
        } else {
            self.refine_ceiling = level - 1;
        }
    }

    /// The tree could not grow: ask for a reclaim, if the parameters want one.
    fn tree_full(&self, core: &Core<G>) {
        core.ctl.note_tree_full();
        if core.params.reclaim && !core.params.stop_at_node_cap {
            core.reclaimer.request();
        }
    }

    /// A playout from the current scratch state, which is `node`'s position. Returns the value
    /// for [`Player::One`] and whether `node` turned out to be a (now proven) terminal position.
    ///
    /// With [`SearchParams::playout_cutoff`](crate::SearchParams::playout_cutoff) the playout
    /// stops after that many plies and the game's static evaluation scores the position reached
    /// (cutoff 0: the leaf itself, after checking that it is not over; with
    /// [`SearchParams::playout_mix`](crate::SearchParams::playout_mix), mixed with a playout's
    /// result).
    fn leaf_playout(&mut self, core: &Core<G>, node: &Node, mover: Player) -> (f32, bool) {
        let cap = core.params.playout_cap;
        let cutoff = core.params.playout_cutoff;
        // The game's evaluation as a value for Player::One, clamped like any playout result.
        let evaluated = |state: &G| {
            state
                .evaluate()
                .map(|value_for_one| PlayoutEnd::Capped { value_for_one }.value_for_one())
        };
        if cutoff == Some(0) {
            if let Some(outcome) = self.state.outcome() {
                node.merge_bounds(Bounds::terminal(outcome, mover));
                return (outcome.value_for(Player::One), true);
            }
            // The edge's static value, kept as the new node's minimax value until it has
            // children of its own (`Worker::child_of`).
            let known = (core.params.leaf_value_from_edge && node.expansion() == Expansion::Empty)
                .then(|| node.minimax())
                .flatten()
                .map(|value| value_for_one(value, mover));
            if let Some(value) = known.or_else(|| evaluated(&self.state)) {
                let mix = core.params.playout_mix;
                if mix > 0.0 && mix <= 1.0 {
                    // The scratch state is the leaf's and is not needed after this.
                    let played = self.state.playout(&mut self.rng, cap).end.value_for_one();
                    return ((1.0 - mix) * value + mix * played, false);
                }
                return (value, false);
            }
        }
        let turns = cutoff.filter(|&c| c > 0).map_or(cap, |c| c.min(cap));
        let playout = self.state.playout(&mut self.rng, turns);
        if playout.turns == 0 {
            if let Some(outcome) = self.state.outcome() {
                node.merge_bounds(Bounds::terminal(outcome, mover));
                return (outcome.value_for(Player::One), true);
            }
        }
        if let PlayoutEnd::Capped { .. } = playout.end {
            if let Some(value) = cutoff.and_then(|_| evaluated(&self.state)) {
                return (value, false);
            }
        }
        (playout.end.value_for_one(), false)
    }

    /// Adds this thread's depth statistics to the shared ones.
    pub(crate) fn flush(&mut self, ctl: &Control) {
        ctl.add_depths(self.depth_sum, self.depth_count, self.max_depth);
        ctl.add_contention(std::mem::take(&mut self.contention));
        ctl.add_refinements(std::mem::take(&mut self.refinements));
        self.depth_sum = 0;
        self.depth_count = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toy::Nim;

    type Cache = MoveCache<<Nim as Game>::Move>;

    thread_local! {
        /// Calls of `Scored::evaluate` on this thread.
        static EVALUATED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }

    /// Nim whose move values are the evaluation of the position after the move, as Emergo's
    /// knowledge is: the evaluation, for the mover there, is a function of the pile.
    #[derive(Clone, Copy, Debug)]
    struct Scored(Nim);

    fn value_of_pile(pile: u32) -> f32 {
        0.2 + 0.6 * ((pile * 7) % 10) as f32 / 10.0
    }

    impl Game for Scored {
        type Move = u32;
        fn to_move(&self) -> Player {
            self.0.to_move()
        }
        fn legal_moves(&self, out: &mut Vec<u32>) {
            self.0.legal_moves(out);
        }
        fn play(&mut self, mv: u32) {
            self.0.play(mv);
        }
        fn outcome(&self) -> Option<Outcome> {
            self.0.outcome()
        }
        /// The value for Player::One of the position, whose mover is the player not to move.
        fn evaluate(&self) -> Option<f32> {
            EVALUATED.with(|n| n.set(n.get() + 1));
            let for_mover = value_of_pile(self.0.pile);
            Some(match self.0.to_move() {
                Player::One => 1.0 - for_mover,
                Player::Two => for_mover,
            })
        }
        fn move_knowledge(&self, moves: &[u32], priors: &mut Vec<f32>, values: &mut Vec<f32>) {
            priors.clear();
            values.clear();
            for &mv in moves {
                priors.push(1.0);
                values.push(value_of_pile(self.0.pile - mv));
            }
        }
    }

    /// With `leaf_value_from_edge` a new leaf takes its edge's value: the same values as the
    /// evaluation gives (up to the edge's 16-bit rounding), so the same picks, without the
    /// evaluation's calls.
    #[test]
    fn new_leaves_take_their_edges_value_instead_of_an_evaluation() {
        use crate::{Search, SearchParams, Selection};
        let run = |from_edge: bool| {
            EVALUATED.with(|n| n.set(0));
            let params = SearchParams {
                max_playouts: Some(3_000),
                smart_pruning: false,
                selection: Selection::Puct,
                exploration: 1.5,
                minimax_weight: 0.5,
                playout_cutoff: Some(0),
                leaf_value_from_edge: from_edge,
                seed: 4,
                ..SearchParams::default()
            };
            let result = Search::new(Scored(Nim::new(80, 5)), params).run();
            (result, EVALUATED.with(std::cell::Cell::get))
        };
        let ((evaluated, evaluations), (reused, reused_evaluations)) = (run(false), run(true));
        assert!(evaluations >= 2_000, "{evaluations}");
        // Only a leaf without a valued edge (the root) is evaluated.
        assert!(reused_evaluations <= 1, "{reused_evaluations}");
        assert_eq!(evaluated.best_move, reused.best_move);
        assert!((evaluated.root_value - reused.root_value).abs() < 1e-3);
        let visits =
            |r: &crate::Snapshot<u32>| -> Vec<u64> { r.moves.iter().map(|m| m.visits).collect() };
        assert_eq!(visits(&evaluated), visits(&reused));
    }

    #[test]
    fn a_cached_list_is_the_nodes_own_and_a_new_tree_empties_the_cache() {
        let (big, small) = (Nim::new(12, 3), Nim::new(2, 3));
        let listed = |state: &Nim| {
            let mut moves = Vec::new();
            state.legal_moves(&mut moves);
            moves
        };
        let mut cache = MoveCache::new(0);
        assert_eq!(cache.moves(7, &big), listed(&big).as_slice());
        // Node 7 is still the same position: its list is served from memory, whatever state
        // is passed.
        assert_eq!(cache.moves(7, &small), listed(&big).as_slice());
        // Another node in the same slot replaces it.
        let other = 7 + Cache::SLOTS as u32;
        assert_eq!(cache.moves(other, &small), listed(&small).as_slice());
        // In a new tree node 7 is another position.
        cache.moves(7, &big);
        cache.sync(1);
        assert_eq!(cache.moves(7, &small), listed(&small).as_slice());
    }
}
