//! The HTTP gateway's browser-facing policy and its error answers.
//! Same-origin by default, `--cors-origin` for more; JSON calls need `application/json`; `Host`
//! checked against DNS rebinding; every error (413 from `Content-Length` alone, 405, 415, 403)
//! is the JSON error body; bad flag values stop the server at start-up.

use std::process::Command;
use std::time::{Duration, Instant};

use emergo_bot_server::config::ServerConfig;
use emergo_tests::{INITIAL, TestServer, binary, run_to_refusal, workspace_root};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const BOARD: &str = "http://board.example:3000";

fn config() -> ServerConfig {
    ServerConfig {
        threads: 1,
        ..ServerConfig::default()
    }
}

fn with_origins(origins: &[&str]) -> ServerConfig {
    ServerConfig {
        cors_origins: origins.iter().map(|o| (*o).to_owned()).collect(),
        ..config()
    }
}

fn legal_moves_body() -> String {
    json!({"position": {"fen": INITIAL}}).to_string()
}

/// An answer read off the socket: status, headers (names lowercased), body.
struct Raw {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Raw {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        assert_eq!(
            self.header("content-type"),
            Some("application/json"),
            "status {}: {}",
            self.status,
            self.body
        );
        serde_json::from_str(&self.body).unwrap()
    }
}

/// Sends `head` (request line and headers, without the blank line) and `body` over a fresh
/// connection, byte for byte as written, and reads one answer; fails after `limit`.
async fn raw(server: &TestServer, head: &str, body: &str, limit: Duration) -> Raw {
    let addr = server.http_url.trim_start_matches("http://");
    let read = async {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(format!("{head}\r\n\r\n{body}").as_bytes())
            .await
            .unwrap();
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            let n = s.read(&mut chunk).await.unwrap_or(0);
            buf.extend_from_slice(&chunk[..n]);
            let text = String::from_utf8_lossy(&buf);
            if let Some(end) = text.find("\r\n\r\n") {
                let length = text[..end].lines().find_map(|l| {
                    let (name, value) = l.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse::<usize>().ok())?
                });
                if length.is_some_and(|len| buf.len() >= end + 4 + len) {
                    break;
                }
            }
            if n == 0 {
                break;
            }
        }
        buf
    };
    let buf = tokio::time::timeout(limit, read)
        .await
        .unwrap_or_else(|_| panic!("no answer within {limit:?} to {head:?}"));
    let text = String::from_utf8_lossy(&buf).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").expect("an HTTP answer");
    let mut lines = head.lines();
    let status = lines.next().unwrap().split(' ').nth(1).unwrap();
    Raw {
        status: status.parse().unwrap(),
        headers: lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect(),
        body: body.to_owned(),
    }
}

/// The HTTP port of `server`.
fn port(server: &TestServer) -> &str {
    server.http_url.rsplit(':').next().unwrap()
}

/// A POST of `body` to `/v1/<rpc>` (`Host: localhost:<port>`) with extra header lines.
async fn post(server: &TestServer, rpc: &str, headers: &[&str], body: &str) -> Raw {
    let mut head = format!(
        "POST /v1/{rpc} HTTP/1.1\r\nHost: localhost:{}\r\nConnection: close\r\n\
         Content-Length: {}",
        port(server),
        body.len()
    );
    for h in headers {
        head.push_str("\r\n");
        head.push_str(h);
    }
    raw(server, &head, body, Duration::from_secs(10)).await
}

/// The attack: a page elsewhere posts `text/plain` (no preflight in a browser). It used to run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cross_origin_text_plain_post_is_refused() {
    let server = TestServer::start(config()).await;
    let body = json!({"position": {"fen": INITIAL}, "limits": {"maxPlayouts": "100"}}).to_string();
    let r = post(
        &server,
        "BestMove",
        &["Origin: http://evil.example", "Content-Type: text/plain"],
        &body,
    )
    .await;
    assert_eq!(r.status, 403, "{}", r.body);
    let e = r.json();
    assert_eq!(e["code"], "PERMISSION_DENIED");
    assert!(e["message"].as_str().unwrap().contains("Origin"), "{e}");
    assert_eq!(r.header("access-control-allow-origin"), None);
    // Even declared as JSON, a foreign origin is refused.
    let r = post(
        &server,
        "LegalMoves",
        &[
            "Origin: http://evil.example",
            "Content-Type: application/json",
        ],
        &legal_moves_body(),
    )
    .await;
    assert_eq!(r.status, 403);
    // So is an opaque origin (sandboxed frame, file: page).
    let r = post(
        &server,
        "LegalMoves",
        &["Origin: null", "Content-Type: application/json"],
        &legal_moves_body(),
    )
    .await;
    assert_eq!(r.status, 403);
    server.stop().await;
}

/// JSON calls must declare JSON; the web board's own (same-origin) calls do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_calls_need_the_json_content_type() {
    let server = TestServer::start(config()).await;
    let own = format!("Origin: http://localhost:{}", port(&server));
    for headers in [
        vec!["Content-Type: text/plain"],
        vec!["Content-Type: application/x-www-form-urlencoded"],
        vec![], // a body without any content type
        vec![own.as_str(), "Content-Type: text/plain;charset=UTF-8"],
    ] {
        let r = post(&server, "LegalMoves", &headers, &legal_moves_body()).await;
        assert_eq!(r.status, 415, "{headers:?}: {}", r.body);
        let e = r.json();
        assert_eq!(e["code"], "INVALID_ARGUMENT");
        assert!(
            e["message"].as_str().unwrap().contains("application/json"),
            "{e}"
        );
    }
    for headers in [
        vec!["Content-Type: application/json"],
        vec![
            own.as_str(),
            "Content-Type: application/json; charset=utf-8",
        ],
    ] {
        let r = post(&server, "LegalMoves", &headers, &legal_moves_body()).await;
        assert_eq!(r.status, 200, "{headers:?}: {}", r.body);
    }
    // A body-less call needs no content type (curl -X POST .../ServerInfo); GET stays.
    assert_eq!(post(&server, "ServerInfo", &[], "").await.status, 200);
    let r = reqwest::get(format!("{}/v1/ServerInfo", server.http_url))
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    server.stop().await;
}

/// A listed origin's preflight is answered with what the API uses; another origin's is not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn preflight_is_granted_only_to_listed_origins() {
    let server = TestServer::start(with_origins(&[BOARD])).await;
    let preflight = |origin: &str| {
        format!(
            "OPTIONS /v1/BestMove HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
             Origin: {origin}\r\nAccess-Control-Request-Method: POST\r\n\
             Access-Control-Request-Headers: content-type,authorization,x-emergo-timeout-ms"
        )
    };
    let r = raw(&server, &preflight(BOARD), "", Duration::from_secs(10)).await;
    assert!((200..300).contains(&r.status), "{}", r.status);
    assert_eq!(r.header("access-control-allow-origin"), Some(BOARD));
    let methods = r.header("access-control-allow-methods").unwrap();
    assert!(
        methods.contains("POST") && methods.contains("GET"),
        "{methods}"
    );
    let allowed = r
        .header("access-control-allow-headers")
        .unwrap()
        .to_ascii_lowercase();
    for h in ["content-type", "authorization", "x-emergo-timeout-ms"] {
        assert!(allowed.contains(h), "{allowed}");
    }
    assert_eq!(r.header("access-control-allow-credentials"), None);

    let r = raw(
        &server,
        &preflight("http://evil.example"),
        "",
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(r.status, 403);
    assert_eq!(r.header("access-control-allow-origin"), None);
    assert_eq!(r.json()["code"], "PERMISSION_DENIED");
    server.stop().await;

    // With no --cors-origin, nobody else is granted anything.
    let server = TestServer::start(config()).await;
    let r = raw(&server, &preflight(BOARD), "", Duration::from_secs(10)).await;
    assert_eq!(r.status, 403);
    assert_eq!(r.header("access-control-allow-origin"), None);
    server.stop().await;
}

/// A listed origin's calls carry `Access-Control-Allow-Origin`, errors included, so its page can
/// read them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listed_origin_answers_carry_cors_headers() {
    let server = TestServer::start(with_origins(&[BOARD, "https://other.example"])).await;
    let client = reqwest::Client::new();
    let call = |origin: &'static str, body: String| {
        client
            .post(format!("{}/v1/LegalMoves", server.http_url))
            .header("origin", origin)
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    let r = call(BOARD, legal_moves_body()).await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert_eq!(r.headers()["access-control-allow-origin"], BOARD);
    assert!(
        r.headers().get_all("vary").iter().any(|v| v
            .to_str()
            .unwrap()
            .to_ascii_lowercase()
            .contains("origin"))
    );
    let r = call(
        "https://other.example",
        json!({"position": {"fen": "bad"}}).to_string(),
    )
    .await
    .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    assert_eq!(
        r.headers()["access-control-allow-origin"],
        "https://other.example"
    );
    // The same host on another port is another origin.
    let r = call("http://board.example:3001", legal_moves_body())
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 403);
    assert!(r.headers().get("access-control-allow-origin").is_none());
    server.stop().await;
}

/// DNS rebinding: the attacker's name resolves to 127.0.0.1, so the browser sends
/// `Host: evil.example` with a matching `Origin`. Only the Host check stops it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_host_is_refused_on_a_loopback_server() {
    let server = TestServer::start(config()).await;
    let port = port(&server).to_owned();
    let get = |host: String, origin: Option<String>| {
        let mut head = format!("GET /v1/ServerInfo HTTP/1.1\r\nHost: {host}\r\nConnection: close");
        if let Some(o) = origin {
            head.push_str(&format!("\r\nOrigin: {o}"));
        }
        head
    };
    let attack = get(
        format!("evil.example:{port}"),
        Some(format!("http://evil.example:{port}")),
    );
    let r = raw(&server, &attack, "", Duration::from_secs(10)).await;
    assert_eq!(r.status, 403, "{}", r.body);
    let e = r.json();
    assert_eq!(e["code"], "PERMISSION_DENIED");
    assert!(e["message"].as_str().unwrap().contains("Host"), "{e}");
    for host in [
        format!("localhost:{port}"),
        format!("127.0.0.1:{port}"),
        format!("[::1]:{port}"),
        "localhost".to_owned(),
        "127.0.0.1:50150".to_owned(), // a proxy in front forwards its own port
    ] {
        let r = raw(
            &server,
            &get(host.clone(), None),
            "",
            Duration::from_secs(10),
        )
        .await;
        assert_eq!(r.status, 200, "{host}: {}", r.body);
    }
    // The web board's own calls: Origin matches Host.
    let own = get(
        format!("localhost:{port}"),
        Some(format!("http://localhost:{port}")),
    );
    assert_eq!(
        raw(&server, &own, "", Duration::from_secs(10)).await.status,
        200
    );
    server.stop().await;

    // --allowed-host replaces the default; `*` allows any.
    let server = TestServer::start(ServerConfig {
        allowed_hosts: vec!["bot.example.org".into()],
        ..config()
    })
    .await;
    let ok = raw(
        &server,
        &get("bot.example.org".into(), None),
        "",
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(ok.status, 200);
    let refused = raw(
        &server,
        &get("localhost".into(), None),
        "",
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(refused.status, 403);
    server.stop().await;
    let server = TestServer::start(ServerConfig {
        allowed_hosts: vec!["*".into()],
        ..config()
    })
    .await;
    let r = raw(
        &server,
        &get("evil.example".into(), None),
        "",
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(r.status, 200);
    server.stop().await;
}

/// A huge `Content-Length` is refused from the header alone: the body never comes, and the
/// answer must not wait for it (it used to wait for the whole body, then answer in plain text).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_content_length_gets_a_json_413_at_once() {
    let server = TestServer::start(config()).await;
    let start = Instant::now();
    let r = raw(
        &server,
        "POST /v1/LegalMoves HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
         Content-Length: 10000000000",
        "",
        Duration::from_secs(3),
    )
    .await;
    assert_eq!(r.status, 413, "{}", r.body);
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    let e = r.json();
    assert_eq!(e["code"], "INVALID_ARGUMENT");
    assert!(e["message"].as_str().unwrap().contains("262144"), "{e}");

    // A chunked body (no Content-Length) over the limit gets the same JSON answer.
    let chunk = "x".repeat(300 * 1024);
    let r = raw(
        &server,
        "POST /v1/LegalMoves HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
         Transfer-Encoding: chunked",
        &format!("{:x}\r\n{chunk}\r\n0\r\n\r\n", chunk.len()),
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(r.status, 413);
    assert_eq!(r.json()["code"], "INVALID_ARGUMENT");

    // A malformed Content-Length is a clean 400, and the server goes on serving.
    let r = raw(
        &server,
        "POST /v1/LegalMoves HTTP/1.1\r\nHost: localhost\r\nContent-Length: 12abc",
        "",
        Duration::from_secs(3),
    )
    .await;
    assert_eq!(r.status, 400);
    let r = post(
        &server,
        "LegalMoves",
        &["Content-Type: application/json"],
        &legal_moves_body(),
    )
    .await;
    assert_eq!(r.status, 200);
    server.stop().await;
}

/// A wrong method gets the JSON error body naming the allowed one (it used to be empty).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn method_not_allowed_is_json() {
    let server = TestServer::start(config()).await;
    let r = raw(
        &server,
        "DELETE /v1/BestMove HTTP/1.1\r\nHost: localhost\r\nConnection: close",
        "",
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(r.status, 405);
    assert!(r.header("allow").unwrap().contains("POST"));
    let e = r.json();
    assert_eq!(e["code"], "UNIMPLEMENTED");
    let message = e["message"].as_str().unwrap();
    assert!(
        message.contains("DELETE") && message.contains("POST"),
        "{message}"
    );
    let r = raw(
        &server,
        "PUT / HTTP/1.1\r\nHost: localhost\r\nConnection: close",
        "",
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(r.status, 405);
    assert!(r.json()["message"].as_str().unwrap().contains("GET"));
    server.stop().await;
}

/// A flag value that is not an origin or a host stops the server at start-up, naming the flag.
#[test]
fn bad_policy_flags_stop_the_server_at_start_up() {
    for (flag, value) in [
        ("--cors-origin", "board.example.org"),
        ("--cors-origin", "https://board.example.org/app"),
        ("--allowed-host", "bad host"),
    ] {
        let (status, stderr) = run_to_refusal(
            Command::new(binary("bot-server"))
                .args(["--listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0"])
                .args([flag, value]),
        );
        assert!(!status.success(), "{flag} {value:?}");
        assert!(
            stderr.contains(&format!("{flag} {value:?}")),
            "{flag} {value:?}: {stderr}"
        );
    }
}

/// The fleet's nginx must forward the Host with its port (`$http_host`), or the web board's
/// calls through it (Origin `http://127.0.0.1:P`) no longer match the Host the replica sees.
#[test]
fn web_board_calls_pass_through_the_fleets_nginx() {
    let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx"]
        .iter()
        .any(|p| std::path::Path::new(p).exists());
    if !nginx {
        assert!(
            std::env::var("EMERGO_REQUIRE_NGINX").is_err(),
            "nginx is required"
        );
        eprintln!("SKIPPED: nginx not installed");
        return;
    }
    let port = (0..200u16)
        .map(|i| {
            21_000
                + (std::process::id() as u16)
                    .wrapping_mul(13)
                    .wrapping_add(i * 173)
                    % 29_000
        })
        .find(|&p| {
            [p, p + 1, p + 100, p + 101]
                .iter()
                .all(|&q| std::net::TcpListener::bind(("127.0.0.1", q)).is_ok())
        })
        .expect("free ports");
    let dir = workspace_root().join(format!("target/gateway-policy-fleet-{port}"));
    let script = workspace_root().join("deploy/fleet-local.sh");
    let up = Command::new(&script)
        .args(["up", "--replicas", "1", "--port", &port.to_string()])
        .arg("--dir")
        .arg(&dir)
        .arg("--bin")
        .arg(binary("bot-server"))
        .args(["--", "--threads", "1"])
        .output()
        .unwrap();
    let result = std::panic::catch_unwind(|| {
        assert!(
            up.status.success(),
            "fleet up: {}",
            String::from_utf8_lossy(&up.stderr)
        );
        let front = format!("http://127.0.0.1:{}", port + 100);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let client = reqwest::Client::new();
            let r = client
                .post(format!("{front}/v1/LegalMoves"))
                .header("origin", &front)
                .header("content-type", "application/json")
                .body(legal_moves_body())
                .send()
                .await
                .unwrap();
            assert_eq!(r.status().as_u16(), 200, "{}", r.text().await.unwrap());
            let r = client
                .post(format!("{front}/v1/LegalMoves"))
                .header("origin", "http://evil.example")
                .header("content-type", "application/json")
                .body(legal_moves_body())
                .send()
                .await
                .unwrap();
            assert_eq!(r.status().as_u16(), 403);
        });
    });
    let _ = Command::new(&script)
        .args(["down", "--dir"])
        .arg(&dir)
        .output();
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
}
