//! `emergo bench`: raw random-playout speed of the rules core, on one or more threads.

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
struct Tally {
    playouts: u64,
    turns: u64,
    white: u64,
    black: u64,
    draws: u64,
    unfinished: u64,
}

fn run_thread(seed: u64, duration: Duration) -> Tally {
    let mut rng = playout_rng(seed);
    let start = Position::initial();
    let base = Repetitions::new(&start);
    let mut reps = Repetitions::default();
    let mut t = Tally::default();
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
    let tallies: Vec<Tally> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|i| s.spawn(move || run_thread(seed.wrapping_add(i as u64), duration)))
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    let seconds = began.elapsed().as_secs_f64();
    let mut total = Tally::default();
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

/// Figures from an MCTS search benchmark.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SearchBench {
    /// Search threads.
    pub threads: usize,
    /// Seconds searched.
    pub seconds: f64,
    /// Playouts completed by the search.
    pub playouts: u64,
    /// Search playouts per second (all threads).
    pub playouts_per_second: f64,
    /// Raw random playouts per second of the rules core on as many threads, measured just before.
    pub raw_playouts_per_second: f64,
    /// `playouts_per_second / raw_playouts_per_second`: the share left after tree overhead.
    pub search_to_raw: f64,
    /// Nodes in the tree at the end.
    pub nodes: usize,
    /// Whether the node cap was reached.
    pub node_cap_reached: bool,
    /// Bytes per tree node (children included).
    pub bytes_per_node: usize,
    /// Tree memory: nodes × bytes per node.
    pub tree_bytes: usize,
    /// Peak resident memory of this process (VmHWM), when the OS reports it.
    pub peak_rss_bytes: Option<u64>,
    /// Deepest node.
    pub max_depth: u32,
    /// The search's best move.
    pub best_move: String,
    /// The search configuration (`--mcts`), in words.
    pub engine: String,
    /// Iterations per second: with evaluation at the leaf an iteration scores a leaf instead of
    /// playing a playout, so this is the search speed; `playouts_per_second` is the same count.
    pub iterations_per_second: f64,
}

/// Peak resident set size of this process, from `/proc/self/status` (Linux).
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Searches the initial position for `duration` on `threads` threads (no early stop), with a
/// tree of at most `max_nodes` nodes, after measuring the raw playout rate for comparison.
pub fn search(
    duration: Duration,
    threads: usize,
    seed: u64,
    max_nodes: usize,
    config: &emergo_engine::MctsConfig,
) -> SearchBench {
    use emergo_mcts::{Search, SearchParams};

    let threads = threads.max(1);
    let raw = playouts(duration.min(Duration::from_secs(2)), threads, seed);
    let mut params = SearchParams {
        threads,
        seed,
        max_time: Some(duration),
        max_nodes,
        ..SearchParams::default()
    };
    config.apply(&mut params);
    params.smart_pruning = false;
    let state = crate::engine::EmergoState::new(Position::initial())
        .with_knowledge(config.shared_knowledge());
    let mut search = Search::new(state, params);
    let s = search.run();
    let bytes_per_node = Search::<crate::engine::EmergoState>::bytes_per_node();
    SearchBench {
        threads,
        seconds: s.elapsed.as_secs_f64(),
        playouts: s.playouts,
        playouts_per_second: s.playouts_per_second,
        raw_playouts_per_second: raw.playouts_per_second,
        search_to_raw: s.playouts_per_second / raw.playouts_per_second.max(1e-9),
        nodes: s.nodes,
        node_cap_reached: s.node_cap_reached,
        bytes_per_node,
        tree_bytes: s.nodes * bytes_per_node,
        peak_rss_bytes: peak_rss_bytes(),
        max_depth: s.max_depth,
        best_move: s.best_move.map(|m| m.to_string()).unwrap_or_default(),
        engine: config.describe(),
        iterations_per_second: s.playouts_per_second,
    }
}
