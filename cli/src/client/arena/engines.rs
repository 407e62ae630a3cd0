//! The engines at play: in-process pickers on blocking threads, and bot servers over gRPC with
//! retries and failover.

use std::sync::Arc;
use std::time::{Duration, Instant};

use emergo_proto::v1 as pb;
use emergo_rules::{Game, Move};
use tokio::sync::Mutex;
use tonic::Code;

use super::clock::{LOCAL_MARGIN, SideClock};
use super::spec::{EngineKind, EngineSpec};
use crate::client::{Client, ClientError, ConnectArgs, connect, request_with_game};
use crate::players::{AbPlayer, GreedyPlayer, MctsPlayer, MovePicker, RandomPlayer};
use emergo_bot_server::timeman;

/// Slack beyond the mover's clock for a BestMove call under a game clock: the arena measures
/// and flags a late answer itself, so the deadline only has to end a call that never returns.
const CLOCK_DEADLINE_SLACK: Duration = Duration::from_secs(1);

/// Attempts of one BestMove call before the game is adjudicated as an engine failure.
pub const MAX_ATTEMPTS: u32 = 5;

/// Extra time the client waits beyond the gRPC deadline before giving up on its own, in case
/// the deadline header is lost on the way (a proxy that strips it).
const CLIENT_SLACK: Duration = Duration::from_secs(1);

/// Longest wait for a new connection: a blackholed address would otherwise hold a game (and
/// every game waiting for the same engine's connection) for the OS's TCP timeout.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Pause before retry `attempt` (1-based): 100, 200, 400, 800 ms. Short, because the usual
/// cause is a replica going away and the next connection lands on a healthy one; long enough
/// for a load balancer to notice a dead backend.
fn backoff(attempt: u32) -> Duration {
    Duration::from_millis(100 << (attempt - 1).min(4))
}

/// What an engine answered for one move.
#[derive(Debug)]
pub enum Answer {
    /// A move in notation (not yet checked for legality).
    Move {
        /// The move as the engine wrote it.
        text: String,
        /// Visits the server kept from its previous search of this game (tree reuse).
        reused_visits: Option<u64>,
        /// Playouts of the search (searching engines only): shows what a time budget bought.
        playouts: Option<u64>,
        /// The server's wall time from the request's arrival to its answer
        /// (`SearchStats.answer_wall_ms`); servers only.
        server_wall_ms: Option<u64>,
        /// The time from arrival within which the server promised its answer
        /// (`SearchStats.budget_max_ms`: the fixed budget, or a clock's hard limit); servers
        /// with a time budget only.
        budget_ms: Option<u64>,
    },
    /// The engine did not answer in time: the game is lost on time.
    Timeout(String),
    /// The engine failed (after all retries): the game is lost by adjudication.
    Failure(String),
}

/// One move's answer with what it took to get it.
#[derive(Debug)]
pub struct MoveResult {
    /// The answer.
    pub answer: Answer,
    /// Calls that failed and were retried.
    pub retries: u32,
}

/// A bot server shared by all games it plays: one connection, replaced when it fails.
pub struct ServerEngine {
    connect: ConnectArgs,
    /// The current client and its generation, so that of several games seeing one broken
    /// connection only the first replaces it.
    conn: Mutex<(u64, Option<Client>)>,
}

impl ServerEngine {
    /// Connects to `args.server` (plaintext or TLS, as [`connect`] decides): an unreachable
    /// server fails the arena before any game starts.
    pub async fn connect(args: ConnectArgs) -> Result<ServerEngine, ClientError> {
        let client = tokio::time::timeout(CONNECT_TIMEOUT, connect(&args))
            .await
            .map_err(|_| {
                ClientError::Invalid(format!(
                    "cannot connect to {}: no answer within {CONNECT_TIMEOUT:?}",
                    args.server
                ))
            })??;
        Ok(ServerEngine {
            connect: args,
            conn: Mutex::new((0, Some(client))),
        })
    }

    async fn client(&self) -> Result<(u64, Client), ClientError> {
        let mut conn = self.conn.lock().await;
        if let Some(c) = &conn.1 {
            return Ok((conn.0, c.clone()));
        }
        let c = tokio::time::timeout(CONNECT_TIMEOUT, connect(&self.connect))
            .await
            .map_err(|_| {
                ClientError::Invalid(format!(
                    "cannot connect to {}: no answer within {CONNECT_TIMEOUT:?}",
                    self.connect.server
                ))
            })??;
        conn.0 += 1;
        conn.1 = Some(c.clone());
        Ok((conn.0, c))
    }

    /// Drops the connection of `generation` (if still current) so the next call reconnects:
    /// behind a load balancer that is what moves the game to another replica.
    async fn drop_connection(&self, generation: u64) {
        let mut conn = self.conn.lock().await;
        if conn.0 == generation {
            conn.1 = None;
        }
    }

    /// Asks for a move, retrying transport-level failures with a fresh connection.
    ///
    /// `game_id` goes in `SearchOptions.game_id` (already in `req`) and in the game-affinity
    /// header, so the server (or a load balancer in front of it) keeps the game's tree.
    pub async fn best_move(
        &self,
        req: pb::BestMoveRequest,
        game_id: &str,
        deadline: Duration,
    ) -> MoveResult {
        let mut retries = 0;
        let mut last_error = String::new();
        for attempt in 0..MAX_ATTEMPTS {
            if attempt > 0 {
                retries += 1;
                tokio::time::sleep(backoff(attempt)).await;
            }
            let (generation, mut client) = match self.client().await {
                Ok(c) => c,
                Err(e) => {
                    last_error = e.to_string();
                    continue;
                }
            };
            let mut request = request_with_game(req.clone(), game_id);
            request.set_timeout(deadline);
            let started = Instant::now();
            let reply =
                tokio::time::timeout(deadline + CLIENT_SLACK, client.best_move(request)).await;
            let status = match reply {
                Ok(Ok(resp)) => {
                    let resp = resp.into_inner();
                    let stats = resp.analysis.as_ref().and_then(|a| a.stats.as_ref());
                    return MoveResult {
                        answer: Answer::Move {
                            reused_visits: stats.map(|s| s.reused_visits),
                            playouts: stats.map(|s| s.playouts),
                            server_wall_ms: stats.map(|s| s.answer_wall_ms),
                            budget_ms: stats.map(|s| s.budget_max_ms).filter(|&ms| ms > 0),
                            text: resp.best_move,
                        },
                        retries,
                    };
                }
                Ok(Err(status)) => status,
                Err(_) => {
                    return MoveResult {
                        answer: Answer::Timeout(format!(
                            "no answer within the {deadline:?} deadline"
                        )),
                        retries,
                    };
                }
            };
            let what = ClientError::Rpc(status.clone()).to_string();
            match status.code() {
                Code::DeadlineExceeded => {
                    return MoveResult {
                        answer: Answer::Timeout(what),
                        retries,
                    };
                }
                // tonic reports its own expiry of the deadline as CANCELLED ("Timeout
                // expired"); that is a timeout, not a transport failure worth retrying.
                Code::Cancelled if started.elapsed() >= deadline => {
                    return MoveResult {
                        answer: Answer::Timeout(format!("no answer within {deadline:?}: {what}")),
                        retries,
                    };
                }
                Code::Unavailable | Code::Unknown | Code::Internal | Code::Cancelled => {
                    self.drop_connection(generation).await;
                    last_error = what;
                }
                _ => {
                    return MoveResult {
                        answer: Answer::Failure(what),
                        retries,
                    };
                }
            }
        }
        MoveResult {
            answer: Answer::Failure(format!(
                "{MAX_ATTEMPTS} attempts failed; last: {last_error}"
            )),
            retries,
        }
    }
}

/// An in-process player. MCTS is kept as its concrete type so its search statistics can be
/// read after each move.
pub enum LocalPicker {
    /// The random or greedy baseline.
    Baseline(Box<dyn MovePicker + Send>),
    /// In-process MCTS.
    Mcts(Box<MctsPlayer>),
    /// In-process alpha-beta.
    AlphaBeta(Box<AbPlayer>),
}

impl LocalPicker {
    /// Sets the time of the next move (a game clock's budget); baselines take no time.
    fn set_time(&mut self, time: Duration) {
        match self {
            LocalPicker::Baseline(_) => {}
            LocalPicker::Mcts(p) => p.set_time(Some(time)),
            LocalPicker::AlphaBeta(p) => p.set_time(Some(time)),
        }
    }

    /// The move, the playouts it took and the visits its search started from (MCTS only;
    /// the visits only where it keeps its tree).
    fn pick(&mut self, game: &Game) -> (Option<Move>, Option<u64>, Option<u64>) {
        match self {
            LocalPicker::Baseline(p) => (p.pick(game), None, None),
            LocalPicker::Mcts(p) => {
                let m = p.pick(game);
                (m, p.last_search().map(|s| s.playouts), p.last_reused())
            }
            // Nodes stand in for playouts: what the budget bought.
            LocalPicker::AlphaBeta(p) => {
                let m = p.pick(game);
                (m, p.last_search().map(|r| r.nodes), None)
            }
        }
    }
}

/// One side of one game.
pub enum Seat {
    /// An in-process picker, moved onto a blocking thread for each move (and back).
    Local(Option<LocalPicker>),
    /// A server, with the game id it uses for this game and side.
    Remote {
        /// The server.
        server: Arc<ServerEngine>,
        /// The game id (tree reuse and load-balancer affinity).
        game_id: String,
        /// The spec (budget, threads); boxed, as it is much larger than a local seat.
        spec: Box<EngineSpec>,
        /// The search seed sent with each request.
        seed: u64,
    },
}

impl Seat {
    /// A fresh seat for `spec`: pickers keep state (random generators), so each game gets its
    /// own, seeded from the game. `timed`: the game is played on a clock (`--tc`), which sets
    /// each move's time.
    pub fn new(
        spec: &EngineSpec,
        server: Option<&Arc<ServerEngine>>,
        game_id: String,
        seed: u64,
        timed: bool,
    ) -> Result<Seat, ClientError> {
        let picker = match &spec.kind {
            EngineKind::Random => LocalPicker::Baseline(Box::new(RandomPlayer::new(seed))),
            EngineKind::Greedy => LocalPicker::Baseline(Box::new(GreedyPlayer::new(seed))),
            EngineKind::Mcts => {
                let config = spec.mcts_config().map_err(ClientError::Invalid)?;
                LocalPicker::Mcts(Box::new(
                    MctsPlayer::new(spec.budget.playouts, spec.budget.time, spec.threads, seed)
                        .with_config(&config)
                        .with_reuse(spec.reuse)
                        .with_level(spec.level),
                ))
            }
            EngineKind::AlphaBeta => {
                let mut player = AbPlayer::new(if timed {
                    spec.ab_clock_limits()
                } else {
                    spec.ab_limits().map_err(ClientError::Invalid)?
                });
                if let Some(path) = &spec.net {
                    let net = emergo_engine::value_net::load(path).map_err(ClientError::Invalid)?;
                    player.set_net(Some(net));
                }
                LocalPicker::AlphaBeta(Box::new(player))
            }
            EngineKind::Server { .. } => {
                let server = server.ok_or_else(|| {
                    ClientError::Invalid(format!("{}: server not connected", spec.name))
                })?;
                return Ok(Seat::Remote {
                    server: server.clone(),
                    game_id,
                    spec: Box::new(spec.clone()),
                    seed,
                });
            }
        };
        Ok(Seat::Local(Some(picker)))
    }

    /// The engine's move in `game` (which is not over). `fen` is the game's start FEN as sent
    /// to servers every time, so that the server recognises the continuation of its tree.
    /// `clocks`: the mover's and the opponent's clocks, in a timed game: servers get them in
    /// `Limits.clock`, in-process engines a budget from the same time manager.
    pub async fn pick(
        &mut self,
        game: &Game,
        fen: &str,
        clocks: Option<(SideClock, SideClock)>,
    ) -> MoveResult {
        match self {
            Seat::Local(slot) => {
                let Some(mut picker) = slot.take() else {
                    return MoveResult {
                        answer: Answer::Failure("the engine was lost after a crash".to_owned()),
                        retries: 0,
                    };
                };
                if let Some((own, _)) = clocks {
                    picker.set_time(timeman::plan(own.timeman(), LOCAL_MARGIN, None).target);
                }
                let game = game.clone();
                // The search blocks for its whole budget: keep it off the async workers.
                let joined = tokio::task::spawn_blocking(move || {
                    let (m, playouts, reused) = picker.pick(&game);
                    (picker, m, playouts, reused)
                })
                .await;
                let answer = match joined {
                    Ok((picker, m, playouts, reused_visits)) => {
                        *slot = Some(picker);
                        match m {
                            Some(m) => Answer::Move {
                                text: m.to_string(),
                                reused_visits,
                                playouts,
                                server_wall_ms: None,
                                budget_ms: None,
                            },
                            None => Answer::Failure("no move offered".to_owned()),
                        }
                    }
                    Err(e) => Answer::Failure(format!("the engine crashed: {e}")),
                };
                MoveResult { answer, retries: 0 }
            }
            Seat::Remote {
                server,
                game_id,
                spec,
                seed,
            } => {
                *seed = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
                let req = pb::BestMoveRequest {
                    position: Some(pb::Position {
                        fen: fen.to_owned(),
                        moves: game.moves().iter().map(Move::to_string).collect(),
                    }),
                    limits: Some(pb::Limits {
                        max_time_ms: spec
                            .budget
                            .time
                            .map(|t| u32::try_from(t.as_millis().max(1)).unwrap_or(u32::MAX)),
                        max_playouts: spec.budget.playouts,
                        clock: clocks.map(|(own, opponent)| own.to_pb(&opponent)),
                    }),
                    options: Some(pb::SearchOptions {
                        threads: u32::try_from(spec.threads).unwrap_or(u32::MAX),
                        // 0 asks the server to pick a seed: avoid it.
                        seed: (*seed).max(1),
                        game_id: game_id.clone(),
                        ponder: spec.ponder,
                        level: spec.level.map_or(0, |l| l.number()),
                        ..Default::default()
                    }),
                };
                let deadline = match clocks {
                    Some((own, _)) => own.remaining + CLOCK_DEADLINE_SLACK,
                    None => spec.budget.deadline(),
                };
                server.best_move(req, game_id, deadline).await
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_is_short_and_growing() {
        let total: Duration = (1..MAX_ATTEMPTS).map(backoff).sum();
        assert_eq!(backoff(1), Duration::from_millis(100));
        assert_eq!(backoff(4), Duration::from_millis(800));
        assert!(total <= Duration::from_secs(2), "{total:?}");
    }
}
