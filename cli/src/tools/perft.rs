//! `emergo perft`: the leaf count of the legal-move tree to a depth in turns, the rules core's
//! correctness check against known counts (and a measure of move-generation speed).

use std::io::Write;
use std::time::Instant;

use clap::Args;
use emergo_rules::{INITIAL_FEN, Position, perft, perft_divide};

use super::ToolError;

/// Flags of `emergo perft`.
#[derive(Clone, Debug, Args)]
pub struct PerftArgs {
    /// The position (vchess FEN); defaults to the initial position.
    #[arg(long, default_value = INITIAL_FEN)]
    pub fen: String,
    /// Depth in turns.
    #[arg(long)]
    pub depth: u32,
    /// Also print the count below each first move.
    #[arg(long)]
    pub divide: bool,
}

/// Runs `emergo perft`: with `--divide` a line per first move (sorted), then the total with the
/// time it took.
pub fn run(args: PerftArgs, out: &mut impl Write) -> Result<(), ToolError> {
    let pos: Position = args.fen.parse()?;
    let depth = args.depth;
    let began = Instant::now();
    let total = if args.divide {
        let mut rows: Vec<(String, u64)> = perft_divide(&pos, depth)
            .into_iter()
            .map(|(m, n)| (m.to_string(), n))
            .collect();
        rows.sort();
        for (m, n) in &rows {
            writeln!(out, "{m}: {n}")?;
        }
        rows.iter().map(|(_, n)| n).sum()
    } else {
        perft(&pos, depth)
    };
    let secs = began.elapsed().as_secs_f64();
    writeln!(
        out,
        "perft({depth}) = {total}  ({secs:.3} s, {:.1} Mnodes/s)",
        total as f64 / secs.max(1e-9) / 1e6
    )?;
    Ok(())
}
