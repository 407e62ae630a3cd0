//! Moves (turns) and their notation (RULES.md §8).
//!
//! A [`Move`] is one whole turn: an entry (`e5`), a plain step (`c3-d4`) or a complete capture
//! chain (`c3xe5xc7`). Moves parsed from text are only *well formed* (squares exist, steps are
//! adjacent, jumps are two squares apart); whether they are legal is up to a position.

use std::fmt;
use std::str::FromStr;

use crate::square::{Direction, ParseSquareError, Square};

/// Largest number of jumps a chain can have: every jump takes one of the opponent's 12 men.
pub const MAX_CHAIN_JUMPS: usize = 12;

/// A capture chain: a start square and the direction of each jump.
///
/// Storing directions (2 bits each) rather than landing squares keeps the type at 8 bytes and
/// makes every value a geometrically meaningful route from its start; whether the route stays on
/// the board is checked when the chain is built from text or generated.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Chain {
    from: Square,
    len: u8,
    dirs: u32,
}

impl Chain {
    /// A chain of no jumps yet, starting at `from`.
    #[inline]
    pub(crate) const fn start(from: Square) -> Chain {
        Chain {
            from,
            len: 0,
            dirs: 0,
        }
    }

    /// This chain with one more jump in direction `dir`.
    #[inline]
    pub(crate) const fn push(self, dir: Direction) -> Chain {
        Chain {
            from: self.from,
            len: self.len + 1,
            dirs: self.dirs | ((dir as u32) << (2 * self.len)),
        }
    }

    /// The start square.
    #[inline]
    pub const fn from(self) -> Square {
        self.from
    }

    /// Number of jumps (= men captured).
    #[inline]
    pub const fn len(self) -> usize {
        self.len as usize
    }

    /// True for the (never legal) chain of no jumps.
    #[inline]
    pub const fn is_empty(self) -> bool {
        self.len == 0
    }

    /// Direction of jump `i`.
    #[inline]
    pub const fn dir(self, i: usize) -> Direction {
        Direction::from_index((self.dirs >> (2 * i)) as usize & 3)
    }

    /// Whether this chain begins with `prefix` (same start, same first jumps).
    pub(crate) fn starts_with(self, prefix: Chain) -> bool {
        let mask = (1u64 << (2 * u32::from(prefix.len))) - 1;
        self.from == prefix.from
            && self.len >= prefix.len
            && u64::from(self.dirs) & mask == u64::from(prefix.dirs)
    }

    /// The directions of the jumps, in order.
    pub fn dirs(self) -> impl Iterator<Item = Direction> {
        (0..self.len()).map(move |i| self.dir(i))
    }

    /// The landing squares, in order. (The route is valid by construction.)
    pub fn landings(self) -> impl Iterator<Item = Square> {
        let mut at = self.from;
        self.dirs().map_while(move |d| {
            at = at.jump_landing(d)?;
            Some(at)
        })
    }

    /// The square where the chain ends.
    pub fn to(self) -> Square {
        self.landings().last().unwrap_or(self.from)
    }
}

/// One whole turn.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Move {
    /// Enter a new unit (one man, or the shadow piece) on an empty square.
    Enter(Square),
    /// Move a unit one step diagonally to an empty square.
    Step {
        /// Where the unit stands.
        from: Square,
        /// The adjacent empty square it moves to.
        to: Square,
    },
    /// A complete capture chain.
    Capture(Chain),
}

impl Move {
    /// True for captures.
    pub const fn is_capture(self) -> bool {
        matches!(self, Move::Capture(_))
    }

    /// True for entries.
    pub const fn is_entry(self) -> bool {
        matches!(self, Move::Enter(_))
    }
}

impl fmt::Display for Chain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.from)?;
        for sq in self.landings() {
            write!(f, "x{sq}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Move::Enter(sq) => write!(f, "{sq}"),
            Move::Step { from, to } => write!(f, "{from}-{to}"),
            Move::Capture(chain) => write!(f, "{chain}"),
        }
    }
}

/// Why a move could not be parsed (RULES.md §8 notation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseMoveError {
    /// The text is empty.
    Empty,
    /// A square in the move is not a playable square.
    Square(ParseSquareError),
    /// `from-to` where the squares are not diagonal neighbours.
    NotAdjacent {
        /// Start square.
        from: Square,
        /// Target square.
        to: Square,
    },
    /// In a chain, two consecutive squares are not a jump (two diagonal steps) apart.
    NotAJump {
        /// Where the jump starts.
        from: Square,
        /// Where it was said to land.
        to: Square,
    },
    /// A chain of more than 12 jumps (each jump captures one of the opponent's 12 men).
    ChainTooLong(usize),
    /// Both `-` and `x` in one move, or a step with more than two squares.
    Malformed(String),
}

impl fmt::Display for ParseMoveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseMoveError::Empty => f.write_str("empty move"),
            ParseMoveError::Square(e) => write!(f, "{e}"),
            ParseMoveError::NotAdjacent { from, to } => {
                write!(
                    f,
                    "{from}-{to}: a step goes to a diagonally adjacent square"
                )
            }
            ParseMoveError::NotAJump { from, to } => write!(
                f,
                "{from}x{to}: each capture jump lands two squares away along a diagonal"
            ),
            ParseMoveError::ChainTooLong(n) => {
                write!(f, "a capture chain has at most 12 jumps, this one has {n}")
            }
            ParseMoveError::Malformed(s) => write!(
                f,
                "{} is not a move (expected an entry like e5, a step like c3-d4 or a capture like c3xe5xc7)",
                crate::excerpt::Excerpt(s)
            ),
        }
    }
}

impl std::error::Error for ParseMoveError {}

impl From<ParseSquareError> for ParseMoveError {
    fn from(e: ParseSquareError) -> Self {
        ParseMoveError::Square(e)
    }
}

impl FromStr for Move {
    type Err = ParseMoveError;

    fn from_str(s: &str) -> Result<Move, ParseMoveError> {
        if s.is_empty() {
            return Err(ParseMoveError::Empty);
        }
        // A separator at either end or doubled ("xyz", "c3-", "c3xxe5") leaves an empty square
        // name: the text is not shaped like a move at all, which says more than `"" is not a
        // square` would.
        if s.split(['-', 'x']).any(str::is_empty) {
            return Err(ParseMoveError::Malformed(s.to_owned()));
        }
        let has_step = s.contains('-');
        let has_jump = s.contains('x');
        match (has_step, has_jump) {
            (false, false) => Ok(Move::Enter(s.parse()?)),
            (true, false) => {
                let mut parts = s.split('-');
                let (Some(a), Some(b), None) = (parts.next(), parts.next(), parts.next()) else {
                    return Err(ParseMoveError::Malformed(s.to_owned()));
                };
                let (from, to): (Square, Square) = (a.parse()?, b.parse()?);
                match from.step_direction_to(to) {
                    Some(_) => Ok(Move::Step { from, to }),
                    None => Err(ParseMoveError::NotAdjacent { from, to }),
                }
            }
            (false, true) => {
                let mut parts = s.split('x');
                let first = parts.next().unwrap_or_default();
                let mut chain = Chain::start(first.parse()?);
                let mut at = chain.from();
                for part in parts {
                    let to: Square = part.parse()?;
                    if chain.len() == MAX_CHAIN_JUMPS {
                        return Err(ParseMoveError::ChainTooLong(s.split('x').count() - 1));
                    }
                    match at.jump_direction_to(to) {
                        Some(d) => chain = chain.push(d),
                        None => return Err(ParseMoveError::NotAJump { from: at, to }),
                    }
                    at = to;
                }
                Ok(Move::Capture(chain))
            }
            (true, true) => Err(ParseMoveError::Malformed(s.to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misshapen_moves_say_what_a_move_looks_like() {
        for text in ["xyz", "x", "c3-", "-c3", "c3xxe5", "c3x"] {
            let err = text.parse::<Move>().unwrap_err();
            assert_eq!(err, ParseMoveError::Malformed(text.to_owned()), "{text}");
            assert!(err.to_string().contains("is not a move"), "{err}");
        }
        let err = "C3".parse::<Move>().unwrap_err().to_string();
        assert!(err.contains("lowercase: c3"), "{err}");
        let err = "E3-D4".parse::<Move>().unwrap_err().to_string();
        assert!(err.contains("lowercase: e3"), "{err}");
    }

    #[test]
    fn round_trip() {
        for s in [
            "e5",
            "a1",
            "c3-d4",
            "i9-h8",
            "c3xe5xc7",
            "d4xb6xd8xf6xd4xb6",
            "g1xe3",
        ] {
            let m: Move = s.parse().unwrap();
            assert_eq!(m.to_string(), s);
        }
    }

    #[test]
    fn chain_geometry() {
        let Move::Capture(c) = "d4xb6xd8xf6xd4xb6".parse().unwrap() else {
            panic!("not a capture")
        };
        assert_eq!(c.len(), 5);
        assert_eq!(c.to().to_string(), "b6");
        assert_eq!(c.from().to_string(), "d4");
    }

    #[test]
    fn errors() {
        assert_eq!("".parse::<Move>(), Err(ParseMoveError::Empty));
        assert!(matches!(
            "c3-e5".parse::<Move>(),
            Err(ParseMoveError::NotAdjacent { .. })
        ));
        assert!(matches!(
            "c3xd4".parse::<Move>(),
            Err(ParseMoveError::NotAJump { .. })
        ));
        assert!(matches!("c3".parse::<Move>(), Ok(Move::Enter(_))));
        assert!(matches!(
            "b3".parse::<Move>(),
            Err(ParseMoveError::Square(_))
        ));
        assert!(matches!(
            "c3-d4-e5".parse::<Move>(),
            Err(ParseMoveError::Malformed(_))
        ));
        assert!(matches!(
            "c3-d4xe5".parse::<Move>(),
            Err(ParseMoveError::Malformed(_))
        ));
        assert!(matches!(
            "c3x".parse::<Move>(),
            Err(ParseMoveError::Malformed(_))
        ));
        let long = "a1xc3xa5xc7xa9xc7xa5xc3xa1xc3xa5xc7xa9xc7";
        assert!(matches!(
            long.parse::<Move>(),
            Err(ParseMoveError::ChainTooLong(13))
        ));
    }
}
