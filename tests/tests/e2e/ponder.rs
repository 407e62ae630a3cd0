//! Pondering end to end: `SearchOptions.ponder` on a BestMove with a game id
//! keeps the server searching the position after its answer until the game's next request,
//! which reuses the pondered subtree; ponders hold only idle threads and give them up to any
//! request that would wait; a cap ends them. Only relations are asserted (more reused visits
//! with pondering than without, the ponder's visits counted), never timings: the pauses stand
//! for the opponent's thinking time.

use std::time::{Duration, Instant};

use emergo_bot_server::config::ServerConfig;
use emergo_proto::v1 as pb;
use emergo_rules::Game;
use emergo_tests::{INITIAL, TestServer};
use serde_json::json;
use tonic::Code;
use tonic::transport::Channel;

type Client = pb::emergo_bot_client::EmergoBotClient<Channel>;

/// The opponent's thinking time between the bot's answer and its next request.
const OPPONENT_THINKS: Duration = Duration::from_millis(400);

fn request(moves: &[String], playouts: u64, game_id: &str, ponder: bool) -> pb::BestMoveRequest {
    pb::BestMoveRequest {
        position: Some(pb::Position {
            fen: INITIAL.into(),
            moves: moves.to_vec(),
        }),
        limits: Some(pb::Limits {
            max_playouts: Some(playouts),
            ..Default::default()
        }),
        options: Some(pb::SearchOptions {
            threads: 1,
            seed: 7,
            game_id: game_id.into(),
            ponder,
            ..Default::default()
        }),
    }
}

fn stats(r: &pb::BestMoveResponse) -> pb::SearchStats {
    r.analysis.as_ref().unwrap().stats.unwrap()
}

async fn load(client: &mut Client) -> pb::ServerLoad {
    client
        .server_info(pb::ServerInfoRequest {})
        .await
        .unwrap()
        .into_inner()
        .load
        .unwrap()
}

/// Polls the server's load until `done` holds (at most 20 s).
async fn until_load(client: &mut Client, what: &str, done: impl Fn(&pb::ServerLoad) -> bool) {
    let end = Instant::now() + Duration::from_secs(20);
    loop {
        let l = load(client).await;
        if done(&l) {
            return;
        }
        assert!(Instant::now() < end, "timed out waiting for {what}: {l:?}");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// The opponent's reply the bot expects after `best` (its principal variation), else the first
/// legal one.
fn expected_reply(moves: &[String], r: &pb::BestMoveResponse) -> String {
    let analysis = r.analysis.as_ref().unwrap();
    let pv = analysis
        .moves
        .iter()
        .find(|m| m.r#move == r.best_move)
        .map(|m| m.pv.clone())
        .unwrap_or_default();
    if let Some(reply) = pv.get(1) {
        return reply.clone();
    }
    let mut game = Game::from_fen_and_moves(INITIAL, moves).unwrap();
    game.play_str(&r.best_move).unwrap();
    game.legal_moves().iter().next().unwrap().to_string()
}

/// The bot's move (pondering or not), the opponent's pause and reply, the bot's next move:
/// the first answer and the next one's statistics.
async fn two_moves(
    server: &TestServer,
    game_id: &str,
    ponder: bool,
) -> (pb::BestMoveResponse, pb::SearchStats) {
    let mut client = server.client().await;
    let first = client
        .best_move(request(&[], 3_000, game_id, ponder))
        .await
        .unwrap()
        .into_inner();
    if ponder {
        // The ponder's slot is taken before the answer goes out.
        assert_eq!(server.engine.ponders.len(), 1);
        until_load(&mut client, "the ponder", |l| l.pondering == 1).await;
    }
    tokio::time::sleep(OPPONENT_THINKS).await;
    let reply = expected_reply(&[], &first);
    let moves = vec![first.best_move.clone(), reply];
    let next = client
        .best_move(request(&moves, 500, game_id, false))
        .await
        .unwrap()
        .into_inner();
    until_load(&mut client, "the end of the ponder", |l| l.pondering == 0).await;
    (first, stats(&next))
}

/// The same game twice, without and with pondering: the pondered tree gives
/// the next move more reused visits, and says how many of them pondering added.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pondering_adds_to_the_reused_visits_of_the_next_move() {
    let server = TestServer::start(ServerConfig {
        threads: 2,
        ..ServerConfig::default()
    })
    .await;
    let mut client = server.client().await;
    let info = client
        .server_info(pb::ServerInfoRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(info.limits.unwrap().max_ponder_ms, 60_000);

    let (plain_first, plain) = two_moves(&server, "plain", false).await;
    let (pondered_first, pondered) = two_moves(&server, "pondered", true).await;
    // One thread, a seed and a playout budget: the same first move in both games.
    assert_eq!(plain_first.best_move, pondered_first.best_move);
    assert_eq!(plain.pondered_visits, 0, "{plain:?}");
    assert!(plain.reused_visits > 0, "{plain:?}");
    assert!(pondered.pondered_visits > 0, "{pondered:?}");
    assert!(
        pondered.reused_visits >= pondered.pondered_visits,
        "{pondered:?}"
    );
    assert!(
        pondered.reused_visits > plain.reused_visits,
        "pondered {} vs plain {}",
        pondered.reused_visits,
        plain.reused_visits
    );
    eprintln!(
        "reused visits of the next move: {} without pondering, {} with ({} pondered)",
        plain.reused_visits, pondered.reused_visits, pondered.pondered_visits
    );
    assert!(server.engine.ponders.is_empty());
    server.stop().await;
}

/// With every thread pondering, a request of another game is granted at once
/// (the ponder is preempted, not waited out), and the pondered tree is still there for the
/// game's next move.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_of_another_game_preempts_the_ponder() {
    // Two threads, both the ponder's: the other game's one-thread search must wait for one.
    // (With a single thread its search's share of the tree memory would be the whole budget,
    // and it would evict the pondered tree.)
    let server = TestServer::start(ServerConfig {
        threads: 2,
        ..ServerConfig::default()
    })
    .await;
    let mut client = server.client().await;
    let mut on_two = request(&[], 2_000, "a", true);
    on_two.options.as_mut().unwrap().threads = 2;
    let first = client.best_move(on_two).await.unwrap().into_inner();
    until_load(&mut client, "the ponder on both threads", |l| {
        l.pondering == 1 && l.threads_in_use == 2
    })
    .await;
    tokio::time::sleep(OPPONENT_THINKS).await;
    // Another game needs the only thread: granted, the ponder stopped.
    let other = client
        .best_move(request(&["a1".into()], 500, "b", false))
        .await
        .unwrap()
        .into_inner();
    assert!(!other.best_move.is_empty());
    until_load(&mut client, "the preempted ponder", |l| l.pondering == 0).await;
    let l = load(&mut client).await;
    assert_eq!((l.requests_refused, l.queued_requests), (0, 0), "{l:?}");
    // Preempted is not lost: the game's next move reuses what the ponder found.
    let moves = vec![first.best_move.clone(), expected_reply(&[], &first)];
    let next = client
        .best_move(request(&moves, 500, "a", false))
        .await
        .unwrap()
        .into_inner();
    let s = stats(&next);
    assert!(
        s.pondered_visits > 0 && s.reused_visits >= s.pondered_visits,
        "{s:?}"
    );
    server.stop().await;
}

/// Every search gets its share of the tree memory however many games ponder: three games on
/// a two-thread server with 64 MiB, eight moves of 20,000 playouts on both threads each, every
/// move pondered. A thread given back by an answered
/// search may be granted before that search's memory, carried on into its ponder, is parked;
/// the new search then stops the ponders and waits for their trees to be parked, rather than
/// search in a tree of one node, reclaiming on every playout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ponders_give_their_memory_to_new_searches() {
    let server = TestServer::start(ServerConfig {
        threads: 2,
        max_tree_memory: Some(64 << 20),
        ..ServerConfig::default()
    })
    .await;
    let mut games = Vec::new();
    for g in 0..3 {
        let mut client = server.client().await;
        games.push(tokio::spawn(async move {
            let mut moves: Vec<String> = Vec::new();
            let mut seen = Vec::new();
            for _ in 0..8 {
                // Every thread: a search's share is then the whole budget. A playout budget,
                // not a time one: queued requests search as much once their turn comes.
                let mut req = request(&moves, 20_000, &format!("memory-{g}"), true);
                req.options.as_mut().unwrap().threads = 2;
                let r = client.best_move(req).await.unwrap().into_inner();
                if r.best_move.is_empty() {
                    break;
                }
                seen.push(stats(&r));
                let reply = expected_reply(&moves, &r);
                moves.push(r.best_move.clone());
                moves.push(reply);
            }
            seen
        }));
    }
    for game in games {
        for s in game.await.unwrap() {
            assert!(
                u64::from(s.reclaims) * 100 <= s.playouts + 100,
                "a search reclaimed its tree on most playouts: {s:?}"
            );
            assert!(
                s.tree_bytes >= 256 << 10 || s.playouts < 2_000,
                "a search without its share of the tree memory: {s:?}"
            );
        }
    }
    server.stop().await;
}

/// Ponders hold memory only until a search needs it: with two games pondering on a small
/// budget, a bigger search of another game stops them rather than evict the kept trees of six
/// other games, whose next moves all still reuse their trees.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_stops_ponders_before_evicting_kept_trees() {
    let server = TestServer::start(ServerConfig {
        threads: 4,
        max_tree_memory: Some(64 << 20),
        ..ServerConfig::default()
    })
    .await;
    let mut client = server.client().await;
    // Six kept games, one move each.
    let mut kept = Vec::new();
    for g in 0..6 {
        let id = format!("kept-{g}");
        let r = client
            .best_move(request(&[], 2_000, &id, false))
            .await
            .unwrap()
            .into_inner();
        kept.push((id, vec![r.best_move.clone(), expected_reply(&[], &r)]));
    }
    // Two games pondering on a thread each, each holding up to a quarter of the budget.
    for g in 0..2 {
        client
            .best_move(request(&[], 2_000, &format!("pondering-{g}"), true))
            .await
            .unwrap();
    }
    until_load(&mut client, "two ponders", |l| l.pondering == 2).await;
    // A two-thread search (half the budget) of the first kept game.
    let (id, moves) = &kept[0];
    let mut wide = request(moves, 2_000, id, false);
    wide.options.as_mut().unwrap().threads = 2;
    let r = client.best_move(wide).await.unwrap().into_inner();
    assert!(stats(&r).reused_visits > 0, "{:?}", stats(&r));
    // The other kept games were not evicted for it.
    for (id, moves) in &kept[1..] {
        let r = client
            .best_move(request(moves, 500, id, false))
            .await
            .unwrap()
            .into_inner();
        assert!(
            stats(&r).reused_visits > 0,
            "{id} lost its tree: {:?}",
            stats(&r)
        );
    }
    server.stop().await;
}

/// `--max-ponder-ms` ends a ponder nobody stops (its tree is kept with what
/// it found), and 0 turns pondering off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cap_ends_a_ponder_and_zero_turns_pondering_off() {
    let server = TestServer::start(ServerConfig {
        threads: 2,
        max_ponder_ms: 500,
        ..ServerConfig::default()
    })
    .await;
    let mut client = server.client().await;
    let first = client
        .best_move(request(&[], 2_000, "capped", true))
        .await
        .unwrap()
        .into_inner();
    until_load(&mut client, "the ponder", |l| l.pondering == 1).await;
    until_load(&mut client, "the cap", |l| {
        l.pondering == 0 && l.kept_games == 1
    })
    .await;
    assert!(server.engine.ponders.is_empty());
    let moves = vec![first.best_move.clone(), expected_reply(&[], &first)];
    let next = client
        .best_move(request(&moves, 500, "capped", false))
        .await
        .unwrap()
        .into_inner();
    assert!(stats(&next).pondered_visits > 0, "{:?}", stats(&next));
    server.stop().await;

    let server = TestServer::start(ServerConfig {
        threads: 2,
        max_ponder_ms: 0,
        ..ServerConfig::default()
    })
    .await;
    let mut client = server.client().await;
    let info = client
        .server_info(pb::ServerInfoRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(info.limits.unwrap().max_ponder_ms, 0);
    let r = client
        .best_move(request(&[], 500, "off", true))
        .await
        .unwrap()
        .into_inner();
    assert!(!r.best_move.is_empty());
    // A ponder would have taken its slot before the answer went out.
    assert!(server.engine.ponders.is_empty());
    assert_eq!(load(&mut client).await.pondering, 0);
    server.stop().await;
}

/// A ponder needs a game id, and only BestMove ponders: INVALID_ARGUMENT
/// naming the field, over gRPC and HTTP.
#[tokio::test]
async fn ponder_without_a_game_id_or_on_analyze_is_refused() {
    let server = TestServer::start(ServerConfig {
        threads: 1,
        ..ServerConfig::default()
    })
    .await;
    let mut client = server.client().await;
    let e = client
        .best_move(request(&[], 100, "", true))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(
        e.message()
            .starts_with("options.ponder: needs options.game_id"),
        "{e:?}"
    );
    let r = request(&[], 100, "g", true);
    let e = client
        .analyze(pb::AnalyzeRequest {
            position: r.position,
            limits: r.limits,
            options: r.options,
            report_interval_ms: 0,
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert_eq!(
        e.message(),
        "options.ponder: only BestMove ponders (after its answer)"
    );

    let resp = reqwest::Client::new()
        .post(format!("{}/v1/BestMove", server.http_url))
        .json(&json!({
            "position": {"fen": INITIAL},
            "limits": {"maxPlayouts": "100"},
            "options": {"ponder": true},
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 400);
    let body: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(body["code"], "INVALID_ARGUMENT");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .starts_with("options.ponder:"),
        "{body}"
    );
    server.stop().await;
}

/// The measurement, not a test (`cargo test --release -p emergo-tests --test e2e --
/// --ignored --nocapture ponder_gain`): games of 10 bot moves at 300 ms a move (one search thread on a
/// two-thread server), the opponent (alpha-beta, 5,000 nodes a move) replying after a 300 ms
/// pause, with and without pondering; prints the reused (and pondered) visits of the bot's
/// moves 2–10. Only asserts that the games were played.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement: run it by hand in release"]
async fn ponder_gain() {
    use emergo_cli::players::{AbPlayer, MovePicker};
    use emergo_engine::alphabeta::AbLimits;

    const GAMES: usize = 3;
    const BOT_MOVES: usize = 10;
    let pause = Duration::from_millis(300);
    let server = TestServer::start(ServerConfig {
        threads: 2,
        ..ServerConfig::default()
    })
    .await;
    let mut client = server.client().await;
    for ponder in [false, true] {
        let mut reused = Vec::new();
        let mut pondered = Vec::new();
        let mut playouts = Vec::new();
        for g in 0..GAMES {
            let game_id = format!("gain-{ponder}-{g}");
            let mut game = Game::from_fen_and_moves(INITIAL, &[] as &[String]).unwrap();
            let mut opponent = AbPlayer::new(AbLimits {
                max_nodes: Some(5_000),
                ..AbLimits::default()
            });
            for n in 0..BOT_MOVES {
                if game.outcome().is_some() {
                    break;
                }
                let moves: Vec<String> = game.moves().iter().map(|m| m.to_string()).collect();
                let r = client
                    .best_move(pb::BestMoveRequest {
                        position: Some(pb::Position {
                            fen: INITIAL.into(),
                            moves,
                        }),
                        limits: Some(pb::Limits {
                            max_time_ms: Some(300),
                            ..Default::default()
                        }),
                        options: Some(pb::SearchOptions {
                            threads: 1,
                            game_id: game_id.clone(),
                            ponder,
                            ..Default::default()
                        }),
                    })
                    .await
                    .unwrap()
                    .into_inner();
                let s = stats(&r);
                if n > 0 {
                    reused.push(s.reused_visits);
                    pondered.push(s.pondered_visits);
                }
                playouts.push(s.playouts);
                game.play_str(&r.best_move).unwrap();
                if game.outcome().is_some() {
                    break;
                }
                let started = Instant::now();
                let reply = opponent.pick(&game).unwrap();
                tokio::time::sleep(pause.saturating_sub(started.elapsed())).await;
                game.play(reply).unwrap();
            }
        }
        assert!(!reused.is_empty());
        let mean = |v: &[u64]| v.iter().sum::<u64>() as f64 / v.len().max(1) as f64;
        let median = |v: &[u64]| {
            let mut v = v.to_vec();
            v.sort_unstable();
            v[v.len() / 2]
        };
        eprintln!(
            "ponder={ponder}: {} next moves, reused visits mean {:.0} median {} (pondered mean {:.0}), \
             playouts per move mean {:.0}; all reused: {reused:?}",
            reused.len(),
            mean(&reused),
            median(&reused),
            mean(&pondered),
            mean(&playouts),
        );
    }
    server.stop().await;
}
