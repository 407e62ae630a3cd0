//! Offline tools behind the `emergo` command: they use the rules core directly, no server.

pub mod bench;
pub mod legal;

use emergo_rules::{Game, GameError};

/// Builds a game from a FEN and moves given on the command line.
pub fn game_from_args(fen: &str, moves: &[String]) -> Result<Game, GameError> {
    Game::from_fen_and_moves(fen, moves)
}
