//! End-to-end tests of the gRPC service: a real server on a loopback port, real clients.

use std::time::{Duration, Instant};

use emergo_bot_server::config::ServerConfig;
use emergo_proto::v1 as pb;
use emergo_rules::{Game, Position};
use emergo_tests::requests::{best_move, millis, playouts, position};
use emergo_tests::{INITIAL, TestServer};
use tonic::Code;

fn config() -> ServerConfig {
    ServerConfig {
        threads: 2,
        ..ServerConfig::default()
    }
}

/// Asserts that every move of `pv` is legal in sequence from the position.
fn assert_legal_line(fen: &str, moves: &[&str], pv: &[String]) {
    let mut game = Game::from_fen_and_moves(fen, moves).unwrap();
    for m in pv {
        game.play_str(m)
            .unwrap_or_else(|e| panic!("PV {pv:?}: {e}"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rules_rpcs() {
    let server = TestServer::start(config()).await;
    let mut client = server.client().await;

    let legal = client
        .legal_moves(pb::LegalMovesRequest {
            position: position(INITIAL, &[]),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(legal.moves.len(), 40);
    assert_eq!(legal.moves[0].r#move, "a1");
    assert_eq!(legal.moves[0].fen_after, "9/9/9/9/9/9/9/9/A@8 b 1 11,12");
    let status = legal.status.unwrap();
    assert_eq!((status.result.as_str(), status.reason.as_str()), ("*", ""));

    let over = client
        .legal_moves(pb::LegalMovesRequest {
            position: position("4LL4/9/9/9/9/9/9/9/9 b 90 0,0", &[]),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(over.moves.is_empty());
    assert_eq!(over.status.unwrap().result, "1-0");

    let applied = client
        .apply_moves(pb::ApplyMovesRequest {
            fen: INITIAL.into(),
            moves: vec!["a1".into(), "i9".into(), "i9".into()],
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!applied.ok);
    assert_eq!(applied.error_index, 2);
    assert!(
        applied.error.contains("i9 is occupied"),
        "{}",
        applied.error
    );
    assert_eq!(applied.fen, "8a@/9/9/9/9/9/9/9/A@8 w 2 11,11");

    let ok = client
        .apply_moves(pb::ApplyMovesRequest {
            fen: INITIAL.into(),
            moves: vec!["a1".into()],
        })
        .await
        .unwrap()
        .into_inner();
    assert!(ok.ok);

    let info = client
        .server_info(pb::ServerInfoRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(info.limits.unwrap().thread_budget, 2);
    assert_eq!(info.load.unwrap().running_searches, 0);
    assert!(!info.version.is_empty());
    // The default engine is the knowledge-driven one, and ServerInfo says so.
    assert_eq!(info.engine, emergo_engine::MctsConfig::strong().describe());
    assert!(
        info.engine.contains("evaluation at the leaf"),
        "{}",
        info.engine
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn best_move_and_analyze() {
    let server = TestServer::start(config()).await;
    let mut client = server.client().await;

    let reply = client
        .best_move(best_move(INITIAL, &["a1"], playouts(3_000)))
        .await
        .unwrap()
        .into_inner();
    let analysis = reply.analysis.unwrap();
    assert!(analysis.r#final);
    assert_eq!(reply.best_move, analysis.best_move);
    let after_a1 = Game::from_fen_and_moves(INITIAL, &["a1"]).unwrap();
    assert!(
        after_a1
            .legal_moves()
            .iter()
            .any(|m| m.to_string() == reply.best_move)
    );
    let stats = analysis.stats.unwrap();
    assert!(
        stats.playouts <= 3_000 && stats.playouts > 0,
        "{}",
        stats.playouts
    );

    // Analyze streams updates while it thinks, then exactly one final update.
    let mut stream = client
        .analyze(pb::AnalyzeRequest {
            position: position(INITIAL, &["a1", "i9"]),
            limits: millis(600),
            options: Some(pb::SearchOptions {
                multi_pv: 3,
                exhaustive: true,
                ..Default::default()
            }),
            report_interval_ms: 50,
        })
        .await
        .unwrap()
        .into_inner();
    let mut updates = Vec::new();
    while let Some(u) = stream.message().await.unwrap() {
        updates.push(u);
    }
    assert!(updates.len() >= 3, "only {} updates", updates.len());
    let (last, rest) = updates.split_last().unwrap();
    assert!(rest.iter().all(|u| !u.r#final && u.stop_reason == 0));
    assert!(last.r#final);
    assert_eq!(last.stop_reason(), pb::StopReason::Time);
    assert_eq!(last.fen, "8a@/9/9/9/9/9/9/9/A@8 w 2 11,11");
    // One headline value, the best move's own.
    assert_eq!(last.best_move, last.moves[0].r#move);
    assert_eq!(last.root_value, last.moves[0].value);
    for m in last.moves.iter().take(3) {
        assert!(m.pv.len() >= 2, "short PV {:?}", m.pv);
        assert_legal_line(INITIAL, &["a1", "i9"], &m.pv);
    }
    let total: u64 = last.moves.iter().map(|m| m.visits).sum();
    assert!(total > 0);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn special_positions_answer_at_once() {
    let server = TestServer::start(config()).await;
    let mut client = server.client().await;
    // Only one legal move.
    let r = client
        .best_move(best_move(
            "9/9/2a@1a@4/9/4a@4/3D@5/9/5A@3/6b@2 b 30 0,0",
            &[],
            millis(30_000),
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(r.best_move, "g1xe3xc5");
    assert_eq!(
        r.analysis.unwrap().stop_reason(),
        pb::StopReason::SingleLegalMove
    );
    // Game over: no move.
    let r = client
        .best_move(best_move(
            "4LL4/9/9/9/9/9/9/9/9 b 90 0,0",
            &[],
            millis(30_000),
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(r.best_move, "");
    assert_eq!(r.analysis.unwrap().stop_reason(), pb::StopReason::GameOver);
    // Root restriction.
    let r = client
        .best_move(pb::BestMoveRequest {
            position: position(INITIAL, &[]),
            limits: playouts(500),
            options: Some(pb::SearchOptions {
                root_moves: vec!["c3".into(), "g7".into()],
                ..Default::default()
            }),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(
        ["c3", "g7"].contains(&r.best_move.as_str()),
        "{}",
        r.best_move
    );
    assert!(r.analysis.unwrap().moves.len() == 2);
    server.stop().await;
}

async fn expect_error<T: std::fmt::Debug>(
    r: Result<tonic::Response<T>, tonic::Status>,
    code: Code,
    needle: &str,
) {
    let status = r.expect_err("expected an error");
    assert_eq!(status.code(), code, "{}", status.message());
    assert!(
        status.message().contains(needle),
        "{:?} does not contain {needle:?}",
        status.message()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_clear_errors() {
    let server = TestServer::start(config()).await;
    let mut c = server.client().await;
    let bm = |fen: &str, moves: &[&str], limits| best_move(fen, moves, limits);

    expect_error(
        c.best_move(bm("9/9/9", &[], millis(10))).await,
        Code::InvalidArgument,
        "position.fen: expected 4",
    )
    .await;
    expect_error(
        c.best_move(bm("9/9/9/9/9/9/9/9/1A@7 w 0 12,12", &[], millis(10)))
            .await,
        Code::InvalidArgument,
        "b1, which is not a playable square",
    )
    .await;
    expect_error(
        c.best_move(bm(INITIAL, &["e5"], millis(10))).await,
        Code::InvalidArgument,
        "position.moves[0]: e5: White's first entry",
    )
    .await;
    expect_error(
        c.best_move(bm(INITIAL, &["a1", "zz9"], millis(10))).await,
        Code::InvalidArgument,
        "position.moves[1]",
    )
    .await;
    expect_error(
        c.best_move(bm(INITIAL, &[], None)).await,
        Code::InvalidArgument,
        "limits",
    )
    .await;
    expect_error(
        c.best_move(bm(INITIAL, &[], playouts(0))).await,
        Code::InvalidArgument,
        "limits.max_playouts",
    )
    .await;
    expect_error(
        c.best_move(pb::BestMoveRequest {
            position: None,
            limits: millis(10),
            options: None,
        })
        .await,
        Code::InvalidArgument,
        "position: required",
    )
    .await;
    expect_error(
        c.best_move(pb::BestMoveRequest {
            position: position(INITIAL, &[]),
            limits: millis(10),
            options: Some(pb::SearchOptions {
                threads: 1000,
                ..Default::default()
            }),
        })
        .await,
        Code::InvalidArgument,
        "options.threads: 1000 requested",
    )
    .await;
    expect_error(
        c.best_move(pb::BestMoveRequest {
            position: position(INITIAL, &[]),
            limits: millis(10),
            options: Some(pb::SearchOptions {
                root_moves: vec!["e5".into()],
                ..Default::default()
            }),
        })
        .await,
        Code::InvalidArgument,
        "options.root_moves[0]",
    )
    .await;
    let mut s = c
        .analyze(pb::AnalyzeRequest {
            position: position(INITIAL, &[]),
            limits: millis(10),
            options: None,
            report_interval_ms: 1,
        })
        .await;
    // Analyze refuses before streaming.
    if let Ok(stream) = &mut s {
        panic!("expected an error, got a stream {:?}", stream.get_ref());
    }
    expect_error(s, Code::InvalidArgument, "report_interval_ms").await;
    // Too many moves, and a message over the size limit.
    let many: Vec<&str> = vec!["a1"; 2_001];
    expect_error(
        c.legal_moves(pb::LegalMovesRequest {
            position: position(INITIAL, &many),
        })
        .await,
        Code::OutOfRange,
        "position.moves",
    )
    .await;
    let huge = "x".repeat(400 * 1024);
    let status = c
        .legal_moves(pb::LegalMovesRequest {
            position: position(&huge, &[]),
        })
        .await
        .unwrap_err();
    assert!(
        matches!(
            status.code(),
            Code::OutOfRange | Code::ResourceExhausted | Code::InvalidArgument
        ),
        "{status:?}"
    );
    expect_error(
        c.apply_moves(pb::ApplyMovesRequest {
            fen: "nonsense".into(),
            moves: vec![],
        })
        .await,
        Code::InvalidArgument,
        "fen: expected 4",
    )
    .await;
    // The server is still fine.
    let info = c
        .server_info(pb::ServerInfoRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(info.load.unwrap().running_searches, 0);
    server.stop().await;
}

async fn wait_for_idle(server: &TestServer, within: Duration) -> Duration {
    let start = Instant::now();
    while server.engine.running_searches() > 0 {
        assert!(
            start.elapsed() < within,
            "searches still running after {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    start.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_frees_threads() {
    let server = TestServer::start(config()).await;
    let mut c = server.client().await;
    // A streaming client that goes away.
    let mut stream = c
        .analyze(pb::AnalyzeRequest {
            position: position(INITIAL, &[]),
            limits: millis(30_000),
            options: Some(pb::SearchOptions {
                threads: 2,
                ..Default::default()
            }),
            report_interval_ms: 50,
        })
        .await
        .unwrap()
        .into_inner();
    let first = stream.message().await.unwrap().unwrap();
    assert!(!first.r#final);
    assert_eq!(server.engine.running_searches(), 1);
    assert_eq!(server.engine.admission.threads_in_use(), 2);
    drop(stream);
    wait_for_idle(&server, Duration::from_secs(2)).await;
    assert_eq!(server.engine.admission.threads_in_use(), 0);

    // A unary call whose client gives up (the future is dropped).
    let mut c2 = server.client().await;
    let call =
        tokio::spawn(async move { c2.best_move(best_move(INITIAL, &[], millis(30_000))).await });
    while server.engine.running_searches() == 0 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    call.abort();
    wait_for_idle(&server, Duration::from_secs(2)).await;
    assert_eq!(server.engine.admission.threads_in_use(), 0);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deadline_clips_the_budget() {
    let server = TestServer::start(config()).await;
    let mut c = server.client().await;
    // tonic's server enforces grpc-timeout itself, so a late answer would be an error here.
    let mut req = tonic::Request::new(pb::BestMoveRequest {
        options: Some(pb::SearchOptions {
            exhaustive: true,
            ..Default::default()
        }),
        ..best_move(INITIAL, &[], millis(30_000))
    });
    req.set_timeout(Duration::from_millis(400));
    let r = c
        .best_move(req)
        .await
        .expect("answer before the deadline")
        .into_inner();
    assert_eq!(r.analysis.unwrap().stop_reason(), pb::StopReason::Deadline);
    assert!(!r.best_move.is_empty());
    // A deadline too short to do anything useful.
    let mut req = tonic::Request::new(best_move(INITIAL, &[], millis(30_000)));
    req.set_timeout(Duration::from_millis(1));
    let status = c.best_move(req).await.unwrap_err();
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    server.stop().await;
}

/// A 50 KB unparsable move once came back as a 50 KB `grpc-message`, which stock gRPC
/// clients refuse (metadata limit) and report as RESOURCE_EXHAUSTED. The echo is cut short.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_bad_moves_get_short_invalid_argument_errors() {
    let server = TestServer::start(config()).await;
    let mut c = server.client().await;
    let huge = "q".repeat(50_000);
    let status = c
        .best_move(best_move(INITIAL, &[huge.as_str()], playouts(10)))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert!(
        status.message().starts_with("position.moves[0]: \"qqq"),
        "{}",
        status.message()
    );
    assert!(
        status.message().chars().count() < 200,
        "{}",
        status.message().len()
    );
    server.stop().await;
}

/// A `grpc-timeout` too large for `Instant + Duration` once made the server panic. It is
/// clamped now: the search runs with its own budget and answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn absurd_grpc_timeouts_are_clamped_not_fatal() {
    let server = TestServer::start(config()).await;
    let mut c = server.client().await;
    for huge in [
        "18446744073709551615S",
        "18446744073709551615H",
        "9223372036854775807S",
    ] {
        let mut req = tonic::Request::new(best_move(INITIAL, &[], playouts(200)));
        req.metadata_mut()
            .insert("grpc-timeout", huge.parse().unwrap());
        let r = c.best_move(req).await.expect(huge).into_inner();
        assert!(!r.best_move.is_empty(), "{huge}");
        let mut req = tonic::Request::new(pb::AnalyzeRequest {
            position: position(INITIAL, &[]),
            limits: playouts(200),
            ..Default::default()
        });
        req.metadata_mut()
            .insert("grpc-timeout", huge.parse().unwrap());
        let mut stream = c.analyze(req).await.expect(huge).into_inner();
        let mut last = None;
        while let Some(update) = stream.message().await.expect(huge) {
            last = Some(update);
        }
        assert!(last.is_some_and(|u| u.r#final), "{huge}");
    }
    // The server is still there.
    c.server_info(pb::ServerInfoRequest {}).await.unwrap();
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_full_is_refused_and_info_stays_responsive() {
    let server = TestServer::start(ServerConfig {
        threads: 1,
        max_queue: 1,
        max_queue_wait_ms: 20_000,
        ..ServerConfig::default()
    })
    .await;
    let long = || best_move(INITIAL, &[], millis(1_500));
    let mut c1 = server.client().await;
    let running = tokio::spawn(async move { c1.best_move(long()).await });
    while server.engine.running_searches() == 0 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let mut c2 = server.client().await;
    let queued = tokio::spawn(async move { c2.best_move(long()).await });
    while server.engine.admission.queued() == 0 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let mut c3 = server.client().await;
    expect_error(
        c3.best_move(long()).await,
        Code::ResourceExhausted,
        "waiting for search threads",
    )
    .await;
    // Under overload, info and health answer at once.
    let info = c3
        .server_info(pb::ServerInfoRequest {})
        .await
        .unwrap()
        .into_inner();
    let load = info.load.unwrap();
    assert_eq!(
        (
            load.running_searches,
            load.queued_requests,
            load.requests_refused
        ),
        (1, 1, 1)
    );
    let mut health = tonic_health::pb::health_client::HealthClient::new(
        tonic::transport::Channel::from_shared(server.url.clone())
            .unwrap()
            .connect()
            .await
            .unwrap(),
    );
    let h = health
        .check(tonic_health::pb::HealthCheckRequest {
            service: "emergo.bot.v1.EmergoBot".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        h.status(),
        tonic_health::pb::health_check_response::ServingStatus::Serving
    );
    assert!(running.await.unwrap().is_ok());
    assert!(queued.await.unwrap().is_ok());
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bearer_token_is_required_when_configured() {
    let server = TestServer::start(ServerConfig {
        auth_token: Some("s3cret".into()),
        ..config()
    })
    .await;
    let mut c = server.client().await;
    let req = || pb::LegalMovesRequest {
        position: position(INITIAL, &[]),
    };
    expect_error(
        c.legal_moves(req()).await,
        Code::Unauthenticated,
        "authorization",
    )
    .await;
    let mut wrong = tonic::Request::new(req());
    wrong
        .metadata_mut()
        .insert("authorization", "Bearer nope".parse().unwrap());
    expect_error(
        c.legal_moves(wrong).await,
        Code::Unauthenticated,
        "invalid bearer token",
    )
    .await;
    let mut right = tonic::Request::new(req());
    right
        .metadata_mut()
        .insert("authorization", "Bearer s3cret".parse().unwrap());
    assert_eq!(
        c.legal_moves(right).await.unwrap().into_inner().moves.len(),
        40
    );
    // Health needs no token.
    let mut health = tonic_health::pb::health_client::HealthClient::new(
        tonic::transport::Channel::from_shared(server.url.clone())
            .unwrap()
            .connect()
            .await
            .unwrap(),
    );
    assert!(
        health
            .check(tonic_health::pb::HealthCheckRequest {
                service: String::new()
            })
            .await
            .is_ok()
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn game_id_reuses_the_tree() {
    let server = TestServer::start(config()).await;
    let mut c = server.client().await;
    let opts = |id: &str| {
        Some(pb::SearchOptions {
            game_id: id.into(),
            seed: 7,
            ..Default::default()
        })
    };
    let first = c
        .best_move(pb::BestMoveRequest {
            position: position(INITIAL, &["a1"]),
            limits: playouts(20_000),
            options: opts("g1"),
        })
        .await
        .unwrap()
        .into_inner();
    let a = first.analysis.unwrap();
    assert_eq!(a.stats.as_ref().unwrap().reused_visits, 0);
    let pv = &a.moves[0].pv;
    assert!(pv.len() >= 2, "{pv:?}");
    let mut moves = vec!["a1"];
    moves.extend(pv[..2].iter().map(String::as_str));
    let second = c
        .best_move(pb::BestMoveRequest {
            position: position(INITIAL, &moves),
            limits: playouts(2_000),
            options: opts("g1"),
        })
        .await
        .unwrap()
        .into_inner();
    let reused = second.analysis.unwrap().stats.unwrap().reused_visits;
    assert!(reused > 0, "no visits reused");
    // A different game id starts fresh.
    let third = c
        .best_move(pb::BestMoveRequest {
            position: position(INITIAL, &moves),
            limits: playouts(2_000),
            options: opts("other"),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(third.analysis.unwrap().stats.unwrap().reused_visits, 0);
    let info = c
        .server_info(pb::ServerInfoRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(info.load.unwrap().kept_games, 2);
    server.stop().await;
}

/// A kept tree is re-rooted in place, so it keeps the lines not played until compacted; the
/// server compacts a crowded one after answering, so that a long game keeps its tree under
/// the kept-nodes cap (a tree over it would be dropped, not kept) and every move reuses the
/// last one's subtree.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_game_keeps_reusing_its_tree_under_the_kept_nodes_cap() {
    let server = TestServer::start(ServerConfig {
        kept_nodes: 10_000,
        ..config()
    })
    .await;
    let mut c = server.client().await;
    let mut moves: Vec<String> = vec![];
    for turn in 0..10 {
        let r = c
            .best_move(pb::BestMoveRequest {
                position: position(
                    INITIAL,
                    &moves.iter().map(String::as_str).collect::<Vec<_>>(),
                ),
                limits: playouts(3_000),
                options: Some(pb::SearchOptions {
                    game_id: "long".into(),
                    seed: 7,
                    threads: 1,
                    ..Default::default()
                }),
            })
            .await
            .unwrap()
            .into_inner();
        let a = r.analysis.unwrap();
        let s = a.stats.unwrap();
        if turn > 0 {
            assert!(s.reused_visits > 0, "move {turn} reused nothing: {s:?}");
        }
        // Our move and the reply the tree expects.
        let pv = &a.moves[0].pv;
        if pv.len() < 2 {
            break;
        }
        moves.extend(pv[..2].iter().cloned());
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_searches_with_a_final_update() {
    let mut server = TestServer::start(config()).await;
    let mut c = server.client().await;
    let mut stream = c
        .analyze(pb::AnalyzeRequest {
            position: position(INITIAL, &[]),
            limits: millis(30_000),
            options: None,
            report_interval_ms: 50,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!stream.message().await.unwrap().unwrap().r#final);
    server.begin_stop();
    let mut last = None;
    while let Some(u) = stream.message().await.unwrap() {
        last = Some(u);
    }
    let last = last.unwrap();
    assert!(last.r#final);
    assert_eq!(last.stop_reason(), pb::StopReason::Shutdown);
    assert!(!last.best_move.is_empty());
    assert!(
        Position::initial()
            .legal_moves()
            .iter()
            .any(|m| m.to_string() == last.best_move)
    );
    server.stop().await;
}
