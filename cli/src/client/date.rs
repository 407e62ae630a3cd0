//! The `Date` tag of game records, `YYYY.MM.DD` in UTC, for `emergo play` and `emergo arena`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The last second humantime writes as RFC 3339: 9999-12-31T23:59:59Z.
const LAST_WRITABLE: Duration = Duration::from_secs(253_402_300_799);

/// Today's date as records write it.
pub fn today() -> String {
    record_date(SystemTime::now())
}

/// `time`'s date (UTC) as records write it, `YYYY.MM.DD`.
pub fn record_date(time: SystemTime) -> String {
    // humantime writes RFC 3339 (`2026-05-09T12:00:00Z`) for the years 1970 to 9999; a clock
    // outside them (a broken one) reads as the nearest end.
    let time = time.clamp(UNIX_EPOCH, UNIX_EPOCH + LAST_WRITABLE);
    let rfc3339 = humantime::format_rfc3339_seconds(time).to_string();
    rfc3339[..10].replace('-', ".")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        let day = |days: u64| record_date(UNIX_EPOCH + Duration::from_secs(86_400 * days));
        assert_eq!(day(0), "1970.01.01");
        assert_eq!(day(59), "1970.03.01");
        assert_eq!(day(365), "1971.01.01");
        assert_eq!(day(11_016), "2000.02.29");
        assert_eq!(day(20_000), "2024.10.04");
        assert_eq!(day(20_582), "2026.05.09");
        // The last second of a day is still that day.
        let late = UNIX_EPOCH + Duration::from_secs(86_400 * 20_583 - 1);
        assert_eq!(record_date(late), "2026.05.09");
        // A clock before 1970 reads as 1970, as it always has.
        assert_eq!(
            record_date(UNIX_EPOCH - Duration::from_secs(1)),
            "1970.01.01"
        );
        assert_eq!(record_date(UNIX_EPOCH + LAST_WRITABLE * 2), "9999.12.31");
        assert_eq!(today().len(), 10);
    }
}
