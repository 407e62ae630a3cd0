//! Playing levels 1–8: weaker opponents made from the engine itself, for players who want a game
//! they can win.
//!
//! A level is the same search with fewer playouts and some noise in the choice of the move:
//! below the top level the move is drawn from the root moves in proportion to a power of their
//! visits, so a weak level mostly plays moves the search liked (plausible moves, not random
//! ones) and sometimes one it barely looked at. Few playouts make the visits themselves a rough
//! guide: the engine's priors decide, so its mistakes are those of a player who trusts first
//! impressions (a capture chain that walks into a bigger one, an entry that feeds a man).
//! Level 8 is the full engine on the budget the client gave. The numbers below were set by
//! matches, each level against the one below (`docs/STRENGTH.md`, "Playing levels").

use emergo_mcts::Rng;
use rand_xoshiro::rand_core::{Rng as _, SeedableRng};

/// A playing level, 1 (weakest) to 8 (the full engine). Constructed only through
/// [`Level::new`], so a `Level` always names a level that exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Level(u8);

/// How a level plays: its search budget and the noise of its choice.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LevelPlan {
    /// Playouts per move (`None`: the client's budget, the full engine).
    pub max_playouts: Option<u64>,
    /// Exponent applied to each root move's visits before drawing a move in proportion to them
    /// (0: no draw, the search's best move). 1 draws in proportion to the visits; below 1 the
    /// draw flattens towards moves the search looked at less.
    pub visit_power: f32,
    /// Pseudo-visits added to every root move before the power: how much weight moves the
    /// search never tried keep. Large values make a level close to random.
    pub floor: f32,
}

impl Level {
    /// The weakest level.
    pub const MIN: Level = Level(1);
    /// The full engine.
    pub const MAX: Level = Level(8);

    /// The level `n`, if it exists (1..=8).
    pub fn new(n: u32) -> Option<Level> {
        (1..=8).contains(&n).then_some(Level(n as u8))
    }

    /// The level's number, 1..=8.
    pub fn number(self) -> u32 {
        u32::from(self.0)
    }

    /// How this level searches and chooses.
    pub fn plan(self) -> LevelPlan {
        let (max_playouts, visit_power, floor) = match self.0 {
            1 => (Some(8), 1.0, 1_000.0),
            2 => (Some(32), 1.0, 1.0),
            3 => (Some(80), 1.0, 0.2),
            4 => (Some(200), 1.3, 0.0),
            5 => (Some(600), 2.0, 0.0),
            6 => (Some(1_500), 3.0, 0.0),
            7 => (Some(3_000), 0.0, 0.0),
            _ => (None, 0.0, 0.0),
        };
        LevelPlan {
            max_playouts,
            visit_power,
            floor,
        }
    }
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "level {}", self.0)
    }
}

/// What a level needs to know of a root move.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Candidate {
    /// Playouts through the move.
    pub visits: u64,
    /// The solver proved the move wins.
    pub proven_win: bool,
    /// The solver proved the move loses.
    pub proven_loss: bool,
}

impl LevelPlan {
    /// The index of the move this level plays among `moves` (the search's root moves, best
    /// first, as the snapshot lists them), drawn with `seed`; `None` when there are none.
    ///
    /// A proven win is always taken and a proven loss never chosen while another move is not
    /// proven lost: a level plays worse, not absurdly (a player of any strength takes a
    /// win the engine has proven, and would see it could not escape a proven loss by chance).
    pub fn choose(&self, moves: &[Candidate], seed: u64) -> Option<usize> {
        if moves.is_empty() {
            return None;
        }
        if self.visit_power <= 0.0 {
            return Some(0);
        }
        if let Some(win) = moves.iter().position(|m| m.proven_win) {
            return Some(win);
        }
        let open = |m: &Candidate| !m.proven_loss || moves.iter().all(|m| m.proven_loss);
        let weight = |m: &Candidate| {
            if open(m) {
                f64::from((m.visits as f32 + self.floor).powf(self.visit_power))
            } else {
                0.0
            }
        };
        let total: f64 = moves.iter().map(weight).sum();
        if !(total > 0.0 && total.is_finite()) {
            return Some(0);
        }
        let mut rng = Rng::seed_from_u64(seed);
        // 53 random bits: a uniform draw in [0, total).
        let mut x = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * total;
        for (i, m) in moves.iter().enumerate() {
            let w = weight(m);
            if x < w {
                return Some(i);
            }
            x -= w;
        }
        // Rounding left the draw past the last weight: the last open move.
        moves.iter().rposition(open)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(visits: u64) -> Candidate {
        Candidate {
            visits,
            proven_win: false,
            proven_loss: false,
        }
    }

    #[test]
    fn levels_exist_from_one_to_eight() {
        assert_eq!(Level::new(0), None);
        assert_eq!(Level::new(9), None);
        assert_eq!(Level::new(1), Some(Level::MIN));
        assert_eq!(Level::new(8), Some(Level::MAX));
        assert_eq!(Level::MAX.plan().max_playouts, None);
        // Every level below the top searches less than the one above it.
        let caps: Vec<u64> = (1..8)
            .map(|n| Level::new(n).unwrap().plan().max_playouts.unwrap())
            .collect();
        assert!(caps.windows(2).all(|w| w[0] < w[1]), "{caps:?}");
    }

    #[test]
    fn the_top_levels_play_the_best_move() {
        let moves = [cand(10), cand(500), cand(3)];
        for n in [7, 8] {
            let plan = Level::new(n).unwrap().plan();
            assert!((0..50).all(|seed| plan.choose(&moves, seed) == Some(0)));
        }
    }

    #[test]
    fn draws_follow_the_visits() {
        let plan = LevelPlan {
            max_playouts: Some(100),
            visit_power: 1.0,
            floor: 0.0,
        };
        let moves = [cand(75), cand(25), cand(0)];
        let mut counts = [0; 3];
        for seed in 0..4000 {
            counts[plan.choose(&moves, seed).unwrap()] += 1;
        }
        assert_eq!(
            counts[2], 0,
            "an unvisited move without a floor is never drawn"
        );
        assert!((2800..3200).contains(&counts[0]), "{counts:?}");
        // The same seed, the same move.
        assert_eq!(plan.choose(&moves, 7), plan.choose(&moves, 7));
    }

    #[test]
    fn a_floor_gives_unvisited_moves_a_chance() {
        let plan = Level::MIN.plan();
        let moves = [cand(8), cand(0), cand(0), cand(0)];
        let unvisited = (0..1000)
            .filter(|&seed| plan.choose(&moves, seed) != Some(0))
            .count();
        assert!(unvisited > 300, "{unvisited}");
    }

    #[test]
    fn proofs_are_respected() {
        let plan = Level::MIN.plan();
        let win = Candidate {
            proven_win: true,
            ..cand(0)
        };
        let loss = Candidate {
            proven_loss: true,
            ..cand(50)
        };
        assert!((0..100).all(|s| plan.choose(&[cand(5), win], s) == Some(1)));
        assert!((0..100).all(|s| plan.choose(&[loss, cand(0)], s) == Some(1)));
        // When every move loses, one of them is still played.
        assert!(plan.choose(&[loss, loss], 3).is_some());
        assert_eq!(plan.choose(&[], 3), None);
    }
}
