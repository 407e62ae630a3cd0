//! Server configuration: command-line flags with environment fallbacks and embedded defaults.

use std::net::SocketAddr;
use std::time::Duration;

use clap::Args;
use emergo_engine::MctsConfig;

/// Everything the server can be told. Each flag has an `EMERGO_*` environment fallback and a
/// default that runs well on a laptop, so `bot-server` with no arguments is a working server.
#[derive(Clone, Debug, Args)]
pub struct ServerConfig {
    /// Address for gRPC. Loopback by default: pass 0.0.0.0:50051 to accept other hosts.
    #[arg(long, env = "EMERGO_LISTEN", default_value = "127.0.0.1:50051")]
    pub listen: SocketAddr,

    /// Address for the HTTP/JSON gateway and the web board.
    #[arg(long, env = "EMERGO_HTTP_LISTEN", default_value = "127.0.0.1:8080")]
    pub http_listen: SocketAddr,

    /// Do not serve the HTTP gateway and web board.
    #[arg(long, env = "EMERGO_NO_HTTP")]
    pub no_http: bool,

    /// Search threads the whole server may run at once (0 = number of CPU cores).
    #[arg(long, env = "EMERGO_THREADS", default_value_t = 0)]
    pub threads: usize,

    /// Most search threads one request may ask for (0 = the thread budget).
    #[arg(long, env = "EMERGO_MAX_THREADS_PER_REQUEST", default_value_t = 0)]
    pub max_threads_per_request: usize,

    /// Requests that may wait for free threads; more are refused with RESOURCE_EXHAUSTED.
    #[arg(long, env = "EMERGO_MAX_QUEUE", default_value_t = 32)]
    pub max_queue: usize,

    /// Longest a request waits for threads before it is refused with RESOURCE_EXHAUSTED (ms).
    #[arg(long, env = "EMERGO_MAX_QUEUE_WAIT_MS", default_value_t = 10_000)]
    pub max_queue_wait_ms: u64,

    /// Longest search a request may ask for (ms).
    #[arg(long, env = "EMERGO_MAX_TIME_MS", default_value_t = 60_000)]
    pub max_time_ms: u32,

    /// Largest playout budget a request may ask for.
    #[arg(long, env = "EMERGO_MAX_PLAYOUTS", default_value_t = 50_000_000)]
    pub max_playouts: u64,

    /// Largest search tree (nodes) of one search.
    #[arg(long, env = "EMERGO_MAX_NODES", default_value_t = 4_000_000)]
    pub max_nodes: usize,

    /// Games whose search tree is kept for reuse (least recently used ones are dropped).
    #[arg(long, env = "EMERGO_KEPT_GAMES", default_value_t = 64)]
    pub kept_games: usize,

    /// Total nodes of all kept trees; older trees are dropped beyond it.
    #[arg(long, env = "EMERGO_KEPT_NODES", default_value_t = 8_000_000)]
    pub kept_nodes: usize,

    /// Optional address for Prometheus metrics over HTTP (`/metrics`), e.g. 127.0.0.1:9090.
    #[arg(long, env = "EMERGO_METRICS_LISTEN")]
    pub metrics_listen: Option<SocketAddr>,

    /// When set, every RPC but health needs `authorization: Bearer <token>`. An empty token is
    /// refused at start-up. Prefer --auth-token-file: a command-line token is visible to every
    /// local user in /proc/PID/cmdline.
    #[arg(long, env = "EMERGO_AUTH_TOKEN", hide_env_values = true)]
    pub auth_token: Option<String>,

    /// Reads the bearer token from this file (surrounding whitespace trimmed; it must not be
    /// empty). Conflicts with --auth-token.
    #[arg(long, env = "EMERGO_AUTH_TOKEN_FILE", conflicts_with = "auth_token")]
    pub auth_token_file: Option<std::path::PathBuf>,

    /// Most open connections per port (gRPC, HTTP, metrics each); further connections are
    /// accepted and closed at once, so they cannot starve the ones being served.
    #[arg(long, env = "EMERGO_MAX_CONNECTIONS", default_value_t = 512)]
    pub max_connections: usize,

    /// Longest a connection may take to send a request's headers (and a TLS handshake) (ms).
    #[arg(long, env = "EMERGO_HEADER_TIMEOUT_MS", default_value_t = 10_000)]
    pub header_timeout_ms: u64,

    /// Longest a request body may stall between two pieces of data (ms).
    #[arg(long, env = "EMERGO_BODY_TIMEOUT_MS", default_value_t = 10_000)]
    pub body_timeout_ms: u64,

    /// A connection with no request in progress for this long is closed (ms).
    #[arg(long, env = "EMERGO_IDLE_TIMEOUT_MS", default_value_t = 120_000)]
    pub idle_timeout_ms: u64,

    /// Interval of HTTP/2 keepalive pings on a quiet connection (ms); a peer that does not
    /// answer one within --keepalive-timeout-ms is disconnected.
    #[arg(long, env = "EMERGO_KEEPALIVE_INTERVAL_MS", default_value_t = 30_000)]
    pub keepalive_interval_ms: u64,

    /// How long an HTTP/2 keepalive ping may go unanswered (ms).
    #[arg(long, env = "EMERGO_KEEPALIVE_TIMEOUT_MS", default_value_t = 10_000)]
    pub keepalive_timeout_ms: u64,

    /// Browser origins (e.g. `https://board.example.org`) allowed to call the HTTP gateway
    /// cross-origin; comma-separated or repeated. By default only same-origin pages may.
    #[arg(long = "cors-origin", env = "EMERGO_CORS_ORIGINS", value_delimiter = ',')]
    pub cors_origins: Vec<String>,

    /// Host names (optionally `name:port`) the HTTP gateway answers to, comma-separated or
    /// repeated. Default: on a loopback address only `localhost`, `127.0.0.1` and `[::1]`
    /// (against DNS rebinding); on other addresses any host. `*` allows any.
    #[arg(long = "allowed-host", env = "EMERGO_ALLOWED_HOSTS", value_delimiter = ',')]
    pub allowed_hosts: Vec<String>,

    /// Log format: `text` (coloured only on a terminal) or `json` (one object per line).
    #[arg(long, env = "EMERGO_LOG_FORMAT", default_value = "text", value_parser = ["text", "json"])]
    pub log_format: String,

    /// PEM certificate chain: serve gRPC and HTTP over TLS (needs --tls-key).
    #[arg(long, env = "EMERGO_TLS_CERT", requires = "tls_key")]
    pub tls_cert: Option<std::path::PathBuf>,

    /// PEM private key for --tls-cert.
    #[arg(long, env = "EMERGO_TLS_KEY", requires = "tls_cert")]
    pub tls_key: Option<std::path::PathBuf>,

    /// Name of this replica, reported by ServerInfo (default: the host name).
    #[arg(long, env = "EMERGO_NAME")]
    pub name: Option<String>,

    /// Longest graceful shutdown (ms): after SIGINT/SIGTERM the server refuses new work and
    /// finishes its searches; clients that still hold requests open after this long (a stream
    /// they never read, a body that never ends) are cut off and the process exits. 0 = the
    /// longest search budget (--max-time-ms) plus 5 s. A second signal exits at once.
    #[arg(long, env = "EMERGO_SHUTDOWN_GRACE_MS", default_value_t = 0)]
    pub shutdown_grace_ms: u64,

    /// The search configuration, as comma-separated settings applied in order to the default
    /// (the strongest measured): `config=uniform` for the first version's engine, or tuning
    /// keys `c`, `fpu`, `sel=uct|puct`, `pw`, `minimax`, `cutoff`, `prune=on|off`, `temp`,
    /// `samples`, `scale`, `leafdepth`. ServerInfo reports the result.
    #[arg(long = "mcts", env = "EMERGO_MCTS", default_value = "config=strong", value_parser = parse_mcts)]
    pub mcts: MctsConfig,
}

/// Parses `--mcts`: settings `key=value` separated by commas, applied to the default.
pub fn parse_mcts(text: &str) -> Result<MctsConfig, String> {
    let mut config = MctsConfig::default();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (key, value) = item
            .split_once('=')
            .ok_or_else(|| format!("{item:?} is not key=value"))?;
        config.set(key.trim(), value.trim())?;
    }
    Ok(config)
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 50051)),
            http_listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            no_http: false,
            threads: 0,
            max_threads_per_request: 0,
            max_queue: 32,
            max_queue_wait_ms: 10_000,
            max_time_ms: 60_000,
            max_playouts: 50_000_000,
            max_nodes: 4_000_000,
            kept_games: 64,
            kept_nodes: 8_000_000,
            metrics_listen: None,
            auth_token: None,
            auth_token_file: None,
            max_connections: 512,
            header_timeout_ms: 10_000,
            body_timeout_ms: 10_000,
            idle_timeout_ms: 120_000,
            keepalive_interval_ms: 30_000,
            keepalive_timeout_ms: 10_000,
            cors_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            log_format: "text".to_owned(),
            tls_cert: None,
            tls_key: None,
            name: None,
            shutdown_grace_ms: 0,
            mcts: MctsConfig::default(),
        }
    }
}

impl ServerConfig {
    /// The server-wide search-thread budget.
    pub fn thread_budget(&self) -> usize {
        if self.threads > 0 {
            self.threads
        } else {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        }
    }

    /// Most threads per request.
    pub fn threads_per_request(&self) -> usize {
        let budget = self.thread_budget();
        if self.max_threads_per_request == 0 {
            budget
        } else {
            self.max_threads_per_request.min(budget)
        }
    }

    /// Longest wait in the queue.
    pub fn max_queue_wait(&self) -> Duration {
        Duration::from_millis(self.max_queue_wait_ms)
    }

    /// How long a graceful shutdown may take before connections are dropped.
    pub fn shutdown_grace(&self) -> Duration {
        if self.shutdown_grace_ms > 0 {
            Duration::from_millis(self.shutdown_grace_ms)
        } else {
            Duration::from_millis(u64::from(self.max_time_ms)) + Duration::from_secs(5)
        }
    }

    /// The replica name.
    pub fn replica_name(&self) -> String {
        self.name.clone().unwrap_or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .map(|s| s.trim().to_owned())
                .ok()
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "emergo-bot".to_owned())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcts_settings_parse() {
        assert_eq!(parse_mcts("config=strong").unwrap(), MctsConfig::strong());
        assert_eq!(parse_mcts("config=uniform").unwrap(), MctsConfig::uniform());
        let c = parse_mcts("c=0.8, minimax=0.2").unwrap();
        assert_eq!((c.exploration, c.minimax_weight), (0.8, 0.2));
        assert!(parse_mcts("c").unwrap_err().contains("key=value"));
        assert!(parse_mcts("bogus=1").unwrap_err().contains("unknown"));
    }
}
