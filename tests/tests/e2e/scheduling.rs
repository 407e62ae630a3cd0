//! End to end over gRPC: request priorities in admission, and stopping
//! a running search with its answer (`StopSearch`). The HTTP side is in `gateway.rs`.

use std::time::{Duration, Instant};

use emergo_bot_server::admission::Priority;
use emergo_bot_server::config::ServerConfig;
use emergo_proto::v1 as pb;
use emergo_rules::Game;
use emergo_tests::{INITIAL, TestServer};
use tonic::Code;

/// A search that would run for a minute unless stopped: a long time budget, and `exhaustive` so
/// that it does not stop early once its best move is settled.
fn endless(search_id: &str, priority: pb::Priority) -> pb::BestMoveRequest {
    pb::BestMoveRequest {
        position: Some(pb::Position {
            fen: INITIAL.to_owned(),
            moves: vec![],
        }),
        limits: Some(pb::Limits {
            max_time_ms: Some(60_000),
            ..Default::default()
        }),
        options: Some(pb::SearchOptions {
            exhaustive: true,
            search_id: search_id.to_owned(),
            priority: priority as i32,
            ..Default::default()
        }),
    }
}

/// A short search (a playout budget) at `priority`.
fn short(priority: pb::Priority) -> pb::BestMoveRequest {
    pb::BestMoveRequest {
        limits: Some(pb::Limits {
            max_playouts: Some(2_000),
            ..Default::default()
        }),
        options: Some(pb::SearchOptions {
            priority: priority as i32,
            ..Default::default()
        }),
        ..endless("", priority)
    }
}

fn assert_legal(best_move: &str) {
    let mut game = Game::from_fen_and_moves(INITIAL, &[] as &[String]).unwrap();
    game.play_str(best_move)
        .unwrap_or_else(|e| panic!("best move {best_move:?}: {e}"));
}

async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let end = Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// An Analyze stream names its search in its updates; StopSearch ends it with
/// a final update (STOPPED, a legal best move). Reports the time from the StopSearch call to
/// the final update over 20 runs (the goal: within 50 ms); asserts only the outcome.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_search_ends_an_analysis_with_its_answer() {
    let server = TestServer::start(ServerConfig {
        threads: 2,
        ..ServerConfig::default()
    })
    .await;
    let mut client = server.client().await;
    let mut stopper = server.client().await;
    let mut latencies = Vec::new();
    for run in 0..20 {
        let request = pb::AnalyzeRequest {
            report_interval_ms: 50,
            ..Default::default()
        };
        let search = endless("", pb::Priority::Unspecified);
        let request = pb::AnalyzeRequest {
            position: search.position,
            limits: search.limits,
            options: search.options,
            ..request
        };
        let mut stream = client.analyze(request).await.unwrap().into_inner();
        let first = stream.message().await.unwrap().unwrap();
        assert!(!first.r#final);
        let id = first.search_id.clone();
        assert_eq!(id.len(), 32, "{id:?}");
        assert!(id.chars().all(|c| c.is_ascii_hexdigit()), "{id:?}");
        let asked = Instant::now();
        let stopped = stopper
            .stop_search(pb::StopSearchRequest {
                search_id: id.clone(),
            })
            .await
            .unwrap()
            .into_inner();
        assert!(stopped.stopped, "run {run}");
        let last = loop {
            let update = stream.message().await.unwrap().expect("a final update");
            assert_eq!(update.search_id, id);
            if update.r#final {
                break update;
            }
        };
        latencies.push(asked.elapsed());
        assert_eq!(last.stop_reason(), pb::StopReason::Stopped, "run {run}");
        assert_legal(&last.best_move);
        assert!(last.stats.unwrap().playouts > 0);
        assert!(stream.message().await.unwrap().is_none(), "the stream ends");
        // Once the search has ended, its id is unknown.
        until("the search to end", || server.engine.searches.is_empty()).await;
        let e = stopper
            .stop_search(pb::StopSearchRequest { search_id: id })
            .await
            .unwrap_err();
        assert_eq!(e.code(), Code::NotFound, "{e:?}");
    }
    latencies.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "StopSearch -> final update over {} runs: min {:.1} ms, median {:.1} ms, p90 {:.1} ms, max {:.1} ms",
        latencies.len(),
        ms(latencies[0]),
        ms(latencies[latencies.len() / 2]),
        ms(latencies[latencies.len() * 9 / 10]),
        ms(latencies[latencies.len() - 1]),
    );
    server.stop().await;
}

/// Unknown ids are NOT_FOUND, malformed ones INVALID_ARGUMENT naming the
/// field; a client-chosen id stops a BestMove from another call, and is refused while in use.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_chosen_ids_stop_a_best_move() {
    let server = TestServer::start(ServerConfig {
        threads: 2,
        ..ServerConfig::default()
    })
    .await;
    let mut c = server.client().await;
    for (id, code, message) in [
        (
            "0123456789abcdef0123456789abcdef",
            Code::NotFound,
            "search_id: no live search",
        ),
        ("", Code::InvalidArgument, "search_id: required"),
        (
            "bad id",
            Code::InvalidArgument,
            "search_id: ' ' is not allowed",
        ),
        (
            &"x".repeat(65),
            Code::InvalidArgument,
            "search_id: 65 bytes, at most 64",
        ),
    ] {
        let e = c
            .stop_search(pb::StopSearchRequest {
                search_id: id.to_owned(),
            })
            .await
            .unwrap_err();
        assert_eq!(e.code(), code, "{id:?}: {e:?}");
        assert!(e.message().starts_with(message), "{id:?}: {}", e.message());
    }
    let e = c
        .best_move(endless("not/ok", pb::Priority::Unspecified))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(
        e.message().starts_with("options.search_id: '/'"),
        "{}",
        e.message()
    );

    let mut c1 = server.client().await;
    let running = tokio::spawn(async move {
        c1.best_move(endless("my-move_1", pb::Priority::Unspecified))
            .await
    });
    until("the search to start", || {
        server.engine.running_searches() == 1
    })
    .await;
    let e = c
        .best_move(endless("my-move_1", pb::Priority::Unspecified))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::AlreadyExists, "{e:?}");
    let stopped = c
        .stop_search(pb::StopSearchRequest {
            search_id: "my-move_1".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(stopped.stopped);
    let answer = running.await.unwrap().unwrap().into_inner();
    let analysis = answer.analysis.unwrap();
    assert_eq!(analysis.stop_reason(), pb::StopReason::Stopped);
    assert_eq!(analysis.search_id, "my-move_1");
    assert_legal(&answer.best_move);
    server.stop().await;
}

/// With every thread busy and batch requests queued, an interactive BestMove
/// is granted the next free slot, ahead of every batch request queued before it; a full batch
/// queue refuses batch requests only. Ordering, not timing: the slot is freed by StopSearch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interactive_requests_overtake_queued_batch_requests() {
    let server = TestServer::start(ServerConfig {
        threads: 1,
        max_queue: 3,
        max_queue_wait_ms: 60_000,
        ..ServerConfig::default()
    })
    .await;
    let done = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let call = |request: pb::BestMoveRequest, label: String| {
        let done = done.clone();
        let url = server.url.clone();
        tokio::spawn(async move {
            let mut c = pb::emergo_bot_client::EmergoBotClient::connect(url)
                .await
                .unwrap();
            let answer = c.best_move(request).await.map(|r| r.into_inner());
            done.lock().unwrap().push(label);
            answer
        })
    };
    // The only thread, busy until stopped.
    let blocker = call(endless("blocker", pb::Priority::Batch), "blocker".into());
    until("the blocker to run", || {
        server.engine.running_searches() == 1
    })
    .await;
    let mut batch = Vec::new();
    for i in 0..3 {
        batch.push(call(short(pb::Priority::Batch), format!("batch{i}")));
        until("a batch request to queue", || {
            server.engine.admission.queued_at(Priority::Batch) == i + 1
        })
        .await;
    }
    // The batch queue is full: one more batch request is refused at once…
    let mut c = server.client().await;
    let e = c.best_move(short(pb::Priority::Batch)).await.unwrap_err();
    assert_eq!(e.code(), Code::ResourceExhausted, "{e:?}");
    // …but an interactive one still queues, and ServerInfo shows the queues by priority.
    let interactive = call(short(pb::Priority::Interactive), "interactive".into());
    until("the interactive request to queue", || {
        server.engine.admission.queued_at(Priority::Interactive) == 1
    })
    .await;
    let load = c
        .server_info(pb::ServerInfoRequest {})
        .await
        .unwrap()
        .into_inner()
        .load
        .unwrap();
    assert_eq!(
        (
            load.queued_requests,
            load.queued_interactive,
            load.queued_normal,
            load.queued_batch
        ),
        (4, 1, 0, 3)
    );
    // Free the slot: the interactive request gets it, while every batch request still waits.
    c.stop_search(pb::StopSearchRequest {
        search_id: "blocker".into(),
    })
    .await
    .unwrap();
    until("the interactive request to be granted", || {
        server.engine.admission.queued_at(Priority::Interactive) == 0
    })
    .await;
    assert_eq!(server.engine.admission.queued_at(Priority::Batch), 3);
    let answer = interactive.await.unwrap().unwrap();
    assert_legal(&answer.best_move);
    let blocked = blocker.await.unwrap().unwrap().analysis.unwrap();
    assert_eq!(blocked.stop_reason(), pb::StopReason::Stopped);
    for b in batch {
        b.await.unwrap().unwrap();
    }
    let done = done.lock().unwrap().clone();
    assert_eq!(
        done,
        ["blocker", "interactive", "batch0", "batch1", "batch2"],
        "completion order"
    );
    server.stop().await;
}

/// A client can stop its own request while it still waits for threads; it
/// then answers as soon as it gets them, after next to no search, still with a legal move.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_stopped_while_queued_answers_when_it_starts() {
    let server = TestServer::start(ServerConfig {
        threads: 1,
        ..ServerConfig::default()
    })
    .await;
    let mut c1 = server.client().await;
    let mut c2 = server.client().await;
    let mut c = server.client().await;
    let first = tokio::spawn(async move {
        c1.best_move(endless("first", pb::Priority::Unspecified))
            .await
    });
    until("the first search to run", || {
        server.engine.running_searches() == 1
    })
    .await;
    let queued = tokio::spawn(async move {
        c2.best_move(endless("queued", pb::Priority::Unspecified))
            .await
    });
    until("the second to queue", || {
        server.engine.admission.queued() == 1
    })
    .await;
    for id in ["queued", "first"] {
        c.stop_search(pb::StopSearchRequest {
            search_id: id.into(),
        })
        .await
        .unwrap();
    }
    for task in [first, queued] {
        let answer = task.await.unwrap().unwrap().into_inner();
        assert_eq!(
            answer.analysis.unwrap().stop_reason(),
            pb::StopReason::Stopped
        );
        assert_legal(&answer.best_move);
    }
    server.stop().await;
}
