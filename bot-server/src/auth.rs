//! Bearer-token auth, one check for both doors: the gRPC interceptor and the HTTP gateway
//! call [`BearerAuth::check`] with the `authorization` header's bytes. Also the start-up check
//! of the token file's permissions ([`token_file_warning`]).

use std::path::Path;
use std::sync::Arc;

use tonic::service::Interceptor;
use tonic::{Request, Status};

use crate::error::ServiceError;

/// Checks `authorization: Bearer <token>` when a token is configured.
#[derive(Clone)]
pub struct BearerAuth {
    expected: Option<Arc<[u8]>>,
}

/// Never shows the token: only whether one is required.
impl std::fmt::Debug for BearerAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BearerAuth")
            .field("required", &self.expected.is_some())
            .finish()
    }
}

impl BearerAuth {
    /// Auth for `token` (None: everything allowed).
    pub fn new(token: Option<&str>) -> BearerAuth {
        BearerAuth {
            expected: token
                .filter(|t| !t.is_empty())
                .map(|t| Arc::from(format!("Bearer {t}").as_bytes())),
        }
    }
}

/// Compares without an early exit, so timing does not reveal how much of a guess was right.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl BearerAuth {
    /// Checks an `authorization` header value (gRPC metadata or HTTP header alike).
    pub fn check(&self, header: Option<&[u8]>) -> Result<(), ServiceError> {
        let Some(expected) = &self.expected else {
            return Ok(());
        };
        match header {
            Some(v) if constant_time_eq(v, expected) => Ok(()),
            Some(_) => Err(ServiceError::Unauthenticated("invalid bearer token")),
            None => Err(ServiceError::Unauthenticated(
                "this server needs an `authorization: Bearer <token>` header",
            )),
        }
    }
}

impl Interceptor for BearerAuth {
    fn call(&mut self, req: Request<()>) -> Result<Request<()>, Status> {
        self.check(req.metadata().get("authorization").map(|v| v.as_bytes()))
            .map_err(Status::from)?;
        Ok(req)
    }
}

/// A warning when the token file at `path` may be read by other local users (its mode gives
/// the group or others any access, `mode & 0o077 != 0`), naming the file and its mode; `None`
/// when only its owner may, when its mode cannot be read, and off Unix.
///
/// A warning rather than a refusal: the token is only as secret as the file, but many
/// deployments mount secrets with looser modes on purpose (a shared service group), and a server
/// that refused to start over it would turn a hardening hint into an outage. `--auth-token-file`
/// exists to keep the token out of `/proc/PID/cmdline`; a world-readable file undoes that
/// quietly unless the log says so.
pub fn token_file_warning(path: &Path) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).ok()?.permissions().mode() & 0o777;
        (mode & 0o077 != 0).then(|| {
            format!(
                "--auth-token-file {}: mode {mode:03o} lets other local users read the token; \
                 run `chmod 600 {}`",
                path.display(),
                path.display()
            )
        })
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_token() {
        let shown = format!("{:?}", BearerAuth::new(Some("s3cret-token")));
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(shown.contains("required: true"), "{shown}");
    }

    #[test]
    fn bearer_auth() {
        let mut auth = BearerAuth::new(Some("s3cret"));
        let mut ok = Request::new(());
        ok.metadata_mut()
            .insert("authorization", "Bearer s3cret".parse().unwrap());
        assert!(auth.call(ok).is_ok());
        let mut bad = Request::new(());
        bad.metadata_mut()
            .insert("authorization", "Bearer nope".parse().unwrap());
        assert_eq!(
            auth.call(bad).unwrap_err().code(),
            tonic::Code::Unauthenticated
        );
        assert_eq!(
            auth.call(Request::new(())).unwrap_err().code(),
            tonic::Code::Unauthenticated
        );
        assert!(BearerAuth::new(None).call(Request::new(())).is_ok());
        // The HTTP gateway's door: the same check on the header's bytes.
        assert!(auth.check(Some(b"Bearer s3cret")).is_ok());
        assert_eq!(
            auth.check(Some(b"Bearer s3cre")).unwrap_err().code(),
            tonic::Code::Unauthenticated
        );
        // An empty token means none (the configuration refuses it anyway).
        assert!(BearerAuth::new(Some("")).check(None).is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn token_files_others_can_read_are_named_with_their_mode() {
        use std::os::unix::fs::PermissionsExt;
        let file = tempfile::NamedTempFile::new().unwrap();
        let path = file.path();
        std::fs::write(path, "s3cret\n").unwrap();
        let chmod = |mode| std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode));

        chmod(0o644).unwrap();
        let w = token_file_warning(path).expect("a warning for mode 644");
        assert_eq!(
            w,
            format!(
                "--auth-token-file {0}: mode 644 lets other local users read the token; run \
                 `chmod 600 {0}`",
                path.display()
            )
        );
        chmod(0o640).unwrap();
        assert!(token_file_warning(path).unwrap().contains("mode 640"));

        for private in [0o600, 0o400] {
            chmod(private).unwrap();
            assert_eq!(token_file_warning(path), None, "{private:o}");
        }
        // A file that cannot be read at all is the reading's error to report, not this.
        assert_eq!(token_file_warning(&path.with_extension("missing")), None);
    }
}
