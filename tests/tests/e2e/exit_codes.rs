//! `bot-server`'s exit status tells an operator's supervisor what went wrong: 2 for every
//! start-up configuration fault (a bad flag, or a file a flag names), as clap gives a bad flag;
//! 1 only for clients cut off at the shutdown grace (`process.rs`); 130 for a second signal.
//! A bad TLS file or HTTP policy flag used to exit 1, the shutdown's code.

use std::process::Command;

use emergo_tests::{binary, run_to_refusal};

fn bot_server(args: &[&str]) -> Command {
    let mut command = Command::new(binary("bot-server"));
    command
        .args(["--listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0"])
        .args(args);
    command
}

#[test]
fn every_configuration_fault_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.pem");
    let missing = missing.to_str().unwrap();
    for (args, expected) in [
        // Caught while the server assembles its ports (these exited 1).
        (
            &["--tls-cert", missing, "--tls-key", missing][..],
            "--tls-cert/--tls-key",
        ),
        (
            &["--cors-origin", "ftp://board.example.org"][..],
            "--cors-origin",
        ),
        (&["--allowed-host", "bad host"][..], "--allowed-host"),
        // Caught by the configuration check before binding, and by clap.
        (&["--auth-token", ""][..], "--auth-token"),
        (&["--max-tree-memory", "1KiB"][..], "--max-tree-memory"),
        (&["--mcts", "nonsense=1"][..], "--mcts"),
        (&["--max-review-ms", "5"][..], "--max-review-ms"),
    ] {
        let (status, stderr) = run_to_refusal(&mut bot_server(args));
        assert_eq!(status.code(), Some(2), "{args:?}: {status}\n{stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}
