//! `emergo loadtest` against a real server: clean runs under capacity, counted refusals past
//! saturation, and a server that is still healthy afterwards.

use std::process::Output;
use std::time::{Duration, Instant};

use emergo_bot_server::config::ServerConfig;
use emergo_proto::v1 as pb;
use emergo_tests::{TestServer, binary};
use serde_json::Value;

/// Runs `emergo loadtest <args>`. The child is run from a blocking thread because the server
/// under test lives on this test's runtime and must keep being polled meanwhile (tokio's
/// `process` feature is not enabled in this workspace).
async fn loadtest(args: &[&str]) -> Output {
    let exe = binary("emergo");
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        std::process::Command::new(exe)
            .arg("loadtest")
            .args(&args)
            // A token or server from the developer's environment must not leak into the test.
            .env_remove("EMERGO_AUTH_TOKEN")
            .env_remove("EMERGO_SERVER")
            .output()
            .expect("run emergo loadtest")
    })
    .await
    .expect("join")
}

/// Runs a load test against `server` with `--json` and returns the report.
async fn report(server: &TestServer, args: &[&str]) -> Value {
    let mut all = vec!["--server", server.url.as_str(), "--json"];
    all.extend_from_slice(args);
    let out = loadtest(&all).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "loadtest {args:?} failed: {stderr}\n{stdout}"
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout:?}"))
}

fn number(v: &Value, path: &[&str]) -> f64 {
    let mut at = v;
    for key in path {
        at = &at[*key];
    }
    at.as_f64()
        .unwrap_or_else(|| panic!("{path:?} missing or not a number in {v}"))
}

/// Waits until the server has no search running (searches end on their own threads, so the
/// last one may still be tidying up just after its answer went out).
async fn wait_idle(server: &TestServer) -> pb::ServerInfoResponse {
    let mut client = server.client().await;
    let end = Instant::now() + Duration::from_secs(5);
    loop {
        let info = client
            .server_info(pb::ServerInfoRequest {})
            .await
            .expect("ServerInfo answers after the load test")
            .into_inner();
        let load = info.load.unwrap_or_default();
        if load.running_searches == 0 && load.threads_in_use == 0 && load.queued_requests == 0 {
            return info;
        }
        assert!(Instant::now() < end, "server still busy: {load:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_capacity_every_request_is_answered() {
    let server = TestServer::start(ServerConfig {
        threads: 2,
        ..ServerConfig::default()
    })
    .await;

    let r = report(
        &server,
        &[
            "--clients",
            "2",
            "--requests",
            "8",
            "--rpc",
            "bestmove",
            "--playouts",
            "500",
        ],
    )
    .await;
    assert_eq!(r["ok"], 8, "{r}");
    assert_eq!(r["requests"], 8, "{r}");
    assert_eq!(r["clients"], 2, "{r}");
    assert_eq!(r["errors"], serde_json::json!({}), "{r}");
    assert_eq!(r["refusal_rate"], 0.0, "{r}");
    for p in ["p50", "p90", "p99", "max"] {
        assert!(number(&r, &["latency_ms", p]) > 0.0, "latency {p}: {r}");
    }
    assert!(number(&r, &["latency_ms", "p50"]) <= number(&r, &["latency_ms", "max"]));
    assert_eq!(number(&r, &["refused_latency_ms", "count"]), 0.0, "{r}");
    for key in ["p50", "p99", "max"] {
        number(&r, &["refused_latency_ms", key]);
    }
    assert!(number(&r, &["seconds"]) > 0.0);
    assert!(number(&r, &["requests_per_second"]) > 0.0);
    // Each search ran its 500 playouts (or stopped early, settled, with fewer).
    let playouts = number(&r, &["playouts"]);
    assert!(playouts > 0.0 && playouts <= 8.0 * 500.0, "{r}");
    assert!(number(&r, &["playouts_per_second"]) > 0.0);
    let stops: u64 = r["stop_reasons"]
        .as_object()
        .expect("stop_reasons")
        .values()
        .map(|v| v.as_u64().expect("count"))
        .sum();
    assert_eq!(stops, 8, "one stop reason per answer: {r}");

    // Analyze, consumed to its final update, works the same way.
    let r = report(
        &server,
        &[
            "--clients",
            "2",
            "--requests",
            "4",
            "--rpc",
            "analyze",
            "--time",
            "120ms",
        ],
    )
    .await;
    assert_eq!(r["ok"], 4, "{r}");
    assert_eq!(r["errors"], serde_json::json!({}), "{r}");
    assert_eq!(r["rpc"], "analyze");
    assert!(number(&r, &["latency_ms", "p50"]) > 0.0, "{r}");
    assert!(number(&r, &["playouts"]) > 0.0, "{r}");

    // --game-ids: each client searches under its own game, so the server keeps one tree each.
    let r = report(
        &server,
        &[
            "--clients",
            "2",
            "--requests",
            "4",
            "--playouts",
            "300",
            "--game-ids",
        ],
    )
    .await;
    assert_eq!(r["ok"], 4, "{r}");
    let info = wait_idle(&server).await;
    assert_eq!(info.load.unwrap_or_default().kept_games, 2, "{info:?}");

    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_saturation_refusals_are_counted_and_the_server_recovers() {
    let server = TestServer::start(ServerConfig {
        threads: 1,
        max_queue: 1,
        max_queue_wait_ms: 10_000,
        ..ServerConfig::default()
    })
    .await;

    let r = report(
        &server,
        &[
            "--clients",
            "8",
            "--requests",
            "16",
            "--rpc",
            "bestmove",
            "--time",
            "300ms",
        ],
    )
    .await;
    let errors = r["errors"].as_object().expect("errors object");
    let refused = errors
        .get("RESOURCE_EXHAUSTED")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    assert!(refused > 0, "no refusals past saturation: {r}");
    assert_eq!(errors.len(), 1, "only RESOURCE_EXHAUSTED expected: {r}");
    let ok = r["ok"].as_u64().expect("ok");
    assert!(ok > 0, "{r}");
    assert_eq!(ok + refused, 16, "{r}");
    let rate = number(&r, &["refusal_rate"]);
    assert!((rate - refused as f64 / 16.0).abs() < 1e-9, "{r}");
    // Refusals come back at once, long before a 300 ms search could.
    assert_eq!(number(&r, &["refused_latency_ms", "count"]), refused as f64);
    assert!(number(&r, &["refused_latency_ms", "p50"]) > 0.0, "{r}");
    assert!(
        number(&r, &["refused_latency_ms", "p50"]) < number(&r, &["latency_ms", "p50"]),
        "{r}"
    );

    // Still healthy: ServerInfo answers, nothing left running, the refusals were counted.
    let info = wait_idle(&server).await;
    let load = info.load.unwrap_or_default();
    assert_eq!(load.requests_refused, refused, "{load:?}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_flags_and_unreachable_servers_fail_clearly() {
    // No budget.
    let out = loadtest(&["--clients", "1", "--requests", "1"]).await;
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--time") && stderr.contains("--playouts"),
        "{stderr}"
    );

    // A bad position is caught before any request is sent.
    let out = loadtest(&[
        "--clients",
        "1",
        "--requests",
        "1",
        "--playouts",
        "10",
        "--fen",
        "not a fen",
        "--server",
        "http://127.0.0.1:1",
    ])
    .await;
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--fen"), "{stderr}");

    // Nobody listening: a clear, fatal error rather than N failed requests.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let out = loadtest(&[
        "--clients",
        "2",
        "--requests",
        "4",
        "--playouts",
        "10",
        "--server",
        &url,
    ])
    .await;
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot connect") && stderr.contains(&url),
        "{stderr}"
    );
}
