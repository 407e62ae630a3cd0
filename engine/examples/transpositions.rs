//! How much of the default engine's tree is transpositions: nodes whose position the tree also
//! holds elsewhere, reached by another move order (in Emergo's entering phase the same entries
//! can come in many orders). The tree is not a graph, so each such copy has its own statistics
//! and the search learns the same position several times over; alpha-beta's transposition table
//! shares what it learns. A diagnosis aid, not a test.
//!
//! `cargo run --release -p emergo-engine --example transpositions -- games.pgn [ms [games
//! [turns]]]`: searches the position before every `turns`-th turn (default 6) of the first
//! `games` games (default 10) of an arena PGN for `ms` milliseconds (default 200) on one thread,
//! and prints per position the nodes, the distinct positions among them, the share of nodes
//! that are copies (a position's second and later nodes) and the share of the visits those
//! copies hold; then the totals for the entering phase (men in hand) and after it.

use std::collections::HashMap;
use std::time::Duration;

use emergo_engine::{EmergoState, MctsConfig};
use emergo_mcts::{Search, SearchParams};
use emergo_rules::{Game, Player, Position};

#[path = "common/pgn.rs"]
mod pgn;

/// What one tree holds.
#[derive(Default, Clone, Copy)]
struct Census {
    nodes: u64,
    distinct: u64,
    visits: u64,
    copy_visits: u64,
    /// Nodes with two visits or more: expanded (the default engine expands a node on its
    /// second visit, scoring each of its moves for the priors, most of the search's work).
    expanded: u64,
    /// Expanded nodes whose position another expanded node holds too: work a cache of the
    /// priors by position would save.
    expanded_copies: u64,
}

impl Census {
    fn add(&mut self, other: Census) {
        self.nodes += other.nodes;
        self.distinct += other.distinct;
        self.visits += other.visits;
        self.copy_visits += other.copy_visits;
        self.expanded += other.expanded;
        self.expanded_copies += other.expanded_copies;
    }

    fn line(&self) -> String {
        format!(
            "nodes {:>7} distinct {:>7} copies {:>5.1}% of nodes, {:>5.1}% of visits, {:>5.1}% of {} expanded",
            self.nodes,
            self.distinct,
            100.0 * (self.nodes - self.distinct) as f64 / self.nodes.max(1) as f64,
            100.0 * self.copy_visits as f64 / self.visits.max(1) as f64,
            100.0 * self.expanded_copies as f64 / self.expanded.max(1) as f64,
            self.expanded,
        )
    }
}

/// Searches `game`'s position for `ms` and counts its tree.
fn census(game: &Game, ms: u64) -> Census {
    let config = MctsConfig::strong();
    let mut params = SearchParams {
        threads: 1,
        seed: 1,
        max_time: Some(Duration::from_millis(ms)),
        ..SearchParams::default()
    };
    config.apply(&mut params);
    let state = EmergoState::from_game(game).with_knowledge(config.shared_knowledge());
    let mut search = Search::new(state, params);
    search.run();
    // Per position: the nodes holding it and their visits, the most visited first kept apart
    // (a graph would hold one node with all of them; the others are the copies).
    let mut seen: HashMap<Position, (u64, u64, u64, u64)> = HashMap::new();
    search.for_each_node(|state, _depth, visits| {
        let entry = seen.entry(*state.position()).or_insert((0, 0, 0, 0));
        entry.0 += 1;
        entry.1 += visits;
        entry.2 = entry.2.max(visits);
        entry.3 += u64::from(visits >= 2);
    });
    let mut c = Census::default();
    for (count, visits, most, expanded) in seen.values() {
        c.nodes += count;
        c.distinct += 1;
        c.visits += visits;
        c.copy_visits += visits - most;
        c.expanded += expanded;
        c.expanded_copies += expanded.saturating_sub(1);
    }
    c
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .ok_or("usage: transpositions games.pgn [ms [games [turns]]]")?;
    let number = |i: usize, default: u64| -> Result<u64, String> {
        args.get(i).map_or(Ok(default), |a| {
            a.parse().map_err(|_| format!("argument {i}: {a}?"))
        })
    };
    let (ms, max_games, every) = (number(2, 200)?, number(3, 10)?, number(4, 6)?.max(1));
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let (mut entering, mut later) = (Census::default(), Census::default());
    for (gi, turn, game) in pgn::positions_every(&text, max_games as usize, every as usize)? {
        let pos = game.position();
        let in_hand = u32::from(pos.in_hand(Player::White)) + u32::from(pos.in_hand(Player::Black));
        let c = census(&game, ms);
        println!(
            "game {:>2} turn {turn:>3} in hand {in_hand:>2}: {}",
            gi - 1,
            c.line()
        );
        if in_hand > 0 {
            entering.add(c);
        } else {
            later.add(c);
        }
    }
    println!("entering phase: {}", entering.line());
    println!("after it:       {}", later.line());
    Ok(())
}
