//! Throughput on a toy game: `cargo run --release -p emergo-mcts --example toy_bench [playouts]`.
//!
//! Searches subtraction Nim (pile 300, take 1 to 3: deep and never solved within the budget)
//! with 1, 2 and 4 threads and prints playouts per second, nodes and memory per node.

use emergo_mcts::toy::Nim;
use emergo_mcts::{Search, SearchParams};

fn main() {
    let playouts = std::env::args()
        .nth(1)
        .and_then(|arg| arg.parse().ok())
        .unwrap_or(1_000_000);
    println!("bytes per node: {}", Search::<Nim>::bytes_per_node());
    for threads in [1, 2, 4] {
        let params = SearchParams {
            threads,
            max_playouts: Some(playouts),
            smart_pruning: false,
            ..SearchParams::default()
        };
        let result = Search::new(Nim::new(300, 3), params).run();
        println!(
            "threads {threads}: {} playouts in {:.3?} = {:.0} playouts/s, {} nodes, mean depth {:.1}, best {:?}",
            result.playouts,
            result.elapsed,
            result.playouts_per_second,
            result.nodes,
            result.mean_depth,
            result.best_move,
        );
    }
}
