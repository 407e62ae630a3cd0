//! A search thread's memory of the move knowledge it computed, by position: the priors and
//! values of a position's moves, from searches of a given depth.
//!
//! # Why
//!
//! The search tree is not a graph: a position reached by two move orders is two nodes, and the
//! default engine expands each one by scoring every move with a quiescence or alpha-beta search,
//! most of its work. Measured with the `transpositions` example over the positions of 6 arena
//! games at 200 ms (2026-12-03): after the entering phase 55% of the expanded nodes held a
//! position another expanded node of the same tree also held, in the entering phase 21%. The
//! same moves are then scored again for the same answer. This cache answers the second time.
//!
//! # What is kept
//!
//! Direct-mapped by the position's hash and the depth, [`KnowledgeCache::SLOTS`] entries per
//! thread, each the whole position (no answer for a colliding position), the depth and the
//! numbers. The answer for a position does not depend on the path to it: the moves are the
//! position's (the repetition window only empties the list, and an empty list is never
//! scored), and the scores are searches of the position after each move. A search that uses a
//! transposition table may score a position a little differently the second time; the cache
//! gives the first answer. Entries are valid for one search ([`KnowledgeCache::clear`], at the
//! start of each search on the thread), so a seeded search stays reproducible and knowledge of
//! another engine's search on the same thread is never used.

use emergo_rules::Position;

/// One remembered answer.
#[derive(Debug)]
struct Slot {
    /// The search (see [`KnowledgeCache::clear`]) the entry belongs to.
    generation: u64,
    pos: Position,
    depth: u32,
    priors: Vec<f32>,
    values: Vec<f32>,
}

/// See the module docs.
#[derive(Debug, Default)]
pub(crate) struct KnowledgeCache {
    /// The current search's number; entries of other numbers are empty.
    generation: u64,
    /// Allocated on first use (a thread whose searches have no knowledge pays nothing).
    slots: Vec<Slot>,
}

impl KnowledgeCache {
    /// Entries per thread: ~0.5 KB each with forty moves, ~2 MB per search thread when full.
    pub(crate) const SLOTS: usize = 4096;

    /// Forgets every entry (cheaply: they become another search's).
    pub(crate) fn clear(&mut self) {
        self.generation = self.generation.wrapping_add(1);
    }

    fn index(pos: &Position, depth: u32) -> usize {
        let key = pos.hash() ^ u64::from(depth).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (key % Self::SLOTS as u64) as usize
    }

    /// The priors and values of `pos`'s `len` moves from searches `depth` deep, if remembered.
    pub(crate) fn get(&self, pos: &Position, depth: u32, len: usize) -> Option<(&[f32], &[f32])> {
        let slot = self.slots.get(Self::index(pos, depth))?;
        (slot.generation == self.generation
            && slot.depth == depth
            && slot.priors.len() == len
            && slot.values.len() == len
            && slot.pos == *pos)
            .then_some((&slot.priors, &slot.values))
    }

    /// Remembers the priors and values of `pos`'s moves from searches `depth` deep.
    pub(crate) fn put(&mut self, pos: &Position, depth: u32, priors: &[f32], values: &[f32]) {
        if self.slots.is_empty() {
            self.slots = (0..Self::SLOTS)
                .map(|_| Slot {
                    // Never the current generation: empty.
                    generation: self.generation.wrapping_sub(1),
                    pos: Position::initial(),
                    depth: 0,
                    priors: Vec::new(),
                    values: Vec::new(),
                })
                .collect();
        }
        let generation = self.generation;
        let slot = &mut self.slots[Self::index(pos, depth)];
        slot.generation = generation;
        slot.pos = *pos;
        slot.depth = depth;
        slot.priors.clear();
        slot.priors.extend_from_slice(priors);
        slot.values.clear();
        slot.values.extend_from_slice(values);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_kept_for_its_position_depth_and_search_only() {
        let pos = Position::initial();
        let other: Position = "9/9/9/9/4a@4/9/9/9/A@8 w 40 0,0".parse().unwrap();
        let mut cache = KnowledgeCache::default();
        assert!(cache.get(&pos, 0, 2).is_none());
        cache.put(&pos, 1, &[0.5, 1.0], &[0.4, 0.6]);
        assert_eq!(
            cache.get(&pos, 1, 2),
            Some((&[0.5, 1.0][..], &[0.4, 0.6][..]))
        );
        // Another depth, another number of moves, another position: not this answer.
        assert!(cache.get(&pos, 0, 2).is_none());
        assert!(cache.get(&pos, 1, 3).is_none());
        assert!(cache.get(&other, 1, 2).is_none());
        cache.put(&other, 1, &[1.0], &[0.5]);
        assert!(cache.get(&other, 1, 1).is_some());
        // A new search starts empty.
        cache.clear();
        assert!(cache.get(&other, 1, 1).is_none());
        assert!(cache.get(&pos, 1, 2).is_none());
    }
}
