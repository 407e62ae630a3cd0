//! Assembling and running the server: the service core behind its two doors (the gRPC service
//! with optional bearer-token auth, health and reflection (v1 and v1alpha); the HTTP gateway
//! and web board), the metrics port, TLS, and a graceful shutdown bounded by the grace period.
//! Connections are served by [`crate::net`].

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use emergo_proto::v1::emergo_bot_server::EmergoBotServer;
use tokio::net::TcpListener;
use tonic::service::interceptor::InterceptedService;

use crate::auth::BearerAuth;
use crate::config::{MAX_REQUEST_BYTES, ServerConfig};
use crate::grpc::GrpcService;
use crate::net::{self, Connections, ServeOptions};
use crate::runner::Engine;
use crate::service::Service;

/// The server could not start, or its shutdown had to cut clients off.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A flag value is unusable.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// Binding or reading an address failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The TLS certificate or key could not be loaded.
    #[error(transparent)]
    Tls(#[from] crate::tls::TlsError),
    /// The HTTP gateway's policy flags are unusable.
    #[error(transparent)]
    Gateway(Box<dyn std::error::Error + Send + Sync>),
    /// Reflection could not be built from the descriptors.
    #[error("reflection: {0}")]
    Reflection(#[from] tonic_reflection::server::Error),
    /// Connections still open when the shutdown grace ran out were dropped.
    #[error("{0} connection(s) still open after the shutdown grace were dropped")]
    GraceExceeded(usize),
}

/// Runs the gRPC server on `listener` (and the HTTP gateway and web board on `http`, if given)
/// until `shutdown` completes, then shuts down gracefully: health turns NOT_SERVING, new
/// connections are refused, open ones are asked to finish (HTTP/2 GOAWAY), running searches
/// end with a final update whose stop reason is "shutdown", and the call returns once they are
/// done — or once the shutdown grace is over, cutting off clients that still hold requests
/// open ([`ServeError::GraceExceeded`]).
pub async fn run(
    listener: TcpListener,
    http: Option<TcpListener>,
    mut config: ServerConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    config.validate()?;
    let engine = Arc::new(Engine::new(config));
    run_with_engine(listener, http, engine, shutdown).await
}

/// As [`run`], with an engine the caller keeps (tests inspect it). Refuses a configuration that
/// [`ServerConfig::validate`] refuses.
pub async fn run_with_engine(
    listener: TcpListener,
    http: Option<TcpListener>,
    engine: Arc<Engine>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let config = &engine.config;
    // The one gate for flag values: an engine built without `run` (tests, embedders) must not
    // serve with an empty token, which would mean no auth at all.
    config.clone().validate()?;
    let (health_reporter, health_service) = tonic_health::server::health_reporter();
    health_reporter
        .set_serving::<EmergoBotServer<GrpcService>>()
        .await;
    // Both reflection versions: grpcurl and grpcio-reflection clients still speak v1alpha.
    let reflection = || {
        tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(emergo_proto::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
    };
    let reflection_v1 = reflection().build_v1()?;
    let reflection_v1alpha = reflection().build_v1alpha()?;
    let auth = BearerAuth::new(config.auth_token.as_deref());
    let service = Service::new(engine.clone());
    let bot = EmergoBotServer::new(GrpcService::new(service.clone()))
        .max_decoding_message_size(MAX_REQUEST_BYTES);
    let grpc_router = tonic::service::Routes::new(health_service)
        .add_service(InterceptedService::new(reflection_v1, auth.clone()))
        .add_service(InterceptedService::new(reflection_v1alpha, auth.clone()))
        .add_service(InterceptedService::new(bot, auth))
        .prepare()
        .into_axum_router();

    let tls = match (&config.tls_cert, &config.tls_key) {
        (Some(cert), Some(key)) => Some(tokio_rustls::TlsAcceptor::from(
            crate::tls::server_config(cert, key)?,
        )),
        _ => None,
    };
    let connections = Connections::new(config.max_connections);
    let grace = config.shutdown_grace();
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut ports = Vec::new();

    if let Some(addr) = config.metrics_listen {
        // The io error alone ("Address in use") does not say which of the ports is busy.
        let metrics_listener = TcpListener::bind(addr).await.map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!("cannot listen on {addr} for metrics: {e} (use --metrics-listen ADDR)"),
            )
        })?;
        tracing::info!(addr = %metrics_listener.local_addr()?, "metrics on /metrics");
        let router = crate::metrics::router();
        // After the router installed the recorder: gauges set before would be lost. Hence also
        // before the other ports serve: a search admitted earlier would set its gauge into the
        // void and `emergo_running_searches` would be missing until the next one.
        crate::metrics::tree_memory_budget(engine.memory.budget());
        crate::metrics::tree_memory(engine.memory.in_use(), engine.memory.kept());
        ports.push(net::spawn(
            metrics_listener,
            router,
            ServeOptions::from_config("metrics", config),
            connections.clone(),
            stop_rx.clone(),
            grace,
        ));
    }

    let mut grpc_options = ServeOptions::from_config("grpc", config);
    grpc_options.http2_only = true;
    grpc_options.tls = tls.clone();
    tracing::info!(
        addr = %listener.local_addr()?,
        tls = tls.is_some(),
        max_connections = connections.cap(),
        tree_memory_bytes = engine.memory.budget(),
        tree_memory_per_thread_bytes = engine.memory.share(1),
        "serving emergo.bot.v1"
    );
    ports.push(net::spawn(
        listener,
        grpc_router,
        grpc_options,
        connections.clone(),
        stop_rx.clone(),
        grace,
    ));

    if let Some(http) = http {
        let local = http.local_addr()?;
        tracing::info!(addr = %local, tls = tls.is_some(), "serving the HTTP gateway and web board");
        let gateway = crate::http::Gateway::new(service.clone(), config, local)
            .map_err(|e| ServeError::Gateway(e.into()))?;
        let mut options = ServeOptions::from_config("http", config);
        options.tls = tls.clone();
        ports.push(net::spawn(
            http,
            crate::http::router(gateway),
            options,
            connections.clone(),
            stop_rx.clone(),
            grace,
        ));
    }

    shutdown.await;
    tracing::info!("shutting down: refusing new work, stopping searches");
    health_reporter
        .set_not_serving::<EmergoBotServer<GrpcService>>()
        .await;
    health_reporter
        .set_service_status("", tonic_health::ServingStatus::NotServing)
        .await;
    engine.shutdown();
    let _ = stop_tx.send(true);
    let mut cut = 0;
    for port in ports {
        cut += port.await;
    }
    engine.drained(Duration::from_secs(10)).await;
    engine.games.clear();
    if cut > 0 {
        return Err(ServeError::GraceExceeded(cut));
    }
    Ok(())
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
