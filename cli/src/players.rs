//! Players that choose moves in-process: uniform random, greedy (most prisoners now), MCTS and
//! alpha-beta. Used by `emergo arena`-style matches and by the strength tests.

use std::sync::Arc;
use std::time::Duration;

use emergo_engine::level::{Candidate, Level, LevelPlan};
use emergo_engine::{AbLimits, AbResult, AlphaBeta, Knowledge, MctsConfig};
use emergo_mcts::{Proven, Search, SearchParams, Snapshot};
use emergo_rules::{Game, Move};
use rand_xoshiro::Xoshiro256PlusPlus;
use rand_xoshiro::rand_core::{Rng, SeedableRng};

use emergo_engine::EmergoState;

use crate::termination::Termination;

/// Chooses moves for one side of a game.
pub trait MovePicker {
    /// A short name for records and tables.
    fn name(&self) -> String;
    /// The move to play in `game`'s current position (which is not over).
    fn pick(&mut self, game: &Game) -> Option<Move>;
}

fn uniform(rng: &mut Xoshiro256PlusPlus, n: usize) -> usize {
    ((u128::from(rng.next_u64()) * n as u128) >> 64) as usize
}

/// Plays a uniformly random legal move.
pub struct RandomPlayer(Xoshiro256PlusPlus);

impl RandomPlayer {
    /// A random player with its own seed.
    pub fn new(seed: u64) -> RandomPlayer {
        RandomPlayer(Xoshiro256PlusPlus::seed_from_u64(seed))
    }
}

impl MovePicker for RandomPlayer {
    fn name(&self) -> String {
        "random".to_owned()
    }

    fn pick(&mut self, game: &Game) -> Option<Move> {
        let moves = game.legal_moves();
        moves
            .as_slice()
            .get(uniform(&mut self.0, moves.len()))
            .copied()
    }
}

/// Takes the most prisoners now (the longest capture); otherwise plays at random.
pub struct GreedyPlayer(Xoshiro256PlusPlus);

impl GreedyPlayer {
    /// A greedy player with its own seed (for breaking ties).
    pub fn new(seed: u64) -> GreedyPlayer {
        GreedyPlayer(Xoshiro256PlusPlus::seed_from_u64(seed))
    }
}

impl MovePicker for GreedyPlayer {
    fn name(&self) -> String {
        "greedy".to_owned()
    }

    fn pick(&mut self, game: &Game) -> Option<Move> {
        // All legal captures have the same (maximum) length, but not the same effect: a chain
        // that empties a stack frees the mover's men underneath. So score each move by the
        // material balance after it (men commanded by the mover minus the opponent's); quiet
        // moves all score the same. Ties are broken at random.
        let pos = game.position();
        let me = pos.side_to_move();
        let mut best: Vec<Move> = Vec::new();
        let mut best_score = i64::MIN;
        for &m in game.legal_moves().iter() {
            let mut next = *pos;
            next.play_unchecked(m);
            let score =
                i64::from(next.controlled_men(me)) - i64::from(next.controlled_men(me.other()));
            if score > best_score {
                best_score = score;
                best.clear();
            }
            if score == best_score {
                best.push(m);
            }
        }
        best.get(uniform(&mut self.0, best.len())).copied()
    }
}

/// Node cap of an in-process MCTS player's tree: 8,000,000 nodes of 48 bytes (384 MB, allocated
/// as the tree grows). The default engine expands ~1.5 million nodes per second and thread in
/// the middle game (every child of an expanded node is created with its prior), so the
/// library's default of 2,000,000 would fill up within a 1 s move.
pub const PLAYER_MAX_NODES: usize = 8_000_000;

/// Plays the best move of an MCTS search with a fixed budget.
pub struct MctsPlayer {
    params: SearchParams,
    knowledge: Option<Arc<Knowledge>>,
    label: String,
    last: Option<Snapshot<Move>>,
    /// Whether the tree is kept from move to move ([`MctsPlayer::with_reuse`]).
    reuse: bool,
    /// The last search and the game it searched, while `reuse` is on.
    kept: Option<Kept>,
    /// Visits the last search started from (0: a fresh tree).
    last_reused: u64,
    /// A playing level's choice among the root moves ([`MctsPlayer::with_level`]).
    level: Option<LevelPlan>,
}

/// A search kept for the next move, and the game whose last position is its root.
struct Kept {
    search: Search<EmergoState>,
    start: emergo_rules::Position,
    moves: Vec<Move>,
}

impl MctsPlayer {
    /// A player searching `playouts` playouts and/or `time` per move on `threads` threads, with
    /// the default configuration ([`MctsConfig::strong`]).
    pub fn new(
        playouts: Option<u64>,
        time: Option<Duration>,
        threads: usize,
        seed: u64,
    ) -> MctsPlayer {
        let label = match (playouts, time) {
            (Some(p), _) => format!("mcts:{p}p"),
            (None, Some(t)) => format!("mcts:{}ms", t.as_millis()),
            (None, None) => "mcts".to_owned(),
        };
        let mut player = MctsPlayer {
            params: SearchParams {
                max_playouts: playouts,
                max_time: time,
                threads: threads.max(1),
                seed,
                max_nodes: PLAYER_MAX_NODES,
                ..SearchParams::default()
            },
            knowledge: None,
            label,
            last: None,
            reuse: false,
            kept: None,
            last_reused: 0,
            level: None,
        };
        player.set_config(&MctsConfig::default());
        player
    }

    /// This player with another configuration (e.g. [`MctsConfig::uniform`], the first
    /// version's engine).
    pub fn with_config(mut self, config: &MctsConfig) -> MctsPlayer {
        self.set_config(config);
        self
    }

    fn set_config(&mut self, config: &MctsConfig) {
        config.apply(&mut self.params);
        self.knowledge = config.shared_knowledge();
    }

    /// This player keeping its tree between moves, as the server does for a game id: the
    /// next search starts from the subtree under the moves played since
    /// ([`Search::advance`]), so the visits already spent on the opponent's reply count. A
    /// game that does not continue the last one searched starts a fresh tree.
    pub fn with_reuse(mut self, reuse: bool) -> MctsPlayer {
        self.reuse = reuse;
        if !reuse {
            self.kept = None;
        }
        self
    }

    /// This player at a playing level (`None`: the full engine): the level's playout cap
    /// joins the budget and the move is drawn as the level draws it
    /// ([`LevelPlan::choose`]), as the server plays `SearchOptions.level`.
    pub fn with_level(mut self, level: Option<Level>) -> MctsPlayer {
        self.level = level.map(Level::plan);
        if let Some(cap) = self.level.and_then(|plan| plan.max_playouts) {
            self.params.max_playouts = Some(self.params.max_playouts.map_or(cap, |p| p.min(cap)));
            self.label = format!("{}:level{}", self.label, level.map_or(8, Level::number));
        }
        self
    }

    /// The statistics of the last search.
    pub fn last_search(&self) -> Option<&Snapshot<Move>> {
        self.last.as_ref()
    }

    /// The visits the last search started from, what it kept of the tree before (0 where the
    /// game did not continue the kept tree's); `None` for a player that does not keep its tree.
    pub fn last_reused(&self) -> Option<u64> {
        self.reuse.then_some(self.last_reused)
    }

    /// The kept search advanced to `game`'s position, if `game` continues the game it searched.
    fn continued(&mut self, game: &Game) -> Option<Search<EmergoState>> {
        let kept = self.kept.take()?;
        let since = game.moves().strip_prefix(kept.moves.as_slice())?;
        if kept.start != *game.start() {
            return None;
        }
        let mut search = kept.search;
        search.set_params(self.params.clone());
        self.last_reused = search.advance(since);
        Some(search)
    }

    /// Sets the time for the next moves: a game clock's budget (`emergo arena --tc`) changes
    /// from move to move.
    pub fn set_time(&mut self, time: Option<Duration>) {
        self.params.max_time = time;
    }
}

impl MovePicker for MctsPlayer {
    fn name(&self) -> String {
        self.label.clone()
    }

    fn pick(&mut self, game: &Game) -> Option<Move> {
        self.params.seed = self.params.seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        self.last_reused = 0;
        let mut search = match self.continued(game) {
            Some(search) => search,
            None => {
                let state = EmergoState::from_game(game).with_knowledge(self.knowledge.clone());
                Search::new(state, self.params.clone())
            }
        };
        let snapshot = search.run();
        let best = match self.level {
            Some(plan) => {
                let candidates: Vec<Candidate> = snapshot
                    .moves
                    .iter()
                    .map(|m| Candidate {
                        visits: m.visits,
                        proven_win: matches!(m.proven, Some(Proven::Win { .. })),
                        proven_loss: matches!(m.proven, Some(Proven::Loss { .. })),
                    })
                    .collect();
                plan.choose(&candidates, self.params.seed)
                    .and_then(|i| snapshot.moves.get(i))
                    .map(|m| m.mv)
                    .or(snapshot.best_move)
            }
            None => snapshot.best_move,
        };
        self.last = Some(snapshot);
        if self.reuse {
            self.kept = Some(Kept {
                search,
                start: *game.start(),
                moves: game.moves().to_vec(),
            });
        }
        best
    }
}

/// Plays the best move of the alpha-beta engine ([`emergo_engine::alphabeta`]) with a fixed
/// depth, time or node budget. Keeps its transposition table for the whole game.
pub struct AbPlayer {
    engine: Box<AlphaBeta>,
    limits: AbLimits,
    label: String,
    last: Option<AbResult>,
}

impl AbPlayer {
    /// A player searching with `limits` (one thread).
    pub fn new(limits: AbLimits) -> AbPlayer {
        let label = match (limits.max_time, limits.max_nodes) {
            (Some(t), _) => format!("ab:{}ms", t.as_millis()),
            (None, Some(n)) => format!("ab:{n}n"),
            (None, None) => format!("ab:d{}", limits.max_depth),
        };
        AbPlayer {
            engine: Box::default(),
            limits,
            label,
            last: None,
        }
    }

    /// Corrects the engine's evaluation with a learned value network (or not).
    pub fn set_net(&mut self, net: Option<&'static emergo_engine::value_net::ValueNet>) {
        self.engine.set_weights(emergo_engine::eval::Weights {
            net: net.map(|n| n as &dyn emergo_engine::eval::Correction),
            ..Default::default()
        });
    }

    /// The result of the last search.
    pub fn last_search(&self) -> Option<&AbResult> {
        self.last.as_ref()
    }

    /// Sets the time for the next moves (a game clock's budget; see [`MctsPlayer::set_time`]).
    pub fn set_time(&mut self, time: Option<Duration>) {
        self.limits.max_time = time;
    }
}

impl MovePicker for AbPlayer {
    fn name(&self) -> String {
        self.label.clone()
    }

    fn pick(&mut self, game: &Game) -> Option<Move> {
        let result = self.engine.search_game(game, self.limits);
        let best = result.best;
        self.last = Some(result);
        best
    }
}

/// A finished match game.
#[derive(Clone, Debug)]
pub struct PlayedGame {
    /// The game record.
    pub game: Game,
    /// How it ended.
    pub termination: Termination,
}

impl PlayedGame {
    /// Score for White: 1, ½ or 0.
    pub fn white_score(&self) -> f64 {
        self.termination.white_score()
    }
}

/// Plays one game from `start` to its end (or `max_turns` turns).
pub fn play_game(
    start: Game,
    white: &mut dyn MovePicker,
    black: &mut dyn MovePicker,
    max_turns: usize,
) -> PlayedGame {
    let mut game = start;
    loop {
        if let Some(o) = game.outcome() {
            return PlayedGame {
                game,
                termination: Termination::Rules(o),
            };
        }
        if game.moves().len() >= max_turns {
            return PlayedGame {
                game,
                termination: Termination::MoveCap,
            };
        }
        let side = game.position().side_to_move();
        let picker: &mut dyn MovePicker = match side {
            emergo_rules::Player::White => &mut *white,
            emergo_rules::Player::Black => &mut *black,
        };
        let termination = match picker.pick(&game) {
            Some(m) if game.legal_moves().contains(m) => {
                // Legal by the guard above.
                let _ = game.play(m);
                continue;
            }
            Some(_) => Termination::IllegalMove(side),
            // The game is not over, so there is a move to offer: the player failed.
            None => Termination::EngineFailure(side),
        };
        return PlayedGame { game, termination };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn baselines_finish_games() {
        let g = play_game(
            Game::new(emergo_rules::Position::initial()),
            &mut RandomPlayer::new(1),
            &mut GreedyPlayer::new(2),
            1000,
        );
        assert!(matches!(
            g.termination,
            Termination::Rules(_) | Termination::MoveCap
        ));
        assert!(g.game.moves().len() > 20);
    }

    fn played(moves: &[&str]) -> Game {
        Game::from_fen_and_moves(&emergo_rules::Position::initial().to_string(), moves).unwrap()
    }

    #[test]
    fn a_reusing_player_starts_from_the_subtree_of_the_moves_played_since() {
        let mut player = MctsPlayer::new(Some(3_000), None, 1, 7).with_reuse(true);
        let mut game = played(&[]);
        let first = player.pick(&game).unwrap();
        assert_eq!(
            player.last_reused(),
            Some(0),
            "nothing to reuse at the first move"
        );
        game.play(first).unwrap();
        // The reply the search expected most: its subtree has visits to keep.
        let reply = player.last_search().unwrap().moves[0]
            .pv
            .get(1)
            .copied()
            .unwrap();
        game.play(reply).unwrap();
        let second = player.pick(&game).unwrap();
        assert!(game.legal_moves().as_slice().contains(&second));
        let kept = player.last_reused().unwrap_or_default();
        assert!(kept > 0, "the expected reply's subtree was kept");
        assert_eq!(
            player.last_search().unwrap().playouts,
            3_000,
            "the budget buys new playouts on top of the kept ones"
        );

        // Another game (not a continuation of the kept one) starts afresh.
        let mut other = played(&[]);
        let elsewhere = other
            .legal_moves()
            .as_slice()
            .iter()
            .copied()
            .find(|&m| m != first)
            .unwrap();
        other.play(elsewhere).unwrap();
        player.pick(&other).unwrap();
        assert_eq!(player.last_reused(), Some(0));

        // Without reuse nothing is kept, and the same seed plays the same first move.
        let mut fresh = MctsPlayer::new(Some(3_000), None, 1, 7);
        assert_eq!(fresh.pick(&played(&[])), Some(first));
        fresh.pick(&game).unwrap();
        assert_eq!(fresh.last_reused(), None);
        assert!(player.last_reused().is_some());
    }

    #[test]
    fn reusing_players_are_reproducible() {
        let play = || {
            let mut a = MctsPlayer::new(Some(1_500), None, 1, 3).with_reuse(true);
            let mut b = MctsPlayer::new(Some(1_500), None, 1, 4).with_reuse(true);
            let mut game = played(&[]);
            let mut kept = Vec::new();
            for turn in 0..12 {
                let p: &mut MctsPlayer = if turn % 2 == 0 { &mut a } else { &mut b };
                let m = p.pick(&game).unwrap();
                kept.push(p.last_reused().unwrap_or_default());
                game.play(m).unwrap();
            }
            (game.moves().to_vec(), kept)
        };
        let (moves, kept) = play();
        assert_eq!(play(), (moves, kept.clone()));
        assert!(kept.iter().skip(2).any(|&v| v > 0), "{kept:?}");
    }
}
