//! Whole-game review (AnalyzeGame) end to end, over gRPC and the HTTP gateway: a
//! planted blunder is found, the stream ends with one summary whose counts add up, bad games
//! and options name what is wrong, a review can be stopped, cancelled, cut by the shutdown or
//! the deadline, and interactive requests get ahead of it.

use std::time::{Duration, Instant};

use emergo_bot_server::config::ServerConfig;
use emergo_proto::v1 as pb;
use emergo_proto::v1::game_review_update::Update;
use emergo_rules::{Game, Move, Position};
use emergo_tests::requests::{millis, playouts};
use emergo_tests::{INITIAL, TestServer};
use serde_json::{Value, json};
use tonic::Code;

/// A game of the engine against itself at 300 playouts a move (found by a probe over a few
/// seeds), up to the position where Black blunders with `h4-g5`: it lets White capture four
/// men in one chain, where `g3-h2` and other moves keep the balance.
const GAME: [&str; 39] = [
    "e1", "g3", "h6", "i5", "g7", "c3", "b6", "a5", "c7", "a3", "a1", "i3", "e9", "b2", "i7", "h4",
    "i1", "e3", "c5", "b4", "a9", "b4xd6xb8", "a9xc7", "a7", "e7", "a7xc5", "g7-f8", "i5xg7",
    "f8xh6", "f4", "h6-i5", "c3-b4", "a1xc3", "b4xd2", "g7-f6", "c5-d4", "b8-a7", "d4-c5", "e7-d8",
];
/// The blunder, turn 40.
const BLUNDER: &str = "h4-g5";

fn config(threads: usize) -> ServerConfig {
    ServerConfig {
        threads,
        ..ServerConfig::default()
    }
}

fn game(moves: &[&str]) -> Option<pb::Position> {
    Some(pb::Position {
        fen: INITIAL.to_owned(),
        moves: moves.iter().map(|m| m.to_string()).collect(),
    })
}

fn options(threads: u32, seed: u64, search_id: &str) -> Option<pb::SearchOptions> {
    Some(pb::SearchOptions {
        threads,
        seed,
        search_id: search_id.to_owned(),
        ..Default::default()
    })
}

/// Everything a review stream sent: its turns, its summary, and the error status that ended
/// it, if one did. Fails the test if anything follows the summary.
struct Received {
    turns: Vec<pb::TurnReview>,
    summary: Option<pb::GameReviewSummary>,
    error: Option<tonic::Status>,
}

async fn receive(mut stream: tonic::Streaming<pb::GameReviewUpdate>) -> Received {
    let mut r = Received {
        turns: Vec::new(),
        summary: None,
        error: None,
    };
    loop {
        match stream.message().await {
            Ok(Some(update)) => {
                assert!(
                    r.summary.is_none(),
                    "a message after the summary: {update:?}"
                );
                match update.update.expect("an update") {
                    Update::Turn(t) => r.turns.push(t),
                    Update::Summary(s) => r.summary = Some(s),
                }
            }
            Ok(None) => return r,
            Err(e) => {
                r.error = Some(e);
                return r;
            }
        }
    }
}

async fn review(server: &TestServer, req: pb::AnalyzeGameRequest) -> Received {
    let mut client = server.client().await;
    let stream = client.analyze_game(req).await.unwrap().into_inner();
    receive(stream).await
}

async fn load(server: &TestServer) -> pb::ServerLoad {
    let mut client = server.client().await;
    client
        .server_info(pb::ServerInfoRequest {})
        .await
        .unwrap()
        .into_inner()
        .load
        .unwrap()
}

/// Polls `cond` every 10 ms for at most 20 s (a generous bound: only a hang fails).
async fn until(what: &str, mut cond: impl AsyncFnMut() -> bool) {
    let end = Instant::now() + Duration::from_secs(20);
    while !cond().await {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The counts of a player's review add up to its turns.
fn assert_counts_add_up(p: &pb::PlayerReview) {
    assert_eq!(
        p.best + p.good + p.inaccuracies + p.mistakes + p.blunders + p.forced,
        p.turns,
        "{p:?}"
    );
    assert!((0.0..=100.0).contains(&p.accuracy), "{p:?}");
    assert!((0.0..=1.0).contains(&p.mean_loss), "{p:?}");
}

/// The planted blunder hands White a four-jump capture: that is what the test is about.
#[test]
fn the_planted_blunder_hands_over_a_long_chain() {
    let mut g = Game::from_fen_and_moves(INITIAL, &GAME).unwrap();
    let quiet = g.legal_moves().iter().any(|&m| {
        let after: Position = g.position().play(m).unwrap();
        !after.legal_moves().iter().any(|m| m.is_capture())
    });
    assert!(quiet, "Black had a move that gives nothing to capture");
    g.play_str(BLUNDER).unwrap();
    let longest = g
        .legal_moves()
        .iter()
        .filter_map(|m| match m {
            Move::Capture(c) => Some(c.len()),
            _ => None,
        })
        .max();
    assert_eq!(longest, Some(4));
}

/// (a) The blunder is flagged BLUNDER with a different best move, whose value is far above the
/// played move's; the played move's value comes through White's forced capture.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_planted_blunder_is_found() {
    let server = TestServer::start(config(2)).await;
    let mut moves = GAME.to_vec();
    moves.push(BLUNDER);
    let r = review(
        &server,
        pb::AnalyzeGameRequest {
            game: game(&moves),
            per_turn: playouts(2000),
            turns: vec![40],
            options: options(1, 7, ""),
            ..Default::default()
        },
    )
    .await;
    assert!(r.error.is_none(), "{:?}", r.error);
    assert_eq!(r.turns.len(), 1);
    let t = &r.turns[0];
    assert_eq!((t.turn, t.player.as_str()), (40, "b"));
    assert_eq!(t.played_move, BLUNDER);
    assert_eq!(t.class(), pb::MoveClass::Blunder, "{t:?}");
    assert_ne!(t.best_move, BLUNDER);
    // The right better move: it does not hand White the four-jump chain (a shorter capture may
    // be a fair trade).
    let mut after_best = Game::from_fen_and_moves(INITIAL, &GAME).unwrap();
    after_best.play_str(&t.best_move).unwrap();
    let white_chain = after_best
        .legal_moves()
        .iter()
        .filter_map(|m| match m {
            Move::Capture(c) => Some(c.len()),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    assert!(
        white_chain < 4,
        "{} hands over {white_chain} jumps",
        t.best_move
    );
    assert!(t.loss >= 0.15, "{t:?}");
    assert!((t.loss - (t.best_value - t.played_value)).abs() < 1e-5);
    assert_eq!(t.best_pv.first(), Some(&t.best_move));
    let a = t.analysis.as_ref().unwrap();
    assert_eq!(a.fen, t.fen);
    assert!(a.moves.iter().any(|m| m.r#move == BLUNDER));
    let s = r.summary.unwrap();
    assert_eq!(
        (s.turns_analysed, s.black.as_ref().unwrap().blunders),
        (1, 1)
    );
    assert_eq!(s.stop_reason(), pb::StopReason::Playouts);
    server.stop().await;
}

/// (b) A whole game: every turn once, in order, then exactly one summary whose counts add up.
/// The same review from a record (as `emergo arena` writes them) gives the same turns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stream_ends_with_one_summary_that_adds_up() {
    let server = TestServer::start(config(2)).await;
    let moves = &GAME[..24];
    let request = pb::AnalyzeGameRequest {
        game: game(moves),
        per_turn: playouts(300),
        options: options(2, 11, ""),
        ..Default::default()
    };
    let r = review(&server, request.clone()).await;
    assert!(r.error.is_none(), "{:?}", r.error);
    let turns: Vec<u32> = r.turns.iter().map(|t| t.turn).collect();
    assert_eq!(turns, (1..=24).collect::<Vec<_>>());
    for (t, mv) in r.turns.iter().zip(moves) {
        assert_eq!(t.played_move, *mv);
        assert_eq!(t.player, if t.turn % 2 == 1 { "w" } else { "b" });
        assert!((0.0..=1.0).contains(&t.loss));
        if t.class() == pb::MoveClass::Forced {
            assert!(t.analysis.is_none());
        } else {
            assert!(
                t.analysis
                    .as_ref()
                    .unwrap()
                    .stats
                    .as_ref()
                    .unwrap()
                    .playouts
                    > 0
            );
        }
    }
    let s = r.summary.expect("a summary");
    let (w, b) = (s.white.clone().unwrap(), s.black.clone().unwrap());
    assert_counts_add_up(&w);
    assert_counts_add_up(&b);
    assert_eq!((w.turns, b.turns, s.turns_analysed), (12, 12, 24));
    assert_eq!(s.stop_reason(), pb::StopReason::Playouts);
    assert_eq!(s.status.unwrap().result, "*");
    assert!(s.playouts > 0);
    assert_eq!(s.search_id.len(), 32);
    assert!(r.turns.iter().all(|t| {
        t.analysis
            .as_ref()
            .is_none_or(|a| a.search_id == s.search_id)
    }));

    // The same game as a record, reviewed with the same seed: the same review.
    let record = emergo_rules::record::GameRecord {
        tags: vec![("Event".into(), "review test".into())],
        fen: INITIAL.into(),
        moves: moves.iter().map(|m| m.to_string()).collect(),
        result: "*".into(),
        termination: "unfinished".into(),
    };
    let again = review(
        &server,
        pb::AnalyzeGameRequest {
            game: None,
            record: record.to_pgn(),
            ..request
        },
    )
    .await;
    let key = |t: &pb::TurnReview| (t.turn, t.best_move.clone(), t.class, t.played_visits);
    assert_eq!(
        again.turns.iter().map(key).collect::<Vec<_>>(),
        r.turns.iter().map(key).collect::<Vec<_>>(),
        "a seed and a playout budget make a review reproducible"
    );
    server.stop().await;
}

/// (c) Bad games give INVALID_ARGUMENT naming the turn; bad turns and options name the field.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_name_the_turn_or_the_field() {
    let server = TestServer::start(config(2)).await;
    let mut client = server.client().await;
    let mut refuse = async |req: pb::AnalyzeGameRequest| {
        let e = client.analyze_game(req).await.unwrap_err();
        assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
        e.message().to_owned()
    };
    let base = pb::AnalyzeGameRequest {
        game: game(&["a1", "i9"]),
        per_turn: playouts(100),
        ..Default::default()
    };
    let m = refuse(pb::AnalyzeGameRequest {
        game: game(&["a1", "i9", "a1"]),
        ..base.clone()
    })
    .await;
    assert_eq!(m, "turn 3: a1: a1 is occupied");
    let m = refuse(pb::AnalyzeGameRequest {
        game: None,
        record: "[Event \"x\"]\n1. a1 i9 2. c3 c3 *\n".into(),
        ..base.clone()
    })
    .await;
    assert_eq!(m, "turn 4: c3: c3 is occupied");
    let m = refuse(pb::AnalyzeGameRequest {
        game: None,
        record: "1. a1 i9 2. q7 *".into(),
        ..base.clone()
    })
    .await;
    assert!(m.starts_with("turn 3: \"q7\": "), "{m}");
    let m = refuse(pb::AnalyzeGameRequest {
        turns: vec![3],
        ..base.clone()
    })
    .await;
    assert!(m.starts_with("turns[0]: 3 is outside 1..=2"), "{m}");
    let m = refuse(pb::AnalyzeGameRequest {
        per_turn: None,
        ..base.clone()
    })
    .await;
    assert!(m.starts_with("per_turn: "), "{m}");
    for (o, field) in [
        (
            pb::SearchOptions {
                game_id: "g".into(),
                ..Default::default()
            },
            "options.game_id",
        ),
        (
            pb::SearchOptions {
                ponder: true,
                ..Default::default()
            },
            "options.ponder",
        ),
        (
            pb::SearchOptions {
                threads: 99,
                ..Default::default()
            },
            "options.threads",
        ),
    ] {
        let m = refuse(pb::AnalyzeGameRequest {
            options: Some(o),
            ..base.clone()
        })
        .await;
        assert!(m.starts_with(&format!("{field}: ")), "{m}");
    }
    server.stop().await;
}

/// A review long enough to be interrupted: a second per position, ~40 positions.
fn long_review(threads: u32, search_id: &str) -> pb::AnalyzeGameRequest {
    pb::AnalyzeGameRequest {
        game: game(&GAME),
        per_turn: millis(1_000),
        options: options(threads, 0, search_id),
        ..Default::default()
    }
}

/// (d) Dropping a review's stream stops its searches and gives their threads back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_review_frees_its_threads() {
    let server = TestServer::start(config(2)).await;
    let mut client = server.client().await;
    let stream = client
        .analyze_game(long_review(2, ""))
        .await
        .unwrap()
        .into_inner();
    until("both threads searching", async || {
        load(&server).await.threads_in_use == 2
    })
    .await;
    drop(stream);
    until("the threads to come back", async || {
        let l = load(&server).await;
        l.threads_in_use == 0 && l.running_searches == 0
    })
    .await;
    assert!(server.engine.searches.is_empty(), "the review's id is gone");
    server.stop().await;
}

/// (f) StopSearch with the review's id ends it early: the turns done so far, then the summary
/// with STOPPED.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_search_ends_a_review_with_its_summary() {
    let server = TestServer::start(config(2)).await;
    let mut client = server.client().await;
    let stream = client
        .analyze_game(long_review(1, "review-to-stop"))
        .await
        .unwrap()
        .into_inner();
    let reading = tokio::spawn(receive(stream));
    until("the review to search", async || {
        load(&server).await.running_searches == 1
    })
    .await;
    let stopped = client
        .stop_search(pb::StopSearchRequest {
            search_id: "review-to-stop".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(stopped.stopped);
    let r = reading.await.unwrap();
    assert!(r.error.is_none(), "{:?}", r.error);
    let s = r.summary.expect("a summary");
    assert_eq!(s.stop_reason(), pb::StopReason::Stopped);
    assert_eq!(s.search_id, "review-to-stop");
    assert_eq!(s.turns_analysed as usize, r.turns.len());
    assert!(r.turns.len() < GAME.len());
    until("the threads to come back", async || {
        load(&server).await.threads_in_use == 0
    })
    .await;
    server.stop().await;
}

/// A review under way when the server shuts down ends with a SHUTDOWN summary.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_a_review_with_its_summary() {
    let mut server = TestServer::start(config(2)).await;
    let mut client = server.client().await;
    let stream = client
        .analyze_game(long_review(2, ""))
        .await
        .unwrap()
        .into_inner();
    let reading = tokio::spawn(receive(stream));
    until("the review to search", async || {
        load(&server).await.running_searches > 0
    })
    .await;
    server.begin_stop();
    let r = reading.await.unwrap();
    assert!(r.error.is_none(), "{:?}", r.error);
    assert_eq!(r.summary.unwrap().stop_reason(), pb::StopReason::Shutdown);
}

/// The client's deadline: the summary (DEADLINE) arrives before it, with the turns done.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deadline_ends_a_review_with_its_summary() {
    let server = TestServer::start(config(2)).await;
    let mut client = server.client().await;
    let mut req = tonic::Request::new(long_review(2, ""));
    req.set_timeout(Duration::from_millis(2_500));
    let stream = client.analyze_game(req).await.unwrap().into_inner();
    let r = receive(stream).await;
    assert!(r.error.is_none(), "{:?}", r.error);
    let s = r.summary.unwrap();
    assert_eq!(s.stop_reason(), pb::StopReason::Deadline);
    assert_eq!(s.turns_analysed as usize, r.turns.len());
    until("the threads to come back", async || {
        load(&server).await.threads_in_use == 0
    })
    .await;
    server.stop().await;
}

/// A review asks for threads position by position at BATCH priority: on a one-thread server,
/// an interactive BestMove sent while it runs is answered while the review still has turns to
/// go (ordering, not timing, decides).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interactive_requests_get_ahead_of_a_review() {
    let server = TestServer::start(config(1)).await;
    let mut client = server.client().await;
    let stream = client
        .analyze_game(pb::AnalyzeGameRequest {
            per_turn: millis(200),
            ..long_review(1, "")
        })
        .await
        .unwrap()
        .into_inner();
    let reading = tokio::spawn(receive(stream));
    until("the review to search", async || {
        load(&server).await.running_searches == 1
    })
    .await;
    let answer = client
        .best_move(pb::BestMoveRequest {
            position: game(&["a1"]),
            limits: millis(100),
            options: Some(pb::SearchOptions {
                priority: pb::Priority::Interactive as i32,
                ..Default::default()
            }),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!answer.best_move.is_empty());
    assert!(!reading.is_finished(), "the review was still going");
    let r = reading.await.unwrap();
    assert_eq!(r.summary.unwrap().turns_analysed as usize, GAME.len());
    server.stop().await;
}

/// (e) `POST /v1/AnalyzeGame` streams one `turn` event per turn, then a `summary` event, each
/// a `GameReviewUpdate` in proto3 JSON; a bad record is a 400 naming the turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_streams_turns_then_the_summary() {
    let server = TestServer::start(config(2)).await;
    let http = reqwest::Client::new();
    let url = format!("{}/v1/AnalyzeGame", server.http_url);
    let resp = http
        .post(&url)
        .json(&json!({
            "record": "[Event \"sse\"]\n\n1. a1 i9 2. c3 g7 *\n",
            "perTurn": {"maxPlayouts": "200"},
            "options": {"threads": 2, "seed": "3"}
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let events = emergo_tests::sse::events(resp, usize::MAX).await;
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["turn", "turn", "turn", "turn", "summary"],
        "{events:?}"
    );
    for (i, (_, e)) in events[..4].iter().enumerate() {
        assert_eq!(e["turn"]["turn"], i + 1);
        assert!(
            e["turn"]["class"]
                .as_str()
                .unwrap()
                .starts_with("MOVE_CLASS_")
        );
    }
    assert_eq!(events[0].1["turn"]["playedMove"], "a1");
    let summary = &events[4].1["summary"];
    assert_eq!(summary["turnsAnalysed"], 4);
    assert_eq!(summary["stopReason"], "STOP_REASON_PLAYOUTS");
    assert_eq!(summary["white"]["turns"], 2);

    let resp = http
        .post(&url)
        .json(&json!({"record": "1. a1 a1 *", "perTurn": {"maxPlayouts": "200"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 400);
    let e: Value = resp.json().await.unwrap();
    assert_eq!(e["code"], "INVALID_ARGUMENT");
    assert_eq!(e["message"], "turn 2: a1: a1 is occupied");
    server.stop().await;
}
