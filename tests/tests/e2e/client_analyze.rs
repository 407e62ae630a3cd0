//! `emergo analyze` and `emergo bestmove` against a real server (in this process, on a loopback
//! port), run as a user would run them.

use emergo_bot_server::config::ServerConfig;
use emergo_rules::{Game, Move};
use std::process::{Command, Output};

use emergo_tests::cli::{args, emergo, stdout};
use emergo_tests::{INITIAL, TestServer, binary};
use serde_json::Value;

/// `emergo` with `args`, no input.
async fn emergo_out(args: Vec<String>) -> Output {
    emergo(args, None, None).await
}

fn is_legal(fen: &str, moves: &[&str], mv: &str) -> bool {
    let game = Game::from_fen_and_moves(fen, moves).expect("game");
    mv.parse::<Move>()
        .is_ok_and(|m| game.legal_moves().contains(m))
}

async fn server() -> TestServer {
    TestServer::start(ServerConfig {
        threads: 2,
        ..Default::default()
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn analyze_json_streams_updates_then_one_final() {
    let server = server().await;
    let o = emergo_out(args(&[
        "analyze",
        "--server",
        &server.url,
        "--time",
        "600ms",
        "--interval",
        "100ms",
        "--exhaustive",
        "--multipv",
        "3",
        "--json",
    ]))
    .await;
    let out = stdout(&o);
    let updates: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let finals = updates.iter().filter(|u| u["final"] == true).count();
    assert_eq!(finals, 1, "{out}");
    assert!(updates.len() >= 3, "expected >= 2 live updates: {out}");
    let last = updates.last().unwrap();
    assert_eq!(last["final"], true);
    assert_eq!(last["stop_reason"], "STOP_REASON_TIME", "{last}");
    assert_eq!(last["fen"], INITIAL);
    let best = last["best_move"].as_str().unwrap();
    assert!(is_legal(INITIAL, &[], best), "{best}");
    let moves = last["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 40, "every root move is listed");
    assert_eq!(moves[0]["move"], best);
    assert!(moves[0]["pv"].as_array().unwrap().len() > 1, "{last}");
    assert!(last["stats"]["playouts"].as_u64().unwrap() > 0);
    let v = last["root_value"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&v));
    for u in &updates[..updates.len() - 1] {
        assert_eq!(u["stop_reason"], "STOP_REASON_UNSPECIFIED");
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn analyze_plain_text_when_piped() {
    let server = server().await;
    let o = emergo_out(args(&[
        "analyze",
        "--server",
        &server.url,
        "--moves",
        "a1",
        "i9",
        "--time",
        "400ms",
        "--interval",
        "100ms",
        "--exhaustive",
    ]))
    .await;
    let out = stdout(&o);
    assert!(!out.contains('\x1b'), "no escape codes in a pipe: {out:?}");
    assert!(out.contains("White to move"), "the board: {out}");
    assert!(out.contains("=== update 1 ==="), "{out}");
    assert!(out.contains("=== final update"), "{out}");
    assert!(out.contains("stopped: time budget used"), "{out}");
    let best = out
        .lines()
        .find_map(|l| l.strip_prefix("best move: "))
        .unwrap_or_else(|| panic!("no best move: {out}"));
    assert!(is_legal(INITIAL, &["a1", "i9"], best), "{best}");
    assert!(
        out.contains(&format!("| {best} ")),
        "the table lists it: {out}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn analyze_reports_the_servers_error() {
    let server = server().await;
    let o = emergo_out(args(&[
        "analyze",
        "--server",
        &server.url,
        "--fen",
        "9/9/9/9/9/9/9/9/1A@7 w 0 12,12",
        "--playouts",
        "100",
    ]))
    .await;
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("INVALID_ARGUMENT") && err.contains("position.fen"),
        "{err}"
    );
    // No budget: refused before connecting, saying what is missing.
    let o = emergo_out(args(&["analyze", "--server", &server.url])).await;
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--time") && err.contains("--playouts"),
        "{err}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bestmove_prints_one_legal_move() {
    let server = server().await;
    let out = stdout(
        &emergo_out(args(&[
            "bestmove",
            "--server",
            &server.url,
            "--playouts",
            "2000",
        ]))
        .await,
    );
    assert_eq!(out.lines().count(), 1, "{out:?}");
    assert!(is_legal(INITIAL, &[], out.trim()), "{out:?}");
    let out = stdout(
        &emergo_out(args(&[
            "bestmove",
            "--server",
            &server.url,
            "--moves",
            "a1",
            "i9",
            "--time",
            "200ms",
            "--playouts",
            "3000",
        ]))
        .await,
    );
    assert!(is_legal(INITIAL, &["a1", "i9"], out.trim()), "{out:?}");
    // A single capture chain is the only legal move: answered at once.
    let fen = "9/9/2a@1a@4/9/2bb1a@4/3C@5/9/9/9 w 31 0,0";
    let out = stdout(
        &emergo_out(args(&[
            "bestmove",
            "--server",
            &server.url,
            "--fen",
            fen,
            "--time",
            "5s",
        ]))
        .await,
    );
    assert_eq!(out, "d4xb6xd8xf6xd4xb6\n");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bestmove_local_and_game_over() {
    let out = stdout(&emergo_out(args(&["bestmove", "--local", "--playouts", "2000"])).await);
    assert_eq!(out.lines().count(), 1, "{out:?}");
    assert!(is_legal(INITIAL, &[], out.trim()), "{out:?}");
    // Black has no unit and no man in hand: the game is over, no move, status 1.
    let fen = "9/9/9/9/4LL4/9/9/9/9 b 30 0,0";
    let o = emergo_out(args(&[
        "bestmove",
        "--local",
        "--fen",
        fen,
        "--playouts",
        "100",
    ]))
    .await;
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert_eq!(String::from_utf8_lossy(&o.stdout), "\n");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("game is over") && err.contains("1-0"), "{err}");
}

/// The first Ctrl-C (SIGINT) stops the analysis with its answer: the final
/// update is printed (stop reason STOPPED) and `emergo` exits normally.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn analyze_ctrl_c_stops_with_the_answer() {
    use std::io::{BufRead, BufReader};
    let server = server().await;
    let url = server.url.clone();
    let (status, lines) = tokio::task::spawn_blocking(move || {
        let mut child = Command::new(binary("emergo"))
            .args(args(&[
                "analyze",
                "--server",
                &url,
                "--time",
                "60s",
                "--interval",
                "50ms",
                "--exhaustive",
                "--json",
            ]))
            .env_remove("EMERGO_SERVER")
            .env_remove("EMERGO_AUTH_TOKEN")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("run emergo");
        let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut lines = vec![out.next().unwrap().unwrap()];
        let kill = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(kill.success());
        lines.extend(out.map(Result::unwrap));
        (child.wait().unwrap(), lines)
    })
    .await
    .unwrap();
    assert!(status.success(), "{status:?}: {lines:?}");
    let last: Value = serde_json::from_str(lines.last().unwrap()).unwrap();
    assert_eq!(last["final"], true, "{lines:?}");
    assert_eq!(last["stop_reason"], "STOP_REASON_STOPPED");
    assert!(
        is_legal(INITIAL, &[], last["best_move"].as_str().unwrap()),
        "{last}"
    );
}

/// `https://` against a plaintext server says so and how to fix it, instead of the TLS
/// library's "received corrupt message of type InvalidContentType".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_against_a_plaintext_server_says_what_to_use() {
    let server = server().await;
    let https = server.url.replacen("http://", "https://", 1);
    let out = emergo_out(args(&["bestmove", "--server", &https, "--playouts", "100"])).await;
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("does not speak TLS") && said.contains("use http://"),
        "{said}"
    );
    assert!(!said.contains("InvalidContentType"), "{said}");
}

/// `emergo bestmove` needs no budget (a second by default), takes a clock as a tournament host
/// sends it and a level, and prints the whole answer with --json.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bestmove_defaults_clock_level_and_json() {
    let server = server().await;
    let run = |extra: &[&str]| {
        let mut a = vec!["bestmove", "--server", server.url.as_str(), "--json"];
        a.extend_from_slice(extra);
        emergo_out(args(&a))
    };
    let answer = |out: Output| -> Value {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_str(stdout(&out).trim()).unwrap()
    };
    let v = answer(run(&[]).await);
    let stats = &v["analysis"]["stats"];
    assert_eq!(stats["budgetMs"], "1000", "{v}");
    assert_eq!(stats["budgetReason"], "BUDGET_REASON_FIXED", "{v}");
    assert!(
        is_legal(INITIAL, &[], v["bestMove"].as_str().unwrap()),
        "{v}"
    );

    let v = answer(
        run(&[
            "--clock",
            "30s",
            "--increment",
            "200ms",
            "--moves-to-go",
            "20",
        ])
        .await,
    );
    assert_ne!(
        v["analysis"]["stats"]["budgetReason"], "BUDGET_REASON_FIXED",
        "{v}"
    );

    let v = answer(run(&["--level", "2", "--seed", "3"]).await);
    let playouts = v["analysis"]["stats"]["playouts"]
        .as_str()
        .unwrap()
        .parse::<u64>()
        .unwrap();
    assert!(playouts <= 32, "{v}");
}
