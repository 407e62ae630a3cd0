//! Players, units (stacks) and the compact board cell.

use std::fmt;

/// Largest number of men of one colour; also the largest count of a unit's layer.
pub const MEN_PER_COLOUR: u8 = 12;

/// A side.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Player {
    /// Moves first; uppercase in FEN.
    White = 0,
    /// Lowercase in FEN.
    Black = 1,
}

impl Player {
    /// Both players, White first.
    pub const BOTH: [Player; 2] = [Player::White, Player::Black];

    /// The opponent.
    #[inline]
    pub const fn other(self) -> Player {
        match self {
            Player::White => Player::Black,
            Player::Black => Player::White,
        }
    }

    /// 0 for White, 1 for Black.
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The FEN side letter, `w` or `b`.
    pub const fn fen_char(self) -> char {
        match self {
            Player::White => 'w',
            Player::Black => 'b',
        }
    }
}

impl fmt::Display for Player {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Player::White => "white",
            Player::Black => "black",
        })
    }
}

/// A unit: `controllers` men of `owner`'s colour on top of `prisoners` men of the other colour.
///
/// As RULES.md §2 explains, these two layers are all a column can ever hold, so a unit is fully
/// described by `(owner, controllers, prisoners)`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Unit {
    /// Colour of the top man.
    pub owner: Player,
    /// Men of the owner's colour, 1..=12.
    pub controllers: u8,
    /// Men of the other colour underneath, 0..=12.
    pub prisoners: u8,
}

impl Unit {
    /// A unit, if both counts are in range (1..=12 controllers, 0..=12 prisoners).
    pub const fn new(owner: Player, controllers: u8, prisoners: u8) -> Option<Unit> {
        if controllers >= 1 && controllers <= MEN_PER_COLOUR && prisoners <= MEN_PER_COLOUR {
            Some(Unit {
                owner,
                controllers,
                prisoners,
            })
        } else {
            None
        }
    }

    /// Men of `player`'s colour in this unit.
    pub const fn men_of(self, player: Player) -> u8 {
        if self.owner as u8 == player as u8 {
            self.controllers
        } else {
            self.prisoners
        }
    }
}

/// One board cell: empty or a unit, packed into 16 bits.
///
/// Layout: bits 0–3 controllers (0 means empty), bits 4–7 prisoners, bit 8 owner (1 = Black).
/// Packing keeps [`crate::Position`] small enough to copy freely in search (41 cells = 82 bytes).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub(crate) struct Cell(u16);

impl Cell {
    pub(crate) const EMPTY: Cell = Cell(0);

    #[inline]
    pub(crate) const fn unit(owner: Player, controllers: u8, prisoners: u8) -> Cell {
        Cell(((owner as u16) << 8) | ((prisoners as u16) << 4) | controllers as u16)
    }

    #[inline]
    pub(crate) const fn from_unit(u: Unit) -> Cell {
        Cell::unit(u.owner, u.controllers, u.prisoners)
    }

    #[inline]
    pub(crate) const fn is_empty(self) -> bool {
        self.0 & 0xF == 0
    }

    #[inline]
    pub(crate) const fn controllers(self) -> u8 {
        (self.0 & 0xF) as u8
    }

    #[inline]
    pub(crate) const fn prisoners(self) -> u8 {
        ((self.0 >> 4) & 0xF) as u8
    }

    #[inline]
    pub(crate) const fn owner(self) -> Player {
        if self.0 & 0x100 == 0 {
            Player::White
        } else {
            Player::Black
        }
    }

    #[inline]
    pub(crate) const fn raw(self) -> u16 {
        self.0
    }

    #[inline]
    pub(crate) const fn to_unit(self) -> Option<Unit> {
        if self.is_empty() {
            None
        } else {
            Some(Unit {
                owner: self.owner(),
                controllers: self.controllers(),
                prisoners: self.prisoners(),
            })
        }
    }

    /// The cell after one more prisoner was taken by this (moving) unit.
    #[inline]
    pub(crate) const fn with_one_more_prisoner(self) -> Cell {
        Cell(self.0 + 0x10)
    }

    /// The cell after its top man was captured: one controller fewer; at zero the prisoners are
    /// freed and the square belongs to the capturer (`owner.other()`), or it becomes empty.
    #[inline]
    pub(crate) const fn after_losing_top_man(self) -> Cell {
        let k = self.controllers();
        if k > 1 {
            Cell(self.0 - 1)
        } else {
            let p = self.prisoners();
            if p == 0 {
                Cell::EMPTY
            } else {
                Cell::unit(self.owner().other(), p, 0)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_packing() {
        let c = Cell::unit(Player::Black, 12, 12);
        assert_eq!(
            c.to_unit(),
            Some(Unit {
                owner: Player::Black,
                controllers: 12,
                prisoners: 12
            })
        );
        assert!(Cell::EMPTY.is_empty());
        assert_eq!(
            Cell::unit(Player::White, 3, 0)
                .with_one_more_prisoner()
                .prisoners(),
            1
        );
    }

    #[test]
    fn losing_top_man() {
        assert_eq!(
            Cell::unit(Player::Black, 2, 1).after_losing_top_man(),
            Cell::unit(Player::Black, 1, 1)
        );
        assert_eq!(
            Cell::unit(Player::Black, 1, 2).after_losing_top_man(),
            Cell::unit(Player::White, 2, 0)
        );
        assert_eq!(
            Cell::unit(Player::White, 1, 0).after_losing_top_man(),
            Cell::EMPTY
        );
    }

    #[test]
    fn unit_ranges() {
        assert!(Unit::new(Player::White, 0, 0).is_none());
        assert!(Unit::new(Player::White, 13, 0).is_none());
        assert!(Unit::new(Player::White, 1, 13).is_none());
        assert_eq!(
            Unit::new(Player::White, 2, 3)
                .unwrap()
                .men_of(Player::Black),
            3
        );
    }
}
