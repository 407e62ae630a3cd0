//! The game abstraction the search runs on: players, results, playouts and the [`Game`] trait.

use std::any::Any;
use std::cell::RefCell;
use std::fmt::Debug;
use std::hash::Hash;
use std::time::Instant;

use rand_xoshiro::rand_core::Rng as _;

/// The random number generator handed to playouts (one per search thread, seeded
/// deterministically from [`SearchParams::seed`](crate::SearchParams::seed) and the thread index).
pub type Rng = rand_xoshiro::Xoshiro256PlusPlus;

/// One of the two players of a two-player, zero-sum game.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Player {
    /// The first player.
    One,
    /// The second player.
    Two,
}

impl Player {
    /// The opponent.
    #[must_use]
    pub fn other(self) -> Player {
        match self {
            Player::One => Player::Two,
            Player::Two => Player::One,
        }
    }
}

/// The result of a finished game.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Outcome {
    /// The given player won.
    Win(Player),
    /// Nobody won.
    Draw,
}

impl Outcome {
    /// The score of this result for `player`: 1 for a win, 0 for a loss, 0.5 for a draw.
    #[must_use]
    pub fn value_for(self, player: Player) -> f32 {
        match self {
            Outcome::Win(w) if w == player => 1.0,
            Outcome::Win(_) => 0.0,
            Outcome::Draw => 0.5,
        }
    }
}

/// How a playout ended.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum PlayoutEnd {
    /// The game reached its end.
    Finished(Outcome),
    /// The playout hit its turn cap before the game ended. `value_for_one` is an estimate in
    /// `[0, 1]` of the score for [`Player::One`] (0.5 = draw-like). It is only ever used as a
    /// statistic, never as a game result: the solver ignores capped playouts.
    Capped {
        /// Estimated score for [`Player::One`], in `[0, 1]`.
        value_for_one: f32,
    },
}

impl PlayoutEnd {
    /// The score of this playout for [`Player::One`], clamped to `[0, 1]` (a NaN estimate counts as
    /// 0.5).
    #[must_use]
    pub fn value_for_one(self) -> f32 {
        match self {
            PlayoutEnd::Finished(outcome) => outcome.value_for(Player::One),
            PlayoutEnd::Capped { value_for_one } if value_for_one.is_nan() => 0.5,
            PlayoutEnd::Capped { value_for_one } => value_for_one.clamp(0.0, 1.0),
        }
    }
}

/// The result of one random playout.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct Playout {
    /// How it ended.
    pub end: PlayoutEnd,
    /// How many moves (plies) it played. 0 means the start state was already over: the search
    /// uses that to mark the node as a proven terminal position.
    pub turns: u32,
}

/// A two-player, zero-sum, perfect-information game the search can play.
///
/// The search clones the root state into a per-thread scratch state with `clone_from` once per
/// iteration, so `clone_from` should reuse allocations when the state owns any.
///
/// Players need not alternate: the search asks [`to_move`](Game::to_move) at every node.
pub trait Game: Clone + Send + Sync + 'static {
    /// A move. Not stored in the tree (edges follow [`Game::legal_moves`]' order), so its size
    /// does not matter to memory.
    type Move: Copy + Eq + Hash + Debug + Send + Sync + 'static;

    /// The player to move in this state (unspecified once the game is over).
    fn to_move(&self) -> Player;

    /// Clears `out` and fills it with the legal moves; empty iff the game is over. Must list
    /// the moves of a state in the same order every time it is called (the tree stores a
    /// move as its position in this list). Called at every expanded node a descent passes, so
    /// it should be fast.
    fn legal_moves(&self, out: &mut Vec<Self::Move>);

    /// Plays `mv`, which must be legal in this state.
    fn play(&mut self, mv: Self::Move);

    /// `Some(..)` iff the game is over in this state.
    fn outcome(&self) -> Option<Outcome>;

    /// A static evaluation of this state (not over): the expected score for [`Player::One`] in
    /// `[0, 1]`, or `None` (the default) for a game without one. Used by evaluation-cut playouts
    /// ([`SearchParams::playout_cutoff`](crate::SearchParams::playout_cutoff)).
    fn evaluate(&self) -> Option<f32> {
        None
    }

    /// What the game knows about `moves` (this state's legal moves, in
    /// [`legal_moves`](Game::legal_moves) order), asked once per expansion:
    ///
    /// * `priors`: prior probabilities, same order; they need not sum to 1 (the search
    ///   normalises them) and negative or NaN values count as 0. Left empty: uniform.
    /// * `values`: the static value of the state after each move for the player making it, in
    ///   `[0, 1]`. They seed the implicit minimax values
    ///   ([`SearchParams::minimax_weight`](crate::SearchParams::minimax_weight)), serve as the
    ///   first-play value of unvisited children. They may be cheaper and rougher than
    ///   [`evaluate`](Game::evaluate), which scores the leaves. Left empty: unknown.
    ///
    /// The default leaves both empty.
    fn move_knowledge(&self, moves: &[Self::Move], priors: &mut Vec<f32>, values: &mut Vec<f32>) {
        let _ = moves;
        priors.clear();
        values.clear();
    }

    /// Better knowledge of `moves` (as for [`move_knowledge`](Game::move_knowledge)) for a node
    /// the search keeps coming back to: asked once the node has had
    /// [`SearchParams::refine_visits`](crate::SearchParams::refine_visits) playouts (`level`
    /// 1), then again at each further step of
    /// [`refine_growth`](crate::SearchParams::refine_growth) times as many (levels 2, 3, ...,
    /// up to [`refine_levels`](crate::SearchParams::refine_levels)); a node that passed
    /// several steps unrefined (the new root of a reused tree, which is asked again since its
    /// knowledge may depend on its distance from the root) is asked for the highest level due. A game with a search of
    /// its own answers from a deeper one each level, so that the effort goes where the tree
    /// concentrates (the priors of Baier & Winands' MCTS-minimax hybrids, computed where the
    /// visits say they matter). What the answer leaves empty keeps its earlier value.
    ///
    /// `deadline`, under a time limit, is half the search's time left: an answer that cannot
    /// be had by then should be given up (left empty) rather than make the search overrun its
    /// budget. A level given up on (or left unanswered for any reason) is not asked again by
    /// that thread in that search, nor any level above it. A stop request waits for the answer,
    /// so a game should keep each level's cost bounded.
    ///
    /// The default leaves both empty: nothing changes.
    fn refine_knowledge(
        &self,
        moves: &[Self::Move],
        level: u32,
        deadline: Option<Instant>,
        priors: &mut Vec<f32>,
        values: &mut Vec<f32>,
    ) {
        let _ = (moves, level, deadline);
        priors.clear();
        values.clear();
    }

    /// Called on each search thread before its first iteration of every run (on the root
    /// state; the thread's own copy). A game that keeps per-thread caches which change its
    /// answers (a searcher's transposition table, say) resets them here, so that a seeded
    /// one-thread search with a playout budget is reproducible whatever the thread did before.
    /// The default does nothing.
    fn thread_started(&self) {}

    /// Called on the root state once [`Search::advance`](crate::Search::advance) has played
    /// moves on it: the state is a search's root again. A game whose knowledge depends on the
    /// distance from the root (deeper searches near it) resets that distance here. The default
    /// does nothing.
    fn rerooted(&mut self) {}

    /// Random playout from this state (mutating it), at most `max_turns` turns.
    ///
    /// The default plays uniformly random legal moves (from [`legal_moves`](Game::legal_moves))
    /// and reports `Capped { value_for_one: 0.5 }` when the cap is hit. It reuses one move buffer
    /// per thread, so it does not allocate in steady state. Games override it with something
    /// faster or smarter (a capped playout may return a heuristic evaluation).
    fn playout(&mut self, rng: &mut Rng, max_turns: u32) -> Playout {
        with_move_buffer(|moves| uniform_playout(self, rng, max_turns, moves))
    }
}

/// A uniformly distributed index in `0..len` (`len` must be > 0), by the multiply-shift method:
/// one 64-bit draw, no modulo bias worth mentioning, no division. Handy for custom playouts.
#[must_use]
pub fn uniform_index(rng: &mut Rng, len: usize) -> usize {
    ((u128::from(rng.next_u64()) * len as u128) >> 64) as usize
}

/// The default playout: uniformly random legal moves until the game ends or `max_turns` moves
/// have been played.
fn uniform_playout<G: Game>(
    game: &mut G,
    rng: &mut Rng,
    max_turns: u32,
    moves: &mut Vec<G::Move>,
) -> Playout {
    let mut turns = 0;
    loop {
        game.legal_moves(moves);
        if moves.is_empty() {
            // A game that breaks the "no moves iff over" contract is scored as a draw rather
            // than crashing the search.
            let outcome = game.outcome().unwrap_or(Outcome::Draw);
            return Playout {
                end: PlayoutEnd::Finished(outcome),
                turns,
            };
        }
        if turns >= max_turns {
            return Playout {
                end: PlayoutEnd::Capped { value_for_one: 0.5 },
                turns,
            };
        }
        game.play(moves[uniform_index(rng, moves.len())]);
        turns += 1;
    }
}

thread_local! {
    /// A type-erased move buffer for the default playout. The trait's default method has no
    /// access to the search's per-thread scratch space and a `thread_local!` cannot be generic,
    /// so the buffer is stored as `Box<dyn Any>` and downcast to `Vec<M>` on use.
    static MOVE_BUFFER: RefCell<Option<Box<dyn Any>>> = const { RefCell::new(None) };
}

/// Runs `f` with this thread's reusable `Vec<M>`. The buffer is taken out of the thread-local for
/// the duration of `f`, so a nested call simply gets a fresh buffer instead of a borrow panic.
fn with_move_buffer<M: 'static, R>(f: impl FnOnce(&mut Vec<M>) -> R) -> R {
    let stored = MOVE_BUFFER.with(|cell| cell.borrow_mut().take());
    let mut buffer: Box<Vec<M>> = match stored.map(|b| b.downcast::<Vec<M>>()) {
        Some(Ok(buffer)) => buffer,
        // Empty, or a buffer for another move type (several games used on one thread).
        _ => Box::default(),
    };
    let result = f(&mut buffer);
    // Re-boxing as `dyn Any` is an unsizing coercion of the same allocation: no allocation here.
    MOVE_BUFFER.with(|cell| *cell.borrow_mut() = Some(buffer as Box<dyn Any>));
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_xoshiro::rand_core::SeedableRng;

    #[test]
    fn other_player() {
        assert_eq!(Player::One.other(), Player::Two);
        assert_eq!(Player::Two.other(), Player::One);
    }

    #[test]
    fn outcome_values() {
        assert_eq!(Outcome::Win(Player::One).value_for(Player::One), 1.0);
        assert_eq!(Outcome::Win(Player::One).value_for(Player::Two), 0.0);
        assert_eq!(Outcome::Draw.value_for(Player::Two), 0.5);
        let capped = PlayoutEnd::Capped { value_for_one: 3.0 };
        assert_eq!(capped.value_for_one(), 1.0);
        let nan = PlayoutEnd::Capped {
            value_for_one: f32::NAN,
        };
        assert_eq!(nan.value_for_one(), 0.5);
    }

    #[test]
    fn uniform_index_in_range_and_spread() {
        let mut rng = Rng::seed_from_u64(7);
        let mut seen = [0u32; 3];
        for _ in 0..3000 {
            seen[uniform_index(&mut rng, 3)] += 1;
        }
        assert!(seen.iter().all(|&n| n > 800), "{seen:?}");
    }

    #[test]
    fn nested_move_buffers_do_not_panic() {
        let outer = with_move_buffer(|a: &mut Vec<u8>| {
            a.push(1);
            with_move_buffer(|b: &mut Vec<u8>| b.len()) + a.len()
        });
        assert_eq!(outer, 1);
        // Another move type on the same thread just replaces the buffer.
        with_move_buffer(|c: &mut Vec<u64>| c.push(5));
    }
}
