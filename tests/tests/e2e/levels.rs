//! Playing levels (`SearchOptions.level`): what a client of a weak level gets, and what it may
//! not ask. The levels' strength is calibrated by matches, not here (`docs/STRENGTH.md`).

use emergo_bot_server::config::ServerConfig;
use emergo_proto::v1 as pb;
use emergo_rules::Game;
use emergo_tests::requests::{millis, position};
use emergo_tests::{INITIAL, TestServer};
use tonic::Code;

fn at_level(level: u32, seed: u64, limits: Option<pb::Limits>) -> pb::BestMoveRequest {
    pb::BestMoveRequest {
        position: position(INITIAL, &["a1", "i9"]),
        limits,
        options: Some(pb::SearchOptions {
            level,
            seed,
            ..Default::default()
        }),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_level_plays_a_legal_move_on_its_own_budget() {
    let server = TestServer::start(ServerConfig {
        threads: 1,
        ..ServerConfig::default()
    })
    .await;
    let mut client = server.client().await;
    let legal = Game::from_fen_and_moves(INITIAL, &["a1", "i9"])
        .unwrap()
        .legal_moves();
    for level in 1..=7 {
        // No limits: the level is the budget.
        let reply = client
            .best_move(at_level(level, 11, None))
            .await
            .unwrap()
            .into_inner();
        assert!(
            legal.iter().any(|m| m.to_string() == reply.best_move),
            "level {level}: {}",
            reply.best_move
        );
        let stats = reply.analysis.unwrap().stats.unwrap();
        assert!(stats.playouts <= 3_000, "level {level}: {}", stats.playouts);
        // With a seed the choice is reproducible.
        let again = client
            .best_move(at_level(level, 11, None))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(again.best_move, reply.best_move, "level {level}");
    }
    // Level 1 searches far less than level 7.
    let weak = client
        .best_move(at_level(1, 5, None))
        .await
        .unwrap()
        .into_inner();
    assert!(weak.analysis.unwrap().stats.unwrap().playouts <= 8);
    // A client's smaller budget still caps a level.
    let capped = client
        .best_move(at_level(
            7,
            5,
            Some(pb::Limits {
                max_playouts: Some(50),
                ..Default::default()
            }),
        ))
        .await
        .unwrap()
        .into_inner();
    assert!(capped.analysis.unwrap().stats.unwrap().playouts <= 50);
    // Level 8 is the full engine: it needs limits, as a request without a level does.
    let e = client.best_move(at_level(8, 5, None)).await.unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().starts_with("limits:"), "{}", e.message());
    let full = client
        .best_move(at_level(8, 5, millis(100)))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(full.best_move, full.analysis.unwrap().best_move);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_weak_level_does_not_always_play_the_engines_move() {
    let server = TestServer::start(ServerConfig {
        threads: 1,
        ..ServerConfig::default()
    })
    .await;
    let mut client = server.client().await;
    let mut differs = 0;
    for seed in 1..=20 {
        let reply = client
            .best_move(at_level(1, seed, None))
            .await
            .unwrap()
            .into_inner();
        if reply.best_move != reply.analysis.unwrap().best_move {
            differs += 1;
        }
    }
    assert!(
        differs >= 5,
        "level 1 played the search's move {} times of 20",
        20 - differs
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn levels_are_checked() {
    let server = TestServer::start(ServerConfig::default()).await;
    let mut client = server.client().await;
    let e = client.best_move(at_level(9, 0, None)).await.unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(
        e.message().starts_with("options.level: 9 is not a level"),
        "{}",
        e.message()
    );

    let analyze = pb::AnalyzeRequest {
        position: position(INITIAL, &[]),
        limits: millis(100),
        options: Some(pb::SearchOptions {
            level: 3,
            ..Default::default()
        }),
        ..Default::default()
    };
    let e = client.analyze(analyze).await.unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().starts_with("options.level:"), "{}", e.message());

    let review = pb::AnalyzeGameRequest {
        record: "1. a1 i9 *".into(),
        per_turn: Some(pb::Limits {
            max_playouts: Some(100),
            ..Default::default()
        }),
        options: Some(pb::SearchOptions {
            level: 3,
            ..Default::default()
        }),
        ..Default::default()
    };
    let e = client.analyze_game(review).await.unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().starts_with("options.level:"), "{}", e.message());
    server.stop().await;
}
