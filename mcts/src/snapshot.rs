//! Search results: a [`Snapshot`] of the tree's root, its moves and their principal variations.

use std::time::Duration;

use crate::control::{Contention, StopReason};
use crate::core::Core;
use crate::game::Game;
use crate::node::Expansion;
use crate::select::{best_child, best_first, child_views, floor_of};
use crate::solver::Proven;
use crate::tree::Tree;

/// Statistics of one root move.
#[derive(Clone, PartialEq, Debug)]
pub struct MoveStats<M> {
    /// The move.
    pub mv: M,
    /// Playouts through this move (reused ones included).
    pub visits: u64,
    /// Mean result in `[0, 1]` for the player making the move, moved into what the solver
    /// proved about the move (so a proven move shows its exact value: 1, 0.5 or 0); 0.5 without
    /// visits.
    pub value: f32,
    /// Solver result for the player making the move, plies counted from the root (the move
    /// included).
    pub proven: Option<Proven>,
    /// Principal variation: starts with `mv`, then follows the best (normally most visited)
    /// children with visits, at most [`SearchParams::pv_len`](crate::SearchParams::pv_len)
    /// moves. Just `[mv]` for the moves beyond
    /// [`SearchParams::multi_pv`](crate::SearchParams::multi_pv).
    pub pv: Vec<M>,
}

/// A view of the search: final when taken after the threads stopped, approximate (but never
/// inconsistent in a harmful way) while they run.
#[derive(Clone, PartialEq, Debug)]
pub struct Snapshot<M> {
    /// Playouts completed by this search (reused visits not counted).
    pub playouts: u64,
    /// Nodes the tree holds, root included: after [`Search::advance`](crate::Search::advance)
    /// also those it left out of reach, until the tree is compacted (so that this and
    /// `tree_bytes` describe memory, counted without walking the tree).
    pub nodes: usize,
    /// Time since the search started; frozen when it finished.
    pub elapsed: Duration,
    /// `playouts / elapsed`.
    pub playouts_per_second: f64,
    /// Deepest tree depth a playout started from (root = 0) in this search.
    pub max_depth: u32,
    /// Mean tree depth playouts started from in this search (may lag a little while running).
    pub mean_depth: f64,
    /// Nodes whose knowledge was refined in this search
    /// ([`SearchParams::refine_visits`](crate::SearchParams::refine_visits); may lag a little
    /// while running).
    pub refinements: u64,
    /// Expected score in `[0, 1]` for the side to move at the root (exact if the root is proven).
    pub root_value: f32,
    /// Solver result for the side to move at the root.
    pub root_proven: Option<Proven>,
    /// All root moves, best first: proven wins (shortest first), then by visits (ties: higher
    /// value first, then legal-move order), proven losses last (longest first). Empty if the root
    /// is terminal.
    pub moves: Vec<MoveStats<M>>,
    /// The move to play: the first of `moves`. A proven-lost move is only chosen when every move
    /// loses. `None` iff the root is terminal (or the node cap is too small to hold the root's
    /// children).
    pub best_move: Option<M>,
    /// Why the search stopped; `None` while it runs (or if it never ran).
    pub stop_reason: Option<StopReason>,
    /// Whether the tree ran out of room during this search ([`SearchParams::max_nodes`](crate::SearchParams::max_nodes)
    /// or [`SearchParams::max_tree_bytes`](crate::SearchParams::max_tree_bytes)), even if a
    /// reclaim made room again (see [`Snapshot::reclaims`]).
    pub node_cap_reached: bool,
    /// Bytes the tree holds (allocated chunks of nodes and edges).
    pub tree_bytes: usize,
    /// How many times this search reclaimed its full tree ([`SearchParams::reclaim`](crate::SearchParams::reclaim)).
    pub reclaims: u32,
    /// Nodes dropped by those reclaims.
    pub nodes_reclaimed: u64,
    /// Time the search threads stood still for those reclaims (the copy is made by one thread
    /// while the others wait).
    pub reclaim_time: Duration,
    /// Contention between the search threads in this search.
    pub contention: Contention,
    /// Visits the root already had when this search started (tree reuse, or an earlier run).
    pub reused_visits: u64,
    /// Visits of the root: `reused_visits + playouts`.
    ///
    /// Invariant once the threads stopped, if the node cap was never hit:
    /// `root_visits == sum of moves[..].visits + min(T, root_visits)`, where `T` is
    /// [`SearchParams::expand_threshold`](crate::SearchParams::expand_threshold) (1 by default):
    /// the root's first `T` playouts start at the root itself, every later one goes through a
    /// move. The same holds at every unproven expanded node of the tree; a proven node below the
    /// root can have more visits than its children, since playouts reaching it stop there.
    pub root_visits: u64,
}

/// Reads a snapshot of `core`'s tree and control state.
pub(crate) fn build<G: Game>(core: &Core<G>) -> Snapshot<G::Move> {
    let tree = core.tree.load();
    let tree = &*tree;
    let ctl = &core.ctl;
    let root = tree.root();
    let root_stats = root.stats();
    let to_move = core.root.to_move();
    let root_bounds = root.bounds().for_player(core.root_mover, to_move);
    let root_proven = root_bounds.proven();
    let root_value = match (root_proven, root_stats.mean()) {
        (Some(proof), _) => proof.value(),
        (None, Some(mean)) if core.root_mover == to_move => root_bounds.clamp(mean),
        (None, Some(mean)) => root_bounds.clamp(1.0 - mean),
        (None, None) => 0.5,
    };

    let (first, count) = match root.expansion() {
        Expansion::Expanded { first, count } => (first, count),
        Expansion::Empty | Expansion::Expanding => (0, 0),
    };
    let views = child_views(tree, first, count);
    let floor = floor_of(&views);
    // Edges are in legal-move order; a game listing fewer moves than it did (a bug) loses the
    // extra edges rather than panicking.
    let mut legal = Vec::new();
    core.root.legal_moves(&mut legal);
    let mut children: Vec<_> = (first..).zip(legal).zip(views).collect();
    // Stable: equal children keep legal-move order.
    children.sort_by(|a, b| best_first(&a.1, &b.1, floor));
    let pv_len = core.params.pv_len.max(1);
    let moves: Vec<MoveStats<G::Move>> = children
        .iter()
        .enumerate()
        .map(|(rank, &((edge, mv), view))| MoveStats {
            mv,
            visits: view.visits,
            value: view.value,
            proven: view.proven().map(Proven::one_ply_more),
            pv: if rank < core.params.multi_pv {
                principal_variation(tree, &core.root, edge, mv, pv_len)
            } else {
                vec![mv]
            },
        })
        .collect();

    let playouts = root_stats.visits.saturating_sub(ctl.reused_visits());
    let elapsed = ctl.elapsed();
    let secs = elapsed.as_secs_f64();
    Snapshot {
        playouts,
        nodes: tree.len(),
        elapsed,
        playouts_per_second: if secs > 0.0 {
            playouts as f64 / secs
        } else {
            0.0
        },
        max_depth: ctl.max_depth(),
        mean_depth: ctl.mean_depth(),
        refinements: ctl.refinements(),
        root_value,
        root_proven,
        best_move: moves.first().map(|m| m.mv),
        moves,
        stop_reason: if ctl.running() > 0 {
            None
        } else {
            ctl.reason()
        },
        node_cap_reached: tree.cap_reached() || ctl.tree_was_full(),
        tree_bytes: tree.memory_bytes(),
        reclaims: ctl.reclaimed().0,
        nodes_reclaimed: ctl.reclaimed().1,
        reclaim_time: ctl.reclaimed().2,
        contention: ctl.contention(),
        reused_visits: ctl.reused_visits(),
        root_visits: root_stats.visits,
    }
}

/// Visits a move below the root needs to extend a principal variation.
const PV_MIN_VISITS: u64 = 2;

/// The line from the root's edge `edge` (move `mv` from `root`): its move, then repeatedly the
/// best visited child, the moves listed again from the positions along the line.
fn principal_variation<G: Game>(
    tree: &Tree,
    root: &G,
    edge: u32,
    mv: G::Move,
    pv_len: usize,
) -> Vec<G::Move> {
    let mut pv = vec![mv];
    let Some(mut node) = tree.edge(edge).child() else {
        return pv;
    };
    let mut state = root.clone();
    state.play(mv);
    let mut legal = Vec::new();
    while pv.len() < pv_len {
        let Expansion::Expanded { first, count } = tree.node(node).expansion() else {
            break;
        };
        if count == 0 {
            break;
        }
        let best = best_child(tree, first, count);
        let Some(child) = tree.edge(best).child() else {
            break;
        };
        // A move seen once is a single evaluation, not a searched line: the line ends where
        // visits get that thin (a proven move is exact however few visits it has).
        let child_node = tree.node(child);
        if child_node.stats().visits < PV_MIN_VISITS && child_node.bounds().proven().is_none() {
            break;
        }
        state.legal_moves(&mut legal);
        let Some(&next) = legal.get((best - first) as usize) else {
            break;
        };
        pv.push(next);
        state.play(next);
        node = child;
    }
    pv
}
