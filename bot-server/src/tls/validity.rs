//! The server certificate's validity window, checked at start-up.
//!
//! rustls serves whatever certificate it is given: an expired one, or one not valid yet (issued
//! on a machine whose clock runs ahead), loads without a word and then fails every client's
//! handshake. The server still starts with such a certificate — an operator may be replacing
//! it, and a server that refuses to start takes the plaintext health checks down with it — but
//! says so in its log, naming the file and the dates, and gives [`EXPIRY_WARNING`] of notice
//! before a certificate runs out.

use std::path::Path;
use std::time::{Duration, SystemTime};

use x509_parser::time::ASN1Time;

/// How long before a certificate expires the server starts warning: a week leaves an operator
/// who reads the log a few working days to renew it.
pub const EXPIRY_WARNING: Duration = Duration::from_secs(7 * 24 * 3600);

/// A certificate's validity window, in seconds since the Unix epoch (UTC).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Validity {
    /// notBefore: the first second the certificate is valid.
    pub not_before: i64,
    /// notAfter: the last second the certificate is valid.
    pub not_after: i64,
}

impl Validity {
    /// The window of a DER certificate, or `None` if it cannot be parsed.
    pub fn of(der: &[u8]) -> Option<Validity> {
        let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
        let validity = cert.validity();
        Some(Validity {
            not_before: validity.not_before.timestamp(),
            not_after: validity.not_after.timestamp(),
        })
    }
}

/// Seconds since the Unix epoch at `time` (negative before it).
pub fn unix_seconds(time: SystemTime) -> i64 {
    match time.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_secs()).unwrap_or(i64::MAX),
        Err(before) => i64::try_from(before.duration().as_secs()).map_or(i64::MIN, |s| -s),
    }
}

/// `2030-01-05 12:00:00 UTC`: the form an operator compares with `date -u` and with
/// `openssl x509 -dates` at a glance.
fn utc(seconds: i64) -> String {
    match ASN1Time::from_timestamp(seconds) {
        Ok(time) => {
            let t = time.to_datetime();
            format!(
                "{:04}-{:02}-{:02} {:02}:{:02}:{:02} UTC",
                t.year(),
                u8::from(t.month()),
                t.day(),
                t.hour(),
                t.minute(),
                t.second()
            )
        }
        Err(_) => format!("{seconds} s after 1970-01-01 UTC"),
    }
}

/// `3 days 4 hours`, `5 hours`, `12 minutes`: how long until a certificate expires, to the
/// precision that matters for renewing it.
fn span(seconds: i64) -> String {
    let (days, hours, minutes) = (
        seconds / 86_400,
        seconds % 86_400 / 3600,
        seconds % 3600 / 60,
    );
    let plural = |n: i64, unit: &str| format!("{n} {unit}{}", if n == 1 { "" } else { "s" });
    match (days, hours) {
        (0, 0) => plural(minutes, "minute"),
        (0, h) => plural(h, "hour"),
        (d, 0) => plural(d, "day"),
        (d, h) => format!("{} {}", plural(d, "day"), plural(h, "hour")),
    }
}

/// What an operator should hear about the certificate in `path` (the `--tls-cert` file, whose
/// leaf has `validity`) at `now` (Unix seconds): `None` while it is valid for more than
/// [`EXPIRY_WARNING`]; else a line naming the file and the dates.
pub fn validity_warning(path: &Path, validity: Validity, now: i64) -> Option<String> {
    let Validity {
        not_before,
        not_after,
    } = validity;
    let window = format!("valid from {} to {}", utc(not_before), utc(not_after));
    let file = path.display();
    if now > not_after {
        Some(format!(
            "--tls-cert {file}: the certificate expired on {} ({window}); TLS clients will \
             refuse every handshake until it is renewed",
            utc(not_after)
        ))
    } else if now < not_before {
        Some(format!(
            "--tls-cert {file}: the certificate is not valid until {} ({window}); TLS clients \
             will refuse every handshake until then (is this machine's clock right?)",
            utc(not_before)
        ))
    } else if not_after - now < i64::try_from(EXPIRY_WARNING.as_secs()).unwrap_or(i64::MAX) {
        Some(format!(
            "--tls-cert {file}: the certificate expires on {}, in {} ({window}); renew it",
            utc(not_after),
            span(not_after - now)
        ))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A self-signed certificate valid from `from` to `to` (year, month, day, at midnight UTC).
    fn certificate(from: (i32, u8, u8), to: (i32, u8, u8)) -> Validity {
        let mut params = rcgen::CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
        params.not_before = rcgen::date_time_ymd(from.0, from.1, from.2);
        params.not_after = rcgen::date_time_ymd(to.0, to.1, to.2);
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        Validity::of(cert.der()).expect("rcgen writes a parsable certificate")
    }

    /// Unix seconds of a day at `hour`:00 UTC.
    fn at(year: i32, month: u8, day: u8, hour: i64) -> i64 {
        let midnight = rcgen::date_time_ymd(year, month, day);
        ASN1Time::new(midnight).timestamp() + hour * 3600
    }

    #[test]
    fn dates_are_read_from_the_certificate() {
        let v = certificate((2030, 1, 1), (2030, 3, 1));
        assert_eq!(utc(v.not_before), "2030-01-01 00:00:00 UTC");
        assert_eq!(utc(v.not_after), "2030-03-01 00:00:00 UTC");
        assert_eq!(Validity::of(b"not a certificate"), None);
    }

    #[test]
    fn an_expired_certificate_is_named_with_its_dates() {
        let v = certificate((2020, 1, 1), (2021, 1, 1));
        let path = Path::new("/etc/emergo/server.pem");
        let w = validity_warning(path, v, at(2021, 6, 1, 0)).expect("a warning");
        assert_eq!(
            w,
            "--tls-cert /etc/emergo/server.pem: the certificate expired on 2021-01-01 00:00:00 \
             UTC (valid from 2020-01-01 00:00:00 UTC to 2021-01-01 00:00:00 UTC); TLS clients \
             will refuse every handshake until it is renewed"
        );
    }

    #[test]
    fn a_certificate_not_valid_yet_is_named_with_its_dates() {
        let v = certificate((2031, 1, 1), (2032, 1, 1));
        let w = validity_warning(Path::new("c.pem"), v, at(2030, 12, 31, 0)).expect("a warning");
        assert!(
            w.starts_with(
                "--tls-cert c.pem: the certificate is not valid until 2031-01-01 00:00:00 UTC"
            ),
            "{w}"
        );
        assert!(w.contains("is this machine's clock right?"), "{w}");
    }

    #[test]
    fn a_certificate_about_to_expire_gets_a_week_of_notice() {
        let v = certificate((2030, 1, 1), (2030, 2, 1));
        let path = Path::new("c.pem");
        let w = validity_warning(path, v, at(2030, 1, 28, 20)).expect("a warning");
        assert!(
            w.starts_with(
                "--tls-cert c.pem: the certificate expires on 2030-02-01 00:00:00 UTC, in 3 \
                 days 4 hours"
            ),
            "{w}"
        );
        let w = validity_warning(path, v, at(2030, 1, 31, 19)).expect("a warning");
        assert!(w.contains(", in 5 hours ("), "{w}");
        // Eight days before: nothing yet.
        assert_eq!(validity_warning(path, v, at(2030, 1, 24, 0)), None);
    }

    #[test]
    fn a_valid_certificate_gives_no_warning() {
        let v = certificate((2020, 1, 1), (2040, 1, 1));
        assert_eq!(
            validity_warning(Path::new("c.pem"), v, at(2030, 6, 1, 0)),
            None
        );
        // rcgen's default window (1975 to 4096), read now, as the server does.
        let generated = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
        let v = Validity::of(generated.cert.der()).unwrap();
        let now = unix_seconds(SystemTime::now());
        assert_eq!(validity_warning(Path::new("c.pem"), v, now), None);
    }
}
