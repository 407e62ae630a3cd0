//! A quick in-process match between two engine configurations, for tuning (the official
//! figures come from `emergo arena`). Games run two at a time, colour-swapped per opening.
//!
//! ```sh
//! cargo run --release -p emergo-engine --example duel -- \
//!     "mcts:cut=0,sel=puct,c=1.5,fpu=0.3" "ab" 200 20
//! ```
//! Arguments: engine A, engine B, milliseconds per move, number of openings (2 games each).
//! `mcts:...,verify=F,vk=K,vm=M` adds a root safety check: the MCTS gets (1 − F) of the time,
//! then alpha-beta scores its K most visited moves (F/K of the time each) and overrules the
//! MCTS's choice when another candidate is more than M centimen better (tried:
//! no significant gain against `ab`, `docs/STRENGTH.md`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use emergo_engine::alphabeta::{AbLimits, AlphaBeta};
use emergo_engine::state::{EmergoState, Knowledge};
use emergo_mcts::{Search, SearchParams, Selection};
use emergo_rules::{Game, Move, Position};
use rand_xoshiro::Xoshiro256PlusPlus;
use rand_xoshiro::rand_core::{Rng, SeedableRng};

enum Engine {
    Ab(Box<AlphaBeta>, Option<u32>),
    Mcts(SearchParams, Option<Arc<Knowledge>>, Option<Verify>),
}

/// A root safety check after the MCTS (`verify=F,vk=K,vm=M`): the MCTS gets (1 − F) of the
/// time, then its K most visited moves are each searched by alpha-beta with F/K of the time;
/// the MCTS's choice stands unless another candidate scores more than M centimen better.
struct Verify {
    share: f64,
    candidates: usize,
    margin: i32,
    ab: Box<AlphaBeta>,
}

fn ver(verify: &mut Option<Verify>) -> &mut Verify {
    verify.get_or_insert_with(|| Verify {
        share: 0.3,
        candidates: 3,
        margin: 50,
        ab: Box::new(AlphaBeta::new(18, emergo_engine::eval::Weights::default())),
    })
}

fn parse(spec: &str, ms: u64, seed: u64) -> Engine {
    let (head, rest) = spec.split_once(':').unwrap_or((spec, ""));
    let kv: Vec<(&str, &str)> = rest
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| s.split_once('=').expect("key=value"))
        .collect();
    match head {
        "ab" => {
            let mut depth = None;
            let mut w = emergo_engine::eval::Weights::default();
            for (k, v) in kv {
                match k {
                    "depth" => depth = Some(v.parse().unwrap()),
                    "matonly" => w = emergo_engine::eval::Weights::material_only(),
                    "hand" => w = emergo_engine::eval::Weights::hand_set(),
                    "wfile" => {
                        w = emergo_engine::eval::Weights::parse(
                            &std::fs::read_to_string(v).unwrap(),
                        )
                        .unwrap()
                    }
                    _ => panic!("unknown ab key {k}"),
                }
            }
            Engine::Ab(Box::new(AlphaBeta::new(19, w)), depth)
        }
        "mcts" => {
            let mut p = SearchParams {
                max_time: Some(Duration::from_millis(ms)),
                seed,
                ..SearchParams::default()
            };
            let mut k = Knowledge::default();
            let mut knowledge = false;
            let mut verify: Option<Verify> = None;
            for (key, v) in kv {
                match key {
                    "verify" => ver(&mut verify).share = v.parse().unwrap(),
                    "vk" => ver(&mut verify).candidates = v.parse().unwrap(),
                    "vm" => ver(&mut verify).margin = v.parse().unwrap(),
                    "cut" => {
                        p.playout_cutoff = if v == "none" {
                            None
                        } else {
                            Some(v.parse().unwrap())
                        };
                        knowledge = true;
                    }
                    "sel" => {
                        p.selection = if v == "puct" {
                            Selection::Puct
                        } else {
                            Selection::Uct
                        };
                        knowledge = true;
                    }
                    "c" => p.exploration = v.parse().unwrap(),
                    "fpu" => p.first_play_urgency = v.parse().unwrap(),
                    "pw" => p.prior_weight = v.parse().unwrap(),
                    "temp" => k.prior_temperature = v.parse().unwrap(),
                    "vs" => k.value_scale = v.parse().unwrap(),
                    "mm" => p.minimax_weight = v.parse().unwrap(),
                    "ld" => k.leaf_depth = v.parse().unwrap(),
                    "pd" => k.prior_depth = v.parse().unwrap(),
                    "samples" => k.playout_samples = v.parse().unwrap(),
                    "po" => {
                        p.max_playouts = Some(v.parse().unwrap());
                        p.max_time = None;
                    }
                    "prune" => p.smart_pruning = v == "1",
                    "exp" => p.expand_threshold = v.parse().unwrap(),
                    "k" => knowledge = v == "1",
                    "hand" => k.weights = emergo_engine::eval::Weights::hand_set(),
                    "wfile" => {
                        k.weights = emergo_engine::eval::Weights::parse(
                            &std::fs::read_to_string(v).unwrap(),
                        )
                        .unwrap()
                    }
                    _ => panic!("unknown key {key}"),
                }
            }
            if let Some(v) = &verify {
                p.max_time = Some(Duration::from_millis(((1.0 - v.share) * ms as f64) as u64));
            }
            Engine::Mcts(p, knowledge.then(|| Arc::new(k)), verify)
        }
        _ => panic!("unknown engine {head}"),
    }
}

fn pick(e: &mut Engine, game: &Game, ms: u64) -> Move {
    match e {
        Engine::Ab(ab, depth) => {
            let limits = match depth {
                Some(d) => AbLimits {
                    max_depth: *d,
                    ..AbLimits::default()
                },
                None => AbLimits {
                    max_time: Some(Duration::from_millis(ms)),
                    ..AbLimits::default()
                },
            };
            ab.search_game(game, limits).best.expect("a move")
        }
        Engine::Mcts(p, k, verify) => {
            p.seed = p.seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let state = EmergoState::from_game(game).with_knowledge(k.clone());
            let mut s = Search::new(state, p.clone());
            let snap = s.run();
            let chosen = snap.best_move.expect("a move");
            let Some(v) = verify else {
                return chosen;
            };
            let mut ranked: Vec<(Move, u64)> =
                snap.moves.iter().map(|m| (m.mv, m.visits)).collect();
            ranked.sort_by_key(|&(m, visits)| (std::cmp::Reverse(visits), m != chosen));
            ranked.truncate(v.candidates);
            if ranked.len() < 2 {
                return chosen;
            }
            let each = Duration::from_millis(((v.share * ms as f64) / ranked.len() as f64) as u64);
            let mut best = (i32::MIN, chosen);
            let mut chosen_score = i32::MIN;
            for &(m, _) in &ranked {
                let mut after = game.clone();
                after.play(m).expect("a legal root move");
                // A search's score even where the reply is forced (`score_game`).
                let score = -v.ab.score_game(
                    &after,
                    AbLimits {
                        max_time: Some(each),
                        ..AbLimits::default()
                    },
                );
                if m == chosen {
                    chosen_score = score;
                }
                if score > best.0 {
                    best = (score, m);
                }
            }
            if best.1 != chosen && best.0 > chosen_score.saturating_add(v.margin) {
                best.1
            } else {
                chosen
            }
        }
    }
}

fn opening(seed: u64, plies: usize) -> Vec<Move> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut pos = Position::initial();
    let mut moves = Vec::new();
    for _ in 0..plies {
        let legal = pos.legal_moves();
        let m = legal.as_slice()[(rng.next_u64() % legal.len() as u64) as usize];
        pos.play_unchecked(m);
        moves.push(m);
    }
    moves
}

/// Score of engine A (1, ½, 0) in one game.
fn play(a: &str, b: &str, ms: u64, open: &[Move], a_white: bool, seed: u64) -> (f64, usize) {
    let mut ea = parse(a, ms, seed);
    let mut eb = parse(b, ms, seed ^ 0xABCD);
    let mut game = Game::new(Position::initial());
    for &m in open {
        game.play(m).expect("legal opening");
    }
    loop {
        if let Some(o) = game.outcome() {
            let white = match o.result.winner() {
                Some(emergo_rules::Player::White) => 1.0,
                Some(_) => 0.0,
                None => 0.5,
            };
            return (
                if a_white { white } else { 1.0 - white },
                game.moves().len(),
            );
        }
        if game.moves().len() >= 600 {
            return (0.5, 600);
        }
        let white_to_move = game.position().side_to_move() == emergo_rules::Player::White;
        let m = if white_to_move == a_white {
            pick(&mut ea, &game, ms)
        } else {
            pick(&mut eb, &game, ms)
        };
        game.play(m).expect("engine played an illegal move");
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let a = args[1].clone();
    let b = args[2].clone();
    let ms: u64 = args[3].parse().unwrap();
    let openings: usize = args[4].parse().unwrap();
    let base: u64 = args.get(5).map_or(1, |s| s.parse().unwrap());
    let next = Arc::new(AtomicUsize::new(0));
    let results = Arc::new(std::sync::Mutex::new(Vec::new()));
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let (a, b, next, results) = (a.clone(), b.clone(), next.clone(), results.clone());
            std::thread::spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= openings * 2 {
                        break;
                    }
                    let open = opening(base * 1000 + (i / 2) as u64, 4);
                    let (s, len) = play(&a, &b, ms, &open, i % 2 == 0, base * 7919 + i as u64);
                    let mut r = results.lock().unwrap();
                    r.push(s);
                    let (w, d, l) = r.iter().fold((0, 0, 0), |(w, d, l), &s| {
                        if s == 1.0 {
                            (w + 1, d, l)
                        } else if s == 0.5 {
                            (w, d + 1, l)
                        } else {
                            (w, d, l + 1)
                        }
                    });
                    eprintln!("game {i}: {s} ({len} turns)  A: +{w} ={d} -{l}");
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let r = results.lock().unwrap();
    let score: f64 = r.iter().sum::<f64>() / r.len() as f64;
    println!("{a} vs {b} @ {ms}ms: {} games, score {:.3}", r.len(), score);
}
