//! The HTTP/JSON gateway: every endpoint, SSE streaming, cancellation on disconnect, errors.

use std::time::{Duration, Instant};

use emergo_bot_server::config::ServerConfig;
use emergo_tests::{INITIAL, TestServer};
use futures_util::StreamExt;
use serde_json::{Value, json};

fn config() -> ServerConfig {
    ServerConfig {
        threads: 2,
        ..ServerConfig::default()
    }
}

async fn post(server: &TestServer, rpc: &str, body: Value) -> (u16, Value) {
    let r = reqwest::Client::new()
        .post(format!("{}/v1/{rpc}", server.http_url))
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unary_endpoints_speak_proto3_json() {
    let server = TestServer::start(config()).await;
    let (code, legal) = post(&server, "LegalMoves", json!({"position": {"fen": INITIAL}})).await;
    assert_eq!(code, 200);
    assert_eq!(legal["moves"].as_array().unwrap().len(), 40);
    assert_eq!(legal["moves"][0]["move"], "a1");
    assert_eq!(
        legal["moves"][0]["fenAfter"],
        "9/9/9/9/9/9/9/9/A@8 b 1 11,12"
    );
    assert_eq!(legal["status"]["result"], "*");

    let (code, applied) = post(
        &server,
        "ApplyMoves",
        json!({"fen": INITIAL, "moves": ["a1", "a1"]}),
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(applied["ok"], Value::Null); // false is the proto3 default, omitted
    assert_eq!(applied["errorIndex"], 1);
    assert!(
        applied["error"]
            .as_str()
            .unwrap()
            .contains("a1 is occupied")
    );

    let (code, best) = post(
        &server,
        "BestMove",
        json!({"position": {"fen": INITIAL, "moves": ["a1"]}, "limits": {"maxPlayouts": "2000"}}),
    )
    .await;
    assert_eq!(code, 200);
    let mv = best["bestMove"].as_str().unwrap();
    assert!(!mv.is_empty());
    assert_eq!(best["analysis"]["final"], true);
    assert!(
        best["analysis"]["stopReason"]
            .as_str()
            .unwrap()
            .starts_with("STOP_REASON_")
    );
    // 64-bit counters are strings in proto3 JSON.
    assert!(best["analysis"]["stats"]["playouts"].is_string());

    let (code, info) = post(&server, "ServerInfo", json!({})).await;
    assert_eq!(code, 200);
    assert_eq!(info["limits"]["threadBudget"], 2);
    let r = reqwest::get(format!("{}/v1/ServerInfo", server.http_url))
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_carry_the_grpc_code_and_http_status() {
    let server = TestServer::start(config()).await;
    let (code, e) = post(
        &server,
        "BestMove",
        json!({"position": {"fen": "bad"}, "limits": {"maxTimeMs": 10}}),
    )
    .await;
    assert_eq!(
        (code, e["code"].as_str().unwrap()),
        (400, "INVALID_ARGUMENT")
    );
    assert!(
        e["message"].as_str().unwrap().starts_with("position.fen:"),
        "{e}"
    );
    let (code, e) = post(
        &server,
        "LegalMoves",
        json!({"position": {"fen": INITIAL}, "bogus": 1}),
    )
    .await;
    assert_eq!(
        (code, e["code"].as_str().unwrap()),
        (400, "INVALID_ARGUMENT")
    );
    assert!(
        e["message"].as_str().unwrap().starts_with("request body:"),
        "{e}"
    );
    let r = reqwest::Client::new()
        .post(format!("{}/v1/LegalMoves", server.http_url))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    let r = reqwest::get(format!("{}/v1/Nope", server.http_url))
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 404);
    let big = "x".repeat(300 * 1024);
    let r = reqwest::Client::new()
        .post(format!("{}/v1/LegalMoves", server.http_url))
        .body(big)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 413);
    server.stop().await;

    // Auth and overload map to 401 and 429.
    let server = TestServer::start(ServerConfig {
        auth_token: Some("tok".into()),
        threads: 1,
        max_queue: 0,
        ..config()
    })
    .await;
    let (code, e) = post(&server, "ServerInfo", json!({})).await;
    assert_eq!(
        (code, e["code"].as_str().unwrap()),
        (401, "UNAUTHENTICATED")
    );
    let client = reqwest::Client::new();
    let authed = |rpc: &str, body: Value| {
        client
            .post(format!("{}/v1/{rpc}", server.http_url))
            .header("authorization", "Bearer tok")
            .json(&body)
            .send()
    };
    let long = json!({"position": {"fen": INITIAL}, "limits": {"maxTimeMs": 1500}});
    let first = tokio::spawn(authed("BestMove", long.clone()));
    while server.engine.running_searches() == 0 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let r = authed("BestMove", long).await.unwrap();
    assert_eq!(r.status().as_u16(), 429);
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["code"], "RESOURCE_EXHAUSTED");
    assert_eq!(first.await.unwrap().unwrap().status().as_u16(), 200);
    server.stop().await;
}

/// Errors once echoed the whole bad input (a 50 KB move gave a 50 KB message). The echo is
/// cut to 40 characters and every message is bounded, over HTTP as over gRPC.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_bad_input_gets_a_short_error() {
    let server = TestServer::start(config()).await;
    let huge = "q".repeat(50_000);
    for (rpc, body, field) in [
        (
            "LegalMoves",
            json!({"position": {"fen": INITIAL, "moves": [huge.clone()]}}),
            "position.moves[0]:",
        ),
        (
            "BestMove",
            json!({"position": {"fen": format!("9/9/9/9/9/9/9/9/9 {huge} 0 12,12")}, "limits": {"maxTimeMs": 10}}),
            "position.fen:",
        ),
    ] {
        let (code, e) = post(&server, rpc, body).await;
        let message = e["message"].as_str().unwrap();
        assert_eq!(
            (code, e["code"].as_str().unwrap()),
            (400, "INVALID_ARGUMENT")
        );
        assert!(message.starts_with(field), "{message}");
        assert!(message.chars().count() < 200, "{} chars", message.len());
    }
    // A body that is not even JSON of the right shape, with a huge string in it.
    let (code, e) = post(
        &server,
        "LegalMoves",
        json!({"position": {"fen": 7}, "x": huge}),
    )
    .await;
    assert_eq!(code, 400);
    assert!(e["message"].as_str().unwrap().chars().count() <= 301, "{e}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn analyze_streams_server_sent_events() {
    let server = TestServer::start(config()).await;
    let r = reqwest::Client::new()
        .post(format!("{}/v1/Analyze", server.http_url))
        .json(&json!({
            "position": {"fen": INITIAL, "moves": ["a1"]},
            "limits": {"maxTimeMs": 500},
            "options": {"multiPv": 2, "exhaustive": true},
            "reportIntervalMs": 50
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert!(
        r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let events = emergo_tests::sse::events(r, usize::MAX).await;
    let (last, rest) = events.split_last().unwrap();
    assert!(rest.len() >= 2, "{} updates", rest.len());
    assert!(rest.iter().all(|(name, _)| name == "update"));
    assert_eq!(last.0, "final");
    assert_eq!(last.1["final"], true);
    assert_eq!(last.1["stopReason"], "STOP_REASON_TIME");
    assert!(!last.1["moves"][0]["pv"].as_array().unwrap().is_empty());

    // Validation errors come back before streaming, as JSON.
    let r = reqwest::Client::new()
        .post(format!("{}/v1/Analyze", server.http_url))
        .json(&json!({"position": {"fen": INITIAL}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_the_connection_cancels_the_search() {
    let server = TestServer::start(config()).await;
    let r = reqwest::Client::new()
        .post(format!("{}/v1/Analyze", server.http_url))
        .json(&json!({"position": {"fen": INITIAL}, "limits": {"maxTimeMs": 30000}, "reportIntervalMs": 50}))
        .send()
        .await
        .unwrap();
    let events = emergo_tests::sse::events(r, 1).await; // read one update, then drop the response
    assert_eq!(events[0].0, "update");
    assert_eq!(server.engine.running_searches(), 1);
    let start = Instant::now();
    while server.engine.running_searches() > 0 {
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "search still running"
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_board_is_served() {
    let server = TestServer::start(config()).await;
    for (path, kind) in [
        ("/", "text/html"),
        ("/app.js", "text/javascript"),
        ("/style.css", "text/css"),
    ] {
        let r = reqwest::get(format!("{}{path}", server.http_url))
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 200, "{path}");
        assert!(
            r.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with(kind),
            "{path}"
        );
    }
    // Every embedded file (the board's ES modules too) is served as itself, never cached stale.
    for asset in emergo_bot_server::web::ASSETS {
        let r = reqwest::get(format!("{}{}", server.http_url, asset.path))
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 200, "{}", asset.path);
        assert_eq!(
            r.headers()["content-type"],
            asset.content_type,
            "{}",
            asset.path
        );
        assert_eq!(r.headers()["cache-control"], "no-cache", "{}", asset.path);
        assert_eq!(r.text().await.unwrap(), asset.body, "{}", asset.path);
    }
    server.stop().await;
}

/// `POST /v1/StopSearch` with the `searchId` of an Analyze stream's updates
/// ends the search with its answer: the stream's last event is `final` with
/// `STOP_REASON_STOPPED` and a best move. Unknown ids are 404, malformed ones 400, both with
/// the JSON error body.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_search_ends_an_sse_analysis_with_its_answer() {
    let server = TestServer::start(config()).await;
    let resp = reqwest::Client::new()
        .post(format!("{}/v1/Analyze", server.http_url))
        .json(&json!({
            "position": {"fen": INITIAL},
            "limits": {"maxTimeMs": 60000},
            "options": {"exhaustive": true, "priority": "PRIORITY_INTERACTIVE"},
            "reportIntervalMs": 50
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let mut body = resp.bytes_stream();
    let mut buf = String::new();
    let mut events: Vec<(String, Value)> = Vec::new();
    let mut stop_sent = false;
    while let Some(chunk) = body.next().await {
        buf.push_str(&String::from_utf8_lossy(&chunk.unwrap()));
        while let Some(end) = buf.find("\n\n") {
            let block: String = buf.drain(..end + 2).collect();
            let name = block
                .lines()
                .find_map(|l| l.strip_prefix("event:"))
                .unwrap_or("message")
                .trim()
                .to_owned();
            let data: String = block
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim_start)
                .collect();
            if data.is_empty() {
                continue;
            }
            events.push((name, serde_json::from_str(&data).unwrap()));
        }
        if !stop_sent && !events.is_empty() {
            let id = events[0].1["searchId"].as_str().unwrap().to_owned();
            assert_eq!(id.len(), 32, "{id}");
            let (code, answer) = post(&server, "StopSearch", json!({"searchId": id})).await;
            assert_eq!((code, answer), (200, json!({"stopped": true})));
            stop_sent = true;
        }
    }
    let (name, last) = events.last().unwrap();
    assert_eq!(name, "final", "{events:?}");
    assert_eq!(last["stopReason"], "STOP_REASON_STOPPED");
    assert_eq!(last["searchId"], events[0].1["searchId"]);
    assert!(!last["bestMove"].as_str().unwrap().is_empty(), "{last}");

    let (code, e) = post(
        &server,
        "StopSearch",
        json!({"searchId": "0123456789abcdef0123456789abcdef"}),
    )
    .await;
    assert_eq!((code, e["code"].as_str().unwrap()), (404, "NOT_FOUND"));
    let (code, e) = post(&server, "StopSearch", json!({"searchId": "no way"})).await;
    assert_eq!(
        (code, e["code"].as_str().unwrap()),
        (400, "INVALID_ARGUMENT")
    );
    assert!(
        e["message"].as_str().unwrap().starts_with("search_id:"),
        "{e}"
    );
    server.stop().await;
}

/// `GET /healthz` answers probes that speak only HTTP: no token needed (as for gRPC health),
/// any `Host` (a platform's probe sends the pod's address), 503 once the server shuts down.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz_answers_probes_without_a_token() {
    let server = TestServer::start(ServerConfig {
        auth_token: Some("tok".into()),
        ..config()
    })
    .await;
    let url = format!("{}/healthz", server.http_url);
    let client = reqwest::Client::new();
    let r = client
        .get(&url)
        .header("host", "10.1.2.3:8080")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body, json!({"status": "SERVING"}));
    // The same foreign Host on an RPC is still refused: only health is outside the policy.
    let r = client
        .get(format!("{}/v1/ServerInfo", server.http_url))
        .header("host", "10.1.2.3:8080")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 403);
    let r = client.post(&url).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 405);

    server.engine.shutdown();
    let r = client.get(&url).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 503);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body, json!({"status": "NOT_SERVING"}));
    server.stop().await;
}
