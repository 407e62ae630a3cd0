//! Bearer-token auth, one check for both doors: the gRPC interceptor and the HTTP gateway
//! call [`BearerAuth::check`] with the `authorization` header's bytes.

use std::sync::Arc;

use tonic::service::Interceptor;
use tonic::{Request, Status};

use crate::error::ServiceError;

/// Checks `authorization: Bearer <token>` when a token is configured.
#[derive(Clone)]
pub struct BearerAuth {
    expected: Option<Arc<[u8]>>,
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
