//! Prometheus metrics: requests by RPC and status, latency, queue, running searches, ponders,
//! playouts, tree memory (in use, kept, budget) and reclaims, game reviews and their turns, and
//! how late timed answers left.
//!
//! Recording goes through the `metrics` facade (a no-op until a recorder is installed), so the
//! service code records unconditionally; `--metrics-listen` installs the Prometheus recorder and
//! serves its text format at `/metrics`.

use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::Duration;

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use tokio::net::TcpListener;

/// Records one finished RPC.
pub fn request(rpc: &'static str, code: tonic::Code, elapsed: Duration) {
    metrics::counter!("emergo_requests_total", "rpc" => rpc, "code" => code_name(code))
        .increment(1);
    metrics::histogram!("emergo_request_duration_seconds", "rpc" => rpc)
        .record(elapsed.as_secs_f64());
}

/// Records the queue length.
pub fn queue_length(n: usize) {
    metrics::gauge!("emergo_queue_length").set(n as f64);
}

/// Records the number of running searches.
pub fn running_searches(n: usize) {
    metrics::gauge!("emergo_running_searches").set(n as f64);
}

/// Records a finished search: its playouts, its speed, and how often its full tree was
/// reclaimed (and how many nodes that dropped).
pub fn search_finished(playouts: u64, playouts_per_second: f64, reclaims: u32, reclaimed: u64) {
    metrics::counter!("emergo_playouts_total").increment(playouts);
    metrics::gauge!("emergo_last_search_playouts_per_second").set(playouts_per_second);
    metrics::counter!("emergo_tree_reclaims_total").increment(u64::from(reclaims));
    metrics::counter!("emergo_tree_nodes_reclaimed_total").increment(reclaimed);
}

/// Records how late an answer with a time budget left, against the budget counted from the
/// request's arrival (zero when on time): what a referee's clock sees, less the network.
pub fn answer_overrun(late: Duration) {
    metrics::histogram!(ANSWER_OVERRUN).record(late.as_secs_f64());
}

/// The overrun histogram's name; its buckets are finer than the latency ones.
const ANSWER_OVERRUN: &str = "emergo_answer_overrun_seconds";

/// Records a finished game review (AnalyzeGame) and the turns it analysed.
pub fn review_finished(turns: u64) {
    metrics::counter!("emergo_reviews_total").increment(1);
    metrics::counter!("emergo_review_turns_total").increment(turns);
}

/// Records the number of ponders holding threads (`SearchOptions.ponder`).
pub fn pondering(n: usize) {
    metrics::gauge!("emergo_pondering_searches").set(n as f64);
}

/// Records a finished ponder's playouts.
pub fn ponder_finished(playouts: u64) {
    metrics::counter!("emergo_ponder_playouts_total").increment(playouts);
}

/// Records the tree-memory budget (`--max-tree-memory`).
pub fn tree_memory_budget(bytes: usize) {
    metrics::gauge!("emergo_tree_memory_budget_bytes").set(bytes as f64);
}

/// Records the tree memory in use (granted to running searches plus held by kept trees) and the
/// part held by kept trees.
pub fn tree_memory(in_use: usize, kept: usize) {
    metrics::gauge!("emergo_tree_memory_bytes").set(in_use as f64);
    metrics::gauge!("emergo_kept_tree_bytes").set(kept as f64);
}

/// The gRPC code's canonical name, e.g. `RESOURCE_EXHAUSTED`.
pub fn code_name(code: tonic::Code) -> &'static str {
    use tonic::Code::*;
    match code {
        Ok => "OK",
        Cancelled => "CANCELLED",
        Unknown => "UNKNOWN",
        InvalidArgument => "INVALID_ARGUMENT",
        DeadlineExceeded => "DEADLINE_EXCEEDED",
        NotFound => "NOT_FOUND",
        AlreadyExists => "ALREADY_EXISTS",
        PermissionDenied => "PERMISSION_DENIED",
        ResourceExhausted => "RESOURCE_EXHAUSTED",
        FailedPrecondition => "FAILED_PRECONDITION",
        Aborted => "ABORTED",
        OutOfRange => "OUT_OF_RANGE",
        Unimplemented => "UNIMPLEMENTED",
        Internal => "INTERNAL",
        Unavailable => "UNAVAILABLE",
        DataLoss => "DATA_LOSS",
        Unauthenticated => "UNAUTHENTICATED",
    }
}

/// The process-wide Prometheus recorder (installed on first use).
pub fn handle() -> Option<PrometheusHandle> {
    static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            PrometheusBuilder::new()
                .set_buckets(&[
                    0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
                ])
                .ok()?
                .set_buckets_for_metric(
                    Matcher::Full(ANSWER_OVERRUN.to_owned()),
                    &[0.0, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0],
                )
                .ok()?
                .install_recorder()
                .ok()
        })
        .clone()
}

/// The metrics port's routes: `/metrics` in the Prometheus text format.
pub fn router() -> axum::Router {
    let handle = handle();
    axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || {
            let text = handle.as_ref().map(|h| h.render()).unwrap_or_default();
            async move { text }
        }),
    )
}

/// Binds the metrics address.
pub async fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    TcpListener::bind(addr).await
}
