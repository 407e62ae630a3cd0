//! Flags the client commands share, defined once: the search budget and settings
//! ([`SearchFlags`]: analyze, bestmove, play, review), where searches run ([`BackendArgs`]),
//! the queue priority ([`PriorityArg`]) and durations ([`parse_duration`]).
//!
//! A command whose wording differs (play's default budget, review's budget per position)
//! replaces a flag's help with `#[command(mut_arg(...))]`: the flag, its parsing and its
//! default stay the shared ones.

use std::time::Duration;

use clap::Args;
use emergo_proto::v1 as pb;

use super::ConnectArgs;

/// The most a duration flag may say: a day. Longer is a typo, and every budget of the
/// contract is in milliseconds that must fit a `u32`.
const MAX_DURATION: Duration = Duration::from_secs(24 * 3600);

/// Budget and search settings of the commands that ask for searches.
#[derive(Clone, Debug, Args)]
pub struct SearchFlags {
    /// Time budget of each search, e.g. 5s, 500ms, 1.5s, 1m; with --playouts as well, the
    /// search stops at whichever comes first.
    #[arg(long, value_parser = parse_duration)]
    pub time: Option<Duration>,
    /// Playout budget of each search.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub playouts: Option<u64>,
    /// Search threads (the server caps this per request).
    #[arg(long, default_value_t = 1)]
    pub threads: u32,
    /// Random seed; 0 lets the engine pick one. With one thread, a fixed seed and --playouts
    /// the result is reproducible.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

impl SearchFlags {
    /// The contract's limits from `--time` and `--playouts`, `None` when neither is given.
    pub fn limits(&self) -> Option<pb::Limits> {
        limits(self.time, self.playouts)
    }
}

/// Where searches run: a server, or the server's engine in this process (`--local`).
#[derive(Clone, Debug, Args)]
pub struct BackendArgs {
    /// Search in this process with the server's engine instead of calling a server.
    #[arg(long)]
    pub local: bool,
    /// How to reach the server.
    #[command(flatten)]
    pub connect: ConnectArgs,
}

/// `--priority` of the client tools: `SearchOptions.priority`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum PriorityArg {
    /// Someone waits for the answer (a move under a clock).
    Interactive,
    /// The default.
    #[default]
    Normal,
    /// Bulk analysis: served when nothing else waits.
    Batch,
}

impl From<PriorityArg> for pb::Priority {
    fn from(p: PriorityArg) -> pb::Priority {
        match p {
            PriorityArg::Interactive => pb::Priority::Interactive,
            PriorityArg::Normal => pb::Priority::Normal,
            PriorityArg::Batch => pb::Priority::Batch,
        }
    }
}

/// A time budget in the contract's milliseconds. A sub-millisecond budget still means "search
/// a little", not "no limit", so it is at least 1.
pub fn budget_ms(d: Duration) -> u32 {
    u32::try_from(d.as_millis()).unwrap_or(u32::MAX).max(1)
}

/// The contract's limits from optional flags, `None` when neither is set.
pub fn limits(time: Option<Duration>, playouts: Option<u64>) -> Option<pb::Limits> {
    if time.is_none() && playouts.is_none() {
        return None;
    }
    Some(pb::Limits {
        max_time_ms: time.map(budget_ms),
        max_playouts: playouts,
        clock: None,
    })
}

/// Parses a duration flag: `2s`, `500ms`, `1.5s`, `1m`, `1m 30s` (humantime's forms), or a bare
/// number of seconds (`1.5`), more than 0 and at most a day.
///
/// The bare number is the one form read by hand: humantime wants a unit, and these tools have
/// always read `--time 2` as two seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let not_a_duration = |why: String| format!("{s:?} is not a duration ({why}; e.g. 2s, 500ms)");
    let d = if !s.is_empty() && s.chars().all(|c| c.is_ascii_digit() || c == '.') {
        let secs: f64 = s.parse().map_err(|e| not_a_duration(format!("{e}")))?;
        Duration::try_from_secs_f64(secs).map_err(|e| not_a_duration(e.to_string()))?
    } else {
        humantime::parse_duration(s).map_err(|e| not_a_duration(e.to_string()))?
    };
    if d.is_zero() || d > MAX_DURATION {
        return Err(format!("{s:?} is out of range (more than 0, at most 24h)"));
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("1m"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_duration("1min"), Ok(Duration::from_secs(60)));
        // A bare number is seconds.
        assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration(" 2 "), Ok(Duration::from_secs(2)));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("0").is_err());
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("").is_err());
        assert!(parse_duration("1..5").is_err());
        assert!(parse_duration("25h").is_err());
        assert!(parse_duration("-5s").is_err());
        let e = parse_duration("3x").unwrap_err();
        assert!(e.contains("\"3x\" is not a duration"), "{e}");
    }

    #[test]
    fn budgets_in_milliseconds() {
        assert!(limits(None, None).is_none());
        let l = limits(Some(Duration::from_micros(10)), None).unwrap();
        assert_eq!(l.max_time_ms, Some(1));
        assert_eq!(l.max_playouts, None);
        let l = limits(Some(Duration::from_millis(1500)), Some(7)).unwrap();
        assert_eq!((l.max_time_ms, l.max_playouts), (Some(1500), Some(7)));
    }
}
