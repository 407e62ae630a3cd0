//! Offline tools behind the `emergo` command: they use the rules core (and the engine's
//! learning code) directly, no server and no async runtime. One module per subcommand, each
//! with its flags (`…Args`) and its `run`, as the client commands have:
//!
//! - [`legal`]: the legal moves of a position, or of FENs on stdin as JSON lines;
//! - [`perft`]: leaf counts of the legal-move tree;
//! - [`bench`]: random playouts per second of the rules core, or of the MCTS search;
//! - [`learn_eval`]: the evaluation weights fitted to self-play results;
//! - [`learn_value`]: the value network distilled from alpha-beta searches;
//! - [`show`]: a position as a text diagram.
//!
//! Each `run` writes to the output it is given (the binary's locked, buffered stdout) and
//! fails with a [`ToolError`].

pub mod bench;
pub mod learn_eval;
pub mod learn_value;
pub mod legal;
pub mod perft;
pub mod show;

use emergo_rules::{Game, GameError};

/// Errors of the offline tools; the binary prints them after `emergo: ` and exits with 2.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// Bad flags, or flags that do not go together; the message names them.
    #[error("{0}")]
    Invalid(String),
    /// A FEN that does not parse.
    #[error(transparent)]
    Fen(#[from] emergo_rules::FenError),
    /// A FEN and moves that do not make a game (an illegal move, say).
    #[error(transparent)]
    Game(#[from] GameError),
    /// Reading input or writing output failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// A report could not be written as JSON.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

/// Builds a game from a FEN and moves given on the command line. Moves are typed by people,
/// and the notation is all lower case, so `C3` is read as `c3`.
pub fn game_from_args(fen: &str, moves: &[String]) -> Result<Game, GameError> {
    let moves: Vec<String> = moves.iter().map(|m| m.to_ascii_lowercase()).collect();
    Game::from_fen_and_moves(fen, &moves)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_in_upper_case_are_read() {
        let fen = emergo_rules::INITIAL_FEN;
        let upper = game_from_args(fen, &["A1".to_owned(), "I9".to_owned()]).unwrap();
        let lower = game_from_args(fen, &["a1".to_owned(), "i9".to_owned()]).unwrap();
        assert_eq!(upper.position(), lower.position());
    }
}
