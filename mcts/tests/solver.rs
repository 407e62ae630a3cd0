//! Playing strength and solver results on the toy games, checked against exact minimax.

use std::collections::HashMap;

use emergo_mcts::toy::{Nim, TicTacToe};
use emergo_mcts::{Game, Outcome, Proven, Search, SearchParams, StopReason};

/// Exact value of a tic-tac-toe position for the side to move (1 win, 0.5 draw, 0 loss).
fn minimax(board: TicTacToe, memo: &mut HashMap<TicTacToe, f32>) -> f32 {
    if let Some(outcome) = board.outcome() {
        return outcome.value_for(board.to_move());
    }
    if let Some(&v) = memo.get(&board) {
        return v;
    }
    let mut moves = Vec::new();
    board.legal_moves(&mut moves);
    let mut best = 0.0f32;
    for mv in moves {
        let mut next = board;
        next.play(mv);
        best = best.max(1.0 - minimax(next, memo));
    }
    memo.insert(board, best);
    best
}

/// Exact value of playing `mv` in `board`, for the player making it.
fn move_value(board: TicTacToe, mv: u8, memo: &mut HashMap<TicTacToe, f32>) -> f32 {
    let mut next = board;
    next.play(mv);
    1.0 - minimax(next, memo)
}

/// A playout limit without smart pruning, so that searches run until solved.
fn params(playouts: u64, seed: u64) -> SearchParams {
    SearchParams {
        max_playouts: Some(playouts),
        seed,
        smart_pruning: false,
        ..SearchParams::default()
    }
}

fn board(cells: &str) -> TicTacToe {
    TicTacToe::from_cells(cells).unwrap()
}

#[test]
fn tic_tac_toe_self_play_is_a_perfect_draw() {
    let mut memo = HashMap::new();
    for game in 0..2u64 {
        let mut position = TicTacToe::new();
        let mut ply = 0;
        while position.outcome().is_none() {
            let result = Search::new(position, params(3_000, game * 100 + ply)).run();
            let mv = result.best_move.unwrap();
            assert_eq!(
                move_value(position, mv, &mut memo),
                minimax(position, &mut memo),
                "game {game}: {mv} is a mistake in {position:?}"
            );
            position.play(mv);
            ply += 1;
        }
        assert_eq!(position.outcome(), Some(Outcome::Draw));
    }
}

#[test]
fn tic_tac_toe_never_picks_a_losing_move() {
    // Every position after two moves where the side to move can avoid losing: the chosen move
    // never throws the game away.
    let mut memo = HashMap::new();
    let mut checked = 0;
    for a in 0..9u8 {
        for b in (0..9u8).filter(|&b| b != a) {
            let mut position = TicTacToe::new();
            position.play(a);
            position.play(b);
            let result = Search::new(position, params(2_000, u64::from(a * 9 + b))).run();
            let mv = result.best_move.unwrap();
            let best = minimax(position, &mut memo);
            assert!(
                move_value(position, mv, &mut memo) >= best.min(0.5),
                "{mv} loses in {position:?}"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 72);
}

#[test]
fn tic_tac_toe_takes_an_immediate_win() {
    // X to move: 2 wins at once (O also threatens 5).
    let position = board("XX./OO./X.O");
    let result = Search::new(position, params(5_000, 1)).run();
    assert_eq!(result.best_move, Some(2));
    assert_eq!(result.moves[0].proven, Some(Proven::Win { plies: 1 }));
    assert_eq!(result.root_proven, Some(Proven::Win { plies: 1 }));
    assert_eq!(result.stop_reason, Some(StopReason::Solved));
    assert_eq!(result.root_value, 1.0);
}

#[test]
fn tic_tac_toe_finds_the_fork_winning_in_three() {
    // X to move, no immediate win for anyone; 3 and 6 both fork (win in 3 plies).
    let position = board("XO./.X./..O");
    let mut memo = HashMap::new();
    assert_eq!(minimax(position, &mut memo), 1.0);
    let result = Search::new(position, params(20_000, 2)).run();
    let mv = result.best_move.unwrap();
    assert!([3, 6].contains(&mv), "{mv}");
    assert_eq!(result.root_proven, Some(Proven::Win { plies: 3 }));
    assert_eq!(result.moves[0].proven, Some(Proven::Win { plies: 3 }));
    assert_eq!(result.stop_reason, Some(StopReason::Solved));
    // The PV shows the win: the fork, a defence, the winning move.
    assert_eq!(result.moves[0].pv.len(), 3);
}

#[test]
fn tic_tac_toe_losing_side_resists_longest() {
    // O to move against X's double threat (2 and 6 after X's fork at 4... here: X has two open
    // lines); every move loses, the solver proves it and still suggests a move.
    let position = board("X.X/.O./X.O");
    let mut memo = HashMap::new();
    assert_eq!(minimax(position, &mut memo), 0.0);
    let result = Search::new(position, params(20_000, 3)).run();
    assert_eq!(result.stop_reason, Some(StopReason::Solved));
    assert!(matches!(result.root_proven, Some(Proven::Loss { .. })));
    assert!(result.best_move.is_some());
    assert!(
        result
            .moves
            .iter()
            .all(|m| matches!(m.proven, Some(Proven::Loss { .. })))
    );
}

#[test]
fn tic_tac_toe_empty_board_is_proven_a_draw() {
    let result = Search::new(TicTacToe::new(), params(400_000, 4)).run();
    assert_eq!(result.stop_reason, Some(StopReason::Solved));
    assert_eq!(result.root_proven, Some(Proven::Draw));
    assert_eq!(result.root_value, 0.5);
    // Score bounds: proving the root a draw takes one move proven to draw and every other move
    // shown to be at most a draw, which is far less than solving them all exactly.
    assert_eq!(result.moves[0].proven, Some(Proven::Draw));
    assert!(result.moves.iter().all(|m| m.value == 0.5));
    assert!(result.playouts < 100_000, "{}", result.playouts);
}

#[test]
fn nim_ten_is_a_win_by_taking_two() {
    for threads in [1, 3] {
        let params = SearchParams {
            threads,
            ..params(50_000, 5)
        };
        let result = Search::new(Nim::new(10, 3), params).run();
        assert_eq!(result.stop_reason, Some(StopReason::Solved));
        assert_eq!(result.best_move, Some(2));
        // 2, then the loser takes 1 each time and the winner answers 3: 10 -> 8 -> 7 -> 4 -> 3 -> 0.
        assert_eq!(result.root_proven, Some(Proven::Win { plies: 5 }));
        assert_eq!(result.moves[0].proven, Some(Proven::Win { plies: 5 }));
        assert_eq!(result.root_value, 1.0);
        // The other moves leave a winning pile to the opponent (the search stops as soon as the
        // root is proven, so they need not be proven losses yet).
        for m in &result.moves[1..] {
            assert!(!matches!(m.proven, Some(Proven::Win { .. })), "{m:?}");
        }
    }
}

#[test]
fn nim_lost_pile_is_proven_lost_and_resists() {
    let result = Search::new(Nim::new(8, 3), params(50_000, 6)).run();
    assert_eq!(result.stop_reason, Some(StopReason::Solved));
    assert_eq!(result.root_proven, Some(Proven::Loss { plies: 4 }));
    assert_eq!(result.root_value, 0.0);
    assert!(
        result
            .moves
            .iter()
            .all(|m| m.proven == Some(Proven::Loss { plies: 4 }))
    );
    assert!(result.best_move.is_some());
}

#[test]
fn nim_other_sizes() {
    // Take 1..=4: the mover must leave a multiple of 5.
    for (pile, best) in [(13, 3), (11, 1), (7, 2)] {
        let result = Search::new(Nim::new(pile, 4), params(100_000, pile.into())).run();
        assert_eq!(result.best_move, Some(best), "pile {pile}");
        assert!(
            matches!(result.root_proven, Some(Proven::Win { .. })),
            "pile {pile}"
        );
    }
}

/// A forced move that ends the game is answered at once and reported as what it is
/// (a proven win, the root with it), not as an unsearched move at an even value.
#[test]
fn a_forced_move_that_ends_the_game_is_proven() {
    let mut search = Search::new(Nim::new(1, 3), params(100, 1));
    let snap = search.run();
    assert_eq!(snap.stop_reason, Some(StopReason::SingleMove));
    assert_eq!(snap.playouts, 0);
    assert_eq!(snap.moves.len(), 1);
    assert_eq!(snap.moves[0].proven, Some(Proven::Win { plies: 1 }));
    assert_eq!(snap.moves[0].value, 1.0);
    assert_eq!(snap.root_proven, Some(Proven::Win { plies: 1 }));
    assert_eq!(snap.root_value, 1.0);

    // A forced move that does not end the game stays unproven.
    let mut search = Search::new(Nim::new(2, 1), params(100, 1));
    let snap = search.run();
    assert_eq!(snap.stop_reason, Some(StopReason::SingleMove));
    assert_eq!(snap.moves[0].proven, None);
    assert_eq!(snap.root_proven, None);
}

/// Principal variations end where visits get thin: a move below the root seen only
/// once (a single evaluation) does not extend a line, so a line of two moves or more needs at
/// least three visits through its first move (unless proven).
#[test]
fn principal_variations_stop_at_single_visits() {
    for seed in 1..20 {
        let p = SearchParams {
            multi_pv: 9,
            ..params(10 + seed * 3, seed)
        };
        let snap = Search::new(TicTacToe::default(), p).run();
        for m in &snap.moves {
            if m.pv.len() >= 2 && m.proven.is_none() {
                assert!(m.visits >= 3, "seed {seed}: {m:?}");
            }
        }
    }
}
