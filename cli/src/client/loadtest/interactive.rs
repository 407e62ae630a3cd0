//! The interactive clients of `emergo loadtest --interactive-clients K`: BestMoves at
//! interactive priority, back to back while the load runs, their latency kept apart — what a
//! person at a board would see while the server works through the load.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use emergo_bot_server::metrics::code_name;
use emergo_proto::v1 as pb;
use hdrhistogram::Histogram;
use tonic::Code;

use super::Plan;
use super::report::{InteractiveReport, Latency};
use super::stats::{latency_histogram, latency_micros};
use crate::client::flags::budget_ms;
use crate::client::{Client, ClientError};

/// The interactive BestMoves' results.
pub(super) struct InteractiveTally {
    ok: u64,
    failed: u64,
    errors: BTreeMap<&'static str, u64>,
    latency: Histogram<u64>,
}

impl InteractiveTally {
    /// Nothing measured yet.
    pub(super) fn new() -> Result<InteractiveTally, ClientError> {
        Ok(InteractiveTally {
            ok: 0,
            failed: 0,
            errors: BTreeMap::new(),
            latency: latency_histogram()?,
        })
    }

    /// The report's figures for `clients` clients asking for `time` each.
    pub(super) fn report(&self, clients: usize, time: Duration) -> InteractiveReport {
        InteractiveReport {
            clients,
            time_ms: u32::try_from(time.as_millis()).unwrap_or(u32::MAX),
            ok: self.ok,
            failed: self.failed,
            errors: self.errors.clone(),
            latency_ms: Latency::of(&self.latency),
        }
    }
}

/// One interactive client: BestMoves at interactive priority, back to back, until `done`.
pub(super) async fn interactive_client(
    mut client: Client,
    plan: Arc<Plan>,
    time: Duration,
    done: Arc<AtomicBool>,
    tally: Arc<Mutex<InteractiveTally>>,
) {
    let mut n = 0u64;
    while !done.load(Ordering::Relaxed) {
        n += 1;
        let mut req = tonic::Request::new(pb::BestMoveRequest {
            position: Some(pb::Position {
                fen: plan.position.fen.clone(),
                moves: Vec::new(),
            }),
            limits: Some(pb::Limits {
                max_time_ms: Some(budget_ms(time)),
                max_playouts: None,
                clock: None,
            }),
            options: Some(pb::SearchOptions {
                threads: 1,
                seed: n,
                priority: pb::Priority::Interactive as i32,
                ..pb::SearchOptions::default()
            }),
        });
        req.set_timeout(plan.timeout);
        let began = Instant::now();
        let result = tokio::time::timeout(plan.timeout, client.best_move(req)).await;
        let micros = latency_micros(began.elapsed());
        let mut t = tally.lock().unwrap_or_else(PoisonError::into_inner);
        match result {
            Ok(Ok(_)) => {
                t.ok += 1;
                t.latency.saturating_record(micros);
            }
            Ok(Err(status)) => {
                t.failed += 1;
                *t.errors.entry(code_name(status.code())).or_insert(0) += 1;
            }
            Err(_) => {
                t.failed += 1;
                *t.errors
                    .entry(code_name(Code::DeadlineExceeded))
                    .or_insert(0) += 1;
            }
        }
    }
}
