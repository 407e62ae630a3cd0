//! What keeping a big tree for the next move costs the answer: a tree of `N` visits from a
//! position (the default engine, 2 threads), then the two ways of keeping the subtree under our
//! move and the reply the tree expects — re-rooting in place (what `Search::advance` does, on
//! the answer path) and copying the subtree out (`Search::compact_tree`, what advancing did
//! before and what frees the rest, now off the answer path) — and freeing the old tree.
//!
//! `cargo run --release -p emergo-engine --example reroot -- [visits [FEN]]` (default 1,000,000
//! visits from the initial position). Figures and the date they were taken: docs/PERFORMANCE.md,
//! "Answers on time".

use std::time::Instant;

use emergo_engine::{EmergoState, MctsConfig};
use emergo_mcts::{Search, SearchParams};
use emergo_rules::Position;

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let visits: u64 = args.get(1).map_or(Ok(1_000_000), |a| {
        a.parse().map_err(|_| format!("visits: {a}?"))
    })?;
    let position = match args.get(2) {
        Some(fen) => fen.parse::<Position>().map_err(|e| format!("FEN: {e}"))?,
        None => Position::initial(),
    };
    let config = MctsConfig::strong();
    let mut params = SearchParams {
        threads: 2,
        seed: 1,
        max_playouts: Some(visits),
        // Room for the whole tree: nothing reclaimed while it grows.
        max_tree_bytes: 8 << 30,
        max_nodes: usize::MAX,
        smart_pruning: false,
        ..SearchParams::default()
    };
    config.apply(&mut params);
    let state = EmergoState::new(position).with_knowledge(config.shared_knowledge());
    let mut search = Search::new(state, params);
    let began = Instant::now();
    let first = search.run();
    println!(
        "tree: {} visits, {} nodes, {} MiB, built in {:.1} s",
        first.root_visits,
        first.nodes,
        first.tree_bytes >> 20,
        began.elapsed().as_secs_f64()
    );
    let line: Vec<_> = first
        .moves
        .first()
        .map(|m| m.pv.iter().copied().take(2).collect())
        .unwrap_or_default();
    if line.len() < 2 {
        return Err("the tree has no reply to our best move".to_owned());
    }

    let t = Instant::now();
    let kept = search.advance(&line);
    let in_place = t.elapsed();
    println!(
        "advance (in place, on the answer path): {:.3} ms, {} visits kept, {} MiB held",
        in_place.as_secs_f64() * 1000.0,
        kept,
        search.memory_bytes() >> 20
    );

    let t = Instant::now();
    let unreachable = search.unreachable_nodes();
    println!(
        "counting what is out of reach: {:.1} ms, {} of {} nodes",
        t.elapsed().as_secs_f64() * 1000.0,
        unreachable,
        search.node_count()
    );

    let t = Instant::now();
    let freed = search.compact_tree(u64::MAX);
    println!(
        "compact_tree (copy the subtree, free the rest; off the answer path): {:.1} ms, {} nodes freed, {} MiB held",
        t.elapsed().as_secs_f64() * 1000.0,
        freed,
        search.memory_bytes() >> 20
    );

    let t = Instant::now();
    drop(search);
    println!(
        "freeing the kept tree: {:.1} ms",
        t.elapsed().as_secs_f64() * 1000.0
    );
    Ok(())
}
