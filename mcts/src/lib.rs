//! Generic multithreaded Monte Carlo tree search (UCT) with an MCTS-Solver, live statistics and
//! tree reuse, for two-player zero-sum games. Std and `rand_xoshiro` only; knows nothing about
//! any particular game.
//!
//! # Overview
//!
//! * Implement [`Game`] for your game: side to move, legal moves, play, outcome and, ideally, a
//!   fast random [`playout`](Game::playout) (the default plays uniformly random moves).
//! * Build a [`Search`] from a root position and [`SearchParams`] (limits on time, playouts and
//!   nodes, threads, exploration...).
//! * [`Search::run`] searches on `threads` OS threads and returns a [`Snapshot`]: the best move,
//!   every root move's visits, value, solver result and principal variation, the root value and
//!   throughput figures. Or [`Search::start`] it in the background and drive the
//!   [`SearchHandle`]: live snapshots, stop, wait.
//! * After a move is played, [`Search::advance`] keeps the subtree under it for the next search.
//!
//! All values are scores in `[0, 1]` (1 = win, 0.5 = draw, 0 = loss) from the point of view of
//! the player concerned. The tree lives in arenas allocated by chunks: 8-byte edges, one per
//! legal move of an expanded node, and 32-byte nodes, one per *visited* move
//! ([`Search::bytes_per_edge`], [`Search::bytes_per_node`]), whose statistics are atomics:
//! threads share them without a lock on the hot path, spread out with virtual loss, and never
//! exceed [`SearchParams::max_tree_bytes`] nor [`SearchParams::max_nodes`]. A full tree is
//! reclaimed (its least visited subtrees dropped) and goes on growing.
//!
//! # Example
//!
//! A complete game: subtraction Nim (take 1 to 3 stones, whoever takes the last one wins). From
//! a pile of 10 the first player wins by taking 2, and the solver proves it. (The same game ships
//! as [`toy::Nim`].)
//!
//! ```
//! use emergo_mcts::{Game, Outcome, Player, Proven, Search, SearchParams, StopReason};
//!
//! #[derive(Clone, Debug)]
//! struct Pile {
//!     stones: u32,
//!     to_move: Player,
//! }
//!
//! impl Game for Pile {
//!     type Move = u32; // stones taken
//!
//!     fn to_move(&self) -> Player {
//!         self.to_move
//!     }
//!     fn legal_moves(&self, out: &mut Vec<u32>) {
//!         out.clear();
//!         out.extend(1..=self.stones.min(3));
//!     }
//!     fn play(&mut self, mv: u32) {
//!         self.stones -= mv;
//!         self.to_move = self.to_move.other();
//!     }
//!     fn outcome(&self) -> Option<Outcome> {
//!         // The player who just moved took the last stone.
//!         (self.stones == 0).then(|| Outcome::Win(self.to_move.other()))
//!     }
//!     // `playout` keeps its default: uniformly random moves.
//! }
//!
//! let params = SearchParams {
//!     max_playouts: Some(20_000),
//!     threads: 2,
//!     ..SearchParams::default()
//! };
//! let mut search = Search::new(Pile { stones: 10, to_move: Player::One }, params);
//! let result = search.run();
//! assert_eq!(result.best_move, Some(2));
//! assert_eq!(result.stop_reason, Some(StopReason::Solved));
//! // 10 -> 8; whatever the loser takes, the winner makes it 4, then 0: five plies. (Which of
//! // the loser's equally long defences the line shows depends on the visits, which with two
//! // threads depend on their timing.)
//! assert_eq!(result.root_proven, Some(Proven::Win { plies: 5 }));
//! let pv = &result.moves[0].pv;
//! let taken = |plies: usize| pv.iter().take(plies).sum::<u32>();
//! assert_eq!((pv.len(), pv[0], taken(3), taken(5)), (5, 2, 6, 10));
//!
//! // Play the move and search on from the kept subtree.
//! let kept = search.advance(&[2]);
//! assert!(kept > 0);
//! assert_eq!(search.root_state().stones, 8);
//! ```
//!
//! # Design notes
//!
//! * **Values** are stored per node from the point of view of the player who made the move
//!   leading to it, as a fixed-point sum (2^-20 resolution) in an `AtomicU64` next to the visit
//!   count, so backup is two `fetch_add`s and never a compare-exchange loop.
//! * **Playouts** ending at the turn cap count with the game's estimate
//!   ([`PlayoutEnd::Capped`]), 0.5 by default; they never feed the solver.
//! * **Selection** is UCT, `Q + c * sqrt(ln N / n)`, with first-play urgency for unvisited
//!   children (default 1.0: each child is tried once first) and virtual loss per thread in
//!   flight; or PUCT, `Q + c * P * sqrt(N) / (1 + n)`, with the game's priors
//!   ([`Selection`]).
//! * **Knowledge** (all optional, see [`Game`]): a static evaluation that cuts playouts after
//!   [`SearchParams::playout_cutoff`] plies or replaces them; move priors (PUCT, or progressive
//!   bias under UCT); static move values that seed first-play values and implicit minimax
//!   backups ([`SearchParams::minimax_weight`]). Priors and static values are stored as 16-bit
//!   fixed point in the edge, beside the child's node index. A node that keeps being visited
//!   can ask the game again ([`Game::refine_knowledge`], [`SearchParams::refine_visits`]):
//!   the better answer replaces the edges' priors and values in place (one compare-exchange per
//!   edge), so costly knowledge is spent where the visits go.
//! * **Expansion**: a leaf gets `expand_threshold` playouts of its own (default 1) before its
//!   edges are allocated, in one contiguous block; the thread that wins the race expands, the
//!   others wait for it, so statistics stay exact under any number of threads. A child's node
//!   is created on its first visit (one compare-exchange on the edge). Moves are not stored:
//!   edges follow the order of [`Game::legal_moves`], which must therefore list the moves of a
//!   position in the same order every time.
//! * **Memory**: an expansion costs 8 bytes per legal move and a playout one 32-byte node, so a
//!   game with a dozen moves per position uses ~130 bytes per playout (a node per legal move
//!   cost ~580). When the tree reaches its limit, the threads pause between iterations and one
//!   copies the most visited part (at most a third of the tree: the best lines, every proof)
//!   into a fresh tree ([`SearchParams::reclaim`], [`Snapshot::reclaims`]); the limit holds
//!   the copy too.
//! * **Solver**: MCTS-Solver with score bounds (proven win, loss, draw, and "at least / at most
//!   a draw"), which proves draws without solving every alternative exactly.
//! * **Limits**: time, exact playout count, full tree (reclaim, keep searching from leaves, or stop), stop
//!   flag, smart pruning, solved root, single legal move, finished root.
//! * **Determinism**: with one thread, a seed and no time limit, a search is reproducible.
//!
//! # Module map
//!
//! Split by concern, each module importing only those listed before it (a unit test checks
//! that the graph has no cycle):
//!
//! * `game` (the [`Game`] trait and its vocabulary) and `params` ([`SearchParams`]): leaves.
//! * `solver`: what is proven, as values ([`Proven`], per-node score bounds).
//! * `node` (one node and edge, the concurrency contract of each field), `tree` (the arenas),
//!   `reclaim` (sharing the tree and replacing it by a smaller copy when full).
//! * `select`: UCT / PUCT while searching, and the best-move order of the results;
//!   `sibling_cache`: a thread's memory of the children's scores under the top nodes.
//! * `control`: the run's control block (stop, playout tickets, workers), [`StopReason`],
//!   [`Contention`].
//! * `expand` (a leaf gets its edges and the game's knowledge), then `core` (what the threads
//!   share), `limits` (when to stop, smart pruning) and `backup` (bounds, minimax and values
//!   from the leaf up).
//! * `iteration` (one select / expand / playout / backup), `threads` (the worker loop).
//! * `snapshot` (the results), `search` (the public [`Search`]), `handle` ([`Search::start`]
//!   and the [`SearchHandle`]), and [`toy`] games for tests, examples and benchmarks.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod backup;
mod control;
mod core;
mod expand;
mod game;
mod iteration;
mod limits;
mod node;
mod params;
mod reclaim;
mod search;
mod select;
mod sibling_cache;
mod snapshot;
mod solver;
mod threads;
pub mod toy;
mod tree;

// Declared after `search` so that the docs list `Search::start`, defined in `handle`, after the
// methods defined in `search`.
mod handle;

pub use control::{Contention, StopReason};
pub use game::{Game, Outcome, Player, Playout, PlayoutEnd, Rng, uniform_index};
pub use handle::SearchHandle;
pub use params::{SearchParams, Selection};
pub use search::Search;
pub use snapshot::{MoveStats, Snapshot};
pub use solver::Proven;
