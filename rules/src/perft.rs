//! Turn-level perft: the number of move sequences of a given length (RULES.md §13).

use crate::moves::Move;
use crate::position::Position;

/// Counts the leaf nodes of the legal-move tree `depth` turns deep. A whole capture chain is
/// one turn, distinct chains count separately even when they reach the same position, and the
/// repetition rule is not applied (as in the reference counts).
///
/// ```
/// use emergo_rules::{perft, Position};
/// assert_eq!(perft(&Position::initial(), 2), 1504);
/// ```
pub fn perft(pos: &Position, depth: u32) -> u64 {
    match depth {
        0 => 1,
        1 => pos.count_legal_moves(),
        _ => pos
            .legal_moves()
            .iter()
            .map(|&m| {
                let mut next = *pos;
                next.play_unchecked(m);
                perft(&next, depth - 1)
            })
            .sum(),
    }
}

/// Perft split by first move, in generation order.
pub fn perft_divide(pos: &Position, depth: u32) -> Vec<(Move, u64)> {
    if depth == 0 {
        return Vec::new();
    }
    pos.legal_moves()
        .iter()
        .map(|&m| {
            let mut next = *pos;
            next.play_unchecked(m);
            (m, perft(&next, depth - 1))
        })
        .collect()
}
