//! What extra search threads give the default engine in game positions: leaves per timed search
//! with 1 thread and with `T`, position by position, and where the extra threads' time goes
//! (the contention counters, the refinements, the time a search took beyond its budget).
//!
//! `cargo run --release -p emergo-engine --example threads -- games.pgn [ms [threads [games
//! [turns]]]]`: searches the position before every `turns`-th turn (default 4) of the first
//! `games` games (default 8) of an arena PGN for `ms` milliseconds (default 200), once on one
//! thread and once on `threads` (default 2), alternating, and prints each pair's leaves, their
//! ratio and the many-threaded search's counters; then the totals for the entering phase (men
//! in hand) and after it. The machine should be otherwise idle (the many-threaded search needs
//! its cores). `SPEED_MCTS` changes both engines' settings as `--mcts` does (e.g. `vloss=3`).

use std::time::{Duration, Instant};

use emergo_engine::{EmergoState, MctsConfig};
use emergo_mcts::{Search, SearchParams};
use emergo_rules::{Game, Player};

#[path = "common/pgn.rs"]
mod pgn;

/// One timed search's figures.
#[derive(Default, Clone, Copy)]
struct Run {
    leaves: u64,
    wall: Duration,
    refinements: u64,
    waits: u64,
    collisions: u64,
    cas: u64,
}

impl std::ops::AddAssign for Run {
    fn add_assign(&mut self, o: Run) {
        self.leaves += o.leaves;
        self.wall += o.wall;
        self.refinements += o.refinements;
        self.waits += o.waits;
        self.collisions += o.collisions;
        self.cas += o.cas;
    }
}

/// The engine to measure: the default, with `SPEED_MCTS`'s settings applied in order.
fn config() -> Result<MctsConfig, String> {
    let mut config = MctsConfig::strong();
    for setting in std::env::var("SPEED_MCTS").unwrap_or_default().split(',') {
        if let Some((key, value)) = setting.split_once('=') {
            config
                .set(key.trim(), value.trim())
                .map_err(|e| format!("SPEED_MCTS: {e}"))?;
        }
    }
    Ok(config)
}

/// Searches `game`'s position for `ms` on `threads` threads.
fn search(game: &Game, config: &MctsConfig, ms: u64, threads: usize) -> Run {
    let mut params = SearchParams {
        threads,
        seed: 1,
        max_time: Some(Duration::from_millis(ms)),
        ..SearchParams::default()
    };
    config.apply(&mut params);
    let state = EmergoState::from_game(game).with_knowledge(config.shared_knowledge());
    let began = Instant::now();
    let s = Search::new(state, params).run();
    Run {
        leaves: s.playouts,
        wall: began.elapsed(),
        refinements: s.refinements,
        waits: s.contention.expansion_waits,
        collisions: s.contention.virtual_loss_collisions,
        cas: s.contention.cas_failures,
    }
}

fn summary(label: &str, positions: u32, one: Run, many: Run) {
    let per = |x: u64| 1000.0 * x as f64 / many.leaves.max(1) as f64;
    println!(
        "{label}: {positions} positions, leaves {} against {} ({:.2}x), wall {:.0} against {:.0} ms a search; \
         per 1,000 leaves of the many-threaded searches: {:.2} expansion waits, {:.1} collisions, {:.2} CAS failures; \
         refinements {} against {}",
        many.leaves,
        one.leaves,
        many.leaves as f64 / one.leaves.max(1) as f64,
        many.wall.as_secs_f64() * 1000.0 / f64::from(positions.max(1)),
        one.wall.as_secs_f64() * 1000.0 / f64::from(positions.max(1)),
        per(many.waits),
        per(many.collisions),
        per(many.cas),
        many.refinements,
        one.refinements,
    );
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .ok_or("usage: threads games.pgn [ms [threads [games [turns]]]]")?;
    let number = |i: usize, default: u64| -> Result<u64, String> {
        args.get(i).map_or(Ok(default), |a| {
            a.parse().map_err(|_| format!("argument {i}: {a}?"))
        })
    };
    let (ms, threads, max_games, every) = (
        number(2, 200)?,
        number(3, 2)?.max(1) as usize,
        number(4, 8)?,
        number(5, 4)?.max(1),
    );
    let config = config()?;
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let mut totals = [(0u32, Run::default(), Run::default()); 2];
    for (gi, turn, game) in pgn::positions_every(&text, max_games as usize, every as usize)? {
        let pos = game.position();
        if pos.legal_moves().len() < 2 {
            // A forced move is answered without a search.
            continue;
        }
        let entering = pos.in_hand(Player::White) + pos.in_hand(Player::Black) > 0;
        let one = search(&game, &config, ms, 1);
        let many = search(&game, &config, ms, threads);
        println!(
            "game {gi} turn {turn:>3}: {:>7} leaves on {threads} threads against {:>7} on 1 ({:.2}x), {:>4} collisions per 1,000",
            many.leaves,
            one.leaves,
            many.leaves as f64 / one.leaves.max(1) as f64,
            1000 * many.collisions / many.leaves.max(1),
        );
        let slot = &mut totals[usize::from(!entering)];
        slot.0 += 1;
        slot.1 += one;
        slot.2 += many;
    }
    let [(n0, one0, many0), (n1, one1, many1)] = totals;
    summary("entering phase", n0, one0, many0);
    summary("after it", n1, one1, many1);
    let (mut one, mut many) = (one0, many0);
    one += one1;
    many += many1;
    summary("all", n0 + n1, one, many);
    Ok(())
}
