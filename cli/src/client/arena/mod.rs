//! `emergo arena`: a tournament between engines — bot servers over gRPC, in-process MCTS and
//! the random and greedy baselines — with a crosstable, Elo estimates and game records.
//!
//! ```sh
//! emergo arena --engine server:http://127.0.0.1:50051,time=100ms --engine mcts:playouts=2000 \
//!     --engine greedy --games 10 --concurrency 2 --out results/
//! ```
//!
//! - [`spec`]: the `--engine` spec syntax, [`engines_help`] its keys for `--engines-help`;
//!   [`schedule`]: pairings, colours and openings;
//!   [`clock`]: time controls (`--tc 60+0.5`) and the sides' clocks;
//! - [`engines`]: in-process pickers on blocking threads, servers with retries and failover;
//! - [`game`]: one game's move loop, adjudication and record; [`report`]: tables and JSON;
//!   [`elo`]: Elo and confidence intervals; [`sprt`]: the sequential test that stops a match
//!   once it is decided (`--sprt elo0=0,elo1=20`).
//!
//! Servers get one game id per game and side (`arena-<seed>-<game>-w`) in both
//! `SearchOptions.game_id` and the `x-emergo-game` header, so the server — or a load balancer
//! with game affinity — keeps the game's tree between moves; the summary counts the moves that
//! reused one.

pub mod clock;
pub mod elo;
pub mod engines;
pub mod engines_help;
pub mod game;
pub mod report;
pub mod schedule;
pub mod spec;
pub mod sprt;

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use tokio::task::JoinSet;

use super::{ClientError, ConnectArgs, parse_duration};
use crate::termination::Termination;
use engines::ServerEngine;
use game::{Context, GameReport};
use report::{MatchTally, game_json};
use schedule::mix;
use spec::{Budget, EngineKind};

/// Flags of `emergo arena`.
#[derive(Clone, Debug, Args)]
pub struct ArenaArgs {
    /// An engine (give two or more): `random`, `greedy`, `mcts[:key=value,...]`,
    /// `ab[:key=value,...]` or `server:URL[,key=value,...]`, e.g. `mcts:time=200ms`,
    /// `server:http://127.0.0.1:50051,ponder=on`; --engines-help lists the keys.
    #[arg(
        long = "engine",
        value_name = "SPEC",
        required_unless_present = "engines_help"
    )]
    pub engines: Vec<String>,
    /// Print the keys of every kind of --engine spec, and exit.
    #[arg(long)]
    pub engines_help: bool,
    /// Play the first engine against each of the others only (default: every pair).
    #[arg(long)]
    pub gauntlet: bool,
    /// Games per pairing; colours alternate and each opening is played with both colours.
    /// With --sprt: the most games the test may take.
    #[arg(long, default_value_t = 2)]
    pub games: usize,
    /// Stop the match once a sequential probability ratio test decides, e.g. `elo0=0,elo1=20`
    /// (alpha=, beta= default 0.05): H1 says the first engine is about elo1 stronger than the
    /// second, H0 that it is not. Exactly two engines.
    #[arg(long, value_name = "elo0=E0,elo1=E1[,alpha=A,beta=B]")]
    pub sprt: Option<String>,
    /// Time per move for engines without their own budget (default 100ms when neither this
    /// nor --playouts is given).
    #[arg(long, value_parser = parse_duration, conflicts_with = "playouts")]
    pub time: Option<Duration>,
    /// Playouts per move for engines without their own budget (with --tc: a cap per move).
    #[arg(long)]
    pub playouts: Option<u64>,
    /// Game clocks, `BASE+INC` seconds per side (`60+0.5`, `0.5+0.05`): each move's measured
    /// wall time is charged and the increment added; a side out of time loses
    /// (`time-forfeit`). Not with --time or a spec's time=.
    // Each engine is told its clock: servers in `Limits.clock`, in-process engines through the
    // same time manager. The measured time includes the RPC.
    #[arg(long, value_name = "BASE+INC", value_parser = clock::parse_tc, conflicts_with = "time")]
    pub tc: Option<clock::TimeControl>,
    /// Games played at once (in-process engines share this machine's cores: keep 1 when
    /// comparing them by time unless cores are to spare).
    #[arg(long, default_value_t = 1)]
    pub concurrency: usize,
    /// Openings: `random:P` (the first P turns random legal moves, seeded) or a file with one
    /// opening per line, `FEN` or `FEN moves m1 m2 ...` (`#` starts a comment line).
    #[arg(long, default_value = "random:2")]
    pub openings: String,
    /// Turns (opening included) after which a game is adjudicated a draw.
    #[arg(long, default_value_t = 600)]
    pub max_turns: usize,
    /// Seed of the run (openings, engine seeds, game ids); default: from the clock.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Directory for `games.pgn` (every game) and `summary.jsonl` (a line per game, then the
    /// summary).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Bearer token for the server engines.
    #[arg(long, env = "EMERGO_AUTH_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// PEM file of CA certificates to trust for `https://` server engines besides the
    /// system's (a private CA, or a self-signed server certificate).
    #[arg(long, env = "EMERGO_CA_CERT", value_name = "PATH")]
    pub ca_cert: Option<PathBuf>,
    /// Print only the final summary, as one JSON object, on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Where finished games go: the files of `--out`, in game order.
struct Sink {
    pgn: BufWriter<File>,
    jsonl: BufWriter<File>,
}

impl Sink {
    fn create(dir: &std::path::Path) -> Result<Sink, ClientError> {
        // io errors do not say which file; the user needs to know.
        let named = |path: &std::path::Path, e: std::io::Error| {
            ClientError::Invalid(format!("--out {}: {e}", path.display()))
        };
        std::fs::create_dir_all(dir).map_err(|e| named(dir, e))?;
        let create = |name: &str| {
            let path = dir.join(name);
            File::create(&path).map_err(|e| named(&path, e))
        };
        Ok(Sink {
            pgn: BufWriter::new(create("games.pgn")?),
            jsonl: BufWriter::new(create("summary.jsonl")?),
        })
    }

    /// Writes one game and flushes, so an interrupted run keeps every finished game.
    fn game(&mut self, r: &GameReport, line: &serde_json::Value) -> Result<(), ClientError> {
        writeln!(self.pgn, "{}", r.record.to_pgn())?;
        writeln!(self.jsonl, "{line}")?;
        self.pgn.flush()?;
        self.jsonl.flush()?;
        Ok(())
    }
}

/// Runs `emergo arena`.
pub async fn run(args: ArenaArgs) -> Result<(), ClientError> {
    if args.engines_help {
        print!("{}", engines_help::text());
        return Ok(());
    }
    let invalid = ClientError::Invalid;
    if args.engines.len() < 2 {
        return Err(invalid("give at least two --engine specs".to_owned()));
    }
    if !(1..=100_000).contains(&args.games) {
        return Err(invalid("--games must be between 1 and 100000".to_owned()));
    }
    if !(1..=256).contains(&args.concurrency) {
        return Err(invalid(
            "--concurrency must be between 1 and 256".to_owned(),
        ));
    }
    // Servers take at most 2,000 moves per request.
    if !(1..=2000).contains(&args.max_turns) {
        return Err(invalid("--max-turns must be between 1 and 2000".to_owned()));
    }
    if args.playouts == Some(0) {
        return Err(invalid("--playouts must be positive".to_owned()));
    }
    let sprt = match &args.sprt {
        Some(text) => {
            if args.engines.len() != 2 {
                return Err(invalid(
                    "--sprt needs exactly two --engine specs".to_owned(),
                ));
            }
            Some(sprt::SprtParams::parse(text).map_err(invalid)?)
        }
        None => None,
    };
    let specs = args
        .engines
        .iter()
        .map(|s| spec::parse_spec(s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(invalid)?;
    if args.tc.is_some() {
        if let Some(s) = specs.iter().find(|s| s.budget.time.is_some()) {
            return Err(invalid(format!(
                "engine {:?}: time= does not mix with --tc (the clock sets each move's time)",
                s.text
            )));
        }
    }
    let mut global = Budget {
        time: args.time,
        playouts: args.playouts,
    };
    if global.is_empty() && args.tc.is_none() {
        global.time = Some(Duration::from_millis(100));
    }
    let engines = spec::resolve(specs, global);
    for e in &engines {
        match e.kind {
            EngineKind::AlphaBeta if args.tc.is_none() => {
                e.ab_limits().map_err(invalid)?;
            }
            EngineKind::Mcts => {
                e.mcts_config().map_err(invalid)?;
            }
            _ => {}
        }
    }
    let seed = args.seed.unwrap_or_else(clock_seed);
    let source = schedule::parse_openings_arg(&args.openings).map_err(invalid)?;
    let pairings = schedule::pairings(engines.len(), args.gauntlet);
    let games = schedule::schedule(&pairings, args.games);
    let openings = schedule::openings(&source, args.games.div_ceil(2), mix(seed, 1));
    if let Some(o) = openings.iter().find(|o| o.moves.len() >= args.max_turns) {
        return Err(invalid(format!(
            "opening {:?} is not shorter than --max-turns {}",
            o.describe(),
            args.max_turns
        )));
    }

    let mut servers = Vec::with_capacity(engines.len());
    for e in &engines {
        servers.push(match &e.kind {
            EngineKind::Server { url } => Some(Arc::new(
                ServerEngine::connect(ConnectArgs {
                    server: url.clone(),
                    token: args.token.clone(),
                    ca_cert: args.ca_cert.clone(),
                })
                .await
                .map_err(|err| invalid(format!("engine {:?}: {err}", e.text)))?,
            )),
            _ => None,
        });
    }
    let mut sink = match &args.out {
        Some(dir) => Some(Sink::create(dir)?),
        None => None,
    };

    let schedule_name = if args.gauntlet {
        "gauntlet"
    } else {
        "round-robin"
    };
    let total = games.len();
    let show = !args.json;
    let bar = if show && std::io::stderr().is_terminal() {
        let bar = ProgressBar::new(total as u64);
        if let Ok(style) = ProgressStyle::with_template(
            "{bar:30} {pos}/{len} games  {elapsed_precise} (eta {eta})  {wide_msg}",
        ) {
            bar.set_style(style);
        }
        bar
    } else {
        ProgressBar::hidden()
    };
    let note = |line: String| {
        if show && bar.is_hidden() {
            eprintln!("{line}");
        } else if show {
            bar.println(line);
        }
    };
    note(format!(
        "arena: {} engines, {schedule_name}, {total} games ({} per pairing), openings {}, \
         concurrency {}, seed {seed}{}",
        engines.len(),
        args.games,
        args.openings,
        args.concurrency,
        args.tc
            .map(|tc| format!(", clocks {tc}"))
            .unwrap_or_default()
    ));

    let ctx = Arc::new(Context {
        engines: engines.clone(),
        servers,
        openings,
        max_turns: args.max_turns,
        seed,
        date: super::date::today(),
        site: std::env::var("HOSTNAME").unwrap_or_else(|_| "?".to_owned()),
        tc: args.tc,
    });
    let mut tally = MatchTally::new(engines.clone(), pairings);
    let mut pending = games.into_iter();
    let mut running = JoinSet::new();
    // Finished games wait here until every earlier game is written, so the files are in game
    // order whatever the concurrency.
    let mut finished: BTreeMap<usize, GameReport> = BTreeMap::new();
    let mut next_to_write = 1;
    // Once the test decides, no new game starts; games already running still count.
    let mut decided = false;
    loop {
        while running.len() < args.concurrency && !decided {
            match pending.next() {
                Some(g) => {
                    running.spawn(game::play(ctx.clone(), g));
                }
                None => break,
            }
        }
        let Some(joined) = running.join_next().await else {
            break;
        };
        let report = joined
            .map_err(|e| invalid(format!("a game task failed: {e}")))?
            .inspect_err(|_| bar.abandon())?;
        tally.add(&report);
        bar.inc(1);
        bar.set_message(tally.standing());
        let g = report.scheduled;
        note(format!(
            "game {}/{total}: {} - {} {} {}{} ({})",
            g.number,
            engines[g.white].name,
            engines[g.black].name,
            report.record.result,
            report.termination,
            report
                .detail
                .as_ref()
                .filter(|_| report.termination != Termination::MoveCap)
                .map(|d| format!(": {d}"))
                .unwrap_or_default(),
            super::count(report.turns() as u64, "turn")
        ));
        if let Some(test) = &sprt {
            if !decided && test.verdict(tally.pair_scores(0)) != sprt::Verdict::Continue {
                decided = true;
                note(format!(
                    "{}; finishing the {} running game(s)",
                    test.describe(tally.pair_scores(0)),
                    running.len()
                ));
            }
        }
        finished.insert(g.number, report);
        while let Some(r) = finished.remove(&next_to_write) {
            if let Some(sink) = &mut sink {
                sink.game(&r, &game_json(&r, &engines))?;
            }
            next_to_write += 1;
        }
    }
    bar.finish_and_clear();

    let mut summary = tally.summary_json(seed, schedule_name, &args.openings);
    if let Some(test) = &sprt {
        let scores = tally.pair_scores(0);
        let (lower, upper) = test.bounds();
        summary["sprt"] = serde_json::json!({
            "elo0": test.elo0,
            "elo1": test.elo1,
            "alpha": test.alpha,
            "beta": test.beta,
            "llr": test.llr(scores),
            "lower_bound": lower,
            "upper_bound": upper,
            "games": scores.len(),
            "verdict": test.verdict(scores).to_string(),
        });
    }
    if let Some(sink) = &mut sink {
        writeln!(sink.jsonl, "{summary}")?;
        sink.jsonl.flush()?;
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        writeln!(out, "{summary}")?;
        return Ok(());
    }
    writeln!(
        out,
        "\nCrosstable ({} games; cells: the row engine's points against the column engine)",
        tally.games()
    )?;
    writeln!(out, "{}", tally.crosstable())?;
    writeln!(
        out,
        "\nPairings (W/D/L, score and Elo of the first engine; 95% CI from the per-game \
         scores; ~ = clamped, the score was 0% or 100%)"
    )?;
    writeln!(out, "{}", tally.pairings_table())?;
    writeln!(out, "\nEngines")?;
    writeln!(out, "{}", tally.engines_table())?;
    writeln!(out, "\nTerminations: {}", tally.terminations())?;
    if let Some(test) = &sprt {
        writeln!(out, "{}", test.describe(tally.pair_scores(0)))?;
    }
    if let Some(dir) = &args.out {
        writeln!(
            out,
            "Records: {}, {}",
            dir.join("games.pgn").display(),
            dir.join("summary.jsonl").display()
        )?;
    }
    writeln!(out, "Seed: {seed} (--seed {seed} replays the openings)")?;
    Ok(())
}

/// A seed from the clock, so runs differ (and their game ids do not collide on a server) unless
/// `--seed` asks for a repeat.
fn clock_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    // Keep seeds short enough to type back.
    mix(nanos as u64, u64::from(std::process::id())) % 1_000_000_000
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--engine` names its pointer to `--engines-help`, which needs no engine and names
    /// every key (the search settings' test is in `engines_help`).
    #[test]
    fn engines_help_is_a_flag_of_its_own() {
        use clap::{CommandFactory as _, Parser};
        #[derive(clap::Parser)]
        struct Wrapper {
            #[command(flatten)]
            args: ArenaArgs,
        }
        let help = Wrapper::command()
            .get_arguments()
            .find(|a| a.get_id() == "engines")
            .and_then(|a| a.get_long_help().or(a.get_help()))
            .map(|h| h.to_string())
            .unwrap_or_default();
        assert!(help.contains("--engines-help"), "{help}");
        let parsed = Wrapper::try_parse_from(["arena", "--engines-help"]).unwrap();
        assert!(parsed.args.engines_help && parsed.args.engines.is_empty());
        assert!(Wrapper::try_parse_from(["arena"]).is_err());
    }
}
