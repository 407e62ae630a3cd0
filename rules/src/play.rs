//! Checked play: a move is applied only if it is legal, and otherwise the error says why.

use std::fmt;

use crate::moves::Move;
use crate::outcome::Outcome;
use crate::position::Position;
use crate::square::{Direction, Jump, Square};

/// Why a move is not legal in a position.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum IllegalReason {
    /// The game is already over.
    GameOver(Outcome),
    /// A capture is available, so the turn must be a capture chain of this many jumps.
    MustCapture {
        /// Jumps of the longest chain.
        longest: usize,
    },
    /// A capture chain was given but no capture is available.
    NoCaptureAvailable,
    /// The chain is legal as far as it goes but shorter than the longest available.
    NotMaximal {
        /// Jumps in the given chain.
        jumps: usize,
        /// Jumps of the longest chain.
        longest: usize,
    },
    /// The chain stops although its unit can jump on (a chain must be played to its end).
    Incomplete {
        /// Where the chain stopped.
        at: Square,
    },
    /// Jump number `jump` (1-based) is not a capture: nothing of the opponent's to take, or the
    /// landing square is occupied.
    NotACapture {
        /// 1-based jump number.
        jump: usize,
        /// The square jumped over.
        over: Square,
        /// The landing square.
        to: Square,
    },
    /// The chain is unfinished, and no way to finish it reaches the maximum: the route chosen
    /// so far captures at most `best` men, another route `longest` (RULES.md §7.3).
    RouteTooShort {
        /// The most jumps a chain beginning like this one can make.
        best: usize,
        /// Jumps of the longest chain available.
        longest: usize,
    },
    /// Jump number `jump` reverses the previous jump (180° turn).
    Reversal {
        /// 1-based jump number.
        jump: usize,
    },
    /// There is no unit on the square.
    EmptySquare(Square),
    /// The unit on the square belongs to the opponent.
    NotYourUnit(Square),
    /// The target square is occupied.
    Occupied(Square),
    /// Men in hand must be entered before any unit may step.
    MustEnter,
    /// An entry, but no men are left in hand.
    NoMenInHand,
    /// White's first entry may not be on `e5`.
    CentreBan,
    /// Entering here would offer the opponent a capture while it has none.
    Feeding(Square),
}

/// An illegal move and the reason; the position it was tried on is unchanged.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct IllegalMove {
    /// The move that was refused.
    pub mv: Move,
    /// Why.
    pub reason: IllegalReason,
}

impl fmt::Display for IllegalMove {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mv = self.mv;
        match self.reason {
            IllegalReason::GameOver(o) => write!(f, "{mv}: the game is over ({o})"),
            IllegalReason::MustCapture { longest } => write!(
                f,
                "{mv}: a capture is available, so the turn must be a capture chain of {longest} jump(s)"
            ),
            IllegalReason::NoCaptureAvailable => write!(f, "{mv}: there is nothing to capture"),
            IllegalReason::NotMaximal { jumps, longest } => write!(
                f,
                "{mv}: captures {jumps} but the longest chain captures {longest}; the maximum is compulsory"
            ),
            IllegalReason::RouteTooShort { best, longest } => write!(
                f,
                "{mv}: this route captures at most {best}, but another captures {longest}; the maximum capture is compulsory"
            ),
            IllegalReason::Incomplete { at } => {
                write!(
                    f,
                    "{mv}: the chain must go on, the unit on {at} can jump again"
                )
            }
            IllegalReason::NotACapture { jump, over, to } => write!(
                f,
                "{mv}: jump {jump} over {over} to {to} is not a capture (it needs an opponent unit on {over} and {to} empty)"
            ),
            IllegalReason::Reversal { jump } => write!(
                f,
                "{mv}: jump {jump} turns back 180 degrees over the unit just jumped"
            ),
            IllegalReason::EmptySquare(sq) => write!(f, "{mv}: there is no unit on {sq}"),
            IllegalReason::NotYourUnit(sq) => write!(f, "{mv}: the unit on {sq} is the opponent's"),
            IllegalReason::Occupied(sq) => write!(f, "{mv}: {sq} is occupied"),
            IllegalReason::MustEnter => write!(
                f,
                "{mv}: men in hand must be entered before any unit may move"
            ),
            IllegalReason::NoMenInHand => write!(f, "{mv}: no men left in hand to enter"),
            IllegalReason::CentreBan => write!(f, "{mv}: White's first entry may not be on e5"),
            IllegalReason::Feeding(sq) => write!(
                f,
                "{mv}: a unit entered on {sq} could be captured at once, and the opponent has no capture yet"
            ),
        }
    }
}

impl std::error::Error for IllegalMove {}

impl Position {
    /// Plays `mv` if it is legal, returning the new position; otherwise says why it is illegal.
    ///
    /// ```
    /// use emergo_rules::Position;
    /// let pos = Position::initial();
    /// let next = pos.play("a1".parse().unwrap()).unwrap();
    /// assert_eq!(next.to_string(), "9/9/9/9/9/9/9/9/A@8 b 1 11,12");
    /// let err = pos.play("e5".parse().unwrap()).unwrap_err();
    /// assert_eq!(err.to_string(), "e5: White's first entry may not be on e5");
    /// ```
    pub fn play(&self, mv: Move) -> Result<Position, IllegalMove> {
        if self.legal_moves().contains(mv) {
            let mut next = *self;
            next.play_unchecked(mv);
            Ok(next)
        } else {
            Err(IllegalMove {
                mv,
                reason: self.why_illegal(mv),
            })
        }
    }

    /// Explains why `mv` (known not to be legal) is illegal.
    fn why_illegal(&self, mv: Move) -> IllegalReason {
        if let Some(o) = self.outcome() {
            return IllegalReason::GameOver(o);
        }
        let me = self.side_to_move();
        let longest = self.max_capture_len();
        let own = |sq: Square| match self.unit_at(sq) {
            None => Err(IllegalReason::EmptySquare(sq)),
            Some(u) if u.owner != me => Err(IllegalReason::NotYourUnit(sq)),
            Some(_) => Ok(()),
        };
        let result = match mv {
            Move::Capture(chain) => (|| {
                if longest == 0 {
                    return Err(IllegalReason::NoCaptureAvailable);
                }
                own(chain.from())?;
                // Replay the chain on a scratch position, one jump at a time.
                let mut scratch = *self;
                let mut at = chain.from();
                let mut prev: Option<Direction> = None;
                for (i, d) in chain.dirs().enumerate() {
                    if prev == Some(d.opposite()) {
                        return Err(IllegalReason::Reversal { jump: i + 1 });
                    }
                    let Some(jump @ Jump { over, to }) = at.jump(d) else {
                        return Err(IllegalReason::Incomplete { at });
                    };
                    let capturable = scratch.unit_at(over).is_some_and(|u| u.owner != me);
                    let landing_free = scratch.unit_at(to).is_none();
                    if !capturable || !landing_free {
                        return Err(IllegalReason::NotACapture {
                            jump: i + 1,
                            over,
                            to,
                        });
                    }
                    scratch = scratch.after_jump(at, jump);
                    at = to;
                    prev = Some(d);
                }
                if scratch.can_continue(at, prev) {
                    // Say "go on" only if going on can make a legal chain: otherwise the rule
                    // that refuses the route is the maximum capture.
                    let best = self.longest_chain_through(chain);
                    if best < longest {
                        return Err(IllegalReason::RouteTooShort { best, longest });
                    }
                    return Err(IllegalReason::Incomplete { at });
                }
                Err(IllegalReason::NotMaximal {
                    jumps: chain.len(),
                    longest,
                })
            })(),
            _ if longest > 0 => Err(IllegalReason::MustCapture { longest }),
            Move::Enter(sq) => {
                if self.in_hand(me) == 0 {
                    Err(IllegalReason::NoMenInHand)
                } else if self.unit_at(sq).is_some() {
                    Err(IllegalReason::Occupied(sq))
                } else if sq == Square::E5 && self.turns() == 0 && me == crate::Player::White {
                    Err(IllegalReason::CentreBan)
                } else {
                    Err(IllegalReason::Feeding(sq))
                }
            }
            Move::Step { from, to } => {
                if self.in_hand(me) > 0 {
                    Err(IllegalReason::MustEnter)
                } else {
                    own(from).and(Err(IllegalReason::Occupied(to)))
                }
            }
        };
        match result {
            Err(reason) => reason,
            // Unreachable for a move that is not in the legal list; keep a truthful answer anyway.
            Ok(()) => IllegalReason::NotMaximal { jumps: 0, longest },
        }
    }

    /// The position after the unit on `from` makes `jump`, for replaying a chain jump by jump.
    /// The side to move stays the same.
    fn after_jump(&self, from: Square, jump: Jump) -> Position {
        let mut p = *self;
        p.apply_single_jump(from, jump);
        p
    }

    /// True if the unit on `at` has a jump other than the reversal of `prev`.
    fn can_continue(&self, at: Square, prev: Option<Direction>) -> bool {
        let me = self.side_to_move();
        Direction::ALL.into_iter().any(|d| {
            prev != Some(d.opposite())
                && at.jump(d).is_some_and(|Jump { over, to }| {
                    self.unit_at(over).is_some_and(|u| u.owner != me) && self.unit_at(to).is_none()
                })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(fen: &str, mv: &str) -> IllegalReason {
        let pos: Position = fen.parse().unwrap();
        let err = pos.play(mv.parse().unwrap()).unwrap_err();
        assert!(!err.to_string().is_empty());
        err.reason
    }

    const ROUND_TRIP: &str = "9/9/2a@1a@4/9/2bb1a@4/3C@5/9/9/9 w 31 0,0";

    #[test]
    fn capture_reasons() {
        let sq = |s: &str| s.parse::<Square>().unwrap();
        assert_eq!(
            reason(ROUND_TRIP, "d4xf6xd8xb6xd4"),
            IllegalReason::NotMaximal {
                jumps: 4,
                longest: 5
            }
        );
        assert_eq!(
            reason(ROUND_TRIP, "d4xb6"),
            IllegalReason::Incomplete { at: sq("b6") }
        );
        // Going on from f6 is possible, but no chain that way reaches the maximum.
        assert_eq!(
            reason(ROUND_TRIP, "d4xf6"),
            IllegalReason::RouteTooShort {
                best: 4,
                longest: 5
            }
        );
        assert!(
            ROUND_TRIP
                .parse::<Position>()
                .unwrap()
                .play("d4xf6".parse().unwrap())
                .unwrap_err()
                .to_string()
                .contains("captures at most 4, but another captures 5")
        );
        assert_eq!(
            reason(ROUND_TRIP, "d4xf6xd8"),
            IllegalReason::RouteTooShort {
                best: 4,
                longest: 5
            }
        );
        assert_eq!(
            reason(ROUND_TRIP, "d4xb6xd4"),
            IllegalReason::Reversal { jump: 2 }
        );
        assert_eq!(
            reason(ROUND_TRIP, "d4xf2"),
            IllegalReason::NotACapture {
                jump: 1,
                over: sq("e3"),
                to: sq("f2")
            }
        );
        assert_eq!(
            reason(ROUND_TRIP, "a1xc3"),
            IllegalReason::EmptySquare(sq("a1"))
        );
        assert_eq!(
            reason(ROUND_TRIP, "c5xe3"),
            IllegalReason::NotYourUnit(sq("c5"))
        );
        assert_eq!(
            reason(ROUND_TRIP, "d4-e3"),
            IllegalReason::MustCapture { longest: 5 }
        );
        assert_eq!(
            reason("9/9/9/9/9/9/9/9/9 w 0 12,12", "a1xc3"),
            IllegalReason::NoCaptureAvailable
        );
    }

    #[test]
    fn entry_and_step_reasons() {
        let sq = |s: &str| s.parse::<Square>().unwrap();
        assert_eq!(
            reason("9/9/9/9/9/9/9/9/9 w 0 12,12", "e5"),
            IllegalReason::CentreBan
        );
        // Black may enter on e5 on his first turn.
        let pos: Position = "9/9/9/9/9/9/9/9/A@8 b 1 11,12".parse().unwrap();
        assert!(pos.play("e5".parse().unwrap()).is_ok());
        assert_eq!(
            reason("9/9/9/9/9/9/9/9/A@8 b 1 11,12", "a1"),
            IllegalReason::Occupied(sq("a1"))
        );
        // White on d4: Black may not enter on c3 (d4 could jump it to b2) nor on e5, c5, e3.
        let fen = "9/9/9/9/9/3A@5/9/9/9 b 1 11,12";
        assert_eq!(reason(fen, "c3"), IllegalReason::Feeding(sq("c3")));
        assert_eq!(reason(fen, "e5"), IllegalReason::Feeding(sq("e5")));
        assert_eq!(
            reason("9/9/9/9/9/3A@5/9/9/9 w 10 0,11", "e5"),
            IllegalReason::NoMenInHand
        );
        assert_eq!(reason(fen, "d4-e5"), IllegalReason::MustEnter);
        let moving = "9/9/9/9/9/3A@5/9/9/4a@4 w 10 0,0";
        assert_eq!(
            reason(moving, "e1-f2"),
            IllegalReason::NotYourUnit(sq("e1"))
        );
        assert_eq!(
            reason(moving, "c1-d2"),
            IllegalReason::EmptySquare(sq("c1"))
        );
        assert_eq!(
            reason("9/9/9/9/9/3A@5/4a@4/5a@3/9 w 10 0,0", "d4-e3"),
            IllegalReason::Occupied(sq("e3"))
        );
    }

    #[test]
    fn game_over() {
        assert!(matches!(
            reason("4LL4/9/9/9/9/9/9/9/9 b 90 0,0", "a1"),
            IllegalReason::GameOver(_)
        ));
    }
}
