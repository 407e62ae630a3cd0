//! A fleet on loopback: 3 bot-server replicas behind nginx (`deploy/fleet-local.sh`), driven by
//! the real `emergo loadtest` and `emergo arena`: even spreading, clean refusal when saturated,
//! game affinity (tree reuse through the balancer), and failover when a replica dies mid-match.
//!
//! Needs nginx. `.ci/run` installs it and sets `EMERGO_REQUIRE_NGINX=1`; elsewhere, without
//! nginx, the test says SKIPPED loudly and returns.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::Duration;

use emergo_proto::v1 as pb;
use emergo_tests::{binary, workspace_root};
use serde_json::Value;

const REPLICAS: u16 = 3;

fn nginx_available() -> bool {
    ["/usr/sbin/nginx", "/usr/bin/nginx"]
        .iter()
        .any(|p| std::path::Path::new(p).exists())
        || Command::new("nginx").arg("-v").output().is_ok()
}

/// A base port P such that P..=P+REPLICAS and P+100..=P+100+REPLICAS are free.
fn free_base_port() -> u16 {
    let seed = std::process::id() as u16;
    (0..200u16)
        .map(|i| 20_000 + (seed.wrapping_mul(7).wrapping_add(i * 211)) % 30_000)
        .find(|&p| {
            (0..=REPLICAS).all(|i| {
                TcpListener::bind(("127.0.0.1", p + i)).is_ok()
                    && TcpListener::bind(("127.0.0.1", p + 100 + i)).is_ok()
            })
        })
        .expect("free ports")
}

struct Fleet {
    dir: PathBuf,
    port: u16,
}

impl Fleet {
    fn up(extra: &[&str]) -> Fleet {
        let port = free_base_port();
        let dir = workspace_root().join(format!("target/fleet-test-{port}"));
        let out = Command::new(workspace_root().join("deploy/fleet-local.sh"))
            .args([
                "up",
                "--replicas",
                &REPLICAS.to_string(),
                "--port",
                &port.to_string(),
            ])
            .arg("--dir")
            .arg(&dir)
            .arg("--bin")
            .arg(binary("bot-server"))
            .arg("--")
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "fleet up failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Fleet { dir, port }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn replica_url(&self, i: u16) -> String {
        format!("http://127.0.0.1:{}", self.port + i)
    }

    fn kill_replica(&self, i: u16) {
        let pid = std::fs::read_to_string(self.dir.join(format!("replica-{i}.pid"))).unwrap();
        let ok = Command::new("kill")
            .args(["-KILL", pid.trim()])
            .status()
            .unwrap();
        assert!(ok.success());
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        let _ = Command::new(workspace_root().join("deploy/fleet-local.sh"))
            .args(["down", "--dir"])
            .arg(&self.dir)
            .output();
    }
}

fn emergo(args: &[&str]) -> Output {
    Command::new(binary("emergo")).args(args).output().unwrap()
}

fn json_out(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "emergo failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let last = text
        .lines()
        .rfind(|l| l.trim_start().starts_with('{'))
        .expect("a JSON line");
    serde_json::from_str(last).unwrap()
}

fn searches_completed(url: String) -> u64 {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut c = pb::emergo_bot_client::EmergoBotClient::connect(url)
            .await
            .unwrap();
        let info = c
            .server_info(pb::ServerInfoRequest {})
            .await
            .unwrap()
            .into_inner();
        info.load.unwrap().searches_completed
    })
}

fn error_total(report: &Value) -> u64 {
    report["errors"]
        .as_object()
        .map_or(0, |m| m.values().filter_map(Value::as_u64).sum())
}

#[test]
fn fleet_behind_nginx() {
    if !nginx_available() {
        assert!(
            std::env::var_os("EMERGO_REQUIRE_NGINX").is_none(),
            "nginx is required (Debian: apt-get install nginx)"
        );
        eprintln!(
            "SKIPPED fleet_behind_nginx: nginx is not installed (Debian: apt-get install nginx; .ci/run does)"
        );
        return;
    }
    // One search thread and a queue of 8 per replica: 27 requests fit in the fleet at once, so
    // the failover phase below (4 concurrent requests) is never refused, while 40 clients are.
    let fleet = Fleet::up(&[
        "--threads",
        "1",
        "--max-queue",
        "8",
        "--max-queue-wait-ms",
        "5000",
    ]);
    let url = fleet.url();

    // Under capacity: no errors, and requests without a game id spread over the replicas.
    let before: Vec<u64> = (1..=REPLICAS)
        .map(|i| searches_completed(fleet.replica_url(i)))
        .collect();
    let report = json_out(&emergo(&[
        "loadtest",
        "--server",
        &url,
        "--clients",
        "3",
        "--requests",
        "45",
        "--rpc",
        "bestmove",
        "--playouts",
        "300",
        "--json",
    ]));
    assert_eq!(error_total(&report), 0, "{report}");
    assert_eq!(report["ok"], 45);
    let per_replica: Vec<u64> = (1..=REPLICAS)
        .map(|i| searches_completed(fleet.replica_url(i)) - before[i as usize - 1])
        .collect();
    eprintln!("requests per replica: {per_replica:?}");
    assert_eq!(per_replica.iter().sum::<u64>(), 45);
    assert!(
        per_replica.iter().all(|&n| n >= 5),
        "uneven spread {per_replica:?}"
    );

    // Saturated: clean refusals, nothing else.
    let report = json_out(&emergo(&[
        "loadtest",
        "--server",
        &url,
        "--clients",
        "40",
        "--requests",
        "80",
        "--rpc",
        "bestmove",
        "--time",
        "300ms",
        "--json",
    ]));
    let errors = report["errors"].as_object().unwrap();
    assert!(
        errors
            .get("RESOURCE_EXHAUSTED")
            .and_then(Value::as_u64)
            .unwrap_or(0)
            > 0,
        "{report}"
    );
    assert!(errors.keys().all(|k| k == "RESOURCE_EXHAUSTED"), "{report}");
    assert!(report["ok"].as_u64().unwrap() > 0);

    // Affinity: a match through nginx reuses the server's tree on most of its moves.
    let out = emergo(&[
        "arena",
        "--engine",
        &format!("server:{url},playouts=2000"),
        "--engine",
        "random",
        "--games",
        "2",
        "--json",
    ]);
    let summary = json_out(&out);
    let engines = summary["engines"]
        .as_array()
        .expect("engines in the summary");
    let server = engines
        .iter()
        .find(|e| e["name"].as_str().is_some_and(|n| n.starts_with("server")))
        .unwrap();
    let (moves, reused) = (
        server["moves"].as_u64().unwrap(),
        server["moves_with_reuse"].as_u64().unwrap(),
    );
    eprintln!("affinity: {reused} of {moves} server moves reused the tree");
    assert!(
        reused * 2 > moves,
        "tree reuse on only {reused} of {moves} moves"
    );

    // Failover: kill a replica in the middle of a match and a load test.
    let arena_url = url.clone();
    let records = fleet.dir.join("failover-arena");
    let records_arg = records.to_string_lossy().into_owned();
    let arena = std::thread::spawn(move || {
        emergo(&[
            "arena",
            "--engine",
            &format!("server:{arena_url},playouts=300"),
            "--engine",
            "greedy",
            "--games",
            "4",
            "--concurrency",
            "2",
            "--out",
            &records_arg,
            "--json",
        ])
    });
    let load_url = url.clone();
    let load = std::thread::spawn(move || {
        emergo(&[
            "loadtest",
            "--server",
            &load_url,
            "--clients",
            "2",
            "--requests",
            "60",
            "--rpc",
            "bestmove",
            "--playouts",
            "300",
            "--json",
        ])
    });
    std::thread::sleep(Duration::from_millis(1500));
    fleet.kill_replica(2);
    let out = arena.join().unwrap();
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    let summary = json_out(&out);
    assert_eq!(summary["pairings"][0]["games"], 4, "{summary}");
    let terminations = summary["terminations"].as_object().unwrap();
    for lost in ["engine-failure", "timeout", "illegal-move"] {
        let games = std::fs::read_to_string(records.join("summary.jsonl")).unwrap_or_default();
        assert!(
            !terminations.contains_key(lost),
            "a game was forfeited ({lost}): {summary}\n{games}"
        );
    }
    for e in summary["engines"].as_array().unwrap() {
        assert_eq!(e["engine_failures"], 0, "{e}");
    }
    let retries: u64 = summary["engines"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["retries"].as_u64())
        .sum();
    eprintln!("failover: the match finished 4/4 games, {retries} move(s) retried");
    let report = json_out(&load.join().unwrap());
    // At most the requests in flight on the killed replica may fail (2 clients: at most 2).
    assert!(error_total(&report) <= 2, "{report}");
}
