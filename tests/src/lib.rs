//! Helpers for the end-to-end tests: finding (or building) the workspace's binaries.

pub mod cli;
pub mod requests;
pub mod sse;

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// The directory holding the workspace's binaries for the current profile (`target/debug`).
fn bin_dir() -> PathBuf {
    // Test executables live in target/<profile>/deps.
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile> directory")
        .to_path_buf()
}

/// Path of a workspace binary, built (or found up to date) by `cargo build` once per test
/// process: another package's binaries are not rebuilt by `cargo test` of this one, and a stale
/// binary would test old code.
pub fn binary(name: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let release = bin_dir().ends_with("release");
        let mut cmd = Command::new(cargo);
        cmd.args([
            "build",
            "--quiet",
            "-p",
            "emergo-bot-server",
            "-p",
            "emergo-cli",
            "--bins",
        ]);
        if release {
            cmd.arg("--release");
        }
        let status = cmd.status().expect("run cargo build");
        assert!(status.success(), "cargo build of the binaries failed");
    });
    let path = bin_dir().join(name);
    assert!(path.exists(), "{} not found", path.display());
    path
}

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// A bot server running in this process on an ephemeral loopback port.
pub struct TestServer {
    /// `http://127.0.0.1:<port>` of the gRPC server.
    pub url: String,
    /// `http://127.0.0.1:<port>` of the HTTP gateway and web board.
    pub http_url: String,
    /// The engine, for inspecting load.
    pub engine: std::sync::Arc<emergo_bot_server::runner::Engine>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl TestServer {
    /// Starts a server with `config` (its `listen` is ignored: port 0 is used).
    pub async fn start(config: emergo_bot_server::config::ServerConfig) -> TestServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let http = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind http");
        let http_url = format!("http://{}", http.local_addr().expect("addr"));
        let engine = std::sync::Arc::new(emergo_bot_server::runner::Engine::new(config));
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let e = engine.clone();
        let task = tokio::spawn(async move {
            emergo_bot_server::server::run_with_engine(listener, Some(http), e, async {
                let _ = rx.await;
            })
            .await
            .expect("server");
        });
        TestServer {
            url,
            http_url,
            engine,
            shutdown: Some(tx),
            task: Some(task),
        }
    }

    /// A connected client.
    pub async fn client(
        &self,
    ) -> emergo_proto::v1::emergo_bot_client::EmergoBotClient<tonic::transport::Channel> {
        emergo_proto::v1::emergo_bot_client::EmergoBotClient::connect(self.url.clone())
            .await
            .expect("connect")
    }

    /// Begins a graceful shutdown and waits for the server to finish.
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.expect("server task");
        }
    }

    /// Begins a graceful shutdown without waiting.
    pub fn begin_stop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// The initial position's FEN.
pub const INITIAL: &str = emergo_rules::INITIAL_FEN;

/// A free loopback port (bound, then released for a child process to take).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

/// The Python interpreter of a virtual environment with `grpcio` and `grpcio-tools`, set up
/// under `target/python-venv` on first use (from PyPI) and shared by the Python client tests.
pub fn python_venv() -> PathBuf {
    let venv = workspace_root().join("target/python-venv");
    let python = venv.join("bin/python");
    let ready = |py: &std::path::Path| {
        Command::new(py)
            .args(["-c", "import grpc, grpc_tools"])
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !python.exists() {
        let ok = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .expect("run python3");
        assert!(
            ok.success(),
            "python3 -m venv failed (Debian: apt-get install python3-venv)"
        );
    }
    if !ready(&python) {
        let ok = Command::new(&python)
            .args(["-m", "pip", "install", "--quiet", "grpcio", "grpcio-tools"])
            .status()
            .expect("run pip");
        assert!(ok.success(), "pip install grpcio grpcio-tools failed");
    }
    python
}

/// Runs `command` — a `bot-server` expected to refuse its flags — to its end: returns its exit
/// status and what it wrote to stderr. Fails the test if it is still running after 20 s (it
/// started serving instead of refusing).
pub fn run_to_refusal(command: &mut Command) -> (std::process::ExitStatus, String) {
    use std::io::Read;
    use std::time::{Duration, Instant};
    let mut child = command
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("{command:?} started instead of refusing");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        let _ = pipe.read_to_string(&mut stderr);
    }
    (status, stderr)
}
