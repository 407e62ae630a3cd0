//! The MCTS search benchmark (`emergo bench --search`): the search's playouts per second
//! against raw playouts, its tree memory second by second, thread scaling and contention.

use std::time::Duration;

use emergo_rules::Position;
use serde::Serialize;

use super::playouts::playouts;

/// One second of a search benchmark, read from a live snapshot at the end of the second.
#[derive(Clone, Debug, Default, Serialize)]
pub struct BenchSecond {
    /// Seconds since the search started (1 = the first second).
    pub second: u32,
    /// Playouts completed during this second.
    pub playouts: u64,
    /// Nodes in the tree at the end of the second.
    pub nodes: usize,
    /// Bytes the tree holds at the end of the second.
    pub tree_bytes: usize,
    /// Reclaims so far.
    pub reclaims: u32,
    /// The process's resident memory at the end of the second (Linux), bytes.
    pub rss_bytes: Option<u64>,
}

impl BenchSecond {
    /// Second `second`, ending at `snap`, after `done` playouts before it; the RSS is read now.
    fn ending<M>(second: u32, snap: &emergo_mcts::Snapshot<M>, done: u64) -> BenchSecond {
        BenchSecond {
            second,
            playouts: snap.playouts.saturating_sub(done),
            nodes: snap.nodes,
            tree_bytes: snap.tree_bytes,
            reclaims: snap.reclaims,
            rss_bytes: rss_bytes(),
        }
    }
}

/// The process's resident set size now (VmRSS), if the platform tells.
pub fn rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Runs `search` in the background to its limit, sampling a snapshot at the end of every second
/// for the timeline, and every 50 ms for the tree's bytes per playout before its first reclaim
/// (after a reclaim the tree no longer holds what the playouts built, so the ratio means
/// nothing). The ratio is `None` if the tree was reclaimed before the first sample.
fn run_with_timeline<G: emergo_mcts::Game>(
    search: emergo_mcts::Search<G>,
) -> (
    emergo_mcts::Snapshot<G::Move>,
    Vec<BenchSecond>,
    Option<f64>,
) {
    const SAMPLE: Duration = Duration::from_millis(50);
    let per_playout = |snap: &emergo_mcts::Snapshot<G::Move>| {
        (snap.playouts > 0).then(|| snap.tree_bytes as f64 / snap.playouts as f64)
    };
    let start = std::time::Instant::now();
    let handle = search.start();
    let mut timeline = Vec::new();
    let mut done = 0;
    let mut before_reclaim = None;
    let mut next_second = 1u32;
    for tick in 1u32.. {
        let due = SAMPLE.saturating_mul(tick).saturating_sub(start.elapsed());
        if handle.wait_timeout(due) {
            break;
        }
        let snap = handle.snapshot();
        if snap.reclaims == 0 {
            before_reclaim = per_playout(&snap);
        }
        if start.elapsed() >= Duration::from_secs(u64::from(next_second)) {
            timeline.push(BenchSecond::ending(next_second, &snap, done));
            done = snap.playouts;
            next_second += 1;
        }
    }
    let (search, snap) = handle.wait();
    // A search that ends on a whole second (its time limit) nearly always finishes just before
    // the tick that would record that second: its last second is then the final snapshot's,
    // taken within one tick of the second's end (so it holds at most a tick's playouts fewer).
    // The RSS is read before the tree is freed.
    let end = Duration::from_secs(u64::from(next_second));
    if start.elapsed() + SAMPLE >= end && snap.playouts > done {
        timeline.push(BenchSecond::ending(next_second, &snap, done));
    }
    drop(search);
    if snap.reclaims == 0 {
        before_reclaim = per_playout(&snap);
    }
    (snap, timeline, before_reclaim)
}

/// Figures from an MCTS search benchmark.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SearchBench {
    /// Search threads.
    pub threads: usize,
    /// The measured search second by second: does the tree keep growing at the same pace once
    /// it is full?
    pub timeline: Vec<BenchSecond>,
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
    /// Every round's raw and search rates (`--rounds`, one pair per round, raw first), the
    /// last round's being the one the other figures describe.
    pub rounds: Vec<RoundFigures>,
    /// The median of the rounds' `search_to_raw` (the mean of the middle two for an even
    /// count): on a shared machine one pair of runs can read anywhere in 65–95%, so this is
    /// the figure to compare.
    pub search_to_raw_median: f64,
    /// With more than one thread: playouts per second of a one-thread search of the same length
    /// and settings, run just before (`None` with one thread).
    pub single_thread_playouts_per_second: Option<f64>,
    /// With more than one thread: `playouts_per_second / (threads ×
    /// single_thread_playouts_per_second)`, 1.0 for perfect scaling.
    pub per_thread_efficiency: Option<f64>,
    /// Nodes in the tree at the end.
    pub nodes: usize,
    /// Whether the node cap was reached.
    pub node_cap_reached: bool,
    /// Bytes per tree node.
    pub bytes_per_node: usize,
    /// Bytes per edge (a legal move of an expanded node, apart from its node).
    pub bytes_per_edge: usize,
    /// Bytes the tree holds at the end (the search's own count: nodes, edges, chunks).
    pub tree_bytes: usize,
    /// The tree's memory per playout: `tree_bytes / playouts`, or, once the tree has been
    /// reclaimed (which drops most of what the playouts built), the same ratio at the last
    /// sample (every 50 ms) before the first reclaim; `None` if it came before the first one.
    pub bytes_per_playout: Option<f64>,
    /// The tree's memory limit (`SearchParams::max_tree_bytes`).
    pub max_tree_bytes: usize,
    /// Times the full tree dropped its least-visited subtrees to grow on.
    pub reclaims: u32,
    /// Nodes those reclaims dropped.
    pub nodes_reclaimed: u64,
    /// Seconds the search threads stood still for those reclaims.
    pub reclaim_seconds: f64,
    /// How often the search threads got in each other's way.
    pub contention: ContentionFigures,
    /// Peak resident memory of this process (VmHWM), when the OS reports it.
    pub peak_rss_bytes: Option<u64>,
    /// Deepest node.
    pub max_depth: u32,
    /// Nodes whose priors were searched again (`--mcts refine=...`; 0 without).
    pub refinements: u64,
    /// The search's best move.
    pub best_move: String,
    /// The search configuration (`--mcts`), in words.
    pub engine: String,
    /// Iterations per second: with evaluation at the leaf an iteration scores a leaf instead of
    /// playing a playout, so this is the search speed; `playouts_per_second` is the same count.
    pub iterations_per_second: f64,
}

/// One round of `emergo bench --search --rounds N`: raw playouts, then the search, each for the
/// bench's duration (raw at most 2 s).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct RoundFigures {
    /// Raw random playouts per second (all threads).
    pub raw_playouts_per_second: f64,
    /// Search playouts per second (all threads).
    pub playouts_per_second: f64,
    /// `playouts_per_second / raw_playouts_per_second`.
    pub search_to_raw: f64,
}

/// The median of `values` (the mean of the middle two for an even count; 0 for none).
fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// The contention counters of a search ([`emergo_mcts::Contention`]), in total and per 1,000
/// playouts: counters growing per playout as threads are added say how far the search scales.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ContentionFigures {
    /// Compare-exchanges lost to another thread.
    pub cas_failures: u64,
    /// Waits for another thread's expansion.
    pub expansion_waits: u64,
    /// Descents into a child another thread was exploring.
    pub virtual_loss_collisions: u64,
    /// The same three per 1,000 playouts.
    pub per_1000_playouts: ContentionRates,
}

/// Contention counters per 1,000 playouts.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ContentionRates {
    /// Compare-exchanges lost per 1,000 playouts.
    pub cas_failures: f64,
    /// Expansion waits per 1,000 playouts.
    pub expansion_waits: f64,
    /// Virtual-loss collisions per 1,000 playouts.
    pub virtual_loss_collisions: f64,
}

impl ContentionFigures {
    /// The figures of `contention` over `playouts` playouts.
    pub fn new(contention: emergo_mcts::Contention, playouts: u64) -> ContentionFigures {
        let per_1000 = |n: u64| {
            if playouts == 0 {
                0.0
            } else {
                n as f64 * 1000.0 / playouts as f64
            }
        };
        ContentionFigures {
            cas_failures: contention.cas_failures,
            expansion_waits: contention.expansion_waits,
            virtual_loss_collisions: contention.virtual_loss_collisions,
            per_1000_playouts: ContentionRates {
                cas_failures: per_1000(contention.cas_failures),
                expansion_waits: per_1000(contention.expansion_waits),
                virtual_loss_collisions: per_1000(contention.virtual_loss_collisions),
            },
        }
    }
}

/// Peak resident set size of this process, from `/proc/self/status` (Linux).
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// What `emergo bench --search` measures.
#[derive(Clone, Debug)]
pub struct SearchBenchOptions {
    /// How long each search runs.
    pub duration: Duration,
    /// Search threads.
    pub threads: usize,
    /// Seed of the search.
    pub seed: u64,
    /// Node cap of the tree.
    pub max_nodes: usize,
    /// Memory limit of the tree (`None`: the MCTS crate's default).
    pub max_tree_bytes: Option<usize>,
    /// The search configuration.
    pub config: emergo_engine::MctsConfig,
    /// Alternating (raw, search) pairs to measure (at least 1): the search/raw ratio is
    /// reported per round and as their median.
    pub rounds: usize,
}

/// Searches the initial position for `duration` on `threads` threads (no early stop) within
/// the node cap and memory limit, after measuring the raw playout rate for comparison and, with
/// more than one thread, a one-thread search of the same length (for the per-thread efficiency).
/// With `rounds` > 1 the raw and search runs alternate that many times (the one-thread
/// reference runs once, first), so that a machine whose speed drifts (shared caches, other
/// tenants) weighs on both sides of the ratio alike; the figures are the last round's, with
/// every round's rates and the median ratio beside them.
pub fn search(options: &SearchBenchOptions) -> SearchBench {
    use emergo_mcts::{Search, SearchParams};

    let threads = options.threads.max(1);
    // The bench measures full-length searches: early stopping is off, and the engine's
    // description says so.
    let config = &emergo_engine::MctsConfig {
        smart_pruning: false,
        ..options.config.clone()
    };
    let mut params = SearchParams {
        threads,
        seed: options.seed,
        max_time: Some(options.duration),
        max_nodes: options.max_nodes,
        ..SearchParams::default()
    };
    if let Some(bytes) = options.max_tree_bytes {
        params.max_tree_bytes = bytes;
    }
    config.apply(&mut params);
    let new_search = |params: SearchParams| {
        let state = emergo_engine::EmergoState::new(Position::initial())
            .with_knowledge(config.shared_knowledge());
        Search::new(state, params)
    };
    // The reference pass runs first, so that the measured search does not inherit a warm
    // machine the reference did not have.
    let single = (threads > 1).then(|| {
        new_search(SearchParams {
            threads: 1,
            ..params.clone()
        })
        .run()
        .playouts_per_second
    });
    let max_tree_bytes = params.max_tree_bytes;
    let raw_duration = options.duration.min(Duration::from_secs(2));
    let mut rounds = Vec::new();
    let (s, timeline, bytes_per_playout) = loop {
        let raw = playouts(raw_duration, threads, options.seed);
        let measured = run_with_timeline(new_search(params.clone()));
        rounds.push(RoundFigures {
            raw_playouts_per_second: raw.playouts_per_second,
            playouts_per_second: measured.0.playouts_per_second,
            search_to_raw: measured.0.playouts_per_second / raw.playouts_per_second.max(1e-9),
        });
        if rounds.len() >= options.rounds.max(1) {
            break measured;
        }
    };
    let last = rounds.last().copied().unwrap_or_default();
    let ratios: Vec<f64> = rounds.iter().map(|r| r.search_to_raw).collect();
    let per_thread_efficiency =
        single.map(|one| s.playouts_per_second / (threads as f64 * one.max(1e-9)));
    SearchBench {
        threads,
        timeline,
        seconds: s.elapsed.as_secs_f64(),
        playouts: s.playouts,
        playouts_per_second: s.playouts_per_second,
        raw_playouts_per_second: last.raw_playouts_per_second,
        search_to_raw: last.search_to_raw,
        search_to_raw_median: median(&ratios),
        rounds,
        single_thread_playouts_per_second: single,
        per_thread_efficiency,
        nodes: s.nodes,
        node_cap_reached: s.node_cap_reached,
        bytes_per_node: Search::<emergo_engine::EmergoState>::bytes_per_node(),
        bytes_per_edge: Search::<emergo_engine::EmergoState>::bytes_per_edge(),
        tree_bytes: s.tree_bytes,
        bytes_per_playout,
        max_tree_bytes,
        reclaims: s.reclaims,
        nodes_reclaimed: s.nodes_reclaimed,
        reclaim_seconds: s.reclaim_time.as_secs_f64(),
        contention: ContentionFigures::new(s.contention, s.playouts),
        peak_rss_bytes: peak_rss_bytes(),
        max_depth: s.max_depth,
        refinements: s.refinements,
        best_move: s.best_move.map(|m| m.to_string()).unwrap_or_default(),
        engine: config.describe(),
        iterations_per_second: s.playouts_per_second,
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contention_rates_are_per_thousand_playouts() {
        let c = emergo_mcts::Contention {
            cas_failures: 30,
            expansion_waits: 5,
            virtual_loss_collisions: 0,
        };
        let f = ContentionFigures::new(c, 10_000);
        assert_eq!(f.cas_failures, 30);
        assert_eq!(f.per_1000_playouts.cas_failures, 3.0);
        assert_eq!(f.per_1000_playouts.expansion_waits, 0.5);
        assert_eq!(f.per_1000_playouts.virtual_loss_collisions, 0.0);
        // No playouts: no rates, no division by zero.
        assert_eq!(
            ContentionFigures::new(c, 0).per_1000_playouts.cas_failures,
            0.0
        );
    }

    #[test]
    fn a_short_search_bench_reports_tree_memory_and_scaling() {
        let r = search(&SearchBenchOptions {
            duration: Duration::from_millis(100),
            threads: 2,
            seed: 3,
            max_nodes: 100_000,
            max_tree_bytes: Some(8 << 20),
            config: emergo_engine::MctsConfig::default(),
            rounds: 1,
        });
        assert!(r.playouts > 0 && r.tree_bytes > 0, "{r:?}");
        assert_eq!(r.rounds.len(), 1);
        assert_eq!(r.search_to_raw_median, r.search_to_raw);
        assert!(r.bytes_per_playout.is_some_and(|b| b > 0.0), "{r:?}");
        assert_eq!(r.max_tree_bytes, 8 << 20);
        assert!(r.single_thread_playouts_per_second.is_some_and(|p| p > 0.0));
        assert!(r.per_thread_efficiency.is_some_and(|e| e > 0.0));
    }

    #[test]
    fn a_search_that_ends_on_a_whole_second_records_that_second() {
        // The search ends at its 1 s time limit, nearly always before the tick that would
        // record second 1: the final snapshot must give it.
        let mut params = emergo_mcts::SearchParams {
            threads: 1,
            seed: 7,
            max_time: Some(Duration::from_secs(1)),
            max_nodes: 20_000,
            ..emergo_mcts::SearchParams::default()
        };
        emergo_engine::MctsConfig::uniform().apply(&mut params);
        let state = emergo_engine::EmergoState::new(Position::initial());
        let (snap, timeline, _) = run_with_timeline(emergo_mcts::Search::new(state, params));
        assert_eq!(timeline.len(), 1, "{timeline:?}");
        let second = &timeline[0];
        assert_eq!(second.second, 1);
        // Recorded by the final snapshot, or by a tick at 1 s while the search was finishing
        // its last playouts (on a loaded machine): never more than the search made.
        assert!(
            second.playouts <= snap.playouts,
            "{second:?} {}",
            snap.playouts
        );
        assert!(second.playouts > 0 && second.tree_bytes > 0, "{second:?}");
    }

    #[test]
    fn rounds_alternate_and_report_their_median() {
        let r = search(&SearchBenchOptions {
            duration: Duration::from_millis(60),
            threads: 1,
            seed: 5,
            max_nodes: 50_000,
            max_tree_bytes: Some(4 << 20),
            config: emergo_engine::MctsConfig::uniform(),
            rounds: 3,
        });
        assert_eq!(r.rounds.len(), 3, "{r:?}");
        for round in &r.rounds {
            assert!(round.raw_playouts_per_second > 0.0 && round.playouts_per_second > 0.0);
            let ratio = round.playouts_per_second / round.raw_playouts_per_second;
            assert!((round.search_to_raw - ratio).abs() < 1e-12, "{round:?}");
        }
        // The headline figures are the last round's; the median lies among the rounds'.
        let last = r.rounds[2];
        assert_eq!(r.search_to_raw, last.search_to_raw);
        assert_eq!(r.raw_playouts_per_second, last.raw_playouts_per_second);
        let (lo, hi) = r.rounds.iter().fold((f64::MAX, f64::MIN), |(lo, hi), x| {
            (lo.min(x.search_to_raw), hi.max(x.search_to_raw))
        });
        assert!(
            lo <= r.search_to_raw_median && r.search_to_raw_median <= hi,
            "{r:?}"
        );
        // No single thread reference with one thread.
        assert!(r.single_thread_playouts_per_second.is_none());
    }

    #[test]
    fn median_of_odd_even_and_empty_lists() {
        assert_eq!(median(&[]), 0.0);
        assert_eq!(median(&[0.8]), 0.8);
        assert_eq!(median(&[0.9, 0.7, 0.8]), 0.8);
        assert_eq!(median(&[0.9, 0.6, 0.7, 0.8]), 0.75);
    }
}
