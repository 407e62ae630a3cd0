//! Game records in a PGN-like text format: written by `emergo play` and `emergo arena`, read by
//! them and by the server's game review (`AnalyzeGame`).
//!
//! ```text
//! [Event "emergo arena"]
//! [White "mcts:playouts=2000"]
//! [Black "random"]
//! [FEN "9/9/9/9/9/9/9/9/9 w 0 12,12"]
//! [Result "1-0"]
//! [Termination "no-units"]
//!
//! 1. a1 i9 2. c3 g7 ... 1-0
//! ```
//!
//! Moves are whole turns in the project notation (a capture chain is one token); move numbers
//! (`1.`, `1...`) are skipped. The writer puts the tags in the order given, then `FEN`, `Result`
//! and `Termination`. The reader accepts hand-written records too: without a `FEN` tag the game
//! starts from the standard start position, without a `Result` tag the movetext's final result
//! token (if any) is the result, and `Termination` is optional. The reader checks the FEN and the
//! notation of every move; whether the moves are legal is [`GameRecord::replay`]'s business.
//!
//! ```
//! use emergo_rules::record::{parse_pgn, RecordError};
//!
//! let records = parse_pgn("1. a1 i9 2. c3 *")?;
//! assert_eq!(records[0].moves, ["a1", "i9", "c3"]);
//! assert_eq!(records[0].replay()?.moves().len(), 3);
//!
//! let e = parse_pgn("1. a1 i9 2. c3-c4 *").unwrap_err();
//! assert!(matches!(e, RecordError::BadMove { turn: 3, .. }));
//! assert!(e.to_string().starts_with("turn 3: \"c3-c4\": "));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt::{self, Write as _};

use crate::excerpt::Excerpt;
use crate::{FenError, Game, GameError, Move, ParseMoveError, Position};

/// One finished (or unfinished) game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameRecord {
    /// Tags other than FEN, Result and Termination, in order.
    pub tags: Vec<(String, String)>,
    /// Start position.
    pub fen: String,
    /// Moves in notation.
    pub moves: Vec<String>,
    /// `1-0`, `0-1`, `1/2` or `*`.
    pub result: String,
    /// Why it ended: a rules reason (`no-units`, `blocked`, `no-legal-entry`, `repetition`) or an
    /// adjudication (`move-cap`, `illegal-move`, `timeout`, `engine-failure`, `unfinished`);
    /// empty when the record did not say (then the writer leaves the tag out).
    pub termination: String,
}

/// Why a record could not be read. Each names the line or the turn (1 = the game's first
/// move) and quotes the offending text, cut short ([`crate::EXCERPT_CHARS`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecordError {
    /// A line starting with `[` that is not a tag `[Key "value"]`.
    BadTag {
        /// The line, counting from 1.
        line: usize,
        /// The line's text.
        text: String,
    },
    /// The `FEN` tag is not a valid position.
    BadFen {
        /// The tag's value.
        fen: String,
        /// Why.
        error: FenError,
    },
    /// A movetext token that is neither a move number, a move nor the final result.
    BadMove {
        /// The turn the token stands at (1 = the game's first move).
        turn: usize,
        /// The token.
        token: String,
        /// Why it is not a move.
        error: ParseMoveError,
    },
    /// The movetext's final result token differs from the `Result` tag.
    ResultMismatch {
        /// The `Result` tag.
        tag: String,
        /// The movetext's last token.
        found: String,
    },
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordError::BadTag { line, text } => write!(
                f,
                "line {line}: {} is not a tag like [Event \"name\"]",
                Excerpt(text)
            ),
            RecordError::BadFen { fen, error } => {
                write!(f, "FEN tag {}: {error}", Excerpt(fen))
            }
            RecordError::BadMove { turn, token, error } => {
                write!(f, "turn {turn}: {}: {error}", Excerpt(token))
            }
            RecordError::ResultMismatch { tag, found } => write!(
                f,
                "the movetext ends with {} but the Result tag says {}",
                Excerpt(found),
                Excerpt(tag)
            ),
        }
    }
}

impl std::error::Error for RecordError {}

/// The result tokens a movetext may end with.
const RESULTS: [&str; 5] = ["1-0", "0-1", "1/2", "1/2-1/2", "*"];

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"")
}

/// A move number such as `12.` or `12...`.
fn is_move_number(token: &str) -> bool {
    let digits = token.trim_end_matches('.');
    digits.len() < token.len() && !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

impl GameRecord {
    /// The record as text (ends with a newline; records are separated by a blank line).
    pub fn to_pgn(&self) -> String {
        let mut out = String::new();
        for (k, v) in &self.tags {
            let _ = writeln!(out, "[{k} \"{}\"]", escape(v));
        }
        let _ = writeln!(out, "[FEN \"{}\"]", escape(&self.fen));
        let _ = writeln!(out, "[Result \"{}\"]", escape(&self.result));
        if !self.termination.is_empty() {
            let _ = writeln!(out, "[Termination \"{}\"]", escape(&self.termination));
        }
        out.push('\n');
        let white_first = self.fen.split(' ').nth(1) != Some("b");
        let mut line = String::new();
        for (i, m) in self.moves.iter().enumerate() {
            let ply = if white_first { i } else { i + 1 };
            if ply % 2 == 0 {
                let _ = write!(line, "{}. ", ply / 2 + 1);
            } else if i == 0 {
                let _ = write!(line, "1... ");
            }
            line.push_str(m);
            line.push(' ');
            if line.len() > 80 {
                out.push_str(line.trim_end());
                out.push('\n');
                line.clear();
            }
        }
        line.push_str(&self.result);
        out.push_str(&line);
        out.push('\n');
        out
    }

    /// A tag's value.
    pub fn tag(&self, key: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Replays the moves from the FEN with the rules core (checks the record is legal).
    pub fn replay(&self) -> Result<Game, GameError> {
        Game::from_fen_and_moves(&self.fen, &self.moves)
    }
}

/// The record being read: its tags so far and its movetext tokens with their turns.
#[derive(Default)]
struct Pending {
    tags: Vec<(String, String)>,
    tokens: Vec<String>,
}

impl Pending {
    fn is_empty(&self) -> bool {
        self.tags.is_empty() && self.tokens.is_empty()
    }

    fn take_tag(&mut self, key: &str) -> Option<String> {
        let i = self.tags.iter().position(|(k, _)| k == key)?;
        Some(self.tags.remove(i).1)
    }

    /// The finished record.
    fn finish(mut self) -> Result<GameRecord, RecordError> {
        let fen = match self.take_tag("FEN") {
            Some(fen) => {
                fen.parse::<Position>()
                    .map_err(|error| RecordError::BadFen {
                        fen: fen.clone(),
                        error,
                    })?;
                fen
            }
            None => Position::initial().to_string(),
        };
        let tag = self.take_tag("Result");
        let termination = self.take_tag("Termination").unwrap_or_default();
        let found = self
            .tokens
            .last()
            .filter(|t| RESULTS.contains(&t.as_str()))
            .cloned();
        if found.is_some() {
            self.tokens.pop();
        }
        let result = match (tag, found) {
            (Some(tag), Some(found)) if tag != found => {
                return Err(RecordError::ResultMismatch { tag, found });
            }
            (Some(r), _) | (None, Some(r)) => r,
            (None, None) => "*".to_owned(),
        };
        for (i, token) in self.tokens.iter().enumerate() {
            if let Err(error) = token.parse::<Move>() {
                return Err(RecordError::BadMove {
                    turn: i + 1,
                    token: token.clone(),
                    error,
                });
            }
        }
        Ok(GameRecord {
            tags: self.tags,
            fen,
            moves: self.tokens,
            result,
            termination,
        })
    }
}

/// Parses every record in `text` (a tag line after movetext starts the next record).
pub fn parse_pgn(text: &str) -> Result<Vec<GameRecord>, RecordError> {
    let mut records = Vec::new();
    let mut pending = Pending::default();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.starts_with('[') {
            if !pending.tokens.is_empty() {
                records.push(std::mem::take(&mut pending).finish()?);
            }
            let bad = || RecordError::BadTag {
                line: n + 1,
                text: line.to_owned(),
            };
            let (key, value) = line
                .strip_prefix('[')
                .and_then(|l| l.strip_suffix(']'))
                .and_then(|tag| tag.split_once(' '))
                .ok_or_else(bad)?;
            let value = value
                .trim()
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .ok_or_else(bad)?
                .replace("\\\"", "\"")
                .replace("\\\\", "\\");
            pending.tags.push((key.to_owned(), value));
        } else {
            pending.tokens.extend(
                line.split_whitespace()
                    .filter(|t| !is_move_number(t))
                    .map(str::to_owned),
            );
        }
    }
    if !pending.is_empty() {
        records.push(pending.finish()?);
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_replay() {
        let r = GameRecord {
            tags: vec![
                ("Event".into(), "test \"quoted\"".into()),
                ("White".into(), "a".into()),
            ],
            fen: "9/9/9/9/9/9/9/9/9 w 0 12,12".into(),
            moves: ["a1", "i9", "c3", "g7"].map(String::from).to_vec(),
            result: "*".into(),
            termination: "unfinished".into(),
        };
        let text = format!("{}\n{}", r.to_pgn(), r.to_pgn());
        let parsed = parse_pgn(&text).unwrap();
        assert_eq!(parsed, vec![r.clone(), r.clone()]);
        assert!(r.to_pgn().contains("1. a1 i9 2. c3 g7 *"));
        assert_eq!(parsed[0].replay().unwrap().moves().len(), 4);
        assert!(parse_pgn("[FEN \"x\"]\n\n1. a1").is_err());
    }

    #[test]
    fn hand_written_records_need_no_tags() {
        let r = &parse_pgn("1. a1 i9\n2. c3 1-0\n").unwrap()[0];
        assert_eq!(r.fen, Position::initial().to_string());
        assert_eq!((r.result.as_str(), r.termination.as_str()), ("1-0", ""));
        assert_eq!(r.moves, ["a1", "i9", "c3"]);
        assert!(!r.to_pgn().contains("Termination"));
        let unfinished = &parse_pgn("a1 i9").unwrap().into_iter().next().unwrap();
        assert_eq!(unfinished.result, "*");
        // Black to move first: "1... i9".
        let b = GameRecord {
            fen: "9/9/9/9/9/9/9/9/A@8 b 1 11,12".into(),
            moves: vec!["i9".into()],
            ..r.clone()
        };
        assert!(b.to_pgn().contains("1... i9 1-0"));
        assert_eq!(parse_pgn(&b.to_pgn()).unwrap()[0].moves, ["i9"]);
        assert!(parse_pgn("  \n").unwrap().is_empty());
    }

    #[test]
    fn errors_name_the_line_or_the_turn() {
        let e = parse_pgn("[Event \"x\"]\n[Oops]\n1. a1").unwrap_err();
        assert_eq!(
            e,
            RecordError::BadTag {
                line: 2,
                text: "[Oops]".into()
            }
        );
        assert_eq!(
            e.to_string(),
            "line 2: \"[Oops]\" is not a tag like [Event \"name\"]"
        );
        let e = parse_pgn("[Site noquotes]").unwrap_err();
        assert!(matches!(e, RecordError::BadTag { line: 1, .. }), "{e}");

        let e = parse_pgn("1. a1 i9 2. zz9 *").unwrap_err();
        assert!(
            matches!(&e, RecordError::BadMove { turn: 3, token, .. } if token == "zz9"),
            "{e:?}"
        );
        assert!(e.to_string().starts_with("turn 3: \"zz9\": "), "{e}");
        // A result token in the middle is not a move.
        let e = parse_pgn("1. a1 * i9 *").unwrap_err();
        assert!(matches!(e, RecordError::BadMove { turn: 2, .. }), "{e:?}");

        let e = parse_pgn("[Result \"0-1\"]\n1. a1 1-0").unwrap_err();
        assert_eq!(
            e.to_string(),
            "the movetext ends with \"1-0\" but the Result tag says \"0-1\""
        );
        let e = parse_pgn("[FEN \"9/9 w\"]\n1. a1 *").unwrap_err();
        assert!(e.to_string().starts_with("FEN tag \"9/9 w\": "), "{e}");
        // Long input is quoted cut short.
        let long = "x".repeat(10_000);
        let e = parse_pgn(&format!("1. {long} *")).unwrap_err();
        assert!(e.to_string().len() < 300, "{e}");
    }

    #[test]
    fn move_numbers_are_skipped_and_nothing_else() {
        assert!(is_move_number("1."));
        assert!(is_move_number("12..."));
        assert!(!is_move_number("."));
        assert!(!is_move_number("a1."));
        assert!(!is_move_number("12"));
        let e = parse_pgn("1. a1.").unwrap_err();
        assert!(matches!(e, RecordError::BadMove { turn: 1, .. }), "{e:?}");
    }
}
