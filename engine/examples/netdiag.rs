//! How large the value network's corrections are: over a `learn-value --save-data` file
//! (percentiles of |net - linear|, and the loss against the labels by bound), and along a line
//! of moves from the initial position. Diagnosis aid for issue 10, not a test.
//!
//! `cargo run --release -p emergo-engine --example netdiag -- NET data.tsv|- [MOVES...]`

use emergo_engine::alphabeta::AlphaBeta;
use emergo_engine::distill;
use emergo_engine::eval::{LOGISTIC_SCALE, Weights, evaluate_with};
use emergo_engine::value_net::{self, encode};
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
        let labelled = distill::parse(&text)?;
        let mut corr: Vec<i32> = Vec::new();
        let mut by_bound = [0f64; 6];
        let bounds = [25, 50, 100, 150, 200, 10_000];
        let mut n = 0usize;
        for l in labelled.iter().filter(|l| distill::held_out(l.game)) {
            let e = encode(&l.position, &plain);
            let c = net.score(&e) - e.linear;
            corr.push(c.abs());
            let t = 1.0 / (1.0 + (-(l.score as f64) / f64::from(LOGISTIC_SCALE)).exp());
            for (acc, b) in by_bound.iter_mut().zip(bounds) {
                let z = f64::from(e.linear + c.clamp(-b, b)) / f64::from(LOGISTIC_SCALE);
                let p = (1.0 / (1.0 + (-z).exp())).clamp(1e-7, 1.0 - 1e-7);
                *acc -= t * p.ln() + (1.0 - t) * (1.0 - p).ln();
            }
            n += 1;
        }
        corr.sort_unstable();
        let pct = |q: f64| corr[((corr.len() - 1) as f64 * q) as usize];
        println!(
            "{n} held-out positions; |correction| p50 {} p90 {} p99 {} max {}",
            pct(0.5),
            pct(0.9),
            pct(0.99),
            pct(1.0)
        );
        for (acc, b) in by_bound.iter().zip(bounds) {
            println!("bound {b:5}: held-out cross-entropy {:.4}", acc / n as f64);
        }
    }
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
                AlphaBeta::new(20, plain).score(&p, 6)
            );
        }
    }
    Ok(())
}
