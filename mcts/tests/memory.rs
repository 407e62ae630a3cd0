//! Memory limits and reclaiming: a full tree is reclaimed and keeps growing, never
//! holds more than its limit, keeps exact playout counts with threads, and stays deterministic
//! with one thread.

use emergo_mcts::toy::{Nim, TicTacToe};
use emergo_mcts::{Proven, Search, SearchParams, Snapshot, StopReason};

/// A limit small enough for a toy game to fill many times over.
const SMALL: usize = 1 << 20;

fn small_tree(playouts: u64, threads: usize) -> SearchParams {
    SearchParams {
        max_playouts: Some(playouts),
        max_tree_bytes: SMALL,
        smart_pruning: false,
        threads,
        ..SearchParams::default()
    }
}

/// Nim with 61 men, taking 1 to 3: far too deep to solve here, so searches run to their limit.
fn nim() -> Nim {
    Nim::new(61, 3)
}

fn within_limit<M>(snap: &Snapshot<M>, limit: usize) {
    assert!(
        snap.tree_bytes <= limit / 4 * 3,
        "{} bytes held under a limit of {limit}",
        snap.tree_bytes
    );
}

#[test]
fn a_full_tree_is_reclaimed_and_keeps_growing() {
    let mut search = Search::new(nim(), small_tree(60_000, 1));
    let snap = search.run();
    assert_eq!(snap.stop_reason, Some(StopReason::Playouts));
    assert_eq!(snap.playouts, 60_000);
    assert_eq!(snap.root_visits, 60_000);
    assert!(snap.reclaims >= 1, "{snap:?}");
    assert!(snap.nodes_reclaimed > 0);
    assert!(snap.reclaim_time > std::time::Duration::ZERO);
    assert!(snap.node_cap_reached);
    within_limit(&snap, SMALL);

    // Searching on: reclaims again rather than freezing, and the tree grows back in between.
    let before = search.node_count();
    let again = search.run();
    assert_eq!(again.playouts, 60_000);
    assert!(again.reclaims >= 1);
    within_limit(&again, SMALL);
    assert!(search.node_count() > 0 && before > 0);
}

#[test]
fn without_reclaim_a_full_tree_freezes_as_before() {
    let params = SearchParams {
        reclaim: false,
        ..small_tree(60_000, 1)
    };
    let snap = Search::new(nim(), params).run();
    assert_eq!(snap.playouts, 60_000);
    assert_eq!(snap.reclaims, 0);
    assert!(snap.node_cap_reached);
    within_limit(&snap, SMALL);
}

#[test]
fn a_node_cap_also_triggers_reclaims() {
    let params = SearchParams {
        max_nodes: 3_000,
        max_tree_bytes: 64 << 20,
        ..small_tree(40_000, 1)
    };
    let mut search = Search::new(nim(), params);
    let snap = search.run();
    assert!(snap.reclaims >= 1);
    assert!(snap.nodes <= 3_000);
    assert!(search.node_count() <= 3_000);
}

#[test]
fn reclaiming_with_threads_keeps_exact_counts() {
    for threads in [2, 4] {
        let mut search = Search::new(nim(), small_tree(80_000, threads));
        let snap = search.run();
        assert_eq!(snap.playouts, 80_000, "{threads} threads");
        assert_eq!(snap.root_visits, 80_000);
        let children: u64 = snap.moves.iter().map(|m| m.visits).sum();
        // Reclaiming never drops a root child with visits: the root's expansion is always kept.
        assert_eq!(children + 1, snap.root_visits, "{threads} threads");
        assert!(snap.reclaims >= 1);
        within_limit(&snap, SMALL);
    }
}

#[test]
fn one_thread_stays_deterministic_with_reclaims() {
    let run = || {
        let snap = Search::new(nim(), small_tree(30_000, 1)).run();
        (
            snap.moves
                .iter()
                .map(|m| (m.mv, m.visits, m.pv.clone()))
                .collect::<Vec<_>>(),
            snap.reclaims,
            snap.nodes_reclaimed,
            snap.nodes,
        )
    };
    let first = run();
    assert!(first.1 >= 1);
    assert_eq!(first, run());
}

#[test]
fn proofs_survive_reclaims() {
    // Nim with 21 men: the only winning move takes 1 (leaving a multiple of 4). Its proof needs
    // ~44,000 nodes, seven times what the small limit holds: the solver proves it across
    // several reclaims, as proven nodes keep their bounds when their subtrees go.
    let snap = Search::new(Nim::new(21, 3), small_tree(200_000, 1)).run();
    assert_eq!(snap.stop_reason, Some(StopReason::Solved));
    assert!(snap.reclaims >= 1, "{snap:?}");
    assert_eq!(snap.root_proven, Some(Proven::Win { plies: 11 }));
    assert_eq!(snap.best_move, Some(1));

    // X to move wins at once (top row); with a tree a few hundred nodes big the search reclaims
    // many times and must still prove the win and keep proofs consistent.
    let game = TicTacToe::from_cells("XX./OO./...").unwrap_or_default();
    let params = SearchParams {
        max_nodes: 200,
        ..small_tree(20_000, 1)
    };
    let snap = Search::new(game, params).run();
    assert_eq!(snap.stop_reason, Some(StopReason::Solved));
    assert_eq!(snap.root_proven, Some(Proven::Win { plies: 1 }));

    // A drawn position searched with a tree far too small to hold the proof: whatever gets
    // proven must be right, and the move chosen never a proven loss.
    let game = TicTacToe::from_cells("X../.O./...").unwrap_or_default();
    let params = SearchParams {
        max_nodes: 300,
        ..small_tree(100_000, 1)
    };
    let snap = Search::new(game, params).run();
    assert!(snap.reclaims >= 1, "{snap:?}");
    assert!(matches!(snap.root_proven, None | Some(Proven::Draw)));
    assert!(!matches!(snap.moves[0].proven, Some(Proven::Loss { .. })));
}

#[test]
fn the_limit_holds_while_a_search_runs() {
    let search = Search::new(nim(), small_tree(200_000, 2));
    let handle = search.start();
    let mut polls = 0;
    while !handle.is_finished() {
        within_limit(&handle.snapshot(), SMALL);
        polls += 1;
        std::thread::yield_now();
    }
    let (search, snap) = handle.wait();
    within_limit(&snap, SMALL);
    assert!(search.memory_bytes() <= SMALL / 4 * 3);
    assert!(polls > 0);
}

#[test]
fn smaller_limits_shrink_a_kept_tree() {
    let mut search = Search::new(
        nim(),
        SearchParams {
            max_playouts: Some(40_000),
            smart_pruning: false,
            ..SearchParams::default()
        },
    );
    search.run();
    let big = search.memory_bytes();
    let params = SearchParams {
        max_tree_bytes: SMALL,
        ..search.params().clone()
    };
    search.set_params(params.clone());
    assert!(
        search.memory_bytes() <= SMALL / 4 * 3,
        "{big} -> {}",
        search.memory_bytes()
    );
    assert!(search.node_count() > 1);
    // And tree reuse stays within the limit too.
    search.advance(&[1]);
    assert!(search.memory_bytes() <= SMALL / 4 * 3);
    let snap = search.run();
    within_limit(&snap, SMALL);
}
