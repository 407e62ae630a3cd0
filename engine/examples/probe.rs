//! Probe one position of an arena PGN: the MCTS's view of every root move (prior, static value,
//! visits, value after a timed search) beside alpha-beta scores of the same move at growing
//! depths. A diagnosis aid, not a test.
//!
//! `cargo run --release -p emergo-engine --example probe -- games.pgn GAME TURN [ms [MOVES...]]`
//! (MOVES: played after the game's first TURN - 1 turns, to look below a root move)

use std::time::Duration;

use emergo_engine::alphabeta::{AlphaBeta, quiesce};
use emergo_engine::eval::Weights;
use emergo_engine::{EmergoState, MctsConfig};
use emergo_mcts::{Game as _, Search, SearchParams};
use emergo_rules::{Game, Move};

#[path = "common/pgn.rs"]
mod pgn;

const USAGE: &str = "usage: probe games.pgn GAME TURN [ms [MOVES...]] (GAME from 0, TURN from 1)";

/// The game and turn the arguments name, checked against the file.
fn position(args: &[String]) -> Result<(Game, String, usize), String> {
    let [_, path, game, turn, ..] = args else {
        return Err(USAGE.to_string());
    };
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let games = pgn::parse_games(&text);
    let gi: usize = game.parse().map_err(|_| format!("GAME: {game}? {USAGE}"))?;
    let (_, _, fen, moves) = games
        .get(gi)
        .ok_or_else(|| format!("GAME {gi}: the file has {} games", games.len()))?;
    let turn: usize = turn.parse().map_err(|_| format!("TURN: {turn}? {USAGE}"))?;
    let played = turn
        .checked_sub(1)
        .and_then(|t| moves.get(t))
        .ok_or_else(|| format!("TURN {turn}: game {gi} has turns 1 to {}", moves.len()))?;
    let mut before: Vec<&str> = moves[..turn - 1].iter().map(String::as_str).collect();
    before.extend(args.iter().skip(5).map(String::as_str));
    let game = Game::from_fen_and_moves(fen, &before).map_err(|e| format!("moves: {e}"))?;
    Ok((game, played.clone(), turn))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (game, played, turn) = position(&args).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let ms: u64 = args.get(4).and_then(|a| a.parse().ok()).unwrap_or(200);
    println!("{}", game.position());
    println!("the game played at turn {turn}: {played}");
    let config = MctsConfig::default();
    let state = EmergoState::from_game(&game).with_knowledge(config.shared_knowledge());
    let legal: Vec<Move> = game.legal_moves().as_slice().to_vec();
    let (mut priors, mut values) = (Vec::new(), Vec::new());
    state.move_knowledge(&legal, &mut priors, &mut values);
    let total: f32 = priors.iter().sum();
    let mut params = SearchParams {
        max_time: Some(Duration::from_millis(ms)),
        ..SearchParams::default()
    };
    config.apply(&mut params);
    let snap = Search::new(state, params).run();
    println!(
        "playouts {} nodes {} depth {:.1}",
        snap.playouts, snap.nodes, snap.mean_depth
    );
    // Every score comes from a fresh table (cleared before each search): 2^16 entries are
    // plenty for searches of depth 5 and cheap to clear.
    let mut ab = AlphaBeta::new(16, Weights::default());
    let mut rows: Vec<Row> = legal
        .iter()
        .enumerate()
        .map(|(i, &m)| {
            let st = snap.moves.iter().find(|s| s.mv == m);
            let mut after = game.clone();
            after.play(m).unwrap();
            // Depth 0: the quiescence search the MCTS scores with; then alpha-beta (which,
            // unlike a root search, also searches a position with one legal move).
            let scores: Vec<i32> = (0..6)
                .map(|d| {
                    ab.clear();
                    if d == 0 {
                        -quiesce(after.position(), &Weights::default(), &mut 0)
                    } else {
                        -ab.score(after.position(), d)
                    }
                })
                .collect();
            Row {
                mv: m,
                prior: priors[i] / total,
                value: values[i],
                visits: st.map_or(0, |s| s.visits),
                q: st.map_or(0.0, |s| s.value),
                scores,
            }
        })
        .collect();
    // Best first by the deepest alpha-beta score.
    rows.sort_by(|a, b| b.scores.last().cmp(&a.scores.last()));
    println!(
        "move      prior  value  visits  mctsQ | after the move: quiescence, alpha-beta depth 1..5"
    );
    for r in rows {
        println!(
            "{:8} {:6.3} {:6.3} {:7} {:6.3} | {:?}",
            r.mv.to_string(),
            r.prior,
            r.value,
            r.visits,
            r.q,
            r.scores
        );
    }
}

/// One root move as the probe prints it.
struct Row {
    mv: Move,
    /// The MCTS's prior (normalised) and static value of the move.
    prior: f32,
    value: f32,
    /// Visits and value after the timed search.
    visits: u64,
    q: f32,
    /// For the mover, after the move: quiescence, then alpha-beta at depths 1 to 5.
    scores: Vec<i32>,
}
