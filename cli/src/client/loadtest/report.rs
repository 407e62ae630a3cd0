//! The load test's report: latency percentiles (answers, lateness past the budget, refusals),
//! throughput, errors and stop reasons, as one JSON object (`--json`) or a table.

use std::collections::BTreeMap;

use comfy_table::Table;
use emergo_bot_server::metrics::code_name;
use emergo_proto::v1 as pb;
use hdrhistogram::Histogram;
use serde::Serialize;
use tonic::Code;

use super::stats::LoadStats;
use super::{LoadTestArgs, Plan, Rpc};
use crate::client::Client;
use crate::client::table::{self, Style};

/// Latency percentiles of answered requests, milliseconds.
#[derive(Debug, Serialize)]
pub(super) struct Latency {
    p50: f64,
    p90: f64,
    p99: f64,
    max: f64,
    mean: f64,
}

/// How late answers with a time budget came, milliseconds: each answer's latency less the
/// budget, 0 when on time.
#[derive(Debug, Serialize)]
struct Late {
    p50: f64,
    p99: f64,
    max: f64,
}

impl Late {
    /// From the answers' latency: `max(0, latency − budget)` keeps their order, so its
    /// percentiles are the latency's less the budget.
    fn of(latency: &Latency, budget_ms: u32) -> Late {
        let late = |ms: f64| (ms - f64::from(budget_ms)).max(0.0);
        Late {
            p50: late(latency.p50),
            p99: late(latency.p99),
            max: late(latency.max),
        }
    }
}

/// Latency of refusals, milliseconds.
#[derive(Debug, Serialize)]
struct RefusedLatency {
    count: u64,
    p50: f64,
    p99: f64,
    max: f64,
}

/// The budget each request asked for.
#[derive(Debug, Serialize)]
struct RequestBudget {
    time_ms: Option<u32>,
    playouts: Option<u64>,
}

/// Reviews (`--rpc review`): the rate in games and turns.
#[derive(Debug, Serialize)]
struct ReviewRate {
    games_per_minute: f64,
    turns: u64,
    turns_per_second: f64,
}

/// The interactive BestMoves sent alongside the load (`--interactive-clients`).
#[derive(Debug, Serialize)]
pub(super) struct InteractiveReport {
    pub(super) clients: usize,
    pub(super) time_ms: u32,
    pub(super) ok: u64,
    pub(super) failed: u64,
    pub(super) errors: BTreeMap<&'static str, u64>,
    pub(super) latency_ms: Latency,
}

/// What the server said about itself before the run (best effort: behind a load balancer this
/// is one replica).
#[derive(Debug, Serialize)]
pub(super) struct ServerSummary {
    replica: String,
    version: String,
    thread_budget: u32,
    max_queue: u32,
    max_queue_wait_ms: u32,
}

/// The final report: the `--json` object, and the source of the table.
#[derive(Debug, Serialize)]
pub(super) struct Report {
    server: String,
    rpc: &'static str,
    clients: usize,
    requests: u64,
    ok: u64,
    failed: u64,
    errors: BTreeMap<&'static str, u64>,
    error_examples: BTreeMap<&'static str, String>,
    refusal_rate: f64,
    seconds: f64,
    requests_per_second: f64,
    playouts: u64,
    playouts_per_second: f64,
    latency_ms: Latency,
    /// Searches with a time budget: how late answers came, the latency less the budget (0 when
    /// on time), what a referee's clock would see.
    late_ms: Option<Late>,
    refused_latency_ms: RefusedLatency,
    stop_reasons: BTreeMap<String, u64>,
    budget: RequestBudget,
    threads: u32,
    game_ids: bool,
    review: Option<ReviewRate>,
    interactive: Option<InteractiveReport>,
    server_info: Option<ServerSummary>,
}

fn ms(micros: u64) -> f64 {
    micros as f64 / 1000.0
}

impl Latency {
    /// The percentiles of a histogram of microseconds (all 0 when it is empty).
    pub(super) fn of(h: &Histogram<u64>) -> Latency {
        Latency {
            p50: ms(h.value_at_quantile(0.50)),
            p90: ms(h.value_at_quantile(0.90)),
            p99: ms(h.value_at_quantile(0.99)),
            max: ms(h.max()),
            mean: h.mean() / 1000.0,
        }
    }
}

impl Report {
    /// The report of a finished run.
    pub(super) fn new(
        args: &LoadTestArgs,
        plan: &Plan,
        tally: LoadStats,
        seconds: f64,
        interactive: Option<InteractiveReport>,
        server_info: Option<ServerSummary>,
    ) -> Report {
        let refused = tally
            .errors
            .get(code_name(Code::ResourceExhausted))
            .copied()
            .unwrap_or(0);
        let total = tally.ok + tally.failed;
        let per_second = |n: u64| {
            if seconds > 0.0 {
                n as f64 / seconds
            } else {
                0.0
            }
        };
        let r = &tally.refused;
        Report {
            server: args.connect.server.clone(),
            rpc: plan.rpc.name(),
            clients: args.clients,
            requests: total,
            ok: tally.ok,
            failed: tally.failed,
            refusal_rate: if total > 0 {
                refused as f64 / total as f64
            } else {
                0.0
            },
            seconds,
            requests_per_second: per_second(tally.ok),
            playouts: tally.playouts,
            playouts_per_second: per_second(tally.playouts),
            // An empty histogram answers 0 everywhere, which is what an empty report should say.
            latency_ms: Latency::of(&tally.latency),
            late_ms: plan
                .limits
                .max_time_ms
                .filter(|_| plan.rpc != Rpc::Review && tally.ok > 0)
                .map(|budget| Late::of(&Latency::of(&tally.latency), budget)),
            refused_latency_ms: RefusedLatency {
                count: r.len(),
                p50: ms(r.value_at_quantile(0.50)),
                p99: ms(r.value_at_quantile(0.99)),
                max: ms(r.max()),
            },
            errors: tally.errors,
            error_examples: tally.error_examples,
            stop_reasons: tally.stop_reasons,
            budget: RequestBudget {
                time_ms: plan.limits.max_time_ms,
                playouts: plan.limits.max_playouts,
            },
            threads: plan.threads,
            game_ids: plan.game_ids,
            review: (plan.rpc == Rpc::Review).then(|| ReviewRate {
                games_per_minute: per_second(tally.ok) * 60.0,
                turns: tally.turns,
                turns_per_second: per_second(tally.turns),
            }),
            interactive,
            server_info,
        }
    }

    /// The report as a two-column table, for people.
    pub(super) fn table(&self) -> Table {
        let list = |pairs: Vec<(String, u64)>| {
            if pairs.is_empty() {
                "none".to_owned()
            } else {
                pairs
                    .iter()
                    .map(|(k, v)| format!("{k}: {v}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            }
        };
        let budget = match (self.budget.time_ms, self.budget.playouts) {
            (Some(t), Some(p)) => format!("{t} ms or {p} playouts"),
            (Some(t), None) => format!("{t} ms"),
            (None, Some(p)) => format!("{p} playouts"),
            (None, None) => "none".to_owned(),
        };
        let mut table = table::new(Style::Ascii);
        table.set_header(vec!["loadtest", "result"]);
        let mut target = self.server.clone();
        if let Some(info) = &self.server_info {
            target += &format!(
                "\n{} {} (threads {}, queue {} x {} ms)",
                info.replica,
                info.version,
                info.thread_budget,
                info.max_queue,
                info.max_queue_wait_ms
            );
        }
        table.add_row(vec!["server".to_owned(), target]);
        table.add_row(vec![
            "load".to_owned(),
            format!(
                "{} x {} clients, {budget}{}, {} thread(s) each{}",
                self.rpc,
                self.clients,
                if self.review.is_some() {
                    " per turn"
                } else {
                    ""
                },
                self.threads,
                if self.game_ids { ", game ids" } else { "" }
            ),
        ]);
        table.add_row(vec![
            "requests ok".to_owned(),
            format!("{} / {}", self.ok, self.requests),
        ]);
        table.add_row(vec![
            "wall time".to_owned(),
            format!("{:.2} s", self.seconds),
        ]);
        let percentiles = |l: &Latency| {
            format!(
                "p50 {:.1}  p90 {:.1}  p99 {:.1}  max {:.1}",
                l.p50, l.p90, l.p99, l.max
            )
        };
        match &self.review {
            Some(r) => {
                table.add_row(vec![
                    "throughput".to_owned(),
                    format!(
                        "{:.1} games reviewed/min ({} turns, {:.1} turns/s), {:.0} playouts/s",
                        r.games_per_minute, r.turns, r.turns_per_second, self.playouts_per_second
                    ),
                ]);
                table.add_row(vec![
                    "latency ms per game".to_owned(),
                    percentiles(&self.latency_ms),
                ]);
            }
            None => {
                table.add_row(vec![
                    "throughput".to_owned(),
                    format!(
                        "{:.1} requests/s, {:.0} playouts/s",
                        self.requests_per_second, self.playouts_per_second
                    ),
                ]);
                table.add_row(vec![
                    "latency ms (ok)".to_owned(),
                    percentiles(&self.latency_ms),
                ]);
                if let Some(l) = &self.late_ms {
                    table.add_row(vec![
                        "late ms (latency - budget)".to_owned(),
                        format!("p50 {:.1}  p99 {:.1}  max {:.1}", l.p50, l.p99, l.max),
                    ]);
                }
            }
        }
        if let Some(i) = &self.interactive {
            let mut text = format!(
                "{} x bestmove {} ms, interactive: {} ok, {} failed\n{}",
                i.clients,
                i.time_ms,
                i.ok,
                i.failed,
                percentiles(&i.latency_ms)
            );
            for (code, n) in &i.errors {
                text += &format!("\n{code}: {n}");
            }
            table.add_row(vec!["interactive latency ms".to_owned(), text]);
        }
        let r = &self.refused_latency_ms;
        table.add_row(vec![
            "latency ms (refused)".to_owned(),
            if r.count == 0 {
                "none refused".to_owned()
            } else {
                format!(
                    "p50 {:.1}  p99 {:.1}  max {:.1}  ({} refusals)",
                    r.p50, r.p99, r.max, r.count
                )
            },
        ]);
        table.add_row(vec![
            "errors".to_owned(),
            list(
                self.errors
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), *v))
                    .collect(),
            ),
        ]);
        table.add_row(vec![
            "refusal rate".to_owned(),
            format!("{:.1}%", 100.0 * self.refusal_rate),
        ]);
        table.add_row(vec![
            "stop reasons".to_owned(),
            list(
                self.stop_reasons
                    .iter()
                    .map(|(k, v)| (k.clone(), *v))
                    .collect(),
            ),
        ]);
        for (code, message) in &self.error_examples {
            table.add_row(vec![format!("first {code}"), message.clone()]);
        }
        table
    }
}

/// Asks the server about itself; `None` when it will not say (the run goes on regardless).
pub(super) async fn server_summary(client: &mut Client) -> Option<ServerSummary> {
    let info = client
        .server_info(pb::ServerInfoRequest {})
        .await
        .ok()?
        .into_inner();
    let limits = info.limits.unwrap_or_default();
    Some(ServerSummary {
        replica: info.replica,
        version: info.version,
        thread_budget: limits.thread_budget,
        max_queue: limits.max_queue,
        max_queue_wait_ms: limits.max_queue_wait_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_is_latency_past_the_budget() {
        let latency = Latency {
            p50: 98.0,
            p90: 101.0,
            p99: 104.5,
            max: 130.0,
            mean: 99.0,
        };
        let l = Late::of(&latency, 100);
        assert_eq!((l.p50, l.p99, l.max), (0.0, 4.5, 30.0));
    }
}
