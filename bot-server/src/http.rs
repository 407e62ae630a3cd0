//! The HTTP/JSON gateway and the web board: the same operations as the gRPC contract, for
//! browsers and clients without a gRPC stack, served by the same process and engine.
//!
//! - `POST /v1/<Rpc>` for the unary RPCs (`BestMove`, `StopSearch`, `LegalMoves`, `ApplyMoves`,
//!   `ServerInfo`):
//!   the body and the answer are the canonical proto3 JSON mapping of the gRPC messages (pbjson).
//! - `POST /v1/Analyze`: Server-Sent Events, one `update` event per streamed update and a
//!   `final` event, then the stream closes; an `error` event if the search fails midway.
//!   Closing the connection cancels the search; `POST /v1/StopSearch` with the `searchId` of
//!   the updates ends it with its answer (a `final` event, stop reason `STOP_REASON_STOPPED`).
//! - `POST /v1/AnalyzeGame`: Server-Sent Events, one `turn` event per analysed turn and a
//!   `summary` event, each carrying the whole `GameReviewUpdate` (`{"turn": {...}}`,
//!   `{"summary": {...}}`), then the stream closes; an `error` event if the review fails midway.
//!   Closing the connection stops the review; `POST /v1/StopSearch` with its search id (the
//!   client's `options.searchId`, or the `searchId` of the turns' analyses) ends it early with
//!   its summary.
//! - Errors: `{"code": "INVALID_ARGUMENT", "message": "..."}` with the matching HTTP status,
//!   for every error of every layer (413, 405 and 415 included).
//! - `GET /` and its assets: the web board (embedded in the binary).
//! - `GET /healthz`: `200 {"status":"SERVING"}` while the server takes requests, `503
//!   {"status":"NOT_SERVING"}` once it shuts down: the gRPC health service's answer for probes
//!   and balancers that speak only HTTP. Like gRPC health it needs no token.
//! - The browser-facing policy ([`crate::http_policy`]): checked `Host`, same-origin unless
//!   `--cors-origin` lists more, `Content-Type: application/json` on JSON calls.
//!
//! Every request goes to the transport-neutral service core ([`Service`]), as the gRPC door's
//! do, so validation, admission control, limits, metrics and tracing are shared: one engine,
//! two doors. The optional bearer token is checked by the same [`BearerAuth`] as the gRPC
//! interceptor's, and an `x-emergo-timeout-ms` header gives the deadline (a value handed to
//! the core, as the gRPC door hands it the `grpc-timeout`).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::middleware::{Next, from_fn, from_fn_with_state};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use emergo_proto::v1 as pb;
use futures_util::stream::{Stream, StreamExt};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use serde::Serialize;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Code;

use crate::auth::BearerAuth;
use crate::config::{MAX_REQUEST_BYTES, ServerConfig};
use crate::error::ServiceError;
use crate::http_policy::{Policy, PolicyError, Refusal, check_json_content_type, request_host};
use crate::service::Service;

/// Shared state of the gateway's handlers.
#[derive(Clone)]
pub struct Gateway {
    service: Service,
    auth: BearerAuth,
    policy: Arc<Policy>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("auth", &self.auth)
            .finish_non_exhaustive()
    }
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

/// The gRPC code for an HTTP error status that no handler chose (axum's 405, a layer's 4xx),
/// following grpc-gateway: 405 is UNIMPLEMENTED.
fn grpc_code(status: StatusCode) -> Code {
    match status {
        StatusCode::UNAUTHORIZED => Code::Unauthenticated,
        StatusCode::FORBIDDEN => Code::PermissionDenied,
        StatusCode::NOT_FOUND => Code::NotFound,
        StatusCode::METHOD_NOT_ALLOWED | StatusCode::NOT_IMPLEMENTED => Code::Unimplemented,
        StatusCode::REQUEST_TIMEOUT | StatusCode::GATEWAY_TIMEOUT => Code::DeadlineExceeded,
        StatusCode::TOO_MANY_REQUESTS => Code::ResourceExhausted,
        StatusCode::SERVICE_UNAVAILABLE => Code::Unavailable,
        s if s.is_client_error() => Code::InvalidArgument,
        s if s.is_server_error() => Code::Internal,
        _ => Code::Unknown,
    }
}

fn error_json(code: Code, message: &str) -> String {
    serde_json::to_string(&ErrorBody {
        code: crate::metrics::code_name(code),
        message,
    })
    .unwrap_or_default()
}

/// An error answer: the HTTP status, and the gRPC code and message of the JSON body. Every
/// error the gateway sends has this shape, whichever layer refused the request.
#[derive(Debug)]
struct ApiError {
    status: StatusCode,
    code: Code,
    message: String,
}

impl ApiError {
    fn new(status: StatusCode, code: Code, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: crate::error::bounded_message(&message.into()),
        }
    }

    /// The 413 answer, with INVALID_ARGUMENT rather than RESOURCE_EXHAUSTED: in this API the
    /// latter is the retry-later answer of a busy server (429), and this body never succeeds.
    fn too_large() -> ApiError {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            Code::InvalidArgument,
            format!("request body: larger than the limit of {MAX_REQUEST_BYTES} bytes"),
        )
    }
}

impl From<ServiceError> for ApiError {
    fn from(e: ServiceError) -> ApiError {
        ApiError::new(http_status(e.code()), e.code(), e.to_string())
    }
}

impl From<Refusal> for ApiError {
    fn from(refusal: Refusal) -> ApiError {
        let (status, code) = match refusal {
            Refusal::Host(_) | Refusal::MissingHost | Refusal::Origin(_) => {
                (StatusCode::FORBIDDEN, Code::PermissionDenied)
            }
            Refusal::ContentType(_) => (StatusCode::UNSUPPORTED_MEDIA_TYPE, Code::InvalidArgument),
            Refusal::DuplicateHost => (StatusCode::BAD_REQUEST, Code::InvalidArgument),
        };
        ApiError::new(status, code, refusal.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (
            self.status,
            [(header::CONTENT_TYPE, "application/json")],
            error_json(self.code, &self.message),
        )
            .into_response()
    }
}

/// An error response for an error of the service core.
fn error_response(e: ServiceError) -> Response {
    ApiError::from(e).into_response()
}

fn json_response<T: Serialize>(value: &T) -> Response {
    match serde_json::to_string(value) {
        Ok(body) => ([(header::CONTENT_TYPE, "application/json")], body).into_response(),
        Err(e) => error_response(ServiceError::Internal(format!(
            "cannot encode the answer: {e}"
        ))),
    }
}

/// Reads a request body of at most [`MAX_REQUEST_BYTES`].
async fn read_body(body: Body) -> Result<Bytes, ApiError> {
    match Limited::new(body, MAX_REQUEST_BYTES).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) => {
            // The cause may sit under axum's and the limiter's wrappers.
            let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(&*e);
            while let Some(err) = cause {
                if err.is::<LengthLimitError>() {
                    return Err(ApiError::too_large());
                }
                if err.is::<tower_http::timeout::TimeoutError>() {
                    return Err(ApiError::new(
                        StatusCode::REQUEST_TIMEOUT,
                        Code::DeadlineExceeded,
                        "request body: stalled for longer than the server's body timeout",
                    ));
                }
                cause = err.source();
            }
            Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                Code::InvalidArgument,
                format!("request body: {e}"),
            ))
        }
    }
}

impl Gateway {
    /// A gateway over `service` for an HTTP listener on `local_addr`: the bearer token and the
    /// browser policy ([`Policy`]) come from `config`. Fails on a `--cors-origin` or
    /// `--allowed-host` value that does not parse.
    pub fn new(
        service: Service,
        config: &ServerConfig,
        local_addr: SocketAddr,
    ) -> Result<Gateway, PolicyError> {
        Ok(Gateway {
            service,
            auth: BearerAuth::new(config.auth_token.as_deref()),
            policy: Arc::new(Policy::new(config, local_addr)?),
        })
    }

    /// Reads the body, checks its content type and the auth, parses the JSON into the request
    /// message, and reads the deadline header. The body is read before its `Content-Type` is
    /// judged because an empty body needs none, and only reading tells.
    async fn request<T: serde::de::DeserializeOwned + Default>(
        &self,
        headers: &HeaderMap,
        body: Body,
    ) -> Result<(T, Option<Instant>), ApiError> {
        let body = read_body(body).await?;
        check_json_content_type(
            headers.get(header::CONTENT_TYPE).map(HeaderValue::as_bytes),
            body.is_empty(),
        )?;
        self.auth
            .check(headers.get(header::AUTHORIZATION).map(|v| v.as_bytes()))?;
        let message: T = if body.iter().all(u8::is_ascii_whitespace) {
            T::default()
        } else {
            serde_json::from_slice(&body).map_err(|e| ServiceError::invalid("request body", e))?
        };
        let deadline = match headers.get("x-emergo-timeout-ms") {
            None => None,
            Some(ms) => {
                let ms: u64 = ms
                    .to_str()
                    .ok()
                    .and_then(|s| s.trim().parse().ok())
                    .filter(|ms| *ms > 0 && *ms <= 24 * 3_600_000)
                    .ok_or_else(|| {
                        ServiceError::invalid(
                            "x-emergo-timeout-ms",
                            "expected milliseconds (1 .. 86400000)",
                        )
                    })?;
                crate::service::deadline_after(Duration::from_millis(ms))
            }
        };
        Ok((message, deadline))
    }
}

/// The JSON answer of a unary operation, or its error.
fn unary_response<T: Serialize>(answer: Result<T, ServiceError>) -> Response {
    match answer {
        Ok(answer) => json_response(&answer),
        Err(e) => error_response(e),
    }
}

async fn best_move(State(g): State<Gateway>, headers: HeaderMap, body: Body) -> Response {
    match g.request::<pb::BestMoveRequest>(&headers, body).await {
        // Dropping this future (the client went away) drops the search's, which stops it.
        Ok((req, deadline)) => unary_response(g.service.best_move(req, deadline).await),
        Err(e) => e.into_response(),
    }
}

/// A handler for an operation that does not search (answered at once, no deadline needed).
macro_rules! instant {
    ($name:ident, $req:ty) => {
        async fn $name(State(g): State<Gateway>, headers: HeaderMap, body: Body) -> Response {
            match g.request::<$req>(&headers, body).await {
                Ok((req, _deadline)) => unary_response(g.service.$name(req)),
                Err(e) => e.into_response(),
            }
        }
    };
}

instant!(legal_moves, pb::LegalMovesRequest);
instant!(apply_moves, pb::ApplyMovesRequest);
instant!(server_info, pb::ServerInfoRequest);
instant!(stop_search, pb::StopSearchRequest);

/// SSE events for the messages of a stream (an analysis's updates, a review's turns), each
/// named by `kind`; the stream ends after the last one.
fn sse_events<T: Serialize + Send + 'static>(
    stream: impl Stream<Item = Result<T, ServiceError>> + Send + 'static,
    kind: fn(&T) -> &'static str,
) -> impl Stream<Item = Result<Event, Infallible>> + Send + 'static {
    stream.map(move |item| {
        Ok(match item {
            Ok(update) => {
                let kind = kind(&update);
                match serde_json::to_string(&update) {
                    Ok(json) => Event::default().event(kind).data(json),
                    Err(e) => Event::default()
                        .event("error")
                        .data(error_json(Code::Internal, &e.to_string())),
                }
            }
            Err(e) => Event::default().event("error").data(error_json(
                e.code(),
                &crate::error::bounded_message(&e.to_string()),
            )),
        })
    })
}

async fn analyze(State(g): State<Gateway>, headers: HeaderMap, body: Body) -> Response {
    let (req, deadline) = match g.request::<pb::AnalyzeRequest>(&headers, body).await {
        Ok(r) => r,
        Err(e) => return e.into_response(),
    };
    match g.service.analyze(req, deadline).await {
        // Dropping this response stream (the browser went away) drops the receiver, which the
        // engine notices and stops the search.
        Ok(rx) => {
            let kind = |u: &pb::AnalysisUpdate| if u.r#final { "final" } else { "update" };
            Sse::new(sse_events(ReceiverStream::new(rx), kind))
                .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
                .into_response()
        }
        Err(e) => error_response(e),
    }
}

async fn analyze_game(State(g): State<Gateway>, headers: HeaderMap, body: Body) -> Response {
    let (req, deadline) = match g.request::<pb::AnalyzeGameRequest>(&headers, body).await {
        Ok(r) => r,
        Err(e) => return e.into_response(),
    };
    match g.service.analyze_game(req, deadline).await {
        // As for Analyze: a browser that goes away stops the review.
        Ok(rx) => {
            let kind = |u: &pb::GameReviewUpdate| match u.update {
                Some(pb::game_review_update::Update::Summary(_)) => "summary",
                _ => "turn",
            };
            Sse::new(sse_events(ReceiverStream::new(rx), kind))
                .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
                .into_response()
        }
        Err(e) => error_response(e),
    }
}

async fn not_found() -> Response {
    ApiError::new(
        StatusCode::NOT_FOUND,
        Code::NotFound,
        "no such endpoint: use POST /v1/{BestMove,Analyze,AnalyzeGame,StopSearch,LegalMoves,ApplyMoves,ServerInfo}, GET / or GET /healthz",
    )
    .into_response()
}

/// `GET /healthz`. Why no auth: a probe carries no token, and the answer tells nothing a
/// refused connection would not (the gRPC health service is open for the same reason).
async fn healthz(State(g): State<Gateway>) -> Response {
    let (status, word) = if g.service.engine().is_shutting_down() {
        (StatusCode::SERVICE_UNAVAILABLE, "NOT_SERVING")
    } else {
        (StatusCode::OK, "SERVING")
    };
    (
        status,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        format!("{{\"status\":\"{word}\"}}"),
    )
        .into_response()
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

/// Refuses a request whose `Host` or `Origin` the policy does not accept, before anything runs.
async fn guard(State(policy): State<Arc<Policy>>, req: Request, next: Next) -> Response {
    let origin = req.headers().get(header::ORIGIN).map(HeaderValue::as_bytes);
    let checked = request_host(req.uri(), req.headers())
        .and_then(|host| policy.check_host(host))
        .and_then(|host| policy.check_origin(origin, host.as_ref()));
    match checked {
        Ok(()) => next.run(req).await,
        Err(refusal) => ApiError::from(refusal).into_response(),
    }
}

/// Answers 413 from the `Content-Length` header alone, so an oversized body is never read.
async fn declared_length(req: Request, next: Next) -> Response {
    if let Some(value) = req.headers().get(header::CONTENT_LENGTH) {
        match value
            .to_str()
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
        {
            Some(n) if n > MAX_REQUEST_BYTES as u64 => {
                return ApiError::too_large().into_response();
            }
            Some(_) => {}
            None => {
                return ApiError::new(
                    StatusCode::BAD_REQUEST,
                    Code::InvalidArgument,
                    "Content-Length: expected a number of bytes",
                )
                .into_response();
            }
        }
    }
    next.run(req).await
}

/// The fallback of a route for the methods it does not serve: a 405 naming the ones it does
/// (axum adds the `Allow` header).
fn wrong_method(
    allowed: &'static str,
) -> impl Fn(Method, Uri) -> std::future::Ready<Response> + Clone + Send + Sync + 'static {
    move |method, uri| {
        std::future::ready(
            ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                Code::Unimplemented,
                format!(
                    "method {method} is not allowed on {}: use {allowed}",
                    uri.path()
                ),
            )
            .into_response(),
        )
    }
}

/// Turns any error answer that is not yet the JSON error body into one, so clients parse every
/// error the same way. The handlers and the policy already answer in JSON; this is the safety
/// net for whatever else a layer may answer.
async fn json_errors(req: Request, next: Next) -> Response {
    let path = req.uri().path().to_owned();
    let response = next.run(req).await;
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let reason = status.canonical_reason().unwrap_or("request failed");
    let error = ApiError::new(status, grpc_code(status), format!("{path}: {reason}"));
    let (mut parts, _) = response.into_parts();
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Response::from_parts(parts, Body::from(error_json(error.code, &error.message)))
}

/// The gateway's routes, behind its policy. From the outside in: every error becomes the JSON
/// body; Host and Origin are checked; CORS answers preflights from listed origins and marks
/// their answers; an oversized `Content-Length` is refused; then the handlers (which check the
/// content type and the auth).
pub fn router(gateway: Gateway) -> Router {
    let policy = gateway.policy.clone();
    let mut app = Router::new();
    for a in crate::web::ASSETS {
        let (content_type, body) = (a.content_type, a.body);
        app = app.route(
            a.path,
            get(move || async move { asset(content_type, body) }).fallback(wrong_method("GET")),
        );
    }
    app = app
        .route(
            "/v1/BestMove",
            post(best_move).fallback(wrong_method("POST")),
        )
        .route("/v1/Analyze", post(analyze).fallback(wrong_method("POST")))
        .route(
            "/v1/AnalyzeGame",
            post(analyze_game).fallback(wrong_method("POST")),
        )
        .route(
            "/v1/LegalMoves",
            post(legal_moves).fallback(wrong_method("POST")),
        )
        .route(
            "/v1/ApplyMoves",
            post(apply_moves).fallback(wrong_method("POST")),
        )
        .route(
            "/v1/StopSearch",
            post(stop_search).fallback(wrong_method("POST")),
        )
        .route(
            "/v1/ServerInfo",
            post(server_info)
                .get(server_info)
                .fallback(wrong_method("POST or GET")),
        )
        .fallback(not_found)
        .layer(from_fn(declared_length));
    if let Some(cors) = policy.cors() {
        app = app.layer(cors);
    }
    // Health after the policy's layers: a probe sends whatever Host its platform uses (a pod's
    // address), and the answer is no secret worth guarding against rebinding.
    app.layer(from_fn_with_state(policy, guard))
        .route("/healthz", get(healthz).fallback(wrong_method("GET")))
        .layer(from_fn(json_errors))
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
        assert_eq!(
            grpc_code(StatusCode::METHOD_NOT_ALLOWED),
            Code::Unimplemented
        );
        assert_eq!(
            grpc_code(StatusCode::PAYLOAD_TOO_LARGE),
            Code::InvalidArgument
        );
    }
}
