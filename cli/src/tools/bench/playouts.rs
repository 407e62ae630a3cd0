//! Raw random-playout speed of the rules core, on one or more threads: the yardstick the
//! search benchmark divides by.

use std::time::{Duration, Instant};

use emergo_rules::{GameResult, Position, Repetitions, playout_rng, random_playout};
use serde::Serialize;

/// Turn cap for benchmark playouts (RULES.md §13 measures with 400).
pub const PLAYOUT_CAP: u32 = 400;

/// Figures from a playout benchmark.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PlayoutBench {
    /// Threads used.
    pub threads: usize,
    /// Wall-clock seconds measured.
    pub seconds: f64,
    /// Playouts completed.
    pub playouts: u64,
    /// Playouts per second, all threads together.
    pub playouts_per_second: f64,
    /// Playouts per second per thread.
    pub playouts_per_second_per_thread: f64,
    /// Mean playout length in turns.
    pub mean_turns: f64,
    /// Share of playouts won by White.
    pub white_wins: f64,
    /// Share won by Black.
    pub black_wins: f64,
    /// Share drawn (blocked, no legal entry or repetition).
    pub draws: f64,
    /// Share unfinished at the turn cap.
    pub unfinished: f64,
}

#[derive(Default)]
struct PlayoutCount {
    playouts: u64,
    turns: u64,
    white: u64,
    black: u64,
    draws: u64,
    unfinished: u64,
}

fn run_thread(seed: u64, duration: Duration) -> PlayoutCount {
    let mut rng = playout_rng(seed);
    let start = Position::initial();
    let base = Repetitions::new(&start);
    let mut reps = Repetitions::default();
    let mut t = PlayoutCount::default();
    let began = Instant::now();
    // Check the clock every few playouts only; a playout takes microseconds.
    while began.elapsed() < duration {
        for _ in 0..64 {
            let mut pos = start;
            reps.copy_from(&base);
            let p = random_playout(&mut pos, &mut reps, &mut rng, PLAYOUT_CAP);
            t.playouts += 1;
            t.turns += u64::from(p.turns);
            match p.outcome.map(|o| o.result) {
                Some(GameResult::WhiteWins) => t.white += 1,
                Some(GameResult::BlackWins) => t.black += 1,
                Some(GameResult::Draw) => t.draws += 1,
                None => t.unfinished += 1,
            }
        }
    }
    t
}

/// Runs uniformly random playouts from the initial position on `threads` threads for about
/// `duration`.
pub fn playouts(duration: Duration, threads: usize, seed: u64) -> PlayoutBench {
    let threads = threads.max(1);
    let began = Instant::now();
    let tallies: Vec<PlayoutCount> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|i| s.spawn(move || run_thread(seed.wrapping_add(i as u64), duration)))
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    let seconds = began.elapsed().as_secs_f64();
    let mut total = PlayoutCount::default();
    for t in tallies {
        total.playouts += t.playouts;
        total.turns += t.turns;
        total.white += t.white;
        total.black += t.black;
        total.draws += t.draws;
        total.unfinished += t.unfinished;
    }
    let n = total.playouts.max(1) as f64;
    let pps = total.playouts as f64 / seconds;
    PlayoutBench {
        threads,
        seconds,
        playouts: total.playouts,
        playouts_per_second: pps,
        playouts_per_second_per_thread: pps / threads as f64,
        mean_turns: total.turns as f64 / n,
        white_wins: total.white as f64 / n,
        black_wins: total.black as f64 / n,
        draws: total.draws as f64 / n,
        unfinished: total.unfinished as f64 / n,
    }
}
