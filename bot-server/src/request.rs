//! Client messages turned into checked domain values at the boundary.

use std::time::{Duration, Instant};

use emergo_engine::level::Level;
use emergo_proto::v1 as pb;
use emergo_rules::{Game, GameError, Move};

use crate::admission::Priority;
use crate::config::ServerConfig;
use crate::error::ServiceError;
use crate::stop::SearchId;
use crate::timeman;

/// Most moves a position may carry after its FEN.
pub const MAX_MOVES: usize = 2_000;
/// Longest FEN accepted (the longest valid one is far shorter).
pub const MAX_FEN_LEN: usize = 256;
/// Longest game id.
pub const MAX_GAME_ID_LEN: usize = 128;
/// Most root moves with a principal variation.
pub const MAX_MULTI_PV: u32 = 64;
/// Longest principal variation.
pub const MAX_PV_LEN: u32 = 128;
/// Default principal-variation length.
pub const DEFAULT_PV_LEN: usize = 16;
/// Default and bounds of the report interval.
pub const DEFAULT_REPORT_MS: u32 = 500;
/// Shortest report interval.
pub const MIN_REPORT_MS: u32 = 50;
/// Longest report interval.
pub const MAX_REPORT_MS: u32 = 60_000;

/// A position as the client gave it (FEN + moves), checked and played out.
#[derive(Clone, Debug)]
pub struct ClientPosition {
    /// The FEN as given.
    pub fen: String,
    /// The moves, parsed and legal.
    pub moves: Vec<Move>,
    /// The game after the moves (repetition history included).
    pub game: Game,
}

/// Parses a FEN and a move list, naming the offending field on error.
pub fn parse_position(
    fen: &str,
    moves: &[String],
    prefix: &str,
) -> Result<ClientPosition, ServiceError> {
    if fen.is_empty() {
        return Err(ServiceError::invalid(
            format!("{prefix}fen"),
            "required (e.g. \"9/9/9/9/9/9/9/9/9 w 0 12,12\")",
        ));
    }
    if fen.len() > MAX_FEN_LEN {
        return Err(ServiceError::invalid(
            format!("{prefix}fen"),
            format!("{} bytes is too long for a FEN", fen.len()),
        ));
    }
    if moves.len() > MAX_MOVES {
        return Err(ServiceError::out_of_range(
            format!("{prefix}moves"),
            format!("{} moves, at most {MAX_MOVES} are accepted", moves.len()),
        ));
    }
    let game = Game::from_fen_and_moves(fen, moves).map_err(|e| match e {
        GameError::Fen(e) => ServiceError::invalid(format!("{prefix}fen"), e),
        GameError::Notation { index, error, .. } => {
            ServiceError::invalid(format!("{prefix}moves[{index}]"), error)
        }
        GameError::Illegal { index, error } => {
            ServiceError::invalid(format!("{prefix}moves[{index}]"), error)
        }
    })?;
    Ok(ClientPosition {
        fen: fen.to_owned(),
        moves: game.moves().to_vec(),
        game,
    })
}

/// A validated search request (Analyze or BestMove).
#[derive(Clone, Debug)]
pub struct SearchJob {
    /// The position.
    pub position: ClientPosition,
    /// Time budget, already clipped to the server cap.
    pub max_time: Option<Duration>,
    /// Playout budget, already clipped to the server cap.
    pub max_playouts: Option<u64>,
    /// Whether the server's caps (`--max-time-ms`, `--max-playouts`) cut the client's time or
    /// playout budget: the final update then says `BUDGET_REASON_CAPPED` with the budget granted.
    pub capped: bool,
    /// Threads to use.
    pub threads: usize,
    /// Root moves with a PV.
    pub multi_pv: usize,
    /// PV length.
    pub pv_len: usize,
    /// Seed (0 = pick one).
    pub seed: u64,
    /// Game id for tree reuse.
    pub game_id: Option<String>,
    /// Restriction of root moves (empty = all).
    pub root_moves: Vec<Move>,
    /// Analysis mode: no early stop once the best move is settled.
    pub exhaustive: bool,
    /// Admission priority while waiting for threads.
    pub priority: Priority,
    /// The client's own search id; `None`: the server picks one when the search starts.
    pub search_id: Option<SearchId>,
    /// Ponder after answering (BestMove; checked to come with a game id and no root moves).
    pub ponder: bool,
    /// The playing level (BestMove), `None` for the full engine: its playout cap is already in
    /// `max_playouts`; the service draws the answer with [`Level::plan`].
    pub level: Option<Level>,
    /// Interval between streamed updates.
    pub report_interval: Duration,
    /// When the request arrived: a clock's budget counts from here (tree reuse and waiting
    /// for threads are the mover's time too).
    pub arrived: Instant,
    /// With a game clock: the time manager's budget for this move, from `arrived`, capped by
    /// `max_time`.
    pub time_budget: Option<timeman::Budget>,
}

/// The shape of a search as options ask for it, checked against the server's caps: the checks
/// that Analyze, BestMove and AnalyzeGame share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SearchShape {
    /// Threads (at least 1, at most the per-request cap).
    pub threads: usize,
    /// Root moves with a principal variation (at least 1).
    pub multi_pv: usize,
    /// Principal-variation length.
    pub pv_len: usize,
}

impl SearchShape {
    /// Checks `options.threads`, `multi_pv` and `pv_length`, naming the field that is wrong.
    pub(crate) fn check(
        o: &pb::SearchOptions,
        config: &ServerConfig,
    ) -> Result<SearchShape, ServiceError> {
        let cap = config.threads_per_request();
        let threads = o.threads.max(1) as usize;
        if threads > cap {
            return Err(ServiceError::invalid(
                "options.threads",
                format!("{threads} requested, this server allows at most {cap} per request"),
            ));
        }
        if o.multi_pv > MAX_MULTI_PV {
            return Err(ServiceError::invalid(
                "options.multi_pv",
                format!("{} is more than {MAX_MULTI_PV}", o.multi_pv),
            ));
        }
        if o.pv_length > MAX_PV_LEN {
            return Err(ServiceError::invalid(
                "options.pv_length",
                format!("{} is more than {MAX_PV_LEN}", o.pv_length),
            ));
        }
        Ok(SearchShape {
            threads,
            multi_pv: o.multi_pv.max(1) as usize,
            pv_len: if o.pv_length == 0 {
                DEFAULT_PV_LEN
            } else {
                o.pv_length as usize
            },
        })
    }
}

impl SearchJob {
    /// Checks an Analyze/BestMove request against the server's caps.
    pub fn from_parts(
        position: Option<&pb::Position>,
        limits: Option<&pb::Limits>,
        options: Option<&pb::SearchOptions>,
        report_interval_ms: u32,
        config: &ServerConfig,
    ) -> Result<SearchJob, ServiceError> {
        let arrived = Instant::now();
        let position = position.ok_or_else(|| ServiceError::invalid("position", "required"))?;
        let position = parse_position(&position.fen, &position.moves, "position.")?;

        let level = level(options.map_or(0, |o| o.level))?;
        // A level below the top has its own playout budget: limits are optional there.
        let level_playouts = level.and_then(|l| l.plan().max_playouts);
        let no_limits = pb::Limits::default();
        let limits = match (limits, level_playouts) {
            (Some(limits), _) => limits,
            (None, Some(_)) => &no_limits,
            (None, None) => {
                return Err(ServiceError::invalid(
                    "limits",
                    "required: set max_time_ms, max_playouts and/or clock",
                ));
            }
        };
        if limits.max_time_ms.is_none()
            && limits.max_playouts.is_none()
            && limits.clock.is_none()
            && level_playouts.is_none()
        {
            return Err(ServiceError::invalid(
                "limits",
                "set max_time_ms, max_playouts and/or clock",
            ));
        }
        let clock = limits.clock.as_ref().map(check_clock).transpose()?;
        let max_time = match limits.max_time_ms {
            Some(0) => {
                return Err(ServiceError::invalid(
                    "limits.max_time_ms",
                    "must be at least 1",
                ));
            }
            Some(ms) => Some(Duration::from_millis(u64::from(ms.min(config.max_time_ms)))),
            None => None,
        };
        let capped = limits.max_time_ms.is_some_and(|ms| ms > config.max_time_ms)
            || limits.max_playouts.is_some_and(|n| n > config.max_playouts);
        let max_playouts = match limits.max_playouts {
            Some(0) => {
                return Err(ServiceError::invalid(
                    "limits.max_playouts",
                    "must be at least 1",
                ));
            }
            Some(n) => Some(n.min(config.max_playouts)),
            None => None,
        };
        let max_playouts = match (max_playouts, level_playouts) {
            (Some(n), Some(cap)) => Some(n.min(cap)),
            (n, cap) => n.or(cap.map(|cap| cap.min(config.max_playouts))),
        };
        // Without a time limit the playout cap still bounds the search, and so does the cap on
        // time: a playout-only request never runs longer than max_time_ms.
        let max_time = max_time.or(Some(Duration::from_millis(u64::from(config.max_time_ms))));
        // A clock's budget is capped by max_time (the client's or the server's cap).
        let time_budget = clock.map(|c| {
            timeman::plan(
                c,
                Duration::from_millis(u64::from(config.clock_margin_ms)),
                max_time,
            )
        });

        let default_options = pb::SearchOptions::default();
        let o = options.unwrap_or(&default_options);
        let SearchShape {
            threads,
            multi_pv,
            pv_len,
        } = SearchShape::check(o, config)?;
        if o.game_id.len() > MAX_GAME_ID_LEN {
            return Err(ServiceError::invalid(
                "options.game_id",
                format!("{} bytes, at most {MAX_GAME_ID_LEN}", o.game_id.len()),
            ));
        }
        let priority = priority(o.priority)?;
        let search_id = (!o.search_id.is_empty())
            .then(|| SearchId::parse(&o.search_id, "options.search_id"))
            .transpose()?;
        if o.ponder && o.game_id.is_empty() {
            return Err(ServiceError::invalid(
                "options.ponder",
                "needs options.game_id: a ponder searches on the game's kept tree",
            ));
        }
        if o.ponder && !o.root_moves.is_empty() {
            return Err(ServiceError::invalid(
                "options.ponder",
                "cannot be combined with options.root_moves",
            ));
        }
        let legal = position.game.legal_moves();
        let mut root_moves = Vec::new();
        for (i, text) in o.root_moves.iter().enumerate() {
            let field = format!("options.root_moves[{i}]");
            let mv: Move = text.parse().map_err(|e| ServiceError::invalid(&field, e))?;
            if !legal.contains(mv) {
                let why = position
                    .game
                    .position()
                    .play(mv)
                    .err()
                    .map_or_else(|| "not legal here".to_owned(), |e| e.to_string());
                return Err(ServiceError::invalid(&field, why));
            }
            if !root_moves.contains(&mv) {
                root_moves.push(mv);
            }
        }
        let report_ms = match report_interval_ms {
            0 => DEFAULT_REPORT_MS,
            ms if (MIN_REPORT_MS..=MAX_REPORT_MS).contains(&ms) => ms,
            ms => {
                return Err(ServiceError::invalid(
                    "report_interval_ms",
                    format!("{ms} is outside {MIN_REPORT_MS}..{MAX_REPORT_MS}"),
                ));
            }
        };
        Ok(SearchJob {
            position,
            max_time,
            max_playouts,
            capped,
            threads,
            multi_pv,
            pv_len,
            seed: o.seed,
            game_id: (!o.game_id.is_empty()).then(|| o.game_id.clone()),
            root_moves,
            exhaustive: o.exhaustive,
            priority,
            search_id,
            ponder: o.ponder,
            level,
            report_interval: Duration::from_millis(u64::from(report_ms)),
            arrived,
            time_budget,
        })
    }
}

/// Checks `SearchOptions.level`: 0 is none, 1..=8 a level.
fn level(n: u32) -> Result<Option<Level>, ServiceError> {
    match n {
        0 => Ok(None),
        n => Level::new(n).map(Some).ok_or_else(|| {
            ServiceError::invalid(
                "options.level",
                format!("{n} is not a level: 1 (weakest) to 8 (the full engine), or 0 for none"),
            )
        }),
    }
}

/// Checks a game clock. Zero time left, or zero moves to go, is a client error (the mover has
/// already lost, or the count is off by one); any other value is usable as it is, since the
/// time manager never plans past the time left and the budget is capped by max_time.
fn check_clock(c: &pb::Clock) -> Result<timeman::Clock, ServiceError> {
    if c.remaining_ms == 0 {
        return Err(ServiceError::invalid(
            "limits.clock.remaining_ms",
            "must be at least 1",
        ));
    }
    if c.moves_to_go == Some(0) {
        return Err(ServiceError::invalid(
            "limits.clock.moves_to_go",
            "must be at least 1 when set (leave it unset for no time control ahead)",
        ));
    }
    Ok(timeman::Clock {
        remaining: Duration::from_millis(u64::from(c.remaining_ms)),
        increment: Duration::from_millis(u64::from(c.increment_ms)),
        moves_to_go: c.moves_to_go,
    })
}

/// `SearchOptions.priority` (an open proto3 enum: any number can arrive).
pub(crate) fn priority(value: i32) -> Result<Priority, ServiceError> {
    match pb::Priority::try_from(value) {
        Ok(pb::Priority::Interactive) => Ok(Priority::Interactive),
        Ok(pb::Priority::Unspecified | pb::Priority::Normal) => Ok(Priority::Normal),
        Ok(pb::Priority::Batch) => Ok(Priority::Batch),
        Err(_) => Err(ServiceError::invalid(
            "options.priority",
            format!("{value} is not a priority (1 interactive, 2 normal, 3 batch)"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(limits: pb::Limits, options: pb::SearchOptions) -> Result<SearchJob, ServiceError> {
        let pos = pb::Position {
            fen: "9/9/9/9/9/9/9/9/9 w 0 12,12".into(),
            moves: vec!["a1".into()],
        };
        SearchJob::from_parts(
            Some(&pos),
            Some(&limits),
            Some(&options),
            0,
            &ServerConfig {
                threads: 2,
                ..ServerConfig::default()
            },
        )
    }

    #[test]
    fn limits_are_checked_and_clipped() {
        let none = pb::Limits::default();
        assert!(
            job(none, Default::default())
                .unwrap_err()
                .to_string()
                .starts_with("limits:")
        );
        let zero = pb::Limits {
            max_time_ms: Some(0),
            max_playouts: None,
            clock: None,
        };
        assert_eq!(
            job(zero, Default::default()).unwrap_err().code(),
            tonic::Code::InvalidArgument
        );
        let huge = pb::Limits {
            max_time_ms: None,
            max_playouts: Some(u64::MAX),
            clock: None,
        };
        let j = job(huge, Default::default()).unwrap();
        assert_eq!(j.max_playouts, Some(ServerConfig::default().max_playouts));
        assert_eq!(j.max_time, Some(Duration::from_secs(60)));
    }

    #[test]
    fn clocks_are_checked_and_planned() {
        let clock = |remaining_ms, moves_to_go| pb::Limits {
            clock: Some(pb::Clock {
                remaining_ms,
                increment_ms: 100,
                moves_to_go,
                ..Default::default()
            }),
            ..Default::default()
        };
        let e = job(clock(0, None), Default::default()).unwrap_err();
        assert_eq!(e.code(), tonic::Code::InvalidArgument);
        assert!(
            e.to_string().starts_with("limits.clock.remaining_ms:"),
            "{e}"
        );
        let e = job(clock(1_000, Some(0)), Default::default()).unwrap_err();
        assert!(
            e.to_string().starts_with("limits.clock.moves_to_go:"),
            "{e}"
        );
        // A clock alone is a budget; the server's cap bounds it.
        let j = job(clock(u32::MAX, None), Default::default()).unwrap();
        let b = j.time_budget.unwrap();
        assert_eq!(b.hard, Duration::from_secs(60));
        assert_eq!(b.reason, timeman::BudgetReason::Capped);
        let j = job(clock(10_000, None), Default::default()).unwrap();
        let b = j.time_budget.unwrap();
        assert!(b.target <= b.hard && b.hard <= Duration::from_millis(10_000 - 50));
        assert_eq!(b.reason, timeman::BudgetReason::Share);
        // max_time_ms caps it.
        let mut l = clock(10_000, None);
        l.max_time_ms = Some(20);
        let b = job(l, Default::default()).unwrap().time_budget.unwrap();
        assert_eq!(
            (b.target, b.reason),
            (Duration::from_millis(20), timeman::BudgetReason::Capped)
        );
    }

    #[test]
    fn options_are_checked() {
        let l = pb::Limits {
            max_time_ms: Some(100),
            max_playouts: None,
            clock: None,
        };
        let e = job(
            l,
            pb::SearchOptions {
                threads: 64,
                ..Default::default()
            },
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "options.threads: 64 requested, this server allows at most 2 per request"
        );
        let e = job(
            l,
            pb::SearchOptions {
                root_moves: vec!["a1".into()],
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("options.root_moves[0]: a1: a1 is occupied"),
            "{e}"
        );
        let j = job(
            l,
            pb::SearchOptions {
                root_moves: vec!["c3".into(), "c3".into()],
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(j.root_moves.len(), 1);
    }

    #[test]
    fn priorities_and_search_ids_are_checked() {
        let l = pb::Limits {
            max_time_ms: Some(100),
            ..Default::default()
        };
        let with = |priority, search_id: &str| {
            job(
                l,
                pb::SearchOptions {
                    priority,
                    search_id: search_id.into(),
                    ..Default::default()
                },
            )
        };
        let j = with(0, "").unwrap();
        assert_eq!((j.priority, j.search_id), (Priority::Normal, None));
        assert_eq!(with(1, "").unwrap().priority, Priority::Interactive);
        assert_eq!(with(3, "").unwrap().priority, Priority::Batch);
        let e = with(9, "").unwrap_err();
        assert_eq!(
            e.to_string(),
            "options.priority: 9 is not a priority (1 interactive, 2 normal, 3 batch)"
        );
        let j = with(0, "my-move_1").unwrap();
        assert_eq!(j.search_id.unwrap().as_str(), "my-move_1");
        let e = with(0, "a b").unwrap_err();
        assert!(e.to_string().starts_with("options.search_id: ' '"), "{e}");
    }

    /// A ponder needs a game id (its tree is the game's kept tree) and cannot come with a
    /// root-move restriction (such trees are not kept).
    #[test]
    fn ponder_needs_a_game_id_and_no_root_moves() {
        let l = pb::Limits {
            max_time_ms: Some(100),
            ..Default::default()
        };
        let with = |game_id: &str, root_moves: Vec<String>| {
            job(
                l,
                pb::SearchOptions {
                    ponder: true,
                    game_id: game_id.into(),
                    root_moves,
                    ..Default::default()
                },
            )
        };
        assert!(with("g1", vec![]).unwrap().ponder);
        let e = with("", vec![]).unwrap_err();
        assert_eq!(e.code(), tonic::Code::InvalidArgument);
        assert!(
            e.to_string()
                .starts_with("options.ponder: needs options.game_id"),
            "{e}"
        );
        let e = with("g1", vec!["c3".into()]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "options.ponder: cannot be combined with options.root_moves"
        );
    }

    #[test]
    fn positions_name_the_bad_move() {
        let e = parse_position(
            "9/9/9/9/9/9/9/9/9 w 0 12,12",
            &["a1".into(), "a1".into()],
            "position.",
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "position.moves[1]: a1: a1 is occupied");
        let e = parse_position("", &[], "position.").unwrap_err();
        assert!(e.to_string().starts_with("position.fen: required"));
    }
}
