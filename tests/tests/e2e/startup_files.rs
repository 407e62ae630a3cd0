//! Files the operator names at start-up (TLS certificate and key, the token file, a value
//! network) are read with a size cap: the real `bot-server` pointed at a file that never ends
//! stops at once with a non-zero exit and a message naming the flag and the file, instead of
//! reading until the memory runs out.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use emergo_tests::{binary, run_to_refusal};

/// `bot-server` with `args` under a 2 GiB address-space limit, so that a server reading an
/// endless file fails its allocation quickly rather than taking the machine's memory with it.
fn bot_server(args: &[&str]) -> Command {
    let mut command = Command::new("sh");
    command
        .args(["-c", "ulimit -v 2097152 && exec \"$@\"", "sh"])
        .arg(binary("bot-server"))
        .args(["--listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0"])
        .args(args);
    command
}

#[test]
fn endless_files_stop_the_server_at_once() {
    if !Path::new("/dev/zero").exists() || !Path::new("/dev/urandom").exists() {
        println!("SKIPPED: no /dev/zero or /dev/urandom");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let generated = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let cert = dir.path().join("server.pem");
    let key = dir.path().join("server.key");
    std::fs::write(&cert, generated.cert.pem()).unwrap();
    std::fs::write(&key, generated.signing_key.serialize_pem()).unwrap();
    let (cert, key) = (cert.to_str().unwrap(), key.to_str().unwrap());

    for (args, expected) in [
        (
            &["--tls-cert", "/dev/zero", "--tls-key", key][..],
            "--tls-cert /dev/zero: longer than",
        ),
        (
            &["--tls-cert", cert, "--tls-key", "/dev/urandom"][..],
            "--tls-key /dev/urandom: longer than",
        ),
        (
            &["--auth-token-file", "/dev/zero"][..],
            "--auth-token-file /dev/zero: more than",
        ),
        (
            &["--mcts", "net=/dev/zero"][..],
            "net=/dev/zero: longer than",
        ),
    ] {
        let start = Instant::now();
        let (status, stderr) = run_to_refusal(&mut bot_server(args));
        let took = start.elapsed();
        assert!(!status.success(), "{args:?}: {status}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        // A second in the promise; slack here for a loaded test machine.
        assert!(took < Duration::from_secs(5), "{args:?} took {took:?}");
    }
}
