//! What a load test measures as it runs: each request's [`Outcome`] counted into one shared
//! [`LoadStats`] — two fixed-size latency histograms and a few counters, so memory stays the
//! same whatever `--requests` is.

use std::collections::BTreeMap;
use std::time::Duration;

use emergo_bot_server::metrics::code_name;
use emergo_proto::v1 as pb;
use hdrhistogram::Histogram;
use tonic::Code;

use crate::client::ClientError;

/// Largest latency the histograms resolve: an hour, in microseconds. Slower answers are clamped
/// to it rather than lost, so counts stay right.
const MAX_LATENCY_US: u64 = 3_600_000_000;

/// Label for an Analyze stream that ended without its final update: not a gRPC status, but a
/// broken contract worth counting apart from real codes.
pub(super) const NO_FINAL_UPDATE: &str = "NO_FINAL_UPDATE";

/// How one request ended.
pub(super) enum Outcome {
    /// Answered: playouts of the final statistics (of a review: of all its turns), turns
    /// reviewed (0 for a search) and the stop reason.
    Ok {
        playouts: u64,
        turns: u64,
        stop_reason: i32,
    },
    /// Failed with a gRPC code (or [`NO_FINAL_UPDATE`]) and the server's message.
    Failed { code: &'static str, message: String },
}

/// Everything measured so far. Shared behind a mutex: it is held for a microsecond per request,
/// far below the request rate any search server sustains, and one shared tally keeps memory
/// independent of the number of clients.
pub(super) struct LoadStats {
    pub(super) ok: u64,
    pub(super) failed: u64,
    pub(super) playouts: u64,
    pub(super) turns: u64,
    /// Latency of answered requests, microseconds.
    pub(super) latency: Histogram<u64>,
    /// Latency of RESOURCE_EXHAUSTED refusals, microseconds: they should be fast, and mixing
    /// them with answers would hide both.
    pub(super) refused: Histogram<u64>,
    pub(super) errors: BTreeMap<&'static str, u64>,
    /// The first message seen for each code, so a run full of errors says why.
    pub(super) error_examples: BTreeMap<&'static str, String>,
    pub(super) stop_reasons: BTreeMap<String, u64>,
}

impl LoadStats {
    /// Nothing measured yet.
    pub(super) fn new() -> Result<LoadStats, ClientError> {
        Ok(LoadStats {
            ok: 0,
            failed: 0,
            playouts: 0,
            turns: 0,
            latency: latency_histogram()?,
            refused: latency_histogram()?,
            errors: BTreeMap::new(),
            error_examples: BTreeMap::new(),
            stop_reasons: BTreeMap::new(),
        })
    }

    /// Counts one request that ended with `outcome` after `elapsed`.
    pub(super) fn record(&mut self, outcome: Outcome, elapsed: Duration) {
        let micros = latency_micros(elapsed);
        match outcome {
            Outcome::Ok {
                playouts,
                turns,
                stop_reason,
            } => {
                self.ok += 1;
                self.playouts += playouts;
                self.turns += turns;
                self.latency.saturating_record(micros);
                *self
                    .stop_reasons
                    .entry(stop_reason_name(stop_reason))
                    .or_insert(0) += 1;
            }
            Outcome::Failed { code, message } => {
                self.failed += 1;
                if code == code_name(Code::ResourceExhausted) {
                    self.refused.saturating_record(micros);
                }
                *self.errors.entry(code).or_insert(0) += 1;
                self.error_examples.entry(code).or_insert(message);
            }
        }
    }
}

/// `TIME` for `STOP_REASON_TIME`; unknown numbers (a newer server) stay visible as numbers.
fn stop_reason_name(value: i32) -> String {
    match pb::StopReason::try_from(value) {
        Ok(r) => r
            .as_str_name()
            .trim_start_matches("STOP_REASON_")
            .to_owned(),
        Err(_) => format!("STOP_REASON_{value}"),
    }
}

/// An empty histogram of latencies in microseconds, 1 µs to [`MAX_LATENCY_US`].
pub(super) fn latency_histogram() -> Result<Histogram<u64>, ClientError> {
    Histogram::new_with_bounds(1, MAX_LATENCY_US, 3)
        .map_err(|e| ClientError::Invalid(format!("latency histogram: {e}")))
}

/// A latency as the histograms take it: whole microseconds, clamped to their range.
pub(super) fn latency_micros(elapsed: Duration) -> u64 {
    u64::try_from(elapsed.as_micros())
        .unwrap_or(u64::MAX)
        .clamp(1, MAX_LATENCY_US)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_reason_names() {
        assert_eq!(stop_reason_name(pb::StopReason::Time as i32), "TIME");
        assert_eq!(
            stop_reason_name(pb::StopReason::BestMoveSettled as i32),
            "BEST_MOVE_SETTLED"
        );
        assert_eq!(stop_reason_name(99), "STOP_REASON_99");
    }

    #[test]
    fn tally_separates_answers_and_refusals() {
        let mut t = LoadStats::new().unwrap();
        t.record(
            Outcome::Ok {
                playouts: 1000,
                turns: 0,
                stop_reason: pb::StopReason::Time as i32,
            },
            Duration::from_millis(100),
        );
        t.record(
            Outcome::Failed {
                code: "RESOURCE_EXHAUSTED",
                message: "busy".to_owned(),
            },
            Duration::from_micros(300),
        );
        t.record(
            Outcome::Failed {
                code: "RESOURCE_EXHAUSTED",
                message: "busy again".to_owned(),
            },
            Duration::ZERO,
        );
        assert_eq!((t.ok, t.failed, t.playouts), (1, 2, 1000));
        assert_eq!(t.latency.len(), 1);
        assert_eq!(t.refused.len(), 2);
        assert_eq!(t.errors["RESOURCE_EXHAUSTED"], 2);
        assert_eq!(t.error_examples["RESOURCE_EXHAUSTED"], "busy");
        assert_eq!(t.stop_reasons["TIME"], 1);
    }
}
