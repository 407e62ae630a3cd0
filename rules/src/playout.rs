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
///
/// Never inlined: the loop is then one out-of-line copy per generator type (every caller in this
/// workspace passes a [`PlayoutRng`]), the same machine code for the search and for raw
/// playouts. Inlined into the
/// search's playout adapter (`emergo-engine`'s `EmergoState`, whose position and window are
/// fields behind one `&mut self`), it ran 3.7% slower per search than the same loop called
/// (`engine/examples/speed.rs`, 250,000 playouts: 1.95 s against 1.88 s, same
/// searches), while raw playouts, which called it already, were unchanged.
#[inline(never)]
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Game;

    /// [`random_playout`] written naively: the same random stream and move choice, but the
    /// repetition rule judged by [`Game`], which compares whole positions over the whole history.
    fn exact_playout(mut game: Game, seed: u64, max_turns: u32) -> (Playout, Position) {
        let mut rng = playout_rng(seed);
        let mut scratch = MoveList::new();
        let mut turns = 0;
        let outcome = loop {
            let pos = game.position();
            if turns == max_turns {
                break pos.outcome();
            }
            let Some(m) = pos.random_move(&mut scratch, |n| uniform(&mut rng, n)) else {
                break pos.outcome();
            };
            game.play(m).unwrap();
            turns += 1;
            if game.repetition_count() >= 3 {
                break Some(Outcome::REPETITION);
            }
        };
        (Playout { outcome, turns }, *game.position())
    }

    fn fast_playout(game: &Game, seed: u64, max_turns: u32) -> (Playout, Position) {
        let mut pos = *game.position();
        let mut reps = game.repetitions();
        let p = random_playout(&mut pos, &mut reps, &mut playout_rng(seed), max_turns);
        (p, pos)
    }

    #[test]
    fn playouts_apply_the_exact_repetition_rule() {
        let starts = [
            // Lone units and small endgames, where repetition draws are common.
            "9/9/9/9/4a@4/9/9/9/A@8 w 40 0,0",
            "9/9/2a@3a@2/9/9/9/2A@3A@2/9/9 w 40 0,0",
            "9/9/9/3ab5/9/5AB3/9/9/9 w 40 0,0",
            "9/9/2a@1a@4/9/2bb1a@4/3C@5/9/9/9 w 31 0,0",
            "9/9/9/9/9/9/9/9/9 w 0 12,12",
        ];
        let mut repetitions = 0;
        for fen in starts {
            for seed in 0..100 {
                let game = Game::new(fen.parse().unwrap());
                let fast = fast_playout(&game, seed, 400);
                assert_eq!(fast, exact_playout(game, seed, 400), "{fen} seed {seed}");
                repetitions += usize::from(fast.0.outcome == Some(Outcome::REPETITION));
            }
        }
        // 57 of these 500 playouts end by repetition.
        assert!(repetitions >= 40, "{repetitions}");
        // A window handed over from a game's history: the start position has occurred twice.
        let shuffle = ["a1-b2", "e5-d6", "b2-a1", "d6-e5"];
        let game = Game::from_fen_and_moves(starts[0], &shuffle).unwrap();
        for seed in 0..40 {
            let fast = fast_playout(&game, seed, 400);
            assert_eq!(fast, exact_playout(game.clone(), seed, 400), "seed {seed}");
        }
    }

    /// Playouts from fixed seeds, recorded before the repetition window was made cheaper:
    /// the random stream and the games it produces must not change.
    #[test]
    fn seeded_playouts_are_unchanged() {
        let describe = |seed: u64| {
            let (p, pos) = fast_playout(&Game::new(Position::initial()), seed, 400);
            let outcome = p.outcome.map_or("unfinished".to_owned(), |o| o.to_string());
            format!("{seed} {} {outcome} {pos}", p.turns)
        };
        assert_eq!(
            describe(0),
            "0 77 1-0 (no-units) 9/1A@5AA1/AB1AC6/1AC1A@5/8A@/7BA1/9/9/4CB4 b 77 0,0"
        );
        assert_eq!(
            describe(2),
            "2 231 1-0 (no-units) AB8/9/8F@/9/9/9/2AC5AG/3C@5/9 b 231 0,0"
        );
        assert_eq!(
            describe(5),
            "5 148 0-1 (no-units) 8ab/9/9/9/6a@2/1b@5bc1/ae1a@3b@2/9/bb8 w 148 0,0"
        );
        // A digest (FNV-1a) of 300 playouts, 4 of them drawn by repetition.
        let mut digest: u64 = 0xCBF2_9CE4_8422_2325;
        let mut repetitions = 0;
        for seed in 0..300 {
            let line = describe(seed);
            repetitions += usize::from(line.contains("repetition"));
            for b in line.bytes().chain([b'\n']) {
                digest = (digest ^ u64::from(b)).wrapping_mul(0x0100_0000_01B3);
            }
        }
        assert_eq!(
            (format!("{digest:016x}"), repetitions),
            ("b00134f0c561d944".to_owned(), 4)
        );
    }
}
