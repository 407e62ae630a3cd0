//! The gRPC door: `emergo.bot.v1.EmergoBot` over the service core ([`crate::service`]). Each
//! method reads the client's deadline from the `grpc-timeout` header, calls the core, and maps
//! its typed errors to gRPC statuses; nothing else happens here.

use std::time::{Duration, Instant};

use emergo_proto::v1 as pb;
use emergo_proto::v1::emergo_bot_server::EmergoBot;
use futures_util::stream::{Stream, StreamExt};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use crate::error::ServiceError;
use crate::service::{MAX_TIMEOUT, Service};

/// The gRPC service: [`Service`] behind tonic.
#[derive(Clone)]
pub struct GrpcService {
    service: Service,
}

impl std::fmt::Debug for GrpcService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrpcService").finish_non_exhaustive()
    }
}

impl GrpcService {
    /// The gRPC door to `service`.
    pub fn new(service: Service) -> GrpcService {
        GrpcService { service }
    }
}

/// Reads the client's gRPC deadline from the `grpc-timeout` header (e.g. `1500m`), clamped to
/// [`MAX_TIMEOUT`]. An unparsable header counts as none.
pub fn grpc_timeout(metadata: &tonic::metadata::MetadataMap) -> Option<Duration> {
    let v = metadata.get("grpc-timeout")?.to_str().ok()?;
    if v.len() < 2 {
        return None;
    }
    let (digits, unit) = v.split_at(v.len() - 1);
    let n: u64 = digits.parse().ok()?;
    let timeout = match unit {
        "H" => Duration::from_secs(n.saturating_mul(3600)),
        "M" => Duration::from_secs(n.saturating_mul(60)),
        "S" => Duration::from_secs(n),
        "m" => Duration::from_millis(n),
        "u" => Duration::from_micros(n),
        "n" => Duration::from_nanos(n),
        _ => return None,
    };
    Some(timeout.min(MAX_TIMEOUT))
}

/// The deadline of a gRPC request, from its `grpc-timeout` header.
fn deadline_of<T>(req: &Request<T>) -> Option<Instant> {
    grpc_timeout(req.metadata()).and_then(crate::service::deadline_after)
}

/// A stream of the core's items as gRPC stream items.
type GrpcStream<T> = std::pin::Pin<Box<dyn Stream<Item = Result<T, Status>> + Send>>;

fn grpc_stream<T: Send + 'static>(
    rx: tokio::sync::mpsc::Receiver<Result<T, ServiceError>>,
) -> GrpcStream<T> {
    ReceiverStream::new(rx)
        .map(|item| item.map_err(Status::from))
        .boxed()
}

#[tonic::async_trait]
impl EmergoBot for GrpcService {
    type AnalyzeStream = GrpcStream<pb::AnalysisUpdate>;
    type AnalyzeGameStream = GrpcStream<pb::GameReviewUpdate>;

    async fn analyze_game(
        &self,
        req: Request<pb::AnalyzeGameRequest>,
    ) -> Result<Response<Self::AnalyzeGameStream>, Status> {
        let deadline = deadline_of(&req);
        let rx = self
            .service
            .analyze_game(req.into_inner(), deadline)
            .await?;
        Ok(Response::new(grpc_stream(rx)))
    }

    async fn analyze(
        &self,
        req: Request<pb::AnalyzeRequest>,
    ) -> Result<Response<Self::AnalyzeStream>, Status> {
        let deadline = deadline_of(&req);
        let rx = self.service.analyze(req.into_inner(), deadline).await?;
        Ok(Response::new(grpc_stream(rx)))
    }

    async fn best_move(
        &self,
        req: Request<pb::BestMoveRequest>,
    ) -> Result<Response<pb::BestMoveResponse>, Status> {
        let deadline = deadline_of(&req);
        // Dropping this future (the client cancelled) drops the search's, which stops it.
        let answer = self.service.best_move(req.into_inner(), deadline).await?;
        Ok(Response::new(answer))
    }

    async fn legal_moves(
        &self,
        req: Request<pb::LegalMovesRequest>,
    ) -> Result<Response<pb::LegalMovesResponse>, Status> {
        Ok(Response::new(self.service.legal_moves(req.into_inner())?))
    }

    async fn apply_moves(
        &self,
        req: Request<pb::ApplyMovesRequest>,
    ) -> Result<Response<pb::ApplyMovesResponse>, Status> {
        Ok(Response::new(self.service.apply_moves(req.into_inner())?))
    }

    async fn stop_search(
        &self,
        req: Request<pb::StopSearchRequest>,
    ) -> Result<Response<pb::StopSearchResponse>, Status> {
        Ok(Response::new(self.service.stop_search(req.into_inner())?))
    }

    async fn server_info(
        &self,
        req: Request<pb::ServerInfoRequest>,
    ) -> Result<Response<pb::ServerInfoResponse>, Status> {
        Ok(Response::new(self.service.server_info(req.into_inner())?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_timeout_header() {
        let mut m = tonic::metadata::MetadataMap::new();
        m.insert("grpc-timeout", "1500m".parse().unwrap());
        assert_eq!(grpc_timeout(&m), Some(Duration::from_millis(1500)));
        m.insert("grpc-timeout", "2S".parse().unwrap());
        assert_eq!(grpc_timeout(&m), Some(Duration::from_secs(2)));
        m.insert("grpc-timeout", "x".parse().unwrap());
        assert_eq!(grpc_timeout(&m), None);
        // Absurd values are clamped (they used to overflow `Instant + Duration`).
        for huge in [
            "18446744073709551615S",
            "18446744073709551615H",
            "9223372036854775807S",
        ] {
            m.insert("grpc-timeout", huge.parse().unwrap());
            assert_eq!(grpc_timeout(&m), Some(MAX_TIMEOUT), "{huge}");
        }
    }
}
