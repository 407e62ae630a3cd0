//! The server's log: installing it (text or JSON, colour only on a terminal) and [`LogSafe`],
//! the wrapper every client-controlled string goes through on its way into it.
//!
//! tracing's text format writes field values as they are: a game id holding
//! `"\n2030-01-01T00:00:00Z  INFO …"` would forge a log line, and an ANSI escape sequence would
//! reach whoever reads the log on a terminal (tracing-subscriber only sanitises the `message`
//! field, and never line breaks). [`LogSafe`] escapes them; the JSON format escapes them by
//! itself, and LogSafe's escapes then travel as plain text inside the JSON strings.

use std::fmt::{self, Write};
use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// Displays a client-controlled value (a game id, an error message that quotes input) with
/// every character that could break a log line or drive a terminal escaped the way Rust writes
/// it in a string literal: line breaks and other control characters (C0, DEL, C1), Unicode line
/// and paragraph separators, and the bidirectional-text controls that can make a line read
/// differently from what it holds. A backslash is doubled, so an escape in the log is always
/// one the server wrote.
///
/// ```
/// use emergo_bot_server::logging::LogSafe;
/// let id = "g1\n2030-01-01T00:00:00Z  INFO forged\u{1b}[31m";
/// assert_eq!(
///     LogSafe(id).to_string(),
///     r"g1\n2030-01-01T00:00:00Z  INFO forged\u{1b}[31m"
/// );
/// ```
#[derive(Clone, Copy)]
pub struct LogSafe<T>(pub T);

/// Whether `c` must not reach a log line as it is.
fn needs_escape(c: char) -> bool {
    c.is_control()
        || c == '\\'
        || matches!(c, '\u{2028}' | '\u{2029}')
        // Bidirectional embeddings, overrides and isolates ("Trojan Source"), and marks.
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Escapes as characters are written, so a value of any size is never copied.
struct Escaping<'a, 'b>(&'a mut fmt::Formatter<'b>);

impl Write for Escaping<'_, '_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let mut rest = s;
        while let Some(i) = rest.find(needs_escape) {
            self.0.write_str(&rest[..i])?;
            let mut chars = rest[i..].chars();
            if let Some(c) = chars.next() {
                match c {
                    '\n' => self.0.write_str("\\n")?,
                    '\r' => self.0.write_str("\\r")?,
                    '\t' => self.0.write_str("\\t")?,
                    '\\' => self.0.write_str("\\\\")?,
                    c => write!(self.0, "\\u{{{:x}}}", u32::from(c))?,
                }
            }
            rest = chars.as_str();
        }
        self.0.write_str(rest)
    }
}

impl<T: fmt::Display> fmt::Display for LogSafe<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(Escaping(f), "{}", self.0)
    }
}

/// As Display: a `?field` must not undo the escaping.
impl<T: fmt::Display> fmt::Debug for LogSafe<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The log's format (`--log-format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    /// Human-readable lines; coloured only when stdout is a terminal.
    Text,
    /// One JSON object per line (for log collectors), never coloured.
    Json,
}

impl LogFormat {
    /// Parses a `--log-format` value (`text` or `json`).
    pub fn parse(name: &str) -> Option<LogFormat> {
        match name {
            "text" => Some(LogFormat::Text),
            "json" => Some(LogFormat::Json),
            _ => None,
        }
    }
}

/// Installs the process-wide log on stdout in `format`, filtered by `RUST_LOG` (default
/// `info`). Colour only when stdout is a terminal and `NO_COLOR` is unset: escape codes in a
/// file or a log collector are noise, and tracing-subscriber colours unconditionally by default.
pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    match format {
        LogFormat::Text => {
            let colour = std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
            builder.with_ansi(colour).init();
        }
        LogFormat::Json => builder.json().with_ansi(false).init(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(LogSafe("plain id-42").to_string(), "plain id-42");
        assert_eq!(
            LogSafe("a\nb\r\tc\u{1b}[2J\u{7}\u{7f}\u{85}").to_string(),
            r"a\nb\r\tc\u{1b}[2J\u{7}\u{7f}\u{85}"
        );
        assert_eq!(
            LogSafe("x\u{2028}y\u{202e}z\u{2066}").to_string(),
            r"x\u{2028}y\u{202e}z\u{2066}"
        );
        // A backslash the client wrote cannot pass for an escape the server wrote.
        assert_eq!(LogSafe(r"fake\n").to_string(), r"fake\\n");
        // Other Unicode passes unchanged.
        assert_eq!(LogSafe("partie é♟ 对局").to_string(), "partie é♟ 对局");
        // Debug is the same as Display.
        assert_eq!(format!("{:?}", LogSafe("a\nb")), r"a\nb");
        // Any Display value, e.g. an error that quotes input.
        let e = crate::error::ServiceError::invalid("options.game_id", "bad\u{1b}[31m\nline");
        assert_eq!(
            LogSafe(&e).to_string(),
            r"options.game_id: bad\u{1b}[31m\nline"
        );
    }

    #[test]
    fn log_formats_parse() {
        assert_eq!(LogFormat::parse("text"), Some(LogFormat::Text));
        assert_eq!(LogFormat::parse("json"), Some(LogFormat::Json));
        assert_eq!(LogFormat::parse("xml"), None);
    }
}
