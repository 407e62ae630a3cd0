//! The knowledge plug points on a toy game: static evaluation (evaluation-cut playouts and
//! evaluation at the leaf), move priors (PUCT and progressive bias) and implicit minimax backups.
//!
//! The game is subtraction Nim (take 1 to 3, the last stone wins), whose theory is known: the
//! side to move loses exactly when the pile is a multiple of 4. A pile of 1,001 stones is far
//! too deep for the solver to prove within a few hundred playouts, so only the knowledge can
//! find the winning move (take 1) that quickly.

use std::sync::atomic::{AtomicU64, Ordering};

use emergo_mcts::toy::Nim;
use emergo_mcts::{Game, Outcome, Player, Playout, Rng, Search, SearchParams, Selection};

/// Calls to `evaluate` of [`Informed`] (all tests of this file; only compared as "more").
static EVALUATIONS: AtomicU64 = AtomicU64::new(0);
/// Calls to `playout` of [`Informed`] (likewise).
static PLAYOUTS: AtomicU64 = AtomicU64::new(0);

/// Nim with knowledge: a perfect evaluation, or a deliberately wrong one.
#[derive(Clone, Debug)]
struct Informed {
    nim: Nim,
    /// Lie: every evaluation and prior says the opposite of the truth.
    misleading: bool,
}

impl Informed {
    fn new(pile: u32, misleading: bool) -> Self {
        Informed {
            nim: Nim::new(pile, 3),
            misleading,
        }
    }

    /// The true value for the side to move.
    fn value_to_move(&self) -> f32 {
        let v = if self.nim.pile % 4 == 0 { 0.0 } else { 1.0 };
        if self.misleading { 1.0 - v } else { v }
    }
}

impl Game for Informed {
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

    fn evaluate(&self) -> Option<f32> {
        EVALUATIONS.fetch_add(1, Ordering::Relaxed);
        let v = self.value_to_move();
        Some(match self.to_move() {
            Player::One => v,
            Player::Two => 1.0 - v,
        })
    }

    fn move_knowledge(&self, moves: &[u32], priors: &mut Vec<f32>, values: &mut Vec<f32>) {
        values.clear();
        priors.clear();
        for &m in moves {
            let mut next = self.clone();
            next.play(m);
            // The mover's value is the opponent's loss.
            let v = 1.0 - next.value_to_move();
            values.push(v);
            priors.push(0.05 + v);
        }
    }

    fn playout(&mut self, rng: &mut Rng, max_turns: u32) -> Playout {
        PLAYOUTS.fetch_add(1, Ordering::Relaxed);
        self.nim.playout(rng, max_turns)
    }
}

fn params(playouts: u64) -> SearchParams {
    SearchParams {
        max_playouts: Some(playouts),
        smart_pruning: false,
        seed: 5,
        ..SearchParams::default()
    }
}

#[test]
fn evaluation_at_the_leaf_finds_the_winning_move() {
    let p = SearchParams {
        playout_cutoff: Some(0),
        ..params(300)
    };
    let snap = Search::new(Informed::new(1001, false), p).run();
    assert_eq!(snap.best_move, Some(1), "{:?}", snap.moves);
    assert!(snap.moves[0].value > 0.7, "{:?}", snap.moves);
    assert!(snap.moves[1].value < 0.1, "{:?}", snap.moves);
    assert_eq!(snap.playouts, 300);
}

#[test]
fn evaluation_cut_playouts_call_the_evaluation() {
    let before = EVALUATIONS.load(Ordering::Relaxed);
    let p = SearchParams {
        playout_cutoff: Some(4),
        ..params(200)
    };
    let snap = Search::new(Informed::new(1001, false), p).run();
    let calls = EVALUATIONS.load(Ordering::Relaxed) - before;
    // Every playout from a position 1,000 stones from the end is cut.
    assert!(calls >= 200, "{calls}");
    assert_eq!(snap.best_move, Some(1), "{:?}", snap.moves);
}

#[test]
fn mixed_leaf_values_weigh_the_evaluation_and_a_playout() {
    // From a thousand stones every playout reaches the 400-turn cap and scores 0.5, so the
    // playout's share of each leaf value is known exactly.
    let run = |mix: f32| {
        let p = SearchParams {
            playout_cutoff: Some(0),
            playout_mix: mix,
            ..params(400)
        };
        Search::new(Informed::new(1001, false), p).run()
    };
    let before = PLAYOUTS.load(Ordering::Relaxed);
    let half = run(0.5);
    assert!(PLAYOUTS.load(Ordering::Relaxed) - before >= 400);
    assert_eq!(half.best_move, Some(1), "{:?}", half.moves);
    // Every leaf value is half a perfect evaluation (0 or 1) and half 0.5: within [0.25, 0.75],
    // and still ranking the winning move first.
    assert!(
        half.moves
            .iter()
            .all(|m| (0.25..=0.75).contains(&m.value) && m.value != 0.5),
        "{:?}",
        half.moves
    );
    assert!(
        half.moves[1..]
            .iter()
            .all(|m| m.value < half.moves[0].value)
    );
    // The playout alone: the evaluation no longer counts.
    let only = run(1.0);
    assert!(
        only.moves.iter().all(|m| m.value == 0.5),
        "{:?}",
        only.moves
    );
    assert_eq!(only.playouts, 400);
}

#[test]
fn a_game_without_evaluation_keeps_its_playouts() {
    // Plain Nim has no evaluation: the cutoff falls back to the playout's own estimate, and
    // the search still runs exactly its playouts.
    let p = SearchParams {
        playout_cutoff: Some(0),
        ..params(500)
    };
    let snap = Search::new(Nim::new(30, 3), p).run();
    assert_eq!(snap.playouts, 500);
    assert!(snap.best_move.is_some());
}

#[test]
fn puct_follows_good_priors_and_recovers_from_bad_ones() {
    let puct = SearchParams {
        selection: Selection::Puct,
        exploration: 1.0,
        playout_cutoff: Some(0),
        ..params(200)
    };
    let good = Search::new(Informed::new(1001, false), puct.clone()).run();
    assert_eq!(good.best_move, Some(1));
    // Visits concentrate on the move the priors favour.
    assert!(good.moves[0].visits > 150, "{:?}", good.moves);

    // Misleading knowledge misleads a short search...
    let bad = Search::new(Informed::new(1001, true), puct.clone()).run();
    assert_ne!(bad.best_move, Some(1));
    // ...but on a small pile the solver still proves the truth, whatever the priors say.
    let p = SearchParams {
        max_playouts: Some(20_000),
        ..puct
    };
    let solved = Search::new(Informed::new(9, true), p).run();
    assert_eq!(solved.best_move, Some(1));
    assert!(matches!(
        solved.root_proven,
        Some(emergo_mcts::Proven::Win { .. })
    ));
}

#[test]
fn progressive_bias_uses_the_priors_under_uct() {
    let p = SearchParams {
        prior_weight: 10.0,
        exploration: 0.1,
        ..params(300)
    };
    let snap = Search::new(Informed::new(1001, false), p).run();
    assert_eq!(snap.best_move, Some(1), "{:?}", snap.moves);
}

#[test]
fn implicit_minimax_backups_rank_by_the_values() {
    // Uniform playouts (no cutoff) carry no signal on a pile this big; the minimax of the static
    // values does.
    let p = SearchParams {
        minimax_weight: 1.0,
        exploration: 0.2,
        ..params(400)
    };
    let snap = Search::new(Informed::new(1001, false), p).run();
    assert_eq!(snap.best_move, Some(1), "{:?}", snap.moves);
}

#[test]
fn knowledge_keeps_exact_playouts_determinism_and_threads() {
    let p = SearchParams {
        selection: Selection::Puct,
        playout_cutoff: Some(0),
        minimax_weight: 0.5,
        ..params(3_000)
    };
    let a = Search::new(Informed::new(201, false), p.clone()).run();
    let b = Search::new(Informed::new(201, false), p.clone()).run();
    let visits = |s: &emergo_mcts::Snapshot<u32>| -> Vec<(u32, u64)> {
        s.moves.iter().map(|m| (m.mv, m.visits)).collect()
    };
    assert_eq!(visits(&a), visits(&b));
    let threaded = SearchParams { threads: 4, ..p };
    let snap = Search::new(Informed::new(201, false), threaded).run();
    assert_eq!(snap.playouts, 3_000);
    let children: u64 = snap.moves.iter().map(|m| m.visits).sum();
    assert_eq!(snap.root_visits, children + 1);
    assert_eq!(snap.best_move, Some(1));
}
