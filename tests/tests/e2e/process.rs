//! The `bot-server` binary as a process: flags, SIGTERM handling.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use emergo_proto::v1 as pb;
use emergo_tests::{INITIAL, binary, free_port};

/// A plain HTTP/1.1 GET (enough for the metrics endpoint).
fn http_get(port: u16, path: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

#[test]
fn help_documents_every_flag_with_its_default() {
    let out = Command::new(binary("bot-server"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for flag in [
        "--listen",
        "--threads",
        "--max-queue",
        "--max-queue-wait-ms",
        "--max-time-ms",
        "--max-playouts",
        "--max-nodes",
        "--metrics-listen",
        "--auth-token",
        "EMERGO_LISTEN",
        "EMERGO_AUTH_TOKEN",
        "127.0.0.1:50051",
    ] {
        assert!(help.contains(flag), "--help lacks {flag}:\n{help}");
    }
    // Help is read in a terminal: no rustdoc markup (backticks, intra-doc links).
    assert!(!help.contains('`'), "markup in --help:\n{help}");
    assert!(!help.contains("[`"), "an intra-doc link in --help:\n{help}");

    // The engine's settings are listed apart, each key once.
    let out = Command::new(binary("bot-server"))
        .arg("--mcts-help")
        .output()
        .unwrap();
    assert!(out.status.success());
    let settings = String::from_utf8(out.stdout).unwrap();
    for key in [
        "config=strong|uniform|v1",
        "minimax",
        "net=default|PATH|none",
        "refine",
    ] {
        assert!(
            settings.contains(key),
            "--mcts-help lacks {key}:\n{settings}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_finishes_searches_then_exits() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let metrics_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new(binary("bot-server"))
        .args([
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--threads",
            "2",
            "--http-listen",
            "127.0.0.1:0",
        ])
        .args(["--metrics-listen", &format!("127.0.0.1:{metrics_port}")])
        .args(["--max-tree-memory", "64MiB"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}");
    let start = Instant::now();
    let mut client = loop {
        match emergo_proto::v1::emergo_bot_client::EmergoBotClient::connect(url.clone()).await {
            Ok(c) => break c,
            Err(_) if start.elapsed() < Duration::from_secs(20) => {
                tokio::time::sleep(Duration::from_millis(20)).await
            }
            Err(e) => panic!("server did not start: {e}"),
        }
    };
    // A timed answer is counted in the overrun histogram, whose buckets resolve milliseconds.
    client
        .best_move(pb::BestMoveRequest {
            position: Some(pb::Position {
                fen: INITIAL.into(),
                moves: vec![],
            }),
            limits: Some(pb::Limits {
                max_time_ms: Some(50),
                ..Default::default()
            }),
            options: None,
        })
        .await
        .unwrap();
    let mut stream = client
        .analyze(pb::AnalyzeRequest {
            position: Some(pb::Position {
                fen: INITIAL.into(),
                moves: vec![],
            }),
            limits: Some(pb::Limits {
                max_time_ms: Some(30_000),
                max_playouts: None,
                clock: None,
            }),
            options: None,
            report_interval_ms: 50,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!stream.message().await.unwrap().unwrap().r#final);

    // Metrics are served while it runs.
    let metrics = http_get(metrics_port, "/metrics");
    assert!(metrics.starts_with("HTTP/1.1 200"), "{metrics}");
    assert!(metrics.contains("emergo_running_searches 1"), "{metrics}");
    assert!(
        metrics.contains("emergo_answer_overrun_seconds_count 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("emergo_answer_overrun_seconds_bucket{le=\"0.002\"}"),
        "{metrics}"
    );
    // Tree memory: the budget, and the running search's share of it in use.
    assert!(
        metrics.contains("emergo_tree_memory_budget_bytes 67108864"),
        "{metrics}"
    );
    let in_use: f64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("emergo_tree_memory_bytes "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no emergo_tree_memory_bytes in {metrics}"));
    assert!(in_use > 0.0 && in_use <= 67108864.0, "{in_use}");

    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let mut last = None;
    while let Some(u) = stream.message().await.unwrap() {
        last = Some(u);
    }
    let last = last.unwrap();
    assert!(last.r#final);
    assert_eq!(last.stop_reason(), pb::StopReason::Shutdown);
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "exit status {status}");
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "server did not exit after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts `bot-server` with `extra` flags; returns it and its HTTP port once that port answers.
fn start_server(extra: &[&str]) -> (std::process::Child, u16) {
    let (port, http_port) = (free_port(), free_port());
    let child = Command::new(binary("bot-server"))
        .args(["--listen", &format!("127.0.0.1:{port}"), "--threads", "1"])
        .args(["--http-listen", &format!("127.0.0.1:{http_port}")])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", http_port)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "server did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    (child, http_port)
}

/// A request whose body never arrives: headers promise 1,000 bytes, one is sent.
fn stalled_request(http_port: u16) -> std::net::TcpStream {
    use std::io::Write;
    let mut s = std::net::TcpStream::connect(("127.0.0.1", http_port)).unwrap();
    write!(
        s,
        "POST /v1/LegalMoves HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000\r\n\r\n{{"
    )
    .unwrap();
    s.flush().unwrap();
    s
}

fn signal(child: &std::process::Child, sig: &str) {
    let sent = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
}

/// Waits for the process to exit; returns its exit code and how long it took.
fn wait_exit(child: &mut std::process::Child, limit: Duration) -> (Option<i32>, Duration) {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return (status.code(), start.elapsed());
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("bot-server still running {limit:?} after the signal");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A client holding a request open (here an HTTP body shorter than its Content-Length) once
/// kept a SIGTERM'd server alive forever. The grace period caps it.
#[test]
fn shutdown_grace_caps_a_stalled_client() {
    let (mut child, http_port) = start_server(&["--shutdown-grace-ms", "1000"]);
    let _held = stalled_request(http_port);
    std::thread::sleep(Duration::from_millis(200));
    signal(&child, "-TERM");
    let (code, took) = wait_exit(&mut child, Duration::from_secs(15));
    assert_eq!(code, Some(1), "exit after the grace period");
    assert!(took >= Duration::from_millis(900), "exited after {took:?}");
}

/// A second signal once did nothing. It exits at once now.
#[test]
fn second_signal_exits_at_once() {
    let (mut child, http_port) = start_server(&[]);
    let _held = stalled_request(http_port);
    std::thread::sleep(Duration::from_millis(200));
    signal(&child, "-TERM");
    std::thread::sleep(Duration::from_millis(300));
    signal(&child, "-INT");
    let (code, took) = wait_exit(&mut child, Duration::from_secs(10));
    assert_eq!(code, Some(130));
    assert!(took < Duration::from_secs(5), "exited after {took:?}");
}

/// `--listen` takes a host name, and a busy metrics port is named.
#[test]
fn busy_metrics_port_is_named_and_listen_takes_a_host_name() {
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().unwrap();
    let out = Command::new(binary("bot-server"))
        .args(["--listen", "localhost:0", "--no-http"])
        .args(["--metrics-listen", &addr.to_string()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("cannot listen on {addr} for metrics")),
        "{err}"
    );
    drop(busy);
}
