//! Playing strength, small and deterministic enough for CI (fixed playouts and depths, fixed
//! seeds, one thread): the default MCTS must beat the baselines and must not lose to the
//! alpha-beta engine at low depth, and the alpha-beta engine must beat the first version's
//! uniform-playout MCTS. The long time-based matches are benchmarks, run by hand with
//! `emergo arena`; `docs/STRENGTH.md` has their commands and results.

use emergo_cli::players::{
    AbPlayer, GreedyPlayer, MctsPlayer, MovePicker, RandomPlayer, play_game,
};
use emergo_engine::{AbLimits, MctsConfig};
use emergo_rules::{Game, Position};

/// A random opening of `turns` turns (seeded), so that games differ.
fn opening(seed: u64, turns: usize) -> Game {
    let mut player = RandomPlayer::new(seed);
    let mut game = Game::new(Position::initial());
    while game.moves().len() < turns {
        match player.pick(&game) {
            Some(m) => game.play(m).unwrap(),
            None => break,
        }
    }
    game
}

/// The first player's score over `pairs` colour-swapped pairs of games.
fn score(
    pairs: u64,
    mut first: impl FnMut(u64) -> Box<dyn MovePicker>,
    mut second: impl FnMut(u64) -> Box<dyn MovePicker>,
) -> f64 {
    let mut total = 0.0;
    for p in 0..pairs {
        for swap in [false, true] {
            let seed = 1000 + 2 * p + u64::from(swap);
            let (mut a, mut b) = (first(seed), second(seed));
            let start = opening(77 + p, 4);
            total += if swap {
                1.0 - play_game(start, b.as_mut(), a.as_mut(), 600).white_score()
            } else {
                play_game(start, a.as_mut(), b.as_mut(), 600).white_score()
            };
        }
    }
    total / (2 * pairs) as f64
}

fn default_mcts(playouts: u64) -> impl FnMut(u64) -> Box<dyn MovePicker> {
    move |seed| Box::new(MctsPlayer::new(Some(playouts), None, 1, seed))
}

fn alphabeta(depth: u32) -> impl FnMut(u64) -> Box<dyn MovePicker> {
    move |_| {
        Box::new(AbPlayer::new(AbLimits {
            max_depth: depth,
            ..AbLimits::default()
        }))
    }
}

#[test]
fn default_mcts_beats_random() {
    let s = score(2, default_mcts(2_000), |seed| {
        Box::new(RandomPlayer::new(seed))
    });
    assert_eq!(s, 1.0, "default MCTS scored {s} against random");
}

#[test]
fn default_mcts_beats_greedy() {
    let s = score(2, default_mcts(2_000), |seed| {
        Box::new(GreedyPlayer::new(seed))
    });
    assert!(s >= 0.75, "default MCTS scored {s} against greedy");
}

#[test]
fn default_mcts_beats_shallow_alpha_beta() {
    let s = score(2, default_mcts(5_000), alphabeta(2));
    assert!(
        s >= 0.75,
        "default MCTS scored {s} against alpha-beta depth 2"
    );
}

#[test]
fn alpha_beta_beats_the_first_versions_mcts() {
    let v1 = |seed| -> Box<dyn MovePicker> {
        Box::new(
            MctsPlayer::new(Some(5_000), None, 1, seed).with_config(&MctsConfig::first_version()),
        )
    };
    let s = score(2, alphabeta(4), v1);
    assert!(
        s >= 0.75,
        "alpha-beta depth 4 scored {s} against the first version's MCTS"
    );
}
