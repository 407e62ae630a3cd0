//! Players, per-player pairs, units (stacks) and the compact board cell.

use std::fmt;
use std::ops::{Index, IndexMut};

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

/// One value per player: men in hand, occupancy bitboards, repetition windows.
///
/// It replaces `[T; 2]` arrays indexed by `player as usize`: the index can only be a [`Player`],
/// and which slot is White's is decided once, here (White first, as in the FEN's hands field).
/// The storage is still a two-element array, so indexing compiles to the same single load as
/// the raw array did; the capture search and playouts read it on every move.
///
/// ```
/// use emergo_rules::{ByPlayer, Player};
/// let mut hands = ByPlayer::new(12u8, 11);
/// hands[Player::Black] -= 1;
/// assert_eq!(hands[Player::Black], 10);
/// assert_eq!(hands.map(u32::from).iter().sum::<u32>(), 22);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ByPlayer<T>([T; 2]);

impl<T> ByPlayer<T> {
    /// White's value and Black's.
    #[inline]
    pub const fn new(white: T, black: T) -> ByPlayer<T> {
        ByPlayer([white, black])
    }

    /// Each player's value computed from the player, White first.
    #[inline]
    pub fn from_fn(mut f: impl FnMut(Player) -> T) -> ByPlayer<T> {
        ByPlayer::new(f(Player::White), f(Player::Black))
    }

    /// `player`'s value; the `const` counterpart of indexing.
    #[inline]
    pub const fn get(&self, player: Player) -> &T {
        &self.0[player as usize]
    }

    /// `player`'s value, mutably.
    #[inline]
    pub fn get_mut(&mut self, player: Player) -> &mut T {
        &mut self.0[player as usize]
    }

    /// Both values passed through `f`, White's first.
    #[inline]
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> ByPlayer<U> {
        ByPlayer(self.0.map(f))
    }

    /// The values, White's first.
    #[inline]
    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.0.iter()
    }

    /// The values, mutably, White's first.
    #[inline]
    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, T> {
        self.0.iter_mut()
    }

    /// Each player with its value, White first.
    pub fn pairs(&self) -> impl Iterator<Item = (Player, &T)> {
        Player::BOTH.into_iter().zip(&self.0)
    }
}

impl<T> Index<Player> for ByPlayer<T> {
    type Output = T;

    #[inline]
    fn index(&self, player: Player) -> &T {
        self.get(player)
    }
}

impl<T> IndexMut<Player> for ByPlayer<T> {
    #[inline]
    fn index_mut(&mut self, player: Player) -> &mut T {
        self.get_mut(player)
    }
}

impl<T> IntoIterator for ByPlayer<T> {
    type Item = T;
    type IntoIter = std::array::IntoIter<T, 2>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a, T> IntoIterator for &'a ByPlayer<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a, T> IntoIterator for &'a mut ByPlayer<T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

impl<T: fmt::Debug> fmt::Debug for ByPlayer<T> {
    /// Names the slots, so that a debug print of a position says whose count is whose.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ByPlayer")
            .field("white", &self[Player::White])
            .field("black", &self[Player::Black])
            .finish()
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
    fn by_player_indexes_by_player() {
        let mut pair = ByPlayer::new("w", "b");
        assert_eq!(pair[Player::White], "w");
        assert_eq!(*pair.get(Player::Black), "b");
        pair[Player::Black] = "B";
        *pair.get_mut(Player::White) = "W";
        assert_eq!(pair, ByPlayer::new("W", "B"));
        assert_eq!(
            ByPlayer::from_fn(|p| p),
            ByPlayer::new(Player::White, Player::Black)
        );
        assert_eq!(ByPlayer::<u8>::default(), ByPlayer::new(0, 0));
    }

    #[test]
    fn by_player_maps_and_iterates_white_first() {
        let mut pair = ByPlayer::new(3u8, 5u8);
        assert_eq!(pair.map(|n| u32::from(n) * 10), ByPlayer::new(30u32, 50));
        assert_eq!(pair.iter().copied().collect::<Vec<_>>(), [3, 5]);
        for n in &mut pair {
            *n += 1;
        }
        assert_eq!(pair.into_iter().collect::<Vec<_>>(), [4, 6]);
        assert_eq!(
            pair.pairs().map(|(p, n)| (p, *n)).collect::<Vec<_>>(),
            [(Player::White, 4), (Player::Black, 6)]
        );
        assert_eq!(format!("{pair:?}"), "ByPlayer { white: 4, black: 6 }");
    }

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
