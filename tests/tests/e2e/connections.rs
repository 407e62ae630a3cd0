//! Connections that connect and do nothing, dribble headers, stall a
//! body, open by the hundred or outlive a shutdown. Each test reproduces a finding of the
//! hostile-client probe; on the old server every one of these connections stayed open forever.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use emergo_bot_server::config::ServerConfig;
use emergo_proto::v1 as pb;
use emergo_tests::{INITIAL, TestServer, binary};

/// Short timeouts, so each test takes about a second.
fn config() -> ServerConfig {
    ServerConfig {
        threads: 1,
        header_timeout_ms: 300,
        body_timeout_ms: 300,
        idle_timeout_ms: 600,
        keepalive_interval_ms: 300,
        keepalive_timeout_ms: 300,
        ..ServerConfig::default()
    }
}

fn host_port(url: &str) -> String {
    url.trim_start_matches("http://").to_owned()
}

/// Waits until the peer closes `s` (EOF or reset), reading and discarding what it sends;
/// returns how long that took, or `None` if it is still open after `limit`.
fn closed_within(s: &mut TcpStream, limit: Duration) -> Option<Duration> {
    let start = Instant::now();
    s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    let mut buf = [0u8; 4096];
    while start.elapsed() < limit {
        match s.read(&mut buf) {
            Ok(0) => return Some(start.elapsed()),
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return Some(start.elapsed()),
        }
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_connections_are_closed_on_every_port() {
    let server = TestServer::start(config()).await;
    for url in [&server.url, &server.http_url] {
        let addr = host_port(url);
        let took = tokio::task::spawn_blocking(move || {
            let mut s = TcpStream::connect(addr).unwrap();
            closed_within(&mut s, Duration::from_secs(10))
        })
        .await
        .unwrap();
        assert!(took.is_some(), "{url}: a silent connection stayed open");
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_headers_half_bodies_and_bare_prefaces_are_cut_off() {
    let server = TestServer::start(config()).await;
    let http = host_port(&server.http_url);
    let grpc = host_port(&server.url);

    // One byte of headers every 100 ms: never finishes within the 300 ms header timeout.
    let addr = http.clone();
    let slowloris = std::thread::spawn(move || {
        let mut s = TcpStream::connect(addr).unwrap();
        let start = Instant::now();
        for b in b"POST /v1/LegalMoves HTTP/1.1\r\nHost: localhost\r\nX-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" {
            if s.write_all(&[*b]).is_err() {
                return Some(start.elapsed());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        None
    });

    // A body that stops halfway: the request fails at the body timeout, no later.
    let addr = http.clone();
    let half_body = std::thread::spawn(move || {
        let mut s = TcpStream::connect(addr).unwrap();
        write!(
            s,
            "POST /v1/LegalMoves HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{\"position\""
        )
        .unwrap();
        let start = Instant::now();
        let mut answer = String::new();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let _ = s.read_to_string(&mut answer);
        (start.elapsed(), answer)
    });

    // The HTTP/2 preface and nothing else.
    let bare_preface = std::thread::spawn(move || {
        let mut s = TcpStream::connect(grpc).unwrap();
        s.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").unwrap();
        closed_within(&mut s, Duration::from_secs(10))
    });

    let took = slowloris.join().unwrap();
    assert!(
        took.is_some(),
        "a connection dribbling its headers was served for 9 s"
    );
    let (took, answer) = half_body.join().unwrap();
    assert!(
        took < Duration::from_secs(5),
        "half body held for {took:?}: {answer}"
    );
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 4"),
        "a half body is a client error: {answer}"
    );
    assert!(
        bare_preface.join().unwrap().is_some(),
        "a bare HTTP/2 preface stayed open"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_idle_connections_cannot_lock_out_clients() {
    let server = TestServer::start(ServerConfig {
        max_connections: 8,
        header_timeout_ms: 60_000,
        idle_timeout_ms: 60_000,
        ..config()
    })
    .await;
    let grpc = host_port(&server.url);
    let flood: Vec<TcpStream> = (0..40)
        .map(|_| TcpStream::connect(&grpc).unwrap())
        .collect();
    // Every real call still gets through: each new connection takes an idle one's place.
    for _ in 0..3 {
        let mut client = server.client().await;
        let info = tokio::time::timeout(
            Duration::from_secs(10),
            client.server_info(pb::ServerInfoRequest {}),
        )
        .await
        .expect("ServerInfo answered")
        .expect("ServerInfo ok");
        assert!(!info.get_ref().version.is_empty());
    }
    drop(flood);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_calls_are_refused_at_once_while_draining() {
    let mut server = TestServer::start(ServerConfig {
        threads: 1,
        ..ServerConfig::default()
    })
    .await;
    let mut client = server.client().await;
    let analysis = tokio::spawn(async move {
        let mut stream = client
            .analyze(pb::AnalyzeRequest {
                position: Some(pb::Position {
                    fen: INITIAL.to_owned(),
                    moves: vec![],
                }),
                limits: Some(pb::Limits {
                    max_time_ms: Some(5_000),
                    max_playouts: None,
                    clock: None,
                }),
                ..Default::default()
            })
            .await
            .expect("analysis starts")
            .into_inner();
        let mut last = None;
        while let Ok(Some(update)) = stream.message().await {
            last = Some(update);
        }
        last
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    server.begin_stop();
    tokio::time::sleep(Duration::from_millis(100)).await;

    let start = Instant::now();
    let refused = tokio::time::timeout(Duration::from_secs(5), async {
        let mut late =
            emergo_proto::v1::emergo_bot_client::EmergoBotClient::connect(server.url.clone())
                .await?;
        late.server_info(pb::ServerInfoRequest {})
            .await
            .map_err(Box::<dyn std::error::Error + Send + Sync>::from)
    })
    .await
    .expect("a new call during the drain does not hang");
    assert!(refused.is_err(), "a new call during the drain is refused");
    assert!(start.elapsed() < Duration::from_secs(2));

    let last = analysis.await.unwrap().expect("the running analysis ends");
    assert!(last.r#final);
    assert_eq!(last.stop_reason, pb::StopReason::Shutdown as i32);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_reflection_versions_list_the_service() {
    use tokio_stream::StreamExt;
    let server = TestServer::start(config()).await;
    let channel = tonic::transport::Channel::from_shared(server.url.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();

    use tonic_reflection::pb::v1alpha;
    let mut alpha = v1alpha::server_reflection_client::ServerReflectionClient::new(channel.clone());
    let request = v1alpha::ServerReflectionRequest {
        host: String::new(),
        message_request: Some(
            v1alpha::server_reflection_request::MessageRequest::ListServices(String::new()),
        ),
    };
    let mut answers = alpha
        .server_reflection_info(tokio_stream::iter([request]))
        .await
        .expect("v1alpha reflection is served")
        .into_inner();
    let answer = answers.next().await.unwrap().unwrap();
    let Some(v1alpha::server_reflection_response::MessageResponse::ListServicesResponse(list)) =
        answer.message_response
    else {
        panic!("not a service list: {answer:?}");
    };
    assert!(
        list.service
            .iter()
            .any(|s| s.name == "emergo.bot.v1.EmergoBot"),
        "{list:?}"
    );

    use tonic_reflection::pb::v1;
    let mut v1 = v1::server_reflection_client::ServerReflectionClient::new(channel);
    let request = v1::ServerReflectionRequest {
        host: String::new(),
        message_request: Some(v1::server_reflection_request::MessageRequest::ListServices(
            String::new(),
        )),
    };
    let mut answers = v1
        .server_reflection_info(tokio_stream::iter([request]))
        .await
        .expect("v1 reflection is served")
        .into_inner();
    assert!(answers.next().await.unwrap().is_ok());
    server.stop().await;
}

/// CPU seconds (user + system) the process has used so far.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name (which is in parentheses and may hold spaces).
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    ticks / 100.0
}

/// The probe's worst case: the open-file limit at 128 and 160 silent connections. The old
/// server stopped answering anyone and spun a core retrying `accept`. Now the connection cap
/// follows the file limit, idle connections make room for new ones, and nothing spins.
#[test]
fn silent_connections_past_the_file_limit() {
    if !cfg!(target_os = "linux") {
        return;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -n 128 && exec {} --listen 127.0.0.1:{port} --no-http --threads 1 --header-timeout-ms 60000 --idle-timeout-ms 60000",
            binary("bot-server").display()
        ))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(start.elapsed() < Duration::from_secs(20), "no server");
        std::thread::sleep(Duration::from_millis(20));
    }
    let flood: Vec<TcpStream> = (0..160)
        .filter_map(|_| TcpStream::connect(("127.0.0.1", port)).ok())
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let cpu_before = cpu_seconds(child.id());
    std::thread::sleep(Duration::from_secs(2));
    let cpu = cpu_seconds(child.id()) - cpu_before;

    let runtime = tokio::runtime::Runtime::new().unwrap();
    let answered = runtime.block_on(async {
        tokio::time::timeout(Duration::from_secs(10), async {
            let mut client = emergo_proto::v1::emergo_bot_client::EmergoBotClient::connect(
                format!("http://127.0.0.1:{port}"),
            )
            .await?;
            client
                .server_info(pb::ServerInfoRequest {})
                .await
                .map_err(Box::<dyn std::error::Error + Send + Sync>::from)
        })
        .await
    });
    drop(flood);
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        matches!(answered, Ok(Ok(_))),
        "a client was locked out: {answered:?}"
    );
    assert!(cpu < 1.0, "the server burnt {cpu:.2} s of CPU in 2 s");
}
