//! Limits, threads, background control, tree reuse and determinism.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use emergo_mcts::toy::{Nim, TicTacToe};
use emergo_mcts::{Game, Search, SearchParams, Snapshot, StopReason};

/// A Nim too big to be solved in these tests: searches run until their limit.
fn big_nim() -> Nim {
    Nim::new(200, 3)
}

fn playouts(n: u64) -> SearchParams {
    SearchParams {
        max_playouts: Some(n),
        ..SearchParams::default()
    }
}

fn is_legal<G: Game>(state: &G, mv: G::Move) -> bool {
    let mut moves = Vec::new();
    state.legal_moves(&mut moves);
    moves.contains(&mv)
}

/// The parts of a snapshot that must not depend on timing.
fn summary<M: Copy + std::fmt::Debug>(s: &Snapshot<M>) -> String {
    format!(
        "{:?} {} {} {} {:?} {:?} {} {} {:?}",
        s.best_move,
        s.playouts,
        s.nodes,
        s.root_value,
        s.root_proven,
        s.moves,
        s.max_depth,
        s.mean_depth,
        s.stop_reason
    )
}

#[test]
fn single_thread_searches_are_deterministic() {
    for smart_pruning in [false, true] {
        let params = SearchParams {
            seed: 99,
            smart_pruning,
            multi_pv: 3,
            ..playouts(5_000)
        };
        let a = Search::new(big_nim(), params.clone()).run();
        let b = Search::new(big_nim(), params.clone()).run();
        assert_eq!(summary(&a), summary(&b));
        assert!(a.moves.iter().all(|m| m.visits > 0));
        let c = Search::new(TicTacToe::new(), params.clone()).run();
        let d = Search::new(TicTacToe::new(), params).run();
        assert_eq!(summary(&c), summary(&d));
    }
    // Another seed gives another search.
    let a = Search::new(big_nim(), playouts(5_000)).run();
    let other = SearchParams {
        seed: 1,
        ..playouts(5_000)
    };
    let b = Search::new(big_nim(), other).run();
    assert_ne!(summary(&a), summary(&b));
}

#[test]
fn playout_limit_is_exact_with_four_threads() {
    for seed in 0..3 {
        let params = SearchParams {
            threads: 4,
            seed,
            smart_pruning: false,
            ..playouts(3_001)
        };
        let result = Search::new(big_nim(), params).run();
        assert_eq!(result.stop_reason, Some(StopReason::Playouts));
        assert_eq!(result.playouts, 3_001);
        assert_eq!(result.root_visits, 3_001);
        let children: u64 = result.moves.iter().map(|m| m.visits).sum();
        assert_eq!(result.root_visits, children + 1);
    }
}

#[test]
fn node_cap_is_never_exceeded() {
    let params = SearchParams {
        max_nodes: 50,
        smart_pruning: false,
        threads: 2,
        ..playouts(3_000)
    };
    // Default: keep searching from the leaves.
    let result = Search::new(TicTacToe::new(), params.clone()).run();
    assert!(result.nodes <= 50, "{}", result.nodes);
    assert!(result.node_cap_reached);
    assert_eq!(result.stop_reason, Some(StopReason::Playouts));
    assert_eq!(result.playouts, 3_000);
    assert!(result.best_move.is_some());
    // Or stop.
    let params = SearchParams {
        stop_at_node_cap: true,
        ..params
    };
    let result = Search::new(TicTacToe::new(), params).run();
    assert!(result.nodes <= 50);
    assert!(result.node_cap_reached);
    assert_eq!(result.stop_reason, Some(StopReason::NodeCap));
    assert!(result.playouts < 3_000);
    assert!(result.best_move.is_some());
}

#[test]
fn time_limit_stops_the_search() {
    let params = SearchParams {
        max_time: Some(Duration::from_millis(60)),
        smart_pruning: false,
        threads: 2,
        ..SearchParams::default()
    };
    let start = Instant::now();
    let result = Search::new(big_nim(), params).run();
    assert_eq!(result.stop_reason, Some(StopReason::Time));
    assert!(result.elapsed >= Duration::from_millis(60));
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(result.playouts > 0);
    assert!(result.playouts_per_second > 0.0);
}

#[test]
fn smart_pruning_stops_when_the_best_move_cannot_be_caught() {
    // Taking 1 from 201 leaves a lost pile of 200: the search concentrates on it and stops once
    // no other move can catch up within the budget.
    let result = Search::new(Nim::new(201, 3), playouts(20_000)).run();
    assert_eq!(result.stop_reason, Some(StopReason::SmartPruning));
    assert!(result.playouts < 20_000);
    let best = &result.moves[0];
    let second = &result.moves[1];
    assert!(second.visits + (20_000 - result.playouts) < best.visits);
}

#[test]
fn stop_flag_stops_a_background_search() {
    let handle = Search::new(big_nim(), SearchParams::default()).start();
    let deadline = Instant::now() + Duration::from_secs(5);
    while handle.snapshot().playouts == 0 && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(5));
    }
    assert!(!handle.is_finished());
    let asked = Instant::now();
    handle.stop();
    assert!(handle.wait_timeout(Duration::from_secs(5)));
    assert!(asked.elapsed() < Duration::from_secs(1));
    let (search, result) = handle.wait();
    assert_eq!(result.stop_reason, Some(StopReason::Stopped));
    let best = result.best_move.unwrap();
    assert!(is_legal(search.root_state(), best));
    assert!(result.playouts > 0);
}

#[test]
fn external_stop_flag_stops_a_blocking_search() {
    let flag = Arc::new(AtomicBool::new(false));
    let params = SearchParams {
        threads: 2,
        ..SearchParams::default()
    };
    let mut search = Search::new(big_nim(), params);
    search.set_stop_flag(Arc::clone(&flag));
    let stopper = {
        let flag = Arc::clone(&flag);
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(30));
            flag.store(true, Ordering::SeqCst);
        })
    };
    let result = search.run();
    stopper.join().unwrap();
    assert_eq!(result.stop_reason, Some(StopReason::Stopped));
    assert!(result.best_move.is_some());
    // An installed flag is not cleared by the search: the next one stops at once, still with a
    // legal answer.
    let again = search.run();
    assert_eq!(again.stop_reason, Some(StopReason::Stopped));
    assert_eq!(again.playouts, 0);
    assert!(again.best_move.is_some());
    flag.store(false, Ordering::SeqCst);
    search.set_params(SearchParams {
        threads: 2,
        smart_pruning: false,
        ..playouts(100)
    });
    assert_eq!(search.run().playouts, 100);
}

#[test]
fn own_stop_flag_is_rearmed_for_the_next_search() {
    let handle = Search::new(big_nim(), SearchParams::default()).start();
    handle.stop_flag().store(true, Ordering::SeqCst);
    let (mut search, first) = handle.wait();
    assert_eq!(first.stop_reason, Some(StopReason::Stopped));
    search.set_params(SearchParams {
        smart_pruning: false,
        ..playouts(200)
    });
    let second = search.run();
    assert_eq!(second.stop_reason, Some(StopReason::Playouts));
    assert_eq!(second.playouts, 200);
}

#[test]
fn single_legal_move_is_answered_at_once() {
    let params = SearchParams {
        max_time: Some(Duration::from_secs(10)),
        ..SearchParams::default()
    };
    let start = Instant::now();
    let result = Search::new(Nim::new(1, 3), params.clone()).run();
    assert!(start.elapsed() < Duration::from_secs(1));
    assert_eq!(result.stop_reason, Some(StopReason::SingleMove));
    assert_eq!(result.best_move, Some(1));
    assert_eq!(result.playouts, 0);
    assert_eq!(result.moves.len(), 1);
    // Also in the background.
    let (_, result) = Search::new(Nim::new(1, 3), params).start().wait();
    assert_eq!(result.stop_reason, Some(StopReason::SingleMove));
    assert_eq!(result.best_move, Some(1));
}

#[test]
fn terminal_root_has_no_move() {
    let result = Search::new(Nim::new(0, 3), SearchParams::default()).run();
    assert_eq!(result.stop_reason, Some(StopReason::Terminal));
    assert_eq!(result.best_move, None);
    assert!(result.moves.is_empty());
    assert_eq!(result.playouts, 0);
    // Player Two took the last stone: the side to move (One) has lost.
    assert_eq!(result.root_value, 0.0);
    let won = TicTacToe::from_cells("XXX/OO./...").unwrap();
    let (_, result) = Search::new(won, SearchParams::default()).start().wait();
    assert_eq!(result.stop_reason, Some(StopReason::Terminal));
    assert_eq!(result.best_move, None);
}

#[test]
fn tree_reuse_keeps_the_played_subtree() {
    let params = SearchParams {
        smart_pruning: false,
        ..playouts(4_000)
    };
    let mut search = Search::new(big_nim(), params);
    let first = search.run();
    let best = first.best_move.unwrap();
    let kept = search.advance(&[best]);
    assert!(kept > 0);
    assert_eq!(kept, first.moves[0].visits);
    assert_eq!(search.root_state().pile, 200 - best);
    let snapshot = search.snapshot();
    assert_eq!(snapshot.root_visits, kept);
    assert_eq!(snapshot.stop_reason, None);
    // Kept in place: the same nodes held, those of the other moves out of reach.
    assert_eq!(snapshot.nodes, first.nodes);
    let unreachable = search.unreachable_nodes();
    assert!(unreachable > 0 && (unreachable as usize) < first.nodes);
    let second = search.run();
    assert_eq!(second.reused_visits, kept);
    assert_eq!(second.playouts, 4_000);
    assert_eq!(second.root_visits, kept + 4_000);
    let children: u64 = second.moves.iter().map(|m| m.visits).sum();
    assert_eq!(second.root_visits, children + 1);

    // Two plies at once (our move and the reply), following the principal variation.
    let pv = second.moves[0].pv.clone();
    assert!(pv.len() >= 2);
    let pile = search.root_state().pile;
    assert!(search.advance(&pv[..2]) > 0);
    assert_eq!(search.root_state().pile, pile - pv[0] - pv[1]);
}

#[test]
fn advancing_by_an_unexpanded_move_starts_afresh() {
    // Two playouts: one from the root, one in its first child. The other children are unvisited.
    let params = SearchParams {
        smart_pruning: false,
        ..playouts(2)
    };
    let mut search = Search::new(big_nim(), params);
    let first = search.run();
    assert_eq!(first.playouts, 2);
    let unvisited = first.moves.iter().find(|m| m.visits == 0).unwrap().mv;
    assert_eq!(search.advance(&[unvisited]), 0);
    assert_eq!(search.root_state().pile, 200 - unvisited);
    assert_eq!(search.node_count(), 1);
    let next = search.run();
    assert_eq!(next.playouts, 2);
    assert!(is_legal(search.root_state(), next.best_move.unwrap()));
    // A move sequence leaving the tree also starts afresh, with every move applied.
    let pile = search.root_state().pile;
    assert_eq!(search.advance(&[1, 1, 1]), 0);
    assert_eq!(search.root_state().pile, pile - 3);
    // An empty sequence keeps everything.
    search.run();
    let visits = search.snapshot().root_visits;
    assert_eq!(search.advance(&[]), visits);
}

#[test]
fn snapshot_while_running_shows_progress() {
    let params = SearchParams {
        threads: 2,
        multi_pv: 2,
        ..SearchParams::default()
    };
    let handle = Search::new(big_nim(), params).start();
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut live = handle.snapshot();
    while live.playouts < 100 && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(5));
        live = handle.snapshot();
    }
    assert!(live.playouts >= 100);
    assert_eq!(live.stop_reason, None);
    assert!(live.best_move.is_some());
    assert!(live.elapsed > Duration::ZERO);
    assert!(live.nodes > 1);
    thread::sleep(Duration::from_millis(10));
    let later = handle.snapshot();
    assert!(later.playouts >= live.playouts);
    handle.stop();
    let (_, result) = handle.wait();
    assert!(result.playouts >= later.playouts);
    assert_eq!(result.stop_reason, Some(StopReason::Stopped));
    assert!(result.moves[0].pv.len() > 1);
    assert!(result.moves[1].pv.len() > 1);
    assert!(result.moves[2..].iter().all(|m| m.pv.len() == 1));
    assert!(result.mean_depth > 0.0);
    assert!(result.max_depth as f64 >= result.mean_depth);
}

#[test]
fn dropping_a_handle_stops_and_joins() {
    let flag;
    {
        let params = SearchParams {
            threads: 3,
            ..SearchParams::default()
        };
        let handle = Search::new(big_nim(), params).start();
        flag = handle.stop_flag();
        thread::sleep(Duration::from_millis(10));
    }
    // The drop stopped the threads without raising the (possibly shared) stop flag.
    assert!(!flag.load(Ordering::SeqCst));
}

#[test]
fn wait_timeout_reports_a_running_search() {
    let handle = Search::new(big_nim(), SearchParams::default()).start();
    assert!(!handle.wait_timeout(Duration::from_millis(20)));
    assert!(!handle.is_finished());
    assert_eq!(handle.snapshot().stop_reason, None);
    handle.stop();
    assert!(handle.wait_timeout(Duration::from_secs(5)));
    assert!(handle.is_finished());
    assert_eq!(handle.snapshot().stop_reason, Some(StopReason::Stopped));
}

#[test]
fn background_search_with_a_limit_finishes_by_itself() {
    let params = SearchParams {
        threads: 2,
        smart_pruning: false,
        ..playouts(2_000)
    };
    let handle = Search::new(big_nim(), params).start();
    assert!(handle.wait_timeout(Duration::from_secs(10)));
    let (mut search, result) = handle.wait();
    assert_eq!(result.stop_reason, Some(StopReason::Playouts));
    assert_eq!(result.playouts, 2_000);
    // The search comes back with its tree, ready for reuse.
    assert_eq!(search.snapshot().root_visits, 2_000);
    assert!(search.advance(&[result.best_move.unwrap()]) > 0);
}

#[test]
fn zero_budget_still_lists_the_moves() {
    let result = Search::new(big_nim(), playouts(0)).run();
    assert_eq!(result.stop_reason, Some(StopReason::Playouts));
    assert_eq!(result.playouts, 0);
    assert_eq!(result.moves.len(), 3);
    assert!(result.best_move.is_some());
}

#[test]
fn nodes_and_edges_are_small() {
    // Moves are not stored, so the sizes do not depend on the game.
    assert_eq!(Search::<TicTacToe>::bytes_per_node(), 32);
    assert_eq!(Search::<Nim>::bytes_per_node(), 32);
    assert_eq!(Search::<Nim>::bytes_per_edge(), 8);
}

#[test]
fn search_types_can_cross_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Search<TicTacToe>>();
    send_sync::<emergo_mcts::SearchHandle<TicTacToe>>();
    send_sync::<Snapshot<u8>>();
    send_sync::<SearchParams>();
}
