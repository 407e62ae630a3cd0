//! Search/raw speed harness: a uniform MCTS search of a fixed number of
//! playouts against the same number of raw random playouts, one thread.
//!
//! `cargo run --release -p emergo-engine --example speed -- [search|strong|raw|both|ab] [playouts]
//! [rounds] [FEN]`: `strong` searches with the default engine instead; `ab` runs fixed-depth
//! alpha-beta searches (the second argument is the depth) of five positions; FEN (quoted) searches
//! that position instead of the initial one (search modes only), e.g. a middle-game position
//! whose tree is deep, where selection costs more than at the start. `search:T` and `strong:T`
//! search on `T` threads and time the search by the wall clock instead (the machine should be
//! otherwise idle), for the rate of many-threaded searches from a given position; the
//! environment variable `SPEED_MCTS` changes the searched engine's settings as `--mcts` does
//! (e.g. `rescan=0`, `expand=1`, or `config=v1` for the first version's engine).

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

/// Searches `start` for `playouts` playouts.
fn search(playouts: u64, config: &MctsConfig, start: Position, threads: usize) -> (f64, u64) {
    let mut params = SearchParams {
        threads,
        seed: 1,
        max_playouts: Some(playouts),
        ..SearchParams::default()
    };
    config.apply(&mut params);
    params.smart_pruning = false;
    let state = EmergoState::new(start).with_knowledge(config.shared_knowledge());
    let (began, wall) = (cpu(), std::time::Instant::now());
    let s = Search::new(state, params).run();
    let secs = if threads > 1 {
        wall.elapsed().as_secs_f64()
    } else {
        cpu() - began
    };
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

/// Fixed-depth alpha-beta searches (fresh engine each, so reproducible) from the initial
/// position and the positions 8, 16, 24 and 32 turns into one seeded random game: CPU time,
/// nodes and a digest of every search's move, score and node count (a change to move ordering's
/// speed must leave it unchanged).
fn alphabeta(depth: u32) -> f64 {
    use emergo_engine::eval::Weights;
    use emergo_engine::{AbLimits, AlphaBeta};
    let mut positions = vec![Position::initial()];
    let mut rng = playout_rng(7);
    let mut pos = Position::initial();
    let mut reps = Repetitions::new(&pos);
    for _ in 0..4 {
        random_playout(&mut pos, &mut reps, &mut rng, 8);
        positions.push(pos);
    }
    let limits = AbLimits {
        max_depth: depth,
        ..AbLimits::default()
    };
    let (mut nodes, mut digest, began) = (0u64, 0u64, cpu());
    for p in &positions {
        let r = AlphaBeta::new(20, Weights::default()).search(p, &[p.hash()], limits);
        nodes += r.nodes;
        let text = format!("{:?}{}{}", r.best.map(|m| m.to_string()), r.score, r.nodes);
        for b in text.bytes() {
            digest = (digest ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    let secs = cpu() - began;
    println!(
        "ab depth {depth}: {} positions {nodes} nodes {secs:.3} s {:.0} nodes/s digest {digest:016x}",
        positions.len(),
        nodes as f64 / secs
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
    let (mode, threads) = match mode.split_once(':') {
        Some((mode, t)) => (mode, t.parse().unwrap_or(1usize).max(1)),
        None => (mode, 1),
    };
    // The searched engine: the default one for `strong`, else the uniform one; then
    // `SPEED_MCTS`, whose settings apply in order, so a `config=` among them goes first.
    let mut config = match mode {
        "strong" => MctsConfig::strong(),
        _ => MctsConfig::uniform(),
    };
    for setting in std::env::var("SPEED_MCTS").unwrap_or_default().split(',') {
        if let Some((key, value)) = setting.split_once('=') {
            if let Err(e) = config.set(key, value) {
                eprintln!("SPEED_MCTS: {e}");
                std::process::exit(2)
            }
        }
    }
    for _ in 0..rounds {
        match mode {
            "search" | "strong" => {
                search(n, &config, start, threads);
            }
            "raw" => {
                raw(n);
            }
            "ab" => {
                // The second argument is the depth here (default 6), not a playout count.
                let depth = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(6u32);
                alphabeta(depth.clamp(1, emergo_engine::alphabeta::MAX_DEPTH));
            }
            _ => {
                let r = raw(n);
                let (s, _) = search(n, &config, Position::initial(), 1);
                println!("ratio search/raw speed {:.1}%", 100.0 * r / s);
            }
        }
    }
}
