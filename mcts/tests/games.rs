//! Games with unusual shapes: players who do not alternate, and game code that panics.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use emergo_mcts::toy::Nim;
use emergo_mcts::{Game, Outcome, Player, Playout, Proven, Rng, Search, SearchParams, StopReason};

/// Nim (take 1 to 3, last stone wins) where taking exactly 2 stones gives the opponent two
/// moves in a row, so players do not alternate. The side to move loses on even piles.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct DoubleMoveNim {
    pile: u32,
    to_move: Player,
    /// The side to move moves again after this move.
    again: bool,
    /// Who took the last stone.
    last: Player,
}

impl DoubleMoveNim {
    fn new(pile: u32) -> Self {
        DoubleMoveNim {
            pile,
            to_move: Player::One,
            again: false,
            last: Player::Two,
        }
    }
}

impl Game for DoubleMoveNim {
    type Move = u32;

    fn to_move(&self) -> Player {
        self.to_move
    }

    fn legal_moves(&self, out: &mut Vec<u32>) {
        out.clear();
        out.extend(1..=self.pile.min(3));
    }

    fn play(&mut self, mv: u32) {
        self.pile -= mv;
        self.last = self.to_move;
        if self.again {
            self.again = false;
        } else {
            self.to_move = self.to_move.other();
            self.again = mv == 2;
        }
    }

    fn outcome(&self) -> Option<Outcome> {
        (self.pile == 0).then_some(Outcome::Win(self.last))
    }
}

/// Exhaustive solver: whether the side to move wins.
#[derive(Default)]
struct Exact(HashMap<(u32, bool), bool>);

impl Exact {
    fn wins(&mut self, pile: u32, again: bool) -> bool {
        if let Some(&w) = self.0.get(&(pile, again)) {
            return w;
        }
        let w = (1..=pile.min(3)).any(|mv| self.move_wins(pile, again, mv));
        self.0.insert((pile, again), w);
        w
    }

    fn move_wins(&mut self, pile: u32, again: bool, mv: u32) -> bool {
        let rest = pile - mv;
        if rest == 0 {
            true
        } else if again {
            self.wins(rest, false)
        } else {
            !self.wins(rest, mv == 2)
        }
    }
}

#[test]
fn solver_handles_players_who_do_not_alternate() {
    let mut exact = Exact::default();
    for pile in 4..=13 {
        let params = SearchParams {
            max_playouts: Some(200_000),
            smart_pruning: false,
            threads: 2,
            ..SearchParams::default()
        };
        let result = Search::new(DoubleMoveNim::new(pile), params).run();
        assert_eq!(result.stop_reason, Some(StopReason::Solved), "pile {pile}");
        let best = result.best_move.unwrap();
        if exact.wins(pile, false) {
            assert!(
                matches!(result.root_proven, Some(Proven::Win { .. })),
                "pile {pile}"
            );
            assert!(exact.move_wins(pile, false, best), "pile {pile}: {best}");
            assert_eq!(result.root_value, 1.0);
        } else {
            assert_eq!(pile % 2, 0);
            assert!(
                matches!(result.root_proven, Some(Proven::Loss { .. })),
                "pile {pile}"
            );
            assert_eq!(result.root_value, 0.0);
        }
    }
}

#[test]
fn tree_reuse_across_a_double_move_keeps_the_right_point_of_view() {
    let mut exact = Exact::default();
    let params = SearchParams {
        max_playouts: Some(3_000),
        smart_pruning: false,
        ..SearchParams::default()
    };
    let mut search = Search::new(DoubleMoveNim::new(17), params.clone());
    search.run();
    // One takes 2, so Two moves twice: after Two's first move, Two is still to move, and the
    // kept root's statistics are from the point of view of Two, the side to move.
    assert!(search.advance(&[2, 1]) > 0);
    let state = *search.root_state();
    assert_eq!(
        (state.pile, state.to_move, state.again),
        (14, Player::Two, false)
    );
    search.set_params(SearchParams {
        max_playouts: Some(200_000),
        ..params
    });
    let result = search.run();
    assert_eq!(result.stop_reason, Some(StopReason::Solved));
    let expected = if exact.wins(14, false) { 1.0 } else { 0.0 };
    assert_eq!(result.root_value, expected);
    let best = result.best_move.unwrap();
    assert_eq!(exact.move_wins(14, false, best), expected == 1.0);
}

/// Nim whose playouts panic after a given number of calls (shared by all clones).
#[derive(Clone, Debug)]
struct Panicky {
    nim: Nim,
    calls: Arc<AtomicU64>,
    panic_at: u64,
}

impl Game for Panicky {
    type Move = u32;

    fn to_move(&self) -> Player {
        self.nim.to_move()
    }

    fn legal_moves(&self, out: &mut Vec<u32>) {
        self.nim.legal_moves(out);
    }

    fn play(&mut self, mv: u32) {
        self.nim.play(mv);
    }

    fn outcome(&self) -> Option<Outcome> {
        self.nim.outcome()
    }

    fn playout(&mut self, rng: &mut Rng, max_turns: u32) -> Playout {
        if self.calls.fetch_add(1, Ordering::SeqCst) == self.panic_at {
            panic!("playout failed on purpose");
        }
        self.nim.playout(rng, max_turns)
    }
}

#[test]
fn a_panic_in_game_code_reaches_the_caller_without_hanging() {
    let game = || Panicky {
        nim: Nim::new(300, 3),
        calls: Arc::new(AtomicU64::new(0)),
        panic_at: 500,
    };
    let params = SearchParams {
        threads: 3,
        ..SearchParams::default()
    };
    let mut search = Search::new(game(), params.clone());
    let result = catch_unwind(AssertUnwindSafe(|| search.run()));
    assert!(result.is_err());

    let handle = Search::new(game(), params).start();
    let result = catch_unwind(AssertUnwindSafe(|| handle.wait()));
    assert!(result.is_err());
}
