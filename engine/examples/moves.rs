//! For a game (start FEN + moves on the command line), scores every legal move by the
//! quiescence evaluation and by an alpha-beta search of depth D (tuning aid).
use emergo_engine::alphabeta::{AbLimits, AlphaBeta, quiesce};
use emergo_engine::eval::Weights;
use emergo_rules::Game;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let depth: u32 = args[1].parse().unwrap();
    let game = Game::from_fen_and_moves(emergo_rules::INITIAL_FEN, &args[2..]).unwrap();
    println!("{}", game.position());
    for &m in game.legal_moves().iter() {
        let mut g = game.clone();
        g.play(m).unwrap();
        let mut n = 0;
        let q = -quiesce(g.position(), &Weights::default(), &mut n);
        let r = AlphaBeta::default().search_game(
            &g,
            AbLimits {
                max_depth: depth,
                ..AbLimits::default()
            },
        );
        println!(
            "{:>12} q={:5} ab{}={:6} pv {}",
            m.to_string(),
            q,
            depth,
            -r.score,
            r.pv.iter()
                .map(|m| m.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
}
