//! Offline tools behind the `emergo` command: they use the rules core directly, no server.

pub mod bench;
pub mod legal;

use emergo_rules::{Game, GameError};

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
