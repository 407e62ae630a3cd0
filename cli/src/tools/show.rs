//! `emergo show`: a position drawn as a text diagram (stacks, men in hand, the side to move),
//! with its FEN and, when the moves ended the game, how.

use std::io::Write;

use clap::Args;
use emergo_rules::INITIAL_FEN;

use super::ToolError;

/// Flags of `emergo show`.
#[derive(Clone, Debug, Args)]
pub struct ShowArgs {
    /// The position (vchess FEN); defaults to the initial position.
    #[arg(long, default_value = INITIAL_FEN)]
    pub fen: String,
    /// Moves played from the FEN first.
    #[arg(long, num_args = 1..)]
    pub moves: Vec<String>,
}

/// Runs `emergo show`.
pub fn run(args: ShowArgs, out: &mut impl Write) -> Result<(), ToolError> {
    let game = super::game_from_args(&args.fen, &args.moves)?;
    write!(out, "{}", game.position().diagram())?;
    writeln!(out, "FEN: {}", game.position())?;
    // A position that is over by itself says so in its diagram; only a game ended by its
    // history (a repetition) needs the line.
    if let Some(o) = game.outcome() {
        if game.position().outcome().is_none() {
            writeln!(out, "Game over: {o}")?;
        }
    }
    Ok(())
}
