//! TLS for the server's ports and the client tools (rustls with the ring provider).
//!
//! The server loads its certificate chain and key once, at startup ([`server_config`],
//! [`acceptors_from_flags`]), so a wrong path, a file that never ends (`/dev/zero`), or a key
//! that belongs to another certificate stops it with a message naming the flag and the file,
//! rather than failing every handshake later. Every file is read with a cap ([`MAX_PEM_BYTES`]).
//!
//! The accept loop (`net.rs`) wraps each connection with its port's acceptor, under its header
//! timeout. The two ports share the certificate but not the ALPN list: the HTTP gateway offers
//! `h2` and `http/1.1` ([`ALPN`]) for browsers and curl; the gRPC port offers only `h2`
//! ([`GRPC_ALPN`]), so a client that can only speak HTTP/1.1 (a web page's `fetch`) is refused at
//! the handshake, as the port refuses HTTP/1.1 in plaintext.
//!
//! The client tools use [`ca_roots`] to trust a private CA (`--ca-cert`) besides the system's
//! roots; the TLS connection itself is tonic's (`client::connect`).
//!
//! The leaf certificate's dates are checked at start-up too ([`validity`]): an expired one, or
//! one not valid yet, is logged as a warning rather than refused.
//!
//! The crypto provider is always given explicitly (ring, the only one compiled in), so nothing
//! here depends on a process-wide default being installed.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::RootCertStore;
use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, TrustAnchor};
use tokio_rustls::TlsAcceptor;

use crate::config::ServerConfig;
use crate::files::ReadError;

pub mod validity;

/// ALPN protocols the HTTP gateway offers, in order of preference: browsers and curl may use
/// either.
pub const ALPN: [&[u8]; 2] = [b"h2", b"http/1.1"];

/// ALPN protocols the gRPC port offers: gRPC needs `h2` (grpcio and tonic refuse a TLS
/// connection that did not negotiate it), and the port speaks nothing else, so a client offering
/// only `http/1.1` gets a `no_application_protocol` alert instead of a connection.
pub const GRPC_ALPN: [&[u8]; 1] = [b"h2"];

/// Largest certificate chain, key or CA file read. A PEM chain is a few KiB; the cap only has to
/// stop a flag pointed at the wrong file (`/dev/zero`, a log) from reading forever.
pub const MAX_PEM_BYTES: u64 = 1 << 20;

/// What is wrong with a certificate or key file. Each variant names the file, since the
/// usual fix is pointing a flag at the right one.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// The file could not be read (missing, unreadable).
    #[error("{}: {source}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The file is longer than [`MAX_PEM_BYTES`] (or never ends).
    #[error(
        "{}: longer than {cap} bytes; a PEM certificate chain or key is a few KiB (is it the \
         right file?)",
        .path.display()
    )]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The cap, in bytes.
        cap: u64,
    },
    /// The file is not well-formed PEM.
    #[error("{}: not valid PEM: {source}", .path.display())]
    Pem {
        /// The file.
        path: PathBuf,
        /// Why.
        source: pem::Error,
    },
    /// No `CERTIFICATE` block in a file that should hold a certificate chain or a CA.
    #[error("{}: no certificate in it (expected a PEM \"BEGIN CERTIFICATE\" block)", .path.display())]
    NoCertificate {
        /// The file.
        path: PathBuf,
    },
    /// No private key in a file that should hold one.
    #[error(
        "{}: no private key in it (expected a PEM \"BEGIN PRIVATE KEY\", \
         \"BEGIN RSA PRIVATE KEY\" or \"BEGIN EC PRIVATE KEY\" block)",
        .path.display()
    )]
    NoKey {
        /// The file.
        path: PathBuf,
    },
    /// The key is not the one the certificate was issued for.
    #[error("{}: the private key does not match the certificate in {}", .key.display(), .cert.display())]
    KeyMismatch {
        /// The certificate chain file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
    },
    /// A certificate rustls cannot use as a trust anchor (a CA file).
    #[error("{}: unusable certificate: {source}", .path.display())]
    BadCertificate {
        /// The file.
        path: PathBuf,
        /// Why.
        source: rustls::Error,
    },
    /// rustls refused the certificate and key (an unsupported key type, a malformed
    /// certificate).
    #[error("{} with {}: {source}", .cert.display(), .key.display())]
    Config {
        /// The certificate chain file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
        /// Why.
        source: rustls::Error,
    },
}

impl TlsError {
    /// The server flags that named the file at fault. One file may serve as both
    /// `--tls-cert` and `--tls-key`; then a fault of the file itself names both flags.
    fn server_flags(&self, cert: &Path, key: &Path) -> &'static str {
        const CERT: &str = "--tls-cert";
        const KEY: &str = "--tls-key";
        const BOTH: &str = "--tls-cert/--tls-key";
        match self {
            TlsError::NoCertificate { .. } | TlsError::BadCertificate { .. } => CERT,
            TlsError::NoKey { .. } | TlsError::KeyMismatch { .. } => KEY,
            TlsError::Config { .. } => BOTH,
            TlsError::Read { path, .. }
            | TlsError::TooLarge { path, .. }
            | TlsError::Pem { path, .. } => match (path == cert, path == key) {
                (true, false) => CERT,
                (false, true) => KEY,
                _ => BOTH,
            },
        }
    }
}

/// A certificate or key the server's flags name is unusable: the flag, then the file and the
/// fault (`--tls-cert /dev/zero: longer than 1048576 bytes; ...`).
#[derive(Debug, thiserror::Error)]
#[error("{flags} {error}")]
pub struct ServerTlsError {
    /// `--tls-cert`, `--tls-key`, or both.
    pub flags: &'static str,
    /// What is wrong, naming the file (boxed: a `Result` carrying it stays small).
    pub error: Box<TlsError>,
}

impl std::fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerTls").finish_non_exhaustive()
    }
}

/// Reads a PEM file of at most [`MAX_PEM_BYTES`], naming it in the error.
fn read(path: &Path) -> Result<Vec<u8>, TlsError> {
    crate::files::read_capped(path, MAX_PEM_BYTES).map_err(|e| match e {
        ReadError::Io(source) => TlsError::Read {
            path: path.to_owned(),
            source,
        },
        ReadError::TooLarge { cap } => TlsError::TooLarge {
            path: path.to_owned(),
            cap,
        },
    })
}

/// Every certificate in a PEM file, in order (end entity first for a chain); at least one.
pub fn load_certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let bytes = read(path)?;
    let certs = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|source| TlsError::Pem {
            path: path.to_owned(),
            source,
        })?;
    if certs.is_empty() {
        return Err(TlsError::NoCertificate {
            path: path.to_owned(),
        });
    }
    Ok(certs)
}

/// The first private key in a PEM file: PKCS#8, PKCS#1 (RSA) or SEC1 (EC).
pub fn load_private_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    let bytes = read(path)?;
    PrivateKeyDer::from_pem_slice(&bytes).map_err(|source| match source {
        pem::Error::NoItemsFound => TlsError::NoKey {
            path: path.to_owned(),
        },
        source => TlsError::Pem {
            path: path.to_owned(),
            source,
        },
    })
}

/// The ring provider, given explicitly to every builder (see the module docs).
fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A rustls server configuration from a PEM certificate chain and its private key, offering
/// [`ALPN`] (`h2`, then `http/1.1`) and rustls's safe default protocol versions (TLS 1.2, 1.3).
pub fn server_config(cert: &Path, key: &Path) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    config_for_chain(load_certificates(cert)?, cert, key)
}

/// [`server_config`] for a chain already loaded from `cert`.
fn config_for_chain(
    chain: Vec<CertificateDer<'static>>,
    cert: &Path,
    key: &Path,
) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let private_key = load_private_key(key)?;
    let config_error = |source: rustls::Error| match source {
        rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch) => {
            TlsError::KeyMismatch {
                cert: cert.to_owned(),
                key: key.to_owned(),
            }
        }
        source => TlsError::Config {
            cert: cert.to_owned(),
            key: key.to_owned(),
            source,
        },
    };
    let mut config = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(config_error)?
        .with_no_client_auth()
        .with_single_cert(chain, private_key)
        .map_err(config_error)?;
    config.alpn_protocols = ALPN.iter().map(|p| p.to_vec()).collect();
    Ok(Arc::new(config))
}

/// Trust anchors from a PEM file of CA certificates (the client tools' `--ca-cert`).
pub fn ca_roots(path: &Path) -> Result<Vec<TrustAnchor<'static>>, TlsError> {
    let mut store = RootCertStore::empty();
    for cert in load_certificates(path)? {
        store.add(cert).map_err(|source| TlsError::BadCertificate {
            path: path.to_owned(),
            source,
        })?;
    }
    Ok(store.roots)
}

/// The TLS acceptor the accept loop wraps each connection with (cheap to clone: the
/// configuration is shared), from a certificate chain and key ([`server_config`]).
pub fn acceptor(cert: &Path, key: &Path) -> Result<TlsAcceptor, TlsError> {
    Ok(TlsAcceptor::from(server_config(cert, key)?))
}

/// `config` offering only `h2` by ALPN ([`GRPC_ALPN`]), for the gRPC port. The certificate is
/// shared, not loaded again.
pub fn h2_only(config: &rustls::ServerConfig) -> Arc<rustls::ServerConfig> {
    let mut config = config.clone();
    config.alpn_protocols = GRPC_ALPN.iter().map(|p| p.to_vec()).collect();
    Arc::new(config)
}

/// The acceptors of the server's ports: one certificate, two ALPN lists.
#[derive(Clone)]
pub struct ServerTls {
    /// The gRPC port's: `h2` only ([`GRPC_ALPN`]).
    pub grpc: TlsAcceptor,
    /// The HTTP gateway's: `h2` and `http/1.1` ([`ALPN`]).
    pub http: TlsAcceptor,
}

/// The acceptors the server's flags ask for: `Some` when `--tls-cert` and `--tls-key` are both
/// set, `None` for plaintext (the flag parser already refuses one without the other). Called
/// once at startup, so a bad file stops the server before it serves, naming the flag.
pub fn acceptors_from_flags(config: &ServerConfig) -> Result<Option<ServerTls>, ServerTlsError> {
    let (Some(cert), Some(key)) = (&config.tls_cert, &config.tls_key) else {
        return Ok(None);
    };
    let flag_error = |error: TlsError| ServerTlsError {
        flags: error.server_flags(cert, key),
        error: Box::new(error),
    };
    let chain = load_certificates(cert).map_err(flag_error)?;
    warn_about_validity(cert, &chain);
    let http = config_for_chain(chain, cert, key).map_err(flag_error)?;
    Ok(Some(ServerTls {
        grpc: TlsAcceptor::from(h2_only(&http)),
        http: TlsAcceptor::from(http),
    }))
}

/// Logs a warning when the chain's leaf (its first certificate) is expired, not valid yet, or
/// expires within [`validity::EXPIRY_WARNING`]. The server serves on either way (see
/// [`validity`]).
fn warn_about_validity(cert: &Path, chain: &[CertificateDer<'static>]) {
    let Some(leaf) = chain.first() else { return };
    let Some(window) = validity::Validity::of(leaf) else {
        tracing::warn!(
            file = %cert.display(),
            "--tls-cert {}: cannot read the certificate's validity dates; check them with \
             `openssl x509 -noout -dates -in {}`",
            cert.display(),
            cert.display()
        );
        return;
    };
    let now = validity::unix_seconds(std::time::SystemTime::now());
    if let Some(warning) = validity::validity_warning(cert, window, now) {
        tracing::warn!(file = %cert.display(), "{warning}");
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// A self-signed certificate for `localhost` and 127.0.0.1 with its key, written to `dir`.
    fn write_cert(dir: &Path, stem: &str) -> (PathBuf, PathBuf, rcgen::Certificate) {
        let generated =
            rcgen::generate_simple_self_signed(vec!["localhost".to_owned(), "127.0.0.1".into()])
                .unwrap();
        let cert = dir.join(format!("{stem}.pem"));
        let key = dir.join(format!("{stem}.key"));
        std::fs::write(&cert, generated.cert.pem()).unwrap();
        std::fs::write(&key, generated.signing_key.serialize_pem()).unwrap();
        (cert, key, generated.cert)
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("emergo-tls-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn loads_a_certificate_and_key_with_alpn() {
        let dir = temp_dir("ok");
        let (cert, key, _) = write_cert(&dir, "server");
        let config = server_config(&cert, &key).unwrap();
        assert_eq!(
            config.alpn_protocols,
            vec![b"h2".to_vec(), b"http/1.1".to_vec()]
        );
        // A file holding both the chain and the key serves for both flags.
        let both = dir.join("both.pem");
        let text =
            std::fs::read_to_string(&cert).unwrap() + &std::fs::read_to_string(&key).unwrap();
        std::fs::write(&both, text).unwrap();
        server_config(&both, &both).unwrap();
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn errors_name_the_file_and_the_problem() {
        let dir = temp_dir("errors");
        let (cert, key, _) = write_cert(&dir, "a");
        let (_, other_key, _) = write_cert(&dir, "b");
        let missing = dir.join("missing.pem");
        let garbage = dir.join("garbage.pem");
        std::fs::write(
            &garbage,
            "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "").unwrap();

        let e = server_config(&missing, &key).unwrap_err();
        assert!(matches!(e, TlsError::Read { .. }), "{e:?}");
        assert!(e.to_string().contains("missing.pem"), "{e}");

        let e = server_config(&key, &key).unwrap_err();
        assert!(matches!(e, TlsError::NoCertificate { .. }), "{e:?}");
        assert!(e.to_string().contains("a.key: no certificate"), "{e}");

        let e = server_config(&cert, &cert).unwrap_err();
        assert!(matches!(e, TlsError::NoKey { .. }), "{e:?}");
        assert!(e.to_string().contains("a.pem: no private key"), "{e}");

        let e = server_config(&empty, &key).unwrap_err();
        assert!(matches!(e, TlsError::NoCertificate { .. }), "{e:?}");

        let e = server_config(&garbage, &key).unwrap_err();
        assert!(matches!(e, TlsError::Pem { .. }), "{e:?}");
        assert!(e.to_string().contains("garbage.pem: not valid PEM"), "{e}");

        let e = server_config(&cert, &other_key).unwrap_err();
        assert!(matches!(e, TlsError::KeyMismatch { .. }), "{e:?}");
        assert!(
            e.to_string()
                .contains("b.key: the private key does not match the certificate in"),
            "{e}"
        );

        let e = ca_roots(&key).unwrap_err();
        assert!(matches!(e, TlsError::NoCertificate { .. }), "{e:?}");
        assert_eq!(ca_roots(&cert).unwrap().len(), 1);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn flags_select_tls() {
        let dir = temp_dir("flags");
        let (cert, key, _) = write_cert(&dir, "server");
        let mut config = ServerConfig::default();
        assert!(acceptors_from_flags(&config).unwrap().is_none());
        config.tls_cert = Some(cert.clone());
        config.tls_key = Some(key.clone());
        let tls = acceptors_from_flags(&config).unwrap().unwrap();
        assert_eq!(tls.grpc.config().alpn_protocols, vec![b"h2".to_vec()]);
        assert_eq!(
            tls.http.config().alpn_protocols,
            vec![b"h2".to_vec(), b"http/1.1".to_vec()]
        );
        config.tls_key = Some(dir.join("nope.key"));
        let Err(e) = acceptors_from_flags(&config) else {
            panic!("a missing key file is accepted")
        };
        assert!(e.to_string().starts_with("--tls-key "), "{e}");
        assert!(e.to_string().contains("nope.key"), "{e}");
        config.tls_key = Some(cert.clone());
        let Err(e) = acceptors_from_flags(&config) else {
            panic!("a certificate is accepted as a key")
        };
        assert!(e.to_string().starts_with("--tls-key "), "{e}");
        config.tls_cert = Some(key);
        let Err(e) = acceptors_from_flags(&config) else {
            panic!("a key is accepted as a certificate")
        };
        assert!(e.to_string().starts_with("--tls-cert "), "{e}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// A file that never ends (or a huge one) is refused after [`MAX_PEM_BYTES`], at once,
    /// naming the flag and the file.
    #[test]
    fn endless_or_huge_files_are_refused_at_once() {
        let dir = temp_dir("huge");
        let (cert, key, _) = write_cert(&dir, "server");
        let huge = dir.join("huge.pem");
        let mut text = std::fs::read_to_string(&cert).unwrap();
        while (text.len() as u64) <= MAX_PEM_BYTES {
            text += "# padding after the certificate\n";
        }
        std::fs::write(&huge, text).unwrap();
        let e = server_config(&huge, &key).unwrap_err();
        assert!(matches!(e, TlsError::TooLarge { .. }), "{e:?}");
        assert!(e.to_string().contains("huge.pem: longer than"), "{e}");

        for endless in ["/dev/zero", "/dev/urandom"].map(PathBuf::from) {
            if !endless.exists() {
                continue;
            }
            for (flag, cert, key) in [
                ("--tls-cert", &endless, &key),
                ("--tls-key", &cert, &endless),
            ] {
                let config = ServerConfig {
                    tls_cert: Some(cert.clone()),
                    tls_key: Some(key.clone()),
                    ..ServerConfig::default()
                };
                let start = std::time::Instant::now();
                let Err(e) = acceptors_from_flags(&config) else {
                    panic!("{} accepted for {flag}", endless.display())
                };
                assert!(start.elapsed() < Duration::from_secs(1), "{e}");
                let expected = format!("{flag} {}: longer than", endless.display());
                assert!(e.to_string().starts_with(&expected), "{e}");
            }
        }
        let e = ca_roots(Path::new("/dev/zero")).unwrap_err();
        assert!(matches!(e, TlsError::TooLarge { .. }), "{e:?}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// A rustls client trusting `ca`, offering h2.
    fn client_connector(ca: &rcgen::Certificate) -> tokio_rustls::TlsConnector {
        let mut roots = RootCertStore::empty();
        roots.add(ca.der().clone()).unwrap();
        let mut config = rustls::ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        config.alpn_protocols = vec![b"h2".to_vec()];
        tokio_rustls::TlsConnector::from(Arc::new(config))
    }

    #[tokio::test]
    async fn handshake_negotiates_h2() {
        let dir = temp_dir("handshake");
        let (cert, key, ca) = write_cert(&dir, "server");
        let acceptor = acceptor(&cert, &key).unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.unwrap();
            let tls = acceptor.accept(tcp).await.unwrap();
            tls.get_ref().1.alpn_protocol().map(<[u8]>::to_vec)
        });
        let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
        let tls = client_connector(&ca).connect(name, tcp).await.unwrap();
        assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
        assert_eq!(server.await.unwrap(), Some(b"h2".to_vec()));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[tokio::test]
    async fn plaintext_clients_fail_at_once() {
        use tokio::io::AsyncWriteExt;
        let dir = temp_dir("plaintext");
        let (cert, key, _) = write_cert(&dir, "server");
        let acceptor = acceptor(&cert, &key).unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut plain = tokio::net::TcpStream::connect(addr).await.unwrap();
        plain
            .write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
            .await
            .unwrap();
        let (tcp, _) = listener.accept().await.unwrap();
        let handshake = tokio::time::timeout(Duration::from_secs(5), acceptor.accept(tcp));
        assert!(handshake.await.expect("fails at once, no wait").is_err());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
