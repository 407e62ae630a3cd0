//! Request builders the end-to-end tests share: positions and budgets in the contract's
//! messages, so that each test spells out only what it is about.

use emergo_proto::v1 as pb;

/// A position from a FEN and moves in the project notation.
pub fn position(fen: &str, moves: &[&str]) -> Option<pb::Position> {
    Some(pb::Position {
        fen: fen.to_owned(),
        moves: moves.iter().map(|m| (*m).to_owned()).collect(),
    })
}

/// A budget of `n` playouts.
pub fn playouts(n: u64) -> Option<pb::Limits> {
    Some(pb::Limits {
        max_playouts: Some(n),
        ..Default::default()
    })
}

/// A budget of `ms` milliseconds.
pub fn millis(ms: u32) -> Option<pb::Limits> {
    Some(pb::Limits {
        max_time_ms: Some(ms),
        ..Default::default()
    })
}

/// A BestMove request with the server's default options.
pub fn best_move(fen: &str, moves: &[&str], limits: Option<pb::Limits>) -> pb::BestMoveRequest {
    pb::BestMoveRequest {
        position: position(fen, moves),
        limits,
        options: None,
    }
}
