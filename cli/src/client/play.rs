//! `emergo play`: a human plays the engine in the terminal.
//!
//! The game state lives here, in the rules core's [`Game`] (which also knows threefold
//! repetition); the engine is asked for each of its moves with `BestMove` under one game id, so
//! the server can reuse its tree from move to move. Input is one command per line on stdin, so
//! a game can also be scripted through a pipe. Whatever way the game ends (rules, resignation,
//! end of input, Ctrl-C, an engine failure), the record is written.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::{Args, ValueEnum};
use emergo_proto::v1 as pb;
use emergo_rules::{Game, GameResult, Move, Outcome, Player};
use tokio::sync::mpsc;

use super::analyze::{INITIAL_FEN, grouped, proof_label};
use super::flags::limits;
use super::interrupt::ctrl_c;
use super::record::GameRecord;
use super::{Backend, BackendArgs, ClientError, SearchFlags};
use crate::tools::legal::sorted_legal;

/// The most moves one request may carry (the contract's limit).
const MAX_REQUEST_MOVES: usize = 2000;

/// The engine's thinking time when neither `--time` nor `--playouts` is given.
const DEFAULT_TIME: Duration = Duration::from_secs(2);

/// The human's colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Side {
    /// White, who moves first.
    White,
    /// Black, who moves second.
    Black,
}

impl Side {
    fn player(self) -> Player {
        match self {
            Side::White => Player::White,
            Side::Black => Player::Black,
        }
    }
}

/// Flags of `emergo play`.
#[derive(Clone, Debug, Args)]
#[command(mut_arg("time", |a| a.help(
    "The engine's thinking time per move, e.g. 2s, 500ms (default 2s unless --playouts is given)"
)))]
pub struct PlayArgs {
    /// Your colour.
    #[arg(long = "as", value_name = "COLOUR", value_enum, default_value_t = Side::White)]
    pub side: Side,
    /// The engine's budget per move, threads and seed.
    #[command(flatten)]
    pub engine: SearchFlags,
    /// Let the engine think on your time: after each of its moves the server (or the local
    /// engine) ponders on idle threads until your move arrives, and reuses what it found.
    #[arg(long)]
    pub ponder: bool,
    /// The engine's playing level: 1 (a beginner) to 8 (the full engine, the default). Levels
    /// 1-7 play at once on a small budget of their own, with mistakes drawn as the level's.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=8))]
    pub level: Option<u32>,
    /// The start position (vchess FEN); defaults to the initial position.
    #[arg(long, default_value = INITIAL_FEN, conflicts_with = "resume")]
    pub fen: String,
    /// Moves already played from the FEN (e.g. `--moves e5 a1 c3-d4`): the game goes on from
    /// there, and the record holds them.
    #[arg(long, num_args = 1.., value_name = "MOVE", conflicts_with = "resume")]
    pub moves: Vec<String>,
    /// Resume the game of a record written by `emergo play` (or any PGN game record of
    /// Emergo): its start position and moves, then the game goes on (an ended game is refused).
    #[arg(long, value_name = "RECORD")]
    pub resume: Option<PathBuf>,
    /// Where to write the game record (default: emergo-game-UNIXTIME.pgn in the current
    /// directory, UNIXTIME the seconds since 1970).
    #[arg(long)]
    pub record: Option<PathBuf>,
    /// Where the engine runs: a server, or this process with --local.
    #[command(flatten)]
    pub backend: BackendArgs,
}

/// How a game ended.
#[derive(Debug)]
enum Ending {
    /// By the rules.
    Rules(Outcome),
    /// The human typed quit or resign.
    Resigned,
    /// Input ended (EOF or Ctrl-C) with the game still going.
    Unfinished,
    /// The engine could not answer or answered nonsense.
    EngineFailure(String),
}

/// What the human did on their turn.
enum HumanTurn {
    /// Played a legal move.
    Played,
    /// Typed quit or resign.
    Resigned,
    /// Input ended.
    Stopped,
}

const HELP: &str = "\
Commands, one per line:
  <move>         play a move: an entry like e5, a step like c3-d4, a capture chain like c3xe5xc7
  moves          list the legal moves
  undo           take back your last move and the engine's reply
  help           this text
  quit, resign   resign the game (it counts as a loss; asks to confirm with y)
End of input (Ctrl-D) or Ctrl-C stops the game unfinished; the record is written either way.";

/// `White` or `Black`.
fn name(p: Player) -> &'static str {
    match p {
        Player::White => "White",
        Player::Black => "Black",
    }
}

/// The game to start from: `--resume`'s record, or `--fen` with `--moves`; a finished game is
/// refused (there is nothing to play).
fn starting_game(args: &PlayArgs) -> Result<Game, ClientError> {
    let Some(path) = &args.resume else {
        let game = crate::tools::game_from_args(&args.fen, &args.moves)
            .map_err(|e| ClientError::Invalid(format!("--fen/--moves: {e}")))?;
        if let Some(outcome) = game.outcome() {
            return Err(ClientError::Invalid(format!(
                "--fen/--moves: the game is over ({}, {})",
                outcome.result, outcome.reason
            )));
        }
        return Ok(game);
    };
    let invalid =
        |what: String| ClientError::Invalid(format!("--resume {}: {what}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| invalid(e.to_string()))?;
    let records = super::record::parse_pgn(&text).map_err(|e| invalid(e.to_string()))?;
    let record = match records.as_slice() {
        [one] => one,
        [] => return Err(invalid("no game in the file".to_owned())),
        more => {
            return Err(invalid(format!(
                "{} games in the file; resume takes a file with one",
                more.len()
            )));
        }
    };
    let game = record.replay().map_err(|e| invalid(e.to_string()))?;
    if let Some(outcome) = game.outcome() {
        return Err(invalid(format!(
            "the game is over ({}, {}): nothing to resume",
            outcome.result, outcome.reason
        )));
    }
    Ok(game)
}

/// Runs `emergo play`.
pub async fn run(args: PlayArgs) -> Result<(), ClientError> {
    let mut game = starting_game(&args)?;
    let human = args.side.player();
    let time = match (args.engine.time, args.engine.playouts) {
        (None, None) => Some(DEFAULT_TIME),
        (t, _) => t,
    };
    let limits = limits(time, args.engine.playouts).unwrap_or_default();
    let path = args.record.clone().unwrap_or_else(|| {
        let secs = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        PathBuf::from(format!("emergo-game-{secs}.pgn"))
    });
    // Find out now, not after an hour's game, that the record cannot be written.
    // Opening to append creates the file if need be and leaves an existing one as it is.
    std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(&path)
        .map_err(|e| record_error(&path, e))?;
    let backend = Backend::open(&args.backend).await?;
    let engine_name = engine_description(&args, time);
    let engine = Opponent {
        backend,
        limits,
        threads: args.engine.threads,
        seed: args.engine.seed,
        game_id: new_game_id(),
        ponder: args.ponder,
        level: args.level.unwrap_or(0),
    };
    let mut input = Input::spawn();

    println!(
        "You play {} against {engine_name}. Type a move, or help.",
        name(human)
    );
    if !game.moves().is_empty() {
        println!(
            "Resuming after {}: {}",
            super::count(game.moves().len() as u64, "turn"),
            game.moves()
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
    let ending = loop {
        if let Some(outcome) = game.outcome() {
            break Ending::Rules(outcome);
        }
        if game.position().side_to_move() == human {
            show_board(&game, human);
            match human_turn(&mut game, &mut input, human).await? {
                HumanTurn::Played => {}
                HumanTurn::Resigned => break Ending::Resigned,
                HumanTurn::Stopped => break Ending::Unfinished,
            }
        } else {
            println!("{} (engine) is thinking...", name(human.other()));
            let reply = tokio::select! {
                r = engine.reply(&game) => r,
                () = ctrl_c() => break Ending::Unfinished,
            };
            match reply {
                Ok((mv, note)) => {
                    println!("{} (engine) plays {mv}{note}", name(human.other()));
                    // The server checked the move against the same rules, but a record must
                    // only ever hold legal moves, so check again here.
                    if let Err(e) = game.play(mv) {
                        break Ending::EngineFailure(format!("the engine's move is illegal: {e}"));
                    }
                }
                Err(e) => break Ending::EngineFailure(e),
            }
        }
    };

    let (result, termination) = match &ending {
        Ending::Rules(o) => (o.result.as_str(), o.reason.as_str()),
        Ending::Resigned => (GameResult::win_for(human.other()).as_str(), "resignation"),
        Ending::Unfinished => ("*", "unfinished"),
        Ending::EngineFailure(_) => ("*", "engine-failure"),
    };
    println!();
    if matches!(ending, Ending::Rules(_)) {
        show_board(&game, human);
    }
    match &ending {
        Ending::Rules(o) => {
            let verdict = match o.result.winner() {
                Some(p) if p == human => "You win!",
                Some(_) => "You lose.",
                None => "Draw.",
            };
            println!("Game over: {} ({}). {verdict}", o.result, o.reason);
        }
        Ending::Resigned => println!("You resigned: {result}."),
        Ending::Unfinished => println!("Game stopped unfinished (*)."),
        Ending::EngineFailure(e) => println!("Game stopped: engine failure: {e}"),
    }

    let (white, black) = match human {
        Player::White => ("human".to_owned(), engine_name),
        Player::Black => (engine_name, "human".to_owned()),
    };
    let record = GameRecord {
        tags: vec![
            ("Event".to_owned(), "emergo play".to_owned()),
            ("Date".to_owned(), super::date::today()),
            ("White".to_owned(), white),
            ("Black".to_owned(), black),
        ],
        fen: game.start().to_string(),
        moves: game.moves().iter().map(ToString::to_string).collect(),
        result: result.to_owned(),
        termination: termination.to_owned(),
    };
    std::fs::write(&path, record.to_pgn()).map_err(|e| record_error(&path, e))?;
    println!("Game record written to {}", path.display());
    if !game.moves().is_empty() {
        // As lichess offers an analysis at the end: the command that reviews this game.
        let local = if args.backend.local { " --local" } else { "" };
        println!(
            "Review it: emergo review{local} {}",
            shell_word(&path.display().to_string())
        );
    }
    match ending {
        Ending::EngineFailure(e) => Err(ClientError::Invalid(e)),
        _ => Ok(()),
    }
}

/// `word` as one shell word: as it is when it holds only safe characters, else single-quoted.
fn shell_word(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./=:@+,".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The error for a game record that cannot be written, naming its path.
fn record_error(path: &std::path::Path, e: std::io::Error) -> ClientError {
    ClientError::Invalid(format!(
        "cannot write the game record to {}: {e}",
        path.display()
    ))
}

/// How the record names the engine: where it runs and its budget.
fn engine_description(args: &PlayArgs, time: Option<Duration>) -> String {
    let place = if args.backend.local {
        "local".to_owned()
    } else {
        args.backend.connect.server.clone()
    };
    let mut budget = Vec::new();
    if let Some(t) = time {
        budget.push(format!("time={t:?}"));
    }
    if let Some(p) = args.engine.playouts {
        budget.push(format!("playouts={p}"));
    }
    budget.push(format!("threads={}", args.engine.threads));
    if let Some(level) = args.level.filter(|&l| l < 8) {
        budget.push(format!("level={level}"));
    }
    format!("emergo-bot {place} {}", budget.join(","))
}

/// A game id unlikely to collide with another client's, so this game's tree is its own.
fn new_game_id() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    // Mixing in the process id separates two games started in the same nanosecond.
    let mixed = (nanos as u64) ^ (u64::from(std::process::id()) << 32);
    format!("play-{mixed:016x}")
}

/// The engine side: the backend and how long it thinks.
struct Opponent {
    backend: Backend,
    limits: pb::Limits,
    threads: u32,
    seed: u64,
    game_id: String,
    ponder: bool,
    /// `SearchOptions.level`; 0: the full engine.
    level: u32,
}

impl Opponent {
    /// The engine's move in `game`, with a short note on its evaluation.
    async fn reply(&self, game: &Game) -> Result<(Move, String), String> {
        let request = pb::BestMoveRequest {
            position: Some(request_position(game)),
            limits: Some(self.limits),
            options: Some(pb::SearchOptions {
                threads: self.threads,
                seed: self.seed,
                game_id: self.game_id.clone(),
                ponder: self.ponder,
                level: self.level,
                ..Default::default()
            }),
        };
        let response = self
            .backend
            .best_move(request)
            .await
            .map_err(|e| e.to_string())?;
        let mv: Move = response
            .best_move
            .parse()
            .map_err(|e| format!("the engine answered {:?}: {e}", response.best_move))?;
        let note = response.analysis.as_ref().map_or_else(String::new, |a| {
            let stats = a.stats.unwrap_or_default();
            let proof = a
                .moves
                .iter()
                .find(|m| m.r#move == response.best_move)
                .map(|m| proof_label(m.proof(), m.proof_plies))
                .unwrap_or_default();
            // A forced move is not searched; "0 playouts, 50.0%" would mislead.
            if a.stop_reason() == pb::StopReason::SingleLegalMove {
                return if proof.is_empty() {
                    "  (forced)".to_owned()
                } else {
                    format!("  (forced, proven {proof})")
                };
            }
            format!(
                "  (its estimate {:.1}%{}, {} playouts in {:.2} s)",
                f64::from(a.root_value) * 100.0,
                if proof.is_empty() {
                    String::new()
                } else {
                    format!(", proven {proof}")
                },
                grouped(stats.playouts),
                stats.elapsed_ms as f64 / 1000.0
            )
        });
        Ok((mv, note))
    }
}

/// The game as the contract's position: the start FEN and every move, so that the server sees
/// each request continue the previous one (tree reuse) and counts repetitions. A game longer
/// than a request may carry starts from a later position instead: tree reuse and the oldest
/// positions of the repetition count are lost, the game goes on.
fn request_position(game: &Game) -> pb::Position {
    let moves = game.moves();
    let base = moves.len().saturating_sub(MAX_REQUEST_MOVES);
    let fen = game
        .positions()
        .get(base)
        .unwrap_or(game.start())
        .to_string();
    pb::Position {
        fen,
        moves: moves[base..].iter().map(ToString::to_string).collect(),
    }
}

/// Lines of stdin, read on a plain thread.
///
/// Not tokio's stdin: its blocking read would keep the runtime from shutting down while the
/// user has typed nothing. A detached thread ends with the process.
struct Input {
    lines: mpsc::UnboundedReceiver<String>,
    /// Echo what was read when it comes from a pipe, so the transcript shows the commands.
    echo: bool,
}

impl Input {
    fn spawn() -> Input {
        let (tx, rx) = mpsc::unbounded_channel();
        std::thread::spawn(move || {
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Input {
            lines: rx,
            echo: !std::io::stdin().is_terminal(),
        }
    }

    /// The next line, or `None` at the end of input or on Ctrl-C.
    async fn next(&mut self) -> Option<String> {
        let line = tokio::select! {
            l = self.lines.recv() => l,
            () = ctrl_c() => None,
        };
        if self.echo {
            println!("{}", line.as_deref().unwrap_or(""));
        }
        line
    }
}

/// The board from the human's side: Black sees rank 1 at the top.
fn show_board(game: &Game, human: Player) {
    let diagram = game.position().diagram();
    match human {
        Player::White => print!("\n{diagram}"),
        Player::Black => print!("\n{}", diagram.from_black()),
    }
    if let Some(last) = game.moves().last() {
        println!("Last move: {last}");
    }
}

/// The legal moves, sorted, wrapped to a terminal's width.
fn legal_moves_text(game: &Game) -> String {
    let moves = sorted_legal(game);
    let mut out = format!("Legal moves ({}):", moves.len());
    let mut width = out.len();
    for (mv, _) in &moves {
        if width + 1 + mv.len() > 78 {
            out.push_str("\n ");
            width = 1;
        }
        out.push(' ');
        out.push_str(mv);
        width += 1 + mv.len();
    }
    out
}

/// Reads commands until the human plays a legal move, resigns or input ends.
async fn human_turn(
    game: &mut Game,
    input: &mut Input,
    human: Player,
) -> Result<HumanTurn, ClientError> {
    loop {
        print!("{} (you) to move> ", name(human));
        std::io::stdout().flush()?;
        let Some(line) = input.next().await else {
            return Ok(HumanTurn::Stopped);
        };
        let command = line.trim().to_ascii_lowercase();
        match command.as_str() {
            "" => {}
            "help" | "?" => println!("{HELP}"),
            "moves" => println!("{}", legal_moves_text(game)),
            // One mistyped word must not throw a game away.
            "quit" | "resign" => {
                print!("Resign this game? [y/N] ");
                std::io::stdout().flush()?;
                let Some(answer) = input.next().await else {
                    return Ok(HumanTurn::Stopped);
                };
                if matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
                    return Ok(HumanTurn::Resigned);
                }
                println!("Not resigned; the game goes on.");
            }
            "undo" => {
                let taken = undo_turn(game, human);
                if taken.is_empty() {
                    println!("Nothing to undo: you have not moved yet.");
                } else {
                    let list: Vec<String> = taken.iter().map(ToString::to_string).collect();
                    println!("Took back {}.", list.join(" "));
                    show_board(game, human);
                }
            }
            text => match text.parse::<Move>() {
                Err(e) => {
                    println!("Cannot read {text:?}: {e}");
                    println!("{}", legal_moves_text(game));
                }
                Ok(mv) => match game.play(mv) {
                    Ok(()) => return Ok(HumanTurn::Played),
                    Err(e) => {
                        println!("Illegal move: {e}");
                        println!("{}", legal_moves_text(game));
                    }
                },
            },
        }
    }
}

/// Takes back moves until it is the human's turn again having taken back one of the human's
/// moves (normally the engine's reply and the human's move before it). Returns them in the
/// order they were played; empty when the human has not moved yet.
fn undo_turn(game: &mut Game, human: Player) -> Vec<Move> {
    let positions = game.positions();
    let before_last = positions.split_last().map_or(&[][..], |(_, rest)| rest);
    if !before_last.iter().any(|p| p.side_to_move() == human) {
        return Vec::new();
    }
    let mut taken = Vec::new();
    while let Some(mv) = game.undo() {
        taken.push(mv);
        if game.position().side_to_move() == human {
            break;
        }
    }
    taken.reverse();
    taken
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words() {
        assert_eq!(shell_word("emergo-game-1.pgn"), "emergo-game-1.pgn");
        assert_eq!(shell_word("my games/a.pgn"), "'my games/a.pgn'");
        assert_eq!(shell_word("it's.pgn"), r"'it'\''s.pgn'");
    }

    #[test]
    fn undo_takes_back_a_whole_turn() {
        let mut game = Game::from_fen_and_moves(INITIAL_FEN, &["a1", "i9", "c3"]).unwrap();
        // Black to move: the human (Black) takes back i9 and White's c3.
        assert_eq!(undo_turn(&mut game, Player::Black).len(), 2);
        assert_eq!(game.moves().len(), 1);
        // Now only White's a1 is left: Black has nothing of its own to take back.
        assert!(undo_turn(&mut game, Player::Black).is_empty());
        let mut game = Game::from_fen_and_moves(INITIAL_FEN, &["a1", "i9"]).unwrap();
        assert_eq!(undo_turn(&mut game, Player::White).len(), 2);
        assert!(game.moves().is_empty());
        assert!(undo_turn(&mut game, Player::White).is_empty());
    }

    #[test]
    fn long_games_fit_a_request() {
        let game = Game::from_fen_and_moves(INITIAL_FEN, &["a1", "i9"]).unwrap();
        let p = request_position(&game);
        assert_eq!(p.fen, INITIAL_FEN);
        assert_eq!(p.moves, vec!["a1", "i9"]);
    }
}
