//! Running the `emergo` binary as a user would, from async tests whose in-process server must
//! keep answering meanwhile.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use crate::binary;

/// Runs `emergo` with `args` on a blocking thread (so the server on the test's runtime keeps
/// answering), feeding it `stdin` (then end of input), in `dir` if given. The environment's
/// `EMERGO_SERVER` and `EMERGO_AUTH_TOKEN` are removed: a test says where its server is.
pub async fn emergo(args: Vec<String>, stdin: Option<String>, dir: Option<PathBuf>) -> Output {
    tokio::task::spawn_blocking(move || {
        let mut command = Command::new(binary("emergo"));
        command
            .args(&args)
            .env_remove("EMERGO_SERVER")
            .env_remove("EMERGO_AUTH_TOKEN")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(dir) = dir {
            command.current_dir(dir);
        }
        let mut child = command.spawn().expect("run emergo");
        let mut input = child.stdin.take().expect("stdin");
        if let Some(text) = stdin {
            input.write_all(text.as_bytes()).expect("write stdin");
        }
        drop(input);
        child.wait_with_output().expect("wait for emergo")
    })
    .await
    .expect("join")
}

/// Owned arguments from string literals.
pub fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

/// The standard output of a run that must have succeeded (else the panic shows its stderr).
pub fn stdout(o: &Output) -> String {
    assert!(
        o.status.success(),
        "emergo failed ({:?}): {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).expect("utf-8")
}
