//! End-to-end tests of the service contract: start-up refuses an auth token that would turn
//! auth off, client strings cannot forge log lines, a full tree says so, deadlines are answered
//! with a move or with DEADLINE_EXCEEDED, before they expire, and concurrent searches and kept
//! trees share one tree-memory budget, reported by ServerInfo.
//!
//! The tests of this file share one lock: the deadline test must find the machine idle (the
//! others run searches and start servers), and cargo runs a file's tests in parallel.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use emergo_bot_server::config::ServerConfig;
use emergo_proto::v1 as pb;
use emergo_proto::v1::emergo_bot_client::EmergoBotClient;
use emergo_tests::{INITIAL, TestServer, binary, free_port, run_to_refusal};
use tonic::Code;
use tonic::transport::Channel;

/// Serialises this file's tests (see the module docs).
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A game id that would forge a log line and colour the terminal if logged raw.
const EVIL_ID: &str = "g1\n2030-01-01T00:00:00.000000Z  INFO forged: \u{1b}[31mred\u{1b}[0m";

/// Runs `bot-server` with `args` and the environment `env`, expecting it to refuse to start:
/// returns its exit code and stderr.
fn refused_start(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let (status, stderr) = run_to_refusal(
        Command::new(binary("bot-server"))
            .args(["--listen", "127.0.0.1:0", "--no-http"])
            .args(args)
            .env_remove("EMERGO_AUTH_TOKEN")
            .env_remove("EMERGO_AUTH_TOKEN_FILE")
            .envs(env.iter().copied()),
    );
    (status.code(), stderr)
}

/// A `bot-server` child process with its gRPC client; stdout (the log) piped.
struct Child {
    process: std::process::Child,
    client: EmergoBotClient<Channel>,
}

impl Child {
    /// Starts `bot-server` with `args` and waits until it answers.
    async fn start(args: &[&str]) -> Child {
        let port = free_port();
        let process = Command::new(binary("bot-server"))
            .args(["--listen", &format!("127.0.0.1:{port}"), "--no-http"])
            .args(["--threads", "1"])
            .args(args)
            .env_remove("EMERGO_AUTH_TOKEN")
            .env_remove("EMERGO_AUTH_TOKEN_FILE")
            .env_remove("NO_COLOR")
            .env("RUST_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let url = format!("http://127.0.0.1:{port}");
        let start = Instant::now();
        let client = loop {
            match EmergoBotClient::connect(url.clone()).await {
                Ok(c) => break c,
                Err(_) if start.elapsed() < Duration::from_secs(20) => {
                    tokio::time::sleep(Duration::from_millis(20)).await
                }
                Err(e) => panic!("bot-server did not start: {e}"),
            }
        };
        Child { process, client }
    }

    /// SIGTERM (the client closed first, so that no connection holds the shutdown up), then
    /// everything it logged.
    fn stop(self) -> String {
        let Child {
            mut process,
            client,
        } = self;
        drop(client);
        let sent = Command::new("kill")
            .args(["-TERM", &process.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let mut log = String::new();
        process
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut log)
            .unwrap();
        let status = process.wait().unwrap();
        assert!(status.success(), "bot-server exited with {status}");
        log
    }
}

/// Requests that put client strings into the log: a search with [`EVIL_ID`] as its game id, and
/// a refused one whose bad move (quoted in the error) holds a newline and an escape.
async fn evil_requests(client: &mut EmergoBotClient<Channel>) {
    let reply = client
        .best_move(pb::BestMoveRequest {
            options: Some(pb::SearchOptions {
                game_id: EVIL_ID.into(),
                ..Default::default()
            }),
            ..best_move_playouts(200)
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!reply.best_move.is_empty());
    let status = client
        .best_move(pb::BestMoveRequest {
            position: Some(pb::Position {
                fen: INITIAL.into(),
                moves: vec!["a1\n2030-01-01T00:00:00Z ERROR \u{1b}[2Jx".into()],
            }),
            options: Some(pb::SearchOptions {
                game_id: EVIL_ID.into(),
                ..Default::default()
            }),
            ..best_move_playouts(200)
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
}

fn best_move_playouts(n: u64) -> pb::BestMoveRequest {
    pb::BestMoveRequest {
        position: Some(pb::Position {
            fen: INITIAL.into(),
            moves: vec![],
        }),
        limits: Some(pb::Limits {
            max_time_ms: None,
            max_playouts: Some(n),
            clock: None,
        }),
        options: None,
    }
}

/// `--auth-token ''` (or an empty EMERGO_AUTH_TOKEN) once turned auth off without a
/// word. The server refuses to start, naming the flag; so it does for an empty or unreadable
/// token file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_tokens_are_refused_at_start_up() {
    let _one = ONE_AT_A_TIME.lock().await;
    let (code, stderr) = refused_start(&["--auth-token", ""], &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--auth-token"), "{stderr}");
    assert!(stderr.contains("empty"), "{stderr}");
    let (code, stderr) = refused_start(&[], &[("EMERGO_AUTH_TOKEN", "")]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("EMERGO_AUTH_TOKEN"), "{stderr}");

    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty-token");
    std::fs::write(&empty, " \n\n").unwrap();
    let empty = empty.to_str().unwrap();
    let (code, stderr) = refused_start(&["--auth-token-file", empty], &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--auth-token-file"), "{stderr}");
    assert!(stderr.contains(empty), "{stderr}");
    assert!(stderr.contains("empty"), "{stderr}");

    let missing = dir.path().join("no-such-file");
    let missing = missing.to_str().unwrap();
    let (code, stderr) = refused_start(&["--auth-token-file", missing], &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains(missing), "{stderr}");
    assert!(stderr.contains("cannot read"), "{stderr}");
}

/// The token can come from a file (trimmed), and is then enforced.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_file_enables_auth() {
    let _one = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("token");
    std::fs::write(&file, "  s3cret-from-file\n").unwrap();
    let mut server = Child::start(&["--auth-token-file", file.to_str().unwrap()]).await;
    let req = || pb::LegalMovesRequest {
        position: Some(pb::Position {
            fen: INITIAL.into(),
            moves: vec![],
        }),
    };
    let status = server.client.legal_moves(req()).await.unwrap_err();
    assert_eq!(status.code(), Code::Unauthenticated, "{status:?}");
    let mut right = tonic::Request::new(req());
    right
        .metadata_mut()
        .insert("authorization", "Bearer s3cret-from-file".parse().unwrap());
    let moves = server.client.legal_moves(right).await.unwrap().into_inner();
    assert_eq!(moves.moves.len(), 40);
    server.stop();
}

/// A game id holding a newline once forged a log line, ANSI escapes reached the log
/// raw, and the log was coloured even when it was not a terminal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_strings_cannot_forge_log_lines() {
    let _one = ONE_AT_A_TIME.lock().await;
    let mut server = Child::start(&[]).await;
    evil_requests(&mut server.client).await;
    let log = server.stop();
    // The id was logged, escaped.
    assert!(
        log.contains(r"g1\n2030-01-01T00:00:00.000000Z  INFO forged: \u{1b}[31mred"),
        "{log}"
    );
    for line in log.lines() {
        assert!(!line.starts_with("2030-"), "forged line: {line:?}\n{log}");
        assert!(
            !line.contains("forged") || line.contains(r"g1\n2030"),
            "{line:?}"
        );
    }
    // No escape character at all: neither the client's nor colour codes (stdout is a pipe).
    assert!(!log.contains('\u{1b}'), "{log:?}");
    // The refused request's error (which quotes the bad move) is there too, on its own line.
    assert!(log.contains("refused"), "{log}");
}

/// `--log-format json` writes one JSON object per line; client strings travel
/// inside them, escaped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_log_is_one_object_per_line() {
    let _one = ONE_AT_A_TIME.lock().await;
    let mut server = Child::start(&["--log-format", "json"]).await;
    evil_requests(&mut server.client).await;
    let log = server.stop();
    let mut game_ids = Vec::new();
    for line in log.lines() {
        let value: serde_json::Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}\n{log}"));
        assert!(value.is_object(), "{line}");
        assert!(value["fields"]["message"].is_string(), "{line}");
        if let Some(id) = value["span"]["game_id"].as_str() {
            game_ids.push(id.to_owned());
        }
    }
    assert!(!game_ids.is_empty(), "no game id logged:\n{log}");
    for id in game_ids {
        assert_eq!(
            id,
            r"g1\n2030-01-01T00:00:00.000000Z  INFO forged: \u{1b}[31mred\u{1b}[0m"
        );
    }
    assert!(!log.contains('\u{1b}'), "{log:?}");
}

/// A full tree used not to say so. The statistics carry `node_cap_reached`; the
/// search goes on (here to its playout budget) and still answers with a move.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_tree_says_so() {
    let _one = ONE_AT_A_TIME.lock().await;
    let server = TestServer::start(ServerConfig {
        threads: 1,
        max_nodes: 1_000,
        ..ServerConfig::default()
    })
    .await;
    let mut c = server.client().await;
    let reply = c
        .best_move(pb::BestMoveRequest {
            options: Some(pb::SearchOptions {
                exhaustive: true,
                ..Default::default()
            }),
            ..best_move_playouts(3_000)
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!reply.best_move.is_empty());
    let analysis = reply.analysis.unwrap();
    let stats = analysis.stats.unwrap();
    assert!(stats.node_cap_reached, "{stats:?}");
    assert!(stats.nodes <= 1_000, "{stats:?}");
    assert_eq!(stats.playouts, 3_000);
    assert_eq!(analysis.stop_reason(), pb::StopReason::Playouts);
    // Analyze says it in the updates too, from the moment the tree is full.
    let mut stream = c
        .analyze(pb::AnalyzeRequest {
            position: best_move_playouts(0).position,
            limits: Some(pb::Limits {
                max_time_ms: Some(400),
                max_playouts: None,
                clock: None,
            }),
            options: Some(pb::SearchOptions {
                exhaustive: true,
                ..Default::default()
            }),
            report_interval_ms: 50,
        })
        .await
        .unwrap()
        .into_inner();
    let mut last = None;
    while let Some(update) = stream.message().await.unwrap() {
        last = Some(update);
    }
    let last = last.unwrap();
    assert!(last.r#final);
    assert!(last.stats.unwrap().node_cap_reached);
    server.stop().await;

    // A tree with room does not say it.
    let server = TestServer::start(ServerConfig {
        threads: 1,
        ..ServerConfig::default()
    })
    .await;
    let reply = server
        .client()
        .await
        .best_move(best_move_playouts(300))
        .await
        .unwrap()
        .into_inner();
    assert!(!reply.analysis.unwrap().stats.unwrap().node_cap_reached);
    server.stop().await;
}

const MIB: u64 = 1 << 20;

/// An Analyze of the initial position for game `game_id`: `playouts` playouts (analysis mode, so
/// all of them) on `threads` threads. A playout budget rather than time keeps the trees small
/// and of a known order of size on any machine.
fn analyze_game(game_id: &str, playouts: u64, threads: u32) -> pb::AnalyzeRequest {
    pb::AnalyzeRequest {
        position: best_move_playouts(0).position,
        limits: Some(pb::Limits {
            max_time_ms: None,
            max_playouts: Some(playouts),
            clock: None,
        }),
        options: Some(pb::SearchOptions {
            game_id: game_id.into(),
            threads,
            exhaustive: true,
            ..Default::default()
        }),
        report_interval_ms: 50,
    }
}

/// Runs an Analyze stream to its end and returns the final update.
async fn final_update(
    mut c: EmergoBotClient<Channel>,
    r: pb::AnalyzeRequest,
) -> pb::AnalysisUpdate {
    let mut stream = c.analyze(r).await.unwrap().into_inner();
    let mut last = None;
    while let Some(update) = stream.message().await.unwrap() {
        last = Some(update);
    }
    last.unwrap()
}

/// Searches and kept trees share one `--max-tree-memory`. Two concurrent
/// searches with game ids run within it while ServerInfo says how much is in use (never more
/// than the budget); their trees are kept; a search that needs the whole budget evicts them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn searches_and_kept_trees_share_the_tree_memory_budget() {
    let _one = ONE_AT_A_TIME.lock().await;
    let server = TestServer::start(ServerConfig {
        threads: 2,
        max_tree_memory: Some(32 * MIB),
        ..ServerConfig::default()
    })
    .await;
    let mut c = server.client().await;
    let info = c
        .server_info(pb::ServerInfoRequest {})
        .await
        .unwrap()
        .into_inner();
    let limits = info.limits.unwrap();
    assert_eq!(limits.max_tree_memory_bytes, 32 * MIB);
    assert_eq!(limits.tree_memory_per_thread_bytes, 16 * MIB);
    let load = info.load.unwrap();
    assert_eq!((load.tree_memory_bytes, load.kept_tree_bytes), (0, 0));

    let a = tokio::spawn(final_update(c.clone(), analyze_game("a", 20_000, 1)));
    let b = tokio::spawn(final_update(c.clone(), analyze_game("b", 20_000, 1)));
    // Watch the load while they run.
    let mut seen = Vec::new();
    while !(a.is_finished() && b.is_finished()) {
        let load = c
            .server_info(pb::ServerInfoRequest {})
            .await
            .unwrap()
            .into_inner()
            .load
            .unwrap();
        seen.push((load.tree_memory_bytes, load.kept_tree_bytes));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for (in_use, kept) in &seen {
        assert!(*in_use <= 32 * MIB && kept <= in_use, "{seen:?}");
    }
    for update in [a.await.unwrap(), b.await.unwrap()] {
        assert!(update.r#final);
        assert_eq!(update.stop_reason(), pb::StopReason::Playouts);
        let stats = update.stats.unwrap();
        assert!(stats.tree_bytes > 0, "{stats:?}");
        // A one-thread search's share is half the budget.
        assert!(stats.tree_bytes <= 16 * MIB, "{stats:?}");
    }
    // Both trees are kept (the final update leaves after the tree is parked), and what is in
    // use now is theirs.
    let load = c
        .server_info(pb::ServerInfoRequest {})
        .await
        .unwrap()
        .into_inner()
        .load
        .unwrap();
    assert_eq!(load.kept_games, 2, "{load:?}");
    assert!(load.kept_tree_bytes > 0, "{load:?}");
    assert_eq!(load.tree_memory_bytes, load.kept_tree_bytes, "{load:?}");

    // A two-thread search's share is the whole budget: the kept trees make room for it.
    let c2 = final_update(c.clone(), analyze_game("c", 5_000, 2)).await;
    assert!(c2.stats.unwrap().tree_bytes > 0);
    let load = c
        .server_info(pb::ServerInfoRequest {})
        .await
        .unwrap()
        .into_inner()
        .load
        .unwrap();
    assert_eq!(load.kept_games, 1, "{load:?}");
    assert!(load.tree_memory_bytes <= 32 * MIB, "{load:?}");
    // Whatever happened between the polls: nothing was ever granted beyond the budget.
    assert!(server.engine.memory.peak() <= 32 * 1024 * 1024);
    server.stop().await;
}

/// `--max-tree-memory` takes sizes with units and refuses a budget too small
/// for search trees, naming the flag.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tree_memory_flag_is_checked_at_start_up() {
    let _one = ONE_AT_A_TIME.lock().await;
    let (code, stderr) = refused_start(&["--max-tree-memory", "1MiB"], &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--max-tree-memory"), "{stderr}");
    assert!(stderr.contains("too small"), "{stderr}");
    let (code, stderr) = refused_start(&[], &[("EMERGO_MAX_TREE_MEMORY", "lots")]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("is not a size"), "{stderr}");
}

/// A request whose deadline ran out while it waited for search threads was
/// answered CANCELLED "Timeout expired" (tonic's timeout layer, when the deadline had already
/// passed). The server itself answers DEADLINE_EXCEEDED now, while the client still listens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deadline_while_waiting_for_threads_is_deadline_exceeded() {
    let _one = ONE_AT_A_TIME.lock().await;
    let server = TestServer::start(ServerConfig {
        threads: 1,
        max_queue_wait_ms: 10_000,
        ..ServerConfig::default()
    })
    .await;
    let mut busy = server.client().await;
    // Exhaustive: smart pruning must not end it (and free the thread) early.
    let long = pb::BestMoveRequest {
        options: Some(pb::SearchOptions {
            exhaustive: true,
            ..Default::default()
        }),
        ..best_move(1_500)
    };
    let running = tokio::spawn(async move { busy.best_move(long).await });
    while server.engine.running_searches() == 0 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let mut c = server.client().await;
    let mut req = tonic::Request::new(best_move(1_000));
    req.set_timeout(Duration::from_millis(30));
    let status = c.best_move(req).await.unwrap_err();
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    assert!(status.message().contains("deadline"), "{status:?}");
    // Analyze too: the stream ends with the status.
    let mut req = tonic::Request::new(pb::AnalyzeRequest {
        position: best_move_playouts(0).position,
        limits: best_move(1_000).limits,
        options: None,
        report_interval_ms: 0,
    });
    req.set_timeout(Duration::from_millis(30));
    let status = match c.analyze(req).await {
        Err(status) => status,
        Ok(stream) => stream.into_inner().message().await.unwrap_err(),
    };
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    // A deadline too short to search at all: the same, at once.
    let mut req = tonic::Request::new(best_move(1_000));
    req.set_timeout(Duration::from_millis(5));
    let status = c.best_move(req).await.unwrap_err();
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    // The queued requests were not refusals, and the running search was not disturbed.
    assert_eq!(server.engine.admission.refused(), 0);
    assert!(running.await.unwrap().is_ok());
    server.stop().await;
}

/// With 20–100 ms deadlines, 1–3 calls in 10 used to miss them. On an idle server
/// every call now gets its move in time, the search clipped to the deadline. One miss in 30 is
/// tolerated: this test shares its machine (on a developer's box, with builds), and a scheduler
/// hiccup of a few milliseconds is all a 20 ms deadline can absorb. How often calls miss under
/// load is measured by `deadline_miss_rate`, not asserted here.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn short_deadlines_get_moves_in_time() {
    let _one = ONE_AT_A_TIME.lock().await;
    let server = TestServer::start(ServerConfig {
        threads: 2,
        ..ServerConfig::default()
    })
    .await;
    let mut c = server.client().await;
    let mut misses = Vec::new();
    for deadline_ms in [20, 50, 100] {
        for _ in 0..10 {
            let mut req = tonic::Request::new(best_move(10_000));
            req.set_timeout(Duration::from_millis(deadline_ms));
            let reply = match c.best_move(req).await {
                Ok(reply) => reply.into_inner(),
                // Late: the client's own timer fired (tonic calls that CANCELLED), or the
                // server found the deadline too close to search.
                Err(s) if matches!(s.code(), Code::Cancelled | Code::DeadlineExceeded) => {
                    misses.push(format!("{deadline_ms} ms: {s:?}"));
                    continue;
                }
                Err(s) => panic!("{deadline_ms} ms deadline: {s:?}"),
            };
            assert!(!reply.best_move.is_empty());
            let reason = reply.analysis.unwrap().stop_reason();
            assert!(
                matches!(
                    reason,
                    pb::StopReason::Deadline | pb::StopReason::BestMoveSettled
                ),
                "{reason:?}"
            );
        }
    }
    assert!(
        misses.len() <= 1,
        "{} of 30 calls missed: {misses:#?}",
        misses.len()
    );
    server.stop().await;
}

fn best_move(max_time_ms: u32) -> pb::BestMoveRequest {
    pb::BestMoveRequest {
        position: Some(pb::Position {
            fen: INITIAL.into(),
            moves: vec![],
        }),
        limits: Some(pb::Limits {
            max_time_ms: Some(max_time_ms),
            max_playouts: None,
            clock: None,
        }),
        options: None,
    }
}

/// Outcome of one BestMove call with a deadline, seen from the client.
#[derive(Debug)]
struct Timed {
    code: Code,
    elapsed: Duration,
    /// The search's own time (stats.elapsed_ms), for answers.
    searched: Option<Duration>,
}

async fn timed_best_move(client: &mut EmergoBotClient<Channel>, deadline: Duration) -> Timed {
    let mut req = tonic::Request::new(best_move(10_000));
    req.set_timeout(deadline);
    let start = Instant::now();
    let r = client.best_move(req).await;
    let elapsed = start.elapsed();
    let code = match &r {
        Ok(reply) if reply.get_ref().best_move.is_empty() => Code::Internal,
        Ok(_) => Code::Ok,
        Err(status) => status.code(),
    };
    let searched = r.ok().and_then(|reply| {
        let stats = reply.into_inner().analysis?.stats?;
        Some(Duration::from_millis(stats.elapsed_ms))
    });
    Timed {
        code,
        elapsed,
        searched,
    }
}

/// Measures how many BestMove calls with short deadlines miss them (an error, or an answer
/// after the deadline). Performance is measured, not asserted: run it by hand, on an idle and a
/// loaded machine, with
/// `cargo test --release -p emergo-tests --test e2e -- --ignored --nocapture deadline_miss_rate`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement, run by hand"]
async fn deadline_miss_rate() {
    let _one = ONE_AT_A_TIME.lock().await;
    let calls: usize = std::env::var("EMERGO_MISS_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let server = TestServer::start(ServerConfig {
        threads: 2,
        ..ServerConfig::default()
    })
    .await;
    let mut client = server.client().await;
    for deadline_ms in [20, 50, 100] {
        let deadline = Duration::from_millis(deadline_ms);
        let mut misses = 0;
        let mut codes = std::collections::BTreeMap::new();
        let mut worst = Duration::ZERO;
        // Client-side time beyond the search's own: request transit, start, stop, answer.
        let mut overheads = Vec::new();
        let mut searched = Vec::new();
        for _ in 0..calls {
            let t = timed_best_move(&mut client, deadline).await;
            if t.code != Code::Ok || t.elapsed > deadline {
                misses += 1;
            }
            *codes.entry(format!("{:?}", t.code)).or_insert(0) += 1;
            worst = worst.max(t.elapsed);
            if let Some(s) = t.searched {
                overheads.push(t.elapsed.saturating_sub(s).as_secs_f64() * 1e3);
                searched.push(s.as_secs_f64() * 1e3);
            }
        }
        let pct = |v: &mut Vec<f64>, p: f64| {
            v.sort_by(f64::total_cmp);
            v.get(((v.len() as f64 - 1.0) * p).round() as usize)
                .copied()
                .unwrap_or(f64::NAN)
        };
        println!(
            "deadline {deadline_ms} ms: {misses}/{calls} missed, worst {:.1} ms, codes {codes:?}; \
             searched median {:.0} ms; overhead median {:.1} ms, p90 {:.1} ms, max {:.1} ms",
            worst.as_secs_f64() * 1e3,
            pct(&mut searched, 0.5),
            pct(&mut overheads, 0.5),
            pct(&mut overheads, 0.9),
            pct(&mut overheads, 1.0),
        );
    }
    server.stop().await;
}
