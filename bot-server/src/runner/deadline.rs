//! Client deadlines turned into a plan: when the search must end and when its answer must leave,
//! with a margin for what follows the search.

use std::time::{Duration, Instant};

use crate::error::ServiceError;

/// Least time a search gets: a deadline that leaves less (after the margin) is answered with
/// DEADLINE_EXCEEDED at once.
pub const MIN_SEARCH: Duration = Duration::from_millis(2);
/// Smallest and largest margin kept back from a client's deadline.
pub const MIN_MARGIN: Duration = Duration::from_millis(10);
/// See [`MIN_MARGIN`].
pub const MAX_MARGIN: Duration = Duration::from_millis(250);

/// The part of a client's deadline (`remaining` when the request arrives) kept back for what
/// follows the search: its threads noticing the time, the answer being built, encoded and sent,
/// and the request's own transit (the client's clock started before the server saw the
/// request). A quarter of the time, at least [`MIN_MARGIN`], at most [`MAX_MARGIN`].
///
/// Measured (100 BestMove calls per deadline, 2 cores, a busy loop and other
/// builds running, load average 6–7): with a tenth, at least 5 ms, and the budget counted from
/// the request's arrival, 40–65% of the calls with 20 and 50 ms deadlines and 10–20% with
/// 100 ms missed them. The time lost went to setting up the tree (up to 8 ms, now paid from the
/// search's budget) and to search threads waiting for a core before they noticed their time
/// was up (up to 10 ms; the supervisor no longer waits for them past
/// [`DeadlinePlan::answer_by`]). With both and this margin, 0–7%, and none at load 5 without
/// the busy loop (`deadline_miss_rate` in `tests/tests/e2e/server_contract.rs`).
pub fn deadline_margin(remaining: Duration) -> Duration {
    (remaining / 4).clamp(MIN_MARGIN, MAX_MARGIN)
}

/// When a search under a client deadline must end, and when its answer must leave at the
/// latest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeadlinePlan {
    /// The search's time ends here: the deadline less the whole margin.
    pub search_end: Instant,
    /// The supervisor answers by here even if search threads are still finishing: the deadline
    /// less half the margin (the other half is for sending the answer).
    pub answer_by: Instant,
    /// Past this, waiting for threads is pointless: no search of [`MIN_SEARCH`] would fit.
    pub latest_start: Instant,
}

impl DeadlinePlan {
    /// The plan for a request with `deadline` arriving at `now`, or DEADLINE_EXCEEDED if the
    /// deadline leaves no time to search.
    pub fn new(deadline: Instant, now: Instant) -> Result<DeadlinePlan, ServiceError> {
        let remaining = deadline.saturating_duration_since(now);
        let margin = deadline_margin(remaining);
        let too_short = ServiceError::DeadlineTooShort {
            remaining_ms: u64::try_from(remaining.as_millis()).unwrap_or(u64::MAX),
        };
        if remaining < margin + MIN_SEARCH {
            return Err(too_short);
        }
        // `remaining >= margin`, so none of these subtractions can fail; `ok_or` keeps a
        // client-controlled value away from a panic all the same.
        let search_end = deadline.checked_sub(margin).ok_or(too_short.clone())?;
        let answer_by = deadline.checked_sub(margin / 2).ok_or(too_short.clone())?;
        let latest_start = search_end.checked_sub(MIN_SEARCH).ok_or(too_short)?;
        Ok(DeadlinePlan {
            search_end,
            answer_by,
            latest_start,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn margins_grow_with_the_deadline_within_bounds() {
        assert_eq!(deadline_margin(Duration::from_millis(20)), MIN_MARGIN);
        assert_eq!(
            deadline_margin(Duration::from_millis(100)),
            Duration::from_millis(25)
        );
        assert_eq!(deadline_margin(Duration::from_secs(60)), MAX_MARGIN);
    }

    #[test]
    fn deadline_plans() {
        let now = Instant::now();
        let plan = DeadlinePlan::new(now + Duration::from_millis(100), now).unwrap();
        assert_eq!(plan.search_end, now + Duration::from_millis(75));
        assert_eq!(plan.answer_by, now + Duration::from_micros(87_500));
        assert_eq!(plan.latest_start, now + Duration::from_millis(73));
        // 20 ms: 10 ms of search, the answer out by 15 ms.
        let plan = DeadlinePlan::new(now + Duration::from_millis(20), now).unwrap();
        assert_eq!(plan.search_end, now + Duration::from_millis(10));
        assert_eq!(plan.answer_by, now + Duration::from_millis(15));
        // Too short, or already past: DEADLINE_EXCEEDED.
        for ms in [0, 1, 11] {
            let e = DeadlinePlan::new(now + Duration::from_millis(ms), now).unwrap_err();
            assert_eq!(e.code(), tonic::Code::DeadlineExceeded, "{ms} ms");
        }
        let past = DeadlinePlan::new(now, now + Duration::from_secs(1)).unwrap_err();
        assert_eq!(past, ServiceError::DeadlineTooShort { remaining_ms: 0 });
        assert!(DeadlinePlan::new(now + Duration::from_millis(12), now).is_ok());
    }
}
