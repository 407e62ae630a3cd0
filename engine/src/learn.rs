//! Learning the evaluation weights from self-play: the "Texel" method of chess programming.
//!
//! 1. **Positions.** The alpha-beta engine plays itself at a small fixed depth from random
//!    openings, with a share of random moves for variety ([`generate`]). Every quiet position
//!    (no capture pending, game not over) is kept with the game's final result for its side to
//!    move: 1, ½ or 0.
//! 2. **Fit.** A logistic regression of those results on the evaluation's [`features`]:
//!    `P(win) = σ(w · x / LOGISTIC_SCALE)`, minimising the cross-entropy by full-batch gradient
//!    descent (Adam) from the current weights, with a little L2 regularisation ([`fit`]). The
//!    weights come out in centimen on the same logistic scale the MCTS uses for win
//!    probabilities, so its values are calibrated too.
//!
//! Everything is seeded: the same parameters give the same weights. `emergo learn-eval` runs it
//! and writes `engine/weights.txt`, which the engines load (embedded) at start-up.

use std::time::Duration;

use emergo_rules::{Game, Move, Player, Position};
use rand_xoshiro::Xoshiro256PlusPlus;
use rand_xoshiro::rand_core::{Rng, SeedableRng};

use crate::alphabeta::{AbLimits, AlphaBeta};
use crate::eval::{FEATURES, LOGISTIC_SCALE, Weights, features};

/// How positions are generated.
#[derive(Clone, Debug, PartialEq)]
pub struct SelfPlay {
    /// Games to play.
    pub games: usize,
    /// Depth of the alpha-beta self-play.
    pub depth: u32,
    /// Random turns at the start of each game.
    pub random_turns: usize,
    /// Probability of a random move at every later turn.
    pub epsilon: f64,
    /// Games longer than this are abandoned (their positions dropped: no result).
    pub max_turns: usize,
    /// Seed of everything random.
    pub seed: u64,
    /// Threads playing games.
    pub threads: usize,
    /// The weights the self-play engine evaluates with.
    pub weights: Weights,
}

impl Default for SelfPlay {
    fn default() -> Self {
        SelfPlay {
            games: 2000,
            depth: 2,
            random_turns: 6,
            epsilon: 0.08,
            max_turns: 400,
            seed: 1,
            threads: 2,
            weights: Weights::default(),
        }
    }
}

/// One training position: its features and the result for its side to move.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// [`features`] of the position.
    pub features: [i32; FEATURES],
    /// 1 (the side to move won), 0.5 (draw) or 0.
    pub result: f32,
}

/// The next move of a self-play game: a uniformly random legal move when `random`, else the
/// engine's choice at `limits` (also the value network's self-play, [`crate::distill`]).
pub(crate) fn self_play_move(
    game: &Game,
    engine: &mut AlphaBeta,
    limits: AbLimits,
    random: bool,
    rng: &mut Xoshiro256PlusPlus,
) -> Option<Move> {
    if random {
        let legal = game.legal_moves();
        legal
            .as_slice()
            .get((rng.next_u64() % legal.len().max(1) as u64) as usize)
            .copied()
    } else {
        engine.search_game(game, limits).best
    }
}

/// Plays one self-play game; returns its quiet positions with results, or nothing when the
/// game hit the turn cap.
fn play_one(cfg: &SelfPlay, seed: u64) -> Vec<Sample> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut engine = AlphaBeta::new(16, cfg.weights);
    let mut game = Game::new(Position::initial());
    let mut kept: Vec<(Player, [i32; FEATURES])> = Vec::new();
    let limits = AbLimits {
        max_depth: cfg.depth.max(1),
        ..AbLimits::default()
    };
    while game.outcome().is_none() {
        if game.moves().len() >= cfg.max_turns {
            return Vec::new();
        }
        let pos = *game.position();
        if !pos.has_capture() {
            kept.push((pos.side_to_move(), features(&pos)));
        }
        let random = game.moves().len() < cfg.random_turns
            || (rng.next_u64() as f64 / u64::MAX as f64) < cfg.epsilon;
        let Some(mv) = self_play_move(&game, &mut engine, limits, random, &mut rng) else {
            break;
        };
        if game.play(mv).is_err() {
            break;
        }
    }
    let winner = game.outcome().and_then(|o| o.result.winner());
    kept.into_iter()
        .map(|(side, features)| Sample {
            features,
            result: match winner {
                None => 0.5,
                Some(w) if w == side => 1.0,
                Some(_) => 0.0,
            },
        })
        .collect()
}

/// Plays `cfg.games` self-play games on `cfg.threads` threads and returns the positions, in a
/// deterministic order. `progress` is called with the number of games finished so far.
pub fn generate(cfg: &SelfPlay, progress: &(dyn Fn(usize) + Sync)) -> Vec<Sample> {
    let threads = cfg.threads.clamp(1, 64);
    let done = std::sync::atomic::AtomicUsize::new(0);
    let mut per_thread: Vec<Vec<(usize, Vec<Sample>)>> = Vec::new();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let done = &done;
                scope.spawn(move || {
                    let mut out = Vec::new();
                    for g in (t..cfg.games).step_by(threads) {
                        let seed = cfg.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ g as u64;
                        out.push((g, play_one(cfg, seed)));
                        let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                        progress(n);
                    }
                    out
                })
            })
            .collect();
        for h in handles {
            if let Ok(v) = h.join() {
                per_thread.push(v);
            }
        }
    });
    let mut all: Vec<(usize, Vec<Sample>)> = per_thread.into_iter().flatten().collect();
    all.sort_by_key(|(g, _)| *g);
    all.into_iter().flat_map(|(_, s)| s).collect()
}

/// What a fit did.
#[derive(Clone, Debug, PartialEq)]
pub struct FitReport {
    /// Positions used.
    pub samples: usize,
    /// Mean cross-entropy with the starting weights.
    pub loss_before: f64,
    /// Mean cross-entropy with the fitted weights.
    pub loss_after: f64,
    /// Time taken.
    pub elapsed: Duration,
}

/// The model's win probability for a position's features under weights `theta`.
fn predict(theta: &[f64; FEATURES], features: &[i32; FEATURES]) -> f64 {
    let z: f64 = theta
        .iter()
        .zip(features)
        .map(|(t, &x)| t * f64::from(x))
        .sum();
    1.0 / (1.0 + (-z).exp())
}

/// Mean cross-entropy of `samples` under weights `theta` (per logistic unit).
fn loss(samples: &[Sample], theta: &[f64; FEATURES]) -> f64 {
    let mut total = 0.0;
    for s in samples {
        let p = predict(theta, &s.features).clamp(1e-9, 1.0 - 1e-9);
        let y = f64::from(s.result);
        total -= y * p.ln() + (1.0 - y) * (1.0 - p).ln();
    }
    total / samples.len().max(1) as f64
}

/// Fits the weights to `samples` (logistic regression, see the module docs), starting from
/// `start`, for `iterations` steps of Adam. `pending_capture` is kept from `start` (quiet
/// positions never use it).
pub fn fit(samples: &[Sample], start: &Weights, iterations: usize) -> (Weights, FitReport) {
    let started = std::time::Instant::now();
    let scale = f64::from(LOGISTIC_SCALE);
    let mut theta: [f64; FEATURES] = start.values.map(|w| f64::from(w) / scale);
    let loss_before = loss(samples, &theta);
    let n = samples.len().max(1) as f64;
    let (lr, b1, b2, eps, l2) = (0.01, 0.9, 0.999, 1e-8, 1e-5);
    let (mut m, mut v) = ([0.0f64; FEATURES], [0.0f64; FEATURES]);
    for step in 1..=iterations {
        let mut grad = [0.0f64; FEATURES];
        for s in samples {
            let err = predict(&theta, &s.features) - f64::from(s.result);
            for (g, x) in grad.iter_mut().zip(s.features) {
                *g += err * f64::from(x);
            }
        }
        for i in 0..FEATURES {
            let g = grad[i] / n + l2 * theta[i];
            m[i] = b1 * m[i] + (1.0 - b1) * g;
            v[i] = b2 * v[i] + (1.0 - b2) * g * g;
            let mh = m[i] / (1.0 - b1.powi(step as i32));
            let vh = v[i] / (1.0 - b2.powi(step as i32));
            theta[i] -= lr * mh / (vh.sqrt() + eps);
        }
    }
    let loss_after = loss(samples, &theta);
    let weights = Weights {
        values: theta.map(|t| (t * scale).round().clamp(-10_000.0, 10_000.0) as i32),
        pending_capture: start.pending_capture,
        blockade: start.blockade,
        blockade_side: start.blockade_side,
        net: start.net,
    };
    (
        weights,
        FitReport {
            samples: samples.len(),
            loss_before,
            loss_after,
            elapsed: started.elapsed(),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn self_play_is_reproducible_and_labelled() {
        let cfg = SelfPlay {
            games: 4,
            depth: 1,
            threads: 2,
            ..SelfPlay::default()
        };
        let a = generate(&cfg, &|_| {});
        let b = generate(&cfg, &|_| {});
        assert_eq!(a, b);
        assert!(a.len() > 50, "{}", a.len());
        assert!(a.iter().all(|s| [0.0, 0.5, 1.0].contains(&s.result)));
    }

    #[test]
    fn fitting_recovers_a_planted_weight() {
        // Results drawn from a known model on feature 0 only: the fit must find its weight.
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let true_weight = 150.0;
        let samples: Vec<Sample> = (0..4000)
            .map(|_| {
                let x = (rng.next_u64() % 9) as i32 - 4;
                let p = 1.0 / (1.0 + (-(true_weight * f64::from(x)) / 200.0).exp());
                let mut features = [0; FEATURES];
                features[0] = x;
                let won = (rng.next_u64() as f64 / u64::MAX as f64) < p;
                Sample {
                    features,
                    result: if won { 1.0 } else { 0.0 },
                }
            })
            .collect();
        let (w, report) = fit(&samples, &Weights::material_only(), 1500);
        assert!(report.loss_after <= report.loss_before);
        assert!((w.values[0] - 150).abs() < 25, "{:?}", w.values);
    }
}
