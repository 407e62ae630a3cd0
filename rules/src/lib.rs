//! The Emergo rules core: positions, moves, FEN, notation, legal moves, results, perft and fast
//! random playouts. Std only, no I/O; the specification is `docs/RULES.md` (the project's shared
//! RULES.md, kept identical; "RULES.md §N" in this code means that file; summarised in the
//! README).
//!
//! ```
//! use emergo_rules::{perft, Game, Move, Position};
//!
//! // Parse a position, list its legal moves, play one.
//! let pos: Position = "9/9/2a@1a@4/9/4a@4/3D@5/9/5A@3/6b@2 b 30 0,0".parse()?;
//! let moves: Vec<String> = pos.legal_moves().iter().map(|m| m.to_string()).collect();
//! assert_eq!(moves, ["g1xe3xc5"]);
//! let next = pos.play("g1xe3xc5".parse::<Move>()?)?;
//! assert_eq!(next.to_string(), "9/9/2a@1a@4/9/2bb1a@4/3C@5/9/9/9 w 31 0,0");
//!
//! // Games track history for the repetition rule.
//! let game = Game::from_fen_and_moves("9/9/9/9/9/9/9/9/9 w 0 12,12", &["a1", "i9"])?;
//! assert_eq!(game.position().in_hand(emergo_rules::Player::White), 11);
//! assert_eq!(perft(&Position::initial(), 2), 1504);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Choices where the sources are silent or disagree
//!
//! RULES.md §11 settles them all and this crate follows it: a blocked player and a player who
//! cannot enter both draw (A1, A2); the side to move with no unit and no man in hand loses (A3);
//! threefold repetition is an automatic draw, reported by [`Game`] (A4); the shadow piece goes in
//! whole when the opponent's hand is empty (A6); White's very first entry may not be on `e5`
//! (A7), read as "turns played = 0 and White to move"; the no-feeding test is the single-jump
//! exposure test of §5.3 (A8, A9); capture > entry > step (A10); the maximum counts jumps (A11);
//! only the immediate reversal is banned (A12); units may be jumped repeatedly while still the
//! opponent's (A13, A14); the chain's start square is empty during the chain (A15); and distinct
//! routes are distinct moves (A17). The FEN parser rejects what A18 lists. Two further points the
//! rules leave to the implementation:
//!
//! - A FEN may write adjacent empty runs as separate digits (`45`); they are summed. The printer
//!   always merges runs, as vchess does.
//! - Surrounding whitespace around a FEN is ignored; the fields themselves must be separated by
//!   single spaces.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod diagram;
mod excerpt;
mod fen;
mod game;
mod movegen;
mod moves;
mod outcome;
mod perft;
mod play;
mod playout;
mod position;
pub mod record;
mod square;
mod unit;
mod zobrist;

pub use diagram::{Diagram, unit_label};
pub use excerpt::EXCERPT_CHARS;
pub use fen::{Coord, FenError, Layer, Setup};
pub use game::{Game, GameError, Repetitions};
pub use movegen::MoveList;
pub use moves::{Chain, MAX_CHAIN_JUMPS, Move, ParseMoveError};
pub use outcome::{EndReason, GameResult, Outcome};
pub use perft::{perft, perft_divide};
pub use play::{IllegalMove, IllegalReason};
pub use playout::{Playout, PlayoutRng, playout_rng, random_playout};
pub use position::{INITIAL_FEN, Position};
pub use square::{
    ALL_SQUARES, BitIter, Bitboard, Direction, Jump, NUM_SQUARES, ParseSquareError, Square,
};
pub use unit::{ByPlayer, MEN_PER_COLOUR, Player, Unit};
