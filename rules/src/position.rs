//! The position: a compact mailbox board with owner bitboards and an incremental hash.

use crate::moves::Move;
use crate::square::{Bitboard, Jump, NUM_SQUARES, Square};
use crate::unit::{ByPlayer, Cell, MEN_PER_COLOUR, Player, Unit};
use crate::zobrist;

/// A position: board, side to move, turns played and men in hand (RULES.md §3).
///
/// The board is a mailbox of 41 packed `Cell`s, one per playable square, mirrored by one
/// occupancy [`Bitboard`] per owner. The mailbox answers "what stands here" in one load; the
/// bitboards answer "who can jump / step / enter where" for the whole board in a handful of
/// shifts, which is what makes random playouts cheap. Both are updated together by the only
/// mutator, `Position::set_cell`, which also keeps the Zobrist hash current.
///
/// `Position` is `Copy` and small (≤ 128 bytes), so search code copies it freely.
///
/// A `Position` is always valid in the sense of RULES.md §3: counts in range and at most 12 men
/// of a colour on board and in hand. Values are built from FEN ([`str::parse`]), from a
/// [`crate::Setup`], or by playing moves.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Position {
    cells: [Cell; NUM_SQUARES],
    in_hand: ByPlayer<u8>,
    side: Player,
    occupied: ByPlayer<Bitboard>,
    hash: u64,
    turns: u32,
}

impl Default for Position {
    fn default() -> Self {
        Position::initial()
    }
}

/// The standard start position in FEN: empty board, White to move, twelve men in hand each
/// (RULES.md §3). The one definition the workspace uses.
pub const INITIAL_FEN: &str = "9/9/9/9/9/9/9/9/9 w 0 12,12";

/// The hash keys of both players' men in hand.
const fn hands_key(in_hand: &ByPlayer<u8>) -> u64 {
    zobrist::hand(Player::White, *in_hand.get(Player::White))
        ^ zobrist::hand(Player::Black, *in_hand.get(Player::Black))
}

impl Position {
    /// The initial position: empty board, 12 men in hand each, White to move.
    pub const fn initial() -> Position {
        let in_hand = ByPlayer::new(MEN_PER_COLOUR, MEN_PER_COLOUR);
        Position {
            cells: [Cell::EMPTY; NUM_SQUARES],
            in_hand,
            side: Player::White,
            occupied: ByPlayer::new(0, 0),
            hash: hands_key(&in_hand),
            turns: 0,
        }
    }

    /// An empty board with the given side to move, turns played and men in hand, for building
    /// positions square by square with [`Position::with_unit`]. Counts in hand above 12 are
    /// clamped to 12.
    pub(crate) fn empty(side: Player, turns: u32, in_hand: ByPlayer<u8>) -> Position {
        let in_hand = in_hand.map(|n| n.min(MEN_PER_COLOUR));
        let mut hash = hands_key(&in_hand);
        if side == Player::Black {
            hash ^= zobrist::SIDE;
        }
        Position {
            cells: [Cell::EMPTY; NUM_SQUARES],
            in_hand,
            side,
            occupied: ByPlayer::new(0, 0),
            hash,
            turns,
        }
    }

    /// Places `unit` on `sq` (used while building a validated position).
    pub(crate) fn with_unit(mut self, sq: Square, unit: Unit) -> Position {
        self.set_cell(sq, Cell::from_unit(unit));
        self
    }

    /// The side to move.
    #[inline]
    pub const fn side_to_move(&self) -> Player {
        self.side
    }

    /// Turns completed so far (the FEN's third field). Only the first-turn centre ban reads it.
    #[inline]
    pub const fn turns(&self) -> u32 {
        self.turns
    }

    /// Men `player` still has in hand.
    #[inline]
    pub const fn in_hand(&self, player: Player) -> u8 {
        *self.in_hand.get(player)
    }

    /// The unit on `sq`, if any.
    #[inline]
    pub fn unit_at(&self, sq: Square) -> Option<Unit> {
        self.cells[sq.index()].to_unit()
    }

    /// Squares holding units owned by `player`.
    #[inline]
    pub const fn units_of(&self, player: Player) -> Bitboard {
        *self.occupied.get(player)
    }

    /// Empty playable squares.
    #[inline]
    pub const fn empty_squares(&self) -> Bitboard {
        crate::square::ALL_SQUARES & !(self.units_of(Player::White) | self.units_of(Player::Black))
    }

    /// Zobrist hash of the position's identity for repetition: board, side to move and both
    /// counts in hand, but not the turn counter (RULES.md §3, §9).
    #[inline]
    pub const fn hash(&self) -> u64 {
        self.hash
    }

    /// True when both positions are the same for the repetition rule (everything but the turn
    /// counter).
    pub fn same_identity(&self, other: &Position) -> bool {
        self.cells == other.cells && self.side == other.side && self.in_hand == other.in_hand
    }

    /// Men of `player`'s colour on the board (as controllers or as prisoners).
    pub fn men_on_board(&self, player: Player) -> u32 {
        self.cells
            .iter()
            .filter_map(|c| c.to_unit())
            .map(|u| u32::from(u.men_of(player)))
            .sum()
    }

    /// Men `player` still commands: controllers of its units plus men in hand (the men that are
    /// not prisoners). A cheap material measure for evaluation.
    pub fn controlled_men(&self, player: Player) -> u32 {
        let on_board: u32 = crate::square::Square::iter_bits(self.units_of(player))
            .map(|sq| u32::from(self.cells[sq.index()].controllers()))
            .sum();
        on_board + u32::from(self.in_hand(player))
    }

    #[inline]
    pub(crate) fn cells(&self) -> &[Cell; NUM_SQUARES] {
        &self.cells
    }

    /// Replaces the cell on `sq`, keeping bitboards and hash in step with the mailbox.
    #[inline]
    fn set_cell(&mut self, sq: Square, new: Cell) {
        let old = self.cells[sq.index()];
        self.hash ^= zobrist::cell(sq, old) ^ zobrist::cell(sq, new);
        self.cells[sq.index()] = new;
        let bit = sq.bit();
        self.occupied = self.occupied.map(|bb| bb & !bit);
        if !new.is_empty() {
            self.occupied[new.owner()] |= bit;
        }
    }

    #[inline]
    fn set_in_hand(&mut self, player: Player, n: u8) {
        self.hash ^= zobrist::hand(player, self.in_hand[player]) ^ zobrist::hand(player, n);
        self.in_hand[player] = n;
    }

    /// Plays `m` without checking that it is legal: the fast path for search.
    ///
    /// `m` must be one of [`Position::legal_moves`]; otherwise the result is an unspecified (but
    /// memory-safe) position. Debug builds assert legality.
    pub fn play_unchecked(&mut self, m: Move) {
        debug_assert!(
            self.legal_moves().contains(m),
            "play_unchecked({m}) on {self}: not a legal move"
        );
        let me = self.side;
        match m {
            Move::Enter(sq) => {
                let mine = self.in_hand[me];
                // Shadow piece: when the opponent has nothing left to enter, all men go in at once.
                let n = if self.in_hand[me.other()] == 0 {
                    mine
                } else {
                    1
                };
                self.set_cell(sq, Cell::unit(me, n, 0));
                self.set_in_hand(me, mine - n);
            }
            Move::Step { from, to } => {
                let unit = self.cells[from.index()];
                self.set_cell(from, Cell::EMPTY);
                self.set_cell(to, unit);
            }
            Move::Capture(chain) => {
                let mut unit = self.cells[chain.from().index()];
                self.set_cell(chain.from(), Cell::EMPTY);
                let mut at = chain.from();
                for d in chain.dirs() {
                    // A legal chain never leaves the board; an illegal one stops where it would.
                    let Some(Jump { over, to }) = at.jump(d) else {
                        break;
                    };
                    let jumped = self.cells[over.index()].after_losing_top_man();
                    self.set_cell(over, jumped);
                    unit = unit.with_one_more_prisoner();
                    at = to;
                }
                self.set_cell(at, unit);
            }
        }
        self.side = me.other();
        self.hash ^= zobrist::SIDE;
        self.turns = self.turns.saturating_add(1);
    }

    /// Moves the unit on `from` over `jump.over` onto `jump.to`, taking the jumped unit's top
    /// man: one jump of a chain, without changing the side to move. The caller has checked that
    /// the jump is a capture.
    pub(crate) fn apply_single_jump(&mut self, from: Square, jump: Jump) {
        let unit = self.cells[from.index()].with_one_more_prisoner();
        let jumped = self.cells[jump.over.index()].after_losing_top_man();
        self.set_cell(from, Cell::EMPTY);
        self.set_cell(jump.over, jumped);
        self.set_cell(jump.to, unit);
    }

    /// Recomputes the hash from scratch (for tests of the incremental update).
    pub fn compute_hash(&self) -> u64 {
        let mut h = hands_key(&self.in_hand);
        if self.side == Player::Black {
            h ^= zobrist::SIDE;
        }
        for sq in Square::all() {
            h ^= zobrist::cell(sq, self.cells[sq.index()]);
        }
        h
    }

    /// Checks every internal invariant; returns a description of the first one broken.
    ///
    /// Used by tests after every move: bitboards agree with the mailbox, counts are in range, men
    /// are conserved (at most 12 per colour, exactly 12 when `full_material`), and the
    /// incremental hash equals a recomputation.
    pub fn validity_check(&self, full_material: bool) -> Result<(), String> {
        for sq in Square::all() {
            let c = self.cells[sq.index()];
            let in_w = self.units_of(Player::White) & sq.bit() != 0;
            let in_b = self.units_of(Player::Black) & sq.bit() != 0;
            match c.to_unit() {
                None if in_w || in_b => return Err(format!("{sq}: empty but in a bitboard")),
                None => {}
                Some(u) => {
                    if u.controllers == 0
                        || u.controllers > MEN_PER_COLOUR
                        || u.prisoners > MEN_PER_COLOUR
                    {
                        return Err(format!("{sq}: counts out of range {u:?}"));
                    }
                    let (want_w, want_b) = (u.owner == Player::White, u.owner == Player::Black);
                    if in_w != want_w || in_b != want_b {
                        return Err(format!("{sq}: bitboards disagree with {u:?}"));
                    }
                }
            }
        }
        for p in Player::BOTH {
            let total = self.men_on_board(p) + u32::from(self.in_hand(p));
            if total > u32::from(MEN_PER_COLOUR)
                || (full_material && total != u32::from(MEN_PER_COLOUR))
            {
                return Err(format!("{p} has {total} men on board and in hand"));
            }
        }
        if self.hash != self.compute_hash() {
            return Err("incremental hash differs from recomputation".to_owned());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn position_is_small() {
        assert!(
            std::mem::size_of::<Position>() <= 128,
            "{}",
            std::mem::size_of::<Position>()
        );
    }

    #[test]
    fn initial_is_valid() {
        Position::initial().validity_check(true).unwrap();
        assert_eq!(
            Position::initial().hash(),
            Position::initial().compute_hash()
        );
        assert_eq!(
            INITIAL_FEN.parse::<Position>().unwrap(),
            Position::initial()
        );
        assert_eq!(Position::initial().to_string(), INITIAL_FEN);
    }
}
