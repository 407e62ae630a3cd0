//! The HTTP/JSON gateway and the web board: the same operations as the gRPC contract, for
//! browsers and clients without a gRPC stack, served by the same process and engine.
//!
//! - `POST /v1/<Rpc>` for the unary RPCs (`BestMove`, `LegalMoves`, `ApplyMoves`, `ServerInfo`):
//!   the body and the answer are the canonical proto3 JSON mapping of the gRPC messages (pbjson).
//! - `POST /v1/Analyze`: Server-Sent Events, one `update` event per streamed update and a
//!   `final` event, then the stream closes; an `error` event if the search fails midway.
//!   Closing the connection cancels the search.
//! - Errors: `{"code": "INVALID_ARGUMENT", "message": "..."}` with the matching HTTP status.
//! - `GET /` and its assets: the web board (embedded in the binary).
//!
//! Every request goes through the gRPC service's own handlers ([`BotService`]), so validation,
//! admission control, limits, metrics and tracing are shared: one engine, two doors. The
//! optional bearer token is checked here exactly as the gRPC interceptor does, and an
//! `x-emergo-timeout-ms` header plays the role of the gRPC deadline.

use std::convert::Infallible;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use emergo_proto::v1 as pb;
use emergo_proto::v1::emergo_bot_server::EmergoBot;
use futures_util::stream::{Stream, StreamExt};
use serde::Serialize;
use tonic::Code;

use crate::server::{BearerAuth, MAX_REQUEST_BYTES};
use crate::service::BotService;

/// Shared state of the gateway's handlers.
#[derive(Clone)]
pub struct Gateway {
    service: BotService,
    auth: BearerAuth,
}

/// The error body: the gRPC code's name and the message.
#[derive(Serialize)]
struct ErrorBody<'a> {
    code: &'static str,
    message: &'a str,
}

/// The HTTP status that corresponds to a gRPC code.
pub fn http_status(code: Code) -> StatusCode {
    match code {
        Code::Ok => StatusCode::OK,
        Code::InvalidArgument | Code::OutOfRange | Code::FailedPrecondition => {
            StatusCode::BAD_REQUEST
        }
        Code::Unauthenticated => StatusCode::UNAUTHORIZED,
        Code::PermissionDenied => StatusCode::FORBIDDEN,
        Code::NotFound => StatusCode::NOT_FOUND,
        Code::AlreadyExists | Code::Aborted => StatusCode::CONFLICT,
        Code::ResourceExhausted => StatusCode::TOO_MANY_REQUESTS,
        Code::Cancelled => StatusCode::from_u16(499).unwrap_or(StatusCode::BAD_REQUEST),
        Code::DeadlineExceeded => StatusCode::GATEWAY_TIMEOUT,
        Code::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        Code::Unimplemented => StatusCode::NOT_IMPLEMENTED,
        Code::Unknown | Code::Internal | Code::DataLoss => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

fn error_json(status: &tonic::Status) -> String {
    serde_json::to_string(&ErrorBody {
        code: crate::metrics::code_name(status.code()),
        message: status.message(),
    })
    .unwrap_or_default()
}

/// An error response for a gRPC status.
fn error_response(status: tonic::Status) -> Response {
    (
        http_status(status.code()),
        [(header::CONTENT_TYPE, "application/json")],
        error_json(&status),
    )
        .into_response()
}

fn json_response<T: Serialize>(value: &T) -> Response {
    match serde_json::to_string(value) {
        Ok(body) => ([(header::CONTENT_TYPE, "application/json")], body).into_response(),
        Err(e) => error_response(tonic::Status::internal(format!(
            "cannot encode the answer: {e}"
        ))),
    }
}

impl Gateway {
    /// A gateway over `service`, requiring `token` when given.
    pub fn new(service: BotService, token: Option<&str>) -> Gateway {
        Gateway {
            service,
            auth: BearerAuth::new(token),
        }
    }

    /// Checks auth, parses the JSON body, and builds the gRPC-style request (with the deadline
    /// header translated).
    fn request<T: serde::de::DeserializeOwned + Default>(
        &self,
        headers: &HeaderMap,
        body: &Bytes,
    ) -> Result<tonic::Request<T>, tonic::Status> {
        self.auth
            .check(headers.get(header::AUTHORIZATION).map(|v| v.as_bytes()))?;
        let message: T = if body.iter().all(u8::is_ascii_whitespace) {
            T::default()
        } else {
            serde_json::from_slice(body).map_err(|e| {
                tonic::Status::invalid_argument(crate::error::bounded_message(&format!(
                    "request body: {e}"
                )))
            })?
        };
        let mut req = tonic::Request::new(message);
        if let Some(ms) = headers.get("x-emergo-timeout-ms") {
            let ms: u64 = ms
                .to_str()
                .ok()
                .and_then(|s| s.trim().parse().ok())
                .filter(|ms| *ms > 0 && *ms <= 24 * 3_600_000)
                .ok_or_else(|| {
                    tonic::Status::invalid_argument(
                        "x-emergo-timeout-ms: expected milliseconds (1 .. 86400000)",
                    )
                })?;
            if let Ok(v) = format!("{ms}m").parse() {
                req.metadata_mut().insert("grpc-timeout", v);
            }
        }
        Ok(req)
    }
}

macro_rules! unary {
    ($name:ident, $method:ident, $req:ty) => {
        async fn $name(State(g): State<Gateway>, headers: HeaderMap, body: Bytes) -> Response {
            let req = match g.request::<$req>(&headers, &body) {
                Ok(r) => r,
                Err(status) => return error_response(status),
            };
            match g.service.$method(req).await {
                Ok(resp) => json_response(resp.get_ref()),
                Err(status) => error_response(status),
            }
        }
    };
}

unary!(best_move, best_move, pb::BestMoveRequest);
unary!(legal_moves, legal_moves, pb::LegalMovesRequest);
unary!(apply_moves, apply_moves, pb::ApplyMovesRequest);
unary!(server_info, server_info, pb::ServerInfoRequest);

/// SSE events for the updates of one analysis; the stream ends after the final update.
fn sse_events(
    stream: impl Stream<Item = Result<pb::AnalysisUpdate, tonic::Status>> + Send + 'static,
) -> impl Stream<Item = Result<Event, Infallible>> + Send + 'static {
    stream.map(|item| {
        Ok(match item {
            Ok(update) => {
                let kind = if update.r#final { "final" } else { "update" };
                match serde_json::to_string(&update) {
                    Ok(json) => Event::default().event(kind).data(json),
                    Err(e) => Event::default()
                        .event("error")
                        .data(error_json(&tonic::Status::internal(e.to_string()))),
                }
            }
            Err(status) => Event::default().event("error").data(error_json(&status)),
        })
    })
}

async fn analyze(State(g): State<Gateway>, headers: HeaderMap, body: Bytes) -> Response {
    let req = match g.request::<pb::AnalyzeRequest>(&headers, &body) {
        Ok(r) => r,
        Err(status) => return error_response(status),
    };
    match g.service.analyze(req).await {
        // Dropping this response stream (the browser went away) drops the receiver, which the
        // engine notices and stops the search.
        Ok(resp) => Sse::new(sse_events(resp.into_inner()))
            .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
            .into_response(),
        Err(status) => error_response(status),
    }
}

async fn not_found() -> Response {
    error_response(tonic::Status::not_found(
        "no such endpoint: use POST /v1/{BestMove,Analyze,LegalMoves,ApplyMoves,ServerInfo} or GET /",
    ))
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// The gateway's routes.
pub fn router(gateway: Gateway) -> Router {
    Router::new()
        .route(
            "/",
            get(|| async { asset("text/html; charset=utf-8", crate::web::INDEX_HTML) }),
        )
        .route(
            "/app.js",
            get(|| async { asset("text/javascript; charset=utf-8", crate::web::APP_JS) }),
        )
        .route(
            "/style.css",
            get(|| async { asset("text/css; charset=utf-8", crate::web::STYLE_CSS) }),
        )
        .route("/v1/BestMove", post(best_move))
        .route("/v1/Analyze", post(analyze))
        .route("/v1/LegalMoves", post(legal_moves))
        .route("/v1/ApplyMoves", post(apply_moves))
        .route("/v1/ServerInfo", post(server_info).get(server_info))
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(MAX_REQUEST_BYTES))
        .with_state(gateway)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses() {
        assert_eq!(http_status(Code::InvalidArgument), StatusCode::BAD_REQUEST);
        assert_eq!(
            http_status(Code::ResourceExhausted),
            StatusCode::TOO_MANY_REQUESTS
        );
        assert_eq!(http_status(Code::Unauthenticated), StatusCode::UNAUTHORIZED);
        assert_eq!(
            http_status(Code::DeadlineExceeded),
            StatusCode::GATEWAY_TIMEOUT
        );
        assert_eq!(
            http_status(Code::Unavailable),
            StatusCode::SERVICE_UNAVAILABLE
        );
        assert_eq!(http_status(Code::Cancelled).as_u16(), 499);
    }
}
