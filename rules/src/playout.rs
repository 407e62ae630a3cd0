//! Fast uniformly random playouts, the workhorse of Monte Carlo search.

use rand_xoshiro::Xoshiro256PlusPlus;
use rand_xoshiro::rand_core::{Rng, SeedableRng};

use crate::game::Repetitions;
use crate::movegen::MoveList;
use crate::outcome::Outcome;
use crate::position::Position;

/// The random generator used for playouts.
pub type PlayoutRng = Xoshiro256PlusPlus;

/// A generator seeded from a number (for reproducible playouts).
pub fn playout_rng(seed: u64) -> PlayoutRng {
    Xoshiro256PlusPlus::seed_from_u64(seed)
}

/// How a playout ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Playout {
    /// The game's outcome, or `None` when the turn cap was reached first (an unfinished game,
    /// never a draw: RULES.md §9).
    pub outcome: Option<Outcome>,
    /// Turns played in the playout.
    pub turns: u32,
}

/// A uniform index in `0..n` (Lemire's multiply-shift; the bias is below 2⁻⁵⁰ for our `n`).
#[inline(always)]
fn uniform<R: Rng + ?Sized>(rng: &mut R, n: usize) -> usize {
    ((u128::from(rng.next_u64()) * n as u128) >> 64) as usize
}

/// Plays uniformly random legal turns from `pos` until the game ends or `max_turns` turns have
/// been played. `reps` must hold the repetition window of `pos` (see [`Repetitions`]); both are
/// left at the final position.
///
/// ```
/// use emergo_rules::{playout_rng, random_playout, Position, Repetitions};
/// let mut pos = Position::initial();
/// let mut reps = Repetitions::new(&pos);
/// let p = random_playout(&mut pos, &mut reps, &mut playout_rng(7), 400);
/// assert!(p.turns > 0 && p.turns <= 400);
/// ```
pub fn random_playout<R: Rng + ?Sized>(
    pos: &mut Position,
    reps: &mut Repetitions,
    rng: &mut R,
    max_turns: u32,
) -> Playout {
    let mut scratch = MoveList::new();
    for turn in 0..max_turns {
        let Some(m) = pos.random_move(&mut scratch, |n| uniform(rng, n)) else {
            return Playout {
                outcome: pos.outcome(),
                turns: turn,
            };
        };
        pos.play_unchecked(m);
        if reps.record(m, pos) >= 3 {
            return Playout {
                outcome: Some(Outcome::REPETITION),
                turns: turn + 1,
            };
        }
    }
    Playout {
        outcome: pos.outcome(),
        turns: max_turns,
    }
}
