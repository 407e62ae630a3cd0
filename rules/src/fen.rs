//! The vchess FEN (RULES.md §3): parsing untrusted text and printing the canonical form.
//!
//! Parsing happens in two steps, as in shakmaty: the text is read into a [`Setup`], which can
//! still express nonsense the notation allows (a unit on a light square, 20 white men), and the
//! setup is then validated into a [`Position`]. Both steps report a precise [`FenError`]; no
//! input string can make them panic.

use std::fmt;
use std::str::FromStr;

use crate::position::Position;
use crate::square::Square;
use crate::unit::{ByPlayer, MEN_PER_COLOUR, Player, Unit};

/// A square of the full 9×9 board (playable or not), for error messages about setups.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Coord {
    /// 0 = file a.
    pub file: u8,
    /// 0 = rank 1.
    pub rank: u8,
}

impl fmt::Display for Coord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", (b'a' + self.file) as char, self.rank + 1)
    }
}

/// Which layer of a unit a count belongs to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Layer {
    /// The owner's men on top (first character).
    Controllers,
    /// The other colour's men underneath (second character).
    Prisoners,
}

/// Why a FEN was rejected. Rows are numbered by rank (the FEN's first row is rank 9).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FenError {
    /// Not exactly four space-separated fields.
    FieldCount {
        /// Fields found.
        found: usize,
    },
    /// Not exactly nine `/`-separated rows.
    RowCount {
        /// Rows found.
        found: usize,
    },
    /// A row does not describe exactly nine squares.
    RowLength {
        /// The row's rank (1–9).
        rank: u8,
        /// Squares it describes.
        squares: usize,
    },
    /// A character that cannot start a unit or an empty run.
    BadChar {
        /// The row's rank (1–9).
        rank: u8,
        /// 1-based character position within the row.
        column: usize,
        /// The offending character.
        ch: char,
    },
    /// A unit's count letter is beyond `L` (12).
    CountOutOfRange {
        /// Where the unit stands.
        square: Coord,
        /// Which count.
        layer: Layer,
        /// The letter.
        ch: char,
    },
    /// A unit's two characters are not in the same case.
    MixedCase {
        /// Where the unit stands.
        square: Coord,
    },
    /// A row ends in the middle of a unit (its second character is missing).
    TruncatedUnit {
        /// Where the unit stands.
        square: Coord,
    },
    /// A unit on a light square, which is never used.
    NonPlayableSquare {
        /// The square.
        square: Coord,
    },
    /// The side field is not `w` or `b`.
    BadSide {
        /// The field.
        found: String,
    },
    /// The turns field is not a decimal number.
    BadTurns {
        /// The field.
        found: String,
    },
    /// The hands field is not `<white>,<black>` with decimal counts 0–12.
    BadHand {
        /// The field.
        found: String,
    },
    /// A colour has more than 12 men on the board and in hand together.
    TooManyMen {
        /// The colour.
        player: Player,
        /// Men counted.
        count: u32,
    },
}

impl fmt::Display for FenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FenError::FieldCount { found } => write!(
                f,
                "expected 4 space-separated fields (rows, side, turns, hands), found {found}"
            ),
            FenError::RowCount { found } => {
                write!(f, "expected 9 rows separated by '/', found {found}")
            }
            FenError::RowLength { rank, squares } => {
                write!(
                    f,
                    "row for rank {rank} describes {squares} squares instead of 9"
                )
            }
            FenError::BadChar { rank, column, ch } => write!(
                f,
                "row for rank {rank}, character {column}: unexpected {ch:?} (expected a digit 1-9 or a unit like A@, CB, ba)"
            ),
            FenError::CountOutOfRange { square, layer, ch } => {
                let what = match layer {
                    Layer::Controllers => "controllers",
                    Layer::Prisoners => "prisoners",
                };
                write!(
                    f,
                    "unit on {square}: {what} count {ch:?} is out of range (A-L = 1-12)"
                )
            }
            FenError::MixedCase { square } => write!(
                f,
                "unit on {square}: both characters must have the same case (uppercase = White's unit)"
            ),
            FenError::TruncatedUnit { square } => write!(
                f,
                "unit on {square}: the second character (@ or a prisoner count) is missing"
            ),
            FenError::NonPlayableSquare { square } => write!(
                f,
                "unit on {square}, which is not a playable square (file and rank must have the same parity)"
            ),
            FenError::BadSide { found } => {
                write!(
                    f,
                    "side to move must be 'w' or 'b', found {}",
                    crate::excerpt::Excerpt(found)
                )
            }
            FenError::BadTurns { found } => {
                write!(
                    f,
                    "turns played must be a decimal number, found {}",
                    crate::excerpt::Excerpt(found)
                )
            }
            FenError::BadHand { found } => write!(
                f,
                "men in hand must be '<white>,<black>' with counts 0-12, found {}",
                crate::excerpt::Excerpt(found)
            ),
            FenError::TooManyMen { player, count } => write!(
                f,
                "{player} has {count} men on the board and in hand; at most 12 are allowed"
            ),
        }
    }
}

impl std::error::Error for FenError {}

/// A FEN read but not yet validated: units may stand on any of the 81 squares.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Setup {
    /// `board[rank][file]`, rank 0 = rank 1.
    pub board: [[Option<Unit>; 9]; 9],
    /// Side to move.
    pub side: Player,
    /// Turns played.
    pub turns: u32,
    /// Men in hand.
    pub in_hand: ByPlayer<u8>,
}

fn count(ch: u8) -> Option<u8> {
    match ch.to_ascii_uppercase() {
        c @ b'A'..=b'L' => Some(c - b'A' + 1),
        _ => None,
    }
}

fn parse_row(row: &str, rank: u8) -> Result<[Option<Unit>; 9], FenError> {
    let mut out = [None; 9];
    let bytes = row.as_bytes();
    let (mut i, mut file) = (0usize, 0usize);
    let too_long = |squares| FenError::RowLength {
        rank: rank + 1,
        squares,
    };
    while i < bytes.len() {
        let ch = bytes[i];
        // `at` is always on a character boundary: everything before it was ASCII.
        let bad = |at: usize| FenError::BadChar {
            rank: rank + 1,
            column: row.get(..at).map_or(at, |s| s.chars().count()) + 1,
            ch: row.get(at..).and_then(|s| s.chars().next()).unwrap_or('?'),
        };
        match ch {
            b'1'..=b'9' => {
                file += usize::from(ch - b'0');
                i += 1;
            }
            b'A'..=b'Z' | b'a'..=b'z' => {
                if file >= 9 {
                    return Err(too_long(file + 1));
                }
                let square = Coord {
                    file: file as u8,
                    rank,
                };
                let owner = if ch.is_ascii_uppercase() {
                    Player::White
                } else {
                    Player::Black
                };
                let controllers = count(ch).ok_or(FenError::CountOutOfRange {
                    square,
                    layer: Layer::Controllers,
                    ch: ch as char,
                })?;
                let Some(&second) = bytes.get(i + 1) else {
                    return Err(FenError::TruncatedUnit { square });
                };
                let prisoners = match second {
                    b'@' => 0,
                    b'A'..=b'Z' | b'a'..=b'z' => {
                        if second.is_ascii_uppercase() != ch.is_ascii_uppercase() {
                            return Err(FenError::MixedCase { square });
                        }
                        count(second).ok_or(FenError::CountOutOfRange {
                            square,
                            layer: Layer::Prisoners,
                            ch: second as char,
                        })?
                    }
                    b'/' | b'1'..=b'9' => return Err(FenError::TruncatedUnit { square }),
                    _ => return Err(bad(i + 1)),
                };
                out[file] = Unit::new(owner, controllers, prisoners);
                file += 1;
                i += 2;
            }
            _ => return Err(bad(i)),
        }
    }
    if file != 9 {
        return Err(too_long(file));
    }
    Ok(out)
}

impl FromStr for Setup {
    type Err = FenError;

    fn from_str(s: &str) -> Result<Setup, FenError> {
        let fields: Vec<&str> = s.trim().split(' ').collect();
        let [rows, side, turns, hands] = fields[..] else {
            return Err(FenError::FieldCount {
                found: fields.len(),
            });
        };
        let rows: Vec<&str> = rows.split('/').collect();
        if rows.len() != 9 {
            return Err(FenError::RowCount { found: rows.len() });
        }
        let mut board = [[None; 9]; 9];
        for (i, row) in rows.iter().enumerate() {
            let rank = 8 - i as u8;
            board[usize::from(rank)] = parse_row(row, rank)?;
        }
        let side = match side {
            "w" => Player::White,
            "b" => Player::Black,
            _ => {
                return Err(FenError::BadSide {
                    found: side.to_owned(),
                });
            }
        };
        let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
        let turns = digits(turns)
            .then(|| turns.parse::<u32>().ok())
            .flatten()
            .ok_or_else(|| FenError::BadTurns {
                found: turns.to_owned(),
            })?;
        let bad_hand = || FenError::BadHand {
            found: hands.to_owned(),
        };
        let (w, b) = hands.split_once(',').ok_or_else(bad_hand)?;
        let hand = |t: &str| {
            digits(t)
                .then(|| t.parse::<u8>().ok())
                .flatten()
                .filter(|n| *n <= MEN_PER_COLOUR)
                .ok_or_else(bad_hand)
        };
        Ok(Setup {
            board,
            side,
            turns,
            in_hand: ByPlayer::new(hand(w)?, hand(b)?),
        })
    }
}

impl TryFrom<Setup> for Position {
    type Error = FenError;

    fn try_from(setup: Setup) -> Result<Position, FenError> {
        let mut men = setup.in_hand.map(u32::from);
        let mut pos = Position::empty(setup.side, setup.turns, setup.in_hand);
        for (rank, row) in setup.board.iter().enumerate() {
            for (file, unit) in row.iter().enumerate() {
                let Some(unit) = *unit else { continue };
                let coord = Coord {
                    file: file as u8,
                    rank: rank as u8,
                };
                let sq = Square::from_coords(coord.file, coord.rank)
                    .ok_or(FenError::NonPlayableSquare { square: coord })?;
                for p in Player::BOTH {
                    men[p] += u32::from(unit.men_of(p));
                }
                pos = pos.with_unit(sq, unit);
            }
        }
        for (p, &count) in men.pairs() {
            if count > u32::from(MEN_PER_COLOUR) {
                return Err(FenError::TooManyMen { player: p, count });
            }
        }
        Ok(pos)
    }
}

impl FromStr for Position {
    type Err = FenError;

    /// Parses and validates a FEN.
    ///
    /// ```
    /// use emergo_rules::{FenError, Position};
    /// let pos: Position = "9/9/9/9/9/9/9/9/9 w 0 12,12".parse().unwrap();
    /// assert_eq!(pos, Position::initial());
    /// let err = "9/9/9/9/9/9/9/9/9 w 0 13,12".parse::<Position>().unwrap_err();
    /// assert!(matches!(err, FenError::BadHand { .. }));
    /// ```
    fn from_str(s: &str) -> Result<Position, FenError> {
        Position::try_from(s.parse::<Setup>()?)
    }
}

fn count_char(n: u8, white: bool) -> char {
    let c = (b'A' + n - 1) as char;
    if white { c } else { c.to_ascii_lowercase() }
}

impl fmt::Display for Position {
    /// The canonical vchess FEN.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for rank in (0..9u8).rev() {
            let mut run = 0;
            for file in 0..9u8 {
                let unit = Square::from_coords(file, rank).and_then(|sq| self.unit_at(sq));
                match unit {
                    None => run += 1,
                    Some(u) => {
                        if run > 0 {
                            write!(f, "{run}")?;
                            run = 0;
                        }
                        let white = u.owner == Player::White;
                        write!(f, "{}", count_char(u.controllers, white))?;
                        if u.prisoners == 0 {
                            f.write_str("@")?;
                        } else {
                            write!(f, "{}", count_char(u.prisoners, white))?;
                        }
                    }
                }
            }
            if run > 0 {
                write!(f, "{run}")?;
            }
            if rank > 0 {
                f.write_str("/")?;
            }
        }
        write!(
            f,
            " {} {} {},{}",
            self.side_to_move().fen_char(),
            self.turns(),
            self.in_hand(Player::White),
            self.in_hand(Player::Black)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(s: &str) -> FenError {
        s.parse::<Position>().unwrap_err()
    }

    #[test]
    fn round_trips() {
        for fen in [
            "9/9/9/9/9/9/9/9/9 w 0 12,12",
            "9/9/2a@1a@4/9/4a@4/3D@5/9/5A@3/6b@2 b 30 0,0",
            "9/9/9/1CE7/2B@6/9/9/9/9 b 31 0,0",
            "4LL4/9/9/9/9/9/9/9/9 b 90 0,0",
            "a@7a@/9/2ae1AA1A@1a@/5AA3/4A@3A@/9/aa3a@3A@/9/8a@ b 29 0,3",
        ] {
            let pos: Position = fen.parse().unwrap();
            assert_eq!(pos.to_string(), fen);
            pos.validity_check(false).unwrap();
        }
    }

    #[test]
    fn precise_errors() {
        assert_eq!(
            err("9/9/9/9/9/9/9/9/9 w 0"),
            FenError::FieldCount { found: 3 }
        );
        assert_eq!(
            err("9/9/9/9/9/9/9/9 w 0 12,12"),
            FenError::RowCount { found: 8 }
        );
        assert_eq!(
            err("9/9/9/9/9/9/9/9/8 w 0 12,12"),
            FenError::RowLength {
                rank: 1,
                squares: 8
            }
        );
        assert_eq!(
            err("9/9/9/9/9/9/9/9/A@9 w 0 12,12"),
            FenError::RowLength {
                rank: 1,
                squares: 10
            }
        );
        assert_eq!(
            err("9/9/9/9/9/9/9/9/9A@ w 0 12,12"),
            FenError::RowLength {
                rank: 1,
                squares: 10
            }
        );
        assert!(matches!(
            err("9/9/9/9/9/9/9/9/0A@7 w 0 12,12"),
            FenError::BadChar {
                rank: 1,
                column: 1,
                ch: '0'
            }
        ));
        assert!(matches!(
            err("9/9/9/9/9/9/9/9/M@8 w 0 12,12"),
            FenError::CountOutOfRange {
                layer: Layer::Controllers,
                ch: 'M',
                ..
            }
        ));
        assert!(matches!(
            err("9/9/9/9/9/9/9/9/Aa8 w 0 12,12"),
            FenError::MixedCase { .. }
        ));
        assert!(matches!(
            err("9/9/9/9/9/9/9/9/8A w 0 12,12"),
            FenError::TruncatedUnit { .. }
        ));
        let e = err("9/9/9/9/9/9/9/9/1A@7 w 0 12,12");
        assert_eq!(
            e.to_string(),
            "unit on b1, which is not a playable square (file and rank must have the same parity)"
        );
        assert!(matches!(
            err("9/9/9/9/9/9/9/9/9 x 0 12,12"),
            FenError::BadSide { .. }
        ));
        assert!(matches!(
            err("9/9/9/9/9/9/9/9/9 w -1 12,12"),
            FenError::BadTurns { .. }
        ));
        assert!(matches!(
            err("9/9/9/9/9/9/9/9/9 w +1 12,12"),
            FenError::BadTurns { .. }
        ));
        assert!(matches!(
            err("9/9/9/9/9/9/9/9/9 w 0 12"),
            FenError::BadHand { .. }
        ));
        assert!(matches!(
            err("9/9/9/9/9/9/9/9/9 w 0 12,13"),
            FenError::BadHand { .. }
        ));
        assert_eq!(
            err("A@8/9/9/9/9/9/9/9/9 w 0 12,12"),
            FenError::TooManyMen {
                player: Player::White,
                count: 13
            }
        );
        assert_eq!(
            err("LL8/9/9/9/9/9/9/9/9 w 0 0,1"),
            FenError::TooManyMen {
                player: Player::Black,
                count: 13
            }
        );
        assert!(matches!(
            err("9/9/9/9/9/9/9/9/é8 w 0 12,12"),
            FenError::BadChar { ch: 'é', .. }
        ));
        assert!(matches!(
            err("9/9/9/9/9/9/9/9/A\u{e9}8 w 0 12,12"),
            FenError::BadChar { ch: 'é', .. }
        ));
    }

    #[test]
    fn fewer_men_are_fine() {
        let pos: Position = "9/9/9/9/4A@4/9/9/9/9 b 5 0,0".parse().unwrap();
        assert_eq!(pos.men_on_board(Player::White), 1);
    }
}
