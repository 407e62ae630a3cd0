//! `emergo play` driven through a pipe, as a scripted human, against a real server.

use std::path::Path;
use std::process::Output;

use emergo_bot_server::config::ServerConfig;
use emergo_cli::client::record::parse_pgn;
use emergo_tests::TestServer;
use emergo_tests::cli::emergo;

/// Runs `emergo play` with `args`, feeding it `input`, in `dir`.
async fn play(args: Vec<String>, input: &str, dir: &Path) -> Output {
    let args = std::iter::once("play".to_owned()).chain(args).collect();
    emergo(args, Some(input.to_owned()), Some(dir.to_owned())).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripted_game_with_illegal_input_undo_and_resignation() {
    let server = TestServer::start(ServerConfig {
        threads: 2,
        ..Default::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("game.pgn");
    // Corner and edge entries: some may be refused after the engine's replies (occupied, or
    // feeding a capture); a refused one is answered and the next line is tried, which is what
    // a human would see too.
    // `quit` asks to confirm: the first is declined, the second confirmed.
    let script =
        "e5\nc3-d4\nhello\nundo\nmoves\na1\nundo\na1\ni1\na9\ni5\na5\ne1\nhelp\nquit\nn\nquit\ny\n";
    let o = play(
        vec![
            "--server".into(),
            server.url.clone(),
            "--playouts".into(),
            "300".into(),
            "--seed".into(),
            "7".into(),
            "--record".into(),
            record.to_str().unwrap().into(),
        ],
        script,
        dir.path(),
    )
    .await;
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{}\n{out}",
        String::from_utf8_lossy(&o.stderr)
    );
    // The rules core's reasons, each followed by the legal moves.
    assert!(
        out.contains("White's first entry may not be on e5"),
        "{out}"
    );
    assert!(out.contains("men in hand must be entered"), "{out}");
    assert!(
        out.contains("Cannot read \"hello\": \"hello\" is not a square"),
        "{out}"
    );
    assert!(out.contains("Legal moves (40): a1 a3 a5"), "{out}");
    assert!(out.contains("Nothing to undo"), "{out}");
    assert!(out.contains("Took back a1 "), "{out}");
    assert!(out.contains("(engine) plays"), "{out}");
    assert!(out.contains("Resign this game? [y/N]"), "{out}");
    assert!(out.contains("Not resigned; the game goes on."), "{out}");
    assert!(out.contains("You resigned: 0-1"), "{out}");
    assert!(out.contains(&format!("Game record written to {}", record.display())));

    let records = parse_pgn(&std::fs::read_to_string(&record).unwrap()).unwrap();
    assert_eq!(records.len(), 1);
    let r = &records[0];
    assert_eq!(r.tag("Event"), Some("emergo play"));
    assert_eq!(r.tag("White"), Some("human"));
    assert!(r.tag("Black").unwrap().contains("emergo-bot"), "{r:?}");
    assert!(r.tag("Date").is_some_and(|d| d.len() == 10));
    assert_eq!(r.result, "0-1");
    assert_eq!(r.termination, "resignation");
    // The undone a1 is gone; the game restarts with a1, then the engine answers each move.
    assert_eq!(r.moves.first().map(String::as_str), Some("a1"), "{r:?}");
    assert!(r.moves.len() >= 4 && r.moves.len() % 2 == 0, "{r:?}");
    let game = r.replay().expect("the record replays legally");
    assert_eq!(game.moves().len(), r.moves.len());
    server.stop().await;
}

/// As Black, locally: the engine opens; end of input stops the game unfinished and the record
/// goes to the default file name in the current directory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_game_as_black_until_end_of_input() {
    let dir = tempfile::tempdir().unwrap();
    let o = play(
        vec![
            "--local".into(),
            "--as".into(),
            "black".into(),
            "--playouts".into(),
            "200".into(),
        ],
        "undo\n",
        dir.path(),
    )
    .await;
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{}\n{out}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("White (engine) plays"), "{out}");
    assert!(out.contains("Nothing to undo"), "{out}");
    // Black sees the board from its side, rank 1 on top, file i on the left.
    let header = out
        .lines()
        .find(|l| l.trim_start().starts_with("i "))
        .unwrap_or_else(|| panic!("no board seen from Black's side: {out}"));
    assert!(header.trim_end().ends_with('a'), "{header}");
    assert!(out.contains("unfinished"), "{out}");
    let files: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let name = files[0].file_name().unwrap().to_str().unwrap().to_owned();
    assert!(
        name.starts_with("emergo-game-") && name.ends_with(".pgn"),
        "{name}"
    );
    let records = parse_pgn(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    let r = &records[0];
    assert_eq!(r.tag("Black"), Some("human"));
    assert!(r.tag("White").unwrap().contains("local"), "{r:?}");
    assert_eq!(r.result, "*");
    assert_eq!(r.termination, "unfinished");
    assert_eq!(r.moves.len(), 1);
    r.replay().expect("legal");
}

/// A game goes on from `--moves`, or from a record with `--resume` (which also
/// refuses a finished game and names the file).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn games_resume_from_moves_or_a_record() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first.pgn");
    let o = play(
        vec![
            "--local".into(),
            "--playouts".into(),
            "100".into(),
            "--moves".into(),
            "a1".into(),
            "I9".into(),
            "--record".into(),
            first.to_str().unwrap().into(),
        ],
        "c3\n",
        dir.path(),
    )
    .await;
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("Resuming after 2 turns: a1 i9"), "{out}");
    let r = &parse_pgn(&std::fs::read_to_string(&first).unwrap()).unwrap()[0];
    assert_eq!(&r.moves[..3], ["a1", "i9", "c3"], "{r:?}");
    assert_eq!(r.moves.len(), 4, "the engine answered c3: {r:?}");

    let second = dir.path().join("second.pgn");
    let o = play(
        vec![
            "--local".into(),
            "--playouts".into(),
            "100".into(),
            "--resume".into(),
            first.to_str().unwrap().into(),
            "--record".into(),
            second.to_str().unwrap().into(),
        ],
        "",
        dir.path(),
    )
    .await;
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("Resuming after 4 turns: a1 i9 c3"), "{out}");
    let resumed = &parse_pgn(&std::fs::read_to_string(&second).unwrap()).unwrap()[0];
    assert_eq!(resumed.moves, r.moves);

    // A bad move in --moves is named; a missing record names its path.
    let o = play(
        vec!["--local".into(), "--moves".into(), "a1".into(), "a1".into()],
        "",
        dir.path(),
    )
    .await;
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("--fen/--moves") && err.contains("a1"), "{err}");
    let o = play(
        vec!["--local".into(), "--resume".into(), "nope.pgn".into()],
        "",
        dir.path(),
    )
    .await;
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("--resume nope.pgn"), "{err}");
}

/// `--level` plays a weaker engine (named in the record), and the end of a game gives the
/// command that reviews it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_level_plays_and_the_end_offers_a_review() {
    let dir = tempfile::tempdir().unwrap();
    let o = play(
        vec![
            "--local".into(),
            "--as".into(),
            "black".into(),
            "--level".into(),
            "2".into(),
        ],
        "undo\n",
        dir.path(),
    )
    .await;
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{}\n{out}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("White (engine) plays"), "{out}");
    assert!(out.contains("level=2"), "{out}");
    assert!(
        out.contains("Review it: emergo review --local emergo-game-"),
        "{out}"
    );
    let bad = play(
        vec!["--local".into(), "--level".into(), "9".into()],
        "",
        dir.path(),
    )
    .await;
    assert!(!bad.status.success());
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("--level"),
        "{bad:?}"
    );
}
