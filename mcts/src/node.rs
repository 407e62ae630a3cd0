//! One tree node and the atomics it is made of.
//!
//! A node stands for the state reached by playing [`Node::mv`] from its parent's state. Its
//! statistics are from the point of view of the player who made that move (the *mover*: the
//! player to move in the parent's state), so a parent picks the child with the best value for
//! itself without flipping anything. The root's mover is kept by the search (see
//! `Core::root_mover`).
//!
//! Every field is shared between search threads through `&Node` and changed only through atomics
//! (the crate forbids `unsafe`). The contract for each field is written next to it.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, Ordering};

use crate::solver::Bounds;

/// Fixed-point scale of [`Node::value_sum`]: a playout worth `v` in `[0, 1]` adds
/// `round(v * VALUE_SCALE)`. 2^20 gives ~1e-6 resolution (finer than needed: results are mostly
/// 0, 0.5 and 1, which are exact) and leaves room for 2^44 playouts before the `u64` overflows.
pub(crate) const VALUE_SCALE: f64 = (1u64 << 20) as f64;

/// Converts a value in `[0, 1]` to the fixed point of [`Node::value_sum`].
pub(crate) fn to_fixed(value: f32) -> u64 {
    (f64::from(value.clamp(0.0, 1.0)) * VALUE_SCALE).round() as u64
}

/// Bits of [`Node::counts`] holding the number of threads currently inside the node.
const IN_FLIGHT_BITS: u32 = 24;
const IN_FLIGHT_MASK: u64 = (1 << IN_FLIGHT_BITS) - 1;
/// Added to `counts` on the way down: one more thread in flight.
const ARRIVE: u64 = 1;
/// Added to `counts` on backup: one more visit and one thread fewer in flight, in a single
/// `fetch_add` (the in-flight field is >= 1 here, so the `- 1` never borrows from the visits).
const LEAVE: u64 = (1 << IN_FLIGHT_BITS) - 1;

/// [`Node::expansion`] values: `EMPTY`, `EXPANDING`, or `EXPANDED_BASE + number of children`.
const EMPTY: u32 = 0;
const EXPANDING: u32 = 1;
const EXPANDED_BASE: u32 = 2;
/// The largest number of children a node can have.
pub(crate) const MAX_CHILDREN: u32 = u32::MAX - EXPANDED_BASE;

/// Expansion state of a node as read by [`Node::expansion`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Expansion {
    /// No children allocated yet (a leaf).
    Empty,
    /// A thread is allocating the children right now; the others wait for it.
    Expanding,
    /// Children are the `count` nodes from index `first` on (`count == 0`: terminal state).
    Expanded {
        /// Index of the first child.
        first: u32,
        /// Number of children.
        count: u32,
    },
}

/// A consistent read of a node's counters.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stats {
    /// Completed visits (playouts backed up through this node).
    pub(crate) visits: u64,
    /// Threads currently between arriving here and backing up.
    pub(crate) in_flight: u64,
    /// Sum of the results for the mover, in [`VALUE_SCALE`] fixed point.
    pub(crate) value_sum: u64,
}

impl Stats {
    /// Mean value for the mover, or `None` without visits.
    pub(crate) fn mean(&self) -> Option<f32> {
        (self.visits > 0).then(|| (self.value_sum as f64 / VALUE_SCALE / self.visits as f64) as f32)
    }
}

/// One tree node. 40 bytes for moves of up to 4 bytes, 48 up to 12 bytes (see `Search::bytes_per_node`).
#[derive(Debug)]
pub(crate) struct Node<M> {
    /// The move leading here from the parent. Set exactly once by the thread expanding the
    /// parent, before it publishes the parent's children with a release store to the parent's
    /// `expansion`; readers reach a child only through that acquire load, so the move is always
    /// set when read. Unset for the root. (`OnceLock` because a generic `M` cannot be stored in
    /// an atomic and the crate forbids `unsafe`.)
    mv: OnceLock<M>,
    /// `EMPTY -> EXPANDING -> EXPANDED_BASE + count` (or back to `EMPTY` when the node cap
    /// stops the expansion). Only the thread that wins the `EMPTY -> EXPANDING` compare-exchange
    /// writes `first_child`, the children and then this field (release); readers load it with
    /// acquire before touching `first_child` or the children.
    expansion: AtomicU32,
    /// Index of the first child; written (relaxed) before the release store to `expansion` and
    /// only read after an acquire load of it saw `EXPANDED`.
    first_child: AtomicU32,
    /// Visits in the high 40 bits, threads in flight (virtual loss) in the low 24 bits, packed
    /// so that one `fetch_add` on arrival returns a consistent "playouts started here before
    /// me" (which decides whether to expand) and one `fetch_add` on backup turns an in-flight
    /// thread into a visit. Relaxed: these are statistics, nothing is published through them.
    counts: AtomicU64,
    /// Sum of playout results for the mover in [`VALUE_SCALE`] fixed point. Added with relaxed
    /// `fetch_add` on backup (no compare-exchange loop, unlike an `f64` in an `AtomicU64`); may
    /// be momentarily out of step with `counts`, which only blurs a mean a tiny bit.
    value_sum: AtomicU64,
    /// Solver bounds on the value for the mover ([`Bounds::encode`]; 0 = nothing known). Only
    /// ever tightened, by a compare-exchange loop merging old and new knowledge, so concurrent
    /// updates never lose information and an exact result never changes. Sequentially
    /// consistent when the solver stores bounds and then reads the siblings, so that two threads
    /// updating two siblings at once cannot both miss each other's update; plain acquire loads
    /// in selection and backup, where stale bounds only cost a little efficiency.
    bounds: AtomicU32,
    /// The move's prior probability, normalised over its siblings, in 1/65535 units (see
    /// [`quantise`]). Written (relaxed) by the expanding thread before the release store
    /// publishing the parent's children, read only after the acquire load of it, like `mv`.
    prior: AtomicU16,
    /// Implicit minimax value for the mover ([`quantise`]d; 0 = unknown): the game's static
    /// value of this position, or, once expanded, the best of its children's minimax values
    /// seen from here. Written with relaxed stores during backup; a race only leaves a value a
    /// little stale, which the next backup through the node repairs. Together with `prior` it
    /// lives in what was alignment padding: the node stays 48 bytes for 12-byte moves.
    minimax: AtomicU16,
}

impl<M: Copy> Node<M> {
    /// A fresh, unexpanded, unvisited node without a move.
    pub(crate) fn new() -> Self {
        Node {
            mv: OnceLock::new(),
            expansion: AtomicU32::new(EMPTY),
            first_child: AtomicU32::new(0),
            counts: AtomicU64::new(0),
            value_sum: AtomicU64::new(0),
            bounds: AtomicU32::new(0),
            prior: AtomicU16::new(0),
            minimax: AtomicU16::new(0),
        }
    }

    /// The move's prior (see the field); 0 when the game gave none.
    pub(crate) fn prior(&self) -> f32 {
        f32::from(self.prior.load(Ordering::Relaxed)) / 65535.0
    }

    /// Sets the prior of a freshly reserved child (before its parent publishes it). Priors
    /// below 1/65535 are kept at that minimum, so no move is ever ruled out by its prior alone.
    pub(crate) fn set_prior(&self, prior: f32) {
        let q = (prior.clamp(0.0, 1.0) * 65535.0).round() as u16;
        self.prior.store(q.max(1), Ordering::Relaxed);
    }

    /// The implicit minimax value for the mover, if known.
    pub(crate) fn minimax(&self) -> Option<f32> {
        match self.minimax.load(Ordering::Relaxed) {
            0 => None,
            q => Some(f32::from(q - 1) / 65534.0),
        }
    }

    /// Stores the implicit minimax value for the mover (a value in `[0, 1]`).
    pub(crate) fn set_minimax(&self, value: f32) {
        let value = if value.is_nan() {
            0.5
        } else {
            value.clamp(0.0, 1.0)
        };
        self.minimax
            .store(1 + (value * 65534.0).round() as u16, Ordering::Relaxed);
    }

    /// The move leading to this node.
    ///
    /// # Panics
    ///
    /// On the root, or on a node not reached through its parent's published expansion: both are
    /// bugs in this crate (see the contract on the field).
    pub(crate) fn mv(&self) -> M {
        match self.mv.get() {
            Some(mv) => *mv,
            None => unreachable!("move read from the root or from an unpublished node"),
        }
    }

    /// The move, if set (the root has none).
    pub(crate) fn try_mv(&self) -> Option<M> {
        self.mv.get().copied()
    }

    /// Sets the move of a freshly reserved node (no-op if already set, which cannot happen for
    /// freshly reserved slots).
    pub(crate) fn set_move(&self, mv: M) {
        let _ = self.mv.set(mv);
    }

    /// The expansion state (acquire: children are readable when `Expanded` is returned).
    pub(crate) fn expansion(&self) -> Expansion {
        match self.expansion.load(Ordering::Acquire) {
            EMPTY => Expansion::Empty,
            EXPANDING => Expansion::Expanding,
            state => Expansion::Expanded {
                first: self.first_child.load(Ordering::Relaxed),
                count: state - EXPANDED_BASE,
            },
        }
    }

    /// Tries to become the thread that expands this node (`EMPTY -> EXPANDING`).
    pub(crate) fn try_begin_expand(&self) -> bool {
        self.expansion
            .compare_exchange(EMPTY, EXPANDING, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// Publishes the children (`count <= MAX_CHILDREN`) after their moves were set.
    pub(crate) fn publish_expanded(&self, first: u32, count: u32) {
        self.first_child.store(first, Ordering::Relaxed);
        self.expansion
            .store(EXPANDED_BASE + count.min(MAX_CHILDREN), Ordering::Release);
    }

    /// Gives up an expansion (node cap reached): back to `EMPTY`.
    pub(crate) fn abort_expand(&self) {
        self.expansion.store(EMPTY, Ordering::Release);
    }

    /// A thread arrives on its way down (adds virtual loss). Returns the number of playouts
    /// started through this node before this one (completed visits plus threads in flight).
    pub(crate) fn arrive(&self) -> u64 {
        let before = self.counts.fetch_add(ARRIVE, Ordering::Relaxed);
        (before >> IN_FLIGHT_BITS) + (before & IN_FLIGHT_MASK)
    }

    /// Backs up one playout worth `value_fixed` for the mover and removes the virtual loss.
    pub(crate) fn leave(&self, value_fixed: u64) {
        self.value_sum.fetch_add(value_fixed, Ordering::Relaxed);
        self.counts.fetch_add(LEAVE, Ordering::Relaxed);
    }

    /// The current counters.
    pub(crate) fn stats(&self) -> Stats {
        let counts = self.counts.load(Ordering::Relaxed);
        Stats {
            visits: counts >> IN_FLIGHT_BITS,
            in_flight: counts & IN_FLIGHT_MASK,
            value_sum: self.value_sum.load(Ordering::Relaxed),
        }
    }

    /// The solver bounds for the mover (acquire; may lag behind a concurrent update).
    pub(crate) fn bounds(&self) -> Bounds {
        Bounds::decode(self.bounds.load(Ordering::Acquire))
    }

    /// The solver bounds for the mover, read sequentially consistently (see the field).
    pub(crate) fn bounds_seq_cst(&self) -> Bounds {
        Bounds::decode(self.bounds.load(Ordering::SeqCst))
    }

    /// Merges `learned` (for the mover) into the bounds; returns whether they tightened.
    pub(crate) fn merge_bounds(&self, learned: Bounds) -> bool {
        let mut raw = self.bounds.load(Ordering::SeqCst);
        loop {
            let old = Bounds::decode(raw);
            let new = old.merge(learned);
            if new == old {
                return false;
            }
            match self.bounds.compare_exchange_weak(
                raw,
                new.encode(),
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => return true,
                Err(current) => raw = current,
            }
        }
    }

    /// Copies move, statistics and bounds of `from` into this fresh node (tree compaction, no
    /// other thread running). Threads in flight are dropped: there are none after a search.
    pub(crate) fn copy_from(&self, from: &Node<M>) {
        if let Some(mv) = from.try_mv() {
            self.set_move(mv);
        }
        let counts = from.counts.load(Ordering::Relaxed) & !IN_FLIGHT_MASK;
        self.counts.store(counts, Ordering::Relaxed);
        self.value_sum
            .store(from.value_sum.load(Ordering::Relaxed), Ordering::Relaxed);
        self.bounds
            .store(from.bounds.load(Ordering::Relaxed), Ordering::Relaxed);
        self.prior
            .store(from.prior.load(Ordering::Relaxed), Ordering::Relaxed);
        self.minimax
            .store(from.minimax.load(Ordering::Relaxed), Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_is_compact() {
        assert_eq!(std::mem::size_of::<Node<u16>>(), 40);
        assert_eq!(std::mem::size_of::<Node<u32>>(), 40);
        // A 12-byte move (Emergo's) still fits the 48-byte budget: the prior uses padding.
        assert_eq!(std::mem::size_of::<Node<[u32; 3]>>(), 48);
    }

    #[test]
    fn priors_and_minimax_values_round_trip() {
        let node = Node::<u8>::new();
        assert_eq!(node.prior(), 0.0);
        assert_eq!(node.minimax(), None);
        node.set_prior(0.25);
        assert!((node.prior() - 0.25).abs() < 1e-4);
        node.set_prior(0.0);
        assert!(node.prior() > 0.0);
        node.set_minimax(0.0);
        assert_eq!(node.minimax(), Some(0.0));
        node.set_minimax(1.0);
        assert_eq!(node.minimax(), Some(1.0));
        node.set_minimax(f32::NAN);
        assert!((node.minimax().unwrap() - 0.5).abs() < 1e-4);
    }

    #[test]
    fn counts_pack_visits_and_in_flight() {
        let node = Node::<u8>::new();
        assert_eq!(node.arrive(), 0);
        assert_eq!(node.arrive(), 1);
        node.leave(to_fixed(1.0));
        let s = node.stats();
        assert_eq!((s.visits, s.in_flight), (1, 1));
        assert_eq!(node.arrive(), 2);
        node.leave(to_fixed(0.0));
        node.leave(to_fixed(0.5));
        let s = node.stats();
        assert_eq!((s.visits, s.in_flight), (3, 0));
        assert_eq!(s.mean(), Some(0.5));
    }

    #[test]
    fn bounds_only_tighten_and_exact_results_stick() {
        use crate::game::{Outcome, Player};
        use crate::snapshot::Proven;
        let node = Node::<u8>::new();
        assert_eq!(node.bounds(), Bounds::UNKNOWN);
        let at_least_draw = Bounds::combine([
            Bounds::terminal(Outcome::Draw, Player::One),
            Bounds::UNKNOWN,
        ]);
        assert!(node.merge_bounds(at_least_draw.unwrap_or(Bounds::UNKNOWN)));
        assert!(!node.merge_bounds(Bounds::UNKNOWN));
        assert!(node.merge_bounds(Bounds::terminal(Outcome::Win(Player::One), Player::One)));
        assert!(!node.merge_bounds(Bounds::terminal(Outcome::Draw, Player::One)));
        assert_eq!(node.bounds().proven(), Some(Proven::Win { plies: 0 }));
    }

    #[test]
    fn expansion_states() {
        let node = Node::<u8>::new();
        assert_eq!(node.expansion(), Expansion::Empty);
        assert!(node.try_begin_expand());
        assert!(!node.try_begin_expand());
        assert_eq!(node.expansion(), Expansion::Expanding);
        node.abort_expand();
        assert!(node.try_begin_expand());
        node.publish_expanded(5, 3);
        assert_eq!(node.expansion(), Expansion::Expanded { first: 5, count: 3 });
    }
}
