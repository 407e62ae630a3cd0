//! An AnalyzeGame request checked into a plan: the game, the turns to analyse, the positions to
//! search (each once), the budget of each, and how each turn's values are read from them.
//!
//! Turn `t` (1 = the game's first move) is played from position `t − 1` and leads to position
//! `t`. Its best move comes from the search of position `t − 1`, unless that position has one
//! legal move (a forced turn, not searched); the value of the move played comes from position
//! `t`: the game's result if the game is over there, else the search of the first position from
//! `t` on that is not forced, seen back through the forced moves in between. At the game's end
//! those forced moves are played on past the record (at most [`MAX_FORCED_TAIL`]) so that the
//! last move has a value too. Position `t` is also the one before turn `t + 1`, so with every
//! turn analysed each position is searched once.

use std::time::{Duration, Instant};

use emergo_engine::EmergoState;
use emergo_proto::v1 as pb;
use emergo_rules::record::{RecordError, parse_pgn};
use emergo_rules::{EXCERPT_CHARS, Game, GameError, Move, Outcome, Position};

use crate::admission::Priority;
use crate::config::ServerConfig;
use crate::error::ServiceError;
use crate::request::{self, MAX_MOVES, parse_position};
use crate::runner::deadline_margin;
use crate::stop::SearchId;

/// Longest `record` accepted, bytes.
pub const MAX_RECORD_BYTES: usize = 256 * 1024;
/// Most forced moves played past the record's last move to value it.
pub const MAX_FORCED_TAIL: usize = 64;
/// The part of `--max-review-ms` split over a review's searches, in tenths, after the margin
/// any deadline keeps back ([`deadline_margin`]: the review ends at the cap as at a deadline);
/// the rest is for what is not searching (setting trees up, waiting for threads between
/// positions, sending the turns), so that a review on an idle server finishes within the cap
/// instead of being cut at it.
pub const REVIEW_SEARCH_TENTHS: u64 = 9;

/// Where the value of the position after a turn comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum After {
    /// The search of position `index`, `plies` forced moves later.
    Search {
        /// The searched position (an index into [`ReviewJob::positions`]).
        index: usize,
        /// Forced moves between the turn's position and it.
        plies: usize,
    },
    /// The game ended, `plies` forced moves later (0: with the move itself).
    Over {
        /// The result.
        outcome: Outcome,
        /// The player to move in the final position.
        to_move: emergo_rules::Player,
        /// Forced moves between the turn's position and the end.
        plies: usize,
    },
}

/// One turn to analyse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TurnPlan {
    /// The turn, 1 = the game's first move; played from position `turn − 1`.
    pub turn: u32,
    /// The only legal move was played: position `turn − 1` is not searched.
    pub forced: bool,
    /// The value of position `turn`.
    pub after: After,
}

impl TurnPlan {
    /// The index of the position the turn is played from.
    pub fn before(&self) -> usize {
        self.turn as usize - 1
    }
}

/// A checked AnalyzeGame request.
#[derive(Debug)]
pub struct ReviewJob {
    /// The game as recorded (its status goes into the summary).
    pub game: Game,
    /// How a game sent as a record ended by its `Result` and `Termination` tags, when that
    /// is not a position the rules end (a resignation, a loss on time): the summary's status
    /// where the moves alone leave the game open.
    pub recorded_end: Option<pb::GameStatus>,
    /// The positions of the game from its start, then those of the forced moves played past
    /// its end; `positions[i]` is the position before turn `i + 1`.
    pub positions: Vec<Position>,
    /// The moves between them: the game's, then the forced ones.
    pub line: Vec<Move>,
    /// The turns to analyse, in order.
    pub turns: Vec<TurnPlan>,
    /// The positions to search, ascending, each with its search state.
    pub searches: Vec<(usize, EmergoState)>,
    /// Time budget of each search (the server's cap when the client set none), within the
    /// review's share of [`ReviewJob::max_review`].
    pub max_time: Option<Duration>,
    /// The server's cap on the whole review from its arrival (`--max-review-ms`): the review
    /// ends there as at a client's deadline.
    pub max_review: Duration,
    /// Playout budget of each search.
    pub max_playouts: Option<u64>,
    /// Positions searched at once (one thread each).
    pub threads: usize,
    /// Root moves with a principal variation.
    pub multi_pv: usize,
    /// Principal-variation length.
    pub pv_len: usize,
    /// The client's seed (0: the server picks one per search).
    pub seed: u64,
    /// Admission priority of each search.
    pub priority: Priority,
    /// The client's id for the review (StopSearch); `None`: the server picks one.
    pub search_id: Option<SearchId>,
    /// When the request arrived.
    pub arrived: Instant,
}

impl ReviewJob {
    /// Checks a request against the server's caps and plans it; `state` gives the search state
    /// of a game's current position (the engine's knowledge attached).
    pub fn from_request(
        r: &pb::AnalyzeGameRequest,
        config: &ServerConfig,
        state: impl Fn(&Game) -> EmergoState,
    ) -> Result<ReviewJob, ServiceError> {
        let arrived = Instant::now();
        let (game, recorded_end) = game_of(r)?;
        let n = game.moves().len();
        let turns = turns_of(&r.turns, n)?;
        let (mut max_time, max_playouts) = limits_of(r.per_turn.as_ref(), r.total_time_ms, config)?;
        let o = options_of(r.options.as_ref(), config)?;

        // The line: the game's moves, then the forced moves past its end.
        let mut line = game.moves().to_vec();
        let mut tail = game.clone();
        while tail.outcome().is_none() && line.len() < n + MAX_FORCED_TAIL {
            let legal = tail.legal_moves();
            let [only] = legal.as_slice() else { break };
            let only = *only;
            if tail.play(only).is_err() {
                break;
            }
            line.push(only);
        }
        let end = tail.outcome();
        let positions = tail.positions().to_vec();
        // Whether each position has a single legal move, listed once (the walk below passes a
        // run of forced positions once per turn before it).
        let single: Vec<bool> = positions
            .iter()
            .map(|p| p.legal_moves().len() == 1)
            .collect();
        let forced = |i: usize| single[i];

        let mut plans = Vec::with_capacity(turns.len());
        let mut wanted = Vec::new();
        for turn in turns {
            let t = turn as usize;
            let is_forced = forced(t - 1);
            if !is_forced {
                wanted.push(t - 1);
            }
            let mut j = t;
            while j < line.len() && forced(j) {
                j += 1;
            }
            let after = match end {
                Some(outcome) if j == line.len() => After::Over {
                    outcome,
                    to_move: positions[j].side_to_move(),
                    plies: j - t,
                },
                _ => {
                    wanted.push(j);
                    After::Search {
                        index: j,
                        plies: j - t,
                    }
                }
            };
            plans.push(TurnPlan {
                turn,
                forced: is_forced,
                after,
            });
        }
        wanted.sort_unstable();
        wanted.dedup();

        // Each search's state, its repetition history included: one pass along the line.
        let mut searches = Vec::with_capacity(wanted.len());
        let mut walk = Game::new(*game.start());
        for (i, &mv) in line
            .iter()
            .enumerate()
            .take(wanted.last().copied().unwrap_or(0))
        {
            if wanted.binary_search(&i).is_ok() {
                searches.push((i, state(&walk)));
            }
            walk.play(mv).map_err(|e| {
                ServiceError::Internal(format!("replaying a checked game failed: {e}"))
            })?;
        }
        if let Some(&last) = wanted.last() {
            searches.push((last, state(&walk)));
        }

        // A total budget is split evenly over the searches: the client's, within the server's
        // share of --max-review-ms, which holds when the client sets none, so that no review
        // can hold a thread for thousands of positions × --max-time-ms.
        let cap = Duration::from_millis(config.max_review_ms);
        let searchable = cap.saturating_sub(deadline_margin(cap)).as_millis();
        let share = u64::try_from(searchable).unwrap_or(u64::MAX) / 10 * REVIEW_SEARCH_TENTHS;
        let total = r.total_time_ms.map_or(share, |t| u64::from(t).min(share));
        if !searches.is_empty() {
            let each = Duration::from_millis((total / searches.len() as u64).max(1));
            max_time = Some(max_time.map_or(each, |t| t.min(each)));
        }
        let per_search = Duration::from_millis(u64::from(config.max_time_ms));
        let max_time = Some(max_time.map_or(per_search, |t| t.min(per_search)));

        Ok(ReviewJob {
            game,
            recorded_end,
            positions,
            line,
            turns: plans,
            searches,
            max_time,
            max_review: Duration::from_millis(config.max_review_ms),
            max_playouts,
            threads: o.threads,
            multi_pv: o.multi_pv,
            pv_len: o.pv_len,
            seed: o.seed,
            priority: o.priority,
            search_id: o.search_id,
            arrived,
        })
    }

    /// The seed of the search of position `index`: derived from the client's seed, so that
    /// every position gets its own and a review with a playout budget is reproducible; 0 when
    /// the client left the seed to the server.
    pub fn seed_of(&self, index: usize) -> u64 {
        if self.seed == 0 {
            return 0;
        }
        self.seed ^ (index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    /// The slot of position `index` in [`ReviewJob::searches`].
    pub fn slot_of(&self, index: usize) -> Option<usize> {
        self.searches.binary_search_by_key(&index, |(i, _)| *i).ok()
    }
}

/// A piece of the client's input as error messages quote it: Debug-quoted, cut short.
fn quoted(text: &str) -> String {
    match text.char_indices().nth(EXCERPT_CHARS) {
        None => format!("{text:?}"),
        Some((cut, _)) => format!("{:?}…", &text[..cut]),
    }
}

/// The game of a request (exactly one of `game` and `record`), every move checked; errors in
/// moves name the turn.
/// The game to review, and how its record says it ended (a result other than `*`).
fn game_of(r: &pb::AnalyzeGameRequest) -> Result<(Game, Option<pb::GameStatus>), ServiceError> {
    let (fen, moves, field, recorded_end) = match (&r.game, r.record.is_empty()) {
        (Some(_), false) => {
            return Err(ServiceError::invalid(
                "record",
                "give the game either as game or as record, not both",
            ));
        }
        (None, true) => {
            return Err(ServiceError::invalid(
                "game",
                "required: the game as game (fen and moves) or as record",
            ));
        }
        (Some(g), true) => (g.fen.clone(), g.moves.clone(), "game.moves", None),
        (None, false) => {
            if r.record.len() > MAX_RECORD_BYTES {
                return Err(ServiceError::invalid(
                    "record",
                    format!("{} bytes, at most {MAX_RECORD_BYTES}", r.record.len()),
                ));
            }
            let mut records = parse_pgn(&r.record).map_err(|e| match e {
                RecordError::BadMove { turn, token, error } => ServiceError::invalid(
                    format!("turn {turn}"),
                    format!("{}: {error}", quoted(&token)),
                ),
                other => ServiceError::invalid("record", other),
            })?;
            if records.len() != 1 {
                return Err(ServiceError::invalid(
                    "record",
                    format!("holds {} games; send one", records.len()),
                ));
            }
            let record = records.remove(0);
            let end = (record.result != "*").then(|| pb::GameStatus {
                result: record.result.clone(),
                reason: record.termination.clone(),
            });
            (record.fen, record.moves, "record", end)
        }
    };
    let start = parse_position(
        &fen,
        &[],
        if field == "record" {
            "record."
        } else {
            "game."
        },
    )?;
    if moves.len() > MAX_MOVES {
        return Err(ServiceError::out_of_range(
            field,
            format!("{} moves, at most {MAX_MOVES} are accepted", moves.len()),
        ));
    }
    if moves.is_empty() {
        return Err(ServiceError::invalid(field, "no moves: nothing to review"));
    }
    let mut game = start.game;
    for (i, text) in moves.iter().enumerate() {
        game.play_str(text).map_err(|e| {
            let why = match e {
                GameError::Notation { text, error, .. } => format!("{}: {error}", quoted(&text)),
                GameError::Illegal { error, .. } => error.to_string(),
                GameError::Fen(error) => error.to_string(),
            };
            ServiceError::invalid(format!("turn {}", i + 1), why)
        })?;
    }
    Ok((game, recorded_end))
}

/// The turns to analyse, ascending without repeats; all of them when none are named.
fn turns_of(turns: &[u32], n: usize) -> Result<Vec<u32>, ServiceError> {
    if turns.is_empty() {
        return Ok((1..=n as u32).collect());
    }
    let mut out = Vec::with_capacity(turns.len().min(n));
    for (i, &t) in turns.iter().enumerate() {
        if t == 0 || t as usize > n {
            return Err(ServiceError::invalid(
                format!("turns[{i}]"),
                format!("{t} is outside 1..={n} (the game has {n} moves)"),
            ));
        }
        out.push(t);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// The budget of each search before a total is split: (time, playouts), clipped to the caps.
fn limits_of(
    per_turn: Option<&pb::Limits>,
    total_time_ms: Option<u32>,
    config: &ServerConfig,
) -> Result<(Option<Duration>, Option<u64>), ServiceError> {
    if total_time_ms == Some(0) {
        return Err(ServiceError::invalid("total_time_ms", "must be at least 1"));
    }
    let l = per_turn.cloned().unwrap_or_default();
    if l.clock.is_some() {
        return Err(ServiceError::invalid(
            "per_turn.clock",
            "a review has no clock: set max_time_ms and/or max_playouts",
        ));
    }
    if l.max_time_ms.is_none() && l.max_playouts.is_none() && total_time_ms.is_none() {
        return Err(ServiceError::invalid(
            "per_turn",
            "set max_time_ms and/or max_playouts (or total_time_ms)",
        ));
    }
    let max_time = match l.max_time_ms {
        Some(0) => {
            return Err(ServiceError::invalid(
                "per_turn.max_time_ms",
                "must be at least 1",
            ));
        }
        Some(ms) => Some(Duration::from_millis(u64::from(ms.min(config.max_time_ms)))),
        None => None,
    };
    let max_playouts = match l.max_playouts {
        Some(0) => {
            return Err(ServiceError::invalid(
                "per_turn.max_playouts",
                "must be at least 1",
            ));
        }
        Some(n) => Some(n.min(config.max_playouts)),
        None => None,
    };
    Ok((max_time, max_playouts))
}

/// The options that apply to a review.
struct Options {
    threads: usize,
    multi_pv: usize,
    pv_len: usize,
    seed: u64,
    priority: Priority,
    search_id: Option<SearchId>,
}

fn options_of(
    options: Option<&pb::SearchOptions>,
    config: &ServerConfig,
) -> Result<Options, ServiceError> {
    let default_options = pb::SearchOptions::default();
    let o = options.unwrap_or(&default_options);
    let not_here = |field: &str, why: &str| {
        Err(ServiceError::invalid(
            format!("options.{field}"),
            format!("does not apply to AnalyzeGame ({why})"),
        ))
    };
    if !o.game_id.is_empty() {
        return not_here("game_id", "a review keeps no tree between requests");
    }
    if !o.root_moves.is_empty() {
        return not_here("root_moves", "every position is searched whole");
    }
    if o.exhaustive {
        return not_here("exhaustive", "each position's budget is set by per_turn");
    }
    if o.ponder {
        return not_here("ponder", "a review plays no moves");
    }
    if o.level != 0 {
        return not_here("level", "a review judges with the full engine");
    }
    let shape = request::SearchShape::check(o, config)?;
    // A review is bulk work: BATCH unless the client says otherwise.
    let priority = match o.priority {
        0 => Priority::Batch,
        p => request::priority(p)?,
    };
    let search_id = (!o.search_id.is_empty())
        .then(|| SearchId::parse(&o.search_id, "options.search_id"))
        .transpose()?;
    Ok(Options {
        threads: shape.threads,
        multi_pv: shape.multi_pv,
        pv_len: shape.pv_len,
        seed: o.seed,
        priority,
        search_id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const INITIAL: &str = emergo_rules::INITIAL_FEN;
    /// Black to move with one legal move, the capture g1xe3xc5 (the rules crate's example).
    const FORCED: &str = "9/9/2a@1a@4/9/4a@4/3D@5/9/5A@3/6b@2 b 30 0,0";

    fn config() -> ServerConfig {
        ServerConfig {
            threads: 2,
            ..ServerConfig::default()
        }
    }

    fn request(fen: &str, moves: &[&str]) -> pb::AnalyzeGameRequest {
        pb::AnalyzeGameRequest {
            game: Some(pb::Position {
                fen: fen.into(),
                moves: moves.iter().map(|m| m.to_string()).collect(),
            }),
            per_turn: Some(pb::Limits {
                max_playouts: Some(100),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn plan(r: &pb::AnalyzeGameRequest) -> Result<ReviewJob, ServiceError> {
        ReviewJob::from_request(r, &config(), EmergoState::from_game)
    }

    fn error(r: &pb::AnalyzeGameRequest) -> String {
        let e = plan(r).unwrap_err();
        assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e}");
        e.to_string()
    }

    /// A game that ended off the board (resigned) keeps its record's result: the rules see a
    /// position with play left in it.
    #[test]
    fn a_resigned_game_keeps_its_recorded_result() {
        let mut r = request(INITIAL, &[]);
        r.game = None;
        r.record = "[Result \"0-1\"]\n[Termination \"resignation\"]\n\n1. a1 i9 0-1".into();
        let job = plan(&r).unwrap();
        let status = job.recorded_end.unwrap();
        assert_eq!(
            (status.result.as_str(), status.reason.as_str()),
            ("0-1", "resignation")
        );
        // A game sent as moves has no recorded end; an unfinished record neither.
        assert!(
            plan(&request(INITIAL, &["a1", "i9"]))
                .unwrap()
                .recorded_end
                .is_none()
        );
        r.record = "1. a1 i9 *".into();
        assert!(plan(&r).unwrap().recorded_end.is_none());
    }

    #[test]
    fn every_turn_searches_each_position_once() {
        let job = plan(&request(INITIAL, &["a1", "i9", "c3"])).unwrap();
        assert_eq!(job.turns.len(), 3);
        let indices: Vec<usize> = job.searches.iter().map(|(i, _)| *i).collect();
        assert_eq!(indices, [0, 1, 2, 3]);
        assert_eq!(job.turns[2].after, After::Search { index: 3, plies: 0 });
        assert_eq!(job.priority, Priority::Batch);
        assert_eq!(job.max_playouts, Some(100));
        assert_eq!(job.searches[2].1.position(), &job.positions[2]);
        // Only turn 2: positions 1 and 2.
        let mut r = request(INITIAL, &["a1", "i9", "c3"]);
        r.turns = vec![2, 2];
        let job = plan(&r).unwrap();
        let indices: Vec<usize> = job.searches.iter().map(|(i, _)| *i).collect();
        assert_eq!((job.turns.len(), indices), (1, vec![1, 2]));
    }

    #[test]
    fn forced_turns_are_not_searched_and_values_come_through_them() {
        let job = plan(&request(FORCED, &["g1xe3xc5"])).unwrap();
        assert!(job.turns[0].forced);
        let after = job.turns[0].after;
        // White has no unit left after the capture? Whatever the position, it is valued from
        // a search or the game's end, never from position 0.
        assert!(
            job.searches.iter().all(|(i, _)| *i != 0),
            "{:?}",
            job.searches.iter().map(|(i, _)| i).collect::<Vec<_>>()
        );
        match after {
            After::Search { index, plies } => assert_eq!(index, 1 + plies),
            After::Over { plies, .. } => assert_eq!(job.line.len(), 1 + plies),
        }
    }

    #[test]
    fn bad_games_name_the_turn() {
        let e = error(&request(INITIAL, &["a1", "a1"]));
        assert_eq!(e, "turn 2: a1: a1 is occupied");
        let e = error(&request(INITIAL, &["a1", "zz"]));
        assert!(e.starts_with("turn 2: \"zz\": "), "{e}");
        let record = |text: &str| pb::AnalyzeGameRequest {
            record: text.into(),
            per_turn: Some(pb::Limits {
                max_playouts: Some(10),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert!(plan(&record("1. a1 i9 2. c3 *")).is_ok());
        assert_eq!(
            error(&record("1. a1 i9 2. i9 *")),
            "turn 3: i9: i9 is occupied"
        );
        assert!(error(&record("1. a1 i9 2. c3-x4 *")).starts_with("turn 3: \"c3-x4\": "));
        assert!(error(&record("[Oops]\n1. a1")).starts_with("record: line 1: "));
        assert!(
            error(&record("1. a1 *\n\n[Event \"2\"]\n1. a1 *"))
                .starts_with("record: holds 2 games")
        );
        assert!(error(&record("[Event \"x\"]\n*")).starts_with("record: no moves"));
        let mut both = request(INITIAL, &["a1"]);
        both.record = "1. a1 *".into();
        assert!(error(&both).starts_with("record: give the game either"));
        assert!(error(&pb::AnalyzeGameRequest::default()).starts_with("game: required"));
        let e = error(&request("nonsense", &["a1"]));
        assert!(e.starts_with("game.fen: "), "{e}");
    }

    #[test]
    fn bad_turns_and_budgets_name_the_field() {
        let mut r = request(INITIAL, &["a1", "i9"]);
        r.turns = vec![1, 3];
        assert_eq!(
            error(&r),
            "turns[1]: 3 is outside 1..=2 (the game has 2 moves)"
        );
        r.turns = vec![0];
        assert!(error(&r).starts_with("turns[0]: 0 is outside"));

        let mut r = request(INITIAL, &["a1", "i9"]);
        r.per_turn = None;
        assert!(error(&r).starts_with("per_turn: set max_time_ms"));
        r.per_turn = Some(pb::Limits {
            clock: Some(pb::Clock {
                remaining_ms: 1000,
                ..Default::default()
            }),
            ..Default::default()
        });
        assert!(error(&r).starts_with("per_turn.clock: "));
        r.per_turn = Some(pb::Limits {
            max_time_ms: Some(0),
            ..Default::default()
        });
        assert_eq!(error(&r), "per_turn.max_time_ms: must be at least 1");
        r.per_turn = None;
        r.total_time_ms = Some(0);
        assert_eq!(error(&r), "total_time_ms: must be at least 1");
        // A total alone is split evenly over the three positions to search.
        r.total_time_ms = Some(3_000);
        let job = plan(&r).unwrap();
        assert_eq!(job.max_time, Some(Duration::from_secs(1)));
        assert_eq!(job.max_playouts, None);
        // ... and caps a longer per-turn time; huge values are clipped to the server's caps.
        r.per_turn = Some(pb::Limits {
            max_time_ms: Some(u32::MAX),
            max_playouts: Some(u64::MAX),
            clock: None,
        });
        let job = plan(&r).unwrap();
        assert_eq!(job.max_time, Some(Duration::from_secs(1)));
        assert_eq!(job.max_playouts, Some(config().max_playouts));
        r.total_time_ms = None;
        assert_eq!(
            plan(&r).unwrap().max_time,
            Some(Duration::from_millis(u64::from(config().max_time_ms)))
        );
    }

    /// A review without a total of its own gets the server's: nine tenths of
    /// `--max-review-ms` split over its searches, so that 2,000 positions at the default
    /// `--max-time-ms` cannot hold a thread for 33 hours.
    #[test]
    fn the_server_caps_a_review_s_total_time() {
        let capped = ServerConfig {
            max_review_ms: 4_000,
            ..config()
        };
        let plan = |r: &pb::AnalyzeGameRequest| {
            ReviewJob::from_request(r, &capped, EmergoState::from_game).unwrap()
        };
        // Three positions to search (before turn 1, before turn 2, after turn 2).
        let mut r = request(INITIAL, &["a1", "i9"]);
        r.per_turn = Some(pb::Limits {
            max_time_ms: Some(60_000),
            ..Default::default()
        });
        let job = plan(&r);
        assert_eq!(job.searches.len(), 3);
        // (4 s less the 250 ms deadline margin) × 9/10 over three positions.
        assert_eq!(job.max_time, Some(Duration::from_millis(1_125)));
        assert_eq!(job.max_review, Duration::from_secs(4));
        // A playout budget alone gets the same time cap.
        r.per_turn = Some(pb::Limits {
            max_playouts: Some(1_000_000),
            ..Default::default()
        });
        assert_eq!(plan(&r).max_time, Some(Duration::from_millis(1_125)));
        // A client's total above the cap is held to it; below, it is the client's.
        r.total_time_ms = Some(u32::MAX);
        assert_eq!(plan(&r).max_time, Some(Duration::from_millis(1_125)));
        r.total_time_ms = Some(300);
        assert_eq!(plan(&r).max_time, Some(Duration::from_millis(100)));
        // A position never gets more than --max-time-ms, whatever the share.
        r.total_time_ms = None;
        let roomy = ServerConfig {
            max_review_ms: 10_000_000,
            max_time_ms: 2_000,
            ..config()
        };
        let job = ReviewJob::from_request(&r, &roomy, EmergoState::from_game).unwrap();
        assert_eq!(job.max_time, Some(Duration::from_secs(2)));
    }

    #[test]
    fn options_that_do_not_apply_are_refused_by_name() {
        let with = |o: pb::SearchOptions| {
            let mut r = request(INITIAL, &["a1"]);
            r.options = Some(o);
            r
        };
        for (o, field) in [
            (
                pb::SearchOptions {
                    game_id: "g".into(),
                    ..Default::default()
                },
                "options.game_id",
            ),
            (
                pb::SearchOptions {
                    root_moves: vec!["a1".into()],
                    ..Default::default()
                },
                "options.root_moves",
            ),
            (
                pb::SearchOptions {
                    exhaustive: true,
                    ..Default::default()
                },
                "options.exhaustive",
            ),
            (
                pb::SearchOptions {
                    ponder: true,
                    ..Default::default()
                },
                "options.ponder",
            ),
            (
                pb::SearchOptions {
                    threads: 3,
                    ..Default::default()
                },
                "options.threads",
            ),
            (
                pb::SearchOptions {
                    multi_pv: 65,
                    ..Default::default()
                },
                "options.multi_pv",
            ),
            (
                pb::SearchOptions {
                    pv_length: 129,
                    ..Default::default()
                },
                "options.pv_length",
            ),
            (
                pb::SearchOptions {
                    priority: 7,
                    ..Default::default()
                },
                "options.priority",
            ),
            (
                pb::SearchOptions {
                    search_id: "a b".into(),
                    ..Default::default()
                },
                "options.search_id",
            ),
        ] {
            let e = error(&with(o));
            assert!(e.starts_with(&format!("{field}: ")), "{e}");
        }
        let job = plan(&with(pb::SearchOptions {
            threads: 2,
            priority: pb::Priority::Interactive as i32,
            seed: 5,
            ..Default::default()
        }))
        .unwrap();
        assert_eq!((job.threads, job.priority), (2, Priority::Interactive));
        assert_ne!(job.seed_of(0), job.seed_of(1));
        assert_eq!(
            job.seed_of(3),
            plan(&with(pb::SearchOptions {
                seed: 5,
                ..Default::default()
            }))
            .unwrap()
            .seed_of(3)
        );
    }
}
