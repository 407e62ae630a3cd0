//! Serving connections on a listener: the accept loop, the connection cap, timeouts, HTTP/2
//! keepalive, TLS, and a bounded graceful stop. All three ports (gRPC, HTTP, metrics) go
//! through [`serve`], so they share one set of protections against clients that connect and
//! then do nothing, dribble their headers, stall a body, or open connections by the hundred.
//!
//! Why not `tonic::transport::Server` / `axum::serve`: neither bounds a silent connection
//! (hyper's automatic protocol detection waits for the first bytes forever), neither caps
//! connections or backs off when `accept` fails with "too many open files", and tonic answers
//! an expired deadline with `CANCELLED`. Here both are plain `axum::Router`s served by
//! hyper-util on connections this module watches.
//!
//! Each connection is watched by its own task (see `Activity`): requests in flight, bytes
//! read and written. While no request is in flight, a connection is closed when it
//! - sent nothing at all within the header timeout of connecting (a silent connection);
//! - (HTTP/1) started a request but did not finish its headers within the header timeout;
//! - has been idle for the idle timeout since its last request ended.
//!
//! While a request is in flight, its body must not stall longer than the body timeout between
//! two pieces of data, and a connection that makes no progress at all (no byte read or
//! written) for the stall timeout is dropped. HTTP/2 connections are pinged when quiet and
//! dropped when a ping goes unanswered.
//!
//! The cap counts connections across all ports (one file descriptor each) and never exceeds
//! what the process's open-file limit allows. A new connection at the cap takes the place of
//! the longest-idle connection, preferring one that never sent a request; if every connection
//! is busy, the new one is closed at once. So a flood of silent connections cannot lock out
//! real clients, and the accept loop never spins on errors: it backs off.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, watch};
use tokio::task::JoinSet;
use tower::ServiceExt;

use crate::config::ServerConfig;

/// How one port serves its connections.
#[derive(Clone)]
pub struct ServeOptions {
    /// A name for logs and metrics: `grpc`, `http` or `metrics`.
    pub port: &'static str,
    /// HTTP/2 with prior knowledge only (gRPC): the connection fails on anything but the
    /// HTTP/2 preface, so no HTTP/1.1 request reaches the router. Otherwise HTTP/1.1 and HTTP/2,
    /// told apart by the first bytes. Under TLS the acceptor's ALPN list must agree (`h2` only,
    /// see `crate::tls`).
    pub http2_only: bool,
    /// TLS handshake, first bytes and HTTP/1 headers must arrive within this.
    pub header_timeout: Duration,
    /// Longest a request body may stall between two pieces of data.
    pub body_timeout: Duration,
    /// A connection with no request in flight is closed after this long.
    pub idle_timeout: Duration,
    /// A connection with a request in flight but no byte read or written for this long is
    /// dropped (a client that stopped reading its answer).
    pub stall_timeout: Duration,
    /// HTTP/2 ping interval on a quiet connection.
    pub keepalive_interval: Duration,
    /// How long a ping may go unanswered.
    pub keepalive_timeout: Duration,
    /// TLS, when the server has a certificate.
    pub tls: Option<tokio_rustls::TlsAcceptor>,
}

impl std::fmt::Debug for ServeOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServeOptions")
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}

impl ServeOptions {
    /// The options for `port` from the server's flags (TLS is added by the caller).
    pub fn from_config(port: &'static str, config: &ServerConfig) -> ServeOptions {
        let idle_timeout = Duration::from_millis(config.idle_timeout_ms.max(1));
        ServeOptions {
            port,
            http2_only: false,
            header_timeout: Duration::from_millis(config.header_timeout_ms.max(1)),
            body_timeout: Duration::from_millis(config.body_timeout_ms.max(1)),
            idle_timeout,
            // A BestMove may legitimately write nothing for its whole search.
            stall_timeout: idle_timeout
                .max(Duration::from_millis(u64::from(config.max_time_ms)) + STALL_MARGIN),
            keepalive_interval: Duration::from_millis(config.keepalive_interval_ms.max(1)),
            keepalive_timeout: Duration::from_millis(config.keepalive_timeout_ms.max(1)),
            tls: None,
        }
    }
}

/// Slack on top of the longest search before a connection without progress counts as stalled.
const STALL_MARGIN: Duration = Duration::from_secs(10);

/// File descriptors kept free of connections: listeners, the runtime, logs, files.
const RESERVED_FDS: usize = 64;

/// Longest pause of the accept loop after repeated errors.
const MAX_ACCEPT_BACKOFF: Duration = Duration::from_secs(1);

/// Open connections across the server's ports, and the cap on them.
pub struct Connections {
    cap: usize,
    next_id: AtomicU64,
    open: Mutex<HashMap<u64, Arc<Activity>>>,
    refused: AtomicU64,
    evicted: AtomicU64,
}

impl std::fmt::Debug for Connections {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connections")
            .field("cap", &self.cap)
            .field("refused", &self.refused)
            .field("evicted", &self.evicted)
            .finish_non_exhaustive()
    }
}

impl Connections {
    /// A registry allowing `max` connections, lowered to what the open-file limit allows.
    pub fn new(max: usize) -> Arc<Connections> {
        let cap = match open_file_limit() {
            Some(limit) => max.min(limit.saturating_sub(RESERVED_FDS).max(1)),
            None => max,
        }
        .max(1);
        Arc::new(Connections {
            cap,
            next_id: AtomicU64::new(0),
            open: Mutex::new(HashMap::new()),
            refused: AtomicU64::new(0),
            evicted: AtomicU64::new(0),
        })
    }

    /// The effective cap.
    pub fn cap(&self) -> usize {
        self.cap
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.lock().len()
    }

    /// Connections closed at once because every connection was busy.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// Idle connections closed to make room for new ones.
    pub fn evicted(&self) -> u64 {
        self.evicted.load(Ordering::Relaxed)
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<u64, Arc<Activity>>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers a new connection, evicting the longest-idle one at the cap; `None` when all
    /// are busy.
    fn admit(self: &Arc<Self>) -> Option<Slot> {
        let mut open = self.lock();
        if open.len() >= self.cap {
            let victim = open
                .iter()
                .filter(|(_, a)| a.in_flight.load(Ordering::Acquire) == 0)
                .min_by_key(|(_, a)| (a.served() > 0, a.idle_since_ms()))
                .map(|(id, _)| *id);
            match victim.and_then(|id| open.remove(&id)) {
                Some(victim) => {
                    victim.close_now();
                    self.evicted.fetch_add(1, Ordering::Relaxed);
                }
                None => {
                    self.refused.fetch_add(1, Ordering::Relaxed);
                    return None;
                }
            }
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let activity = Arc::new(Activity::new());
        open.insert(id, activity.clone());
        metrics::gauge!("emergo_open_connections").set(open.len() as f64);
        Some(Slot {
            connections: self.clone(),
            id,
            activity,
        })
    }
}

/// A registered connection; unregisters on drop.
struct Slot {
    connections: Arc<Connections>,
    id: u64,
    activity: Arc<Activity>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.connections.lock();
        open.remove(&self.id);
        metrics::gauge!("emergo_open_connections").set(open.len() as f64);
    }
}

/// The soft open-file limit (Linux: from /proc; elsewhere unknown).
fn open_file_limit() -> Option<usize> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// What the watcher of a connection knows about it. Times are milliseconds since `start`.
struct Activity {
    start: Instant,
    in_flight: AtomicUsize,
    served: AtomicU64,
    /// Last time a request ended (or the connection opened).
    idle_since: AtomicU64,
    /// Last byte read or written.
    last_io: AtomicU64,
    /// First byte read since the connection went idle (0: none); HTTP/1 headers in progress.
    pending_since: AtomicU64,
    read_any: AtomicBool,
    protocol: AtomicU8,
    close: Notify,
}

const PROTOCOL_UNKNOWN: u8 = 0;
const PROTOCOL_HTTP1: u8 = 1;
const PROTOCOL_HTTP2: u8 = 2;

impl Activity {
    fn new() -> Activity {
        Activity {
            start: Instant::now(),
            in_flight: AtomicUsize::new(0),
            served: AtomicU64::new(0),
            idle_since: AtomicU64::new(0),
            last_io: AtomicU64::new(0),
            pending_since: AtomicU64::new(0),
            read_any: AtomicBool::new(false),
            protocol: AtomicU8::new(PROTOCOL_UNKNOWN),
            close: Notify::new(),
        }
    }

    /// Milliseconds since the connection opened, at least 1 (0 means "never" in the fields).
    fn now_ms(&self) -> u64 {
        (self.start.elapsed().as_millis() as u64).max(1)
    }

    fn served(&self) -> u64 {
        self.served.load(Ordering::Relaxed)
    }

    fn idle_since_ms(&self) -> u64 {
        self.idle_since.load(Ordering::Relaxed)
    }

    fn close_now(&self) {
        self.close.notify_one();
    }

    fn on_read(&self, first_bytes: &[u8]) {
        let now = self.now_ms();
        self.last_io.store(now, Ordering::Relaxed);
        if !self.read_any.swap(true, Ordering::Relaxed) {
            // The HTTP/2 connection preface starts "PRI *"; no HTTP/1 method does.
            let protocol = if first_bytes.starts_with(b"PRI") {
                PROTOCOL_HTTP2
            } else {
                PROTOCOL_HTTP1
            };
            let _ = self.protocol.compare_exchange(
                PROTOCOL_UNKNOWN,
                protocol,
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
        }
        if self.in_flight.load(Ordering::Acquire) == 0 {
            let _ =
                self.pending_since
                    .compare_exchange(0, now, Ordering::Relaxed, Ordering::Relaxed);
        }
    }

    fn on_write(&self) {
        self.last_io.store(self.now_ms(), Ordering::Relaxed);
    }

    fn begin(self: &Arc<Self>) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        self.pending_since.store(0, Ordering::Relaxed);
        InFlight(self.clone())
    }

    /// Why an idle connection should be closed now, if it should.
    fn expired(&self, options: &ServeOptions) -> Option<&'static str> {
        let now = self.now_ms();
        let since = |t: u64| Duration::from_millis(now.saturating_sub(t));
        if self.in_flight.load(Ordering::Acquire) > 0 {
            return (since(self.last_io.load(Ordering::Relaxed)) > options.stall_timeout)
                .then_some("no progress on a request in flight");
        }
        if !self.read_any.load(Ordering::Relaxed) {
            return (since(0) > options.header_timeout).then_some("sent nothing");
        }
        let pending = self.pending_since.load(Ordering::Relaxed);
        if pending > 0
            && self.protocol.load(Ordering::Relaxed) == PROTOCOL_HTTP1
            && since(pending) > options.header_timeout
        {
            return Some("request headers not finished in time");
        }
        (since(self.idle_since_ms()) > options.idle_timeout).then_some("idle")
    }
}

/// One request in flight; ends (the connection may go idle) when dropped with the response
/// body.
struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        let a = &self.0;
        a.served.fetch_add(1, Ordering::Relaxed);
        a.idle_since.store(a.now_ms(), Ordering::Relaxed);
        a.pending_since.store(0, Ordering::Relaxed);
        a.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A byte stream (plain TCP or TLS) that reports reads and writes to its connection's watcher.
struct Watched<T> {
    inner: T,
    activity: Arc<Activity>,
}

impl<T: AsyncRead + Unpin> AsyncRead for Watched<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            let filled = &buf.filled()[before..];
            if !filled.is_empty() {
                self.activity.on_read(filled);
            }
        }
        polled
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Watched<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = polled {
            if n > 0 {
                self.activity.on_write();
            }
        }
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if let Poll::Ready(Ok(n)) = polled {
            if n > 0 {
                self.activity.on_write();
            }
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Plain TCP or TLS over TCP.
trait Stream: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Stream for T {}

/// Serves `router` on `listener` until `stop` turns true; then stops accepting, asks every
/// connection to finish (HTTP/2 GOAWAY, HTTP/1 close after the current response), and returns
/// once they have, or after `grace`, dropping what is left. Returns the number of connections
/// dropped that way.
pub async fn serve(
    listener: TcpListener,
    router: axum::Router,
    options: ServeOptions,
    connections: Arc<Connections>,
    mut stop: watch::Receiver<bool>,
    grace: Duration,
) -> usize {
    let options = Arc::new(options);
    let (drain_tx, drain_rx) = watch::channel(false);
    let mut tasks = JoinSet::new();
    let mut backoff = Duration::ZERO;
    let mut errors_logged = 0u64;
    let mut pause = false;
    loop {
        tokio::select! {
            _ = stop.wait_for(|s| *s) => break,
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
            accepted = listener.accept() => match accepted {
                Ok((tcp, _peer)) => {
                    backoff = Duration::ZERO;
                    let Some(slot) = connections.admit() else {
                        metrics::counter!("emergo_connections_refused_total", "port" => options.port)
                            .increment(1);
                        drop(tcp);
                        continue;
                    };
                    metrics::counter!("emergo_connections_total", "port" => options.port)
                        .increment(1);
                    tasks.spawn(connection(
                        tcp,
                        slot,
                        router.clone(),
                        options.clone(),
                        drain_rx.clone(),
                    ));
                }
                Err(e) if is_connection_error(&e) => {}
                Err(e) => {
                    // Typically "too many open files": retrying at once would spin a core.
                    backoff = (backoff * 2).clamp(Duration::from_millis(5), MAX_ACCEPT_BACKOFF);
                    if errors_logged < 10 || errors_logged % 100 == 0 {
                        tracing::warn!(port = options.port, error = %e, backoff_ms = backoff.as_millis() as u64, "accept failed");
                    }
                    errors_logged += 1;
                    metrics::counter!("emergo_accept_errors_total", "port" => options.port)
                        .increment(1);
                    pause = true;
                }
            },
        }
        if std::mem::take(&mut pause) {
            tokio::select! {
                _ = tokio::time::sleep(backoff) => {}
                _ = stop.wait_for(|s| *s) => break,
            }
        }
    }
    // Refuse new connections from now on (clients get "connection refused" at once), and ask
    // the open ones to finish.
    drop(listener);
    let _ = drain_tx.send(true);
    let drained = async { while tasks.join_next().await.is_some() {} };
    if tokio::time::timeout(grace, drained).await.is_ok() {
        return 0;
    }
    let cut = tasks.len();
    tracing::warn!(
        port = options.port,
        open = cut,
        grace_ms = grace.as_millis() as u64,
        "connections still open after the shutdown grace: dropping them"
    );
    tasks.shutdown().await;
    cut
}

/// Errors of one incoming connection (it went away before accept returned), not of the
/// listener.
fn is_connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

/// Serves one connection and watches it.
async fn connection(
    tcp: TcpStream,
    slot: Slot,
    router: axum::Router,
    options: Arc<ServeOptions>,
    mut drain: watch::Receiver<bool>,
) {
    let activity = slot.activity.clone();
    // Small writes (headers, one message, trailers) must not wait for the peer's delayed ACK.
    let _ = tcp.set_nodelay(true);
    let stream: Box<dyn Stream> = match &options.tls {
        None => Box::new(tcp),
        Some(acceptor) => {
            let handshake = tokio::time::timeout(options.header_timeout, acceptor.accept(tcp));
            tokio::select! {
                done = handshake => match done {
                    Ok(Ok(tls)) => Box::new(tls),
                    Ok(Err(e)) => {
                        tracing::debug!(port = options.port, error = %e, "TLS handshake failed");
                        return;
                    }
                    Err(_) => {
                        tracing::debug!(port = options.port, "TLS handshake timed out");
                        return;
                    }
                },
                _ = activity.close.notified() => return,
                _ = drain.wait_for(|d| *d) => return,
            }
        }
    };
    let io = TokioIo::new(Watched {
        inner: stream,
        activity: activity.clone(),
    });

    let body_timeout = options.body_timeout;
    let tracked = activity.clone();
    let service = hyper::service::service_fn(move |req: http::Request<Incoming>| {
        let in_flight = tracked.begin();
        let router = router.clone();
        async move {
            let req = req.map(|body| {
                axum::body::Body::new(tower_http::timeout::TimeoutBody::new(body_timeout, body))
            });
            let Ok(response) = router.oneshot(req).await;
            // The request counts as in flight until its response body is done or dropped.
            Ok::<_, Infallible>(response.map(move |body| {
                body.map_err(move |e| {
                    let _still_in_flight = &in_flight;
                    e
                })
            }))
        }
    });

    let mut builder = auto::Builder::new(TokioExecutor::new());
    if options.http2_only {
        // The connection starts as HTTP/2 at once: an HTTP/1.1 request fails at the HTTP/2
        // preface, before any route sees it (see `serve_connection` below).
        builder = builder.http2_only();
    }
    builder
        .http1()
        // Header and idle timeouts are the watcher's (hyper's own would also close idle
        // keep-alive connections after the header timeout).
        .header_read_timeout(None)
        .timer(TokioTimer::new())
        .max_buf_size(crate::config::MAX_REQUEST_BYTES.max(64 * 1024) + 16 * 1024);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(options.keepalive_interval)
        .keep_alive_timeout(options.keepalive_timeout)
        .max_concurrent_streams(MAX_STREAMS_PER_CONNECTION)
        .max_header_list_size(MAX_HEADER_BYTES)
        .max_pending_accept_reset_streams(Some(64));
    // Not `serve_connection_with_upgrades`: that one detects the protocol from the first bytes
    // whatever the builder says, so the gRPC port would answer HTTP/1.1, which any web page can
    // send (a `text/plain` POST needs no CORS preflight). No route answers with an upgrade.
    let conn = builder.serve_connection(io, service);
    tokio::pin!(conn);

    let tick = (options.header_timeout.min(options.idle_timeout) / 4)
        .clamp(Duration::from_millis(20), Duration::from_secs(1));
    let mut finishing: Option<Instant> = None;
    loop {
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(e) = result {
                    tracing::debug!(port = options.port, error = %e, "connection ended with an error");
                }
                break;
            }
            _ = activity.close.notified() => {
                tracing::debug!(port = options.port, "idle connection evicted for a new one");
                break;
            }
            _ = drain.wait_for(|d| *d), if finishing.is_none() => {
                conn.as_mut().graceful_shutdown();
                finishing = Some(Instant::now());
            }
            _ = tokio::time::sleep(tick) => {
                if let Some(since) = finishing {
                    // A graceful close of an idle connection takes a round trip at most.
                    if activity.in_flight.load(Ordering::Acquire) == 0
                        && since.elapsed() > FINISH_IDLE
                    {
                        break;
                    }
                } else if let Some(why) = activity.expired(&options) {
                    tracing::debug!(port = options.port, why, "closing connection");
                    metrics::counter!("emergo_connections_timed_out_total", "port" => options.port, "why" => why)
                        .increment(1);
                    if activity.in_flight.load(Ordering::Acquire) > 0 {
                        break;
                    }
                    conn.as_mut().graceful_shutdown();
                    finishing = Some(Instant::now());
                }
            }
        }
    }
    drop(slot);
}

/// How long a connection asked to finish may linger once it has no request in flight.
const FINISH_IDLE: Duration = Duration::from_secs(1);

/// Concurrent HTTP/2 streams per connection (requests beyond it wait in the client).
const MAX_STREAMS_PER_CONNECTION: u32 = 256;

/// Largest header block accepted.
const MAX_HEADER_BYTES: u32 = 64 * 1024;

/// Serves `router` in a task; the future resolves when it has stopped, with the number of
/// connections the grace period cut off.
pub fn spawn(
    listener: TcpListener,
    router: axum::Router,
    options: ServeOptions,
    connections: Arc<Connections>,
    stop: watch::Receiver<bool>,
    grace: Duration,
) -> impl Future<Output = usize> {
    let task = tokio::spawn(serve(listener, router, options, connections, stop, grace));
    async move { task.await.unwrap_or(0) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> ServeOptions {
        ServeOptions {
            port: "test",
            http2_only: false,
            header_timeout: Duration::from_millis(100),
            body_timeout: Duration::from_millis(100),
            idle_timeout: Duration::from_millis(300),
            stall_timeout: Duration::from_millis(500),
            keepalive_interval: Duration::from_secs(1),
            keepalive_timeout: Duration::from_secs(1),
            tls: None,
        }
    }

    #[test]
    fn silent_then_idle_then_stalled() {
        let a = Arc::new(Activity::new());
        let o = options();
        assert_eq!(a.expired(&o), None);
        std::thread::sleep(Duration::from_millis(120));
        assert_eq!(a.expired(&o), Some("sent nothing"));
        a.on_read(b"GET / HTTP/1.1\r\n");
        assert_eq!(a.expired(&o), None, "headers have just started");
        std::thread::sleep(Duration::from_millis(120));
        assert_eq!(a.expired(&o), Some("request headers not finished in time"));
        let req = a.begin();
        assert_eq!(a.expired(&o), None, "a request in flight is not idle");
        drop(req);
        assert_eq!(a.expired(&o), None, "a request just ended");
        std::thread::sleep(Duration::from_millis(320));
        assert_eq!(a.expired(&o), Some("idle"));
        let _req = a.begin();
        std::thread::sleep(Duration::from_millis(520));
        assert_eq!(a.expired(&o), Some("no progress on a request in flight"));
    }

    #[test]
    fn http2_control_frames_are_not_slow_headers() {
        let a = Arc::new(Activity::new());
        let o = options();
        a.on_read(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
        std::thread::sleep(Duration::from_millis(150));
        assert_eq!(a.expired(&o), None, "idle timeout, not header timeout");
    }

    #[test]
    fn cap_evicts_the_longest_idle_connection_first() {
        let c = Arc::new(Connections {
            cap: 2,
            next_id: AtomicU64::new(0),
            open: Mutex::new(HashMap::new()),
            refused: AtomicU64::new(0),
            evicted: AtomicU64::new(0),
        });
        let busy = c.admit().expect("room");
        let _busy_request = busy.activity.begin();
        let idle = c.admit().expect("room");
        let newcomer = c.admit().expect("evicts the idle one");
        assert_eq!((c.open(), c.evicted()), (2, 1));
        drop(idle);
        assert_eq!(c.open(), 2, "the evicted slot was already removed");
        let _r = newcomer.activity.begin();
        assert!(c.admit().is_none(), "everyone busy: refused");
        assert_eq!(c.refused(), 1);
    }

    /// An HTTP/2-only port closes an HTTP/1.1 connection at its first line: the router never
    /// sees the request, so no handler can run for it.
    #[tokio::test]
    async fn http2_only_port_refuses_http1_before_routing() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let routed = Arc::new(AtomicUsize::new(0));
        let counter = routed.clone();
        let router = axum::Router::new().fallback(move || {
            counter.fetch_add(1, Ordering::SeqCst);
            async { "routed" }
        });
        for http2_only in [true, false] {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let (stop_tx, stop_rx) = watch::channel(false);
            let served = spawn(
                listener,
                router.clone(),
                ServeOptions {
                    http2_only,
                    ..options()
                },
                Connections::new(8),
                stop_rx,
                Duration::from_secs(1),
            );
            let mut tcp = TcpStream::connect(addr).await.unwrap();
            tcp.write_all(b"POST /any HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
                .await
                .unwrap();
            let mut answer = Vec::new();
            let read = tokio::time::timeout(Duration::from_secs(5), tcp.read_to_end(&mut answer));
            let _ = read.await.expect("the connection stayed open");
            let answer = String::from_utf8_lossy(&answer);
            if http2_only {
                assert!(!answer.starts_with("HTTP/1.1 200"), "{answer}");
                assert_eq!(routed.load(Ordering::SeqCst), 0, "the router ran");
            } else {
                assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
                assert_eq!(routed.load(Ordering::SeqCst), 1);
            }
            let _ = stop_tx.send(true);
            served.await;
        }
    }

    #[test]
    fn open_file_limit_is_read() {
        if cfg!(target_os = "linux") {
            assert!(open_file_limit().is_some_and(|n| n > 0));
        }
    }
}
