//! One tree node, one edge, and the atomics they are made of.
//!
//! A node stands for the state reached by playing a move from its parent's state; the parent
//! holds one [`Edge`] per legal move, and a node exists only for moves visited at least once. Its
//! statistics are from the point of view of the player who made that move (the *mover*: the
//! player to move in the parent's state), so a parent picks the child with the best value for
//! itself without flipping anything. The root's mover is kept by the search (see
//! `Core::root_mover`).
//!
//! Every field is shared between search threads through `&Node` and changed only through atomics
//! (the crate forbids `unsafe`). The contract for each field is written next to it.

use std::sync::atomic::{AtomicU8, AtomicU16, AtomicU32, AtomicU64, Ordering};

use crate::solver::Bounds;

/// Fixed-point scale of [`Node::value_sum`]: a playout worth `v` in `[0, 1]` adds
/// `round(v * VALUE_SCALE)`. 2^20 gives ~1e-6 resolution (finer than needed: results are mostly
/// 0, 0.5 and 1, which are exact) and leaves room for 2^44 playouts before the `u64` overflows.
pub(crate) const VALUE_SCALE: f64 = (1u64 << 20) as f64;

/// Converts a value in `[0, 1]` to the fixed point of [`Node::value_sum`].
pub(crate) fn to_fixed(value: f32) -> u64 {
    // + 0.5 and truncation: rounding for a non-negative value, without a libm call.
    (f64::from(value.clamp(0.0, 1.0)) * VALUE_SCALE + 0.5) as u64
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
    /// No edges allocated yet (a leaf).
    Empty,
    /// A thread is allocating the edges right now; the others wait for it.
    Expanding,
    /// Edges are the `count` edges from index `first` on, in legal-move order (`count == 0`:
    /// terminal state).
    Expanded {
        /// Index of the first edge.
        first: u32,
        /// Number of edges (legal moves).
        count: u32,
    },
}

/// A consistent read of a node's counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

    /// Mean value for the mover over `n > 0` effective visits (selection's: threads in flight
    /// count as visits that scored nothing, the virtual loss).
    #[inline]
    pub(crate) fn mean_over(&self, n: u64) -> f32 {
        (self.value_sum as f64 / VALUE_SCALE) as f32 / n as f32
    }
}

/// One tree node: 32 bytes (see `Search::bytes_per_node`). It holds no move: a node is reached
/// through an [`Edge`] of its parent, and edges are in legal-move order, so the move is the
/// parent position's legal move at the edge's offset (the search regenerates the list while it
/// descends, which costs less than storing a move per edge).
///
/// Aligned to 32 bytes so that a node never straddles two cache lines.
#[derive(Debug, Default)]
#[repr(align(32))]
pub(crate) struct Node {
    /// `EMPTY -> EXPANDING -> EXPANDED_BASE + count` (or back to `EMPTY` when the tree is full).
    /// Only the thread that wins the `EMPTY -> EXPANDING` compare-exchange writes `first_edge`,
    /// the edges and then this field (release); readers load it with acquire before touching
    /// `first_edge` or the edges.
    expansion: AtomicU32,
    /// Index of the first edge; written (relaxed) before the release store to `expansion` and
    /// only read after an acquire load of it saw `EXPANDED`.
    first_edge: AtomicU32,
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
    /// Implicit minimax value for the mover ([`quantise_value`]d; 0 = unknown): the game's static
    /// value of this position (copied from the edge when the node is created), or, once
    /// expanded, the best of its children's minimax values seen from here. Written with relaxed
    /// stores during backup; a race only leaves a value a little stale, which the next backup
    /// through the node repairs.
    minimax: AtomicU16,
    /// The highest knowledge refinement level done for this node's edges (0: none; see
    /// [`SearchParams::refine_visits`](crate::SearchParams::refine_visits)). Raised by
    /// compare-exchange, so each level is claimed by one thread; fits in the node's padding.
    refined: AtomicU8,
}

/// Who may update a node's counters while a search runs, which decides how they are updated.
///
/// With several search threads the counters take read-modify-write atomics (`lock xadd` on
/// x86), which also order the thread's memory accesses and so keep the processor from loading
/// the next levels of the tree early. A search on one thread is the only writer (reclaims and
/// tree reuse run between its iterations, snapshots only read), so a plain load and store of
/// each counter gives the same values without either cost; readers on other threads still see
/// whole values, only atomics are used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Writers {
    /// Several search threads: every update is one atomic read-modify-write.
    Shared,
    /// The search's only thread: a load and a store.
    Solo,
}

impl Writers {
    /// The writers of a search running `threads` threads.
    pub(crate) fn for_threads(threads: usize) -> Self {
        if threads <= 1 {
            Writers::Solo
        } else {
            Writers::Shared
        }
    }
}

/// Quantises a value in `[0, 1]` to 1..=65535 (0 stays free for "unknown"); NaN counts as ½.
fn quantise_value(value: f32) -> u16 {
    let value = if value.is_nan() {
        0.5
    } else {
        value.clamp(0.0, 1.0)
    };
    1 + (value * 65534.0 + 0.5) as u16
}

/// The value of a [`quantise_value`]d code, `None` for 0: `(code - 1) / 65534` as an `f32`.
///
/// Computed as a multiplication in `f64` rounded once to `f32`, which gives the correctly
/// rounded `f32` quotient for every code (checked for all of them in the tests: no quotient
/// lies within the `f64` product's error of an `f32` rounding boundary), without the division
/// that selection would otherwise pay for each child it scores.
#[inline]
pub(crate) fn value_of(code: u16) -> Option<f32> {
    (code != 0).then(|| (f64::from(code - 1) * (1.0 / 65534.0)) as f32)
}

impl Node {
    /// The implicit minimax value for the mover, if known.
    pub(crate) fn minimax(&self) -> Option<f32> {
        value_of(self.minimax.load(Ordering::Relaxed))
    }

    /// The implicit minimax value for the mover as its code ([`value_of`] decodes it): selection
    /// reads every child's but needs few of them decoded.
    pub(crate) fn minimax_code(&self) -> u16 {
        self.minimax.load(Ordering::Relaxed)
    }

    /// Stores the implicit minimax value for the mover (a value in `[0, 1]`).
    pub(crate) fn set_minimax(&self, value: f32) {
        self.minimax.store(quantise_value(value), Ordering::Relaxed);
    }

    /// Claims the refinement of this node's edges at `level` (clamped to 255): true for the one
    /// thread that raises the node's refined level to it, false if it is there already.
    pub(crate) fn claim_refinement(&self, level: u32) -> bool {
        let level = u8::try_from(level).unwrap_or(u8::MAX);
        self.refined
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |done| {
                (done < level).then_some(level)
            })
            .is_ok()
    }

    /// The highest refinement level claimed for this node's edges (0: none).
    pub(crate) fn refined_level(&self) -> u8 {
        self.refined.load(Ordering::Relaxed)
    }

    /// Forgets the refinements (a new root: its moves' knowledge is asked again, deeper).
    pub(crate) fn reset_refinement(&self) {
        self.refined.store(0, Ordering::Relaxed);
    }

    /// The expansion state (acquire: the edges are readable when `Expanded` is returned).
    pub(crate) fn expansion(&self) -> Expansion {
        match self.expansion.load(Ordering::Acquire) {
            EMPTY => Expansion::Empty,
            EXPANDING => Expansion::Expanding,
            state => Expansion::Expanded {
                first: self.first_edge.load(Ordering::Relaxed),
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

    /// Publishes the edges (`count <= MAX_CHILDREN`) after they were written.
    pub(crate) fn publish_expanded(&self, first: u32, count: u32) {
        self.first_edge.store(first, Ordering::Relaxed);
        self.expansion
            .store(EXPANDED_BASE + count.min(MAX_CHILDREN), Ordering::Release);
    }

    /// Gives up an expansion (tree full): back to `EMPTY`.
    pub(crate) fn abort_expand(&self) {
        self.expansion.store(EMPTY, Ordering::Release);
    }

    /// A thread arrives on its way down (adds virtual loss). Returns the number of playouts
    /// started through this node before this one (completed visits plus threads in flight).
    #[cfg(test)]
    pub(crate) fn arrive(&self) -> u64 {
        self.arrive_as(Writers::Shared)
    }

    /// A thread arrives on its way down (adds virtual loss), as one of `writers`. Returns the
    /// number of playouts started through this node before this one (completed visits plus
    /// threads in flight).
    #[inline]
    pub(crate) fn arrive_as(&self, writers: Writers) -> u64 {
        let before = match writers {
            Writers::Shared => self.counts.fetch_add(ARRIVE, Ordering::Relaxed),
            Writers::Solo => {
                let before = self.counts.load(Ordering::Relaxed);
                self.counts.store(before + ARRIVE, Ordering::Relaxed);
                before
            }
        };
        (before >> IN_FLIGHT_BITS) + (before & IN_FLIGHT_MASK)
    }

    /// Backs up one playout worth `value_fixed` for the mover and removes the virtual loss.
    #[cfg(test)]
    pub(crate) fn leave(&self, value_fixed: u64) {
        self.leave_as(value_fixed, Writers::Shared);
    }

    /// Backs up one playout worth `value_fixed` for the mover and removes the virtual loss, as
    /// one of `writers`.
    #[inline]
    pub(crate) fn leave_as(&self, value_fixed: u64, writers: Writers) {
        match writers {
            Writers::Shared => {
                self.value_sum.fetch_add(value_fixed, Ordering::Relaxed);
                self.counts.fetch_add(LEAVE, Ordering::Relaxed);
            }
            Writers::Solo => {
                let sum = self.value_sum.load(Ordering::Relaxed);
                self.value_sum
                    .store(sum.wrapping_add(value_fixed), Ordering::Relaxed);
                let counts = self.counts.load(Ordering::Relaxed);
                self.counts
                    .store(counts.wrapping_add(LEAVE), Ordering::Relaxed);
            }
        }
    }

    /// One relaxed load of the counters, for [`crate::tree::Tree::warm_children`].
    #[inline]
    pub(crate) fn touch(&self) -> u64 {
        self.counts.load(Ordering::Relaxed)
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

    /// The solver bounds for the mover, encoded ([`Bounds::encode`]: 0 = nothing known);
    /// acquire, like [`Node::bounds`].
    #[inline]
    pub(crate) fn bounds_code(&self) -> u32 {
        self.bounds.load(Ordering::Acquire)
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

    /// Copies statistics, bounds and minimax value of `from` into this fresh node (tree
    /// compaction, no other thread running). Threads in flight are dropped: there are none
    /// between iterations.
    pub(crate) fn copy_from(&self, from: &Node) {
        let counts = from.counts.load(Ordering::Relaxed) & !IN_FLIGHT_MASK;
        self.counts.store(counts, Ordering::Relaxed);
        self.value_sum
            .store(from.value_sum.load(Ordering::Relaxed), Ordering::Relaxed);
        self.bounds
            .store(from.bounds.load(Ordering::Relaxed), Ordering::Relaxed);
        self.minimax
            .store(from.minimax.load(Ordering::Relaxed), Ordering::Relaxed);
        self.refined
            .store(from.refined.load(Ordering::Relaxed), Ordering::Relaxed);
    }
}

/// [`Edge`] child field: no node yet.
const NO_CHILD: u32 = 0;
/// [`Edge`] child field: a thread is creating the node right now.
const CREATING: u32 = u32::MAX;

/// What an edge leads to, as read by [`Edge::read`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Child {
    /// Never visited: no node.
    Absent,
    /// A thread is allocating the node; it will be there in a moment.
    Creating,
    /// The node at this index.
    Node(u32),
}

/// One legal move of an expanded node: 8 bytes, one atomic word holding the child's node index
/// (allocated on the child's first visit), the move's prior and its static value. Moves that
/// are never visited cost these 8 bytes and nothing more, which is what keeps a tree at about
/// 130 bytes per playout where a node per legal move cost ~580.
///
/// Layout: bits 0..32 the child ([`NO_CHILD`], [`CREATING`] or a node index; the root, index
/// 0, is never a child), bits 32..48 the prior in 1/65535 units (at least 1 once set, so no
/// move is ruled out by its prior alone; 0 = the game gave none), bits 48..64 the static value
/// for the mover ([`quantise_value`]; 0 = unknown). The prior and value are written by the
/// expanding thread before it publishes the parent (release), so every reader sees them; the
/// child field goes `NO_CHILD -> CREATING` by compare-exchange (one thread creates the node)
/// and `CREATING -> index` (release, after the node was initialised) or back to `NO_CHILD`
/// when the tree is full.
#[derive(Debug, Default)]
pub(crate) struct Edge(AtomicU64);

/// A consistent read of an edge, its prior and static value still encoded ([`prior_of`],
/// [`value_of`]): selection reads every edge but decodes few of them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct EdgeCodes {
    /// Where the edge leads.
    pub(crate) child: Child,
    /// The prior's code, 0 when the game gave none.
    pub(crate) prior: u16,
    /// The static value's code, 0 when the game gave none.
    pub(crate) value: u16,
}

/// The prior of an [`EdgeCodes::prior`] code: `code / 65535` as an `f32`, computed as
/// [`value_of`] is (the same bits as the division, for every code).
#[inline]
pub(crate) fn prior_of(code: u16) -> f32 {
    (f64::from(code) * (1.0 / 65535.0)) as f32
}

/// A consistent read of an edge.
#[derive(Clone, Copy, Debug)]
pub(crate) struct EdgeView {
    /// Where the edge leads.
    pub(crate) child: Child,
    /// The move's static value for the mover, if the game gave one.
    pub(crate) value: Option<f32>,
}

impl Edge {
    /// Writes prior and static value of a fresh edge (before the parent is published).
    pub(crate) fn init(&self, prior: Option<f32>, value: Option<f32>) {
        self.0
            .store(Edge::knowledge_bits(prior, value), Ordering::Relaxed);
    }

    /// Prior and static value encoded in the upper 32 bits (the child field left 0).
    fn knowledge_bits(prior: Option<f32>, value: Option<f32>) -> u64 {
        let prior = prior.map_or(0, |p| ((p.clamp(0.0, 1.0) * 65535.0 + 0.5) as u16).max(1));
        let value = value.map_or(0, quantise_value);
        (u64::from(prior) << 32) | (u64::from(value) << 48)
    }

    /// Replaces prior and static value of a published edge (knowledge refined while the
    /// search runs, [`SearchParams::refine_visits`](crate::SearchParams::refine_visits)),
    /// keeping its child, and either part the game did not give anew (`None`): a
    /// compare-exchange loop, since other threads may be creating the child at the same time.
    /// Readers see the old pair or the new one, never a mix.
    pub(crate) fn refine(&self, prior: Option<f32>, value: Option<f32>) {
        let new = Edge::knowledge_bits(prior, value);
        let mut keep = u64::from(u32::MAX);
        if prior.is_none() {
            keep |= 0xFFFF << 32;
        }
        if value.is_none() {
            keep |= 0xFFFF << 48;
        }
        let _ = self
            .0
            .fetch_update(Ordering::AcqRel, Ordering::Relaxed, |bits| {
                Some(new | (bits & keep))
            });
    }

    fn decode_codes(bits: u64) -> EdgeCodes {
        let child = match bits as u32 {
            NO_CHILD => Child::Absent,
            CREATING => Child::Creating,
            index => Child::Node(index),
        };
        EdgeCodes {
            child,
            prior: (bits >> 32) as u16,
            value: (bits >> 48) as u16,
        }
    }

    /// Reads the edge (acquire: a node index read here is initialised).
    pub(crate) fn read(&self) -> EdgeView {
        let codes = self.read_codes();
        EdgeView {
            child: codes.child,
            value: value_of(codes.value),
        }
    }

    /// Reads the edge without decoding prior and value (acquire, like [`Edge::read`]).
    #[inline]
    pub(crate) fn read_codes(&self) -> EdgeCodes {
        Edge::decode_codes(self.0.load(Ordering::Acquire))
    }

    /// The child node, if created.
    pub(crate) fn child(&self) -> Option<u32> {
        match self.read().child {
            Child::Node(index) => Some(index),
            Child::Absent | Child::Creating => None,
        }
    }

    /// Tries to become the thread creating the child (`NO_CHILD -> CREATING`).
    pub(crate) fn try_begin_create(&self) -> bool {
        let bits = self.0.load(Ordering::Relaxed);
        if bits as u32 != NO_CHILD {
            return false;
        }
        let creating = bits | u64::from(CREATING);
        self.0
            .compare_exchange(bits, creating, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// Publishes the created child node (only the thread that began the creation calls this).
    pub(crate) fn publish_child(&self, index: u32) {
        let upper = self.0.load(Ordering::Relaxed) & !u64::from(u32::MAX);
        self.0.store(upper | u64::from(index), Ordering::Release);
    }

    /// Gives up a creation (tree full): back to no child.
    pub(crate) fn abort_create(&self) {
        let upper = self.0.load(Ordering::Relaxed) & !u64::from(u32::MAX);
        self.0.store(upper, Ordering::Release);
    }

    /// Copies prior and value of `from` into this fresh edge, without the child (compaction).
    pub(crate) fn copy_knowledge(&self, from: &Edge) {
        let upper = from.0.load(Ordering::Relaxed) & !u64::from(u32::MAX);
        self.0.store(upper, Ordering::Relaxed);
    }

    /// Sets the child of a fresh edge being filled by compaction (no other thread running).
    pub(crate) fn set_child(&self, index: u32) {
        self.publish_child(index);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoding_multiplies_to_the_quotients_bits() {
        for code in 0..=u16::MAX {
            assert_eq!(
                prior_of(code).to_bits(),
                (f32::from(code) / 65535.0).to_bits(),
                "prior {code}"
            );
            if code > 0 {
                assert_eq!(
                    value_of(code).map(f32::to_bits),
                    Some((f32::from(code - 1) / 65534.0).to_bits()),
                    "value {code}"
                );
            }
        }
        assert_eq!(value_of(0), None);
    }

    #[test]
    fn node_and_edge_are_compact() {
        assert_eq!(std::mem::size_of::<Node>(), 32);
        assert_eq!(std::mem::size_of::<Edge>(), 8);
    }

    #[test]
    fn edges_pack_child_prior_and_value() {
        let edge = Edge::default();
        let view = edge.read();
        assert_eq!(view.child, Child::Absent);
        assert_eq!((edge.read_codes().prior, view.value), (0, None));
        edge.init(Some(0.25), Some(0.75));
        let view = edge.read();
        assert!((prior_of(edge.read_codes().prior) - 0.25).abs() < 1e-4);
        assert!((view.value.unwrap_or_default() - 0.75).abs() < 1e-4);
        // A tiny prior is kept above 0: no move is ruled out by its prior alone.
        let tiny = Edge::default();
        tiny.init(Some(0.0), None);
        assert!(prior_of(tiny.read_codes().prior) > 0.0);

        assert!(edge.try_begin_create());
        assert!(!edge.try_begin_create());
        assert_eq!(edge.read().child, Child::Creating);
        edge.abort_create();
        assert_eq!(edge.read().child, Child::Absent);
        assert!(edge.try_begin_create());
        edge.publish_child(7);
        let view = edge.read();
        assert_eq!((view.child, edge.child()), (Child::Node(7), Some(7)));
        assert!(
            (prior_of(edge.read_codes().prior) - 0.25).abs() < 1e-4,
            "prior kept"
        );
        let copy = Edge::default();
        copy.copy_knowledge(&edge);
        assert_eq!(copy.read().child, Child::Absent);
        assert!((copy.read().value.unwrap_or_default() - 0.75).abs() < 1e-4);

        // Refined knowledge replaces what it gives and keeps the child and the rest.
        edge.refine(Some(0.5), None);
        let view = edge.read();
        assert_eq!(view.child, Child::Node(7));
        assert!((prior_of(edge.read_codes().prior) - 0.5).abs() < 1e-4);
        assert!((view.value.unwrap_or_default() - 0.75).abs() < 1e-4);
        edge.refine(None, Some(0.125));
        assert!((prior_of(edge.read_codes().prior) - 0.5).abs() < 1e-4);
        assert!((edge.read().value.unwrap_or_default() - 0.125).abs() < 1e-4);
        assert_eq!(edge.child(), Some(7));
    }

    #[test]
    fn minimax_values_round_trip() {
        let node = Node::default();
        assert_eq!(node.minimax(), None);
        node.set_minimax(0.0);
        assert_eq!(node.minimax(), Some(0.0));
        node.set_minimax(1.0);
        assert_eq!(node.minimax(), Some(1.0));
        node.set_minimax(f32::NAN);
        assert!((node.minimax().unwrap() - 0.5).abs() < 1e-4);
    }

    #[test]
    fn counts_pack_visits_and_in_flight() {
        let node = Node::default();
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
    fn a_solo_writer_counts_like_shared_ones() {
        let (solo, shared) = (Node::default(), Node::default());
        let values = [1.0, 0.0, 0.25, 0.5, 0.75];
        for (k, &v) in values.iter().enumerate() {
            assert_eq!(solo.arrive_as(Writers::Solo), k as u64);
            assert_eq!(shared.arrive_as(Writers::Shared), k as u64);
            solo.leave_as(to_fixed(v), Writers::Solo);
            shared.leave_as(to_fixed(v), Writers::Shared);
        }
        assert_eq!(solo.stats(), shared.stats());
        assert_eq!(solo.stats().visits, 5);
        assert_eq!(Writers::for_threads(0), Writers::Solo);
        assert_eq!(Writers::for_threads(1), Writers::Solo);
        assert_eq!(Writers::for_threads(2), Writers::Shared);
    }

    #[test]
    fn bounds_only_tighten_and_exact_results_stick() {
        use crate::game::{Outcome, Player};
        use crate::solver::Proven;
        let node = Node::default();
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
        let node = Node::default();
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
