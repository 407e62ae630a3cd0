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

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use clap::{ArgGroup, Args, ValueEnum};
use comfy_table::Table;
use emergo_proto::v1 as pb;
use hdrhistogram::Histogram;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;
use tokio::task::JoinSet;
use tonic::{Code, Status};

use emergo_proto::v1::game_review_update::Update;

use super::analyze::PriorityArg;
use super::{Client, ClientError, ConnectArgs, connect, parse_duration, request_with_game};
use emergo_bot_server::metrics::code_name;

/// The initial position, searched unless `--fen` says otherwise.
use emergo_rules::INITIAL_FEN;

/// Most concurrent clients: each holds its own connection, and beyond a few thousand the
/// client machine, not the server, becomes the thing being measured.
const MAX_CLIENTS: usize = 4096;

/// Largest latency the histograms resolve: an hour, in microseconds. Slower answers are clamped
/// to it rather than lost, so counts stay right.
const MAX_LATENCY_US: u64 = 3_600_000_000;

/// Label for an Analyze stream that ended without its final update: not a gRPC status, but a
/// broken contract worth counting apart from real codes.
const NO_FINAL_UPDATE: &str = "NO_FINAL_UPDATE";

/// The game `--rpc review` reviews unless told otherwise: 100 turns of an arena game
/// (`mcts:playouts=100` against `mcts:playouts=1000`, won by Black), so that "a 100-turn game
/// at N playouts per turn" means the same thing from one run to the next.
pub const SAMPLE_GAME: &str = include_str!("review-100.pgn");

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

/// How one request ended.
enum Outcome {
    /// Answered: playouts of the final statistics (of a review: of all its turns), turns
    /// reviewed (0 for a search) and the stop reason.
    Ok {
        playouts: u64,
        turns: u64,
        stop_reason: i32,
    },
    /// Failed with a gRPC code (or [`NO_FINAL_UPDATE`]) and the server's message.
    Failed { code: &'static str, message: String },
}

/// Everything measured so far. Shared behind a mutex: it is held for a microsecond per request,
/// far below the request rate any search server sustains, and one shared tally keeps memory
/// independent of the number of clients.
struct LoadStats {
    ok: u64,
    failed: u64,
    playouts: u64,
    turns: u64,
    /// Latency of answered requests, microseconds.
    latency: Histogram<u64>,
    /// Latency of RESOURCE_EXHAUSTED refusals, microseconds: they should be fast, and mixing
    /// them with answers would hide both.
    refused: Histogram<u64>,
    errors: BTreeMap<&'static str, u64>,
    /// The first message seen for each code, so a run full of errors says why.
    error_examples: BTreeMap<&'static str, String>,
    stop_reasons: BTreeMap<String, u64>,
}

impl LoadStats {
    fn new() -> Result<LoadStats, ClientError> {
        let histogram = || {
            Histogram::new_with_bounds(1, MAX_LATENCY_US, 3)
                .map_err(|e| ClientError::Invalid(format!("latency histogram: {e}")))
        };
        Ok(LoadStats {
            ok: 0,
            failed: 0,
            playouts: 0,
            turns: 0,
            latency: histogram()?,
            refused: histogram()?,
            errors: BTreeMap::new(),
            error_examples: BTreeMap::new(),
            stop_reasons: BTreeMap::new(),
        })
    }

    fn record(&mut self, outcome: Outcome, elapsed: Duration) {
        let micros = u64::try_from(elapsed.as_micros())
            .unwrap_or(u64::MAX)
            .clamp(1, MAX_LATENCY_US);
        match outcome {
            Outcome::Ok {
                playouts,
                turns,
                stop_reason,
            } => {
                self.ok += 1;
                self.playouts += playouts;
                self.turns += turns;
                self.latency.saturating_record(micros);
                *self
                    .stop_reasons
                    .entry(stop_reason_name(stop_reason))
                    .or_insert(0) += 1;
            }
            Outcome::Failed { code, message } => {
                self.failed += 1;
                if code == code_name(Code::ResourceExhausted) {
                    self.refused.saturating_record(micros);
                }
                *self.errors.entry(code).or_insert(0) += 1;
                self.error_examples.entry(code).or_insert(message);
            }
        }
    }
}

/// `TIME` for `STOP_REASON_TIME`; unknown numbers (a newer server) stay visible as numbers.
fn stop_reason_name(value: i32) -> String {
    match pb::StopReason::try_from(value) {
        Ok(r) => r
            .as_str_name()
            .trim_start_matches("STOP_REASON_")
            .to_owned(),
        Err(_) => format!("STOP_REASON_{value}"),
    }
}

/// Latency percentiles of answered requests, milliseconds.
#[derive(Debug, Serialize)]
struct Latency {
    p50: f64,
    p90: f64,
    p99: f64,
    max: f64,
    mean: f64,
}

/// How late answers with a time budget came, milliseconds: each answer's latency less the
/// budget, 0 when on time.
#[derive(Debug, Serialize)]
struct Late {
    p50: f64,
    p99: f64,
    max: f64,
}

impl Late {
    /// From the answers' latency: `max(0, latency − budget)` keeps their order, so its
    /// percentiles are the latency's less the budget.
    fn of(latency: &Latency, budget_ms: u32) -> Late {
        let late = |ms: f64| (ms - f64::from(budget_ms)).max(0.0);
        Late {
            p50: late(latency.p50),
            p99: late(latency.p99),
            max: late(latency.max),
        }
    }
}

/// Latency of refusals, milliseconds.
#[derive(Debug, Serialize)]
struct RefusedLatency {
    count: u64,
    p50: f64,
    p99: f64,
    max: f64,
}

/// The budget each request asked for.
#[derive(Debug, Serialize)]
struct RequestBudget {
    time_ms: Option<u32>,
    playouts: Option<u64>,
}

/// Reviews (`--rpc review`): the rate in games and turns.
#[derive(Debug, Serialize)]
struct ReviewRate {
    games_per_minute: f64,
    turns: u64,
    turns_per_second: f64,
}

/// The interactive BestMoves sent alongside the load (`--interactive-clients`).
#[derive(Debug, Serialize)]
struct InteractiveReport {
    clients: usize,
    time_ms: u32,
    ok: u64,
    failed: u64,
    errors: BTreeMap<&'static str, u64>,
    latency_ms: Latency,
}

/// What the server said about itself before the run (best effort: behind a load balancer this
/// is one replica).
#[derive(Debug, Serialize)]
struct ServerSummary {
    replica: String,
    version: String,
    thread_budget: u32,
    max_queue: u32,
    max_queue_wait_ms: u32,
}

/// The final report: the `--json` object, and the source of the table.
#[derive(Debug, Serialize)]
struct Report {
    server: String,
    rpc: &'static str,
    clients: usize,
    requests: u64,
    ok: u64,
    failed: u64,
    errors: BTreeMap<&'static str, u64>,
    error_examples: BTreeMap<&'static str, String>,
    refusal_rate: f64,
    seconds: f64,
    requests_per_second: f64,
    playouts: u64,
    playouts_per_second: f64,
    latency_ms: Latency,
    /// Searches with a time budget: how late answers came, the latency less the budget (0 when
    /// on time), what a referee's clock would see.
    late_ms: Option<Late>,
    refused_latency_ms: RefusedLatency,
    stop_reasons: BTreeMap<String, u64>,
    budget: RequestBudget,
    threads: u32,
    game_ids: bool,
    review: Option<ReviewRate>,
    interactive: Option<InteractiveReport>,
    server_info: Option<ServerSummary>,
}

fn ms(micros: u64) -> f64 {
    micros as f64 / 1000.0
}

impl Latency {
    /// The percentiles of a histogram of microseconds (all 0 when it is empty).
    fn of(h: &Histogram<u64>) -> Latency {
        Latency {
            p50: ms(h.value_at_quantile(0.50)),
            p90: ms(h.value_at_quantile(0.90)),
            p99: ms(h.value_at_quantile(0.99)),
            max: ms(h.max()),
            mean: h.mean() / 1000.0,
        }
    }
}

impl Report {
    fn new(
        args: &LoadTestArgs,
        plan: &Plan,
        tally: LoadStats,
        seconds: f64,
        interactive: Option<InteractiveReport>,
        server_info: Option<ServerSummary>,
    ) -> Report {
        let refused = tally
            .errors
            .get(code_name(Code::ResourceExhausted))
            .copied()
            .unwrap_or(0);
        let total = tally.ok + tally.failed;
        let per_second = |n: u64| {
            if seconds > 0.0 {
                n as f64 / seconds
            } else {
                0.0
            }
        };
        let r = &tally.refused;
        Report {
            server: args.connect.server.clone(),
            rpc: plan.rpc.name(),
            clients: args.clients,
            requests: total,
            ok: tally.ok,
            failed: tally.failed,
            refusal_rate: if total > 0 {
                refused as f64 / total as f64
            } else {
                0.0
            },
            seconds,
            requests_per_second: per_second(tally.ok),
            playouts: tally.playouts,
            playouts_per_second: per_second(tally.playouts),
            // An empty histogram answers 0 everywhere, which is what an empty report should say.
            latency_ms: Latency::of(&tally.latency),
            late_ms: plan
                .limits
                .max_time_ms
                .filter(|_| plan.rpc != Rpc::Review && tally.ok > 0)
                .map(|budget| Late::of(&Latency::of(&tally.latency), budget)),
            refused_latency_ms: RefusedLatency {
                count: r.len(),
                p50: ms(r.value_at_quantile(0.50)),
                p99: ms(r.value_at_quantile(0.99)),
                max: ms(r.max()),
            },
            errors: tally.errors,
            error_examples: tally.error_examples,
            stop_reasons: tally.stop_reasons,
            budget: RequestBudget {
                time_ms: plan.limits.max_time_ms,
                playouts: plan.limits.max_playouts,
            },
            threads: plan.threads,
            game_ids: plan.game_ids,
            review: (plan.rpc == Rpc::Review).then(|| ReviewRate {
                games_per_minute: per_second(tally.ok) * 60.0,
                turns: tally.turns,
                turns_per_second: per_second(tally.turns),
            }),
            interactive,
            server_info,
        }
    }

    fn table(&self) -> Table {
        let list = |pairs: Vec<(String, u64)>| {
            if pairs.is_empty() {
                "none".to_owned()
            } else {
                pairs
                    .iter()
                    .map(|(k, v)| format!("{k}: {v}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            }
        };
        let budget = match (self.budget.time_ms, self.budget.playouts) {
            (Some(t), Some(p)) => format!("{t} ms or {p} playouts"),
            (Some(t), None) => format!("{t} ms"),
            (None, Some(p)) => format!("{p} playouts"),
            (None, None) => "none".to_owned(),
        };
        let mut table = Table::new();
        table.load_style(comfy_table::presets::ASCII_FULL_CONDENSED);
        table.set_header(vec!["loadtest", "result"]);
        let mut target = self.server.clone();
        if let Some(info) = &self.server_info {
            target += &format!(
                "\n{} {} (threads {}, queue {} x {} ms)",
                info.replica,
                info.version,
                info.thread_budget,
                info.max_queue,
                info.max_queue_wait_ms
            );
        }
        table.add_row(vec!["server".to_owned(), target]);
        table.add_row(vec![
            "load".to_owned(),
            format!(
                "{} x {} clients, {budget}{}, {} thread(s) each{}",
                self.rpc,
                self.clients,
                if self.review.is_some() {
                    " per turn"
                } else {
                    ""
                },
                self.threads,
                if self.game_ids { ", game ids" } else { "" }
            ),
        ]);
        table.add_row(vec![
            "requests ok".to_owned(),
            format!("{} / {}", self.ok, self.requests),
        ]);
        table.add_row(vec![
            "wall time".to_owned(),
            format!("{:.2} s", self.seconds),
        ]);
        let percentiles = |l: &Latency| {
            format!(
                "p50 {:.1}  p90 {:.1}  p99 {:.1}  max {:.1}",
                l.p50, l.p90, l.p99, l.max
            )
        };
        match &self.review {
            Some(r) => {
                table.add_row(vec![
                    "throughput".to_owned(),
                    format!(
                        "{:.1} games reviewed/min ({} turns, {:.1} turns/s), {:.0} playouts/s",
                        r.games_per_minute, r.turns, r.turns_per_second, self.playouts_per_second
                    ),
                ]);
                table.add_row(vec![
                    "latency ms per game".to_owned(),
                    percentiles(&self.latency_ms),
                ]);
            }
            None => {
                table.add_row(vec![
                    "throughput".to_owned(),
                    format!(
                        "{:.1} requests/s, {:.0} playouts/s",
                        self.requests_per_second, self.playouts_per_second
                    ),
                ]);
                table.add_row(vec![
                    "latency ms (ok)".to_owned(),
                    percentiles(&self.latency_ms),
                ]);
                if let Some(l) = &self.late_ms {
                    table.add_row(vec![
                        "late ms (latency - budget)".to_owned(),
                        format!("p50 {:.1}  p99 {:.1}  max {:.1}", l.p50, l.p99, l.max),
                    ]);
                }
            }
        }
        if let Some(i) = &self.interactive {
            let mut text = format!(
                "{} x bestmove {} ms, interactive: {} ok, {} failed\n{}",
                i.clients,
                i.time_ms,
                i.ok,
                i.failed,
                percentiles(&i.latency_ms)
            );
            for (code, n) in &i.errors {
                text += &format!("\n{code}: {n}");
            }
            table.add_row(vec!["interactive latency ms".to_owned(), text]);
        }
        let r = &self.refused_latency_ms;
        table.add_row(vec![
            "latency ms (refused)".to_owned(),
            if r.count == 0 {
                "none refused".to_owned()
            } else {
                format!(
                    "p50 {:.1}  p99 {:.1}  max {:.1}  ({} refusals)",
                    r.p50, r.p99, r.max, r.count
                )
            },
        ]);
        table.add_row(vec![
            "errors".to_owned(),
            list(
                self.errors
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), *v))
                    .collect(),
            ),
        ]);
        table.add_row(vec![
            "refusal rate".to_owned(),
            format!("{:.1}%", 100.0 * self.refusal_rate),
        ]);
        table.add_row(vec![
            "stop reasons".to_owned(),
            list(
                self.stop_reasons
                    .iter()
                    .map(|(k, v)| (k.clone(), *v))
                    .collect(),
            ),
        ]);
        for (code, message) in &self.error_examples {
            table.add_row(vec![format!("first {code}"), message.clone()]);
        }
        table
    }
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
    // A review sends a record (the server parses it) unless the game is given by its moves.
    let record = match (&args.record, args.rpc) {
        (Some(path), _) => std::fs::read_to_string(path)
            .map_err(|e| ClientError::Invalid(format!("--record {}: {e}", path.display())))?,
        (None, Rpc::Review) if args.moves.is_empty() && args.fen == INITIAL_FEN => {
            SAMPLE_GAME.to_owned()
        }
        (None, _) => String::new(),
    };
    if args.rpc == Rpc::Review && record.is_empty() && args.moves.is_empty() {
        return invalid(
            "--rpc review needs a game: --moves, --record or neither (the built-in game)"
                .to_owned(),
        );
    }
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

impl Plan {
    /// Makes request `n` (0-based) for client `client` and waits for its answer.
    async fn request(&self, rpc_client: &mut Client, client: usize, n: u64) -> Outcome {
        let game_id = if self.game_ids {
            format!("load-{client}")
        } else {
            String::new()
        };
        let options = Some(pb::SearchOptions {
            threads: self.threads,
            // A different seed per request, so the searches are not all the same one; not 0,
            // which would let the server pick and make runs less reproducible.
            seed: n + 1,
            game_id: game_id.clone(),
            priority: self.priority as i32,
            ..pb::SearchOptions::default()
        });
        let call = async {
            match self.rpc {
                Rpc::Bestmove => {
                    let mut req = request_with_game(
                        pb::BestMoveRequest {
                            position: Some(self.position.clone()),
                            limits: Some(self.limits),
                            options,
                        },
                        &game_id,
                    );
                    req.set_timeout(self.timeout);
                    let answer = rpc_client.best_move(req).await?.into_inner();
                    Ok(answer.analysis.map(Answer::of))
                }
                Rpc::Analyze => {
                    let mut req = request_with_game(
                        pb::AnalyzeRequest {
                            position: Some(self.position.clone()),
                            limits: Some(self.limits),
                            options,
                            report_interval_ms: 0,
                        },
                        &game_id,
                    );
                    req.set_timeout(self.timeout);
                    let mut stream = rpc_client.analyze(req).await?.into_inner();
                    while let Some(update) = stream.message().await? {
                        if update.r#final {
                            return Ok(Some(Answer::of(update)));
                        }
                    }
                    Ok(None)
                }
                Rpc::Review => {
                    let (game, record) = if self.record.is_empty() {
                        (Some(self.position.clone()), String::new())
                    } else {
                        (None, self.record.clone())
                    };
                    let mut req = tonic::Request::new(pb::AnalyzeGameRequest {
                        game,
                        record,
                        per_turn: Some(self.limits),
                        total_time_ms: None,
                        turns: Vec::new(),
                        options: options.map(|o| pb::SearchOptions {
                            game_id: String::new(),
                            ..o
                        }),
                    });
                    req.set_timeout(self.timeout);
                    let mut stream = rpc_client.analyze_game(req).await?.into_inner();
                    while let Some(update) = stream.message().await? {
                        if let Some(Update::Summary(s)) = update.update {
                            return Ok(Some(Answer {
                                playouts: s.playouts,
                                turns: u64::from(s.turns_analysed),
                                stop_reason: s.stop_reason,
                            }));
                        }
                    }
                    Ok(None)
                }
            }
        };
        // grpc-timeout asks the server to respect the deadline; this enforces it on our side
        // too, so a stalled server or network cannot hang a client. Dropping the call cancels
        // the RPC, which frees the server's search threads.
        let answer: Result<Option<Answer>, Status> =
            match tokio::time::timeout(self.timeout, call).await {
                Ok(answer) => answer,
                Err(_) => Err(Status::deadline_exceeded(format!(
                    "no answer within the client deadline of {:?}",
                    self.timeout
                ))),
            };
        match answer {
            Ok(Some(a)) => Outcome::Ok {
                playouts: a.playouts,
                turns: a.turns,
                stop_reason: a.stop_reason,
            },
            Ok(None) => Outcome::Failed {
                code: NO_FINAL_UPDATE,
                message: match self.rpc {
                    Rpc::Analyze => "the stream ended without a final update".to_owned(),
                    Rpc::Bestmove => "the answer has no analysis".to_owned(),
                    Rpc::Review => "the review stream ended without a summary".to_owned(),
                },
            },
            Err(status) => Outcome::Failed {
                code: code_name(status.code()),
                message: status.message().to_owned(),
            },
        }
    }
}

/// What a request's answer says: its playouts, turns reviewed and stop reason.
struct Answer {
    playouts: u64,
    turns: u64,
    stop_reason: i32,
}

impl Answer {
    fn of(update: pb::AnalysisUpdate) -> Answer {
        Answer {
            playouts: update.stats.map_or(0, |s| s.playouts),
            turns: 0,
            stop_reason: update.stop_reason,
        }
    }
}

/// The interactive BestMoves' results.
struct InteractiveTally {
    ok: u64,
    failed: u64,
    errors: BTreeMap<&'static str, u64>,
    latency: Histogram<u64>,
}

/// One interactive client: BestMoves at interactive priority, back to back, until `done`.
async fn interactive_client(
    mut client: Client,
    plan: Arc<Plan>,
    time: Duration,
    done: Arc<std::sync::atomic::AtomicBool>,
    tally: Arc<Mutex<InteractiveTally>>,
) {
    let mut n = 0u64;
    while !done.load(Ordering::Relaxed) {
        n += 1;
        let mut req = tonic::Request::new(pb::BestMoveRequest {
            position: Some(pb::Position {
                fen: plan.position.fen.clone(),
                moves: Vec::new(),
            }),
            limits: Some(pb::Limits {
                max_time_ms: Some(u32::try_from(time.as_millis()).unwrap_or(u32::MAX).max(1)),
                max_playouts: None,
                clock: None,
            }),
            options: Some(pb::SearchOptions {
                threads: 1,
                seed: n,
                priority: pb::Priority::Interactive as i32,
                ..pb::SearchOptions::default()
            }),
        });
        req.set_timeout(plan.timeout);
        let began = Instant::now();
        let result = tokio::time::timeout(plan.timeout, client.best_move(req)).await;
        let micros = u64::try_from(began.elapsed().as_micros())
            .unwrap_or(u64::MAX)
            .clamp(1, MAX_LATENCY_US);
        let mut t = tally.lock().unwrap_or_else(PoisonError::into_inner);
        match result {
            Ok(Ok(_)) => {
                t.ok += 1;
                t.latency.saturating_record(micros);
            }
            Ok(Err(status)) => {
                t.failed += 1;
                *t.errors.entry(code_name(status.code())).or_insert(0) += 1;
            }
            Err(_) => {
                t.failed += 1;
                *t.errors
                    .entry(code_name(Code::DeadlineExceeded))
                    .or_insert(0) += 1;
            }
        }
    }
}

/// Asks the server about itself; `None` when it will not say (the run goes on regardless).
async fn server_summary(client: &mut Client) -> Option<ServerSummary> {
    let info = client
        .server_info(pb::ServerInfoRequest {})
        .await
        .ok()?
        .into_inner();
    let limits = info.limits.unwrap_or_default();
    Some(ServerSummary {
        replica: info.replica,
        version: info.version,
        thread_budget: limits.thread_budget,
        max_queue: limits.max_queue,
        max_queue_wait_ms: limits.max_queue_wait_ms,
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
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let interactive = Arc::new(Mutex::new(InteractiveTally {
        ok: 0,
        failed: 0,
        errors: BTreeMap::new(),
        latency: Histogram::new_with_bounds(1, MAX_LATENCY_US, 3)
            .map_err(|e| ClientError::Invalid(format!("latency histogram: {e}")))?,
    }));
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
        InteractiveReport {
            clients: args.interactive_clients,
            time_ms: u32::try_from(args.interactive_time.as_millis()).unwrap_or(u32::MAX),
            ok: t.ok,
            failed: t.failed,
            errors: t.errors.clone(),
            latency_ms: Latency::of(&t.latency),
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_reason_names() {
        assert_eq!(stop_reason_name(pb::StopReason::Time as i32), "TIME");
        assert_eq!(
            stop_reason_name(pb::StopReason::BestMoveSettled as i32),
            "BEST_MOVE_SETTLED"
        );
        assert_eq!(stop_reason_name(99), "STOP_REASON_99");
    }

    #[test]
    fn lateness_is_latency_past_the_budget() {
        let latency = Latency {
            p50: 98.0,
            p90: 101.0,
            p99: 104.5,
            max: 130.0,
            mean: 99.0,
        };
        let l = Late::of(&latency, 100);
        assert_eq!((l.p50, l.p99, l.max), (0.0, 4.5, 30.0));
    }

    #[test]
    fn tally_separates_answers_and_refusals() {
        let mut t = LoadStats::new().unwrap();
        t.record(
            Outcome::Ok {
                playouts: 1000,
                turns: 0,
                stop_reason: pb::StopReason::Time as i32,
            },
            Duration::from_millis(100),
        );
        t.record(
            Outcome::Failed {
                code: "RESOURCE_EXHAUSTED",
                message: "busy".to_owned(),
            },
            Duration::from_micros(300),
        );
        t.record(
            Outcome::Failed {
                code: "RESOURCE_EXHAUSTED",
                message: "busy again".to_owned(),
            },
            Duration::ZERO,
        );
        assert_eq!((t.ok, t.failed, t.playouts), (1, 2, 1000));
        assert_eq!(t.latency.len(), 1);
        assert_eq!(t.refused.len(), 2);
        assert_eq!(t.errors["RESOURCE_EXHAUSTED"], 2);
        assert_eq!(t.error_examples["RESOURCE_EXHAUSTED"], "busy");
        assert_eq!(t.stop_reasons["TIME"], 1);
    }
}
