//! Results: running tallies, the text tables and the JSON lines.

use comfy_table::Table;
use serde_json::{Value, json};

use super::elo::{EloEstimate, estimate};
use super::game::GameReport;
use super::spec::{EngineKind, EngineSpec};
use crate::client::table::{self, Style, right_align};
use crate::termination::Termination;

/// One engine's totals.
#[derive(Clone, Debug, Default)]
struct EngineTally {
    games: u32,
    wins: u32,
    draws: u32,
    losses: u32,
    moves: u64,
    playouts: u64,
    think_ms: f64,
    moves_with_reuse: u64,
    reused_visits: u64,
    retries: u64,
    /// Servers with a time budget: each answer's lateness, milliseconds (see
    /// `SideStats::late_ms`).
    late_ms: Vec<u64>,
    timeouts: u32,
    time_forfeits: u32,
    illegal_moves: u32,
    failures: u32,
}

impl EngineTally {
    fn points(&self) -> f64 {
        f64::from(self.wins) + 0.5 * f64::from(self.draws)
    }
}

/// Everything needed for the final report, filled game by game.
pub struct MatchTally {
    engines: Vec<EngineSpec>,
    pairings: Vec<(usize, usize)>,
    /// The first engine's score in each game of each pairing.
    pair_scores: Vec<Vec<f64>>,
    per_engine: Vec<EngineTally>,
    /// Games by termination text, in order of first appearance.
    terminations: Vec<(&'static str, u32)>,
}

impl MatchTally {
    /// An empty tally.
    pub fn new(engines: Vec<EngineSpec>, pairings: Vec<(usize, usize)>) -> MatchTally {
        MatchTally {
            per_engine: vec![EngineTally::default(); engines.len()],
            pair_scores: vec![Vec::new(); pairings.len()],
            engines,
            pairings,
            terminations: Vec::new(),
        }
    }

    /// Adds a finished game.
    pub fn add(&mut self, r: &GameReport) {
        let g = r.scheduled;
        let (a, _) = self.pairings[g.pairing];
        let a_score = if g.white == a {
            r.white_score()
        } else {
            1.0 - r.white_score()
        };
        self.pair_scores[g.pairing].push(a_score);
        let term = r.termination.as_str();
        match self.terminations.iter_mut().find(|(t, _)| *t == term) {
            Some((_, n)) => *n += 1,
            None => self.terminations.push((term, 1)),
        }
        for (side, engine) in [g.white, g.black].into_iter().enumerate() {
            let score = if side == 0 {
                r.white_score()
            } else {
                1.0 - r.white_score()
            };
            let stats = &r.sides[side];
            let t = &mut self.per_engine[engine];
            t.games += 1;
            match score {
                s if s >= 1.0 => t.wins += 1,
                s if s <= 0.0 => {
                    t.losses += 1;
                    // Only the side that lost by adjudication caused it.
                    match r.termination {
                        Termination::Timeout(_) => t.timeouts += 1,
                        Termination::TimeForfeit(_) => t.time_forfeits += 1,
                        Termination::IllegalMove(_) => t.illegal_moves += 1,
                        Termination::EngineFailure(_) => t.failures += 1,
                        Termination::Rules(_) | Termination::MoveCap => {}
                    }
                }
                _ => t.draws += 1,
            }
            t.moves += u64::from(stats.moves);
            t.playouts += stats.playouts;
            t.think_ms += stats.think.as_secs_f64() * 1000.0;
            t.moves_with_reuse += u64::from(stats.moves_with_reuse);
            t.reused_visits += stats.reused_visits.iter().sum::<u64>();
            t.retries += u64::from(stats.retries);
            t.late_ms.extend_from_slice(&stats.late_ms);
        }
    }

    /// The first engine's score in each finished game of pairing `p`, in finishing order.
    pub fn pair_scores(&self, p: usize) -> &[f64] {
        self.pair_scores.get(p).map_or(&[], Vec::as_slice)
    }

    /// Games played so far.
    pub fn games(&self) -> usize {
        self.pair_scores.iter().map(Vec::len).sum()
    }

    /// A one-line standing for the progress bar: points of each engine.
    pub fn standing(&self) -> String {
        self.engines
            .iter()
            .zip(&self.per_engine)
            .map(|(e, t)| format!("{} {}", e.name, fmt_points(t.points())))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn elo(&self, p: usize) -> Option<EloEstimate> {
        estimate(&self.pair_scores[p])
    }

    /// The crosstable: the row engine's points against each column engine, and its total.
    pub fn crosstable(&self) -> Table {
        let n = self.engines.len();
        let mut points = vec![vec![None::<(f64, usize)>; n]; n];
        for (p, &(a, b)) in self.pairings.iter().enumerate() {
            let s = &self.pair_scores[p];
            let pa: f64 = s.iter().sum();
            points[a][b] = Some((pa, s.len()));
            points[b][a] = Some((s.len() as f64 - pa, s.len()));
        }
        let mut table = table::new(Style::Markdown);
        let mut header = vec!["#".to_owned(), "engine".to_owned()];
        header.extend((1..=n).map(|i| i.to_string()));
        header.extend(["points".to_owned(), "score".to_owned()]);
        table.set_header(header);
        for (i, (cells, t)) in points.iter().zip(&self.per_engine).enumerate() {
            let mut row = vec![(i + 1).to_string(), self.engines[i].name.clone()];
            for (j, cell) in cells.iter().enumerate() {
                row.push(match cell {
                    _ if i == j => "-".to_owned(),
                    Some((pts, games)) => format!("{}/{games}", fmt_points(*pts)),
                    None => String::new(),
                });
            }
            row.push(format!("{}/{}", fmt_points(t.points()), t.games));
            row.push(pct(t.points(), t.games as usize));
            table.add_row(row);
        }
        right_align(&mut table, 2..n + 4);
        table
    }

    /// One row per pairing: W/D/L of the first engine, score, Elo and its 95% interval.
    pub fn pairings_table(&self) -> Table {
        let mut table = table::new(Style::Markdown);
        table.set_header(vec![
            "engine", "opponent", "games", "W", "D", "L", "score", "Elo", "95% CI",
        ]);
        for (p, &(a, b)) in self.pairings.iter().enumerate() {
            let s = &self.pair_scores[p];
            let (w, d, l) = wdl(s);
            let (elo, ci) = match self.elo(p) {
                Some(e) => (
                    format!("{}{:+.0}", if e.clamped { "~" } else { "" }, e.elo),
                    format!("[{:+.0}, {:+.0}]", e.low, e.high),
                ),
                None => ("-".to_owned(), "-".to_owned()),
            };
            table.add_row(vec![
                self.engines[a].name.clone(),
                self.engines[b].name.clone(),
                s.len().to_string(),
                w.to_string(),
                d.to_string(),
                l.to_string(),
                pct(s.iter().sum(), s.len()),
                elo,
                ci,
            ]);
        }
        right_align(&mut table, 2..9);
        table
    }

    /// One row per engine: what it is, its result, speed, tree reuse (servers) and failures.
    pub fn engines_table(&self) -> Table {
        let mut table = table::new(Style::Markdown);
        table.set_header(vec![
            "#",
            "engine",
            "what",
            "moves",
            "ms/move",
            "playouts/move (ab: nodes)",
            "moves with reuse",
            "late ms p50/p99/max",
            "retries",
            "lost on time: clock/no answer; illegal/failure",
        ]);
        for (i, (e, t)) in self.engines.iter().zip(&self.per_engine).enumerate() {
            let reuse = if keeps_tree(e) {
                format!(
                    "{}/{} ({})",
                    t.moves_with_reuse,
                    t.moves,
                    pct(t.moves_with_reuse as f64, t.moves as usize)
                )
            } else {
                "n/a".to_owned()
            };
            table.add_row(vec![
                (i + 1).to_string(),
                e.name.clone(),
                e.describe(),
                t.moves.to_string(),
                format!("{:.1}", t.think_ms / (t.moves.max(1) as f64)),
                if e.searches() || e.kind == EngineKind::AlphaBeta {
                    format!("{:.0}", t.playouts as f64 / (t.moves.max(1) as f64))
                } else {
                    "n/a".to_owned()
                },
                reuse,
                match late(&t.late_ms) {
                    Some(l) => format!("{}/{}/{}", l.p50, l.p99, l.max),
                    None => "n/a".to_owned(),
                },
                t.retries.to_string(),
                format!(
                    "{}/{}; {}/{}",
                    t.time_forfeits, t.timeouts, t.illegal_moves, t.failures
                ),
            ]);
        }
        right_align(&mut table, 3..10);
        table
    }

    /// How the games ended, most frequent first: `no-units 5, move-cap 1`.
    pub fn terminations(&self) -> String {
        let mut t = self.terminations.clone();
        t.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        t.iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The final `{"type": "summary", ...}` object.
    pub fn summary_json(&self, seed: u64, schedule: &str, openings: &str) -> Value {
        let pairings: Vec<Value> = self
            .pairings
            .iter()
            .enumerate()
            .map(|(p, &(a, b))| {
                let s = &self.pair_scores[p];
                let (w, d, l) = wdl(s);
                let e = self.elo(p);
                json!({
                    "engine": self.engines[a].name,
                    "opponent": self.engines[b].name,
                    "games": s.len(),
                    "wins": w,
                    "draws": d,
                    "losses": l,
                    "points": s.iter().sum::<f64>(),
                    "score": e.map(|e| e.score),
                    "elo": e.map(|e| round1(e.elo)),
                    "elo_low": e.map(|e| round1(e.low)),
                    "elo_high": e.map(|e| round1(e.high)),
                    "elo_clamped": e.map(|e| e.clamped),
                })
            })
            .collect();
        let engines: Vec<Value> = self
            .engines
            .iter()
            .zip(&self.per_engine)
            .map(|(e, t)| {
                let keeps = keeps_tree(e);
                json!({
                    "name": e.name,
                    "spec": e.text,
                    "kind": match &e.kind {
                        EngineKind::Random => "random",
                        EngineKind::Greedy => "greedy",
                        EngineKind::Mcts => "mcts",
                        EngineKind::AlphaBeta => "ab",
                        EngineKind::Server { .. } => "server",
                    },
                    "url": match &e.kind { EngineKind::Server { url } => Some(url), _ => None },
                    "budget": e.searches().then(|| e.budget.describe()),
                    "threads": e.searches().then_some(e.threads),
                    "games": t.games,
                    "wins": t.wins,
                    "draws": t.draws,
                    "losses": t.losses,
                    "points": t.points(),
                    "score": (t.games > 0).then(|| t.points() / f64::from(t.games)),
                    "moves": t.moves,
                    "mean_ms_per_move": round1(t.think_ms / (t.moves.max(1) as f64)),
                    "mean_playouts_per_move": e
                        .searches()
                        .then(|| round1(t.playouts as f64 / (t.moves.max(1) as f64))),
                    "moves_with_reuse": keeps.then_some(t.moves_with_reuse),
                    "reused_visits": keeps.then_some(t.reused_visits),
                    "late_ms": late(&t.late_ms).map(|l| json!({
                        "moves": t.late_ms.len(),
                        "p50": l.p50,
                        "p99": l.p99,
                        "max": l.max,
                    })),
                    "retries": t.retries,
                    "timeouts": t.timeouts,
                    "time_losses": t.time_forfeits,
                    "illegal_moves": t.illegal_moves,
                    "engine_failures": t.failures,
                })
            })
            .collect();
        let terminations: serde_json::Map<String, Value> = self
            .terminations
            .iter()
            .map(|(k, n)| ((*k).to_owned(), json!(n)))
            .collect();
        json!({
            "type": "summary",
            "seed": seed,
            "schedule": schedule,
            "openings": openings,
            "games": self.games(),
            "terminations": terminations,
            "pairings": pairings,
            "engines": engines,
        })
    }
}

/// The JSON line of one game.
pub fn game_json(r: &GameReport, engines: &[EngineSpec]) -> Value {
    let g = r.scheduled;
    let reuse = |side: usize, engine: usize| {
        keeps_tree(&engines[engine]).then(|| r.sides[side].reused_visits.clone())
    };
    json!({
        "type": "game",
        "round": g.number,
        "pairing": g.pairing + 1,
        "game_id": r.game_id,
        "white": engines[g.white].name,
        "black": engines[g.black].name,
        "result": r.record.result,
        "termination": r.record.termination,
        "detail": r.detail,
        "turns": r.turns(),
        "moves_with_reuse": r.sides[0].moves_with_reuse + r.sides[1].moves_with_reuse,
        "white_moves_with_reuse": r.sides[0].moves_with_reuse,
        "black_moves_with_reuse": r.sides[1].moves_with_reuse,
        "white_reused_visits": reuse(0, g.white),
        "black_reused_visits": reuse(1, g.black),
        "white_ms_per_move": round1(ms_per_move(&r.sides[0])),
        "black_ms_per_move": round1(ms_per_move(&r.sides[1])),
        "retries": r.sides[0].retries + r.sides[1].retries,
        "white_clock_ms": clocked(&r.sides[0].clock_ms),
        "black_clock_ms": clocked(&r.sides[1].clock_ms),
        "white_used_ms": clocked(&r.sides[0].used_ms),
        "black_used_ms": clocked(&r.sides[1].used_ms),
        "white_max_overhead_ms": r.sides[0].max_overhead_ms,
        "black_max_overhead_ms": r.sides[1].max_overhead_ms,
        "opening": r.opening,
    })
}

/// A timed game's per-move list; `null` in untimed games.
fn clocked(v: &[u64]) -> Option<&[u64]> {
    (!v.is_empty()).then_some(v)
}

fn ms_per_move(s: &super::game::SideStats) -> f64 {
    s.think.as_secs_f64() * 1000.0 / f64::from(s.moves.max(1))
}

/// Whether the engine may keep its tree between moves (servers, in-process MCTS with
/// `reuse=on`), so that its moves with reuse are counted.
fn keeps_tree(e: &EngineSpec) -> bool {
    matches!(e.kind, EngineKind::Server { .. }) || (e.kind == EngineKind::Mcts && e.reuse)
}

fn wdl(scores: &[f64]) -> (usize, usize, usize) {
    let w = scores.iter().filter(|&&s| s >= 1.0).count();
    let l = scores.iter().filter(|&&s| s <= 0.0).count();
    (w, scores.len() - w - l, l)
}

fn fmt_points(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{p:.0}")
    } else {
        format!("{p:.1}")
    }
}

/// Percentiles of answers' lateness, milliseconds.
struct Late {
    p50: u64,
    p99: u64,
    max: u64,
}

/// The lateness percentiles (nearest rank) of `ms`, `None` when empty.
fn late(ms: &[u64]) -> Option<Late> {
    let mut sorted = ms.to_vec();
    sorted.sort_unstable();
    let rank =
        |q: f64| sorted[((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len()) - 1];
    (!sorted.is_empty()).then(|| Late {
        p50: rank(0.50),
        p99: rank(0.99),
        max: rank(1.0),
    })
}

fn pct(points: f64, games: usize) -> String {
    if games == 0 {
        "-".to_owned()
    } else {
        format!("{:.1}%", 100.0 * points / games as f64)
    }
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_percentiles_by_nearest_rank() {
        assert!(late(&[]).is_none());
        let l = late(&[7]).unwrap();
        assert_eq!((l.p50, l.p99, l.max), (7, 7, 7));
        // 1..=200 shuffled: the median is the 100th, p99 the 198th.
        let ms: Vec<u64> = (1..=200).map(|i| (i * 37) % 200 + 1).collect();
        let l = late(&ms).unwrap();
        assert_eq!((l.p50, l.p99, l.max), (100, 198, 200));
    }

    #[test]
    fn formatting() {
        assert_eq!(fmt_points(1.5), "1.5");
        assert_eq!(fmt_points(2.0), "2");
        assert_eq!(pct(1.5, 2), "75.0%");
        assert_eq!(wdl(&[1.0, 0.5, 0.0, 1.0]), (2, 1, 1));
    }
}
