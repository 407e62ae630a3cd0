//! Training data for the value network ([`crate::value_net`]): positions from alpha-beta
//! self-play, each labelled with what a deeper alpha-beta search says of it.
//!
//! 1. **Positions.** The alpha-beta engine plays itself at a small depth after 4–9 random
//!    turns, with one move in eight random, so that the positions include the odd ones a
//!    search tree is full of. Every quiet position (no capture pending, game not over) is kept.
//!    In one game in [`DistillConfig::weak_every`] one colour is *weak*: it plays a random
//!    legal move half the time. Those games hold what good players' games never do (men
//!    entered one after another where they must be captured, one side far ahead): a network
//!    fitted only to good games learnt nothing there, and its correction misled the MCTS, whose
//!    tree is full of such positions, into feeding men to a weak opponent.
//! 2. **Labels.** Each kept position is scored by an alpha-beta search `label_depth` plies
//!    deep (quiescence at its horizon), for its side to move, with
//!    [`DistillConfig::label_weights`]: by default the alpha-beta engine's own (linear)
//!    evaluation, so that the labels do not depend on an earlier network. Given a network
//!    there, the labels *bootstrap*: a 6-ply search whose leaves already know what 6-ply
//!    searches say sees further than a plain one (the network is worth about a ply to
//!    alpha-beta at depth 5), and a network fitted to those labels learns more than its
//!    predecessor could teach it (the idea of Veness et al.'s search bootstrapping).
//!    [`relabel`] scores saved positions again that way, without replaying the games.
//! 3. **Split.** Whole games go to the training or the held-out set (one in ten held out):
//!    neighbouring positions of a game are alike, so splitting positions would flatter the fit.
//!
//! Everything is seeded per game, and each game starts from empty tables, so the same settings
//! give the same data on any number of threads. Data can be kept as text
//! ([`to_text`]/[`parse`]: `game<TAB>FEN<TAB>score` lines) to train again without replaying.

use std::sync::atomic::{AtomicUsize, Ordering};

use emergo_rules::record::GameRecord;
use emergo_rules::{Game, Player, Position};
use rand_xoshiro::Xoshiro256PlusPlus;
use rand_xoshiro::rand_core::{Rng, SeedableRng};

use crate::alphabeta::{AbLimits, AlphaBeta};
use crate::eval::{LOGISTIC_SCALE, Weights};
use crate::learn::self_play_move;
use crate::value_net::{TrainSample, encode};

/// How the data is made.
#[derive(Clone, Debug, PartialEq)]
pub struct DistillConfig {
    /// Self-play games.
    pub games: usize,
    /// Depth of the self-play searches.
    pub play_depth: u32,
    /// Depth of the labelling searches.
    pub label_depth: u32,
    /// Games longer than this many turns are cut (their positions are kept).
    pub max_turns: usize,
    /// Threads playing and labelling games.
    pub threads: usize,
    /// Seed of everything random.
    pub seed: u64,
    /// One game in this many has a weak side (see the module docs); 0: none.
    pub weak_every: usize,
    /// The labelling searches' evaluation (the self-play searches always use the default).
    pub label_weights: Weights,
}

impl Default for DistillConfig {
    fn default() -> Self {
        DistillConfig {
            games: 1600,
            play_depth: 3,
            label_depth: 6,
            max_turns: 300,
            threads: 2,
            seed: 1,
            weak_every: 4,
            label_weights: Weights::default(),
        }
    }
}

/// A labelled position.
#[derive(Clone, Debug, PartialEq)]
pub struct Labelled {
    /// The game it comes from (for the split).
    pub game: u64,
    /// The position (quiet).
    pub position: Position,
    /// The labelling search's score for the side to move, in centimen.
    pub score: i32,
}

/// Whether game `g` has a weak side, and which: White in even-numbered weak games, Black in
/// odd ones (counting weak games only), so that both colours blunder equally often.
fn weak_side(cfg: &DistillConfig, g: usize) -> Option<Player> {
    let every = cfg.weak_every;
    if every == 0 || g % every != every - 1 {
        return None;
    }
    Some(if (g / every) % 2 == 0 {
        Player::White
    } else {
        Player::Black
    })
}

/// One game's quiet positions, played with `player` at `depth`; `weak` plays a random move
/// half the time.
fn play_one(
    player: &mut AlphaBeta,
    cfg: &DistillConfig,
    seed: u64,
    weak: Option<Player>,
) -> Vec<Position> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    player.forget();
    let mut game = Game::new(Position::initial());
    let random_turns = 4 + (rng.next_u64() % 6) as usize;
    let limits = AbLimits {
        max_depth: cfg.play_depth.max(1),
        ..AbLimits::default()
    };
    let mut kept = Vec::new();
    while game.outcome().is_none() && game.moves().len() < cfg.max_turns {
        let pos = *game.position();
        if !pos.has_capture() {
            kept.push(pos);
        }
        let random = game.moves().len() < random_turns
            || rng.next_u64() % 8 == 0
            || (weak == Some(pos.side_to_move()) && rng.next_u64() % 2 == 0);
        let Some(mv) = self_play_move(&game, player, limits, random, &mut rng) else {
            break;
        };
        if game.play(mv).is_err() {
            break;
        }
    }
    kept
}

/// Plays and labels `cfg.games` games on `cfg.threads` threads; the positions come back in
/// game order. `progress` is called with the number of games done so far.
pub fn generate(cfg: &DistillConfig, progress: &(dyn Fn(usize) + Sync)) -> Vec<Labelled> {
    in_parallel(
        cfg.games,
        cfg.threads,
        &cfg.label_weights,
        progress,
        |g, player, labeller| {
            let seed = cfg.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ g as u64;
            let positions = play_one(player, cfg, seed, weak_side(cfg, g));
            label(labeller, &positions, g as u64, cfg.label_depth)
        },
    )
}

/// The quiet positions of recorded games (`emergo arena` or `emergo play` records), labelled
/// like the self-play ones by `label_depth`-ply searches with `weights` on `threads` threads;
/// game `i` of `records` gets the number `first_game + i`. Errors name the game that does not
/// replay.
///
/// Why: the self-play games are alpha-beta's, and a search that trusts the network steers
/// into positions they never reach, where the network may be wrong in the search's favour
/// (it fed men to a weak opponent). Games the network's engine played, labelled, teach the
/// network those positions: the DAgger idea of training on the learner's own states.
pub fn label_records(
    records: &[GameRecord],
    label_depth: u32,
    weights: &Weights,
    threads: usize,
    first_game: u64,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<Vec<Labelled>, String> {
    let games: Vec<Vec<Position>> = records
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let game = r.replay().map_err(|e| format!("game {}: {e}", i + 1))?;
            Ok(game
                .positions()
                .iter()
                .filter(|p| !p.has_capture() && p.outcome().is_none())
                .copied()
                .collect())
        })
        .collect::<Result<_, String>>()?;
    Ok(in_parallel(
        games.len(),
        threads,
        weights,
        progress,
        |g, _, labeller| {
            label(
                labeller,
                &games[g],
                first_game.wrapping_add(g as u64),
                label_depth,
            )
        },
    ))
}

/// Saved positions scored again by `depth`-ply searches with `weights` on `threads` threads,
/// each game's positions in order from empty tables (as [`generate`] scores them), so that
/// data can be labelled deeper or with a network ([`DistillConfig::label_weights`]) without
/// replaying its games. The positions and game numbers are kept; `progress` counts games.
pub fn relabel(
    data: &[Labelled],
    depth: u32,
    weights: &Weights,
    threads: usize,
    progress: &(dyn Fn(usize) + Sync),
) -> Vec<Labelled> {
    // A game's positions are consecutive in saved data: split at each change of number.
    let games: Vec<&[Labelled]> = data.chunk_by(|a, b| a.game == b.game).collect();
    in_parallel(games.len(), threads, weights, progress, |g, _, labeller| {
        let positions: Vec<Position> = games[g].iter().map(|l| l.position).collect();
        label(labeller, &positions, games[g][0].game, depth)
    })
}

/// Each position scored by a `depth`-ply search from empty tables.
fn label(labeller: &mut AlphaBeta, positions: &[Position], game: u64, depth: u32) -> Vec<Labelled> {
    labeller.forget();
    positions
        .iter()
        .map(|&position| Labelled {
            game,
            score: labeller.score(&position, depth),
            position,
        })
        .collect()
}

/// Runs `work(g, player, labeller)` for games `0..games` on `threads` threads (each with its
/// own engines, the labeller evaluating with `label_weights`) and returns the positions in
/// game order.
fn in_parallel(
    games: usize,
    threads: usize,
    label_weights: &Weights,
    progress: &(dyn Fn(usize) + Sync),
    work: impl Fn(usize, &mut AlphaBeta, &mut AlphaBeta) -> Vec<Labelled> + Sync,
) -> Vec<Labelled> {
    let threads = threads.clamp(1, 256);
    let done = AtomicUsize::new(0);
    let mut per_game: Vec<(usize, Vec<Labelled>)> = Vec::new();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (done, work) = (&done, &work);
                scope.spawn(move || {
                    let mut player = AlphaBeta::new(18, Weights::default());
                    let mut labeller = AlphaBeta::new(20, *label_weights);
                    let mut mine = Vec::new();
                    for g in (t..games).step_by(threads) {
                        mine.push((g, work(g, &mut player, &mut labeller)));
                        progress(done.fetch_add(1, Ordering::Relaxed) + 1);
                    }
                    mine
                })
            })
            .collect();
        for h in handles {
            if let Ok(v) = h.join() {
                per_game.extend(v);
            }
        }
    });
    per_game.sort_by_key(|(g, _)| *g);
    per_game.into_iter().flat_map(|(_, v)| v).collect()
}

/// The data as text, a `game<TAB>FEN<TAB>score` line per position.
pub fn to_text(data: &[Labelled]) -> String {
    let mut out = String::new();
    for l in data {
        out.push_str(&format!("{}\t{}\t{}\n", l.game, l.position, l.score));
    }
    out
}

/// Reads [`to_text`]'s lines. Errors name the first bad line.
pub fn parse(text: &str) -> Result<Vec<Labelled>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, line)| {
            let mut parts = line.split('\t');
            let bad = || format!("line {}: expected game<TAB>FEN<TAB>score", i + 1);
            let (Some(g), Some(fen), Some(score), None) =
                (parts.next(), parts.next(), parts.next(), parts.next())
            else {
                return Err(bad());
            };
            Ok(Labelled {
                game: g.parse().map_err(|_| bad())?,
                position: fen.parse().map_err(|e| format!("line {}: {e}", i + 1))?,
                score: score.parse().map_err(|_| bad())?,
            })
        })
        .collect()
}

/// Whether a game's positions are held out (one game in ten, by a hash of its number).
pub fn held_out(game: u64) -> bool {
    (game.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) % 10 == 0
}

/// Training samples from labelled positions, with the linear score of `weights`: the
/// training set and the held-out set.
pub fn samples(data: &[Labelled], weights: &Weights) -> (Vec<TrainSample>, Vec<TrainSample>) {
    let (mut train, mut test) = (Vec::new(), Vec::new());
    for l in data {
        let sample = TrainSample {
            input: encode(&l.position, weights),
            target: 1.0 / (1.0 + (-(l.score as f32) / LOGISTIC_SCALE).exp()),
        };
        if held_out(l.game) {
            test.push(sample);
        } else {
            train.push(sample);
        }
    }
    (train, test)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_is_reproducible_on_any_number_of_threads_and_round_trips() {
        let cfg = DistillConfig {
            games: 4,
            play_depth: 1,
            label_depth: 2,
            max_turns: 60,
            threads: 1,
            seed: 5,
            weak_every: 0,
            label_weights: Weights::default(),
        };
        let one = generate(&cfg, &|_| {});
        let two = generate(
            &DistillConfig {
                threads: 2,
                ..cfg.clone()
            },
            &|_| {},
        );
        assert_eq!(one, two);
        assert!(one.len() > 40, "{}", one.len());
        assert!(one.iter().all(|l| !l.position.has_capture()));
        assert_eq!(parse(&to_text(&one)), Ok(one.clone()));
        assert!(parse("1\tnot a fen\t3").unwrap_err().starts_with("line 1"));
        assert!(parse("1\t9/9/9/9/9/9/9/9/9 w 0 12,12").is_err());
        let (train, test) = samples(&one, &Weights::hand_set());
        assert_eq!(train.len() + test.len(), one.len());

        // Weak sides: every second game, White then Black; the strong games are unchanged.
        let weak_cfg = DistillConfig {
            weak_every: 2,
            ..cfg.clone()
        };
        let sides: Vec<_> = (0..4).map(|g| weak_side(&weak_cfg, g)).collect();
        assert_eq!(
            sides,
            [None, Some(Player::White), None, Some(Player::Black)]
        );
        let weak = generate(&weak_cfg, &|_| {});
        let games = |d: &[Labelled], g: u64| -> Vec<Position> {
            d.iter()
                .filter(|l| l.game == g)
                .map(|l| l.position)
                .collect()
        };
        assert_eq!(games(&weak, 0), games(&one, 0));
        assert_eq!(games(&weak, 2), games(&one, 2));
        assert_ne!(games(&weak, 1), games(&one, 1));
        assert_eq!(
            weak,
            generate(
                &DistillConfig {
                    threads: 2,
                    ..weak_cfg
                },
                &|_| {}
            )
        );
    }

    #[test]
    fn recorded_games_are_labelled_like_self_play() {
        let records = emergo_rules::record::parse_pgn(
            "[Event \"a\"]\n\n1. a1 i9 2. c3 g7 3. e5 c7 *\n\n[Event \"b\"]\n\n1. c5 h2 2. i1 d6 3. c5xe7 *",
        )
        .unwrap();
        let labelled = label_records(&records, 2, &Weights::default(), 2, 100, &|_| {}).unwrap();
        let games: Vec<u64> = labelled.iter().map(|l| l.game).collect();
        assert!(games.contains(&100) && games.contains(&101), "{games:?}");
        assert!(games.windows(2).all(|w| w[0] <= w[1]));
        assert!(labelled.iter().all(|l| !l.position.has_capture()));
        // Each game's positions are scored in order from empty tables.
        let mut ab = AlphaBeta::new(20, Weights::default());
        for (i, l) in labelled.iter().enumerate() {
            if i == 0 || labelled[i - 1].game != l.game {
                ab.forget();
            }
            assert_eq!(l.score, ab.score(&l.position, 2));
        }
        assert_eq!(
            label_records(&records, 2, &Weights::default(), 1, 100, &|_| {}).unwrap(),
            labelled
        );
        // A record whose moves do not replay is refused by number.
        let bad = emergo_rules::record::parse_pgn("1. a1 a1 *").unwrap();
        let err = label_records(&bad, 2, &Weights::default(), 1, 0, &|_| {}).unwrap_err();
        assert!(err.starts_with("game 1"), "{err}");
    }

    #[test]
    fn relabelling_reproduces_generation_and_bootstraps_with_a_network() {
        let cfg = DistillConfig {
            games: 3,
            play_depth: 1,
            label_depth: 2,
            max_turns: 50,
            threads: 2,
            seed: 8,
            weak_every: 0,
            ..DistillConfig::default()
        };
        let data = generate(&cfg, &|_| {});
        // The same depth and weights give the same labels, on any number of threads.
        assert_eq!(relabel(&data, 2, &Weights::default(), 1, &|_| {}), data);
        // With a network, each game's positions are scored in order from empty tables by a
        // search that evaluates with it; positions and game numbers stay.
        let net = crate::value_net::shipped().expect("the shipped network parses");
        let with_net = Weights {
            net: Some(net),
            ..Weights::default()
        };
        let boot = relabel(&data, 3, &with_net, 1, &|_| {});
        assert_eq!(boot.len(), data.len());
        let mut ab = AlphaBeta::new(20, with_net);
        for (i, (b, d)) in boot.iter().zip(&data).enumerate() {
            assert_eq!((b.game, b.position), (d.game, d.position));
            if i == 0 || data[i - 1].game != d.game {
                ab.forget();
            }
            assert_eq!(b.score, ab.score(&d.position, 3));
        }
        assert_ne!(boot, data);
        // Generation with a labelling network labels like relabelling with it.
        let generated = generate(
            &DistillConfig {
                label_depth: 3,
                label_weights: with_net,
                ..cfg
            },
            &|_| {},
        );
        assert_eq!(generated, boot);
    }
}
