//! `emergo`: command-line tools for Emergo — offline on the rules core, or as clients of a bot
//! server (or of the same service in-process with `--local`). The code lives in the library
//! (`emergo_cli`), one module per subcommand; this file parses the command line and dispatches.

/// mimalloc rather than the system allocator: search trees are allocated in 128 KiB chunks and
/// freed wholesale (reclaims, finished searches), often on other threads than the next search's;
/// glibc keeps such memory in per-thread arenas, so the process's resident memory crept well
/// past the tree-memory budget (398 MiB RSS for trees limited to 256 MiB in a 60 s benchmark),
/// while mimalloc hands freed pages back to the system within milliseconds.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::io::{BufWriter, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use emergo_cli::client::{self, ClientError};
use emergo_cli::tools::{self, ToolError};

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
    Legal(tools::legal::LegalArgs),
    /// Count the leaf nodes of the legal-move tree (turn-level perft).
    Perft(tools::perft::PerftArgs),
    /// Measure uniformly random playouts per second from the initial position.
    Bench(tools::bench::BenchArgs),
    /// Learn the evaluation weights from self-play (logistic regression of game results on the
    /// evaluation's features) and print them as a weights file (engine/weights.txt format).
    LearnEval(tools::learn_eval::LearnEvalArgs),
    /// Learn the value network (engine/value-net.txt) from alpha-beta searches: positions
    /// from alpha-beta self-play, each labelled by a deeper search, and a small network fitted
    /// to correct the evaluation towards those labels (one game in ten held out to judge it).
    LearnValue(tools::learn_value::LearnValueArgs),
    /// Draw a position as a text diagram with stacks, men in hand and the side to move.
    Show(tools::show::ShowArgs),
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

fn run(command: Command) -> Result<(), Box<dyn std::error::Error>> {
    match command {
        Command::Offline(command) => Ok(run_offline(command)?),
        Command::Analyze(args) => run_async(client::analyze::run(args)),
        Command::Bestmove(args) => run_async(client::analyze::run_best_move(args)),
        Command::Play(args) => run_async(client::play::run(args)),
        Command::Review(args) => run_async(client::review::run(args)),
        Command::Loadtest(args) => run_async(client::loadtest::run(args)),
        Command::Arena(args) => run_async(client::arena::run(args)),
    }
}

/// Runs a client tool on a multi-threaded runtime.
fn run_async(
    fut: impl std::future::Future<Output = Result<(), ClientError>>,
) -> Result<(), Box<dyn std::error::Error>> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    Ok(runtime.block_on(fut)?)
}

/// Runs an offline tool. Only these hold stdout locked for their whole run: the client tools
/// print from runtime threads, which would block on that lock.
fn run_offline(command: Offline) -> Result<(), ToolError> {
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    match command {
        Offline::Legal(args) => tools::legal::run(args, &mut out)?,
        Offline::Perft(args) => tools::perft::run(args, &mut out)?,
        Offline::Bench(args) => tools::bench::run(args, &mut out)?,
        Offline::LearnEval(args) => tools::learn_eval::run(args, &mut out)?,
        Offline::LearnValue(args) => tools::learn_value::run(args, &mut out)?,
        Offline::Show(args) => tools::show::run(args, &mut out)?,
    }
    out.flush()?;
    Ok(())
}
