//! Zobrist keys for the repetition hash.
//!
//! A classic Zobrist table for every (square, cell value) pair would hold 41 × 338 keys (108 KiB),
//! more than a core's L1 cache. Instead each key is *computed* by the SplitMix64 finaliser from
//! the feature's index: the keys are the same fixed pseudo-random numbers a table would hold, at
//! the cost of two multiplications per lookup, and the hash stays an XOR of per-feature keys so
//! it can be updated incrementally.

use crate::square::Square;
use crate::unit::{Cell, Player};

#[inline(always)]
const fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Key of `cell` standing on `sq`; 0 for an empty cell so that updates need no branch on
/// emptiness.
#[inline(always)]
pub(crate) const fn cell(sq: Square, cell: Cell) -> u64 {
    if cell.is_empty() {
        0
    } else {
        mix(((sq.index() as u64) << 16) | cell.raw() as u64)
    }
}

/// Key for "Black to move".
pub(crate) const SIDE: u64 = mix(0xB1AC_0000_0000);

/// Key of `player` holding `n` men in hand.
#[inline(always)]
pub(crate) const fn hand(player: Player, n: u8) -> u64 {
    mix(0x4A4D_0000_0000 | ((player as u64) << 8) | n as u64)
}
