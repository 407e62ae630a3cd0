//! Where does an engine lose its games? For every move of the engine named on the command line
//! in an `emergo arena` PGN file, an alpha-beta search of depth D scores the best move and the
//! move played; prints, per game phase, how often and how much the engine dropped, and the
//! biggest drops (tuning aid, not a test).
//!
//! ```sh
//! cargo run --release -p emergo-engine --example blame -- games.pgn mcts 5
//! ```

use emergo_engine::alphabeta::{AbLimits, AlphaBeta};
use emergo_rules::{Game, Move, Player};

#[path = "common/pgn.rs"]
mod pgn;
use pgn::parse_games;

struct Drop {
    game: usize,
    turn: usize,
    phase: &'static str,
    drop: i32,
    played: String,
    best: String,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = || -> ! {
        eprintln!(
            "usage: blame games.pgn ENGINE DEPTH (ENGINE: a prefix of a player's name; DEPTH 2-64)"
        );
        std::process::exit(2)
    };
    let [_, path, who, depth, ..] = args.as_slice() else {
        usage()
    };
    // The played move's reply is searched one ply shallower, so at least 2.
    let Some(depth) = depth
        .parse::<u32>()
        .ok()
        .filter(|d| (2..=emergo_engine::alphabeta::MAX_DEPTH).contains(d))
    else {
        usage()
    };
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2)
    });
    let mut ab = AlphaBeta::new(20, emergo_engine::eval::Weights::default());
    let mut drops = Vec::new();
    let games = parse_games(&text);
    for (gi, (white, black, fen, moves)) in games.iter().enumerate() {
        let side = if white.starts_with(who.as_str()) {
            Player::White
        } else if black.starts_with(who.as_str()) {
            Player::Black
        } else {
            continue;
        };
        ab.clear();
        let mut game = Game::from_fen_and_moves(fen, &[] as &[&str]).unwrap();
        for (t, text) in moves.iter().enumerate() {
            let mv: Move = text.parse().unwrap();
            let pos = *game.position();
            if pos.side_to_move() == side && game.legal_moves().len() > 1 && t >= 4 {
                let limits = AbLimits {
                    max_depth: depth,
                    ..AbLimits::default()
                };
                let best = ab.search_game(&game, limits);
                let mut after = game.clone();
                after.play(mv).unwrap();
                // Scored by a search even where the opponent's reply is forced.
                let played = -ab.score_game(
                    &after,
                    AbLimits {
                        max_depth: depth - 1,
                        ..AbLimits::default()
                    },
                );
                let phase = if pos.in_hand(Player::White) + pos.in_hand(Player::Black) > 0 {
                    "entering"
                } else {
                    "board"
                };
                drops.push(Drop {
                    game: gi,
                    turn: t + 1,
                    phase,
                    drop: (best.score - played).max(0),
                    played: text.clone(),
                    best: best.best.map(|m| m.to_string()).unwrap_or_default(),
                });
            }
            game.play(mv).unwrap();
        }
    }
    for phase in ["entering", "board"] {
        let d: Vec<&Drop> = drops.iter().filter(|d| d.phase == phase).collect();
        let n = d.len().max(1) as f64;
        let sum: i64 = d.iter().map(|d| i64::from(d.drop)).sum();
        let big = |t: i32| d.iter().filter(|x| x.drop >= t).count();
        println!(
            "{phase:9}: {} moves, mean drop {:.0} cm, >=50: {}, >=100: {}, >=200: {}, >=500: {}",
            d.len(),
            sum as f64 / n,
            big(50),
            big(100),
            big(200),
            big(500)
        );
    }
    // The first big drop of each game.
    let mut firsts = Vec::new();
    for g in 0..games.len() {
        if let Some(d) = drops.iter().find(|d| d.game == g && d.drop >= 100) {
            firsts.push(d.turn);
        }
    }
    firsts.sort_unstable();
    println!("first drop >= 100 cm by turn (one per game): {firsts:?}");
    drops.sort_by_key(|d| -d.drop);
    for d in drops.iter().take(15) {
        println!(
            "game {} turn {} ({}): played {} best {} drop {}",
            d.game, d.turn, d.phase, d.played, d.best, d.drop
        );
    }
}
