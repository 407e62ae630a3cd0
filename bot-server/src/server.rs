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
    /// The TLS certificate or key could not be loaded (the error names the flag and file).
    #[error(transparent)]
    Tls(#[from] crate::tls::ServerTlsError),
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

/// Exit status of a server whose configuration (a flag, or a file a flag names) is unusable:
/// 2, the code clap gives a bad flag, so a supervisor or script can tell "fix the command line"
/// from a server that ran and failed, whichever check caught the fault.
pub const EXIT_CONFIG: u8 = 2;
/// Exit status when the shutdown grace ran out with clients still holding requests open, which
/// were cut off.
pub const EXIT_GRACE_EXCEEDED: u8 = 1;
/// Exit status on a second SIGINT/SIGTERM: the process ends at once (the shell's 128 + SIGINT).
pub const EXIT_SECOND_SIGNAL: u8 = 130;

impl ServeError {
    /// The process exit status for this error: [`EXIT_GRACE_EXCEEDED`] when the shutdown cut
    /// clients off, [`EXIT_CONFIG`] for everything that stops the server before it serves (a
    /// bad flag or file, a port that cannot be bound). Reflection never fails with the
    /// descriptors compiled in; were it to, the server did not start either.
    pub fn exit_code(&self) -> u8 {
        match self {
            ServeError::GraceExceeded(_) => EXIT_GRACE_EXCEEDED,
            ServeError::Config(_)
            | ServeError::Io(_)
            | ServeError::Tls(_)
            | ServeError::Gateway(_)
            | ServeError::Reflection(_) => EXIT_CONFIG,
        }
    }
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

    let tls = crate::tls::acceptors_from_flags(config)?;
    // Built before any port serves, so that a bad policy flag stops the server before it
    // answered anything, like every other flag.
    let gateway = match &http {
        Some(http) => Some(
            crate::http::Gateway::new(service.clone(), config, http.local_addr()?)
                .map_err(|e| ServeError::Gateway(e.into()))?,
        ),
        None => None,
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
    // HTTP/2 only, in plaintext and by ALPN: gRPC needs nothing else, and HTTP/1.1 is what a
    // web page can send to any port it likes.
    grpc_options.http2_only = true;
    grpc_options.tls = tls.as_ref().map(|t| t.grpc.clone());
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

    if let (Some(http), Some(gateway)) = (http, gateway) {
        let local = http.local_addr()?;
        tracing::info!(addr = %local, tls = tls.is_some(), "serving the HTTP gateway and web board");
        let mut options = ServeOptions::from_config("http", config);
        options.tls = tls.as_ref().map(|t| t.http.clone());
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

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;
    use std::path::PathBuf;

    use emergo_proto::v1 as pb;
    use prost::Message;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// A server on two loopback ports, stopped when dropped.
    struct Running {
        grpc: SocketAddr,
        http: SocketAddr,
        engine: Arc<Engine>,
        _stop: tokio::sync::oneshot::Sender<()>,
    }

    async fn start(config: ServerConfig) -> Running {
        let grpc = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let http = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let (grpc_addr, http_addr) = (grpc.local_addr().unwrap(), http.local_addr().unwrap());
        let engine = Arc::new(Engine::new(ServerConfig {
            threads: 1,
            ..config
        }));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(run_with_engine(grpc, Some(http), engine.clone(), async {
            let _ = stopped.await;
        }));
        Running {
            grpc: grpc_addr,
            http: http_addr,
            engine,
            _stop: stop,
        }
    }

    /// A BestMove request as gRPC puts it in a body: uncompressed, length-prefixed.
    fn framed_best_move() -> Vec<u8> {
        let message = pb::BestMoveRequest {
            position: Some(pb::Position {
                fen: emergo_rules::INITIAL_FEN.to_owned(),
                ..Default::default()
            }),
            limits: Some(pb::Limits {
                max_playouts: Some(50),
                ..Default::default()
            }),
            ..Default::default()
        }
        .encode_to_vec();
        let mut framed = vec![0u8];
        framed.extend_from_slice(&(message.len() as u32).to_be_bytes());
        framed.extend_from_slice(&message);
        framed
    }

    /// The HTTP/1.1 POST a web page can make with `fetch(..., {mode: "no-cors"})`: a "simple"
    /// request (text/plain), so the browser sends it without asking first.
    fn http1_best_move() -> Vec<u8> {
        let body = framed_best_move();
        let mut request = format!(
            "POST /emergo.bot.v1.EmergoBot/BestMove HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\
             Content-Type: text/plain\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        request.extend_from_slice(&body);
        request
    }

    /// Writes `request` and reads until the peer closes (or 10 s pass): what came back.
    async fn exchange<S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin>(
        stream: &mut S,
        request: &[u8],
    ) -> Vec<u8> {
        let _ = stream.write_all(request).await;
        let mut answer = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(10), async {
            let mut buf = [0u8; 4096];
            loop {
                match stream.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => answer.extend_from_slice(&buf[..n]),
                }
            }
        });
        assert!(read.await.is_ok(), "the connection stayed open");
        answer
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn grpc_port_refuses_http1_before_any_rpc_runs() {
        let server = start(ServerConfig::default()).await;
        let mut tcp = tokio::net::TcpStream::connect(server.grpc).await.unwrap();
        let answer = exchange(&mut tcp, &http1_best_move()).await;
        let text = String::from_utf8_lossy(&answer);
        assert!(!text.starts_with("HTTP/1.1 2"), "answered: {text}");
        assert!(!text.contains("grpc-status: 0"), "answered: {text}");
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(server.engine.completed(), 0, "a search ran");
        assert_eq!(server.engine.running_searches(), 0, "a search runs");

        // HTTP/2 with prior knowledge, as every gRPC client speaks, still gets its answer.
        let mut client = emergo_proto::v1::emergo_bot_client::EmergoBotClient::connect(format!(
            "http://{}",
            server.grpc
        ))
        .await
        .unwrap();
        let request = pb::BestMoveRequest::decode(&framed_best_move()[5..]).unwrap();
        let answer = client.best_move(request).await.unwrap().into_inner();
        assert!(!answer.best_move.is_empty());
        assert_eq!(server.engine.completed(), 1);
    }

    /// A self-signed certificate for `localhost` and 127.0.0.1, and its key, in a fresh
    /// directory.
    fn write_cert(name: &str) -> (PathBuf, PathBuf, PathBuf, rcgen::Certificate) {
        let dir = std::env::temp_dir().join(format!("emergo-server-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let generated =
            rcgen::generate_simple_self_signed(vec!["localhost".to_owned(), "127.0.0.1".into()])
                .unwrap();
        let (cert, key) = (dir.join("server.pem"), dir.join("server.key"));
        std::fs::write(&cert, generated.cert.pem()).unwrap();
        std::fs::write(&key, generated.signing_key.serialize_pem()).unwrap();
        (dir, cert, key, generated.cert)
    }

    /// A TLS connection to `addr` trusting `ca` and offering `alpn`.
    async fn tls_connect(
        addr: SocketAddr,
        ca: &rcgen::Certificate,
        alpn: &[&[u8]],
    ) -> std::io::Result<tokio_rustls::client::TlsStream<tokio::net::TcpStream>> {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(ca.der().clone()).unwrap();
        let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        let tcp = tokio::net::TcpStream::connect(addr).await?;
        let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
        tokio_rustls::TlsConnector::from(Arc::new(config))
            .connect(name, tcp)
            .await
    }

    fn alpn(tls: &tokio_rustls::client::TlsStream<tokio::net::TcpStream>) -> Option<&[u8]> {
        tls.get_ref().1.alpn_protocol()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn grpc_port_offers_only_h2_under_tls() {
        let (dir, cert, key, ca) = write_cert("alpn");
        let server = start(ServerConfig {
            tls_cert: Some(cert),
            tls_key: Some(key),
            ..ServerConfig::default()
        })
        .await;
        const H1: &[u8] = b"http/1.1";
        const H2: &[u8] = b"h2";

        // A client that can only speak HTTP/1.1 is refused at the handshake.
        let refused = tls_connect(server.grpc, &ca, &[H1]).await;
        assert!(refused.is_err(), "the gRPC port agreed to HTTP/1.1");
        let tls = tls_connect(server.grpc, &ca, &[H2, H1]).await.unwrap();
        assert_eq!(alpn(&tls), Some(H2));

        // Without ALPN the handshake succeeds, but HTTP/1.1 on it is still refused.
        let mut tls = tls_connect(server.grpc, &ca, &[]).await.unwrap();
        let answer = exchange(&mut tls, &http1_best_move()).await;
        let text = String::from_utf8_lossy(&answer);
        assert!(!text.starts_with("HTTP/1.1 2"), "answered: {text}");
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(server.engine.completed(), 0, "a search ran");

        // The HTTP gateway keeps both, for browsers and curl.
        let tls = tls_connect(server.http, &ca, &[H1]).await.unwrap();
        assert_eq!(alpn(&tls), Some(H1));
        let tls = tls_connect(server.http, &ca, &[H2, H1]).await.unwrap();
        assert_eq!(alpn(&tls), Some(H2));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn duplicate_host_headers_get_400() {
        let server = start(ServerConfig::default()).await;
        let get = |hosts: &[&str]| {
            let mut head = "GET /v1/ServerInfo HTTP/1.1\r\nConnection: close\r\n".to_owned();
            for host in hosts {
                head += &format!("Host: {host}\r\n");
            }
            head + "\r\n"
        };
        for (hosts, status) in [
            (&["localhost"][..], "HTTP/1.1 200"),
            (&["localhost", "localhost"][..], "HTTP/1.1 400"),
            (&["localhost", "evil.example"][..], "HTTP/1.1 400"),
            (&["evil.example", "localhost"][..], "HTTP/1.1 400"),
        ] {
            let mut tcp = tokio::net::TcpStream::connect(server.http).await.unwrap();
            let answer = exchange(&mut tcp, get(hosts).as_bytes()).await;
            let text = String::from_utf8_lossy(&answer);
            assert!(text.starts_with(status), "{hosts:?}: {text}");
        }
    }
}
