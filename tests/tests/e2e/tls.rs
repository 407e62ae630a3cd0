//! TLS end to end: the real `bot-server` with `--tls-cert`/`--tls-key`, a CA
//! and a server certificate for `localhost` and 127.0.0.1 generated at test time, and the
//! clients a user would point at it: the `emergo` tools (`https://` with and without
//! `--ca-cert`, `http://` against the TLS port), curl on the HTTP gateway, and Python grpcio
//! over a secure channel.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use emergo_tests::{binary, free_port, python_venv, workspace_root};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};

/// A test CA and a server certificate it signed, as PEM files.
struct Certs {
    _dir: tempfile::TempDir,
    ca: PathBuf,
    cert: PathBuf,
    key: PathBuf,
}

fn generate_certs() -> Certs {
    let dir = tempfile::tempdir().unwrap();
    let mut ca_params = CertificateParams::new(Vec::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "emergo test CA");
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_key = KeyPair::generate().unwrap();
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);

    let mut params =
        CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).unwrap();
    params
        .distinguished_name
        .push(DnType::CommonName, "localhost");
    params.use_authority_key_identifier_extension = true;
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let key = KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, &issuer).unwrap();

    let certs = Certs {
        ca: dir.path().join("ca.pem"),
        cert: dir.path().join("server.pem"),
        key: dir.path().join("server.key"),
        _dir: dir,
    };
    std::fs::write(&certs.ca, ca_cert.pem()).unwrap();
    std::fs::write(&certs.cert, cert.pem()).unwrap();
    std::fs::write(&certs.key, key.serialize_pem()).unwrap();
    certs
}

/// The `bot-server` child process, killed when dropped.
struct Server {
    child: Child,
    grpc_port: u16,
    http_port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `bot-server` over TLS on free ports and waits until both ports accept connections.
fn start_server(certs: &Certs) -> Server {
    let grpc_port = free_port();
    let http_port = free_port();
    let child = Command::new(binary("bot-server"))
        .args(["--listen", &format!("127.0.0.1:{grpc_port}")])
        .args(["--http-listen", &format!("127.0.0.1:{http_port}")])
        .args(["--threads", "2"])
        .arg("--tls-cert")
        .arg(&certs.cert)
        .arg("--tls-key")
        .arg(&certs.key)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut server = Server {
        child,
        grpc_port,
        http_port,
    };
    let start = Instant::now();
    for port in [grpc_port, http_port] {
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Some(status) = server.child.try_wait().unwrap() {
                panic!("bot-server exited at start-up: {status}");
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "bot-server did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    server
}

/// Runs a command to its end; one that outlives `limit` is killed and fails the test (the
/// point of several checks here is that a TLS mismatch fails fast instead of hanging).
fn run(cmd: &mut Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{cmd:?} still running after {limit:?}:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `emergo bestmove` against `server`, with extra flags.
fn bestmove(server: &str, extra: &[&Path]) -> Output {
    let mut cmd = Command::new(binary("emergo"));
    cmd.args(["bestmove", "--server", server, "--playouts", "300"]);
    for path in extra {
        cmd.arg("--ca-cert").arg(path);
    }
    // A CA from the environment would change what "without --ca-cert" means.
    cmd.env_remove("EMERGO_CA_CERT");
    run(&mut cmd, Duration::from_secs(60))
}

#[test]
fn emergo_tools_speak_tls() {
    let certs = generate_certs();
    let server = start_server(&certs);
    let port = server.grpc_port;

    // (a) https with the test CA: by name and by address (the certificate names both).
    for host in ["localhost", "127.0.0.1"] {
        let out = bestmove(&format!("https://{host}:{port}"), &[&certs.ca]);
        assert!(
            out.status.success(),
            "https://{host} failed:\n{}",
            text(&out)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(stdout.lines().count(), 1, "{stdout:?}");
        assert!(!stdout.trim().is_empty(), "{stdout:?}");
    }

    // (b) https without the CA: refused for the certificate, quickly.
    let out = bestmove(&format!("https://localhost:{port}"), &[]);
    let said = text(&out);
    assert!(
        !out.status.success(),
        "untrusted certificate accepted:\n{said}"
    );
    assert!(
        said.contains("cannot connect") && said.to_lowercase().contains("certificate"),
        "{said}"
    );

    // A CA file that holds no certificate is refused by name, before any connection.
    let out = bestmove(&format!("https://localhost:{port}"), &[&certs.key]);
    let said = text(&out);
    assert!(!out.status.success());
    assert!(
        said.contains("--ca-cert") && said.contains("no certificate"),
        "{said}"
    );

    // (c) plaintext against the TLS port fails cleanly: at once, with an error and no move.
    // (The HTTP/2 client sends its preface without waiting, so the failure shows on the first
    // call rather than at connection time.)
    let out = bestmove(&format!("http://127.0.0.1:{port}"), &[]);
    let said = text(&out);
    assert!(!out.status.success(), "plaintext got an answer:\n{said}");
    assert!(out.stdout.is_empty(), "{said}");
    assert!(said.starts_with("emergo: "), "{said}");

    // An unknown scheme is refused with a message naming --server.
    let out = bestmove(&format!("ftp://127.0.0.1:{port}"), &[]);
    let said = text(&out);
    assert!(!out.status.success());
    assert!(
        said.contains("--server") && said.contains("unsupported scheme"),
        "{said}"
    );

    // The other tools share the connection code: a load test over TLS.
    let out = run(
        Command::new(binary("emergo"))
            .args(["loadtest", "--server", &format!("https://localhost:{port}")])
            .arg("--ca-cert")
            .arg(&certs.ca)
            .args([
                "--clients",
                "2",
                "--requests",
                "4",
                "--rpc",
                "bestmove",
                "--playouts",
                "100",
                "--json",
            ]),
        Duration::from_secs(60),
    );
    assert!(out.status.success(), "loadtest over TLS:\n{}", text(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["ok"], 4, "{report}");
}

#[test]
fn http_gateway_over_tls() {
    if Command::new("curl").arg("--version").output().is_err() {
        println!("SKIPPED: curl is not installed");
        return;
    }
    let certs = generate_certs();
    let server = start_server(&certs);
    let url = format!("https://localhost:{}/v1/ServerInfo", server.http_port);
    let curl = |extra: &[&str]| {
        let mut cmd = Command::new("curl");
        cmd.args(["--silent", "--show-error", "--max-time", "20"])
            .args(extra)
            .arg(&url);
        run(&mut cmd, Duration::from_secs(30))
    };

    let ca = certs.ca.to_string_lossy().into_owned();
    let out = curl(&["--cacert", &ca, "--fail"]);
    assert!(out.status.success(), "curl --cacert:\n{}", text(&out));
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(info["version"].is_string(), "{info}");

    // Both HTTP versions the server offers by ALPN work.
    for version in ["--http1.1", "--http2"] {
        let out = curl(&["--cacert", &ca, "--fail", version]);
        assert!(out.status.success(), "curl {version}:\n{}", text(&out));
    }

    // Without the CA curl refuses the certificate (exit code 60).
    let out = curl(&[]);
    assert_eq!(out.status.code(), Some(60), "{}", text(&out));
}

/// A Python grpcio client over a secure channel: stubs generated from `proto/`, the test CA as
/// its only root, then ServerInfo and BestMove; a plaintext channel to the TLS port and a
/// secure channel without the CA must both fail.
const PYTHON_CLIENT: &str = r#"
import os, sys, tempfile
import grpc
from grpc_tools import protoc

port, proto_dir, ca = sys.argv[1], sys.argv[2], sys.argv[3]
out = tempfile.mkdtemp(prefix="emergo-py-tls-")
include = os.path.join(os.path.dirname(protoc.__file__), "_proto")
if protoc.main(["grpc_tools.protoc", f"-I{proto_dir}", f"-I{include}", f"--python_out={out}",
                f"--grpc_python_out={out}", "emergo/bot/v1/bot.proto"]) != 0:
    raise SystemExit("protoc failed")
sys.path.insert(0, out)
from emergo.bot.v1 import bot_pb2 as pb, bot_pb2_grpc as rpc

with open(ca, "rb") as f:
    creds = grpc.ssl_channel_credentials(root_certificates=f.read())
with grpc.secure_channel(f"localhost:{port}", creds) as channel:
    stub = rpc.EmergoBotStub(channel)
    info = stub.ServerInfo(pb.ServerInfoRequest(), timeout=20)
    print(f"ServerInfo: version {info.version}")
    best = stub.BestMove(pb.BestMoveRequest(
        position=pb.Position(fen="9/9/9/9/9/9/9/9/9 w 0 12,12"),
        limits=pb.Limits(max_playouts=500),
    ), timeout=30)
    if not best.best_move:
        raise SystemExit("FAILED: no best move")
    print(f"BestMove: {best.best_move}")

for what, channel in [
    ("plaintext", grpc.insecure_channel(f"127.0.0.1:{port}")),
    ("untrusted", grpc.secure_channel(f"localhost:{port}", grpc.ssl_channel_credentials())),
]:
    with channel:
        try:
            rpc.EmergoBotStub(channel).ServerInfo(pb.ServerInfoRequest(), timeout=5)
            raise SystemExit(f"FAILED: a {what} channel got an answer")
        except grpc.RpcError as e:
            print(f"{what}: {e.code().name}")
print("python tls client: OK")
"#;

#[test]
fn python_grpcio_secure_channel() {
    let python = python_venv();
    let certs = generate_certs();
    let server = start_server(&certs);
    let out = run(
        Command::new(python)
            .args(["-c", PYTHON_CLIENT])
            .arg(server.grpc_port.to_string())
            .arg(workspace_root().join("proto"))
            .arg(&certs.ca),
        Duration::from_secs(120),
    );
    let said = text(&out);
    assert!(out.status.success(), "python client failed:\n{said}");
    assert!(said.contains("python tls client: OK"), "{said}");
    assert!(said.contains("plaintext: UNAVAILABLE"), "{said}");
}
