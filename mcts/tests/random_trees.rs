//! Property test: on small random game trees (players not necessarily alternating, all three
//! results possible), the solver proves the exact minimax value of the root and the best move
//! achieves it.

use std::sync::Arc;

use emergo_mcts::{Game, Outcome, Player, Proven, Search, SearchParams, StopReason};
use proptest::prelude::*;
use rand_xoshiro::Xoshiro256PlusPlus;
use rand_xoshiro::rand_core::SeedableRng;

/// A node of an explicit game tree.
#[derive(Debug)]
enum Spot {
    Inner {
        to_move: Player,
        children: Vec<usize>,
    },
    Leaf(Outcome),
}

/// A position in an explicit game tree.
#[derive(Clone, Debug)]
struct TreeGame {
    spots: Arc<Vec<Spot>>,
    at: usize,
}

impl Game for TreeGame {
    type Move = u8;

    fn to_move(&self) -> Player {
        match &self.spots[self.at] {
            Spot::Inner { to_move, .. } => *to_move,
            Spot::Leaf(_) => Player::One,
        }
    }

    fn legal_moves(&self, out: &mut Vec<u8>) {
        out.clear();
        if let Spot::Inner { children, .. } = &self.spots[self.at] {
            out.extend(0..children.len() as u8);
        }
    }

    fn play(&mut self, mv: u8) {
        if let Spot::Inner { children, .. } = &self.spots[self.at] {
            self.at = children[usize::from(mv)];
        }
    }

    fn outcome(&self) -> Option<Outcome> {
        match &self.spots[self.at] {
            Spot::Leaf(outcome) => Some(*outcome),
            Spot::Inner { .. } => None,
        }
    }
}

/// A random tree of depth at most 5 with 1 to 3 children per inner node.
fn random_tree(seed: u64) -> Vec<Spot> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut spots = Vec::new();
    grow(&mut spots, &mut rng, 0);
    spots
}

fn grow(spots: &mut Vec<Spot>, rng: &mut Xoshiro256PlusPlus, depth: u32) -> usize {
    let index = spots.len();
    let roll = rng.next_u64();
    if depth >= 5 || (depth >= 1 && roll % 4 == 0) {
        let outcome = match rng.next_u64() % 3 {
            0 => Outcome::Win(Player::One),
            1 => Outcome::Win(Player::Two),
            _ => Outcome::Draw,
        };
        spots.push(Spot::Leaf(outcome));
        return index;
    }
    // Mostly alternating, sometimes the same player moves twice.
    let to_move = match (depth + u32::from(rng.next_u64() % 5 == 0)) % 2 {
        0 => Player::One,
        _ => Player::Two,
    };
    spots.push(Spot::Inner {
        to_move,
        children: Vec::new(),
    });
    let count = 1 + rng.next_u64() % 3;
    let children = (0..count)
        .map(|_| grow(spots, rng, depth + 1))
        .collect::<Vec<_>>();
    if let Spot::Inner { children: c, .. } = &mut spots[index] {
        *c = children;
    }
    index
}

/// Exact value of `at` for `player`.
fn minimax(spots: &[Spot], at: usize, player: Player) -> f32 {
    match &spots[at] {
        Spot::Leaf(outcome) => outcome.value_for(player),
        Spot::Inner { to_move, children } => {
            let best = children
                .iter()
                .map(|&c| minimax(spots, c, *to_move))
                .fold(0.0f32, f32::max);
            if *to_move == player { best } else { 1.0 - best }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn solver_matches_minimax(seed in any::<u64>(), threads in 1usize..=2) {
        let spots = Arc::new(random_tree(seed));
        let root = TreeGame { spots: Arc::clone(&spots), at: 0 };
        let Spot::Inner { to_move, children } = &spots[0] else {
            unreachable!("the root always has children");
        };
        let params = SearchParams {
            max_playouts: Some(50_000),
            threads,
            seed,
            smart_pruning: false,
            ..SearchParams::default()
        };
        let result = Search::new(root, params).run();
        let exact = minimax(&spots, 0, *to_move);
        if children.len() == 1 {
            prop_assert_eq!(result.stop_reason, Some(StopReason::SingleMove));
            return Ok(());
        }
        prop_assert_eq!(result.stop_reason, Some(StopReason::Solved));
        let expected = match exact {
            1.0 => "win",
            0.0 => "loss",
            _ => "draw",
        };
        let proven = match result.root_proven {
            Some(Proven::Win { .. }) => "win",
            Some(Proven::Loss { .. }) => "loss",
            Some(Proven::Draw) => "draw",
            None => "unproven",
        };
        prop_assert_eq!(proven, expected);
        prop_assert_eq!(result.root_value, exact);
        let best = result.best_move.unwrap_or(u8::MAX);
        let best_value = minimax(&spots, children[usize::from(best)], *to_move);
        prop_assert_eq!(best_value, exact, "best move {} in {:?}", best, spots);
    }
}
