//! Could a move policy learned from alpha-beta's choices give the MCTS better priors than the
//! softmax of quiescence scores it uses now? A quick filter before any match: on
//! positions from alpha-beta self-play, label each with the move a deeper alpha-beta search
//! plays, fit a linear softmax policy over per-move features, and compare on held-out positions
//! how much prior mass each policy puts on the labelled move, how often it ranks it first (ties
//! with it included, which flatters the quiescence prior: many moves score the same) and the
//! log-likelihood of the labels.
//!
//! `cargo run --release -p emergo-engine --example policy -- [games] [label depth] [seed]`

use emergo_engine::alphabeta::{AbLimits, AlphaBeta, quiesce};
use emergo_engine::eval::{FEATURES, Weights, features};
use emergo_rules::{Game, Move, Position};
use rand_xoshiro::Xoshiro256PlusPlus;
use rand_xoshiro::rand_core::{Rng, SeedableRng};

/// Per-move features, from the mover's point of view where that means anything.
const F: usize = 4 + FEATURES;

/// The features of move `m` from `pos`; the first is its quiescence score for the mover, in
/// men (the current prior's basis).
fn move_features(pos: &Position, m: Move, w: &Weights) -> [f32; F] {
    let mut next = *pos;
    next.play_unchecked(m);
    let q = -quiesce(&next, w, &mut 0);
    let mut f = [0.0; F];
    f[0] = q as f32 / 100.0;
    // A sacrifice: the opponent must capture after it.
    f[1] = f32::from(u8::from(next.has_capture()));
    f[2] = next.max_capture_len() as f32;
    f[3] = f32::from(u8::from(m.is_entry()));
    for (i, v) in features(&next).iter().enumerate() {
        f[4 + i] = *v as f32;
    }
    f
}

struct Sample {
    /// Features of every legal move.
    moves: Vec<[f32; F]>,
    /// Index of alpha-beta's move.
    label: usize,
}

fn generate(games: usize, depth: u32, seed: u64) -> Vec<Sample> {
    let w = Weights::default();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut player = AlphaBeta::new(18, w);
    // Cleared before each label (independent searches): 2^17 entries hold a depth-6 search
    // and are cheap to clear.
    let mut labeller = AlphaBeta::new(17, w);
    let mut out = Vec::new();
    for _ in 0..games {
        let mut game = Game::new(Position::initial());
        for turn in 0..400 {
            let legal: Vec<Move> = game.legal_moves().as_slice().to_vec();
            if legal.is_empty() || game.outcome().is_some() {
                break;
            }
            let pos = *game.position();
            let mv = if turn < 6 || rng.next_u32() % 10 == 0 {
                legal[(rng.next_u64() % legal.len() as u64) as usize]
            } else {
                let limits = AbLimits {
                    max_depth: 3,
                    ..AbLimits::default()
                };
                player.search_game(&game, limits).best.unwrap_or(legal[0])
            };
            if turn >= 6 && legal.len() > 1 && rng.next_u32() % 3 == 0 {
                labeller.clear();
                let limits = AbLimits {
                    max_depth: depth,
                    ..AbLimits::default()
                };
                if let Some(best) = labeller.search_game(&game, limits).best {
                    let moves = legal.iter().map(|&m| move_features(&pos, m, &w)).collect();
                    let label = legal.iter().position(|&m| m == best).unwrap_or(0);
                    out.push(Sample { moves, label });
                }
            }
            if game.play(mv).is_err() {
                break;
            }
        }
    }
    out
}

/// Softmax of `scores` (in place).
fn softmax(scores: &mut [f32]) {
    let top = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for s in scores.iter_mut() {
        *s = (*s - top).exp();
        sum += *s;
    }
    for s in scores.iter_mut() {
        *s /= sum;
    }
}

/// Mean prior on the label, top-1 rate and mean log-likelihood over `(label, priors)` pairs.
fn judge(judged: impl Iterator<Item = (usize, Vec<f32>)>) -> (f64, f64, f64) {
    let (mut mass, mut top, mut ll, mut n) = (0.0, 0.0, 0.0, 0.0);
    for (label, p) in judged {
        mass += f64::from(p[label]);
        ll += f64::from(p[label].max(1e-9)).ln();
        let best = p.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        top += f64::from(u8::from(p[label] == best));
        n += 1.0;
    }
    (mass / n, top / n, ll / n)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let games = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(60);
    let depth = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(6);
    let seed = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(1);
    let began = std::time::Instant::now();
    let samples = generate(games, depth, seed);
    println!("{} positions in {:.0?}", samples.len(), began.elapsed());
    let split = samples.len() * 4 / 5;
    let (train, test) = samples.split_at(split);

    for t in [100.0, 200.0, 400.0] {
        let (mass, top, ll) = judge(test.iter().map(|s| {
            // The quiescence score in centimen over the temperature.
            let mut p: Vec<f32> = s.moves.iter().map(|f| f[0] * 100.0 / t).collect();
            softmax(&mut p);
            (s.label, p)
        }));
        println!(
            "current prior (softmax of quiescence, T={t}): mass {mass:.3} top-1 {top:.3} log-lik {ll:.3}"
        );
    }

    // Standardise the features on the training set.
    let mut mean = [0.0f64; F];
    let mut sq = [0.0f64; F];
    let mut n = 0.0;
    for s in train {
        for f in &s.moves {
            for i in 0..F {
                mean[i] += f64::from(f[i]);
                sq[i] += f64::from(f[i]) * f64::from(f[i]);
            }
            n += 1.0;
        }
    }
    let mut sd = [1.0f64; F];
    for i in 0..F {
        mean[i] /= n;
        sd[i] = (sq[i] / n - mean[i] * mean[i]).sqrt().max(1e-6);
    }
    let norm = |f: &[f32; F]| -> [f32; F] {
        let mut g = [0.0; F];
        for i in 0..F {
            g[i] = ((f64::from(f[i]) - mean[i]) / sd[i]) as f32;
        }
        g
    };
    let train_n: Vec<Vec<[f32; F]>> = train
        .iter()
        .map(|s| s.moves.iter().map(norm).collect())
        .collect();
    let test_n: Vec<Vec<[f32; F]>> = test
        .iter()
        .map(|s| s.moves.iter().map(norm).collect())
        .collect();

    // Softmax regression by gradient ascent on the log-likelihood (Adam steps).
    let mut w = [0.0f32; F];
    w[0] = 1.0;
    let (mut m1, mut m2) = ([0.0f32; F], [0.0f32; F]);
    let probs = |w: &[f32; F], moves: &[[f32; F]]| -> Vec<f32> {
        let mut p: Vec<f32> = moves
            .iter()
            .map(|f| f.iter().zip(w).map(|(a, b)| a * b).sum())
            .collect();
        softmax(&mut p);
        p
    };
    for step in 1..=300 {
        let mut grad = [0.0f32; F];
        for (s, moves) in train.iter().zip(&train_n) {
            let p = probs(&w, moves);
            for (j, f) in moves.iter().enumerate() {
                let coef = f32::from(u8::from(j == s.label)) - p[j];
                for i in 0..F {
                    grad[i] += coef * f[i];
                }
            }
        }
        for i in 0..F {
            let g = grad[i] / train.len() as f32;
            m1[i] = 0.9 * m1[i] + 0.1 * g;
            m2[i] = 0.999 * m2[i] + 0.001 * g * g;
            let mh = m1[i] / (1.0 - 0.9f32.powi(step));
            let vh = m2[i] / (1.0 - 0.999f32.powi(step));
            w[i] += 0.05 * mh / (vh.sqrt() + 1e-8);
        }
    }
    let (mass, top, ll) = judge(
        test.iter()
            .zip(&test_n)
            .map(|(s, moves)| (s.label, probs(&w, moves))),
    );
    println!("learned linear policy: mass {mass:.3} top-1 {top:.3} log-lik {ll:.3}");
    let names = ["quiescence", "sacrifice", "opp_max_chain", "entry"];
    for i in 0..F {
        let name = if i < 4 {
            names[i]
        } else {
            emergo_engine::eval::FEATURE_NAMES[i - 4]
        };
        println!("  {name:18} {:+.3}", w[i]);
    }
}
