//! `emergo analyze` and `emergo bestmove`: search a position on a server (or in-process with
//! `--local`) and show the result.
//!
//! `analyze` follows the search live. Three views of the same stream of updates:
//! - on a terminal, one screen redrawn in place (board, top moves, statistics);
//! - piped or redirected, one plain text block per update, so a log stays readable;
//! - `--json`, one JSON object per update per line, for programs.
//!
//! `bestmove` prints just the move, for shell scripts and simple bots.

use std::fmt::Write as _;
use std::io::{IsTerminal, Write};
use std::time::Duration;

use clap::Args;
use comfy_table::ContentArrangement;
use crossterm::{QueueableCommand, cursor, terminal};
use emergo_proto::v1 as pb;
use emergo_rules::{Game, Player, Position};
use serde_json::{Value, json};

use super::interrupt::{self, StopOnCtrlC};
use super::table::{self, Style};
use super::{Backend, BackendArgs, ClientError, PriorityArg, SearchFlags, parse_duration};

/// The initial position, the default of every `--fen`.
pub use emergo_rules::INITIAL_FEN;

/// Position, budget, search and connection flags shared by `analyze` and `bestmove`.
#[derive(Clone, Debug, Args)]
#[command(mut_arg("time", |a| a.help(
    "Time budget, e.g. 5s, 500ms, 1m. At least one of --time and --playouts is required; \
     with both, the search stops at whichever comes first"
)))]
pub struct SearchArgs {
    /// The position (vchess FEN); defaults to the initial position.
    #[arg(long, default_value = INITIAL_FEN)]
    pub fen: String,
    /// Moves played from the FEN first (notation like e5, c3-d4, c3xe5xc7).
    #[arg(long, num_args = 1..)]
    pub moves: Vec<String>,
    /// Budget, threads and seed.
    #[command(flatten)]
    pub settings: SearchFlags,
    /// Game identifier: searches of one game with the same id reuse the server's tree.
    #[arg(long, default_value = "")]
    pub game_id: String,
    /// Never stop early because the best move can no longer change (analysis mode).
    #[arg(long)]
    pub exhaustive: bool,
    /// Priority while waiting for the server's search threads: waiting interactive requests
    /// go first, then normal, then batch.
    #[arg(long, value_enum, default_value_t = PriorityArg::Normal)]
    pub priority: PriorityArg,
    /// Where the search runs: a server, or this process with --local.
    #[command(flatten)]
    pub backend: BackendArgs,
}

impl SearchArgs {
    /// The position to search, as the contract wants it. Moves typed in upper case (`C3`) are
    /// lowered: the notation is all lower case.
    pub fn position(&self) -> pb::Position {
        pb::Position {
            fen: self.fen.clone(),
            moves: self.moves.iter().map(|m| m.to_ascii_lowercase()).collect(),
        }
    }

    /// The budget; an error naming both flags when neither is given.
    pub fn limits(&self) -> Result<pb::Limits, ClientError> {
        self.settings.limits().ok_or_else(|| {
            ClientError::Invalid(
                "a search budget is required: give --time (e.g. 5s) and/or --playouts N".to_owned(),
            )
        })
    }

    /// Search options with the given multi-PV count and PV length.
    pub fn options(&self, multi_pv: u32, pv_length: u32) -> pb::SearchOptions {
        pb::SearchOptions {
            threads: self.settings.threads,
            multi_pv,
            pv_length,
            seed: self.settings.seed,
            game_id: self.game_id.clone(),
            exhaustive: self.exhaustive,
            priority: pb::Priority::from(self.priority) as i32,
            ..Default::default()
        }
    }
}

/// Flags of `emergo analyze`.
#[derive(Clone, Debug, Args)]
pub struct AnalyzeArgs {
    /// Position, budget, search and connection flags.
    #[command(flatten)]
    pub search: SearchArgs,
    /// How many top moves get a principal variation (and rows in the table).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub multipv: u32,
    /// Longest principal variation shown, in turns.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=128))]
    pub pv_len: u32,
    /// Time between updates, e.g. 250ms (the server accepts 50ms to 60s).
    #[arg(long, default_value = "250ms", value_parser = parse_duration)]
    pub interval: Duration,
    /// Print one JSON object per update per line instead of text.
    #[arg(long)]
    pub json: bool,
}

/// How `analyze` shows its updates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// One screen redrawn in place (stdout is a terminal).
    Live,
    /// One plain text block per update (stdout is a pipe or a file).
    Plain,
    /// One JSON object per line.
    Json,
}

/// Runs `emergo analyze`.
pub async fn run(args: AnalyzeArgs) -> Result<(), ClientError> {
    let s = &args.search;
    // Checked before connecting so a forgotten budget is reported as such, not as a
    // connection problem.
    let limits = s.limits()?;
    // Our own search id, so that Ctrl-C can stop the search with its answer.
    let search_id = emergo_bot_server::stop::SearchId::random().to_string();
    let request = pb::AnalyzeRequest {
        position: Some(s.position()),
        limits: Some(limits),
        options: Some(pb::SearchOptions {
            search_id: search_id.clone(),
            ..s.options(args.multipv, args.pv_len)
        }),
        report_interval_ms: u32::try_from(args.interval.as_millis()).unwrap_or(u32::MAX),
    };
    let mode = if args.json {
        Mode::Json
    } else if std::io::stdout().is_terminal() {
        Mode::Live
    } else {
        Mode::Plain
    };
    let rows = if args.multipv > 1 {
        args.multipv as usize
    } else {
        8
    };
    let backend = Backend::open(&s.backend).await?;
    let mut rx = backend.analyze(request).await?;
    let mut view = View {
        mode,
        rows,
        drawn_lines: 0,
        updates: 0,
    };
    // The first Ctrl-C stops the search with its answer: the stream goes on to its final
    // update (stop reason STOPPED), shown as usual.
    let mut ctrl_c = StopOnCtrlC::new();
    loop {
        tokio::select! {
            item = rx.recv() => match item {
                None => {
                    return Err(ClientError::Invalid(
                        "the analysis stream ended without a final update".to_owned(),
                    ));
                }
                Some(Err(status)) => return Err(status.into()),
                Some(Ok(update)) => {
                    view.show(&update)?;
                    if update.r#final {
                        return Ok(());
                    }
                }
            },
            () = ctrl_c.pressed() => ctrl_c.stop_or_quit(&backend, &search_id, "stopping").await,
        }
    }
}

/// The state of the `analyze` display.
struct View {
    mode: Mode,
    /// Rows of the move table.
    rows: usize,
    /// Lines of the last live screen, to move back over them.
    drawn_lines: u16,
    /// Updates shown so far.
    updates: usize,
}

impl View {
    fn show(&mut self, update: &pb::AnalysisUpdate) -> std::io::Result<()> {
        self.updates += 1;
        let stdout = std::io::stdout();
        let mut out = stdout.lock();
        match self.mode {
            Mode::Json => {
                writeln!(out, "{}", update_json(update))?;
            }
            Mode::Plain => {
                // The board does not change during a search: once is enough for a log.
                if self.updates == 1 {
                    if let Some(board) = board_text(&update.fen) {
                        write!(out, "{board}")?;
                    }
                    writeln!(out, "FEN: {}", update.fen)?;
                    writeln!(out)?;
                }
                let title = if update.r#final {
                    format!("final update ({})", self.updates)
                } else {
                    format!("update {}", self.updates)
                };
                writeln!(out, "=== {title} ===")?;
                write!(out, "{}", update_text(update, self.rows, false, None))?;
                writeln!(out)?;
            }
            Mode::Live => self.redraw(&mut out, update)?,
        }
        out.flush()
    }

    /// Replaces the previous screen with this update.
    fn redraw(&mut self, out: &mut impl Write, update: &pb::AnalysisUpdate) -> std::io::Result<()> {
        let (width, height) = terminal::size().unwrap_or((100, 40));
        let width = usize::from(width.max(20));
        let height = usize::from(height.max(5));
        let table_width = u16::try_from(width - 1).unwrap_or(u16::MAX);
        let body = update_text(update, self.rows, true, Some(table_width));
        let mut text = match board_text(&update.fen) {
            Some(board) => format!("{board}{body}"),
            None => body.clone(),
        };
        // Moving the cursor up cannot go past the top of the screen, so a screen taller than
        // the terminal would leave copies behind: drop the board first, then the top lines.
        if text.lines().count() >= height {
            text = body;
        }
        let lines: Vec<&str> = text.lines().collect();
        let keep = &lines[lines.len().saturating_sub(height - 1)..];
        if self.drawn_lines > 0 {
            out.queue(cursor::MoveToPreviousLine(self.drawn_lines))?;
            out.queue(terminal::Clear(terminal::ClearType::FromCursorDown))?;
        }
        for line in keep {
            // A line wider than the terminal would wrap and throw off the line count.
            let clipped: String = line.chars().take(width - 1).collect();
            writeln!(out, "{clipped}")?;
        }
        self.drawn_lines = u16::try_from(keep.len()).unwrap_or(u16::MAX);
        Ok(())
    }
}

/// The board diagram of a FEN, or `None` if it cannot be read.
pub fn board_text(fen: &str) -> Option<String> {
    let pos: Position = fen.parse().ok()?;
    Some(pos.diagram().to_string())
}

/// A proof state in words, from the point of view of the player it belongs to: `win in 7`,
/// `loss in 4`, `draw`, or empty while unproven.
pub fn proof_label(proof: pb::ProofStatus, plies: u32) -> String {
    match proof {
        pb::ProofStatus::Unproven => String::new(),
        pb::ProofStatus::Win => format!("win in {plies}"),
        pb::ProofStatus::Loss => format!("loss in {plies}"),
        pb::ProofStatus::Draw => "draw".to_owned(),
    }
}

/// Why a search stopped, in words.
pub fn stop_reason_text(reason: pb::StopReason) -> &'static str {
    match reason {
        pb::StopReason::Unspecified => "still running",
        pb::StopReason::Time => "time budget used",
        pb::StopReason::Playouts => "playout budget used",
        pb::StopReason::Solved => "position solved",
        pb::StopReason::NodeCap => "the tree reached the server's node cap",
        pb::StopReason::SingleLegalMove => "only one legal move",
        pb::StopReason::Cancelled => "cancelled",
        pb::StopReason::Deadline => "stopped early to meet the deadline",
        pb::StopReason::Shutdown => "the server is shutting down",
        pb::StopReason::BestMoveSettled => "best move settled (no other move could overtake it)",
        pb::StopReason::GameOver => "the game is over",
        pb::StopReason::Stopped => "stopped on request (StopSearch)",
    }
}

/// `1234567` as `1,234,567`.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Who is to move in a FEN, as a word.
fn side_in(fen: &str) -> Option<&'static str> {
    let pos: Position = fen.parse().ok()?;
    Some(match pos.side_to_move() {
        Player::White => "White",
        Player::Black => "Black",
    })
}

/// One update as text without the board: the move table, the statistics, the evaluation and
/// the best move (and on the final update, why the search stopped). `utf8` picks box-drawing
/// characters for a terminal; `width` lets the table wrap long variations to fit.
pub fn update_text(
    update: &pb::AnalysisUpdate,
    rows: usize,
    utf8: bool,
    width: Option<u16>,
) -> String {
    let mut out = String::new();
    // A forced move is played unsearched; its 50% is no estimate.
    let forced = update.stop_reason() == pb::StopReason::SingleLegalMove;
    if update.moves.is_empty() {
        let _ = writeln!(out, "(no legal moves)");
    } else {
        let mut table = table::new(if utf8 { Style::Utf8 } else { Style::Ascii });
        match width {
            Some(w) => {
                table.set_content_arrangement(ContentArrangement::Dynamic);
                table.set_width(w);
            }
            None => {
                table.set_content_arrangement(ContentArrangement::Disabled);
            }
        }
        table.set_header(vec!["#", "move", "visits", "win %", "proven", "PV"]);
        for (i, m) in update.moves.iter().take(rows).enumerate() {
            table.add_row(vec![
                (i + 1).to_string(),
                m.r#move.clone(),
                grouped(m.visits),
                if forced && m.visits == 0 {
                    "forced".to_owned()
                } else {
                    format!("{:.1}", f64::from(m.value) * 100.0)
                },
                proof_label(m.proof(), m.proof_plies),
                m.pv.join(" "),
            ]);
        }
        table::right_align(&mut table, [0, 2, 3]);
        let _ = writeln!(out, "{table}");
        if update.moves.len() > rows {
            let _ = writeln!(
                out,
                "({} not shown)",
                super::count((update.moves.len() - rows) as u64, "more root move")
            );
        }
    }
    let default_stats = pb::SearchStats::default();
    let st = update.stats.as_ref().unwrap_or(&default_stats);
    let _ = writeln!(
        out,
        "playouts {} ({}/s), nodes {}{}, tree {:.1} MiB{}, depth {} (mean {:.1})\nelapsed {:.2} s, threads {}, reused visits {}",
        grouped(st.playouts),
        grouped(st.playouts_per_second.max(0.0).round() as u64),
        grouped(st.nodes),
        if st.node_cap_reached {
            " (tree full: the server's node cap or memory share)"
        } else {
            ""
        },
        st.tree_bytes as f64 / 1_048_576.0,
        if st.reclaims > 0 {
            format!(
                " (reclaimed {} times, {} nodes dropped)",
                grouped(u64::from(st.reclaims)),
                grouped(st.nodes_reclaimed)
            )
        } else {
            String::new()
        },
        st.max_depth,
        st.mean_depth,
        st.elapsed_ms as f64 / 1000.0,
        st.threads,
        grouped(st.reused_visits),
    );
    let side = side_in(&update.fen).unwrap_or("the side to move");
    let proof = proof_label(update.root_proof(), update.root_proof_plies);
    let proven = if proof.is_empty() {
        String::new()
    } else {
        format!(", proven {proof}")
    };
    if forced {
        let _ = writeln!(out, "eval: forced (the only legal move){proven}");
    } else {
        let _ = writeln!(
            out,
            "eval: {:.1}% for {side} (to move){proven}",
            f64::from(update.root_value) * 100.0,
        );
    }
    let best = if update.best_move.is_empty() {
        "(none: the game is over)"
    } else {
        update.best_move.as_str()
    };
    if update.r#final {
        let _ = writeln!(out, "stopped: {}", stop_reason_text(update.stop_reason()));
        let _ = writeln!(out, "best move: {best}");
    } else {
        let _ = writeln!(out, "best move so far: {best}");
    }
    out
}

/// Rounds a probability for JSON: `f32` widened to `f64` would print as 0.5400000214576721.
fn round6(x: f32) -> f64 {
    (f64::from(x) * 1e6).round() / 1e6
}

/// One update as a JSON object mirroring the contract's `AnalysisUpdate`, enums by name
/// (`"STOP_REASON_TIME"`, `"PROOF_STATUS_WIN"`).
pub fn update_json(update: &pb::AnalysisUpdate) -> Value {
    let default_stats = pb::SearchStats::default();
    let st = update.stats.as_ref().unwrap_or(&default_stats);
    let moves: Vec<Value> = update
        .moves
        .iter()
        .map(|m| {
            json!({
                "move": m.r#move,
                "visits": m.visits,
                "value": round6(m.value),
                "proof": m.proof().as_str_name(),
                "proof_plies": m.proof_plies,
                "pv": m.pv,
            })
        })
        .collect();
    json!({
        "final": update.r#final,
        "best_move": update.best_move,
        "root_value": round6(update.root_value),
        "root_proof": update.root_proof().as_str_name(),
        "root_proof_plies": update.root_proof_plies,
        "moves": moves,
        "stats": {
            "playouts": st.playouts,
            "nodes": st.nodes,
            "elapsed_ms": st.elapsed_ms,
            "playouts_per_second": st.playouts_per_second,
            "max_depth": st.max_depth,
            "mean_depth": st.mean_depth,
            "reused_visits": st.reused_visits,
            "threads": st.threads,
            "node_cap_reached": st.node_cap_reached,
            "tree_bytes": st.tree_bytes,
            "reclaims": st.reclaims,
            "nodes_reclaimed": st.nodes_reclaimed,
        },
        "stop_reason": update.stop_reason().as_str_name(),
        "fen": update.fen,
    })
}

/// Flags of `emergo bestmove`.
#[derive(Clone, Debug, Args)]
pub struct BestMoveArgs {
    /// Position, budget, search and connection flags.
    #[command(flatten)]
    pub search: SearchArgs,
    /// After answering, the server goes on searching the position after its move until the
    /// game's next request (needs --game-id; send the next position with the same id).
    #[arg(long, requires = "game_id")]
    pub ponder: bool,
    /// The mover's clock instead of a time per move: time left (e.g. 60s), as a tournament
    /// host sends it; the server's time manager picks the move's budget.
    #[arg(long, value_name = "T", value_parser = parse_duration)]
    pub clock: Option<Duration>,
    /// The clock's increment per move (with --clock).
    #[arg(long, value_name = "T", value_parser = parse_duration, requires = "clock")]
    pub increment: Option<Duration>,
    /// Moves until the next time control (with --clock; unset: the time manager's horizon).
    #[arg(long, value_name = "N", requires = "clock", value_parser = clap::value_parser!(u32).range(1..))]
    pub moves_to_go: Option<u32>,
    /// Play at a level: 1 (a beginner) to 8 (the full engine).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=8))]
    pub level: Option<u32>,
    /// Print the whole answer as one JSON object (the contract's BestMoveResponse).
    #[arg(long)]
    pub json: bool,
}

/// The budget when none is given: as long as a player might wait for a move.
const DEFAULT_BEST_MOVE_TIME: Duration = Duration::from_secs(1);

/// Runs `emergo bestmove`: prints the best move on one line. When the game is already over it
/// prints an empty line, says why on stderr and exits with status 1, so a script can tell "no
/// move" from an error (status 2).
pub async fn run_best_move(args: BestMoveArgs) -> Result<(), ClientError> {
    let s = &args.search;
    let clock = args.clock.map(|left| pb::Clock {
        remaining_ms: super::flags::budget_ms(left),
        increment_ms: args
            .increment
            .map_or(0, |i| u32::try_from(i.as_millis()).unwrap_or(u32::MAX)),
        moves_to_go: args.moves_to_go,
        ..Default::default()
    });
    let limits = match (s.settings.limits(), clock) {
        (Some(l), clock) => pb::Limits { clock, ..l },
        (None, Some(clock)) => pb::Limits {
            clock: Some(clock),
            ..Default::default()
        },
        // A level below 8 has its own budget; otherwise a second, as a player would wait.
        (None, None) if args.level.is_some_and(|l| l < 8) => pb::Limits::default(),
        (None, None) => {
            super::flags::limits(Some(DEFAULT_BEST_MOVE_TIME), None).unwrap_or_default()
        }
    };
    let request = pb::BestMoveRequest {
        position: Some(s.position()),
        limits: Some(limits),
        options: Some(pb::SearchOptions {
            ponder: args.ponder,
            level: args.level.unwrap_or(0),
            ..s.options(1, 1)
        }),
    };
    let backend = Backend::open(&s.backend).await?;
    // Stopping would only give the same move sooner: the first Ctrl-C quits.
    let response = tokio::select! {
        r = backend.best_move(request) => r?,
        () = interrupt::ctrl_c() => interrupt::quit(),
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        let line = serde_json::to_string(&response)
            .map_err(|e| ClientError::Invalid(format!("JSON: {e}")))?;
        writeln!(out, "{line}")?;
    } else {
        writeln!(out, "{}", response.best_move)?;
    }
    out.flush()?;
    if response.best_move.is_empty() {
        // The local game knows about repetition too; the FEN alone would not.
        // The moves as sent (lowered), so that `C3` finds the same game the server saw.
        let why = Game::from_fen_and_moves(&s.fen, &s.position().moves)
            .ok()
            .and_then(|g| g.outcome())
            .map(|o| format!(": {o}"))
            .unwrap_or_default();
        eprintln!("emergo: no move, the game is over{why}");
        std::process::exit(1);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(final_: bool) -> pb::AnalysisUpdate {
        pb::AnalysisUpdate {
            r#final: final_,
            moves: vec![
                pb::MoveInfo {
                    r#move: "a1".into(),
                    visits: 1234,
                    value: 0.54,
                    proof: pb::ProofStatus::Unproven as i32,
                    proof_plies: 0,
                    pv: vec!["a1".into(), "i9".into()],
                },
                pb::MoveInfo {
                    r#move: "c3".into(),
                    visits: 10,
                    value: 1.0,
                    proof: pb::ProofStatus::Win as i32,
                    proof_plies: 7,
                    pv: vec!["c3".into()],
                },
            ],
            best_move: "a1".into(),
            root_value: 0.54,
            root_proof: 0,
            root_proof_plies: 0,
            stats: Some(pb::SearchStats {
                playouts: 1_234_567,
                ..Default::default()
            }),
            stop_reason: if final_ {
                pb::StopReason::Time as i32
            } else {
                0
            },
            fen: INITIAL_FEN.into(),
            search_id: String::new(),
        }
    }

    /// A forced move reads "forced", with its proof when the server has one.
    #[test]
    fn forced_move_text() {
        let mut u = sample(true);
        u.moves.truncate(1);
        u.moves[0].visits = 0;
        u.moves[0].value = 0.5;
        u.root_value = 0.5;
        u.stop_reason = pb::StopReason::SingleLegalMove as i32;
        let t = update_text(&u, 8, false, None);
        assert!(t.contains("eval: forced (the only legal move)"), "{t}");
        assert!(t.contains("| forced |"), "{t}");
        assert!(!t.contains("50.0"), "{t}");
        u.root_proof = pb::ProofStatus::Win as i32;
        u.root_proof_plies = 1;
        let t = update_text(&u, 8, false, None);
        assert!(
            t.contains("eval: forced (the only legal move), proven win in 1"),
            "{t}"
        );
    }

    #[test]
    fn text_and_json() {
        let t = update_text(&sample(true), 8, false, None);
        assert!(t.contains("best move: a1"), "{t}");
        assert!(t.contains("win in 7"), "{t}");
        assert!(t.contains("1,234,567"), "{t}");
        assert!(t.contains("stopped: time budget used"), "{t}");
        assert!(t.contains("for White"), "{t}");
        assert!(!t.contains('\x1b'));
        let t = update_text(&sample(false), 1, true, Some(60));
        assert!(t.contains("best move so far: a1"), "{t}");
        assert!(t.contains("(1 more root move not shown)"), "{t}");
        let j = update_json(&sample(true));
        assert_eq!(j["stop_reason"], "STOP_REASON_TIME");
        assert_eq!(j["moves"][1]["proof"], "PROOF_STATUS_WIN");
        assert_eq!(j["moves"][0]["value"], 0.54);
        assert_eq!(j["stats"]["playouts"], 1_234_567);
        assert_eq!(j["stats"]["node_cap_reached"], false);
        assert!(!t.contains("tree full"), "{t}");
        let mut full = sample(true);
        if let Some(stats) = full.stats.as_mut() {
            stats.node_cap_reached = true;
        }
        let t = update_text(&full, 8, false, None);
        assert!(
            t.contains("(tree full: the server's node cap or memory share)"),
            "{t}"
        );
        assert_eq!(update_json(&full)["stats"]["node_cap_reached"], true);
        // Tree memory and reclaims, in the text and the JSON.
        assert!(t.contains("tree 0.0 MiB,"), "{t}");
        assert!(!t.contains("reclaimed"), "{t}");
        if let Some(stats) = full.stats.as_mut() {
            stats.tree_bytes = 3 << 20;
            stats.reclaims = 2;
            stats.nodes_reclaimed = 1_500_000;
        }
        let t = update_text(&full, 8, false, None);
        assert!(
            t.contains("tree 3.0 MiB (reclaimed 2 times, 1,500,000 nodes dropped)"),
            "{t}"
        );
        let j = update_json(&full);
        assert_eq!(j["stats"]["tree_bytes"], 3 << 20);
        assert_eq!(j["stats"]["reclaims"], 2);
        assert_eq!(j["stats"]["nodes_reclaimed"], 1_500_000);
    }

    #[test]
    fn numbers() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(123_456_789), "123,456,789");
    }
}
