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

    /// When set, every RPC but health needs `authorization: Bearer <token>`.
    #[arg(long, env = "EMERGO_AUTH_TOKEN", hide_env_values = true)]
    pub auth_token: Option<String>,

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
