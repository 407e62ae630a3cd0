//! The `bot-server` binary as a process: flags, SIGTERM handling.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use emergo_proto::v1 as pb;
use emergo_tests::{INITIAL, binary};

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
    let mut stream = client
        .analyze(pb::AnalyzeRequest {
            position: Some(pb::Position {
                fen: INITIAL.into(),
                moves: vec![],
            }),
            limits: Some(pb::Limits {
                max_time_ms: Some(30_000),
                max_playouts: None,
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
