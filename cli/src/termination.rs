//! How a game between engines ended: [`Termination`], one vocabulary for in-process matches
//! ([`crate::players::play_game`]) and the arena, written as the records' `Termination` tag and
//! the `termination` of JSON lines (`no-units`, `move-cap`, `time-forfeit`, …).

use std::fmt;

use emergo_rules::{GameResult, Outcome, Player};

/// Why a game ended: by the rules, or adjudicated (a draw at the turn cap, else a loss for the
/// side that caused it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Termination {
    /// By the rules (`no-units`, `blocked`, `no-legal-entry`, `repetition`).
    Rules(Outcome),
    /// The turn cap was reached: adjudicated a draw (`move-cap`).
    MoveCap,
    /// This side's game clock ran out (`time-forfeit`).
    TimeForfeit(Player),
    /// This side's engine gave no answer within its deadline (`timeout`).
    Timeout(Player),
    /// This side's engine offered a move the rules refuse (`illegal-move`).
    IllegalMove(Player),
    /// This side's engine failed or offered no move although the game was not over
    /// (`engine-failure`).
    EngineFailure(Player),
}

impl Termination {
    /// The text of records and JSON lines: the rules' reason, or `move-cap`, `time-forfeit`,
    /// `timeout`, `illegal-move`, `engine-failure`.
    pub const fn as_str(&self) -> &'static str {
        match self {
            Termination::Rules(o) => o.reason.as_str(),
            Termination::MoveCap => "move-cap",
            Termination::TimeForfeit(_) => "time-forfeit",
            Termination::Timeout(_) => "timeout",
            Termination::IllegalMove(_) => "illegal-move",
            Termination::EngineFailure(_) => "engine-failure",
        }
    }

    /// The side that lost by adjudication (the one that caused it); `None` for a game ended
    /// by the rules or the turn cap.
    pub const fn adjudicated_loser(&self) -> Option<Player> {
        match *self {
            Termination::Rules(_) | Termination::MoveCap => None,
            Termination::TimeForfeit(p)
            | Termination::Timeout(p)
            | Termination::IllegalMove(p)
            | Termination::EngineFailure(p) => Some(p),
        }
    }

    /// The game's result.
    pub fn result(&self) -> GameResult {
        match (self, self.adjudicated_loser()) {
            (Termination::Rules(o), _) => o.result,
            (_, Some(loser)) => GameResult::win_for(loser.other()),
            (_, None) => GameResult::Draw,
        }
    }

    /// White's score: 1, ½ or 0.
    pub fn white_score(&self) -> f64 {
        match self.result().winner() {
            Some(Player::White) => 1.0,
            Some(Player::Black) => 0.0,
            None => 0.5,
        }
    }
}

impl fmt::Display for Termination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use emergo_rules::EndReason;

    /// The texts are what records and JSON lines always held: they must not change.
    #[test]
    fn texts_and_scores() {
        let won = Outcome {
            result: GameResult::BlackWins,
            reason: EndReason::NoUnits,
        };
        let cases = [
            (Termination::Rules(won), "no-units", 0.0),
            (Termination::MoveCap, "move-cap", 0.5),
            (Termination::TimeForfeit(Player::White), "time-forfeit", 0.0),
            (Termination::Timeout(Player::Black), "timeout", 1.0),
            (Termination::IllegalMove(Player::White), "illegal-move", 0.0),
            (
                Termination::EngineFailure(Player::Black),
                "engine-failure",
                1.0,
            ),
        ];
        for (t, text, score) in cases {
            assert_eq!(t.to_string(), text);
            assert_eq!(t.white_score(), score, "{t}");
        }
        assert_eq!(Termination::MoveCap.result(), GameResult::Draw);
        assert_eq!(
            Termination::Timeout(Player::White).adjudicated_loser(),
            Some(Player::White)
        );
        assert_eq!(Termination::Rules(won).adjudicated_loser(), None);
    }
}
