//! Refined knowledge (`SearchParams::refine_visits`) on a toy game: nodes the search keeps
//! coming back to ask the game again, once per level, at the visit counts the parameters name,
//! and the better answer replaces the expansion's priors and values.
//!
//! The game is subtraction Nim (take 1 to 3, the last stone wins: the side to move loses exactly
//! when the pile is a multiple of 4) on a pile far too big for the solver or for playouts. Its
//! expansion-time knowledge lies (priors and values say the opposite of the truth); its refined
//! knowledge tells the truth. So only a search that refines finds the winning move (take 1).

use std::sync::{Arc, Mutex};

use emergo_mcts::toy::Nim;
use emergo_mcts::{Game, Outcome, Player, Search, SearchParams, Selection};

/// Nim whose first answer about a node's moves lies and whose refined answers do not.
#[derive(Clone, Debug)]
struct Hindsight {
    nim: Nim,
    /// Every refinement asked: (pile, level).
    asked: Arc<Mutex<Vec<(u32, u32)>>>,
    /// Levels from this one on are given up (left unanswered).
    gives_up_at: u32,
}

impl Hindsight {
    fn new(pile: u32) -> Self {
        Hindsight {
            nim: Nim::new(pile, 3),
            asked: Arc::default(),
            gives_up_at: u32::MAX,
        }
    }

    /// For each move, its true value for the mover.
    fn truth(&self, moves: &[u32]) -> Vec<f32> {
        moves
            .iter()
            .map(|&m| {
                if (self.nim.pile - m) % 4 == 0 {
                    1.0
                } else {
                    0.0
                }
            })
            .collect()
    }

    fn asked(&self) -> Vec<(u32, u32)> {
        self.asked.lock().unwrap().clone()
    }

    /// The levels asked for the nodes with `pile` stones, in order.
    fn asked_at(&self, pile: u32) -> Vec<u32> {
        self.asked()
            .iter()
            .filter(|&&(p, _)| p == pile)
            .map(|&(_, level)| level)
            .collect()
    }
}

impl Game for Hindsight {
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

    fn move_knowledge(&self, moves: &[u32], priors: &mut Vec<f32>, values: &mut Vec<f32>) {
        values.clear();
        values.extend(self.truth(moves).iter().map(|v| 1.0 - v));
        priors.clear();
        priors.extend(values.iter().map(|v| 0.05 + v));
    }

    fn refine_knowledge(
        &self,
        moves: &[u32],
        level: u32,
        _deadline: Option<std::time::Instant>,
        priors: &mut Vec<f32>,
        values: &mut Vec<f32>,
    ) {
        self.asked.lock().unwrap().push((self.nim.pile, level));
        values.clear();
        priors.clear();
        if level >= self.gives_up_at {
            return;
        }
        values.extend(self.truth(moves));
        priors.clear();
        priors.extend(values.iter().map(|v| 0.05 + v));
    }
}

fn params(playouts: u64) -> SearchParams {
    SearchParams {
        selection: Selection::Puct,
        exploration: 1.0,
        minimax_weight: 0.5,
        playout_cutoff: Some(0),
        max_playouts: Some(playouts),
        smart_pruning: false,
        seed: 3,
        ..SearchParams::default()
    }
}

#[test]
fn refined_knowledge_overrides_the_first_answer() {
    // Misled: the lying priors and values keep the search away from the winning move.
    let plain = Search::new(Hindsight::new(1001), params(400)).run();
    assert_ne!(plain.best_move, Some(1), "{:?}", plain.moves);
    assert_eq!(plain.refinements, 0);

    let game = Hindsight::new(1001);
    let p = SearchParams {
        refine_visits: 10,
        ..params(400)
    };
    let refined = Search::new(game.clone(), p).run();
    assert_eq!(refined.best_move, Some(1), "{:?}", refined.moves);
    // Playouts from a pile this big all reach the cap (worth ½), so only the priors and
    // minimax values steer the visits: after the refinement, to the winning move.
    assert!(refined.moves[0].visits > 300, "{:?}", refined.moves);
    let asked = game.asked();
    assert_eq!(refined.refinements, asked.len() as u64);
    // One level only (the default), once per node: the root first, at its tenth playout.
    assert_eq!(asked[0], (1001, 1));
    assert!(asked.iter().all(|&(_, level)| level == 1), "{asked:?}");
}

#[test]
fn each_level_is_asked_once_at_its_visit_count() {
    let game = Hindsight::new(1001);
    let p = SearchParams {
        refine_visits: 10,
        refine_growth: 4,
        refine_levels: 3,
        ..params(400)
    };
    let snap = Search::new(game.clone(), p).run();
    // The root passes 10, 40 and 160 playouts: levels 1, 2, 3, in that order, once each.
    let root = game.asked_at(1001);
    assert_eq!(root, [1, 2, 3]);
    assert_eq!(snap.refinements, game.asked().len() as u64);
    assert_eq!(snap.best_move, Some(1), "{:?}", snap.moves);
}

#[test]
fn refinement_keeps_exact_playouts_determinism_and_threads() {
    let p = SearchParams {
        refine_visits: 8,
        refine_levels: 2,
        ..params(3_000)
    };
    let visits = |s: &emergo_mcts::Snapshot<u32>| -> Vec<(u32, u64)> {
        s.moves.iter().map(|m| (m.mv, m.visits)).collect()
    };
    let a = Search::new(Hindsight::new(1001), p.clone()).run();
    let b = Search::new(Hindsight::new(1001), p.clone()).run();
    assert_eq!(visits(&a), visits(&b));
    assert_eq!(a.refinements, b.refinements);

    let game = Hindsight::new(1001);
    let threaded = SearchParams { threads: 4, ..p };
    let snap = Search::new(game.clone(), threaded).run();
    assert_eq!(snap.playouts, 3_000);
    let children: u64 = snap.moves.iter().map(|m| m.visits).sum();
    assert_eq!(snap.root_visits, children + 1);
    assert_eq!(snap.best_move, Some(1));
    // However many threads arrive at once, each level of the root is asked exactly once.
    let root = game.asked_at(1001);
    assert_eq!(root, [1, 2]);
    assert_eq!(snap.refinements, game.asked().len() as u64);
}

#[test]
fn a_search_without_knowledge_never_refines() {
    // Plain UCT over playouts reads no priors or values: nothing to refine.
    let game = Hindsight::new(30);
    let p = SearchParams {
        refine_visits: 2,
        max_playouts: Some(500),
        seed: 1,
        ..SearchParams::default()
    };
    let snap = Search::new(game.clone(), p).run();
    assert_eq!(snap.refinements, 0);
    assert!(game.asked().is_empty());
}

#[test]
fn a_level_given_up_on_is_not_asked_again() {
    // The game answers level 1 and gives up on level 2 (as when its deeper search cannot be
    // had in time): the thread asks for level 2 once, then never for level 2 or 3 again, and
    // level 1 still refines the nodes that reach it.
    let game = Hindsight {
        gives_up_at: 2,
        ..Hindsight::new(1001)
    };
    let p = SearchParams {
        refine_visits: 10,
        refine_levels: 3,
        ..params(2_000)
    };
    let snap = Search::new(game.clone(), p).run();
    let asked = game.asked();
    let deeper: Vec<&(u32, u32)> = asked.iter().filter(|&&(_, level)| level > 1).collect();
    assert_eq!(deeper, [&(1001, 2)], "{asked:?}");
    let answered = asked.iter().filter(|&&(_, level)| level == 1).count();
    assert!(answered > 1, "{asked:?}");
    assert_eq!(snap.refinements, answered as u64);
    assert_eq!(snap.best_move, Some(1), "{:?}", snap.moves);
}

#[test]
fn a_reused_trees_new_root_is_refined_again_at_the_highest_level_due() {
    // The child kept as the new root by `advance` had its knowledge refined as a child; as a
    // root it is asked again, once, for the highest level its visits call for.
    let game = Hindsight::new(1001);
    let p = SearchParams {
        refine_visits: 10,
        refine_levels: 3,
        ..params(1_000)
    };
    let mut search = Search::new(game.clone(), p);
    assert_eq!(search.run().best_move, Some(1));
    let before = game.asked_at(1000).len();
    let kept = search.advance(&[1]);
    assert!(kept >= 160, "{kept}");
    search.run();
    let after = game.asked_at(1000);
    assert_eq!(after[before..], [3], "{after:?}");
}
