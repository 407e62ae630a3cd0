//! Search/raw speed harness (issue 16, item 4): a uniform MCTS search of a fixed number of
//! playouts against the same number of raw random playouts, one thread.
//!
//! `cargo run --release -p emergo-engine --example speed -- [search|strong|raw|both] [playouts]
//! [rounds] [FEN]`: `strong` searches with the default engine instead; FEN (quoted) searches
//! that position instead of the initial one (search modes only), e.g. a middle-game position
//! whose tree is deep, where selection costs more than at the start.

/// CPU time of this thread in seconds (`/proc/thread-self/schedstat`: the machine is shared).
fn cpu() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .unwrap_or(0.0)
        / 1e9
}

use emergo_engine::{EmergoState, MctsConfig};
use emergo_mcts::{Search, SearchParams};
use emergo_rules::{Position, Repetitions, playout_rng, random_playout};

fn search(playouts: u64, config: &MctsConfig, start: Position) -> (f64, u64) {
    let mut params = SearchParams {
        threads: 1,
        seed: 1,
        max_playouts: Some(playouts),
        ..SearchParams::default()
    };
    config.apply(&mut params);
    params.smart_pruning = false;
    let state = EmergoState::new(start).with_knowledge(config.shared_knowledge());
    let began = cpu();
    let s = Search::new(state, params).run();
    let secs = cpu() - began;
    // Digest of the result: every root move's visits and value bits.
    let mut digest: u64 = s.nodes as u64;
    for m in &s.moves {
        digest = digest.wrapping_mul(0x100_0000_01b3) ^ m.visits;
        digest = digest.wrapping_mul(0x100_0000_01b3) ^ u64::from(m.value.to_bits());
    }
    digest = digest.wrapping_mul(0x100_0000_01b3) ^ u64::from(s.root_value.to_bits());
    println!(
        "search {} playouts {:.3} s {:.0}/s nodes {} depth {:.2} best {:?} digest {digest:016x}",
        s.playouts,
        secs,
        s.playouts as f64 / secs,
        s.nodes,
        s.mean_depth,
        s.best_move.map(|m| m.to_string()),
    );

    (secs, digest)
}

fn raw(playouts: u64) -> f64 {
    let mut rng = playout_rng(1);
    let start = Position::initial();
    let base = Repetitions::new(&start);
    let mut reps = Repetitions::default();
    let mut turns = 0u64;
    let began = cpu();
    for _ in 0..playouts {
        let mut pos = start;
        reps.copy_from(&base);
        turns += u64::from(random_playout(&mut pos, &mut reps, &mut rng, 400).turns);
    }
    let secs = cpu() - began;
    println!(
        "raw {playouts} playouts {secs:.3} s {:.0}/s mean turns {:.2}",
        playouts as f64 / secs,
        turns as f64 / playouts as f64
    );
    secs
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map_or("both", String::as_str);
    let n = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(200_000);
    let rounds = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(1);
    let start = match args.get(4).map(|fen| fen.parse::<Position>()) {
        None => Position::initial(),
        Some(Ok(pos)) => pos,
        Some(Err(e)) => {
            eprintln!("FEN: {e}");
            std::process::exit(2)
        }
    };
    for _ in 0..rounds {
        match mode {
            "search" => {
                search(n, &MctsConfig::uniform(), start);
            }
            "strong" => {
                search(n, &MctsConfig::default(), start);
            }
            "raw" => {
                raw(n);
            }
            _ => {
                let r = raw(n);
                let (s, _) = search(n, &MctsConfig::uniform(), Position::initial());
                println!("ratio search/raw speed {:.1}%", 100.0 * r / s);
            }
        }
    }
}
