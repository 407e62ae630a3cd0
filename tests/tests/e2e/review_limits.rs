//! The server's cap on a whole review (`--max-review-ms`): without it one AnalyzeGame could hold
//! a search thread for 2,000 positions × `--max-time-ms` (33 hours at the defaults) unless its
//! client set a deadline. Nine tenths of the cap are split over the positions, so a review on an
//! idle server finishes inside it; one still running at the cap ends there with its summary.

use std::time::{Duration, Instant};

use emergo_bot_server::config::ServerConfig;
use emergo_proto::v1 as pb;
use emergo_proto::v1::game_review_update::Update;
use emergo_tests::requests::{best_move, millis};
use emergo_tests::{INITIAL, TestServer};

/// Twenty placements from the initial position: 21 positions to search.
const OPENING: [&str; 20] = [
    "e1", "g3", "h6", "i5", "g7", "c3", "b6", "a5", "c7", "a3", "a1", "i3", "e9", "b2", "i7", "h4",
    "i1", "e3", "c5", "b4",
];

/// A review of [`OPENING`] asking 5 s per position: 105 s of searching on one thread, far past
/// the caps these tests set.
fn greedy_review() -> pb::AnalyzeGameRequest {
    pb::AnalyzeGameRequest {
        game: Some(pb::Position {
            fen: INITIAL.to_owned(),
            moves: OPENING.iter().map(|m| m.to_string()).collect(),
        }),
        per_turn: millis(5_000),
        options: Some(pb::SearchOptions {
            threads: 1,
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The turns and the summary of a review stream.
async fn review(server: &TestServer) -> (usize, pb::GameReviewSummary) {
    let mut client = server.client().await;
    let mut stream = client
        .analyze_game(greedy_review())
        .await
        .unwrap()
        .into_inner();
    let (mut turns, mut summary) = (0, None);
    while let Some(update) = stream.message().await.unwrap() {
        match update.update.expect("an update") {
            Update::Turn(_) => turns += 1,
            Update::Summary(s) => summary = Some(s),
        }
    }
    (turns, summary.expect("a summary"))
}

/// On an idle server the cap is split over the positions: every turn is reviewed, within the
/// cap, instead of 5 s per position.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_is_held_to_the_server_s_cap() {
    let server = TestServer::start(ServerConfig {
        threads: 2,
        max_review_ms: 2_000,
        ..ServerConfig::default()
    })
    .await;
    let start = Instant::now();
    let (turns, summary) = review(&server).await;
    let took = start.elapsed();
    assert_eq!(turns, OPENING.len(), "{summary:?}");
    assert_eq!(summary.stop_reason(), pb::StopReason::Time, "{summary:?}");
    assert!(summary.elapsed_ms <= 2_000, "{summary:?}");
    // Slack for a loaded machine; without the cap this takes 105 s.
    assert!(took < Duration::from_secs(6), "took {took:?}");
    server.stop().await;
}

/// A review that cannot get a thread (an interactive search holds the only one) ends at the
/// cap with its summary (DEADLINE), instead of waiting for --max-queue-wait-ms per position.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_still_running_at_the_cap_ends_with_its_summary() {
    let server = TestServer::start(ServerConfig {
        threads: 1,
        max_review_ms: 1_000,
        max_queue_wait_ms: 60_000,
        ..ServerConfig::default()
    })
    .await;
    let mut client = server.client().await;
    let holder = tokio::spawn(async move {
        client
            .best_move(best_move(INITIAL, &[], millis(20_000)))
            .await
    });
    let end = Instant::now() + Duration::from_secs(20);
    while server.engine.admission.threads_in_use() < 1 {
        assert!(Instant::now() < end, "the BestMove never started");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let start = Instant::now();
    let (turns, summary) = review(&server).await;
    let took = start.elapsed();
    assert_eq!(turns, 0, "{summary:?}");
    assert_eq!(
        summary.stop_reason(),
        pb::StopReason::Deadline,
        "{summary:?}"
    );
    assert!(took < Duration::from_secs(5), "took {took:?}");
    holder.abort();
    server.stop().await;
}

/// A cap too long to add to an instant (`--max-review-ms` near `u64::MAX`) is no cap: the review
/// runs on its own budget instead of panicking the task that serves it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_cap_is_no_cap() {
    let server = TestServer::start(ServerConfig {
        threads: 2,
        max_review_ms: u64::MAX,
        ..ServerConfig::default()
    })
    .await;
    let mut request = greedy_review();
    request.per_turn = millis(20);
    let mut client = server.client().await;
    let mut stream = client.analyze_game(request).await.unwrap().into_inner();
    let (mut turns, mut summary) = (0, None);
    while let Some(update) = stream.message().await.unwrap() {
        match update.update.expect("an update") {
            Update::Turn(_) => turns += 1,
            Update::Summary(s) => summary = Some(s),
        }
    }
    let summary = summary.expect("a summary");
    assert_eq!(turns, OPENING.len(), "{summary:?}");
    assert_eq!(summary.stop_reason(), pb::StopReason::Time, "{summary:?}");
}
