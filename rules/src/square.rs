//! Squares, directions and the precomputed geometry tables.
//!
//! Only the 41 playable squares exist as values of [`Square`]. They are numbered
//! `(rank * 9 + file) / 2` (file and rank counted from 0): because a playable square has
//! `file + rank` even and 9 is odd, `rank * 9 + file` is always even, so the numbering is dense
//! (`a1` = 0, `c1` = 1, …, `e5` = 20, …, `i9` = 40). The pleasant consequence is that a diagonal
//! step is a constant offset (NE +5, NW +4, SE −4, SW −5), which lets the move generator work on
//! 41-bit bitboards with shifts; the tables below say which squares may take which step so that
//! no shift ever wraps around an edge.

use std::fmt;
use std::str::FromStr;

/// Number of playable squares.
pub const NUM_SQUARES: usize = 41;

/// A set of playable squares, one bit per [`Square`] index.
pub type Bitboard = u64;

/// Every playable square.
pub const ALL_SQUARES: Bitboard = (1 << NUM_SQUARES) - 1;

/// One of the 41 playable squares.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Square(u8);

impl Square {
    /// The centre square `e5`, banned for White's first entry.
    pub const E5: Square = Square(20);

    /// The square with this dense index (0..41), if any.
    #[inline]
    pub const fn new(index: u8) -> Option<Square> {
        if (index as usize) < NUM_SQUARES {
            Some(Square(index))
        } else {
            None
        }
    }

    /// The square at `file` (0 = a) and `rank` (0 = rank 1), if it is on the board and playable.
    #[inline]
    pub const fn from_coords(file: u8, rank: u8) -> Option<Square> {
        if file < 9 && rank < 9 && (file + rank) % 2 == 0 {
            Some(Square((rank * 9 + file) / 2))
        } else {
            None
        }
    }

    /// Dense index 0..41.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// File, 0 = `a` … 8 = `i`.
    #[inline]
    pub const fn file(self) -> u8 {
        (self.0 * 2) % 9
    }

    /// Rank, 0 = rank 1 … 8 = rank 9.
    #[inline]
    pub const fn rank(self) -> u8 {
        (self.0 * 2) / 9
    }

    /// This square as a one-bit [`Bitboard`].
    #[inline]
    pub const fn bit(self) -> Bitboard {
        1 << self.0
    }

    /// The neighbour in direction `dir`, if it is on the board.
    #[inline]
    pub fn neighbour(self, dir: Direction) -> Option<Square> {
        NEIGHBOUR[self.index()][dir.index()]
    }

    /// The square two steps away in direction `dir` (a jump's landing), if on the board.
    #[inline]
    pub fn jump_landing(self, dir: Direction) -> Option<Square> {
        self.jump(dir).map(|j| j.to)
    }

    /// The jump from this square in direction `dir`, if it stays on the board: the square jumped
    /// over and the landing square. Whether it captures depends on the position.
    #[inline]
    pub fn jump(self, dir: Direction) -> Option<Jump> {
        JUMP[self.index()][dir.index()]
    }

    /// All 41 squares in index order.
    pub fn all() -> impl Iterator<Item = Square> {
        (0..NUM_SQUARES as u8).map(Square)
    }

    /// The direction and distance (1 or 2) from `self` to `to` along a diagonal, if any.
    ///
    /// [`Square::step_direction_to`] and [`Square::jump_direction_to`] ask for one distance by
    /// name.
    pub fn diagonal_to(self, to: Square) -> Option<(Direction, u8)> {
        self.step_direction_to(to)
            .map(|d| (d, 1))
            .or_else(|| self.jump_direction_to(to).map(|d| (d, 2)))
    }

    /// The direction of a step from `self` to `to`, if they are diagonal neighbours.
    pub fn step_direction_to(self, to: Square) -> Option<Direction> {
        Direction::ALL
            .into_iter()
            .find(|&d| self.neighbour(d) == Some(to))
    }

    /// The direction of a jump from `self` that lands on `to`, if `to` is two diagonal steps
    /// away.
    pub fn jump_direction_to(self, to: Square) -> Option<Direction> {
        Direction::ALL
            .into_iter()
            .find(|&d| self.jump_landing(d) == Some(to))
    }

    /// Squares of a bitboard, lowest index first.
    #[inline]
    pub fn iter_bits(bb: Bitboard) -> BitIter {
        BitIter(bb)
    }
}

/// The geometry of one capture jump (RULES.md §7.1): the square jumped over and the square landed
/// on, two diagonal steps from the start in the same direction.
///
/// [`Square::jump`] returns it so that the capture search and chain replay name both squares
/// instead of indexing two parallel tables.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Jump {
    /// The adjacent square whose unit loses its top man.
    pub over: Square,
    /// The landing square, which must be empty.
    pub to: Square,
}

/// Iterator over the squares of a [`Bitboard`].
#[derive(Clone, Copy, Debug)]
pub struct BitIter(Bitboard);

impl Iterator for BitIter {
    type Item = Square;

    #[inline]
    fn next(&mut self) -> Option<Square> {
        if self.0 == 0 {
            return None;
        }
        let i = self.0.trailing_zeros() as u8;
        self.0 &= self.0 - 1;
        Some(Square(i))
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", (b'a' + self.file()) as char, self.rank() + 1)
    }
}

/// Why a square name could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseSquareError {
    /// Not a file letter `a`–`i` followed by a rank digit `1`–`9`.
    Syntax(String),
    /// A real square, but a light one that is never used.
    NotPlayable(String),
}

impl fmt::Display for ParseSquareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseSquareError::Syntax(s) => {
                let lower = s.to_ascii_lowercase();
                if lower != *s && lower.parse::<Square>().is_ok() {
                    // The notation is lowercase (RULES.md §8); say so rather than guess.
                    return write!(
                        f,
                        "{} is not a square (squares are written in lowercase: {lower})",
                        crate::excerpt::Excerpt(s)
                    );
                }
                write!(
                    f,
                    "{} is not a square (expected a file a-i and a rank 1-9, e.g. e5)",
                    crate::excerpt::Excerpt(s)
                )
            }
            ParseSquareError::NotPlayable(s) => write!(
                f,
                "{s} is not a playable square (only squares whose file and rank have the same parity are used, e.g. a1, b2, e5)"
            ),
        }
    }
}

impl std::error::Error for ParseSquareError {}

impl FromStr for Square {
    type Err = ParseSquareError;

    fn from_str(s: &str) -> Result<Square, ParseSquareError> {
        match s.as_bytes() {
            &[f @ b'a'..=b'i', r @ b'1'..=b'9'] => Square::from_coords(f - b'a', r - b'1')
                .ok_or_else(|| ParseSquareError::NotPlayable(s.to_owned())),
            _ => Err(ParseSquareError::Syntax(s.to_owned())),
        }
    }
}

/// One of the four diagonal directions.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Direction {
    /// +1 file, +1 rank.
    NorthEast = 0,
    /// −1 file, +1 rank.
    NorthWest = 1,
    /// +1 file, −1 rank.
    SouthEast = 2,
    /// −1 file, −1 rank.
    SouthWest = 3,
}

impl Direction {
    /// All four directions, in index order.
    pub const ALL: [Direction; 4] = [
        Direction::NorthEast,
        Direction::NorthWest,
        Direction::SouthEast,
        Direction::SouthWest,
    ];

    /// Index 0..4.
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The direction with this index (taken modulo 4).
    #[inline]
    pub const fn from_index(i: usize) -> Direction {
        Direction::ALL[i & 3]
    }

    /// The reverse direction (the 180° turn that a chain may not make).
    #[inline]
    pub const fn opposite(self) -> Direction {
        match self {
            Direction::NorthEast => Direction::SouthWest,
            Direction::NorthWest => Direction::SouthEast,
            Direction::SouthEast => Direction::NorthWest,
            Direction::SouthWest => Direction::NorthEast,
        }
    }

    /// Change of the dense square index for one step in this direction.
    #[inline]
    pub(crate) const fn offset(self) -> i8 {
        match self {
            Direction::NorthEast => 5,
            Direction::NorthWest => 4,
            Direction::SouthEast => -4,
            Direction::SouthWest => -5,
        }
    }

    const fn file_rank_delta(self) -> (i8, i8) {
        match self {
            Direction::NorthEast => (1, 1),
            Direction::NorthWest => (-1, 1),
            Direction::SouthEast => (1, -1),
            Direction::SouthWest => (-1, -1),
        }
    }
}

/// The square `times` diagonal steps from `sq` in direction `dir`, if on the board.
const fn step(sq: Square, dir: Direction, times: i8) -> Option<Square> {
    let (df, dr) = dir.file_rank_delta();
    let (f, r) = (sq.file() as i8 + df * times, sq.rank() as i8 + dr * times);
    if f < 0 || f > 8 || r < 0 || r > 8 {
        None
    } else {
        Square::from_coords(f as u8, r as u8)
    }
}

const fn neighbours() -> [[Option<Square>; 4]; NUM_SQUARES] {
    let mut t = [[None; 4]; NUM_SQUARES];
    let mut sq = 0;
    while sq < NUM_SQUARES {
        let mut d = 0;
        while d < 4 {
            t[sq][d] = step(Square(sq as u8), Direction::ALL[d], 1);
            d += 1;
        }
        sq += 1;
    }
    t
}

const fn jumps() -> [[Option<Jump>; 4]; NUM_SQUARES] {
    let mut t = [[None; 4]; NUM_SQUARES];
    let mut sq = 0;
    while sq < NUM_SQUARES {
        let mut d = 0;
        while d < 4 {
            let from = Square(sq as u8);
            t[sq][d] = match (
                step(from, Direction::ALL[d], 1),
                step(from, Direction::ALL[d], 2),
            ) {
                (Some(over), Some(to)) => Some(Jump { over, to }),
                _ => None,
            };
            d += 1;
        }
        sq += 1;
    }
    t
}

const fn mask(times: i8) -> [Bitboard; 4] {
    let mut m = [0; 4];
    let mut sq = 0;
    while sq < NUM_SQUARES {
        let mut d = 0;
        while d < 4 {
            if step(Square(sq as u8), Direction::ALL[d], times).is_some() {
                m[d] |= 1 << sq;
            }
            d += 1;
        }
        sq += 1;
    }
    m
}

/// `NEIGHBOUR[sq][dir]`: the adjacent square, if on the board. Read through [`Square::neighbour`].
static NEIGHBOUR: [[Option<Square>; 4]; NUM_SQUARES] = neighbours();
/// `JUMP[sq][dir]`: the jumped and the landing square, if the landing is on the board. One
/// entry holds both so that the capture search makes one load and one test per direction.
/// Read through [`Square::jump`].
static JUMP: [[Option<Jump>; 4]; NUM_SQUARES] = jumps();
/// Squares that have a neighbour in each direction.
pub(crate) const CAN_STEP: [Bitboard; 4] = mask(1);
/// Squares that have a jump landing in each direction.
pub(crate) const CAN_JUMP: [Bitboard; 4] = mask(2);
/// Squares with a neighbour both in a direction and in its opposite: the only squares that can
/// be jumped along that line (used for the "exposed" test of the no-feeding rule).
pub(crate) const INTERIOR: [Bitboard; 4] = [
    CAN_STEP[0] & CAN_STEP[3],
    CAN_STEP[1] & CAN_STEP[2],
    CAN_STEP[2] & CAN_STEP[1],
    CAN_STEP[3] & CAN_STEP[0],
];

/// `bb` moved so that bit `s` of the result is bit `s + offset(dir) * times` of `bb`.
///
/// Callers mask the result with [`CAN_STEP`]/[`CAN_JUMP`] so that bits which wrapped around an
/// edge are discarded.
#[inline(always)]
pub(crate) const fn pull(bb: Bitboard, dir: Direction, times: i8) -> Bitboard {
    let off = dir.offset() * times;
    if off >= 0 {
        bb >> off
    } else {
        (bb << (-off)) & ALL_SQUARES
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbering_is_dense_and_round_trips() {
        let names: Vec<String> = Square::all().map(|s| s.to_string()).collect();
        assert_eq!(names.len(), 41);
        assert_eq!(names[0], "a1");
        assert_eq!(names[1], "c1");
        assert_eq!(names[20], "e5");
        assert_eq!(names[40], "i9");
        for (i, n) in names.iter().enumerate() {
            let sq: Square = n.parse().unwrap();
            assert_eq!(sq.index(), i);
        }
    }

    #[test]
    fn parse_errors() {
        assert!(matches!(
            "b1".parse::<Square>(),
            Err(ParseSquareError::NotPlayable(_))
        ));
        assert!(matches!(
            "j1".parse::<Square>(),
            Err(ParseSquareError::Syntax(_))
        ));
        assert!(matches!(
            "e10".parse::<Square>(),
            Err(ParseSquareError::Syntax(_))
        ));
        assert!(matches!(
            "".parse::<Square>(),
            Err(ParseSquareError::Syntax(_))
        ));
    }

    #[test]
    fn lookups_off_the_board_are_none() {
        let sq = |s: &str| s.parse::<Square>().unwrap();
        // a1: only north-east stays on the board.
        assert_eq!(sq("a1").neighbour(Direction::NorthEast), Some(sq("b2")));
        for d in [
            Direction::NorthWest,
            Direction::SouthEast,
            Direction::SouthWest,
        ] {
            assert_eq!(sq("a1").neighbour(d), None);
            assert_eq!(sq("a1").jump(d), None);
        }
        // h8 has a neighbour to the north-east (i9) but no landing beyond it.
        assert_eq!(sq("h8").neighbour(Direction::NorthEast), Some(sq("i9")));
        assert_eq!(sq("h8").jump(Direction::NorthEast), None);
        assert_eq!(sq("h8").jump_landing(Direction::NorthEast), None);
        assert_eq!(
            sq("c3").jump(Direction::NorthEast),
            Some(Jump {
                over: sq("d4"),
                to: sq("e5")
            })
        );
        assert_eq!(
            Square::E5.jump(Direction::SouthWest),
            Some(Jump {
                over: sq("d4"),
                to: sq("c3")
            })
        );
    }

    #[test]
    fn directions_between_squares() {
        let sq = |s: &str| s.parse::<Square>().unwrap();
        assert_eq!(
            sq("c3").step_direction_to(sq("d4")),
            Some(Direction::NorthEast)
        );
        assert_eq!(sq("c3").step_direction_to(sq("e5")), None);
        assert_eq!(
            sq("c3").jump_direction_to(sq("e5")),
            Some(Direction::NorthEast)
        );
        assert_eq!(
            sq("c3").jump_direction_to(sq("a1")),
            Some(Direction::SouthWest)
        );
        assert_eq!(sq("c3").jump_direction_to(sq("d4")), None);
        assert_eq!(sq("c3").jump_direction_to(sq("c5")), None);
        assert_eq!(
            sq("c3").diagonal_to(sq("b4")),
            Some((Direction::NorthWest, 1))
        );
        assert_eq!(
            sq("c3").diagonal_to(sq("e1")),
            Some((Direction::SouthEast, 2))
        );
        assert_eq!(sq("c3").diagonal_to(sq("g7")), None);
    }

    #[test]
    fn opposite_is_the_reverse_step() {
        for d in Direction::ALL {
            assert_ne!(d.opposite(), d);
            assert_eq!(d.opposite().opposite(), d);
            assert_eq!(d.opposite().offset(), -d.offset());
        }
    }

    #[test]
    fn jumps_agree_with_two_steps() {
        for sq in Square::all() {
            for d in Direction::ALL {
                let two_steps = sq.neighbour(d).and_then(|over| {
                    Some(Jump {
                        over,
                        to: over.neighbour(d)?,
                    })
                });
                assert_eq!(sq.jump(d), two_steps, "{sq} {d:?}");
                assert_eq!(sq.jump(d).is_some(), CAN_JUMP[d.index()] & sq.bit() != 0);
            }
        }
    }

    #[test]
    fn geometry_matches_offsets() {
        for sq in Square::all() {
            for d in Direction::ALL {
                if let Some(n) = sq.neighbour(d) {
                    assert_eq!(n.index() as i32, sq.index() as i32 + d.offset() as i32);
                    assert_eq!(n.neighbour(d.opposite()), Some(sq));
                    assert_eq!(pull(n.bit(), d, 1) & CAN_STEP[d.index()], sq.bit());
                } else {
                    assert_eq!(CAN_STEP[d.index()] & sq.bit(), 0);
                }
                let landing = sq.neighbour(d).and_then(|n| n.neighbour(d));
                assert_eq!(sq.jump_landing(d), landing);
            }
        }
        // Corners have one neighbour, the centre four.
        let a1: Square = "a1".parse().unwrap();
        assert_eq!(
            Direction::ALL
                .iter()
                .filter(|d| a1.neighbour(**d).is_some())
                .count(),
            1
        );
        assert_eq!(
            Direction::ALL
                .iter()
                .filter(|d| Square::E5.neighbour(**d).is_some())
                .count(),
            4
        );
        // Edge squares are never interior.
        let edge = Square::all()
            .filter(|s| s.file() == 0 || s.file() == 8 || s.rank() == 0 || s.rank() == 8)
            .fold(0, |bb, s| bb | s.bit());
        assert_eq!(edge.count_ones(), 16);
        for m in INTERIOR {
            assert_eq!(m & edge, 0);
        }
    }
}
