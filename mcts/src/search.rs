//! The search: the [`Search`] object, its threads, and one iteration (select, expand, playout,
//! backup, solver).
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
//!    bounds, see the `solver` module).
//!
//! When the tree is full (node cap or memory), the node that could not grow stays a leaf for
//! this iteration, and with [`SearchParams::reclaim`] the threads then meet and reclaim the
//! least visited subtrees (see the `reclaim` module) before going on.
//!
//! Because the decision to expand is taken on the count of playouts *started* (one atomic
//! `fetch_add` on arrival), every expanded node ends with exactly `expand_threshold` more visits
//! than its children together, however many threads run, except where visits stop at proven
//! nodes or where a full tree or a reclaim cut the children.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rand_xoshiro::rand_core::SeedableRng;

use crate::game::{Game, Outcome, Player, PlayoutEnd, Rng};
use crate::handle::SearchHandle;
use crate::limits::{self, Control, StopReason};
use crate::node::{Child, Expansion, MAX_CHILDREN, Node, to_fixed};
use crate::params::SearchParams;
use crate::reclaim::{Reclaimer, SharedTree};
use crate::select::Uct;
use crate::snapshot::{self, Contention, Snapshot};
use crate::solver::Bounds;
use crate::tree::{EDGE_BYTES, NODE_BYTES, ROOT, Tree, TreeLimits};

/// Iterations between a thread's smart-pruning checks and statistics flushes. Counted per
/// thread, so a single-threaded search checks at the same points every time (determinism).
const CHECK_INTERVAL: u64 = 16;

/// Everything the search threads share.
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
    fn ensure_root_expanded(&self) {
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

    /// Called by each worker thread as it exits; the last one finalises the run.
    fn retire_worker(&self) {
        self.ctl.retire_worker(|| self.ensure_root_expanded());
    }

    /// Replaces the full tree by a copy of its most visited part (every thread is parked).
    fn reclaim(&self) {
        let started = std::time::Instant::now();
        let old = self.tree.load();
        let (fresh, dropped) = old.compact(ROOT, old.limits(), old.reclaim_budget());
        self.tree.replace(fresh);
        self.ctl.add_reclaim(dropped, started.elapsed());
        // `old` is freed when the last parked thread picks up the new tree.
    }
}

/// The tree limits `params` ask for.
fn tree_limits(params: &SearchParams) -> TreeLimits {
    TreeLimits {
        max_nodes: params.node_cap(),
        max_bytes: params.max_tree_bytes,
    }
}

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

    pub(crate) fn from_core(core: Core<G>, own_flag: bool) -> Self {
        Search { core, own_flag }
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
                let (fresh, _) = tree.compact(ROOT, limits, tree.reuse_budget(limits));
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
            let core = &self.core;
            std::thread::scope(|scope| {
                for thread in 1..core.params.thread_count() {
                    let spawned = std::thread::Builder::new()
                        .name(format!("mcts-{thread}"))
                        .spawn_scoped(scope, move || worker_loop(core, thread));
                    if spawned.is_err() {
                        core.retire_worker();
                    }
                }
                worker_loop(core, 0);
            });
        }
        self.snapshot()
    }

    /// Starts the search on `params.threads` background threads and returns at once.
    pub fn start(mut self) -> SearchHandle<G> {
        let run = self.prepare();
        let own_flag = self.own_flag;
        let core = Arc::new(self.core);
        let mut threads = Vec::new();
        if run {
            for thread in 0..core.params.thread_count() {
                let shared = Arc::clone(&core);
                let spawned = std::thread::Builder::new()
                    .name(format!("mcts-{thread}"))
                    .spawn(move || {
                        worker_loop(&shared, thread);
                        // Dropped before the thread ends, so after joining the handle holds the
                        // only reference and can hand the search back.
                        drop(shared);
                    });
                match spawned {
                    Ok(handle) => threads.push(handle),
                    Err(_) => core.retire_worker(),
                }
            }
        }
        SearchHandle::new(core, own_flag, threads)
    }

    /// Sets up a run: fresh control block, cleared own stop flag, and the cases answered without
    /// any thread (terminal root, single legal move, root already solved). Returns whether
    /// threads should run.
    fn prepare(&mut self) -> bool {
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
                core.ensure_root_expanded();
                core.ctl.finish(reason);
                false
            }
            None => {
                core.ctl = Control::new(reused, core.params.thread_count());
                true
            }
        }
    }

    /// Plays `moves` on the root position and keeps the subtree under them with its statistics
    /// (copied into a fresh tree, as much as fits beside the old one under the limits; the rest
    /// is freed). Returns the visits kept (the new root's), or 0 if a move was not expanded in
    /// the tree: then the tree starts afresh from the resulting position. The moves must be
    /// legal. Results of the last search are reset.
    pub fn advance(&mut self, moves: &[G::Move]) -> u64 {
        let core = &mut self.core;
        let tree = core.tree.load();
        let mut node = Some(ROOT);
        let mut mover = core.root_mover;
        let mut legal = Vec::new();
        for &mv in moves {
            node = node.and_then(|index| find_child(&tree, index, &core.root, mv, &mut legal));
            mover = core.root.to_move();
            core.root.play(mv);
        }
        let limits = tree_limits(&core.params);
        let (fresh, reused) = match node {
            Some(ROOT) => (None, tree.root().stats().visits),
            Some(index) if matches!(tree.node(index).expansion(), Expansion::Expanded { .. }) => {
                let (fresh, _) = tree.compact(index, limits, tree.reuse_budget(limits));
                core.root_mover = mover;
                let visits = fresh.root().stats().visits;
                (Some(fresh), visits)
            }
            // Not in the tree, or a leaf: nothing worth keeping.
            _ => {
                core.root_mover = core.root.to_move().other();
                (Some(Tree::new(limits)), 0)
            }
        };
        drop(tree);
        if let Some(fresh) = fresh {
            core.tree.set(fresh);
        }
        core.ctl = Control::new(reused, 0);
        reused
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

/// What an expansion did.
enum Expanded {
    /// Edges allocated and published.
    Children,
    /// The position is over: the node is published with no children and proven.
    Terminal(Outcome),
    /// No room in the tree: the node is back to `EMPTY`.
    Full,
}

/// Finishes the expansion of `node` (which the caller moved to `EXPANDING`) with the legal
/// `moves` of its position `state`; `mover` is the node's mover.
fn expand<G: Game>(
    tree: &Tree,
    node: &Node,
    moves: &[G::Move],
    mover: Player,
    state: &G,
    knowledge: &mut MoveKnowledge,
) -> Expanded {
    if moves.is_empty() {
        let outcome = state.outcome().unwrap_or(Outcome::Draw);
        node.merge_bounds(Bounds::terminal(outcome, mover));
        node.publish_expanded(0, 0);
        return Expanded::Terminal(outcome);
    }
    let reserved = u32::try_from(moves.len())
        .ok()
        .filter(|&count| count <= MAX_CHILDREN)
        .and_then(|count| Some((tree.reserve_edges(count)?, count)));
    match reserved {
        Some((first, count)) => {
            knowledge.fetch(state, moves);
            let priors = &knowledge.priors;
            let total: f32 = priors.iter().map(|&p| clean_prior(p)).sum();
            let normalised = priors.len() == moves.len() && total > 0.0;
            let values = (knowledge.values.len() == moves.len()).then_some(&knowledge.values);
            for (i, edge) in (first..first + count).enumerate() {
                let prior = normalised.then(|| clean_prior(priors[i]) / total);
                tree.edge(edge).init(prior, values.map(|v| v[i]));
            }
            if let Some(best) = values.and_then(|v| v.iter().copied().reduce(f32::max)) {
                // The node's own minimax value: its best child's, seen from the node's mover.
                let to_move = state.to_move();
                node.set_minimax(if to_move == mover { best } else { 1.0 - best });
            }
            node.publish_expanded(first, count);
            Expanded::Children
        }
        None => {
            node.abort_expand();
            Expanded::Full
        }
    }
}
/// Scratch space for [`Game::move_knowledge`], reused across expansions.
struct MoveKnowledge {
    /// Whether to ask the game at all (only when the parameters use the answers).
    wanted: bool,
    priors: Vec<f32>,
    values: Vec<f32>,
}

impl MoveKnowledge {
    fn new(wanted: bool) -> Self {
        MoveKnowledge {
            wanted,
            priors: Vec::new(),
            values: Vec::new(),
        }
    }

    /// Asks the game about `moves` (or clears the answers when not wanted).
    fn fetch<G: Game>(&mut self, state: &G, moves: &[G::Move]) {
        if self.wanted {
            state.move_knowledge(moves, &mut self.priors, &mut self.values);
        } else {
            self.priors.clear();
            self.values.clear();
        }
    }
}

/// A prior as the search uses it: negative and NaN values count as 0.
fn clean_prior(p: f32) -> f32 {
    if p > 0.0 { p.min(f32::MAX) } else { 0.0 }
}

/// Converts a value for `player` into a value for [`Player::One`].
fn value_for_one(value: f32, player: Player) -> f32 {
    match player {
        Player::One => value,
        Player::Two => 1.0 - value,
    }
}

/// One step of the path from the root to the playout's start.
#[derive(Clone, Copy, Debug)]
struct Step {
    /// The node.
    node: u32,
    /// Its mover (the statistics' point of view); for the root, `Core::root_mover`.
    mover: Player,
}

/// The legal moves of the nodes near the root, which every iteration passes: listing them again
/// each time (the tree stores no moves) would cost more than remembering them. Direct-mapped
/// by node index, filled for the first [`MoveCache::MAX_DEPTH`] levels only, and emptied when
/// the tree is replaced (node indices then mean other nodes).
struct MoveCache<M> {
    /// The tree epoch the entries belong to.
    epoch: u64,
    /// `(node index, its legal moves)`; `u32::MAX` = empty.
    slots: Vec<(u32, Vec<M>)>,
}

impl<M: Copy> MoveCache<M> {
    /// Levels cached: the root's path length is 1.
    const MAX_DEPTH: usize = 3;
    /// Slots: a few hundred nodes near the root, ~50 KB per thread for a dozen moves each.
    const SLOTS: usize = 512;

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
struct Worker<G: Game> {
    state: G,
    moves: Vec<G::Move>,
    move_cache: MoveCache<G::Move>,
    knowledge: MoveKnowledge,
    path: Vec<Step>,
    rng: Rng,
    uct: Uct,
    depth_sum: u64,
    depth_count: u64,
    max_depth: u32,
    /// Contention seen since the last flush.
    contention: Contention,
}

impl<G: Game> Worker<G> {
    fn new(core: &Core<G>, thread: usize) -> Self {
        // Distinct, reproducible streams per thread (seed_from_u64 scrambles its input).
        let seed = core
            .params
            .seed
            .wrapping_add((thread as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        Worker {
            state: core.root.clone(),
            moves: Vec::new(),
            move_cache: MoveCache::new(core.tree.epoch()),
            knowledge: MoveKnowledge::new(core.params.uses_knowledge()),
            path: Vec::new(),
            rng: Rng::seed_from_u64(seed),
            uct: Uct::new(&core.params),
            depth_sum: 0,
            depth_count: 0,
            max_depth: 0,
            contention: Contention::default(),
        }
    }

    /// One select / expand / playout / backup iteration on `tree` (the current one: threads
    /// pick up a reclaimed tree between iterations).
    fn iterate(&mut self, core: &Core<G>, tree: &Tree) {
        let threshold = u64::from(core.params.expand_threshold.max(1));
        self.state.clone_from(&core.root);
        self.path.clear();
        let mut index = ROOT;
        let mut mover = core.root_mover;
        let mut started_before = tree.root().arrive();
        self.path.push(Step { node: ROOT, mover });

        // Whether `self.moves` holds the current node's legal moves.
        let mut moves_listed = false;
        // (value for Player::One, whether the iteration ended on a proven node)
        let (value, proven) = loop {
            let node = tree.node(index);
            // A proven node needs no playout: its value is exact. The root is never cut short
            // this way: every iteration must reach a child for the root's visit count to stay
            // exact (and a solved root ends the search anyway).
            let proof = if index == ROOT {
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
                    let to_move = self.state.to_move();
                    let floor =
                        (index != ROOT).then(|| node.bounds().for_player(mover, to_move).pess());
                    let pick = self.uct.select(tree, node, first, count, floor);
                    self.contention.virtual_loss_collisions += u64::from(pick.busy);
                    // Edges are in legal-move order: the move is listed again, not stored
                    // (unless this thread just listed them to expand the node).
                    let offset = (pick.edge - first) as usize;
                    let mv = if std::mem::take(&mut moves_listed) {
                        self.moves.get(offset).copied()
                    } else if self.path.len() <= MoveCache::<G::Move>::MAX_DEPTH {
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
                    started_before = tree.node(child_index).arrive();
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
            self.propagate_bounds(tree);
        }
        if core.params.minimax_weight > 0.0 {
            self.backup_minimax(tree);
        }
        // Leaf to root, each node's result clamped into its solver bounds, and the clamped value
        // passed on up: what is proven overrides what the playout said.
        let mut value = value;
        for step in self.path.iter().rev() {
            let node = tree.node(step.node);
            let for_mover = node.bounds().clamp(value_for_one(value, step.mover));
            node.leave(to_fixed(for_mover));
            value = value_for_one(for_mover, step.mover);
        }
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
    /// With [`SearchParams::playout_cutoff`] the playout stops after that many plies and the
    /// game's static evaluation scores the position reached (cutoff 0: the leaf itself, after
    /// checking that it is not over).
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
            if let Some(value) = evaluated(&self.state) {
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

    /// MCTS-Solver: the iteration ended on a proven node; walk up the path recomputing each
    /// ancestor's bounds from its children until one does not tighten. Also run when the proven
    /// node was proven earlier, which catches up on an update a race made another thread miss.
    fn propagate_bounds(&self, tree: &Tree) {
        for k in (0..self.path.len() - 1).rev() {
            let step = self.path[k];
            // The player to move at path[k] is the mover of path[k + 1].
            let to_move = self.path[k + 1].mover;
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
    fn backup_minimax(&self, tree: &Tree) {
        // Each step with the next one on the path, leaf side first. The path's last node has no
        // successor: it was just expanded (which set its value), or it is a leaf or proven.
        for pair in self.path.windows(2).rev() {
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

    /// Adds this thread's depth statistics to the shared ones.
    fn flush(&mut self, ctl: &Control) {
        ctl.add_depths(self.depth_sum, self.depth_count, self.max_depth);
        ctl.add_contention(std::mem::take(&mut self.contention));
        self.depth_sum = 0;
        self.depth_count = 0;
    }
}

/// Retires the worker when its loop ends, also by panic (then it stops the other threads, so
/// that joining them never hangs).
struct ExitGuard<'a, G: Game>(&'a Core<G>);

impl<G: Game> Drop for ExitGuard<'_, G> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.ctl.poison();
        }
        self.0.retire_worker();
    }
}

/// A search thread: iterate until some limit says stop.
pub(crate) fn worker_loop<G: Game>(core: &Core<G>, thread: usize) {
    let _exit = ExitGuard(core);
    let mut worker = Worker::new(core, thread);
    let mut tree = core.tree.load();
    let mut epoch = core.tree.epoch();
    let mut iterations: u64 = 0;
    loop {
        if core.ctl.is_done() {
            break;
        }
        if core.reclaimer.is_requested() {
            // Let go of the old tree while parked, so that it is freed as soon as possible.
            drop(tree);
            core.reclaimer.park(
                || core.ctl.running(),
                || core.ctl.is_done(),
                || core.reclaim(),
            );
            tree = core.tree.load();
            epoch = core.tree.epoch();
        } else if core.tree.epoch() != epoch {
            tree = core.tree.load();
            epoch = core.tree.epoch();
        }
        if let Some(reason) = limits::limit_reached(core, &tree) {
            core.ctl.finish(reason);
            break;
        }
        let ticket = core
            .params
            .max_playouts
            .is_none_or(|max| core.ctl.take_ticket(max));
        if !ticket {
            core.ctl.finish(StopReason::Playouts);
            break;
        }
        worker.move_cache.sync(epoch);
        worker.iterate(core, &tree);
        iterations += 1;
        if tree.root().bounds().is_exact() {
            core.ctl.finish(StopReason::Solved);
            break;
        }
        if iterations % CHECK_INTERVAL == 0 {
            worker.flush(&core.ctl);
            if limits::smart_prune(core, &tree) {
                core.ctl.finish(StopReason::SmartPruning);
                break;
            }
        }
    }
    worker.flush(&core.ctl);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toy::{Nim, TicTacToe};

    /// Walks the whole tree and checks the invariants a finished search guarantees (with no node
    /// cap hit): no thread left in flight, every reserved node reachable, children blocks inside
    /// the arena, and every expanded node having exactly `expand_threshold` more visits than its
    /// children together, or at least that many for proven nodes (they absorb visits). Returns
    /// the number of nodes.
    fn check_tree<G: Game>(search: &Search<G>) -> usize {
        let tree = search.core.tree.load();
        let threshold = u64::from(search.core.params.expand_threshold.max(1));
        let mut stack = vec![ROOT];
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
                    if index == ROOT || !node.bounds().is_exact() {
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
        assert_eq!(reached, tree.len(), "unreachable nodes");
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

    #[test]
    fn value_conversion() {
        assert_eq!(value_for_one(0.25, Player::Two), 0.75);
        assert_eq!(value_for_one(0.25, Player::One), 0.25);
    }
}
