//! Results of a game (RULES.md §9).

use std::fmt;

use crate::position::Position;
use crate::unit::Player;

/// The result of a finished game.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum GameResult {
    /// `1-0`.
    WhiteWins,
    /// `0-1`.
    BlackWins,
    /// `1/2`.
    Draw,
}

impl GameResult {
    /// A win for `player`.
    pub const fn win_for(player: Player) -> GameResult {
        match player {
            Player::White => GameResult::WhiteWins,
            Player::Black => GameResult::BlackWins,
        }
    }

    /// The winner, or `None` for a draw.
    pub const fn winner(self) -> Option<Player> {
        match self {
            GameResult::WhiteWins => Some(Player::White),
            GameResult::BlackWins => Some(Player::Black),
            GameResult::Draw => None,
        }
    }

    /// The notation used by the vectors and the service: `1-0`, `0-1`, `1/2`.
    pub const fn as_str(self) -> &'static str {
        match self {
            GameResult::WhiteWins => "1-0",
            GameResult::BlackWins => "0-1",
            GameResult::Draw => "1/2",
        }
    }
}

impl fmt::Display for GameResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a game ended.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum EndReason {
    /// The side to move has no unit and no man in hand: it loses.
    NoUnits,
    /// The side to move has units but no men in hand and cannot capture or step: draw.
    Blocked,
    /// The side to move has men in hand, no capture, and every empty square is barred: draw.
    NoLegalEntry,
    /// The same position arose for the third time: draw. Only a [`crate::Game`] (which knows
    /// the history) reports this.
    Repetition,
}

impl EndReason {
    /// The notation used by the vectors and the service: `no-units`, `blocked`,
    /// `no-legal-entry`, `repetition`.
    pub const fn as_str(self) -> &'static str {
        match self {
            EndReason::NoUnits => "no-units",
            EndReason::Blocked => "blocked",
            EndReason::NoLegalEntry => "no-legal-entry",
            EndReason::Repetition => "repetition",
        }
    }
}

impl fmt::Display for EndReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A finished game's result and the reason.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Outcome {
    /// Who won.
    pub result: GameResult,
    /// Why the game ended.
    pub reason: EndReason,
}

impl Outcome {
    /// The automatic draw on the third occurrence of a position (RULES.md §9).
    pub const REPETITION: Outcome = Outcome {
        result: GameResult::Draw,
        reason: EndReason::Repetition,
    };
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.result, self.reason)
    }
}

impl Position {
    /// The outcome decided by the position alone, or `None` while the game goes on.
    ///
    /// Repetition needs the history and is reported by [`crate::Game::outcome`] instead.
    pub fn outcome(&self) -> Option<Outcome> {
        let me = self.side_to_move();
        let hand = self.in_hand(me);
        if self.units_of(me) == 0 && hand == 0 {
            return Some(Outcome {
                result: GameResult::win_for(me.other()),
                reason: EndReason::NoUnits,
            });
        }
        if self.has_legal_move() {
            return None;
        }
        let reason = if hand > 0 {
            EndReason::NoLegalEntry
        } else {
            EndReason::Blocked
        };
        Some(Outcome {
            result: GameResult::Draw,
            reason,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(fen: &str) -> Option<Outcome> {
        fen.parse::<Position>().unwrap().outcome()
    }

    #[test]
    fn rules_examples() {
        assert_eq!(outcome("9/9/9/9/9/9/9/9/9 w 0 12,12"), None);
        assert_eq!(
            outcome("4LL4/9/9/9/9/9/9/9/9 b 90 0,0"),
            Some(Outcome {
                result: GameResult::WhiteWins,
                reason: EndReason::NoUnits
            })
        );
        assert_eq!(
            outcome(
                "a@1a@1A@1a@1A@/1a@7/a@7a@/1A@3A@1a@1/A@1A@5a@/3A@1A@3/a@7A@/9/A@1a@1A@1a@1A@ b 23 0,1"
            ),
            Some(Outcome {
                result: GameResult::Draw,
                reason: EndReason::NoLegalEntry
            })
        );
    }

    #[test]
    fn no_units_but_men_in_hand_is_not_lost() {
        assert_eq!(outcome("4LK4/9/9/9/9/9/9/9/9 b 90 0,1"), None);
    }
}
