//! The node arena: nodes addressed by `u32` indices, children of a node stored contiguously.
//!
//! The arena is a fixed directory of chunks of `CHUNK` nodes, allocated on first use. A node never
//! moves once allocated (the directory never grows; chunks are never reallocated), so threads
//! hold plain `&Node` references while others allocate. Space is reserved by advancing an atomic
//! length with a compare-exchange loop that refuses to pass the node cap: the tree can never
//! exceed it, and reserving a block of children is lock-free. Only the first use of a chunk
//! takes `OnceLock`'s internal lock (once per `CHUNK` nodes; not on the hot path).
//!
//! Nodes are never freed individually; tree reuse ([`Tree::compact`]) copies the kept subtree
//! into a fresh arena.

use std::collections::VecDeque;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use crate::node::{Expansion, Node};

/// log2 of the chunk size.
const CHUNK_BITS: u32 = 14;
/// Nodes per chunk: 16384, i.e. 640 KiB of 40-byte nodes per allocation.
const CHUNK: u32 = 1 << CHUNK_BITS;

/// Index of the root node.
pub(crate) const ROOT: u32 = 0;

/// A chunk of nodes, allocated on first use.
type Chunk<M> = OnceLock<Box<[Node<M>]>>;

/// The node arena (see the module docs).
pub(crate) struct Tree<M> {
    /// One slot per chunk the cap allows; each filled the first time a reservation reaches it.
    /// The thread that reserves a block initialises its chunks (`get_or_init`, release) before
    /// publishing the block through the parent's `expansion`, so readers always find them.
    chunks: Box<[Chunk<M>]>,
    /// Number of node slots handed out (the root included). Only grows, never above `cap`.
    len: AtomicU32,
    /// Maximum number of nodes.
    cap: u32,
    /// Set (relaxed, a hint) once a reservation failed for lack of room.
    cap_reached: AtomicBool,
}

/// Summarised: printing millions of nodes helps nobody.
impl<M> std::fmt::Debug for Tree<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tree")
            .field("len", &self.len.load(Ordering::Relaxed))
            .field("cap", &self.cap)
            .field("cap_reached", &self.cap_reached.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl<M: Copy> Tree<M> {
    /// An arena holding just a fresh root, for at most `cap` (>= 1) nodes.
    pub(crate) fn new(cap: u32) -> Self {
        let cap = cap.max(1);
        let chunk_count = cap.div_ceil(CHUNK) as usize;
        let chunks = (0..chunk_count).map(|_| OnceLock::new()).collect();
        let tree = Tree {
            chunks,
            len: AtomicU32::new(1),
            cap,
            cap_reached: AtomicBool::new(false),
        };
        tree.ensure_chunks(ROOT, 1);
        tree
    }

    /// The node at `index`.
    ///
    /// # Panics
    ///
    /// If `index` was never reserved: indices only come from the root and from published
    /// expansions, so this is a bug in this crate.
    pub(crate) fn node(&self, index: u32) -> &Node<M> {
        match self.chunks[(index >> CHUNK_BITS) as usize].get() {
            Some(chunk) => &chunk[(index & (CHUNK - 1)) as usize],
            None => unreachable!("node {index} read before it was reserved"),
        }
    }

    /// The root node.
    pub(crate) fn root(&self) -> &Node<M> {
        self.node(ROOT)
    }

    /// Number of nodes handed out, root included.
    pub(crate) fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed) as usize
    }

    /// The node cap.
    pub(crate) fn cap(&self) -> u32 {
        self.cap
    }

    /// Whether a reservation has failed for lack of room.
    pub(crate) fn cap_reached(&self) -> bool {
        self.cap_reached.load(Ordering::Relaxed)
    }

    /// Reserves `count` (> 0) contiguous fresh nodes and returns the first index, or `None` (and
    /// remembers that the cap was reached) if they do not fit under the cap.
    pub(crate) fn reserve(&self, count: u32) -> Option<u32> {
        let reserved = self
            .len
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |len| {
                len.checked_add(count).filter(|&end| end <= self.cap)
            });
        match reserved {
            Ok(first) => {
                self.ensure_chunks(first, count);
                Some(first)
            }
            Err(_) => {
                self.cap_reached.store(true, Ordering::Relaxed);
                None
            }
        }
    }

    /// Allocates the chunks covering `first..first + count` if nobody has yet. The last chunk is
    /// cut to the cap, so a small cap allocates little.
    fn ensure_chunks(&self, first: u32, count: u32) {
        let last = first + count - 1;
        for chunk in (first >> CHUNK_BITS)..=(last >> CHUNK_BITS) {
            self.chunks[chunk as usize].get_or_init(|| {
                let size = (self.cap - chunk * CHUNK).min(CHUNK);
                (0..size).map(|_| Node::new()).collect()
            });
        }
    }

    /// Copies the subtree under `from` into a fresh arena with cap `cap`, `from` becoming its
    /// root. Breadth-first, so each node's children stay contiguous. If the subtree does not fit,
    /// the nodes whose children no longer fit become leaves (keeping their own statistics and
    /// proof). Must not run concurrently with a search on `self`.
    pub(crate) fn compact(&self, from: u32, cap: u32) -> Tree<M> {
        let fresh = Tree::new(cap);
        fresh.root().copy_from(self.node(from));
        let mut queue = VecDeque::from([(from, ROOT)]);
        while let Some((old, new)) = queue.pop_front() {
            match self.node(old).expansion() {
                Expansion::Expanded { count: 0, .. } => fresh.node(new).publish_expanded(0, 0),
                Expansion::Expanded { first, count } => {
                    // Not taking the cap-reached path for the new arena's flag: a truncated copy
                    // leaves room for nothing but is not a search event.
                    let Some(new_first) = fresh.reserve(count) else {
                        fresh.cap_reached.store(false, Ordering::Relaxed);
                        continue;
                    };
                    for i in 0..count {
                        fresh.node(new_first + i).copy_from(self.node(first + i));
                        queue.push_back((first + i, new_first + i));
                    }
                    fresh.node(new).publish_expanded(new_first, count);
                }
                // An interrupted expansion cannot outlive a search; either way it is a leaf.
                Expansion::Empty | Expansion::Expanding => {}
            }
        }
        fresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserve_respects_the_cap_exactly() {
        let tree = Tree::<u8>::new(10);
        assert_eq!(tree.reserve(4), Some(1));
        assert_eq!(tree.reserve(5), Some(5));
        assert!(!tree.cap_reached());
        assert_eq!(tree.reserve(1), None);
        assert!(tree.cap_reached());
        assert_eq!(tree.len(), 10);
    }

    #[test]
    fn blocks_may_span_chunks() {
        let tree = Tree::<u32>::new(3 * CHUNK);
        let first = tree.reserve(CHUNK - 2).unwrap_or_default();
        let block = tree.reserve(10).unwrap_or_default();
        assert_eq!(block, first + CHUNK - 2);
        for i in 0..10 {
            tree.node(block + i).set_move(i);
        }
        assert_eq!(tree.node(block + 9).mv(), 9);
        assert_eq!(tree.len(), CHUNK as usize + 9);
    }

    #[test]
    fn compact_keeps_subtree_and_truncates_at_cap() {
        let tree = Tree::<u8>::new(100);
        // root -> a, b ; a -> c, d, e
        let kids = tree.reserve(2).unwrap_or_default();
        tree.node(kids).set_move(1);
        tree.node(kids + 1).set_move(2);
        tree.root().publish_expanded(kids, 2);
        let grand = tree.reserve(3).unwrap_or_default();
        for i in 0..3 {
            tree.node(grand + i).set_move(10 + i as u8);
            tree.node(grand + i).arrive();
            tree.node(grand + i).leave(1);
        }
        tree.node(kids).publish_expanded(grand, 3);
        let kept = tree.compact(kids, 100);
        assert_eq!(kept.len(), 4);
        assert_eq!(kept.root().try_mv(), Some(1));
        let Expansion::Expanded { first, count } = kept.root().expansion() else {
            panic!("root not expanded");
        };
        assert_eq!(count, 3);
        assert_eq!(kept.node(first + 2).mv(), 12);
        assert_eq!(kept.node(first + 2).stats().visits, 1);
        let small = tree.compact(ROOT, 2);
        assert_eq!(small.len(), 1);
        assert_eq!(small.root().expansion(), Expansion::Empty);
    }
}
