//! Server configuration: command-line flags with environment fallbacks and embedded defaults,
//! and [`ServerConfig::validate`], the one check every start-up path goes through.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use emergo_engine::MctsConfig;

use crate::files::{ReadError, read_capped};

/// Largest request message accepted, on every port (a position with 2,000 moves is about
/// 16 KiB).
pub const MAX_REQUEST_BYTES: usize = 256 * 1024;

/// Everything the server can be told. Each flag has an `EMERGO_*` environment fallback and a
/// default that runs well on a laptop, so `bot-server` with no arguments is a working server.
#[derive(Clone, Debug, Args)]
pub struct ServerConfig {
    /// Address for gRPC. Loopback by default: pass 0.0.0.0:50051 to accept other hosts.
    #[arg(long, env = "EMERGO_LISTEN", default_value = "127.0.0.1:50051", value_parser = parse_listen_addr)]
    pub listen: SocketAddr,

    /// Address for the HTTP/JSON gateway and the web board.
    #[arg(long, env = "EMERGO_HTTP_LISTEN", default_value = "127.0.0.1:8080", value_parser = parse_listen_addr)]
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

    /// Longest one AnalyzeGame review may take in all (ms, at least 1000). Nine tenths of it
    /// are split evenly over the positions to search, capping each position's time as
    /// total_time_ms does; a review still running when all of it is spent (waiting for
    /// threads) ends with a summary of the turns done (DEADLINE). Without it a review of 2,000
    /// positions could hold a thread for 2,000 × --max-time-ms.
    #[arg(long, env = "EMERGO_MAX_REVIEW_MS", default_value_t = 600_000, value_parser = clap::value_parser!(u64).range(1000..))]
    pub max_review_ms: u64,

    /// Largest playout budget a request may ask for.
    #[arg(long, env = "EMERGO_MAX_PLAYOUTS", default_value_t = 50_000_000)]
    pub max_playouts: u64,

    /// Safety margin kept back from a game clock (Limits.clock) for the network and the
    /// answer's way back (ms): the time manager never plans past the remaining time less this.
    #[arg(long, env = "EMERGO_CLOCK_MARGIN_MS", default_value_t = 50)]
    pub clock_margin_ms: u32,

    /// Largest search tree (nodes) of one search (at least 1000), a cap kept for compatibility
    /// beside --max-tree-memory. A full tree does not stop the search: it reclaims its
    /// least-visited subtrees and grows on, and its statistics say node_cap_reached.
    #[arg(long, env = "EMERGO_MAX_NODES", default_value_t = 4_000_000)]
    pub max_nodes: usize,

    /// Memory all search trees together may hold: running searches and kept trees (at least
    /// 16MiB). A size such as 512MiB, 2GiB, 1G or plain bytes (K, M, G count powers of 1000;
    /// Ki, Mi, Gi powers of 1024). A search gets the budget's share of its threads (budget ×
    /// threads / --threads), evicting kept trees for room; a full tree reclaims and grows on.
    /// Default: a quarter of the machine's memory (the smaller of MemTotal and the cgroup v2
    /// limit), between 256MiB and 16GiB; 1GiB when neither can be read.
    #[arg(long, env = "EMERGO_MAX_TREE_MEMORY", value_name = "SIZE", value_parser = parse_byte_size)]
    pub max_tree_memory: Option<u64>,

    /// Longest a ponder runs after a BestMove that asked for one (SearchOptions.ponder), in
    /// ms; 0 turns pondering off. A ponder searches the game's tree on idle threads until the
    /// game's next request, any request that would wait for threads, or this cap.
    #[arg(long, env = "EMERGO_MAX_PONDER_MS", default_value_t = 60_000)]
    pub max_ponder_ms: u32,

    /// Games whose search tree is kept for reuse (least recently used ones are dropped).
    #[arg(long, env = "EMERGO_KEPT_GAMES", default_value_t = 64)]
    pub kept_games: usize,

    /// Total nodes of all kept trees; older trees are dropped beyond it.
    #[arg(long, env = "EMERGO_KEPT_NODES", default_value_t = 8_000_000)]
    pub kept_nodes: usize,

    /// Optional address for Prometheus metrics over HTTP (/metrics), e.g. 127.0.0.1:9090.
    #[arg(long, env = "EMERGO_METRICS_LISTEN", value_parser = parse_listen_addr)]
    pub metrics_listen: Option<SocketAddr>,

    /// When set, every RPC but health needs authorization: Bearer <token>. An empty token is
    /// refused at start-up rather than turning auth off, and so is one no client could send
    /// (control characters, non-ASCII, surrounding spaces). Prefer --auth-token-file: a
    /// command-line token is visible to every local user in /proc/PID/cmdline.
    #[arg(long, env = "EMERGO_AUTH_TOKEN", hide_env_values = true)]
    pub auth_token: Option<String>,

    /// Reads the bearer token from this file (surrounding whitespace trimmed; it must not be
    /// empty), once at start-up. Conflicts with --auth-token.
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

    /// Browser origins (e.g. https://board.example.org) allowed to call the HTTP gateway
    /// cross-origin; comma-separated or repeated. By default only same-origin pages may.
    #[arg(
        long = "cors-origin",
        env = "EMERGO_CORS_ORIGINS",
        value_delimiter = ','
    )]
    pub cors_origins: Vec<String>,

    /// Host names (optionally name:port) the HTTP gateway answers to, comma-separated or
    /// repeated. Default: on a loopback address only localhost, 127.0.0.1 and [::1]
    /// (against DNS rebinding); on other addresses any host. * allows any.
    #[arg(
        long = "allowed-host",
        env = "EMERGO_ALLOWED_HOSTS",
        value_delimiter = ','
    )]
    pub allowed_hosts: Vec<String>,

    /// Log format: text (coloured only on a terminal) or json (one object per line).
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

    /// The search engine: comma-separated KEY=VALUE settings applied in order to the default
    /// engine (config=strong, the strongest measured), e.g. config=uniform, c=3 or net=none.
    /// --mcts-help lists every key. ServerInfo reports the engine that runs.
    #[arg(long = "mcts", env = "EMERGO_MCTS", default_value = "config=strong", value_parser = parse_mcts)]
    pub mcts: MctsConfig,
}

/// Parses a byte size: plain bytes or a number with a unit (`512MiB`, `2GiB`, `1.5G`, `64 KiB`);
/// K, M, G, T count powers of 1000, Ki, Mi, Gi, Ti powers of 1024 (the `bytesize` crate's
/// rules). Sizes beyond `u64` saturate.
pub fn parse_byte_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    text.parse::<bytesize::ByteSize>()
        .map(|size| size.as_u64())
        .map_err(|_| {
            format!(
                "{:?} is not a size: give bytes or a number with a unit, such as 512MiB, 2GiB or 1G",
                text.chars().take(40).collect::<String>()
            )
        })
}

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// Smallest `--max-tree-memory`: room for a few searches' trees of a useful size.
pub const MIN_TREE_MEMORY: u64 = 16 * MIB;

/// The default `--max-tree-memory` for a machine with `mem_total` bytes of memory
/// (`/proc/meminfo` MemTotal) and a cgroup v2 limit of `cgroup_max` bytes: a quarter of the
/// smaller, clamped to 256 MiB ..= 16 GiB; 1 GiB when neither is known.
pub fn default_tree_memory_for(mem_total: Option<u64>, cgroup_max: Option<u64>) -> u64 {
    let memory = match (mem_total, cgroup_max) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    memory.map_or(GIB, |m| (m / 4).clamp(256 * MIB, 16 * GIB))
}

/// The default `--max-tree-memory` of this machine ([`default_tree_memory_for`] with what
/// `/proc/meminfo` and `/sys/fs/cgroup/memory.max` say).
pub fn default_tree_memory() -> u64 {
    let mem_total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| meminfo_total(&text));
    let cgroup_max = std::fs::read_to_string("/sys/fs/cgroup/memory.max")
        .ok()
        .and_then(|text| text.trim().parse::<u64>().ok());
    default_tree_memory_for(mem_total, cgroup_max)
}

/// MemTotal of a `/proc/meminfo` text, in bytes.
fn meminfo_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut words = line.split_whitespace().skip(1);
    let n: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") => n.checked_mul(1024),
        None => Some(n),
        Some(_) => None,
    }
}

/// Parses `--mcts`: settings `key=value` separated by commas, applied to the default.
pub fn parse_mcts(text: &str) -> Result<MctsConfig, String> {
    let mut config = MctsConfig::default();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (key, value) = item
            .split_once('=')
            .ok_or_else(|| format!("{item:?} is not key=value"))?;
        let (key, value) = (key.trim(), value.trim());
        config.set(key, value)?;
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
            max_review_ms: 600_000,
            max_playouts: 50_000_000,
            clock_margin_ms: 50,
            max_nodes: 4_000_000,
            max_tree_memory: None,
            max_ponder_ms: 60_000,
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

/// Smallest `--max-nodes`: the tree must hold the root's moves (a few dozen, rarely more than a
/// couple of hundred) with room to search below them. A tree too small for the root's moves
/// would answer BestMove without a move.
pub const MIN_MAX_NODES: usize = 1_000;

/// Largest token file read: a bearer token is a line, not a document (and `/dev/zero` must not
/// exhaust the memory).
pub const MAX_TOKEN_FILE_BYTES: u64 = 4096;

/// A configuration the server refuses to start with. Each message names the flag to fix.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// `--auth-token ''`: an empty token would turn auth off without a word.
    #[error(
        "--auth-token (EMERGO_AUTH_TOKEN) is empty; an empty token would turn auth off. Give a \
         token, or leave the flag out (and unset EMERGO_AUTH_TOKEN) to run without auth"
    )]
    EmptyAuthToken,
    /// A token no client could send in an `authorization` header.
    #[error("--auth-token (EMERGO_AUTH_TOKEN) {why}; clients could never send it")]
    UnsendableAuthToken {
        /// What is wrong with it.
        why: &'static str,
    },
    /// Both a token and a token file were given (clap refuses this on the command line; a
    /// configuration built in code can still have both).
    #[error("--auth-token and --auth-token-file are both set; give one")]
    TwoTokens,
    /// The token file cannot be read.
    #[error("--auth-token-file {}: cannot read it: {source}", path.display())]
    TokenFileUnreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The token file holds nothing but whitespace.
    #[error("--auth-token-file {}: the file is empty; an empty token would turn auth off", path.display())]
    TokenFileEmpty {
        /// The file.
        path: PathBuf,
    },
    /// The token file is larger than a token can be.
    #[error(
        "--auth-token-file {}: more than {MAX_TOKEN_FILE_BYTES} bytes; it should hold just the token",
        path.display()
    )]
    TokenFileTooLarge {
        /// The file.
        path: PathBuf,
    },
    /// The token in the file no client could send.
    #[error("--auth-token-file {}: the token {why}; clients could never send it", path.display())]
    UnsendableTokenInFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        why: &'static str,
    },
    /// `--max-nodes` too small for a search.
    #[error("--max-nodes {nodes} is too small: a search tree needs at least {MIN_MAX_NODES} nodes")]
    TooFewNodes {
        /// The value given.
        nodes: usize,
    },
    /// `--max-tree-memory` too small for search trees.
    #[error(
        "--max-tree-memory {bytes} bytes is too small: search trees need at least 16MiB \
         ({MIN_TREE_MEMORY} bytes)"
    )]
    TooLittleTreeMemory {
        /// The value given.
        bytes: u64,
    },
    /// An unknown `--log-format` (clap checks the flag; code can set anything).
    #[error("--log-format {0:?}: expected text or json")]
    LogFormat(String),
}

/// Why no client could send `token` after `Bearer ` in an `authorization` header (gRPC metadata
/// is printable ASCII; HTTP trims surrounding spaces), or `None` if it is fine.
fn unsendable(token: &str) -> Option<&'static str> {
    if token.bytes().any(|b| !(b' '..=b'~').contains(&b)) {
        Some("holds control characters or non-ASCII characters")
    } else if token.starts_with(' ') || token.ends_with(' ') {
        Some("starts or ends with a space")
    } else {
        None
    }
}

/// Reads a token file: at most [`MAX_TOKEN_FILE_BYTES`], UTF-8, surrounding whitespace trimmed,
/// not empty.
fn read_token_file(path: &Path) -> Result<String, ConfigError> {
    let unreadable = |source| ConfigError::TokenFileUnreadable {
        path: path.to_owned(),
        source,
    };
    let bytes = read_capped(path, MAX_TOKEN_FILE_BYTES).map_err(|e| match e {
        ReadError::TooLarge { .. } => ConfigError::TokenFileTooLarge {
            path: path.to_owned(),
        },
        ReadError::Io(source) => unreadable(source),
    })?;
    let text = String::from_utf8(bytes)
        .map_err(|e| unreadable(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
    let token = text.trim();
    if token.is_empty() {
        return Err(ConfigError::TokenFileEmpty {
            path: path.to_owned(),
        });
    }
    if let Some(why) = unsendable(token) {
        return Err(ConfigError::UnsendableTokenInFile {
            path: path.to_owned(),
            why,
        });
    }
    Ok(token.to_owned())
}

impl ServerConfig {
    /// Checks the configuration and resolves what must be read at start-up: the token file's
    /// token moves into `auth_token` (and `auth_token_file` is cleared), so that the rest of the
    /// server only ever looks at `auth_token`. Every way of starting a server goes through here
    /// (`bot-server` before it binds; [`crate::server::run`] again, harmlessly: a validated
    /// configuration stays valid), so it is the one gate that keeps an empty token from
    /// silently turning auth off.
    pub fn validate(&mut self) -> Result<(), ConfigError> {
        match (&self.auth_token, &self.auth_token_file) {
            (Some(_), Some(_)) => return Err(ConfigError::TwoTokens),
            (None, Some(path)) => {
                let token = read_token_file(path)?;
                // Once, here: the file is cleared below, so validating again does not repeat it.
                if let Some(warning) = crate::auth::token_file_warning(path) {
                    tracing::warn!(file = %path.display(), "{warning}");
                }
                self.auth_token = Some(token);
                self.auth_token_file = None;
            }
            (Some(token), None) => {
                if token.trim().is_empty() {
                    return Err(ConfigError::EmptyAuthToken);
                }
                if let Some(why) = unsendable(token) {
                    return Err(ConfigError::UnsendableAuthToken { why });
                }
            }
            (None, None) => {}
        }
        if self.max_nodes < MIN_MAX_NODES {
            return Err(ConfigError::TooFewNodes {
                nodes: self.max_nodes,
            });
        }
        if let Some(bytes) = self.max_tree_memory.filter(|&b| b < MIN_TREE_MEMORY) {
            return Err(ConfigError::TooLittleTreeMemory { bytes });
        }
        if !matches!(self.log_format.as_str(), "text" | "json") {
            return Err(ConfigError::LogFormat(self.log_format.clone()));
        }
        Ok(())
    }

    /// The server-wide search-thread budget.
    pub fn thread_budget(&self) -> usize {
        if self.threads > 0 {
            self.threads
        } else {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        }
    }

    /// The tree-memory budget in bytes: `--max-tree-memory`, or this machine's default
    /// ([`default_tree_memory`]).
    pub fn tree_memory_budget(&self) -> u64 {
        self.max_tree_memory.unwrap_or_else(default_tree_memory)
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

/// Parses a listen address, `IP:PORT` or `HOST:PORT` (e.g. `localhost:50051`), resolving a
/// host name once at start-up. IPv4 is preferred when a name has both, so `localhost` listens
/// where clients using the default `127.0.0.1` look.
pub fn parse_listen_addr(s: &str) -> Result<SocketAddr, String> {
    if let Ok(addr) = s.parse() {
        return Ok(addr);
    }
    use std::net::ToSocketAddrs as _;
    let addrs: Vec<SocketAddr> = s
        .to_socket_addrs()
        .map_err(|e| format!("{s:?} is not HOST:PORT or IP:PORT ({e})"))?
        .collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or_else(|| addrs.first())
        .copied()
        .ok_or_else(|| format!("{s:?}: the host name has no address"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `bot-server`'s command line, for the tests that parse flags or read their help.
    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        config: ServerConfig,
    }

    /// `ServerConfig::default()` (the tests' servers, embedders, `emergo --local`)
    /// is the configuration `bot-server` runs with when given no flags.
    #[test]
    fn defaults_match_the_command_line_defaults() {
        use clap::Parser as _;
        let set: Vec<String> = std::env::vars()
            .map(|(k, _)| k)
            .filter(|k| k.starts_with("EMERGO_") && !k.starts_with("EMERGO_REQUIRE_"))
            .collect();
        assert!(set.is_empty(), "unset {set:?} to run this test");
        let parsed = Cli::try_parse_from(["bot-server"]).unwrap().config;
        assert_eq!(
            format!("{parsed:#?}"),
            format!("{:#?}", ServerConfig::default())
        );
    }

    #[test]
    fn mcts_settings_parse() {
        assert_eq!(parse_mcts("config=strong").unwrap(), MctsConfig::strong());
        assert_eq!(parse_mcts("config=uniform").unwrap(), MctsConfig::uniform());
        let c = parse_mcts("c=0.8, minimax=0.2").unwrap();
        assert_eq!((c.exploration, c.minimax_weight), (0.8, 0.2));
        assert!(parse_mcts("c").unwrap_err().contains("key=value"));
        assert!(parse_mcts("bogus=1").unwrap_err().contains("unknown"));
    }

    /// A network file that never ends is refused at once, naming it, instead of being read
    /// until the memory runs out.
    #[test]
    fn endless_net_file_is_refused_at_once() {
        if !Path::new("/dev/zero").exists() {
            return;
        }
        let start = std::time::Instant::now();
        let e = parse_mcts("c=0.8,net=/dev/zero").unwrap_err();
        assert!(e.contains("net=/dev/zero: longer than"), "{e}");
        assert!(start.elapsed() < Duration::from_secs(1));
        let e = parse_mcts("net=/nonexistent/emergo.net").unwrap_err();
        assert!(e.contains("net=/nonexistent/emergo.net"), "{e}");
    }

    /// The `--mcts` help points to `--mcts-help`, which prints `MctsConfig::SETTINGS` (the
    /// engine's test checks that every key is listed there).
    #[test]
    fn mcts_help_points_to_the_settings_list() {
        use clap::CommandFactory as _;
        let command = Cli::command();
        let help = command
            .get_arguments()
            .find(|a| a.get_id() == "mcts")
            .and_then(|a| a.get_help())
            .map(|h| h.to_string())
            .unwrap_or_default();
        assert!(help.contains("--mcts-help"), "{help}");
        assert!(!help.contains('`'), "{help}");
    }

    fn validated(config: ServerConfig) -> Result<ServerConfig, ConfigError> {
        let mut config = config;
        config.validate().map(|()| config)
    }

    fn with_token(token: &str) -> ServerConfig {
        ServerConfig {
            auth_token: Some(token.to_owned()),
            ..ServerConfig::default()
        }
    }

    /// `--auth-token ''` once turned auth off silently.
    #[test]
    fn empty_or_unsendable_tokens_are_refused() {
        for empty in ["", " ", "\t\n"] {
            let e = validated(with_token(empty)).unwrap_err();
            assert!(matches!(e, ConfigError::EmptyAuthToken), "{empty:?}: {e}");
            assert!(e.to_string().starts_with("--auth-token"), "{e}");
        }
        for bad in ["a\nb", "tök", " padded", "padded "] {
            let e = validated(with_token(bad)).unwrap_err();
            assert!(
                matches!(e, ConfigError::UnsendableAuthToken { .. }),
                "{bad:?}: {e}"
            );
        }
        let ok = validated(with_token("s3cret-Token_1.2~+/=")).unwrap();
        assert_eq!(ok.auth_token.as_deref(), Some("s3cret-Token_1.2~+/="));
        assert!(
            validated(ServerConfig::default())
                .unwrap()
                .auth_token
                .is_none()
        );
    }

    fn token_file(contents: &[u8]) -> (PathBuf, ServerConfig) {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("emergo-token-{}-{n}", std::process::id()));
        std::fs::write(&path, contents).unwrap();
        let config = ServerConfig {
            auth_token_file: Some(path.clone()),
            ..ServerConfig::default()
        };
        (path, config)
    }

    #[test]
    fn token_files_are_read_trimmed_and_checked() {
        let (path, config) = token_file(b"  s3cret\n");
        let mut config = validated(config).unwrap();
        assert_eq!(config.auth_token.as_deref(), Some("s3cret"));
        assert_eq!(config.auth_token_file, None);
        // Validating again changes nothing (server::run validates what the binary validated).
        config.validate().unwrap();
        assert_eq!(config.auth_token.as_deref(), Some("s3cret"));
        std::fs::remove_file(path).unwrap();

        let (path, config) = token_file(b" \n\t\n");
        let e = validated(config).unwrap_err();
        assert!(matches!(e, ConfigError::TokenFileEmpty { .. }), "{e}");
        assert!(e.to_string().contains(&path.display().to_string()), "{e}");
        std::fs::remove_file(path).unwrap();

        let (path, config) = token_file(&[b'x'; 5000]);
        let e = validated(config).unwrap_err();
        assert!(matches!(e, ConfigError::TokenFileTooLarge { .. }), "{e}");
        std::fs::remove_file(path).unwrap();

        let (path, config) = token_file(b"s3cr\xffet");
        let e = validated(config).unwrap_err();
        assert!(matches!(e, ConfigError::TokenFileUnreadable { .. }), "{e}");
        std::fs::remove_file(path).unwrap();

        let (path, config) = token_file(b"two\nlines\n");
        let e = validated(config).unwrap_err();
        assert!(
            matches!(e, ConfigError::UnsendableTokenInFile { .. }),
            "{e}"
        );
        std::fs::remove_file(path).unwrap();

        let missing = ServerConfig {
            auth_token_file: Some(PathBuf::from("/nonexistent/emergo-token")),
            ..ServerConfig::default()
        };
        let e = validated(missing).unwrap_err();
        assert!(matches!(e, ConfigError::TokenFileUnreadable { .. }), "{e}");
        assert!(
            e.to_string()
                .starts_with("--auth-token-file /nonexistent/emergo-token: cannot read it"),
            "{e}"
        );

        let both = ServerConfig {
            auth_token: Some("a".into()),
            auth_token_file: Some(PathBuf::from("/nonexistent")),
            ..ServerConfig::default()
        };
        assert!(matches!(validated(both), Err(ConfigError::TwoTokens)));
    }

    #[test]
    fn sizes_parse_with_units() {
        assert_eq!(parse_byte_size("512MiB"), Ok(512 * MIB));
        assert_eq!(parse_byte_size("2GiB"), Ok(2 * GIB));
        assert_eq!(parse_byte_size("1G"), Ok(1_000_000_000));
        assert_eq!(parse_byte_size(" 64 KiB "), Ok(64 * 1024));
        assert_eq!(parse_byte_size("1.5GiB"), Ok(3 * GIB / 2));
        assert_eq!(parse_byte_size("123456789"), Ok(123_456_789));
        // Absurd sizes saturate instead of overflowing.
        assert_eq!(parse_byte_size("99999999999EiB"), Ok(u64::MAX));
        for bad in [
            "",
            "MiB",
            "-1GiB",
            "12 parsecs",
            "1e9",
            "1..5G",
            &"9".repeat(500),
        ] {
            let e = parse_byte_size(bad).unwrap_err();
            assert!(e.contains("is not a size"), "{bad:?}: {e}");
            assert!(e.len() < 200, "{e}");
        }
    }

    #[test]
    fn default_tree_memory_is_a_quarter_of_the_smaller_limit_clamped() {
        // 16 GiB machine: 4 GiB; in a 2 GiB cgroup: 512 MiB.
        assert_eq!(default_tree_memory_for(Some(16 * GIB), None), 4 * GIB);
        assert_eq!(
            default_tree_memory_for(Some(16 * GIB), Some(2 * GIB)),
            512 * MIB
        );
        assert_eq!(default_tree_memory_for(None, Some(2 * GIB)), 512 * MIB);
        // Clamped to 256 MiB ..= 16 GiB; 1 GiB when nothing is known.
        assert_eq!(default_tree_memory_for(Some(512 * MIB), None), 256 * MIB);
        assert_eq!(default_tree_memory_for(Some(1024 * GIB), None), 16 * GIB);
        assert_eq!(default_tree_memory_for(None, None), GIB);
        let here = default_tree_memory();
        assert!((256 * MIB..=16 * GIB).contains(&here), "{here}");
        assert_eq!(ServerConfig::default().tree_memory_budget(), here);
        assert_eq!(
            meminfo_total("MemTotal:       16318412 kB\nMemFree: 1 kB\n"),
            Some(16_318_412 * 1024)
        );
        assert_eq!(meminfo_total("MemFree: 1 kB\n"), None);
        assert_eq!(meminfo_total("MemTotal: lots kB\n"), None);
    }

    #[test]
    fn tree_memory_below_the_minimum_is_refused() {
        let small = ServerConfig {
            max_tree_memory: Some(MIN_TREE_MEMORY - 1),
            ..ServerConfig::default()
        };
        let e = validated(small).unwrap_err();
        assert!(matches!(e, ConfigError::TooLittleTreeMemory { .. }), "{e}");
        assert!(e.to_string().starts_with("--max-tree-memory"), "{e}");
        let ok = validated(ServerConfig {
            max_tree_memory: Some(MIN_TREE_MEMORY),
            ..ServerConfig::default()
        })
        .unwrap();
        assert_eq!(ok.tree_memory_budget(), MIN_TREE_MEMORY);
    }

    #[test]
    fn node_cap_and_log_format_are_checked() {
        let tiny = ServerConfig {
            max_nodes: 50,
            ..ServerConfig::default()
        };
        assert!(matches!(
            validated(tiny),
            Err(ConfigError::TooFewNodes { nodes: 50 })
        ));
        let xml = ServerConfig {
            log_format: "xml".into(),
            ..ServerConfig::default()
        };
        assert!(matches!(validated(xml), Err(ConfigError::LogFormat(_))));
    }

    /// A host name is accepted for the listen flags.
    #[test]
    fn listen_addresses_accept_host_names() {
        assert_eq!(
            parse_listen_addr("localhost:50051"),
            Ok(SocketAddr::from(([127, 0, 0, 1], 50051)))
        );
        assert_eq!(
            parse_listen_addr("[::1]:8080"),
            Ok(SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, 8080)))
        );
        assert!(parse_listen_addr("localhost").is_err());
    }
}
