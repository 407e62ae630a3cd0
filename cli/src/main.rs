//! `emergo`: command-line tools for Emergo — offline on the rules core, or as clients of a bot
//! server (or of the same service in-process with `--local`). The code lives in the library
//! (`emergo_cli`); this file parses the command line and dispatches.

/// mimalloc rather than the system allocator: search trees are allocated in 128 KiB chunks and
/// freed wholesale (reclaims, finished searches), often on other threads than the next search's;
/// glibc keeps such memory in per-thread arenas, so the process's resident memory crept well
/// past the tree-memory budget (398 MiB RSS for trees limited to 256 MiB in a 60 s benchmark),
/// while mimalloc hands freed pages back to the system within milliseconds.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::io::{BufWriter, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use emergo_cli::client::{self, ClientError};
use emergo_cli::tools::{self, bench, legal};
use emergo_engine::distill::DistillConfig;
use emergo_engine::value_net::TrainConfig;
use emergo_rules::{INITIAL_FEN, perft, perft_divide};

#[derive(Parser)]
#[command(
    name = "emergo",
    version,
    about = "Emergo tools: legal moves, perft, benchmarks and diagrams offline; analysis, play, load tests and tournaments against a bot server"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    #[command(flatten)]
    Offline(Offline),
    /// Watch the engine analyse a position live (or stream JSON with --json).
    Analyze(client::analyze::AnalyzeArgs),
    /// Print just the best move of a position.
    Bestmove(client::analyze::BestMoveArgs),
    /// Play against the engine in the terminal.
    Play(client::play::PlayArgs),
    /// Review a whole game: each move's class (?! ? ??), the better move, an evaluation graph.
    Review(client::review::ReviewArgs),
    /// Load-test a server with concurrent clients and report throughput and latency.
    Loadtest(client::loadtest::LoadTestArgs),
    /// Run a tournament between engines (servers, in-process MCTS, baselines).
    Arena(client::arena::ArenaArgs),
}

/// Subcommands that need only the rules core (no server, no async runtime).
#[derive(Subcommand)]
enum Offline {
    /// Print the legal moves of a position, one per line, sorted byte-wise.
    Legal {
        /// The position (vchess FEN); defaults to the initial position.
        #[arg(long, default_value = INITIAL_FEN, conflicts_with = "jsonl")]
        fen: String,
        /// Moves played from the FEN first (notation like e5, c3-d4, c3xe5xc7).
        #[arg(long, num_args = 1.., conflicts_with = "jsonl")]
        moves: Vec<String>,
        /// Read one FEN per line on stdin and write one JSON object per line.
        #[arg(long)]
        jsonl: bool,
    },
    /// Count the leaf nodes of the legal-move tree (turn-level perft).
    Perft {
        /// The position (vchess FEN); defaults to the initial position.
        #[arg(long, default_value = INITIAL_FEN)]
        fen: String,
        /// Depth in turns.
        #[arg(long)]
        depth: u32,
        /// Also print the count below each first move.
        #[arg(long)]
        divide: bool,
    },
    /// Measure uniformly random playouts per second from the initial position.
    Bench {
        /// How long to measure, in seconds.
        #[arg(long, default_value_t = 5.0)]
        seconds: f64,
        /// Threads running playouts.
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// Random seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
        /// Benchmark the MCTS search (tree included) instead of raw playouts.
        #[arg(long)]
        search: bool,
        /// With --search: the node cap of the tree.
        #[arg(long, default_value_t = 2_000_000)]
        nodes: usize,
        /// With --search: the tree's memory limit, e.g. 64MiB or 2GiB (default: the search
        /// library's, 256MiB); a full tree reclaims its least-visited subtrees and grows on.
        #[arg(long, value_name = "SIZE", value_parser = emergo_bot_server::config::parse_byte_size)]
        tree_memory: Option<u64>,
        /// With --search: the search configuration, as for `bot-server --mcts` (default: the
        /// server's default engine; `config=uniform` for uniform random playouts, `config=v1`
        /// for the first version's engine).
        #[arg(long, default_value = "config=strong", value_parser = emergo_bot_server::config::parse_mcts)]
        mcts: emergo_engine::MctsConfig,
        /// With --search: alternate raw playouts and the search this many times (1–100) and
        /// report every round's search/raw ratio and their median (the figures are the last
        /// round's).
        #[arg(long, default_value_t = 1)]
        rounds: usize,
    },
    /// Learn the evaluation weights from self-play (logistic regression of game results on the
    /// evaluation's features) and print them as a weights file (engine/weights.txt format).
    LearnEval {
        /// Self-play games.
        #[arg(long, default_value_t = 4000)]
        games: usize,
        /// Depth of the alpha-beta self-play.
        #[arg(long, default_value_t = 3)]
        depth: u32,
        /// Gradient-descent iterations of the fit.
        #[arg(long, default_value_t = 2000)]
        iterations: usize,
        /// Threads playing games.
        #[arg(long, default_value_t = 2)]
        threads: usize,
        /// Seed (the same seed and parameters give the same weights).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Write the weights to this file instead of standard output.
        #[arg(long)]
        out: Option<std::path::PathBuf>,
    },
    /// Learn the value network (engine/value-net.txt) from alpha-beta searches: positions
    /// from alpha-beta self-play, each labelled by a deeper search, and a small network fitted
    /// to correct the evaluation towards those labels (one game in ten held out to judge it).
    LearnValue {
        /// Self-play games (ignored with --data).
        #[arg(long, default_value_t = DistillConfig::default().games)]
        games: usize,
        /// Depth of the self-play searches.
        #[arg(long, default_value_t = DistillConfig::default().play_depth)]
        play_depth: u32,
        /// Depth of the labelling searches.
        #[arg(long, default_value_t = DistillConfig::default().label_depth)]
        label_depth: u32,
        /// One game in this many has a weak side, which plays a random move half the time, so
        /// that the data holds the lopsided positions good players never reach (0: none).
        #[arg(long, default_value_t = DistillConfig::default().weak_every)]
        weak_every: usize,
        /// Threads playing and labelling games.
        #[arg(long, default_value_t = 2)]
        threads: usize,
        /// Seed of the self-play and of the fit (the same settings give the same network).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Hidden units of the network.
        #[arg(long, default_value_t = TrainConfig::default().hidden)]
        hidden: usize,
        /// Passes over the training positions.
        #[arg(long, default_value_t = TrainConfig::default().epochs)]
        epochs: usize,
        /// Keep the network's correction within this many centimen either way (0: unbounded);
        /// written into the network file.
        #[arg(long, default_value_t = TrainConfig::default().bound.unwrap_or(0))]
        bound: u16,
        /// Train on labelled positions saved earlier by --save-data (comma-separated files)
        /// instead of playing games.
        #[arg(long, value_delimiter = ',')]
        data: Vec<std::path::PathBuf>,
        /// Also label the quiet positions of these recorded games (`emergo arena --out` or
        /// `emergo play` records, comma-separated) and train on them: the positions the
        /// network's own engine reaches, which self-play does not.
        #[arg(long, value_delimiter = ',')]
        pgn: Vec<std::path::PathBuf>,
        /// Label with searches whose leaves this network corrects (`default`: the shipped one)
        /// instead of the plain evaluation: the labels bootstrap, a 6-ply search with the
        /// network seeing further than a plain one.
        #[arg(long)]
        label_net: Option<String>,
        /// Score the --data positions again with --label-depth (and --label-net) instead of
        /// keeping their saved labels.
        #[arg(long, requires = "data")]
        relabel: bool,
        /// Save the labelled positions to this file (to train again without replaying).
        #[arg(long)]
        save_data: Option<std::path::PathBuf>,
        /// Write the network to this file instead of standard output.
        #[arg(long)]
        out: Option<std::path::PathBuf>,
    },
    /// Draw a position as a text diagram with stacks, men in hand and the side to move.
    Show {
        /// The position (vchess FEN); defaults to the initial position.
        #[arg(long, default_value = INITIAL_FEN)]
        fen: String,
        /// Moves played from the FEN first.
        #[arg(long, num_args = 1..)]
        moves: Vec<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("emergo: {e}");
            ExitCode::from(2)
        }
    }
}

fn run_async(
    fut: impl std::future::Future<Output = Result<(), ClientError>>,
) -> Result<(), Box<dyn std::error::Error>> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    Ok(runtime.block_on(fut)?)
}

fn run(command: Command) -> Result<(), Box<dyn std::error::Error>> {
    match command {
        Command::Offline(command) => run_offline(command),
        Command::Analyze(args) => run_async(client::analyze::run(args)),
        Command::Bestmove(args) => run_async(client::analyze::run_best_move(args)),
        Command::Play(args) => run_async(client::play::run(args)),
        Command::Review(args) => run_async(client::review::run(args)),
        Command::Loadtest(args) => run_async(client::loadtest::run(args)),
        Command::Arena(args) => run_async(client::arena::run(args)),
    }
}

/// Runs an offline tool. Only these hold stdout locked for their whole run: the client tools
/// print from runtime threads, which would block on that lock.
fn run_offline(command: Offline) -> Result<(), Box<dyn std::error::Error>> {
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    match command {
        Offline::Legal { jsonl: true, .. } => {
            legal::run_jsonl(std::io::stdin().lock(), &mut out)?;
        }
        Offline::Legal { fen, moves, .. } => {
            let game = tools::game_from_args(&fen, &moves)?;
            for (mv, _) in legal::sorted_legal(&game) {
                writeln!(out, "{mv}")?;
            }
        }
        Offline::Perft { fen, depth, divide } => {
            let pos = fen.parse()?;
            let began = Instant::now();
            let total = if divide {
                let mut rows: Vec<(String, u64)> = perft_divide(&pos, depth)
                    .into_iter()
                    .map(|(m, n)| (m.to_string(), n))
                    .collect();
                rows.sort();
                for (m, n) in &rows {
                    writeln!(out, "{m}: {n}")?;
                }
                rows.iter().map(|(_, n)| n).sum()
            } else {
                perft(&pos, depth)
            };
            let secs = began.elapsed().as_secs_f64();
            writeln!(
                out,
                "perft({depth}) = {total}  ({secs:.3} s, {:.1} Mnodes/s)",
                total as f64 / secs.max(1e-9) / 1e6
            )?;
        }
        Offline::Bench {
            seconds,
            threads,
            seed,
            json,
            search,
            nodes,
            tree_memory,
            mcts,
            rounds,
        } => {
            if !(seconds.is_finite() && seconds > 0.0 && seconds <= 3600.0) {
                return Err(format!(
                    "--seconds {seconds}: must be more than 0 and at most 3600 (e.g. 0.5 or 10)"
                )
                .into());
            }
            if threads == 0 || threads > 1024 {
                return Err("--threads must be between 1 and 1024".into());
            }
            if rounds != 1 && !search {
                return Err(
                    "--rounds goes with --search (raw playouts alone have no ratio)".into(),
                );
            }
            if search {
                if nodes == 0 || nodes > 200_000_000 {
                    return Err("--nodes must be between 1 and 200000000".into());
                }
                if tree_memory.is_some_and(|b| b < 1 << 20) {
                    return Err("--tree-memory must be at least 1MiB".into());
                }
                if rounds == 0 || rounds > 100 {
                    return Err("--rounds must be between 1 and 100".into());
                }
                let r = bench::search(&bench::SearchBenchOptions {
                    duration: Duration::from_secs_f64(seconds),
                    threads,
                    seed,
                    max_nodes: nodes,
                    max_tree_bytes: tree_memory.map(|b| usize::try_from(b).unwrap_or(usize::MAX)),
                    config: mcts,
                    rounds,
                });
                if json {
                    writeln!(out, "{}", serde_json::to_string(&r)?)?;
                } else {
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
                        r.tree_bytes as f64 / 1048576.0,
                        r.max_tree_bytes as f64 / 1048576.0,
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
                        r.peak_rss_bytes.map_or("n/a".to_owned(), |b| format!(
                            "{:.1} MiB",
                            b as f64 / 1048576.0
                        )),
                        r.max_depth,
                        r.refinements,
                        r.best_move
                    )?;
                    if let (Some(first), Some(last)) = (r.timeline.first(), r.timeline.last()) {
                        let peak = r.timeline.iter().filter_map(|t| t.rss_bytes).max();
                        // One second swings with the search's phases (a reclaim, a deep line,
                        // refinements): the last ten together say more about the end's pace.
                        let tail = &r.timeline[r.timeline.len().saturating_sub(10)..];
                        let tail_mean = tail.iter().map(|t| t.playouts as f64).sum::<f64>()
                            / tail.len().max(1) as f64;
                        let of_first =
                            |playouts: f64| 100.0 * playouts / first.playouts.max(1) as f64;
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
                            peak.map_or("n/a".to_owned(), |b| format!(
                                "{:.1} MiB",
                                b as f64 / 1048576.0
                            )),
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
                    )?;
                }
                return Ok(out.flush()?);
            }
            let r = bench::playouts(Duration::from_secs_f64(seconds), threads, seed);
            if json {
                writeln!(out, "{}", serde_json::to_string(&r)?)?;
            } else {
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
                    bench::PLAYOUT_CAP,
                    100.0 * r.unfinished
                )?;
            }
        }
        Offline::LearnEval {
            games,
            depth,
            iterations,
            threads,
            seed,
            out: path,
        } => {
            if !(1..=1_000_000).contains(&games) || !(1..=8).contains(&depth) {
                return Err("--games must be in 1..=1000000 and --depth in 1..=8".into());
            }
            if !(1..=1_000_000).contains(&iterations) || !(1..=256).contains(&threads) {
                return Err("--iterations must be in 1..=1000000 and --threads in 1..=256".into());
            }
            let cfg = emergo_engine::learn::SelfPlay {
                games,
                depth,
                threads,
                seed,
                ..emergo_engine::learn::SelfPlay::default()
            };
            let began = Instant::now();
            let samples = emergo_engine::learn::generate(&cfg, &|n| {
                if n % 500 == 0 || n == games {
                    eprintln!("learn-eval: {n}/{games} self-play games");
                }
            });
            eprintln!(
                "learn-eval: {} positions in {:.1} s; fitting",
                samples.len(),
                began.elapsed().as_secs_f64()
            );
            let start = emergo_engine::eval::Weights::default();
            let (weights, report) = emergo_engine::learn::fit(&samples, &start, iterations);
            eprintln!(
                "learn-eval: cross-entropy {:.4} -> {:.4} on {} positions ({:.1} s)",
                report.loss_before,
                report.loss_after,
                report.samples,
                report.elapsed.as_secs_f64()
            );
            let text = format!(
                "# Evaluation weights learnt by `emergo learn-eval --games {games} --depth {depth} \
                 --iterations {iterations} --seed {seed}`\n# cross-entropy {:.4} -> {:.4} on {} \
                 self-play positions\n{}",
                report.loss_before,
                report.loss_after,
                report.samples,
                weights.to_text()
            );
            match path {
                Some(p) => std::fs::write(p, text)?,
                None => write!(out, "{text}")?,
            }
        }
        Offline::LearnValue {
            games,
            play_depth,
            label_depth,
            weak_every,
            threads,
            seed,
            hidden,
            epochs,
            bound,
            data,
            pgn,
            label_net,
            relabel,
            save_data,
            out: path,
        } => {
            use emergo_engine::{distill, value_net};
            if !(1..=1_000_000).contains(&games)
                || !(1..=8).contains(&play_depth)
                || !(1..=10).contains(&label_depth)
            {
                return Err(
                    "--games must be in 1..=1000000, --play-depth in 1..=8, --label-depth in 1..=10"
                        .into(),
                );
            }
            if !(1..=256).contains(&threads)
                || !(1..=value_net::MAX_HIDDEN).contains(&hidden)
                || !(1..=10_000).contains(&epochs)
                || bound > value_net::MAX_BOUND
            {
                return Err(format!(
                    "--threads must be in 1..=256, --hidden in 1..={}, --epochs in 1..=10000, \
                     --bound in 0..={}",
                    value_net::MAX_HIDDEN,
                    value_net::MAX_BOUND
                )
                .into());
            }
            // Saved positions keep their saved labels unless relabelled: a labelling network
            // would then label nothing, yet the output's header would name it.
            if label_net.is_some() && !data.is_empty() && !relabel && pgn.is_empty() {
                return Err(
                    "--label-net labels nothing with --data alone: add --relabel (or --pgn)".into(),
                );
            }
            let label_weights = emergo_engine::eval::Weights {
                net: match &label_net {
                    Some(p) => Some(value_net::load(p).map_err(|e| format!("--label-net: {e}"))?
                        as &dyn emergo_engine::eval::Correction),
                    None => None,
                },
                ..emergo_engine::eval::Weights::default()
            };
            let began = Instant::now();
            let mut labelled = if data.is_empty() {
                let cfg = distill::DistillConfig {
                    games,
                    play_depth,
                    label_depth,
                    threads,
                    seed,
                    weak_every,
                    label_weights,
                    ..distill::DistillConfig::default()
                };
                distill::generate(&cfg, &|n| {
                    if n % 100 == 0 || n == games {
                        eprintln!("learn-value: {n}/{games} games played and labelled");
                    }
                })
            } else {
                let mut all = Vec::new();
                for (i, file) in data.iter().enumerate() {
                    let text = std::fs::read_to_string(file)
                        .map_err(|e| format!("--data {}: {e}", file.display()))?;
                    let mut part = distill::parse(&text)
                        .map_err(|e| format!("--data {}: {e}", file.display()))?;
                    // Each file numbers its games from 0: keep them apart for the split.
                    for l in &mut part {
                        l.game = l.game.wrapping_add((i as u64) << 40);
                    }
                    all.extend(part);
                }
                if relabel {
                    let games = all.chunk_by(|a, b| a.game == b.game).count();
                    all = distill::relabel(&all, label_depth, &label_weights, threads, &|n| {
                        if n % 500 == 0 || n == games {
                            eprintln!("learn-value: {n}/{games} saved games labelled again");
                        }
                    });
                }
                all
            };
            for (i, file) in pgn.iter().enumerate() {
                let named = |e: &dyn std::fmt::Display| format!("--pgn {}: {e}", file.display());
                let text = std::fs::read_to_string(file).map_err(|e| named(&e))?;
                let records = emergo_rules::record::parse_pgn(&text).map_err(|e| named(&e))?;
                // Game numbers apart from the self-play's and the other files' (for the split).
                let first = (1u64 << 50) | ((i as u64) << 40);
                let part = distill::label_records(
                    &records,
                    label_depth,
                    &label_weights,
                    threads,
                    first,
                    &|_| {},
                )
                .map_err(|e| named(&e))?;
                eprintln!(
                    "learn-value: {} positions from {} games of {}",
                    part.len(),
                    records.len(),
                    file.display()
                );
                labelled.extend(part);
            }
            if let Some(p) = &save_data {
                std::fs::write(p, distill::to_text(&labelled))?;
            }
            let (train, test) =
                distill::samples(&labelled, &emergo_engine::eval::Weights::default());
            if train.is_empty() || test.is_empty() {
                return Err("learn-value: too few positions to train and judge a network".into());
            }
            let before = value_net::mean_loss(&test, None);
            eprintln!(
                "learn-value: {} training and {} held-out positions ({:.1} s); the evaluation's \
                 held-out loss {before:.4}",
                train.len(),
                test.len(),
                began.elapsed().as_secs_f64(),
            );
            let cfg = value_net::TrainConfig {
                hidden,
                epochs,
                seed,
                bound: (bound > 0).then_some(bound),
                ..value_net::TrainConfig::default()
            };
            let net = value_net::train(&train, &cfg, &mut |epoch, loss| {
                if epoch % 5 == 0 || epoch == epochs {
                    eprintln!("learn-value: epoch {epoch}/{epochs}, training loss {loss:.4}");
                }
            });
            let after = value_net::mean_loss(&test, Some(&net));
            eprintln!("learn-value: held-out cross-entropy {before:.4} -> {after:.4}");
            let mut source = if data.is_empty() {
                format!(
                    "--games {games} --play-depth {play_depth} --label-depth {label_depth} \
                     --weak-every {weak_every} --seed {seed}"
                )
            } else if relabel {
                format!(
                    "--data (saved positions) --relabel --label-depth {label_depth} --seed {seed}"
                )
            } else {
                format!("--data (saved positions) --seed {seed}")
            };
            if let Some(p) = &label_net {
                source.push_str(&format!(" --label-net {p}"));
            }
            if !pgn.is_empty() {
                source.push_str(&format!(" --pgn ({} record files)", pgn.len()));
            }
            let text = format!(
                "# The value network (emergo_engine::value_net), learnt by\n# `emergo learn-value \
                 {source} --hidden {hidden} --epochs {epochs} --bound {bound}`:\n# {} training positions; \
                 held-out cross-entropy {before:.4} -> {after:.4}\n{}",
                train.len(),
                net.to_text(),
            );
            match path {
                Some(p) => std::fs::write(p, text)?,
                None => write!(out, "{text}")?,
            }
        }
        Offline::Show { fen, moves } => {
            let game = tools::game_from_args(&fen, &moves)?;
            write!(out, "{}", game.position().diagram())?;
            writeln!(out, "FEN: {}", game.position())?;
            if let Some(o) = game.outcome() {
                if game.position().outcome().is_none() {
                    writeln!(out, "Game over: {o}")?;
                }
            }
        }
    }
    out.flush()?;
    Ok(())
}
