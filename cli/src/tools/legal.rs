//! `emergo legal`: legal moves of positions, for people (one per line) and scripts (JSONL).

use std::io::{BufRead, Write};

use clap::Args;
use emergo_rules::{Game, INITIAL_FEN, Position};
use serde::Serialize;

use super::ToolError;

/// Flags of `emergo legal`.
#[derive(Clone, Debug, Args)]
pub struct LegalArgs {
    /// The position (vchess FEN); defaults to the initial position.
    #[arg(long, default_value = INITIAL_FEN, conflicts_with = "jsonl")]
    pub fen: String,
    /// Moves played from the FEN first (notation like e5, c3-d4, c3xe5xc7).
    #[arg(long, num_args = 1.., conflicts_with = "jsonl")]
    pub moves: Vec<String>,
    /// Read one FEN per line on stdin and write one JSON object per line.
    #[arg(long)]
    pub jsonl: bool,
}

/// Runs `emergo legal`: the moves of `--fen`/`--moves` one per line, or with `--jsonl` a JSON
/// line for each FEN read from stdin.
pub fn run(args: LegalArgs, out: &mut impl Write) -> Result<(), ToolError> {
    if args.jsonl {
        return Ok(run_jsonl(std::io::stdin().lock(), out)?);
    }
    let game = super::game_from_args(&args.fen, &args.moves)?;
    for (mv, _) in sorted_legal(&game) {
        writeln!(out, "{mv}")?;
    }
    Ok(())
}

/// One line of `emergo legal --jsonl` output for a valid FEN.
#[derive(Serialize)]
struct LegalLine<'a> {
    fen: &'a str,
    legal: Vec<String>,
    after: Vec<String>,
    result: &'static str,
    reason: Option<&'static str>,
}

/// One line of `emergo legal --jsonl` output for an invalid FEN.
#[derive(Serialize)]
struct ErrorLine<'a> {
    fen: &'a str,
    error: String,
}

/// The legal moves of the game's current position in notation, sorted byte-wise, each with the
/// FEN it leads to.
pub fn sorted_legal(game: &Game) -> Vec<(String, String)> {
    let pos = game.position();
    let mut out: Vec<(String, String)> = game
        .legal_moves()
        .iter()
        .map(|&m| {
            let mut next = *pos;
            next.play_unchecked(m);
            (m.to_string(), next.to_string())
        })
        .collect();
    out.sort();
    out
}

/// The JSON line for one input line (a FEN, valid or not).
pub fn jsonl_line(input: &str) -> String {
    let line = match input.parse::<Position>() {
        Err(e) => serde_json::to_string(&ErrorLine {
            fen: input,
            error: e.to_string(),
        }),
        Ok(pos) => {
            let game = Game::new(pos);
            let (legal, after) = sorted_legal(&game).into_iter().unzip();
            let outcome = pos.outcome();
            serde_json::to_string(&LegalLine {
                fen: input,
                legal,
                after,
                result: outcome.map_or("*", |o| o.result.as_str()),
                reason: outcome.map(|o| o.reason.as_str()),
            })
        }
    };
    // Serialising strings and vectors of strings cannot fail.
    line.unwrap_or_default()
}

/// Reads one FEN per line from `input` and writes one JSON object per line to `output`.
/// Empty lines are skipped; invalid lines produce an error object and processing continues.
pub fn run_jsonl(input: impl BufRead, mut output: impl Write) -> std::io::Result<()> {
    for line in input.lines() {
        let line = line?;
        let fen = line.trim_end_matches(['\r', '\n']);
        if fen.trim().is_empty() {
            continue;
        }
        writeln!(output, "{}", jsonl_line(fen))?;
    }
    output.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonl_for_valid_and_invalid() {
        let input = "9/9/9/9/9/9/9/9/9 w 0 12,12\nnot a fen\n\n4LL4/9/9/9/9/9/9/9/9 b 90 0,0\n";
        let mut out = Vec::new();
        run_jsonl(input.as_bytes(), &mut out).unwrap();
        let lines: Vec<serde_json::Value> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0]["legal"].as_array().unwrap().len(), 40);
        assert_eq!(lines[0]["legal"][0], "a1");
        assert_eq!(lines[0]["after"][0], "9/9/9/9/9/9/9/9/A@8 b 1 11,12");
        assert_eq!(lines[0]["result"], "*");
        assert_eq!(lines[0]["reason"], serde_json::Value::Null);
        assert_eq!(lines[1]["fen"], "not a fen");
        assert!(
            lines[1]["error"]
                .as_str()
                .unwrap()
                .contains("4 space-separated fields")
        );
        assert_eq!(lines[2]["result"], "1-0");
        assert_eq!(lines[2]["reason"], "no-units");
    }
}
