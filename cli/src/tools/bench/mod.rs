//! `emergo bench`: random playouts per second of the rules core ([`playouts`]), or of the MCTS
//! search with its tree ([`search`]), as text for people or one JSON object for scripts.

mod playouts;
mod search;

use std::io::Write;
use std::time::Duration;

use clap::Args;

pub use playouts::{PLAYOUT_CAP, PlayoutBench, playouts};
pub use search::{
    BenchSecond, ContentionFigures, ContentionRates, RoundFigures, SearchBench, SearchBenchOptions,
    peak_rss_bytes, rss_bytes, search,
};

use super::ToolError;

/// Flags of `emergo bench`.
#[derive(Clone, Debug, Args)]
pub struct BenchArgs {
    /// How long to measure, in seconds.
    #[arg(long, default_value_t = 5.0)]
    pub seconds: f64,
    /// Threads running playouts.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Benchmark the MCTS search (tree included) instead of raw playouts.
    #[arg(long)]
    pub search: bool,
    /// With --search: the node cap of the tree.
    #[arg(long, default_value_t = 2_000_000)]
    pub nodes: usize,
    /// With --search: the tree's memory limit, e.g. 64MiB or 2GiB (default: the search
    /// library's, 256MiB); a full tree reclaims its least-visited subtrees and grows on.
    #[arg(long, value_name = "SIZE", value_parser = emergo_bot_server::config::parse_byte_size)]
    pub tree_memory: Option<u64>,
    /// With --search: the search configuration, as for `bot-server --mcts` (default: the
    /// server's default engine; `config=uniform` for uniform random playouts, `config=v1`
    /// for the first version's engine).
    #[arg(long, default_value = "config=strong", value_parser = emergo_bot_server::config::parse_mcts)]
    pub mcts: emergo_engine::MctsConfig,
    /// With --search: alternate raw playouts and the search this many times (1–100) and
    /// report every round's search/raw ratio and their median (the figures are the last
    /// round's).
    #[arg(long, default_value_t = 1)]
    pub rounds: usize,
}

/// Runs `emergo bench`, writing its report to `out`.
pub fn run(args: BenchArgs, out: &mut impl Write) -> Result<(), ToolError> {
    let invalid = |why: &str| Err(ToolError::Invalid(why.to_owned()));
    let seconds = args.seconds;
    if !(seconds.is_finite() && seconds > 0.0 && seconds <= 3600.0) {
        return Err(ToolError::Invalid(format!(
            "--seconds {seconds}: must be more than 0 and at most 3600 (e.g. 0.5 or 10)"
        )));
    }
    if args.threads == 0 || args.threads > 1024 {
        return invalid("--threads must be between 1 and 1024");
    }
    if args.rounds != 1 && !args.search {
        return invalid("--rounds goes with --search (raw playouts alone have no ratio)");
    }
    let duration = Duration::from_secs_f64(seconds);
    if !args.search {
        let r = playouts(duration, args.threads, args.seed);
        if args.json {
            writeln!(out, "{}", serde_json::to_string(&r)?)?;
        } else {
            write_playouts(out, &r)?;
        }
        return Ok(());
    }
    if args.nodes == 0 || args.nodes > 200_000_000 {
        return invalid("--nodes must be between 1 and 200000000");
    }
    if args.tree_memory.is_some_and(|b| b < 1 << 20) {
        return invalid("--tree-memory must be at least 1MiB");
    }
    if args.rounds == 0 || args.rounds > 100 {
        return invalid("--rounds must be between 1 and 100");
    }
    let r = search(&SearchBenchOptions {
        duration,
        threads: args.threads,
        seed: args.seed,
        max_nodes: args.nodes,
        max_tree_bytes: args
            .tree_memory
            .map(|b| usize::try_from(b).unwrap_or(usize::MAX)),
        config: args.mcts,
        rounds: args.rounds,
    });
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&r)?)?;
    } else {
        write_search(out, &r)?;
    }
    Ok(())
}

/// Mebibytes, for the text report.
fn mib(bytes: u64) -> f64 {
    bytes as f64 / 1048576.0
}

/// `12.3 MiB`, or `n/a` where the platform does not tell.
fn mib_or_na(bytes: Option<u64>) -> String {
    bytes.map_or("n/a".to_owned(), |b| format!("{:.1} MiB", mib(b)))
}

/// The raw playout benchmark as two lines of text.
fn write_playouts(out: &mut impl Write, r: &PlayoutBench) -> std::io::Result<()> {
    writeln!(
        out,
        "{} playouts in {:.2} s on {} thread(s): {:.0} playouts/s ({:.0} per thread), mean {:.1} turns",
        r.playouts,
        r.seconds,
        r.threads,
        r.playouts_per_second,
        r.playouts_per_second_per_thread,
        r.mean_turns
    )?;
    writeln!(
        out,
        "white {:.1}%, black {:.1}%, draws {:.1}%, unfinished at {} turns {:.1}%",
        100.0 * r.white_wins,
        100.0 * r.black_wins,
        100.0 * r.draws,
        PLAYOUT_CAP,
        100.0 * r.unfinished
    )
}

/// The search benchmark as text: speed against raw playouts, scaling, the tree, reclaims, the
/// timeline and contention, a line each.
fn write_search(out: &mut impl Write, r: &SearchBench) -> std::io::Result<()> {
    writeln!(out, "engine: {}", r.engine)?;
    writeln!(
        out,
        "search: {} playouts in {:.2} s on {} thread(s): {:.0} playouts/s = {:.1}% of raw ({:.0}/s)",
        r.playouts,
        r.seconds,
        r.threads,
        r.playouts_per_second,
        100.0 * r.search_to_raw,
        r.raw_playouts_per_second
    )?;
    if r.rounds.len() > 1 {
        let each: Vec<String> = r
            .rounds
            .iter()
            .map(|round| format!("{:.1}%", 100.0 * round.search_to_raw))
            .collect();
        writeln!(
            out,
            "search/raw over {} alternating rounds: median {:.1}% ({})",
            r.rounds.len(),
            100.0 * r.search_to_raw_median,
            each.join(", ")
        )?;
    }
    if let (Some(one), Some(efficiency)) =
        (r.single_thread_playouts_per_second, r.per_thread_efficiency)
    {
        writeln!(
            out,
            "scaling: 1 thread {one:.0} playouts/s, {} threads {:.0}/s: per-thread efficiency {:.1}%",
            r.threads,
            r.playouts_per_second,
            100.0 * efficiency
        )?;
    }
    writeln!(
        out,
        "tree: {} nodes ({} bytes per node, {} per edge), {:.1} MiB of a {:.1} MiB limit; {} bytes per playout{}",
        r.nodes,
        r.bytes_per_node,
        r.bytes_per_edge,
        mib(r.tree_bytes as u64),
        mib(r.max_tree_bytes as u64),
        r.bytes_per_playout
            .map_or("n/a".to_owned(), |b| format!("{b:.1}")),
        if r.node_cap_reached {
            " (tree full: node cap or memory limit)"
        } else {
            ""
        },
    )?;
    writeln!(
        out,
        "reclaims: {} ({} nodes dropped, threads held {:.0} ms); peak RSS {}; max depth {}; refinements {}; best move {}",
        r.reclaims,
        r.nodes_reclaimed,
        r.reclaim_seconds * 1000.0,
        mib_or_na(r.peak_rss_bytes),
        r.max_depth,
        r.refinements,
        r.best_move
    )?;
    if let (Some(first), Some(last)) = (r.timeline.first(), r.timeline.last()) {
        let peak = r.timeline.iter().filter_map(|t| t.rss_bytes).max();
        // One second swings with the search's phases (a reclaim, a deep line, refinements):
        // the last ten together say more about the end's pace.
        let tail = &r.timeline[r.timeline.len().saturating_sub(10)..];
        let tail_mean =
            tail.iter().map(|t| t.playouts as f64).sum::<f64>() / tail.len().max(1) as f64;
        let of_first = |playouts: f64| 100.0 * playouts / first.playouts.max(1) as f64;
        writeln!(
            out,
            "timeline: second 1 {} playouts, second {} {} playouts ({:.0}% of the first), the last {} seconds {:.0} on average ({:.0}%), {} reclaims by then, highest RSS {}",
            first.playouts,
            last.second,
            last.playouts,
            of_first(last.playouts as f64),
            tail.len(),
            tail_mean,
            of_first(tail_mean),
            last.reclaims,
            mib_or_na(peak),
        )?;
    }
    let c = &r.contention;
    let k = &c.per_1000_playouts;
    writeln!(
        out,
        "contention: {} CAS failures, {} expansion waits, {} virtual-loss collisions (per 1,000 playouts: {:.2}, {:.2}, {:.2})",
        c.cas_failures,
        c.expansion_waits,
        c.virtual_loss_collisions,
        k.cas_failures,
        k.expansion_waits,
        k.virtual_loss_collisions
    )
}
