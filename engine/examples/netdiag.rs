//! How large the value network's corrections are: over a `learn-value --save-data` file
//! (percentiles of |net - linear|, and the loss against the labels by bound), and along a line
//! of moves from the initial position. A diagnosis aid, not a test.
//!
//! `cargo run --release -p emergo-engine --example netdiag -- NET data.tsv|- [MOVES...]`

use emergo_engine::alphabeta::AlphaBeta;
use emergo_engine::distill;
use emergo_engine::eval::{Weights, evaluate_with};
use emergo_engine::value_net;
use emergo_rules::{Game, Position};

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let [_, net, data, moves @ ..] = &args[..] else {
        return Err("usage: netdiag NET data.tsv|- [MOVES...]".into());
    };
    let net = value_net::load(net)?;
    let plain = Weights::default();
    let with = Weights {
        net: Some(net),
        ..plain
    };
    if data != "-" {
        let text = std::fs::read_to_string(data).map_err(|e| format!("{data}: {e}"))?;
        let (_, held_out) = distill::samples(&distill::parse(&text)?, &plain);
        if held_out.is_empty() {
            return Err(format!("{data}: no held-out positions"));
        }
        let mut corr: Vec<i32> = held_out
            .iter()
            .map(|s| (net.score(&s.input) - s.input.linear).abs())
            .collect();
        corr.sort_unstable();
        let pct = |q: f64| corr[((corr.len() - 1) as f64 * q) as usize];
        println!(
            "{} held-out positions; |correction| p50 {} p90 {} p99 {} max {}",
            held_out.len(),
            pct(0.5),
            pct(0.9),
            pct(0.99),
            pct(1.0)
        );
        for bound in [Some(25), Some(50), Some(100), Some(150), Some(200), None] {
            let loss = value_net::mean_loss(&held_out, Some(&net.clone().with_bound(bound)));
            let name = bound.map_or("none".to_owned(), |b| b.to_string());
            println!("bound {name:>5}: held-out cross-entropy {loss:.4}");
        }
    }
    let mut ab = AlphaBeta::new(20, plain);
    let mut game = Game::new(Position::initial());
    for m in moves {
        game.play_str(m).map_err(|e| format!("{m}: {e}"))?;
        let p = *game.position();
        if p.has_capture() {
            println!("{m:12} (capture pending)");
        } else {
            println!(
                "{m:12} linear {:6} net {:6} 6-ply {:6}",
                evaluate_with(&p, &plain),
                evaluate_with(&p, &with),
                {
                    ab.forget();
                    ab.score(&p, 6)
                }
            );
        }
    }
    Ok(())
}
