//! The `emergo` client subcommands that talk to a bot server (or to an in-process engine with
//! `--local`): analyze, bestmove, play, loadtest, arena.
//!
//! This module holds what they share: connection flags, the bearer-token and game-affinity
//! headers, and [`Backend`], which answers Analyze/BestMove either over gRPC or in-process with
//! the very same engine the server runs, so every tool has one code path for both.

pub mod analyze;
pub mod arena;
pub mod loadtest;
pub mod play;
pub mod record;

use std::sync::Arc;

use clap::Args;
use emergo_proto::v1 as pb;
use emergo_proto::v1::emergo_bot_client::EmergoBotClient;
use tokio::sync::mpsc;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;
use tonic::{Request, Status};

use crate::config::ServerConfig;
use crate::request::SearchJob;
use crate::runner::{Engine, UpdateResult};

/// Metadata header mirroring `SearchOptions.game_id`, so a load balancer can hash a game's
/// requests to one replica (tree reuse) without parsing protobuf.
pub const GAME_HEADER: &str = "x-emergo-game";

/// Errors of the client tools.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// Could not reach the server.
    #[error("cannot connect to {url}: {source}")]
    Connect {
        /// The URL.
        url: String,
        /// Why.
        source: tonic::transport::Error,
    },
    /// The server answered with an error status.
    #[error("{}: {}", crate::metrics::code_name(.0.code()), .0.message())]
    Rpc(#[from] Status),
    /// Bad flags or input.
    #[error("{0}")]
    Invalid(String),
    /// Reading input or writing output failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Flags for reaching a server.
#[derive(Clone, Debug, Args)]
pub struct ConnectArgs {
    /// The bot server's URL.
    #[arg(long, env = "EMERGO_SERVER", default_value = "http://127.0.0.1:50051")]
    pub server: String,
    /// Bearer token, if the server requires one.
    #[arg(long, env = "EMERGO_AUTH_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
}

/// Adds `authorization: Bearer <token>` to every call when a token is set.
#[derive(Clone, Debug)]
pub struct ClientAuth {
    header: Option<tonic::metadata::MetadataValue<tonic::metadata::Ascii>>,
}

impl tonic::service::Interceptor for ClientAuth {
    fn call(&mut self, mut req: Request<()>) -> Result<Request<()>, Status> {
        if let Some(h) = &self.header {
            req.metadata_mut().insert("authorization", h.clone());
        }
        Ok(req)
    }
}

/// A connected gRPC client with auth.
pub type Client = EmergoBotClient<InterceptedService<Channel, ClientAuth>>;

/// Connects to `args.server`.
pub async fn connect(args: &ConnectArgs) -> Result<Client, ClientError> {
    let channel = Channel::from_shared(args.server.clone())
        .map_err(|e| ClientError::Invalid(format!("--server {:?}: {e}", args.server)))?
        .tcp_nodelay(true)
        .connect()
        .await
        .map_err(|source| ClientError::Connect {
            url: args.server.clone(),
            source,
        })?;
    let header =
        match args.token.as_deref().filter(|t| !t.is_empty()) {
            None => None,
            Some(t) => Some(format!("Bearer {t}").parse().map_err(|_| {
                ClientError::Invalid("--token: not a valid header value".to_owned())
            })?),
        };
    Ok(
        EmergoBotClient::with_interceptor(channel, ClientAuth { header })
            .max_decoding_message_size(16 * 1024 * 1024),
    )
}

/// Wraps a message in a request carrying the game-affinity header when the message has a
/// game id.
pub fn request_with_game<T>(message: T, game_id: &str) -> Request<T> {
    let mut req = Request::new(message);
    if !game_id.is_empty() {
        if let Ok(v) = game_id.parse() {
            req.metadata_mut().insert(GAME_HEADER, v);
        }
    }
    req
}

/// Where searches run: a server over gRPC, or an engine in this process.
#[derive(Clone)]
pub enum Backend {
    /// A bot server.
    Remote(Client),
    /// The server's engine, in-process (`--local`).
    Local(Arc<Engine>),
}

impl Backend {
    /// An in-process engine with the server's defaults.
    pub fn local() -> Backend {
        Backend::Local(Arc::new(Engine::new(ServerConfig::default())))
    }

    /// Connects to a server, or builds a local engine when `local` is set.
    pub async fn open(args: &ConnectArgs, local: bool) -> Result<Backend, ClientError> {
        if local {
            Ok(Backend::local())
        } else {
            Ok(Backend::Remote(connect(args).await?))
        }
    }

    /// Starts an analysis; updates (the last one final) arrive on the returned channel.
    pub async fn analyze(
        &self,
        req: pb::AnalyzeRequest,
    ) -> Result<mpsc::Receiver<UpdateResult>, ClientError> {
        let (tx, rx) = mpsc::channel(16);
        match self {
            Backend::Remote(client) => {
                let game_id = req
                    .options
                    .as_ref()
                    .map(|o| o.game_id.clone())
                    .unwrap_or_default();
                let mut stream = client
                    .clone()
                    .analyze(request_with_game(req, &game_id))
                    .await?
                    .into_inner();
                tokio::spawn(async move {
                    loop {
                        let item = match stream.message().await {
                            Ok(Some(u)) => Ok(u),
                            Ok(None) => break,
                            Err(e) => Err(e),
                        };
                        let end = item.is_err();
                        if tx.send(item).await.is_err() || end {
                            break;
                        }
                    }
                });
            }
            Backend::Local(engine) => {
                let job = SearchJob::from_parts(
                    req.position.as_ref(),
                    req.limits.as_ref(),
                    req.options.as_ref(),
                    req.report_interval_ms,
                    &engine.config,
                )
                .map_err(Status::from)?;
                let engine = engine.clone();
                tokio::spawn(async move {
                    let result = engine.search(job, None, Some(tx.clone())).await;
                    let _ = tx.send(result.map_err(Status::from)).await;
                });
            }
        }
        Ok(rx)
    }

    /// Asks for the best move.
    pub async fn best_move(
        &self,
        req: pb::BestMoveRequest,
    ) -> Result<pb::BestMoveResponse, ClientError> {
        match self {
            Backend::Remote(client) => {
                let game_id = req
                    .options
                    .as_ref()
                    .map(|o| o.game_id.clone())
                    .unwrap_or_default();
                Ok(client
                    .clone()
                    .best_move(request_with_game(req, &game_id))
                    .await?
                    .into_inner())
            }
            Backend::Local(engine) => {
                let job = SearchJob::from_parts(
                    req.position.as_ref(),
                    req.limits.as_ref(),
                    req.options.as_ref(),
                    0,
                    &engine.config,
                )
                .map_err(Status::from)?;
                let update = engine.search(job, None, None).await.map_err(Status::from)?;
                Ok(pb::BestMoveResponse {
                    best_move: update.best_move.clone(),
                    analysis: Some(update),
                })
            }
        }
    }
}

/// Parses a duration like `2s`, `500ms`, `1.5s` or `1m`.
pub fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let s = s.trim();
    let (num, unit) = match s.find(|c: char| !(c.is_ascii_digit() || c == '.')) {
        Some(i) => s.split_at(i),
        None => (s, "s"),
    };
    let n: f64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not a duration (e.g. 2s, 500ms)"))?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "s" | "" => n,
        "m" | "min" => n * 60.0,
        _ => return Err(format!("{s:?}: unknown unit {unit:?} (use ms, s or m)")),
    };
    if !(secs.is_finite() && secs > 0.0 && secs <= 24.0 * 3600.0) {
        return Err(format!("{s:?} is out of range"));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("2s"), Ok(std::time::Duration::from_secs(2)));
        assert_eq!(
            parse_duration("500ms"),
            Ok(std::time::Duration::from_millis(500))
        );
        assert_eq!(
            parse_duration("1.5"),
            Ok(std::time::Duration::from_millis(1500))
        );
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("3h").is_err());
    }
}
