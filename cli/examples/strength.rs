//! MCTS strength against the baselines, with colours alternated over a fixed seed set.
//!
//! `cargo run --release -p emergo-cli --example strength -- [GAMES] [PLAYOUTS] [random|greedy] [THREADS]`
//! prints one line per game and the score, with the default MCTS configuration. The README's
//! strength figures come from `emergo arena`, which also plays time-based matches.

use std::time::Instant;

use emergo_cli::players::{GreedyPlayer, MctsPlayer, MovePicker, RandomPlayer, play_game};
use emergo_rules::{Game, Position};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let games: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(40);
    let playouts: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(20_000);
    let opponent = args.get(3).map_or("random", String::as_str).to_owned();
    let threads: usize = args.get(4).and_then(|a| a.parse().ok()).unwrap_or(1);
    let mut score = 0.0;
    let began = Instant::now();
    for g in 0..games {
        let mut mcts = MctsPlayer::new(Some(playouts), None, threads, 1000 + g);
        let mut other: Box<dyn MovePicker> = match opponent.as_str() {
            "greedy" => Box::new(GreedyPlayer::new(2000 + g)),
            _ => Box::new(RandomPlayer::new(2000 + g)),
        };
        let mcts_white = g % 2 == 0;
        let start = Game::new(Position::initial());
        let played = if mcts_white {
            play_game(start, &mut mcts, other.as_mut(), 1000)
        } else {
            play_game(start, other.as_mut(), &mut mcts, 1000)
        };
        let s = if mcts_white {
            played.white_score()
        } else {
            1.0 - played.white_score()
        };
        score += s;
        println!(
            "game {g:>3}: mcts as {} vs {opponent}: {s} after {} turns ({:?})",
            if mcts_white { "white" } else { "black" },
            played.game.moves().len(),
            played.termination
        );
    }
    println!(
        "mcts {playouts} playouts vs {opponent}: {score}/{games} = {:.1}% in {:.0} s",
        100.0 * score / games as f64,
        began.elapsed().as_secs_f64()
    );
}
