//! Time controls for `emergo arena --tc BASE+INC`: each side's clock, charged with the wall
//! time each move really took (the RPC included) and credited with the increment.
//!
//! The arena is the referee: an engine is told its clock (servers in `Limits.clock`, in-process
//! engines through [`emergo_bot_server::timeman::plan`]) but the arena measures, and a side whose clock
//! would go below zero loses on time (`time-forfeit`).

use std::fmt;
use std::time::Duration;

use emergo_proto::v1 as pb;

use emergo_bot_server::timeman;

/// Longest base time accepted: a day (a clock must fit the contract's `uint32` milliseconds).
const MAX_BASE: Duration = Duration::from_secs(24 * 3600);

/// Margin the time manager keeps back for an in-process engine: no network, only the
/// scheduling of its threads and the move's hand-over to the game loop.
pub const LOCAL_MARGIN: Duration = Duration::from_millis(10);

/// A Fischer time control: `base` per side, plus `increment` after each move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeControl {
    /// Time on each clock at the start.
    pub base: Duration,
    /// Added after each move.
    pub increment: Duration,
}

/// Parses `BASE+INC` in seconds, decimals allowed (`60+0.5`, `10+0.1`, `0.5+0.05`), or `BASE`
/// alone (no increment).
pub fn parse_tc(s: &str) -> Result<TimeControl, String> {
    let s = s.trim();
    let (base, inc) = s.split_once('+').unwrap_or((s, "0"));
    let secs = |part: &str, what: &str, zero_ok: bool| -> Result<Duration, String> {
        let part = part.trim();
        let ok = !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit() || b == b'.');
        let n: f64 = part
            .parse()
            .ok()
            .filter(|_| ok)
            .ok_or_else(|| format!("--tc {s:?}: {what} {part:?} is not a number of seconds"))?;
        let d = Duration::try_from_secs_f64(n)
            .ok()
            .filter(|d| *d <= MAX_BASE)
            .ok_or_else(|| {
                format!("--tc {s:?}: {what} {part:?} is out of range (at most a day)")
            })?;
        if d.is_zero() && !zero_ok {
            return Err(format!("--tc {s:?}: the {what} must be positive"));
        }
        Ok(d)
    };
    let base = secs(base, "base", false)?;
    let increment = secs(inc, "increment", true)?;
    if base < Duration::from_millis(1) {
        return Err(format!("--tc {s:?}: the base must be at least 1 ms"));
    }
    Ok(TimeControl { base, increment })
}

/// `60+0.5`: the PGN `TimeControl` form (seconds).
impl fmt::Display for TimeControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}+{}",
            self.base.as_secs_f64(),
            self.increment.as_secs_f64()
        )
    }
}

/// One side's clock in a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SideClock {
    /// Time left.
    pub remaining: Duration,
    /// Added after each move.
    pub increment: Duration,
}

impl SideClock {
    /// A full clock for `tc`.
    pub fn new(tc: TimeControl) -> SideClock {
        SideClock {
            remaining: tc.base,
            increment: tc.increment,
        }
    }

    /// Charges a move that took `used`: the time comes off, then the increment is added. An
    /// error (the time was more than the clock held) means the side lost on time; the clock is
    /// left at zero.
    pub fn charge(&mut self, used: Duration) -> Result<(), Duration> {
        match self.remaining.checked_sub(used) {
            Some(left) if !left.is_zero() => {
                self.remaining = left + self.increment;
                Ok(())
            }
            _ => {
                let over = used.saturating_sub(self.remaining);
                self.remaining = Duration::ZERO;
                Err(over)
            }
        }
    }

    /// The clock as the time manager reads it.
    pub fn timeman(&self) -> timeman::Clock {
        timeman::Clock {
            remaining: self.remaining,
            increment: self.increment,
            moves_to_go: None,
        }
    }

    /// The clock as a server reads it (`Limits.clock`), with the opponent's for information.
    pub fn to_pb(&self, opponent: &SideClock) -> pb::Clock {
        pb::Clock {
            remaining_ms: ms_u32(self.remaining).max(1),
            increment_ms: ms_u32(self.increment),
            moves_to_go: None,
            opponent_remaining_ms: Some(ms_u32(opponent.remaining)),
            opponent_increment_ms: Some(ms_u32(opponent.increment)),
        }
    }
}

fn ms_u32(d: Duration) -> u32 {
    u32::try_from(d.as_millis()).unwrap_or(u32::MAX)
}

/// `0:01:02.345`: a clock as PGN's `%clk` writes it (hours, minutes, seconds, milliseconds).
pub fn format_clock(d: Duration) -> String {
    let ms = d.as_millis();
    format!(
        "{}:{:02}:{:02}.{:03}",
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1000 % 60,
        ms % 1000
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn time_controls_parse() {
        for (text, base, inc) in [
            ("60+0.5", 60_000, 500),
            ("10+0.1", 10_000, 100),
            ("0.5+0.05", 500, 50),
            (" 2+0 ", 2_000, 0),
            ("300", 300_000, 0),
        ] {
            let tc = parse_tc(text).unwrap();
            assert_eq!(
                tc,
                TimeControl {
                    base: ms(base),
                    increment: ms(inc)
                },
                "{text}"
            );
        }
        assert_eq!(parse_tc("60+0.5").unwrap().to_string(), "60+0.5");
        assert_eq!(parse_tc("0.5+0.05").unwrap().to_string(), "0.5+0.05");
        for bad in [
            "", "+1", "0+1", "-1+0", "1+-1", "a+b", "1e3+0", "1+x", "100000+0", "inf+0", "NaN+0",
            "1++1",
        ] {
            let e = parse_tc(bad).unwrap_err();
            assert!(e.starts_with("--tc "), "{bad}: {e}");
        }
    }

    #[test]
    fn clocks_are_charged_and_flag() {
        let mut c = SideClock::new(parse_tc("1+0.1").unwrap());
        c.charge(ms(300)).unwrap();
        assert_eq!(c.remaining, ms(800));
        c.charge(ms(799)).unwrap();
        assert_eq!(c.remaining, ms(101));
        // Using all of it, or more, loses on time.
        assert_eq!(c.charge(ms(101)), Err(ms(0)));
        assert_eq!(c.remaining, Duration::ZERO);
        let mut c = SideClock::new(parse_tc("1+0").unwrap());
        assert_eq!(c.charge(ms(1_250)), Err(ms(250)));
    }

    #[test]
    fn clocks_for_servers_and_records() {
        let a = SideClock::new(parse_tc("10+0.1").unwrap());
        let mut b = a;
        b.remaining = ms(9_500);
        let p = a.to_pb(&b);
        assert_eq!((p.remaining_ms, p.increment_ms), (10_000, 100));
        assert_eq!(p.opponent_remaining_ms, Some(9_500));
        assert_eq!(format_clock(ms(3_723_045)), "1:02:03.045");
        assert_eq!(format_clock(ms(9_800)), "0:00:09.800");
    }
}
