//! gRPC overhead, measured: playouts of a 1 s Analyze over loopback against the same search
//! in-process, and BestMove latency over its time budget on an idle server.
//!
//! `cargo bench -p emergo-bot-server --bench grpc` prints the figures (no timing assertions).

use std::sync::Arc;
use std::time::{Duration, Instant};

use emergo_bot_server::config::ServerConfig;
use emergo_bot_server::runner::Engine;
use emergo_engine::EmergoState;
use emergo_mcts::{Search, SearchParams};
use emergo_proto::v1 as pb;
use emergo_rules::Position;

const INITIAL: &str = emergo_rules::INITIAL_FEN;

/// The same search as the server runs (its configuration: `--mcts`, node cap), in-process.
fn in_process(config: &ServerConfig, ms: u64) -> u64 {
    let mut params = SearchParams {
        threads: 1,
        seed: 1,
        max_time: Some(Duration::from_millis(ms)),
        max_nodes: config.max_nodes,
        ..SearchParams::default()
    };
    config.mcts.apply(&mut params);
    // The gRPC request asks for `exhaustive`: the whole budget.
    params.smart_pruning = false;
    let state =
        EmergoState::new(Position::initial()).with_knowledge(config.mcts.shared_knowledge());
    Search::new(state, params).run().playouts
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let engine = Arc::new(Engine::new(ServerConfig {
        threads: 2,
        ..ServerConfig::default()
    }));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(emergo_bot_server::server::run_with_engine(
        listener,
        None,
        engine.clone(),
        async {
            let _ = stopped.await;
        },
    ));
    let mut client = pb::emergo_bot_client::EmergoBotClient::connect(url)
        .await
        .unwrap();

    let rounds = 3;
    let (mut grpc, mut local) = (0u64, 0u64);
    for _ in 0..rounds {
        let mut stream = client
            .analyze(pb::AnalyzeRequest {
                position: Some(pb::Position {
                    fen: INITIAL.into(),
                    moves: vec![],
                }),
                limits: Some(pb::Limits {
                    max_time_ms: Some(1_000),
                    max_playouts: None,
                    clock: None,
                }),
                options: Some(pb::SearchOptions {
                    threads: 1,
                    seed: 1,
                    exhaustive: true,
                    ..Default::default()
                }),
                report_interval_ms: 100,
            })
            .await
            .unwrap()
            .into_inner();
        let mut last = None;
        while let Some(u) = stream.message().await.unwrap() {
            last = Some(u);
        }
        let played = last.and_then(|u| u.stats).map_or(0, |s| s.playouts);
        assert!(played > 0);
        grpc += played;
        let config = engine.config.clone();
        local += tokio::task::spawn_blocking(move || in_process(&config, 1_000))
            .await
            .unwrap();
    }
    println!(
        "1 s search, 1 thread, mean of {rounds}: gRPC Analyze {} playouts, in-process {} playouts: {:.1}%",
        grpc / rounds,
        local / rounds,
        100.0 * grpc as f64 / local as f64
    );

    let budget = Duration::from_millis(100);
    let mut over = Vec::new();
    for i in 0..40 {
        let started = Instant::now();
        let r = client
            .best_move(pb::BestMoveRequest {
                position: Some(pb::Position {
                    fen: INITIAL.into(),
                    moves: vec!["a1".into()],
                }),
                limits: Some(pb::Limits {
                    max_time_ms: Some(budget.as_millis() as u32),
                    max_playouts: None,
                    clock: None,
                }),
                options: Some(pb::SearchOptions {
                    seed: i + 1,
                    exhaustive: true,
                    ..Default::default()
                }),
            })
            .await
            .unwrap()
            .into_inner();
        assert!(!r.best_move.is_empty());
        over.push(started.elapsed().saturating_sub(budget));
    }
    over.sort();
    println!(
        "BestMove with a 100 ms budget, idle server, 40 calls: latency over budget p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        percentile(&over, 0.5).as_secs_f64() * 1e3,
        percentile(&over, 0.99).as_secs_f64() * 1e3,
        over[over.len() - 1].as_secs_f64() * 1e3
    );
    // Cancellation: a streaming client drops its call; how long until the search's threads are
    // free again (the server's running-search count back to zero)?
    let mut freed = Vec::new();
    for _ in 0..20 {
        let mut stream = client
            .analyze(pb::AnalyzeRequest {
                position: Some(pb::Position {
                    fen: INITIAL.into(),
                    moves: vec![],
                }),
                limits: Some(pb::Limits {
                    max_time_ms: Some(30_000),
                    max_playouts: None,
                    clock: None,
                }),
                options: Some(pb::SearchOptions {
                    threads: 2,
                    ..Default::default()
                }),
                report_interval_ms: 50,
            })
            .await
            .unwrap()
            .into_inner();
        stream.message().await.unwrap().unwrap();
        let dropped = Instant::now();
        drop(stream);
        while engine.running_searches() > 0 {
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
        freed.push(dropped.elapsed());
    }
    freed.sort();
    println!(
        "cancellation (client drops an Analyze stream, 2 search threads), 20 calls: threads free after p50 {:.2} ms, max {:.2} ms",
        percentile(&freed, 0.5).as_secs_f64() * 1e3,
        freed[freed.len() - 1].as_secs_f64() * 1e3
    );
    let _ = stop.send(());
    let _ = server.await;
}
