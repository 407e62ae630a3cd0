//! A third-party client: Python with grpcio, stubs generated from `proto/` by grpcio-tools.
//!
//! The test sets up its own virtual environment under `target/` (from PyPI, once) and runs
//! `tests/python/client.py` against the real `bot-server` binary started as a child process.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use emergo_tests::{binary, free_port, python_venv, workspace_root};

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn python_grpcio_client() {
    let python = python_venv();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let _server = Server(
        Command::new(binary("bot-server"))
            .args([
                "--listen",
                &addr,
                "--threads",
                "2",
                "--http-listen",
                "127.0.0.1:0",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let start = Instant::now();
    while std::net::TcpStream::connect(&addr).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "server did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = Command::new(python)
        .arg(workspace_root().join("tests/python/client.py"))
        .arg(&addr)
        .arg(workspace_root().join("proto"))
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "python client failed:\n{text}");
    assert!(text.contains("python client: OK"), "{text}");
}
