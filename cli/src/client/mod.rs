//! The `emergo` client subcommands that talk to a bot server (or to an in-process engine with
//! `--local`): analyze and bestmove ([`analyze`]), [`play`], [`review`], [`loadtest`] and
//! [`arena`], one module (or folder) each.
//!
//! This module holds what they share: connection flags and [`connect`], the one place that
//! opens a connection (plaintext for `http://`, verified TLS for `https://`, anything else
//! refused), the bearer-token and game-affinity headers, and [`Backend`], which answers
//! Analyze/BestMove either over gRPC or in-process with the very same engine the server runs,
//! so every tool has one code path for both. Beside it: the shared flags ([`flags`]), Ctrl-C
//! ([`interrupt`]), text tables ([`table`]) and the records' dates ([`date`]).

pub mod analyze;
pub mod arena;
pub mod date;
pub mod flags;
pub mod interrupt;
pub mod loadtest;
pub mod play;
pub use emergo_rules::record;
pub mod review;
pub mod table;

pub use flags::{BackendArgs, PriorityArg, SearchFlags, parse_duration};

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use emergo_proto::v1 as pb;
use emergo_proto::v1::emergo_bot_client::EmergoBotClient;
use tokio::sync::mpsc;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, ClientTlsConfig, Endpoint};
use tonic::{Request, Status};

use emergo_bot_server::config::ServerConfig;
use emergo_bot_server::runner::Engine;
use emergo_bot_server::service::Service;
use tokio_stream::wrappers::ReceiverStream;

/// Metadata header mirroring `SearchOptions.game_id`, so a load balancer can hash a game's
/// requests to one replica (tree reuse) without parsing protobuf.
pub const GAME_HEADER: &str = "x-emergo-game";

/// Errors of the client tools.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// Could not reach the server. tonic's transport error reads just "transport error"; the
    /// cause (connection refused, no such host, an untrusted certificate) is further down the
    /// source chain and is what the user needs to see, so the message carries the whole chain.
    #[error("cannot connect to {url}: {}", connect_text(url, .source))]
    Connect {
        /// The URL.
        url: String,
        /// Why.
        source: tonic::transport::Error,
    },
    /// The server answered with an error status, or the call failed on the way (then the
    /// transport's cause follows the message, as for [`ClientError::Connect`]).
    #[error("{}", status_text(.0))]
    Rpc(#[from] Status),
    /// Bad flags or input.
    #[error("{0}")]
    Invalid(String),
    /// Reading input or writing output failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// An error and its sources, each said once (layers often repeat their inner error's text).
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut last = text.clone();
    let mut cause = error.source();
    while let Some(c) = cause {
        let next = c.to_string();
        if next != last && !last.ends_with(&next) {
            text += &format!(": {next}");
        }
        last = next;
        cause = c.source();
    }
    text
}

/// Why a connection failed, in the user's terms where the cause is a common one (nothing
/// listening, an unknown host), else the transport's whole error chain.
fn connect_text(url: &str, error: &tonic::transport::Error) -> String {
    let address = url
        .parse::<http::Uri>()
        .ok()
        .and_then(|u| u.authority().map(ToString::to_string))
        .unwrap_or_else(|| url.to_owned());
    let mut cause: Option<&dyn std::error::Error> = Some(error);
    while let Some(c) = cause {
        if let Some(io) = c.downcast_ref::<std::io::Error>() {
            match io.kind() {
                std::io::ErrorKind::ConnectionRefused => {
                    return format!(
                        "connection refused \u{2014} is bot-server running on {address}? \
                         (or use --local)"
                    );
                }
                std::io::ErrorKind::TimedOut => {
                    return format!("timed out \u{2014} is {address} reachable?");
                }
                _ => {}
            }
        }
        cause = c.source();
    }
    let chain = error_chain(error);
    if chain.contains("dns error") || chain.contains("failed to lookup address") {
        return format!("no such host ({chain})");
    }
    // rustls reading a plaintext HTTP/2 answer where a TLS record should be.
    if url.starts_with("https://")
        && (chain.contains("InvalidContentType") || chain.contains("corrupt message"))
    {
        return format!(
            "the server at {address} does not speak TLS: use http://{address} \
             (or start bot-server with --tls-cert and --tls-key)"
        );
    }
    chain
}

/// What a failed call's text means when it is not obvious: an HTTP (JSON) server answering a
/// gRPC call reads "invalid compression flag 123" (123 is `{`, the first byte of its JSON body).
fn status_hint(text: &str) -> Option<&'static str> {
    text.contains("invalid compression flag").then_some(
        "the server answered with HTTP, not gRPC: --server looks like the HTTP gateway \
         (bot-server --http-listen, port 8080 by default), not the gRPC port (50051 by default)",
    )
}

/// A status as `CODE: message`, with the cause of a call that failed in the transport (a
/// plaintext client talking to a TLS port reads "UNKNOWN: transport error" without it), and a
/// hint where the text alone misleads ([`status_hint`]).
fn status_text(status: &Status) -> String {
    let text = status_chain(status);
    match status_hint(&text) {
        Some(hint) => format!("{text} ({hint})"),
        None => text,
    }
}

/// `CODE: message` and the transport's cause.
fn status_chain(status: &Status) -> String {
    let head = format!(
        "{}: {}",
        emergo_bot_server::metrics::code_name(status.code()),
        status.message()
    );
    match std::error::Error::source(status) {
        Some(cause) => {
            let cause = error_chain(cause);
            if head.ends_with(&cause) {
                head
            } else {
                format!("{head}: {cause}")
            }
        }
        None => head,
    }
}

/// Flags for reaching a server.
#[derive(Clone, Debug, Args)]
pub struct ConnectArgs {
    /// The bot server's URL: `http://HOST:PORT` (plaintext) or `https://HOST:PORT` (TLS,
    /// checked against the system's CA certificates and --ca-cert).
    #[arg(long, env = "EMERGO_SERVER", default_value = "http://127.0.0.1:50051")]
    pub server: String,
    /// Bearer token, if the server requires one.
    #[arg(long, env = "EMERGO_AUTH_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// PEM file of CA certificates to trust for an `https://` server besides the system's
    /// (a private CA, or a self-signed server certificate).
    #[arg(long, env = "EMERGO_CA_CERT", value_name = "PATH")]
    pub ca_cert: Option<PathBuf>,
}

impl ConnectArgs {
    /// Flags for `server` with no token and no extra CA.
    pub fn new(server: impl Into<String>) -> ConnectArgs {
        ConnectArgs {
            server: server.into(),
            token: None,
            ca_cert: None,
        }
    }
}

/// Longest TLS handshake the client waits for: a server that accepts TCP connections but
/// never answers the handshake must fail the tool, not hang it.
pub const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Whether a server URL asks for TLS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// `http://`: plaintext HTTP/2.
    Plaintext,
    /// `https://`: HTTP/2 over TLS.
    Tls,
}

/// Checks a server URL: `http://` or `https://` with a host, or a bare `HOST:PORT`, taken as
/// `http://HOST:PORT`. Anything else is refused here
/// rather than left to the transport, which would speak plaintext to an unknown scheme.
pub fn check_server_url(url: &str) -> Result<(http::Uri, Transport), String> {
    let mut uri: http::Uri = url.parse().map_err(|e| format!("not a URL: {e}"))?;
    // A bare HOST:PORT (no scheme, no path) means plaintext, as it does for grpcurl.
    if uri.scheme().is_none() && uri.authority().is_some() && uri.path_and_query().is_none() {
        uri = format!("http://{url}")
            .parse()
            .map_err(|e| format!("not a URL: {e}"))?;
    }
    let transport = match uri.scheme_str() {
        Some("http") => Transport::Plaintext,
        Some("https") => Transport::Tls,
        Some(other) => {
            return Err(format!(
                "unsupported scheme {other:?}: use http://HOST:PORT (plaintext) or \
                 https://HOST:PORT (TLS)"
            ));
        }
        None => {
            return Err(
                "no scheme: use http://HOST:PORT (plaintext) or https://HOST:PORT (TLS)".to_owned(),
            );
        }
    };
    if uri.host().is_none_or(str::is_empty) {
        return Err("no host in it".to_owned());
    }
    Ok((uri, transport))
}

/// The endpoint for `args.server`, with TLS set up for `https://`. Nothing is sent yet.
pub fn endpoint(args: &ConnectArgs) -> Result<Endpoint, ClientError> {
    let invalid = |why: String| ClientError::Invalid(format!("--server {:?}: {why}", args.server));
    let (uri, transport) = check_server_url(&args.server).map_err(invalid)?;
    let endpoint = Endpoint::from(uri.clone()).tcp_nodelay(true);
    match transport {
        // --ca-cert (perhaps from the environment) has nothing to do with plaintext: ignored,
        // as curl ignores --cacert for http:// URLs.
        Transport::Plaintext => Ok(endpoint),
        Transport::Tls => tls_endpoint(endpoint, &uri, args),
    }
}

/// TLS for an `https://` endpoint: the server's certificate must chain to a system CA or to
/// one from `--ca-cert`, and name the URL's host.
fn tls_endpoint(
    endpoint: Endpoint,
    uri: &http::Uri,
    args: &ConnectArgs,
) -> Result<Endpoint, ClientError> {
    // An IPv6 host comes bracketed in a URL ("[::1]"); certificates name the bare address.
    let host = uri.host().unwrap_or_default();
    let domain = host.trim_start_matches('[').trim_end_matches(']');
    let mut config = ClientTlsConfig::new()
        .domain_name(domain)
        .timeout(TLS_HANDSHAKE_TIMEOUT);
    if let Some(path) = &args.ca_cert {
        let roots = emergo_bot_server::tls::ca_roots(path)
            .map_err(|e| ClientError::Invalid(format!("--ca-cert {e}")))?;
        config = config.trust_anchors(roots);
    }
    // tonic refuses the whole configuration when the system has no CA certificates at all
    // (a minimal container); with --ca-cert that is no reason to fail.
    match endpoint
        .clone()
        .tls_config(config.clone().with_native_roots())
    {
        Ok(endpoint) => Ok(endpoint),
        Err(_) if args.ca_cert.is_some() => endpoint.tls_config(config).map_err(|e| {
            ClientError::Invalid(format!(
                "--server {:?}: cannot set up TLS: {}",
                args.server,
                error_chain(&e)
            ))
        }),
        Err(e) => Err(ClientError::Invalid(format!(
            "--server {:?}: cannot set up TLS: {} (no CA certificates on this system? \
             give the server's CA with --ca-cert)",
            args.server,
            error_chain(&e)
        ))),
    }
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

/// Connects to `args.server` ([`endpoint`]): every tool that talks to a server comes here.
pub async fn connect(args: &ConnectArgs) -> Result<Client, ClientError> {
    let channel = endpoint(args)?
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

/// Where searches run: a server over gRPC, or the very same service in this process.
#[derive(Clone)]
pub enum Backend {
    /// A bot server.
    Remote(Client),
    /// The server's service core, in-process (`--local`): the same checks, engine, logging
    /// and metrics as a server's, without the transport.
    Local(Service),
}

/// A stream item of Analyze, as the tools see it (a local error becomes the status a server
/// would have sent).
pub type UpdateResult = Result<pb::AnalysisUpdate, Status>;

/// Forwards a stream's items into a channel until its end or its first error.
fn forward<T: Send + 'static, E: Send + 'static>(
    mut stream: impl futures_util::Stream<Item = Result<T, E>> + Send + Unpin + 'static,
    convert: fn(E) -> Status,
) -> mpsc::Receiver<Result<T, Status>> {
    use futures_util::StreamExt as _;
    let (tx, rx) = mpsc::channel(16);
    tokio::spawn(async move {
        while let Some(item) = stream.next().await {
            let end = item.is_err();
            if tx.send(item.map_err(convert)).await.is_err() || end {
                break;
            }
        }
    });
    rx
}

fn identity(status: Status) -> Status {
    status
}

fn game_id_of(options: Option<&pb::SearchOptions>) -> String {
    options.map(|o| o.game_id.clone()).unwrap_or_default()
}

impl Backend {
    /// The service in-process, with the server's defaults.
    pub fn local() -> Backend {
        let engine = Arc::new(Engine::new(ServerConfig::default()));
        Backend::Local(Service::new(engine))
    }

    /// Connects to the server of `args`, or builds a local engine with `--local`.
    pub async fn open(args: &BackendArgs) -> Result<Backend, ClientError> {
        if args.local {
            Ok(Backend::local())
        } else {
            Ok(Backend::Remote(connect(&args.connect).await?))
        }
    }

    /// Starts an analysis; updates (the last one final) arrive on the returned channel.
    pub async fn analyze(
        &self,
        req: pb::AnalyzeRequest,
    ) -> Result<mpsc::Receiver<UpdateResult>, ClientError> {
        Ok(match self {
            Backend::Remote(client) => {
                let game_id = game_id_of(req.options.as_ref());
                let stream = client
                    .clone()
                    .analyze(request_with_game(req, &game_id))
                    .await?
                    .into_inner();
                forward(stream, identity)
            }
            Backend::Local(service) => {
                let rx = service.analyze(req, None).await.map_err(Status::from)?;
                forward(ReceiverStream::new(rx), Status::from)
            }
        })
    }

    /// Starts a game review (AnalyzeGame); its turns, then its summary, arrive on the returned
    /// channel. With `--local` the very same service runs in this process.
    pub async fn analyze_game(
        &self,
        req: pb::AnalyzeGameRequest,
    ) -> Result<mpsc::Receiver<Result<pb::GameReviewUpdate, Status>>, ClientError> {
        Ok(match self {
            Backend::Remote(client) => {
                let stream = client.clone().analyze_game(req).await?.into_inner();
                forward(stream, identity)
            }
            Backend::Local(service) => {
                let rx = service
                    .analyze_game(req, None)
                    .await
                    .map_err(Status::from)?;
                forward(ReceiverStream::new(rx), Status::from)
            }
        })
    }

    /// Ends the search `search_id` early with its answer (its own call gets the final update).
    pub async fn stop_search(&self, search_id: &str) -> Result<bool, ClientError> {
        let req = pb::StopSearchRequest {
            search_id: search_id.to_owned(),
        };
        Ok(match self {
            Backend::Remote(client) => client.clone().stop_search(req).await?.into_inner(),
            Backend::Local(service) => service.stop_search(req).map_err(Status::from)?,
        }
        .stopped)
    }

    /// Asks for the best move.
    pub async fn best_move(
        &self,
        req: pb::BestMoveRequest,
    ) -> Result<pb::BestMoveResponse, ClientError> {
        match self {
            Backend::Remote(client) => {
                let game_id = game_id_of(req.options.as_ref());
                Ok(client
                    .clone()
                    .best_move(request_with_game(req, &game_id))
                    .await?
                    .into_inner())
            }
            Backend::Local(service) => {
                Ok(service.best_move(req, None).await.map_err(Status::from)?)
            }
        }
    }
}

/// `1 turn`, `2 turns`: a count with its noun in the right number (`noun` takes an `s`).
pub fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_pluralised() {
        assert_eq!(count(1, "turn"), "1 turn");
        assert_eq!(count(0, "turn"), "0 turns");
        assert_eq!(count(2, "game"), "2 games");
    }

    fn endpoint_error(server: &str, ca_cert: Option<&str>) -> String {
        let mut args = ConnectArgs::new(server);
        args.ca_cert = ca_cert.map(PathBuf::from);
        match endpoint(&args) {
            Ok(_) => panic!("{server} accepted"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn schemes_decide_the_transport() {
        assert!(endpoint(&ConnectArgs::new("http://127.0.0.1:50051")).is_ok());
        assert!(endpoint(&ConnectArgs::new("http://[::1]:50051")).is_ok());
        let e = endpoint_error("ftp://127.0.0.1:50051", None);
        assert!(
            e.contains("--server") && e.contains("unsupported scheme \"ftp\""),
            "{e}"
        );
        // A bare HOST:PORT is plaintext.
        let (uri, transport) = check_server_url("127.0.0.1:50051").unwrap();
        assert_eq!(uri.to_string(), "http://127.0.0.1:50051/");
        assert_eq!(transport, Transport::Plaintext);
        assert!(check_server_url("localhost:50051").is_ok());
        let e = endpoint_error("unix:/tmp/socket", None);
        assert!(e.contains("--server"), "{e}");
        let e = endpoint_error("https://localhost:1", Some("/nonexistent/ca.pem"));
        assert!(e.contains("--ca-cert /nonexistent/ca.pem"), "{e}");
        // A plaintext URL ignores a CA file (it may come from the environment).
        let mut args = ConnectArgs::new("http://127.0.0.1:50051");
        args.ca_cert = Some("/nonexistent/ca.pem".into());
        assert!(endpoint(&args).is_ok());
    }

    /// An HTTP server behind --server is named as the likely mistake.
    #[test]
    fn http_gateway_by_mistake_is_explained() {
        let status = Status::internal(
            "protocol error: received message with invalid compression flag: 123 (valid flags are 0 and 1) while receiving response with status: 404 Not Found",
        );
        let text = ClientError::Rpc(status).to_string();
        assert!(
            text.contains("HTTP gateway") && text.contains("gRPC port"),
            "{text}"
        );
        assert_eq!(status_hint("UNAVAILABLE: server busy"), None);
    }

    #[test]
    fn https_with_a_private_ca() {
        let ca = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
        let path =
            std::env::temp_dir().join(format!("emergo-client-ca-{}.pem", std::process::id()));
        std::fs::write(&path, ca.cert.pem()).unwrap();
        let mut args = ConnectArgs::new("https://localhost:50051");
        args.ca_cert = Some(path.clone());
        assert!(endpoint(&args).is_ok());
        args.server = "https://[::1]:50051".to_owned();
        assert!(endpoint(&args).is_ok());
        std::fs::remove_file(path).unwrap();
    }
}
