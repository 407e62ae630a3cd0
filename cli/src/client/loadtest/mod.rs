//! `emergo loadtest`: drives a bot server (or a fleet behind a load balancer) with concurrent
//! clients and reports throughput, latency percentiles, errors by gRPC code and stop reasons.
//!
//! `--rpc review` reviews a whole game per request (AnalyzeGame: a built-in 100-turn game, or
//! `--record`/`--moves`) and reports games reviewed per minute and the latency per game.
//! `--interactive-clients K` adds K clients asking for interactive BestMoves back to back
//! while the load runs, their latency reported apart: what a person at a board would see while
//! the server reviews games in bulk.
//!
//! Built to push a server past saturation: a failed request is a data point (counted by its
//! code, its latency kept apart when it is a refusal), never a reason to stop. Only bad flags and
//! a server that cannot be reached at startup end the run early. Memory stays bounded whatever
//! `--requests` is: results go into two fixed-size histograms and a few counters, nothing is kept
//! per request.
//!
//! - [`request`]: one request of each RPC, and how it ended; [`review`]: the game a review
//!   load sends and its AnalyzeGame call;
//! - [`interactive`]: the interactive clients beside the load;
//! - [`stats`]: the running tallies and histograms; [`report`]: the final table or JSON.

mod interactive;
mod report;
mod request;
mod review;
mod stats;

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use clap::{ArgGroup, Args, ValueEnum};
use emergo_proto::v1 as pb;
use emergo_rules::INITIAL_FEN;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use tokio::task::JoinSet;

use super::{Client, ClientError, ConnectArgs, PriorityArg, connect, parse_duration};
use interactive::{InteractiveTally, interactive_client};
use report::{Report, server_summary};
use stats::LoadStats;

pub use review::SAMPLE_GAME;

/// Most concurrent clients: each holds its own connection, and beyond a few thousand the
/// client machine, not the server, becomes the thing being measured.
const MAX_CLIENTS: usize = 4096;

/// Which RPC each request makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Rpc {
    /// `Analyze`, its stream consumed to the final update.
    Analyze,
    /// `BestMove`.
    Bestmove,
    /// `AnalyzeGame`: a whole game reviewed, its stream consumed to the summary; the budget is
    /// per turn.
    Review,
}

impl Rpc {
    fn name(self) -> &'static str {
        match self {
            Rpc::Analyze => "analyze",
            Rpc::Bestmove => "bestmove",
            Rpc::Review => "review",
        }
    }
}

/// Flags of `emergo loadtest`.
#[derive(Clone, Debug, Args)]
#[command(group(ArgGroup::new("budget").required(true).multiple(true).args(["time", "playouts"])))]
pub struct LoadTestArgs {
    /// Where the server is.
    #[command(flatten)]
    pub connect: ConnectArgs,
    /// Concurrent clients, each with its own connection (so a load balancer spreads them).
    #[arg(long)]
    pub clients: usize,
    /// Requests in total, shared out among the clients as they become free.
    #[arg(long)]
    pub requests: u64,
    /// The RPC to call.
    #[arg(long, value_enum, default_value_t = Rpc::Bestmove)]
    pub rpc: Rpc,
    /// Time budget of each search (e.g. 100ms, 2s); with `--rpc review`, of each turn.
    #[arg(long, value_parser = parse_duration)]
    pub time: Option<Duration>,
    /// Playout budget of each search; with `--rpc review`, of each turn.
    #[arg(long)]
    pub playouts: Option<u64>,
    /// Search threads each request asks for (a review: positions searched at once).
    #[arg(long, default_value_t = 1)]
    pub threads: u32,
    /// The position searched (vchess FEN); with `--rpc review`, the game's start.
    #[arg(long, default_value = INITIAL_FEN)]
    pub fen: String,
    /// Moves played from the FEN first; with `--rpc review`, the game's moves (default: a
    /// built-in 100-turn game).
    #[arg(long, num_args = 1..)]
    pub moves: Vec<String>,
    /// With `--rpc review`: the game to review, a record file as written by `emergo arena` or
    /// `emergo play` (its first game).
    #[arg(long, value_name = "FILE", conflicts_with = "moves")]
    pub record: Option<std::path::PathBuf>,
    /// Clients asking for interactive BestMoves back to back while the load runs (each with
    /// its own connection and one thread); their latency is reported apart.
    #[arg(long, default_value_t = 0)]
    pub interactive_clients: usize,
    /// Time budget of those interactive BestMoves.
    #[arg(long, value_parser = parse_duration, default_value = "100ms")]
    pub interactive_time: Duration,
    /// Give each client its own game id (`load-<client>`, also sent as the x-emergo-game
    /// header), to exercise tree reuse and game affinity in a fleet.
    #[arg(long)]
    pub game_ids: bool,
    /// Priority of every request while it waits for the server's threads (e.g. batch, to load
    /// a server without delaying its interactive requests). Default: the server's, normal for
    /// searches and batch for reviews.
    #[arg(long, value_enum)]
    pub priority: Option<PriorityArg>,
    /// Client deadline of each request; slower requests count as DEADLINE_EXCEEDED.
    #[arg(long, value_parser = parse_duration, default_value = "30s")]
    pub timeout: Duration,
    /// Print one JSON object instead of a table (and no progress bar).
    #[arg(long)]
    pub json: bool,
}

/// What every request sends; built once, cloned per request.
struct Plan {
    rpc: Rpc,
    position: pb::Position,
    /// The record text `--rpc review` sends instead of `position` (`--record`, or the sample).
    record: String,
    limits: pb::Limits,
    threads: u32,
    game_ids: bool,
    priority: pb::Priority,
    timeout: Duration,
}

/// Checks the flags and builds what every request sends.
fn plan(args: &LoadTestArgs) -> Result<Plan, ClientError> {
    let invalid = |s: String| Err(ClientError::Invalid(s));
    if args.clients == 0 || args.clients > MAX_CLIENTS {
        return invalid(format!("--clients must be between 1 and {MAX_CLIENTS}"));
    }
    if args.requests == 0 {
        return invalid("--requests must be at least 1".to_owned());
    }
    if args.threads == 0 {
        return invalid("--threads must be at least 1".to_owned());
    }
    if args.playouts == Some(0) {
        return invalid("--playouts must be at least 1".to_owned());
    }
    let max_time_ms = match args.time {
        None => None,
        Some(t) => match u32::try_from(t.as_millis()) {
            Ok(0) => return invalid("--time must be at least 1ms".to_owned()),
            Ok(ms) => Some(ms),
            Err(_) => return invalid("--time is too long".to_owned()),
        },
    };
    if args.interactive_clients > MAX_CLIENTS {
        return invalid(format!(
            "--interactive-clients must be at most {MAX_CLIENTS}"
        ));
    }
    if args.rpc == Rpc::Review && args.game_ids {
        return invalid(
            "--game-ids: a review has no game id (its turns are separate searches)".to_owned(),
        );
    }
    if args.rpc != Rpc::Review && args.record.is_some() {
        return invalid("--record is the game of --rpc review".to_owned());
    }
    // Checked here so that a typo fails once, with the rules' own message, instead of as N
    // INVALID_ARGUMENT answers.
    crate::tools::game_from_args(&args.fen, &args.moves)
        .map_err(|e| ClientError::Invalid(format!("--fen/--moves: {e}")))?;
    let record = review::record(args)?;
    Ok(Plan {
        rpc: args.rpc,
        position: pb::Position {
            fen: args.fen.clone(),
            moves: args.moves.clone(),
        },
        record,
        limits: pb::Limits {
            max_time_ms,
            max_playouts: args.playouts,
            clock: None,
        },
        threads: args.threads,
        game_ids: args.game_ids,
        priority: args
            .priority
            .map_or(pb::Priority::Unspecified, pb::Priority::from),
        timeout: args.timeout,
    })
}

/// Opens one connection per client, all at once (a fleet behind a load balancer may take a
/// moment per connection). Any failure is fatal: a load test against nothing says nothing.
async fn connect_all(args: &ConnectArgs, clients: usize) -> Result<Vec<Client>, ClientError> {
    let mut set = JoinSet::new();
    for i in 0..clients {
        let args = args.clone();
        set.spawn(async move { connect(&args).await.map(|c| (i, c)) });
    }
    let mut connected: Vec<(usize, Client)> = Vec::with_capacity(clients);
    while let Some(joined) = set.join_next().await {
        let client =
            joined.map_err(|e| ClientError::Invalid(format!("connecting task failed: {e}")))??;
        connected.push(client);
    }
    connected.sort_by_key(|(i, _)| *i);
    Ok(connected.into_iter().map(|(_, c)| c).collect())
}

fn progress_bar(total: u64, hidden: bool) -> ProgressBar {
    if hidden {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    // A bad template is a programming error, but not worth a panic: the default style will do.
    if let Ok(style) = ProgressStyle::with_template(
        "{elapsed_precise} [{bar:30}] {pos}/{len} requests, eta {eta}  {msg}",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// Runs `emergo loadtest`.
pub async fn run(args: LoadTestArgs) -> Result<(), ClientError> {
    let plan = Arc::new(plan(&args)?);
    let mut clients = connect_all(&args.connect, args.clients).await?;
    let interactive_clients = connect_all(&args.connect, args.interactive_clients).await?;
    let server_info = match clients.first_mut() {
        Some(c) => server_summary(c).await,
        None => None,
    };

    let tally = Arc::new(Mutex::new(LoadStats::new()?));
    let next = Arc::new(AtomicU64::new(0));
    let bar = progress_bar(args.requests, args.json || !std::io::stderr().is_terminal());
    let total = args.requests;

    let started = Instant::now();
    let done = Arc::new(AtomicBool::new(false));
    let interactive = Arc::new(Mutex::new(InteractiveTally::new()?));
    let mut side = JoinSet::new();
    for client in interactive_clients {
        side.spawn(interactive_client(
            client,
            plan.clone(),
            args.interactive_time,
            done.clone(),
            interactive.clone(),
        ));
    }
    let mut workers = JoinSet::new();
    for (index, mut client) in clients.into_iter().enumerate() {
        let (plan, tally, next, bar) = (plan.clone(), tally.clone(), next.clone(), bar.clone());
        workers.spawn(async move {
            loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                if n >= total {
                    break;
                }
                let began = Instant::now();
                let outcome = plan.request(&mut client, index, n).await;
                let elapsed = began.elapsed();
                let (ok, failed) = {
                    let mut t = tally.lock().unwrap_or_else(PoisonError::into_inner);
                    t.record(outcome, elapsed);
                    (t.ok, t.failed)
                };
                bar.set_message(format!("ok {ok}, errors {failed}"));
                bar.inc(1);
            }
        });
    }
    while let Some(joined) = workers.join_next().await {
        joined.map_err(|e| ClientError::Invalid(format!("a client task failed: {e}")))?;
    }
    let seconds = started.elapsed().as_secs_f64();
    bar.finish_and_clear();
    // The interactive clients finish the request they are in and stop.
    done.store(true, Ordering::Relaxed);
    while let Some(joined) = side.join_next().await {
        joined.map_err(|e| ClientError::Invalid(format!("an interactive client failed: {e}")))?;
    }
    let interactive = (args.interactive_clients > 0).then(|| {
        let t = interactive.lock().unwrap_or_else(PoisonError::into_inner);
        t.report(args.interactive_clients, args.interactive_time)
    });

    let tally = match Arc::try_unwrap(tally) {
        Ok(m) => m.into_inner().unwrap_or_else(PoisonError::into_inner),
        // Every worker has finished, so no other reference remains; this arm is unreachable in
        // practice but cheap to handle honestly.
        Err(_) => return Err(ClientError::Invalid("results still in use".to_owned())),
    };
    let report = Report::new(&args, &plan, tally, seconds, interactive, server_info);
    if args.json {
        let text = serde_json::to_string(&report)
            .map_err(|e| ClientError::Invalid(format!("JSON: {e}")))?;
        println!("{text}");
    } else {
        println!("{}", report.table());
    }
    Ok(())
}
