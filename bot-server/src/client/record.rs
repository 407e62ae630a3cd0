//! Game records in a PGN-like text format, for `emergo play` and `emergo arena`.
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
//! Moves are whole turns in the project notation (a capture chain is one token). Tags are
//! written in the order given; `FEN`, `Result` and `Termination` are always present.

use std::fmt::Write as _;

use emergo_rules::{Game, GameError};

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
    /// adjudication (`move-cap`, `illegal-move`, `timeout`, `engine-failure`, `unfinished`).
    pub termination: String,
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"")
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
        let _ = writeln!(out, "[Termination \"{}\"]", escape(&self.termination));
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

/// Parses every record in `text`.
pub fn parse_pgn(text: &str) -> Result<Vec<GameRecord>, String> {
    let mut records = Vec::new();
    let mut tags: Vec<(String, String)> = Vec::new();
    let mut movetext = String::new();
    let flush = |tags: &mut Vec<(String, String)>,
                 movetext: &mut String,
                 records: &mut Vec<GameRecord>|
     -> Result<(), String> {
        if tags.is_empty() && movetext.trim().is_empty() {
            return Ok(());
        }
        let mut take = |key: &str| -> Result<String, String> {
            let i = tags
                .iter()
                .position(|(k, _)| k == key)
                .ok_or_else(|| format!("record without a {key} tag"))?;
            Ok(tags.remove(i).1)
        };
        let fen = take("FEN")?;
        let result = take("Result")?;
        let termination = take("Termination")?;
        let mut moves: Vec<String> = movetext
            .split_whitespace()
            .filter(|t| !t.ends_with('.'))
            .map(str::to_owned)
            .collect();
        match moves.pop() {
            Some(r) if r == result => {}
            other => {
                return Err(format!(
                    "movetext must end with the result {result}, found {other:?}"
                ));
            }
        }
        records.push(GameRecord {
            tags: std::mem::take(tags),
            fen,
            moves,
            result,
            termination,
        });
        movetext.clear();
        Ok(())
    };
    for line in text.lines() {
        let line = line.trim();
        if let Some(tag) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            if !movetext.trim().is_empty() {
                flush(&mut tags, &mut movetext, &mut records)?;
            }
            let (key, value) = tag
                .split_once(' ')
                .ok_or_else(|| format!("bad tag line {line:?}"))?;
            let value = value
                .trim()
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .ok_or_else(|| format!("bad tag value in {line:?}"))?
                .replace("\\\"", "\"")
                .replace("\\\\", "\\");
            tags.push((key.to_owned(), value));
        } else {
            movetext.push(' ');
            movetext.push_str(line);
        }
    }
    flush(&mut tags, &mut movetext, &mut records)?;
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
}
