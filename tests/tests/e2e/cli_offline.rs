//! The offline `emergo` tools, run as a user would run them.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Output, Stdio};

use emergo_tests::{binary, workspace_root};
use serde_json::Value;

fn emergo(args: &[&str]) -> Output {
    Command::new(binary("emergo"))
        .args(args)
        .output()
        .expect("run emergo")
}

fn stdout(o: &Output) -> String {
    assert!(
        o.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).unwrap()
}

#[test]
fn legal_prints_sorted_moves() {
    let out = stdout(&emergo(&["legal", "--fen", "9/9/9/9/9/9/9/9/9 w 0 12,12"]));
    let moves: Vec<&str> = out.lines().collect();
    assert_eq!(moves.len(), 40);
    let mut sorted = moves.clone();
    sorted.sort();
    assert_eq!(moves, sorted);
    assert!(!moves.contains(&"e5"));
    let out = stdout(&emergo(&[
        "legal",
        "--fen",
        "9/9/2a@1a@4/9/2bb1a@4/3C@5/9/9/9 w 31 0,0",
    ]));
    assert_eq!(out, "d4xb6xd8xf6xd4xb6\n");
    let out = stdout(&emergo(&["legal", "--moves", "a1", "i9"]));
    assert_eq!(out.lines().count(), 38);
    // Squares typed in upper case are read.
    let upper = stdout(&emergo(&["legal", "--moves", "A1", "I9"]));
    assert_eq!(upper, out);
}

#[test]
fn legal_rejects_bad_input_with_a_message() {
    let o = emergo(&["legal", "--fen", "9/9/9/9/9/9/9/9/1A@7 w 0 12,12"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("b1") && err.contains("not a playable square"),
        "{err}"
    );
    let o = emergo(&["legal", "--moves", "e5"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("may not be on e5"));
}

/// `legal --jsonl` answers the reference vectors exactly, and survives an invalid line.
#[test]
fn legal_jsonl_matches_vectors() {
    let path = workspace_root().join("rules/tests/data/positions.jsonl.gz");
    let reader = BufReader::new(flate2::read::GzDecoder::new(
        std::fs::File::open(path).unwrap(),
    ));
    let rows: Vec<Value> = reader
        .lines()
        .step_by(7)
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    let mut child = Command::new(binary("emergo"))
        .args(["legal", "--jsonl"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = String::new();
    for (i, row) in rows.iter().enumerate() {
        input.push_str(row["fen"].as_str().unwrap());
        input.push('\n');
        if i == 3 {
            input.push_str("9/9/9/9/9/9/9/9/9 w 0 12,99\n");
        }
    }
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), rows.len() + 1);
    let bad = &lines[4];
    assert_eq!(bad["fen"], "9/9/9/9/9/9/9/9/9 w 0 12,99");
    assert!(bad["error"].as_str().unwrap().contains("men in hand"));
    let good: Vec<&Value> = lines.iter().filter(|l| l.get("error").is_none()).collect();
    for (got, want) in good.iter().zip(&rows) {
        for key in ["fen", "legal", "after", "result", "reason"] {
            assert_eq!(got[key], want[key], "{key} of {}", want["fen"]);
        }
    }
}

#[test]
fn perft_and_divide() {
    let out = stdout(&emergo(&["perft", "--depth", "3"]));
    assert!(out.contains("perft(3) = 55172"), "{out}");
    let out = stdout(&emergo(&["perft", "--depth", "2", "--divide"]));
    let sum: u64 = out
        .lines()
        .filter_map(|l| l.split_once(": "))
        .map(|(_, n)| n.parse::<u64>().unwrap())
        .sum();
    assert_eq!(sum, 1504);
    assert!(out.contains("a1: 39\n"), "{out}");
}

#[test]
fn bench_json_reports_figures() {
    let out = stdout(&emergo(&[
        "bench",
        "--seconds",
        "0.3",
        "--threads",
        "2",
        "--json",
    ]));
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["threads"], 2);
    assert!(v["playouts_per_second"].as_f64().unwrap() > 0.0);
    let turns = v["mean_turns"].as_f64().unwrap();
    assert!(turns > 20.0 && turns < 400.0, "{turns}");
    let o = emergo(&["bench", "--seconds", "-1"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn show_draws_the_board() {
    let out = stdout(&emergo(&[
        "show",
        "--fen",
        "9/9/9/1CE7/2B@6/9/9/9/9 b 31 0,0",
    ]));
    assert!(out.contains("W3b5"), "{out}");
    assert!(out.contains("W2"), "{out}");
    assert!(out.contains("Black to move"), "{out}");
    assert!(out.contains("Game over: 1-0 (no-units)"), "{out}");
    // "1 turn", not "1 turns".
    let out = stdout(&emergo(&["show", "--moves", "a1"]));
    assert!(out.contains("1 turn played"), "{out}");
}

#[test]
fn bench_search_json_reports_tree_figures() {
    let out = stdout(&emergo(&[
        "bench",
        "--search",
        "--seconds",
        "0.3",
        "--threads",
        "2",
        "--nodes",
        "50000",
        "--tree-memory",
        "32MiB",
        "--json",
    ]));
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["threads"], 2);
    assert!(v["playouts_per_second"].as_f64().unwrap() > 0.0);
    assert!(v["nodes"].as_u64().unwrap() <= 50_000);
    assert!(v["bytes_per_node"].as_u64().unwrap() >= 16);
    let best = v["best_move"].as_str().unwrap();
    assert!(!best.is_empty() && best != "e5", "{best}");
    // Memory per playout, the memory limit, reclaims, contention and scaling.
    let playouts = v["playouts"].as_u64().unwrap();
    let tree_bytes = v["tree_bytes"].as_u64().unwrap();
    assert!(tree_bytes > 0);
    // Bytes per playout: of the whole search if the tree was never reclaimed, else of the tree
    // just before its first reclaim (sampled; null if that came within the first 50 ms).
    if v["reclaims"].as_u64() == Some(0) {
        let per_playout = v["bytes_per_playout"].as_f64().unwrap();
        assert!(per_playout > 0.0, "{v}");
        assert!(
            (per_playout * playouts as f64 - tree_bytes as f64).abs()
                < 1.0 + tree_bytes as f64 * 1e-9,
            "{v}"
        );
    } else {
        assert!(
            v["bytes_per_playout"].is_null() || v["bytes_per_playout"].as_f64().unwrap() > 0.0,
            "{v}"
        );
    }
    assert_eq!(v["max_tree_bytes"], 32 << 20);
    assert!(v["reclaims"].as_u64().is_some() && v["nodes_reclaimed"].as_u64().is_some());
    let contention = &v["contention"];
    for counter in ["cas_failures", "expansion_waits", "virtual_loss_collisions"] {
        assert!(contention[counter].as_u64().is_some(), "{v}");
        assert!(
            contention["per_1000_playouts"][counter].as_f64().unwrap() >= 0.0,
            "{v}"
        );
    }
    assert!(v["single_thread_playouts_per_second"].as_f64().unwrap() > 0.0);
    let efficiency = v["per_thread_efficiency"].as_f64().unwrap();
    assert!(efficiency > 0.0 && efficiency.is_finite(), "{v}");
    // One thread: no reference pass, no efficiency.
    let out = stdout(&emergo(&[
        "bench",
        "--search",
        "--seconds",
        "0.2",
        "--threads",
        "1",
        "--json",
    ]));
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert!(v["per_thread_efficiency"].is_null(), "{v}");
    assert!(v["bytes_per_playout"].as_f64().unwrap() > 0.0, "{v}");
    // A limit too small to hold a tree is refused.
    let o = emergo(&["bench", "--search", "--tree-memory", "4KiB"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn bench_search_text_reports_memory_contention_and_scaling() {
    let out = stdout(&emergo(&[
        "bench",
        "--search",
        "--seconds",
        "0.2",
        "--threads",
        "2",
        "--tree-memory",
        "16MiB",
    ]));
    assert!(out.contains("bytes per playout"), "{out}");
    assert!(out.contains("of a 16.0 MiB limit"), "{out}");
    assert!(out.contains("reclaims: "), "{out}");
    assert!(out.contains("contention: "), "{out}");
    assert!(out.contains("per-thread efficiency"), "{out}");
}

/// `--rounds N` alternates raw playouts and the search N times and reports every
/// round's search/raw ratio and their median; `--rounds` without `--search`, or out of range,
/// is refused.
#[test]
fn bench_search_rounds_report_every_ratio_and_the_median() {
    let args = [
        "bench",
        "--search",
        "--seconds",
        "0.1",
        "--mcts",
        "config=uniform",
        "--rounds",
        "3",
    ];
    let out = stdout(&emergo(&args));
    assert!(
        out.contains("search/raw over 3 alternating rounds: median "),
        "{out}"
    );
    let mut json = args.to_vec();
    json.push("--json");
    let v: Value = serde_json::from_str(stdout(&emergo(&json)).trim()).unwrap();
    let rounds = v["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 3, "{v}");
    let ratios: Vec<f64> = rounds
        .iter()
        .map(|r| r["search_to_raw"].as_f64().unwrap())
        .collect();
    assert!(ratios.iter().all(|r| *r > 0.0 && r.is_finite()), "{v}");
    let mut sorted = ratios.clone();
    sorted.sort_by(f64::total_cmp);
    assert_eq!(
        v["search_to_raw_median"].as_f64().unwrap(),
        sorted[1],
        "{v}"
    );
    assert_eq!(v["search_to_raw"].as_f64().unwrap(), ratios[2], "{v}");
    for bad in [
        &["bench", "--search", "--rounds", "0"][..],
        &["bench", "--search", "--rounds", "101"],
        &["bench", "--rounds", "3"],
    ] {
        let o = emergo(bad);
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("--rounds"),
            "{bad:?}"
        );
    }
}

/// A server that is not there is named, with what to do, and a bare HOST:PORT is
/// taken as plaintext (no "no scheme" refusal).
#[test]
fn connection_refused_names_the_address() {
    // A port that was just free: nothing listens there once the listener is dropped.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let address = format!("127.0.0.1:{port}");
    let o = emergo(&["bestmove", "--server", &address, "--playouts", "10"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("connection refused")
            && err.contains(&format!("bot-server running on {address}"))
            && err.contains("--local")
            && !err.contains("no scheme"),
        "{err}"
    );
}

/// The bench's range is stated truthfully.
#[test]
fn bench_seconds_range_is_truthful() {
    let o = emergo(&["bench", "--seconds", "0"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("more than 0 and at most 3600"), "{err}");
}

/// An unwritable `--out` is named.
#[test]
fn arena_names_an_unwritable_out() {
    let o = emergo(&[
        "arena",
        "--engine",
        "random",
        "--engine",
        "greedy",
        "--games",
        "1",
        "--out",
        "/proc/nope",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("/proc/nope"), "{err}");
}

/// `play` checks its record path before the game starts.
#[test]
fn play_checks_the_record_path_first() {
    let o = emergo(&["play", "--local", "--record", "/proc/nope/game.pgn"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("/proc/nope/game.pgn"), "{err}");
    assert!(!String::from_utf8_lossy(&o.stdout).contains("You play"));
}

/// `learn-value` plays, labels and fits reproducibly; the network it writes loads in
/// both engines; saved data trains the same network again; bad settings are refused by name.
#[test]
fn learn_value_writes_a_network_the_engines_load() {
    let dir = std::env::temp_dir().join(format!("emergo-learn-value-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (data, net) = (dir.join("data.tsv"), dir.join("value.net"));
    let (data_s, net_s) = (data.to_str().unwrap(), net.to_str().unwrap());
    let small = [
        "--games",
        "24",
        "--play-depth",
        "1",
        "--label-depth",
        "1",
        "--hidden",
        "4",
        "--epochs",
        "2",
    ];
    let mut args = vec!["learn-value"];
    args.extend(small);
    args.extend(["--save-data", data_s, "--out", net_s]);
    let o = emergo(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("held-out cross-entropy"), "{err}");
    let text = std::fs::read_to_string(&net).unwrap();
    let parsed = emergo_engine::value_net::ValueNet::parse(&text).unwrap();
    assert_eq!(parsed.hidden(), 4);
    // The saved positions train the same network (the comment line names the source).
    let body = |t: &str| {
        t.lines()
            .filter(|l| !l.starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let mut again = vec!["learn-value"];
    again.extend(small);
    again.extend(["--data", data_s]);
    assert_eq!(body(&stdout(&emergo(&again))), body(&text));
    // Both engines play with it.
    let mcts = format!("mcts:net={net_s},playouts=60");
    let ab = format!("ab:net={net_s},depth=1");
    let games = dir.join("arena");
    let games_s = games.to_str().unwrap();
    let o = emergo(&[
        "arena", "--engine", &mcts, "--engine", &ab, "--games", "2", "--seed", "3", "--out",
        games_s,
    ]);
    let out = stdout(&o);
    // The default bound (350 centimen) is written into the file and shown.
    assert!(
        out.contains("learned value correction (4 hidden units, within ±350 centimen)"),
        "{out}"
    );
    assert!(out.contains(&format!("value network {net_s}")), "{out}");
    // The positions of those games, labelled, join the saved ones; --bound 0: unbounded.
    let pgn = games.join("games.pgn");
    let mut more = vec!["learn-value"];
    more.extend(small);
    more.extend([
        "--data",
        data_s,
        "--pgn",
        pgn.to_str().unwrap(),
        "--bound",
        "0",
    ]);
    let o = emergo(&more);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("positions from 2 games of"), "{err}");
    let unbounded = emergo_engine::value_net::ValueNet::parse(&stdout(&o)).unwrap();
    assert_eq!(unbounded.bound(), None);
    assert!(stdout(&o).contains("--pgn (1 record files)"));
    // Bootstrapped labels: the saved positions scored again by searches that evaluate with
    // the network just learnt; the header says how.
    let mut boot = vec!["learn-value"];
    boot.extend(small);
    boot.extend(["--data", data_s, "--relabel"]);
    boot.extend(["--label-net", net_s]);
    let o = emergo(&boot);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let header = stdout(&o);
    assert!(header.contains("--relabel --label-depth 1"), "{header}");
    assert!(header.contains(&format!("--label-net {net_s}")), "{header}");
    assert_ne!(body(&header), body(&text));
    // Refusals name what is wrong.
    for (bad, says) in [
        (vec!["learn-value", "--hidden", "0"], "--hidden"),
        (vec!["learn-value", "--label-depth", "11"], "--label-depth"),
        (vec!["learn-value", "--bound", "1001"], "--bound"),
        (
            vec!["learn-value", "--data", data_s, "--pgn", "/no/such.pgn"],
            "/no/such.pgn",
        ),
        (
            vec!["learn-value", "--data", "/no/such.tsv"],
            "/no/such.tsv",
        ),
        (vec!["learn-value", "--relabel"], "--data"),
        (
            vec![
                "learn-value",
                "--data",
                data_s,
                "--relabel",
                "--label-net",
                "/no/such.net",
            ],
            "/no/such.net",
        ),
        // Saved labels are kept without --relabel: a labelling network would label nothing.
        (
            vec!["learn-value", "--data", data_s, "--label-net", net_s],
            "--relabel",
        ),
    ] {
        let o = emergo(&bad);
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "{bad:?}: {err}");
    }
    let o = emergo(&[
        "arena",
        "--engine",
        "mcts:net=/no/such.net",
        "--engine",
        "random",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/no/such.net"));
    std::fs::remove_dir_all(&dir).ok();
}
