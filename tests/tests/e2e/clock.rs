//! Game clocks and time budgets end to end: BestMove with `Limits.clock` over gRPC and
//! the HTTP gateway, and `emergo arena --tc` against a server. Timings are never asserted as
//! numbers; only relations the time manager promises (budget within the clock less the margin,
//! the answer's wall time within the hard limit plus slack for a loaded machine).

use std::process::Command;
use std::time::Instant;

use emergo_bot_server::config::ServerConfig;
use emergo_cli::client::record::parse_pgn;
use emergo_proto::v1 as pb;
use emergo_tests::{INITIAL, TestServer, binary};
use serde_json::Value;

fn config() -> ServerConfig {
    ServerConfig {
        threads: 2,
        ..ServerConfig::default()
    }
}

fn request(moves: &[String], limits: pb::Limits, game_id: &str) -> pb::BestMoveRequest {
    pb::BestMoveRequest {
        position: Some(pb::Position {
            fen: INITIAL.into(),
            moves: moves.to_vec(),
        }),
        limits: Some(limits),
        options: Some(pb::SearchOptions {
            threads: 1,
            game_id: game_id.into(),
            ..Default::default()
        }),
    }
}

fn clock(remaining_ms: u32, increment_ms: u32) -> pb::Limits {
    pb::Limits {
        clock: Some(pb::Clock {
            remaining_ms,
            increment_ms,
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn stats(r: &pb::BestMoveResponse) -> pb::SearchStats {
    r.analysis.as_ref().unwrap().stats.unwrap()
}

#[tokio::test]
async fn best_move_with_a_clock_reports_a_budget_within_it() {
    let server = TestServer::start(config()).await;
    let mut client = server.client().await;
    let margin = u64::from(ServerConfig::default().clock_margin_ms);

    // An ordinary clock: the budget is a share, well within the time left less the margin.
    let r = client
        .best_move(request(&["a1".into()], clock(4_000, 100), ""))
        .await
        .unwrap()
        .into_inner();
    assert!(!r.best_move.is_empty());
    let s = stats(&r);
    assert!(s.budget_ms > 0 && s.budget_ms <= s.budget_max_ms, "{s:?}");
    assert!(s.budget_max_ms <= 4_000 - margin, "{s:?}");
    assert!(
        s.budget_ms < 4_000 / 4,
        "a share, not the whole clock: {s:?}"
    );
    use pb::BudgetReason as B;
    let reason = B::try_from(s.budget_reason).unwrap();
    assert!(
        matches!(reason, B::Share | B::Extended | B::Settled),
        "{reason:?}"
    );
    assert!(s.answer_wall_ms >= s.elapsed_ms, "{s:?}");

    // 30 ms left: all of it is margin; the floor, and an answer all the same.
    let r = client
        .best_move(request(&["a1".into()], clock(30, 0), ""))
        .await
        .unwrap()
        .into_inner();
    assert!(!r.best_move.is_empty());
    let s = stats(&r);
    assert_eq!(B::try_from(s.budget_reason), Ok(B::LowTime), "{s:?}");
    assert!(s.budget_max_ms < 30, "{s:?}");

    // max_time_ms caps the clock's share.
    let mut limits = clock(60_000, 1_000);
    limits.max_time_ms = Some(40);
    let r = client
        .best_move(request(&["a1".into()], limits, ""))
        .await
        .unwrap()
        .into_inner();
    let s = stats(&r);
    assert_eq!(B::try_from(s.budget_reason), Ok(B::Capped), "{s:?}");
    assert_eq!((s.budget_ms, s.budget_max_ms), (40, 40), "{s:?}");

    // No clock: the fixed budget is reported as such.
    let r = client
        .best_move(request(
            &["a1".into()],
            pb::Limits {
                max_time_ms: Some(30),
                ..Default::default()
            },
            "",
        ))
        .await
        .unwrap()
        .into_inner();
    let s = stats(&r);
    assert_eq!(B::try_from(s.budget_reason), Ok(B::Fixed), "{s:?}");
    assert_eq!(s.budget_ms, 30);

    // Bad clocks are refused naming the field.
    for (limits, field) in [
        (clock(0, 100), "limits.clock.remaining_ms"),
        (
            pb::Limits {
                clock: Some(pb::Clock {
                    remaining_ms: 1_000,
                    moves_to_go: Some(0),
                    ..Default::default()
                }),
                ..Default::default()
            },
            "limits.clock.moves_to_go",
        ),
    ] {
        let e = client
            .best_move(request(&[], limits, ""))
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::InvalidArgument);
        assert!(e.message().starts_with(field), "{}", e.message());
    }
    server.stop().await;
}

/// The gateway's JSON follows the contract: `limits.clock` in, the budget figures out.
/// A budget the server's caps cut is reported as capped, with the budget granted,
/// whatever ended the search (time, or the best move settling early).
#[tokio::test]
async fn a_budget_cut_by_the_server_cap_says_capped() {
    let server = TestServer::start(ServerConfig {
        max_time_ms: 60,
        ..config()
    })
    .await;
    let mut client = server.client().await;
    use pb::BudgetReason as B;
    let fixed = |ms: u32| pb::Limits {
        max_time_ms: Some(ms),
        ..Default::default()
    };
    let r = client
        .best_move(request(&["a1".into()], fixed(5_000), ""))
        .await
        .unwrap()
        .into_inner();
    let s = stats(&r);
    assert_eq!(B::try_from(s.budget_reason), Ok(B::Capped), "{s:?}");
    assert_eq!((s.budget_ms, s.budget_max_ms), (60, 60), "{s:?}");
    // Within the cap: fixed.
    let r = client
        .best_move(request(&["a1".into()], fixed(60), ""))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(B::try_from(stats(&r).budget_reason), Ok(B::Fixed));
    server.stop().await;
}

#[tokio::test]
async fn the_http_gateway_takes_a_clock() {
    let server = TestServer::start(config()).await;
    let r = reqwest::Client::new()
        .post(format!("{}/v1/BestMove", server.http_url))
        .json(&serde_json::json!({
            "position": {"fen": INITIAL, "moves": ["a1"]},
            "limits": {"clock": {"remainingMs": 2000, "incrementMs": 50, "movesToGo": 10}},
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let v: Value = r.json().await.unwrap();
    let stats = &v["analysis"]["stats"];
    let budget: u64 = stats["budgetMs"].as_str().unwrap().parse().unwrap();
    let hard: u64 = stats["budgetMaxMs"].as_str().unwrap().parse().unwrap();
    assert!(budget > 0 && budget <= hard && hard <= 2_000 - 50, "{v}");
    assert!(
        stats["budgetReason"]
            .as_str()
            .unwrap()
            .starts_with("BUDGET_REASON_")
    );
    assert!(stats["answerWallMs"].is_string(), "{v}");
    server.stop().await;
}

/// A short timed match against a server: nobody flags, and the records carry the clocks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arena_under_a_clock_keeps_the_server_on_time() {
    let server = TestServer::start(ServerConfig {
        threads: 1,
        ..ServerConfig::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_path_buf();
    let engine = format!(
        "{},name=srv",
        server.url.replace("http://", "server:http://")
    );
    let args: Vec<String> = [
        "--engine",
        &engine,
        "--engine",
        "ab:name=ab",
        "--tc",
        "2+0.1",
        "--games",
        "2",
        "--max-turns",
        "40",
        "--seed",
        "13",
        "--out",
        out.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let o = tokio::task::spawn_blocking(move || {
        Command::new(binary("emergo"))
            .arg("arena")
            .args(&args)
            .env_remove("EMERGO_AUTH_TOKEN")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{}\n{stdout}",
        String::from_utf8_lossy(&o.stderr)
    );
    let pgn = std::fs::read_to_string(out.join("games.pgn")).unwrap();
    let records = parse_pgn(&pgn).unwrap();
    assert_eq!(records.len(), 2);
    for r in &records {
        r.replay().unwrap();
        assert_eq!(r.tag("TimeControl"), Some("2+0.1"), "{}", r.to_pgn());
        assert!(r.tag("WhiteClock").is_some() && r.tag("BlackClock").is_some());
    }
    let text = std::fs::read_to_string(out.join("summary.jsonl")).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (summary, games) = lines.split_last().unwrap();
    for g in games {
        let side = if g["white"] == "srv" {
            "white"
        } else {
            "black"
        };
        let clocks = g[format!("{side}_clock_ms")].as_array().unwrap();
        let used = g[format!("{side}_used_ms")].as_array().unwrap();
        assert_eq!(clocks.len(), used.len());
        assert!(!clocks.is_empty(), "{g}");
        // The server's clock never ran out, and every move was charged.
        assert!(clocks.iter().all(|c| c.as_u64().unwrap() > 0), "{g}");
        if g["termination"] == "time-forfeit" {
            assert_ne!(
                g["detail"].as_str().unwrap().split(' ').next(),
                Some("srv"),
                "{g}"
            );
        }
    }
    let srv = summary["engines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "srv")
        .unwrap();
    assert_eq!(srv["time_losses"], 0, "{summary}");
    assert_eq!(srv["timeouts"], 0, "{summary}");
    assert!(stdout.contains("clock/no answer"), "{stdout}");
    server.stop().await;
}

/// `--tc` parsing and its conflicts, offline (no server needed).
#[test]
fn tc_is_checked() {
    let run = |extra: &[&str]| {
        let o = Command::new(binary("emergo"))
            .args([
                "arena", "--engine", "random", "--engine", "greedy", "--games", "1",
            ])
            .args(extra)
            .output()
            .unwrap();
        (
            o.status.success(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (ok, err) = run(&["--tc", "ten+1"]);
    assert!(!ok && err.contains("--tc"), "{err}");
    let (ok, err) = run(&["--tc", "1+0.1", "--time", "100ms"]);
    assert!(!ok && err.contains("--time"), "{err}");
    let (ok, err) = run(&["--tc", "1+0.1", "--engine", "mcts:time=100ms"]);
    assert!(!ok && err.contains("time= does not mix with --tc"), "{err}");
    let (ok, err) = run(&["--tc", "0.5+0.05", "--max-turns", "10"]);
    assert!(ok, "{err}");
}

/// The benchmark (run by hand: `cargo test --release -p emergo-tests --test
/// e2e -- --ignored --nocapture reuse_wall_gap`): one game, its tree reused from move to
/// move, first with a fixed `max_time_ms`, then with a clock whose share is the same (both
/// count from the request's arrival); prints the median and worst of
/// answer wall time − budget for answers that reused 20,000–100,000 visits.
/// A fixed `max_time_ms` counts from the request's arrival, as a referee counts: a request
/// that waited for the only search thread longer than its budget searches at once for the
/// least time and answers, reporting the client's budget and the wall time it really took.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fixed_budget_counts_from_arrival() {
    let server = TestServer::start(ServerConfig {
        threads: 1,
        ..ServerConfig::default()
    })
    .await;
    let mut first = server.client().await;
    let mut second = server.client().await;
    let long = pb::Limits {
        max_time_ms: Some(800),
        ..Default::default()
    };
    let short = pb::Limits {
        max_time_ms: Some(200),
        ..Default::default()
    };
    let mut exhaustive = request(&[], long, "");
    exhaustive.options.as_mut().unwrap().exhaustive = true;
    let holder = tokio::spawn(async move { first.best_move(exhaustive).await });
    // The second request arrives while the first holds the thread.
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let r = second
        .best_move(request(&[], short, ""))
        .await
        .unwrap()
        .into_inner();
    holder.await.unwrap().unwrap();
    assert!(!r.best_move.is_empty(), "{r:?}");
    let s = stats(&r);
    assert_eq!(s.budget_ms, 200, "{s:?}");
    assert_eq!(s.budget_reason, pb::BudgetReason::Fixed as i32, "{s:?}");
    // It waited about 700 ms: its budget was spent before it could start.
    assert!(s.answer_wall_ms >= 400, "{s:?}");
    assert!(
        s.elapsed_ms < 100,
        "the search took its whole budget after waiting: {s:?}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore]
async fn reuse_wall_gap() {
    let server = TestServer::start(config()).await;
    let mut client = server.client().await;
    for (mode, limits) in [
        (
            "fixed 400 ms",
            pb::Limits {
                max_time_ms: Some(400),
                ..Default::default()
            },
        ),
        ("clock 10 s + 0 (share ~400 ms)", clock(10_000, 0)),
    ] {
        let game_id = format!("gap-{}", limits.clock.is_some());
        let mut moves: Vec<String> = vec![];
        let mut gaps: Vec<i64> = vec![];
        let mut rtt_gaps: Vec<i64> = vec![];
        for _ in 0..40 {
            let mut req = request(&moves, limits, &game_id);
            req.options.as_mut().unwrap().threads = 2;
            let t = Instant::now();
            let r = match client.best_move(req).await {
                Ok(r) => r.into_inner(),
                Err(e) => panic!("{e}"),
            };
            let rtt = t.elapsed();
            if r.best_move.is_empty() {
                break;
            }
            let s = stats(&r);
            let reason = pb::BudgetReason::try_from(s.budget_reason).unwrap();
            let timed = matches!(reason, pb::BudgetReason::Share | pb::BudgetReason::Fixed);
            if (20_000..=100_000).contains(&s.reused_visits) && timed {
                gaps.push(s.answer_wall_ms as i64 - s.budget_ms as i64);
                rtt_gaps.push(rtt.as_millis() as i64 - s.budget_ms as i64);
            }
            moves.push(r.best_move);
            // The opponent's reply: the server's own best guess, so the tree is reused.
            let reply = r.analysis.unwrap().moves[0].pv.get(1).cloned();
            match reply {
                Some(m) => moves.push(m),
                None => break,
            }
        }
        gaps.sort_unstable();
        rtt_gaps.sort_unstable();
        let pick = |v: &[i64], q: usize| v.get(v.len() * q / 100).copied();
        println!(
            "{mode}: {} answers with 20k-100k reused visits; answer_wall_ms - budget_ms: median \
             {:?}, worst {:?}; client round trip - budget: median {:?}, worst {:?}",
            gaps.len(),
            pick(&gaps, 50),
            gaps.last(),
            pick(&rtt_gaps, 50),
            rtt_gaps.last()
        );
    }
    server.stop().await;
}
