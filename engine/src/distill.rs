//! Training data for the value network ([`crate::value_net`]): positions from alpha-beta
//! self-play, each labelled with what a deeper alpha-beta search says of it.
//!
//! 1. **Positions.** The alpha-beta engine plays itself at a small depth after 4–9 random
//!    turns, with one move in eight random, so that the positions include the odd ones a
//!    search tree is full of. Every quiet position (no capture pending, game not over) is kept.
//! 2. **Labels.** Each kept position is scored by an alpha-beta search `label_depth` plies
//!    deep (quiescence at its horizon), for its side to move, with the alpha-beta engine's own
//!    evaluation (the linear one: the labels never depend on an earlier network).
//! 3. **Split.** Whole games go to the training or the held-out set (one in ten held out):
//!    neighbouring positions of a game are alike, so splitting positions would flatter the fit.
//!
//! Everything is seeded per game, and each game starts from empty tables, so the same settings
//! give the same data on any number of threads. Data can be kept as text
//! ([`to_text`]/[`parse`]: `game<TAB>FEN<TAB>score` lines) to train again without replaying.

use std::sync::atomic::{AtomicUsize, Ordering};

use emergo_rules::{Game, Position};
use rand_xoshiro::Xoshiro256PlusPlus;
use rand_xoshiro::rand_core::{Rng, SeedableRng};

use crate::alphabeta::{AbLimits, AlphaBeta};
use crate::eval::{LOGISTIC_SCALE, Weights};
use crate::learn::self_play_move;
use crate::value_net::{TrainSample, encode};

/// How the data is made.
#[derive(Clone, Debug, PartialEq)]
pub struct DistillConfig {
    /// Self-play games.
    pub games: usize,
    /// Depth of the self-play searches.
    pub play_depth: u32,
    /// Depth of the labelling searches.
    pub label_depth: u32,
    /// Games longer than this many turns are cut (their positions are kept).
    pub max_turns: usize,
    /// Threads playing and labelling games.
    pub threads: usize,
    /// Seed of everything random.
    pub seed: u64,
}

impl Default for DistillConfig {
    fn default() -> Self {
        DistillConfig {
            games: 1200,
            play_depth: 3,
            label_depth: 6,
            max_turns: 300,
            threads: 2,
            seed: 1,
        }
    }
}

/// A labelled position.
#[derive(Clone, Debug, PartialEq)]
pub struct Labelled {
    /// The game it comes from (for the split).
    pub game: u64,
    /// The position (quiet).
    pub position: Position,
    /// The labelling search's score for the side to move, in centimen.
    pub score: i32,
}

/// One game's quiet positions, played with `player` at `depth`.
fn play_one(player: &mut AlphaBeta, cfg: &DistillConfig, seed: u64) -> Vec<Position> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    player.forget();
    let mut game = Game::new(Position::initial());
    let random_turns = 4 + (rng.next_u64() % 6) as usize;
    let limits = AbLimits {
        max_depth: cfg.play_depth.max(1),
        ..AbLimits::default()
    };
    let mut kept = Vec::new();
    while game.outcome().is_none() && game.moves().len() < cfg.max_turns {
        let pos = *game.position();
        if !pos.has_capture() {
            kept.push(pos);
        }
        let random = game.moves().len() < random_turns || rng.next_u64() % 8 == 0;
        let Some(mv) = self_play_move(&game, player, limits, random, &mut rng) else {
            break;
        };
        if game.play(mv).is_err() {
            break;
        }
    }
    kept
}

/// Plays and labels `cfg.games` games on `cfg.threads` threads; the positions come back in
/// game order. `progress` is called with the number of games done so far.
pub fn generate(cfg: &DistillConfig, progress: &(dyn Fn(usize) + Sync)) -> Vec<Labelled> {
    let threads = cfg.threads.clamp(1, 256);
    let done = AtomicUsize::new(0);
    let mut per_game: Vec<(usize, Vec<Labelled>)> = Vec::new();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let done = &done;
                scope.spawn(move || {
                    let mut player = AlphaBeta::new(18, Weights::default());
                    let mut labeller = AlphaBeta::new(20, Weights::default());
                    let mut mine = Vec::new();
                    for g in (t..cfg.games).step_by(threads) {
                        let seed = cfg.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ g as u64;
                        labeller.forget();
                        let labelled = play_one(&mut player, cfg, seed)
                            .into_iter()
                            .map(|position| Labelled {
                                game: g as u64,
                                score: labeller.score(&position, cfg.label_depth),
                                position,
                            })
                            .collect();
                        mine.push((g, labelled));
                        progress(done.fetch_add(1, Ordering::Relaxed) + 1);
                    }
                    mine
                })
            })
            .collect();
        for h in handles {
            if let Ok(v) = h.join() {
                per_game.extend(v);
            }
        }
    });
    per_game.sort_by_key(|(g, _)| *g);
    per_game.into_iter().flat_map(|(_, v)| v).collect()
}

/// The data as text, a `game<TAB>FEN<TAB>score` line per position.
pub fn to_text(data: &[Labelled]) -> String {
    let mut out = String::new();
    for l in data {
        out.push_str(&format!("{}\t{}\t{}\n", l.game, l.position, l.score));
    }
    out
}

/// Reads [`to_text`]'s lines. Errors name the first bad line.
pub fn parse(text: &str) -> Result<Vec<Labelled>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, line)| {
            let mut parts = line.split('\t');
            let bad = || format!("line {}: expected game<TAB>FEN<TAB>score", i + 1);
            let (Some(g), Some(fen), Some(score), None) =
                (parts.next(), parts.next(), parts.next(), parts.next())
            else {
                return Err(bad());
            };
            Ok(Labelled {
                game: g.parse().map_err(|_| bad())?,
                position: fen.parse().map_err(|e| format!("line {}: {e}", i + 1))?,
                score: score.parse().map_err(|_| bad())?,
            })
        })
        .collect()
}

/// Whether a game's positions are held out (one game in ten, by a hash of its number).
pub fn held_out(game: u64) -> bool {
    (game.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) % 10 == 0
}

/// Training samples from labelled positions, with the linear score of `weights`: the
/// training set and the held-out set.
pub fn samples(data: &[Labelled], weights: &Weights) -> (Vec<TrainSample>, Vec<TrainSample>) {
    let (mut train, mut test) = (Vec::new(), Vec::new());
    for l in data {
        let sample = TrainSample {
            input: encode(&l.position, weights),
            target: 1.0 / (1.0 + (-(l.score as f32) / LOGISTIC_SCALE).exp()),
        };
        if held_out(l.game) {
            test.push(sample);
        } else {
            train.push(sample);
        }
    }
    (train, test)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_is_reproducible_on_any_number_of_threads_and_round_trips() {
        let cfg = DistillConfig {
            games: 4,
            play_depth: 1,
            label_depth: 2,
            max_turns: 60,
            threads: 1,
            seed: 5,
        };
        let one = generate(&cfg, &|_| {});
        let two = generate(
            &DistillConfig {
                threads: 2,
                ..cfg.clone()
            },
            &|_| {},
        );
        assert_eq!(one, two);
        assert!(one.len() > 40, "{}", one.len());
        assert!(one.iter().all(|l| !l.position.has_capture()));
        assert_eq!(parse(&to_text(&one)), Ok(one.clone()));
        assert!(parse("1\tnot a fen\t3").unwrap_err().starts_with("line 1"));
        assert!(parse("1\t9/9/9/9/9/9/9/9/9 w 0 12,12").is_err());
        let (train, test) = samples(&one, &Weights::hand_set());
        assert_eq!(train.len() + test.len(), one.len());
    }
}
