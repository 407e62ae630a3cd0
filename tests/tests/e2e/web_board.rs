//! The web board in a real browser: headless Chromium (Debian's `/usr/bin/chromium`) driven by
//! `playwright-core` (`tests/web/board.test.mjs`) against an in-process server's HTTP gateway.
//!
//! Needs `node`, `npm` and `chromium` (`apt-get install -y chromium nodejs npm`); the test runs
//! `npm ci` in `tests/web` itself when `node_modules` is missing. Without them it prints
//! `SKIPPED` and passes, unless `EMERGO_REQUIRE_BROWSER=1`, which makes it fail instead (CI sets
//! it after installing the browser). Screenshots go to `target/web-artifacts/`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use emergo_bot_server::config::ServerConfig;
use emergo_tests::{TestServer, workspace_root};

const CHROMIUM: &str = "/usr/bin/chromium";
const INSTALL: &str = "apt-get update && apt-get install -y chromium nodejs npm";
/// The whole browser session (eight scenarios, a few engine moves, three analyses, a few game
/// reviews) takes well under a minute; this only guards against a hung browser.
const NODE_TIMEOUT: Duration = Duration::from_secs(300);

fn runs(program: &str, arg: &str) -> bool {
    Command::new(program)
        .arg(arg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// What is missing to run the browser test, if anything.
fn missing_tools(web: &Path) -> Vec<&'static str> {
    let mut missing = Vec::new();
    if !runs("node", "--version") {
        missing.push("node");
    }
    if !web.join("node_modules/playwright-core").exists() && !runs("npm", "--version") {
        missing.push("npm");
    }
    if !Path::new(CHROMIUM).exists() {
        missing.push(CHROMIUM);
    }
    missing
}

/// Runs `cmd` to completion (killing it after `limit`), echoing its output.
fn run_with_limit(mut cmd: Command, limit: Duration) -> (bool, String) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut s).ok();
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut s).ok();
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let text = format!(
        "{}{}",
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default()
    );
    match status {
        Some(s) => (s.success(), text),
        None => (false, format!("{text}\n(killed after {limit:?})")),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_board_in_headless_chromium() {
    let root = workspace_root();
    let web = root.join("tests/web");
    let missing = missing_tools(&web);
    if !missing.is_empty() {
        let msg = format!(
            "the web board browser test needs {} (install: `{INSTALL}`; the test runs `npm ci` in tests/web itself)",
            missing.join(", ")
        );
        if std::env::var("EMERGO_REQUIRE_BROWSER").is_ok_and(|v| v == "1") {
            panic!("EMERGO_REQUIRE_BROWSER=1 but {msg}");
        }
        // Straight to the process's stderr, past the test harness's output capture.
        let _ = writeln!(
            std::io::stderr(),
            "\n==============================================================\n\
             SKIPPED: web_board: {msg}.\n\
             Set EMERGO_REQUIRE_BROWSER=1 to make this a failure.\n\
             =============================================================="
        );
        return;
    }

    if !web.join("node_modules/playwright-core").exists() {
        let dir = web.clone();
        let (ok, text) = tokio::task::spawn_blocking(move || {
            let mut cmd = Command::new("npm");
            cmd.args(["ci", "--no-audit", "--no-fund"]).current_dir(dir);
            run_with_limit(cmd, Duration::from_secs(600))
        })
        .await
        .expect("npm ci task");
        eprintln!("{text}");
        assert!(ok, "`npm ci` in tests/web failed");
    }

    let artifacts: PathBuf = root.join("target/web-artifacts");
    std::fs::create_dir_all(&artifacts).expect("create target/web-artifacts");
    let screenshot = artifacts.join("board.png");
    let review = artifacts.join("review.png");
    let _ = std::fs::remove_file(&screenshot);
    let _ = std::fs::remove_file(&review);

    let server = TestServer::start(ServerConfig {
        threads: 2,
        ..Default::default()
    })
    .await;
    // A second server whose cap (`--max-time-ms 300`) clips the engine time the board asks for:
    // the board must say so.
    let capped = TestServer::start(ServerConfig {
        threads: 1,
        max_time_ms: 300,
        ..Default::default()
    })
    .await;
    let url = server.http_url.clone();
    let capped_url = capped.http_url.clone();
    let script = web.join("board.test.mjs");
    let dir = artifacts.clone();
    // The browser talks to the server on this runtime: run node on a blocking thread.
    let (ok, text) = tokio::task::spawn_blocking(move || {
        let mut cmd = Command::new("node");
        cmd.arg(script)
            .arg(&url)
            .arg(&dir)
            .arg(&capped_url)
            .current_dir(workspace_root());
        run_with_limit(cmd, NODE_TIMEOUT)
    })
    .await
    .expect("node task");
    eprintln!("{text}");
    server.stop().await;
    capped.stop().await;
    assert!(ok, "the browser test failed: see its output above");
    for shot in [&screenshot, &review] {
        let size = std::fs::metadata(shot).map(|m| m.len()).unwrap_or(0);
        assert!(
            size > 10_000,
            "{} missing or empty ({size} bytes)",
            shot.display()
        );
    }
}
