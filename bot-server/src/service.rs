//! The service core, transport-neutral: each operation of `emergo.bot.v1` takes its request
//! message and the client's deadline as a value, checks the request, runs it on the engine or
//! the rules core, and answers with the response message or a typed [`ServiceError`]. Logging
//! (one span per request) and metrics happen here, so every door gets them: the gRPC adapter
//! ([`crate::grpc`]), the HTTP/JSON gateway ([`crate::http`]) and the `emergo` tools' `--local`
//! mode call these same methods.
//!
//! The request and response types are the contract's messages (prost structs, no transport in
//! them); streams are channels of `Result<message, ServiceError>` that end after their last
//! item. Nothing here knows gRPC metadata, HTTP headers or status codes.

use std::sync::Arc;
use std::time::{Duration, Instant};

use emergo_engine::level::{Candidate, Level};
use emergo_proto::v1 as pb;
use tokio::sync::mpsc;
use tracing::Instrument;

use crate::admission::Priority;
use crate::convert;
use crate::error::ServiceError;
use crate::logging::LogSafe;
use crate::request::{self, SearchJob, parse_position};
use crate::review::{self, ReviewJob, ReviewResult};
use crate::runner::{Engine, UpdateResult, fresh_seed};
use crate::stop::SearchId;

/// Version of the rules this server implements.
pub const RULES_VERSION: &str = "emergo-bot RULES.md (vchess EmergoRules a9e2eed0 + authors' draws; automatic threefold repetition)";
/// Version of the move notation.
pub const NOTATION: &str = "emergo-bot v1: entry e5, step c3-d4, capture chain c3xe5xc7";

/// Longest client deadline the server keeps track of: a day. Longer ones (up to the 8-digit
/// hours the gRPC wire format allows, or absurd values like `18446744073709551615S`) change
/// nothing, since every search budget is capped far below, and clamping them keeps
/// `Instant::now() + timeout` from overflowing.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 3600);

/// The deadline of a request that arrives now with `timeout` left (a transport's timeout
/// header), clamped to [`MAX_TIMEOUT`]: a client value never reaches overflowing arithmetic.
pub fn deadline_after(timeout: Duration) -> Option<Instant> {
    Instant::now().checked_add(timeout.min(MAX_TIMEOUT))
}

/// The stream of an Analyze: updates, then the final one (or an error), then the end.
pub type Updates = mpsc::Receiver<UpdateResult>;
/// The stream of an AnalyzeGame: turns, then the summary (or an error), then the end.
pub type ReviewUpdates = mpsc::Receiver<ReviewResult>;

/// The `emergo.bot.v1` operations over one engine. Cheap to clone.
#[derive(Clone)]
pub struct Service {
    engine: Arc<Engine>,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service")
            .field("engine", &self.engine)
            .finish()
    }
}

impl Service {
    /// The service over `engine`.
    pub fn new(engine: Arc<Engine>) -> Service {
        Service { engine }
    }

    /// The engine (configuration, load, kept games).
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// Checks a search request (Analyze or BestMove) and logs its budget.
    fn search_job(
        &self,
        position: Option<&pb::Position>,
        limits: Option<&pb::Limits>,
        options: Option<&pb::SearchOptions>,
        report_interval_ms: u32,
    ) -> Result<SearchJob, ServiceError> {
        let job = SearchJob::from_parts(
            position,
            limits,
            options,
            report_interval_ms,
            &self.engine.config,
        )?;
        tracing::info!(
            max_time_ms = job.max_time.map(|t| t.as_millis() as u64),
            max_playouts = job.max_playouts,
            threads = job.threads,
            priority = ?job.priority,
            "search"
        );
        Ok(job)
    }

    /// Analyze: a search whose snapshots stream every report interval, then its final update.
    /// Refused at once (before any stream) when the request is bad. Dropping the receiver
    /// cancels the search.
    pub async fn analyze(
        &self,
        r: pb::AnalyzeRequest,
        deadline: Option<Instant>,
    ) -> Result<Updates, ServiceError> {
        let started = Instant::now();
        let span = request_span("Analyze", game_id_of(r.options.as_ref()));
        let job = span.in_scope(|| {
            self.search_job(
                r.position.as_ref(),
                r.limits.as_ref(),
                r.options.as_ref(),
                r.report_interval_ms,
            )
        });
        let job = job.and_then(|job| {
            if job.ponder {
                // A stream's client watches the analysis; there is no move of its own to
                // ponder after.
                return Err(ServiceError::invalid(
                    "options.ponder",
                    "only BestMove ponders (after its answer)",
                ));
            }
            if job.level.is_some() {
                // An analysis shows what the engine thinks; a level only changes the move
                // it plays.
                return Err(ServiceError::invalid(
                    "options.level",
                    "only BestMove plays at a level",
                ));
            }
            Ok(job)
        });
        let job = match job {
            Ok(job) => job,
            Err(e) => return span.in_scope(|| finish("Analyze", started, Err(e))),
        };
        let (tx, rx) = mpsc::channel(16);
        let engine = self.engine.clone();
        tokio::spawn(
            async move {
                let result = engine.search(job, deadline, Some(tx.clone())).await;
                let item = finish("Analyze", started, result);
                send_last(&tx, item, deadline).await;
            }
            .instrument(span),
        );
        Ok(rx)
    }

    /// BestMove: one search, answered with its move and final update.
    pub async fn best_move(
        &self,
        r: pb::BestMoveRequest,
        deadline: Option<Instant>,
    ) -> Result<pb::BestMoveResponse, ServiceError> {
        let started = Instant::now();
        let span = request_span("BestMove", game_id_of(r.options.as_ref()));
        async {
            let result = async {
                let job = self.search_job(
                    r.position.as_ref(),
                    r.limits.as_ref(),
                    r.options.as_ref(),
                    0,
                )?;
                let level = job.level;
                let seed = job.seed;
                let update = self.engine.search(job, deadline, None).await?;
                let playouts = update.stats.as_ref().map_or(0, |s| s.playouts);
                let best_move = match level {
                    Some(level) => level_choice(level, &update, seed),
                    None => update.best_move.clone(),
                };
                tracing::info!(%best_move, playouts, level = level.map(|l| l.number()), "result");
                Ok(pb::BestMoveResponse {
                    best_move,
                    analysis: Some(update),
                })
            }
            .await;
            finish("BestMove", started, result)
        }
        .instrument(span)
        .await
    }

    /// AnalyzeGame: a whole-game review whose turns stream in order, then its summary.
    pub async fn analyze_game(
        &self,
        r: pb::AnalyzeGameRequest,
        deadline: Option<Instant>,
    ) -> Result<ReviewUpdates, ServiceError> {
        let started = Instant::now();
        let span = request_span("AnalyzeGame", "");
        let job = span.in_scope(|| {
            let job = ReviewJob::from_request(&r, &self.engine.config, |game| {
                self.engine.state_of(game)
            })?;
            tracing::info!(
                turns = job.turns.len(),
                searches = job.searches.len(),
                max_time_ms = job.max_time.map(|t| t.as_millis() as u64),
                max_playouts = job.max_playouts,
                threads = job.threads,
                priority = ?job.priority,
                "review"
            );
            Ok(job)
        });
        let job = match job {
            Ok(job) => job,
            Err(e) => return span.in_scope(|| finish("AnalyzeGame", started, Err(e))),
        };
        let (tx, rx) = mpsc::channel(32);
        let engine = self.engine.clone();
        tokio::spawn(
            async move {
                let result = review::run(engine, job, deadline, tx.clone()).await;
                let item =
                    finish("AnalyzeGame", started, result).map(|summary| pb::GameReviewUpdate {
                        update: Some(pb::game_review_update::Update::Summary(summary)),
                    });
                send_last(&tx, item, deadline).await;
            }
            .instrument(span),
        );
        Ok(rx)
    }

    /// LegalMoves: the position's legal moves (sorted), each with the FEN after it.
    pub fn legal_moves(
        &self,
        r: pb::LegalMovesRequest,
    ) -> Result<pb::LegalMovesResponse, ServiceError> {
        let started = Instant::now();
        let result = (|| {
            let p = r
                .position
                .as_ref()
                .ok_or_else(|| ServiceError::invalid("position", "required"))?;
            let cp = parse_position(&p.fen, &p.moves, "position.")?;
            let pos = *cp.game.position();
            let mut moves: Vec<pb::LegalMove> = cp
                .game
                .legal_moves()
                .iter()
                .map(|&m| {
                    let mut next = pos;
                    next.play_unchecked(m);
                    pb::LegalMove {
                        r#move: m.to_string(),
                        fen_after: next.to_string(),
                    }
                })
                .collect();
            moves.sort_by(|a, b| a.r#move.cmp(&b.r#move));
            Ok(pb::LegalMovesResponse {
                fen: pos.to_string(),
                moves,
                status: Some(convert::status(cp.game.outcome())),
            })
        })();
        finish("LegalMoves", started, result)
    }

    /// ApplyMoves: plays moves from a FEN; an illegal move is an answer (`ok: false`, its
    /// index and why), not an error.
    pub fn apply_moves(
        &self,
        r: pb::ApplyMovesRequest,
    ) -> Result<pb::ApplyMovesResponse, ServiceError> {
        let started = Instant::now();
        let result = (|| {
            // Check the FEN and the size first: those are request errors, not move errors.
            let start = parse_position(&r.fen, &[], "")?;
            if r.moves.len() > request::MAX_MOVES {
                return Err(ServiceError::out_of_range(
                    "moves",
                    format!(
                        "{} moves, at most {} are accepted",
                        r.moves.len(),
                        request::MAX_MOVES
                    ),
                ));
            }
            let mut game = start.game;
            for (i, text) in r.moves.iter().enumerate() {
                if let Err(e) = game.play_str(text) {
                    let error = match e {
                        emergo_rules::GameError::Notation { error, .. } => error.to_string(),
                        emergo_rules::GameError::Illegal { error, .. } => error.to_string(),
                        emergo_rules::GameError::Fen(error) => error.to_string(),
                    };
                    return Ok(pb::ApplyMovesResponse {
                        ok: false,
                        fen: game.position().to_string(),
                        status: Some(convert::status(game.outcome())),
                        error_index: i as u32,
                        error,
                    });
                }
            }
            Ok(pb::ApplyMovesResponse {
                ok: true,
                fen: game.position().to_string(),
                status: Some(convert::status(game.outcome())),
                error_index: 0,
                error: String::new(),
            })
        })();
        finish("ApplyMoves", started, result)
    }

    /// StopSearch: ends a live search (or review) early; its own call gets the answer.
    pub fn stop_search(
        &self,
        r: pb::StopSearchRequest,
    ) -> Result<pb::StopSearchResponse, ServiceError> {
        let started = Instant::now();
        let span = request_span("StopSearch", "");
        span.in_scope(|| {
            let result = SearchId::parse(&r.search_id, "search_id")
                .and_then(|id| {
                    tracing::info!(search_id = %id, "stop");
                    self.engine.searches.stop(&id)
                })
                .map(|stopped| pb::StopSearchResponse { stopped });
            finish("StopSearch", started, result)
        })
    }

    /// ServerInfo: versions, limits, load and the engine's configuration.
    pub fn server_info(
        &self,
        _r: pb::ServerInfoRequest,
    ) -> Result<pb::ServerInfoResponse, ServiceError> {
        let started = Instant::now();
        let e = &self.engine;
        let c = &e.config;
        let info = pb::ServerInfoResponse {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            rules_version: RULES_VERSION.to_owned(),
            notation: NOTATION.to_owned(),
            limits: Some(pb::ServerLimits {
                max_threads_per_request: c.threads_per_request() as u32,
                thread_budget: c.thread_budget() as u32,
                max_time_ms: c.max_time_ms,
                max_playouts: c.max_playouts,
                max_nodes: c.max_nodes as u64,
                max_queue: c.max_queue as u32,
                max_queue_wait_ms: c.max_queue_wait_ms.min(u64::from(u32::MAX)) as u32,
                max_tree_memory_bytes: e.memory.budget() as u64,
                tree_memory_per_thread_bytes: e.memory.share(1) as u64,
                max_ponder_ms: c.max_ponder_ms,
            }),
            load: Some(pb::ServerLoad {
                running_searches: e.running_searches() as u32,
                threads_in_use: e.admission.threads_in_use() as u32,
                queued_requests: e.admission.queued() as u32,
                queued_interactive: e.admission.queued_at(Priority::Interactive) as u32,
                queued_normal: e.admission.queued_at(Priority::Normal) as u32,
                queued_batch: e.admission.queued_at(Priority::Batch) as u32,
                kept_games: e.games.len() as u32,
                searches_completed: e.completed(),
                requests_refused: e.admission.refused(),
                tree_memory_bytes: e.memory.in_use() as u64,
                kept_tree_bytes: e.memory.kept() as u64,
                pondering: e.admission.preemptible() as u32,
            }),
            replica: c.replica_name(),
            engine: c.mcts.describe(),
        };
        finish("ServerInfo", started, Ok(info))
    }
}

fn game_id_of(options: Option<&pb::SearchOptions>) -> &str {
    options.map_or("", |o| o.game_id.as_str())
}

/// Records the request's outcome in the metrics and the log. Error messages can quote the
/// client's input, so they are logged escaped ([`LogSafe`]).
fn finish<T>(
    rpc: &'static str,
    started: Instant,
    r: Result<T, ServiceError>,
) -> Result<T, ServiceError> {
    let code = r.as_ref().map_or_else(|e| e.code(), |_| tonic::Code::Ok);
    crate::metrics::request(rpc, code, started.elapsed());
    match &r {
        Ok(_) => tracing::info!(
            code = crate::metrics::code_name(code),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "done"
        ),
        Err(e) => tracing::info!(
            code = crate::metrics::code_name(code),
            error = %LogSafe(e),
            "refused"
        ),
    }
    r
}

/// The span of one request. The game id is the client's (up to 128 bytes of anything), so it is
/// logged escaped: a newline in it must not start a forged log line.
fn request_span(rpc: &'static str, game_id: &str) -> tracing::Span {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    tracing::info_span!("request", rpc, request_id = id, game_id = %LogSafe(game_id))
}

/// Sends a stream's last item. The client may be gone; then there is nobody to tell. A client
/// that stopped reading holds the send up; past its deadline nobody waits for the answer, so
/// neither does the sending task.
async fn send_last<T>(tx: &mpsc::Sender<T>, item: T, deadline: Option<Instant>) {
    match deadline {
        Some(d) => {
            let _ = tokio::time::timeout_at(d.into(), tx.send(item)).await;
        }
        None => {
            let _ = tx.send(item).await;
        }
    }
}

/// The move a level plays from a search's final update: drawn among the root moves by the
/// level's plan ([`Level::plan`]), with the request's seed (0: a fresh one, so that a game
/// against a level is not the same game every time).
fn level_choice(level: Level, update: &pb::AnalysisUpdate, seed: u64) -> String {
    let candidates: Vec<Candidate> = update
        .moves
        .iter()
        .map(|m| Candidate {
            visits: m.visits,
            proven_win: m.proof == pb::ProofStatus::Win as i32,
            proven_loss: m.proof == pb::ProofStatus::Loss as i32,
        })
        .collect();
    let seed = if seed == 0 { fresh_seed() } else { seed };
    level
        .plan()
        .choose(&candidates, seed)
        .and_then(|i| update.moves.get(i))
        .map_or_else(|| update.best_move.clone(), |m| m.r#move.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadlines_are_clamped() {
        let far = deadline_after(Duration::MAX).unwrap();
        assert!(far <= Instant::now() + MAX_TIMEOUT);
        let near = deadline_after(Duration::from_millis(5)).unwrap();
        assert!(near <= Instant::now() + Duration::from_millis(5));
    }
}
