//! `emergo review`: a whole game reviewed by the engine (the `AnalyzeGame` RPC) on a server, or
//! in-process with `--local`.
//!
//! The record is a file written by `emergo arena` or `emergo play` (or `-` for standard input),
//! sent as it is: the server parses it and names the turn of an illegal move. Two views of the
//! stream of turn reviews:
//! - text: the move list as the turns arrive (turn, player, played move with its class marked
//!   `?!`/`?`/`??`, its value, the loss and the engine's better move), then a small plot of
//!   White's expected score per turn and the per-player summary (counts, mean loss, accuracy);
//! - `--json`: one line per `GameReviewUpdate` in the proto3 JSON mapping (`{"turn":{...}}`
//!   per turn, `{"summary":{...}}` last), as the HTTP gateway streams it.
//!
//! The first Ctrl-C stops the review with a summary of the turns done so far (StopSearch with
//! the review's search id); a second one quits at once.
//!
//! This module reads the record, asks for the review and follows its stream; [`text`] renders
//! the text view.

pub mod text;

use std::fmt::Write as _;
use std::io::{IsTerminal, Read, Write};
use std::time::Duration;

use clap::Args;
use emergo_proto::v1 as pb;
use emergo_proto::v1::game_review_update::Update;

use super::flags::{budget_ms, limits};
use super::interrupt::StopOnCtrlC;
use super::{Backend, BackendArgs, ClientError, PriorityArg, SearchFlags, parse_duration};
use text::{Report, eval_graph, move_list_header, summary_text};

/// Playouts per turn when no budget is given. Why 10,000: against reviews at 200,000, a
/// review at 2,000 flagged 25 moves of which 15 were good ones; at 10,000, 21 and 9, for
/// 2.9 s a 100-turn game on one thread (`docs/STRENGTH.md`, "Review budgets").
pub const DEFAULT_PLAYOUTS: u64 = 10_000;

/// Most turns a `--turns` list may name (the contract's longest game).
const MAX_TURNS: usize = 2000;

/// Flags of `emergo review`.
#[derive(Clone, Debug, Args)]
#[command(
    mut_arg("time", |a| a.help("Time per searched position, e.g. 200ms, 1s")),
    mut_arg("playouts", |a| a.help(
        "Playouts per searched position (default 10000 when no budget is given)"
    )),
    mut_arg("threads", |a| a.help(
        "Positions searched at once, one thread each (the server caps this per request)"
    )),
    mut_arg("seed", |a| a.help(
        "Random seed (0 lets the engine pick): with --playouts the review is reproducible"
    )),
)]
pub struct ReviewArgs {
    /// The game record (PGN-like, as written by `emergo arena` or `emergo play`), or `-` for
    /// standard input.
    #[arg(value_name = "RECORD")]
    pub record: String,
    /// Which game of a file holding several (1 = the first), such as arena's games.pgn.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub game: Option<u32>,
    /// The budget per searched position, threads and seed.
    #[command(flatten)]
    pub search: SearchFlags,
    /// Time for the whole review, split evenly over the positions (e.g. 30s).
    #[arg(long, value_parser = parse_duration)]
    pub total_time: Option<Duration>,
    /// Turns to analyse (1 = the game's first move), e.g. 5,9-12; default every turn.
    #[arg(long, value_parser = parse_turns)]
    pub turns: Option<TurnList>,
    /// Priority while waiting for the server's threads (default: batch).
    #[arg(long, value_enum)]
    pub priority: Option<PriorityArg>,
    /// Print one JSON object per line (each turn, then the summary) instead of the report.
    #[arg(long)]
    pub json: bool,
    /// Where the review runs: a server, or this process with --local.
    #[command(flatten)]
    pub backend: BackendArgs,
}

/// A `--turns` list: sorted, without repeats.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnList(pub Vec<u32>);

/// Parses `5,9-12` into turns 5, 9, 10, 11, 12.
pub fn parse_turns(s: &str) -> Result<TurnList, String> {
    let number = |t: &str| -> Result<u32, String> {
        match t.trim().parse::<u32>() {
            Ok(0) => Err("turns count from 1".to_owned()),
            Ok(n) => Ok(n),
            Err(_) => Err(format!("{t:?} is not a turn number (e.g. 5,9-12)")),
        }
    };
    let mut turns = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (first, last) = match part.split_once('-') {
            Some((a, b)) => (number(a)?, number(b)?),
            None => {
                let n = number(part)?;
                (n, n)
            }
        };
        if first > last {
            return Err(format!("{part}: the range goes backwards"));
        }
        if (last - first) as usize >= MAX_TURNS || turns.len() > MAX_TURNS {
            return Err(format!("at most {MAX_TURNS} turns"));
        }
        turns.extend(first..=last);
    }
    turns.sort_unstable();
    turns.dedup();
    if turns.is_empty() {
        return Err("no turns given (e.g. 5,9-12)".to_owned());
    }
    if turns.len() > MAX_TURNS {
        return Err(format!("at most {MAX_TURNS} turns"));
    }
    Ok(TurnList(turns))
}

/// Splits a file of records (a blank line and tags start each one) into the records' texts.
/// Only the boundaries are found here: the server parses each record and says what is wrong.
pub fn split_records(text: &str) -> Vec<&str> {
    let mut records = Vec::new();
    let mut start: Option<usize> = None;
    let mut in_moves = false;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            if in_moves {
                if let Some(s) = start {
                    records.push(text[s..offset].trim());
                }
                start = None;
                in_moves = false;
            }
            start.get_or_insert(offset);
        } else if !trimmed.is_empty() {
            start.get_or_insert(offset);
            in_moves = true;
        }
        offset += line.len();
    }
    if let Some(s) = start {
        records.push(text[s..].trim());
    }
    records.retain(|r| !r.is_empty());
    records
}

/// The value of a tag (`[White "random"]`) of a record, if it has one.
fn tag<'a>(record: &'a str, key: &str) -> Option<&'a str> {
    record.lines().find_map(|line| {
        let inner = line.trim().strip_prefix('[')?.strip_suffix(']')?;
        let (k, v) = inner.split_once(' ')?;
        (k == key).then(|| v.trim().trim_matches('"'))
    })
}

/// Reads the record file (or standard input) and picks the game to review.
fn read_record(args: &ReviewArgs) -> Result<(String, String), ClientError> {
    let (name, text) = if args.record == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text)?;
        ("standard input".to_owned(), text)
    } else {
        let text = std::fs::read_to_string(&args.record)
            .map_err(|e| ClientError::Invalid(format!("{}: {e}", args.record)))?;
        (args.record.clone(), text)
    };
    let records = split_records(&text);
    let n = records.len();
    let pick = match (args.game, n) {
        (_, 0) => {
            return Err(ClientError::Invalid(format!(
                "{name}: no game record in it"
            )));
        }
        (None, 1) => 0,
        (None, _) => {
            return Err(ClientError::Invalid(format!(
                "{name} holds {n} game records: choose one with --game 1..{n}"
            )));
        }
        (Some(g), _) if g as usize > n => {
            return Err(ClientError::Invalid(format!(
                "{name} holds {n} game record(s): --game {g} is not one of them"
            )));
        }
        (Some(g), _) => g as usize - 1,
    };
    let name = if n > 1 {
        format!("{name} (game {})", pick + 1)
    } else {
        name
    };
    Ok((name, records[pick].to_owned()))
}

/// The request for a record and the flags.
fn request(args: &ReviewArgs, record: String, search_id: &str) -> pb::AnalyzeGameRequest {
    let s = &args.search;
    let playouts = if s.time.is_none() && args.total_time.is_none() {
        Some(s.playouts.unwrap_or(DEFAULT_PLAYOUTS))
    } else {
        s.playouts
    };
    pb::AnalyzeGameRequest {
        game: None,
        record,
        per_turn: limits(s.time, playouts),
        total_time_ms: args.total_time.map(budget_ms),
        turns: args.turns.as_ref().map(|t| t.0.clone()).unwrap_or_default(),
        options: Some(pb::SearchOptions {
            threads: s.threads,
            seed: s.seed,
            pv_length: 8,
            search_id: search_id.to_owned(),
            priority: args
                .priority
                .map_or(pb::Priority::Unspecified, pb::Priority::from) as i32,
            ..Default::default()
        }),
    }
}

/// Runs `emergo review`.
pub async fn run(args: ReviewArgs) -> Result<(), ClientError> {
    let (name, record) = read_record(&args)?;
    let named = |e: ClientError| ClientError::Invalid(format!("{name}: {e}"));
    let search_id = emergo_bot_server::stop::SearchId::random().to_string();
    let req = request(&args, record.clone(), &search_id);
    let backend = Backend::open(&args.backend).await?;
    let mut rx = backend.analyze_game(req).await.map_err(named)?;
    let width = if std::io::stdout().is_terminal() {
        crossterm::terminal::size().map_or(80, |(w, _)| usize::from(w))
    } else {
        80
    };
    let mut report = Report::new(args.turns.as_ref().map(|t| t.0.clone()));
    if !args.json {
        let mut head = format!("Review of {name}");
        if let (Some(w), Some(b)) = (tag(&record, "White"), tag(&record, "Black")) {
            let _ = write!(head, ": {w} (White) - {b} (Black)");
        }
        if let Some(r) = tag(&record, "Result") {
            let _ = write!(head, ", {r}");
        }
        print_out(&format!("{head}\n\n{}\n", move_list_header()))?;
    }
    // The first Ctrl-C stops the review with a summary of the turns done so far.
    let mut ctrl_c = StopOnCtrlC::new();
    loop {
        tokio::select! {
            item = rx.recv() => match item {
                None => {
                    return Err(named(ClientError::Invalid(
                        "the review stream ended without a summary".to_owned(),
                    )));
                }
                Some(Err(status)) => return Err(named(status.into())),
                Some(Ok(update)) => {
                    if args.json {
                        let line = serde_json::to_string(&update)
                            .map_err(|e| ClientError::Invalid(format!("JSON: {e}")))?;
                        print_out(&format!("{line}\n"))?;
                    }
                    match update.update {
                        Some(Update::Turn(turn)) => {
                            let rows = report.add(turn);
                            if !args.json {
                                print_out(&rows)?;
                            }
                        }
                        Some(Update::Summary(summary)) => {
                            if !args.json {
                                let mut text = report.flush();
                                text.push('\n');
                                text += &eval_graph(&report.points(), width.saturating_sub(8).clamp(20, 120), 5);
                                text.push('\n');
                                text += &summary_text(&summary);
                                print_out(&text)?;
                            }
                            return Ok(());
                        }
                        None => {}
                    }
                }
            },
            () = ctrl_c.pressed() => {
                ctrl_c.stop_or_quit(&backend, &search_id, "stopping the review").await;
            }
        }
    }
}

fn print_out(text: &str) -> std::io::Result<()> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turn_lists() {
        assert_eq!(parse_turns("5,9-12").unwrap().0, vec![5, 9, 10, 11, 12]);
        assert_eq!(parse_turns("3, 1,3").unwrap().0, vec![1, 3]);
        assert!(parse_turns("0").unwrap_err().contains("from 1"));
        assert!(parse_turns("4-2").unwrap_err().contains("backwards"));
        assert!(parse_turns("x").is_err());
        assert!(parse_turns("").is_err());
        assert!(parse_turns("1-4000000000").is_err());
    }

    #[test]
    fn records_are_split_at_their_tags() {
        let one = "[Event \"a\"]\n[FEN \"9/9/9/9/9/9/9/9/9 w 0 12,12\"]\n\n1. a1 i9 *\n";
        let two = "[Event \"b\"]\n[White \"x y\"]\n\n1. c3 g7\n2. e5 *\n";
        let text = format!("{one}\n{two}\n");
        let records = split_records(&text);
        assert_eq!(records.len(), 2);
        assert!(records[0].starts_with("[Event \"a\"]") && records[0].ends_with("i9 *"));
        assert!(records[1].contains("2. e5 *"));
        assert_eq!(tag(records[1], "White"), Some("x y"));
        assert_eq!(tag(records[1], "Black"), None);
        assert_eq!(split_records("1. a1 *").len(), 1);
        assert!(split_records("\n \n").is_empty());
    }
}
