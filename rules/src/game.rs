//! A game: a start position, the moves played, and the repetition rule (RULES.md §9).

use std::fmt;

use crate::fen::FenError;
use crate::movegen::MoveList;
use crate::moves::{Move, ParseMoveError};
use crate::outcome::Outcome;
use crate::play::{IllegalMove, IllegalReason};
use crate::position::Position;

/// Hashes of the positions since the last entry, for the threefold-repetition rule in search.
///
/// Entries are the only irreversible turns: the counts in hand are part of a position's
/// identity and only entries change them, so no position before an entry can ever recur.
/// The window therefore restarts at every entry, and only every second hash (same side to move)
/// needs comparing. Hash equality stands in for position identity here; [`Game`] compares
/// positions exactly.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Repetitions {
    hashes: Vec<u64>,
}

impl Repetitions {
    /// A window holding only `start`.
    pub fn new(start: &Position) -> Repetitions {
        let mut hashes = Vec::with_capacity(64);
        hashes.push(start.hash());
        Repetitions { hashes }
    }

    /// Records `pos`, reached by playing `mv`; returns how often `pos` has now occurred.
    #[inline]
    pub fn record(&mut self, mv: Move, pos: &Position) -> usize {
        if mv.is_entry() {
            self.hashes.clear();
        }
        self.hashes.push(pos.hash());
        self.count_last()
    }

    /// How often the last recorded position has occurred in the window.
    #[inline]
    pub fn count_last(&self) -> usize {
        let Some(&last) = self.hashes.last() else {
            return 0;
        };
        self.hashes
            .iter()
            .rev()
            .step_by(2)
            .filter(|&&h| h == last)
            .count()
    }

    /// Number of positions in the window.
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    /// True when nothing has been recorded.
    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// Makes `self` a copy of `other`, reusing storage (cheap per-playout resets in search).
    pub fn copy_from(&mut self, other: &Repetitions) {
        self.hashes.clear();
        self.hashes.extend_from_slice(&other.hashes);
    }
}

/// Why a move given as text could not be played in a game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GameError {
    /// The start FEN is invalid.
    Fen(FenError),
    /// Move number `index` (0-based) is not valid notation.
    Notation {
        /// 0-based index in the move list.
        index: usize,
        /// The text.
        text: String,
        /// The parse error.
        error: ParseMoveError,
    },
    /// Move number `index` (0-based) is illegal.
    Illegal {
        /// 0-based index in the move list.
        index: usize,
        /// Why.
        error: IllegalMove,
    },
}

impl fmt::Display for GameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GameError::Fen(e) => write!(f, "invalid FEN: {e}"),
            GameError::Notation { index, text, error } => {
                write!(
                    f,
                    "move {} ({}): {error}",
                    index + 1,
                    crate::excerpt::Excerpt(text)
                )
            }
            GameError::Illegal { index, error } => write!(f, "move {}: {error}", index + 1),
        }
    }
}

impl std::error::Error for GameError {}

/// A game from a start position: the moves played and every position reached.
///
/// ```
/// use emergo_rules::{Game, Position};
/// let mut game = Game::new(Position::initial());
/// game.play_str("a1").unwrap();
/// assert_eq!(game.position().to_string(), "9/9/9/9/9/9/9/9/A@8 b 1 11,12");
/// assert!(game.outcome().is_none());
/// ```
#[derive(Clone, Debug)]
pub struct Game {
    moves: Vec<Move>,
    positions: Vec<Position>,
}

impl Game {
    /// A game starting at `start`.
    pub fn new(start: Position) -> Game {
        Game {
            moves: Vec::new(),
            positions: vec![start],
        }
    }

    /// A game from a FEN and moves in notation, like UCI's `position fen … moves …`.
    pub fn from_fen_and_moves<S: AsRef<str>>(fen: &str, moves: &[S]) -> Result<Game, GameError> {
        let mut game = Game::new(fen.parse().map_err(GameError::Fen)?);
        for (index, text) in moves.iter().enumerate() {
            let text = text.as_ref();
            let mv = text.parse().map_err(|error| GameError::Notation {
                index,
                text: text.to_owned(),
                error,
            })?;
            game.play(mv)
                .map_err(|error| GameError::Illegal { index, error })?;
        }
        Ok(game)
    }

    /// The start position.
    pub fn start(&self) -> &Position {
        &self.positions[0]
    }

    /// The current position.
    pub fn position(&self) -> &Position {
        // `positions` always holds at least the start position.
        &self.positions[self.positions.len() - 1]
    }

    /// The moves played.
    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// Every position from the start to the current one.
    pub fn positions(&self) -> &[Position] {
        &self.positions
    }

    /// How often the current position has occurred (1 the first time).
    pub fn repetition_count(&self) -> usize {
        let now = self.position();
        self.positions
            .iter()
            .rev()
            .step_by(2)
            .filter(|p| p.same_identity(now))
            .count()
    }

    /// The outcome of the game, including the threefold-repetition draw.
    pub fn outcome(&self) -> Option<Outcome> {
        self.position()
            .outcome()
            .or_else(|| (self.repetition_count() >= 3).then_some(Outcome::REPETITION))
    }

    /// Legal moves now (none once the game is over, repetition included).
    pub fn legal_moves(&self) -> MoveList {
        if self.repetition_count() >= 3 {
            MoveList::new()
        } else {
            self.position().legal_moves()
        }
    }

    /// Plays `mv` if legal; the game is unchanged otherwise.
    pub fn play(&mut self, mv: Move) -> Result<(), IllegalMove> {
        if let Some(outcome) = self.outcome() {
            return Err(IllegalMove {
                mv,
                reason: IllegalReason::GameOver(outcome),
            });
        }
        let next = self.position().play(mv)?;
        self.moves.push(mv);
        self.positions.push(next);
        Ok(())
    }

    /// Parses and plays one move in notation.
    pub fn play_str(&mut self, text: &str) -> Result<Move, GameError> {
        let index = self.moves.len();
        let mv = text.parse().map_err(|error| GameError::Notation {
            index,
            text: text.to_owned(),
            error,
        })?;
        self.play(mv)
            .map_err(|error| GameError::Illegal { index, error })?;
        Ok(mv)
    }

    /// Takes back the last move, returning it.
    pub fn undo(&mut self) -> Option<Move> {
        let mv = self.moves.pop()?;
        self.positions.pop();
        Some(mv)
    }

    /// The repetition window of the current position, for search.
    pub fn repetitions(&self) -> Repetitions {
        let since_entry = self
            .moves
            .iter()
            .rposition(|m| m.is_entry())
            .map_or(0, |i| i + 1);
        Repetitions {
            hashes: self.positions[since_entry..]
                .iter()
                .map(|p| p.hash())
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::{EndReason, GameResult};

    #[test]
    fn threefold_repetition_is_a_draw() {
        // Two lone units step back and forth.
        let fen = "9/9/9/9/4a@4/9/9/9/A@8 w 40 0,0";
        let shuffle = ["a1-b2", "e5-d6", "b2-a1", "d6-e5"];
        let mut game = Game::from_fen_and_moves(fen, &shuffle).unwrap();
        assert_eq!(game.repetition_count(), 2);
        assert!(game.outcome().is_none());
        let mut reps = Repetitions::new(game.start());
        for (m, p) in game.moves().iter().zip(&game.positions()[1..]) {
            reps.record(*m, p);
        }
        assert_eq!(reps.count_last(), 2);
        assert_eq!(reps, game.repetitions());
        for m in shuffle {
            game.play_str(m).unwrap();
        }
        assert_eq!(game.repetition_count(), 3);
        assert_eq!(
            game.outcome(),
            Some(Outcome {
                result: GameResult::Draw,
                reason: EndReason::Repetition
            })
        );
        assert!(game.legal_moves().is_empty());
        let err = game.play_str("a1-b2").unwrap_err();
        assert!(matches!(
            err,
            GameError::Illegal {
                error: IllegalMove {
                    reason: IllegalReason::GameOver(_),
                    ..
                },
                ..
            }
        ));
        assert!(game.undo().is_some());
        assert!(game.outcome().is_none());
    }

    #[test]
    fn errors_name_the_move() {
        let e = Game::from_fen_and_moves("9/9/9/9/9/9/9/9/9 w 0 12,12", &["a1", "zz"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "move 2 (\"zz\"): \"zz\" is not a square (expected a file a-i and a rank 1-9, e.g. e5)"
        );
        let e = Game::from_fen_and_moves("9/9/9/9/9/9/9/9/9 w 0 12,12", &["e5"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "move 1: e5: White's first entry may not be on e5"
        );
    }
}
