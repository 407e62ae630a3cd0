//! Assembling and running the server: the bot service behind optional bearer-token auth,
//! health and reflection, graceful shutdown.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use emergo_proto::v1::emergo_bot_server::EmergoBotServer;
use tokio::net::TcpListener;
use tokio_stream::wrappers::TcpListenerStream;
use tonic::service::Interceptor;
use tonic::{Request, Status};

use crate::config::ServerConfig;
use crate::runner::Engine;
use crate::service::BotService;

/// Largest request message accepted (a position with 2,000 moves is about 16 KiB).
pub const MAX_REQUEST_BYTES: usize = 256 * 1024;

/// Checks `authorization: Bearer <token>` when a token is configured.
#[derive(Clone)]
pub struct BearerAuth {
    expected: Option<Arc<[u8]>>,
}

impl BearerAuth {
    /// Auth for `token` (None: everything allowed).
    pub fn new(token: Option<&str>) -> BearerAuth {
        BearerAuth {
            expected: token
                .filter(|t| !t.is_empty())
                .map(|t| Arc::from(format!("Bearer {t}").as_bytes())),
        }
    }
}

/// Compares without an early exit, so timing does not reveal how much of a guess was right.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl BearerAuth {
    /// Checks an `authorization` header value (gRPC metadata or HTTP header alike).
    pub fn check(&self, header: Option<&[u8]>) -> Result<(), Status> {
        let Some(expected) = &self.expected else {
            return Ok(());
        };
        match header {
            Some(v) if constant_time_eq(v, expected) => Ok(()),
            Some(_) => Err(Status::unauthenticated("invalid bearer token")),
            None => Err(Status::unauthenticated(
                "this server needs an `authorization: Bearer <token>` header",
            )),
        }
    }
}

impl Interceptor for BearerAuth {
    fn call(&mut self, req: Request<()>) -> Result<Request<()>, Status> {
        self.check(req.metadata().get("authorization").map(|v| v.as_bytes()))?;
        Ok(req)
    }
}

/// Runs the gRPC server on `listener` (and the HTTP gateway and web board on `http`, if given)
/// until `shutdown` completes, then shuts down gracefully: health turns NOT_SERVING, new
/// requests are refused, running searches end with a final update whose stop reason is
/// "shutdown", and the call returns once they are done.
pub async fn run(
    listener: TcpListener,
    http: Option<TcpListener>,
    config: ServerConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let engine = Arc::new(Engine::new(config));
    run_with_engine(listener, http, engine, shutdown).await
}

/// As [`run`], with an engine the caller keeps (tests inspect it).
pub async fn run_with_engine(
    listener: TcpListener,
    http: Option<TcpListener>,
    engine: Arc<Engine>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let (health_reporter, health_service) = tonic_health::server::health_reporter();
    health_reporter
        .set_serving::<EmergoBotServer<BotService>>()
        .await;
    let reflection = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(emergo_proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1()?;
    let auth = BearerAuth::new(engine.config.auth_token.as_deref());
    let bot = EmergoBotServer::new(BotService::new(engine.clone()))
        .max_decoding_message_size(MAX_REQUEST_BYTES);

    if let Some(addr) = engine.config.metrics_listen {
        let metrics_listener = crate::metrics::bind(addr).await?;
        tracing::info!(addr = %metrics_listener.local_addr()?, "metrics on /metrics");
        tokio::spawn(async move {
            if let Err(e) = crate::metrics::serve(metrics_listener).await {
                tracing::warn!(error = %e, "metrics server stopped");
            }
        });
    }

    // One shutdown signal for both doors.
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut http_task = None;
    if let Some(http) = http {
        tracing::info!(addr = %http.local_addr()?, "serving the HTTP gateway and web board");
        let gateway = crate::http::Gateway::new(
            BotService::new(engine.clone()),
            engine.config.auth_token.as_deref(),
        );
        let mut stop = stop_rx.clone();
        http_task = Some(tokio::spawn(async move {
            let app = crate::http::router(gateway);
            let served = axum::serve(http, app)
                .with_graceful_shutdown(async move {
                    let _ = stop.wait_for(|s| *s).await;
                })
                .await;
            if let Err(e) = served {
                tracing::warn!(error = %e, "HTTP gateway stopped");
            }
        }));
    }

    let stopping = engine.clone();
    let reporter = health_reporter.clone();
    let on_shutdown = async move {
        shutdown.await;
        tracing::info!("shutting down: refusing new work, stopping searches");
        reporter
            .set_not_serving::<EmergoBotServer<BotService>>()
            .await;
        reporter
            .set_service_status("", tonic_health::ServingStatus::NotServing)
            .await;
        stopping.shutdown();
        let _ = stop_tx.send(true);
        stopping.drained(Duration::from_secs(10)).await;
    };

    tracing::info!(addr = %listener.local_addr()?, "serving emergo.bot.v1");
    tonic::transport::Server::builder()
        .add_service(health_service)
        .add_service(tonic::service::interceptor::InterceptedService::new(
            reflection,
            auth.clone(),
        ))
        .add_service(tonic::service::interceptor::InterceptedService::new(
            bot, auth,
        ))
        .serve_with_incoming_shutdown(incoming(listener), on_shutdown)
        .await?;
    if let Some(task) = http_task {
        let _ = task.await;
    }
    engine.games.clear();
    Ok(())
}

/// Accepted connections with Nagle's algorithm off: replies are small writes (headers, message,
/// trailers), and with Nagle on, each reply waits out the peer's delayed ACK (about 40 ms).
fn incoming(
    listener: TcpListener,
) -> impl tokio_stream::Stream<Item = std::io::Result<tokio::net::TcpStream>> {
    use tokio_stream::StreamExt;
    TcpListenerStream::new(listener).map(|conn| {
        let conn = conn?;
        conn.set_nodelay(true)?;
        Ok(conn)
    })
}

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_auth() {
        let mut auth = BearerAuth::new(Some("s3cret"));
        let mut ok = Request::new(());
        ok.metadata_mut()
            .insert("authorization", "Bearer s3cret".parse().unwrap());
        assert!(auth.call(ok).is_ok());
        let mut bad = Request::new(());
        bad.metadata_mut()
            .insert("authorization", "Bearer nope".parse().unwrap());
        assert_eq!(
            auth.call(bad).unwrap_err().code(),
            tonic::Code::Unauthenticated
        );
        assert_eq!(
            auth.call(Request::new(())).unwrap_err().code(),
            tonic::Code::Unauthenticated
        );
        assert!(BearerAuth::new(None).call(Request::new(())).is_ok());
    }
}
