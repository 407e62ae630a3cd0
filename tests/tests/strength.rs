//! MCTS on Emergo beats the baselines. A small fixed seed set keeps CI short; the README reports
//! the full 40-game runs (`cargo run --release -p emergo-bot-server --example strength`).

use emergo_bot_server::players::{GreedyPlayer, MctsPlayer, MovePicker, RandomPlayer, play_game};
use emergo_rules::{Game, Position};

fn mcts_score(opponent: &str, games: u64, playouts: u64) -> f64 {
    let mut score = 0.0;
    for g in 0..games {
        let mut mcts = MctsPlayer::new(Some(playouts), None, 1, 1000 + g);
        let mut other: Box<dyn MovePicker> = match opponent {
            "greedy" => Box::new(GreedyPlayer::new(2000 + g)),
            _ => Box::new(RandomPlayer::new(2000 + g)),
        };
        let start = Game::new(Position::initial());
        let s = if g % 2 == 0 {
            play_game(start, &mut mcts, other.as_mut(), 1000).white_score()
        } else {
            1.0 - play_game(start, other.as_mut(), &mut mcts, 1000).white_score()
        };
        score += s;
    }
    score / games as f64
}

#[test]
fn mcts_beats_random() {
    let share = mcts_score("random", 4, 20_000);
    assert!(share >= 0.95, "MCTS scored {share} against random");
}

#[test]
fn mcts_beats_greedy() {
    let share = mcts_score("greedy", 4, 20_000);
    assert!(share >= 0.75, "MCTS scored {share} against greedy");
}
