//! `emergo arena` end to end: the real binary against an in-process server (and through a
//! misbehaving TCP proxy for failover), checking records, summaries and tables.

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Output};

use emergo_bot_server::config::ServerConfig;
use emergo_cli::client::record::{GameRecord, parse_pgn};
use emergo_tests::{TestServer, binary};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Runs `emergo arena ARGS` on a blocking thread, so the server living on this test's runtime
/// keeps answering while the process waits.
async fn arena(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || {
        Command::new(binary("emergo"))
            .arg("arena")
            .args(&args)
            .env_remove("EMERGO_AUTH_TOKEN")
            .output()
            .expect("run emergo arena")
    })
    .await
    .expect("join")
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn assert_ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "arena failed ({:?}): {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn server_config() -> ServerConfig {
    ServerConfig {
        threads: 2,
        ..ServerConfig::default()
    }
}

/// Reads `games.pgn` and `summary.jsonl` from an --out directory: the records, the per-game
/// lines and the final summary.
fn read_out(dir: &Path) -> (Vec<GameRecord>, Vec<Value>, Value) {
    let pgn = std::fs::read_to_string(dir.join("games.pgn")).unwrap();
    let records = parse_pgn(&pgn).unwrap();
    let text = std::fs::read_to_string(dir.join("summary.jsonl")).unwrap();
    let mut lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let summary = lines.pop().unwrap();
    assert_eq!(summary["type"], "summary");
    for l in &lines {
        assert_eq!(l["type"], "game");
    }
    (records, lines, summary)
}

/// Every record replays legally, and a game ended by the rules carries the rules' result.
fn check_records(records: &[GameRecord], lines: &[Value]) {
    assert_eq!(records.len(), lines.len());
    for (r, line) in records.iter().zip(lines) {
        let game = r.replay().unwrap_or_else(|e| panic!("{e}: {}", r.to_pgn()));
        for tag in [
            "Event",
            "Site",
            "Date",
            "Round",
            "White",
            "Black",
            "TimeControl",
        ] {
            assert!(r.tag(tag).is_some(), "no {tag} tag: {}", r.to_pgn());
        }
        assert_eq!(line["result"], r.result.as_str());
        assert_eq!(line["termination"], r.termination.as_str());
        assert_eq!(line["turns"], r.moves.len());
        assert_eq!(line["white"], r.tag("White").unwrap());
        assert_eq!(line["round"].to_string(), r.tag("Round").unwrap());
        match r.termination.as_str() {
            "no-units" | "blocked" | "no-legal-entry" | "repetition" => {
                let o = game.outcome().expect("a rules ending is a finished game");
                assert_eq!(o.reason.as_str(), r.termination);
                assert_eq!(o.result.as_str(), r.result);
            }
            "move-cap" => {
                assert!(game.outcome().is_none());
                assert_eq!(r.result, "1/2");
            }
            other => panic!("unexpected adjudication {other}: {}", r.to_pgn()),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_against_random_with_records_and_tree_reuse() {
    let server = TestServer::start(server_config()).await;
    let dir = tempfile::tempdir().unwrap();
    let out = arena(args(&[
        "--engine",
        &format!(
            "{},playouts=300",
            server.url.replace("http://", "server:http://")
        ),
        "--engine",
        "random",
        "--games",
        "2",
        "--seed",
        "11",
        "--json",
        "--out",
        dir.path().to_str().unwrap(),
    ]))
    .await;
    let stdout = assert_ok(&out);
    let printed: Value = serde_json::from_str(stdout.trim()).unwrap();
    let (records, lines, summary) = read_out(dir.path());
    assert_eq!(printed, summary);
    assert_eq!(records.len(), 2);
    check_records(&records, &lines);
    // Colours alternate over one opening (two random turns).
    let server_name = summary["engines"][0]["name"].as_str().unwrap().to_owned();
    assert!(
        server_name.starts_with("server:127.0.0.1:"),
        "{server_name}"
    );
    assert_eq!(records[0].tag("White"), Some(server_name.as_str()));
    assert_eq!(records[1].tag("Black"), Some(server_name.as_str()));
    assert_eq!(records[0].moves[..2], records[1].moves[..2]);
    assert_eq!(lines[0]["opening"], lines[1]["opening"]);
    assert_eq!(
        records[0].tag("TimeControl"),
        Some("White 300 playouts/move, Black no search")
    );
    // Tree reuse: the server kept the game's tree between moves.
    let engine = &summary["engines"][0];
    assert!(engine["moves"].as_u64().unwrap() > 10, "{engine}");
    assert!(engine["moves_with_reuse"].as_u64().unwrap() > 0, "{engine}");
    assert!(
        lines
            .iter()
            .all(|l| l["moves_with_reuse"].as_u64().unwrap() > 0)
    );
    assert!(summary["engines"][1]["moves_with_reuse"].is_null());
    let pairing = &summary["pairings"][0];
    assert_eq!(pairing["games"], 2);
    for key in ["elo", "elo_low", "elo_high", "score"] {
        assert!(pairing[key].is_number(), "{key}: {pairing}");
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn round_robin_of_in_process_engines() {
    let dir = tempfile::tempdir().unwrap();
    let out = arena(args(&[
        "--engine",
        "random",
        "--engine",
        "greedy",
        "--engine",
        "mcts:playouts=200",
        "--games",
        "2",
        "--concurrency",
        "2",
        "--seed",
        "5",
        "--out",
        dir.path().to_str().unwrap(),
    ]))
    .await;
    let stdout = assert_ok(&out);
    assert!(stdout.contains("Crosstable (6 games"), "{stdout}");
    for name in ["random", "greedy", "mcts:playouts=200", "Elo", "95% CI"] {
        assert!(stdout.contains(name), "{name} missing: {stdout}");
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("game 6/6"), "{stderr}");
    let (records, lines, summary) = read_out(dir.path());
    assert_eq!(records.len(), 6);
    check_records(&records, &lines);
    // Written in game order although two games ran at once.
    let rounds: Vec<u64> = lines.iter().map(|l| l["round"].as_u64().unwrap()).collect();
    assert_eq!(rounds, [1, 2, 3, 4, 5, 6]);
    let pairings = summary["pairings"].as_array().unwrap();
    assert_eq!(pairings.len(), 3);
    for p in pairings {
        assert_eq!(p["games"], 2);
        let (w, d, l) = (
            p["wins"].as_u64().unwrap(),
            p["draws"].as_u64().unwrap(),
            p["losses"].as_u64().unwrap(),
        );
        assert_eq!(w + d + l, 2);
        let (elo, low, high) = (
            p["elo"].as_f64().unwrap(),
            p["elo_low"].as_f64().unwrap(),
            p["elo_high"].as_f64().unwrap(),
        );
        assert!(low <= elo && elo <= high, "{p}");
    }
    let engines = summary["engines"].as_array().unwrap();
    assert_eq!(engines.len(), 3);
    let points: f64 = engines.iter().map(|e| e["points"].as_f64().unwrap()).sum();
    assert_eq!(points, 6.0);
    assert!(engines.iter().all(|e| e["games"] == 4));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_specs_are_named() {
    for (spec, why) in [
        ("mcts:depth=3", "unknown key \"depth\""),
        ("alphabeta", "unknown engine"),
        ("mcts:playouts=0", "playouts=0"),
        ("server:", "needs a URL"),
    ] {
        let out = arena(args(&["--engine", "random", "--engine", spec])).await;
        assert!(!out.status.success(), "{spec} accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("{spec:?}")) && err.contains(why),
            "{spec}: {err}"
        );
    }
    // A server that is not there fails before any game, naming the engine.
    let out = arena(args(&[
        "--engine",
        "random",
        "--engine",
        "server:127.0.0.1:1",
    ]))
    .await;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("server:127.0.0.1:1") && err.contains("cannot connect"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openings_file_and_move_cap() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("openings.txt");
    std::fs::write(
        &file,
        "# two openings\nstartpos moves a1 i9\n9/9/9/9/9/9/9/9/9 w 0 12,12 moves c3 g7 e1\n",
    )
    .unwrap();
    let out_dir = dir.path().join("out");
    let out = arena(args(&[
        "--engine",
        "random",
        "--engine",
        "greedy",
        "--games",
        "4",
        "--max-turns",
        "10",
        "--openings",
        file.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
        "--json",
    ]))
    .await;
    assert_ok(&out);
    let (records, lines, summary) = read_out(&out_dir);
    check_records(&records, &lines);
    let starts: Vec<Vec<&str>> = records
        .iter()
        .map(|r| r.moves.iter().take(3).map(String::as_str).collect())
        .collect();
    assert_eq!(starts[0][..2], ["a1", "i9"]);
    assert_eq!(starts[1][..2], ["a1", "i9"]);
    assert_eq!(starts[2], ["c3", "g7", "e1"]);
    assert_eq!(starts[3], ["c3", "g7", "e1"]);
    for r in &records {
        assert_eq!((r.termination.as_str(), r.moves.len()), ("move-cap", 10));
    }
    assert_eq!(summary["pairings"][0]["draws"], 4);
    assert_eq!(summary["pairings"][0]["elo"], 0.0);
    // A bad opening is refused up front, naming the file and line.
    std::fs::write(&file, "startpos moves e5\n").unwrap();
    let out = arena(args(&[
        "--engine",
        "random",
        "--engine",
        "greedy",
        "--openings",
        file.to_str().unwrap(),
    ]))
    .await;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("openings.txt") && err.contains("line 1"),
        "{err}"
    );
}

/// A TCP proxy in front of the server that cuts its first connection when the client sends its
/// `cut_at`-th request-sized packet (mid-call), then forwards later connections normally, or —
/// with `stay_down` — refuses all of them.
async fn flaky_proxy(target: SocketAddr, cut_at: usize, stay_down: bool) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut first = true;
        loop {
            let Ok((client, _)) = listener.accept().await else {
                return;
            };
            let cut = first.then_some(cut_at);
            first = false;
            if stay_down {
                // Serve the first connection to its cut, then go away (the listener closes).
                pipe(client, target, cut).await;
                return;
            }
            tokio::spawn(pipe(client, target, cut));
        }
    });
    addr
}

async fn pipe(mut client: TcpStream, target: SocketAddr, cut: Option<usize>) {
    let Ok(mut server) = TcpStream::connect(target).await else {
        return;
    };
    let (mut cr, mut cw) = client.split();
    let (mut sr, mut sw) = server.split();
    let (mut up, mut down) = (vec![0u8; 1 << 16], vec![0u8; 1 << 16]);
    let mut requests = 0;
    loop {
        tokio::select! {
            n = cr.read(&mut up) => {
                let Ok(n @ 1..) = n else { return };
                // HTTP/2 control frames are small; a BestMove request (headers + a FEN and
                // moves) is not.
                if n >= 60 {
                    requests += 1;
                    if Some(requests) == cut {
                        return;
                    }
                }
                if sw.write_all(&up[..n]).await.is_err() {
                    return;
                }
            }
            n = sr.read(&mut down) => {
                let Ok(n @ 1..) = n else { return };
                if cw.write_all(&down[..n]).await.is_err() {
                    return;
                }
            }
        }
    }
}

fn server_addr(server: &TestServer) -> SocketAddr {
    server.url.trim_start_matches("http://").parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_connection_is_retried_and_the_game_goes_on() {
    let server = TestServer::start(server_config()).await;
    let proxy = flaky_proxy(server_addr(&server), 5, false).await;
    let dir = tempfile::tempdir().unwrap();
    let out = arena(args(&[
        "--engine",
        &format!("server:{proxy},playouts=200"),
        "--engine",
        "random",
        "--games",
        "1",
        "--seed",
        "3",
        "--out",
        dir.path().to_str().unwrap(),
    ]))
    .await;
    assert_ok(&out);
    let (records, lines, summary) = read_out(dir.path());
    check_records(&records, &lines);
    let engine = &summary["engines"][0];
    assert!(engine["retries"].as_u64().unwrap() >= 1, "{engine}");
    assert_eq!(engine["engine_failures"], 0);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_stays_down_loses_by_engine_failure() {
    let server = TestServer::start(server_config()).await;
    let proxy = flaky_proxy(server_addr(&server), 3, true).await;
    let dir = tempfile::tempdir().unwrap();
    let out = arena(args(&[
        "--engine",
        &format!("server:{proxy},playouts=200,name=flaky"),
        "--engine",
        "random",
        "--games",
        "1",
        "--json",
        "--out",
        dir.path().to_str().unwrap(),
    ]))
    .await;
    assert_ok(&out);
    let (records, lines, summary) = read_out(dir.path());
    let r = &records[0];
    assert_eq!(r.termination, "engine-failure");
    assert_eq!(r.result, "0-1", "the server had White");
    r.replay().unwrap();
    assert!(
        lines[0]["detail"]
            .as_str()
            .unwrap()
            .contains("5 attempts failed"),
        "{}",
        lines[0]
    );
    let engine = &summary["engines"][0];
    assert_eq!(engine["name"], "flaky");
    assert_eq!(engine["engine_failures"], 1);
    assert_eq!(engine["retries"], 4);
    assert_eq!(summary["pairings"][0]["losses"], 1);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_token_reaches_the_server_and_refusals_are_not_retried() {
    let server = TestServer::start(ServerConfig {
        auth_token: Some("s3cret".to_owned()),
        ..server_config()
    })
    .await;
    let engine = format!("{},playouts=100", server.url.replace("http://", "server:"));
    let base = [
        "--engine",
        engine.as_str(),
        "--engine",
        "greedy",
        "--games",
        "1",
        "--json",
    ];
    let mut with_token = args(&base);
    with_token.extend(args(&["--token", "s3cret"]));
    let summary: Value = serde_json::from_str(assert_ok(&arena(with_token).await).trim()).unwrap();
    assert_eq!(summary["engines"][0]["engine_failures"], 0, "{summary}");
    assert!(summary["engines"][0]["moves"].as_u64().unwrap() > 0);

    let summary: Value = serde_json::from_str(assert_ok(&arena(args(&base)).await).trim()).unwrap();
    assert_eq!(summary["engines"][0]["engine_failures"], 1, "{summary}");
    assert_eq!(
        summary["engines"][0]["retries"], 0,
        "UNAUTHENTICATED is not retried"
    );
    assert_eq!(summary["terminations"]["engine-failure"], 1);
    server.stop().await;
}
