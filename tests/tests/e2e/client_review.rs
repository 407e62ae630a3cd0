//! `emergo review` and `emergo loadtest --rpc review` against a real server (in this process,
//! on a loopback port), run as a user would run them; and `emergo review --local`.

use emergo_bot_server::config::ServerConfig;
use emergo_tests::cli::{args, emergo, stdout};
use emergo_tests::{TestServer, workspace_root};
use serde_json::Value;

/// `emergo` with `args` and `stdin`, in the current directory.
async fn emergo_in(args: Vec<String>, stdin: Option<String>) -> std::process::Output {
    emergo(args, stdin, None).await
}

async fn server() -> TestServer {
    TestServer::start(ServerConfig {
        threads: 2,
        ..Default::default()
    })
    .await
}

/// The built-in game of `loadtest --rpc review` (100 turns, won by Black).
fn sample_record() -> String {
    std::fs::read_to_string(workspace_root().join("cli/src/client/review-100.pgn"))
        .expect("read the sample record")
}

/// The sample game's first `turns` moves as an unfinished record.
fn short_record(turns: usize) -> String {
    let sample = sample_record();
    let movetext = sample.split("\n\n").nth(1).expect("movetext");
    let moves: Vec<&str> = movetext
        .split_whitespace()
        .filter(|t| !t.ends_with('.') && *t != "0-1")
        .take(turns)
        .collect();
    let mut text = String::from(
        "[Event \"client_review test\"]\n[White \"w-engine\"]\n[Black \"b-engine\"]\n\
         [FEN \"9/9/9/9/9/9/9/9/9 w 0 12,12\"]\n[Result \"*\"]\n[Termination \"unfinished\"]\n\n",
    );
    for (i, m) in moves.iter().enumerate() {
        if i % 2 == 0 {
            text += &format!("{}. ", i / 2 + 1);
        }
        text += m;
        text.push(' ');
    }
    text + "*\n"
}

/// Writes `text` to a temporary file named `name`.
fn record_file(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("write record");
    path.to_string_lossy().into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn review_prints_a_report_with_a_summary() {
    let server = server().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = record_file(&dir, "short.pgn", &short_record(16));
    let out = stdout(
        &emergo_in(
            args(&[
                "review",
                &path,
                "--server",
                &server.url,
                "--playouts",
                "300",
                "--seed",
                "7",
                "--threads",
                "2",
            ]),
            None,
        )
        .await,
    );
    assert!(!out.contains('\x1b'), "no escape codes in a pipe: {out:?}");
    assert!(
        out.starts_with(&format!(
            "Review of {path}: w-engine (White) - b-engine (Black), *"
        )),
        "{out}"
    );
    assert!(out.contains("turn  side   played"), "{out}");
    // One row per turn, in order, White and Black alternating.
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| l.len() > 12 && l.get(..4).is_some_and(|h| h.trim().parse::<u32>().is_ok()))
        .collect();
    assert_eq!(rows.len(), 16, "{out}");
    for (i, row) in rows.iter().enumerate() {
        assert!(row.starts_with(&format!("{:>4}  ", i + 1)), "{row}");
        assert!(
            row.contains(if i % 2 == 0 { "White" } else { "Black" }),
            "{row}"
        );
    }
    assert!(rows[0].contains(" e7"), "the first move: {}", rows[0]);
    assert!(
        out.contains("White's expected score after each turn:"),
        "{out}"
    );
    assert!(out.contains("100% |") && out.contains(" 50% |"), "{out}");
    assert!(out.contains("summary") && out.contains("accuracy"), "{out}");
    assert!(out.contains("blunders (??)"), "{out}");
    assert!(
        out.contains("16 turns analysed") && out.contains("review complete"),
        "{out}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn review_json_is_jsonl_ending_with_the_summary() {
    let server = server().await;
    let out = stdout(
        &emergo_in(
            args(&[
                "review",
                "-",
                "--server",
                &server.url,
                "--playouts",
                "200",
                "--turns",
                "3,5-7",
                "--json",
            ]),
            Some(short_record(12)),
        )
        .await,
    );
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(lines.len(), 5, "four turns and the summary: {out}");
    let mut turns: Vec<u64> = lines[..4]
        .iter()
        .map(|l| l["turn"]["turn"].as_u64().unwrap_or_else(|| panic!("{l}")))
        .collect();
    turns.sort_unstable();
    assert_eq!(turns, [3, 5, 6, 7]);
    for l in &lines[..4] {
        let t = &l["turn"];
        assert!(
            t["class"].as_str().unwrap().starts_with("MOVE_CLASS_"),
            "{t}"
        );
        assert!(!t["playedMove"].as_str().unwrap().is_empty(), "{t}");
        assert!(t["fen"].as_str().unwrap().contains(' '), "{t}");
    }
    let summary = &lines[4]["summary"];
    assert_eq!(summary["turnsAnalysed"], 4, "{summary}");
    assert_eq!(summary["white"]["player"], "w", "{summary}");
    assert!(summary["stopReason"].is_string(), "{summary}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn review_of_a_bad_record_names_the_turn() {
    let server = server().await;
    let dir = tempfile::tempdir().expect("tempdir");
    // Turn 6 enters on i9, where White entered on turn 5.
    let bad = short_record(10).replace("3. i9 g7", "3. i9 i9");
    let path = record_file(&dir, "bad.pgn", &bad);
    let o = emergo_in(
        args(&["review", &path, "--server", &server.url, "--playouts", "50"]),
        None,
    )
    .await;
    assert!(!o.status.success(), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&path) && err.contains("INVALID_ARGUMENT") && err.contains("turn 6"),
        "{err}"
    );
    // A file of two games needs --game, then reviews the one chosen.
    let two = format!("{}\n{}", short_record(4), short_record(6));
    let path = record_file(&dir, "two.pgn", &two);
    let o = emergo_in(
        args(&["review", &path, "--server", &server.url, "--playouts", "50"]),
        None,
    )
    .await;
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("holds 2 game records") && err.contains("--game"),
        "{err}"
    );
    let out = stdout(
        &emergo_in(
            args(&[
                "review",
                &path,
                "--game",
                "2",
                "--server",
                &server.url,
                "--playouts",
                "50",
                "--json",
            ]),
            None,
        )
        .await,
    );
    let last: Value = serde_json::from_str(out.lines().last().expect("a line")).expect("JSON");
    assert_eq!(last["summary"]["turnsAnalysed"], 6, "{last}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn review_local_needs_no_server() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = record_file(&dir, "short.pgn", &short_record(8));
    let out = stdout(
        &emergo_in(
            args(&[
                "review",
                &path,
                "--local",
                "--playouts",
                "200",
                "--server",
                "http://127.0.0.1:1",
            ]),
            None,
        )
        .await,
    );
    assert!(
        out.contains("8 turns analysed") && out.contains("accuracy"),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loadtest_reviews_games_with_interactive_requests_alongside() {
    let server = server().await;
    let o = emergo_in(
        args(&[
            "loadtest",
            "--server",
            &server.url,
            "--rpc",
            "review",
            "--clients",
            "1",
            "--requests",
            "2",
            "--playouts",
            "30",
            "--interactive-clients",
            "1",
            "--interactive-time",
            "20ms",
            "--json",
        ]),
        None,
    )
    .await;
    let report: Value = serde_json::from_str(stdout(&o).trim()).expect("JSON report");
    assert_eq!(report["rpc"], "review", "{report}");
    assert_eq!(report["ok"], 2, "{report}");
    assert_eq!(report["failed"], 0, "{report}");
    let review = &report["review"];
    assert_eq!(
        review["turns"], 200,
        "the built-in game has 100 turns: {report}"
    );
    assert!(
        review["games_per_minute"].as_f64().unwrap() > 0.0,
        "{report}"
    );
    assert!(
        report["latency_ms"]["p50"].as_f64().unwrap() > 0.0,
        "{report}"
    );
    assert!(report["playouts"].as_u64().unwrap() > 0, "{report}");
    let interactive = &report["interactive"];
    assert!(interactive["ok"].as_u64().unwrap() >= 1, "{report}");
    assert_eq!(interactive["failed"], 0, "{report}");
    assert!(
        interactive["latency_ms"]["p99"].as_f64().unwrap() > 0.0,
        "{report}"
    );
    // The text report names the rate in games.
    let o = emergo_in(
        args(&[
            "loadtest",
            "--server",
            &server.url,
            "--rpc",
            "review",
            "--clients",
            "1",
            "--requests",
            "1",
            "--playouts",
            "10",
        ]),
        None,
    )
    .await;
    let text = stdout(&o);
    assert!(
        text.contains("games reviewed/min") && text.contains("latency ms per game"),
        "{text}"
    );
    server.stop().await;
}
