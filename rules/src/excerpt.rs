//! Echoed input in error messages, kept short.

use std::fmt;

/// Most characters of a client's input that an error message repeats.
pub const EXCERPT_CHARS: usize = 40;

/// Displays a piece of input the way error messages quote it: `Debug`-quoted, cut after
/// [`EXCERPT_CHARS`] characters with `…` after the closing quote. A 50 KB unparsable move thus
/// gives a message of a line, not 50 KB (gRPC clients cap the metadata a message travels in at
/// 8–16 KiB and would report that instead of the real error).
pub(crate) struct Excerpt<'a>(pub(crate) &'a str);

impl fmt::Display for Excerpt<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.char_indices().nth(EXCERPT_CHARS) {
            None => write!(f, "{:?}", self.0),
            Some((cut, _)) => write!(f, "{:?}…", &self.0[..cut]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_input_is_quoted_whole_and_long_input_is_cut() {
        assert_eq!(Excerpt("e5x").to_string(), "\"e5x\"");
        let long = "é".repeat(100);
        let shown = Excerpt(&long).to_string();
        assert_eq!(shown, format!("{:?}…", "é".repeat(40)));
    }
}
